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

use super::llvm::{as_int, as_ptr, bail, Error, FnLower, Val, R};
use crate::ir::{self, Inst, InstData, TypeData, Value};
use crate::vectorize::analysis::{Access, Shape, WorkItemAnalysis};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, BasicValue, BasicValueEnum, IntValue, PointerValue, VectorValue,
};
use inkwell::IntPredicate;

/// The bits of one masked load or store of a packet's span (one AVX-512 register).
pub const SPAN_PIECE_BITS: u64 = 512;

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
    /// Full, aligned packets of large ND-ranges store with non-temporal stores
    /// ([`streaming_allowed`]).
    pub streaming: bool,
    /// Member accesses of one struct element done as one span ([`crate::vectorize::members`]).
    pub groups: crate::vectorize::members::MemberGroups,
    /// Group -> its span, loaded at the group's first load (lane k's struct at k * slots).
    pub group_spans: std::collections::HashMap<usize, VectorValue<'ctx>>,
    /// Loads that prefetch their stream ([`crate::vectorize::prefetch`]).
    pub prefetch: std::collections::HashSet<Inst>,
}

/// A store whose bytes over the whole ND-range reach this streams past the caches
/// (non-temporal stores): the output is larger than a core's share of the last-level cache,
/// so writing it through the caches only costs a read of every line first (read for
/// ownership: 16 bytes of traffic per 12 bytes of `c = a + b`).
pub const STREAMING_BYTES: u64 = 16 << 20;

/// Whether vector code of `f` may use non-temporal stores: x86-64 hosts (whoever calls the
/// work-group entry fences them before another thread reads the results: `crate::abi`),
/// kernels without atomics (no ordering of weakly-ordered stores against them to reason
/// about), unless the target's streaming threshold (`CodegenKnobs::streaming_stores`) is
/// `None` (`SOFTCL_STREAMING_STORES=0`).
pub fn streaming_allowed(f: &ir::Function, knobs: &crate::CodegenKnobs) -> bool {
    cfg!(target_arch = "x86_64")
        && knobs.streaming_stores.is_some()
        && !f
            .layout
            .blocks
            .iter()
            .any(|&b| f.layout.insts[b].iter().any(|&i| matches!(f.insts[i], InstData::Atomic { .. })))
}

/// The stores of a kernel that stays scalar which may stream ([`streaming_allowed`] must
/// hold too): stores to global memory of a vector value of 16, 32 or 64 bytes that
/// consecutive work-items write side by side, on their own (consecutive) or with the other
/// members of their struct (a store group of [`crate::vectorize::members`] covering every
/// slot): the work-item loop then fills whole cache lines in order, which is what
/// non-temporal stores need.
pub fn scalar_streaming_stores(
    m: &ir::Module,
    f: &ir::Function,
    wa: &WorkItemAnalysis,
) -> std::collections::HashSet<Inst> {
    let groups = crate::vectorize::members::find(m, f, wa);
    let mut out = std::collections::HashSet::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let InstData::Store { ptr, value, volatile: false, align } = &f.insts[i] else { continue };
            let global = matches!(
                m.types.get(f.value_type(*ptr)),
                TypeData::Pointer { space: crate::kernel_info::AddressSpace::Global, .. }
            );
            let vt = f.value_type(*value);
            let size = m.types.size_of(vt);
            // The store's alignment (OpenCL C aligns vectors to their size) must allow the
            // non-temporal instruction, which needs an address aligned to its size.
            let aligned = *align == 0 || u64::from(*align) >= size;
            if !global || !aligned || m.types.lanes(vt) < 2 || !matches!(size, 16 | 32 | 64) {
                continue;
            }
            let whole = match wa.access(i) {
                Some(Access::Consecutive) => true,
                _ => groups.of.get(&i).is_some_and(|(g, _)| groups.groups[*g].slots.iter().all(|&s| s)),
            };
            if whole {
                out.insert(i);
            }
        }
    }
    out
}

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// Whether `v` is the same in every lane (always true in scalar mode).
    pub fn is_uniform(&self, v: Value) -> bool {
        match &self.vec {
            Some(vs) => vs.wa.shape(self.f, v) == Shape::Uniform,
            None => true,
        }
    }

    /// The LLVM type of `v`: widened to W lanes when it varies.
    pub fn value_llty(&self, v: Value) -> R<BasicTypeEnum<'ctx>> {
        let t = self.ty(self.f.value_type(v))?;
        match &self.vec {
            Some(vs) if !self.is_uniform(v) => wide_ty(t, vs.width),
            _ => Ok(t),
        }
    }

    /// Turns on vector mode: the mask and lane numbers come from parameters `lo` (7) and
    /// `hi` (8) of the vector work-item function.
    pub fn enable_vector(&mut self, width: u32, wa: &'a WorkItemAnalysis) -> R<()> {
        let p = |i: u32| self.llf.get_nth_param(i).ok_or_else(|| Error("missing lane-range parameter".into()));
        let lo = as_int(p(7)?)?;
        let hi = as_int(p(8)?)?;
        let i32t = self.i32();
        let pb = &self.pb;
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
        let streaming = streaming_allowed(self.f, &self.e.knobs);
        self.vec = Some(VecState {
            width,
            wa,
            mask,
            last,
            static_mask: mask,
            static_last: last,
            streaming,
            groups: crate::vectorize::members::find(self.e.ir, self.f, wa),
            group_spans: std::collections::HashMap::new(),
            prefetch: crate::vectorize::prefetch::prefetched_loads(self.e.ir, self.f, wa, self.e.knobs.prefetch),
        });
        Ok(())
    }

    /// `v` at the current position in its vector form: uniform values are broadcast.
    pub fn get_wide(&mut self, v: Value) -> R<Val<'ctx>> {
        let x = self.get(v)?;
        if self.is_uniform(v) {
            self.broadcast(x)
        } else {
            Ok(x)
        }
    }

    /// The value of a block argument for parameter `param` (broadcast if the parameter varies).
    pub fn get_edge_arg(&mut self, arg: Value, param: Value) -> R<Val<'ctx>> {
        if self.vec.is_some() && !self.is_uniform(param) {
            self.get_wide(arg)
        } else {
            self.get(arg)
        }
    }

    fn width(&self) -> R<u32> {
        self.vec.as_ref().map(|v| v.width).ok_or_else(|| Error("not in vector mode".into()))
    }

    /// A uniform value (scalar or IR vector) in structure-of-arrays form.
    fn broadcast(&self, x: Val<'ctx>) -> R<Val<'ctx>> {
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
    pub(super) fn lane_of(&self, x: Val<'ctx>, ir_ty: ir::Type, lane: IntValue<'ctx>) -> R<Val<'ctx>> {
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
    fn shuffle(&self, a: VectorValue<'ctx>, b: Option<VectorValue<'ctx>>, idx: &[Option<u32>]) -> R<VectorValue<'ctx>> {
        let i32t = self.i32();
        let m: Vec<IntValue<'ctx>> =
            idx.iter().map(|c| c.map_or(i32t.get_undef(), |c| i32t.const_int(c as u64, false))).collect();
        let b = b.unwrap_or(a.get_type().get_undef());
        Ok(self.b.build_shuffle_vector(a, b, VectorType::const_vector(&m), "")?)
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

    fn concat2(&self, a: VectorValue<'ctx>, b: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let (na, nb) = (a.get_type().get_size(), b.get_type().get_size());
        let n = na.max(nb);
        let pad = |v: VectorValue<'ctx>, len: u32| -> R<VectorValue<'ctx>> {
            if len == n {
                return Ok(v);
            }
            let idx: Vec<Option<u32>> = (0..n).map(|i| (i < len).then_some(i)).collect();
            self.shuffle(v, None, &idx)
        };
        let (a2, b2) = (pad(a, na)?, pad(b, nb)?);
        let idx: Vec<Option<u32>> = (0..na).chain((0..nb).map(|i| n + i)).map(Some).collect();
        self.shuffle(a2, Some(b2), &idx)
    }

    /// A vector of `W` pointers `base + index` elements of `elem` (LLVM vector GEP).
    fn vector_gep(&self, elem: BasicTypeEnum<'ctx>, base: Val<'ctx>, index: Val<'ctx>) -> R<VectorValue<'ctx>> {
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
    fn call_align(&self, call: inkwell::values::CallSiteValue<'ctx>, param: u32, align: u32) {
        if align > 0 && align.is_power_of_two() {
            let kind = Attribute::get_named_enum_kind_id("align");
            call.add_attribute(AttributeLoc::Param(param), self.cx().create_enum_attribute(kind, align as u64));
        }
    }

    fn call_intrinsic(
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

    /// The slots of each lane's `slots` consecutive elements (AoS order) that an access of
    /// `n` components covers: the first `n`.
    fn aos_slots(slots: u32, n: u32) -> Vec<bool> {
        (0..slots).map(|s| s < n).collect()
    }

    /// The masks of a packet's span of structs (AoS: lane k's slots at k * on.len(), the
    /// slots of `on` enabled in every active lane), in pieces of `elem_bits`-bit elements
    /// that fill [`SPAN_PIECE_BITS`]: (first element, mask) each.
    ///
    /// A span whose length is not a power of two (a `vload3` at SIMD32: `<96 x i32>`) as one
    /// masked access made LLVM's x86 back end move the mask bit by bit, several hundred
    /// mask-register instructions per access and most of the compile time of such kernels:
    /// it is accessed in pieces, each piece's mask a test of the lane mask's bits against a
    /// constant (a `vptestmd` on AVX-512). A span whose length is a power of two is one piece
    /// under the shuffled lane mask (below).
    fn span_mask_pieces(&self, on: &[bool], elem_bits: u64) -> R<Vec<(u32, VectorValue<'ctx>)>> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let (w, slots) = (vs.width, on.len() as u32);
        let total = w * slots;
        if on == [true] {
            // One slot per lane: the lane mask itself.
            return Ok(vec![(0, vs.mask)]);
        }
        if w > 64 || total.is_power_of_two() {
            // One mask for the whole span, the lane mask shuffled to every slot: a span whose
            // length is a power of two legalizes into one access per register, and with a
            // full mask (a full packet) folds to one plain access whose AoS <-> SoA shuffle
            // LLVM lowers best whole. Its pieces masked by bit tests instead made the particle
            // update (two float4 members, 8 registers per packet) run 1.7x as long. And when
            // no integer holds the lane bits (w > 64) there is nothing to test.
            let lanes: Vec<Option<u32>> = (0..total).map(|j| Some(j / slots)).collect();
            let ext = self.shuffle(vs.mask, None, &lanes)?;
            if !on.contains(&false) {
                return Ok(vec![(0, ext)]);
            }
            let keep: Vec<IntValue<'ctx>> =
                (0..total).map(|j| self.cx().bool_type().const_int(on[(j % slots) as usize] as u64, false)).collect();
            return Ok(vec![(0, self.b.build_and(ext, VectorType::const_vector(&keep), "")?)]);
        }
        let it = if w > 32 { self.i64() } else { self.i32() };
        let wt = self
            .cx()
            .custom_width_int_type(std::num::NonZeroU32::new(w).ok_or("no lanes")?)
            .map_err(|e| Error(e.to_string()))?;
        let bits = self.b.build_bit_cast(vs.mask, wt, "")?.into_int_value();
        let bits = self.b.build_int_z_extend_or_bit_cast(bits, it, "")?;
        let piece = ((SPAN_PIECE_BITS / elem_bits.max(1)) as u32).max(1);
        let mut out = Vec::new();
        let mut first = 0;
        while first < total {
            let len = piece.min(total - first);
            let splat = {
                let vt = it.vec_type(len);
                let x = self.b.build_insert_element(vt.get_undef(), bits, self.i32().const_zero(), "")?;
                self.b.build_shuffle_vector(x, vt.get_undef(), self.i32().vec_type(len).const_zero(), "")?
            };
            let tests: Vec<IntValue<'ctx>> = (first..first + len)
                .map(|j| it.const_int(if on[(j % slots) as usize] { 1u64 << (j / slots) } else { 0 }, false))
                .collect();
            let hit = self.b.build_and(splat, VectorType::const_vector(&tests), "")?;
            let m = self.b.build_int_compare(IntPredicate::NE, hit, it.vec_type(len).const_zero(), "")?;
            out.push((first, m));
            first += len;
        }
        Ok(out)
    }

    /// The address of element `first` of the span at `p0` and its alignment (`align` at
    /// the span's start).
    fn span_piece_at(
        &self,
        p0: inkwell::values::PointerValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        first: u32,
        align: u32,
    ) -> R<(inkwell::values::PointerValue<'ctx>, u32)> {
        if first == 0 {
            return Ok((p0, align));
        }
        let offset = self.e.alloc_size(elem) * u64::from(first);
        let at = super::llvm::gep(&self.b, elem, p0, &[self.i64().const_int(u64::from(first), false)], false)?;
        let piece_align = (1u64 << offset.trailing_zeros().min(31)).min(u64::from(align.max(1))) as u32;
        Ok((at, piece_align))
    }

    /// One packet's span of `elem` at `p0` (lane k's slots at k * on.len()), the slots of
    /// `on` loaded in every active lane, as masked loads of [`SPAN_PIECE_BITS`] each.
    fn span_load(
        &self,
        p0: inkwell::values::PointerValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        on: &[bool],
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let elem_bits = self.e.alloc_size(elem) * 8;
        let mut parts = Vec::new();
        for (first, m) in self.span_mask_pieces(on, elem_bits)? {
            let vt = wide_ty(elem, m.get_type().get_size())?.into_vector_type();
            let (at, piece_align) = self.span_piece_at(p0, elem, first, align)?;
            parts.push(self.masked_load(vt, at, m, piece_align)?);
        }
        self.concat(&parts)
    }

    /// A masked load of `vt` at `at` under `m` (`align` bytes aligned; 0: unknown).
    fn masked_load(
        &self,
        vt: VectorType<'ctx>,
        at: inkwell::values::PointerValue<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let call = self.call_intrinsic(
            "llvm.masked.load",
            &[vt.into(), self.ptr_type().into()],
            &[at.into(), m.into(), vt.get_undef().into()],
        )?;
        self.call_align(call, 0, align);
        Ok(call.try_as_basic_value().basic().ok_or("masked load without result")?.into_vector_value())
    }

    /// The address lane 0 of a packet's consecutive or strided access has in the work-item
    /// analysis' terms (lane k at `base + k * stride` bytes): the first active lane's pointer
    /// moved back by its lane number times the stride. Lane 0's own pointer would not do
    /// when lane 0 is inactive: an inactive lane's address may be anything (in `l >= 1 ?
    /// t[l - 1] : 0` lane 0's 32-bit unsigned index wraps to 0xFFFFFFFF before it is
    /// zero-extended), and a span placed there faults or reads the wrong memory for the
    /// active lanes. The active lanes' own addresses are consecutive (a wrap between two of
    /// them would put one of their accesses gigabytes outside its object). With no lane
    /// active it is lane 0's (nothing is accessed).
    ///
    /// When lane 0 is active (every packet of a work-group's interior) its pointer is the
    /// base, and a branch takes it: LLVM then computes lane 0's address alone, where the
    /// first active lane's needs every lane's address and a variable extract (a stencil's
    /// masked loads spent a quarter of their time there). Under a full packet's constant
    /// mask the branch folds away.
    pub(super) fn packet_base(&mut self, pw: VectorValue<'ctx>, stride: i64) -> R<PointerValue<'ctx>> {
        let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
        let zero = self.i64().const_zero();
        let lane0 = self.b.build_extract_element(mask, zero, "")?.into_int_value();
        let p0 = self.b.build_extract_element(pw, zero, "")?;
        let base = self.unless_slow(lane0, p0, |s| {
            let w = mask.get_type().get_size();
            let n = std::num::NonZeroU32::new(w).ok_or("an empty mask")?;
            let it = s.cx().custom_width_int_type(n).map_err(|e| Error(e.to_string()))?;
            let bits = s.b.build_bit_cast(mask, it, "")?.into_int_value();
            let no = s.cx().bool_type().const_zero();
            let tz = s.call_intrinsic("llvm.cttz", &[it.into()], &[bits.into(), no.into()])?;
            let tz = tz.try_as_basic_value().basic().ok_or("cttz without result")?.into_int_value();
            let tz = s.b.build_int_z_extend_or_bit_cast(tz, s.i64(), "")?;
            let last = s.i64().const_int(u64::from(w - 1), false);
            let in_range = s.b.build_int_compare(IntPredicate::ULE, tz, last, "")?;
            let first = s.b.build_select(in_range, tz, zero, "")?.into_int_value();
            let p = s.b.build_extract_element(pw, first, "")?.into_pointer_value();
            let back = s.b.build_int_mul(first, s.i64().const_int(stride.wrapping_neg() as u64, true), "")?;
            Ok(super::llvm::gep(&s.b, s.cx().i8_type().into(), p, &[back], false)?.into())
        })?;
        Ok(base.into_pointer_value())
    }

    /// The address of lane 0's struct of member access `ptr` (`stride` bytes from one lane's
    /// struct to the next; [`Self::packet_base`]), moved back by `off` bytes to its start.
    fn struct_base(&mut self, ptr: Value, off: u64, stride: u64) -> R<inkwell::values::PointerValue<'ctx>> {
        let pw = self.get_wide(ptr)?.into_vector_value();
        let p0 = self.packet_base(pw, stride as i64)?;
        if off == 0 {
            return Ok(p0);
        }
        let back = self.i64().const_int((off as i64).wrapping_neg() as u64, true);
        super::llvm::gep(&self.b, self.cx().i8_type().into(), p0, &[back], false)
    }

    /// A load that is a member of group `g` at byte `off` of its struct: the group's span is
    /// loaded at its first member (every lane's struct, the members' slots enabled), and each
    /// member is shuffled out of it (AoS -> SoA).
    fn group_load(&mut self, g: usize, off: u64, ptr: Value, ty: ir::Type) -> R<Val<'ctx>> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let group = vs.groups.groups[g].clone();
        let cached = vs.group_spans.get(&g).copied();
        let esize = self.e.ir.types.size_of(group.elem).max(1);
        let slots = group.slots.len() as u32;
        let span = match cached {
            Some(s) => s,
            None => {
                let base = self.struct_base(ptr, off, u64::from(slots) * esize)?;
                let span = self.span_load(base, self.ty(group.elem)?, &group.slots, esize as u32)?;
                if let Some(vs) = self.vec.as_mut() {
                    vs.group_spans.insert(g, span);
                }
                span
            }
        };
        let first = (off / esize) as u32;
        let n = self.e.ir.types.lanes(ty);
        let idx: Vec<Option<u32>> = (0..n * w).map(|j| Some((j % w) * slots + first + j / w)).collect();
        Ok(self.shuffle(span, None, &idx)?.into())
    }

    /// A store that is a member of group `g`: nothing until the group's last store, which
    /// stores every member's value (SoA -> AoS into the span) with one masked store.
    fn group_store(&mut self, i: Inst, g: usize) -> R<()> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let group = vs.groups.groups[g].clone();
        if group.members.last() != Some(&i) {
            return Ok(());
        }
        let offs: Vec<u64> = group.members.iter().map(|m| vs.groups.of.get(m).map_or(0, |x| x.1)).collect();
        let esize = self.e.ir.types.size_of(group.elem).max(1);
        let slots = group.slots.len() as u32;
        let total = w * slots;
        let mut acc = wide_ty(self.ty(group.elem)?, total)?.into_vector_type().get_undef();
        let mut last_ptr = None;
        for (&mi, &off) in group.members.iter().zip(&offs) {
            let InstData::Store { ptr, value, .. } = self.f.insts[mi] else {
                bail!("a store group member is not a store")
            };
            let x = self.get_wide(value)?.into_vector_value();
            let n = x.get_type().get_size() / w;
            let padded = self.shuffle(x, None, &(0..total).map(|j| (j < n * w).then_some(j)).collect::<Vec<_>>())?;
            let first = (off / esize) as u32;
            let idx: Vec<Option<u32>> = (0..total)
                .map(|j| {
                    let s = j % slots;
                    Some(if s >= first && s < first + n { total + (s - first) * w + j / slots } else { j })
                })
                .collect();
            acc = self.shuffle(acc, Some(padded), &idx)?;
            last_ptr = Some((ptr, off));
        }
        let (ptr, off) = last_ptr.ok_or("empty store group")?;
        let base = self.struct_base(ptr, off, u64::from(slots) * esize)?;
        let bytes = group.slots.iter().filter(|&&x| x).count() as u64 * esize;
        self.span_store(acc, base, &group.slots, esize as u32, bytes)
    }

    /// Prefetches the line [`crate::vectorize::prefetch::PREFETCH_AHEAD`] bytes after `p` into L2 (a prefetch never
    /// faults, so the address may lie past the buffer).
    fn prefetch_ahead(&self, p: inkwell::values::PointerValue<'ctx>) -> R<()> {
        let i8t = self.cx().i8_type();
        let ahead = self.i64().const_int(crate::vectorize::prefetch::PREFETCH_AHEAD, false);
        // Not in bounds: the address may lie past the allocation.
        let q = super::llvm::gep(&self.b, i8t.into(), p, &[ahead], false)?;
        let i32t = self.i32();
        let (read, locality_l2, data) = (i32t.const_zero(), i32t.const_int(1, false), i32t.const_int(1, false));
        self.call_intrinsic(
            "llvm.prefetch",
            &[self.ptr_type().into()],
            &[q.into(), read.into(), locality_l2.into(), data.into()],
        )?;
        Ok(())
    }

    /// A varying load through `ptr` of IR type `ty`.
    fn vector_load(&mut self, i: Inst, ptr: Value, ty: ir::Type, align: u32) -> R<Val<'ctx>> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        if let Some(&(g, off)) = vs.groups.of.get(&i) {
            return self.group_load(g, off, ptr, ty);
        }
        let (w, mask) = (vs.width, vs.mask);
        let access = vs.wa.access(i).unwrap_or(Access::Random);
        let prefetch = vs.prefetch.contains(&i);
        let (elem_ir, n) = match self.e.ir.types.get(ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => (ty, 1),
        };
        let elem = self.ty(elem_ir)?;
        let pw = self.get_wide(ptr)?.into_vector_value();
        let ealign = self.e.ir.types.size_of(elem_ir).max(1) as u32;
        let esize = self.e.ir.types.size_of(elem_ir).max(1) as i64;
        if let Some(slots) = span_slots(access, esize, n) {
            if prefetch {
                // Ahead of lane 0's address, before the span is placed: a prefetch is a hint
                // that never faults, so an inactive lane 0's address does no harm.
                let l0 = self.b.build_extract_element(pw, self.i64().const_zero(), "")?.into_pointer_value();
                self.prefetch_ahead(l0)?;
            }
            let p0 = self.packet_base(pw, i64::from(slots) * esize)?;
            if n == 1 && slots == 1 {
                let vt = wide_ty(elem, w)?.into_vector_type();
                let align = if align > 0 { align } else { ealign };
                return Ok(self.masked_load(vt, p0, mask, align)?.into());
            }
            // Masked loads of the span of the packet (lane k's element at k * slots), only
            // the accessed components enabled.
            let on = Self::aos_slots(slots, n);
            let wide = self.span_load(p0, elem, &on, if align > 0 { align } else { ealign })?;
            // AoS (lane k, component c at k*slots + c) -> SoA (c*W + k).
            let idx: Vec<Option<u32>> = (0..n * w).map(|j| Some((j % w) * slots + j / w)).collect();
            return Ok(self.shuffle(wide, None, &idx)?.into());
        }
        let mut parts = Vec::with_capacity(n as usize);
        for c in 0..n {
            let pc = if c == 0 {
                pw
            } else {
                self.vector_gep(elem, pw.into(), self.i64().const_int(c as u64, false).into())?
            };
            let vt = wide_ty(elem, w)?.into_vector_type();
            let call = self.call_intrinsic(
                "llvm.masked.gather",
                &[vt.into(), pw.get_type().into()],
                &[pc.into(), mask.into(), vt.get_undef().into()],
            )?;
            // Each component is aligned to its size at most, and to what the access claims.
            self.call_align(call, 0, if align > 0 { ealign.min(align) } else { ealign });
            parts.push(call.try_as_basic_value().basic().ok_or("gather without result")?.into_vector_value());
        }
        Ok(if n == 1 { parts[0].into() } else { self.concat(&parts)?.into() })
    }

    /// A store where the pointer or the value varies.
    fn vector_store(&mut self, i: Inst, ptr: Value, value: Value, align: u32) -> R<()> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        if let Some(&(g, _)) = vs.groups.of.get(&i) {
            return self.group_store(i, g);
        }
        let (w, mask, last) = (vs.width, vs.mask, vs.last);
        let access = vs.wa.access(i).unwrap_or(Access::Random);
        let ty = self.f.value_type(value);
        let (elem_ir, n) = match self.e.ir.types.get(ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => (ty, 1),
        };
        let elem = self.ty(elem_ir)?;
        let ealign = self.e.ir.types.size_of(elem_ir).max(1) as u32;
        let align = if align > 0 { align } else { ealign };
        if self.is_uniform(ptr) {
            // One store: the value of the last active lane (as if the lanes ran in order).
            let p = as_ptr(self.get(ptr)?)?;
            let x = self.get_wide(value)?;
            let x = self.lane_of(x, ty, last)?;
            let s = self.b.build_store(p, x)?;
            let _ = s.set_alignment(align);
            return Ok(());
        }
        let pw = self.get_wide(ptr)?.into_vector_value();
        let xw = self.get_wide(value)?.into_vector_value();
        let esize = self.e.ir.types.size_of(elem_ir).max(1) as i64;
        if let Some(slots) = span_slots(access, esize, n) {
            let p0 = self.packet_base(pw, i64::from(slots) * esize)?;
            let data = if n == 1 && slots == 1 {
                xw
            } else {
                // SoA -> AoS; slots past the components (padding of a 3-component vector,
                // other members of a struct) are not written.
                let idx: Vec<Option<u32>> =
                    (0..w * slots).map(|j| (j % slots < n).then_some((j % slots) * w + j / slots)).collect();
                self.shuffle(xw, None, &idx)?
            };
            let bytes_per_item = esize as u64 * n as u64;
            let on = Self::aos_slots(slots, n);
            return self.span_store(data, p0, &on, align, bytes_per_item);
        }
        for c in 0..n {
            let pc = if c == 0 {
                pw
            } else {
                self.vector_gep(elem, pw.into(), self.i64().const_int(c as u64, false).into())?
            };
            let part = if n == 1 {
                xw
            } else {
                let idx: Vec<Option<u32>> = (0..w).map(|k| Some(c * w + k)).collect();
                self.shuffle(xw, None, &idx)?
            };
            let call = self.call_intrinsic(
                "llvm.masked.scatter",
                &[part.get_type().into(), pw.get_type().into()],
                &[part.into(), pc.into(), mask.into()],
            )?;
            self.call_align(call, 1, ealign.min(align));
        }
        Ok(())
    }

    /// The number of work-items in the ND-range (computed once, in the prologue).
    fn ndrange_items(&mut self) -> R<IntValue<'ctx>> {
        if let Some(n) = self.ndrange_items {
            return Ok(n);
        }
        let at = self.b.get_insert_block().ok_or("builder not positioned")?;
        if let Some(term) = self.pb.get_insert_block().and_then(|b| b.get_terminator()) {
            self.b.position_before(&term);
        }
        let g = self.ctx_u64x3(super::llvm::ctx_offsets::GLOBAL_SIZE)?;
        let n = self.b.build_int_mul(self.b.build_int_mul(g[0], g[1], "")?, g[2], "items")?;
        self.b.position_at_end(at);
        self.ndrange_items = Some(n);
        Ok(n)
    }

    /// Branches on whether a store of `span` bytes at `p` streams: the ND-range stores at
    /// least the streaming threshold (`CodegenKnobs::streaming_stores`, `bytes_per_item` bytes per
    /// work-item), `p` is aligned to the span (at most 64), and `full` (if any) holds.
    /// Returns the alignment of the non-temporal store and leaves the builder in its block;
    /// the caller stores, then calls [`Self::stream_else`] with the ordinary store.
    fn stream_if(
        &mut self,
        p: inkwell::values::PointerValue<'ctx>,
        span: u64,
        bytes_per_item: u64,
        full: Option<IntValue<'ctx>>,
    ) -> R<(u32, inkwell::basic_block::BasicBlock<'ctx>, inkwell::basic_block::BasicBlock<'ctx>)> {
        let nt_align = span.min(64);
        let items = self.ndrange_items()?;
        let threshold = self.e.knobs.streaming_stores.unwrap_or(u64::MAX);
        let need = self.i64().const_int(threshold.div_ceil(bytes_per_item.max(1)), false);
        let big = self.b.build_int_compare(IntPredicate::UGE, items, need, "")?;
        let addr = self.b.build_ptr_to_int(p, self.i64(), "")?;
        let low = self.b.build_and(addr, self.i64().const_int(nt_align - 1, false), "")?;
        let aligned = self.b.build_int_compare(IntPredicate::EQ, low, self.i64().const_zero(), "")?;
        let mut go = self.b.build_and(aligned, big, "stream")?;
        if let Some(full) = full {
            go = self.b.build_and(full, go, "")?;
        }
        let nt = self.cx().append_basic_block(self.llf, "store.stream");
        let plain = self.cx().append_basic_block(self.llf, "store.plain");
        let join = self.cx().append_basic_block(self.llf, "store.next");
        self.b.build_conditional_branch(go, nt, plain)?;
        self.b.position_at_end(nt);
        Ok((nt_align as u32, plain, join))
    }

    /// A non-temporal store of `v` at `p`.
    fn nt_store(&self, p: inkwell::values::PointerValue<'ctx>, v: Val<'ctx>, align: u32) -> R<()> {
        let st = self.b.build_store(p, v)?;
        let _ = st.set_alignment(align);
        let kind = self.cx().get_kind_id("nontemporal");
        let one = self.cx().metadata_node(&[self.i32().const_int(1, false).into()]);
        st.set_metadata(one, kind).map_err(|e| Error(format!("nontemporal metadata: {e}")))?;
        Ok(())
    }

    /// After the non-temporal store of [`Self::stream_if`]: runs `plain` (the ordinary
    /// store) in the other branch and joins.
    fn stream_else(
        &mut self,
        (plain_bb, join): (inkwell::basic_block::BasicBlock<'ctx>, inkwell::basic_block::BasicBlock<'ctx>),
        plain: impl FnOnce(&Self) -> R<()>,
    ) -> R<()> {
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(plain_bb);
        plain(self)?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        Ok(())
    }

    /// A packet's span `data` stored at `p0` (lane k's slots at k * on.len(), the slots of
    /// `on` in every active lane), as masked stores of [`SPAN_PIECE_BITS`] each (see
    /// [`Self::span_mask_pieces`]). When non-temporal stores are allowed
    /// ([`streaming_allowed`]), every slot is stored and the span is a power of two of at
    /// least 32 bytes, a packet whose mask is full, whose span is aligned and whose ND-range
    /// stores enough here (`bytes_per_item` each) stores with a non-temporal store instead
    /// (in a full packet the mask test folds away; the other two are uniform).
    fn span_store(
        &mut self,
        data: VectorValue<'ctx>,
        p0: inkwell::values::PointerValue<'ctx>,
        on: &[bool],
        align: u32,
        bytes_per_item: u64,
    ) -> R<()> {
        let vt = data.get_type();
        let elem = vt.get_element_type();
        let span = self.e.alloc_size(elem) * vt.get_size() as u64;
        let streaming = self.vec.as_ref().is_some_and(|v| v.streaming);
        let lane_mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
        let masked_store = |s: &Self| -> R<()> {
            for (first, m) in s.span_mask_pieces(on, s.e.alloc_size(elem) * 8)? {
                let len = m.get_type().get_size();
                let part = if len == vt.get_size() {
                    data
                } else {
                    s.shuffle(data, None, &(first..first + len).map(Some).collect::<Vec<_>>())?
                };
                let (at, piece_align) = s.span_piece_at(p0, elem, first, align)?;
                let call = s.call_intrinsic(
                    "llvm.masked.store",
                    &[part.get_type().into(), s.ptr_type().into()],
                    &[part.into(), at.into(), m.into()],
                )?;
                s.call_align(call, 1, piece_align);
            }
            Ok(())
        };
        if !streaming || !span.is_power_of_two() || span < 32 || bytes_per_item == 0 || on.contains(&false) {
            return masked_store(self);
        }
        let full =
            self.call_intrinsic("llvm.vector.reduce.and", &[lane_mask.get_type().into()], &[lane_mask.into()])?;
        let full = full.try_as_basic_value().basic().ok_or("reduce without result")?.into_int_value();
        let (nt_align, plain, join) = self.stream_if(p0, span, bytes_per_item, Some(full))?;
        self.nt_store(p0, data.into(), nt_align)?;
        self.stream_else((plain, join), masked_store)
    }

    /// Scalar code: a non-temporal store of `v` at `p` (a store of `stream_stores`, in the
    /// work-item function that the work-group entry runs for large ND-ranges). Its address
    /// is aligned to its size ([`scalar_streaming_stores`] checks the store's alignment).
    pub fn scalar_stream_store(&mut self, p: inkwell::values::PointerValue<'ctx>, v: Val<'ctx>) -> R<()> {
        let size = self.e.alloc_size(v.get_type());
        self.nt_store(p, v, size as u32)
    }

    /// Work-item queries in vector mode: dimension 0 of the ids and the linear ids get the
    /// lane number added.
    fn vector_work_item(&mut self, q: ir::WorkItemQuery, ir_ty: ir::Type) -> R<Val<'ctx>> {
        if self.vec.as_ref().is_some_and(|v| v.wa.linear_lanes) {
            if let Some(v) = self.linear_work_item(q, ir_ty)? {
                return Ok(v);
            }
        }
        let t = self.ty(ir_ty)?;
        let scalar = self.work_item_value(q, t)?;
        // In the prologue, like the scalar ids: recomputed at every entry (barriers).
        let at = self.b.get_insert_block().ok_or("builder not positioned")?;
        if let Some(term) = self.pb.get_insert_block().and_then(|b| b.get_terminator()) {
            self.b.position_before(&term);
        }
        let wide = self.broadcast(scalar)?.into_vector_value();
        let w = self.width()?;
        let et = wide.get_type().get_element_type().into_int_type();
        // Lane offsets for component 0 only (the first W elements in SoA order).
        let n = wide.get_type().get_size();
        let offs: Vec<IntValue<'ctx>> = (0..n).map(|j| et.const_int(if j < w { j as u64 } else { 0 }, false)).collect();
        let r = self.b.build_int_add(wide, VectorType::const_vector(&offs), "")?;
        self.b.position_at_end(at);
        Ok(r.into())
    }

    /// Lowers instruction `i` in vector mode if it involves varying values; `false` leaves it
    /// to the scalar lowering (everything uniform).
    pub fn lower_vector_inst(&mut self, i: Inst) -> R<bool> {
        let f = self.f;
        let data = &f.insts[i];
        let res = f.inst_result[i];
        let res_uniform = res.is_none_or(|r| self.is_uniform(r));
        let ops_uniform = data.operands().iter().all(|&o| self.is_uniform(o));
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
                    if let Some(init) = init.filter(|_| !self.is_uniform(r)) {
                        // Each lane's copy starts as the constant (`back::vector_lanes`).
                        self.init_lane_copies(r, init)?;
                    }
                    return Ok(init.is_none() || !self.is_uniform(r));
                }
                if let Some(init) = init {
                    let p = as_ptr(self.vals_get(r)?)?;
                    let x = self.get_wide(*init)?;
                    self.register_store(p, x)?;
                }
                return Ok(true);
            }
            I::Load { ptr, .. } if self.is_register_var(*ptr) => {
                let r = res.ok_or("load without result")?;
                let p = as_ptr(self.get(*ptr)?)?;
                let ty = self.value_llty(r)?;
                let x = self.b.build_load(ty, p, "")?;
                self.state_align(*ptr, x.as_instruction_value());
                self.define(r, x)?;
                return Ok(true);
            }
            I::Store { ptr, value, .. } if self.is_register_var(*ptr) => {
                let p = as_ptr(self.get(*ptr)?)?;
                let x = self.get_wide(*value)?;
                if self.f.is_state_address(*ptr) {
                    // Work-item state (`passes::barriers`): packets keep W values in a row,
                    // aligned to the element only.
                    let vs = self.vec.as_ref().ok_or("not in vector mode")?;
                    let v = if vs.mask != vs.static_mask {
                        // In a masked block only the active lanes' part is theirs to write.
                        let mask = vs.mask;
                        let old = self.b.build_load(x.get_type(), p, "")?;
                        self.state_align(*ptr, old.as_instruction_value());
                        self.blend(mask, x, old)?
                    } else {
                        x
                    };
                    let st = self.b.build_store(p, v)?;
                    self.state_align(*ptr, Some(st));
                    return Ok(true);
                }
                self.register_store(p, x)?;
                return Ok(true);
            }
            I::AnyActive { cond } => {
                let r = res.ok_or("any_active without result")?;
                let any = if self.is_uniform(*cond) {
                    self.get(*cond)?
                } else {
                    // The packet's active lanes (an unmasked block's: the work-items that exist).
                    let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
                    let c = self.get_wide(*cond)?.into_vector_value();
                    let on = self.b.build_and(c, mask, "")?;
                    self.intr("llvm.vector.reduce.or", &[on.into()])?
                };
                self.define(r, any)?;
                return Ok(true);
            }
            _ if self.runs_per_lane(i) => {
                self.lower_lanes(i)?;
                return Ok(true);
            }
            I::Atomic { op, ptr, value, comparator, .. } => {
                self.atomic_per_lane(i, *op, *ptr, *value, *comparator)?;
                return Ok(true);
            }
            I::ExtInst { opcode, args } if self.extinst_per_lane(i, *opcode, args) => {
                self.extinst_lanes(i, *opcode, args)?;
                return Ok(true);
            }
            I::Load { ptr, align, volatile } => {
                let r = res.ok_or("load without result")?;
                if self.is_uniform(*ptr) {
                    if res_uniform {
                        return Ok(false);
                    }
                    // Every lane reads the same address, yet the value varies (lanes leave a
                    // divergent loop at different iterations): one scalar load, broadcast.
                    let p = as_ptr(self.get(*ptr)?)?;
                    let l = self.b.build_load(self.ty(f.value_type(r))?, p, "")?;
                    if let Some(inst) = l.as_instruction_value() {
                        if *align > 0 && align.is_power_of_two() {
                            let _ = inst.set_alignment(*align);
                        }
                        let _ = inst.set_volatile(*volatile);
                    }
                    let x = self.broadcast(l)?;
                    self.define(r, x)?;
                    return Ok(true);
                }
                let v = self.vector_load(i, *ptr, f.value_type(r), *align)?;
                self.define(r, v)?;
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
        let rt_wide = wide_ty(self.ty(ir_ty)?, self.width()?)?;
        let w = self.width()?;
        let wide: Val<'ctx> = match data {
            I::WorkItem { query } => self.vector_work_item(*query, ir_ty)?,
            I::Binary { op, lhs, rhs } => {
                let (a, b) = (self.get_wide(*lhs)?, self.get_wide(*rhs)?);
                self.lower_binary(*op, a, b)?
            }
            I::Unary { op: ir::UnaryOp::Any | ir::UnaryOp::All, arg }
                if self.e.ir.types.lanes(f.value_type(*arg)) > 1 =>
            {
                // any() / all() per lane: OR / AND over the components' slices.
                let all = matches!(data, I::Unary { op: ir::UnaryOp::All, .. });
                let v = self.get_wide(*arg)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                // Integer vectors: the sign bit of each component.
                let bits = if v.get_type().get_element_type().into_int_type().get_bit_width() == 1 {
                    v
                } else {
                    let z = v.get_type().const_zero();
                    self.b.build_int_compare(IntPredicate::SLT, v, z, "")?
                };
                let mut acc = self.shuffle(bits, None, &(0..w).map(Some).collect::<Vec<_>>())?;
                for c in 1..n {
                    let comp = self.shuffle(bits, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    acc = if all { self.b.build_and(acc, comp, "")? } else { self.b.build_or(acc, comp, "")? };
                }
                let rt = rt_wide.into_vector_type();
                if rt.get_element_type().into_int_type().get_bit_width() == 1 {
                    acc.into()
                } else {
                    self.b.build_int_z_extend(acc, rt, "")?.into()
                }
            }
            I::Unary { op, arg } => {
                let a = self.get_wide(*arg)?;
                self.lower_unary(*op, a, rt_wide)?
            }
            I::Compare { op, lhs, rhs } => {
                let (a, b) = (self.get_wide(*lhs)?, self.get_wide(*rhs)?);
                self.lower_compare(*op, a, b)?
            }
            I::Select { cond, if_true, if_false }
                if !self.is_uniform(*cond)
                    && matches!(
                        self.e.ir.types.get(ir_ty),
                        ir::TypeData::Struct { .. } | ir::TypeData::Array { .. }
                    ) =>
            {
                // A struct or array per lane (a join of `passes::linearize`): lane by lane.
                let c = self.get_wide(*cond)?.into_vector_value();
                let t = self.get_wide(*if_true)?;
                let e = self.get_wide(*if_false)?;
                self.blend(c, t, e)?
            }
            I::Select { cond, if_true, if_false } => {
                let c = if self.is_uniform(*cond) && !f.value_type(*cond).eq(&f.value_type(*if_true)) {
                    // A uniform scalar condition selects whole vectors.
                    let c = self.get(*cond)?;
                    if c.is_vector_value() {
                        self.broadcast(c)?
                    } else {
                        c
                    }
                } else {
                    let c = self.get_wide(*cond)?;
                    let n = self.e.ir.types.lanes(ir_ty);
                    if n > 1 && self.e.ir.types.lanes(f.value_type(*cond)) == 1 {
                        // A varying scalar condition picks each work-item's whole vector: in
                        // structure-of-arrays order that is the lane mask once per component.
                        let cv = c.into_vector_value();
                        self.concat(&vec![cv; n as usize])?.into()
                    } else {
                        c
                    }
                };
                let t = self.get_wide(*if_true)?;
                let e = self.get_wide(*if_false)?;
                self.select(c, t, e)?
            }
            I::Convert { op, arg, saturate, rounding } => {
                let a = self.get_wide(*arg)?;
                let (ns, nd) = (self.e.ir.types.lanes(f.value_type(*arg)), self.e.ir.types.lanes(ir_ty));
                match op {
                    ir::ConvertOp::Bitcast if ns != nd => {
                        // Each lane's bits: SoA -> AoS, reinterpret, AoS -> SoA.
                        let av = a.into_vector_value();
                        let aos: Vec<Option<u32>> = (0..ns * w).map(|j| Some((j % ns) * w + j / ns)).collect();
                        let x = self.shuffle(av, None, &aos)?;
                        let y = self.b.build_bit_cast(x, rt_wide, "")?.into_vector_value();
                        let soa: Vec<Option<u32>> = (0..nd * w).map(|j| Some((j % w) * nd + j / w)).collect();
                        self.shuffle(y, None, &soa)?.into()
                    }
                    ir::ConvertOp::PtrCast => a,
                    ir::ConvertOp::PtrToInt => self.cast(inkwell::values::InstructionOpcode::PtrToInt, a, rt_wide)?,
                    ir::ConvertOp::IntToPtr => self.cast(inkwell::values::InstructionOpcode::IntToPtr, a, rt_wide)?,
                    _ => self.lower_convert(*op, a, rt_wide, *saturate, *rounding)?,
                }
            }
            I::AccessChain { base, element, indices, .. } => self.vector_access_chain(*base, *element, indices)?,
            I::ExtractElement { vector, index } if self.const_index(*index).is_none() => {
                // A component chosen at run time: a select over the components.
                let v = self.get_wide(*vector)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                let ix = self.get_wide(*index)?.into_vector_value();
                let mut acc = self.shuffle(v, None, &(0..w).map(Some).collect::<Vec<_>>())?;
                for c in 1..n {
                    let comp = self.shuffle(v, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    let cv = self.const_like(ix, c as u64)?;
                    let is_c = self.b.build_int_compare(IntPredicate::EQ, ix, cv, "")?;
                    acc = self.b.build_select(is_c, comp, acc, "")?.into_vector_value();
                }
                acc.into()
            }
            I::InsertElement { vector, value, index } if self.const_index(*index).is_none() => {
                let v = self.get_wide(*vector)?.into_vector_value();
                let x = self.get_wide(*value)?.into_vector_value();
                let ix = self.get_wide(*index)?.into_vector_value();
                let n = v.get_type().get_size() / w;
                let mut comps = Vec::with_capacity(n as usize);
                for c in 0..n {
                    let comp = self.shuffle(v, None, &(0..w).map(|k| Some(c * w + k)).collect::<Vec<_>>())?;
                    let cv = self.const_like(ix, c as u64)?;
                    let is_c = self.b.build_int_compare(IntPredicate::EQ, ix, cv, "")?;
                    comps.push(self.b.build_select(is_c, x, comp, "")?.into_vector_value());
                }
                self.concat(&comps)?.into()
            }
            I::ExtractElement { vector, index } => {
                let c = self.const_index(*index).ok_or("extract with a varying index")? as u32;
                let v = self.get_wide(*vector)?.into_vector_value();
                if res_uniform {
                    let x = self.b.build_extract_element(v, self.i32().const_int((c * w) as u64, false), "")?;
                    self.define(r, x)?;
                    return Ok(true);
                }
                let idx: Vec<Option<u32>> = (0..w).map(|k| Some(c * w + k)).collect();
                self.shuffle(v, None, &idx)?.into()
            }
            I::InsertElement { vector, value, index } => {
                let c = self.const_index(*index).ok_or("insert with a varying index")? as u32;
                let v = self.get_wide(*vector)?.into_vector_value();
                let x = self.get_wide(*value)?.into_vector_value();
                let n = v.get_type().get_size();
                let xe = self.shuffle(x, None, &(0..n).map(|j| (j < w).then_some(j)).collect::<Vec<_>>())?;
                let idx: Vec<Option<u32>> = (0..n).map(|j| Some(if j / w == c { n + j % w } else { j })).collect();
                self.shuffle(v, Some(xe), &idx)?.into()
            }
            I::Shuffle { a, b, mask } => {
                let va = self.get_wide(*a)?.into_vector_value();
                let vb = self.get_wide(*b)?.into_vector_value();
                let na = va.get_type().get_size() / w;
                let m: Vec<Option<u32>> = mask
                    .iter()
                    .flat_map(|c| {
                        (0..w).map(move |k| c.map(|c| if c < na { c * w + k } else { na * w + (c - na) * w + k }))
                    })
                    .collect();
                let both = self.concat(&[va, vb])?;
                self.shuffle(both, None, &m)?.into()
            }
            I::Construct { parts } => {
                let mut vs = Vec::with_capacity(parts.len());
                for &p in parts {
                    vs.push(self.get_wide(p)?.into_vector_value());
                }
                self.concat(&vs)?.into()
            }
            I::ExtInst { opcode, args } => {
                let vals: Vec<Val<'ctx>> = args.iter().map(|&a| self.get_wide(a)).collect::<R<_>>()?;
                let arg_tys: Vec<ir::Type> = args.iter().map(|a| f.value_type(*a)).collect();
                super::builtins::lower(self, *opcode, &vals, &arg_tys, Some(rt_wide))?
                    .ok_or("built-in without result")?
            }
            other => bail!("{} cannot be vectorized", super::llvm::describe(other)),
        };
        let out = if res_uniform && self.vec.as_ref().is_some_and(|vs| vs.wa.uniform_conds.contains(&r)) {
            // The condition of a branch that controls a barrier: the active lanes agree in
            // a valid program (lane 0 may be inactive in a packet's first segment).
            let last = self.vec.as_ref().ok_or("not in vector mode")?.last;
            self.lane_of(wide, ir_ty, last)?
        } else if res_uniform {
            // All lanes agree: lane 0.
            self.lane_of(wide, ir_ty, self.i32().const_zero())?
        } else {
            wide
        };
        self.define(r, out)?;
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
    ) -> R<()> {
        let res = self.f.inst_result[i].filter(|r| !self.e.is_void(self.f.value_type(*r)));
        let rt = match res {
            Some(r) => Some(self.ty(self.f.value_type(r))?),
            None => None,
        };
        let pw = self.get_wide(ptr)?.into_vector_value();
        let vw = match value {
            Some(v) => Some(self.get_wide(v)?.into_vector_value()),
            None => None,
        };
        let cw = match comparator {
            Some(c) => Some(self.get_wide(c)?.into_vector_value()),
            None => None,
        };
        let acc = self.for_each_active_lane(rt, |s, _, kc, acc| {
            let p = s.b.build_extract_element(pw, kc, "")?.into_pointer_value();
            let v = match vw {
                Some(x) => Some(s.b.build_extract_element(x, kc, "")?),
                None => None,
            };
            let c = match cw {
                Some(x) => Some(s.b.build_extract_element(x, kc, "")?),
                None => None,
            };
            let r = s.atomic_on(op, p, v, c, rt)?;
            Ok(match (acc, r) {
                (Some(a), Some(r)) => Some(s.b.build_insert_element(a, r, kc, "")?),
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
        let w = self.width()?;
        let acc: Option<Val<'ctx>> = match rt {
            Some(t) => Some(wide_ty(t, w)?.into_vector_type().get_undef().into()),
            None => None,
        };
        let acc = self.each_active_lane(acc, |s, k, acc| {
            let kc = s.i32().const_int(k as u64, false);
            Ok(lane(s, k, kc, acc.map(|a| a.into_vector_value()))?.map(Into::into))
        })?;
        Ok(acc.map(|a| a.into_vector_value()))
    }

    /// Defines result `res` from the per-lane results `acc` (lane 0's when `res` is uniform).
    fn define_lane_results(&mut self, res: Option<Value>, acc: Option<VectorValue<'ctx>>) -> R<()> {
        if let (Some(r), Some(a)) = (res, acc) {
            let out: Val<'ctx> = if self.is_uniform(r) {
                self.lane_of(a.into(), self.f.value_type(r), self.i32().const_zero())?
            } else {
                a.into()
            };
            self.define(r, out)?;
        }
        Ok(())
    }

    /// `<W x ptr>`: `base + k * size` for lane k (in the prologue).
    pub fn lane_pointers(&self, base: inkwell::values::PointerValue<'ctx>, size: u64) -> R<Val<'ctx>> {
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

    /// `c` as a vector like `like`.
    fn const_like(&self, like: VectorValue<'ctx>, c: u64) -> R<VectorValue<'ctx>> {
        let et = like.get_type().get_element_type().into_int_type();
        let parts: Vec<IntValue<'ctx>> = (0..like.get_type().get_size()).map(|_| et.const_int(c, false)).collect();
        Ok(VectorType::const_vector(&parts))
    }

    /// An OpenCL.std instruction without an element-wise vector form (printf, vload/vstore,
    /// geometric functions, pointer results, mixed widths) runs once per active lane.
    fn extinst_per_lane(&self, i: Inst, opcode: u32, args: &[Value]) -> bool {
        const PRINTF: u32 = 184;
        if opcode == PRINTF {
            return true;
        }
        let f = self.f;
        let res = f.inst_result[i];
        let varying = args.iter().any(|&a| !self.is_uniform(a)) || res.is_some_and(|r| !self.is_uniform(r));
        if !varying {
            return false;
        }
        let types = &self.e.ir.types;
        let rt = res.map(|r| f.value_type(r)).filter(|t| !self.e.is_void(*t));
        let ptr_arg = args.iter().any(|a| matches!(types.get(f.value_type(*a)), TypeData::Pointer { .. }));
        let mixed = rt.is_none_or(|rt| args.iter().any(|a| types.lanes(f.value_type(*a)) != types.lanes(rt)));
        crate::vectorize::CROSS_COMPONENT.contains(&opcode) || ptr_arg || mixed
    }

    /// [`Self::extinst_per_lane`]: lane by lane, in lane order, each lane's own operands.
    fn extinst_lanes(&mut self, i: Inst, opcode: u32, args: &[Value]) -> R<()> {
        let f = self.f;
        let w = self.width()?;
        let res = f.inst_result[i].filter(|r| !self.e.is_void(f.value_type(*r)));
        let rt_ir = res.map(|r| f.value_type(r));
        let rt = match rt_ir {
            Some(t) => Some(self.ty(t)?),
            None => None,
        };
        let arg_tys: Vec<ir::Type> = args.iter().map(|a| f.value_type(*a)).collect();
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push((self.get(a)?, self.is_uniform(a)));
        }
        let acc = self.for_each_active_lane(rt, |s, k, kc, acc| {
            let mut lane_args = Vec::with_capacity(vals.len());
            for ((v, uniform), t) in vals.iter().zip(&arg_tys) {
                lane_args.push(if *uniform { *v } else { s.lane_of(*v, *t, kc)? });
            }
            let r = super::builtins::lower(s, opcode, &lane_args, &arg_tys, rt)?;
            Ok(match (acc, r) {
                (Some(mut a), Some(r)) => {
                    match r {
                        BasicValueEnum::VectorValue(rv) => {
                            for c in 0..rv.get_type().get_size() {
                                let x = s.b.build_extract_element(rv, s.i32().const_int(c as u64, false), "")?;
                                let at = s.i32().const_int((c * w + k) as u64, false);
                                a = s.b.build_insert_element(a, x, at, "")?;
                            }
                        }
                        other => a = s.b.build_insert_element(a, other, kc, "")?,
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
        if let Some(inst) = inst.filter(|_| self.f.is_state_address(ptr)) {
            let _ = inst.set_alignment(1);
        }
    }

    fn is_register_var(&self, p: Value) -> bool {
        self.vec.as_ref().is_some_and(|vs| vs.wa.private_regs.contains(&p))
    }

    /// Stores `x` into a register variable for the active lanes.
    fn register_store(&self, p: inkwell::values::PointerValue<'ctx>, x: Val<'ctx>) -> R<()> {
        let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
        let old = self.b.build_load(x.get_type(), p, "")?;
        let v = self.blend(mask, x, old)?;
        self.b.build_store(p, v)?;
        Ok(())
    }

    /// `new` in the lanes of `mask`, `old` elsewhere; a wide IR vector (n*W elements, SoA)
    /// takes lane k's mask bit for each of its components.
    pub fn blend(&self, mask: VectorValue<'ctx>, new: Val<'ctx>, old: Val<'ctx>) -> R<Val<'ctx>> {
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

    /// Pointer arithmetic with varying operands: a vector GEP per index.
    fn vector_access_chain(&mut self, base: Value, element: Option<Value>, indices: &[Value]) -> R<Val<'ctx>> {
        let types = &self.e.ir.types;
        let TypeData::Pointer { pointee, .. } = types.get(self.f.value_type(base)) else {
            bail!("access chain on a non-pointer")
        };
        let mut cur = *pointee;
        let mut p: Val<'ctx> = self.get_wide(base)?;
        let i8t: BasicTypeEnum<'ctx> = self.cx().i8_type().into();
        let size_ty = |fx: &Self, t: ir::Type| -> R<BasicTypeEnum<'ctx>> {
            match fx.e.ir.types.get(t) {
                TypeData::Void | TypeData::Function { .. } | TypeData::Opaque { .. } => Ok(i8t),
                _ => fx.ty(t),
            }
        };
        if let Some(e) = element {
            let ix = self.get(e)?;
            p = self.vector_gep(size_ty(self, cur)?, p, ix)?.into();
        }
        for &ix in indices {
            match self.e.ir.types.get(cur).clone() {
                TypeData::Struct { fields, .. } => {
                    let Some(n) = self.const_index(ix) else { bail!("struct member index is not a constant") };
                    let off = self.e.ir.types.field_offset(cur, n as usize);
                    p = self.vector_gep(i8t, p, self.i64().const_int(off, false).into())?.into();
                    cur = *fields.get(n as usize).ok_or("struct member index out of range")?;
                }
                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                    let x = self.get(ix)?;
                    p = self.vector_gep(size_ty(self, elem)?, p, x)?.into();
                    cur = elem;
                }
                other => bail!("access chain index into {other:?}"),
            }
        }
        if !p.is_vector_value() {
            p = self.broadcast(p)?;
        }
        Ok(p)
    }
}

use inkwell::types::VectorType;

/// The elements per lane of one masked load or store covering a packet's accesses: lane k's
/// `n` components at k * slots (consecutive accesses, and small positive strides that are a
/// multiple of the element); `None` = gather / scatter.
fn span_slots(access: Access, esize: i64, n: u32) -> Option<u32> {
    let slots = match access {
        Access::Consecutive => {
            if n == 3 {
                4
            } else {
                n
            }
        }
        Access::Strided(s) if s > 0 && s % esize == 0 && s / esize <= 16 => (s / esize) as u32,
        _ => return None,
    };
    (slots >= n).then_some(slots)
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
        // Struct and array values: W of them (`back::vector_lanes`).
        BasicTypeEnum::StructType(x) => x.array_type(w).into(),
        BasicTypeEnum::ArrayType(x) => x.array_type(w).into(),
        other => bail!("a varying {other} cannot be vectorized"),
    })
}
