//! Vector code's loads and stores: a consecutive access is one (masked) vector load or
//! store of the packet's span (AoS float4: one wide access plus interleaving shuffles; the
//! members of one struct element that the packet reads or writes: one span for the group),
//! a uniform address one scalar access, the rest `llvm.masked.gather` / `scatter`, all under
//! the lane mask (those the target has no instruction for loop over the active elements:
//! `masked_loop`); loads that stream prefetch ahead, and large full packets store with
//! non-temporal stores. Inactive lanes never touch memory.

use super::masked_loop::Place;
use super::VecLower;
use crate::back::llvm::{as_ptr, bail, wide_ty, Error, Val, R};
use crate::ir::{self, Inst, InstData, TypeData, Value};
use crate::vectorize::analysis::{Access, WorkItemAnalysis};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

/// The cache line a prefetch brings in, in bytes.
const PREFETCH_LINE: u64 = 64;

/// The bits of one masked load or store of a packet's span (one AVX-512 register).
pub const SPAN_PIECE_BITS: u64 = 512;

/// A store whose bytes over the whole ND-range reach this streams past the caches
/// (non-temporal stores): the output is larger than a core's share of the last-level cache,
/// so writing it through the caches only costs a read of every line first (read for
/// ownership: 16 bytes of traffic per 12 bytes of `c = a + b`).
pub const STREAMING_BYTES: u64 = 16 << 20;

/// The stores of `f` that may be non-temporal: none unless the host is x86-64 (whoever calls
/// the work-group entry fences them before another thread reads the results: `crate::abi`),
/// the kernel has no atomics (no ordering of weakly-ordered stores against them to reason
/// about) and the target's streaming threshold (`CodegenKnobs::streaming_stores`) is not
/// `None` (`SOFTCL_STREAMING_STORES=0`); then every store into global memory the kernel never
/// reads through the same source ([`Sources`]: kernel argument, variable; nothing at all if a
/// read's source is unknown). Local memory never streams: it is read back after a barrier. A
/// store into a buffer the kernel also reads (`a[i] = a[i] - b[i]`, a stencil updating its
/// input) finds its lines in the cache already: a non-temporal store saves no read for
/// ownership there, and evicts the line and writes it around the cache instead (2.4x slower
/// on a 2048x2048 in-place update).
pub fn streaming_stores(
    types: &ir::TypeTable,
    f: &ir::Function,
    knobs: &crate::CodegenKnobs,
) -> std::collections::HashSet<Inst> {
    let insts = || f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter().copied());
    if !cfg!(target_arch = "x86_64")
        || knobs.streaming_stores.is_none()
        || insts().any(|i| matches!(f.insts[i], InstData::Atomic { .. }))
    {
        return Default::default();
    }
    let sources = Sources::of(f);
    let mut read = std::collections::HashSet::new();
    for i in insts() {
        let ptr = match &f.insts[i] {
            InstData::Load { ptr, .. } => *ptr,
            InstData::CopyMemory { src, .. } => *src,
            _ => continue,
        };
        match sources.of_pointer(f, ptr) {
            Some(s) => read.extend(s),
            // A read through a pointer of unknown source may read anything.
            None => return Default::default(),
        }
    }
    insts()
        .filter(|&i| {
            let InstData::Store { ptr, .. } = &f.insts[i] else { return false };
            let global = matches!(
                types.get(f.value_type(*ptr)),
                TypeData::Pointer { space: crate::kernel_info::AddressSpace::Global, .. }
            );
            global && sources.of_pointer(f, *ptr).is_some_and(|s| s.is_disjoint(&read))
        })
        .collect()
}

/// What a pointer may be derived from, for [`streaming_stores`]: the kernel arguments,
/// variables and module globals at the roots of its access chains and conversions, through
/// selects, block arguments (a kernel's arguments passed on to another block) and the
/// work-item state the barrier pass keeps pointers in (a barrier region reads a buffer
/// through a pointer loaded from there).
struct Sources {
    /// A block parameter's incoming values.
    incoming: std::collections::HashMap<Value, Vec<Value>>,
    /// The values stored into each variable holding a demoted value.
    demoted: std::collections::HashMap<Value, Vec<Value>>,
}

impl Sources {
    fn of(f: &ir::Function) -> Sources {
        let mut incoming: std::collections::HashMap<Value, Vec<Value>> = Default::default();
        let mut demoted: std::collections::HashMap<Value, Vec<Value>> = Default::default();
        for &b in &f.layout.blocks {
            for &i in &f.layout.insts[b] {
                let d = &f.insts[i];
                for bc in d.successors() {
                    for (a, p) in bc.args.iter().zip(&f.blocks[bc.block].params) {
                        incoming.entry(*p).or_default().push(*a);
                    }
                }
                if let InstData::Store { ptr, value, .. } = d {
                    if f.is_state_value_address(*ptr) {
                        demoted.entry(*ptr).or_default().push(*value);
                    }
                }
            }
        }
        Sources { incoming, demoted }
    }

    /// The sources of `p`; `None` if one is unknown (a pointer loaded from memory, a call's
    /// result).
    fn of_pointer(&self, f: &ir::Function, p: Value) -> Option<std::collections::HashSet<Value>> {
        let entry = f.layout.entry();
        let mut out = std::collections::HashSet::new();
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![p];
        while let Some(v) = work.pop() {
            if !seen.insert(v) {
                continue;
            }
            let r = f.address_root(v);
            match f.values.get(r)?.def {
                ir::ValueDef::Param(b, _) if Some(b) != entry => work.extend(self.incoming.get(&r)?.iter().copied()),
                ir::ValueDef::Param(..) | ir::ValueDef::Global(_) | ir::ValueDef::Const(_) => {
                    out.insert(r);
                }
                ir::ValueDef::Result(i) => match &f.insts[i] {
                    InstData::Variable { .. } => {
                        out.insert(r);
                    }
                    InstData::Select { if_true, if_false, .. } => work.extend([*if_true, *if_false]),
                    InstData::Load { ptr, .. } if f.is_state_value_address(*ptr) => {
                        work.extend(self.demoted.get(ptr)?.iter().copied())
                    }
                    _ => return None,
                },
            }
        }
        Some(out)
    }
}

/// The stores of a kernel that stays scalar which may stream (among [`streaming_stores`]):
/// stores to global memory of a vector value of 16, 32 or 64 bytes that
/// consecutive work-items write side by side, on their own (consecutive) or with the other
/// members of their struct (a store group of [`crate::vectorize::members`] covering every
/// slot): the work-item loop then fills whole cache lines in order, which is what
/// non-temporal stores need.
pub fn scalar_streaming_stores(
    m: &ir::Module,
    f: &ir::Function,
    wa: &WorkItemAnalysis,
    knobs: &crate::CodegenKnobs,
) -> std::collections::HashSet<Inst> {
    let groups = crate::vectorize::members::find(m, f, wa);
    let may = streaming_stores(&m.types, f, knobs);
    let mut out = std::collections::HashSet::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let InstData::Store { ptr, value, volatile: false, align, .. } = &f.insts[i] else { continue };
            if !may.contains(&i) {
                continue;
            }
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

impl<'a, 'ctx, 'ir> VecLower<'_, 'a, 'ctx, 'ir> {
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
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
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
            let ext = self.l.shuffle(vs.mask, None, &lanes)?;
            if !on.contains(&false) {
                return Ok(vec![(0, ext)]);
            }
            let keep: Vec<IntValue<'ctx>> =
                (0..total).map(|j| self.l.cx().bool_type().const_int(on[(j % slots) as usize] as u64, false)).collect();
            return Ok(vec![(0, self.l.b.build_and(ext, VectorType::const_vector(&keep), "")?)]);
        }
        let it = if w > 32 { self.l.i64() } else { self.l.i32() };
        let wt = self
            .l
            .cx()
            .custom_width_int_type(std::num::NonZeroU32::new(w).ok_or("no lanes")?)
            .map_err(|e| Error(e.to_string()))?;
        let bits = self.l.b.build_bit_cast(vs.mask, wt, "")?.into_int_value();
        let bits = self.l.b.build_int_z_extend_or_bit_cast(bits, it, "")?;
        let piece = ((SPAN_PIECE_BITS / elem_bits.max(1)) as u32).max(1);
        let mut out = Vec::new();
        let mut first = 0;
        while first < total {
            let len = piece.min(total - first);
            let splat = {
                let vt = it.vec_type(len);
                let x = self.l.b.build_insert_element(vt.get_undef(), bits, self.l.i32().const_zero(), "")?;
                self.l.b.build_shuffle_vector(x, vt.get_undef(), self.l.i32().vec_type(len).const_zero(), "")?
            };
            let tests: Vec<IntValue<'ctx>> = (first..first + len)
                .map(|j| it.const_int(if on[(j % slots) as usize] { 1u64 << (j / slots) } else { 0 }, false))
                .collect();
            let hit = self.l.b.build_and(splat, VectorType::const_vector(&tests), "")?;
            let m = self.l.b.build_int_compare(IntPredicate::NE, hit, it.vec_type(len).const_zero(), "")?;
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
        let offset = self.l.e.alloc_size(elem) * u64::from(first);
        let at =
            crate::back::llvm::gep(&self.l.b, elem, p0, &[self.l.i64().const_int(u64::from(first), false)], false)?;
        let piece_align = (1u64 << offset.trailing_zeros().min(31)).min(u64::from(align.max(1))) as u32;
        Ok((at, piece_align))
    }

    /// One packet's span of `elem` at `p0` (lane k's slots at k * on.len()), the slots of
    /// `on` loaded in every active lane, as masked loads of [`SPAN_PIECE_BITS`] each; where
    /// the target lacks AVX-512's masked accesses and `on` has holes, a packet whose lanes
    /// are all active loads its span whole instead ([`Self::span_between`]).
    fn span_load(
        &self,
        p0: inkwell::values::PointerValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        on: &[bool],
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let masked = |s: &Self| -> R<Option<VectorValue<'ctx>>> {
            let elem_bits = s.l.e.alloc_size(elem) * 8;
            let mut parts = Vec::new();
            for (first, m) in s.span_mask_pieces(on, elem_bits)? {
                let vt = wide_ty(elem, m.get_type().get_size())?.into_vector_type();
                let (at, piece_align) = s.span_piece_at(p0, elem, first, align)?;
                parts.push(s.masked_load(vt, at, m, piece_align)?);
            }
            Ok(Some(s.l.concat(&parts)?))
        };
        let loaded = match (on.iter().position(|&x| x), on.iter().rposition(|&x| x)) {
            (Some(first), Some(last)) if !self.l.e.masked.masked_narrow && on.contains(&false) => {
                let lanes = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
                let whole =
                    |s: &Self| Ok(Some(s.span_between(p0, elem, on.len() as u32, first as u32, last as u32, align)?));
                self.if_full(lanes, whole, masked)?
            }
            _ => masked(self)?,
        };
        Ok(loaded.ok_or("a load without a value")?)
    }

    /// A full packet's span of `elem` at `p0` (`slots` a lane), loaded by plain loads of its
    /// elements from lane 0's slot `first` to the last lane's slot `last`, the holes between
    /// them included (their values are never used), placed where the span has them.
    ///
    /// The one place vector code reads memory that no lane accesses, and why that is safe:
    /// every element read lies between two elements that active lanes load, at most a span
    /// of 16 slots apart (`span_slots`), so on a page one of those loads touches; the load
    /// cannot fault where the lanes' own loads do not, and reads nothing before lane 0's
    /// first element or after the last lane's last. On AVX2 the masked load it replaces is a
    /// branch and a scalar load per element for bytes and 16-bit elements (OpenCV's
    /// `countNonZero`, whose `uchar4` clang splits into four byte loads 4 bytes apart: each
    /// a span with one slot in four), and `vpmaskmov`, microcode on AMD's cores, otherwise.
    fn span_between(
        &self,
        p0: inkwell::values::PointerValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        slots: u32,
        first: u32,
        last: u32,
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        let end = (w - 1) * slots + last + 1;
        // Two loads of a power of two of elements, at `first` and ending at `end`, overlapping
        // (one when the length is a power of two): LLVM splits a load of another length
        // into its powers of two and inserts the bytes of the short ones one at a time.
        let p = 1u32 << (31 - (end - first).leading_zeros());
        let vt = wide_ty(elem, p)?.into_vector_type();
        let load_at = |from: u32| -> R<VectorValue<'ctx>> {
            let (at, at_align) = self.span_piece_at(p0, elem, from, align)?;
            let load = self.l.b.build_load(vt, at, "")?;
            crate::back::builtins::set_align(load, plain_align(at_align));
            Ok(load.into_vector_value())
        };
        let head = load_at(first)?;
        let tail = if end - first > p { Some(load_at(end - p)?) } else { None };
        // Element j of the span: `head`'s j - first, or past it `tail`'s (p + j - (end - p)).
        let idx: Vec<Option<u32>> = (0..w * slots)
            .map(|j| match j {
                j if j < first || j >= end => None,
                j if j < first + p => Some(j - first),
                j => Some(p + j - (end - p)),
            })
            .collect();
        self.l.shuffle(head, tail, &idx)
    }

    /// `full` when every lane of `m` is on at run time, `part` otherwise; a value both give
    /// comes out.
    pub(super) fn if_full(
        &self,
        m: VectorValue<'ctx>,
        full: impl FnOnce(&Self) -> R<Option<VectorValue<'ctx>>>,
        part: impl FnOnce(&Self) -> R<Option<VectorValue<'ctx>>>,
    ) -> R<Option<VectorValue<'ctx>>> {
        let n = std::num::NonZeroU32::new(m.get_type().get_size()).ok_or("an empty mask")?;
        let it = self.l.cx().custom_width_int_type(n).map_err(|e| Error(e.to_string()))?;
        let bits = self.l.b.build_bit_cast(m, it, "")?.into_int_value();
        let all = self.l.b.build_int_compare(IntPredicate::EQ, bits, it.const_all_ones(), "")?;
        let full_bb = self.l.cx().append_basic_block(self.l.llf, "mask.full");
        let part_bb = self.l.cx().append_basic_block(self.l.llf, "mask.part");
        let join = self.l.cx().append_basic_block(self.l.llf, "mask.join");
        self.l.b.build_conditional_branch(all, full_bb, part_bb)?;
        self.l.b.position_at_end(full_bb);
        let x = full(self)?;
        let x_end = self.l.b.get_insert_block().ok_or("builder not positioned")?;
        self.l.b.build_unconditional_branch(join)?;
        self.l.b.position_at_end(part_bb);
        let y = part(self)?;
        let y_end = self.l.b.get_insert_block().ok_or("builder not positioned")?;
        self.l.b.build_unconditional_branch(join)?;
        self.l.b.position_at_end(join);
        match (x, y) {
            (Some(x), Some(y)) => {
                let phi = self.l.b.build_phi(x.get_type(), "")?;
                phi.add_incoming(&[(&x, x_end), (&y, y_end)]);
                Ok(Some(phi.as_basic_value().into_vector_value()))
            }
            _ => Ok(None),
        }
    }

    /// A masked load of `vt` at `at` under `m` (`align` bytes aligned; 0: unknown).
    fn masked_load(
        &self,
        vt: VectorType<'ctx>,
        at: inkwell::values::PointerValue<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let loaded = self.plain_when_full(
            m,
            |s| {
                let load = s.l.b.build_load(vt, at, "")?;
                crate::back::builtins::set_align(load, plain_align(align));
                Ok(Some(load.into_vector_value()))
            },
            |s| {
                let esize = s.l.e.alloc_size(vt.get_element_type());
                if !s.l.e.masked.masked(esize) {
                    return Ok(Some(s.looped_load(vt, Place::From(at), m, element_align(align, esize))?));
                }
                let call = s.l.call_intrinsic(
                    "llvm.masked.load",
                    &[vt.into(), s.l.ptr_type().into()],
                    &[at.into(), m.into(), vt.get_undef().into()],
                )?;
                s.l.call_align(call, 0, align);
                Ok(Some(call.try_as_basic_value().basic().ok_or("masked load without result")?.into_vector_value()))
            },
        )?;
        Ok(loaded.ok_or("a load without a value")?)
    }

    /// A masked store of `x` at `at` under `m` (`align` bytes aligned; 0: unknown).
    fn masked_store(
        &self,
        x: VectorValue<'ctx>,
        at: inkwell::values::PointerValue<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<()> {
        self.plain_when_full(
            m,
            |s| {
                let store = s.l.b.build_store(at, x)?;
                store.set_alignment(plain_align(align)).map_err(|e| Error(e.to_string()))?;
                Ok(None)
            },
            |s| {
                let esize = s.l.e.alloc_size(x.get_type().get_element_type());
                if !s.l.e.masked.masked(esize) {
                    s.looped_store(x, Place::From(at), m, element_align(align, esize))?;
                    return Ok(None);
                }
                let call = s.l.call_intrinsic(
                    "llvm.masked.store",
                    &[x.get_type().into(), s.l.ptr_type().into()],
                    &[x.into(), at.into(), m.into()],
                )?;
                s.l.call_align(call, 1, align);
                Ok(None)
            },
        )?;
        Ok(())
    }

    /// A masked access (`masked`) that runs as a plain one (`plain`) when `m` turns out full
    /// at run time, where the target lacks AVX-512's masked loads and stores
    /// (`Emitter::masked`; elsewhere `masked` alone). With AVX-512 they are
    /// instructions of their own; with AVX2 those of 8- and 16-bit elements are a loop over
    /// the active elements (`masked_loop`; LLVM's own lowering, a branch and a scalar access
    /// per lane, made OpenCV's `threshold` of a gray image under its `x < cols` test 9x
    /// slower than Intel's runtime), and those of 32- and 64-bit elements `vpmaskmov`,
    /// microcode on AMD's cores. A loaded value comes out of both paths.
    fn plain_when_full(
        &self,
        m: VectorValue<'ctx>,
        plain: impl FnOnce(&Self) -> R<Option<VectorValue<'ctx>>>,
        masked: impl FnOnce(&Self) -> R<Option<VectorValue<'ctx>>>,
    ) -> R<Option<VectorValue<'ctx>>> {
        if self.l.e.masked.masked_narrow {
            return masked(self);
        }
        self.if_full(m, plain, masked)
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
    /// first active lane's needs every lane's address and a variable extract (through the
    /// stack: a stencil's masked loads spent a quarter of their time there when every packet
    /// took it). Under a full packet's constant mask the branch folds away.
    pub(crate) fn packet_base(&mut self, pw: VectorValue<'ctx>, stride: i64) -> R<PointerValue<'ctx>> {
        let mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
        self.base_under(pw, mask, stride)
    }

    /// [`Self::packet_base`] of the lanes `pw` under `mask` (a packet's, or a row's of it).
    fn base_under(&mut self, pw: VectorValue<'ctx>, mask: VectorValue<'ctx>, stride: i64) -> R<PointerValue<'ctx>> {
        let zero = self.l.i64().const_zero();
        let lane0 = self.l.b.build_extract_element(mask, zero, "")?.into_int_value();
        let p0 = self.l.b.build_extract_element(pw, zero, "")?;
        let base = self.l.unless_slow(lane0, p0, |s| {
            let w = mask.get_type().get_size();
            let n = std::num::NonZeroU32::new(w).ok_or("an empty mask")?;
            let it = s.cx().custom_width_int_type(n).map_err(|e| Error(e.to_string()))?;
            let bits = s.b.build_bit_cast(mask, it, "")?.into_int_value();
            let any = s.b.build_int_compare(IntPredicate::NE, bits, it.const_zero(), "")?;
            // The first active lane k's pointer moved back by k strides (lane 0's, not moved,
            // when no lane is active). Picking one lane out of the vector costs LLVM a store
            // of the vector and a load of the lane; an OR over the active lanes' bases moved
            // back (no variable extract) took half the code generation of a SIMD32 Gen
            // variant's accesses on AVX2 (a wide select and 64-bit reduction per access), and
            // the stencil, whose rows' first packets take this path, runs no slower without.
            let f = s.cx().bool_type().const_zero();
            let tz = s.intrinsic("llvm.cttz", &[it.into()], &[bits.into(), f.into()])?.into_int_value();
            let k = s.b.build_int_cast_sign_flag(tz, s.i64(), false, "")?;
            let k = s.b.build_select(any, k, zero, "")?.into_int_value();
            let pk = s.b.build_extract_element(pw, k, "")?.into_pointer_value();
            let back = s.b.build_int_mul(k, s.i64().const_int(stride.wrapping_neg() as u64, true), "")?;
            Ok(crate::back::llvm::gep(&s.b, s.cx().i8_type().into(), pk, &[back], false)?.into())
        })?;
        Ok(base.into_pointer_value())
    }

    /// The address of lane 0's struct of member access `ptr` (`stride` bytes from one lane's
    /// struct to the next; [`Self::packet_base`]), moved back by `off` bytes to its start.
    fn struct_base(&mut self, ptr: Value, off: u64, stride: u64) -> R<inkwell::values::PointerValue<'ctx>> {
        let pw = self.l.get_wide(ptr)?.into_vector_value();
        let p0 = self.packet_base(pw, stride as i64)?;
        if off == 0 {
            return Ok(p0);
        }
        let back = self.l.i64().const_int((off as i64).wrapping_neg() as u64, true);
        crate::back::llvm::gep(&self.l.b, self.l.cx().i8_type().into(), p0, &[back], false)
    }

    /// A load that is a member of group `g` at byte `off` of its struct: the group's span is
    /// loaded at its first member (every lane's struct, the members' slots enabled), and each
    /// member is shuffled out of it (AoS -> SoA).
    fn group_load(&mut self, g: usize, off: u64, ptr: Value, ty: ir::Type) -> R<Val<'ctx>> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let group = vs.groups.groups[g].clone();
        let cached = vs.group_spans.get(&g).copied();
        let esize = self.l.e.ir.types.size_of(group.elem).max(1);
        let slots = group.slots.len() as u32;
        let span = match cached {
            Some(s) => s,
            None => {
                let base = self.struct_base(ptr, off, u64::from(slots) * esize)?;
                let span = self.span_load(base, self.l.ty(group.elem)?, &group.slots, esize as u32)?;
                if let Some(vs) = self.l.vec.as_mut() {
                    vs.group_spans.insert(g, span);
                }
                span
            }
        };
        let first = (off / esize) as u32;
        let n = self.l.e.ir.types.lanes(ty);
        let idx: Vec<Option<u32>> = (0..n * w).map(|j| Some((j % w) * slots + first + j / w)).collect();
        Ok(self.l.shuffle(span, None, &idx)?.into())
    }

    /// A store that is a member of group `g`: nothing until the group's last store, which
    /// stores every member's value (SoA -> AoS into the span) with one masked store.
    fn group_store(&mut self, i: Inst, g: usize) -> R<()> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let group = vs.groups.groups[g].clone();
        if group.members.last() != Some(&i) {
            return Ok(());
        }
        let offs: Vec<u64> = group.members.iter().map(|m| vs.groups.of.get(m).map_or(0, |x| x.1)).collect();
        let esize = self.l.e.ir.types.size_of(group.elem).max(1);
        let slots = group.slots.len() as u32;
        let total = w * slots;
        let mut acc = wide_ty(self.l.ty(group.elem)?, total)?.into_vector_type().get_undef();
        let mut last_ptr = None;
        for (&mi, &off) in group.members.iter().zip(&offs) {
            let InstData::Store { ptr, value, .. } = self.l.f.insts[mi] else {
                bail!("a store group member is not a store")
            };
            let x = self.l.get_wide(value)?.into_vector_value();
            let n = x.get_type().get_size() / w;
            let padded = self.l.shuffle(x, None, &(0..total).map(|j| (j < n * w).then_some(j)).collect::<Vec<_>>())?;
            let first = (off / esize) as u32;
            let idx: Vec<Option<u32>> = (0..total)
                .map(|j| {
                    let s = j % slots;
                    Some(if s >= first && s < first + n { total + (s - first) * w + j / slots } else { j })
                })
                .collect();
            acc = self.l.shuffle(acc, Some(padded), &idx)?;
            last_ptr = Some((ptr, off));
        }
        let (ptr, off) = last_ptr.ok_or("empty store group")?;
        let base = self.struct_base(ptr, off, u64::from(slots) * esize)?;
        let bytes = group.slots.iter().filter(|&&x| x).count() as u64 * esize;
        self.span_store(i, acc, base, &group.slots, esize as u32, bytes)
    }

    /// Prefetches into L2 the lines of the `bytes` a packet reads from `p` on, moved
    /// [`crate::vectorize::prefetch::PREFETCH_AHEAD`] bytes ahead: one prefetch per 64-byte
    /// line, so that a packet wider than a line (a SIMD32 thread's floats are two) has its
    /// whole stream ahead, not every other line of it (a prefetch never faults, so the
    /// address may lie past the buffer).
    fn prefetch_ahead(&self, p: inkwell::values::PointerValue<'ctx>, bytes: u64) -> R<()> {
        let i8t = self.l.cx().i8_type();
        let i32t = self.l.i32();
        let (read, locality_l2, data) = (i32t.const_zero(), i32t.const_int(1, false), i32t.const_int(1, false));
        for line in 0..bytes.div_ceil(PREFETCH_LINE).max(1) {
            let ahead =
                self.l.i64().const_int(crate::vectorize::prefetch::PREFETCH_AHEAD + line * PREFETCH_LINE, false);
            // Not in bounds: the address may lie past the allocation.
            let q = crate::back::llvm::gep(&self.l.b, i8t.into(), p, &[ahead], false)?;
            self.l.call_intrinsic(
                "llvm.prefetch",
                &[self.l.ptr_type().into()],
                &[q.into(), read.into(), locality_l2.into(), data.into()],
            )?;
        }
        Ok(())
    }

    /// A varying load through `ptr` of IR type `ty`.
    pub(crate) fn vector_load(&mut self, i: Inst, ptr: Value, ty: ir::Type, align: u32) -> R<Val<'ctx>> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        if let Some(&(g, off)) = vs.groups.of.get(&i) {
            return self.group_load(g, off, ptr, ty);
        }
        let (w, mask) = (vs.width, vs.mask);
        let access = vs.wa.access(i).unwrap_or(Access::Random);
        let prefetch = vs.prefetch.contains(&i);
        let (elem_ir, n) = match self.l.e.ir.types.get(ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => (ty, 1),
        };
        let elem = self.l.ty(elem_ir)?;
        let pw = self.l.get_wide(ptr)?.into_vector_value();
        let ealign = self.l.e.ir.types.size_of(elem_ir).max(1) as u32;
        let esize = self.l.e.ir.types.size_of(elem_ir).max(1) as i64;
        if let Some(slots) = span_slots(access, esize, n) {
            if prefetch {
                // Ahead of lane 0's address, before the span is placed: a prefetch is a hint
                // that never faults, so an inactive lane 0's address does no harm.
                let l0 = self.l.b.build_extract_element(pw, self.l.i64().const_zero(), "")?.into_pointer_value();
                self.prefetch_ahead(l0, u64::from(w) * u64::from(slots) * esize as u64)?;
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
            return Ok(self.l.shuffle(wide, None, &idx)?.into());
        }
        if let (Access::Rows(sx), 1) = (access, n) {
            let align = if align > 0 { align } else { ealign };
            if let Some(v) = self.rows_load(pw, mask, elem, sx, esize, align)? {
                return Ok(v.into());
            }
        }
        // Each component is aligned to its size at most, and to what the access claims.
        let calign = if align > 0 { ealign.min(align) } else { ealign };
        let vt = wide_ty(elem, w)?.into_vector_type();
        let gather = |s: &Self, pc: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            if !s.l.e.masked.gathers(esize as u64) {
                return s.looped_load(vt, Place::Lanes(pc), mask, calign);
            }
            let call = s.l.call_intrinsic(
                "llvm.masked.gather",
                &[vt.into(), pw.get_type().into()],
                &[pc.into(), mask.into(), vt.get_undef().into()],
            )?;
            s.l.call_align(call, 0, calign);
            Ok(call.try_as_basic_value().basic().ok_or("gather without result")?.into_vector_value())
        };
        // Gathers of 32- and 64-bit elements are instructions of AVX2 and AVX-512: the test
        // would be code at every message of a Gen build (compile time) for little gain.
        if n == 1 && esize < 4 {
            let loaded = self.when_consecutive(
                pw,
                esize,
                |s, p0| {
                    let load = s.l.b.build_load(vt, p0, "")?;
                    crate::back::builtins::set_align(load, calign);
                    Ok(Some(load.into_vector_value()))
                },
                |s| Ok(Some(gather(s, pw)?)),
            )?;
            return Ok(loaded.ok_or("a load without a value")?.into());
        }
        let mut parts = Vec::with_capacity(n as usize);
        for c in 0..n {
            let pc = if c == 0 {
                pw
            } else {
                self.l.vector_gep(elem, pw.into(), self.l.i64().const_int(c as u64, false).into())?
            };
            parts.push(gather(self, pc)?);
        }
        Ok(self.l.concat(&parts)?.into())
    }

    /// `consecutive` (given lane 0's pointer) when every lane of the packet is active and
    /// lane k's pointer in `pw` is lane 0's plus k * `esize` at run time, `random` otherwise:
    /// a gather or scatter whose addresses the analysis could not follow but that turn out
    /// consecutive becomes one vector access of the same bytes (OpenCV's `pyrDown` reflects
    /// its column at the image's border, `min(max(x, -x), 2 * (cols - 1) - x)`, which is
    /// the lane's own column away from the border). Used where the gather or scatter is
    /// not an instruction: gathers of 8- and 16-bit elements (a load per lane on every x86
    /// target: `masked_loop`) and scatters but AVX-512's of 32- and 64-bit elements; the
    /// test is a few compares.
    fn when_consecutive(
        &self,
        pw: VectorValue<'ctx>,
        esize: i64,
        consecutive: impl FnOnce(&Self, inkwell::values::PointerValue<'ctx>) -> R<Option<VectorValue<'ctx>>>,
        random: impl FnOnce(&Self) -> R<Option<VectorValue<'ctx>>>,
    ) -> R<Option<VectorValue<'ctx>>> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        let (w, mask) = (vs.width, vs.mask);
        let i64t = self.l.i64();
        let p0 = self.l.b.build_extract_element(pw, i64t.const_zero(), "")?.into_pointer_value();
        let a0 = self.l.b.build_ptr_to_int(p0, i64t, "")?;
        let steps: Vec<IntValue<'ctx>> = (0..u64::from(w)).map(|k| i64t.const_int(k * esize as u64, false)).collect();
        let want = self.l.b.build_int_add(self.l.ops().splat64(a0, w)?, VectorType::const_vector(&steps), "")?;
        let got = self.l.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?;
        let same = self.l.b.build_int_compare(IntPredicate::EQ, got, want, "")?;
        let both = self.l.b.build_and(same, mask, "")?;
        self.if_full(both, |s| consecutive(s, p0), random)
    }

    /// A store where the pointer or the value varies.
    pub(crate) fn vector_store(&mut self, i: Inst, ptr: Value, value: Value, align: u32) -> R<()> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        if let Some(&(g, _)) = vs.groups.of.get(&i) {
            return self.group_store(i, g);
        }
        let (w, mask, last) = (vs.width, vs.mask, vs.last);
        let access = vs.wa.access(i).unwrap_or(Access::Random);
        let ty = self.l.f.value_type(value);
        let (elem_ir, n) = match self.l.e.ir.types.get(ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => (ty, 1),
        };
        let elem = self.l.ty(elem_ir)?;
        let ealign = self.l.e.ir.types.size_of(elem_ir).max(1) as u32;
        let align = if align > 0 { align } else { ealign };
        if self.l.is_uniform(ptr) {
            // One store: the value of the last active lane (as if the lanes ran in order).
            let p = as_ptr(self.l.get(ptr)?)?;
            let x = self.l.get_wide(value)?;
            let x = self.l.lane_of(x, ty, last)?;
            let s = self.l.b.build_store(p, x)?;
            let _ = s.set_alignment(align);
            return Ok(());
        }
        let pw = self.l.get_wide(ptr)?.into_vector_value();
        let xw = self.l.get_wide(value)?.into_vector_value();
        let esize = self.l.e.ir.types.size_of(elem_ir).max(1) as i64;
        if let Some(slots) = span_slots(access, esize, n) {
            let p0 = self.packet_base(pw, i64::from(slots) * esize)?;
            let data = if n == 1 && slots == 1 {
                xw
            } else {
                // SoA -> AoS; slots past the components (padding of a 3-component vector,
                // other members of a struct) are not written.
                let idx: Vec<Option<u32>> =
                    (0..w * slots).map(|j| (j % slots < n).then_some((j % slots) * w + j / slots)).collect();
                self.l.shuffle(xw, None, &idx)?
            };
            let bytes_per_item = esize as u64 * n as u64;
            let on = Self::aos_slots(slots, n);
            return self.span_store(i, data, p0, &on, align, bytes_per_item);
        }
        if access == Access::Rows(esize) && n == 1 && self.rows_store(pw, xw, mask, align)? {
            return Ok(());
        }
        let scatter = |s: &Self, part: VectorValue<'ctx>, pc: VectorValue<'ctx>| -> R<()> {
            if !s.l.e.masked.scatters(esize as u64) {
                return s.looped_store(part, Place::Lanes(pc), mask, ealign.min(align));
            }
            let call = s.l.call_intrinsic(
                "llvm.masked.scatter",
                &[part.get_type().into(), pw.get_type().into()],
                &[part.into(), pc.into(), mask.into()],
            )?;
            s.l.call_align(call, 1, ealign.min(align));
            Ok(())
        };
        // Scatters are instructions of AVX-512 only, of 32- and 64-bit elements.
        if n == 1 && !self.l.e.masked.scatters(esize as u64) {
            self.when_consecutive(
                pw,
                esize,
                |s, p0| {
                    let store = s.l.b.build_store(p0, xw)?;
                    store.set_alignment(ealign.min(align)).map_err(|e| Error(e.to_string()))?;
                    Ok(None)
                },
                |s| scatter(s, xw, pw).map(|_| None),
            )?;
            return Ok(());
        }
        for c in 0..n {
            let pc = if c == 0 {
                pw
            } else {
                self.l.vector_gep(elem, pw.into(), self.l.i64().const_int(c as u64, false).into())?
            };
            let idx: Vec<Option<u32>> = (0..w).map(|k| Some(c * w + k)).collect();
            scatter(self, self.l.shuffle(xw, None, &idx)?, pc)?;
        }
        Ok(())
    }

    /// The packet's rows (`WorkItemAnalysis::row_width` lanes each, if at least
    /// [`MIN_ROW_LANES`]): the lane numbers of each, as the indices of a shuffle taking them.
    fn rows(&self) -> Option<Vec<Vec<Option<u32>>>> {
        let vs = self.l.vec.as_ref()?;
        let wx = u32::try_from(vs.wa.row_width).ok().filter(|&x| x >= MIN_ROW_LANES && vs.width % x == 0)?;
        Some((0..vs.width / wx).map(|r| (r * wx..(r + 1) * wx).map(Some).collect()).collect())
    }

    /// Row `r`'s part of `mask` (rows of `wx` lanes), taken from the mask's bits: a shuffle
    /// of the `i1` vector went through memory (a store of the mask register and a wider
    /// load of it, which the store cannot forward: a fifth of a 2-D stencil's time).
    fn row_mask(&self, mask: VectorValue<'ctx>, r: usize, wx: usize) -> R<VectorValue<'ctx>> {
        let bits = self.l.ops().mask_bits(mask)?;
        let shifted = self.l.b.build_right_shift(bits, bits.get_type().const_int((r * wx) as u64, false), false, "")?;
        let n = std::num::NonZeroU32::new(wx as u32).ok_or("an empty row")?;
        let it = self.l.cx().custom_width_int_type(n).map_err(|e| crate::back::llvm::Error(e.to_string()))?;
        let row = self.l.b.build_int_truncate(shifted, it, "")?;
        Ok(self.l.b.build_bit_cast(row, self.l.cx().bool_type().vec_type(wx as u32), "")?.into_vector_value())
    }

    /// A load of one element per lane whose lanes are whole rows (`Access::Rows`): per row,
    /// one vector load of its consecutive elements (`sx` = the element's size) or one load of
    /// the element every lane of the row reads (`sx` = 0), under the row's part of `mask`;
    /// `None` for other steps (a gather does those).
    fn rows_load(
        &mut self,
        pw: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        sx: i64,
        esize: i64,
        align: u32,
    ) -> R<Option<VectorValue<'ctx>>> {
        let Some(rows) = self.rows().filter(|_| sx == 0 || sx == esize) else { return Ok(None) };
        let mut parts = Vec::with_capacity(rows.len());
        for (r, lanes) in rows.iter().enumerate() {
            let (rm, rp) = (self.row_mask(mask, r, lanes.len())?, self.l.shuffle(pw, None, lanes)?);
            let at = self.base_under(rp, rm, sx)?;
            if sx == esize {
                let vt = wide_ty(elem, lanes.len() as u32)?.into_vector_type();
                parts.push(self.masked_load(vt, at, rm, align)?);
            } else {
                // One element for the row, loaded when a lane of the row is active.
                let any = self.l.call_intrinsic("llvm.vector.reduce.or", &[rm.get_type().into()], &[rm.into()])?;
                let any = any.try_as_basic_value().basic().ok_or("reduce without result")?.into_int_value();
                let one = self.l.cx().bool_type().vec_type(1);
                let any = self.l.b.build_insert_element(one.get_undef(), any, self.l.i32().const_zero(), "")?;
                let x = self.masked_load(wide_ty(elem, 1)?.into_vector_type(), at, any, align)?;
                parts.push(self.l.shuffle(x, None, &vec![Some(0); lanes.len()])?);
            }
        }
        Ok(Some(self.l.concat(&parts)?))
    }

    /// A store of one element per lane whose lanes are whole rows of consecutive elements:
    /// one masked vector store per row. False: the packet's rows are too short for it.
    fn rows_store(
        &mut self,
        pw: VectorValue<'ctx>,
        xw: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        align: u32,
    ) -> R<bool> {
        let Some(rows) = self.rows() else { return Ok(false) };
        let esize = self.l.e.alloc_size(xw.get_type().get_element_type()) as i64;
        for (r, lanes) in rows.iter().enumerate() {
            let (rm, rp, rx) = (
                self.row_mask(mask, r, lanes.len())?,
                self.l.shuffle(pw, None, lanes)?,
                self.l.shuffle(xw, None, lanes)?,
            );
            let at = self.base_under(rp, rm, esize)?;
            self.masked_store(rx, at, rm, align)?;
        }
        Ok(true)
    }

    /// The number of work-items in the ND-range (computed once, in the prologue).
    fn ndrange_items(&mut self) -> R<IntValue<'ctx>> {
        if let Some(n) = self.l.ndrange_items {
            return Ok(n);
        }
        let at = self.l.b.get_insert_block().ok_or("builder not positioned")?;
        if let Some(term) = self.l.pb.get_insert_block().and_then(|b| b.get_terminator()) {
            self.l.b.position_before(&term);
        }
        let g = self.l.ctx_u64x3(crate::back::llvm::ctx_offsets::GLOBAL_SIZE)?;
        let n = self.l.b.build_int_mul(self.l.b.build_int_mul(g[0], g[1], "")?, g[2], "items")?;
        self.l.b.position_at_end(at);
        self.l.ndrange_items = Some(n);
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
        let threshold = self.l.e.knobs.streaming_stores.unwrap_or(u64::MAX);
        let need = self.l.i64().const_int(threshold.div_ceil(bytes_per_item.max(1)), false);
        let big = self.l.b.build_int_compare(IntPredicate::UGE, items, need, "")?;
        let addr = self.l.b.build_ptr_to_int(p, self.l.i64(), "")?;
        let low = self.l.b.build_and(addr, self.l.i64().const_int(nt_align - 1, false), "")?;
        let aligned = self.l.b.build_int_compare(IntPredicate::EQ, low, self.l.i64().const_zero(), "")?;
        let mut go = self.l.b.build_and(aligned, big, "stream")?;
        if let Some(full) = full {
            go = self.l.b.build_and(full, go, "")?;
        }
        let nt = self.l.cx().append_basic_block(self.l.llf, "store.stream");
        let plain = self.l.cx().append_basic_block(self.l.llf, "store.plain");
        let join = self.l.cx().append_basic_block(self.l.llf, "store.next");
        self.l.b.build_conditional_branch(go, nt, plain)?;
        self.l.b.position_at_end(nt);
        Ok((nt_align as u32, plain, join))
    }

    /// After the non-temporal store of [`Self::stream_if`]: runs `plain` (the ordinary
    /// store) in the other branch and joins.
    fn stream_else(
        &mut self,
        (plain_bb, join): (inkwell::basic_block::BasicBlock<'ctx>, inkwell::basic_block::BasicBlock<'ctx>),
        plain: impl FnOnce(&Self) -> R<()>,
    ) -> R<()> {
        self.l.b.build_unconditional_branch(join)?;
        self.l.b.position_at_end(plain_bb);
        plain(self)?;
        self.l.b.build_unconditional_branch(join)?;
        self.l.b.position_at_end(join);
        Ok(())
    }

    /// A packet's span `data` stored at `p0` (lane k's slots at k * on.len(), the slots of
    /// `on` in every active lane), as masked stores of [`SPAN_PIECE_BITS`] each (see
    /// [`Self::span_mask_pieces`]). When non-temporal stores are allowed
    /// (`i` among [`streaming_stores`]), every slot is stored and the span is a power of two of at
    /// least 32 bytes, a packet whose mask is full, whose span is aligned and whose ND-range
    /// stores enough here (`bytes_per_item` each) stores with a non-temporal store instead
    /// (in a full packet the mask test folds away; the other two are uniform).
    fn span_store(
        &mut self,
        i: Inst,
        data: VectorValue<'ctx>,
        p0: inkwell::values::PointerValue<'ctx>,
        on: &[bool],
        align: u32,
        bytes_per_item: u64,
    ) -> R<()> {
        let vt = data.get_type();
        let elem = vt.get_element_type();
        let span = self.l.e.alloc_size(elem) * vt.get_size() as u64;
        let streaming = self.l.vec.as_ref().is_some_and(|v| v.streaming.contains(&i));
        let lane_mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
        let masked_store = |s: &Self| -> R<()> {
            for (first, m) in s.span_mask_pieces(on, s.l.e.alloc_size(elem) * 8)? {
                let len = m.get_type().get_size();
                let part = if len == vt.get_size() {
                    data
                } else {
                    s.l.shuffle(data, None, &(first..first + len).map(Some).collect::<Vec<_>>())?
                };
                let (at, piece_align) = s.span_piece_at(p0, elem, first, align)?;
                s.masked_store(part, at, m, piece_align)?;
            }
            Ok(())
        };
        if !streaming || !span.is_power_of_two() || span < 32 || bytes_per_item == 0 || on.contains(&false) {
            return masked_store(self);
        }
        let full =
            self.l.call_intrinsic("llvm.vector.reduce.and", &[lane_mask.get_type().into()], &[lane_mask.into()])?;
        let full = full.try_as_basic_value().basic().ok_or("reduce without result")?.into_int_value();
        let (nt_align, plain, join) = self.stream_if(p0, span, bytes_per_item, Some(full))?;
        self.l.nt_store(p0, data.into(), nt_align)?;
        self.stream_else((plain, join), masked_store)
    }
}

/// The alignment a plain access under a full mask claims: the masked access's (none: 1),
/// never the vector type's own.
/// The alignment of each element of `esize` bytes of an access aligned to `align` (0:
/// unknown).
fn element_align(align: u32, esize: u64) -> u32 {
    plain_align(align).min(u32::try_from(esize).unwrap_or(1).max(1))
}

fn plain_align(align: u32) -> u32 {
    if align > 0 && align.is_power_of_two() {
        align
    } else {
        1
    }
}

/// The fewest lanes a row has for [`VecLower::rows_load`] and [`VecLower::rows_store`] to
/// access it as rows (shorter rows are gathered: a vector access per lane or two gains
/// nothing).
const MIN_ROW_LANES: u32 = 4;

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
