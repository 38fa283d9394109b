//! Barrier regions: a kernel with work-group barriers is split at each barrier into
//! regions, and what lives across a barrier is moved into *work-item state*.
//!
//! The lowering runs a kernel's work-items one after the other up to the next barrier
//! (`back::workgroup`): a work-item returns to the work-group loop at each barrier and is
//! called again at the barrier's resume point once every work-item got there. This pass
//! makes that explicit in the IR, after inlining (every barrier of a kernel is then in its
//! own body):
//!
//! 1. *Split*: each work-group barrier ends its block with `barrier_resume id, dest`
//!    (`InstData::BarrierResume`); the rest of the block becomes `dest`, a new block. Ids
//!    count from 1 in reverse post-order.
//! 2. *Demote* (reg2mem): every SSA value live across a barrier (block parameters
//!    included) gets a private `Variable` marked as work-item state
//!    (`Function::state_vars`): a store right after its definition (at the start of the
//!    block, for a parameter) and a load before each use. Kernel parameters, work-item
//!    queries and variable addresses are recomputed at every entry and never take state.
//!    An address that is cheap to compute again from what every entry recomputes (access
//!    chains, integer arithmetic and conversions, at most [`REMAT_LIMIT`] instructions over
//!    kernel parameters, work-item queries, variable addresses and constants:
//!    `&tile[get_local_id(1)][k]`, which clang hoists above a loop of barriers) is
//!    *rematerialised* instead: its instructions are copied into each block of another
//!    region that uses it. Demoted, such an address cost a state slot per work-item (a
//!    vector of W pointers in vector code), a store and a load per region, and the
//!    vectorizer saw a loaded pointer where it could see the access's stride: a tiled
//!    product ran 1.9x faster on the CPU device without them. Integers stay demoted: a
//!    reduction whose `get_local_id(0)` and `get_local_size(0)` were computed again in each
//!    region of its loop ran 20-35% slower than with them loaded from state.
//! 3. *State variables*: a private variable whose address (or a pointer derived from it)
//!    is live across a barrier, or escapes into memory, is marked as state too; the others
//!    stay ordinary variables (allocas that LLVM's SROA keeps in registers).
//!
//! The validator checks the result (`ir::regions`): nothing but state crosses a barrier.
//! The back end lays the state variables out (`back::workgroup::plan_state`) and lowers
//! `barrier_resume` to `ret id` plus a case of the `switch resume_at` at the top.

use crate::analysis::{Cfg, DomTree};
use crate::ir::{
    BinaryOp, Block, BlockCall, ConvertOp, EntityRef, Function, Inst, InstData, Module, SecondaryMap, TypeData,
    TypeTable, Value, ValueDef,
};
use crate::kernel_info::AddressSpace;
use std::collections::{HashMap, HashSet};

use super::inline::is_work_group_barrier;

/// Splits every kernel of `m` that has work-group barriers into barrier regions.
pub fn run_module(m: &mut Module) -> Result<(), String> {
    super::for_each_kernel(m, |types, f| {
        run(types, f);
        Ok(())
    })
}

/// Splits kernel `f` at its barriers and moves what lives across them into state variables
/// (nothing to do without barriers, or when `f` was split already).
pub fn run(types: &mut TypeTable, f: &mut Function) {
    let already = f
        .layout
        .blocks
        .iter()
        .any(|&b| f.terminator(b).is_some_and(|t| matches!(f.insts[t], InstData::BarrierResume { .. })));
    if already {
        return;
    }
    let barriers = split(f);
    if barriers == 0 {
        return;
    }
    let live = LiveAcross::of(f);
    let variables = state_variables(f, &live.across);
    let regions = DomTree::of_regions(f);
    let mut remat = Remat::default();
    for v in live.demoted(f) {
        let address = matches!(types.get(f.value_type(v)), TypeData::Pointer { .. });
        if address && remat.cost(f, v).is_some() {
            rematerialise(f, &regions, v);
        } else {
            demote(types, f, &regions, v);
        }
    }
    for var in variables {
        f.state_vars[var] = true;
    }
}

/// Ends the block of every work-group barrier with a resume point; returns how many.
fn split(f: &mut Function) -> u32 {
    let cfg = Cfg::new(f);
    let mut barriers = Vec::new();
    for &b in cfg.rpo() {
        for &i in &f.layout.insts[b] {
            if is_work_group_barrier(&f.insts[i]) {
                barriers.push(i);
            }
        }
    }
    let mut id = 0;
    for i in barriers {
        let Some((b, pos)) = f.layout.position(i) else { continue };
        let Some(&next) = f.layout.insts[b].get(pos + 1) else { continue };
        let Some(dest) = f.split_block(next) else { continue };
        let Some(jump) = f.terminator(b) else { continue };
        id += 1;
        f.insts[jump] = InstData::BarrierResume { id, dest: BlockCall { block: dest, args: Vec::new() } };
    }
    id
}

/// A dense bit set over value indices.
#[derive(Clone, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    /// self |= other & !mask; returns whether self changed.
    fn union_minus(&mut self, other: &Bits, mask: &Bits) -> bool {
        let mut changed = false;
        for ((a, b), m) in self.0.iter_mut().zip(&other.0).zip(&mask.0) {
            let n = *a | (b & !m);
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(w, &bits)| (0..64).filter(move |b| bits & (1u64 << b) != 0).map(move |b| w * 64 + b))
    }
}

/// The values live across some barrier of a split kernel: live into a resume point.
struct LiveAcross {
    across: Bits,
}

impl LiveAcross {
    fn of(f: &Function) -> LiveAcross {
        let n = f.values.len();
        let cfg = Cfg::new(f);
        let order = cfg.rpo();
        let entry = cfg.entry();
        // Values recomputed at every entry (kernel parameters, work-item ids) are not tracked;
        // variable addresses are, to find the variables whose address crosses a barrier.
        let tracked = |v: Value| -> bool {
            match f.values.get(v).map(|d| d.def) {
                Some(ValueDef::Result(i)) => !matches!(f.insts[i], InstData::WorkItem { .. }),
                Some(ValueDef::Param(b, _)) => Some(b) != entry,
                _ => false,
            }
        };
        // Upward-exposed uses and definitions per block.
        let mut ue: SecondaryMap<Block, Option<Bits>> = SecondaryMap::with_default(None);
        let mut defs: SecondaryMap<Block, Option<Bits>> = SecondaryMap::with_default(None);
        for &b in order {
            let mut u = Bits::new(n);
            let mut d = Bits::new(n);
            for &p in &f.blocks[b].params {
                d.set(p.index());
            }
            for &i in &f.layout.insts[b] {
                f.insts[i].for_each_operand(|v| {
                    if v.index() < n && tracked(v) && !d.get(v.index()) {
                        u.set(v.index());
                    }
                });
                if let Some(r) = f.inst_result[i] {
                    d.set(r.index());
                }
            }
            ue[b] = Some(u);
            defs[b] = Some(d);
        }
        // live_in(b) = ue(b) | (live_out(b) - defs(b)); live_out(b) = union of live_in(succ).
        let mut live_in: SecondaryMap<Block, Option<Bits>> = SecondaryMap::with_default(None);
        for &b in order {
            live_in[b] = ue[b].clone();
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().rev() {
                let mut out_b = Bits::new(n);
                for &s in cfg.succs(b) {
                    if let Some(li) = &live_in[s] {
                        out_b.union(li);
                    }
                }
                if let (Some(li), Some(d)) = (live_in[b].as_mut(), defs[b].as_ref()) {
                    changed |= li.union_minus(&out_b, d);
                }
            }
        }
        // Live across a barrier: live into its resume point (whose only way in it is).
        let mut across = Bits::new(n);
        for &b in order {
            if let Some(InstData::BarrierResume { dest, .. }) = f.terminator(b).map(|t| &f.insts[t]) {
                if let Some(li) = &live_in[dest.block] {
                    across.union(li);
                }
            }
        }
        LiveAcross { across }
    }

    /// The values to keep in state variables (variable addresses excluded), in index order.
    fn demoted(&self, f: &Function) -> Vec<Value> {
        self.across
            .iter()
            .map(Value::new)
            .filter(
                |&v| !matches!(f.values[v].def, ValueDef::Result(i) if matches!(f.insts[i], InstData::Variable { .. })),
            )
            .collect()
    }
}

/// The variables of `f` to keep in work-item state: a pointer derived from the variable is
/// live across a barrier (`across`) or escapes into memory (stored, converted to an
/// integer, put in an aggregate).
fn state_variables(f: &Function, across: &Bits) -> Vec<Inst> {
    let n = f.values.len();
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    let mut flows: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut variables = Vec::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let d = &f.insts[i];
            d.for_each_operand(|v| users.entry(v).or_default().push(i));
            for bc in d.successors() {
                for (a, p) in bc.args.iter().zip(&f.blocks[bc.block].params) {
                    flows.entry(*a).or_default().push(*p);
                }
            }
            if matches!(d, InstData::Variable { .. }) {
                variables.push(i);
            }
        }
    }
    let mut out = Vec::new();
    for var in variables {
        let Some(root) = f.inst_result[var] else { continue };
        let (derived, escapes) = derived_pointers(f, root, &users, &flows);
        if escapes || derived.iter().any(|v| v.index() < n && across.get(v.index())) {
            out.push(var);
        }
    }
    out
}

/// The pointers derived from `root` (access chains, casts, selects, block arguments, call
/// results) and whether any of them escapes into memory.
fn derived_pointers(
    f: &Function,
    root: Value,
    users: &HashMap<Value, Vec<Inst>>,
    flows: &HashMap<Value, Vec<Value>>,
) -> (HashSet<Value>, bool) {
    let mut derived: HashSet<Value> = HashSet::from([root]);
    let mut work = vec![root];
    let mut escapes = false;
    while let Some(v) = work.pop() {
        let mut add = |x: Value, work: &mut Vec<Value>| {
            if derived.insert(x) {
                work.push(x);
            }
        };
        for &p in flows.get(&v).map(|x| x.as_slice()).unwrap_or(&[]) {
            add(p, &mut work);
        }
        for &u in users.get(&v).map(|x| x.as_slice()).unwrap_or(&[]) {
            let r = f.inst_result[u];
            match &f.insts[u] {
                InstData::AccessChain { base, .. } if *base == v => r.into_iter().for_each(|r| add(r, &mut work)),
                InstData::Convert { op: ConvertOp::PtrCast | ConvertOp::Bitcast, .. } => {
                    r.into_iter().for_each(|r| add(r, &mut work))
                }
                InstData::Convert { op: ConvertOp::PtrToInt, .. } => escapes = true,
                InstData::Select { if_true, if_false, .. } if *if_true == v || *if_false == v => {
                    r.into_iter().for_each(|r| add(r, &mut work))
                }
                InstData::Store { value, .. } if *value == v => escapes = true,
                InstData::Atomic { value, comparator, .. } if *value == Some(v) || *comparator == Some(v) => {
                    escapes = true
                }
                InstData::InsertValue { value, .. } | InstData::InsertElement { value, .. } if *value == v => {
                    escapes = true
                }
                InstData::Construct { .. } => escapes = true,
                InstData::Call { .. } => r.into_iter().for_each(|r| add(r, &mut work)),
                _ => {}
            }
        }
    }
    (derived, escapes)
}

/// The most instructions a rematerialised value copies into a block.
pub const REMAT_LIMIT: usize = 12;

/// Which values can be computed again after a barrier, and at what cost (memoised).
#[derive(Default)]
struct Remat {
    cost: HashMap<Value, Option<usize>>,
}

impl Remat {
    /// The instructions computing `v` again takes (0 for what every entry recomputes), or
    /// `None` when it cannot be, or takes more than [`REMAT_LIMIT`].
    fn cost(&mut self, f: &Function, v: Value) -> Option<usize> {
        if let Some(&c) = self.cost.get(&v) {
            return c;
        }
        // A cycle (through a block parameter) is not rematerialisable: mark it first.
        self.cost.insert(v, None);
        let c = self.compute(f, v);
        self.cost.insert(v, c);
        c
    }

    fn compute(&mut self, f: &Function, v: Value) -> Option<usize> {
        let entry = f.layout.entry();
        let i = match f.values.get(v)?.def {
            ValueDef::Const(_) | ValueDef::Global(_) => return Some(0),
            ValueDef::Param(b, _) => return (Some(b) == entry).then_some(0),
            ValueDef::Result(i) => i,
        };
        let data = &f.insts[i];
        let pure = match data {
            InstData::WorkItem { .. } | InstData::Variable { .. } => return Some(0),
            InstData::Binary { op, .. } => matches!(
                op,
                BinaryOp::IAdd
                    | BinaryOp::ISub
                    | BinaryOp::IMul
                    | BinaryOp::Shl
                    | BinaryOp::LShr
                    | BinaryOp::AShr
                    | BinaryOp::And
                    | BinaryOp::Or
                    | BinaryOp::Xor
            ),
            InstData::Convert { op, saturate: false, .. } => {
                matches!(op, ConvertOp::UConvert | ConvertOp::SConvert | ConvertOp::Bitcast | ConvertOp::PtrCast)
            }
            InstData::AccessChain { .. } | InstData::ExtractValue { .. } => true,
            InstData::ExtractElement { index, .. } => matches!(f.values[*index].def, ValueDef::Const(_)),
            _ => false,
        };
        if !pure {
            return None;
        }
        let mut total = 1;
        for o in data.operands() {
            total += self.cost(f, o)?;
        }
        (total <= REMAT_LIMIT).then_some(total)
    }
}

/// Computes `v` again in each block of another barrier region that uses it (see
/// [`Remat`]): its instructions, copied before the block's first use, down to what every
/// entry recomputes.
fn rematerialise(f: &mut Function, regions: &DomTree, v: Value) {
    let Some(def_block) = def_block(f, v) else { return };
    let blocks: Vec<Block> =
        f.layout.blocks.iter().copied().filter(|&b| b != def_block && !regions.dominates(def_block, b)).collect();
    for b in blocks {
        let users: Vec<Inst> =
            f.layout.insts[b].iter().copied().filter(|&i| f.insts[i].operands().contains(&v)).collect();
        let Some(&first) = users.first() else { continue };
        let copy = copy_before(f, first, v);
        for u in users {
            f.replace_uses_in(u, v, copy);
        }
    }
}

/// A copy of `v`'s computation placed before `at` (operands copied first); what every entry
/// recomputes is used as it is.
fn copy_before(f: &mut Function, at: Inst, v: Value) -> Value {
    let ValueDef::Result(i) = f.values[v].def else { return v };
    if matches!(f.insts[i], InstData::WorkItem { .. } | InstData::Variable { .. }) {
        return v;
    }
    let mut data = f.insts[i].clone();
    let mut operands = Vec::new();
    data.for_each_operand(|o| operands.push(o));
    let copies: Vec<Value> = operands.into_iter().map(|o| copy_before(f, at, o)).collect();
    let mut next = copies.into_iter();
    data.for_each_operand_mut(|o| {
        if let Some(c) = next.next() {
            *o = c;
        }
    });
    let ty = f.value_type(v);
    f.insert_inst_before(at, data, Some(ty)).1.unwrap_or(v)
}

fn def_block(f: &Function, v: Value) -> Option<Block> {
    match f.values[v].def {
        ValueDef::Result(d) => f.layout.inst_block[d],
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    }
}

/// Keeps `v` in a new state variable: stored right after its definition, loaded before
/// each use in another barrier region (`regions`, the dominator tree of the regions: a use
/// its definition dominates there runs in the same call of the work-item function).
fn demote(types: &mut TypeTable, f: &mut Function, regions: &DomTree, v: Value) {
    let Some(entry) = f.layout.entry() else { return };
    // After the state variables made so far.
    let Some(&first) = f.layout.insts[entry].iter().find(|&&i| !f.is_state_var(i)) else { return };
    let Some(def_block) = def_block(f, v) else { return };
    let uses: Vec<Inst> = f
        .layout
        .blocks
        .iter()
        .filter(|&&b| b != def_block && !regions.dominates(def_block, b))
        .flat_map(|&b| f.layout.insts[b].iter().copied())
        .filter(|&i| f.insts[i].operands().contains(&v))
        .collect();
    if let Some(var) = demote_value(types, f, first, v, &uses) {
        f.state_vars[var] = true;
        f.state_values[var] = true;
    }
}

/// Keeps SSA value `v` in a new private variable (made right before `at`, an instruction of
/// the entry block) instead: stored where `v` is defined, loaded right before each of
/// `uses`, which read the load. Returns the variable; `None` when `v` is not an
/// instruction's result or a block parameter.
pub(crate) fn demote_value(types: &mut TypeTable, f: &mut Function, at: Inst, v: Value, uses: &[Inst]) -> Option<Inst> {
    let ty = f.value_type(v);
    let ptr_ty = types.pointer(AddressSpace::Private, ty);
    let align = super::align::variable_align(types, ty, 0) as u32;
    let store_at = match f.values[v].def {
        ValueDef::Result(def) => Err(def),
        ValueDef::Param(b, _) => Ok(*f.layout.insts[b].first()?),
        _ => return None,
    };
    let (var, slot) = f.insert_inst_before(at, InstData::Variable { ty, init: None, align: 0 }, Some(ptr_ty));
    let slot = slot?;
    let store = InstData::Store { ptr: slot, value: v, align, volatile: false, block: None };
    match store_at {
        Err(def) => f.insert_inst_after(def, store, None),
        Ok(first) => f.insert_inst_before(first, store, None),
    };
    for &u in uses {
        let (_, loaded) =
            f.insert_inst_before(u, InstData::Load { ptr: slot, align, volatile: false, block: None }, Some(ty));
        if let Some(l) = loaded {
            f.replace_uses_in(u, v, l);
        }
    }
    Some(var)
}
