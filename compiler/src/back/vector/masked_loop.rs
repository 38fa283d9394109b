//! Masked loads, stores, gathers and scatters the target has no instruction for, as a loop
//! over the mask's set bits: one element a trip, through a scratch buffer in the frame.
//!
//! LLVM lowers such an access (`ScalarizeMaskedMemIntrin`) into a test, a branch and two
//! blocks per element, unrolled: a packet span of 16 lanes' 16-byte structs in 16-bit
//! elements is 256 blocks, and a kernel with a few dozen of them has tens of thousands of
//! blocks, where the register allocator's live intervals grow with blocks times values
//! (a generated kernel of 190 lines spent 147 s in code generation at the Gen device's
//! SIMD32, 44 s at SIMD16, 19 s at the CPU's 16 lanes). The loop is the same loads and
//! stores for the active elements and none for the others, in a constant three blocks per
//! 64 elements; its trips cost about what the unrolled tests do (a bit test, a branch, an
//! access each). A masked load or store whose mask is full at run time does not come here
//! (`VecLower::plain_when_full`), and a gather or scatter of a full packet takes straight-line
//! code ([`VecLower::looped_load`]).
//!
//! Which accesses are instructions ([`Support`]): AVX's `vmaskmov` loads and stores 32- and
//! 64-bit elements, AVX2's `vpgather` gathers them; AVX-512 (with byte and word masks) adds
//! masked loads and stores of every element size and scatters of 32- and 64-bit elements.
//! No x86 target gathers or scatters bytes or 16-bit elements.

use super::VecLower;
use crate::back::llvm::{Error, R};
use inkwell::context::Context;
use inkwell::targets::{FileType, TargetMachine};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The masked memory instructions of the target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Support {
    /// Masked loads and stores of 32- and 64-bit elements (AVX).
    pub masked_wide: bool,
    /// Masked loads and stores of 8- and 16-bit elements (AVX-512BW).
    pub masked_narrow: bool,
    /// Gathers of 32- and 64-bit elements (AVX2).
    pub gather: bool,
    /// Scatters of 32- and 64-bit elements (AVX-512F).
    pub scatter: bool,
}

impl Support {
    /// What a target with the LLVM feature string `features` ("+avx2,+fma,...") has.
    pub fn of_features(features: &str) -> Support {
        let has = |f: &str| features.split(',').any(|x| x == f);
        Support {
            masked_wide: has("+avx"),
            masked_narrow: has("+avx512bw") && has("+avx512f"),
            gather: has("+avx2"),
            scatter: has("+avx512f"),
        }
    }

    /// What the target of `tm` (of LLVM features `features`) has. Whether gathers are
    /// instructions is LLVM's decision by
    /// the CPU's tuning as much as by its features (AVX2 gathers are slow on AMD's cores
    /// before Zen 4, and LLVM scalarizes them there), so one gather is compiled for the
    /// target and the code looked at, once per target in a process.
    pub fn of_machine(cx: &Context, tm: &TargetMachine, features: &str) -> Support {
        static GATHERS: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
        let mut support = Support::of_features(features);
        if support.gather {
            let key = format!("{} {features}", tm.get_cpu());
            let known = GATHERS.get_or_init(Default::default).lock().get(&key).copied();
            support.gather = known.unwrap_or_else(|| {
                let gathers = compiles_to_gather(cx, tm);
                GATHERS.get_or_init(Default::default).lock().insert(key, gathers);
                gathers
            });
        }
        support
    }

    /// Whether a masked load or store of `esize`-byte elements is an instruction.
    pub fn masked(&self, esize: u64) -> bool {
        if esize >= 4 {
            self.masked_wide
        } else {
            self.masked_narrow
        }
    }

    /// Whether a gather of `esize`-byte elements is an instruction.
    pub fn gathers(&self, esize: u64) -> bool {
        esize >= 4 && self.gather
    }

    /// Whether a scatter of `esize`-byte elements is an instruction.
    pub fn scatters(&self, esize: u64) -> bool {
        esize >= 4 && self.scatter
    }
}

/// Whether `tm` compiles a gather of eight 32-bit elements into a gather instruction.
fn compiles_to_gather(cx: &Context, tm: &TargetMachine) -> bool {
    let m = cx.create_module("softcl.probe");
    m.set_triple(&tm.get_triple());
    m.set_data_layout(&tm.get_target_data().get_data_layout());
    let (i32t, pt) = (cx.i32_type(), cx.ptr_type(inkwell::AddressSpace::default()));
    let (vt, pvt, mt) = (i32t.vec_type(8), pt.vec_type(8), cx.bool_type().vec_type(8));
    let f = m.add_function("probe", vt.fn_type(&[pvt.into(), mt.into()], false), None);
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(f, ""));
    let emitted = (|| -> Option<String> {
        let decl = inkwell::intrinsics::Intrinsic::find("llvm.masked.gather")?
            .get_declaration(&m, &[vt.into(), pvt.into()])?;
        let (ptrs, mask) = (f.get_nth_param(0)?, f.get_nth_param(1)?);
        let args = [ptrs.into(), mask.into(), vt.get_undef().into()];
        let call = b.build_call(decl, &args, "").ok()?;
        b.build_return(Some(&call.try_as_basic_value().basic()?)).ok()?;
        let asm = tm.write_to_memory_buffer(&m, FileType::Assembly).ok()?;
        Some(String::from_utf8_lossy(asm.as_slice()).into_owned())
    })();
    // An instruction `vpgatherdd` (`vgather...` by type); the scalarized form has none.
    emitted.is_some_and(|asm| asm.contains("gather"))
}

/// Where the elements of a looped access are: consecutive from one pointer, or each lane at
/// its own pointer (a gather or scatter).
#[derive(Clone, Copy)]
pub enum Place<'ctx> {
    From(PointerValue<'ctx>),
    Lanes(VectorValue<'ctx>),
}

/// A scratch buffer's use: the data, or the lanes' pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scratch {
    Data,
    Pointers,
}

/// The alignment of the frame's scratch buffers (a cache line: a vector load or store of a
/// whole buffer is aligned).
const SCRATCH_ALIGN: u32 = 64;

impl<'ctx> VecLower<'_, '_, 'ctx, '_> {
    /// A scratch buffer of `bytes` bytes in the function's frame for `use_`; one per size and
    /// use, shared by every looped access (each is done with it before the next begins).
    fn scratch_buffer(&self, use_: Scratch, bytes: u64) -> R<PointerValue<'ctx>> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        if let Some(&p) = vs.scratch.borrow().get(&(use_, bytes)) {
            return Ok(p);
        }
        let ty = self.l.cx().i8_type().array_type(u32::try_from(bytes).map_err(|_| "a scratch buffer too large")?);
        let p = self.l.scratch(ty.into())?;
        p.as_instruction()
            .ok_or("an alloca that is no instruction")?
            .set_alignment(SCRATCH_ALIGN)
            .map_err(|e| Error(e.to_string()))?;
        vs.scratch.borrow_mut().insert((use_, bytes), p);
        Ok(p)
    }

    /// Runs `body(j)` (j an i64) for each set bit j of the mask `m`, in increasing order: a
    /// loop per 64 bits of the mask that clears its lowest set bit each trip.
    fn each_set_bit(&self, m: VectorValue<'ctx>, mut body: impl FnMut(IntValue<'ctx>) -> R<()>) -> R<()> {
        let n = m.get_type().get_size();
        let n_bits = std::num::NonZeroU32::new(n).ok_or("an empty mask")?;
        let it = self.l.cx().custom_width_int_type(n_bits).map_err(|e| Error(e.to_string()))?;
        let i64t = self.l.i64();
        let bits = self.l.b.build_bit_cast(m, it, "")?.into_int_value();
        for c in 0..n.div_ceil(64) {
            let chunk = if n <= 64 {
                self.l.b.build_int_z_extend_or_bit_cast(bits, i64t, "")?
            } else {
                let down = self.l.b.build_right_shift(bits, it.const_int(u64::from(c) * 64, false), false, "")?;
                self.l.b.build_int_truncate(down, i64t, "")?
            };
            let entry = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            let trip = self.l.cx().append_basic_block(self.l.llf, "elem");
            let done = self.l.cx().append_basic_block(self.l.llf, "elem.done");
            let zero = i64t.const_zero();
            let any = self.l.b.build_int_compare(IntPredicate::NE, chunk, zero, "")?;
            self.l.b.build_conditional_branch(any, trip, done)?;
            self.l.b.position_at_end(trip);
            let phi = self.l.b.build_phi(i64t, "")?;
            let left = phi.as_basic_value().into_int_value();
            let poison_at_zero = self.l.cx().bool_type().const_all_ones();
            let tz = self.l.intrinsic("llvm.cttz", &[i64t.into()], &[left.into(), poison_at_zero.into()])?;
            let j = self.l.b.build_int_add(tz.into_int_value(), i64t.const_int(u64::from(c) * 64, false), "")?;
            body(j)?;
            let less = self.l.b.build_int_sub(left, i64t.const_int(1, false), "")?;
            let next = self.l.b.build_and(left, less, "")?;
            let end = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            phi.add_incoming(&[(&chunk, entry), (&next, end)]);
            let more = self.l.b.build_int_compare(IntPredicate::NE, next, zero, "")?;
            self.l.b.build_conditional_branch(more, trip, done)?;
            self.l.b.position_at_end(done);
        }
        Ok(())
    }

    /// Element j's address: `at` plus j elements, or lane j's pointer (stored in `ptrs`).
    fn element_at(
        &self,
        place: Place<'ctx>,
        ptrs: Option<PointerValue<'ctx>>,
        elem: BasicTypeEnum<'ctx>,
        j: IntValue<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        match (place, ptrs) {
            (Place::From(at), _) => Ok(crate::back::llvm::gep(&self.l.b, elem, at, &[j], false)?),
            (Place::Lanes(_), Some(buf)) => {
                let pt = self.l.ptr_type();
                let slot = crate::back::llvm::gep(&self.l.b, pt.into(), buf, &[j], true)?;
                Ok(self.l.b.build_load(pt, slot, "")?.into_pointer_value())
            }
            (Place::Lanes(_), None) => Err(Error("a gather or scatter without its pointers".into())),
        }
    }

    /// The lanes' pointers of `place` stored in a scratch buffer (for a gather or scatter).
    fn stored_pointers(&self, place: Place<'ctx>) -> R<Option<PointerValue<'ctx>>> {
        let Place::Lanes(pw) = place else { return Ok(None) };
        let bytes = u64::from(pw.get_type().get_size()) * self.l.e.alloc_size(self.l.ptr_type().into());
        let buf = self.scratch_buffer(Scratch::Pointers, bytes)?;
        self.l.b.build_store(buf, pw)?.set_alignment(SCRATCH_ALIGN).map_err(|e| Error(e.to_string()))?;
        Ok(Some(buf))
    }

    /// A masked load or gather of `vt` under `m`, element by element over the active ones
    /// (`align`: each element's alignment); inactive elements are undefined. A gather whose
    /// lanes are all active loads each lane's element in straight-line code (under a full
    /// packet's constant mask only that is left): what LLVM makes of the gather there, where
    /// the loop would add a trip per element and a store of each into the buffer that the
    /// vector load of the buffer then waits for (OpenCV's bilinear `resize` of a gray image,
    /// whose byte gathers are all full, ran 1.3x as long).
    pub(super) fn looped_load(
        &self,
        vt: VectorType<'ctx>,
        place: Place<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let Place::Lanes(pw) = place else { return self.loop_load(vt, place, m, align) };
        let straight = |s: &Self| -> R<Option<VectorValue<'ctx>>> {
            let mut v = vt.get_undef();
            for k in 0..vt.get_size() {
                let kc = s.l.i64().const_int(u64::from(k), false);
                let p = s.l.b.build_extract_element(pw, kc, "")?.into_pointer_value();
                let x = s.l.b.build_load(vt.get_element_type(), p, "")?;
                crate::back::builtins::set_align(x, align.max(1));
                v = s.l.b.build_insert_element(v, x, kc, "")?;
            }
            Ok(Some(v))
        };
        let looped = |s: &Self| Ok(Some(s.loop_load(vt, place, m, align)?));
        Ok(self.if_full(m, straight, looped)?.ok_or("a gather without a value")?)
    }

    /// [`Self::looped_load`]'s loop.
    fn loop_load(
        &self,
        vt: VectorType<'ctx>,
        place: Place<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<VectorValue<'ctx>> {
        let elem = vt.get_element_type();
        let bytes = u64::from(vt.get_size()) * self.l.e.alloc_size(elem);
        let ptrs = self.stored_pointers(place)?;
        let buf = self.scratch_buffer(Scratch::Data, bytes)?;
        self.each_set_bit(m, |j| {
            let at = self.element_at(place, ptrs, elem, j)?;
            let x = self.l.b.build_load(elem, at, "")?;
            crate::back::builtins::set_align(x, align.max(1));
            let to = crate::back::llvm::gep(&self.l.b, elem, buf, &[j], true)?;
            self.l.b.build_store(to, x)?;
            Ok(())
        })?;
        let v = self.l.b.build_load(vt, buf, "")?;
        crate::back::builtins::set_align(v, SCRATCH_ALIGN);
        Ok(v.into_vector_value())
    }

    /// A masked store or scatter of `x` under `m`, element by element over the active ones
    /// (`align`: each element's alignment), in lane order (where lanes share an address the
    /// last one's value stays, as of a scatter). A scatter whose lanes are all active stores
    /// in straight-line code ([`Self::looped_load`]).
    pub(super) fn looped_store(
        &self,
        x: VectorValue<'ctx>,
        place: Place<'ctx>,
        m: VectorValue<'ctx>,
        align: u32,
    ) -> R<()> {
        let Place::Lanes(pw) = place else { return self.loop_store(x, place, m, align) };
        let straight = |s: &Self| -> R<Option<VectorValue<'ctx>>> {
            for k in 0..x.get_type().get_size() {
                let kc = s.l.i64().const_int(u64::from(k), false);
                let p = s.l.b.build_extract_element(pw, kc, "")?.into_pointer_value();
                let v = s.l.b.build_extract_element(x, kc, "")?;
                s.l.b.build_store(p, v)?.set_alignment(align.max(1)).map_err(|e| Error(e.to_string()))?;
            }
            Ok(None)
        };
        self.if_full(m, straight, |s| s.loop_store(x, place, m, align).map(|_| None))?;
        Ok(())
    }

    /// [`Self::looped_store`]'s loop.
    fn loop_store(&self, x: VectorValue<'ctx>, place: Place<'ctx>, m: VectorValue<'ctx>, align: u32) -> R<()> {
        let elem = x.get_type().get_element_type();
        let bytes = u64::from(x.get_type().get_size()) * self.l.e.alloc_size(elem);
        let ptrs = self.stored_pointers(place)?;
        let buf = self.scratch_buffer(Scratch::Data, bytes)?;
        self.l.b.build_store(buf, x)?.set_alignment(SCRATCH_ALIGN).map_err(|e| Error(e.to_string()))?;
        self.each_set_bit(m, |j| {
            let from = crate::back::llvm::gep(&self.l.b, elem, buf, &[j], true)?;
            let v = self.l.b.build_load(elem, from, "")?;
            let at = self.element_at(place, ptrs, elem, j)?;
            self.l.b.build_store(at, v)?.set_alignment(align.max(1)).map_err(|e| Error(e.to_string()))?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Support;
    use crate::back::target::HostTarget;

    fn support(cpu: &str, features: &str) -> Support {
        let host = HostTarget { triple: "x86_64-unknown-linux-gnu".into(), cpu: cpu.into(), features: features.into() };
        let tm = host.machine().expect("an x86-64 target machine");
        Support::of_machine(&inkwell::context::Context::create(), &tm, features)
    }

    #[test]
    fn gathers_are_instructions_where_llvm_emits_them() {
        const AVX2: &str = "+avx,+avx2,+fma,+sse4.2,+popcnt";
        // Skylake's gathers are fast; Haswell's and Zen 2's are scalarized by LLVM.
        assert!(support("skylake", AVX2).gather);
        assert!(!support("haswell", AVX2).gather);
        assert!(!support("znver2", AVX2).gather);
        assert!(!support("x86-64", "+sse4.2").gather);
        let avx512 = support("skylake-avx512", &format!("{AVX2},+avx512f,+avx512bw,+avx512vl"));
        assert!(avx512.gather && avx512.scatter && avx512.masked(1) && avx512.masked(8));
        let zen2 = support("znver2", AVX2);
        assert!(zen2.masked(4) && !zen2.masked(2) && !zen2.scatters(4) && !zen2.gathers(1));
    }
}
