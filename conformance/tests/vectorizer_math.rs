//! The CPU device's vector code for `rsqrt` and for explicit vectors carried around loops,
//! through the loader, with the vectorizer at its heuristic width, at width 4 and off
//! (child processes, as in `vectorizer.rs`).
//!
//! - `rsqrt` on float vectors is `vrsqrt14ps` plus one Newton step on AVX-512 hosts
//!   (`compiler/src/back/vecmath.rs`): checked against a double reference on every float in
//!   [1, 4) (the relative error repeats with every factor of 4, so that is every mantissa at
//!   both exponent parities), denormals, random bit patterns and the special values, on
//!   `float`, `float3` (vload3/vstore3) and `float16` data, within OpenCL's 2 ulp.
//! - Loop-carried `float3` / `int3` / `float8` values (one phi per component in vector code:
//!   `compiler/src/back/llvm.rs`, `phi_parts`) give the host's results.
//! - Integer division of packets and explicit vectors, done in floating point
//!   (`compiler/src/back/llvm/arith.rs`), gives the exact truncated quotient and remainder.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_VECTORIZER_MATH_TEST_CHILD";

fn cpu_env() -> TestEnv {
    device(DeviceKind::Cpu).expect("the CPU device").env()
}

/// The test inputs: every float in [1, 4), denormals (every 97th), 2^20 pseudo-random bit
/// patterns (any sign, any exponent, NaNs included) and the special values.
fn inputs() -> Vec<f32> {
    let mut x: Vec<f32> = (1.0f32.to_bits()..4.0f32.to_bits()).map(f32::from_bits).collect();
    x.extend((1u32..0x0080_0000).step_by(97).map(f32::from_bits));
    let mut s = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..1 << 20 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x.push(f32::from_bits((s >> 32) as u32));
    }
    x.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -1.0,
        -f32::MIN_POSITIVE,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::EPSILON,
        0.25,
        1e-30,
        1e30,
    ]);
    // A multiple of 48 (whole float3 and float16 items).
    while !x.len().is_multiple_of(48) {
        x.push(2.0);
    }
    x
}

/// Checks `y[i] = rsqrt(x[i])` within `ulps` (`what` names the kernel). Denormal inputs may
/// have been flushed to zero (the device does not report CL_FP_DENORM for float).
fn check_rsqrt(what: &str, x: &[f32], y: &[f32], ulps: f64) {
    let mut worst = (0.0f64, 0.0f32);
    for (&xi, &yi) in x.iter().zip(y) {
        let ok = if xi.is_nan() || xi < 0.0 {
            yi.is_nan()
        } else if xi == 0.0 {
            yi.is_infinite() && yi.is_sign_positive() == xi.is_sign_positive()
        } else if xi.is_infinite() {
            yi == 0.0 && yi.is_sign_positive()
        } else if xi.is_subnormal() && yi.is_infinite() && yi > 0.0 {
            true
        } else {
            let want = 1.0 / f64::from(xi).sqrt();
            // The ulp of a float in want's binade (every result here is a normal float).
            let ulp = 2f64.powi(want.log2().floor() as i32 - 23);
            let err = (f64::from(yi) - want).abs() / ulp;
            if err > worst.0 {
                worst = (err, xi);
            }
            err <= ulps
        };
        assert!(ok, "{what}: rsqrt({xi:e} = {:#010x}) = {yi:e}", xi.to_bits());
    }
    println!("{what}: worst error {:.3} ulp at {:e}", worst.0, worst.1);
}

#[test]
fn rsqrt_within_two_ulp_on_float_float3_and_float16() {
    if run_in_vectorizer_modes(CHILD, "rsqrt_within_two_ulp_on_float_float3_and_float16", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        __kernel void rs1(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            y[i] = rsqrt(x[i]);
        }
        __kernel void rs3(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            vstore3(rsqrt(vload3(i, x)), i, y);
        }
        __kernel void rs16(__global const float16* x, __global float16* y) {
            size_t i = get_global_id(0);
            y[i] = rsqrt(x[i]);
        }
        __kernel void half_rs(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            y[i] = half_rsqrt(x[i]);
        }"#;
    let env = cpu_env();
    let p = env.build(SRC, "");
    let x = inputs();
    let n = x.len();
    let bx = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &x);
    for (name, items, ulps) in [("rs1", n, 2.0), ("rs3", n / 3, 2.0), ("rs16", n / 16, 2.0), ("half_rs", n, 8192.0)] {
        let k = create_kernel(&p, name).unwrap_or_else(|e| panic!("{e}"));
        let by = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        k.set_mem(0, &bx);
        k.set_mem(1, &by);
        env.run(&k, &[items], None);
        let y: Vec<f32> = env.read(&by, n);
        check_rsqrt(name, &x, &y, ulps);
    }
}

/// Runs kernel `name(int n, global const T* input, global T* out)` on n work-items and
/// returns `lanes` values of `out` per work-item.
fn run_loop_kernel<T: Pod>(env: &TestEnv, p: &Program, name: &str, n: usize, input: &[T], lanes: usize) -> Vec<T> {
    let k = create_kernel(p, name).unwrap_or_else(|e| panic!("{e}"));
    let bi = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * lanes * std::mem::size_of::<T>());
    k.set_arg(0, &(n as i32));
    k.set_mem(1, &bi);
    k.set_mem(2, &bo);
    env.run(&k, &[n], None);
    env.read(&bo, lanes * n)
}

#[test]
fn float3_int3_and_float8_values_carried_around_loops() {
    if run_in_vectorizer_modes(CHILD, "float3_int3_and_float8_values_carried_around_loops", |_, _| {}) {
        return;
    }
    // An n-body step (float3 accumulator, rsqrt) and integer / float8 accumulators in
    // uniform loops, with a divergent early exit in the last kernel.
    const SRC: &str = r#"
        __kernel void acc3(int n, __global const float4* pos, __global float4* out) {
            int i = get_global_id(0);
            float4 p = pos[i];
            float3 acc = (float3)(0.0f);
            for (int j = 0; j < n; ++j) {
                float4 q = pos[j];
                float3 d = q.xyz - p.xyz;
                float inv = rsqrt(dot(d, d) + 0.01f);
                acc += (q.w * inv * inv * inv) * d;
            }
            out[i] = (float4)(acc, p.w);
        }
        __kernel void iacc(int n, __global const int* a, __global int4* out) {
            int i = get_global_id(0);
            int3 s = (int3)(i, 0, 1);
            for (int j = 0; j < n; ++j) {
                int v = a[j];
                s = (int3)(s.y + v, s.z ^ v, s.x * 3 + j);
            }
            out[i] = (int4)(s, -i);
        }
        __kernel void f8(int n, __global const float* a, __global float8* out) {
            int i = get_global_id(0);
            float8 s = (float8)((float)i);
            for (int j = 0; j < n; ++j) {
                s = s.s12345670 * 0.5f + a[j];
                if (s.s0 > 1e6f + (float)i) break;
            }
            out[i] = s;
        }"#;
    let env = cpu_env();
    let p = env.build(SRC, "");
    let n = 203usize;
    // Bodies: x, y, z in [-1, 1], mass in [0.5, 1.1].
    let pos: Vec<f32> = (0..4 * n)
        .map(|k| if k % 4 == 3 { 0.5 + (k % 7) as f32 * 0.1 } else { ((k * 37) % 101) as f32 / 50.0 - 1.0 })
        .collect();
    let a: Vec<i32> = (0..n as i32).map(|j| (j * 7919) % 1000 - 500).collect();
    let af: Vec<f32> = a.iter().map(|&v| v as f32 * 0.25).collect();

    let out: Vec<f32> = run_loop_kernel(&env, &p, "acc3", n, &pos, 4);
    for i in 0..n {
        let mut acc = [0f64; 3];
        let mut mag = [0f64; 3];
        for j in 0..n {
            let d: Vec<f64> = (0..3).map(|c| f64::from(pos[4 * j + c]) - f64::from(pos[4 * i + c])).collect();
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01;
            let s = f64::from(pos[4 * j + 3]) / (r2 * r2.sqrt());
            for c in 0..3 {
                acc[c] += s * d[c];
                mag[c] += (s * d[c]).abs();
            }
        }
        for c in 0..3 {
            let tol = mag[c] * 1e-5 + 1e-6;
            let got = f64::from(out[4 * i + c]);
            assert!((got - acc[c]).abs() <= tol, "acc3: body {i} component {c}: {got} vs {}", acc[c]);
        }
        assert_eq!(out[4 * i + 3], pos[4 * i + 3], "acc3: body {i} w");
    }

    let out: Vec<i32> = run_loop_kernel(&env, &p, "iacc", n, &a, 4);
    for i in 0..n {
        let mut s = [i as i32, 0, 1];
        for (j, &v) in a.iter().enumerate() {
            s = [s[1].wrapping_add(v), s[2] ^ v, s[0].wrapping_mul(3).wrapping_add(j as i32)];
        }
        assert_eq!(&out[4 * i..4 * i + 4], &[s[0], s[1], s[2], -(i as i32)], "iacc: item {i}");
    }

    let out: Vec<f32> = run_loop_kernel(&env, &p, "f8", n, &af, 8);
    for i in 0..n {
        let mut s = [i as f32; 8];
        for &v in &af {
            // x * 0.5 + v: exact or one rounding whether contracted or not (x * 0.5 is exact
            // unless it underflows, which these values never do).
            s = std::array::from_fn(|c| s[(c + 1) % 8] * 0.5 + v);
            if s[0] > 1e6 + i as f32 {
                break;
            }
        }
        assert_eq!(&out[8 * i..8 * i + 8], &s, "f8: item {i}");
    }
}

/// Kernels whose loops carry one or two scalars run two or four packets interleaved (width 2W or 4W:
/// `compiler/src/vectorize/width.rs`, `interleave`): results with full, masked and
/// non-uniform work-groups in one and two dimensions, and the build log's width.
#[test]
fn short_chains_run_interleaved_packets() {
    let name = "short_chains_run_interleaved_packets";
    if run_in_vectorizer_modes(CHILD, name, |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        __kernel void chain(__global float* out, int iters, float a, float b) {
            int gid = get_global_id(0) + get_global_id(1) * get_global_size(0);
            float x = (float)gid, y = (float)(gid & 255);
            for (int i = 0; i < iters; ++i) {
                x = mad(x, a, b);
                y = mad(y, a, b);
            }
            out[gid] = x + 2.0f * y;
        }
        __kernel void rowdot(int n, __global const float* m, __global const float* v,
                             __global float* out) {
            int col = get_global_id(0), row = get_global_id(1);
            float acc = 0.0f;
            for (int k = 0; k < n; ++k)
                acc += m[row * n + k] * v[k * get_global_size(0) + col];
            out[row * get_global_size(0) + col] = acc;
        }"#;
    let env = cpu_env();
    let p = env.build(SRC, "-cl-std=CL3.0");
    let log = program_build_info_string(p.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
    #[cfg(target_arch = "x86_64")]
    if mode() == "auto" && std::arch::is_x86_feature_detected!("avx512f") {
        // `chain` carries two independent chains: two packets; `rowdot` one: four.
        for (k, w) in [("chain", 32), ("rowdot", 64)] {
            let line = log.lines().find(|l| l.contains(&format!("kernel `{k}`:"))).unwrap_or("");
            assert!(
                line.contains(&format!("width {w} ")) && line.contains("interleaved"),
                "kernel {k}: {line:?}\n{log}"
            );
        }
    }
    let chain = create_kernel(&p, "chain").unwrap_or_else(|e| panic!("{e}"));
    let (iters, a, b) = (37i32, -1.0f32, 0.5f32);
    for (global, local) in [
        (vec![1000usize], Some(vec![1usize])),
        (vec![1000], Some(vec![3])),
        (vec![1000], Some(vec![33])),
        (vec![1000], Some(vec![100])),
        (vec![1000], None),
        (vec![70, 9], Some(vec![35, 3])),
        (vec![64, 4], Some(vec![64, 1])),
    ] {
        let n: usize = global.iter().product();
        let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        chain.set_mem(0, &bo);
        chain.set_arg(1, &iters);
        chain.set_arg(2, &a);
        chain.set_arg(3, &b);
        env.run(&chain, &global, local.as_deref());
        let out: Vec<f32> = env.read(&bo, n);
        for (g, &got) in out.iter().enumerate() {
            // x -> b - x: an odd number of steps leaves b - x0 (exact for these integers).
            let want = (b - g as f32) + 2.0 * (b - (g & 255) as f32);
            assert_eq!(got, want, "chain: item {g}, global {global:?}, local {local:?}");
        }
    }
    let rowdot = create_kernel(&p, "rowdot").unwrap_or_else(|e| panic!("{e}"));
    let (cols, rows, n) = (77usize, 5usize, 19usize);
    let m: Vec<f32> = (0..rows * n).map(|i| ((i * 13) % 7) as f32 - 3.0).collect();
    let v: Vec<f32> = (0..n * cols).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
    let bm = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &m);
    let bv = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &v);
    for local in [Some([7usize, 1]), Some([77, 1]), Some([11, 5]), None] {
        let bo = env.buffer(CL_MEM_WRITE_ONLY, rows * cols * 4);
        rowdot.set_arg(0, &(n as i32));
        rowdot.set_mem(1, &bm);
        rowdot.set_mem(2, &bv);
        rowdot.set_mem(3, &bo);
        env.run(&rowdot, &[cols, rows], local.as_ref().map(|l| &l[..]));
        let out: Vec<f32> = env.read(&bo, rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                // Small integers and halves: every sum is exact in any order.
                let want: f32 = (0..n).map(|k| m[r * n + k] * v[k * cols + c]).sum();
                assert_eq!(out[r * cols + c], want, "rowdot ({r}, {c}) with local size {local:?}");
            }
        }
    }
}

/// Integer division and remainder of `int`, `uint`, `short`, `ushort`, `char` and `uchar`
/// by a divisor of each work-item and by a kernel argument, and of `int4` and `ushort8`
/// vectors: vector code divides vectors of 32-bit and narrower integers in floating point
/// (`compiler/src/back/llvm/arith.rs`, `quotient_through_floats`), which must give the
/// truncated quotient exactly. Every pair of the types' edge values (0, 1, 2, 7, the largest
/// and smallest, the neighbours of powers of two) and 2048 pseudo-random pairs; a divisor of 0
/// and INT_MIN / -1 (undefined in OpenCL C) only must not crash.
#[test]
fn integer_division_of_vectors_is_exact() {
    let name = "integer_division_of_vectors_is_exact";
    if run_in_vectorizer_modes(CHILD, name, |_, _| {}) {
        return;
    }
    let types: [(&str, u32, bool); 6] = [
        ("int", 32, true),
        ("uint", 32, false),
        ("short", 16, true),
        ("ushort", 16, false),
        ("char", 8, true),
        ("uchar", 8, false),
    ];
    let mut src = String::new();
    for (t, _, _) in types {
        src += &format!(
            "__kernel void div_{t}(__global const {t}* a, __global const {t}* b, __global {t}* q, __global {t}* r, {t} u) {{\n\
             size_t i = get_global_id(0);\n\
             {t} x = a[i], d = b[i];\n\
             q[2 * i] = x / d; r[2 * i] = x % d; q[2 * i + 1] = x / u; r[2 * i + 1] = x % u;\n}}\n"
        );
    }
    src += "__kernel void div_int4(__global const int4* a, __global const int4* b, __global int4* q, __global int4* r, int u) {\n\
            size_t i = get_global_id(0); q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; }\n\
            __kernel void div_ushort8(__global const ushort8* a, __global const ushort8* b, __global ushort8* q, __global ushort8* r, ushort u) {\n\
            size_t i = get_global_id(0); q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; }\n";
    let env = cpu_env();
    let p = env.build(&src, "");
    for (kernel, (_, bits, signed), elems) in types
        .iter()
        .map(|&ty| (format!("div_{}", ty.0), ty, 1usize))
        .chain([("div_int4".to_string(), types[0], 4), ("div_ushort8".to_string(), types[3], 8)])
    {
        let (lo, hi) = if signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
        let mut edges: Vec<i64> =
            vec![0, 1, 2, 3, 7, 100, lo, lo + 1, hi, hi - 1, hi / 2, hi / 2 + 1, 46341, 65535, 255];
        if signed {
            edges.extend([-1, -2, -7, -100, lo / 2, -(hi / 2)]);
        }
        let edges: Vec<i64> = edges.into_iter().map(|v| v.clamp(lo, hi)).collect();
        let mut pairs: Vec<(i64, i64)> = edges.iter().flat_map(|&x| edges.iter().map(move |&d| (x, d))).collect();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2048 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let span = (hi - lo + 1) as u64;
            pairs.push((lo + (s % span) as i64, lo + ((s >> 32) % span) as i64));
        }
        while !pairs.len().is_multiple_of(8 * elems) {
            pairs.push((hi, 3));
        }
        let bytes = (bits / 8) as usize;
        let encode = |v: &[i64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()[..bytes].to_vec()).collect() };
        let decode = |raw: &[u8]| -> Vec<i64> {
            raw.chunks_exact(bytes)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..bytes].copy_from_slice(c);
                    let v = i64::from_le_bytes(b);
                    if signed && v >> (bits - 1) & 1 == 1 {
                        v - (1i64 << bits)
                    } else {
                        v
                    }
                })
                .collect()
        };
        let n = pairs.len();
        let a: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<i64> = pairs.iter().map(|p| p.1).collect();
        let ba = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &encode(&a));
        let bb = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &encode(&b));
        let k = create_kernel(&p, &kernel).unwrap_or_else(|e| panic!("{e}"));
        let per_item = if elems == 1 { 2 } else { 1 };
        let uniform: i64 = if signed { -3 } else { 7 };
        let bq = env.buffer(CL_MEM_WRITE_ONLY, n * bytes * per_item);
        let br = env.buffer(CL_MEM_WRITE_ONLY, n * bytes * per_item);
        k.set_mem(0, &ba);
        k.set_mem(1, &bb);
        k.set_mem(2, &bq);
        k.set_mem(3, &br);
        match bits {
            32 => k.set_arg(4, &(uniform as i32)),
            16 => k.set_arg(4, &(uniform as i16)),
            _ => k.set_arg(4, &(uniform as i8)),
        }
        env.run(&k, &[n / elems], None);
        let q = decode(&env.read::<u8>(&bq, n * bytes * per_item));
        let r = decode(&env.read::<u8>(&br, n * bytes * per_item));
        let defined = |x: i64, d: i64| d != 0 && !(signed && x == lo && d == -1);
        for (i, &(x, d)) in pairs.iter().enumerate() {
            let mut checks = vec![(d, q[i * per_item], r[i * per_item])];
            if elems == 1 {
                checks.push((uniform, q[2 * i + 1], r[2 * i + 1]));
            }
            for (d, got_q, got_r) in checks {
                if defined(x, d) {
                    assert_eq!((got_q, got_r), (x / d, x % d), "{kernel}: {x} / {d} (item {i})");
                }
            }
        }
    }
}

fn mode() -> String {
    vectorizer_mode(CHILD)
}
