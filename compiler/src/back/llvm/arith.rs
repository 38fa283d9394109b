//! Arithmetic: binary and unary operations, compares, conversions (saturation and
//! rounding modes included).

use super::*;

/// Elements a vector needs for its integer division to be done in floating point
/// ([`FnLower::quotient_through_floats`]); for two, the conversions cost what they save.
pub const FLOAT_QUOTIENT_MIN_LANES: u32 = 4;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// The quotient `a / d` (truncated; `signed` or not) of integer vectors of at least
    /// [`FLOAT_QUOTIENT_MIN_LANES`] elements of at most 32 bits, computed in floating point,
    /// or `None` where the integer division is the better code: scalars, short vectors,
    /// 64-bit elements, and divisors known at compile time (LLVM multiplies by their
    /// reciprocal). x86 and AArch64 have no vector integer division: LLVM divides such a
    /// vector one element at a time, each a long-latency scalar division (Zen 2: 14-30
    /// cycles, not pipelined), where a vector of doubles divides four or eight elements at a
    /// time. Exact: for integers with |a| < 2^53 and d != 0 the correctly rounded a / d is
    /// within |a / d| * 2^-53 < 1 / |d| of the true quotient, and a quotient that is not an
    /// integer lies at least 1 / |d| from the next integer, so truncating the rounded value
    /// gives the true quotient; elements of 8 and 16 bits (|a| < 2^24) divide as floats by
    /// the same argument. `d` has no zero element (and, signed, no -1): the caller replaced
    /// them.
    fn quotient_through_floats(&self, a: Val<'ctx>, d: Val<'ctx>, signed: bool) -> R<Option<Val<'ctx>>> {
        let ty = a.get_type();
        let (BasicValueEnum::VectorValue(av), BasicValueEnum::VectorValue(dv)) = (a, d) else { return Ok(None) };
        let bits = int_width(ty);
        if av.get_type().get_size() < FLOAT_QUOTIENT_MIN_LANES || bits > 32 || dv.is_const() {
            return Ok(None);
        }
        let float = if bits <= 16 { self.e.cx.f32_type() } else { self.e.cx.f64_type() };
        let fty: BasicTypeEnum<'ctx> = float.vec_type(av.get_type().get_size()).into();
        use InstructionOpcode as O;
        let (to_float, to_int) = if signed { (O::SIToFP, O::FPToSI) } else { (O::UIToFP, O::FPToUI) };
        let (fa, fd) = (self.cast(to_float, a, fty)?, self.cast(to_float, d, fty)?);
        let q = self.binop(O::FDiv, fa, fd)?;
        Ok(Some(self.cast(to_int, q, ty)?))
    }

    /// The truncated quotient of `a / d`, or with `remainder` the remainder (`signed` or
    /// not): in floating point where [`Self::quotient_through_floats`] takes it (the
    /// remainder then `a - q * d`, exact in wrapping arithmetic as |q * d| <= |a|), else
    /// LLVM's integer division. `d` has no zero element (and, signed, no -1).
    fn divide(&self, a: Val<'ctx>, d: Val<'ctx>, signed: bool, remainder: bool) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        match self.quotient_through_floats(a, d, signed)? {
            Some(q) if remainder => {
                let qd = self.binop(O::Mul, q, d)?;
                self.binop(O::Sub, a, qd)
            }
            Some(q) => Ok(q),
            None => {
                let op = match (signed, remainder) {
                    (false, false) => O::UDiv,
                    (false, true) => O::URem,
                    (true, false) => O::SDiv,
                    (true, true) => O::SRem,
                };
                self.binop(op, a, d)
            }
        }
    }

    pub(crate) fn lower_binary(&self, op: ir::BinaryOp, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        use ir::BinaryOp as B;
        use InstructionOpcode as O;
        let ty = a.get_type();
        let is_int = is_int_like(ty);
        let is_float = is_float_like(ty);
        let need_int = || -> R<()> {
            if is_int {
                Ok(())
            } else {
                bail!("integer operation on {ty}")
            }
        };
        let need_float = || -> R<()> {
            if is_float {
                Ok(())
            } else {
                bail!("float operation on {ty}")
            }
        };
        Ok(match op {
            B::IAdd => {
                need_int()?;
                self.binop(O::Add, a, b)?
            }
            B::ISub => {
                need_int()?;
                self.binop(O::Sub, a, b)?
            }
            B::IMul => {
                need_int()?;
                self.binop(O::Mul, a, b)?
            }
            B::UDiv | B::URem => {
                need_int()?;
                // Division by zero is undefined in OpenCL; it must not trap the host.
                let zero = self.cint(ty, 0)?;
                let one = self.cint(ty, 1)?;
                let is0 = self.icmp(IntPredicate::EQ, b, zero)?;
                let d = self.select(is0, one, b)?;
                self.divide(a, d, false, op == B::URem)?
            }
            B::SDiv | B::SRem | B::SMod => {
                need_int()?;
                let zero = self.cint(ty, 0)?;
                let one = self.cint(ty, 1)?;
                let minus1 = self.cint(ty, u64::MAX)?;
                let is0 = self.icmp(IntPredicate::EQ, b, zero)?;
                let ism1 = self.icmp(IntPredicate::EQ, b, minus1)?;
                let bad = self.binop(O::Or, is0, ism1)?;
                let d = self.select(bad, one, b)?;
                match op {
                    B::SDiv => {
                        // x / -1 = -x (wrapping, so INT_MIN / -1 does not trap).
                        let q = self.divide(a, d, true, false)?;
                        let neg = self.binop(O::Sub, zero, a)?;
                        self.select(ism1, neg, q)?
                    }
                    B::SRem => {
                        let r = self.divide(a, d, true, true)?;
                        self.select(ism1, zero, r)?
                    }
                    _ => {
                        let r = self.divide(a, d, true, true)?;
                        let r = self.select(ism1, zero, r)?;
                        // Sign of the divisor: add the divisor when signs differ.
                        let nz = self.icmp(IntPredicate::NE, r, zero)?;
                        let x = self.binop(O::Xor, r, b)?;
                        let diff = self.icmp(IntPredicate::SLT, x, zero)?;
                        let fix = self.binop(O::And, nz, diff)?;
                        let adj = self.binop(O::Add, r, b)?;
                        self.select(fix, adj, r)?
                    }
                }
            }
            B::FAdd => {
                need_float()?;
                self.binop(O::FAdd, a, b)?
            }
            B::FSub => {
                need_float()?;
                self.binop(O::FSub, a, b)?
            }
            B::FMul => {
                need_float()?;
                self.binop(O::FMul, a, b)?
            }
            B::FDiv => {
                need_float()?;
                self.binop(O::FDiv, a, b)?
            }
            B::FRem => {
                need_float()?;
                self.binop(O::FRem, a, b)?
            }
            B::FMod => {
                need_float()?;
                let r = self.binop(O::FRem, a, b)?;
                let zero = self.cfloat(ty, 0.0)?;
                let nz = self.fcmp(FloatPredicate::ONE, r, zero)?;
                let rneg = self.fcmp(FloatPredicate::OLT, r, zero)?;
                let bneg = self.fcmp(FloatPredicate::OLT, b, zero)?;
                let diff = self.binop(O::Xor, rneg, bneg)?;
                let fix = self.binop(O::And, nz, diff)?;
                let adj = self.binop(O::FAdd, r, b)?;
                self.select(fix, adj, r)?
            }
            B::Shl | B::LShr | B::AShr => {
                need_int()?;
                // Shift counts are taken modulo the bit width (OpenCL C), never poison.
                let b = if b.get_type() != ty { self.int_resize(b, ty, false)? } else { b };
                let w = int_width(ty) as u64;
                let mask = self.cint(ty, w - 1)?;
                let n = self.binop(O::And, b, mask)?;
                let opc = match op {
                    B::Shl => O::Shl,
                    B::LShr => O::LShr,
                    _ => O::AShr,
                };
                self.binop(opc, a, n)?
            }
            B::And | B::LogicalAnd => {
                need_int()?;
                self.binop(O::And, a, b)?
            }
            B::Or | B::LogicalOr => {
                need_int()?;
                self.binop(O::Or, a, b)?
            }
            B::Xor | B::LogicalNe => {
                need_int()?;
                self.binop(O::Xor, a, b)?
            }
            B::LogicalEq => self.icmp(IntPredicate::EQ, a, b)?,
        })
    }

    pub(crate) fn lower_unary(&self, op: UnaryOp, a: Val<'ctx>, rt: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let ty = a.get_type();
        Ok(match op {
            UnaryOp::INeg => {
                let zero = self.cint(ty, 0)?;
                self.binop(O::Sub, zero, a)?
            }
            UnaryOp::FNeg => {
                if !is_float_like(ty) {
                    bail!("fneg of {ty}");
                }
                match a {
                    BasicValueEnum::FloatValue(f) => self.b.build_float_neg(f, "")?.into(),
                    BasicValueEnum::VectorValue(v) => self.b.build_float_neg(v, "")?.into(),
                    _ => bail!("fneg of {ty}"),
                }
            }
            UnaryOp::Not | UnaryOp::LogicalNot => {
                let ones = self.cint(ty, u64::MAX)?;
                self.binop(O::Xor, a, ones)?
            }
            UnaryOp::BitCount => {
                let c = self.intr("llvm.ctpop", &[a])?;
                if c.get_type() != rt {
                    self.int_resize(c, rt, false)?
                } else {
                    c
                }
            }
            UnaryOp::BitReverse => self.intr("llvm.bitreverse", &[a])?,
            UnaryOp::IsNan => self.fcmp(FloatPredicate::UNO, a, a)?,
            UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::IsNormal => {
                let abs = self.intr("llvm.fabs", &[a])?;
                let inf = self.cfloat(ty, f64::INFINITY)?;
                match op {
                    UnaryOp::IsInf => self.fcmp(FloatPredicate::OEQ, abs, inf)?,
                    UnaryOp::IsFinite => self.fcmp(FloatPredicate::ONE, abs, inf)?,
                    _ => {
                        let min_normal = match int_width(ty) {
                            16 => 6.103515625e-05,
                            32 => f32::MIN_POSITIVE as f64,
                            _ => f64::MIN_POSITIVE,
                        };
                        let m = self.cfloat(ty, min_normal)?;
                        let ge = self.fcmp(FloatPredicate::OGE, abs, m)?;
                        let lt = self.fcmp(FloatPredicate::OLT, abs, inf)?;
                        self.binop(O::And, ge, lt)?
                    }
                }
            }
            UnaryOp::SignBitSet => {
                let w = int_width(ty);
                let it = with_elem(ty, int_type(self.cx(), w)?.into())?;
                let bits = self.cast(O::BitCast, a, it)?;
                let zero = self.cint(it, 0)?;
                self.icmp(IntPredicate::SLT, bits, zero)?
            }
            UnaryOp::Any | UnaryOp::All => {
                if !ty.is_vector_type() {
                    a
                } else {
                    let name = if op == UnaryOp::Any { "llvm.vector.reduce.or" } else { "llvm.vector.reduce.and" };
                    self.intr(name, &[a])?
                }
            }
        })
    }

    pub(crate) fn lower_compare(&self, op: CmpOp, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        use CmpOp as C;
        let ip = |p| self.icmp(p, a, b);
        let fp = |p| self.fcmp(p, a, b);
        match op {
            C::IEq => ip(IntPredicate::EQ),
            C::INe => ip(IntPredicate::NE),
            C::ULt => ip(IntPredicate::ULT),
            C::ULe => ip(IntPredicate::ULE),
            C::UGt => ip(IntPredicate::UGT),
            C::UGe => ip(IntPredicate::UGE),
            C::SLt => ip(IntPredicate::SLT),
            C::SLe => ip(IntPredicate::SLE),
            C::SGt => ip(IntPredicate::SGT),
            C::SGe => ip(IntPredicate::SGE),
            C::FOrdEq => fp(FloatPredicate::OEQ),
            C::FOrdNe => fp(FloatPredicate::ONE),
            C::FOrdLt => fp(FloatPredicate::OLT),
            C::FOrdLe => fp(FloatPredicate::OLE),
            C::FOrdGt => fp(FloatPredicate::OGT),
            C::FOrdGe => fp(FloatPredicate::OGE),
            C::FUnordEq => fp(FloatPredicate::UEQ),
            C::FUnordNe => fp(FloatPredicate::UNE),
            C::FUnordLt => fp(FloatPredicate::ULT),
            C::FUnordLe => fp(FloatPredicate::ULE),
            C::FUnordGt => fp(FloatPredicate::UGT),
            C::FUnordGe => fp(FloatPredicate::UGE),
            C::FOrdered => fp(FloatPredicate::ORD),
            C::FUnordered => fp(FloatPredicate::UNO),
        }
    }

    pub fn lower_convert(
        &self,
        op: ConvertOp,
        a: Val<'ctx>,
        rt: BasicTypeEnum<'ctx>,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> R<Val<'ctx>> {
        use ConvertOp as C;
        use InstructionOpcode as O;
        let at = a.get_type();
        Ok(match op {
            C::UConvert | C::SConvert | C::SatSToU | C::SatUToS => {
                if !is_int_like(at) || !is_int_like(rt) {
                    bail!("integer conversion from {at} to {rt}");
                }
                let (from, to) = (int_width(at), int_width(rt));
                let signed_src = matches!(op, C::SConvert | C::SatSToU);
                let sat = saturate || matches!(op, C::SatSToU | C::SatUToS);
                if !sat {
                    return self.int_resize(a, rt, signed_src);
                }
                let max_u = |w: u32| if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                let max_s = |w: u32| max_u(w) >> 1;
                match op {
                    C::UConvert => {
                        let x = if to < from { self.intr("llvm.umin", &[a, self.cint(at, max_u(to))?])? } else { a };
                        self.int_resize(x, rt, false)?
                    }
                    C::SConvert => {
                        let x = if to < from {
                            let hi = self.intr("llvm.smin", &[a, self.cint(at, max_s(to))?])?;
                            self.intr("llvm.smax", &[hi, self.cint(at, !max_s(to))?])?
                        } else {
                            a
                        };
                        self.int_resize(x, rt, true)?
                    }
                    C::SatSToU => {
                        let x = self.intr("llvm.smax", &[a, self.cint(at, 0)?])?;
                        let x = if to < from { self.intr("llvm.umin", &[x, self.cint(at, max_u(to))?])? } else { x };
                        self.int_resize(x, rt, false)?
                    }
                    _ => {
                        let x = if to <= from { self.intr("llvm.umin", &[a, self.cint(at, max_s(to))?])? } else { a };
                        self.int_resize(x, rt, false)?
                    }
                }
            }
            C::FConvert => {
                if !is_float_like(at) || !is_float_like(rt) {
                    bail!("float conversion from {at} to {rt}");
                }
                let (from, to) = (int_width(at), int_width(rt));
                if from == to {
                    a
                } else if from < to {
                    self.cast(O::FPExt, a, rt)?
                } else {
                    let f = self.cast(O::FPTrunc, a, rt)?;
                    match rounding {
                        None | Some(Rounding::NearestEven) => f,
                        Some(mode) => {
                            let back = self.cast(O::FPExt, f, at)?;
                            let gt = self.fcmp(FloatPredicate::OGT, back, a)?;
                            let lt = self.fcmp(FloatPredicate::OLT, back, a)?;
                            self.round_adjust(f, gt, lt, mode)?
                        }
                    }
                }
            }
            C::FToU | C::FToS => {
                if !is_float_like(at) || !is_int_like(rt) {
                    bail!("float to integer conversion from {at} to {rt}");
                }
                let x = match rounding {
                    None | Some(Rounding::TowardZero) => a,
                    Some(Rounding::NearestEven) => self.intr("llvm.roundeven", &[a])?,
                    Some(Rounding::TowardPositive) => self.intr("llvm.ceil", &[a])?,
                    Some(Rounding::TowardNegative) => self.intr("llvm.floor", &[a])?,
                };
                // Always saturating: out-of-range conversions are undefined in OpenCL C
                // without _sat, and LLVM's fptosi would turn them into poison.
                let _ = saturate;
                self.fp_to_int_sat(x, rt, op == C::FToS)?
            }
            C::UToF | C::SToF => {
                if !is_int_like(at) || !is_float_like(rt) {
                    bail!("integer to float conversion from {at} to {rt}");
                }
                let signed = op == C::SToF;
                let f = self.cast(if signed { O::SIToFP } else { O::UIToFP }, a, rt)?;
                let from = int_width(at);
                let mant = match int_width(rt) {
                    16 => 11,
                    32 => 24,
                    _ => 53,
                };
                let exact = if signed { from - 1 <= mant } else { from <= mant };
                match rounding {
                    None | Some(Rounding::NearestEven) => f,
                    Some(_) if exact => f,
                    Some(mode) => {
                        // Compare the rounded value with the integer exactly.
                        let limit = if signed { 2f64.powi(from as i32 - 1) } else { 2f64.powi(from as i32) };
                        let big = self.fcmp(FloatPredicate::OGE, f, self.cfloat(rt, limit)?)?;
                        // Below the limit the rounded value is an integer of the source type
                        // (rounding to nearest never passes its minimum), so converting it
                        // back is exact; the lanes at or above it convert 0 instead of poison.
                        let in_range = self.select(big, self.cfloat(rt, 0.0)?, f)?;
                        let back = self.cast(if signed { O::FPToSI } else { O::FPToUI }, in_range, at)?;
                        let (pgt, plt) = if signed {
                            (IntPredicate::SGT, IntPredicate::SLT)
                        } else {
                            (IntPredicate::UGT, IntPredicate::ULT)
                        };
                        let gt0 = self.icmp(pgt, back, a)?;
                        let gt = self.binop(O::Or, big, gt0)?;
                        let lt0 = self.icmp(plt, back, a)?;
                        let nbig = self.binop(O::Xor, big, self.cint(big.get_type(), 1)?)?;
                        let lt = self.binop(O::And, nbig, lt0)?;
                        self.round_adjust(f, gt, lt, mode)?
                    }
                }
            }
            C::Bitcast => {
                let agg = |t: BasicTypeEnum<'_>| t.is_struct_type() || t.is_array_type();
                if at == rt || (at.is_pointer_type() && rt.is_pointer_type()) {
                    a
                } else if at.is_pointer_type() && rt.is_int_type() {
                    self.cast(O::PtrToInt, a, rt)?
                } else if at.is_int_type() && rt.is_pointer_type() {
                    self.cast(O::IntToPtr, a, rt)?
                } else if agg(at) || agg(rt) {
                    bail!("bitcast from {at} to {rt}");
                } else if self.e.td.get_bit_size(&at) == self.e.td.get_bit_size(&rt) {
                    self.b.build_bit_cast(a, rt, "")?
                } else if self.e.alloc_size(at) == self.e.alloc_size(rt) {
                    // A 3-component vector and a 4-component one of the same size (as_type):
                    // through memory; the extra component is undefined.
                    let tmp =
                        self.scratch(if self.e.td.get_bit_size(&at) > self.e.td.get_bit_size(&rt) { at } else { rt })?;
                    self.b.build_store(tmp, a)?;
                    self.b.build_load(rt, tmp, "")?
                } else {
                    bail!("bitcast from {at} to {rt}");
                }
            }
            C::PtrToInt => {
                if !at.is_pointer_type() || !rt.is_int_type() {
                    bail!("ptrtoint from {at} to {rt}");
                }
                self.cast(O::PtrToInt, a, rt)?
            }
            C::IntToPtr => {
                if !at.is_int_type() || !rt.is_pointer_type() {
                    bail!("inttoptr from {at} to {rt}");
                }
                self.cast(O::IntToPtr, a, rt)?
            }
            C::PtrCast => {
                if at != rt {
                    bail!("address-space cast from {at} to {rt}");
                }
                a
            }
        })
    }

    /// `x` (already rounded to an integral value, or truncated by the conversion) converted to
    /// the integer type `rt`, saturating: NaN gives 0, values beyond the range its minimum or
    /// maximum. Not LLVM's `fptosi.sat` / `fptoui.sat`: the x86 back end converts those lane by
    /// lane with a compare and branch each (a float16 conversion at SIMD32 was 512 branches
    /// and two seconds of instruction selection). Lanes in range convert with a plain
    /// `fptosi` / `fptoui` (one vector instruction on AVX-512), the others are given their
    /// bound by a select.
    pub fn fp_to_int_sat(&self, x: Val<'ctx>, rt: BasicTypeEnum<'ctx>, signed: bool) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let at = x.get_type();
        let n = int_width(rt);
        let float_bits = int_width(at);
        let (lo, hi): (i128, i128) =
            if signed { (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1) } else { (0, (1i128 << n) - 1) };
        let lo_f = -float_at_most(-lo, float_bits);
        let hi_f = float_at_most(hi, float_bits);
        let (lo_c, hi_c) = (self.cfloat(at, lo_f)?, self.cfloat(at, hi_f)?);
        let below = self.fcmp(FloatPredicate::OLT, x, lo_c)?;
        let above = self.fcmp(FloatPredicate::OGT, x, hi_c)?;
        let ge_lo = self.fcmp(FloatPredicate::OGE, x, lo_c)?;
        let le_hi = self.fcmp(FloatPredicate::OLE, x, hi_c)?;
        // NaN is in neither bound's range: it converts 0.
        let in_range = self.binop(O::And, ge_lo, le_hi)?;
        let safe = self.select(in_range, x, self.cfloat(at, 0.0)?)?;
        let r = self.cast(if signed { O::FPToSI } else { O::FPToUI }, safe, rt)?;
        let r = self.select(above, self.cint(rt, hi as u64)?, r)?;
        self.select(below, self.cint(rt, lo as u64)?, r)
    }

    /// Moves `f` (rounded to nearest) one step toward the rounding direction `mode` where it
    /// overshot: `gt` = f is above the exact value, `lt` = below.
    pub fn round_adjust(&self, f: Val<'ctx>, gt: Val<'ctx>, lt: Val<'ctx>, mode: Rounding) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let ty = f.get_type();
        let w = int_width(ty);
        let it = with_elem(ty, int_type(self.cx(), w)?.into())?;
        let bits = self.cast(O::BitCast, f, it)?;
        let zero = self.cint(it, 0)?;
        let one = self.cint(it, 1)?;
        let sign = self.cint(it, 1u64 << (w - 1))?;
        let neg = self.icmp(IntPredicate::SLT, bits, zero)?;
        let mag = self.binop(O::And, bits, self.cint(it, (1u64 << (w - 1)) - 1)?)?;
        let is_zero = self.icmp(IntPredicate::EQ, mag, zero)?;
        let plus1 = self.binop(O::Add, bits, one)?;
        let minus1 = self.binop(O::Sub, bits, one)?;
        // One step toward +inf and toward -inf.
        let up_nonzero = self.select(neg, minus1, plus1)?;
        let up = self.select(is_zero, one, up_nonzero)?;
        let down_nonzero = self.select(neg, plus1, minus1)?;
        let neg_tiny = self.binop(O::Or, sign, one)?;
        let down = self.select(is_zero, neg_tiny, down_nonzero)?;
        let r = match mode {
            Rounding::NearestEven => bits,
            Rounding::TowardPositive => self.select(lt, up, bits)?,
            Rounding::TowardNegative => self.select(gt, down, bits)?,
            Rounding::TowardZero => {
                let pos = self.binop(O::Xor, neg, self.cint(neg.get_type(), 1)?)?;
                let dn = self.binop(O::And, gt, pos)?;
                let upc = self.binop(O::And, lt, neg)?;
                let r1 = self.select(dn, down, bits)?;
                self.select(upc, up, r1)?
            }
        };
        self.cast(O::BitCast, r, ty)
    }
}
