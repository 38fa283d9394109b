//! Linearized control flow for vector code with divergent branches, decided while LLVM IR
//! is emitted, and the lowering of masked blocks.
//!
//! Divergent branches that head acyclic regions are linearized before lowering, as an IR
//! pass (`passes::linearize`): their blocks arrive here masked, and
//! [`FnLower::enter_block_mask`] only sets the block's lane mask (the packet's lanes whose
//! mask is true) and skips the block when no lane is in it. What follows is for functions
//! the pass leaves alone: a divergent loop exit or a divergent branch around a loop
//! (loop-mask form), irreducible control flow (the lane dispatcher), and the Gen device's
//! instrumented builds, whose model reports per source block. A function has either masked
//! blocks or divergent branches, never both.
//!
//! *Loop-mask form* (if-conversion, every reducible function): the blocks run in the
//! loop-contiguous topological order of [`crate::analysis::Cfg::loop_order`], each under
//! its `block mask` slot, the union of the masks of the edges taken into it (or-ed by the
//! predecessors' terminators; a block empties its slot when it runs). A block whose mask is
//! empty is skipped by a one-test guard (a loop header's guard skips the whole loop). After
//! the last block of each loop a *latch check* runs the loop again while any lane took a
//! back edge (the header's slot: the loop mask of the next iteration), so the body runs
//! for all lanes while any lane is active, one mask reduction per iteration. A lane that
//! leaves (break, the loop condition, a return) is no longer in the loop mask; its exit
//! block's mask and parameter slots collect it, blended, in the iteration it leaves, and
//! the exit block runs once after the loop under the union of its lanes. A terminator's
//! arguments are all read before any is stored (one parallel copy: a header parameter may
//! be passed on to another over the back edge). Divergent branches inside the body are
//! if-converted the same way, and nested loops nest. Memory operations
//! are masked (inactive lanes never touch memory). Values used outside their block live in
//! allocas (SROA/mem2reg turn them back into SSA); a write blends under the mask only where
//! another lane's old value can still be read (`plain_slots`: live-outs of a loop, exits,
//! joins), so the loop-carried values of a loop body carry no blends.
//!
//! *Lane dispatcher* (irreducible control flow, which has no loop-contiguous order): each
//! block gets an id in that order (ids 2k; a natural loop's *continue* point gets the odd
//! id just after its last block). Every lane keeps the id of the block it runs next in
//! `next` (`<W x i32>`, `DONE` once it returned). A terminator sets `next` for the lanes
//! that take each edge (edge mask = block mask & condition) and stores the edge's block
//! arguments into the target's parameter slots blended under that mask, then jumps to the
//! dispatcher, which picks the smallest pending id (a vector umin), makes the lanes waiting
//! there the mask and switches to that block. Back edges of natural loops go to the loop's
//! continue point, which moves its lanes to the header only when no lane is left in the
//! loop body. The work-item analysis treats every value crossing blocks of such a function
//! as varying, so each lane's values survive in the blended slots whatever the schedule.

use super::llvm::{bail, FnLower, Val, R};
use crate::analysis::{Cfg, DomTree, LoopInfo};
use crate::ir::{Block, InstData, Value};
use inkwell::basic_block::BasicBlock;
use inkwell::types::VectorType;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;
use std::collections::{HashMap, HashSet};

/// `next` of a lane that returned (or is not active in this packet).
const DONE: u64 = u32::MAX as u64;

/// The state of a linearized function.
pub struct Lin<'ctx> {
    ids: HashMap<Block, u32>,
    /// Loop header -> the id of its continue point.
    cont_of: HashMap<Block, u32>,
    back_edges: HashSet<(Block, Block)>,
    next: PointerValue<'ctx>,
    slots: HashMap<Value, PointerValue<'ctx>>,
    /// Slots whose writes blend under the mask (the other lanes' values are still needed).
    blended: HashSet<Value>,
    /// Edges whose arguments go to the target's parameter slots unblended.
    plain_edges: HashSet<(Block, Block)>,
    def_block: HashMap<Value, Block>,
    pub dispatch: BasicBlock<'ctx>,
    /// Where the body starts: every active lane is at the entry block.
    pub start: BasicBlock<'ctx>,
    pub cur: Option<Block>,
    /// The mask of the block running (set by the dispatcher; a direct jump keeps it).
    cur_mask: PointerValue<'ctx>,
    /// If-converted (no dispatcher): each block's mask slot and the guard that follows it.
    pred: Option<Pred<'ctx>>,
}

/// The state of an if-converted function.
struct Pred<'ctx> {
    /// Block -> its mask slot (`<W x i1>`, the lanes that branched to it so far).
    masks: HashMap<Block, PointerValue<'ctx>>,
    /// Block -> where control goes after it: the guard of the next block in order, or the
    /// exit after the last one.
    after: HashMap<Block, BasicBlock<'ctx>>,
}

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// Sets up linearized control flow (after the LLVM blocks exist): ids, slots, `next` and
    /// the lane dispatcher, whose mask becomes the vector mask of every block.
    pub fn setup_linearized(&mut self, entry: Block) -> R<()> {
        let f = self.f;
        let w = self.vec.as_ref().map(|v| v.width).ok_or("not in vector mode")?;
        let cfg = Cfg::new(f);
        let dom = DomTree::new(&cfg);
        let loops = LoopInfo::new(&cfg, &dom);
        let order = loops.block_order(&cfg);
        let pos: HashMap<Block, usize> = order.iter().enumerate().map(|(k, b)| (*b, k)).collect();
        let ids: HashMap<Block, u32> = pos.iter().map(|(b, k)| (*b, 2 * *k as u32)).collect();
        let mut cont_of = HashMap::new();
        let mut back_edges = HashSet::new();
        for l in loops.loops() {
            let last = l.blocks.iter().filter_map(|b| pos.get(b)).max().copied().unwrap_or(0);
            cont_of.insert(l.header, 2 * last as u32 + 1);
            for &latch in &l.latches {
                back_edges.insert((latch, l.header));
            }
        }
        // Slots for values used outside their block and for parameters of non-entry blocks.
        let mut def_block = HashMap::new();
        for &b in &f.layout.blocks {
            if b != entry {
                for &p in &f.blocks[b].params {
                    def_block.insert(p, b);
                }
            }
            for &i in &f.layout.insts[b] {
                if let Some(r) = f.inst_result[i] {
                    // Variables and work-item ids are set up in the prologue (every entry).
                    if !matches!(f.insts[i], InstData::Variable { .. } | InstData::WorkItem { .. }) {
                        def_block.insert(r, b);
                    }
                }
            }
        }
        let mut need: Vec<Value> = Vec::new();
        let mut seen = HashSet::new();
        for &b in &f.layout.blocks {
            if b != entry {
                for &p in &f.blocks[b].params {
                    if seen.insert(p) {
                        need.push(p);
                    }
                }
            }
            for &i in &f.layout.insts[b] {
                f.insts[i].for_each_operand(|v| {
                    if def_block.get(&v).is_some_and(|db| *db != b) && seen.insert(v) {
                        need.push(v);
                    }
                });
            }
        }
        let pred_mode = crate::vectorize::if_convertible(f);
        let (blended, plain_edges) = if pred_mode {
            plain_slots(f, &cfg, &loops, &def_block, &back_edges)
        } else {
            (need.iter().copied().collect(), HashSet::new())
        };
        let mut slots = HashMap::new();
        for v in need {
            let ty = self.value_llty(v)?;
            let a = self.pb.build_alloca(ty, "")?;
            self.pb.build_store(a, super::llvm::undef_of(ty))?;
            slots.insert(v, a);
        }
        let i32t = self.i32();
        let nt = i32t.vec_type(w);
        let next = self.pb.build_alloca(nt, "next")?;
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let start =
            self.pb.build_select(vs.mask, self.splat_i32(ids[&entry] as u64, w), self.splat_i32(DONE, w), "")?;
        self.pb.build_store(next, start)?;

        // The lane dispatcher.
        let dispatch = self.cx().append_basic_block(self.llf, "lanes");
        let exit = self.cx().append_basic_block(self.llf, "lanes.done");
        let b = self.cx().create_builder();
        b.position_at_end(exit);
        b.build_return(Some(&i32t.const_zero()))?;
        b.position_at_end(dispatch);
        let nv = b.build_load(nt, next, "")?.into_vector_value();
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.vector.reduce.umin")
            .and_then(|i| i.get_declaration(&self.e.m, &[nt.into()]))
            .ok_or("cannot declare llvm.vector.reduce.umin")?;
        let n = b.build_call(decl, &[nv.into()], "")?.try_as_basic_value().basic().ok_or("umin without result")?;
        let n = n.into_int_value();
        let ins = b.build_insert_element(nt.get_undef(), n, i32t.const_zero(), "")?;
        let splat_n = b.build_shuffle_vector(ins, nt.get_undef(), nt.const_zero(), "")?;
        let mask = b.build_int_compare(IntPredicate::EQ, nv, splat_n, "mask")?;
        // The last active lane (stores of varying values to uniform addresses).
        let iw = super::llvm::int_type(self.cx(), w)?;
        let bits = b.build_bit_cast(mask, iw, "")?.into_int_value();
        let ctlz = inkwell::intrinsics::Intrinsic::find("llvm.ctlz")
            .and_then(|i| i.get_declaration(&self.e.m, &[iw.into()]))
            .ok_or("cannot declare llvm.ctlz")?;
        let lz = b
            .build_call(ctlz, &[bits.into(), self.cx().bool_type().const_zero().into()], "")?
            .try_as_basic_value()
            .basic()
            .ok_or("ctlz without result")?
            .into_int_value();
        let lz = b.build_int_cast_sign_flag(lz, i32t, false, "")?;
        let last = b.build_int_sub(i32t.const_int(w as u64 - 1, false), lz, "")?;
        let mut cases: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> = Vec::new();
        for (&blk, &id) in &ids {
            if let Some(bb) = self.blocks_of(blk) {
                cases.push((i32t.const_int(id as u64, false), bb));
            }
        }
        for (&header, &cid) in &cont_of {
            let cb = self.cx().append_basic_block(self.llf, "continue");
            let cbld = self.cx().create_builder();
            cbld.position_at_end(cb);
            let hv = self.splat_i32(ids[&header] as u64, w);
            let nv2 = cbld.build_select(mask, hv, nv, "")?;
            cbld.build_store(next, nv2)?;
            cbld.build_unconditional_branch(dispatch)?;
            cases.push((i32t.const_int(cid as u64, false), cb));
        }
        cases.sort_by_key(|(c, _)| c.get_zero_extended_constant());
        let _ = last;
        let cur_mask = self.pb.build_alloca(self.cx().bool_type().vec_type(w), "mask")?;
        b.build_store(cur_mask, mask)?;
        b.build_switch(n, exit, &cases)?;
        // The start needs no dispatch: the packet's lanes are all at the entry block.
        let start = self.cx().append_basic_block(self.llf, "lanes.start");
        b.position_at_end(start);
        let static_mask = self.vec.as_ref().ok_or("not in vector mode")?.static_mask;
        b.build_store(cur_mask, static_mask)?;
        b.build_unconditional_branch(self.blocks_of(entry).ok_or("no entry block")?)?;
        let pred = if pred_mode { Some(self.setup_predication(&order, entry, &loops, w)?) } else { None };
        self.lin = Some(Lin {
            ids,
            cont_of,
            back_edges,
            next,
            slots,
            blended,
            plain_edges,
            def_block,
            dispatch,
            start,
            cur: None,
            cur_mask,
            pred,
        });
        Ok(())
    }

    /// If-conversion with loop masks: a mask slot per block (empty at the start; the block
    /// runs under it and empties it), before every block but the entry a guard that skips
    /// the block when no lane is in it, and after the last block of each loop a latch check
    /// that runs the loop again while any lane took a back edge (the header's slot).
    fn setup_predication(&mut self, order: &[Block], entry: Block, loops: &LoopInfo, w: u32) -> R<Pred<'ctx>> {
        let bool_w = self.cx().bool_type().vec_type(w);
        let iw = super::llvm::int_type(self.cx(), w)?;
        let exit = self.cx().append_basic_block(self.llf, "pred.done");
        let b = self.cx().create_builder();
        b.position_at_end(exit);
        b.build_return(Some(&self.i32().const_zero()))?;
        let mut masks = HashMap::new();
        for &blk in order {
            if blk != entry && self.blocks_of(blk).is_some() {
                let slot = self.pb.build_alloca(bool_w, "bmask")?;
                self.pb.build_store(slot, bool_w.const_zero())?;
                masks.insert(blk, slot);
            }
        }
        // Branches to `yes` when any lane is in `slot`, else to `no`.
        let test_any = |slot: PointerValue<'ctx>, yes: BasicBlock<'ctx>, no: BasicBlock<'ctx>| -> R<()> {
            let m = b.build_load(bool_w, slot, "")?.into_vector_value();
            let bits = b.build_bit_cast(m, iw, "")?.into_int_value();
            let any = b.build_int_compare(IntPredicate::NE, bits, iw.const_zero(), "")?;
            b.build_conditional_branch(any, yes, no)?;
            Ok(())
        };
        let pos: HashMap<Block, usize> = order.iter().enumerate().map(|(k, b)| (*b, k)).collect();
        // Position of each loop's last block -> the loops ending there, outermost first.
        let mut ending: HashMap<usize, Vec<(u32, Block)>> = HashMap::new();
        for l in loops.loops() {
            let last = l.blocks.iter().filter_map(|b| pos.get(b)).max().copied().ok_or("a loop without blocks")?;
            ending.entry(last).or_default().push((l.depth, l.header));
        }
        let mut after = HashMap::new();
        // Header -> where control goes when no lane enters its loop.
        let mut skip_loop: HashMap<Block, BasicBlock<'ctx>> = HashMap::new();
        let mut next = exit;
        for (k, &blk) in order.iter().enumerate().rev() {
            let Some(bb) = self.blocks_of(blk) else { continue };
            let mut ends = ending.remove(&k).unwrap_or_default();
            ends.sort();
            for (_, header) in ends {
                let hb = self.blocks_of(header).ok_or("a loop header without a block")?;
                let slot = *masks.get(&header).ok_or("a loop header without a mask")?;
                let latch = self.cx().append_basic_block(self.llf, "loop.latch");
                b.position_at_end(latch);
                test_any(slot, hb, next)?;
                skip_loop.insert(header, next);
                next = latch;
            }
            after.insert(blk, next);
            if blk == entry {
                continue;
            }
            let guard = self.cx().append_basic_block(self.llf, "pred.guard");
            b.position_at_end(guard);
            let skip = skip_loop.get(&blk).copied().unwrap_or(next);
            test_any(*masks.get(&blk).ok_or("a block without a mask")?, bb, skip)?;
            next = guard;
        }
        Ok(Pred { masks, after })
    }

    /// The last active lane of `mask` (i32).
    fn last_lane(&self, mask: VectorValue<'ctx>, w: u32) -> R<IntValue<'ctx>> {
        let iw = super::llvm::int_type(self.cx(), w)?;
        let bits = self.b.build_bit_cast(mask, iw, "")?.into_int_value();
        let ctlz = inkwell::intrinsics::Intrinsic::find("llvm.ctlz")
            .and_then(|i| i.get_declaration(&self.e.m, &[iw.into()]))
            .ok_or("cannot declare llvm.ctlz")?;
        let lz = self
            .b
            .build_call(ctlz, &[bits.into(), self.cx().bool_type().const_zero().into()], "")?
            .try_as_basic_value()
            .basic()
            .ok_or("ctlz without result")?
            .into_int_value();
        let lz = self.b.build_int_cast_sign_flag(lz, self.i32(), false, "")?;
        Ok(self.b.build_int_sub(self.i32().const_int(w as u64 - 1, false), lz, "")?)
    }

    fn splat_i32(&self, x: u64, w: u32) -> VectorValue<'ctx> {
        let c: Vec<IntValue<'ctx>> = (0..w).map(|_| self.i32().const_int(x, false)).collect();
        VectorType::const_vector(&c)
    }

    /// In a linearized function: the value of `v` loaded from its slot when it was defined
    /// in another block.
    pub fn lin_get(&self, v: Value) -> R<Option<Val<'ctx>>> {
        let Some(lin) = &self.lin else { return Ok(None) };
        let Some(slot) = lin.slots.get(&v) else { return Ok(None) };
        if lin.def_block.get(&v) == lin.cur.as_ref() && self.vals_has(v) {
            return Ok(None);
        }
        let ty = self.value_llty(v)?;
        Ok(Some(self.b.build_load(ty, *slot, "")?))
    }

    /// In a linearized function: keeps `val` of `v` in its slot (blended under the mask when
    /// it varies).
    pub fn lin_define(&self, v: Value, val: Val<'ctx>) -> R<()> {
        let Some(lin) = &self.lin else { return Ok(()) };
        let Some(slot) = lin.slots.get(&v) else { return Ok(()) };
        let store = if self.is_uniform(v) || !lin.blended.contains(&v) {
            val
        } else {
            let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
            let old = self.b.build_load(val.get_type(), *slot, "")?;
            self.blend(mask, val, old)?
        };
        self.b.build_store(*slot, store)?;
        Ok(())
    }

    /// Loads the parameters of block `b` at its start.
    pub fn lin_enter(&mut self, b: Block) -> R<()> {
        let f = self.f;
        if let Some(lin) = self.lin.as_mut() {
            lin.cur = Some(b);
            // If-converted: a block's own mask slot (the entry's is the packet's mask).
            let own = lin.pred.as_ref().and_then(|p| p.masks.get(&b).copied());
            let cm = own.unwrap_or(lin.cur_mask);
            let w = self.vec.as_ref().map(|v| v.width).ok_or("not in vector mode")?;
            let bool_w = self.cx().bool_type().vec_type(w);
            let m = self.b.build_load(bool_w, cm, "mask")?.into_vector_value();
            if own.is_some() {
                // Consumed: lanes that come back (a loop's next iteration) or-in afresh.
                self.b.build_store(cm, bool_w.const_zero())?;
            }
            let l = self.last_lane(m, w)?;
            if let Some(vs) = self.vec.as_mut() {
                vs.mask = m;
                vs.last = l;
            }
        }
        let Some(lin) = &self.lin else { return Ok(()) };
        if f.layout.entry() == Some(b) {
            return Ok(()); // the kernel's parameters
        }
        let mut loaded = Vec::new();
        for &p in &f.blocks[b].params {
            let slot = *lin.slots.get(&p).ok_or("block parameter without a slot")?;
            let ty = self.value_llty(p)?;
            loaded.push((p, self.b.build_load(ty, slot, "")?));
        }
        for (p, v) in loaded {
            // Values live across a barrier are already in state variables (`passes::barriers`).
            self.define(p, v)?;
        }
        Ok(())
    }

    /// After a barrier's return: every lane of the packet continues here (a barrier is
    /// never under divergence), so the mask is the packet's and no lane waits elsewhere.
    pub fn lin_resume(&mut self) -> R<()> {
        let Some(lin) = &self.lin else { return Ok(()) };
        let (next, cur_mask) = (lin.next, lin.cur_mask);
        let vs = self.vec.as_mut().ok_or("not in vector mode")?;
        vs.mask = vs.static_mask;
        vs.last = vs.static_last;
        let (w, m) = (vs.width, vs.static_mask);
        self.b.build_store(next, self.splat_i32(DONE, w))?;
        self.b.build_store(cur_mask, m)?;
        Ok(())
    }

    /// The values of the arguments of every edge of a terminator, read before any of them
    /// is stored: the edges' stores are one parallel copy. An argument may be a parameter of
    /// the target itself (a loop header's `a = b; b = c;` passes the old `b` on to `a`),
    /// whose slot an earlier store of the same edge, or of another edge, would already have
    /// overwritten.
    fn edge_arg_values(&mut self, edges: &[(VectorValue<'ctx>, Block, Vec<Value>)]) -> R<Vec<Vec<Val<'ctx>>>> {
        let mut all = Vec::with_capacity(edges.len());
        for (_, target, args) in edges {
            let params = self.f.blocks[*target].params.clone();
            if params.len() != args.len() {
                bail!("branch to {target} with {} arguments", args.len());
            }
            let mut vals = Vec::with_capacity(args.len());
            for (&p, &a) in params.iter().zip(args) {
                vals.push(self.get_edge_arg(a, p)?);
            }
            all.push(vals);
        }
        Ok(all)
    }

    /// Stores the argument values `vals` of an edge taken by the lanes of `em` into
    /// `target`'s parameter slots (blended under `em`; a uniform parameter takes them when
    /// any lane does).
    fn pass_args(
        &mut self,
        em: VectorValue<'ctx>,
        target: Block,
        vals: &[Val<'ctx>],
        bool_w: VectorType<'ctx>,
    ) -> R<()> {
        let params = self.f.blocks[target].params.clone();
        let source = self.lin.as_ref().and_then(|l| l.cur).ok_or("no current block")?;
        for (&p, &val) in params.iter().zip(vals) {
            let lin = self.lin.as_ref().ok_or("not linearized")?;
            let slot = *lin.slots.get(&p).ok_or("block parameter without a slot")?;
            let plain = lin.plain_edges.contains(&(source, target)) && !lin.blended.contains(&p);
            let ty = self.value_llty(p)?;
            if plain {
                self.b.build_store(slot, val)?;
                continue;
            }
            let old = self.b.build_load(ty, slot, "")?;
            let blended = if self.is_uniform(p) {
                // Any lane taking the edge.
                let decl = inkwell::intrinsics::Intrinsic::find("llvm.vector.reduce.or")
                    .and_then(|i| i.get_declaration(&self.e.m, &[bool_w.into()]))
                    .ok_or("cannot declare llvm.vector.reduce.or")?;
                let any = self
                    .b
                    .build_call(decl, &[em.into()], "")?
                    .try_as_basic_value()
                    .basic()
                    .ok_or("reduce.or without result")?;
                self.select(any, val, old)?
            } else {
                self.blend(em, val, old)?
            };
            self.b.build_store(slot, blended)?;
        }
        Ok(())
    }

    /// The terminator of an if-converted block: arguments to the targets' slots, the edge
    /// masks or-ed into the targets' masks, then on to the next block's guard.
    fn pred_terminator(
        &mut self,
        cur: Block,
        edges: &[(VectorValue<'ctx>, Block, Vec<Value>)],
        bool_w: VectorType<'ctx>,
    ) -> R<()> {
        let vals = self.edge_arg_values(edges)?;
        for ((em, target, _), vals) in edges.iter().zip(&vals) {
            self.pass_args(*em, *target, vals, bool_w)?;
            let pred = self.lin.as_ref().and_then(|l| l.pred.as_ref()).ok_or("not if-converted")?;
            let slot = *pred.masks.get(target).ok_or("branch to a block without a mask")?;
            let old = self.b.build_load(bool_w, slot, "")?.into_vector_value();
            let new = self.b.build_or(old, *em, "")?;
            self.b.build_store(slot, new)?;
        }
        let pred = self.lin.as_ref().and_then(|l| l.pred.as_ref()).ok_or("not if-converted")?;
        let after = *pred.after.get(&cur).ok_or("block without a successor in order")?;
        self.b.build_unconditional_branch(after)?;
        Ok(())
    }

    /// A terminator of a linearized function.
    pub fn lin_terminator(&mut self, data: &InstData) -> R<()> {
        let w = self.vec.as_ref().map(|v| v.width).ok_or("not in vector mode")?;
        let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
        let lin = self.lin.as_ref().ok_or("not linearized")?;
        let (next, dispatch, cur) = (lin.next, lin.dispatch, lin.cur.ok_or("no current block")?);
        let bool_w = self.cx().bool_type().vec_type(w);
        let wide_cond = |fx: &mut Self, c: Value| -> R<VectorValue<'ctx>> {
            let v = fx.get_wide(c)?;
            match v {
                BasicValueEnum::VectorValue(x) if x.get_type() == bool_w => Ok(x),
                other => bail!("branch condition of type {}", other.get_type()),
            }
        };
        // (edge mask, target, arguments)
        let mut edges: Vec<(VectorValue<'ctx>, Block, Vec<Value>)> = Vec::new();
        let mut returns: Option<VectorValue<'ctx>> = None;
        match data {
            InstData::Jump { dest } => edges.push((mask, dest.block, dest.args.clone())),
            InstData::Branch { cond, then_dest, else_dest } => {
                let c = wide_cond(self, *cond)?;
                let t = self.b.build_and(mask, c, "")?;
                let nc = self.b.build_not(c, "")?;
                let e = self.b.build_and(mask, nc, "")?;
                edges.push((t, then_dest.block, then_dest.args.clone()));
                edges.push((e, else_dest.block, else_dest.args.clone()));
            }
            InstData::Switch { selector, default, cases } => {
                let s = self.get_wide(*selector)?.into_vector_value();
                let et = s.get_type().get_element_type().into_int_type();
                let mut taken = bool_w.const_zero();
                for (v, call) in cases {
                    let cv: Vec<IntValue<'ctx>> = (0..w).map(|_| et.const_int(*v, false)).collect();
                    let eq = self.b.build_int_compare(IntPredicate::EQ, s, VectorType::const_vector(&cv), "")?;
                    let not_taken = self.b.build_not(taken, "")?;
                    let em = self.b.build_and(self.b.build_and(mask, eq, "")?, not_taken, "")?;
                    taken = self.b.build_or(taken, eq, "")?;
                    edges.push((em, call.block, call.args.clone()));
                }
                let not_taken = self.b.build_not(taken, "")?;
                edges.push((self.b.build_and(mask, not_taken, "")?, default.block, default.args.clone()));
            }
            InstData::Return { .. } | InstData::Unreachable => returns = Some(mask),
            _ => bail!("not a terminator"),
        }
        if self.lin.as_ref().is_some_and(|l| l.pred.is_some()) {
            return self.pred_terminator(cur, &edges, bool_w);
        }
        let nt = self.i32().vec_type(w);
        let mut nv = self.b.build_load(nt, next, "")?.into_vector_value();
        let nv_old = nv;
        // (edge mask, id the dispatcher would see, block to jump to directly)
        let mut direct: Vec<(VectorValue<'ctx>, u32, Block)> = Vec::new();
        let vals = self.edge_arg_values(&edges)?;
        for ((em, target, _), vals) in edges.iter().zip(&vals) {
            self.pass_args(*em, *target, vals, bool_w)?;
            let lin = self.lin.as_ref().ok_or("not linearized")?;
            let id = if lin.back_edges.contains(&(cur, *target)) {
                *lin.cont_of.get(target).ok_or("back edge to a block that heads no loop")?
            } else {
                *lin.ids.get(target).ok_or("branch to an unreachable block")?
            };
            nv = self.b.build_select(*em, self.splat_i32(id as u64, w), nv, "")?.into_vector_value();
            direct.push((*em, id, *target));
        }
        if let Some(rm) = returns {
            nv = self.b.build_select(rm, self.splat_i32(DONE, w), nv, "")?.into_vector_value();
        }
        self.b.build_store(next, nv)?;
        if direct.is_empty() {
            self.b.build_unconditional_branch(dispatch)?;
            return Ok(());
        }
        // When every active lane takes one edge and no other lane waits at a smaller id,
        // the dispatcher would pick that edge's block with this very mask: jump there.
        let reduce = |fx: &Self, name: &str, v: VectorValue<'ctx>| -> R<IntValue<'ctx>> {
            let decl = inkwell::intrinsics::Intrinsic::find(name)
                .and_then(|i| i.get_declaration(&fx.e.m, &[v.get_type().into()]))
                .ok_or_else(|| super::llvm::Error(format!("cannot declare {name}")))?;
            Ok(fx
                .b
                .build_call(decl, &[v.into()], "")?
                .try_as_basic_value()
                .basic()
                .ok_or("reduction without result")?
                .into_int_value())
        };
        let others = self.b.build_select(mask, self.splat_i32(DONE, w), nv_old, "")?.into_vector_value();
        let others_min = reduce(self, "llvm.vector.reduce.umin", others)?;
        for (em, id, target) in direct {
            let not_e = self.b.build_not(em, "")?;
            let stray = self.b.build_and(mask, not_e, "")?;
            let any_stray = reduce(self, "llvm.vector.reduce.or", stray)?;
            let later =
                self.b.build_int_compare(IntPredicate::UGT, others_min, self.i32().const_int(id as u64, false), "")?;
            let no_stray = self.b.build_not(any_stray, "")?;
            let ok = self.b.build_and(no_stray, later, "")?;
            let dest = self.blocks_of(target).ok_or("branch to an unreachable block")?;
            let check_next = self.cx().append_basic_block(self.llf, "lanes.check");
            self.b.build_conditional_branch(ok, dest, check_next)?;
            self.b.position_at_end(check_next);
        }
        self.b.build_unconditional_branch(dispatch)?;
        Ok(())
    }
}

/// Where an if-converted function (loop-mask form) needs no blend: (the values whose slot
/// writes must blend, the edges whose arguments may be stored unblended).
///
/// A value's slot is read only by lanes that ran its definition in the same iteration of
/// the definition's innermost loop (the definition dominates the use), unless a use lies
/// outside that loop: lanes leave it in different iterations, and a lane that left keeps
/// its last value only through a blend. A block parameter takes its arguments unblended
/// from an edge when that edge is the only one of its kind (forward, or back edge) into the
/// block, does not leave a loop (exits are taken in different iterations, and their lanes
/// accumulate), and the parameter itself needs no blend: the block's lanes then all came
/// over that edge since the block last ran.
fn plain_slots(
    f: &crate::ir::Function,
    cfg: &Cfg,
    loops: &LoopInfo,
    def_block: &HashMap<Value, Block>,
    back_edges: &HashSet<(Block, Block)>,
) -> (HashSet<Value>, HashSet<(Block, Block)>) {
    let inside = |def: Block, at: Block| loops.loop_of(def).is_none_or(|l| loops.contains(l, at));
    let mut blended = HashSet::new();
    for &b in cfg.rpo() {
        for &i in &f.layout.insts[b] {
            f.insts[i].for_each_operand(|v| {
                if def_block.get(&v).is_some_and(|&db| db != b && !inside(db, b)) {
                    blended.insert(v);
                }
            });
        }
    }
    // Edges into each block: (forward, back).
    let mut count: HashMap<Block, (u32, u32)> = HashMap::new();
    for &b in cfg.rpo() {
        for t in f.successors(b) {
            let c = count.entry(t).or_default();
            if back_edges.contains(&(b, t)) {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
    }
    let mut plain = HashSet::new();
    for &b in cfg.rpo() {
        for t in f.successors(b) {
            let back = back_edges.contains(&(b, t));
            let (fw, bk) = count.get(&t).copied().unwrap_or_default();
            if (if back { bk } else { fw }) == 1 && inside(b, t) {
                plain.insert((b, t));
            }
        }
    }
    (blended, plain)
}

/// A short block of arithmetic only (no memory, call, built-in or barrier): a masked one runs
/// for every lane without a test (its values are only read under its mask).
fn effect_free(f: &crate::ir::Function, b: Block) -> bool {
    let insts = &f.layout.insts[b];
    insts.len() <= 32
        && insts.iter().all(|&i| {
            matches!(
                f.insts[i],
                InstData::Binary { .. }
                    | InstData::Unary { .. }
                    | InstData::Compare { .. }
                    | InstData::Select { .. }
                    | InstData::Convert { .. }
                    | InstData::ExtractElement { .. }
                    | InstData::InsertElement { .. }
                    | InstData::Shuffle { .. }
                    | InstData::ExtractValue { .. }
                    | InstData::InsertValue { .. }
                    | InstData::Construct { .. }
                    | InstData::AccessChain { .. }
                    | InstData::Jump { .. }
            )
        })
}

/// Masked blocks (`passes::linearize`): the block's mask is the packet's lanes whose mask
/// value is true; a block no lane is in is skipped (unless it is [`effect_free`]).
impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// At the start of block `b` (the builder positioned there): sets the vector mask to the
    /// block's (the packet's lanes for a block without a mask) and, for a masked block that
    /// ends in a jump to a block only it reaches, branches past it when no lane is in it.
    /// Returns (the guard's block, the block skipped to) for [`Self::leave_block_mask`].
    pub fn enter_block_mask(&mut self, b: Block) -> R<Option<(BasicBlock<'ctx>, BasicBlock<'ctx>)>> {
        let f = self.f;
        let Some(m) = f.blocks[b].mask else {
            if let Some(vs) = self.vec.as_mut() {
                vs.mask = vs.static_mask;
                vs.last = vs.static_last;
            }
            return Ok(None);
        };
        let any = match self.vec.as_ref().map(|vs| (vs.width, vs.static_mask)) {
            Some((w, st)) => {
                let mv = self.get_wide(m)?.into_vector_value();
                let mask = self.b.build_and(mv, st, "bmask")?;
                let last = self.last_lane(mask, w)?;
                if let Some(vs) = self.vec.as_mut() {
                    vs.mask = mask;
                    vs.last = last;
                }
                let iw = super::llvm::int_type(self.cx(), w)?;
                let bits = self.b.build_bit_cast(mask, iw, "")?.into_int_value();
                self.b.build_int_compare(IntPredicate::NE, bits, iw.const_zero(), "")?
            }
            None => self.get(m)?.into_int_value(),
        };
        if effect_free(f, b) {
            return Ok(None); // cheaper to run for every lane than to test
        }
        let target = match f.terminator(b).map(|t| &f.insts[t]) {
            Some(InstData::Jump { dest })
                if dest.args.is_empty()
                    && f.blocks[dest.block].params.is_empty()
                    && f.branches_to(dest.block).len() == 1 =>
            {
                dest.block
            }
            _ if self.vec.is_none() => {
                bail!("a masked block {b} that does not end in a jump to a block only it reaches")
            }
            _ => return Ok(None),
        };
        let skip_to = self.blocks_of(target).ok_or("a jump to a block without code")?;
        let guard = self.b.get_insert_block().ok_or("builder not positioned")?;
        let body = self.cx().append_basic_block(self.llf, "masked");
        self.b.build_conditional_branch(any, body, skip_to)?;
        self.b.position_at_end(body);
        Ok(Some((guard, skip_to)))
    }

    /// After masked block `b` was lowered behind the guard `skip` of
    /// [`Self::enter_block_mask`]: its values used by other blocks become phis there (zero
    /// when the block was skipped: its values are defined only for its lanes, and no lane
    /// ran it).
    pub fn leave_block_mask(&mut self, b: Block, skip: (BasicBlock<'ctx>, BasicBlock<'ctx>)) -> R<()> {
        let f = self.f;
        let (guard, to) = skip;
        let end = self.b.get_insert_block().ok_or("builder not positioned")?;
        let mut defined = HashSet::new();
        for &i in &f.layout.insts[b] {
            if let (Some(r), false) = (f.inst_result[i], matches!(f.insts[i], InstData::Variable { .. })) {
                defined.insert(r);
            }
        }
        let mut used: Vec<Value> = Vec::new();
        let mut seen = HashSet::new();
        for &ob in &f.layout.blocks {
            if ob == b {
                continue;
            }
            let mut note = |v: Value| {
                if defined.contains(&v) && seen.insert(v) {
                    used.push(v);
                }
            };
            if let Some(mv) = f.blocks[ob].mask {
                note(mv);
            }
            for &i in &f.layout.insts[ob] {
                f.insts[i].for_each_operand(&mut note);
            }
        }
        let pb = self.cx().create_builder();
        match to.get_first_instruction() {
            Some(first) => pb.position_before(&first),
            None => pb.position_at_end(to),
        }
        for v in used {
            let Some(val) = self.val_of(v) else { continue };
            if inkwell::values::BasicValue::as_instruction_value(&val).is_none() {
                continue; // a constant (a printf format's address, which must stay one)
            }
            let phi = pb.build_phi(val.get_type(), "")?;
            let zero = val.get_type().const_zero();
            phi.add_incoming(&[(&val, end), (&zero, guard)]);
            self.set_val(v, phi.as_basic_value());
        }
        Ok(())
    }
}
