//! Values of a packet: the shapes the lowering gives an IR value when a function runs W
//! work-items at a time (vector mode, `back::vector`). A value the work-item analysis
//! ([`crate::vectorize::analysis`]) finds uniform keeps its scalar form. Any other value of IR
//! type T is an LLVM `<W x T>`; an IR vector `<n x T>` per work-item becomes `<n*W x T>` in
//! component-major (structure-of-arrays) order (lane k of component c at c*W + k); a struct
//! or array value is `[W x T]` (lane k's at index k); a pointer that varies is `<W x ptr>`.
//! Here: [`VecState`] (what the lowering knows about its packet), the wide types, and the
//! operations on packet values every part of the lowering uses: broadcast, lanes, blends
//! under a mask, concatenation, vector GEPs, intrinsic calls and non-temporal stores.

use super::{undef_of as undef, Error, FnLower, Ops, Val, R};
use crate::ir::{self, Inst, Value};
use crate::vectorize::analysis::{Shape, WorkItemAnalysis};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{AggregateValueEnum, AsValueRef, BasicMetadataValueEnum, BasicValueEnum, IntValue, VectorValue};

/// What a function lowered in vector mode knows about its packet.
pub struct VecState<'a, 'ctx> {
    pub width: u32,
    pub wa: &'a WorkItemAnalysis,
    /// Lane k active: lo <= k < hi (`<W x i1>`).
    pub mask: VectorValue<'ctx>,
    /// The last active lane (hi - 1) as i32.
    pub last: IntValue<'ctx>,
    /// The packet's lanes lo..hi and its last lane (the mask at the start and after a barrier).
    pub static_mask: VectorValue<'ctx>,
    pub static_last: IntValue<'ctx>,
    /// The stores whose full, aligned packets of large ND-ranges store with non-temporal
    /// stores ([`crate::back::vector::streaming_stores`]).
    pub streaming: std::collections::HashSet<crate::ir::Inst>,
    /// Member accesses of one struct element done as one span ([`crate::vectorize::members`]).
    pub groups: crate::vectorize::members::MemberGroups,
    /// Group -> its span, loaded at the group's first load (lane k's struct at k * slots).
    pub group_spans: std::collections::HashMap<usize, VectorValue<'ctx>>,
    /// Loads that prefetch their stream ([`crate::vectorize::prefetch`]).
    pub prefetch: std::collections::HashSet<Inst>,
    /// The frame's scratch buffers of looped masked accesses, by use and size
    /// (`back::vector::masked_loop`).
    pub scratch: std::cell::RefCell<
        std::collections::HashMap<(crate::back::vector::Scratch, u64), inkwell::values::PointerValue<'ctx>>,
    >,
}

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// Whether `v` is the same in every lane (always true in scalar mode).
    pub(crate) fn is_uniform(&self, v: Value) -> bool {
        match &self.vec {
            Some(vs) => vs.wa.shape(self.f, v) == Shape::Uniform,
            None => true,
        }
    }

    /// The LLVM type of `v`: widened to W lanes when it varies.
    pub(crate) fn value_llty(&self, v: Value) -> R<BasicTypeEnum<'ctx>> {
        let t = self.ty(self.f.value_type(v))?;
        match &self.vec {
            Some(vs) if !self.is_uniform(v) => wide_ty(t, vs.width),
            _ => Ok(t),
        }
    }

    /// `v` at the current position in its vector form: uniform values are broadcast.
    pub(crate) fn get_wide(&mut self, v: Value) -> R<Val<'ctx>> {
        let x = self.get(v)?;
        if self.is_uniform(v) {
            self.broadcast(x)
        } else {
            Ok(x)
        }
    }

    /// The value of a block argument for parameter `param` (broadcast if the parameter varies).
    pub(crate) fn get_edge_arg(&mut self, arg: Value, param: Value) -> R<Val<'ctx>> {
        if self.vec.is_some() && !self.is_uniform(param) {
            self.get_wide(arg)
        } else {
            self.get(arg)
        }
    }

    pub(crate) fn width(&self) -> R<u32> {
        self.vec.as_ref().map(|v| v.width).ok_or_else(|| Error("not in vector mode".into()))
    }

    /// A uniform value (scalar or IR vector) in structure-of-arrays form.
    pub(crate) fn broadcast(&self, x: Val<'ctx>) -> R<Val<'ctx>> {
        let w = self.width()?;
        let i32t = self.i32();
        match x {
            BasicValueEnum::StructValue(_) | BasicValueEnum::ArrayValue(_) => self.broadcast_aggregate(x),
            BasicValueEnum::VectorValue(v) => {
                let n = v.get_type().get_size();
                let m: Vec<IntValue<'ctx>> = (0..n * w).map(|j| i32t.const_int((j / w) as u64, false)).collect();
                Ok(self.b.build_shuffle_vector(v, v.get_type().get_undef(), VectorType::const_vector(&m), "")?.into())
            }
            _ => {
                let vt = wide_ty(x.get_type(), w)?.into_vector_type();
                let v = self.b.build_insert_element(vt.get_undef(), x, i32t.const_zero(), "")?;
                let z = i32t.vec_type(w).const_zero();
                Ok(self.b.build_shuffle_vector(v, vt.get_undef(), z, "")?.into())
            }
        }
    }

    /// Lane `lane` (an i32) of a wide value whose IR type is `ir_ty` (scalar or vector).
    pub(crate) fn lane_of(&self, x: Val<'ctx>, ir_ty: ir::Type, lane: IntValue<'ctx>) -> R<Val<'ctx>> {
        let w = self.width()?;
        let v = x.into_vector_value();
        let t = self.ty(ir_ty)?;
        match t {
            BasicTypeEnum::VectorType(vt) => {
                let mut acc = vt.get_undef();
                for c in 0..vt.get_size() {
                    let at = self.b.build_int_add(lane, self.i32().const_int((c * w) as u64, false), "")?;
                    let e = self.b.build_extract_element(v, at, "")?;
                    acc = self.b.build_insert_element(acc, e, self.i32().const_int(c as u64, false), "")?;
                }
                Ok(acc.into())
            }
            _ => Ok(self.b.build_extract_element(v, lane, "")?),
        }
    }

    /// A shuffle of `a` (and `b`) with constant indices (`None` = undefined).
    pub(crate) fn shuffle(
        &self,
        a: VectorValue<'ctx>,
        b: Option<VectorValue<'ctx>>,
        idx: &[Option<u32>],
    ) -> R<VectorValue<'ctx>> {
        self.ops().const_shuffle(a, b.unwrap_or(a.get_type().get_undef()), idx.iter().copied())
    }

    /// Concatenates vectors of the same element type (pairwise, so that the intermediate
    /// vectors stay as short as they can).
    pub(crate) fn concat(&self, parts: &[VectorValue<'ctx>]) -> R<VectorValue<'ctx>> {
        if parts.is_empty() {
            bail!("empty concatenation");
        }
        let mut level = parts.to_vec();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] => self.concat2(*a, *b),
                    [a] => Ok(*a),
                    _ => unreachable!("chunks of two"),
                })
                .collect::<R<Vec<_>>>()?;
        }
        Ok(level[0])
    }

    pub(crate) fn concat2(&self, a: VectorValue<'ctx>, b: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        self.ops().concat2(a, b)
    }

    /// The mask and vector operations of [`Ops`], built with the body's builder.
    pub(crate) fn ops(&self) -> Ops<'_, 'ctx> {
        Ops { b: &self.b, m: &self.e.m, f: self.llf }
    }

    /// A vector of `W` pointers `base + index` elements of `elem` (LLVM vector GEP).
    pub(crate) fn vector_gep(
        &self,
        elem: BasicTypeEnum<'ctx>,
        base: Val<'ctx>,
        index: Val<'ctx>,
    ) -> R<VectorValue<'ctx>> {
        let mut idx = [index.as_value_ref()];
        // SAFETY: `elem` is a sized LLVM type, `base` a pointer or vector of pointers and
        // `index` an integer or integer vector of the same width, which is what LLVMBuildGEP2
        // requires; the result is a vector of pointers (one operand is a vector), wrapped as
        // the VectorValue it is. The address is only dereferenced by the kernel's own code.
        let v = unsafe {
            let raw = llvm_sys::core::LLVMBuildGEP2(
                self.b.as_mut_ptr(),
                inkwell::types::AsTypeRef::as_type_ref(&elem),
                base.as_value_ref(),
                idx.as_mut_ptr(),
                1,
                c"".as_ptr(),
            );
            VectorValue::new(raw)
        };
        Ok(v)
    }

    /// Sets `align` on parameter `param` of an intrinsic call.
    pub(crate) fn call_align(&self, call: inkwell::values::CallSiteValue<'ctx>, param: u32, align: u32) {
        if align > 0 && align.is_power_of_two() {
            let kind = Attribute::get_named_enum_kind_id("align");
            call.add_attribute(AttributeLoc::Param(param), self.cx().create_enum_attribute(kind, align as u64));
        }
    }

    pub(crate) fn call_intrinsic(
        &self,
        name: &str,
        tys: &[BasicTypeEnum<'ctx>],
        args: &[Val<'ctx>],
    ) -> R<inkwell::values::CallSiteValue<'ctx>> {
        let Some(i) = inkwell::intrinsics::Intrinsic::find(name) else { bail!("LLVM has no intrinsic {name}") };
        let Some(decl) = i.get_declaration(&self.e.m, tys) else { bail!("cannot declare {name}") };
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        Ok(self.b.build_call(decl, &args, "")?)
    }

    /// `c` as a vector like `like`.
    pub(crate) fn const_like(&self, like: VectorValue<'ctx>, c: u64) -> R<VectorValue<'ctx>> {
        let et = like.get_type().get_element_type().into_int_type();
        let parts: Vec<IntValue<'ctx>> = (0..like.get_type().get_size()).map(|_| et.const_int(c, false)).collect();
        Ok(VectorType::const_vector(&parts))
    }

    /// `new` in the lanes of `mask`, `old` elsewhere; a wide IR vector (n*W elements, SoA)
    /// takes lane k's mask bit for each of its components.
    pub(crate) fn blend(&self, mask: VectorValue<'ctx>, new: Val<'ctx>, old: Val<'ctx>) -> R<Val<'ctx>> {
        if new.is_array_value() {
            return self.blend_aggregates(mask, new, old);
        }
        let w = mask.get_type().get_size();
        let n = match new.get_type() {
            BasicTypeEnum::VectorType(v) => v.get_size(),
            _ => bail!("blend of a scalar {}", new.get_type()),
        };
        let m: Val<'ctx> = if n == w {
            mask.into()
        } else {
            let idx: Vec<Option<u32>> = (0..n).map(|j| Some(j % w)).collect();
            self.shuffle(mask, None, &idx)?.into()
        };
        self.select(m, new, old)
    }

    /// `<W x ptr>`: `base + k * size` for lane k (in the prologue).
    pub(crate) fn lane_pointers(&self, base: inkwell::values::PointerValue<'ctx>, size: u64) -> R<Val<'ctx>> {
        let w = self.width()?;
        let offs: Vec<IntValue<'ctx>> = (0..w).map(|k| self.i64().const_int(k as u64 * size, false)).collect();
        let at = self.b.get_insert_block();
        if let Some(term) = self.pb.get_insert_block().and_then(|b| b.get_terminator()) {
            self.b.position_before(&term);
        }
        let v = self.vector_gep(self.cx().i8_type().into(), base.into(), VectorType::const_vector(&offs).into())?;
        if let Some(at) = at {
            self.b.position_at_end(at);
        }
        Ok(v.into())
    }

    /// A non-temporal store of `v` at `p`.
    pub(crate) fn nt_store(&self, p: inkwell::values::PointerValue<'ctx>, v: Val<'ctx>, align: u32) -> R<()> {
        let st = self.b.build_store(p, v)?;
        let _ = st.set_alignment(align);
        let kind = self.cx().get_kind_id("nontemporal");
        let one = self.cx().metadata_node(&[self.i32().const_int(1, false).into()]);
        st.set_metadata(one, kind).map_err(|e| Error(format!("nontemporal metadata: {e}")))?;
        Ok(())
    }

    /// Scalar code: a non-temporal store of `v` at `p` (a store of `stream_stores`, in the
    /// work-item function that the work-group entry runs for large ND-ranges). Its address
    /// is aligned to its size ([`scalar_streaming_stores`] checks the store's alignment).
    pub(crate) fn scalar_stream_store(&mut self, p: inkwell::values::PointerValue<'ctx>, v: Val<'ctx>) -> R<()> {
        let size = self.e.alloc_size(v.get_type());
        self.nt_store(p, v, size as u32)
    }

    /// `acc` (a wide value) with lane `k` set to the scalar-form `r`.
    pub(crate) fn set_lane(&self, acc: Val<'ctx>, r: Val<'ctx>, k: u32) -> R<Val<'ctx>> {
        let w = self.width()?;
        Ok(match (acc, r) {
            (BasicValueEnum::ArrayValue(a), r) => match self.b.build_insert_value(a, r, k, "")? {
                AggregateValueEnum::ArrayValue(a) => a.into(),
                AggregateValueEnum::StructValue(s) => s.into(),
            },
            (BasicValueEnum::VectorValue(mut a), BasicValueEnum::VectorValue(rv)) => {
                // An IR vector per lane: component c of lane k at c*W + k.
                for c in 0..rv.get_type().get_size() {
                    let x = self.b.build_extract_element(rv, self.i32().const_int(c as u64, false), "")?;
                    let at = self.i32().const_int((c * w + k) as u64, false);
                    a = self.b.build_insert_element(a, x, at, "")?;
                }
                a.into()
            }
            (BasicValueEnum::VectorValue(a), r) => {
                self.b.build_insert_element(a, r, self.i32().const_int(k as u64, false), "")?.into()
            }
            (other, _) => bail!("per-lane result into {}", other.get_type()),
        })
    }

    /// A uniform struct or array value as W copies (`[W x T]`).
    pub(crate) fn broadcast_aggregate(&self, x: Val<'ctx>) -> R<Val<'ctx>> {
        let w = self.width()?;
        let t = wide_ty(x.get_type(), w)?;
        let mut acc = undef(t);
        for k in 0..w {
            acc = self.set_lane(acc, x, k)?;
        }
        Ok(acc)
    }

    /// `new` in the lanes of `mask`, `old` elsewhere, for W aggregates (`[W x T]`).
    pub(crate) fn blend_aggregates(&self, mask: VectorValue<'ctx>, new: Val<'ctx>, old: Val<'ctx>) -> R<Val<'ctx>> {
        let (BasicValueEnum::ArrayValue(n), BasicValueEnum::ArrayValue(o)) = (new, old) else {
            bail!("blend of {} and {}", new.get_type(), old.get_type())
        };
        let mut acc: Val<'ctx> = o.into();
        for k in 0..mask.get_type().get_size() {
            let c = self.b.build_extract_element(mask, self.i32().const_int(k as u64, false), "")?.into_int_value();
            let nk = self.b.build_extract_value(n, k, "")?;
            let ok = self.b.build_extract_value(o, k, "")?;
            let s = self.b.build_select(c, nk, ok, "")?;
            acc = self.set_lane(acc, s, k)?;
        }
        Ok(acc)
    }
}

/// `t` widened to `w` lanes (IR vectors of n become n*w, component-major).
pub fn wide_ty(t: BasicTypeEnum<'_>, w: u32) -> R<BasicTypeEnum<'_>> {
    Ok(match t {
        BasicTypeEnum::IntType(x) => x.vec_type(w).into(),
        BasicTypeEnum::FloatType(x) => x.vec_type(w).into(),
        BasicTypeEnum::PointerType(x) => x.vec_type(w).into(),
        BasicTypeEnum::VectorType(v) => {
            let n = v.get_size() * w;
            match v.get_element_type() {
                BasicTypeEnum::IntType(x) => x.vec_type(n).into(),
                BasicTypeEnum::FloatType(x) => x.vec_type(n).into(),
                BasicTypeEnum::PointerType(x) => x.vec_type(n).into(),
                other => bail!("vector of {other}"),
            }
        }
        // Struct and array values: W of them (`back::vector::lanes`).
        BasicTypeEnum::StructType(x) => x.array_type(w).into(),
        BasicTypeEnum::ArrayType(x) => x.array_type(w).into(),
        other => bail!("a varying {other} cannot be vectorized"),
    })
}
