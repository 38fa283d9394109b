//! Folds the branches of a short-circuit condition into one: clang turns
//! `if (x == 0 || y == 0 || x == w - 1)` into a chain of blocks, each testing one term and
//! branching to the shared `then` block. In a vectorized kernel every link of such a chain is
//! a divergent branch, linearized with its own masks and a guard per block; folded, the
//! chain is one condition (`c1 || c2 || c3`) and one divergent branch.
//!
//! A block `b` ending in `brif c1, T, n` (or `brif c1, n, F`) whose successor `n` has `b` as
//! its only predecessor, ends in `brif c2, T, F` (the same `T`, or the same `F`, with the
//! same arguments) and holds only a few instructions that may run when `b`'s branch would not
//! have reached them (no memory access other than loads of whole private variables, no
//! division, no call) takes `n`'s instructions and ends in `brif (c1 || c2), T, F`
//! (`c1 && c2` for the shared `F`). `n` leaves the layout. Repeated until nothing folds.
//!
//! The combined condition is a select (`c1 ? true : c2`, `c1 ? c2 : false`), not a logical
//! operation: a term that now runs where it did not (a conversion of a NaN, a shift by too
//! much) may give LLVM a poison value, and a select of the other arm does not pass it on.

use crate::ir::{self, BinaryOp, Block, Function, InstData, TypeData, Value};

/// The most instructions of a chain link moved into its predecessor (each then runs for
/// every work-item, where it ran only for those that reached it).
const MAX_MOVED: usize = 12;

/// The bool constants a folded condition selects.
#[derive(Clone, Copy)]
pub struct Bools {
    pub ty: ir::Type,
    pub false_: ir::Const,
    pub true_: ir::Const,
}

/// Folds the short-circuit chains of `f`; returns how many links were folded.
pub fn fold(types: &ir::TypeTable, bools: Bools, f: &mut Function) -> usize {
    let mut folded = 0;
    while let Some((b, n, or)) = find_link(types, f) {
        fold_link(bools, f, b, n, or);
        folded += 1;
    }
    folded
}

/// Folds the short-circuit chains of every kernel function of `m`.
pub fn fold_kernels(m: &mut ir::Module) -> usize {
    let ty = m.types.bool();
    let bools = Bools {
        ty,
        false_: m.add_const(ir::ConstData::Int { ty, bits: 0 }),
        true_: m.add_const(ir::ConstData::Int { ty, bits: 1 }),
    };
    let kernels: Vec<ir::Func> = m.kernels.iter().map(|k| k.func).collect();
    let mut folded = 0;
    for kf in kernels {
        if m.functions.is_valid(kf) && m.functions[kf].kind != ir::FuncKind::Import {
            folded += fold(&m.types, bools, &mut m.functions[kf]);
        }
    }
    folded
}

/// A link to fold: block `b`, its chain successor `n`, and whether the shared target is the
/// `then` side (`||`) or the `else` side (`&&`).
fn find_link(types: &ir::TypeTable, f: &Function) -> Option<(Block, Block, bool)> {
    let mut preds: std::collections::HashMap<Block, usize> = std::collections::HashMap::new();
    for &b in &f.layout.blocks {
        if let Some(t) = f.terminator(b) {
            for s in f.insts[t].successors() {
                *preds.entry(s.block).or_default() += 1;
            }
        }
    }
    for &b in &f.layout.blocks {
        let Some(t) = f.terminator(b) else { continue };
        let InstData::Branch { then_dest, else_dest, .. } = &f.insts[t] else { continue };
        for (or, n, shared) in [(true, else_dest, then_dest), (false, then_dest, else_dest)] {
            if !n.args.is_empty() || n.block == b || preds.get(&n.block) != Some(&1) {
                continue;
            }
            let Some(nt) = f.terminator(n.block) else { continue };
            let InstData::Branch { then_dest: t2, else_dest: e2, .. } = &f.insts[nt] else { continue };
            let same = if or { t2 == shared } else { e2 == shared };
            let other = if or { e2 } else { t2 };
            if same && other.block != n.block && movable(types, f, n.block) {
                return Some((b, n.block, or));
            }
        }
    }
    None
}

/// Whether the instructions of `n` (its terminator aside) may run unconditionally.
fn movable(types: &ir::TypeTable, f: &Function, n: Block) -> bool {
    let insts = &f.layout.insts[n];
    if insts.len() > MAX_MOVED + 1 || !f.blocks[n].params.is_empty() {
        return false;
    }
    let whole_private_variable = |p: Value| match f.values[p].def {
        ir::ValueDef::Result(i) => matches!(f.insts[i], InstData::Variable { ty, .. }
            if !matches!(types.get(ty), TypeData::Array { .. } | TypeData::Struct { .. })),
        _ => false,
    };
    insts[..insts.len() - 1].iter().all(|&i| match &f.insts[i] {
        InstData::Binary { op, .. } => {
            !matches!(op, BinaryOp::UDiv | BinaryOp::SDiv | BinaryOp::URem | BinaryOp::SRem | BinaryOp::SMod)
        }
        InstData::Unary { .. }
        | InstData::Compare { .. }
        | InstData::Select { .. }
        | InstData::Convert { .. }
        | InstData::WorkItem { .. } => true,
        InstData::ExtractElement { .. } => true,
        InstData::Load { ptr, volatile: false, .. } => whole_private_variable(*ptr),
        _ => false,
    })
}

/// Moves `n`'s instructions to the end of `b` and branches on the combined condition.
fn fold_link(bools: Bools, f: &mut Function, b: Block, n: Block, or: bool) {
    let (Some(bt), Some(nt)) = (f.terminator(b), f.terminator(n)) else { return };
    let InstData::Branch { cond: c1, .. } = f.insts[bt].clone() else { return };
    let InstData::Branch { cond: c2, then_dest, else_dest } = f.insts[nt].clone() else { return };
    let moved: Vec<ir::Inst> = f.layout.insts[n][..f.layout.insts[n].len() - 1].to_vec();
    for &i in &moved {
        f.layout.remove_inst(i);
        f.layout.insert_inst_before(bt, i);
    }
    let select = if or {
        InstData::Select { cond: c1, if_true: f.const_value(bools.true_, bools.ty), if_false: c2 }
    } else {
        InstData::Select { cond: c1, if_true: c2, if_false: f.const_value(bools.false_, bools.ty) }
    };
    let (_, c) = f.insert_inst_before(bt, select, Some(bools.ty));
    let c = c.expect("a binary instruction has a result");
    if let Some(loc) = f.inst_locs[nt] {
        f.inst_locs[bt] = Some(loc);
    }
    f.insts[bt] = InstData::Branch { cond: c, then_dest, else_dest };
    f.layout.remove_inst(nt);
    f.layout.blocks.retain(|&x| x != n);
}
