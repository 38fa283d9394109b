//! The OpenCL.std extended instruction set (`ExtInst`), lowered to LLVM.
//!
//! LLVM intrinsics where LLVM has them (they work on vectors and lower to instructions or
//! to libm calls); otherwise libm functions, declared in the module and resolved from the
//! process by the JIT (per component for vectors). Functions whose single-precision result
//! needs care (sinpi, rootn, length, normalize, ...) are computed in double precision.

use super::llvm::{
    as_int, as_ptr, bail, elem_type, gep, int_type, int_width, is_float_like, is_int_like, lanes, with_elem, Error,
    FnLower, Val, R,
};
use super::vecmath::{self, Accuracy, Func};
use crate::ir::{self, ConvertOp, Rounding};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use spirv::OpenclStd100Op as Op;

use inkwell::values::InstructionOpcode as O;

const PI: f64 = std::f64::consts::PI;

/// Lowers `ExtInst { opcode, args }`; `rt` is the result type (`None` for void).
pub fn lower<'ctx>(
    fx: &mut FnLower<'_, 'ctx, '_>,
    opcode: u32,
    args: &[Val<'ctx>],
    arg_tys: &[ir::Type],
    rt: Option<BasicTypeEnum<'ctx>>,
) -> R<Option<Val<'ctx>>> {
    let Some(op) = Op::from_u32(opcode) else { bail!("unknown OpenCL.std instruction {opcode}") };
    let need = |n: usize| -> R<()> {
        if args.len() < n {
            bail!("{op:?} needs {n} operands, has {}", args.len());
        }
        Ok(())
    };
    let rt_req = || rt.ok_or_else(|| Error(format!("{op:?} without a result type")));
    // Operands broadcast to the result's shape (scalar arguments of vector functions).
    let splat_all = |fx: &FnLower<'_, 'ctx, '_>, n: usize| -> R<Vec<Val<'ctx>>> {
        need(n)?;
        let t = rt_req()?;
        args[..n].iter().map(|a| fx.splat_to(*a, t)).collect()
    };
    let float_rt = || -> R<BasicTypeEnum<'ctx>> {
        let t = rt_req()?;
        if !is_float_like(t) {
            bail!("{op:?} with a non-float result {t}");
        }
        Ok(t)
    };
    let int_rt = || -> R<BasicTypeEnum<'ctx>> {
        let t = rt_req()?;
        if !is_int_like(t) {
            bail!("{op:?} with a non-integer result {t}");
        }
        Ok(t)
    };

    // Unary / binary / ternary float functions mapping onto one LLVM intrinsic.
    let intr_name = match op {
        Op::fabs => Some("llvm.fabs"),
        Op::sqrt | Op::native_sqrt | Op::half_sqrt => Some("llvm.sqrt"),
        Op::floor => Some("llvm.floor"),
        Op::ceil => Some("llvm.ceil"),
        Op::trunc => Some("llvm.trunc"),
        Op::rint => Some("llvm.rint"),
        Op::round => Some("llvm.round"),
        Op::sin | Op::native_sin | Op::half_sin => Some("llvm.sin"),
        Op::cos | Op::native_cos | Op::half_cos => Some("llvm.cos"),
        Op::tan | Op::native_tan | Op::half_tan => Some("llvm.tan"),
        Op::asin => Some("llvm.asin"),
        Op::acos => Some("llvm.acos"),
        Op::atan => Some("llvm.atan"),
        Op::sinh => Some("llvm.sinh"),
        Op::cosh => Some("llvm.cosh"),
        Op::tanh => Some("llvm.tanh"),
        Op::exp | Op::native_exp | Op::half_exp => Some("llvm.exp"),
        Op::exp2 | Op::native_exp2 | Op::half_exp2 => Some("llvm.exp2"),
        Op::exp10 | Op::native_exp10 | Op::half_exp10 => Some("llvm.exp10"),
        Op::log | Op::native_log | Op::half_log => Some("llvm.log"),
        Op::log2 | Op::native_log2 | Op::half_log2 => Some("llvm.log2"),
        Op::log10 | Op::native_log10 | Op::half_log10 => Some("llvm.log10"),
        Op::atan2 => Some("llvm.atan2"),
        Op::pow => Some("llvm.pow"),
        Op::fmin | Op::fmin_common => Some("llvm.minnum"),
        Op::fmax | Op::fmax_common => Some("llvm.maxnum"),
        Op::copysign => Some("llvm.copysign"),
        Op::fma => Some("llvm.fma"),
        Op::mad => Some("llvm.fmuladd"),
        _ => None,
    };
    if let Some(name) = intr_name {
        let t = float_rt()?;
        let arity = match op {
            Op::atan2 | Op::pow | Op::fmin | Op::fmin_common | Op::fmax | Op::fmax_common | Op::copysign => 2,
            Op::fma | Op::mad => 3,
            _ => 1,
        };
        let a = splat_all(fx, arity)?;
        if let Some((f, acc)) = sleef_func(op) {
            return Ok(Some(math(fx, f, acc, name, t, &a)?));
        }
        return Ok(Some(fx.intrinsic(name, &[t], &a)?));
    }

    // Functions computed by libm, per component.
    let libm = match op {
        Op::expm1 => Some(("expm1f", "expm1")),
        Op::log1p => Some(("log1pf", "log1p")),
        Op::hypot => Some(("hypotf", "hypot")),
        Op::erf => Some(("erff", "erf")),
        Op::erfc => Some(("erfcf", "erfc")),
        Op::lgamma => Some(("lgammaf", "lgamma")),
        Op::tgamma => Some(("tgammaf", "tgamma")),
        Op::asinh => Some(("asinhf", "asinh")),
        Op::acosh => Some(("acoshf", "acosh")),
        Op::atanh => Some(("atanhf", "atanh")),
        Op::remainder => Some(("remainderf", "remainder")),
        Op::nextafter => Some(("nextafterf", "nextafter")),
        _ => None,
    };
    if let Some((n32, n64)) = libm {
        let t = float_rt()?;
        let arity = if matches!(op, Op::hypot | Op::remainder | Op::nextafter) { 2 } else { 1 };
        let a = splat_all(fx, arity)?;
        if let Some((f, acc)) = sleef_func(op) {
            if let Some(v) = vecmath::call(fx, f, acc, t, &a)? {
                return Ok(Some(v));
            }
        }
        return Ok(Some(fx.libm(n32, n64, t, &a)?));
    }

    let b = &fx.b;
    let r: Val<'ctx> = match op {
        Op::rsqrt | Op::native_rsqrt | Op::half_rsqrt => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            match vecmath::rsqrt(fx, t, a[0])? {
                Some(r) => r,
                None => {
                    let s = fx.intrinsic("llvm.sqrt", &[t], &a)?;
                    fx.binop(O::FDiv, fx.cfloat(t, 1.0)?, s)?
                }
            }
        }
        Op::native_divide | Op::half_divide => {
            let a = splat_all(fx, 2)?;
            fx.binop(O::FDiv, a[0], a[1])?
        }
        Op::native_recip | Op::half_recip => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            fx.binop(O::FDiv, fx.cfloat(t, 1.0)?, a[0])?
        }
        Op::fmod => {
            // Not SLEEF's fmod: it returns NaN for denormal divisors and huge quotients
            // (fmod(DBL_MAX, 0.5); SLEEF 3.5.1).
            let a = splat_all(fx, 2)?;
            fx.binop(O::FRem, a[0], a[1])?
        }
        Op::powr | Op::native_powr | Op::half_powr => {
            let t = float_rt()?;
            let a = splat_all(fx, 2)?;
            let (x, y) = (a[0], a[1]);
            // pow(|x|, y): powr(-0, y) is powr(+0, y) (+inf for y < 0, not pow's -inf).
            let ax = fx.intr("llvm.fabs", &[x])?;
            let acc = if op == Op::powr { Accuracy::Bound } else { Accuracy::Native };
            let p = math(fx, Func::Pow, acc, "llvm.pow", t, &[ax, y])?;
            let zero = fx.cfloat(t, 0.0)?;
            let inf = fx.cfloat(t, f64::INFINITY)?;
            let one = fx.cfloat(t, 1.0)?;
            let xneg = fx.fcmp(FloatPredicate::OLT, x, zero)?;
            let x0 = fx.fcmp(FloatPredicate::OEQ, x, zero)?;
            let y0 = fx.fcmp(FloatPredicate::OEQ, y, zero)?;
            let xinf = fx.fcmp(FloatPredicate::OEQ, x, inf)?;
            let x1 = fx.fcmp(FloatPredicate::OEQ, x, one)?;
            let yabs = fx.intr("llvm.fabs", &[y])?;
            let yinf = fx.fcmp(FloatPredicate::OEQ, yabs, inf)?;
            let nan_in = fx.fcmp(FloatPredicate::UNO, x, y)?;
            let c1 = fx.binop(O::And, x0, y0)?;
            let c2 = fx.binop(O::And, xinf, y0)?;
            let c3 = fx.binop(O::And, x1, yinf)?;
            let mut bad = fx.binop(O::Or, xneg, c1)?;
            for c in [c2, c3, nan_in] {
                bad = fx.binop(O::Or, bad, c)?;
            }
            fx.select(bad, fx.cfloat(t, f64::NAN)?, p)?
        }
        Op::ldexp => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let n = fx.splat_to(args[1], with_elem(t, fx.i32().into())?)?;
            let n = fx.int_resize(n, with_elem(t, fx.i32().into())?, true)?;
            fx.intrinsic("llvm.ldexp", &[t, n.get_type()], &[x, n])?
        }
        Op::cbrt => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            if let Some(v) = vecmath::call(fx, Func::Cbrt, Accuracy::Bound, t, &a)? {
                v
            } else if int_width(t) == 64 {
                let f64t = fx.cx().f64_type().into();
                host_call(fx, "softcl_cbrt", t, &[f64t], &a)?
            } else {
                fx.libm("cbrtf", "cbrt", t, &a)?
            }
        }
        Op::pown => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let n = fx.splat_to(args[1], with_elem(t, fx.i32().into())?)?;
            // Narrow types in double (exact); doubles by libm's pow, whose integer powers
            // are within 1 ulp and have pown's special values.
            let (xw, wt) = promote(fx, x)?;
            let nf = fx.cast(O::SIToFP, n, wt)?;
            let r = math(fx, Func::Pow, Accuracy::Bound, "llvm.pow", wt, &[xw, nf])?;
            demote(fx, r, t)?
        }
        Op::rootn => {
            need(2)?;
            let t = float_rt()?;
            let x = widen_f64(fx, fx.splat_to(args[0], t)?)?;
            let it = with_elem(t, fx.i32().into())?;
            let n = fx.int_resize(fx.splat_to(args[1], it)?, it, true)?;
            let r = match rootn_narrow_vector(fx, x, n, int_width(t))? {
                Some(v) => v,
                None => {
                    host_call(fx, "softcl_rootn", x.get_type(), &[fx.cx().f64_type().into(), fx.i32().into()], &[x, n])?
                }
            };
            demote(fx, r, t)?
        }
        Op::sinpi | Op::cospi | Op::tanpi => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            let (x, wt) = promote(fx, a[0])?;
            let r = match op {
                Op::sinpi => sinpi(fx, x)?,
                Op::cospi => cospi(fx, x)?,
                _ => {
                    let x = widen_f64(fx, x)?;
                    match tanpi_narrow_vector(fx, x, int_width(t))? {
                        Some(v) => v,
                        None => {
                            let f64t = fx.cx().f64_type().into();
                            host_call(fx, "softcl_tanpi", x.get_type(), &[f64t], &[x])?
                        }
                    }
                }
            };
            let _ = wt;
            demote(fx, r, t)?
        }
        Op::asinpi | Op::acospi | Op::atanpi | Op::atan2pi => {
            let t = float_rt()?;
            let n = if op == Op::atan2pi { 2 } else { 1 };
            let a = splat_all(fx, n)?;
            let (x, wt) = promote(fx, a[0])?;
            let r = match op {
                Op::asinpi => math(fx, Func::Asin, Accuracy::Tight, "llvm.asin", wt, &[x])?,
                Op::acospi => math(fx, Func::Acos, Accuracy::Tight, "llvm.acos", wt, &[x])?,
                Op::atanpi => math(fx, Func::Atan, Accuracy::Tight, "llvm.atan", wt, &[x])?,
                _ => {
                    let (y, _) = promote(fx, a[1])?;
                    math(fx, Func::Atan2, Accuracy::Tight, "llvm.atan2", wt, &[x, y])?
                }
            };
            let r = fx.binop(O::FDiv, r, fx.cfloat(wt, PI)?)?;
            demote(fx, r, t)?
        }
        Op::ilogb => {
            need(1)?;
            let t = int_rt()?;
            let x = args[0];
            let (_, _, k) = exponent(fx, x)?;
            let ax = fx.intr("llvm.fabs", &[x])?;
            let xt = x.get_type();
            let zero = fx.fcmp(FloatPredicate::OEQ, x, fx.cfloat(xt, 0.0)?)?;
            // OpenCL's FP_ILOGB0 is INT_MIN, FP_ILOGBNAN is INT_MAX; inf gives INT_MAX.
            let big = fx.fcmp(FloatPredicate::UEQ, ax, fx.cfloat(xt, f64::INFINITY)?)?;
            let kt = k.get_type();
            let r = fx.select(zero, fx.cint(kt, i32::MIN as u32 as u64)?, k)?;
            let r = fx.select(big, fx.cint(kt, i32::MAX as u64)?, r)?;
            fx.int_resize(r, t, true)?
        }
        Op::logb => {
            let t = float_rt()?;
            let x = splat_all(fx, 1)?[0];
            let (_, _, k) = exponent(fx, x)?;
            let r = fx.cast(O::SIToFP, k, t)?;
            let ax = fx.intr("llvm.fabs", &[x])?;
            let zero = fx.fcmp(FloatPredicate::OEQ, x, fx.cfloat(t, 0.0)?)?;
            let r = fx.select(zero, fx.cfloat(t, f64::NEG_INFINITY)?, r)?;
            // inf -> +inf, NaN -> NaN: |x| itself.
            let special = fx.fcmp(FloatPredicate::UEQ, ax, fx.cfloat(t, f64::INFINITY)?)?;
            fx.select(special, ax, r)?
        }
        Op::fdim => {
            let t = float_rt()?;
            let a = splat_all(fx, 2)?;
            let d = fx.binop(O::FSub, a[0], a[1])?;
            let gt = fx.fcmp(FloatPredicate::UGT, a[0], a[1])?;
            fx.select(gt, d, fx.cfloat(t, 0.0)?)?
        }
        Op::fract => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let fl = fx.intr("llvm.floor", &[x])?;
            let d = fx.binop(O::FSub, x, fl)?;
            let below_one = match int_width(t) {
                16 => f64::from_bits(0x3FEFFC0000000000),
                32 => f64::from(f32::from_bits(0x3F7FFFFF)),
                _ => f64::from_bits(0x3FEFFFFFFFFFFFFF),
            };
            let r = fx.intr("llvm.minnum", &[d, fx.cfloat(t, below_one)?])?;
            let abs = fx.intr("llvm.fabs", &[x])?;
            let isinf = fx.fcmp(FloatPredicate::OEQ, abs, fx.cfloat(t, f64::INFINITY)?)?;
            let z = fx.intrinsic("llvm.copysign", &[t], &[fx.cfloat(t, 0.0)?, x])?;
            let r = fx.select(isinf, z, r)?;
            let isnan = fx.fcmp(FloatPredicate::UNO, x, x)?;
            let r = fx.select(isnan, x, r)?;
            store_out(fx, args[1], fl)?;
            r
        }
        Op::modf => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let i = fx.intr("llvm.trunc", &[x])?;
            let d = fx.binop(O::FSub, x, i)?;
            let abs = fx.intr("llvm.fabs", &[x])?;
            let isinf = fx.fcmp(FloatPredicate::OEQ, abs, fx.cfloat(t, f64::INFINITY)?)?;
            let d = fx.select(isinf, fx.cfloat(t, 0.0)?, d)?;
            let r = fx.intrinsic("llvm.copysign", &[t], &[d, x])?;
            store_out(fx, args[1], i)?;
            r
        }
        Op::sincos => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let s = math(fx, Func::Sin, Accuracy::Bound, "llvm.sin", t, &[x])?;
            let c = math(fx, Func::Cos, Accuracy::Bound, "llvm.cos", t, &[x])?;
            store_out(fx, args[1], c)?;
            s
        }
        Op::frexp => {
            need(2)?;
            let t = float_rt()?;
            let x = fx.splat_to(args[0], t)?;
            let (mant, bits, k) = exponent(fx, x)?;
            let w = int_width(t);
            let it = bits.get_type();
            // The significand with the exponent of [0.5, 1): bias - 1.
            let (emask, bias) = exp_field(w);
            let keep = fx.binop(O::And, bits, fx.cint(it, !(emask << mant))?)?;
            let mbits = fx.binop(O::Or, keep, fx.cint(it, (bias - 1) << mant)?)?;
            let m = fx.cast(O::BitCast, mbits, t)?;
            let e = fx.binop(O::Add, k, fx.cint(k.get_type(), 1)?)?;
            // 0, inf, NaN: x itself and exponent 0.
            let ax = fx.intr("llvm.fabs", &[x])?;
            let nz = fx.fcmp(FloatPredicate::ONE, x, fx.cfloat(t, 0.0)?)?;
            let fin = fx.fcmp(FloatPredicate::OLT, ax, fx.cfloat(t, f64::INFINITY)?)?;
            let ok = fx.binop(O::And, nz, fin)?;
            let m = fx.select(ok, m, x)?;
            let e = fx.select(ok, e, fx.cint(k.get_type(), 0)?)?;
            store_out(fx, args[1], e)?;
            m
        }
        Op::remquo => {
            need(3)?;
            let t = float_rt()?;
            let x = widen_f64(fx, fx.splat_to(args[0], t)?)?;
            let y = widen_f64(fx, fx.splat_to(args[1], t)?)?;
            let f64t: BasicTypeEnum<'ctx> = fx.cx().f64_type().into();
            let rem = host_call(fx, "softcl_remquo_rem", x.get_type(), &[f64t, f64t], &[x, y])?;
            let qt = with_elem(t, fx.i32().into())?;
            let quo = host_call(fx, "softcl_remquo_quo", qt, &[f64t, f64t], &[x, y])?;
            store_out(fx, args[2], quo)?;
            // The remainder of narrower operands is exact in their type.
            demote(fx, rem, t)?
        }
        Op::lgamma_r => {
            let t = float_rt()?;
            need(2)?;
            let (vals, out_ptr) = (vec![fx.splat_to(args[0], t)?], args[1]);
            if vals.iter().any(|v| !is_float_like(v.get_type())) {
                bail!("{op:?} of a non-float operand");
            }
            let tmp = fx.scratch(fx.i32().into())?;
            let mut outs: Vec<Val<'ctx>> = Vec::new();
            let wide = int_width(t) == 64;
            let ct: BasicTypeEnum<'ctx> = if wide { fx.cx().f64_type().into() } else { fx.cx().f32_type().into() };
            let name = if wide { "lgamma_r" } else { "lgammaf_r" };
            let mut ptys = vec![ct; vals.len()];
            ptys.push(fx.ptr_type().into());
            let cf = fx.e.extern_fn(name, ct, &ptys, false);
            let mut results = Vec::new();
            for lane in 0..lanes(t) {
                let mut cargs: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> = Vec::new();
                for v in &vals {
                    let l = fx.extract(*v, lane)?.into_float_value();
                    let l: Val<'ctx> = if l.get_type() != ct.into_float_type() {
                        fx.b.build_float_cast(l, ct.into_float_type(), "")?.into()
                    } else {
                        l.into()
                    };
                    cargs.push(l.into());
                }
                cargs.push(tmp.into());
                let r = fx.b.build_call(cf, &cargs, "")?.try_as_basic_value().basic().ok_or("no result")?;
                let r = r.into_float_value();
                let ft = elem_type(t).into_float_type();
                results.push(if r.get_type() != ft { fx.b.build_float_cast(r, ft, "")?.into() } else { r.into() });
                outs.push(fx.b.build_load(fx.i32(), tmp, "")?);
            }
            let et = with_elem(t, fx.i32().into())?;
            let ov = fx.gather(et, &outs)?;
            store_out(fx, out_ptr, ov)?;
            fx.gather(t, &results)?
        }
        Op::nan => {
            need(1)?;
            let t = float_rt()?;
            let w = int_width(t);
            let it = with_elem(t, int_type(fx.cx(), w)?.into())?;
            let code = fx.int_resize(fx.splat_to(args[0], with_elem(t, elem_type(args[0].get_type()))?)?, it, false)?;
            let (quiet, mask) = match w {
                16 => (0x7e00u64, 0x1ffu64),
                32 => (0x7fc0_0000, 0x003f_ffff),
                _ => (0x7ff8_0000_0000_0000, 0x0007_ffff_ffff_ffff),
            };
            let c = fx.binop(O::And, code, fx.cint(it, mask)?)?;
            let bits = fx.binop(O::Or, c, fx.cint(it, quiet)?)?;
            fx.cast(O::BitCast, bits, t)?
        }
        Op::mix => {
            let a = splat_all(fx, 3)?;
            let d = fx.binop(O::FSub, a[1], a[0])?;
            let m = fx.binop(O::FMul, d, a[2])?;
            fx.binop(O::FAdd, a[0], m)?
        }
        Op::step => {
            let t = float_rt()?;
            let a = splat_all(fx, 2)?;
            let lt = fx.fcmp(FloatPredicate::OLT, a[1], a[0])?;
            fx.select(lt, fx.cfloat(t, 0.0)?, fx.cfloat(t, 1.0)?)?
        }
        Op::smoothstep => {
            let t = float_rt()?;
            let a = splat_all(fx, 3)?;
            let num = fx.binop(O::FSub, a[2], a[0])?;
            let den = fx.binop(O::FSub, a[1], a[0])?;
            let q = fx.binop(O::FDiv, num, den)?;
            let q = fx.intr("llvm.maxnum", &[q, fx.cfloat(t, 0.0)?])?;
            let q = fx.intr("llvm.minnum", &[q, fx.cfloat(t, 1.0)?])?;
            let two_q = fx.binop(O::FMul, fx.cfloat(t, 2.0)?, q)?;
            let s = fx.binop(O::FSub, fx.cfloat(t, 3.0)?, two_q)?;
            let qq = fx.binop(O::FMul, q, q)?;
            fx.binop(O::FMul, qq, s)?
        }
        Op::sign => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            let x = a[0];
            let zero = fx.cfloat(t, 0.0)?;
            let gt = fx.fcmp(FloatPredicate::OGT, x, zero)?;
            let lt = fx.fcmp(FloatPredicate::OLT, x, zero)?;
            let nan = fx.fcmp(FloatPredicate::UNO, x, x)?;
            let r = fx.select(nan, zero, x)?;
            let r = fx.select(lt, fx.cfloat(t, -1.0)?, r)?;
            fx.select(gt, fx.cfloat(t, 1.0)?, r)?
        }
        Op::degrees | Op::radians => {
            let t = float_rt()?;
            let a = splat_all(fx, 1)?;
            let k = if op == Op::degrees { 180.0 / PI } else { PI / 180.0 };
            fx.binop(O::FMul, a[0], fx.cfloat(t, k)?)?
        }
        Op::maxmag | Op::minmag => {
            let a = splat_all(fx, 2)?;
            let (x, y) = (a[0], a[1]);
            let ax = fx.intr("llvm.fabs", &[x])?;
            let ay = fx.intr("llvm.fabs", &[y])?;
            let (p, fallback) = if op == Op::maxmag {
                (FloatPredicate::OGT, "llvm.maxnum")
            } else {
                (FloatPredicate::OLT, "llvm.minnum")
            };
            let c1 = fx.fcmp(p, ax, ay)?;
            let c2 = fx.fcmp(p, ay, ax)?;
            let m = fx.intr(fallback, &[x, y])?;
            let r = fx.select(c2, y, m)?;
            fx.select(c1, x, r)?
        }
        Op::fclamp => {
            let a = splat_all(fx, 3)?;
            let lo = fx.intr("llvm.maxnum", &[a[0], a[1]])?;
            fx.intr("llvm.minnum", &[lo, a[2]])?
        }

        // ------------------------------------------------------------ integers
        Op::s_abs => {
            let t = int_rt()?;
            let a = splat_all(fx, 1)?;
            let f = fx.cx().bool_type().const_zero();
            let r = fx.intrinsic("llvm.abs", &[a[0].get_type()], &[a[0], f.into()])?;
            fx.int_resize(r, t, false)?
        }
        Op::u_abs => {
            let a = splat_all(fx, 1)?;
            a[0]
        }
        Op::s_abs_diff | Op::u_abs_diff => {
            let a = splat_all(fx, 2)?;
            let (mx, mn) = if op == Op::s_abs_diff { ("llvm.smax", "llvm.smin") } else { ("llvm.umax", "llvm.umin") };
            let hi = fx.intr(mx, &[a[0], a[1]])?;
            let lo = fx.intr(mn, &[a[0], a[1]])?;
            fx.binop(O::Sub, hi, lo)?
        }
        Op::s_add_sat | Op::u_add_sat | Op::s_sub_sat | Op::u_sub_sat => {
            let a = splat_all(fx, 2)?;
            let name = match op {
                Op::s_add_sat => "llvm.sadd.sat",
                Op::u_add_sat => "llvm.uadd.sat",
                Op::s_sub_sat => "llvm.ssub.sat",
                _ => "llvm.usub.sat",
            };
            fx.intr(name, &[a[0], a[1]])?
        }
        Op::s_hadd | Op::u_hadd | Op::s_rhadd | Op::u_rhadd => {
            let t = int_rt()?;
            let a = splat_all(fx, 2)?;
            let sh = if matches!(op, Op::s_hadd | Op::s_rhadd) { O::AShr } else { O::LShr };
            let one = fx.cint(t, 1)?;
            let x1 = fx.binop(sh, a[0], one)?;
            let y1 = fx.binop(sh, a[1], one)?;
            let lowbits = if matches!(op, Op::s_hadd | Op::u_hadd) {
                fx.binop(O::And, a[0], a[1])?
            } else {
                fx.binop(O::Or, a[0], a[1])?
            };
            let c = fx.binop(O::And, lowbits, one)?;
            fx.binop(O::Add, fx.binop(O::Add, x1, y1)?, c)?
        }
        Op::s_clamp | Op::u_clamp => {
            let a = splat_all(fx, 3)?;
            let (mx, mn) = if op == Op::s_clamp { ("llvm.smax", "llvm.smin") } else { ("llvm.umax", "llvm.umin") };
            let lo = fx.intr(mx, &[a[0], a[1]])?;
            fx.intr(mn, &[lo, a[2]])?
        }
        Op::s_max | Op::u_max | Op::s_min | Op::u_min => {
            let a = splat_all(fx, 2)?;
            let name = match op {
                Op::s_max => "llvm.smax",
                Op::u_max => "llvm.umax",
                Op::s_min => "llvm.smin",
                _ => "llvm.umin",
            };
            fx.intr(name, &[a[0], a[1]])?
        }
        Op::clz | Op::ctz => {
            let a = splat_all(fx, 1)?;
            let f = fx.cx().bool_type().const_zero();
            let name = if op == Op::clz { "llvm.ctlz" } else { "llvm.cttz" };
            fx.intrinsic(name, &[a[0].get_type()], &[a[0], f.into()])?
        }
        Op::popcount => {
            let a = splat_all(fx, 1)?;
            fx.intr("llvm.ctpop", &[a[0]])?
        }
        Op::s_mul_hi | Op::u_mul_hi | Op::s_mad_hi | Op::u_mad_hi => {
            let t = int_rt()?;
            let n = if matches!(op, Op::s_mad_hi | Op::u_mad_hi) { 3 } else { 2 };
            let a = splat_all(fx, n)?;
            let signed = matches!(op, Op::s_mul_hi | Op::s_mad_hi);
            let w = int_width(t);
            let wt = with_elem(t, int_type(fx.cx(), 2 * w)?.into())?;
            let x = fx.int_resize(a[0], wt, signed)?;
            let y = fx.int_resize(a[1], wt, signed)?;
            let p = fx.binop(O::Mul, x, y)?;
            let hi = fx.binop(O::LShr, p, fx.cint(wt, w as u64)?)?;
            let hi = fx.int_resize(hi, t, false)?;
            if n == 3 {
                fx.binop(O::Add, hi, a[2])?
            } else {
                hi
            }
        }
        Op::s_mad_sat | Op::u_mad_sat => {
            let t = int_rt()?;
            let a = splat_all(fx, 3)?;
            let signed = op == Op::s_mad_sat;
            let w = int_width(t);
            let wt = with_elem(t, int_type(fx.cx(), 2 * w)?.into())?;
            let x = fx.int_resize(a[0], wt, signed)?;
            let y = fx.int_resize(a[1], wt, signed)?;
            let z = fx.int_resize(a[2], wt, signed)?;
            let m = fx.binop(O::Add, fx.binop(O::Mul, x, y)?, z)?;
            let max_u = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            let c = if signed {
                let hi = const_wide(wt, (max_u >> 1) as i128)?;
                let lo = const_wide(wt, -((max_u >> 1) as i128) - 1)?;
                let m = fx.intr("llvm.smin", &[m, hi])?;
                fx.intr("llvm.smax", &[m, lo])?
            } else {
                let hi = const_wide(wt, max_u as i128)?;
                fx.intr("llvm.umin", &[m, hi])?
            };
            fx.int_resize(c, t, false)?
        }
        Op::s_mul24 | Op::u_mul24 | Op::s_mad24 | Op::u_mad24 => {
            let n = if matches!(op, Op::s_mad24 | Op::u_mad24) { 3 } else { 2 };
            let a = splat_all(fx, n)?;
            let p = fx.binop(O::Mul, a[0], a[1])?;
            if n == 3 {
                fx.binop(O::Add, p, a[2])?
            } else {
                p
            }
        }
        Op::rotate => {
            let a = splat_all(fx, 2)?;
            fx.intr("llvm.fshl", &[a[0], a[0], a[1]])?
        }
        Op::u_upsample | Op::s_upsample => {
            need(2)?;
            let t = int_rt()?;
            let hi = fx.int_resize(args[0], t, false)?;
            let lo = fx.int_resize(args[1], t, false)?;
            let w = int_width(args[1].get_type());
            let hi = fx.binop(O::Shl, hi, fx.cint(t, w as u64)?)?;
            fx.binop(O::Or, hi, lo)?
        }

        // ------------------------------------------------------------ geometric
        Op::cross => {
            need(2)?;
            let t = float_rt()?;
            let n = lanes(t);
            if n != 3 && n != 4 {
                bail!("cross of {n} components");
            }
            let (a, c) = (args[0], args[1]);
            let l = |v: Val<'ctx>, i: u32| fx.extract(v, i);
            let comp = |i: u32, j: u32| -> R<Val<'ctx>> {
                let p = fx.binop(O::FMul, l(a, i)?, l(c, j)?)?;
                let q = fx.binop(O::FMul, l(a, j)?, l(c, i)?)?;
                fx.binop(O::FSub, p, q)
            };
            let mut parts = vec![comp(1, 2)?, comp(2, 0)?, comp(0, 1)?];
            if n == 4 {
                parts.push(fx.cfloat(elem_type(t), 0.0)?);
            }
            fx.gather(t, &parts)?
        }
        Op::length | Op::distance => {
            let t = float_rt()?;
            let n = if op == Op::distance { 2 } else { 1 };
            need(n)?;
            let x = args[0];
            if x.get_type().is_vector_type() || n == 2 {
                let (xw, wt) = promote(fx, x)?;
                let v = if n == 2 {
                    let (yw, _) = promote(fx, args[1])?;
                    fx.binop(O::FSub, xw, yw)?
                } else {
                    xw
                };
                let _ = wt;
                let l = length(fx, v)?;
                demote(fx, l, t)?
            } else {
                fx.intr("llvm.fabs", &[x])?
            }
        }
        Op::normalize => {
            need(1)?;
            let x = args[0];
            let t = x.get_type();
            // Infinite components: normalise the vector of their signs.
            let abs = fx.intr("llvm.fabs", &[x])?;
            let inf = fx.cfloat(t, f64::INFINITY)?;
            let isinf = fx.fcmp(FloatPredicate::OEQ, abs, inf)?;
            let any_inf = if t.is_vector_type() { fx.intr("llvm.vector.reduce.or", &[isinf])? } else { isinf };
            let ones = fx.intrinsic("llvm.copysign", &[t], &[fx.cfloat(t, 1.0)?, x])?;
            let zeros = fx.intrinsic("llvm.copysign", &[t], &[fx.cfloat(t, 0.0)?, x])?;
            let xi = fx.select(isinf, ones, zeros)?;
            let any_inf_s = fx.splat_to(any_inf, with_elem(t, fx.cx().bool_type().into())?)?;
            let x2 = if t.is_vector_type() { fx.select(any_inf_s, xi, x)? } else { fx.select(any_inf, xi, x)? };
            let (xw, wt) = promote(fx, x2)?;
            // Doubles: the exactly scaled vector over its own length (no denormal length).
            let xw = if int_width(wt) == 64 && wt.is_vector_type() { pow2_scaled(fx, xw)?.0 } else { xw };
            let l = length(fx, xw)?;
            let ls = fx.splat_to(l, wt)?;
            let q = fx.binop(O::FDiv, xw, ls)?;
            let zero = fx.cfloat(l.get_type(), 0.0)?;
            let is0 = fx.fcmp(FloatPredicate::OEQ, l, zero)?;
            let q = demote(fx, q, t)?;
            fx.select(is0, x, q)?
        }
        Op::fast_length | Op::fast_distance => {
            let n = if op == Op::fast_distance { 2 } else { 1 };
            need(n)?;
            let v = if n == 2 { fx.binop(O::FSub, args[0], args[1])? } else { args[0] };
            let d = dot(fx, v, v)?;
            fx.intr("llvm.sqrt", &[d])?
        }
        Op::fast_normalize => {
            need(1)?;
            let x = args[0];
            let d = dot(fx, x, x)?;
            let s = fx.intr("llvm.sqrt", &[d])?;
            let s = fx.splat_to(s, x.get_type())?;
            let q = fx.binop(O::FDiv, x, s)?;
            let is0 = fx.fcmp(FloatPredicate::OEQ, d, fx.cfloat(d.get_type(), 0.0)?)?;
            fx.select(is0, x, q)?
        }

        // ------------------------------------------------------------ relational
        Op::bitselect => {
            let t = rt_req()?;
            let a = splat_all(fx, 3)?;
            let it = with_elem(t, int_type(fx.cx(), int_width(t))?.into())?;
            let [x, y, c] =
                [a[0], a[1], a[2]].map(|v| if v.get_type() == it { Ok(v) } else { fx.cast(O::BitCast, v, it) });
            let (x, y, c) = (x?, y?, c?);
            let nc = fx.binop(O::Xor, c, fx.cint(it, u64::MAX)?)?;
            let r = fx.binop(O::Or, fx.binop(O::And, x, nc)?, fx.binop(O::And, y, c)?)?;
            if it == t {
                r
            } else {
                fx.cast(O::BitCast, r, t)?
            }
        }
        Op::select => {
            let t = rt_req()?;
            need(3)?;
            let x = fx.splat_to(args[0], t)?;
            let y = fx.splat_to(args[1], t)?;
            let c = args[2];
            // The OpenCL C type decides, not the LLVM one: a scalar condition vectorized across
            // work-items is an LLVM vector but still selects on "nonzero", not on its MSB.
            let vector_condition = match arg_tys.get(2) {
                Some(&ct) => fx.e.ir.types.lanes(ct) > 1,
                None => c.get_type().is_vector_type(),
            };
            let cond = if vector_condition {
                fx.icmp(IntPredicate::SLT, c, fx.cint(c.get_type(), 0)?)?
            } else {
                fx.icmp(IntPredicate::NE, c, fx.cint(c.get_type(), 0)?)?
            };
            fx.select(cond, y, x)?
        }

        // ------------------------------------------------------------ vector loads and stores
        Op::vloadn => {
            need(2)?;
            let t = rt_req()?;
            let p = elem_ptr(fx, args[1], elem_type(t), args[0], lanes(t))?;
            let l = fx.b.build_load(t, p, "")?;
            set_align(l, fx.e.abi_align(elem_type(t)) as u32);
            l
        }
        Op::vstoren => {
            need(3)?;
            let v = args[0];
            let t = v.get_type();
            let p = elem_ptr(fx, args[2], elem_type(t), args[1], lanes(t))?;
            let s = fx.b.build_store(p, v)?;
            let _ = s.set_alignment(fx.e.abi_align(elem_type(t)) as u32);
            return Ok(None);
        }
        Op::vload_half | Op::vload_halfn | Op::vloada_halfn => {
            need(2)?;
            let t = float_rt()?;
            let n = lanes(t);
            let ht = with_elem(t, fx.cx().f16_type().into())?;
            let stride = if op == Op::vloada_halfn && n == 3 { 4 } else { n };
            let p = elem_ptr(fx, args[1], fx.cx().f16_type().into(), args[0], stride)?;
            let l = fx.b.build_load(ht, p, "")?;
            let align = if op == Op::vloada_halfn { fx.e.abi_align(ht) } else { 2 };
            set_align(l, align as u32);
            fx.cast(O::FPExt, l, t)?
        }
        Op::vstore_half
        | Op::vstore_half_r
        | Op::vstore_halfn
        | Op::vstore_halfn_r
        | Op::vstorea_halfn
        | Op::vstorea_halfn_r => {
            need(3)?;
            let v = args[0];
            let t = v.get_type();
            let n = lanes(t);
            let mode = if matches!(op, Op::vstore_half_r | Op::vstore_halfn_r | Op::vstorea_halfn_r) {
                need(4)?;
                let m = as_int(args[3])?.get_zero_extended_constant().ok_or("rounding mode is not a constant")?;
                match m {
                    0 => Rounding::NearestEven,
                    1 => Rounding::TowardZero,
                    2 => Rounding::TowardPositive,
                    3 => Rounding::TowardNegative,
                    _ => bail!("unknown rounding mode {m}"),
                }
            } else {
                Rounding::NearestEven
            };
            let ht = with_elem(t, fx.cx().f16_type().into())?;
            let h = fx.lower_convert(ConvertOp::FConvert, v, ht, false, Some(mode))?;
            let stride = if matches!(op, Op::vstorea_halfn | Op::vstorea_halfn_r) && n == 3 { 4 } else { n };
            let p = elem_ptr(fx, args[2], fx.cx().f16_type().into(), args[1], stride)?;
            let s = fx.b.build_store(p, h)?;
            let align = if matches!(op, Op::vstorea_halfn | Op::vstorea_halfn_r) { fx.e.abi_align(ht) } else { 2 };
            let _ = s.set_alignment(align as u32);
            return Ok(None);
        }
        Op::shuffle | Op::shuffle2 => {
            let t = rt_req()?;
            let two = op == Op::shuffle2;
            need(if two { 3 } else { 2 })?;
            let x = args[0];
            if !x.is_vector_value() || !args[if two { 2 } else { 1 }].is_vector_value() {
                bail!("{op:?} of non-vector operands");
            }
            let n = lanes(x.get_type());
            let src = if two {
                let y = args[1];
                if y.get_type() != x.get_type() {
                    bail!("shuffle2 of different vector types");
                }
                let m: Vec<IntValue<'ctx>> = (0..2 * n).map(|i| fx.i32().const_int(i as u64, false)).collect();
                let mv = inkwell::types::VectorType::const_vector(&m);
                fx.b.build_shuffle_vector(x.into_vector_value(), y.into_vector_value(), mv, "")?.into()
            } else {
                x
            };
            let mask = args[if two { 2 } else { 1 }];
            let total = if two { 2 * n } else { n };
            let mut parts = Vec::new();
            for lane in 0..lanes(t) {
                let mi = as_int(fx.extract(mask, lane)?)?;
                let mi = fx.b.build_and(mi, mi.get_type().const_int((total - 1) as u64, false), "")?;
                let mi = fx.b.build_int_cast_sign_flag(mi, fx.i32(), false, "")?;
                parts.push(fx.b.build_extract_element(src.into_vector_value(), mi, "")?);
            }
            fx.gather(t, &parts)?
        }
        Op::printf => return super::printf::lower(fx, args, rt),
        Op::prefetch => return Ok(None),
        _ => bail!("OpenCL.std {op:?} is not supported"),
    };
    let _ = b;
    let t = rt_req()?;
    if r.get_type() != t {
        bail!("{op:?} produced {} for a result of type {t}", r.get_type());
    }
    Ok(Some(r))
}

/// rootn of float or half vectors (`x` widened to double, `n` i32 lanes, `bits` the original
/// width) with SLEEF's double pow: |x|^(1/n), where rounding 1/n in double changes the result
/// by at most |log x| 2^-53 (< 2^-46 relative for floats): far within float's bound. Special
/// values as `mathlib::softcl_rootn`. `None` for doubles and scalars, or without the vector
/// path.
fn rootn_narrow_vector<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    x: Val<'ctx>,
    n: Val<'ctx>,
    bits: u32,
) -> R<Option<Val<'ctx>>> {
    let t = x.get_type();
    if bits == 64 || !t.is_vector_type() {
        return Ok(None);
    }
    let nf = fx.cast(O::SIToFP, n, t)?;
    let inv = fx.binop(O::FDiv, fx.cfloat(t, 1.0)?, nf)?;
    let ax = fx.intr("llvm.fabs", &[x])?;
    let Some(p) = vecmath::call(fx, Func::Pow, Accuracy::Tight, t, &[ax, inv])? else { return Ok(None) };
    let it = n.get_type();
    let odd = fx.icmp(IntPredicate::NE, fx.binop(O::And, n, fx.cint(it, 1)?)?, fx.cint(it, 0)?)?;
    let n0 = fx.icmp(IntPredicate::EQ, n, fx.cint(it, 0)?)?;
    let zero = fx.cfloat(t, 0.0)?;
    // Odd n keep the sign of x (also for zeros and infinities).
    let signed = fx.intrinsic("llvm.copysign", &[t], &[p, x])?;
    let r = fx.select(odd, signed, p)?;
    // x = +-0: n > 0 gives +-0 (odd) or +0; n < 0 gives 1/that (+-inf). pow(0, 1/n) is +0 or
    // +inf already; only the sign needs the select above.
    // x = +-inf: pow(inf, 1/n) is +inf (n > 0) or +0 (n < 0), signed above for odd n.
    // NaN: x NaN, n = 0, or x < 0 with even n.
    let xneg = fx.fcmp(FloatPredicate::OLT, x, zero)?;
    let even = fx.binop(O::Xor, odd, fx.cint(odd.get_type(), 1)?)?;
    let bad = fx.binop(O::Or, n0, fx.binop(O::And, xneg, even)?)?;
    Ok(Some(fx.select(bad, fx.cfloat(t, f64::NAN)?, r)?))
}

/// tanpi of float or half vectors (`x` widened to double, `bits` the original width) with
/// SLEEF's double tan: r = x - rint(x) is exact, and tan(pi r) in double is far within float's
/// bound even next to the poles (a float lies at least 2^-25 from a half-integer, so the
/// rounding of pi r is amplified at most 2^24 times: 2^-29 relative). Exact zeros and
/// infinities at integers and half-integers as `mathlib::softcl_tanpi`. `None` for doubles
/// (which need tan of a double-double) and scalars, or without the vector path.
fn tanpi_narrow_vector<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>, bits: u32) -> R<Option<Val<'ctx>>> {
    let t = x.get_type();
    if bits == 64 || !t.is_vector_type() {
        return Ok(None);
    }
    let k = fx.intr("llvm.rint", &[x])?;
    let r = fx.binop(O::FSub, x, k)?;
    let Some(tn) = vecmath::call(fx, Func::Tan, Accuracy::Tight, t, &[fx.binop(O::FMul, r, fx.cfloat(t, PI)?)?])?
    else {
        return Ok(None);
    };
    // k odd: k/2 is not an integer (exact for any double).
    let half_k = fx.binop(O::FMul, k, fx.cfloat(t, 0.5)?)?;
    let k_odd = fx.fcmp(FloatPredicate::ONE, fx.intr("llvm.floor", &[half_k])?, half_k)?;
    // Integers: copysign(0, x), negated for odd k.
    let z = fx.intrinsic("llvm.copysign", &[t], &[fx.cfloat(t, 0.0)?, x])?;
    let z = fx.select(k_odd, fx.binop(O::FMul, z, fx.cfloat(t, -1.0)?)?, z)?;
    let is_int = fx.fcmp(FloatPredicate::OEQ, r, fx.cfloat(t, 0.0)?)?;
    // Half-integers n + 1/2: +inf for even n = floor(x), -inf for odd n.
    let n = fx.intr("llvm.floor", &[x])?;
    let half_n = fx.binop(O::FMul, n, fx.cfloat(t, 0.5)?)?;
    let n_odd = fx.fcmp(FloatPredicate::ONE, fx.intr("llvm.floor", &[half_n])?, half_n)?;
    let inf = fx.select(n_odd, fx.cfloat(t, f64::NEG_INFINITY)?, fx.cfloat(t, f64::INFINITY)?)?;
    let is_half = fx.fcmp(FloatPredicate::OEQ, fx.intr("llvm.fabs", &[r])?, fx.cfloat(t, 0.5)?)?;
    let v = fx.select(is_int, z, tn)?;
    // inf and NaN: r is NaN, and so is tan.
    Ok(Some(fx.select(is_half, inf, v)?))
}

/// The exponent field mask and bias of `w`-bit floats.
fn exp_field(w: u32) -> (u64, u64) {
    match w {
        16 => (0x1f, 15),
        32 => (0xff, 127),
        _ => (0x7ff, 1023),
    }
}

/// Exponent of the float lanes of `x`, exactly and without libm: returns the number of
/// significand bits, the bits of `x` with denormals scaled to normal numbers (by 2^(mant+1),
/// exact), and floor(log2|x|) as i32 lanes (meaningless for 0, inf and NaN).
fn exponent<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<(u64, Val<'ctx>, Val<'ctx>)> {
    let t = x.get_type();
    let w = int_width(t);
    let mant: u64 = match w {
        16 => 10,
        32 => 23,
        64 => 52,
        _ => bail!("exponent of a {w}-bit float"),
    };
    let (emask, bias) = exp_field(w);
    let min_normal = f64::powi(2.0, 1 - bias as i32);
    let ax = fx.intr("llvm.fabs", &[x])?;
    let den = fx.fcmp(FloatPredicate::OLT, ax, fx.cfloat(t, min_normal)?)?;
    let scaled = fx.binop(O::FMul, x, fx.cfloat(t, f64::powi(2.0, mant as i32 + 1))?)?;
    let xs = fx.select(den, scaled, x)?;
    let it = with_elem(t, int_type(fx.cx(), w)?.into())?;
    let bits = fx.cast(O::BitCast, xs, it)?;
    let field = fx.binop(O::And, fx.binop(O::LShr, bits, fx.cint(it, mant)?)?, fx.cint(it, emask)?)?;
    let adj = fx.select(den, fx.cint(it, bias + mant + 1)?, fx.cint(it, bias)?)?;
    let k = fx.binop(O::Sub, field, adj)?;
    let kt = with_elem(t, fx.i32().into())?;
    Ok((mant, bits, fx.int_resize(k, kt, true)?))
}

/// Where `module` computes with doubles, for a device without fp64 (programs from IL: clang
/// already rejects OpenCL C source). Doubles that only carry values to printf (SPIR-V's form
/// of printf's float promotion: a widening conversion or a constant) are not counted.
pub fn fp64_use(module: &ir::Module) -> Option<String> {
    use ir::{TypeData, ValueDef};
    fn has_f64(types: &ir::TypeTable, t: ir::Type, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        match types.get(t) {
            TypeData::Float { bits } => *bits == 64,
            TypeData::Vector { elem, .. } | TypeData::Array { elem, .. } => has_f64(types, *elem, depth + 1),
            TypeData::Pointer { pointee, .. } => has_f64(types, *pointee, depth + 1),
            TypeData::Struct { fields, .. } => fields.iter().any(|f| has_f64(types, *f, depth + 1)),
            TypeData::Function { ret, params } => {
                has_f64(types, *ret, depth + 1) || params.iter().any(|p| has_f64(types, *p, depth + 1))
            }
            _ => false,
        }
    }
    let types = &module.types;
    for (_, func) in module.functions.iter() {
        // Values used by anything other than printf.
        let mut used_elsewhere = std::collections::HashSet::new();
        for (_, inst) in func.insts.iter() {
            let printf = matches!(inst, ir::InstData::ExtInst { opcode, .. } if *opcode == Op::printf as u32);
            if !printf {
                inst.for_each_operand(|v| {
                    used_elsewhere.insert(v);
                });
            }
        }
        let found = func.params.iter().any(|p| has_f64(types, *p, 0))
            || has_f64(types, func.ret, 0)
            || func.values.iter().any(|(v, data)| {
                if !has_f64(types, data.ty, 0) {
                    return false;
                }
                let carrier = match data.def {
                    ValueDef::Const(_) => true,
                    ValueDef::Result(i) => {
                        matches!(func.insts[i], ir::InstData::Convert { op: ConvertOp::FConvert, .. })
                    }
                    _ => false,
                };
                !carrier || used_elsewhere.contains(&v)
            });
        if found {
            return Some(func.name.clone());
        }
    }
    module.globals.iter().any(|(_, g)| has_f64(types, g.ty, 0)).then(|| "a program-scope variable".to_string())
}

/// Sets the alignment of load or store `v` (a power of two; otherwise left as it is).
pub(super) fn set_align(v: Val<'_>, align: u32) {
    if let Some(i) = v.as_instruction_value() {
        if align.is_power_of_two() {
            let _ = i.set_alignment(align);
        }
    }
}

/// `p + offset * stride` elements of type `elem`.
fn elem_ptr<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    p: Val<'ctx>,
    elem: BasicTypeEnum<'ctx>,
    offset: Val<'ctx>,
    stride: u32,
) -> R<inkwell::values::PointerValue<'ctx>> {
    let p = as_ptr(p)?;
    let off = as_int(offset)?;
    let off = fx.b.build_int_cast_sign_flag(off, fx.i64(), false, "")?;
    let idx = fx.b.build_int_mul(off, fx.i64().const_int(stride as u64, false), "")?;
    gep(&fx.b, elem, p, &[idx], false)
}

/// Stores an out-parameter result through the pointer `p`.
fn store_out<'ctx>(fx: &FnLower<'_, 'ctx, '_>, p: Val<'ctx>, v: Val<'ctx>) -> R<()> {
    let p = as_ptr(p)?;
    fx.b.build_store(p, v)?;
    Ok(())
}

/// An integer constant of a (possibly 128-bit) integer type, splatted.
fn const_wide<'ctx>(t: BasicTypeEnum<'ctx>, v: i128) -> R<Val<'ctx>> {
    let BasicTypeEnum::IntType(it) = elem_type(t) else { bail!("not an integer type") };
    let words = [v as u64, (v >> 64) as u64];
    let c = it.const_int_arbitrary_precision(&words);
    super::llvm::splat_const(t, c.into())
}

/// Calls the host function `name` (a `mathlib` function, `super::host`) once per lane of
/// `args`, whose lanes have the scalar types `params`; the result has type `ret_ty`.
fn host_call<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    name: &str,
    ret_ty: BasicTypeEnum<'ctx>,
    params: &[BasicTypeEnum<'ctx>],
    args: &[Val<'ctx>],
) -> R<Val<'ctx>> {
    if params.len() != args.len() || params.iter().zip(args).any(|(p, a)| *p != elem_type(a.get_type())) {
        bail!("host math function called with arguments of the wrong types");
    }
    let ps: Vec<BasicMetadataTypeEnum<'ctx>> = params.iter().map(|t| (*t).into()).collect();
    let fn_ty = elem_type(ret_ty).fn_type(&ps, false);
    let callee = super::host::declare(&fx.e.m, name, fn_ty).as_global_value().as_pointer_value();
    fx.per_lane(ret_ty, args, |s, la| {
        let cargs: Vec<BasicMetadataValueEnum<'ctx>> = la.iter().map(|a| (*a).into()).collect();
        let call = s.b.build_indirect_call(fn_ty, callee, &cargs, "")?;
        call.try_as_basic_value().basic().ok_or_else(|| Error("host math function without a result".into()))
    })
}

/// `x` with its float lanes widened to f64 (exact).
fn widen_f64<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<Val<'ctx>> {
    let t = x.get_type();
    if int_width(t) == 64 {
        return Ok(x);
    }
    fx.cast(O::FPExt, x, with_elem(t, fx.cx().f64_type().into())?)
}

/// Widens f16 lanes to f32 and f32 lanes to f64 (f64 stays): returns the value and its type.
fn promote<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<(Val<'ctx>, BasicTypeEnum<'ctx>)> {
    let t = x.get_type();
    let wide: BasicTypeEnum<'ctx> = match int_width(t) {
        16 => fx.cx().f32_type().into(),
        32 => fx.cx().f64_type().into(),
        _ => return Ok((x, t)),
    };
    let wt = with_elem(t, wide)?;
    Ok((fx.cast(O::FPExt, x, wt)?, wt))
}

/// Rounds `x` back to `t` (after `promote`).
fn demote<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>, t: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
    if x.get_type() == t {
        Ok(x)
    } else {
        fx.cast(O::FPTrunc, x, t)
    }
}

/// Sum of the lane products (in order).
fn dot<'ctx>(fx: &FnLower<'_, 'ctx, '_>, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
    let p = fx.binop(O::FMul, a, b)?;
    if !p.get_type().is_vector_type() {
        return Ok(p);
    }
    let et = elem_type(p.get_type());
    let start = fx.cfloat(et, -0.0)?;
    fx.intrinsic("llvm.vector.reduce.fadd", &[p.get_type()], &[start, p])
}

/// Euclidean length without overflow: f32/f16 lanes arrive promoted (exact squares);
/// f64 lanes are scaled by a power of two (exactly) that brings the largest magnitude into
/// [1, 2), and the root is scaled back with one rounding.
fn length<'ctx>(fx: &FnLower<'_, 'ctx, '_>, v: Val<'ctx>) -> R<Val<'ctx>> {
    let t = v.get_type();
    if !t.is_vector_type() {
        return fx.intr("llvm.fabs", &[v]);
    }
    if int_width(t) < 64 {
        let d = dot(fx, v, v)?;
        return fx.intr("llvm.sqrt", &[d]);
    }
    let (s, k) = pow2_scaled(fx, v)?;
    let r = fx.intr("llvm.sqrt", &[dot(fx, s, s)?])?;
    let back = fx.binop(O::Sub, fx.cint(k.get_type(), 0)?, k)?;
    let r = fx.intrinsic("llvm.ldexp", &[r.get_type(), k.get_type()], &[r, back])?;
    // An infinite component makes the length infinite even next to a NaN.
    let abs = fx.intr("llvm.fabs", &[v])?;
    let m = fx.intr("llvm.vector.reduce.fmax", &[abs])?;
    let inf = fx.cfloat(elem_type(t), f64::INFINITY)?;
    let isinf = fx.fcmp(FloatPredicate::OEQ, m, inf)?;
    fx.select(isinf, inf, r)
}

/// A vector of doubles times 2^k (exact), where k (an i32) brings its largest finite
/// magnitude into [1, 2) (k = 1023 for a zero vector, limited to [-1022, 1023]).
fn pow2_scaled<'ctx>(fx: &FnLower<'_, 'ctx, '_>, v: Val<'ctx>) -> R<(Val<'ctx>, Val<'ctx>)> {
    let t = v.get_type();
    let abs = fx.intr("llvm.fabs", &[v])?;
    let m = fx.intr("llvm.vector.reduce.fmax", &[abs])?;
    let i64t: BasicTypeEnum<'ctx> = fx.i64().into();
    let bits = fx.cast(O::BitCast, m, i64t)?;
    let e = fx.binop(O::LShr, bits, fx.cint(i64t, 52)?)?;
    // Biased exponent of the scale: 2046 - E, kept to [1, 2046] (normal powers of two).
    let sb = fx.binop(O::Sub, fx.cint(i64t, 2046)?, e)?;
    let sb = fx.intr("llvm.smax", &[sb, fx.cint(i64t, 1)?])?;
    let sb = fx.intr("llvm.smin", &[sb, fx.cint(i64t, 2046)?])?;
    let scale = fx.cast(O::BitCast, fx.binop(O::Shl, sb, fx.cint(i64t, 52)?)?, elem_type(t))?;
    let s = fx.binop(O::FMul, v, fx.splat_to(scale, t)?)?;
    let k = fx.binop(O::Sub, sb, fx.cint(i64t, 1023)?)?;
    Ok((s, fx.int_resize(k, fx.i32().into(), true)?))
}

/// sin(pi * x) with exact argument reduction: x - 2 * rint(x / 2) lies in [-1, 1], folded
/// into [-0.5, 0.5] (sin(pi - a) = sin(a)), so that integers give exact zeros.
fn sinpi<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<Val<'ctx>> {
    let t = x.get_type();
    let half = fx.binop(O::FMul, x, fx.cfloat(t, 0.5)?)?;
    let k = fx.intr("llvm.rint", &[half])?;
    let r = fx.binop(O::FSub, x, fx.binop(O::FMul, k, fx.cfloat(t, 2.0)?)?)?;
    let one = fx.cfloat(t, 1.0)?;
    let gt = fx.fcmp(FloatPredicate::OGT, r, fx.cfloat(t, 0.5)?)?;
    let lt = fx.fcmp(FloatPredicate::OLT, r, fx.cfloat(t, -0.5)?)?;
    let r = fx.select(gt, fx.binop(O::FSub, one, r)?, r)?;
    let r = fx.select(lt, fx.binop(O::FSub, fx.cfloat(t, -1.0)?, r)?, r)?;
    let s = math(fx, Func::Sin, Accuracy::Tight, "llvm.sin", t, &[fx.binop(O::FMul, r, fx.cfloat(t, PI)?)?])?;
    // sinpi(+-0) = +-0; other exact zeros carry the sign of x.
    let z = fx.fcmp(FloatPredicate::OEQ, s, fx.cfloat(t, 0.0)?)?;
    let sz = fx.intrinsic("llvm.copysign", &[t], &[fx.cfloat(t, 0.0)?, x])?;
    fx.select(z, sz, s)
}

/// cos(pi * x) = sin(pi * (0.5 - |r|)) with r = x - 2 * rint(x / 2).
fn cospi<'ctx>(fx: &FnLower<'_, 'ctx, '_>, x: Val<'ctx>) -> R<Val<'ctx>> {
    let t = x.get_type();
    let half = fx.binop(O::FMul, x, fx.cfloat(t, 0.5)?)?;
    let k = fx.intr("llvm.rint", &[half])?;
    let r = fx.binop(O::FSub, x, fx.binop(O::FMul, k, fx.cfloat(t, 2.0)?)?)?;
    let r = fx.intr("llvm.fabs", &[r])?;
    let a = fx.binop(O::FSub, fx.cfloat(t, 0.5)?, r)?;
    let s = math(fx, Func::Sin, Accuracy::Tight, "llvm.sin", t, &[fx.binop(O::FMul, a, fx.cfloat(t, PI)?)?])?;
    // cospi of a half-integer is +0.
    let z = fx.fcmp(FloatPredicate::OEQ, s, fx.cfloat(t, 0.0)?)?;
    fx.select(z, fx.cfloat(t, 0.0)?, s)
}

/// The build-log line saying that math built-ins on vectors in `module` run per lane because
/// the vector path is unavailable (`vecmath::status`); `None` when it is available or unused.
pub fn vector_math_note(module: &ir::Module, vector_bits: u32, vector_math: bool) -> Option<String> {
    let why = vecmath::status(vector_bits, vector_math).err()?;
    let through_sleef = |op: Op| {
        sleef_func(op).is_some()
            || matches!(
                op,
                Op::cbrt
                    | Op::pown
                    | Op::powr
                    | Op::sincos
                    | Op::sinpi
                    | Op::cospi
                    | Op::asinpi
                    | Op::acospi
                    | Op::atanpi
                    | Op::atan2pi
            )
    };
    let used = module.functions.iter().any(|(_, func)| {
        func.insts.iter().any(|(i, inst)| {
            let ir::InstData::ExtInst { opcode, .. } = inst else { return false };
            let vector = func.inst_result[i]
                .is_some_and(|v| matches!(module.types.get(func.value_type(v)), ir::TypeData::Vector { .. }));
            vector && Op::from_u32(*opcode).is_some_and(through_sleef)
        })
    });
    used.then_some(why)
}

/// The SLEEF function (and the accuracy it needs) for an OpenCL.std instruction that maps
/// onto one.
fn sleef_func(op: Op) -> Option<(Func, Accuracy)> {
    let native = matches!(
        op,
        Op::native_sin
            | Op::half_sin
            | Op::native_cos
            | Op::half_cos
            | Op::native_tan
            | Op::half_tan
            | Op::native_exp
            | Op::half_exp
            | Op::native_exp2
            | Op::half_exp2
            | Op::native_exp10
            | Op::half_exp10
            | Op::native_log
            | Op::half_log
            | Op::native_log2
            | Op::half_log2
            | Op::native_log10
            | Op::half_log10
    );
    let f = match op {
        Op::sin | Op::native_sin | Op::half_sin => Func::Sin,
        Op::cos | Op::native_cos | Op::half_cos => Func::Cos,
        Op::tan | Op::native_tan | Op::half_tan => Func::Tan,
        Op::asin => Func::Asin,
        Op::acos => Func::Acos,
        Op::atan => Func::Atan,
        Op::atan2 => Func::Atan2,
        Op::sinh => Func::Sinh,
        Op::cosh => Func::Cosh,
        Op::tanh => Func::Tanh,
        Op::asinh => Func::Asinh,
        Op::acosh => Func::Acosh,
        Op::atanh => Func::Atanh,
        Op::exp | Op::native_exp | Op::half_exp => Func::Exp,
        Op::exp2 | Op::native_exp2 | Op::half_exp2 => Func::Exp2,
        Op::exp10 | Op::native_exp10 | Op::half_exp10 => Func::Exp10,
        Op::expm1 => Func::Expm1,
        Op::log | Op::native_log | Op::half_log => Func::Log,
        Op::log2 | Op::native_log2 | Op::half_log2 => Func::Log2,
        Op::log10 | Op::native_log10 | Op::half_log10 => Func::Log10,
        Op::log1p => Func::Log1p,
        Op::pow => Func::Pow,
        Op::hypot => Func::Hypot,
        Op::erf => Func::Erf,
        Op::erfc => Func::Erfc,
        Op::tgamma => Func::Tgamma,
        Op::lgamma => Func::Lgamma,
        Op::nextafter => Func::Nextafter,
        _ => return None,
    };
    Some((f, if native { Accuracy::Native } else { Accuracy::Bound }))
}

/// `f` on `args` (all of type `t`): SLEEF's vector function for vectors where the target and
/// library allow it (`vecmath`), otherwise the LLVM intrinsic `intr` (libm per lane).
fn math<'ctx>(
    fx: &FnLower<'_, 'ctx, '_>,
    f: Func,
    acc: Accuracy,
    intr: &str,
    t: BasicTypeEnum<'ctx>,
    args: &[Val<'ctx>],
) -> R<Val<'ctx>> {
    match vecmath::call(fx, f, acc, t, args)? {
        Some(v) => Ok(v),
        None => fx.intrinsic(intr, &[t], args),
    }
}
