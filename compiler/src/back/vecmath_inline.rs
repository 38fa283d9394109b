//! `exp` of a vector of floats, computed inline.
//!
//! SLEEF's `Sleef_expf8_u10` is a call: every vector live across it is saved and restored
//! around it (all vector registers are caller-saved), and LLVM cannot interleave it with the
//! kernel's other work. Black-Scholes (three `exp` a work-item) ran 18% faster with this
//! inline form, the classic reduction with the Cephes polynomial, a dozen vector
//! instructions:
//!
//! - `n = roundeven(x log2(e))`, `r = x - n ln(2)` with ln(2) in two parts (`LN2_HI` has 9
//!   significant bits, so `n LN2_HI` is exact for every `n` used): `|r| <= ln(2)/2`;
//! - `e^r = 1 + r + r^2 P(r)`, P of degree 5;
//! - the result scaled by `2^n` in two exact powers of two, `2^(n/2)` then `2^(n - n/2)`, so
//!   that `n` from -150 to 128 never leaves the exponent range: the first product is exact,
//!   the second rounds once, into a denormal where the result is one, to infinity above
//!   88.72.
//!
//! `x` is clamped to [-104, 89] first (`e^-104` is below half the least denormal, `e^89`
//! above the largest float), so infinities come out as 0 and +inf; a NaN is returned as it
//! came. The error stays within 1 ulp of the exact result (the test
//! `vector_exp_is_within_two_ulp` sweeps every 61st float: at worst 0.995 ulp), inside
//! OpenCL C's 3 ulp. An inline `log` of the same kind (Cephes, degree 8) was tried and
//! made Black-Scholes 10% slower than SLEEF's `logf`, which stays.

use super::llvm::{lanes, FnLower, Val, R};
use inkwell::types::BasicTypeEnum;
use inkwell::values::InstructionOpcode as O;
use inkwell::FloatPredicate;

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln(2) = LN2_HI + LN2_LO; LN2_HI = 355/512 (9 significant bits).
const LN2_HI: f64 = 0.693_359_375;
const LN2_LO: f64 = -2.121_944_400_546_905_8e-4;
/// P(r), highest degree first.
const P: [f64; 6] = [
    1.987_569_150_0e-4,
    1.398_199_950_7e-3,
    8.333_451_907_3e-3,
    4.166_579_589_4e-2,
    1.666_666_545_9e-1,
    5.000_000_120_1e-1,
];

/// Whether [`exp`] computes on values of type `t` (vectors of 32-bit floats).
pub fn applies(t: BasicTypeEnum<'_>) -> bool {
    match t {
        BasicTypeEnum::VectorType(v) => v.get_element_type().into_float_type().get_bit_width() == 32 && lanes(t) > 1,
        _ => false,
    }
}

/// `exp(x)` for a vector of 32-bit floats `x` (see the module's text).
pub fn exp<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<Val<'ctx>> {
    let t = x.get_type();
    let c = |v: f64| fx.cfloat(t, v);
    let fma = |a: Val<'ctx>, b: Val<'ctx>, acc: Val<'ctx>| fx.intr("llvm.fmuladd", &[a, b, acc]);
    let lo = fx.intr("llvm.maxnum", &[x, c(-104.0)?])?;
    let xc = fx.intr("llvm.minnum", &[lo, c(89.0)?])?;
    let n = fx.intr("llvm.roundeven", &[fx.binop(O::FMul, xc, c(LOG2E)?)?])?;
    let r = fma(n, c(-LN2_HI)?, xc)?;
    let r = fma(n, c(-LN2_LO)?, r)?;
    let mut p = c(P[0])?;
    for &k in &P[1..] {
        p = fma(p, r, c(k)?)?;
    }
    let r2 = fx.binop(O::FMul, r, r)?;
    let y = fx.binop(O::FAdd, fma(p, r2, r)?, c(1.0)?)?;
    // 2^n as two powers of two, each built in the exponent field.
    let it: BasicTypeEnum<'ctx> = fx.cx().i32_type().vec_type(lanes(t)).into();
    let ci = |v: u64| fx.cint(it, v);
    let ni = fx.cast(O::FPToSI, n, it)?;
    let n1 = fx.binop(O::AShr, ni, ci(1)?)?;
    let n2 = fx.binop(O::Sub, ni, n1)?;
    let pow2 = |k: Val<'ctx>| -> R<Val<'ctx>> {
        let biased = fx.binop(O::Add, k, ci(127)?)?;
        fx.cast(O::BitCast, fx.binop(O::Shl, biased, ci(23)?)?, t)
    };
    let scaled = fx.binop(O::FMul, fx.binop(O::FMul, y, pow2(n1)?)?, pow2(n2)?)?;
    let nan = fx.fcmp(FloatPredicate::UNO, x, x)?;
    fx.select(nan, x, scaled)
}
