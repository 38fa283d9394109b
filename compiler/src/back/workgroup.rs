//! The work-group entry and the barrier regions of a kernel.
//!
//! A kernel body becomes a *work-item function*
//! `u32 wi(args, ctx, lx, ly, lz, state, resume_at)` that runs one work-item from resume
//! point `resume_at` (0 = the start) to the next barrier (returning its 1-based id) or to
//! the end (returning `FINISHED`). Each barrier ends its block with `ret id`; the rest of
//! the block becomes a new LLVM block reached from a `switch resume_at` at the top.
//!
//! SSA values live across a barrier (including block parameters) are *demoted*: stored to
//! the work-item's state right after their definition and loaded at each use, so that they
//! survive the return. Private variables whose address is live across a barrier (or escapes
//! into memory) live in the state too; the others stay allocas. Kernel arguments, work-item
//! ids and variable addresses are recomputed at every entry, so they never take state.
//!
//! The work-group entry walks the linear local ids `first..end` as nested loops (row
//! segments of dimension 0, then y and z) and calls the work-item function, which LLVM
//! inlines; a vectorized kernel's entry steps x by the width W (see [`build_entry`]).

use super::llvm::{bail, ctx_offsets, gep, Emitter, Val, R};
use crate::ir::{Block, ConvertOp, EntityRef, Function, Inst, InstData, SecondaryMap, Value, ValueDef};
use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use std::collections::{HashMap, HashSet};

/// Where each value and variable of a kernel with barriers lives in the work-item state.
#[derive(Debug, Default, Clone)]
pub struct StatePlan {
    /// Barrier instruction -> resume id (1-based).
    pub barrier_ids: HashMap<Inst, u32>,
    /// Demoted SSA value -> byte offset in the state.
    pub demoted: HashMap<Value, u64>,
    /// `Variable` instruction -> byte offset in the state.
    pub state_vars: HashMap<Inst, u64>,
    /// Kernel parameter index of a by-value struct -> byte offset of its copy in the state.
    pub byval: HashMap<usize, u64>,
    /// Bytes of state per work-item.
    pub size: u64,
    /// The state pointer may be marked `noalias` (no pointer into the state is kept in it).
    pub state_noalias: bool,
}

/// What the barrier analysis found, before sizes are known.
#[derive(Debug, Default)]
pub struct BarrierAnalysis {
    pub barrier_ids: HashMap<Inst, u32>,
    /// Values to keep in the state, in a deterministic order.
    pub demoted: Vec<Value>,
    /// Variables to keep in the state.
    pub state_vars: Vec<Inst>,
    pub state_noalias: bool,
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
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
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
    fn union(&mut self, other: &Bits) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(w, &bits)| (0..64).filter(move |b| bits & (1u64 << b) != 0).map(move |b| w * 64 + b))
    }
}

/// Finds the barriers of `f` (after inlining), the values live across them and the
/// variables that must live in the work-item state.
pub fn analyze(f: &Function, order: &[Block]) -> BarrierAnalysis {
    let mut out = BarrierAnalysis { state_noalias: true, ..Default::default() };
    let Some(&entry) = order.first() else { return out };
    let mut next_id = 1u32;
    for &b in order {
        for &i in &f.layout.insts[b] {
            if crate::passes::inline::is_work_group_barrier(&f.insts[i]) {
                out.barrier_ids.insert(i, next_id);
                next_id += 1;
            }
        }
    }
    if out.barrier_ids.is_empty() {
        return out;
    }

    let n = f.values.len();
    // Values that are recomputed at every entry are never demoted.
    let tracked = |v: Value| -> bool {
        match f.values.get(v).map(|d| d.def) {
            Some(ValueDef::Result(i)) => !matches!(f.insts[i], InstData::WorkItem { .. }),
            Some(ValueDef::Param(b, _)) => b != entry,
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
    let mut live_out: SecondaryMap<Block, Option<Bits>> = SecondaryMap::with_default(None);
    for &b in order {
        live_in[b] = ue[b].clone();
        live_out[b] = Some(Bits::new(n));
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            let mut out_b = live_out[b].take().unwrap_or_else(|| Bits::new(n));
            for s in f.successors(b) {
                if let Some(li) = &live_in[s] {
                    out_b.union(li);
                }
            }
            if let (Some(li), Some(d)) = (live_in[b].as_mut(), defs[b].as_ref()) {
                changed |= li.union_minus(&out_b, d);
            }
            live_out[b] = Some(out_b);
        }
    }

    // Live across some barrier: scan each block with barriers backwards.
    let mut across = Bits::new(n);
    for &b in order {
        let insts = &f.layout.insts[b];
        if !insts.iter().any(|i| out.barrier_ids.contains_key(i)) {
            continue;
        }
        let mut live = live_out[b].clone().unwrap_or_else(|| Bits::new(n));
        for &i in insts.iter().rev() {
            if out.barrier_ids.contains_key(&i) {
                across.union(&live);
                continue;
            }
            if let Some(r) = f.inst_result[i] {
                live.clear(r.index());
            }
            f.insts[i].for_each_operand(|v| {
                if v.index() < n && tracked(v) {
                    live.set(v.index());
                }
            });
        }
    }

    // Variables: follow the pointers derived from each one.
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    let mut flows: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut variables = Vec::new();
    for &b in order {
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
    let mut derived_of_state_vars: HashSet<Value> = HashSet::new();
    for &var in &variables {
        let Some(root) = f.inst_result[var] else { continue };
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
                    InstData::AccessChain { base, .. } if *base == v => {
                        if let Some(r) = r {
                            add(r, &mut work)
                        }
                    }
                    InstData::Convert { op: ConvertOp::PtrCast | ConvertOp::Bitcast, .. } => {
                        if let Some(r) = r {
                            add(r, &mut work)
                        }
                    }
                    InstData::Convert { op: ConvertOp::PtrToInt, .. } => escapes = true,
                    InstData::Select { if_true, if_false, .. } if *if_true == v || *if_false == v => {
                        if let Some(r) = r {
                            add(r, &mut work)
                        }
                    }
                    InstData::Store { value, .. } if *value == v => escapes = true,
                    InstData::Atomic { value, comparator, .. } if *value == Some(v) || *comparator == Some(v) => {
                        escapes = true
                    }
                    InstData::InsertValue { value, .. } | InstData::InsertElement { value, .. } if *value == v => {
                        escapes = true
                    }
                    InstData::Construct { .. } => escapes = true,
                    InstData::Call { .. } => {
                        if let Some(r) = r {
                            add(r, &mut work)
                        }
                    }
                    _ => {}
                }
            }
        }
        let live = derived.iter().any(|v| v.index() < n && across.get(v.index()));
        if live || escapes {
            out.state_vars.push(var);
            derived_of_state_vars.extend(derived);
        }
        if escapes {
            // Its address is kept in memory (a struct member, another variable): loads of
            // it are not "based on" the state argument either.
            out.state_noalias = false;
        }
    }
    let var_results: HashSet<Value> = variables.iter().filter_map(|&i| f.inst_result[i]).collect();
    for vi in across.iter() {
        let v = Value::new(vi);
        if !var_results.contains(&v) {
            out.demoted.push(v);
            if derived_of_state_vars.contains(&v) {
                // A pointer into the state is kept in the state: loads of it are not
                // "based on" the state argument, so `noalias` would be wrong.
                out.state_noalias = false;
            }
        }
    }
    out
}

/// What the work-group entry needs to know besides the work-item function ([`build_entry`]).
pub struct EntryOptions<'a> {
    /// Offsets in the argument block of the `restrict` buffers passed as `noalias`.
    pub restrict_offsets: &'a [u64],
    /// Bytes of the argument block (it is `dereferenceable` that far).
    pub args_size: u64,
    /// A Gen-instrumented build: the entry passes the counter array at `ctx.gen_counters`
    /// to the work-item function as its last argument (`gen_hooks::entry_counter_array`).
    pub gen_counters: bool,
}

/// Builds the work-group entry `u32 name(args, ctx, first, end, resume_at)` around the
/// work-item function `wi`.
///
/// The linear ids `first..end` are walked as row segments of dimension 0 (nested loops: the
/// x loop has no wrap-around, y and z advance once per row). With `width` W = 1, `wi` is the
/// scalar `wi(args, ctx, lx, ly, lz, state, resume_at)` and the state of work-item i is at
/// `state + i * state_size`. With W > 1, `wi` is the vector work-item function
/// `wi(args, ctx, lx, ly, lz, state, resume_at, lo, hi)` that runs the W work-items
/// `lx..lx+W` of one row with lanes `lo..hi` active; packets start at multiples of W in each
/// row (a segment starting mid-row masks its first packet), rows are padded to a multiple
/// of W, and a packet's state (W x `state_size` bytes, structure of arrays) is at
/// `state + (padded linear id of its lane 0) * state_size`. Full packets call `wi` with the
/// constant mask 0..W, so that the inlined body needs no mask. The pointers at
/// `opts.restrict_offsets` of the argument block are passed after the other parameters (the
/// work-item function takes them as `noalias`). The work-item function may use non-temporal
/// stores (`back::vector::streaming_allowed`), which are weakly ordered: the entry does not
/// fence them (a fence per work-group drained the stores of each before the next started,
/// and made a 4096^2 copy in work-groups of 256 six times slower); the caller does, as
/// [`crate::abi::WorkGroupEntry`] says.
pub fn build_entry<'ctx>(
    e: &Emitter<'ctx, '_>,
    name: &str,
    wi: FunctionValue<'ctx>,
    state_size: u64,
    width: u32,
    opts: &EntryOptions<'_>,
) -> R<FunctionValue<'ctx>> {
    let (restrict_offsets, args_size) = (opts.restrict_offsets, opts.args_size);
    let cx = e.cx;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let w = width.max(1) as u64;
    let EntryStart { f, args, ctx, first, end, resume } = declare_entry(e, name, args_size)?;

    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    let pre = cx.append_basic_block(f, "pre");
    let row = cx.append_basic_block(f, "row");
    let body = cx.append_basic_block(f, "x");
    let latch = cx.append_basic_block(f, "x.latch");
    let row_end = cx.append_basic_block(f, "row.end");
    let next_row = cx.append_basic_block(f, "row.next");
    let exit = cx.append_basic_block(f, "exit");
    let i8t = cx.i8_type();

    b.position_at_end(entry);
    let load_u64 = |off: u64| -> R<IntValue<'ctx>> {
        let p = gep(&b, i8t.into(), ctx, &[i64t.const_int(off, false)], true)?;
        let l = b.build_load(i64t, p, "")?;
        if let Some(inst) = l.as_instruction_value() {
            let _ = inst.set_alignment(8);
        }
        Ok(l.into_int_value())
    };
    let lsx = load_u64(ctx_offsets::LOCAL_SIZE)?;
    let lsy = load_u64(ctx_offsets::LOCAL_SIZE + 8)?;
    // The work-item function's last arguments: the `restrict` buffers, then (Gen builds)
    // the counter array.
    let (state_base, mut trailing_args) = entry_pointers(e, &b, ctx, args, state_size, restrict_offsets)?;
    if opts.gen_counters {
        trailing_args.push(super::gen_count::entry_counter_array(e, &b, ctx)?.into());
    }
    let any = b.build_int_compare(IntPredicate::ULT, first, end, "")?;
    b.build_conditional_branch(any, pre, exit)?;

    // Local id of the first work-item; the sizes are at least 1 by the ABI, guard anyway.
    b.position_at_end(pre);
    let one = i64t.const_int(1, false);
    let zero = i64t.const_zero();
    let wc = i64t.const_int(w, false);
    let sx = b.build_select(b.build_int_compare(IntPredicate::EQ, lsx, zero, "")?, one, lsx, "")?.into_int_value();
    let sy = b.build_select(b.build_int_compare(IntPredicate::EQ, lsy, zero, "")?, one, lsy, "")?.into_int_value();
    // Row length in the state: padded to a multiple of W.
    let sxp = if w > 1 {
        let up = b.build_int_add(sx, i64t.const_int(w - 1, false), "")?;
        b.build_int_mul(b.build_int_unsigned_div(up, wc, "")?, wc, "")?
    } else {
        sx
    };
    let f64i = b.build_int_z_extend(first, i64t, "")?;
    let end64 = b.build_int_z_extend(end, i64t, "")?;
    let x0 = b.build_int_unsigned_rem(f64i, sx, "")?;
    let t = b.build_int_unsigned_div(f64i, sx, "")?;
    let y0 = b.build_int_unsigned_rem(t, sy, "")?;
    let z0 = b.build_int_unsigned_div(t, sy, "")?;
    b.build_unconditional_branch(row)?;

    // One row segment: x_start..x_end of row (y, z); i = linear id of x_start.
    b.position_at_end(row);
    let p_i = b.build_phi(i64t, "i")?;
    let p_xs = b.build_phi(i64t, "xs")?;
    let p_y = b.build_phi(i64t, "ly")?;
    let p_z = b.build_phi(i64t, "lz")?;
    let p_rr = b.build_phi(i32t, "rr")?;
    let (i, xs, ly, lz) = (
        p_i.as_basic_value().into_int_value(),
        p_xs.as_basic_value().into_int_value(),
        p_y.as_basic_value().into_int_value(),
        p_z.as_basic_value().into_int_value(),
    );
    let in_row = b.build_int_sub(sx, xs, "")?;
    let left = b.build_int_sub(end64, i, "")?;
    let seg = b.build_select(b.build_int_compare(IntPredicate::ULT, in_row, left, "")?, in_row, left, "")?;
    let seg = seg.into_int_value();
    let xe = b.build_int_add(xs, seg, "")?;
    let zy = b.build_int_add(b.build_int_mul(lz, sy, "")?, ly, "")?;
    let row_slot = b.build_int_mul(zy, sxp, "")?;
    let xb0 = if w > 1 { b.build_int_mul(b.build_int_unsigned_div(xs, wc, "")?, wc, "")? } else { xs };
    b.build_unconditional_branch(body)?;

    // The x loop: one call per work-item (W = 1) or per packet.
    b.position_at_end(body);
    let p_x = b.build_phi(i64t, "lx")?;
    let p_r = b.build_phi(i32t, "r")?;
    let lx = p_x.as_basic_value().into_int_value();
    let state: Val<'ctx> = match state_base {
        Some(base) => {
            let slot = b.build_int_add(row_slot, lx, "")?;
            let off = b.build_int_mul(slot, i64t.const_int(state_size, false), "")?;
            gep(&b, i8t.into(), base, &[off], true)?.into()
        }
        None => ptr.const_null().into(),
    };
    let mut call_args: Vec<BasicMetadataValueEnum<'ctx>> =
        vec![args.into(), ctx.into(), lx.into(), ly.into(), lz.into(), state.into(), resume.into()];
    let r = if w > 1 {
        // Active lanes lo..hi: lanes before x_start (first packet of a segment starting
        // mid-row) and from x_end on (the tail) are off.
        let lo = b.build_select(
            b.build_int_compare(IntPredicate::UGT, xs, lx, "")?,
            b.build_int_sub(xs, lx, "")?,
            zero,
            "",
        )?;
        let room = b.build_int_sub(xe, lx, "")?;
        let hi = b.build_select(b.build_int_compare(IntPredicate::ULT, room, wc, "")?, room, wc, "")?;
        let lo32 = b.build_int_truncate(lo.into_int_value(), i32t, "")?;
        let hi32 = b.build_int_truncate(hi.into_int_value(), i32t, "")?;
        let full = b.build_and(
            b.build_int_compare(IntPredicate::EQ, lo32, i32t.const_zero(), "")?,
            b.build_int_compare(IntPredicate::EQ, hi32, i32t.const_int(w, false), "")?,
            "",
        )?;
        let fast = cx.append_basic_block(f, "packet.full");
        let masked = cx.append_basic_block(f, "packet.masked");
        b.build_conditional_branch(full, fast, masked)?;
        b.position_at_end(fast);
        let mut fa = call_args.clone();
        fa.extend::<[BasicMetadataValueEnum<'ctx>; 2]>([i32t.const_zero().into(), i32t.const_int(w, false).into()]);
        fa.extend(trailing_args.iter().copied());
        let r1 = b.build_call(wi, &fa, "")?.try_as_basic_value().basic().ok_or("work-item function has no result")?;
        b.build_unconditional_branch(latch)?;
        b.position_at_end(masked);
        call_args.extend::<[BasicMetadataValueEnum<'ctx>; 2]>([lo32.into(), hi32.into()]);
        call_args.extend(trailing_args.iter().copied());
        let r2 =
            b.build_call(wi, &call_args, "")?.try_as_basic_value().basic().ok_or("work-item function has no result")?;
        b.build_unconditional_branch(latch)?;
        b.position_at_end(latch);
        let rp = b.build_phi(i32t, "")?;
        rp.add_incoming(&[(&r1, fast), (&r2, masked)]);
        rp.as_basic_value()
    } else {
        call_args.extend(trailing_args.iter().copied());
        let r =
            b.build_call(wi, &call_args, "")?.try_as_basic_value().basic().ok_or("work-item function has no result")?;
        b.build_unconditional_branch(latch)?;
        b.position_at_end(latch);
        r
    };
    if !r.is_int_value() {
        bail!("work-item function returns {}", r.get_type());
    }
    let x1 = b.build_int_add(lx, wc, "")?;
    let more_x = b.build_int_compare(IntPredicate::ULT, x1, xe, "")?;
    b.build_conditional_branch(more_x, body, row_end)?;
    p_x.add_incoming(&[(&xb0, row), (&x1, latch)]);
    p_r.add_incoming(&[(&p_rr.as_basic_value(), row), (&r, latch)]);

    b.position_at_end(row_end);
    let i1 = b.build_int_add(i, seg, "")?;
    let more = b.build_int_compare(IntPredicate::ULT, i1, end64, "")?;
    b.build_conditional_branch(more, next_row, exit)?;

    b.position_at_end(next_row);
    let y1 = b.build_int_add(ly, one, "")?;
    let wrap_y = b.build_int_compare(IntPredicate::EQ, y1, sy, "")?;
    let y2 = b.build_select(wrap_y, zero, y1, "")?.into_int_value();
    let z2 = b.build_int_add(lz, b.build_int_z_extend(wrap_y, i64t, "")?, "")?;
    b.build_unconditional_branch(row)?;
    p_i.add_incoming(&[(&f64i, pre), (&i1, next_row)]);
    p_xs.add_incoming(&[(&x0, pre), (&zero, next_row)]);
    p_y.add_incoming(&[(&y0, pre), (&y2, next_row)]);
    p_z.add_incoming(&[(&z0, pre), (&z2, next_row)]);
    p_rr.add_incoming(&[(&i32t.const_zero(), pre), (&r, next_row)]);

    b.position_at_end(exit);
    let res = b.build_phi(i32t, "res")?;
    res.add_incoming(&[(&i32t.const_zero(), entry), (&r, row_end)]);
    b.build_return(Some(&res.as_basic_value()))?;
    Ok(f)
}

/// Builds the work-group entry `name` that runs entry `big` when the ND-range has at least
/// `need` work-items and entry `small` otherwise (both `u32 (args, ctx, first, end,
/// resume_at)`, kept out of line so that their loops stay apart): the choice between a
/// work-item loop with non-temporal stores and one without.
pub fn build_size_switch<'ctx>(
    e: &Emitter<'ctx, '_>,
    name: &str,
    need: u64,
    big: FunctionValue<'ctx>,
    small: FunctionValue<'ctx>,
) -> R<FunctionValue<'ctx>> {
    let cx = e.cx;
    let i64t = cx.i64_type();
    let i8t = cx.i8_type();
    let f = e.m.add_function(name, big.get_type(), Some(Linkage::External));
    e.add_fn_attr(f, "nounwind");
    for g in [big, small] {
        g.set_linkage(Linkage::Internal);
        e.add_fn_attr(g, "noinline");
    }
    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    b.position_at_end(entry);
    let ctx = f.get_nth_param(1).ok_or("missing ctx")?.into_pointer_value();
    let mut items = i64t.const_int(1, false);
    for d in 0..3u64 {
        let p = gep(&b, i8t.into(), ctx, &[i64t.const_int(ctx_offsets::GLOBAL_SIZE + 8 * d, false)], true)?;
        let l = b.build_load(i64t, p, "")?.into_int_value();
        items = b.build_int_mul(items, l, "")?;
    }
    let is_big = b.build_int_compare(IntPredicate::UGE, items, i64t.const_int(need, false), "")?;
    let on_big = cx.append_basic_block(f, "big");
    let on_small = cx.append_basic_block(f, "small");
    b.build_conditional_branch(is_big, on_big, on_small)?;
    let args: Vec<BasicMetadataValueEnum<'ctx>> = f.get_param_iter().map(|p| p.into()).collect();
    for (bb, g) in [(on_big, big), (on_small, small)] {
        b.position_at_end(bb);
        let r = b.build_call(g, &args, "")?.try_as_basic_value().basic().ok_or("entry without result")?;
        b.build_return(Some(&r))?;
    }
    Ok(f)
}

/// The parameters of a work-group entry being built.
pub(super) struct EntryStart<'ctx> {
    pub f: FunctionValue<'ctx>,
    pub args: PointerValue<'ctx>,
    pub ctx: PointerValue<'ctx>,
    pub first: IntValue<'ctx>,
    pub end: IntValue<'ctx>,
    pub resume: IntValue<'ctx>,
}

/// Declares the work-group entry `u32 name(args, ctx, first, end, resume_at)` whose argument
/// block has `args_size` bytes.
pub(super) fn declare_entry<'ctx>(e: &Emitter<'ctx, '_>, name: &str, args_size: u64) -> R<EntryStart<'ctx>> {
    let cx = e.cx;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i32t = cx.i32_type();
    let fn_ty = i32t.fn_type(&[ptr.into(), ptr.into(), i32t.into(), i32t.into(), i32t.into()], false);
    let f = e.m.add_function(name, fn_ty, Some(Linkage::External));
    e.add_fn_attr(f, "nounwind");
    for p in [0, 1] {
        e.add_param_attr(f, p, "noalias");
        e.add_param_attr(f, p, "nocapture");
    }
    // The context is always a whole `WorkGroupContext` and the argument block `args_size`
    // bytes: loads of them may be speculated (hoisted out of the packet loop's branches).
    let deref = inkwell::attributes::Attribute::get_named_enum_kind_id("dereferenceable");
    let ctx_size = std::mem::size_of::<crate::abi::WorkGroupContext>() as u64;
    f.add_attribute(inkwell::attributes::AttributeLoc::Param(1), cx.create_enum_attribute(deref, ctx_size));
    if args_size > 0 {
        f.add_attribute(inkwell::attributes::AttributeLoc::Param(0), cx.create_enum_attribute(deref, args_size));
    }
    // Speculation also needs the alignment of each field: the context is a `repr(C)` struct,
    // the argument block is aligned by its callers (`abi::ARGS_ALIGN`).
    let align = inkwell::attributes::Attribute::get_named_enum_kind_id("align");
    let ctx_align = std::mem::align_of::<crate::abi::WorkGroupContext>() as u64;
    f.add_attribute(inkwell::attributes::AttributeLoc::Param(1), cx.create_enum_attribute(align, ctx_align));
    f.add_attribute(
        inkwell::attributes::AttributeLoc::Param(0),
        cx.create_enum_attribute(align, crate::abi::ARGS_ALIGN as u64),
    );
    let param = |i: u32| f.get_nth_param(i).ok_or_else(|| super::llvm::Error("missing parameter".into()));
    Ok(EntryStart {
        f,
        args: param(0)?.into_pointer_value(),
        ctx: param(1)?.into_pointer_value(),
        first: param(2)?.into_int_value(),
        end: param(3)?.into_int_value(),
        resume: param(4)?.into_int_value(),
    })
}

/// Loads, where `b` stands, the work-item state base (when the kernel keeps state) and the
/// `restrict` buffer pointers at `restrict_offsets` of the argument block.
pub(super) fn entry_pointers<'ctx>(
    e: &Emitter<'ctx, '_>,
    b: &inkwell::builder::Builder<'ctx>,
    ctx: PointerValue<'ctx>,
    args: PointerValue<'ctx>,
    state_size: u64,
    restrict_offsets: &[u64],
) -> R<(Option<PointerValue<'ctx>>, Vec<BasicMetadataValueEnum<'ctx>>)> {
    let cx = e.cx;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let (i8t, i64t) = (cx.i8_type(), cx.i64_type());
    let state_base = if state_size > 0 {
        let p = gep(b, i8t.into(), ctx, &[i64t.const_int(ctx_offsets::WORK_ITEM_STATE, false)], true)?;
        Some(b.build_load(ptr, p, "")?.into_pointer_value())
    } else {
        None
    };
    let mut restrict_ptrs: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(restrict_offsets.len());
    for &off in restrict_offsets {
        let p = gep(b, i8t.into(), args, &[i64t.const_int(off, false)], true)?;
        let l = b.build_load(ptr, p, "")?;
        if let Some(inst) = l.as_instruction_value() {
            // The block's alignment at the argument's offset (`passes::align`).
            let _ = inst.set_alignment(crate::passes::align::at_offset(crate::abi::ARGS_ALIGN as u64, off) as u32);
        }
        restrict_ptrs.push(l.into());
    }
    Ok((state_base, restrict_ptrs))
}
