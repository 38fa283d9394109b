//! Math built-ins on vectors (compiler/src/back/vecmath.rs: SLEEF's vector functions, chunked
//! to the host's SIMD width). Every function on float3, float4, float16, double3 and double8
//! against glibc oracles within the OpenCL C 3.0 ulp bounds, with the special values (NaN,
//! +-inf, +-0, denormals, huge trig arguments) the spec requires; and a check, in the LLVM IR
//! the back end produces, that vectors take the vector path (no per-lane libm calls).
#![allow(clippy::excessive_precision)]

mod common;

use common::*;
use softcl_compiler::{compile_source, CodegenKnobs, NativeProgram, Target};
use std::sync::Arc;

fn build(src: &str) -> Arc<NativeProgram> {
    let t = Target::default();
    let prog = compile_source(src, "-cl-std=CL3.0", &t).unwrap_or_else(|e| panic!("front end: {}\n{src}", e.log));
    prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}\n{src}", e.log))
}

/// Runs `o = expr` over `lanes`-component vectors of `elem` ("float" or "double"): `x`, `y`
/// are the vectors at `a`, `b`; `c` and the int vector `ie` are initialised to 0, `expr` may
/// write them through pointers (their sum goes to the second output). Values travel as f64.
fn run_vec(elem: &str, lanes: u32, expr: &str, a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    run_vec_opts(elem, lanes, expr, a, b, "")
}

/// [`run_vec`] with `prefix` (pragmas) before the kernel.
fn run_vec_opts(elem: &str, lanes: u32, expr: &str, a: &[f64], b: &[f64], prefix: &str) -> (Vec<f64>, Vec<f64>) {
    let n = lanes as usize;
    let len = a.len().div_ceil(n) * n;
    let v = if lanes == 1 { String::new() } else { lanes.to_string() };
    // Scalars: plain loads and stores.
    let scalar = lanes == 1;
    let load = if scalar { "a[i], y = b[i]".to_string() } else { format!("vload{v}(i, a), y = vload{v}(i, b)") };
    let st = |e: &str, o: &str| if scalar { format!("{o}[i] = {e};") } else { format!("vstore{v}({e}, i, {o});") };
    let (s1, s2) = (st(expr, "o"), st(&format!("c + convert_{elem}{v}(ie)"), "o2"));
    let src = format!(
        "{prefix}kernel void k(global const {elem}* a, global const {elem}* b, global {elem}* o, global {elem}* o2) {{
            size_t i = get_global_id(0);
            {elem}{v} x = {load}, c = 0;
            int{v} ie = 0;
            {s1}
            {s2}
        }}"
    );
    let p = build(&src);
    let k = p.kernel("k").unwrap();
    let size = if elem == "double" { 8 } else { 4 };
    let fill = |src: &[f64]| {
        let mut buf = AlignedBuf::new(len * size);
        for (i, chunk) in buf.bytes_mut().chunks_mut(size).enumerate() {
            let x = src.get(i).copied().unwrap_or(1.0);
            if size == 8 {
                chunk.copy_from_slice(&x.to_le_bytes());
            } else {
                chunk.copy_from_slice(&(x as f32).to_le_bytes());
            }
        }
        buf
    };
    let (ab, bb) = (fill(a), fill(b));
    let mut ob = AlignedBuf::new(len * size);
    let mut ob2 = AlignedBuf::new(len * size);
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, ab.bytes().as_ptr());
    args.set_ptr(&k.info, 1, bb.bytes().as_ptr());
    args.set_ptr(&k.info, 2, ob.as_mut_ptr());
    args.set_ptr(&k.info, 3, ob2.as_mut_ptr());
    run_1d(k, &mut args, (len / n) as u64, 1);
    let read = |buf: &AlignedBuf| -> Vec<f64> {
        buf.bytes()
            .chunks(size)
            .take(a.len())
            .map(|c| {
                if size == 8 {
                    f64::from_le_bytes(c.try_into().unwrap())
                } else {
                    f64::from(f32::from_le_bytes(c.try_into().unwrap()))
                }
            })
            .collect()
    };
    (read(&ob), read(&ob2))
}

/// 2^k for k in [-1074, 1023].
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// Distance of `got` from the oracle `want` in ulps of the result type (f32 when `float`):
/// 0 for two NaNs or equal values, infinite when only one is finite (an oracle beyond FLT_MAX
/// and an infinity of its sign count as equal in float).
fn ulps(got: f64, want: f64, float: bool) -> f64 {
    if (got.is_nan() && want.is_nan()) || got == want {
        return 0.0;
    }
    let (max, emin, mant) = if float { (f64::from(f32::MAX), -126, 23) } else { (f64::MAX, -1022, 52) };
    if float && got.is_infinite() && want.abs() > max && got.signum() == want.signum() {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    let e = if want == 0.0 { emin } else { (want.abs().log2().floor() as i32).max(emin) };
    (got - want).abs() / pow2(e - mant)
}

/// The result the spec requires where the oracle is NaN, an infinity or a zero (exactly those,
/// with the sign of a zero); elsewhere the ulp distance must be within `bound`.
fn check(what: &str, got: f64, want: f64, bound: f64, float: bool) -> Result<f64, String> {
    let want_r = if float { f64::from(want as f32) } else { want };
    if want.is_nan() {
        return if got.is_nan() { Ok(0.0) } else { Err(format!("{what} = {got:e}, want NaN")) };
    }
    if want == 0.0 || want.is_infinite() {
        return if got.to_bits() == want_r.to_bits() {
            Ok(0.0)
        } else {
            Err(format!("{what} = {got:e}, want {want_r:e} exactly"))
        };
    }
    let u = ulps(got, want, float);
    if u <= bound {
        Ok(u)
    } else {
        Err(format!("{what} = {got:e} ({:#x}), want {want:e}: {u:.2} ulp > {bound}", got.to_bits()))
    }
}

/// xorshift64*: deterministic inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn any_finite(&mut self, float: bool) -> f64 {
        loop {
            let v = if float { f64::from(f32::from_bits(self.next() as u32)) } else { f64::from_bits(self.next()) };
            if v.is_finite() {
                return v;
            }
        }
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Special values: zeros, infinities, NaN, denormals, extremes, huge trig arguments, and
/// values around the interesting points of the functions (1, 0.5, integers, overflow limits).
fn special(float: bool) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0e30,
        -1.0e30,
        1.0e-30,
        12345678.9,
        0.7,
        88.7,
        -103.0,
        1.0e-8,
        // tgamma near FLT_MIN and DBL_MIN (the CTS found SLEEF 29 and 1621 ulp off there).
        -34.99609375,
        -172.0000000000036,
        -171.7,
        -175.3,
    ];
    if float {
        v.extend([1.4e-45, -1.4e-45, 1.1754942e-38, 1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0e38, 89.0, -89.4]);
    } else {
        v.extend([4.9e-324, -4.9e-324, 2.2e-308, f64::MAX, f64::MIN, 1.0e300, -1.0e300, 709.7, -745.0, 710.2, -710.47]);
    }
    v.into_iter().map(|x| if float { f64::from(x as f32) } else { x }).collect()
}

extern "C" {
    fn sin(x: f64) -> f64;
    fn cos(x: f64) -> f64;
    fn tan(x: f64) -> f64;
    fn asin(x: f64) -> f64;
    fn acos(x: f64) -> f64;
    fn atan(x: f64) -> f64;
    fn atan2(y: f64, x: f64) -> f64;
    fn sinh(x: f64) -> f64;
    fn cosh(x: f64) -> f64;
    fn tanh(x: f64) -> f64;
    fn asinh(x: f64) -> f64;
    fn acosh(x: f64) -> f64;
    fn atanh(x: f64) -> f64;
    fn exp(x: f64) -> f64;
    fn exp2(x: f64) -> f64;
    fn exp10(x: f64) -> f64;
    fn expm1(x: f64) -> f64;
    fn log(x: f64) -> f64;
    fn log2(x: f64) -> f64;
    fn log10(x: f64) -> f64;
    fn log1p(x: f64) -> f64;
    fn pow(x: f64, y: f64) -> f64;
    fn cbrt(x: f64) -> f64;
    fn hypot(x: f64, y: f64) -> f64;
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
    fn tgamma(x: f64) -> f64;
    fn lgamma(x: f64) -> f64;
    fn fmod(x: f64, y: f64) -> f64;
    fn remainder(x: f64, y: f64) -> f64;
    fn nextafter(x: f64, y: f64) -> f64;
    fn nextafterf(x: f32, y: f32) -> f32;
}

type F1 = unsafe extern "C" fn(f64) -> f64;
type F2 = unsafe extern "C" fn(f64, f64) -> f64;

#[derive(Clone, Copy)]
enum Oracle {
    One(F1),
    Two(F2),
    /// A formula in Rust (no libm function).
    Own(fn(f64, f64, bool) -> f64),
}

impl Oracle {
    fn eval(self, x: f64, y: f64, float: bool) -> f64 {
        match self {
            // SAFETY: pure libm functions of doubles.
            Oracle::One(f) => unsafe { f(x) },
            // SAFETY: as above.
            Oracle::Two(f) => unsafe { f(x, y) },
            Oracle::Own(f) => f(x, y, float),
        }
    }
}

/// One function: the OpenCL C expression, the oracle, the spec's bound for float and double,
/// glibc's own error for double (the oracle is glibc; the glibc manual's table for x86-64),
/// and the interval of the random inputs (`x`, and `y` for two-argument functions).
struct Case {
    expr: &'static str,
    oracle: Oracle,
    bound_f: f64,
    bound_d: f64,
    glibc_d: f64,
    x: (f64, f64),
    y: (f64, f64),
}

fn nextafter_either(x: f64, y: f64, float: bool) -> f64 {
    if float {
        // SAFETY: a pure libm function.
        f64::from(unsafe { nextafterf(x as f32, y as f32) })
    } else {
        // SAFETY: a pure libm function.
        unsafe { nextafter(x, y) }
    }
}

/// sin(pi x) with the exact reduction r = x - 2 rint(x/2); zeros get the sign of x.
fn sinpi_oracle(x: f64, _: f64, _: bool) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = x - 2.0 * (x / 2.0).round_ties_even();
    let s = (std::f64::consts::PI * r).sin();
    if r == 0.0 || r.abs() == 1.0 {
        0.0f64.copysign(x)
    } else {
        s
    }
}

fn cospi_oracle(x: f64, _: f64, _: bool) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = (x - 2.0 * (x / 2.0).round_ties_even()).abs();
    if r == 0.5 {
        return 0.0;
    }
    (std::f64::consts::PI * (0.5 - r)).sin()
}

/// SoftCL's own double tanpi (back_fp64 holds it to the bound); float rounds it.
fn tanpi_oracle(x: f64, _: f64, _: bool) -> f64 {
    softcl_compiler::back::mathlib::softcl_tanpi(x)
}

fn cbrt_oracle(x: f64, _: f64, float: bool) -> f64 {
    if float {
        // SAFETY: a pure libm function; glibc's double cbrt is far within float's bound.
        unsafe { cbrt(x) }
    } else {
        softcl_compiler::back::mathlib::softcl_cbrt(x)
    }
}

fn cases() -> Vec<Case> {
    use Oracle::*;
    let c = |expr, oracle, bound_f, bound_d, glibc_d, x, y| Case { expr, oracle, bound_f, bound_d, glibc_d, x, y };
    let none = (0.0, 0.0);
    vec![
        c("sin(x)", One(sin), 4.0, 4.0, 1.0, (-100.0, 100.0), none),
        c("cos(x)", One(cos), 4.0, 4.0, 1.0, (-100.0, 100.0), none),
        c("tan(x)", One(tan), 5.0, 5.0, 1.0, (-100.0, 100.0), none),
        c("asin(x)", One(asin), 4.0, 4.0, 1.0, (-1.0, 1.0), none),
        c("acos(x)", One(acos), 4.0, 4.0, 1.0, (-1.0, 1.0), none),
        c("atan(x)", One(atan), 5.0, 5.0, 1.0, (-10.0, 10.0), none),
        c("atan2(x, y)", Two(atan2), 6.0, 6.0, 1.0, (-10.0, 10.0), (-10.0, 10.0)),
        c("sinh(x)", One(sinh), 4.0, 4.0, 2.0, (-90.0, 90.0), none),
        c("cosh(x)", One(cosh), 4.0, 4.0, 2.0, (-90.0, 90.0), none),
        c("tanh(x)", One(tanh), 5.0, 5.0, 2.0, (-20.0, 20.0), none),
        c("asinh(x)", One(asinh), 4.0, 4.0, 2.0, (-1.0e4, 1.0e4), none),
        c("acosh(x)", One(acosh), 4.0, 4.0, 2.0, (1.0, 1.0e4), none),
        c("atanh(x)", One(atanh), 5.0, 5.0, 2.0, (-1.0, 1.0), none),
        c("exp(x)", One(exp), 3.0, 3.0, 1.0, (-100.0, 100.0), none),
        c("exp2(x)", One(exp2), 3.0, 3.0, 1.0, (-130.0, 130.0), none),
        c("exp10(x)", One(exp10), 3.0, 3.0, 2.0, (-40.0, 40.0), none),
        c("expm1(x)", One(expm1), 3.0, 3.0, 1.0, (-20.0, 20.0), none),
        c("log(x)", One(log), 3.0, 3.0, 1.0, (0.0, 1.0e6), none),
        c("log2(x)", One(log2), 3.0, 3.0, 1.0, (0.0, 1.0e6), none),
        c("log10(x)", One(log10), 3.0, 3.0, 2.0, (0.0, 1.0e6), none),
        c("log1p(x)", One(log1p), 2.0, 2.0, 1.0, (-1.0, 10.0), none),
        c("pow(x, y)", Two(pow), 16.0, 16.0, 1.0, (0.0, 10.0), (-40.0, 40.0)),
        c("cbrt(x)", Own(cbrt_oracle), 2.0, 2.0, 0.5, (-1.0e3, 1.0e3), none),
        c("hypot(x, y)", Two(hypot), 4.0, 4.0, 1.0, (-1.0e3, 1.0e3), (-1.0e3, 1.0e3)),
        c("erf(x)", One(erf), 16.0, 16.0, 1.0, (-6.0, 6.0), none),
        c("erfc(x)", One(erfc), 16.0, 16.0, 5.0, (-6.0, 30.0), none),
        c("tgamma(x)", One(tgamma), 16.0, 16.0, 10.0, (-20.0, 40.0), none),
        c("fmod(x, y)", Two(fmod), 0.0, 0.0, 0.0, (-1.0e3, 1.0e3), (-10.0, 10.0)),
        c("remainder(x, y)", Two(remainder), 0.0, 0.0, 0.0, (-1.0e3, 1.0e3), (-10.0, 10.0)),
        c("nextafter(x, y)", Own(nextafter_either), 0.0, 0.0, 0.0, (-1.0e3, 1.0e3), (-1.0e3, 1.0e3)),
        c("sinpi(x)", Own(sinpi_oracle), 4.0, 4.0, 1.0, (-100.0, 100.0), none),
        c("cospi(x)", Own(cospi_oracle), 4.0, 4.0, 1.0, (-100.0, 100.0), none),
        c("tanpi(x)", Own(tanpi_oracle), 6.0, 6.0, 0.0, (-100.0, 100.0), none),
        c("powr(x, y)", Two(pow), 16.0, 16.0, 1.0, (0.0, 10.0), (-40.0, 40.0)),
    ]
}

/// Inputs of one case: every pair of special values (one-argument functions: each special
/// value), then random finite values of every magnitude and random values in the case's
/// intervals.
fn case_inputs(case: &Case, float: bool, two: bool) -> (Vec<f64>, Vec<f64>) {
    let sp = special(float);
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    if two {
        for &x in &sp {
            for &y in &sp {
                xs.push(x);
                ys.push(y);
            }
        }
    } else {
        xs.extend(&sp);
        ys.extend(sp.iter().map(|_| 1.0));
    }
    let mut r = Rng(0x5eed ^ case.expr.len() as u64);
    let round = |v: f64| if float { f64::from(v as f32) } else { v };
    for i in 0..1500 {
        let (x, y) = if i % 3 == 0 {
            (r.any_finite(float), r.any_finite(float))
        } else {
            (round(r.range(case.x.0, case.x.1)), round(r.range(case.y.0, case.y.1)))
        };
        xs.push(x);
        ys.push(if two { y } else { 1.0 });
    }
    (xs, ys)
}

/// powr(x, y) for x < 0 is NaN; otherwise pow's value for the oracle, except where powr's
/// special values differ from pow's.
fn powr_want(x: f64, y: f64) -> f64 {
    if x < 0.0 || x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if ((x == 0.0 || x.is_infinite()) && y == 0.0) || (x == 1.0 && y.is_infinite()) {
        return f64::NAN;
    }
    // SAFETY: a pure libm function.
    unsafe { pow(x.abs(), y) }
}

fn run_case(case: &Case, elem: &str, widths: &[u32]) -> Vec<String> {
    let float = elem == "float";
    let two = case.expr.contains('y');
    let (xs, ys) = case_inputs(case, float, two);
    let bound = if float { case.bound_f } else { case.bound_d + case.glibc_d };
    let mut errors = Vec::new();
    for &w in widths {
        let (got, _) = run_vec(elem, w, case.expr, &xs, &ys);
        let mut worst = 0.0f64;
        for i in 0..xs.len() {
            let want = if case.expr.starts_with("powr") {
                powr_want(xs[i], ys[i])
            } else {
                case.oracle.eval(xs[i], ys[i], float)
            };
            let what = format!("{elem}{w} {} with x = {:e}, y = {:e}", case.expr, xs[i], ys[i]);
            match check(&what, got[i], want, bound, float) {
                Ok(u) => worst = worst.max(u),
                Err(e) => errors.push(e),
            }
        }
        eprintln!("{elem}{w} {}: max {worst:.3} ulp (bound {bound})", case.expr);
    }
    errors
}

fn run_all(elem: &str, widths: &[u32], filter: impl Fn(&Case) -> bool) {
    let mut errors = Vec::new();
    for case in cases().iter().filter(|c| filter(c)) {
        errors.extend(run_case(case, elem, widths));
    }
    // The first failure of each function and width, and how many there are.
    let mut firsts: Vec<(String, usize, &String)> = Vec::new();
    for e in &errors {
        let key: String = e.split(" with ").next().unwrap_or(e).to_string();
        match firsts.iter_mut().find(|(k, _, _)| *k == key) {
            Some(f) => f.1 += 1,
            None => firsts.push((key, 1, e)),
        }
    }
    assert!(errors.is_empty(), "{} failures:\n{firsts:#?}", errors.len());
}

#[test]
fn float_vectors_within_bounds_and_special_values() {
    run_all("float", &[3, 4, 8, 16], |_| true);
}

#[test]
fn double_vectors_within_bounds_and_special_values() {
    run_all("double", &[2, 3, 8], |c| !["sinpi", "cospi", "tanpi"].iter().any(|f| c.expr.starts_with(f)));
}

/// lgamma has no bound in OpenCL C; it is held to 16 ulp away from its zeros (x = 1, 2 and
/// the negative axis), and to the special values everywhere.
#[test]
fn lgamma_vectors() {
    let sp: Vec<f64> = vec![0.0, -0.0, 1.0, 2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -1.0, -2.0];
    let mut r = Rng(77);
    for elem in ["float", "double"] {
        let float = elem == "float";
        let mut xs = sp.clone();
        xs.extend((0..1000).map(|_| {
            let v = r.range(2.5, 1.0e4);
            if float {
                f64::from(v as f32)
            } else {
                v
            }
        }));
        for w in [4u32, 16] {
            let (got, _) = run_vec(elem, w, "lgamma(x)", &xs, &xs);
            for i in 0..xs.len() {
                // SAFETY: a pure libm function.
                let want = unsafe { lgamma(xs[i]) };
                let what = format!("{elem}{w} lgamma({:e})", xs[i]);
                check(&what, got[i], want, 16.0, float).unwrap();
            }
        }
    }
}

/// sincos's two results, and the asinpi family computed through the wider type.
#[test]
fn sincos_and_pi_functions_on_vectors() {
    let xs: Vec<f64> = (0..200).map(|i| (i as f64 - 100.0) * 0.0137).chain([0.0, -0.0, 1.0, -1.0]).collect();
    for (elem, w) in [("float", 16u32), ("float", 3), ("double", 8)] {
        let float = elem == "float";
        let xs: Vec<f64> = xs.iter().map(|&x| if float { f64::from(x as f32) } else { x }).collect();
        let (s, c) = run_vec(elem, w, "sincos(x, &c)", &xs, &xs);
        for i in 0..xs.len() {
            check(&format!("{elem}{w} sincos({}).sin", xs[i]), s[i], xs[i].sin(), 4.0, float).unwrap();
            check(&format!("{elem}{w} sincos({}).cos", xs[i]), c[i], xs[i].cos(), 4.0, float).unwrap();
        }
        let pi = std::f64::consts::PI;
        for (expr, f, bound) in [
            ("asinpi(x)", (|x: f64| x.asin()) as fn(f64) -> f64, 5.0),
            ("acospi(x)", |x: f64| x.acos(), 5.0),
            ("atanpi(x)", |x: f64| x.atan(), 5.0),
            ("atan2pi(x, y)", |x: f64| x.atan2(0.75), 6.0),
        ] {
            let ys = vec![0.75; xs.len()];
            let (got, _) = run_vec(elem, w, expr, &xs, &ys);
            for i in 0..xs.len() {
                let slack = if float { 0.0 } else { 2.0 };
                check(&format!("{elem}{w} {expr} x = {}", xs[i]), got[i], f(xs[i]) / pi, bound + slack, float).unwrap();
            }
        }
    }
}

/// rootn of float vectors goes through SLEEF's double pow: special values (zeros, infinities,
/// negative x with even n, n = 0) and random values against SoftCL's own double rootn.
#[test]
fn rootn_on_float_vectors() {
    let sp = [0.0, -0.0, 8.0, -8.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0e-40, 3.0e38, 0.3];
    let ns = [0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 7.0, -8.0, 1000.0];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &x in &sp {
        for &n in &ns {
            xs.push(f64::from(x as f32));
            ys.push(n);
        }
    }
    let mut r = Rng(31);
    for _ in 0..2000 {
        xs.push(r.any_finite(true));
        ys.push((r.next() % 41) as f64 - 20.0);
    }
    for (w, conv) in [(3u32, "convert_int3"), (16, "convert_int16")] {
        let (got, _) = run_vec("float", w, &format!("rootn(x, {conv}(y))"), &xs, &ys);
        for i in 0..xs.len() {
            let want = softcl_compiler::back::mathlib::softcl_rootn(xs[i], ys[i] as i32);
            check(&format!("float{w} rootn({:e}, {})", xs[i], ys[i]), got[i], want, 16.0, true).unwrap();
        }
    }
}

/// pown(x, n) for vectors goes through the vector pow (in double for float).
#[test]
fn pown_on_vectors() {
    let xs: Vec<f64> = [0.0, -0.0, 2.0, -2.0, 0.5, -1.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 3.25, 10.0, -7.0]
        .repeat(4)
        .into_iter()
        .collect();
    let ns: Vec<f64> = (0..xs.len()).map(|i| [0.0, 1.0, -1.0, 3.0, -3.0, 4.0, 17.0, -8.0][i % 8]).collect();
    for (elem, w, conv) in [("float", 16u32, "convert_int16"), ("double", 8, "convert_int8")] {
        let float = elem == "float";
        let (got, _) = run_vec(elem, w, &format!("pown(x, {conv}(y))"), &xs, &ns);
        for i in 0..xs.len() {
            let x = if float { f64::from(xs[i] as f32) } else { xs[i] };
            // SAFETY: a pure libm function.
            let want = unsafe { pow(x, ns[i]) };
            check(&format!("{elem}{w} pown({x}, {})", ns[i]), got[i], want, 16.0, float).unwrap();
        }
    }
}

/// Half vectors go through float: sin, exp and pow of half8 / half16 within 2 ulp of half
/// (the OpenCL C bound for these in half is 2, 3 and 4 ulp), zeros with their sign.
#[test]
fn half_vectors_through_float() {
    let xs: Vec<f64> = (-512..512).map(|k| f64::from(k) / 64.0).chain([0.0, -0.0]).collect();
    let ys: Vec<f64> = xs.iter().map(|x| (x.abs() * 0.25).min(3.0)).collect();
    let half_ulp = |w: f64| pow2((w.abs().log2().floor() as i32).max(-14) - 10);
    for (w, conv) in [(8u32, "8"), (16, "16")] {
        for (expr, f, bound) in [
            ("sin", (|x: f64, _: f64| x.sin()) as fn(f64, f64) -> f64, 2.0),
            ("exp", |x: f64, _: f64| x.exp(), 3.0),
            ("pow", |x: f64, y: f64| x.abs().powf(y), 4.0),
        ] {
            let args = if expr == "pow" {
                format!("fabs(convert_half{conv}(x)), convert_half{conv}(y)")
            } else {
                format!("convert_half{conv}(x)")
            };
            let e = format!("convert_float{conv}({expr}({args}))");
            let src_expr = format!("({e})");
            let (got, _) =
                run_vec_opts("float", w, &src_expr, &xs, &ys, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
            for i in 0..xs.len() {
                let want = f(xs[i], ys[i]);
                if want == 0.0 {
                    assert_eq!(got[i].to_bits(), want.to_bits(), "half{w} {expr}({})", xs[i]);
                    continue;
                }
                if want.abs() > 65504.0 {
                    continue;
                }
                let err = (got[i] - want).abs() / half_ulp(want);
                assert!(err <= bound, "half{w} {expr}({}, {}) = {}, want {want}: {err} half ulp", xs[i], ys[i], got[i]);
            }
        }
    }
}

/// Widths OpenCL C has no type for, which the work-item vectorizer produces (<W x float>,
/// float4 x W = <4W x float>): built from IR, every lane against the oracle.
#[test]
fn wide_and_odd_vectors_from_ir() {
    use softcl_compiler::back::codegen;
    use softcl_compiler::ir::{FuncKind, Module, WorkItemQuery as Q};
    use softcl_compiler::AddressSpace as S;
    use spirv::OpenclStd100Op as Op;
    type Case = (Op, fn(f64, f64) -> f64, f64);
    let cases: [Case; 5] = [
        (Op::sin, |x, _| x.sin(), 4.0),
        (Op::exp, |x, _| x.exp(), 3.0),
        (Op::pow, |x, y| x.abs().powf(y), 16.0),
        // SAFETY: pure libm functions.
        (Op::asinh, |x, _| unsafe { asinh(x) }, 4.0),
        (Op::tgamma, |x, _| unsafe { tgamma(x) }, 16.0),
    ];
    let mut r = Rng(99);
    for (bits, widths) in [(32u16, &[5u32, 24, 32, 64][..]), (64, &[12, 64][..])] {
        let float = bits == 32;
        for &w in widths {
            for (op, oracle, bound) in cases {
                let mut m = Module::new();
                let ft = m.types.float(bits);
                let vt = m.types.vector(ft, w);
                let void = m.types.void();
                let pv = m.types.pointer(S::Global, vt);
                let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pv, pv, pv], void);
                let gid = fb.wi(Q::GlobalId, 0);
                let x = {
                    let px = fb.index(p[0], gid);
                    fb.load(px)
                };
                let y = {
                    let py = fb.index(p[1], gid);
                    fb.load(py)
                };
                let args = if op == Op::pow {
                    let ax = fb.ext(Op::fabs, vec![x], vt);
                    vec![ax, y]
                } else {
                    vec![x]
                };
                let res = fb.ext(op, args, vt);
                let po = fb.index(p[2], gid);
                fb.store(po, res);
                fb.ret(None);
                fb.finish_kernel(args_info("k", &[buffer_arg(), buffer_arg(), buffer_arg()]));
                let prog = codegen(&m, &Target::default()).expect("codegen");
                let k = prog.kernel("k").unwrap();
                // Vectors of other lengths are padded in memory (LLVM's alloc size): one each.
                let groups = if w.is_power_of_two() { 3usize } else { 1 };
                let n = groups * w as usize;
                let size = usize::from(bits / 8);
                let round = |v: f64| if float { f64::from(v as f32) } else { v };
                let mut xs: Vec<f64> = (0..n).map(|_| round(r.range(-30.0, 30.0))).collect();
                // Lanes that take the corrections: huge asinh arguments, tgamma below -170.
                xs[1] = round(if float { 1.0e30 } else { 1.0e200 });
                xs[n - 1] = round(-171.7);
                let ys: Vec<f64> = (0..n).map(|_| round(r.range(-4.0, 4.0))).collect();
                let fill = |v: &[f64]| {
                    let mut b = AlignedBuf::new(n * size);
                    for (c, x) in b.bytes_mut().chunks_mut(size).zip(v) {
                        if float {
                            c.copy_from_slice(&(*x as f32).to_le_bytes());
                        } else {
                            c.copy_from_slice(&x.to_le_bytes());
                        }
                    }
                    b
                };
                let (xb, yb) = (fill(&xs), fill(&ys));
                let mut ob = AlignedBuf::new(n * size);
                let mut a = ArgBlock::new(&k.info);
                a.set_ptr(&k.info, 0, xb.bytes().as_ptr());
                a.set_ptr(&k.info, 1, yb.bytes().as_ptr());
                a.set_ptr(&k.info, 2, ob.as_mut_ptr());
                run_1d(k, &mut a, groups as u64, 1);
                for (i, c) in ob.bytes().chunks(size).enumerate() {
                    let got = if float {
                        f64::from(f32::from_le_bytes(c.try_into().unwrap()))
                    } else {
                        f64::from_le_bytes(c.try_into().unwrap())
                    };
                    let want = oracle(xs[i], ys[i]);
                    let what = format!("<{w} x f{bits}> {op:?} lane {i}: x = {:e}, y = {:e}", xs[i], ys[i]);
                    check(&what, got, want, bound + if float { 0.0 } else { 2.0 }, float).unwrap();
                }
            }
        }
    }
}

extern "C" {
    fn frexp(x: f64, e: *mut i32) -> f64;
    fn frexpf(x: f32, e: *mut i32) -> f32;
    fn ilogb(x: f64) -> i32;
    fn ilogbf(x: f32) -> i32;
    fn logb(x: f64) -> f64;
    fn logbf(x: f32) -> f32;
}

/// frexp, ilogb and logb are computed inline from the exponent bits (no libm call per lane):
/// every special value, denormal and random bit pattern against glibc, scalars and vectors,
/// float and double (ilogb(NaN) is OpenCL's FP_ILOGBNAN = INT_MAX, glibc's INT_MIN).
#[test]
fn frexp_ilogb_logb_exact() {
    let mut r = Rng(5);
    for elem in ["float", "double"] {
        let float = elem == "float";
        let mut xs = special(float);
        xs.extend((0..600).map(|i| {
            let v = r.any_finite(float);
            // Denormals: a third of the random values.
            if i % 3 == 0 {
                if float {
                    f64::from(f32::from_bits((r.next() as u32) & 0x807f_ffff))
                } else {
                    f64::from_bits(r.next() & 0x800f_ffff_ffff_ffff)
                }
            } else {
                v
            }
        }));
        for w in [1u32, 3, 16] {
            let v = if w == 1 { String::new() } else { w.to_string() };
            let (m, e) = run_vec(elem, w, "frexp(x, &ie)", &xs, &xs);
            let (lb, _) = run_vec(elem, w, "logb(x)", &xs, &xs);
            let (il, _) = run_vec(elem, w, &format!("convert_{elem}{v}(ilogb(x))"), &xs, &xs);
            for i in 0..xs.len() {
                let x = xs[i];
                // SAFETY: pure libm functions; `ex` outlives the call.
                let (wm, we, wl, wi) = unsafe {
                    let mut ex = 0i32;
                    if float {
                        let wm = f64::from(frexpf(x as f32, &mut ex));
                        (wm, ex, f64::from(logbf(x as f32)), ilogbf(x as f32))
                    } else {
                        (frexp(x, &mut ex), ex, logb(x), ilogb(x))
                    }
                };
                let wi = if x.is_nan() { i32::MAX } else { wi };
                // Through convert_float, INT_MAX becomes 2^31.
                let wi = if float { f64::from(wi as f32) } else { f64::from(wi) };
                let same = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
                assert!(
                    same(m[i], wm) && e[i] == f64::from(we),
                    "{elem}{w} frexp({x:e}) = ({}, {}), want ({wm}, {we})",
                    m[i],
                    e[i]
                );
                assert!(same(lb[i], wl), "{elem}{w} logb({x:e}) = {}, want {wl}", lb[i]);
                assert_eq!(il[i], wi, "{elem}{w} ilogb({x:e})");
            }
        }
    }
}

// ------------------------------------------------------------- the vector path is taken

/// A kernel using math built-ins on float16 / double8 / float3.
const VECTOR_MATH_KERNEL: &str = "kernel void k(global float16* a, global double8* b, global float3* c) {
    size_t i = get_global_id(0);
    a[i] = sin(a[i]) + exp(a[i]) * pow(a[i], a[i + 1]) + log1p(a[i]) + erfc(a[i]) + nextafter(a[i], a[i + 2])
        + tanpi(a[i]) + rootn(a[i], (int16)(3));
    b[i] = cos(b[i]) + log(b[i]) + tgamma(b[i]) + atan2(b[i], b[i + 1]) + cbrt(b[i]);
    int3 e;
    c[i] = tan(c[i]) + acosh(c[i]) + hypot(c[i], c[i + 1]) + logb(c[i]) + frexp(c[i], &e) + convert_float3(ilogb(c[i]) + e);
}";

/// The LLVM IR (after optimisation) of [`VECTOR_MATH_KERNEL`] built for `target`.
fn optimized_ir(target: &Target) -> String {
    let prog = compile_source(VECTOR_MATH_KERNEL, "-cl-std=CL3.0", target).unwrap_or_else(|e| panic!("{}", e.log));
    prog.optimized_llvm_ir(target).unwrap_or_else(|e| panic!("{}", e.log))
}

/// Per-lane calls of libm (or of LLVM's math intrinsics, which become libm calls per lane),
/// outside the branches for rare arguments (`math.fix` blocks: tgamma below -170).
fn libm_calls(ir: &str) -> Vec<String> {
    let names = [
        "logb",
        "frexp",
        "ilogb",
        "sin",
        "cos",
        "tan",
        "exp",
        "pow",
        "log1p",
        "erfc",
        "nextafter",
        "log",
        "tgamma",
        "atan2",
        "cbrt",
        "acosh",
        "hypot",
    ];
    let mut found = Vec::new();
    let mut in_fix = false;
    for line in ir.lines() {
        if !line.starts_with(' ') && line.contains(':') && !line.starts_with(';') {
            in_fix = line.starts_with("math.fix");
        }
        if in_fix || !line.contains("call ") {
            continue;
        }
        // Scalar calls of host functions (mathlib's, per lane, by name: back/host.rs).
        if ["call float @softcl_", "call double @softcl_"].iter().any(|p| line.contains(p)) {
            found.push(line.trim().to_string());
        }
        for n in names {
            for pat in [format!("@{n}f("), format!("@{n}("), format!("@llvm.{n}.")] {
                if line.contains(&pat) {
                    found.push(line.trim().to_string());
                }
            }
        }
    }
    found
}

#[test]
fn vectors_take_the_vector_path() {
    let ir = optimized_ir(&Target::default());
    let calls = libm_calls(&ir);
    assert!(calls.is_empty(), "per-lane math calls left: {calls:#?}");
    // One SLEEF call per function and chunk, by name (defined in the JIT: back/host.rs).
    let sleef = ir.lines().filter(|l| l.contains("call <") && l.contains("@Sleef_")).count();
    assert!(sleef >= 14, "{sleef} vector calls in\n{ir}");
    // With the vector path off (`SOFTCL_VECMATH=0` on a device), the same kernel calls libm
    // per lane (this test can fail).
    let knobs = CodegenKnobs { vector_math: false, ..CodegenKnobs::default() };
    let off = optimized_ir(&Target { knobs, ..Target::default() });
    assert!(libm_calls(&off).len() >= 40, "per-lane calls expected with the vector path off");
}

/// pyopencl's test_atan: float atan over pyopencl's grids of (-10, 10) within 2e-7 of numpy's
/// float atan (the exact value rounded to float), that is about 1.7 ulp near pi/2, in a
/// scalar kernel the vectorizer runs 16 work-items wide, as pyopencl's is. The OpenCL bound
/// is 5 ulp, but PoCL meets this and pyopencl's suite must pass as it does on PoCL; SLEEF's
/// 3.5-ulp atan was 2.4e-7 off at x = -1.7041016.
#[test]
fn float_atan_meets_pyopencls_threshold() {
    let t = Target {
        vectorizer: softcl_compiler::Vectorizer::Forced { width: 16, register_bytes: 64 },
        ..Target::default()
    };
    // pyopencl's elementwise kernels walk the array in a loop.
    let src = "kernel void k(global const float* a, global float* o, uint n) {
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) o[i] = atan(a[i]);
    }";
    let prog = compile_source(src, "-cl-std=CL3.0", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    let k = p.kernel("k").unwrap();
    let mut worst = (0.0f64, 0.0f32);
    for s in [10, 128, 1 << 10, 1 << 11, 1 << 13] {
        // cl_array.arange(-10, 10, 20 / s) in float32.
        let step = (20.0f64 / f64::from(s)) as f32;
        let a: Vec<f32> = (0..s).map(|i| -10.0f32 + step * i as f32).collect();
        let mut o = vec![0f32; a.len()];
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, a.as_ptr());
        args.set_ptr(&k.info, 1, o.as_mut_ptr());
        args.set(&k.info, 2, a.len() as u32);
        run_1d(k, &mut args, 64, 16);
        for (&x, &g) in a.iter().zip(&o) {
            let err = (f64::from(g) - f64::from(f64::from(x).atan() as f32)).abs();
            if err > worst.0 {
                worst = (err, x);
            }
        }
    }
    assert!(worst.0 <= 2e-7, "float atan off numpy's by {:e} at {}", worst.0, worst.1);
}

/// `exp` on float vectors is computed inline (compiler/src/back/vecmath_inline.rs): within 2 ulp of
/// the exact result over every float whose exp is neither 0 nor infinite, with the
/// denormal results, the overflow and underflow limits, infinities and NaN; 1 at 0
/// exactly; and no call left in the kernel.
#[test]
fn vector_exp_is_within_two_ulp() {
    let mut xs: Vec<f64> = Vec::new();
    // Every 61st float from -104 to 89 (about 2.6M values), then the edges bit by bit.
    let (lo, hi) = (-104.0f32, 89.0f32);
    let mut b = hi.to_bits();
    while f32::from_bits(b) > 0.0 {
        xs.push(f64::from(f32::from_bits(b)));
        b = b.saturating_sub(61);
    }
    let mut b = (-0.0f32).to_bits();
    while f32::from_bits(b) >= lo {
        xs.push(f64::from(f32::from_bits(b)));
        b += 61;
    }
    for edge in [88.72283f32, -87.33655, -103.27893, 0.0, 1.0e-30] {
        let mut b = edge.to_bits().wrapping_sub(500);
        for _ in 0..1000 {
            xs.push(f64::from(f32::from_bits(b)));
            b = b.wrapping_add(1);
        }
    }
    xs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.0, -0.0, 89.5, -104.5, 1e30, -1e30]);
    let (got, _) = run_vec("float", 16, "exp(x)", &xs, &xs);
    let mut worst = (0.0f64, 0.0f64);
    for (&x, &g) in xs.iter().zip(&got) {
        let u = check(&format!("exp({x:e})"), g, x.exp(), 2.0, true).unwrap_or_else(|e| panic!("{e}"));
        if u > worst.0 {
            worst = (u, x);
        }
    }
    assert_eq!(got[xs.len() - 5], 1.0, "exp(0)");
    eprintln!("worst: {:.3} ulp at {:e}", worst.0, worst.1);
    let ir = optimized_ir(&Target::default());
    assert!(!ir.contains("Sleef_expf"), "exp of floats still calls SLEEF:\n{ir}");
}
