//! Linearization of divergent control flow with explicit masks, for a kernel that runs W > 1
//! work-items as the lanes of one call (whole-function vectorization in the style of
//! Karrenberg & Hack). The IR stays per work-item (SPMD): a mask is an ordinary `bool` value,
//! true for the work-items that would have run a block, and a *masked block*
//! ([`crate::ir::BlockData::mask`]) runs its instructions with effects only for them.
//!
//! **Zones** (`zones`). A divergent branch (or switch) of the work-item analysis makes a
//! zone of the blocks between it and its immediate post-dominator `P` (or the function's end
//! when its paths reach different returns). When a path from the branch comes back to it,
//! the branch decides when lanes leave a loop: the zone is then the outermost such loop,
//! from its header up to the first post-dominator of the header outside the loop. A zone
//! control enters elsewhere than at its entry grows to the zone of the loop around it, and
//! at last to the whole function; zones nested in others are linearized with them. A zone
//! holds no work-group barrier (a barrier is never under divergence in a valid program).
//!
//! **Blocks.** A zone's blocks run one after the other in the loop-contiguous topological
//! order ([`crate::analysis::LoopInfo::block_order`]), each behind a *control block*
//! (unmasked) that computes:
//! - the edge masks of the previous block's terminator: `select(mask, cond, false)` for the
//!   then edge, `select(mask, !cond, false)` for the else edge, the cases of a switch in
//!   order (a case takes the work-items no earlier case took);
//! - the block's mask, the `or` of the masks of the edges into it;
//! - its parameters as a chain of selects over the edges' arguments (a select only where the
//!   edges pass different values: a value every edge passes stays what it is, uniform too).
//!
//! Branches inside a zone, uniform ones too, become jumps; after the last block a control
//! block computes `P`'s arguments the same way and jumps to `P` (or returns).
//!
//! **Loops** inside a zone keep their back edge, now taken while any lane goes on:
//! - the header gets a parameter, the *loop mask* (the lanes in this iteration), which is
//!   its mask; on entry it is the `or` of the entering edges, and when no lane enters, a
//!   branch on `any_active` skips the loop;
//! - after the loop's last block a *latch* control block computes the continuing lanes (the
//!   `or` of the back edges' masks) and the header's arguments for them, and branches on
//!   `any_active` of that mask back to the header or on to the block after the loop;
//! - lanes leave in different iterations, so what leaves is kept per lane in more header
//!   parameters, updated by the latch: for each exit target the lanes that took it so far
//!   (`or`) and its arguments (a select under the exit edge's mask), and for each value of
//!   the loop used after it, its value in the iteration the lane left (a select under the
//!   lanes that left in this iteration). They start false (masks) or undefined;
//! - in a loop whose lanes all leave in the same iteration (no divergent branch inside
//!   decides where a lane goes outside it), a value the work-item analysis found uniform
//!   is kept under `any_active` of the lanes leaving rather than under their mask, so it
//!   stays uniform, and so does what depends on it after the loop (a branch there stays a
//!   branch, as the analysis before the pass assumed);
//! - the block after the loop receives them as parameters (from the latch, or the initial
//!   values from the skip): its exit edges go on from there, and the uses after the loop
//!   read those parameters.
//!
//! Speculation (every rule of this pass, in one place): the only instructions the pass adds
//! are selects, `or`, `not`, `any_active` and integer compares of a switch's selector,
//! which cannot trap and touch nothing, in unmasked control blocks: they run for every
//! work-item that reached the zone. They read values of masked blocks (a condition, a
//! branch argument, a value used after a loop) only under a `select` on a mask that holds
//! only for work-items that ran that block, never through `and`, so what an inactive
//! work-item's copy of such a value holds (undefined, even poison in LLVM) never reaches a
//! mask, a join or a value kept for after a loop; `any_active` reads only masks. A loop's
//! header parameters carry whatever the back edge passes for the lanes that stopped: they
//! are read only under the loop mask. The original instructions stay in their (now masked)
//! blocks: the lowering runs loads, stores, atomics, image accesses, printf and calls only
//! for the block's active lanes, and guards integer division for every lane whatever the
//! mask (`back::llvm`), so nothing traps for a lane that is off. The lowering may
//! therefore run a masked block of arithmetic only for every lane
//! (`back::llvm::masked::effect_free`: cheaper than testing its mask); a block with any
//! other instruction is skipped when no lane is in it.
//!
//! A function this pass cannot linearize ([`check`] says why: irreducible control flow that
//! `passes::reducible` left, a barrier inside a zone, a private variable declared in a
//! divergent loop and used after it) stays scalar;
//! the back end asks before it picks a width. The Gen device's instrumented builds are
//! linearized the same way: their `gen.block` / `gen.count` count under the block's mask.

mod zones;

use crate::ir::{
    BinaryOp, Block, BlockCall, CmpOp, Const, ConstData, Func, Function, Inst, InstData, Module, Type, UnaryOp, Value,
};
use crate::vectorize::analysis::WorkItemAnalysis;
use std::collections::{HashMap, HashSet};
use zones::{Entry, Shapes};

/// Why the divergent control flow of `f` cannot be linearized; `None` when it can (or there
/// is none).
pub fn check(f: &Function, wa: &WorkItemAnalysis) -> Option<String> {
    if wa.divergent_branches.is_empty() {
        return None;
    }
    zones::zones(&Shapes::new(f), wa).err()
}

/// A zone as the pass walks it.
struct Plan {
    entry: Entry,
    /// The zone's blocks in loop-contiguous topological order.
    blocks: Vec<Block>,
    exit: Option<Block>,
    /// The loops of the zone: header -> the loop's blocks.
    loops: HashMap<Block, HashSet<Block>>,
    /// The headers of the loops whose lanes leave together: no divergent branch inside
    /// decides where a lane goes outside the loop.
    lockstep: HashSet<Block>,
}

/// Linearizes the divergent control flow of the kernel function `func` (whose work-item
/// analysis is `wa`): returns whether it changed the function, an error when it cannot
/// ([`check`]).
pub fn run(m: &mut Module, func: Func, wa: &WorkItemAnalysis) -> Result<bool, String> {
    if wa.divergent_branches.is_empty() {
        return Ok(false);
    }
    let mut plans: Vec<Plan> = {
        let f = &m.functions[func];
        let s = Shapes::new(f);
        let zs = zones::zones(&s, wa)?;
        let order = s.loops.block_order(&s.cfg);
        zs.into_iter()
            .map(|z| Plan {
                entry: z.entry,
                blocks: order.iter().copied().filter(|b| z.blocks.contains(b)).collect(),
                exit: z.exit,
                loops: s
                    .loops
                    .loops()
                    .iter()
                    .filter(|l| z.blocks.contains(&l.header))
                    .map(|l| (l.header, l.blocks.iter().copied().collect()))
                    .collect(),
                lockstep: s
                    .loops
                    .loops()
                    .iter()
                    .filter(|l| z.blocks.contains(&l.header))
                    .filter(|l| crate::vectorize::divergent_exit(f, wa, &s.pdom, l) != Some(true))
                    .map(|l| l.header)
                    .collect(),
            })
            .collect()
    };
    // The values the work-item analysis found uniform (kept uniform after lock-step loops).
    let uniform: HashSet<Value> = {
        let f = &m.functions[func];
        f.layout
            .blocks
            .iter()
            .flat_map(|&b| {
                f.blocks[b].params.iter().copied().chain(f.layout.insts[b].iter().filter_map(|&i| f.inst_result[i]))
            })
            .filter(|&v| wa.shape(f, v).is_uniform())
            .collect()
    };
    if plans.is_empty() {
        return Ok(false);
    }
    let bool_ty = m.types.bool();
    let t = m.add_const(ConstData::Int { ty: bool_ty, bits: 1 });
    let fl = m.add_const(ConstData::Int { ty: bool_ty, bits: 0 });
    // The case values of the switches in zones, as constants of their selector's type, and
    // an undefined value of each type a loop may keep for after it.
    let mut keys: HashSet<(Type, u64)> = HashSet::new();
    let mut types: HashSet<Type> = HashSet::new();
    {
        let f = &m.functions[func];
        let heads = plans.iter().filter_map(|p| match p.entry {
            Entry::Branch(b) => Some(b),
            Entry::Loop(_) => None,
        });
        for b in heads.chain(plans.iter().flat_map(|p| p.blocks.iter().copied())) {
            if let Some(InstData::Switch { selector, cases, .. }) = f.terminator(b).map(|i| &f.insts[i]) {
                let ty = f.value_type(*selector);
                keys.extend(cases.iter().map(|(v, _)| (ty, *v)));
            }
        }
        for p in plans.iter().filter(|p| !p.loops.is_empty()) {
            for &b in p.blocks.iter().chain(&p.exit) {
                types.extend(f.blocks[b].params.iter().map(|&v| f.value_type(v)));
                types.extend(f.layout.insts[b].iter().filter_map(|&i| f.inst_result[i]).map(|v| f.value_type(v)));
            }
        }
    }
    let case_consts: HashMap<(Type, u64), Const> =
        keys.into_iter().map(|(ty, v)| ((ty, v), m.add_const(ConstData::Int { ty, bits: v }))).collect();
    let undefs: HashMap<Type, Const> = types.into_iter().map(|ty| (ty, m.add_const(ConstData::Undef { ty }))).collect();
    let f = &mut m.functions[func];
    let mut lin = Lin {
        tru: f.const_value(t, bool_ty),
        fls: f.const_value(fl, bool_ty),
        bool_ty,
        case_consts,
        consts: HashMap::new(),
        undefs,
        undef_values: HashMap::new(),
        uniform,
    };
    // Preheaders first: a zone's exit may be the header of a loop zone after it, whose
    // preheader then takes the edges into it.
    let mut heads = Vec::with_capacity(plans.len());
    let mut preheaders: HashMap<Block, Block> = HashMap::new();
    for p in &plans {
        heads.push(match p.entry {
            Entry::Branch(b) => b,
            Entry::Loop(_) => {
                let z = preheader(f, p)?;
                preheaders.insert(*p.blocks.first().ok_or("an empty zone")?, z);
                z
            }
        });
    }
    for (p, head) in plans.iter_mut().zip(heads) {
        if let Some(z) = p.exit.and_then(|x| preheaders.get(&x)) {
            p.exit = Some(*z);
        }
        lin.zone(f, head, p)?;
    }
    Ok(true)
}

/// A block before the header of a loop zone that every edge from outside the zone now
/// enters through, passing the header's arguments on: the zone's entry.
fn preheader(f: &mut Function, p: &Plan) -> Result<Block, String> {
    let h = *p.blocks.first().ok_or("an empty zone")?;
    let zone: HashSet<Block> = p.blocks.iter().copied().collect();
    let z = f.create_block();
    let types: Vec<Type> = f.blocks[h].params.iter().map(|&v| f.value_type(v)).collect();
    let args: Vec<Value> = types.into_iter().map(|ty| f.append_block_param(z, ty)).collect();
    let outside: Vec<Block> = f.layout.blocks.iter().copied().filter(|b| !zone.contains(b) && *b != z).collect();
    for b in outside {
        let Some(t) = f.terminator(b) else { continue };
        for call in f.insts[t].successors_mut() {
            if call.block == h {
                call.block = z;
            }
        }
    }
    f.append_inst(z, InstData::Jump { dest: BlockCall { block: h, args } }, None);
    f.layout.blocks.retain(|&b| b != z);
    let at = f.layout.blocks.iter().position(|&b| b == h).ok_or("the loop's header is not placed")?;
    f.layout.blocks.insert(at, z);
    Ok(z)
}

struct Lin {
    tru: Value,
    fls: Value,
    bool_ty: Type,
    case_consts: HashMap<(Type, u64), Const>,
    /// The case constants as values of the function.
    consts: HashMap<(Type, u64), Value>,
    undefs: HashMap<Type, Const>,
    undef_values: HashMap<Type, Value>,
    /// The function's values the work-item analysis found uniform.
    uniform: HashSet<Value>,
}

/// An edge taken by the work-items of `mask`, passing `args`.
struct Edge {
    mask: Value,
    args: Vec<Value>,
}

/// A loop of a zone being linearized.
struct OpenLoop {
    header: Block,
    /// The loop's blocks (as the function had them).
    members: HashSet<Block>,
    /// The header's own parameters (before the loop mask).
    params: usize,
    /// The branch (or jump) into the header, which gets the initial values of what the
    /// loop keeps for after it.
    enter: Inst,
    /// The block after the loop.
    after: Block,
    /// This iteration's back edges and exits (target `None`: a return).
    back: Vec<Edge>,
    exits: Vec<(Option<Block>, Edge)>,
    /// Where the header is in the zone's chain.
    start: usize,
    /// Its lanes leave together (`Plan::lockstep`).
    lockstep: bool,
}

/// The state of a zone's walk.
struct Walk {
    /// Edges not yet taken into their target, by target.
    incoming: HashMap<Block, Vec<Edge>>,
    /// Edges to the zone's exit (or returns).
    leaving: Vec<Edge>,
    open: Vec<OpenLoop>,
    /// The zone's blocks and control blocks in their new order.
    chain: Vec<Block>,
    exit: Option<Block>,
}

impl Walk {
    /// Files edge `e` to `target` as a back edge or an exit of the innermost open loop, or
    /// as an edge into a block still to come.
    fn take(&mut self, target: Option<Block>, e: Edge) {
        if let Some(l) = self.open.last_mut() {
            match target {
                Some(t) if t == l.header => l.back.push(e),
                Some(t) if l.members.contains(&t) => self.incoming.entry(t).or_default().push(e),
                _ => l.exits.push((target, e)),
            }
            return;
        }
        match target {
            Some(t) if Some(t) != self.exit => self.incoming.entry(t).or_default().push(e),
            _ => self.leaving.push(e),
        }
    }
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

    /// An undefined value of type `ty` (the start of what a loop keeps for after it).
    fn undef(&mut self, f: &mut Function, ty: Type) -> Result<Value, String> {
        if let Some(&v) = self.undef_values.get(&ty) {
            return Ok(v);
        }
        let c = *self.undefs.get(&ty).ok_or("no undefined constant of a kept value's type")?;
        let v = f.const_value(c, ty);
        self.undef_values.insert(ty, v);
        Ok(v)
    }

    /// Linearizes the zone `p`, entered by the terminator of `head`.
    fn zone(&mut self, f: &mut Function, head: Block, p: &Plan) -> Result<(), String> {
        let mut w =
            Walk { incoming: HashMap::new(), leaving: Vec::new(), open: Vec::new(), chain: Vec::new(), exit: p.exit };
        let mut cur = self.after_block(f, &mut w, head, self.tru)?;
        for &x in &p.blocks {
            while w.open.last().is_some_and(|l| !l.members.contains(&x)) {
                cur = self.close(f, &mut w, cur)?;
            }
            let ins = w.incoming.remove(&x).ok_or("a zone block no edge reaches")?;
            let mut mask = self.fls;
            for e in &ins {
                mask = self.or(f, cur, mask, e.mask)?;
            }
            if let Some(members) = p.loops.get(&x) {
                let params = f.blocks[x].params.clone();
                let mut args = Vec::with_capacity(params.len() + 1);
                for (k, &pv) in params.iter().enumerate() {
                    let ty = f.value_type(pv);
                    args.push(self.join(f, cur, &ins, k, ty)?);
                }
                args.push(mask);
                let lm = f.append_block_param(x, self.bool_ty);
                let after = f.create_block();
                let into = BlockCall { block: x, args };
                let enter = if mask == self.tru {
                    f.append_inst(cur, InstData::Jump { dest: into }, None).0
                } else {
                    // No lane enters: on past the loop.
                    let any = self.inst(f, cur, InstData::AnyActive { cond: mask }, self.bool_ty)?;
                    let past = BlockCall { block: after, args: Vec::new() };
                    f.append_inst(cur, InstData::Branch { cond: any, then_dest: into, else_dest: past }, None).0
                };
                f.blocks[x].mask = Some(lm);
                w.open.push(OpenLoop {
                    header: x,
                    members: members.clone(),
                    params: params.len(),
                    enter,
                    after,
                    back: Vec::new(),
                    exits: Vec::new(),
                    start: w.chain.len(),
                    lockstep: p.lockstep.contains(&x),
                });
            } else {
                let params = std::mem::take(&mut f.blocks[x].params);
                for (k, &pv) in params.iter().enumerate() {
                    let ty = f.value_type(pv);
                    let v = self.join(f, cur, &ins, k, ty)?;
                    f.replace_all_uses(pv, v);
                    // Arguments already collected for later joins cannot name `pv` (its block
                    // comes later), so only the instructions needed rewriting.
                }
                if mask != self.tru {
                    f.blocks[x].mask = Some(mask);
                }
                f.append_inst(cur, InstData::Jump { dest: BlockCall { block: x, args: vec![] } }, None);
            }
            w.chain.push(x);
            let m = f.blocks[x].mask.unwrap_or(self.tru);
            cur = self.after_block(f, &mut w, x, m)?;
        }
        while !w.open.is_empty() {
            cur = self.close(f, &mut w, cur)?;
        }
        if !w.incoming.is_empty() {
            return Err("edges into blocks the zone's walk never reached".into());
        }
        // After the last block: on to the zone's exit with its joined arguments.
        match p.exit {
            Some(x) => {
                let params = f.blocks[x].params.clone();
                let mut args = Vec::with_capacity(params.len());
                for (k, &pv) in params.iter().enumerate() {
                    let ty = f.value_type(pv);
                    args.push(self.join(f, cur, &w.leaving, k, ty)?);
                }
                f.append_inst(cur, InstData::Jump { dest: BlockCall { block: x, args } }, None);
            }
            None => {
                f.append_inst(cur, InstData::Return { value: None }, None);
            }
        }
        // Layout: the chain right after the head.
        let moved: HashSet<Block> = w.chain.iter().copied().collect();
        f.layout.blocks.retain(|b| !moved.contains(b));
        let at = f.layout.blocks.iter().position(|b| *b == head).ok_or("the zone's head is not placed")? + 1;
        f.layout.blocks.splice(at..at, w.chain);
        Ok(())
    }

    /// The control block after `b` (which runs under `mask`): `b` now jumps there, and it
    /// computes `b`'s edges, which the walk files.
    fn after_block(&mut self, f: &mut Function, w: &mut Walk, b: Block, mask: Value) -> Result<Block, String> {
        let c = f.create_block();
        w.chain.push(c);
        let term = f.terminator(b).ok_or("a block without a terminator")?;
        let data = std::mem::replace(&mut f.insts[term], InstData::Jump { dest: BlockCall { block: c, args: vec![] } });
        for (target, edge) in self.edges(f, c, mask, &data)? {
            w.take(target, edge);
        }
        Ok(c)
    }

    /// The condition under which a loop keeps a value for after it, in control block `c`:
    /// the lanes of `mask` (those leaving now), or, for a value every lane has alike
    /// (`same`: uniform, in a loop whose lanes leave together), whether any lane leaves now:
    /// all of them do then, and the kept value stays uniform, so what depends on it after
    /// the loop stays uniform too.
    fn kept_under(&self, f: &mut Function, c: Block, mask: Value, same: bool) -> Result<Value, String> {
        if same {
            self.inst(f, c, InstData::AnyActive { cond: mask }, self.bool_ty)
        } else {
            Ok(mask)
        }
    }

    /// Closes the innermost open loop in control block `cur`, right after its last block:
    /// the latch, what the loop keeps for after it, and the block after it, which it
    /// returns (the walk goes on there).
    fn close(&mut self, f: &mut Function, w: &mut Walk, cur: Block) -> Result<Block, String> {
        let l = w.open.pop().ok_or("no loop to close")?;
        let h = l.header;
        let mut cm = self.fls;
        for e in &l.back {
            cm = self.or(f, cur, cm, e.mask)?;
        }
        let mut back_args = Vec::with_capacity(l.params + 1);
        for k in 0..l.params {
            let ty = f.value_type(f.blocks[h].params[k]);
            back_args.push(self.join(f, cur, &l.back, k, ty)?);
        }
        back_args.push(cm);
        // Kept per lane: (header parameter, its value for the next iteration and after the
        // loop, its value on entry).
        let mut kept: Vec<(Value, Value, Value)> = Vec::new();
        // Exit targets: (target, index in `kept` of its mask, of its first argument, count).
        let mut targets: Vec<(Option<Block>, usize, usize)> = Vec::new();
        for (t, _) in &l.exits {
            if targets.iter().any(|(x, ..)| x == t) {
                continue;
            }
            let edges: Vec<&Edge> = l.exits.iter().filter(|(x, _)| x == t).map(|(_, e)| e).collect();
            let pm = f.append_block_param(h, self.bool_ty);
            let mut nm = pm;
            for e in &edges {
                nm = self.inst(
                    f,
                    cur,
                    InstData::Binary { op: BinaryOp::LogicalOr, lhs: nm, rhs: e.mask },
                    self.bool_ty,
                )?;
            }
            let at = kept.len();
            kept.push((pm, nm, self.fls));
            let n = edges[0].args.len();
            for k in 0..n {
                let ty = f.value_type(edges[0].args[k]);
                let pa = f.append_block_param(h, ty);
                let mut v = pa;
                let same = l.lockstep && edges.iter().all(|e| self.uniform.contains(&e.args[k]));
                for e in &edges {
                    let cond = self.kept_under(f, cur, e.mask, same)?;
                    v = self.inst(f, cur, InstData::Select { cond, if_true: e.args[k], if_false: v }, ty)?;
                }
                let init = self.undef(f, ty)?;
                kept.push((pa, v, init));
            }
            targets.push((*t, at, n));
        }
        // The loop's values used after it, as each lane last saw them.
        let in_loop: HashSet<Block> = w.chain[l.start..].iter().copied().collect();
        let mut defined: HashSet<Value> = HashSet::new();
        for &b in &in_loop {
            defined.extend(f.blocks[b].params.iter().copied());
            for &i in &f.layout.insts[b] {
                if let (Some(r), false) = (f.inst_result[i], matches!(f.insts[i], InstData::Variable { .. })) {
                    defined.insert(r);
                }
            }
        }
        let mut live: Vec<Value> = Vec::new();
        let mut users: Vec<Inst> = Vec::new();
        // Blocks after the loop masked by one of its values (a zone linearized earlier).
        let mut masked: Vec<Block> = Vec::new();
        for &b in f.layout.blocks.iter().filter(|b| !in_loop.contains(b)) {
            if let Some(m) = f.blocks[b].mask.filter(|m| defined.contains(m)) {
                masked.push(b);
                if !live.contains(&m) {
                    live.push(m);
                }
            }
            for &i in &f.layout.insts[b] {
                let mut uses = false;
                f.insts[i].for_each_operand(|v| {
                    if defined.contains(&v) {
                        uses = true;
                        if !live.contains(&v) {
                            live.push(v);
                        }
                    }
                });
                if uses {
                    users.push(i);
                }
            }
        }
        let first_live = kept.len();
        if !live.is_empty() {
            let mut left = self.fls;
            for (_, e) in &l.exits {
                left = self.or(f, cur, left, e.mask)?;
            }
            for &v in &live {
                let ty = f.value_type(v);
                let pa = f.append_block_param(h, ty);
                let cond = self.kept_under(f, cur, left, l.lockstep && self.uniform.contains(&v))?;
                let nv = self.inst(f, cur, InstData::Select { cond, if_true: v, if_false: pa }, ty)?;
                let init = self.undef(f, ty)?;
                kept.push((pa, nv, init));
            }
        }
        // The latch, and the block after the loop with what the loop keeps.
        let outs: Vec<Value> = kept.iter().map(|k| k.1).collect();
        let kept_types: Vec<Type> = kept.iter().map(|k| f.value_type(k.0)).collect();
        let after_params: Vec<Value> = kept_types.into_iter().map(|ty| f.append_block_param(l.after, ty)).collect();
        back_args.extend(outs.iter().copied());
        let any = self.inst(f, cur, InstData::AnyActive { cond: cm }, self.bool_ty)?;
        f.append_inst(
            cur,
            InstData::Branch {
                cond: any,
                then_dest: BlockCall { block: h, args: back_args },
                else_dest: BlockCall { block: l.after, args: outs },
            },
            None,
        );
        let inits: Vec<Value> = kept.iter().map(|k| k.2).collect();
        for call in f.insts[l.enter].successors_mut() {
            call.args.extend(inits.iter().copied());
        }
        for (j, &v) in live.iter().enumerate() {
            let p = after_params[first_live + j];
            for &i in &users {
                f.replace_uses_in(i, v, p);
            }
            for &b in &masked {
                if f.blocks[b].mask == Some(v) {
                    f.blocks[b].mask = Some(p);
                }
            }
        }
        w.chain.push(l.after);
        for (t, at, n) in targets {
            let e = Edge { mask: after_params[at], args: after_params[at + 1..at + 1 + n].to_vec() };
            w.take(t, e);
        }
        Ok(l.after)
    }
}

#[cfg(test)]
mod tests;
