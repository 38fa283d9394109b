//! Vector-mode lowering: the body of a kernel vectorized at width W runs W consecutive
//! work-items of dimension 0 (local ids lx..lx+W of one row) under a lane mask lo..hi.
//!
//! A value the work-item analysis ([`crate::vectorize::analysis`]) finds uniform is lowered
//! exactly as in scalar code. Any other value of IR type T is an LLVM `<W x T>`; an IR vector
//! `<n x T>` per work-item becomes `<n*W x T>` in component-major (structure-of-arrays) order
//! (lane k of component c at c*W + k), so that element-wise operations (binary, compare,
//! convert, select, element-wise built-ins) reuse the scalar lowering on wider vectors, and
//! only extract / insert / shuffle / construct and memory need the component <-> lane map.
//! Pointers that vary are `<W x ptr>`. Memory: consecutive accesses are one (masked) vector
//! load or store (AoS float4 is one wide access plus interleaving shuffles), uniform
//! addresses one scalar access (a varying value stored to a uniform address: the last active
//! lane's), the rest `llvm.masked.gather` / `llvm.masked.scatter`. Inactive lanes never
//! touch memory.
//!
//! Vector mode is a part that uses the lowering core ([`FnLower`]): [`enable`] gives the
//! function its packet ([`VecState`]: the core then shapes its values, `llvm::lanes`) and
//! adds vector mode's hook, which lowers through [`VecLower`] the instructions whose packet
//! form differs from the scalar one. Here: that dispatch, work-item ids, atomics and
//! OpenCL.std calls per lane, work-item state; by concern: `memory` (loads, stores, spans,
//! streaming), `lanes` (operations run lane by lane), `images`
//! (packet image accesses).

mod images;
mod lanes;
mod masked_loop;
mod memory;
mod sub_groups;

pub use masked_loop::{Scratch, Support as MaskedSupport};
pub use memory::{scalar_streaming_stores, streaming_stores, SPAN_PIECE_BITS, STREAMING_BYTES};

use super::llvm::{as_int, as_ptr, bail, wide_ty, Error, FnLower, LowerHook, Val, VecState, R};
use crate::back::llvm::Ops;
use crate::ir::{self, Inst, InstData, TypeData, Value, WorkItemQuery};
use crate::vectorize::analysis::WorkItemAnalysis;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, VectorValue};
use inkwell::IntPredicate;

/// Vector mode's lowering of one function, over the lowering core ([`FnLower`]) it uses:
/// the instructions whose packet form differs from the scalar one.
pub struct VecLower<'l, 'a, 'ctx, 'ir> {
    pub l: &'l mut FnLower<'a, 'ctx, 'ir>,
}

/// Turns vector mode on for the function `l` lowers (a vector work-item function of
/// `width` lanes; the work-item analysis `wa`): its values take their packet shapes, and
/// vector mode lowers what it must through its hook.
pub fn enable<'a, 'ctx, 'ir>(l: &mut FnLower<'a, 'ctx, 'ir>, width: u32, wa: &'a WorkItemAnalysis) -> R<()> {
    VecLower { l: &mut *l }.enable_vector(width, wa)?;
    l.add_hook(Box::new(VectorHook));
    Ok(())
}

/// Vector mode as a hook of the lowering core.
struct VectorHook;

impl<'a, 'ctx, 'ir> LowerHook<'a, 'ctx, 'ir> for VectorHook {
    fn inst(&mut self, l: &mut FnLower<'a, 'ctx, 'ir>, i: Inst) -> R<bool> {
        VecLower { l }.lower_vector_inst(i)
    }
}

impl<'a, 'ctx, 'ir> VecLower<'_, 'a, 'ctx, 'ir> {
    /// Turns on vector mode: the mask and lane numbers come from parameters `lo` (7) and
    /// `hi` (8) of the vector work-item function.
    pub fn enable_vector(&mut self, width: u32, wa: &'a WorkItemAnalysis) -> R<()> {
        let p = |i: u32| self.l.llf.get_nth_param(i).ok_or_else(|| Error("missing lane-range parameter".into()));
        let lo = as_int(p(7)?)?;
        let hi = as_int(p(8)?)?;
        let i32t = self.l.i32();
        let pb = &self.l.pb;
        let lanes: Vec<IntValue<'ctx>> = (0..width).map(|k| i32t.const_int(k as u64, false)).collect();
        let iota32 = VectorType::const_vector(&lanes);
        let splat32 = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let v = pb.build_insert_element(i32t.vec_type(width).get_undef(), x, i32t.const_zero(), "")?;
            let z = i32t.vec_type(width).const_zero();
            Ok(pb.build_shuffle_vector(v, v, z, "")?)
        };
        let ge = pb.build_int_compare(IntPredicate::UGE, iota32, splat32(lo)?, "")?;
        let lt = pb.build_int_compare(IntPredicate::ULT, iota32, splat32(hi)?, "")?;
        let mask = pb.build_and(ge, lt, "mask")?;
        let last = pb.build_int_sub(hi, i32t.const_int(1, false), "")?;
        let streaming = streaming_stores(&self.l.e.ir.types, self.l.f, &self.l.e.knobs);
        self.l.vec = Some(VecState {
            width,
            wa,
            mask,
            last,
            static_mask: mask,
            static_last: last,
            streaming,
            groups: crate::vectorize::members::find(self.l.e.ir, self.l.f, wa),
            group_spans: std::collections::HashMap::new(),
            scratch: Default::default(),
            prefetch: crate::vectorize::prefetch::prefetched_loads(self.l.e.ir, self.l.f, wa, self.l.e.knobs.prefetch),
        });
        Ok(())
    }

    /// Work-item queries in vector mode: dimension 0 of the ids and the linear ids get the
    /// lane number added.
    fn vector_work_item(&mut self, q: ir::WorkItemQuery, ir_ty: ir::Type) -> R<Val<'ctx>> {
        if self.l.vec.as_ref().is_some_and(|v| v.wa.linear_lanes) {
            if let Some(v) = self.linear_work_item(q, ir_ty)? {
                return Ok(v);
            }
        }
        let t = self.l.ty(ir_ty)?;
        let scalar = self.l.work_item_value(q, t)?;
        // In the prologue, like the scalar ids: recomputed at every entry (barriers).
        let at = self.l.b.get_insert_block().ok_or("builder not positioned")?;
        if let Some(term) = self.l.pb.get_insert_block().and_then(|b| b.get_terminator()) {
            self.l.b.position_before(&term);
        }
        let wide = self.l.broadcast(scalar)?.into_vector_value();
        let w = self.l.width()?;
        let et = wide.get_type().get_element_type().into_int_type();
        // Lane offsets for component 0 only (the first W elements in SoA order).
        let n = wide.get_type().get_size();
        let offs: Vec<IntValue<'ctx>> = (0..n).map(|j| et.const_int(if j < w { j as u64 } else { 0 }, false)).collect();
        let r = self.l.b.build_int_add(wide, VectorType::const_vector(&offs), "")?;
        self.l.b.position_at_end(at);
        Ok(r.into())
    }

    /// Lowers instruction `i` in vector mode if it involves varying values; `false` leaves it
    /// to the scalar lowering (everything uniform).
    pub fn lower_vector_inst(&mut self, i: Inst) -> R<bool> {
        let f = self.l.f;
        let data = &f.insts[i];
        let res = f.inst_result[i];
        let res_uniform = res.is_none_or(|r| self.l.is_uniform(r));
        let ops_uniform = data.operands().iter().all(|&o| self.l.is_uniform(o));
        use InstData as I;
        match data {
            I::Jump { .. } | I::Branch { .. } | I::Switch { .. } | I::Return { .. } | I::Unreachable => {
                return Ok(false)
            }
            I::Variable { init, .. } => {
                let r = res.ok_or("variable without result")?;
                if !self.is_register_var(r) {
                    // Set up in the prologue (lane copies, or one variable for the packet
                    // whose initializer the scalar lowering stores).
                    if let Some(init) = init.filter(|_| !self.l.is_uniform(r)) {
                        // Each lane's copy starts as the constant (`back::vector::lanes`).
                        self.init_lane_copies(r, init)?;
                    }
                    return Ok(init.is_none() || !self.l.is_uniform(r));
                }
                if let Some(init) = init {
                    let p = as_ptr(self.l.vals_get(r)?)?;
                    let x = self.l.get_wide(*init)?;
                    self.register_store(p, x)?;
                }
                return Ok(true);
            }
            I::Load { ptr, .. } if self.is_register_var(*ptr) => {
                let r = res.ok_or("load without result")?;
                let p = as_ptr(self.l.get(*ptr)?)?;
                let ty = self.l.value_llty(r)?;
                let x = self.l.b.build_load(ty, p, "")?;
                self.state_align(*ptr, x.as_instruction_value());
                self.l.define(r, x)?;
                return Ok(true);
            }
            I::Store { ptr, value, .. } if self.is_register_var(*ptr) => {
                let p = as_ptr(self.l.get(*ptr)?)?;
                let x = self.l.get_wide(*value)?;
                if self.l.f.is_state_address(*ptr) {
                    // Work-item state (`passes::barriers`): packets keep W values in a row,
                    // aligned to the element only.
                    let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
                    let v = if vs.mask != vs.static_mask {
                        // In a masked block only the active lanes' part is theirs to write.
                        let mask = vs.mask;
                        let old = self.l.b.build_load(x.get_type(), p, "")?;
                        self.state_align(*ptr, old.as_instruction_value());
                        self.l.blend(mask, x, old)?
                    } else {
                        x
                    };
                    let st = self.l.b.build_store(p, v)?;
                    self.state_align(*ptr, Some(st));
                    return Ok(true);
                }
                self.register_store(p, x)?;
                return Ok(true);
            }
            I::AnyActive { cond } => {
                let r = res.ok_or("any_active without result")?;
                let any = if self.l.is_uniform(*cond) {
                    self.l.get(*cond)?
                } else {
                    // The packet's active lanes (an unmasked block's: the work-items that exist).
                    let mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
                    let c = self.l.get_wide(*cond)?.into_vector_value();
                    let on = self.l.b.build_and(c, mask, "")?;
                    self.l.intr("llvm.vector.reduce.or", &[on.into()])?
                };
                self.l.define(r, any)?;
                return Ok(true);
            }
            I::Group { .. } => {
                self.lower_sub_group(i)?;
                return Ok(true);
            }
            _ if self.runs_per_lane(i) => {
                self.lower_lanes(i)?;
                return Ok(true);
            }
            I::Atomic { op, ptr, value, comparator, semantics, .. } => {
                let order = crate::back::llvm::ordering(*semantics);
                self.atomic_per_lane(i, *op, *ptr, *value, *comparator, order)?;
                return Ok(true);
            }
            I::ExtInst { opcode, args } if self.extinst_per_lane(i, *opcode, args) => {
                self.extinst_lanes(i, *opcode, args)?;
                return Ok(true);
            }
            I::Load { ptr, align, volatile, .. } => {
                let r = res.ok_or("load without result")?;
                if self.l.is_uniform(*ptr) {
                    if res_uniform {
                        return Ok(false);
                    }
                    // Every lane reads the same address, yet the value varies (lanes leave a
                    // divergent loop at different iterations): one scalar load, broadcast.
                    let p = as_ptr(self.l.get(*ptr)?)?;
                    let l = self.l.b.build_load(self.l.ty(f.value_type(r))?, p, "")?;
                    if let Some(inst) = l.as_instruction_value() {
                        if *align > 0 && align.is_power_of_two() {
                            let _ = inst.set_alignment(*align);
                        }
                        let _ = inst.set_volatile(*volatile);
                    }
                    let x = self.l.broadcast(l)?;
                    self.l.define(r, x)?;
                    return Ok(true);
                }
                let v = self.vector_load(i, *ptr, f.value_type(r), *align)?;
                self.l.define(r, v)?;
                return Ok(true);
            }
            I::Store { ptr, value, align, .. } => {
                if ops_uniform {
                    return Ok(false);
                }
                self.vector_store(i, *ptr, *value, *align)?;
                return Ok(true);
            }
            _ if res_uniform && ops_uniform => return Ok(false),
            _ => {}
        }
        let r = res.ok_or("varying instruction without result")?;
        let ir_ty = f.value_type(r);
        let rt_wide = wide_ty(self.l.ty(ir_ty)?, self.l.width()?)?;
        let w = self.l.width()?;
        let wide: Val<'ctx> = match data {
            I::WorkItem { query } => self.vector_work_item(*query, ir_ty)?,
            I::Binary { op, lhs, rhs } => {
                let (a, b) = (self.l.get_wide(*lhs)?, self.l.get_wide(*rhs)?);
                self.l.lower_binary(*op, a, b)?
            }
            I::Unary { op: ir::UnaryOp::Any | ir::UnaryOp::All, arg }
                if self.l.e.ir.types.lanes(f.value_type(*arg)) > 1 =>
            {
                // any() / all() per lane: OR / AND over the components' slices.
                let all = matches!(data, I::Unary { op: ir::UnaryOp::All, .. });
                let v = self.l.get_wide(*arg)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                // Integer vectors: the sign bit of each component.
                let bits = if v.get_type().get_element_type().into_int_type().get_bit_width() == 1 {
                    v
                } else {
                    let z = v.get_type().const_zero();
                    self.l.b.build_int_compare(IntPredicate::SLT, v, z, "")?
                };
                let mut acc = self.l.shuffle(bits, None, &(0..w).map(Some).collect::<Vec<_>>())?;
                for c in 1..n {
                    let comp = self.l.shuffle(bits, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    acc = if all { self.l.b.build_and(acc, comp, "")? } else { self.l.b.build_or(acc, comp, "")? };
                }
                let rt = rt_wide.into_vector_type();
                if rt.get_element_type().into_int_type().get_bit_width() == 1 {
                    acc.into()
                } else {
                    self.l.b.build_int_z_extend(acc, rt, "")?.into()
                }
            }
            I::Unary { op, arg } => {
                let a = self.l.get_wide(*arg)?;
                self.l.lower_unary(*op, a, rt_wide)?
            }
            I::Compare { op, lhs, rhs } => {
                let (a, b) = (self.l.get_wide(*lhs)?, self.l.get_wide(*rhs)?);
                self.l.lower_compare(*op, a, b)?
            }
            I::Select { cond, if_true, if_false }
                if !self.l.is_uniform(*cond)
                    && matches!(
                        self.l.e.ir.types.get(ir_ty),
                        ir::TypeData::Struct { .. } | ir::TypeData::Array { .. }
                    ) =>
            {
                // A struct or array per lane (a join of `passes::linearize`): lane by lane.
                let c = self.l.get_wide(*cond)?.into_vector_value();
                let t = self.l.get_wide(*if_true)?;
                let e = self.l.get_wide(*if_false)?;
                self.l.blend(c, t, e)?
            }
            I::Select { cond, if_true, if_false } => {
                let c = if self.l.is_uniform(*cond) && !f.value_type(*cond).eq(&f.value_type(*if_true)) {
                    // A uniform scalar condition selects whole vectors.
                    let c = self.l.get(*cond)?;
                    if c.is_vector_value() {
                        self.l.broadcast(c)?
                    } else {
                        c
                    }
                } else {
                    let c = self.l.get_wide(*cond)?;
                    let n = self.l.e.ir.types.lanes(ir_ty);
                    if n > 1 && self.l.e.ir.types.lanes(f.value_type(*cond)) == 1 {
                        // A varying scalar condition picks each work-item's whole vector: in
                        // structure-of-arrays order that is the lane mask once per component.
                        let cv = c.into_vector_value();
                        self.l.concat(&vec![cv; n as usize])?.into()
                    } else {
                        c
                    }
                };
                let t = self.l.get_wide(*if_true)?;
                let e = self.l.get_wide(*if_false)?;
                self.l.select(c, t, e)?
            }
            I::Convert { op, arg, saturate, rounding } => {
                let a = self.l.get_wide(*arg)?;
                let (ns, nd) = (self.l.e.ir.types.lanes(f.value_type(*arg)), self.l.e.ir.types.lanes(ir_ty));
                match op {
                    ir::ConvertOp::Bitcast if ns != nd => {
                        // Each lane's bits: SoA -> AoS, reinterpret, AoS -> SoA.
                        let av = a.into_vector_value();
                        let aos: Vec<Option<u32>> = (0..ns * w).map(|j| Some((j % ns) * w + j / ns)).collect();
                        let x = self.l.shuffle(av, None, &aos)?;
                        let y = self.l.b.build_bit_cast(x, rt_wide, "")?.into_vector_value();
                        let soa: Vec<Option<u32>> = (0..nd * w).map(|j| Some((j % w) * nd + j / w)).collect();
                        self.l.shuffle(y, None, &soa)?.into()
                    }
                    ir::ConvertOp::PtrCast => a,
                    ir::ConvertOp::PtrToInt => self.l.cast(inkwell::values::InstructionOpcode::PtrToInt, a, rt_wide)?,
                    ir::ConvertOp::IntToPtr => self.l.cast(inkwell::values::InstructionOpcode::IntToPtr, a, rt_wide)?,
                    _ => self.l.lower_convert(*op, a, rt_wide, *saturate, *rounding)?,
                }
            }
            I::AccessChain { base, element, indices, .. } => self.vector_access_chain(*base, *element, indices)?,
            I::ExtractElement { vector, index } if self.l.const_index(*index).is_none() => {
                // A component chosen at run time: a select over the components.
                let v = self.l.get_wide(*vector)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                let ix = self.l.get_wide(*index)?.into_vector_value();
                let mut acc = self.l.shuffle(v, None, &(0..w).map(Some).collect::<Vec<_>>())?;
                for c in 1..n {
                    let comp = self.l.shuffle(v, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    let cv = self.l.const_like(ix, c as u64)?;
                    let is_c = self.l.b.build_int_compare(IntPredicate::EQ, ix, cv, "")?;
                    acc = self.l.b.build_select(is_c, comp, acc, "")?.into_vector_value();
                }
                acc.into()
            }
            I::InsertElement { vector, value, index } if self.l.const_index(*index).is_none() => {
                let v = self.l.get_wide(*vector)?.into_vector_value();
                let x = self.l.get_wide(*value)?.into_vector_value();
                let ix = self.l.get_wide(*index)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                let mut comps = Vec::with_capacity(n as usize);
                for c in 0..n {
                    let comp = self.l.shuffle(v, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    let cv = self.l.const_like(ix, c as u64)?;
                    let is_c = self.l.b.build_int_compare(IntPredicate::EQ, ix, cv, "")?;
                    comps.push(self.l.b.build_select(is_c, x, comp, "")?.into_vector_value());
                }
                self.l.concat(&comps)?.into()
            }
            I::ExtractElement { vector, index } => {
                let c = self.l.const_index(*index).ok_or("extract with a varying index")? as u32;
                let v = self.l.get_wide(*vector)?.into_vector_value();
                if res_uniform {
                    let x = self.l.b.build_extract_element(v, self.l.i32().const_int((c * w) as u64, false), "")?;
                    self.l.define(r, x)?;
                    return Ok(true);
                }
                let idx: Vec<Option<u32>> = (0..w).map(|k| Some(c * w + k)).collect();
                self.l.shuffle(v, None, &idx)?.into()
            }
            I::InsertElement { vector, value, index } => {
                let c = self.l.const_index(*index).ok_or("insert with a varying index")? as u32;
                let v = self.l.get_wide(*vector)?.into_vector_value();
                let x = self.l.get_wide(*value)?.into_vector_value();
                let n = v.get_type().get_size();
                let xe = self.l.shuffle(x, None, &(0..n).map(|j| (j < w).then_some(j)).collect::<Vec<_>>())?;
                let idx: Vec<Option<u32>> = (0..n).map(|j| Some(if j / w == c { n + j % w } else { j })).collect();
                self.l.shuffle(v, Some(xe), &idx)?.into()
            }
            I::Shuffle { a, b, mask } => {
                let va = self.l.get_wide(*a)?.into_vector_value();
                let vb = self.l.get_wide(*b)?.into_vector_value();
                let na = va.get_type().get_size() / w;
                let m: Vec<Option<u32>> = mask
                    .iter()
                    .flat_map(|c| {
                        (0..w).map(move |k| c.map(|c| if c < na { c * w + k } else { na * w + (c - na) * w + k }))
                    })
                    .collect();
                let both = self.l.concat(&[va, vb])?;
                self.l.shuffle(both, None, &m)?.into()
            }
            I::Construct { parts } => {
                let mut vs = Vec::with_capacity(parts.len());
                for &p in parts {
                    vs.push(self.l.get_wide(p)?.into_vector_value());
                }
                self.l.concat(&vs)?.into()
            }
            I::ExtInst { opcode, args } => {
                let vals: Vec<Val<'ctx>> = args.iter().map(|&a| self.l.get_wide(a)).collect::<R<_>>()?;
                let arg_tys: Vec<ir::Type> = args.iter().map(|a| f.value_type(*a)).collect();
                super::builtins::lower(self.l, *opcode, &vals, &arg_tys, Some(rt_wide))?
                    .ok_or("built-in without result")?
            }
            I::GenericSpace { ptr } => {
                let p = self.l.get_wide(*ptr)?;
                self.l.generic_space(p)?
            }
            other => bail!("{} cannot be vectorized", super::llvm::describe(other)),
        };
        let out = if res_uniform && self.l.vec.as_ref().is_some_and(|vs| vs.wa.uniform_conds.contains(&r)) {
            // The condition of a branch that controls a barrier: the active lanes agree in
            // a valid program (lane 0 may be inactive in a packet's first segment).
            let last = self.l.vec.as_ref().ok_or("not in vector mode")?.last;
            self.l.lane_of(wide, ir_ty, last)?
        } else if res_uniform {
            // All lanes agree: lane 0.
            self.l.lane_of(wide, ir_ty, self.l.i32().const_zero())?
        } else {
            wide
        };
        self.l.define(r, out)?;
        Ok(true)
    }

    /// An atomic operation in vector code: one scalar atomic per active lane, in lane order.
    fn atomic_per_lane(
        &mut self,
        i: Inst,
        op: ir::AtomicOp,
        ptr: Value,
        value: Option<Value>,
        comparator: Option<Value>,
        order: inkwell::AtomicOrdering,
    ) -> R<()> {
        let res = self.l.f.inst_result[i].filter(|r| !self.l.e.is_void(self.l.f.value_type(*r)));
        let rt = match res {
            Some(r) => Some(self.l.ty(self.l.f.value_type(r))?),
            None => None,
        };
        let local = self.l.in_local_memory(ptr);
        let pw = self.l.get_wide(ptr)?.into_vector_value();
        let vw = match value {
            Some(v) => Some(self.l.get_wide(v)?.into_vector_value()),
            None => None,
        };
        let cw = match comparator {
            Some(c) => Some(self.l.get_wide(c)?.into_vector_value()),
            None => None,
        };
        let acc = self.for_each_active_lane(rt, |s, _, kc, acc| {
            let p = s.l.b.build_extract_element(pw, kc, "")?.into_pointer_value();
            let v = match vw {
                Some(x) => Some(s.l.b.build_extract_element(x, kc, "")?),
                None => None,
            };
            let c = match cw {
                Some(x) => Some(s.l.b.build_extract_element(x, kc, "")?),
                None => None,
            };
            let r = if local { s.l.local_atomic_on(op, p, v, c, rt)? } else { s.l.atomic_on(op, p, v, c, order, rt)? };
            Ok(match (acc, r) {
                (Some(a), Some(r)) => Some(s.l.b.build_insert_element(a, r, kc, "")?),
                _ => None,
            })
        })?;
        self.define_lane_results(res, acc)
    }

    /// Runs `lane(self, k, k as i32, acc)` for each lane k whose mask bit is set, in lane
    /// order, each under a branch on its own bit. `acc` starts as an undefined `<W x rt>`
    /// (none without a result type) and `lane` returns it with lane k's result inserted; the
    /// lanes that did not run keep what they had. Returns the accumulated vector.
    fn for_each_active_lane(
        &mut self,
        rt: Option<BasicTypeEnum<'ctx>>,
        mut lane: impl FnMut(&mut Self, u32, IntValue<'ctx>, Option<VectorValue<'ctx>>) -> R<Option<VectorValue<'ctx>>>,
    ) -> R<Option<VectorValue<'ctx>>> {
        let w = self.l.width()?;
        let acc: Option<Val<'ctx>> = match rt {
            Some(t) => Some(wide_ty(t, w)?.into_vector_type().get_undef().into()),
            None => None,
        };
        let acc = self.each_active_lane(acc, |s, k, acc| {
            let kc = s.l.i32().const_int(k as u64, false);
            Ok(lane(s, k, kc, acc.map(|a| a.into_vector_value()))?.map(Into::into))
        })?;
        Ok(acc.map(|a| a.into_vector_value()))
    }

    /// Defines result `res` from the per-lane results `acc` (lane 0's when `res` is uniform).
    fn define_lane_results(&mut self, res: Option<Value>, acc: Option<VectorValue<'ctx>>) -> R<()> {
        if let (Some(r), Some(a)) = (res, acc) {
            let out: Val<'ctx> = if self.l.is_uniform(r) {
                self.l.lane_of(a.into(), self.l.f.value_type(r), self.l.i32().const_zero())?
            } else {
                a.into()
            };
            self.l.define(r, out)?;
        }
        Ok(())
    }

    /// An OpenCL.std instruction without an element-wise vector form (printf, vload/vstore,
    /// geometric functions, pointer results, mixed widths) runs once per active lane.
    fn extinst_per_lane(&self, i: Inst, opcode: u32, args: &[Value]) -> bool {
        const PRINTF: u32 = 184;
        if opcode == PRINTF {
            return true;
        }
        let f = self.l.f;
        let res = f.inst_result[i];
        let varying = args.iter().any(|&a| !self.l.is_uniform(a)) || res.is_some_and(|r| !self.l.is_uniform(r));
        if !varying {
            return false;
        }
        let types = &self.l.e.ir.types;
        let rt = res.map(|r| f.value_type(r)).filter(|t| !self.l.e.is_void(*t));
        let ptr_arg = args.iter().any(|a| matches!(types.get(f.value_type(*a)), TypeData::Pointer { .. }));
        let mixed = rt.is_none_or(|rt| args.iter().any(|a| types.lanes(f.value_type(*a)) != types.lanes(rt)));
        crate::vectorize::CROSS_COMPONENT.contains(&opcode) || ptr_arg || mixed
    }

    /// [`Self::extinst_per_lane`]: lane by lane, in lane order, each lane's own operands.
    fn extinst_lanes(&mut self, i: Inst, opcode: u32, args: &[Value]) -> R<()> {
        let f = self.l.f;
        let w = self.l.width()?;
        let res = f.inst_result[i].filter(|r| !self.l.e.is_void(f.value_type(*r)));
        let rt_ir = res.map(|r| f.value_type(r));
        let rt = match rt_ir {
            Some(t) => Some(self.l.ty(t)?),
            None => None,
        };
        let arg_tys: Vec<ir::Type> = args.iter().map(|a| f.value_type(*a)).collect();
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push((self.l.get(a)?, self.l.is_uniform(a)));
        }
        let acc = self.for_each_active_lane(rt, |s, k, kc, acc| {
            let mut lane_args = Vec::with_capacity(vals.len());
            for ((v, uniform), t) in vals.iter().zip(&arg_tys) {
                lane_args.push(if *uniform { *v } else { s.l.lane_of(*v, *t, kc)? });
            }
            let r = super::builtins::lower(s.l, opcode, &lane_args, &arg_tys, rt)?;
            Ok(match (acc, r) {
                (Some(mut a), Some(r)) => {
                    match r {
                        BasicValueEnum::VectorValue(rv) => {
                            for c in 0..rv.get_type().get_size() {
                                let x = s.l.b.build_extract_element(rv, s.l.i32().const_int(c as u64, false), "")?;
                                let at = s.l.i32().const_int((c * w + k) as u64, false);
                                a = s.l.b.build_insert_element(a, x, at, "")?;
                            }
                        }
                        other => a = s.l.b.build_insert_element(a, other, kc, "")?,
                    }
                    Some(a)
                }
                _ => None,
            })
        })?;
        self.define_lane_results(res, acc)
    }

    /// Work-item state is aligned to the element only in a packet (`workgroup::plan_state`
    /// places each work-item's copy; a packet's W copies are in a row).
    fn state_align(&self, ptr: Value, inst: Option<inkwell::values::InstructionValue<'ctx>>) {
        if let Some(inst) = inst.filter(|_| self.l.f.is_state_address(ptr)) {
            let _ = inst.set_alignment(1);
        }
    }

    fn is_register_var(&self, p: Value) -> bool {
        self.l.vec.as_ref().is_some_and(|vs| vs.wa.private_regs.contains(&p))
    }

    /// Stores `x` into a register variable for the active lanes.
    fn register_store(&self, p: inkwell::values::PointerValue<'ctx>, x: Val<'ctx>) -> R<()> {
        let mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
        let old = self.l.b.build_load(x.get_type(), p, "")?;
        let v = self.l.blend(mask, x, old)?;
        self.l.b.build_store(p, v)?;
        Ok(())
    }

    /// Pointer arithmetic with varying operands: a vector GEP per index.
    fn vector_access_chain(&mut self, base: Value, element: Option<Value>, indices: &[Value]) -> R<Val<'ctx>> {
        let types = &self.l.e.ir.types;
        let TypeData::Pointer { pointee, .. } = types.get(self.l.f.value_type(base)) else {
            bail!("access chain on a non-pointer")
        };
        let mut cur = *pointee;
        let mut p: Val<'ctx> = self.l.get_wide(base)?;
        let i8t: BasicTypeEnum<'ctx> = self.l.cx().i8_type().into();
        let size_ty = |fx: &Self, t: ir::Type| -> R<BasicTypeEnum<'ctx>> {
            match fx.l.e.ir.types.get(t) {
                TypeData::Void | TypeData::Function { .. } | TypeData::Opaque { .. } => Ok(i8t),
                _ => fx.l.ty(t),
            }
        };
        if let Some(e) = element {
            let ix = self.l.get(e)?;
            p = self.l.vector_gep(size_ty(self, cur)?, p, ix)?.into();
        }
        for &ix in indices {
            match self.l.e.ir.types.get(cur).clone() {
                TypeData::Struct { fields, .. } => {
                    let Some(n) = self.l.const_index(ix) else { bail!("struct member index is not a constant") };
                    let off = self.l.e.ir.types.field_offset(cur, n as usize);
                    p = self.l.vector_gep(i8t, p, self.l.i64().const_int(off, false).into())?.into();
                    cur = *fields.get(n as usize).ok_or("struct member index out of range")?;
                }
                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                    let x = self.l.get(ix)?;
                    p = self.l.vector_gep(size_ty(self, elem)?, p, x)?.into();
                    cur = elem;
                }
                other => bail!("access chain index into {other:?}"),
            }
        }
        if !p.is_vector_value() {
            p = self.l.broadcast(p)?;
        }
        Ok(p)
    }

    /// Work-item ids of lanes that are consecutive linear local ids (`lid[0]` holds lane 0's
    /// linear id); `None` for the queries whose vector form the row layout already gives.
    pub fn linear_work_item(&mut self, q: WorkItemQuery, ir_ty: ir::Type) -> R<Option<Val<'ctx>>> {
        use WorkItemQuery as Q;
        if !matches!(q, Q::LocalId | Q::GlobalId | Q::LocalLinearId | Q::GlobalLinearId) {
            return Ok(None);
        }
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        let i64t = self.l.i64();
        let v3 = i64t.vec_type(3);
        let comps = |s: &mut Self, q: Q| -> R<[IntValue<'ctx>; 3]> {
            let v = s.l.work_item_value(q, v3.into())?.into_vector_value();
            let mut out = [i64t.const_zero(); 3];
            for (d, o) in out.iter_mut().enumerate() {
                *o = s.l.pb.build_extract_element(v, s.l.i32().const_int(d as u64, false), "")?.into_int_value();
            }
            Ok(out)
        };
        let ls = comps(self, Q::LocalSize)?;
        let global = matches!(q, Q::GlobalId | Q::GlobalLinearId);
        let (g, e, o, gs) = if global {
            (
                comps(self, Q::GroupId)?,
                comps(self, Q::EnqueuedLocalSize)?,
                comps(self, Q::GlobalOffset)?,
                comps(self, Q::GlobalSize)?,
            )
        } else {
            (ls, ls, ls, ls)
        };
        let pb = &self.l.pb;
        let splat = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let vt = i64t.vec_type(w);
            let v = pb.build_insert_element(vt.get_undef(), x, self.l.i32().const_zero(), "")?;
            Ok(pb.build_shuffle_vector(v, vt.get_undef(), self.l.i32().vec_type(w).const_zero(), "")?)
        };
        let iota: Vec<IntValue<'ctx>> = (0..w).map(|k| i64t.const_int(k as u64, false)).collect();
        let lin = pb.build_int_add(splat(self.l.env.lid[0])?, VectorType::const_vector(&iota), "lin")?;
        let row_width = self.l.vec.as_ref().map_or(0, |v| v.wa.row_width);
        let lid = if row_width > 0 {
            // Whole rows of `row_width` in one plane (`GenBuild::row_width`): lane k is at
            // x = k mod wx, y = y0 + k div wx, z = z0, with y0 and z0 the first lane's.
            let wx = i64t.const_int(row_width, false);
            let t0 = pb.build_int_unsigned_div(self.l.env.lid[0], wx, "")?;
            let (y0, z0) = (pb.build_int_unsigned_rem(t0, ls[1], "")?, pb.build_int_unsigned_div(t0, ls[1], "")?);
            let pattern = |f: &dyn Fn(u64) -> u64| -> VectorValue<'ctx> {
                VectorType::const_vector(&(0..w).map(|k| i64t.const_int(f(u64::from(k)), false)).collect::<Vec<_>>())
            };
            [pattern(&|k| k % row_width), pb.build_int_add(splat(y0)?, pattern(&|k| k / row_width), "")?, splat(z0)?]
        } else {
            let (sx, sy) = (splat(ls[0])?, splat(ls[1])?);
            let t = pb.build_int_unsigned_div(lin, sx, "")?;
            [
                pb.build_int_unsigned_rem(lin, sx, "")?,
                pb.build_int_unsigned_rem(t, sy, "")?,
                pb.build_int_unsigned_div(t, sy, "")?,
            ]
        };
        let dims: [VectorValue<'ctx>; 3] = match q {
            Q::LocalId => lid,
            Q::LocalLinearId => [lin, lin, lin],
            Q::GlobalId | Q::GlobalLinearId => {
                let mut gid = lid;
                for d in 0..3 {
                    let start = pb.build_int_add(pb.build_int_mul(g[d], e[d], "")?, o[d], "")?;
                    gid[d] = pb.build_int_add(lid[d], splat(start)?, "")?;
                }
                if q == Q::GlobalId {
                    gid
                } else {
                    // ((z - oz) * gy + (y - oy)) * gx + (x - ox)
                    let rel: Vec<VectorValue<'ctx>> =
                        (0..3).map(|d| Ok(pb.build_int_sub(gid[d], splat(o[d])?, "")?)).collect::<R<_>>()?;
                    let zy = pb.build_int_add(pb.build_int_mul(rel[2], splat(gs[1])?, "")?, rel[1], "")?;
                    let r = pb.build_int_add(pb.build_int_mul(zy, splat(gs[0])?, "")?, rel[0], "")?;
                    [r, r, r]
                }
            }
            _ => return Ok(None),
        };
        let t = self.l.ty(ir_ty)?;
        let (et, n) = match t {
            inkwell::types::BasicTypeEnum::VectorType(vt) => (vt.get_element_type().into_int_type(), vt.get_size()),
            inkwell::types::BasicTypeEnum::IntType(it) => (it, 1),
            other => bail!("work-item query of type {other}"),
        };
        let conv = |v: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            Ok(self.l.pb.build_int_cast_sign_flag(v, et.vec_type(w), false, "")?)
        };
        if n == 1 {
            return Ok(Some(conv(dims[0])?.into()));
        }
        // Structure of arrays: component c of lane k at c * W + k.
        let zero = et.vec_type(w).const_zero();
        let mut parts = Vec::with_capacity(n as usize);
        for c in 0..n {
            parts.push(if c < 3 { conv(dims[c as usize])? } else { zero });
        }
        let acc = Ops { b: &self.l.pb, m: &self.l.e.m, f: self.l.llf }.concat_all(&parts)?;
        Ok(Some(acc.into()))
    }
}
