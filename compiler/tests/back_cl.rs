//! Compiler tests from OpenCL C source to execution: clang -> SPIR-V -> IR -> LLVM -> JIT.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use softcl_compiler::{compile_source, NativeProgram, Target};
use std::sync::Arc;

fn build(src: &str) -> Arc<NativeProgram> {
    build_opts(src, "")
}

fn build_opts(src: &str, opts: &str) -> Arc<NativeProgram> {
    let t = Target::default();
    let prog = compile_source(src, opts, &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

/// The CPU device's vectorized build at `width` lanes (the tests' default target is scalar).
fn vector_target(width: u32) -> Target {
    Target { vectorizer: softcl_compiler::Vectorizer::Forced { width, register_bytes: 64 }, ..Target::default() }
}

fn ptr_arg<T>(args: &mut ArgBlock, k: &softcl_compiler::NativeKernel, i: usize, p: *const T) {
    args.set_ptr(&k.info, i, p);
}

const BOTH: [Pattern; 2] = [Pattern::Whole, Pattern::Chunks(8)];

#[test]
fn vector_add() {
    let p = build("kernel void vadd(global const float* a, global const float* b, global float* c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }");
    let k = p.kernel("vadd").unwrap();
    let n = 1037;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let mut c = vec![0f32; n];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, b.as_ptr());
    ptr_arg(&mut args, k, 2, c.as_mut_ptr());
    // Non-uniform NDRange: the last group is smaller.
    run_ndrange(k, &mut args, 1, [n as u64, 1, 1], [64, 1, 1], [0; 3], Pattern::Whole, &[]);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i]);
    }
}

#[test]
fn saxpy() {
    let p = build("kernel void saxpy(float a, global const float* x, global float* y) { int i = get_global_id(0); y[i] = a * x[i] + y[i]; }");
    let k = p.kernel("saxpy").unwrap();
    let n = 256;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y: Vec<f32> = (0..n).map(|i| 1.0 + i as f32).collect();
    let want: Vec<f32> = (0..n).map(|i| 2.5f32.mul_add(x[i], y[i])).collect();
    let mut args = ArgBlock::new(&k.info);
    args.set(&k.info, 0, 2.5f32);
    ptr_arg(&mut args, k, 1, x.as_ptr());
    ptr_arg(&mut args, k, 2, y.as_mut_ptr());
    run_1d(k, &mut args, n as u64, 32);
    for i in 0..n {
        assert!((y[i] - want[i]).abs() <= 1e-4 * want[i].abs(), "{i}: {} vs {}", y[i], want[i]);
    }
}

const REDUCE: &str = r#"
kernel void reduce(global const float* in, global float* out, local float* scratch) {
    local float tile[128];
    uint lid = get_local_id(0);
    uint n = get_local_size(0);
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = n / 2; s > 0; s >>= 1) {
        if (lid < s) tile[lid] += tile[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // A second pass through the __local argument.
    scratch[lid] = tile[0] + lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float t = 0;
        for (uint i = 0; i < n; i++) t += scratch[i];
        out[get_group_id(0)] = t;
    }
}
"#;

#[test]
fn reduction_local_memory_barriers() {
    let p = build(REDUCE);
    let k = p.kernel("reduce").unwrap();
    assert!(k.info.barrier_count >= 3, "barriers {}", k.info.barrier_count);
    assert_eq!(k.info.static_local_mem_size, 512);
    for pattern in BOTH {
        let local = 128u64;
        let groups = 6u64;
        let input: Vec<f32> = (0..local * groups).map(|i| ((i * 7) % 13) as f32).collect();
        let mut out = vec![0f32; groups as usize];
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, input.as_ptr());
        ptr_arg(&mut args, k, 1, out.as_mut_ptr());
        run_ndrange(k, &mut args, 1, [local * groups, 1, 1], [local, 1, 1], [0; 3], pattern, &[(2, 512)]);
        for g in 0..groups as usize {
            let sum: f32 = input[g * local as usize..(g + 1) * local as usize].iter().sum();
            let want: f32 = (0..local).map(|l| sum + l as f32).sum();
            assert_eq!(out[g], want, "group {g} {pattern:?}");
        }
    }
}

/// Private values (accumulators, a loop counter and a private array) live across a barrier
/// inside a loop: an iterative 1D smoothing in local memory.
#[test]
fn barrier_in_loop_with_live_values() {
    let src = r#"
kernel void smooth(global float* data, int iters) {
    local float buf[64];
    int lid = get_local_id(0);
    int n = get_local_size(0);
    float acc = 0.0f;
    float hist[4];
    buf[lid] = data[get_global_id(0)];
    for (int it = 0; it < iters; it++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        float l = buf[(lid + n - 1) % n];
        float r = buf[(lid + 1) % n];
        float c = buf[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] = (l + c + r) / 3.0f;
        acc += c;
        hist[it & 3] = c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = buf[lid] + acc + hist[(lid + iters) & 3];
}
"#;
    let p = build(src);
    let k = p.kernel("smooth").unwrap();
    let n = 64usize;
    let groups = 3usize;
    let iters = 7i32;
    let init: Vec<f32> = (0..n * groups).map(|i| ((i * 37) % 11) as f32).collect();
    // Reference.
    let mut want = init.clone();
    for g in 0..groups {
        let mut buf: Vec<f32> = init[g * n..(g + 1) * n].to_vec();
        let mut acc = vec![0f32; n];
        let mut hist = vec![[0f32; 4]; n];
        for it in 0..iters as usize {
            let old = buf.clone();
            for l in 0..n {
                let (lf, c, r) = (old[(l + n - 1) % n], old[l], old[(l + 1) % n]);
                buf[l] = (lf + c + r) / 3.0;
                acc[l] += c;
                hist[l][it & 3] = c;
            }
        }
        for l in 0..n {
            want[g * n + l] = buf[l] + acc[l] + hist[l][(l + iters as usize) & 3];
        }
    }
    for pattern in BOTH {
        let mut data = init.clone();
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, data.as_mut_ptr());
        args.set(&k.info, 1, iters);
        run_ndrange(k, &mut args, 1, [(n * groups) as u64, 1, 1], [n as u64, 1, 1], [0; 3], pattern, &[]);
        for i in 0..n * groups {
            assert!((data[i] - want[i]).abs() < 1e-4, "{i}: {} vs {} ({pattern:?})", data[i], want[i]);
        }
    }
}

#[test]
fn transpose_2d_local_tile() {
    let src = r#"
#define T 8
kernel void transpose(global const int* in, global int* out, int w, int h) {
    local int tile[T][T + 1];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    if (x < w && y < h) tile[ly][lx] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * T + lx;
    int oy = get_group_id(0) * T + ly;
    if (ox < h && oy < w) out[oy * h + ox] = tile[lx][ly];
}
"#;
    let p = build(src);
    let k = p.kernel("transpose").unwrap();
    let (w, h) = (32usize, 24usize);
    let input: Vec<i32> = (0..w * h).map(|i| i as i32 * 3 + 1).collect();
    for pattern in [Pattern::Whole, Pattern::Chunks(8), Pattern::Chunks(5)] {
        let mut out = vec![0i32; w * h];
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, input.as_ptr());
        ptr_arg(&mut args, k, 1, out.as_mut_ptr());
        args.set(&k.info, 2, w as i32);
        args.set(&k.info, 3, h as i32);
        run_ndrange(k, &mut args, 2, [w as u64, h as u64, 1], [8, 8, 1], [0; 3], pattern, &[]);
        for y in 0..h {
            for x in 0..w {
                assert_eq!(out[x * h + y], input[y * w + x], "({x},{y}) {pattern:?}");
            }
        }
    }
}

#[test]
fn switch_on_a_masked_value_runs() {
    // clang-15 -O2 narrows this switch to i3, which llvm-spirv-15 cannot translate: the
    // front end falls back to clang's unoptimised module, and the results must not change.
    let src = r#"
kernel void pick(global int* o) {
    int x = o[get_global_id(0)], r;
    switch (x & 7) { case 0: r = 5; break; case 1: r = 9; break; case 2: r = 11; break;
                     case 3: r = 2; break; case 5: r = 7; break; default: r = 1; }
    o[get_global_id(0)] = r;
}
"#;
    let p = build(src);
    let k = p.kernel("pick").unwrap();
    let mut data: Vec<i32> = (0..64).map(|i| i * 37 - 500).collect();
    let want: Vec<i32> = data
        .iter()
        .map(|x| match x & 7 {
            0 => 5,
            1 => 9,
            2 => 11,
            3 => 2,
            5 => 7,
            _ => 1,
        })
        .collect();
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, data.as_mut_ptr());
    run_1d(k, &mut args, data.len() as u64, 16);
    assert_eq!(data, want);
}

#[test]
fn divergent_control_flow_and_loops() {
    let src = r#"
kernel void collatz(global const uint* in, global uint* steps) {
    uint i = get_global_id(0);
    ulong v = in[i];
    uint n = 0;
    while (v != 1 && n < 10000) {
        if (v & 1) v = 3 * v + 1; else v >>= 1;
        n++;
    }
    switch (n % 200) {
        case 0: n += 1000; break;
        case 1: n += 2000; break;
        case 3: n = n * 2; break;
        default: break;
    }
    steps[i] = n;
}
"#;
    let p = build(src);
    let k = p.kernel("collatz").unwrap();
    let input: Vec<u32> = (1..=300).collect();
    let mut out = vec![0u32; input.len()];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, input.as_ptr());
    ptr_arg(&mut args, k, 1, out.as_mut_ptr());
    run_1d(k, &mut args, input.len() as u64, 30);
    for (i, &x) in input.iter().enumerate() {
        let mut v = x as u64;
        let mut n = 0u32;
        while v != 1 && n < 10000 {
            v = if v & 1 == 1 { 3 * v + 1 } else { v >> 1 };
            n += 1;
        }
        let want = match n % 200 {
            0 => n + 1000,
            1 => n + 2000,
            3 => n * 2,
            _ => n,
        };
        assert_eq!(out[i], want, "x = {x}");
    }
}

#[test]
fn private_arrays_dynamic_indexing() {
    let src = r#"
kernel void priv(global const int* idx, global int* out) {
    int a[16];
    int g = get_global_id(0);
    for (int i = 0; i < 16; i++) a[i] = i * g;
    out[g] = a[idx[g] & 15];
}
kernel void priv_barrier(global const int* idx, global int* out) {
    int a[16];
    int g = get_global_id(0);
    for (int i = 0; i < 16; i++) a[i] = i * g + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = a[idx[g] & 15];
}
"#;
    let p = build(src);
    for (name, add) in [("priv", 0), ("priv_barrier", 1)] {
        let k = p.kernel(name).unwrap();
        for pattern in BOTH {
            let n = 64;
            let idx: Vec<i32> = (0..n).map(|i| (i * 5 + 3) % 16).collect();
            let mut out = vec![0i32; n as usize];
            let mut args = ArgBlock::new(&k.info);
            ptr_arg(&mut args, k, 0, idx.as_ptr());
            ptr_arg(&mut args, k, 1, out.as_mut_ptr());
            run_ndrange(k, &mut args, 1, [n as u64, 1, 1], [16, 1, 1], [0; 3], pattern, &[]);
            for g in 0..n {
                assert_eq!(out[g as usize], idx[g as usize] * g + add, "{name} {g}");
            }
        }
    }
}

#[test]
fn struct_by_value() {
    let src = r#"
typedef struct { float scale; int offset; float4 bias; } params_t;
kernel void apply(params_t p, global float4* data) {
    int i = get_global_id(0);
    p.offset += 1; // writes to the copy only
    data[i] = data[i] * p.scale + p.bias + (float)(p.offset + i);
}
"#;
    let p = build(src);
    let k = p.kernel("apply").unwrap();
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct Params {
        scale: f32,
        offset: i32,
        _pad: [f32; 2],
        bias: [f32; 4],
    }
    assert_eq!(k.info.args[0].size, std::mem::size_of::<Params>());
    let n = 40;
    let mut data: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 1.0, 2.0, 3.0]).collect();
    let init = data.clone();
    let mut args = ArgBlock::new(&k.info);
    args.set(&k.info, 0, Params { scale: 2.0, offset: 10, _pad: [0.0; 2], bias: [0.5, 0.25, 0.125, 1.0] });
    ptr_arg(&mut args, k, 1, data.as_mut_ptr());
    run_1d(k, &mut args, n as u64, 8);
    for i in 0..n {
        for c in 0..4 {
            let bias = [0.5, 0.25, 0.125, 1.0][c];
            assert_eq!(data[i][c], init[i][c] * 2.0 + bias + (11 + i) as f32, "{i}.{c}");
        }
    }
}

#[test]
fn vector_types_and_swizzles() {
    let src = r#"
kernel void swz(global const float4* a, global float4* out, global int3* o3, global uchar8* o8) {
    int i = get_global_id(0);
    float4 v = a[i];
    float4 r = v.wzyx + (float4)(v.xy, v.zw * 2.0f);
    r.s13 = v.s02;
    out[i] = r;
    int3 t = (int3)(i, i * 2, i * 3);
    t.zx = t.xz;
    o3[i] = t + (int3)(1);
    uchar8 u = (uchar8)((uchar)i);
    u.s7 = 255;
    o8[i] = u + (uchar8)(1, 2, 3, 4, 5, 6, 7, 0);
}
"#;
    let p = build(src);
    let k = p.kernel("swz").unwrap();
    let n = 16;
    let a: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 10.0 + i as f32, 20.0, -(i as f32)]).collect();
    let mut out = vec![[0f32; 4]; n];
    let mut o3 = vec![[0i32; 4]; n];
    let mut o8 = vec![[0u8; 8]; n];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, out.as_mut_ptr());
    ptr_arg(&mut args, k, 2, o3.as_mut_ptr());
    ptr_arg(&mut args, k, 3, o8.as_mut_ptr());
    run_1d(k, &mut args, n as u64, 4);
    for i in 0..n {
        let v = a[i];
        let mut r = [v[3] + v[0], v[2] + v[1], v[1] + v[2] * 2.0, v[0] + v[3] * 2.0];
        r[1] = v[0];
        r[3] = v[2];
        assert_eq!(out[i], r, "{i}");
        let ii = i as i32;
        assert_eq!(&o3[i][..3], &[ii * 3 + 1, ii * 2 + 1, ii + 1]);
        let mut u = [i as u8; 8];
        u[7] = 255;
        let add = [1u8, 2, 3, 4, 5, 6, 7, 0];
        let want: Vec<u8> = u.iter().zip(add).map(|(x, y)| x.wrapping_add(y)).collect();
        assert_eq!(o8[i].to_vec(), want);
    }
}

#[test]
fn integer_division_by_zero_does_not_crash() {
    let src = r#"
kernel void divs(global const int* a, global const int* b, global int* q, global uint* uq) {
    int i = get_global_id(0);
    q[2 * i] = a[i] / b[i];
    q[2 * i + 1] = a[i] % b[i];
    uq[i] = (uint)a[i] / (uint)b[i];
}
"#;
    let p = build(src);
    let k = p.kernel("divs").unwrap();
    let a = [5, -7, i32::MIN, 0, 100, 9];
    let b = [0, 0, -1, 0, 7, -2];
    let mut q = vec![0i32; 12];
    let mut uq = vec![0u32; 6];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, b.as_ptr());
    ptr_arg(&mut args, k, 2, q.as_mut_ptr());
    ptr_arg(&mut args, k, 3, uq.as_mut_ptr());
    run_1d(k, &mut args, 6, 6);
    assert_eq!(&q[8..12], &[100 / 7, 100 % 7, 9 / -2, 9 % -2]);
    assert_eq!(q[4], i32::MIN); // INT_MIN / -1 wraps
    assert_eq!(uq[4], 100 / 7);
}

#[test]
fn atomics_global_and_local() {
    let src = r#"
kernel void atom(global int* g, global uint* hist, global const uint* data) {
    local int lcount;
    local uint lmax;
    if (get_local_id(0) == 0) { lcount = 0; lmax = 0; }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = data[get_global_id(0)];
    atomic_inc(&lcount);
    atomic_max(&lmax, v);
    atomic_add(&hist[v % 8], 1);
    atomic_add(&g[0], (int)v);
    atomic_sub(&g[1], 1);
    atomic_cmpxchg(&g[2], 0, 42);
    atomic_xchg(&g[3], 7);
    atomic_min(&g[4], (int)v - 100);
    atomic_or(&g[5], 1 << (v % 31));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        atomic_add(&g[6], lcount);
        atomic_max((global uint*)&g[7], lmax);
    }
}
"#;
    let p = build(src);
    let k = p.kernel("atom").unwrap();
    let n = 256usize;
    let data: Vec<u32> = (0..n as u32).map(|i| (i * 13) % 97).collect();
    let mut g = vec![0i32; 8];
    let mut hist = vec![0u32; 8];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, g.as_mut_ptr());
    ptr_arg(&mut args, k, 1, hist.as_mut_ptr());
    ptr_arg(&mut args, k, 2, data.as_ptr());
    run_ndrange(k, &mut args, 1, [n as u64, 1, 1], [32, 1, 1], [0; 3], Pattern::Chunks(8), &[]);
    assert_eq!(g[0], data.iter().sum::<u32>() as i32);
    assert_eq!(g[1], -(n as i32));
    assert_eq!(g[2], 42);
    assert_eq!(g[3], 7);
    assert_eq!(g[4], data.iter().map(|&v| v as i32 - 100).min().unwrap().min(0));
    assert_eq!(g[5], data.iter().fold(0i32, |acc, &v| acc | (1 << (v % 31))));
    assert_eq!(g[6], n as i32);
    assert_eq!(g[7] as u32, *data.iter().max().unwrap());
    for b in 0..8 {
        assert_eq!(hist[b], data.iter().filter(|&&v| v % 8 == b as u32).count() as u32);
    }
}

fn ulp_diff(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a == b {
        return 0;
    }
    if a.is_sign_negative() != b.is_sign_negative() {
        return u64::MAX;
    }
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
}

#[test]
fn math_builtins_against_rust() {
    let src = r#"
kernel void m(global const float* x, global float* o) {
    int i = get_global_id(0);
    float v = x[i];
    global float* r = o + i * 24;
    r[0] = sqrt(v); r[1] = sin(v); r[2] = cos(v); r[3] = tan(v);
    r[4] = exp(v); r[5] = log(v); r[6] = pow(v, 1.5f); r[7] = atan2(v, 2.0f);
    r[8] = fmin(v, 3.0f); r[9] = fmax(v, 3.0f); r[10] = fma(v, 2.0f, 1.0f); r[11] = floor(v);
    r[12] = ceil(v); r[13] = round(v); r[14] = trunc(v); r[15] = fabs(-v);
    r[16] = exp2(v); r[17] = log2(v); r[18] = cbrt(v); r[19] = hypot(v, 3.0f);
    r[20] = asin(v / 100.0f); r[21] = tanh(v); r[22] = fmod(v, 1.25f); r[23] = rsqrt(v);
}
"#;
    let p = build(src);
    let k = p.kernel("m").unwrap();
    let xs: Vec<f32> = vec![0.25, 0.5, 1.0, 1.5, 2.0, 3.3, 7.9, 10.0, 42.5, 99.0, 0.001, 5.5, 17.25, 64.0, 2.75, 3.25];
    let mut o = vec![0f32; xs.len() * 24];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, xs.as_ptr());
    ptr_arg(&mut args, k, 1, o.as_mut_ptr());
    run_1d(k, &mut args, xs.len() as u64, 8);
    for (i, &v) in xs.iter().enumerate() {
        let want = [
            v.sqrt(),
            v.sin(),
            v.cos(),
            v.tan(),
            v.exp(),
            v.ln(),
            v.powf(1.5),
            v.atan2(2.0),
            v.min(3.0),
            v.max(3.0),
            v.mul_add(2.0, 1.0),
            v.floor(),
            v.ceil(),
            v.round(),
            v.trunc(),
            v.abs(),
            v.exp2(),
            v.log2(),
            v.cbrt(),
            v.hypot(3.0),
            (v / 100.0).asin(),
            v.tanh(),
            v % 1.25,
            1.0 / v.sqrt(),
        ];
        for (j, w) in want.iter().enumerate() {
            let got = o[i * 24 + j];
            assert!(ulp_diff(got, *w) <= 4, "fn {j} at {v}: got {got}, want {w}");
        }
    }
}

#[test]
fn more_math_builtins() {
    let src = r#"
kernel void m(global const float* x, global float* o, global int* oi) {
    int i = get_global_id(0);
    float v = x[i];
    global float* r = o + i * 16;
    r[0] = sinpi(v); r[1] = cospi(v); r[2] = mix(v, 10.0f, 0.25f); r[3] = step(2.0f, v);
    r[4] = smoothstep(0.0f, 4.0f, v); r[5] = sign(v - 2.0f); r[6] = degrees(v); r[7] = radians(v);
    r[8] = clamp(v, 1.0f, 3.0f); r[9] = ldexp(v, 3); r[10] = rootn(v, 3); r[11] = pown(v, 3);
    int e; r[12] = frexp(v, &e); oi[i] = e;
    float ip; r[13] = fract(v, &ip); r[14] = ip;
    r[15] = maxmag(v, -2.5f);
}
"#;
    let p = build(src);
    let k = p.kernel("m").unwrap();
    let xs: Vec<f32> = vec![0.25, 0.5, 1.0, 1.5, 2.0, 3.3, -7.9, 10.0];
    let mut o = vec![0f32; xs.len() * 16];
    let mut oi = vec![0i32; xs.len()];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, xs.as_ptr());
    ptr_arg(&mut args, k, 1, o.as_mut_ptr());
    ptr_arg(&mut args, k, 2, oi.as_mut_ptr());
    run_1d(k, &mut args, xs.len() as u64, 8);
    for (i, &v) in xs.iter().enumerate() {
        let pi = std::f64::consts::PI;
        let t = ((v - 0.0) / 4.0).clamp(0.0, 1.0);
        let (m, ex) = if v == 0.0 {
            (0.0, 0)
        } else {
            let e = (v.abs().log2().floor() as i32) + 1;
            (v / 2f32.powi(e), e)
        };
        let want = [
            ((pi * v as f64).sin()) as f32,
            ((pi * v as f64).cos()) as f32,
            v + (10.0 - v) * 0.25,
            if v < 2.0 { 0.0 } else { 1.0 },
            t * t * (3.0 - 2.0 * t),
            if v - 2.0 > 0.0 {
                1.0
            } else if v - 2.0 < 0.0 {
                -1.0
            } else {
                0.0
            },
            (v as f64 * 180.0 / pi) as f32,
            (v as f64 * pi / 180.0) as f32,
            v.clamp(1.0, 3.0),
            v * 8.0,
            v.cbrt(),
            v * v * v,
            m,
            v - v.floor(),
            v.floor(),
            if v.abs() > 2.5 { v } else { -2.5 },
        ];
        for (j, w) in want.iter().enumerate() {
            let got = o[i * 16 + j];
            let tol = if j < 2 { 2 } else { 4 };
            assert!(ulp_diff(got, *w) <= tol || (got - w).abs() < 1e-6, "fn {j} at {v}: got {got}, want {w}");
        }
        assert_eq!(oi[i], ex, "frexp exponent of {v}");
    }
}

#[test]
fn saturated_and_rounded_conversions() {
    let src = r#"
kernel void conv(global const float* f, global const int* n, global uchar* o8, global char* s8,
                 global int* oi, global ushort* o16, global float* of) {
    int i = get_global_id(0);
    o8[i] = convert_uchar_sat(f[i]);
    s8[i] = convert_char_sat(n[i]);
    oi[i * 4 + 0] = convert_int_rtn(f[i]);
    oi[i * 4 + 1] = convert_int_rtp(f[i]);
    oi[i * 4 + 2] = convert_int_rte(f[i]);
    oi[i * 4 + 3] = convert_int_sat_rtz(f[i] * 1e10f);
    o16[i] = convert_ushort_sat(n[i]);
    of[i * 2 + 0] = convert_float_rtz(n[i] * 33 + 16777217);
    of[i * 2 + 1] = convert_float_rtp(n[i] * 33 + 16777217);
}
"#;
    let p = build(src);
    let k = p.kernel("conv").unwrap();
    let f = [-3.5f32, 300.7, f32::NAN, 2.5, 1.5, -0.4, 250.49, 1e30];
    let n = [-1000i32, 1000, 5, -5, 127, -128, 70000, 3];
    let m = f.len();
    let (mut o8, mut s8, mut oi, mut o16, mut of) =
        (vec![0u8; m], vec![0i8; m], vec![0i32; m * 4], vec![0u16; m], vec![0f32; m * 2]);
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, f.as_ptr());
    ptr_arg(&mut args, k, 1, n.as_ptr());
    ptr_arg(&mut args, k, 2, o8.as_mut_ptr());
    ptr_arg(&mut args, k, 3, s8.as_mut_ptr());
    ptr_arg(&mut args, k, 4, oi.as_mut_ptr());
    ptr_arg(&mut args, k, 5, o16.as_mut_ptr());
    ptr_arg(&mut args, k, 6, of.as_mut_ptr());
    run_1d(k, &mut args, m as u64, m as u64);
    for i in 0..m {
        let x = f[i];
        let sat_u8 = if x.is_nan() { 0 } else { x.clamp(0.0, 255.0) as u8 };
        assert_eq!(o8[i], sat_u8, "uchar_sat({x})");
        assert_eq!(s8[i], n[i].clamp(-128, 127) as i8);
        if !x.is_nan() && x.abs() < 1e9 {
            assert_eq!(oi[i * 4], x.floor() as i32, "rtn({x})");
            assert_eq!(oi[i * 4 + 1], x.ceil() as i32, "rtp({x})");
            assert_eq!(oi[i * 4 + 2], x.round_ties_even() as i32, "rte({x})");
        }
        let big = x * 1e10;
        assert_eq!(oi[i * 4 + 3], if big.is_nan() { 0 } else { big as i32 }, "sat_rtz({big})");
        assert_eq!(o16[i], n[i].clamp(0, 65535) as u16);
        let exact = n[i] as i64 * 33 + 16777217;
        let exact = exact as i32 as i64; // int arithmetic wraps in the kernel
        let rtz = of[i * 2];
        let rtp = of[i * 2 + 1];
        assert!((rtz as f64).abs() <= (exact as f64).abs(), "rtz {exact} -> {rtz}");
        assert!(rtp as f64 >= exact as f64, "rtp {exact} -> {rtp}");
        assert!(((rtp as f64) - (exact as f64)).abs() < 4.0 && ((rtz as f64) - (exact as f64)).abs() < 4.0);
    }
}

#[test]
fn integer_builtins() {
    let src = r#"
kernel void ib(global const int* a, global const int* b, global int* o, global ulong* ol) {
    int i = get_global_id(0);
    int x = a[i], y = b[i];
    global int* r = o + i * 14;
    r[0] = mul_hi(x, y); r[1] = (int)mul_hi((uint)x, (uint)y); r[2] = rotate(x, y);
    r[3] = clz(x); r[4] = popcount(x); r[5] = add_sat(x, y); r[6] = sub_sat(x, y);
    r[7] = (int)abs_diff(x, y); r[8] = hadd(x, y); r[9] = rhadd(x, y); r[10] = (int)abs(x);
    r[11] = mad_sat(x, y, 7); r[12] = max(x, y); r[13] = ctz(x);
    ol[i] = upsample((uint)x, (uint)y);
}
"#;
    let p = build_opts(src, "-cl-std=CL2.0");
    let k = p.kernel("ib").unwrap();
    let a = [1i32, -1, i32::MAX, i32::MIN, 123456, -98765, 0, 0x0f0f0f0f];
    let b = [2i32, 5, 2, -3, 654321, 33, 31, -1];
    let m = a.len();
    let mut o = vec![0i32; m * 14];
    let mut ol = vec![0u64; m];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, b.as_ptr());
    ptr_arg(&mut args, k, 2, o.as_mut_ptr());
    ptr_arg(&mut args, k, 3, ol.as_mut_ptr());
    run_1d(k, &mut args, m as u64, m as u64);
    for i in 0..m {
        let (x, y) = (a[i], b[i]);
        let want = [
            ((x as i64 * y as i64) >> 32) as i32,
            ((x as u32 as u64 * y as u32 as u64) >> 32) as i32,
            x.rotate_left((y as u32) % 32),
            x.leading_zeros() as i32,
            x.count_ones() as i32,
            x.saturating_add(y),
            x.saturating_sub(y),
            (x as i64 - y as i64).unsigned_abs() as u32 as i32,
            ((x as i64 + y as i64) >> 1) as i32,
            ((x as i64 + y as i64 + 1) >> 1) as i32,
            x.unsigned_abs() as i32,
            (x as i64 * y as i64 + 7).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            x.max(y),
            x.trailing_zeros() as i32,
        ];
        assert_eq!(&o[i * 14..i * 14 + 14], &want, "x={x} y={y}");
        assert_eq!(ol[i], ((x as u32 as u64) << 32) | y as u32 as u64);
    }
}

#[test]
fn geometric_and_relational() {
    let src = r#"
kernel void g(global const float4* a, global const float4* b, global float* o, global float4* o4, global int4* oi) {
    int i = get_global_id(0);
    float4 x = a[i], y = b[i];
    o[i * 5 + 0] = dot(x, y);
    o[i * 5 + 1] = length(x);
    o[i * 5 + 2] = distance(x, y);
    o[i * 5 + 3] = length(x.xyz);
    o[i * 5 + 4] = fast_length(x);
    o4[i * 3 + 0] = cross(x, y);
    o4[i * 3 + 1] = normalize(x);
    o4[i * 3 + 2] = select(x, y, isgreater(x, y));
    oi[i] = (int4)(any(x > y), all(x >= -100.0f), isnan(x.x / x.y), signbit(x.w)) + bitselect((int4)(0x0f), (int4)(0xf0), (int4)(0x3c));
}
"#;
    let p = build(src);
    let k = p.kernel("g").unwrap();
    let a: Vec<[f32; 4]> =
        vec![[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 2.0, -3.0], [0.0, 0.0, 0.0, 0.0], [3e19, 4e19, 0.0, 0.0]];
    let b: Vec<[f32; 4]> = vec![[4.0, 3.0, 2.0, 1.0], [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]];
    let m = a.len();
    let (mut o, mut o4, mut oi) = (vec![0f32; m * 5], vec![[0f32; 4]; m * 3], vec![[0i32; 4]; m]);
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, b.as_ptr());
    ptr_arg(&mut args, k, 2, o.as_mut_ptr());
    ptr_arg(&mut args, k, 3, o4.as_mut_ptr());
    ptr_arg(&mut args, k, 4, oi.as_mut_ptr());
    run_1d(k, &mut args, m as u64, m as u64);
    let len = |v: &[f32]| v.iter().map(|x| (*x as f64) * (*x as f64)).sum::<f64>().sqrt() as f32;
    for i in 0..m {
        let (x, y) = (a[i], b[i]);
        let dot: f32 = (0..4).map(|c| x[c] * y[c]).sum();
        if i < 3 {
            assert!((o[i * 5] - dot).abs() < 1e-5);
        }
        assert!(ulp_diff(o[i * 5 + 1], len(&x)) <= 2, "length {:?} = {}", x, o[i * 5 + 1]);
        let d: Vec<f32> = (0..4).map(|c| x[c] - y[c]).collect();
        assert!(ulp_diff(o[i * 5 + 2], len(&d)) <= 2);
        assert!(ulp_diff(o[i * 5 + 3], len(&x[..3])) <= 2);
        let cross = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0], 0.0];
        assert_eq!(o4[i * 3], cross);
        let l = len(&x);
        for c in 0..4 {
            let want = if l == 0.0 { x[c] } else { x[c] / l };
            assert!((o4[i * 3 + 1][c] - want).abs() <= 1e-6 * want.abs().max(1.0), "normalize {:?}", x);
            let sel = if x[c] > y[c] { y[c] } else { x[c] };
            assert_eq!(o4[i * 3 + 2][c], sel);
        }
        let any = (0..4).any(|c| x[c] > y[c]) as i32;
        let all = (0..4).all(|c| x[c] >= -100.0) as i32;
        let nan = (x[0] / x[1]).is_nan() as i32;
        let sb = x[3].is_sign_negative() as i32;
        let bs = (0x0f & !0x3c) | (0xf0 & 0x3c);
        assert_eq!(oi[i], [any + bs, all + bs, nan + bs, sb + bs], "relational {i}");
    }
}

#[test]
fn vload_vstore_and_half() {
    let src = r#"
kernel void vl(global const float* in, global float* out, global half* h, global float* hf) {
    int i = get_global_id(0);
    float4 v = vload4(i, in);
    float3 w = vload3(0, in + 4 * i + 1);
    vstore4(v * 2.0f, i, out);
    vstore3(w, i, out + 64);
    vstore_half(v.x, i, h);
    vstore_half_rtz(v.y, i + 16, h);
    vstore_half4_rtp(v, i, h + 32);
    hf[i] = vload_half(i, h);
    float4 back = vload_half4(i, h + 32);
    hf[16 + i] = back.w;
}
"#;
    let p = build(src);
    let k = p.kernel("vl").unwrap();
    let n = 8;
    let input: Vec<f32> = (0..4 * n + 4).map(|i| i as f32 * 1.001 + 0.3).collect();
    let mut out = vec![0f32; 64 + 3 * n];
    let mut h = vec![0u16; 32 + 4 * n];
    let mut hf = vec![0f32; 32];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, input.as_ptr());
    ptr_arg(&mut args, k, 1, out.as_mut_ptr());
    ptr_arg(&mut args, k, 2, h.as_mut_ptr());
    ptr_arg(&mut args, k, 3, hf.as_mut_ptr());
    run_1d(k, &mut args, n as u64, n as u64);
    for i in 0..n {
        for c in 0..4 {
            assert_eq!(out[4 * i + c], input[4 * i + c] * 2.0);
        }
        for c in 0..3 {
            assert_eq!(out[64 + 3 * i + c], input[4 * i + 1 + c]);
        }
        // RTE and RTZ conversions to half, read back.
        let x = input[4 * i];
        let back = hf[i];
        assert!((back - x).abs() <= x.abs() * 1e-3, "half({x}) = {back}");
        let w = input[4 * i + 3];
        let up = hf[16 + i];
        assert!(up >= w && up - w <= w.abs() * 1e-3, "half_rtp({w}) = {up}");
    }
}

#[test]
fn constant_tables_and_switch() {
    let src = r#"
constant int table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
constant float4 k4 = (float4)(0.5f, 1.5f, 2.5f, 3.5f);
int pick(int x) {
    switch (x & 255) {
        case 0: case 8: case 16: return table[x & 7] * 10;
        case 5: case 13: case 21: return -1;
        case 6: case 7: case 14: case 15: case 22: case 23: return table[(x + 1) & 7];
        default: return table[x & 7];
    }
}
kernel void t(global int* o, global float* of) {
    int i = get_global_id(0);
    o[i] = pick(i);
    of[i] = k4[i & 3];
}
"#;
    let p = build(src);
    let k = p.kernel("t").unwrap();
    let table = [3, 1, 4, 1, 5, 9, 2, 6];
    let n = 24;
    let mut o = vec![0i32; n];
    let mut of = vec![0f32; n];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, o.as_mut_ptr());
    ptr_arg(&mut args, k, 1, of.as_mut_ptr());
    run_1d(k, &mut args, n as u64, 8);
    for i in 0..n {
        let want = match i & 7 {
            0 => table[0] * 10,
            5 => -1,
            6 | 7 => table[(i + 1) & 7],
            j => table[j],
        };
        assert_eq!(o[i], want, "{i}");
        assert_eq!(of[i], [0.5, 1.5, 2.5, 3.5][i & 3]);
    }
}

#[test]
fn barrier_in_non_inlined_helper() {
    let src = r#"
__attribute__((noinline)) void stage(local int* s, int lid, int n) {
    for (int k = 1; k < n; k <<= 1) {
        int v = lid >= k ? s[lid - k] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
kernel void scan(global int* data) {
    local int s[32];
    int lid = get_local_id(0);
    s[lid] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    stage(s, lid, get_local_size(0));
    data[get_global_id(0)] = s[lid];
}
"#;
    let p = build(src);
    let k = p.kernel("scan").unwrap();
    assert!(k.info.barrier_count >= 3);
    for pattern in [Pattern::Whole, Pattern::Chunks(8), Pattern::Chunks(3)] {
        let n = 32usize;
        let groups = 4usize;
        let init: Vec<i32> = (0..n * groups).map(|i| (i as i32 * 7) % 5 - 1).collect();
        let mut data = init.clone();
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, data.as_mut_ptr());
        run_ndrange(k, &mut args, 1, [(n * groups) as u64, 1, 1], [n as u64, 1, 1], [0; 3], pattern, &[]);
        for g in 0..groups {
            let mut acc = 0;
            for l in 0..n {
                acc += init[g * n + l];
                assert_eq!(data[g * n + l], acc, "group {g} item {l} {pattern:?}");
            }
        }
    }
}

#[test]
fn work_item_functions() {
    let src = r#"
kernel void wi(global uint* o) {
    size_t g = get_global_linear_id();
    global uint* r = o + g * 10;
    r[0] = get_work_dim(); r[1] = get_global_id(0); r[2] = get_global_id(1);
    r[3] = get_local_size(0); r[4] = get_enqueued_local_size(0); r[5] = get_num_groups(1);
    r[6] = get_global_offset(0); r[7] = get_group_id(1); r[8] = get_local_linear_id(); r[9] = get_global_size(0);
}
"#;
    let p = build_opts(src, "-cl-std=CL2.0");
    let k = p.kernel("wi").unwrap();
    let (gw, gh) = (10u64, 6u64);
    let mut o = vec![0u32; (gw * gh * 10) as usize];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, o.as_mut_ptr());
    run_ndrange(k, &mut args, 2, [gw, gh, 1], [4, 4, 1], [100, 0, 0], Pattern::Whole, &[]);
    for y in 0..gh {
        for x in 0..gw {
            let r = &o[((y * gw + x) * 10) as usize..][..10];
            let ls = if x >= 8 { 2 } else { 4 };
            let lsy = if y >= 4 { 2 } else { 4 };
            let llid = (y % 4) * ls + (x % 4);
            let want = [2, (x + 100) as u32, y as u32, ls as u32, 4, 2, 100, (y / 4) as u32, llid as u32, gw as u32];
            let _ = lsy;
            assert_eq!(r, &want, "({x},{y})");
        }
    }
}

#[test]
fn double_precision() {
    let src = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void d(global const double* x, global double* o) {
    int i = get_global_id(0);
    double v = x[i];
    o[i * 4 + 0] = sqrt(v) + exp(v * 0.01);
    o[i * 4 + 1] = sin(v) * cos(v);
    o[i * 4 + 2] = length((double2)(v, 1.0));
    o[i * 4 + 3] = (double)convert_float(v);
}
"#;
    let p = build(src);
    let k = p.kernel("d").unwrap();
    let xs = [0.5f64, 2.0, 10.0, 123.456];
    let mut o = vec![0f64; 16];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, xs.as_ptr());
    ptr_arg(&mut args, k, 1, o.as_mut_ptr());
    run_1d(k, &mut args, 4, 4);
    for (i, &v) in xs.iter().enumerate() {
        let want = [v.sqrt() + (v * 0.01).exp(), v.sin() * v.cos(), v.hypot(1.0), v as f32 as f64];
        for c in 0..4 {
            assert!((o[i * 4 + c] - want[c]).abs() <= 1e-14 * want[c].abs().max(1.0), "{c} at {v}");
        }
    }
}

#[test]
fn shuffles() {
    let src = r#"
kernel void s(global const int4* a, global const uint4* m, global int8* o) {
    int i = get_global_id(0);
    int4 x = a[i];
    int4 y = x * 10;
    int4 s1 = shuffle(x, m[i]);
    int4 s2 = shuffle2(x, y, m[i] + (uint4)(4, 0, 4, 0));
    o[i] = (int8)(s1, s2);
}
"#;
    let p = build(src);
    let k = p.kernel("s").unwrap();
    let a: Vec<[i32; 4]> = vec![[1, 2, 3, 4], [5, 6, 7, 8]];
    let m: Vec<[u32; 4]> = vec![[3, 2, 1, 0], [0, 0, 3, 1]];
    let mut o = vec![[0i32; 8]; 2];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, a.as_ptr());
    ptr_arg(&mut args, k, 1, m.as_ptr());
    ptr_arg(&mut args, k, 2, o.as_mut_ptr());
    run_1d(k, &mut args, 2, 2);
    for i in 0..2 {
        let x = a[i];
        let cat: Vec<i32> = x.iter().copied().chain(x.iter().map(|v| v * 10)).collect();
        let mut want = [0i32; 8];
        for c in 0..4 {
            want[c] = x[(m[i][c] % 4) as usize];
            let idx = (m[i][c] + [4, 0, 4, 0][c]) % 8;
            want[4 + c] = cat[idx as usize];
        }
        assert_eq!(o[i], want);
    }
}

#[test]
fn program_scope_variables() {
    let src = r#"
global int counter = 5;
global float weights[4] = { 0.5f, 1.5f, 2.5f, 3.5f };
constant uint masks[3] = { 1, 3, 7 };
kernel void ps(global float* o) {
    int i = get_global_id(0);
    o[i] = weights[i & 3] * (float)(counter + masks[i % 3]);
}
kernel void bump(void) {
    if (get_global_id(0) == 0) { counter += 10; weights[1] = -1.0f; }
}
"#;
    let p = build_opts(src, "-cl-std=CL2.0");
    let k = p.kernel("ps").unwrap();
    let bump = p.kernel("bump").unwrap();
    let run = |o: &mut Vec<f32>| {
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, o.as_mut_ptr());
        run_1d(k, &mut args, 12, 4);
    };
    let mut o = vec![0f32; 12];
    run(&mut o);
    let w = [0.5f32, 1.5, 2.5, 3.5];
    for i in 0..12 {
        assert_eq!(o[i], w[i & 3] * (5 + [1, 3, 7][i % 3]) as f32);
    }
    // Program-scope variables persist across launches and kernels.
    let mut args = ArgBlock::new(&bump.info);
    run_1d(bump, &mut args, 4, 4);
    run(&mut o);
    let w = [0.5f32, -1.0, 2.5, 3.5];
    for i in 0..12 {
        assert_eq!(o[i], w[i & 3] * (15 + [1, 3, 7][i % 3]) as f32);
    }
}

#[test]
fn kernel_calling_kernel_with_local_memory() {
    let src = r#"
kernel void inner(global int* o) {
    local int t[16];
    int l = get_local_id(0);
    t[l] = l * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(0)] = t[15 - l];
}
kernel void outer(global int* o) {
    inner(o);
    o[get_global_id(0)] += 1000;
}
"#;
    let p = build(src);
    for (name, add) in [("inner", 0), ("outer", 1000)] {
        let k = p.kernel(name).unwrap();
        assert_eq!(k.info.static_local_mem_size, 64, "{name}");
        let mut o = vec![0i32; 32];
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, o.as_mut_ptr());
        run_ndrange(k, &mut args, 1, [32, 1, 1], [16, 1, 1], [0; 3], Pattern::Chunks(8), &[]);
        for g in 0..32 {
            assert_eq!(o[g], (15 - (g % 16) as i32) * 2 + add, "{name} {g}");
        }
    }
}

#[test]
fn more_float_functions() {
    let src = r#"
kernel void m(global const float* x, global float* o) {
    int i = get_global_id(0);
    float v = x[i];
    global float* r = o + i * 10;
    r[0] = exp10(v); r[1] = expm1(v); r[2] = log1p(v); r[3] = log10(v); r[4] = sinh(v);
    r[5] = cosh(v); r[6] = asinh(v); r[7] = acos(v / 10.0f); r[8] = atan(v); r[9] = copysign(v, -1.0f);
}
"#;
    let p = build(src);
    let k = p.kernel("m").unwrap();
    let xs = [0.1f32, 0.5, 1.0, 2.0, 3.7, 5.0, 7.5, 9.9];
    let mut o = vec![0f32; xs.len() * 10];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, xs.as_ptr());
    ptr_arg(&mut args, k, 1, o.as_mut_ptr());
    run_1d(k, &mut args, xs.len() as u64, 4);
    for (i, &v) in xs.iter().enumerate() {
        let want = [
            10f64.powf(v as f64) as f32,
            v.exp_m1(),
            v.ln_1p(),
            v.log10(),
            v.sinh(),
            v.cosh(),
            v.asinh(),
            (v / 10.0).acos(),
            v.atan(),
            -v,
        ];
        for (j, w) in want.iter().enumerate() {
            assert!(ulp_diff(o[i * 10 + j], *w) <= 4, "fn {j} at {v}: {} vs {w}", o[i * 10 + j]);
        }
    }
}

/// Programs compile concurrently and their kernels run from several threads.
#[test]
fn concurrent_codegen_and_execution() {
    let src = "kernel void sq(global const int* a, global int* b, int k) { int i = get_global_id(0); b[i] = a[i] * a[i] + k; }";
    let progs: Vec<Arc<NativeProgram>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| build(src))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    std::thread::scope(|s| {
        for (t, p) in progs.iter().enumerate() {
            let p = p.clone();
            s.spawn(move || {
                let k = p.kernel("sq").unwrap();
                let a: Vec<i32> = (0..500).collect();
                let mut b = vec![0i32; 500];
                let mut args = ArgBlock::new(&k.info);
                args.set_ptr(&k.info, 0, a.as_ptr());
                args.set_ptr(&k.info, 1, b.as_mut_ptr());
                args.set(&k.info, 2, t as i32);
                run_1d(k, &mut args, 500, 50);
                for i in 0..500 {
                    assert_eq!(b[i], a[i] * a[i] + t as i32);
                }
            });
        }
    });
}

#[test]
fn sub_group_builtins_need_a_device_with_sub_groups() {
    // clang declares get_sub_group_size() whatever -cl-ext says; code generation for a device
    // without sub-groups must refuse it rather than give every work-item a sub-group of one.
    let src = "kernel void k(global uint* o) { o[get_global_id(0)] = get_sub_group_size(); }";
    let no_sub_groups = Target {
        disabled_features: vec!["__opencl_c_subgroups".into(), "cl_khr_subgroups".into()],
        ..Target::default()
    };
    let program = compile_source(src, "-cl-std=CL3.0", &no_sub_groups).expect("the front end accepts it");
    let err = program.codegen(&no_sub_groups).expect_err("no sub-groups on this target");
    assert!(err.log.contains("sub-group functions"), "{}", err.log);
    assert!(program.codegen(&Target::default()).is_ok(), "a target with sub-groups builds it");
}

/// Saturating float -> integer conversions in vectorized code, for every integer type from
/// float and double: NaN gives 0, values beyond a type's range its bound (Rust's `as` is the
/// same saturating conversion), at width 16. They are lowered without LLVM's `fptosi.sat` /
/// `fptoui.sat`, which the x86 back end converts lane by lane with a branch each (a float16
/// conversion at SIMD32 took two seconds to compile).
#[test]
fn saturating_conversions_in_vector_code_have_vector_form() {
    let src = r#"
kernel void sat(global const float* f, global const double* d, global long* o) {
    int i = get_global_id(0);
    global long* r = o + i * 16;
    float x = f[i]; double y = d[i];
    r[0] = convert_char_sat(x);   r[1] = convert_uchar_sat(x);
    r[2] = convert_short_sat(x);  r[3] = convert_ushort_sat(x);
    r[4] = convert_int_sat(x);    r[5] = convert_uint_sat(x);
    r[6] = convert_long_sat(x);   r[7] = as_long(convert_ulong_sat(x));
    r[8] = convert_char_sat(y);   r[9] = convert_uchar_sat(y);
    r[10] = convert_short_sat(y); r[11] = convert_ushort_sat(y);
    r[12] = convert_int_sat(y);   r[13] = convert_uint_sat(y);
    r[14] = convert_long_sat(y);  r[15] = as_long(convert_ulong_sat(y));
}
"#;
    let t = vector_target(16);
    let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    let ir = prog.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    assert!(!ir.contains("fptosi.sat") && !ir.contains("fptoui.sat"), "an fpto*i.sat intrinsic left in:\n{ir}");
    assert!(ir.contains("<16 x float>"), "not vectorized:\n{ir}");
    let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    let k = p.kernel("sat").unwrap();
    let mut f: Vec<f32> =
        vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, -0.9, 0.9, 127.9, 128.0, -128.9, -129.0];
    f.extend([255.5, 256.0, 32767.5, 32768.0, -32769.0, 65535.9, 65536.0, 2147483520.0, 2147483648.0]);
    f.extend([-2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 1e30, -1e30, 3.7, -3.7]);
    // Around 2^63 and 2^64: the floats just below, at and beyond each bound.
    let (p63, p64) = (2f32.powi(63), 2f32.powi(64));
    let (below, beyond) = (1.0 - f32::EPSILON / 2.0, 1.0 + f32::EPSILON);
    f.extend([p63 * below, p63, -p63, -p63 * beyond, p64 * below, p64]);
    let mut d: Vec<f64> = f.iter().map(|&x| f64::from(x)).collect();
    d.extend([2147483647.5, 2147483648.0, -2147483648.9, -2147483649.0, 4294967295.9, 4294967296.0]);
    d.extend([9223372036854774784.0, 9223372036854775808.0, -9223372036854775808.0, -9223372036854777856.0]);
    d.extend([18446744073709549568.0, 18446744073709551616.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    f.resize(d.len(), 1.5);
    let n = d.len();
    let mut o = vec![0i64; n * 16];
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, f.as_ptr());
    ptr_arg(&mut args, k, 1, d.as_ptr());
    ptr_arg(&mut args, k, 2, o.as_mut_ptr());
    run_1d(k, &mut args, n as u64, n as u64);
    for i in 0..n {
        let (x, y) = (f[i], d[i]);
        let want = [
            x as i8 as i64,
            x as u8 as i64,
            x as i16 as i64,
            x as u16 as i64,
            x as i32 as i64,
            x as u32 as i64,
            x as i64,
            x as u64 as i64,
            y as i8 as i64,
            y as u8 as i64,
            y as i16 as i64,
            y as u16 as i64,
            y as i32 as i64,
            y as u32 as i64,
            y as i64,
            y as u64 as i64,
        ];
        assert_eq!(&o[i * 16..i * 16 + 16], &want, "float {x:e}, double {y:e}");
    }
}

/// `vloadn` / `vstoren` in vectorized code, at widths 8 and 16 and scalar: consecutive
/// offsets (a span per packet), a strided and a uniform offset, a store under a divergent
/// branch, 3-component vectors (12 bytes per lane, nothing written in between) and a tail
/// packet of a work-group that is not a multiple of the width.
#[test]
fn vload_and_vstore_in_vector_code() {
    let src = r#"
kernel void vls(global const float* f, global const char* c, global const int* n, global const double* d,
                global float* of, global char* oc, global int* on, global double* od) {
    size_t i = get_global_id(0);
    vstore3(vload3(i, f) * 2.0f, i, of);
    vstore2(vload2(i, c) + (char2)(1, 2), i, oc);
    int16 x = vload16(i, n);
    vstore16(x + vload16(0, n), i, on);
    if (i & 1)
        vstore4(vload4(i * 2, d) + 0.5, i, od);
}
"#;
    let m = 37usize;
    let f: Vec<f32> = (0..3 * m).map(|i| i as f32 * 0.25).collect();
    let c: Vec<i8> = (0..2 * m).map(|i| (i as i8).wrapping_mul(3)).collect();
    let n: Vec<i32> = (0..16 * m).map(|i| i as i32 * 7 - 100).collect();
    let d: Vec<f64> = (0..8 * m).map(|i| i as f64 * 1.5).collect();
    for width in [None, Some(8), Some(16)] {
        let t = width.map_or_else(Target::default, vector_target);
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
        if width.is_some() {
            let ir = prog.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
            // Lane by lane, each lane's vload3 was a load of <3 x float>.
            assert!(!ir.contains("load <3 x float>") && !ir.contains("store <3 x float>"), "{width:?}:\n{ir}");
        }
        let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
        let k = p.kernel("vls").unwrap();
        // One float past the outputs of vstore3 stays untouched.
        let (mut of, mut oc, mut on, mut od) =
            (vec![-1f32; 3 * m + 1], vec![-1i8; 2 * m], vec![-1i32; 16 * m], vec![-1f64; 4 * m]);
        let mut args = ArgBlock::new(&k.info);
        ptr_arg(&mut args, k, 0, f.as_ptr());
        ptr_arg(&mut args, k, 1, c.as_ptr());
        ptr_arg(&mut args, k, 2, n.as_ptr());
        ptr_arg(&mut args, k, 3, d.as_ptr());
        ptr_arg(&mut args, k, 4, of.as_mut_ptr());
        ptr_arg(&mut args, k, 5, oc.as_mut_ptr());
        ptr_arg(&mut args, k, 6, on.as_mut_ptr());
        ptr_arg(&mut args, k, 7, od.as_mut_ptr());
        run_1d(k, &mut args, m as u64, m as u64);
        for i in 0..3 * m {
            assert_eq!(of[i], f[i] * 2.0, "{width:?}: of[{i}]");
        }
        assert_eq!(of[3 * m], -1.0, "{width:?}: written past the last float3");
        for i in 0..2 * m {
            assert_eq!(oc[i], c[i].wrapping_add(1 + (i % 2) as i8), "{width:?}: oc[{i}]");
        }
        for i in 0..16 * m {
            assert_eq!(on[i], n[i] + n[i % 16], "{width:?}: on[{i}]");
        }
        for i in 0..m {
            for j in 0..4 {
                let want = if i % 2 == 1 { d[8 * i + j] + 0.5 } else { -1.0 };
                assert_eq!(od[4 * i + j], want, "{width:?}: od[{}]", 4 * i + j);
            }
        }
    }
}

/// A recursive struct (a linked list's `struct Node *next`: OpTypeForwardPointer in SPIR-V),
/// built, validated and run scalar and vectorized: each work-item builds its own list in the
/// node array and a second kernel walks it (the CTS SVM suite's linked-list kernels).
#[test]
fn recursive_struct_linked_lists() {
    let src = r#"
typedef struct Node { int id; int pos; __global struct Node* next; } Node;
kernel void create(__global Node* nodes, int n, int len) {
    int i = get_global_id(0);
    __global Node* node = &nodes[i];
    node->id = i; node->pos = 0;
    for (int j = 1; j < len; j++) {
        __global Node* fresh = &nodes[n * j + i];
        fresh->id = i; fresh->pos = j;
        node->next = fresh;
        node = fresh;
    }
    node->next = 0;
}
kernel void verify(__global Node* nodes, __global int* ok) {
    int i = get_global_id(0);
    int good = 0;
    for (__global Node* p = &nodes[i]; p; p = p->next) good += p->id == i && p->pos == good;
    ok[i] = good;
}
kernel void by_value(__global Node* nodes, __global Node* out) {
    int i = get_global_id(0);
    Node n = nodes[i];
    Node m = { n.id + 1000, n.pos + 7, n.next };
    out[i] = m;
}"#;
    for target in [Target::default(), vector_target(8)] {
        let prog = compile_source(src, "", &target).unwrap_or_else(|e| panic!("front end: {}", e.log));
        if let Err(errors) = softcl_compiler::ir::validate::validate(&prog.module) {
            panic!("invalid IR: {errors:?}");
        }
        let p = prog.codegen(&target).unwrap_or_else(|e| panic!("back end: {}", e.log));
        let (n, len) = (37usize, 5usize);
        // id, pos, (padding), next: 16 bytes a node.
        let mut nodes = vec![0u64; 2 * n * len];
        let mut ok = vec![0i32; n];
        let create = p.kernel("create").unwrap();
        let mut args = ArgBlock::new(&create.info);
        ptr_arg(&mut args, create, 0, nodes.as_mut_ptr());
        args.set(&create.info, 1, n as i32);
        args.set(&create.info, 2, len as i32);
        run_1d(create, &mut args, n as u64, n as u64);
        let verify = p.kernel("verify").unwrap();
        let mut args = ArgBlock::new(&verify.info);
        ptr_arg(&mut args, verify, 0, nodes.as_ptr());
        ptr_arg(&mut args, verify, 1, ok.as_mut_ptr());
        run_1d(verify, &mut args, n as u64, n as u64);
        assert_eq!(ok, vec![len as i32; n]);
        // Struct values holding the recursive pointer: copied member by member.
        let mut out = vec![0u64; 2 * n];
        let by_value = p.kernel("by_value").unwrap();
        let mut args = ArgBlock::new(&by_value.info);
        ptr_arg(&mut args, by_value, 0, nodes.as_ptr());
        ptr_arg(&mut args, by_value, 1, out.as_mut_ptr());
        run_1d(by_value, &mut args, n as u64, n as u64);
        for i in 0..n {
            let (id, pos) = (out[2 * i] as u32 as i32, (out[2 * i] >> 32) as u32 as i32);
            assert_eq!((id, pos), (i as i32 + 1000, 7), "node {i}");
            assert_eq!(out[2 * i + 1], nodes[2 * i + 1], "next of node {i}");
        }
    }
}

/// Struct values whose member is a forward pointer (OpCompositeExtract, OpCompositeInsert and
/// OpCompositeConstruct on a recursive struct, which clang itself emits as member accesses):
/// hand-written SPIR-V, validated and run. The kernel stores `{7, next}` into the node
/// `p->next` points at, and `p`'s own node back unchanged.
#[test]
fn recursive_struct_values() {
    let text = "OpCapability Addresses
         OpCapability Kernel
         OpCapability Int64
         OpMemoryModel Physical64 OpenCL
         OpEntryPoint Kernel %k \"k\"
         OpTypeForwardPointer %pnode CrossWorkgroup
         %void = OpTypeVoid
         %uint = OpTypeInt 32 0
         %node = OpTypeStruct %uint %pnode
         %pnode = OpTypePointer CrossWorkgroup %node
         %fnty = OpTypeFunction %void %pnode
         %seven = OpConstant %uint 7
         %k = OpFunction %void None %fnty
         %p = OpFunctionParameter %pnode
         %entry = OpLabel
         %n = OpLoad %node %p
         %next = OpCompositeExtract %pnode %n 1
         %m = OpCompositeInsert %node %next %n 1
         %c = OpCompositeConstruct %node %seven %next
         OpStore %next %c
         OpStore %p %m
         OpReturn
         OpFunctionEnd
";
    let dir = std::env::temp_dir().join(format!("softcl-recursive-values-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("in.spvasm"), dir.join("out.spv"));
    std::fs::write(&input, text).unwrap();
    let status = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0", "-o"])
        .arg(&output)
        .arg(&input)
        .status()
        .expect("spirv-as runs");
    assert!(status.success(), "spirv-as failed");
    let bytes = std::fs::read(&output).unwrap();
    std::fs::remove_dir_all(&dir).ok();

    let prog = softcl_compiler::load_spirv(&bytes).unwrap_or_else(|e| panic!("front end: {}", e.log));
    if let Err(errors) = softcl_compiler::ir::validate::validate(&prog.module) {
        panic!("invalid IR: {errors:?}");
    }
    let p = prog.codegen(&Target::default()).unwrap_or_else(|e| panic!("back end: {}", e.log));
    // Two nodes of 16 bytes: {value, padding, next}.
    let mut nodes = vec![0u64; 4];
    let second = nodes.as_ptr().wrapping_add(2) as u64;
    nodes[0] = 5;
    nodes[1] = second;
    let k = p.kernel("k").unwrap();
    let mut args = ArgBlock::new(&k.info);
    ptr_arg(&mut args, k, 0, nodes.as_mut_ptr());
    run_1d(k, &mut args, 1, 1);
    assert_eq!(nodes[0] as u32, 5);
    assert_eq!(nodes[1], second);
    assert_eq!(nodes[2] as u32, 7);
    assert_eq!(nodes[3], second);
}
