//! Linearization of divergent control flow with explicit masks, for a kernel that runs W > 1
//! work-items as the lanes of one call (whole-function vectorization in the style of
//! Karrenberg & Hack). The IR stays per work-item (SPMD): a mask is an ordinary `bool` value,
//! true for the work-items that would have run a block, and a *masked block*
//! ([`crate::ir::BlockData::mask`]) runs its instructions with effects only for them.
//!
//! A *region* is the code between a divergent branch (or switch) of the work-item analysis
//! and its immediate post-dominator `P` (or the function's end when its paths reach different
//! returns). A region this pass handles is acyclic: it holds no loop header and no back edge,
//! no work-group barrier, and is entered only through its branch. Its blocks run one after
//! the other in reverse post-order, each behind a *control block* (unmasked) that computes:
//! - the edge masks of the previous block's terminator: `select(mask, cond, false)` for the
//!   then edge, `select(mask, !cond, false)` for the else edge, the cases of a switch in
//!   order (a case takes the work-items no earlier case took);
//! - the block's mask, the `or` of the masks of the edges into it;
//! - its parameters as a chain of selects over the edges' arguments (a select only where the
//!   edges pass different values: a value every edge passes stays what it is, uniform too).
//!
//! The divergent branches become jumps; after the last block a control block computes `P`'s
//! arguments the same way and jumps to `P` (or returns). Uniform branches inside a region are
//! linearized with it; branches outside regions stay branches. Nested divergent regions are
//! linearized as part of the outermost one.
//!
//! Speculation (every rule of this pass, in one place): the only instructions the pass adds
//! are selects, `or`, `not` and integer compares of a switch's selector, which cannot trap
//! and touch nothing, in unmasked control blocks: they run for every work-item that reached
//! the region. They read values of masked blocks (a condition, a branch argument) only under
//! a `select` on that block's mask, never through `and`, so what an inactive work-item's copy
//! of such a value holds (undefined, even poison in LLVM) never reaches a mask or a join.
//! The original instructions stay in their (now masked) blocks: the lowering runs loads,
//! stores, atomics, image accesses, printf and calls only for the block's active lanes, and
//! guards integer division for every lane whatever the mask (`back::llvm`), so nothing
//! traps for a lane that is off. The lowering may therefore run a masked block of arithmetic
//! only for every lane (`back::linearize::effect_free`: cheaper than testing its mask); a
//! block with any other instruction is skipped when no lane is in it.
//!
//! A function is linearized here only when every divergent branch lies in a region this pass
//! handles (the outermost ones disjoint); otherwise (a divergent loop exit, a divergent
//! branch around a loop, irreducible flow) it is left as it is and the lowering's
//! `back::linearize` (loop-mask form, lane dispatcher) runs the whole function. The Gen
//! device's instrumented builds keep that path too: its model reports per source block.

use crate::analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use crate::ir::{
    BinaryOp, Block, BlockCall, CmpOp, ConstData, Func, Function, InstData, Module, Type, TypeData, UnaryOp, Value,
};
use crate::vectorize::analysis::WorkItemAnalysis;
use std::collections::{HashMap, HashSet};

/// One region to linearize.
struct Region {
    /// The block ending in the divergent branch (it runs unmasked).
    head: Block,
    /// The blocks between it and `exit`, in reverse post-order.
    blocks: Vec<Block>,
    /// The immediate post-dominator of `head`; `None`: the region ends in returns.
    exit: Option<Block>,
}

/// The regions of `f` (outermost, disjoint) when every divergent branch lies in one this
/// pass handles; `None` otherwise.
fn regions(m: &Module, f: &Function, wa: &WorkItemAnalysis) -> Option<Vec<Region>> {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(&cfg);
    let pdom = PostDomTree::new(&cfg);
    let loops = LoopInfo::new(&cfg, &dom);
    if loops.is_irreducible() {
        return None;
    }
    let headers: HashSet<Block> = loops.loops().iter().map(|l| l.header).collect();
    let joinable =
        |v: &Value| !matches!(m.types.get(f.value_type(*v)), TypeData::Struct { .. } | TypeData::Array { .. });
    let mut found: Vec<(Region, HashSet<Block>)> = Vec::new();
    for &t in &wa.divergent_branches {
        let head = f.layout.inst_block[t]?;
        let exit = pdom.ipdom(head);
        let mut set = HashSet::new();
        let mut work: Vec<Block> = cfg.succs(head).to_vec();
        while let Some(x) = work.pop() {
            if Some(x) == exit || !set.insert(x) {
                continue;
            }
            work.extend(cfg.succs(x).iter().copied());
        }
        if set.contains(&head) || set.iter().any(|b| headers.contains(b)) {
            return None; // a cycle through the region
        }
        for &x in &set {
            let entered_inside = cfg.preds(x).iter().all(|p| *p == head || set.contains(p));
            let back_edge = cfg.succs(x).iter().any(|&s| set.contains(&s) && dom.dominates(s, x));
            let barrier = f.layout.insts[x].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i]));
            let term_ok = match f.terminator(x).map(|i| &f.insts[i]) {
                Some(InstData::Jump { .. } | InstData::Branch { .. } | InstData::Switch { .. }) => true,
                Some(InstData::Return { value: None } | InstData::Unreachable) => exit.is_none(),
                _ => false,
            };
            if !entered_inside || back_edge || barrier || !term_ok || !f.blocks[x].params.iter().all(joinable) {
                return None;
            }
        }
        if exit.is_some_and(|p| !f.blocks[p].params.iter().all(joinable)) {
            return None;
        }
        let blocks: Vec<Block> = cfg.rpo().iter().copied().filter(|b| set.contains(b)).collect();
        found.push((Region { head, blocks, exit }, set));
    }
    // The outermost regions; nested ones are linearized with them.
    let outer: Vec<usize> = (0..found.len())
        .filter(|&i| !(0..found.len()).any(|j| j != i && found[j].1.contains(&found[i].0.head)))
        .collect();
    let mut taken: HashSet<Block> = HashSet::new();
    let mut out = Vec::new();
    for i in outer.into_iter().rev() {
        let (r, set) = found.swap_remove(i);
        if taken.contains(&r.head) || set.iter().any(|b| !taken.insert(*b)) {
            return None;
        }
        out.push(r);
    }
    out.reverse();
    Some(out)
}

/// Linearizes the divergent regions of the kernel function `func` (whose work-item analysis
/// is `wa`) when it can handle all of them: returns whether it changed the function.
pub fn run(m: &mut Module, func: Func, wa: &WorkItemAnalysis) -> Result<bool, String> {
    if wa.divergent_branches.is_empty() {
        return Ok(false);
    }
    let Some(regs) = regions(m, &m.functions[func], wa) else { return Ok(false) };
    if regs.is_empty() {
        return Ok(false);
    }
    let bool_ty = m.types.bool();
    let t = m.add_const(ConstData::Int { ty: bool_ty, bits: 1 });
    let fl = m.add_const(ConstData::Int { ty: bool_ty, bits: 0 });
    // The case values of the switches in regions, as constants of their selector's type.
    let mut keys: HashSet<(Type, u64)> = HashSet::new();
    {
        let f = &m.functions[func];
        for r in &regs {
            for &b in std::iter::once(&r.head).chain(&r.blocks) {
                if let Some(InstData::Switch { selector, cases, .. }) = f.terminator(b).map(|i| &f.insts[i]) {
                    let ty = f.value_type(*selector);
                    keys.extend(cases.iter().map(|(v, _)| (ty, *v)));
                }
            }
        }
    }
    let case_consts: HashMap<(Type, u64), crate::ir::Const> =
        keys.into_iter().map(|(ty, v)| ((ty, v), m.add_const(ConstData::Int { ty, bits: v }))).collect();
    let f = &mut m.functions[func];
    let mut lin = Lin {
        tru: f.const_value(t, bool_ty),
        fls: f.const_value(fl, bool_ty),
        bool_ty,
        case_consts,
        consts: HashMap::new(),
    };
    for r in &regs {
        lin.region(f, r)?;
    }
    Ok(true)
}

struct Lin {
    tru: Value,
    fls: Value,
    bool_ty: Type,
    case_consts: HashMap<(Type, u64), crate::ir::Const>,
    /// The case constants as values of the function.
    consts: HashMap<(Type, u64), Value>,
}

/// An edge taken by the work-items of `mask`, passing `args`.
struct Edge {
    mask: Value,
    args: Vec<Value>,
}

impl Lin {
    fn inst(&self, f: &mut Function, b: Block, data: InstData, ty: Type) -> Result<Value, String> {
        f.append_inst(b, data, Some(ty)).1.ok_or_else(|| "an instruction without a result".to_string())
    }

    /// `a && c` as `select(a, c, false)`: `c` is not read where `a` is false.
    fn and(&self, f: &mut Function, b: Block, a: Value, c: Value) -> Result<Value, String> {
        if a == self.tru {
            return Ok(c);
        }
        self.inst(f, b, InstData::Select { cond: a, if_true: c, if_false: self.fls }, self.bool_ty)
    }

    fn not(&self, f: &mut Function, b: Block, c: Value) -> Result<Value, String> {
        self.inst(f, b, InstData::Unary { op: UnaryOp::LogicalNot, arg: c }, self.bool_ty)
    }

    fn or(&self, f: &mut Function, b: Block, a: Value, c: Value) -> Result<Value, String> {
        if a == self.fls {
            return Ok(c);
        }
        self.inst(f, b, InstData::Binary { op: BinaryOp::LogicalOr, lhs: a, rhs: c }, self.bool_ty)
    }

    /// The value of a join of `edges`' argument `k` (of type `ty`), in control block `c`.
    fn join(&self, f: &mut Function, c: Block, edges: &[Edge], k: usize, ty: Type) -> Result<Value, String> {
        let first = edges.first().ok_or("a join without edges")?.args[k];
        if edges.iter().all(|e| e.args[k] == first) {
            return Ok(first);
        }
        let mut v = first;
        for e in &edges[1..] {
            v = self.inst(f, c, InstData::Select { cond: e.mask, if_true: e.args[k], if_false: v }, ty)?;
        }
        Ok(v)
    }

    /// The edges of terminator `term` of a block running under `mask`, their masks computed
    /// in control block `c`: (target, edge); a return's target is `None`.
    fn edges(
        &mut self,
        f: &mut Function,
        c: Block,
        mask: Value,
        term: &InstData,
    ) -> Result<Vec<(Option<Block>, Edge)>, String> {
        let mut out = Vec::new();
        match term {
            InstData::Jump { dest } => out.push((Some(dest.block), Edge { mask, args: dest.args.clone() })),
            InstData::Branch { cond, then_dest, else_dest } => {
                let t = self.and(f, c, mask, *cond)?;
                let nc = self.not(f, c, *cond)?;
                let e = self.and(f, c, mask, nc)?;
                out.push((Some(then_dest.block), Edge { mask: t, args: then_dest.args.clone() }));
                out.push((Some(else_dest.block), Edge { mask: e, args: else_dest.args.clone() }));
            }
            InstData::Switch { selector, default, cases } => {
                let ty = f.value_type(*selector);
                let mut taken = self.fls;
                for (v, call) in cases {
                    let k = match self.consts.get(&(ty, *v)) {
                        Some(&k) => k,
                        None => {
                            let konst = *self.case_consts.get(&(ty, *v)).ok_or("a switch case without its constant")?;
                            let k = f.const_value(konst, ty);
                            self.consts.insert((ty, *v), k);
                            k
                        }
                    };
                    let eq =
                        self.inst(f, c, InstData::Compare { op: CmpOp::IEq, lhs: *selector, rhs: k }, self.bool_ty)?;
                    // A case takes the work-items no earlier case took.
                    let fresh = if taken == self.fls {
                        eq
                    } else {
                        let nt = self.not(f, c, taken)?;
                        self.and(f, c, nt, eq)?
                    };
                    let em = self.and(f, c, mask, fresh)?;
                    taken = self.or(f, c, taken, eq)?;
                    out.push((Some(call.block), Edge { mask: em, args: call.args.clone() }));
                }
                let nt = self.not(f, c, taken)?;
                let em = self.and(f, c, mask, nt)?;
                out.push((Some(default.block), Edge { mask: em, args: default.args.clone() }));
            }
            InstData::Return { value: None } | InstData::Unreachable => {
                out.push((None, Edge { mask, args: Vec::new() }))
            }
            other => return Err(format!("cannot linearize a block ending in {other:?}")),
        }
        Ok(out)
    }

    fn region(&mut self, f: &mut Function, r: &Region) -> Result<(), String> {
        let mut incoming: HashMap<Block, Vec<Edge>> = HashMap::new();
        let mut leaving: Vec<Edge> = Vec::new();
        let mut masks: HashMap<Block, Value> = HashMap::from([(r.head, self.tru)]);
        let mut chain: Vec<Block> = Vec::new();
        let mut prev = r.head;
        let blocks: Vec<Option<Block>> = r.blocks.iter().copied().map(Some).chain([None]).collect();
        for x in blocks {
            // The control block after `prev`: `prev`'s edges.
            let c = f.create_block();
            chain.push(c);
            let term = f.terminator(prev).ok_or("a block without a terminator")?;
            let data =
                std::mem::replace(&mut f.insts[term], InstData::Jump { dest: BlockCall { block: c, args: vec![] } });
            let mask = *masks.get(&prev).ok_or("a block without a mask")?;
            for (target, edge) in self.edges(f, c, mask, &data)? {
                match target {
                    Some(t) if Some(t) != r.exit => incoming.entry(t).or_default().push(edge),
                    _ => leaving.push(edge),
                }
            }
            let Some(x) = x else {
                // After the last block: on to the post-dominator with its joined arguments.
                match r.exit {
                    Some(p) => {
                        let params = f.blocks[p].params.clone();
                        let mut args = Vec::with_capacity(params.len());
                        for (k, &pv) in params.iter().enumerate() {
                            let ty = f.value_type(pv);
                            args.push(self.join(f, c, &leaving, k, ty)?);
                        }
                        f.append_inst(c, InstData::Jump { dest: BlockCall { block: p, args } }, None);
                    }
                    None => {
                        f.append_inst(c, InstData::Return { value: None }, None);
                    }
                }
                break;
            };
            let ins = incoming.remove(&x).ok_or("a region block no edge reaches")?;
            let mut m = self.fls;
            for e in &ins {
                m = self.or(f, c, m, e.mask)?;
            }
            let params = std::mem::take(&mut f.blocks[x].params);
            for (k, &pv) in params.iter().enumerate() {
                let ty = f.value_type(pv);
                let v = self.join(f, c, &ins, k, ty)?;
                f.replace_all_uses(pv, v);
                // Arguments already collected for later joins cannot name `pv` (its block
                // comes later), so only the instructions needed rewriting.
            }
            f.blocks[x].mask = Some(m);
            masks.insert(x, m);
            f.append_inst(c, InstData::Jump { dest: BlockCall { block: x, args: vec![] } }, None);
            chain.push(x);
            prev = x;
        }
        // Layout: the chain right after the head.
        let moved: HashSet<Block> = chain.iter().copied().collect();
        f.layout.blocks.retain(|b| !moved.contains(b));
        let at = f.layout.blocks.iter().position(|b| *b == r.head).ok_or("the region's head is not placed")? + 1;
        f.layout.blocks.splice(at..at, chain);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
