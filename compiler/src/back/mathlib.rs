//! Math built-ins that need more than an LLVM intrinsic or a libm call to reach the OpenCL C
//! accuracy bounds in double precision (docs/MATH.md lists every built-in's method).
//!
//! Generated code calls these by name (`builtins::host_call`); the JIT defines the names as
//! the functions' addresses in the loading process (`back/host.rs`), so objects cached on
//! disk or stored in program binaries carry no address of the process that compiled them. Every function is total:
//! no panics, no allocation, no global state. Single-precision callers widen their operands
//! to double, call the double version and round the result once.

const PI_HI: f64 = std::f64::consts::PI;
/// PI - PI_HI (the next 53 bits of pi).
const PI_LO: f64 = 1.2246467991473532e-16;

/// `x * 2^n`, exact when the result is representable (one rounding otherwise): scaled in
/// steps that keep each intermediate normal.
pub fn ldexp(mut x: f64, mut n: i64) -> f64 {
    let p2 = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    while n > 1023 {
        x *= p2(1023);
        n -= 1023;
        if x.is_infinite() {
            return x;
        }
    }
    while n < -1022 {
        x *= p2(-1022);
        n += 1022;
        if x == 0.0 {
            return x;
        }
    }
    x * p2(n)
}

/// A finite non-zero `|x|` as `m * 2^e` with `m` in [1, 2).
fn split(x: f64) -> (f64, i64) {
    let a = x.abs();
    let (a, bias) = if a < f64::MIN_POSITIVE { (a * f64::from_bits((64 + 1023) << 52), 64) } else { (a, 0) };
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023 - bias;
    let m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    (m, e)
}

/// A finite non-zero `|x|` as `m * 2^e` with the integer `m` in [2^52, 2^53).
#[cfg(test)]
fn split_int(x: f64) -> (u64, i64) {
    let (m, e) = split(x);
    ((m.to_bits() & ((1 << 52) - 1)) | (1 << 52), e - 52)
}

/// rootn(x, n) = x^(1/n). `|x| = m * 2^e` and `e / n = q + rem / |n|` give
/// `2^q * 2^(rem/|n|) * m^(1/n)`: both powers have arguments below 1 in magnitude, so the
/// rounding of 1/n and rem/|n| costs well under an ulp (pow(x, 1/n) directly is off by up to
/// ~90 ulp for large |log x|).
pub extern "C" fn softcl_rootn(x: f64, n: i32) -> f64 {
    let odd = n & 1 != 0;
    if n == 0 || x.is_nan() || (x < 0.0 && !odd) {
        return f64::NAN;
    }
    if x == 0.0 {
        let z = if odd { x } else { 0.0 };
        return if n > 0 { z } else { 1.0 / z };
    }
    if x.is_infinite() {
        let a = if n > 0 { f64::INFINITY } else { 0.0 };
        return a.copysign(x);
    }
    let (m, e) = split(x);
    let k = i64::from(n).abs();
    let t = if n > 0 { e } else { -e };
    let (q, rem) = (t.div_euclid(k), t.rem_euclid(k));
    let p = (rem as f64 / k as f64).exp2() * m.powf(1.0 / f64::from(n));
    ldexp(p, q).copysign(x)
}

/// cbrt for doubles: glibc's cbrt is up to 3-4 ulp off (the bound is 2); one Newton step
/// with the residual r^3 - x computed exactly (double-double products) brings it within
/// about half an ulp. Arguments are scaled by 2^+-300 so that r^3 stays normal.
pub extern "C" fn softcl_cbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x.cbrt();
    }
    let a = x.abs();
    let (s, back) = if a < ldexp(1.0, -900) {
        (300, -100)
    } else if a > ldexp(1.0, 900) {
        (-300, 100)
    } else {
        (0, 0)
    };
    let a = ldexp(a, s);
    let r = a.cbrt();
    let r2 = r * r;
    let r2l = r.mul_add(r, -r2);
    let r3 = r2 * r;
    let r3l = r2.mul_add(r, -r3) + r2l * r;
    let res = (r3 - a) + r3l;
    let r = r - res / (3.0 * r2);
    ldexp(r, back).copysign(x)
}

/// tan(pi * x) for `r = x - rint(x)` in (-1/2, 1/2): `pi * r` as a double-double, and the
/// cotangent of the complement beyond 1/4, where tan's condition number grows.
pub extern "C" fn softcl_tanpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let k = x.round_ties_even();
    let r = x - k;
    if r == 0.0 {
        // tanpi(n) = copysign(0, n) for even n, copysign(0, -n) for odd n.
        let z = 0.0f64.copysign(x);
        return if (k % 2.0).abs() == 1.0 { -z } else { z };
    }
    if r.abs() == 0.5 {
        // tanpi(n + 0.5) = +inf for even n, -inf for odd n.
        let n = x.floor();
        return if (n % 2.0).abs() == 1.0 { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    let tan_pi = |a: f64| {
        let hi = a * PI_HI;
        let lo = a.mul_add(PI_HI, -hi) + a * PI_LO;
        let t = hi.tan();
        t.mul_add(t, 1.0).mul_add(lo, t)
    };
    if r.abs() <= 0.25 {
        tan_pi(r)
    } else {
        // tan(pi r) = cot(pi (1/2 - |r|)) with the sign of r; 1/2 - |r| is exact.
        (1.0 / tan_pi(0.5 - r.abs())).copysign(r)
    }
}

/// remquo: the IEEE remainder `x - k*y` (k the integer nearest x/y, ties to even) and the
/// low 7 bits of `k` with the sign of x/y (libm's remquo keeps 3 bits). Every step is exact:
/// `fmod(|x|, 128|y|)` (exact in IEEE arithmetic) keeps the quotient's low 7 bits, which
/// seven subtractions of `2^i |y|` then read off (each difference is exact by Sterbenz's
/// lemma, as `2^i |y| <= r < 2^(i+1) |y|`); the last step rounds to the nearest quotient.
/// A long division of the significands gives the same result but costs up to ~2000
/// iterations per call, which dominated the CTS remquo test.
pub fn remquo(x: f64, y: f64) -> (f64, i32) {
    if x.is_nan() || y.is_nan() {
        return (x + y, 0);
    }
    if x.is_infinite() || y == 0.0 {
        return (f64::NAN, 0);
    }
    if y.is_infinite() || x == 0.0 {
        return (x, 0);
    }
    let ay = y.abs();
    // 128|y| is exact unless it overflows, and then |x| < 128|y| already.
    let mut r = if ay <= f64::MAX / 128.0 { x.abs() % (ay * 128.0) } else { x.abs() };
    let mut q = 0u32;
    for i in (0..7).rev() {
        // 2^i |y| may overflow to infinity, which r never reaches.
        let c = ay * f64::from(1u32 << i);
        if r >= c {
            r -= c;
            q |= 1 << i;
        }
    }
    // r in [0, |y|): round to the nearest quotient, ties to even. Both comparisons are
    // exact: 2r cannot overflow below |y| < 1, and |y|/2 is exact from |y| >= 1.
    let (a, b) = if ay < 1.0 { (2.0 * r, ay) } else { (r, 0.5 * ay) };
    if a > b || (a == b && q & 1 == 1) {
        r -= ay;
        q += 1;
    }
    let rem = if x < 0.0 { -r } else { r };
    let quo = (q & 0x7f) as i32;
    let neg = (x < 0.0) != (y < 0.0);
    (if rem == 0.0 { 0.0f64.copysign(x) } else { rem }, if neg { -quo } else { quo })
}

/// The remainder of [`remquo`].
pub extern "C" fn softcl_remquo_rem(x: f64, y: f64) -> f64 {
    remquo(x, y).0
}

/// The quotient bits of [`remquo`].
pub extern "C" fn softcl_remquo_quo(x: f64, y: f64) -> i32 {
    remquo(x, y).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remquo_exact() {
        assert_eq!(remquo(7.0, 2.0), (-1.0, 4));
        assert_eq!(remquo(5.0, 2.0), (1.0, 2));
        assert_eq!(remquo(-5.0, 2.0), (-1.0, -2));
        assert_eq!(remquo(5.0, -2.0), (1.0, -2));
        assert_eq!(remquo(300.0, 1.0), (0.0, 300 & 0x7f));
        assert_eq!(remquo(1.0, 3.0), (1.0, 0));
        assert_eq!(remquo(2.0, 3.0), (-1.0, 1));
        assert_eq!(remquo(1.5, 3.0), (1.5, 0), "tie to the even quotient 0");
        assert_eq!(remquo(4.5, 3.0), (-1.5, 2), "tie to the even quotient 2");
        let (r, q) = remquo(f64::MAX, f64::from_bits(1));
        assert_eq!((r, q), (0.0, 0));
        let (r, _) = remquo(f64::MAX, 3.0);
        assert_eq!(r, libm_remainder(f64::MAX, 3.0));
        assert!(remquo(f64::INFINITY, 1.0).0.is_nan() && remquo(1.0, 0.0).0.is_nan());
        assert_eq!(remquo(3.0, f64::INFINITY), (3.0, 0));
        assert_eq!(remquo(-0.0, 1.0).0.to_bits(), (-0.0f64).to_bits());
        assert_eq!(remquo(-2.0, 1.0).0.to_bits(), (-0.0f64).to_bits());
        let tiny = f64::from_bits(3);
        assert_eq!(remquo(tiny, f64::from_bits(2)), (-f64::from_bits(1), 2));
    }

    /// The reference: exact long division of the significands (the previous method).
    fn remquo_long_division(x: f64, y: f64) -> (f64, i32) {
        if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 || y.is_infinite() || x == 0.0 {
            return remquo(x, y);
        }
        let (mx, ex) = split_int(x);
        let (my, ey) = split_int(y);
        let d = ex - (ey - 1);
        if d < 0 {
            return (x, 0);
        }
        let divisor = my << 1;
        let (mut r, mut q) = (mx, 0u32);
        for _ in 0..d {
            r <<= 1;
            q <<= 1;
            if r >= divisor {
                r -= divisor;
                q |= 1;
            }
        }
        let mut rem = r as f64;
        if 2 * r > divisor || (2 * r == divisor && q & 1 == 1) {
            rem = -((divisor - r) as f64);
            q = q.wrapping_add(1);
        }
        let rem = ldexp(rem, ey - 1);
        let rem = if x < 0.0 { -rem } else { rem };
        let quo = (q & 0x7f) as i32;
        let neg = (x < 0.0) != (y < 0.0);
        (if rem == 0.0 { 0.0f64.copysign(x) } else { rem }, if neg { -quo } else { quo })
    }

    #[test]
    fn remquo_matches_long_division() {
        // Random bit patterns (every exponent, denormals included), pairs with close
        // exponents (many quotient bits and ties), and operands near the overflow limit.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for i in 0..200_000 {
            let a = f64::from_bits(next());
            let b = match i % 4 {
                0 => f64::from_bits(next()),
                1 => a * f64::from((next() % 300) as u32) / 7.0,
                2 => f64::from_bits((next() % 4096) | (next() & (1 << 63))),
                _ => f64::MAX / f64::from((next() % 256) as u32 + 1),
            };
            for (x, y) in [(a, b), (b, a)] {
                let (r, q) = remquo(x, y);
                let (wr, wq) = remquo_long_division(x, y);
                assert!(
                    (r.is_nan() && wr.is_nan()) || (r.to_bits() == wr.to_bits() && q == wq),
                    "remquo({x:e}, {y:e}) = ({r:e}, {q}), want ({wr:e}, {wq})"
                );
            }
        }
    }

    fn libm_remainder(x: f64, y: f64) -> f64 {
        // x - k*y with k = rint(x/y) is exact when x/y is an integer below 2^53 and y is a
        // power of two; otherwise compare against fmod folded around y/2.
        let m = x % y;
        if 2.0 * m.abs() > y.abs() {
            m - y.abs().copysign(m)
        } else {
            m
        }
    }

    #[test]
    fn rootn_special_and_exact() {
        assert!(softcl_rootn(-8.0, 2).is_nan() && softcl_rootn(8.0, 0).is_nan());
        assert_eq!(softcl_rootn(-8.0, 3), -2.0);
        assert_eq!(softcl_rootn(-0.0, 3).to_bits(), (-0.0f64).to_bits());
        assert_eq!(softcl_rootn(-0.0, -3), f64::NEG_INFINITY);
        assert_eq!(softcl_rootn(-0.0, -2), f64::INFINITY);
        assert_eq!(softcl_rootn(f64::INFINITY, -2), 0.0);
        assert_eq!(softcl_rootn(f64::NEG_INFINITY, 3), f64::NEG_INFINITY);
        assert_eq!(softcl_rootn(1.0e300, 1), 1.0e300);
        assert_eq!(softcl_rootn(4.0, -2), 0.5);
        assert_eq!(softcl_rootn(f64::from_bits(1), -1), f64::INFINITY);
        assert_eq!(ldexp(1.5, -1074), f64::from_bits(2));
    }

    #[test]
    fn cbrt_corrected() {
        // glibc: -1.989759111301442e-73, 3 ulp off; the root is -1.98975911130144292...e-73.
        assert_eq!(softcl_cbrt(-7.877737516403924e-219), -1.989759111301443e-73);
        assert_eq!(softcl_cbrt(27.0), 3.0);
        assert_eq!(softcl_cbrt(-ldexp(1.0, -1050)), -ldexp(1.0, -350));
        assert_eq!(softcl_cbrt(ldexp(27.0, 900)), ldexp(3.0, 300));
        assert_eq!(softcl_cbrt(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(softcl_cbrt(-0.0).to_bits(), (-0.0f64).to_bits());
        assert!(softcl_cbrt(f64::MAX).is_finite());
    }

    #[test]
    fn tanpi_special() {
        assert_eq!(softcl_tanpi(2.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(softcl_tanpi(-2.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(softcl_tanpi(1.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(softcl_tanpi(0.5), f64::INFINITY);
        assert_eq!(softcl_tanpi(1.5), f64::NEG_INFINITY);
        assert_eq!(softcl_tanpi(-0.5), f64::NEG_INFINITY);
        assert_eq!(softcl_tanpi(0.25), 1.0);
        assert!(softcl_tanpi(f64::INFINITY).is_nan());
    }
}
