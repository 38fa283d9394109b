//! Vector math built-ins: SLEEF's vector functions instead of one libm call per lane.
//!
//! A math built-in on a vector (`float4`, `float16`, `double8`, the `<W x float>` of the
//! work-item vectorizer, any width from 2 to 64) is split into chunks of the SIMD widths the
//! target can pass in registers: 4, 8 or 16 floats (2, 4 or 8 doubles) for SSE, AVX and
//! AVX-512. A chunk is the smallest of these that holds what is left; its spare lanes repeat a
//! real lane. Each chunk is one call of SLEEF's dispatcher entry point (`Sleef_sinf16_u10`,
//! ...), which picks the ISA variant (FMA or not) at run time. Half lanes go through float.
//!
//! SLEEF (libsleef.so.3, Debian package `libsleef3`) is opened once per process and its
//! functions are called by name, like `mathlib`'s (`super::host`: the JIT defines the names
//! as this process's addresses). If the library is missing, or the target's
//! `CodegenKnobs::vector_math` is off (`SOFTCL_VECMATH=0`), [`call`] answers `None` and the
//! caller keeps the per-lane libm path (the program's build log says so in one line).
//!
//! Accuracy (docs/MATH.md, [`Accuracy`]): the `_u10` functions are within 1.0 ulp, `_u05`
//! within 0.5x ulp, `erfc`'s `_u15` within 1.5 ulp, `_u35` within 3.5 ulp, which is used
//! where the built-in's OpenCL C full-profile bound is at least 4 ulp and for `native_*` /
//! `half_*`. SLEEF 3.5.1's defects at extreme arguments are corrected here (`fix_overflow`,
//! `fix_pow`).

use super::llvm::{bail, elem_type, lanes, with_elem, Error, FnLower, Val, R};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, IntValue};
use std::sync::OnceLock;

/// Which of SLEEF's variants a call may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accuracy {
    /// Within the OpenCL C full-profile bound of the built-in itself: the 3.5-ulp variant
    /// where that bound is 4 ulp or more (sin, cos, tan, asin, acos, atan2, sinh, cosh,
    /// tanh, hypot), the most accurate one otherwise.
    Bound,
    /// The most accurate variant: a step inside a built-in with its own error budget
    /// (sinpi's sin, asinpi's asin, ...).
    Tight,
    /// `native_*`, `half_*`: the 3.5-ulp variant wherever SLEEF has one.
    Native,
}

/// A function SLEEF computes on vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Exp2,
    Exp10,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Pow,
    Cbrt,
    Hypot,
    Erf,
    Erfc,
    Tgamma,
    Lgamma,
    Sinpi,
    Cospi,
    Nextafter,
}

impl Func {
    fn name(self) -> &'static str {
        use Func::*;
        match self {
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Exp => "exp",
            Exp2 => "exp2",
            Exp10 => "exp10",
            Expm1 => "expm1",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Pow => "pow",
            Cbrt => "cbrt",
            Hypot => "hypot",
            Erf => "erf",
            Erfc => "erfc",
            Tgamma => "tgamma",
            Lgamma => "lgamma",
            Sinpi => "sinpi",
            Cospi => "cospi",
            Nextafter => "nextafter",
        }
    }

    pub fn arity(self) -> usize {
        use Func::*;
        match self {
            Atan2 | Pow | Hypot | Nextafter => 2,
            _ => 1,
        }
    }

    /// Whether SLEEF has a 3.5-ulp variant.
    fn has_u35(self) -> bool {
        use Func::*;
        matches!(
            self,
            Sin | Cos
                | Tan
                | Asin
                | Acos
                | Atan
                | Atan2
                | Sinh
                | Cosh
                | Tanh
                | Exp2
                | Exp10
                | Log
                | Log2
                | Cbrt
                | Hypot
        )
    }

    /// SLEEF's accuracy suffix for `acc`.
    fn suffix(self, acc: Accuracy) -> &'static str {
        use Func::*;
        let u35 = self.has_u35()
            && match acc {
                Accuracy::Native => true,
                // OpenCL C full profile: 4 ulp or more for these (float and double). Not atan,
                // whose bound is 5 ulp: pyopencl's test holds float atan to 2e-7 over
                // (-10, 10), about 1.7 ulp near pi/2, which PoCL meets and the 3.5-ulp
                // variant missed (2 ulp).
                Accuracy::Bound => {
                    matches!(self, Sin | Cos | Tan | Asin | Acos | Atan2 | Sinh | Cosh | Tanh | Hypot)
                }
                Accuracy::Tight => false,
            };
        match self {
            _ if u35 => "_u35",
            Hypot | Sinpi | Cospi => "_u05",
            Erfc => "_u15",
            Nextafter => "",
            _ => "_u10",
        }
    }

    /// Whether float lanes are computed in double (and rounded once): SLEEF's float sinh and
    /// cosh overflow early (to inf from |x| = 88.72, where the results reach FLT_MAX only at
    /// 89.42); its float tgamma is 29 ulp off near FLT_MIN (x = -34.996).
    fn float_in_double(self) -> bool {
        matches!(self, Func::Sinh | Func::Cosh | Func::Tgamma)
    }

    /// The SLEEF symbol for `lanes` lanes of `bits`-bit floats.
    pub fn symbol(self, bits: u32, lanes: u32, acc: Accuracy) -> String {
        let t = if bits == 64 { 'd' } else { 'f' };
        format!("Sleef_{}{t}{lanes}{}", self.name(), self.suffix(acc))
    }
}

/// The widest vector (in bits) that the code generated for `features` (an LLVM feature
/// string, "+avx2,+fma,...") passes in one register and that this host runs: 512, 256, 128,
/// or 0 for none.
pub fn vector_bits(features: &str) -> u32 {
    let has = |f: &str| features.split(',').any(|x| x == format!("+{f}"));
    #[cfg(target_arch = "x86_64")]
    {
        if has("avx512f") && std::arch::is_x86_feature_detected!("avx512f") {
            return 512;
        }
        if has("avx") && std::arch::is_x86_feature_detected!("avx") {
            return 256;
        }
        if features.split(',').any(|x| x == "-sse2") {
            return 0;
        }
        128
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = has;
        0
    }
}

/// libsleef, opened once and never closed (the addresses generated code calls stay valid).
fn library() -> Option<&'static libloading::Library> {
    static LIB: OnceLock<Option<libloading::Library>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading libsleef runs its ELF initialisers, which only set up SLEEF's
        // dispatch tables; the library is kept in a static and never unloaded.
        unsafe { libloading::Library::new("libsleef.so.3") }.ok()
    })
    .as_ref()
}

/// The address of a SLEEF function, if the library has it.
pub(crate) fn lookup(name: &str) -> Option<usize> {
    let lib = library()?;
    // SAFETY: the symbol is only read as an address here; generated code calls it with the
    // signature SLEEF documents for that name (vectors in, vector out, C calling convention).
    let sym = unsafe { lib.get::<unsafe extern "C" fn()>(name.as_bytes()) }.ok()?;
    Some(*sym as usize)
}

/// Whether the vector path can be used at all; `Err` holds the build-log note explaining why
/// not (for a host with SIMD registers).
pub fn status(vector_bits: u32, vector_math: bool) -> Result<(), String> {
    if vector_bits < 128 {
        return Err("vector math: the target has no SIMD registers; math built-ins run per lane".into());
    }
    if !vector_math {
        return Err("vector math: SOFTCL_VECMATH=0; math built-ins on vectors run per lane (libm)".into());
    }
    if library().is_none() {
        return Err(
            "vector math: libsleef.so.3 (package libsleef3) not found; math built-ins on vectors run per lane (libm)"
                .into(),
        );
    }
    Ok(())
}

/// Splits `n` lanes into chunks `(offset, valid lanes, chunk width)`, with chunk widths from
/// `widths` (ascending): full chunks of the widest, then the smallest width that holds the rest.
fn plan(n: u32, widths: &[u32]) -> Vec<(u32, u32, u32)> {
    let Some(&max) = widths.last() else { return Vec::new() };
    let mut out = Vec::new();
    let mut off = 0;
    while off < n {
        let rest = n - off;
        let w = widths.iter().copied().find(|&w| w >= rest).unwrap_or(max);
        let len = rest.min(w);
        out.push((off, len, w));
        off += len;
    }
    out
}

/// `f` applied lane-wise to `args` (all of the vector type `t`) by SLEEF, or `None` when the
/// vector path does not apply: `t` is not a vector of half/float/double, the target or the
/// library does not allow it, or SLEEF lacks a symbol.
pub fn call<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    f: Func,
    acc: Accuracy,
    t: BasicTypeEnum<'ctx>,
    args: &[Val<'ctx>],
) -> R<Option<Val<'ctx>>> {
    // `exp` of floats inline (`vecmath_inline`; not for a step that counts on SLEEF's own
    // bound).
    if f == Func::Exp && acc != Accuracy::Tight && fx.e.knobs.vector_math && super::vecmath_inline::applies(t) {
        if let [x] = args {
            if x.get_type() == t {
                return super::vecmath_inline::exp(fx, *x).map(Some);
            }
        }
    }
    call_sleef(fx, f, acc, t, args, true)
}

/// [`call`]; `fix` applies the corrections of SLEEF's defects (the corrections' own calls
/// do without).
fn call_sleef<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    f: Func,
    acc: Accuracy,
    t: BasicTypeEnum<'ctx>,
    args: &[Val<'ctx>],
    fix: bool,
) -> R<Option<Val<'ctx>>> {
    let bits = fx.e.math_vector_bits;
    if !t.is_vector_type() || args.len() != f.arity() || args.iter().any(|a| a.get_type() != t) {
        return Ok(None);
    }
    let BasicTypeEnum::FloatType(ft) = elem_type(t) else { return Ok(None) };
    let ew = match ft.get_bit_width() {
        16 | 32 if f.float_in_double() => 64,
        16 | 32 => 32,
        64 => 64,
        _ => return Ok(None),
    };
    if status(bits, fx.e.knobs.vector_math).is_err() {
        return Ok(None);
    }
    let widths: Vec<u32> = [128, 256, 512].into_iter().filter(|&b| b <= bits).map(|b| b / ew).collect();
    let chunks = plan(lanes(t), &widths);
    // Every symbol first, so that a missing one leaves no half-built code behind.
    let mut names = Vec::with_capacity(chunks.len());
    for &(_, _, w) in &chunks {
        let name = f.symbol(ew, w, acc);
        if lookup(&name).is_none() {
            return Ok(None);
        }
        names.push(name);
    }

    let ct: BasicTypeEnum<'ctx> = if ew == 64 { fx.cx().f64_type().into() } else { fx.cx().f32_type().into() };
    let wt = with_elem(t, ct)?;
    let args: Vec<Val<'ctx>> = if wt != t {
        args.iter().map(|a| fx.cast(inkwell::values::InstructionOpcode::FPExt, *a, wt)).collect::<R<_>>()?
    } else {
        args.to_vec()
    };
    let n = lanes(t);
    let mut out: Option<Val<'ctx>> = None;
    for (&(off, len, w), name) in chunks.iter().zip(names) {
        let whole = off == 0 && len == n && w == n;
        let sub: Vec<Val<'ctx>> = if whole {
            args.clone()
        } else {
            let mask: Vec<u32> = (0..w).map(|i| if i < len { off + i } else { off }).collect();
            args.iter().map(|a| shuffle(fx, *a, None, &mask)).collect::<R<_>>()?
        };
        let r = sleef_call(fx, &name, ct, w, &sub)?;
        if whole {
            out = Some(r);
            continue;
        }
        // The chunk's lanes at their place in an n-lane vector, the others poison.
        let placed: Vec<Option<u32>> = (0..n).map(|i| (i >= off && i < off + len).then(|| i - off)).collect();
        let spread = shuffle_opt(fx, r, None, &placed)?;
        out = Some(match out {
            None => spread,
            Some(prev) => {
                let mask: Vec<u32> = (0..n).map(|i| if i >= off && i < off + len { n + i } else { i }).collect();
                shuffle(fx, prev, Some(spread), &mask)?
            }
        });
    }
    let Some(mut r) = out else { return Ok(None) };
    if fix && matches!(f, Func::Asinh | Func::Acosh | Func::Sinh | Func::Cosh | Func::Log1p | Func::Tgamma) {
        r = fix_overflow(fx, f, acc, args[0], r)?;
    }
    if fix && f == Func::Pow && ew == 64 {
        r = fix_pow(fx, acc, args[0], args[1], r)?;
    }
    let r = if wt != t { fx.cast(inkwell::values::InstructionOpcode::FPTrunc, r, t)? } else { r };
    Ok(Some(r))
}

/// Corrections of SLEEF 3.5.1 (docs/MATH.md lists them). Where it overflows early, the
/// result from a formula without the overflow:
/// asinh and acosh return +-inf once x^2 overflows (|x| > ~1.3e154 in double, ~1.8e19 in
/// float); there asinh(x) = sign(x) (log|x| + log 2) and acosh(x) = log x + log 2 to well
/// within an ulp. Double sinh and cosh overflow from |x| ~ 709.8 (the results reach DBL_MAX
/// only at 710.48): beyond 709, w = exp(|x|/2) (|x|/2 is exact) gives (w/2) w within 3 ulp.
/// log1p of a huge x is log x; double tgamma below -170 is glibc's.
fn fix_overflow<'ctx>(fx: &FnLower<'_, 'ctx, '_>, f: Func, acc: Accuracy, x: Val<'ctx>, r: Val<'ctx>) -> R<Val<'ctx>> {
    use inkwell::values::InstructionOpcode as O;
    use inkwell::FloatPredicate as P;
    let t = x.get_type();
    let double = elem_type(t).into_float_type().get_bit_width() == 64;
    let ax = fx.intr("llvm.fabs", &[x])?;
    let sub = |g: Func, a: Val<'ctx>| -> R<Val<'ctx>> {
        call_sleef(fx, g, acc, t, &[a], false)?.ok_or_else(|| Error(format!("vector {g:?} unavailable")))
    };
    match f {
        Func::Asinh | Func::Acosh => {
            // acosh: x itself (a huge negative x stays SLEEF's NaN).
            let arg = if f == Func::Asinh { ax } else { x };
            let big = fx.fcmp(P::OGT, arg, fx.cfloat(t, if double { 1.0e150 } else { 1.0e18 })?)?;
            let l = fx.binop(O::FAdd, sub(Func::Log, ax)?, fx.cfloat(t, std::f64::consts::LN_2)?)?;
            let l = if f == Func::Asinh { fx.intrinsic("llvm.copysign", &[t], &[l, x])? } else { l };
            fx.select(big, l, r)
        }
        Func::Sinh | Func::Cosh if double => {
            let big = fx.fcmp(P::OGT, ax, fx.cfloat(t, 709.0)?)?;
            let w = sub(Func::Exp, fx.binop(O::FMul, ax, fx.cfloat(t, 0.5)?)?)?;
            let v = fx.binop(O::FMul, fx.binop(O::FMul, w, fx.cfloat(t, 0.5)?)?, w)?;
            let v = if f == Func::Sinh { fx.intrinsic("llvm.copysign", &[t], &[v, x])? } else { v };
            fx.select(big, v, r)
        }
        Func::Log1p => {
            // log1p(x) = log(x) to within 1/x relative once 1 + x rounds to x.
            let big = fx.fcmp(P::OGT, x, fx.cfloat(t, if double { 1.0e300 } else { 1.0e30 })?)?;
            fx.select(big, sub(Func::Log, x)?, r)
        }
        Func::Tgamma => {
            // SLEEF's double tgamma loses all accuracy below x = -171 (results near and below
            // DBL_MIN: 952 ulp at -172 + 1e-9, +0 for -0 underflows): glibc there, per lane,
            // in a branch taken only when some lane needs it.
            let bad = fx.fcmp(P::OLT, x, fx.cfloat(t, -170.0)?)?;
            rare_fix(fx, bad, r, || fx.libm("tgammaf", "tgamma", t, &[x]))
        }
        _ => Ok(r),
    }
}

/// SLEEF's double pow returns +-inf for results within a few ulp of DBL_MAX (pow(DBL_MAX, 1),
/// pow(2^512 - x, 2)). Where it returned an infinity for finite operands, the result is
/// recomputed without the overflow (the sign is that of x for odd integers y), in a branch
/// taken only when some lane needs it.
fn fix_pow<'ctx>(fx: &FnLower<'_, 'ctx, '_>, acc: Accuracy, x: Val<'ctx>, y: Val<'ctx>, r: Val<'ctx>) -> R<Val<'ctx>> {
    use inkwell::values::InstructionOpcode as O;
    use inkwell::FloatPredicate as P;
    let t = x.get_type();
    let inf = fx.cfloat(t, f64::INFINITY)?;
    let ar = fx.intr("llvm.fabs", &[r])?;
    let ax = fx.intr("llvm.fabs", &[x])?;
    let ay = fx.intr("llvm.fabs", &[y])?;
    let r_inf = fx.fcmp(P::OEQ, ar, inf)?;
    let x_fin = fx.fcmp(P::OLT, ax, inf)?;
    let y_fin = fx.fcmp(P::OLT, ay, inf)?;
    let x_nz = fx.fcmp(P::ONE, ax, fx.cfloat(t, 0.0)?)?;
    let bad = fx.binop(O::And, fx.binop(O::And, r_inf, x_fin)?, fx.binop(O::And, y_fin, x_nz)?)?;
    rare_fix(fx, bad, r, || {
        let raw = |g: Func, a: &[Val<'ctx>]| -> R<Val<'ctx>> {
            call_sleef(fx, g, acc, t, a, false)?.ok_or_else(|| Error(format!("vector {g:?} unavailable")))
        };
        // |y| <= 1000: pow(|x| s, y) * 2^(+-y) with s = 1/2 for |x| >= 1 (2 for |x| < 1): the
        // scaled power is far from overflow and 2^(+-y) is finite (within 3 ulp in all).
        let ge1 = fx.fcmp(P::OGE, ax, fx.cfloat(t, 1.0)?)?;
        let s = fx.select(ge1, fx.cfloat(t, 0.5)?, fx.cfloat(t, 2.0)?)?;
        let e = fx.select(ge1, y, fx.binop(O::FMul, y, fx.cfloat(t, -1.0)?)?)?;
        let small = fx.binop(O::FMul, raw(Func::Pow, &[fx.binop(O::FMul, ax, s)?, y])?, raw(Func::Exp2, &[e])?)?;
        // Larger |y| (x close to 1): pow(|x|, y/2)^2, which may still overflow within 2 ulp
        // of DBL_MAX.
        let hy = fx.binop(O::FMul, y, fx.cfloat(t, 0.5)?)?;
        let v = raw(Func::Pow, &[ax, hy])?;
        let big = fx.binop(O::FMul, v, v)?;
        let y_small = fx.fcmp(P::OLE, ay, fx.cfloat(t, 1000.0)?)?;
        let v2 = fx.select(y_small, small, big)?;
        // y odd: an integer whose half is not one.
        let y_int = fx.fcmp(P::OEQ, fx.intr("llvm.rint", &[y])?, y)?;
        let h_frac = fx.fcmp(P::ONE, fx.intr("llvm.rint", &[hy])?, hy)?;
        let odd = fx.binop(O::And, y_int, h_frac)?;
        let signed = fx.intrinsic("llvm.copysign", &[t], &[v2, x])?;
        fx.select(odd, signed, v2)
    })
}

/// `r` with the lanes where `bad` holds replaced by `alt()`, which is computed in a branch
/// taken only when some lane is bad (the common case pays one reduction and a branch).
fn rare_fix<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    bad: Val<'ctx>,
    r: Val<'ctx>,
    alt: impl FnOnce() -> R<Val<'ctx>>,
) -> R<Val<'ctx>> {
    let any = fx.intr("llvm.vector.reduce.or", &[bad])?.into_int_value();
    fx.unless_slow_shared(any, r, ("math.fix", "math.done"), || fx.select(bad, alt()?, r))
}

/// One call of the SLEEF function `name` (`super::host`) on `w`-lane vectors of `elem`.
fn sleef_call<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    name: &str,
    elem: BasicTypeEnum<'ctx>,
    w: u32,
    args: &[Val<'ctx>],
) -> R<Val<'ctx>> {
    let BasicTypeEnum::FloatType(et) = elem else { bail!("SLEEF call on a non-float type") };
    let vt = et.vec_type(w);
    let ps: Vec<BasicMetadataTypeEnum<'ctx>> = args.iter().map(|_| vt.into()).collect();
    let fn_ty = vt.fn_type(&ps, false);
    let callee = super::host::declare(&fx.e.m, name, fn_ty).as_global_value().as_pointer_value();
    let cargs: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
    let call = fx.b.build_indirect_call(fn_ty, callee, &cargs, "")?;
    // SLEEF functions are pure: no errno, no state.
    let cx = fx.cx();
    for name in ["nounwind", "willreturn"] {
        let kind = Attribute::get_named_enum_kind_id(name);
        if kind != 0 {
            call.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind, 0));
        }
    }
    let kind = Attribute::get_named_enum_kind_id("memory");
    if kind != 0 {
        call.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind, 0));
    }
    // A 512-bit vector is passed in a zmm register only where 512-bit vectors are legal
    // types: hosts that prefer 256-bit vectors split it into two ymm registers unless the
    // calling function asks for 512-bit legality.
    need_vector_width(fx, w * et.get_bit_width());
    call.try_as_basic_value().basic().ok_or_else(|| Error("SLEEF call without a result".into()))
}

/// Makes `bits`-wide vectors legal types in the function being lowered
/// (`min-legal-vector-width`).
fn need_vector_width(fx: &FnLower<'_, '_, '_>, bits: u32) {
    let key = "min-legal-vector-width";
    let have = fx
        .llf
        .get_string_attribute(AttributeLoc::Function, key)
        .and_then(|a| a.get_string_value().to_str().ok().and_then(|s| s.parse::<u32>().ok()))
        .unwrap_or(0);
    if bits > have {
        fx.llf.add_attribute(AttributeLoc::Function, fx.cx().create_string_attribute(key, &bits.to_string()));
    }
}

/// Whether code for `features` (an LLVM feature string) may use AVX-512F and AVX-512VL
/// instructions on this host: `rsqrt` then uses `vrsqrt14ps` ([`rsqrt`]).
pub fn has_rsqrt14(features: &str) -> bool {
    let has = |f: &str| features.split(',').any(|x| x == format!("+{f}"));
    #[cfg(target_arch = "x86_64")]
    {
        has("avx512f")
            && has("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = has;
        false
    }
}

/// `rsqrt(x)` on a vector of floats where the target has AVX-512 ([`has_rsqrt14`]):
/// `vrsqrt14ps` (relative error below 2^-14) and one Newton-Raphson step,
/// y1 = y0 + (y0/2) (1 - x y0 y0) with the residual from an FMA, instead of a square root
/// and a division (the divider's throughput bounds an n-body loop). The step leaves a
/// relative error of 1.5 (2^-14)^2 = 2^-27.4 plus about 2^-25 from the rounding of x y0 and
/// half an ulp from the final FMA: within 1.1 ulp, inside OpenCL's 2 ulp for `rsqrt`
/// (tested against a double reference on every float in [1, 4), which covers every mantissa
/// at both exponent parities, plus denormals, zeros, infinities, NaN and negative numbers:
/// `conformance/tests/vectorizer_math.rs`). Where x y0 is NaN (x = +-0 with y0 = +-inf,
/// x = +inf with y0 = 0, x negative or NaN with y0 NaN) the estimate itself is the exact
/// answer and is returned. `None`: not a float vector, or no AVX-512 (the caller divides
/// 1 by the square root).
pub fn rsqrt<'ctx>(fx: &FnLower<'_, 'ctx, '_>, t: BasicTypeEnum<'ctx>, x: Val<'ctx>) -> R<Option<Val<'ctx>>> {
    use inkwell::values::InstructionOpcode as O;
    if !fx.e.rsqrt14 || !t.is_vector_type() || x.get_type() != t {
        return Ok(None);
    }
    let f32t = fx.cx().f32_type();
    if elem_type(t) != f32t.into() {
        return Ok(None);
    }
    let n = lanes(t);
    let mut out: Option<Val<'ctx>> = None;
    for (off, len, w) in plan(n, &[4, 8, 16]) {
        let whole = off == 0 && len == n && w == n;
        let sub = if whole {
            x
        } else {
            let mask: Vec<u32> = (0..w).map(|i| if i < len { off + i } else { off }).collect();
            shuffle(fx, x, None, &mask)?
        };
        let (name, mask_ty) = match w {
            16 => ("llvm.x86.avx512.rsqrt14.ps.512", fx.cx().i16_type()),
            8 => ("llvm.x86.avx512.rsqrt14.ps.256", fx.cx().i8_type()),
            _ => ("llvm.x86.avx512.rsqrt14.ps.128", fx.cx().i8_type()),
        };
        let vt = f32t.vec_type(w);
        let all = mask_ty.const_all_ones();
        let est = fx.intrinsic(name, &[], &[sub, vt.get_poison().into(), all.into()])?;
        need_vector_width(fx, w * 32);
        let r = if whole {
            est
        } else {
            let placed: Vec<Option<u32>> = (0..n).map(|i| (i >= off && i < off + len).then(|| i - off)).collect();
            shuffle_opt(fx, est, None, &placed)?
        };
        out = Some(match out {
            None => r,
            Some(prev) => {
                let mask: Vec<u32> = (0..n).map(|i| if i >= off && i < off + len { n + i } else { i }).collect();
                shuffle(fx, prev, Some(r), &mask)?
            }
        });
    }
    let Some(y0) = out else { return Ok(None) };
    let h = fx.binop(O::FMul, x, y0)?;
    let neg_h = fx.b.build_float_neg(h.into_vector_value(), "")?.into();
    let one = fx.cfloat(t, 1.0)?;
    let r = fx.intrinsic("llvm.fma", &[t], &[neg_h, y0, one])?;
    let half_y0 = fx.binop(O::FMul, y0, fx.cfloat(t, 0.5)?)?;
    let y1 = fx.intrinsic("llvm.fma", &[t], &[half_y0, r, y0])?;
    let special = fx.fcmp(inkwell::FloatPredicate::UNO, h, h)?;
    Ok(Some(fx.select(special, y0, y1)?))
}

/// `shufflevector a, b (or poison), mask`.
fn shuffle<'ctx>(fx: &FnLower<'_, 'ctx, '_>, a: Val<'ctx>, b: Option<Val<'ctx>>, mask: &[u32]) -> R<Val<'ctx>> {
    let m: Vec<Option<u32>> = mask.iter().map(|&i| Some(i)).collect();
    shuffle_opt(fx, a, b, &m)
}

/// `shufflevector` with poison lanes where the mask has `None`.
fn shuffle_opt<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    a: Val<'ctx>,
    b: Option<Val<'ctx>>,
    mask: &[Option<u32>],
) -> R<Val<'ctx>> {
    let BasicValueEnum::VectorValue(av) = a else { bail!("shuffle of a scalar") };
    let bv = match b {
        Some(BasicValueEnum::VectorValue(v)) => v,
        Some(_) => bail!("shuffle of a scalar"),
        None => av.get_type().get_poison(),
    };
    let elems: Vec<IntValue<'ctx>> = mask
        .iter()
        .map(|m| match m {
            Some(i) => fx.i32().const_int(u64::from(*i), false),
            None => fx.i32().get_poison(),
        })
        .collect();
    let mv = inkwell::types::VectorType::const_vector(&elems);
    Ok(fx.b.build_shuffle_vector(av, bv, mv, "")?.as_basic_value_enum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_plans() {
        let w = [4, 8, 16];
        assert_eq!(plan(3, &w), vec![(0, 3, 4)]);
        assert_eq!(plan(4, &w), vec![(0, 4, 4)]);
        assert_eq!(plan(16, &w), vec![(0, 16, 16)]);
        assert_eq!(plan(24, &w), vec![(0, 16, 16), (16, 8, 8)]);
        assert_eq!(plan(64, &w), vec![(0, 16, 16), (16, 16, 16), (32, 16, 16), (48, 16, 16)]);
        assert_eq!(plan(19, &w), vec![(0, 16, 16), (16, 3, 4)]);
        assert_eq!(plan(6, &[2, 4]), vec![(0, 4, 4), (4, 2, 2)]);
        assert!(plan(5, &[]).is_empty());
    }

    #[test]
    fn symbols() {
        use Accuracy::*;
        assert_eq!(Func::Sin.symbol(32, 16, Tight), "Sleef_sinf16_u10");
        assert_eq!(Func::Sin.symbol(32, 16, Bound), "Sleef_sinf16_u35");
        assert_eq!(Func::Atan.symbol(32, 16, Bound), "Sleef_atanf16_u10");
        assert_eq!(Func::Log.symbol(32, 16, Bound), "Sleef_logf16_u10");
        assert_eq!(Func::Log.symbol(64, 8, Native), "Sleef_logd8_u35");
        assert_eq!(Func::Exp.symbol(64, 8, Native), "Sleef_expd8_u10");
        assert_eq!(Func::Hypot.symbol(64, 4, Tight), "Sleef_hypotd4_u05");
        assert_eq!(Func::Nextafter.symbol(64, 2, Bound), "Sleef_nextafterd2");
        assert_eq!(Func::Erfc.symbol(32, 4, Bound), "Sleef_erfcf4_u15");
    }
}
