//! The work-group entry and the work-item state of a kernel.
//!
//! A kernel body becomes a *work-item function*
//! `u32 wi(args, ctx, lx, ly, lz, state, resume_at)` that runs one work-item from resume
//! point `resume_at` (0 = the start) to the next barrier (returning its 1-based id) or to
//! the end (returning `FINISHED`). The IR says where: `passes::barriers` ended each
//! barrier's block with `barrier_resume id, dest` and moved what lives across barriers into
//! variables marked as work-item state. The lowering ([`ResumePoints`]) makes each
//! `barrier_resume` a `ret id` and a case of the `switch resume_at` at the top that leads
//! to `dest`; [`plan_state`] lays the state variables out in the work-item's state (the
//! others stay allocas). Kernel arguments, work-item ids and variable addresses are
//! recomputed at every entry, so they never take state.
//!
//! The work-group entry walks the linear local ids `first..end` as nested loops (row
//! segments of dimension 0, then y and z) and calls the work-item function, which LLVM
//! inlines; a vectorized kernel's entry steps x by the width W (see [`build_entry`]).

use super::llvm::{as_ptr, bail, ctx_offsets, gep, Emitter, Val, R};
use crate::ir::{self, Function, Inst, InstData, Value};
use crate::kernel_info::{ArgKind, KernelInfo};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use std::collections::{HashMap, HashSet};

/// Where each state variable of a kernel with barriers lives in the work-item state.
#[derive(Debug, Default, Clone)]
pub struct StatePlan {
    /// Resume points (`barrier_resume`) of the kernel.
    pub barriers: u32,
    /// State `Variable` instruction -> byte offset in the state.
    pub state_vars: HashMap<Inst, u64>,
    /// Kernel parameter index of a by-value struct -> byte offset of its copy in the state.
    pub byval: HashMap<usize, u64>,
    /// Bytes of state per work-item.
    pub size: u64,
    /// The state pointer may be marked `noalias` (no pointer into the state is kept in it).
    pub state_noalias: bool,
}

/// Lays out the work-item state of kernel `func`: its state variables (`Function::
/// state_vars`), then, in a kernel with barriers, a copy of each by-value struct argument
/// (whose address the kernel may keep across a barrier).
pub fn plan_state(e: &Emitter<'_, '_>, func: &Function, info: &KernelInfo) -> R<StatePlan> {
    let barriers = func
        .layout
        .blocks
        .iter()
        .filter(|&&b| func.terminator(b).is_some_and(|t| matches!(func.insts[t], InstData::BarrierResume { .. })))
        .count() as u32;
    let mut plan = StatePlan { barriers, state_noalias: state_noalias(func), ..Default::default() };
    if barriers == 0 {
        return Ok(plan);
    }
    let mut off = 0u64;
    let mut max_align = 8u64;
    let mut place = |size: u64, align: u64| -> u64 {
        let align = align.clamp(1, 128);
        max_align = max_align.max(align);
        off = off.next_multiple_of(align);
        let at = off;
        off += size.max(1);
        at
    };
    // Variables whose address crosses a barrier first (largest alignment needs), then the
    // copies of by-value arguments, then the variables holding demoted values.
    let mut vars: Vec<Inst> = Vec::new();
    for &b in &func.layout.blocks {
        vars.extend(func.layout.insts[b].iter().copied().filter(|&i| func.is_state_var(i)));
    }
    let holds_value = |i: Inst| func.inst_result[i].is_some_and(|r| only_whole_accesses(func, r));
    vars.sort_by_key(|&i| holds_value(i));
    let split = vars.iter().position(|&i| holds_value(i)).unwrap_or(vars.len());
    let mut place_var = |i: Inst, place: &mut dyn FnMut(u64, u64) -> u64| -> R<()> {
        let InstData::Variable { ty, align: declared, .. } = &func.insts[i] else {
            bail!("state {i} is not a variable")
        };
        let t = e.ty(*ty)?;
        let align = e.abi_align(t).max(crate::passes::align::variable_align(&e.ir.types, *ty, *declared));
        // Vector code keeps W copies here, one lane copy stride apart.
        let size = e.alloc_size(t).max(crate::passes::align::lane_copy_stride(&e.ir.types, *ty, *declared));
        plan.state_vars.insert(i, place(size, align));
        Ok(())
    };
    for &i in &vars[..split] {
        place_var(i, &mut place)?;
    }
    if let Some(entry) = func.layout.entry() {
        for (i, (&p, arg)) in func.blocks[entry].params.iter().zip(&info.args).enumerate() {
            let is_ptr = matches!(e.ir.types.get(func.value_type(p)), ir::TypeData::Pointer { .. });
            if is_ptr && arg.kind == ArgKind::Value {
                plan.byval.insert(i, place(arg.size as u64, arg.align.max(16) as u64));
            }
        }
    }
    for &i in &vars[split..] {
        let InstData::Variable { ty, align: declared, .. } = &func.insts[i] else {
            bail!("state {i} is not a variable")
        };
        let t = e.ty(*ty)?;
        // Its accesses count on the variable's alignment (`passes::align`), as above.
        let align = e.abi_align(t).max(crate::passes::align::variable_align(&e.ir.types, *ty, *declared));
        plan.state_vars.insert(i, place(e.alloc_size(t), align));
    }
    plan.size = off.next_multiple_of(max_align);
    Ok(plan)
}

/// Whether the address `var` is only loaded from and stored to whole (a variable that
/// holds a demoted value, or any such variable).
fn only_whole_accesses(f: &Function, var: Value) -> bool {
    f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter()).all(|&i| match &f.insts[i] {
        InstData::Load { .. } => true,
        InstData::Store { value, .. } => *value != var,
        d => !d.operands().contains(&var),
    })
}

/// Whether the state pointer may be `noalias`: no pointer derived from a state variable
/// is stored anywhere (loads of it would not be "based on" the state argument, and LLVM
/// could take an access through one for different memory than the state's).
fn state_noalias(f: &Function) -> bool {
    let mut into_state: HashSet<Value> = HashSet::new();
    for (i, d) in f.insts.iter() {
        if f.layout.inst_block[i].is_none() {
            continue;
        }
        if let (InstData::Variable { .. }, Some(r)) = (d, f.inst_result[i]) {
            if f.is_state_var(i) {
                into_state.insert(r);
            }
        }
    }
    // Pointers derived from state variables (access chains, casts, selects, block
    // arguments, call results), to a fixed point.
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &f.layout.blocks {
            for &i in &f.layout.insts[b] {
                let d = &f.insts[i];
                let derived = match d {
                    InstData::AccessChain { base, .. } => into_state.contains(base),
                    InstData::Convert { op: ir::ConvertOp::PtrCast | ir::ConvertOp::Bitcast, arg, .. } => {
                        into_state.contains(arg)
                    }
                    InstData::Select { if_true, if_false, .. } => {
                        into_state.contains(if_true) || into_state.contains(if_false)
                    }
                    InstData::Call { args, .. } => args.iter().any(|a| into_state.contains(a)),
                    // An aggregate holding such a pointer, stored whole.
                    InstData::InsertValue { value, .. } | InstData::InsertElement { value, .. } => {
                        into_state.contains(value)
                    }
                    InstData::Construct { parts } => parts.iter().any(|a| into_state.contains(a)),
                    _ => false,
                };
                if derived {
                    if let Some(r) = f.inst_result[i] {
                        changed |= into_state.insert(r);
                    }
                }
                for call in d.successors() {
                    for (a, &p) in call.args.iter().zip(&f.blocks[call.block].params) {
                        if into_state.contains(a) {
                            changed |= into_state.insert(p);
                        }
                    }
                }
            }
        }
    }
    !f.layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter())
        .any(|&i| matches!(&f.insts[i], InstData::Store { value, .. } if into_state.contains(value)))
}

/// The barrier side of a kernel's work-item function: the state pointer, the block that
/// dispatches on `resume_at`, the resume points, and the copies into the state that the
/// entry block makes.
pub struct ResumePoints<'ctx> {
    /// The work-item's state (parameter 5 of the work-item function).
    pub state: Option<PointerValue<'ctx>>,
    /// The first block after the prologue: `switch resume_at` (or a jump to the body).
    pub dispatch: BasicBlock<'ctx>,
    /// Resume id -> the block that continues there.
    pub points: Vec<(u32, BasicBlock<'ctx>)>,
    /// (destination, source, bytes, alignment) copies at the start of the entry block
    /// (by-value arguments kept in the state).
    pub entry_copies: Vec<(PointerValue<'ctx>, PointerValue<'ctx>, u64, u32)>,
}

impl<'ctx> ResumePoints<'ctx> {
    pub fn new(state: Option<PointerValue<'ctx>>, dispatch: BasicBlock<'ctx>) -> Self {
        ResumePoints { state, dispatch, points: Vec::new(), entry_copies: Vec::new() }
    }

    /// Fills the dispatch block: `switch resume_at` to the resume points, default `body`
    /// (a jump to `body` when there are none).
    pub fn build_dispatch(
        &self,
        b: &Builder<'ctx>,
        resume_at: Option<IntValue<'ctx>>,
        body: BasicBlock<'ctx>,
    ) -> R<()> {
        b.position_at_end(self.dispatch);
        match resume_at {
            Some(r) if !self.points.is_empty() => {
                let i32t = r.get_type();
                let cases: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> =
                    self.points.iter().map(|(id, blk)| (i32t.const_int(*id as u64, false), *blk)).collect();
                b.build_switch(r, body, &cases)?;
            }
            _ => {
                b.build_unconditional_branch(body)?;
            }
        }
        Ok(())
    }

    /// The address of the state at byte `off` (a packet's offset: `FnLower::packet_off`).
    pub fn slot(
        &self,
        b: &Builder<'ctx>,
        i8t: inkwell::types::IntType<'ctx>,
        off: IntValue<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let state = self.state.ok_or("no state pointer")?;
        gep(b, i8t.into(), state, &[off], true)
    }
}

/// What the work-group entry needs to know besides the work-item function ([`build_entry`]).
pub struct EntryOptions<'a> {
    /// Offsets in the argument block of the `restrict` buffers passed as `noalias`.
    pub restrict_offsets: &'a [u64],
    /// Bytes of the argument block (it is `dereferenceable` that far).
    pub args_size: u64,
    /// A Gen-instrumented build: the entry passes the counter array at `ctx.gen_counters`
    /// to the work-item function as its last argument ([`entry_counter_array`]).
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
/// stores (`back::vector::streaming_stores`), which are weakly ordered: the entry does not
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
        trailing_args.push(entry_counter_array(e, &b, ctx)?.into());
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

/// In the entry block of a work-group entry (`b` there): the counter array at
/// `ctx.gen_counters`, which the entry passes to every call of the work-item function as
/// the last argument.
pub(crate) fn entry_counter_array<'ctx>(
    e: &Emitter<'ctx, '_>,
    b: &inkwell::builder::Builder<'ctx>,
    ctx: PointerValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let (i8t, i64t) = (e.cx.i8_type(), e.cx.i64_type());
    let ptr = e.cx.ptr_type(inkwell::AddressSpace::default());
    let at_ctx = gep(b, i8t.into(), ctx, &[i64t.const_int(super::llvm::ctx_offsets::GEN_COUNTERS, false)], true)?;
    as_ptr(b.build_load(ptr, at_ctx, "gen.counters")?)
}
