//! [`Ops`]: small mask and vector operations built with any builder (the body's, the
//! prologue's, a helper module's): the lowering core, vector mode and the Gen counting and
//! its helpers all build them.

use super::{call_intrinsic, Error, R};
use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::types::VectorType;
use inkwell::values::{FunctionValue, IntValue, VectorValue};
use inkwell::IntPredicate;

fn err(e: impl ToString) -> Error {
    Error(e.to_string())
}

/// Mask and vector operations built with `b` in function `f` of module `m`.
pub struct Ops<'b, 'ctx> {
    pub b: &'b Builder<'ctx>,
    pub m: &'b Module<'ctx>,
    pub f: FunctionValue<'ctx>,
}

impl<'ctx> Ops<'_, 'ctx> {
    pub fn cx(&self) -> inkwell::context::ContextRef<'ctx> {
        self.m.get_context()
    }

    pub fn umax(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let gt = self.b.build_int_compare(IntPredicate::UGT, a, b, "")?;
        Ok(self.b.build_select(gt, a, b, "")?.into_int_value())
    }

    /// The larger of two signed integers.
    pub fn smax(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let gt = self.b.build_int_compare(IntPredicate::SGT, a, b, "")?;
        Ok(self.b.build_select(gt, a, b, "")?.into_int_value())
    }

    /// The bits of a `<N x i1>` mask as an iN.
    pub fn mask_bits(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let n = std::num::NonZeroU32::new(m.get_type().get_size()).ok_or("an empty mask")?;
        let it = self.cx().custom_width_int_type(n).map_err(err)?;
        Ok(self.b.build_bit_cast(m, it, "")?.into_int_value())
    }

    /// Set bits of a `<N x i1>` mask, as i64. N may exceed 64 (the general line count of
    /// SIMD32 lanes of more than 64 bytes compares 96 or more points): the count, at most N,
    /// is then truncated to i64, not extended.
    pub fn popcount(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let bits = self.mask_bits(m)?;
        let c = call_intrinsic(self.b, self.m, "llvm.ctpop", &[bits.get_type().into()], &[bits.into()])?;
        Ok(self.b.build_int_cast_sign_flag(c.into_int_value(), self.cx().i64_type(), false, "")?)
    }

    pub fn splat64(&self, x: IntValue<'ctx>, n: u32) -> R<VectorValue<'ctx>> {
        let (i32t, vt) = (self.cx().i32_type(), self.cx().i64_type().vec_type(n));
        let v = self.b.build_insert_element(vt.get_undef(), x, i32t.const_zero(), "")?;
        Ok(self.b.build_shuffle_vector(v, vt.get_undef(), i32t.vec_type(n).const_zero(), "")?)
    }

    pub fn const_shuffle(
        &self,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
        idx: impl Iterator<Item = Option<u32>>,
    ) -> R<VectorValue<'ctx>> {
        let i32t = self.cx().i32_type();
        let m: Vec<IntValue<'ctx>> =
            idx.map(|c| c.map_or(i32t.get_undef(), |c| i32t.const_int(c as u64, false))).collect();
        Ok(self.b.build_shuffle_vector(a, b, VectorType::const_vector(&m), "")?)
    }

    /// `parts` one after the other (vectors of one element type).
    pub fn concat_all(&self, parts: &[VectorValue<'ctx>]) -> R<VectorValue<'ctx>> {
        let (first, rest) = parts.split_first().ok_or("nothing to concatenate")?;
        rest.iter().try_fold(*first, |acc, p| self.concat2(acc, *p))
    }

    /// `a` then `b` (vectors of one element type, any lengths).
    pub fn concat2(&self, a: VectorValue<'ctx>, b: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let (na, nb) = (a.get_type().get_size(), b.get_type().get_size());
        let n = na.max(nb);
        let pad = |v: VectorValue<'ctx>, len: u32| -> R<VectorValue<'ctx>> {
            if len == n {
                return Ok(v);
            }
            self.const_shuffle(v, v.get_type().get_undef(), (0..n).map(|j| (j < len).then_some(j)))
        };
        let (a2, b2) = (pad(a, na)?, pad(b, nb)?);
        self.const_shuffle(a2, b2, (0..na).chain((0..nb).map(|j| n + j)).map(Some))
    }
}
