//! The benchmark's kernels: OpenCL C source, seeded inputs, launch geometry, the work each
//! launch does (bytes moved and flops), and a check of the result against a reference the
//! host computes in Rust.
//!
//! Work counts: bytes are the compulsory DRAM traffic (each input read once, each output
//! written once); flops count adds, multiplies and compares-free arithmetic, an FMA as two,
//! and each built-in call (sqrt, rsqrt, exp, log, sin, division) as one.

use std::sync::Arc;

use crate::host::{par_fill, Rng};

/// Which roof bounds a kernel: the host's copy bandwidth or its FP32 FMA peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Memory,
    Compute,
}

/// Problem sizes: `Full` runs each kernel for tens to hundreds of milliseconds on a
/// 2-core machine; `Small` is a quick run for CI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Small,
    Full,
}

impl Size {
    fn pick<T>(self, small: T, full: T) -> T {
        match self {
            Size::Small => small,
            Size::Full => full,
        }
    }
}

/// Host data behind an input buffer.
#[derive(Clone)]
pub enum Data {
    F32(Arc<Vec<f32>>),
    U8(Arc<Vec<u8>>),
    U32(Arc<Vec<u32>>),
}

impl Data {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Data::F32(v) => bytemuck::cast_slice(v),
            Data::U8(v) => v,
            Data::U32(v) => bytemuck::cast_slice(v),
        }
    }
}

/// A by-value kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    I32(i32),
    U32(u32),
    F32(f32),
    F32x4([f32; 4]),
}

/// One kernel argument, in parameter order.
pub enum Arg {
    Scalar(Scalar),
    /// A `__local` buffer of this many bytes.
    Local(usize),
    /// A read-only buffer holding the data.
    Input(Data),
    /// A buffer of this many bytes (zero-filled) the kernel writes; read back for the check.
    Output(usize),
    /// A buffer restored to the data before every launch (the kernel accumulates into it);
    /// read back for the check.
    Reset(Data),
}

/// The check of a run: the read-back outputs (the `Output` and `Reset` arguments in order)
/// to `Ok(note)` or `Err(what is wrong)`.
pub type Check = Box<dyn Fn(&[Vec<u8>]) -> Result<String, String> + Send + Sync>;

/// One benchmark kernel, ready to run on any device.
pub struct Case {
    pub name: &'static str,
    /// The problem size, for the table ("16M", "1024^2").
    pub size: String,
    pub source: String,
    pub kernel: &'static str,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub args: Vec<Arg>,
    pub bytes: f64,
    pub flops: f64,
    pub bound: Bound,
    pub check: Check,
}

/// Every kernel, in table order, with what it measures (docs/PERFORMANCE.md says more).
pub const KERNELS: &[(&str, &str)] = &[
    ("vecadd", "c = a + b on floats: streaming, 3 arrays"),
    ("saxpy", "z = alpha * x + y on floats: streaming, 3 arrays"),
    ("matmul_naive", "C = A * B, one work-item per element, straight from global memory"),
    ("matmul_tiled", "C = A * B with 16x16 __local tiles and barriers"),
    ("reduction", "sum: 16 loads per work-item, then a __local tree with barriers"),
    ("stencil5", "5-point stencil on a 2D grid (neighbour loads)"),
    ("nbody", "one n-body step, all pairs, float4 positions, rsqrt"),
    ("black_scholes", "Black-Scholes call and put prices: exp, log, sqrt, divisions"),
    ("histogram", "256-bin byte histogram: __local atomics, then global atomic_add"),
    ("mandelbrot", "Mandelbrot iteration counts: a divergent loop"),
    ("particles_float4", "particle update on an array of {float4 pos, vel} structs"),
    ("math", "sin(x) * exp(-x*x/10) + sqrt(x*x + 1): math built-ins"),
    ("mad_float", "clpeak-style compute: one chain of mads per work-item on float, two values feeding each other"),
    ("mad_float16", "the same on float16: the explicit-vector peak mad_float is held against"),
];

/// Builds the case named `name` at `size` (its inputs and reference data included).
pub fn build(name: &str, size: Size) -> Option<Case> {
    Some(match name {
        "vecadd" => vecadd(size),
        "saxpy" => saxpy(size),
        "matmul_naive" => matmul(size, false),
        "matmul_tiled" => matmul(size, true),
        "reduction" => reduction(size),
        "stencil5" => stencil5(size),
        "nbody" => nbody(size),
        "black_scholes" => black_scholes(size),
        "histogram" => histogram(size),
        "mandelbrot" => mandelbrot(size),
        "particles_float4" => particles(size),
        "math" => math(size),
        "mad_float" => mad_chains(size, 1),
        "mad_float16" => mad_chains(size, 16),
        _ => return None,
    })
}

/// The unit roundoff of f32.
const U: f64 = f32::EPSILON as f64 / 2.0;

fn mega(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{}K", n >> 10)
    } else {
        n.to_string()
    }
}

fn f32s(v: &[u8]) -> Vec<f32> {
    v.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn u32s(v: &[u8]) -> Vec<u32> {
    v.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Compares `got[i]` with `want(i) = (reference, tolerance)`; names the first bad element.
fn check_f32(what: &str, got: &[f32], n: usize, want: impl Fn(usize) -> (f64, f64) + Sync) -> Result<String, String> {
    if got.len() != n {
        return Err(format!("{what}: {} elements read back, {n} expected", got.len()));
    }
    let mut bad = 0usize;
    let mut first = None;
    let mut worst = 0.0f64;
    for (i, &g) in got.iter().enumerate() {
        let (r, tol) = want(i);
        let err = (f64::from(g) - r).abs();
        // NaN (in the result or the error) is never within tolerance.
        if err <= tol {
            if tol > 0.0 {
                worst = worst.max(err / tol);
            }
        } else {
            bad += 1;
            first.get_or_insert((i, g, r, tol));
        }
    }
    match first {
        None => Ok(format!("{what}: {n} values within tolerance (worst {:.0}% of it)", worst * 100.0)),
        Some((i, g, r, tol)) => Err(format!(
            "{what}: {bad} of {n} values wrong; first at [{i}]: got {g:e}, expected {r:e} (tolerance {tol:e})"
        )),
    }
}

/// A tolerance for a sum of `n` terms whose absolute values add up to `mag`: a few ulps per
/// term plus the typical growth of rounding errors in a sum, `4 sqrt(n)` ulps of `mag`.
fn sum_tol(n: usize, mag: f64) -> f64 {
    (4.0 * (n as f64).sqrt() + 16.0) * U * mag + f64::from(f32::MIN_POSITIVE)
}

// ---------------------------------------------------------------------------------------
// Streaming kernels
// ---------------------------------------------------------------------------------------

fn vecadd(size: Size) -> Case {
    let n = size.pick(1 << 20, 1 << 25);
    let mut rng = Rng::new(1);
    let a = Arc::new(rng.f32_vec(n, -1.0, 1.0));
    let b = Arc::new(rng.f32_vec(n, -1.0, 1.0));
    let (ra, rb) = (a.clone(), b.clone());
    Case {
        name: "vecadd",
        size: mega(n),
        source: r#"
__kernel void vecadd(__global const float *restrict a, __global const float *restrict b,
                     __global float *restrict c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}"#
        .into(),
        kernel: "vecadd",
        global: vec![n],
        local: None,
        args: vec![Arg::Input(Data::F32(a)), Arg::Input(Data::F32(b)), Arg::Output(n * 4)],
        bytes: 12.0 * n as f64,
        flops: n as f64,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            check_f32("c", &f32s(&out[0]), n, |i| {
                let (x, y) = (f64::from(ra[i]), f64::from(rb[i]));
                (x + y, U * (x.abs() + y.abs()))
            })
        }),
    }
}

fn saxpy(size: Size) -> Case {
    let n = size.pick(1 << 20, 1 << 25);
    let alpha = 1.75f32;
    let mut rng = Rng::new(2);
    let x = Arc::new(rng.f32_vec(n, -1.0, 1.0));
    let y = Arc::new(rng.f32_vec(n, -1.0, 1.0));
    let (rx, ry) = (x.clone(), y.clone());
    Case {
        name: "saxpy",
        size: mega(n),
        source: r#"
__kernel void saxpy(float alpha, __global const float *restrict x, __global const float *restrict y,
                    __global float *restrict z) {
    size_t i = get_global_id(0);
    z[i] = alpha * x[i] + y[i];
}"#
        .into(),
        kernel: "saxpy",
        global: vec![n],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::F32(alpha)),
            Arg::Input(Data::F32(x)),
            Arg::Input(Data::F32(y)),
            Arg::Output(n * 4),
        ],
        bytes: 12.0 * n as f64,
        flops: 2.0 * n as f64,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            check_f32("z", &f32s(&out[0]), n, |i| {
                let (ax, yy) = (f64::from(alpha) * f64::from(rx[i]), f64::from(ry[i]));
                (ax + yy, 2.0 * U * (ax.abs() + yy.abs()))
            })
        }),
    }
}

fn reduction(size: Size) -> Case {
    const PER_ITEM: usize = 16;
    const LOCAL: usize = 256;
    let n = size.pick(1 << 20, 1 << 25);
    let items = n / PER_ITEM;
    let groups = items / LOCAL;
    let mut rng = Rng::new(5);
    let x = Arc::new(rng.f32_vec(n, 0.0, 1.0));
    // Work-group g sums the elements i with (i mod items) / LOCAL == g.
    let mut want = vec![(0.0f64, 0.0f64); groups];
    {
        let x = &x;
        par_fill(&mut want, |start, chunk| {
            for (k, w) in chunk.iter_mut().enumerate() {
                let g = start + k;
                let mut s = 0.0f64;
                for item in g * LOCAL..(g + 1) * LOCAL {
                    for j in 0..PER_ITEM {
                        s += f64::from(x[item + j * items]);
                    }
                }
                *w = (s, s); // the inputs are positive: the sum is its own magnitude
            }
        });
    }
    Case {
        name: "reduction",
        size: mega(n),
        source: format!(
            r#"
#define PER_ITEM {PER_ITEM}
__kernel void reduce_sum(__global const float *restrict in, __global float *restrict partial,
                         __local float *scratch) {{
    size_t lid = get_local_id(0), ls = get_local_size(0);
    size_t gid = get_global_id(0), gs = get_global_size(0);
    float s = 0.0f;
    for (int j = 0; j < PER_ITEM; ++j)
        s += in[gid + j * gs];
    scratch[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = ls / 2; stride > 0; stride >>= 1) {{
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}}"#
        ),
        kernel: "reduce_sum",
        global: vec![items],
        local: Some(vec![LOCAL]),
        args: vec![Arg::Input(Data::F32(x)), Arg::Output(groups * 4), Arg::Local(LOCAL * 4)],
        bytes: 4.0 * n as f64,
        flops: n as f64,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            check_f32("partial sums", &f32s(&out[0]), groups, |g| (want[g].0, sum_tol(LOCAL * PER_ITEM, want[g].1)))
        }),
    }
}

fn stencil5(size: Size) -> Case {
    let w = size.pick(512, 4096);
    let h = w;
    let mut rng = Rng::new(6);
    let input = Arc::new(rng.f32_vec(w * h, -1.0, 1.0));
    let r = input.clone();
    Case {
        name: "stencil5",
        size: format!("{w}^2"),
        source: r#"
__kernel void stencil5(int w, int h, __global const float *restrict in, __global float *restrict out) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}"#
        .into(),
        kernel: "stencil5",
        global: vec![w, h],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::I32(w as i32)),
            Arg::Scalar(Scalar::I32(h as i32)),
            Arg::Input(Data::F32(input)),
            Arg::Output(w * h * 4),
        ],
        bytes: 8.0 * (w * h) as f64,
        flops: 6.0 * (w * h) as f64,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            check_f32("out", &f32s(&out[0]), w * h, |i| {
                let (x, y) = (i % w, i / w);
                let c = f64::from(r[i]);
                if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                    return (c, 0.0);
                }
                let nb = [r[i - 1], r[i + 1], r[i - w], r[i + w]].map(f64::from);
                let v = 0.5 * c + 0.125 * nb.iter().sum::<f64>();
                let mag = 0.5 * c.abs() + 0.125 * nb.iter().map(|v| v.abs()).sum::<f64>();
                (v, 8.0 * U * mag)
            })
        }),
    }
}

fn particles(size: Size) -> Case {
    let n = size.pick(1 << 16, 1 << 23);
    let dt = 0.01f32;
    let gravity = [0.0f32, -9.81, 0.0, 0.0];
    let mut rng = Rng::new(11);
    // Particle i: pos (x, y, z, mass) then vel (x, y, z, 0).
    let mut data = Vec::with_capacity(8 * n);
    for _ in 0..n {
        data.extend([rng.f32_in(-10.0, 10.0), rng.f32_in(-0.05, 10.0), rng.f32_in(-10.0, 10.0), 1.0]);
        data.extend([rng.f32_in(-5.0, 5.0), rng.f32_in(-5.0, 5.0), rng.f32_in(-5.0, 5.0), 0.0]);
    }
    let data = Arc::new(data);
    let r = data.clone();
    Case {
        name: "particles_float4",
        size: mega(n),
        source: r#"
typedef struct { float4 pos; float4 vel; } Particle;
__kernel void particles(float dt, float4 gravity, __global const Particle *restrict in,
                        __global Particle *restrict out) {
    size_t i = get_global_id(0);
    Particle p = in[i];
    p.vel = p.vel * 0.999f + gravity * dt;
    p.pos = p.pos + p.vel * dt;
    if (p.pos.y < 0.0f) {
        p.pos.y = -p.pos.y;
        p.vel.y = -0.9f * p.vel.y;
    }
    out[i] = p;
}"#
        .into(),
        kernel: "particles",
        global: vec![n],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::F32(dt)),
            Arg::Scalar(Scalar::F32x4(gravity)),
            Arg::Input(Data::F32(data)),
            Arg::Output(n * 32),
        ],
        bytes: 64.0 * n as f64,
        flops: 21.0 * n as f64,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            // The reference in f32, as the kernel computes it (FMA contraction allowed: the
            // tolerance covers a few roundings of each term).
            let particle = |i: usize| -> ([f64; 8], [f64; 8]) {
                let p = &r[8 * i..8 * i + 8];
                let mut v = [0.0f64; 8];
                let mut mag = [0.0f64; 8];
                for c in 0..4 {
                    let (vel, g) = (f64::from(p[4 + c]), f64::from(gravity[c]) * f64::from(dt));
                    v[4 + c] = vel * 0.999 + g;
                    mag[4 + c] = vel.abs() + g.abs();
                    let pos = f64::from(p[c]);
                    v[c] = pos + v[4 + c] * f64::from(dt);
                    mag[c] = pos.abs() + mag[4 + c] * f64::from(dt);
                }
                // The bounce decides on the f32 position; one rounding either side of zero
                // is accepted below by comparing magnitudes when the position is that close.
                if v[1] < 0.0 {
                    v[1] = -v[1];
                    v[5] *= -0.9;
                }
                (v, mag)
            };
            let got = f32s(&out[0]);
            check_f32("particles", &got, 8 * n, |k| {
                let (v, mag) = particle(k / 8);
                let c = k % 8;
                let tol = 8.0 * U * mag[c];
                if (c == 1 || c == 5) && v[1].abs() <= tol {
                    // A position within rounding of the floor may bounce or not.
                    let g = f64::from(got[k]);
                    let alt = if c == 1 { -v[1] } else { v[5] / -0.9 };
                    if (g - alt).abs() <= tol {
                        return (alt, tol);
                    }
                }
                (v[c], tol)
            })
        }),
    }
}

fn histogram(size: Size) -> Case {
    const PER_ITEM: usize = 64;
    const LOCAL: usize = 256;
    let n = size.pick(1 << 22, 1 << 25);
    let mut rng = Rng::new(9);
    // A triangular distribution (the mean of two bytes): some bins are hot.
    let data: Vec<u8> = (0..n)
        .map(|_| {
            let r = rng.next_u64();
            (((r & 0xff) + ((r >> 8) & 0xff)) / 2) as u8
        })
        .collect();
    let mut want = [0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    Case {
        name: "histogram",
        size: mega(n),
        source: r#"
#define BINS 256
__kernel void histogram(uint n, __global const uchar *restrict data, __global uint *restrict bins) {
    __local uint local_bins[BINS];
    size_t lid = get_local_id(0), ls = get_local_size(0);
    for (size_t b = lid; b < BINS; b += ls)
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t b = lid; b < BINS; b += ls)
        atomic_add(&bins[b], local_bins[b]);
}"#
        .into(),
        kernel: "histogram",
        global: vec![n / PER_ITEM],
        local: Some(vec![LOCAL]),
        args: vec![
            Arg::Scalar(Scalar::U32(n as u32)),
            Arg::Input(Data::U8(Arc::new(data))),
            Arg::Reset(Data::U32(Arc::new(vec![0u32; 256]))),
        ],
        bytes: n as f64,
        flops: 0.0,
        bound: Bound::Memory,
        check: Box::new(move |out| {
            let got = u32s(&out[0]);
            if got.len() != 256 {
                return Err(format!("{} bins read back, 256 expected", got.len()));
            }
            match (0..256).find(|&b| got[b] != want[b]) {
                None => Ok(format!("256 bins exact ({n} bytes counted)")),
                Some(b) => Err(format!(
                    "bin {b}: got {}, expected {} ({} bins wrong; total {} of {n})",
                    got[b],
                    want[b],
                    (0..256).filter(|&b| got[b] != want[b]).count(),
                    got.iter().map(|&c| u64::from(c)).sum::<u64>()
                )),
            }
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Compute kernels
// ---------------------------------------------------------------------------------------

fn matmul(size: Size, tiled: bool) -> Case {
    const TS: usize = 16;
    let n = size.pick(128, 512);
    let mut rng = Rng::new(if tiled { 4 } else { 3 });
    let a = Arc::new(rng.f32_vec(n * n, -1.0, 1.0));
    let b = Arc::new(rng.f32_vec(n * n, -1.0, 1.0));
    let mut want = vec![(0.0f64, 0.0f64); n * n];
    {
        let (a, b) = (&a, &b);
        par_fill(&mut want, |start, chunk| {
            for (k, w) in chunk.iter_mut().enumerate() {
                let (row, col) = ((start + k) / n, (start + k) % n);
                let (mut s, mut m) = (0.0f64, 0.0f64);
                for j in 0..n {
                    let t = f64::from(a[row * n + j]) * f64::from(b[j * n + col]);
                    s += t;
                    m += t.abs();
                }
                *w = (s, m);
            }
        });
    }
    let (name, kernel, source, local) = if tiled {
        (
            "matmul_tiled",
            "matmul_tiled",
            format!(
                r#"
#define TS {TS}
__kernel void matmul_tiled(int n, __global const float *restrict a, __global const float *restrict b,
                           __global float *restrict c) {{
    __local float ta[TS][TS];
    __local float tb[TS][TS];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n; t += TS) {{
        ta[ly][lx] = a[row * n + t + lx];
        tb[ly][lx] = b[(t + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k)
            acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
    c[row * n + col] = acc;
}}"#
            ),
            Some(vec![TS, TS]),
        )
    } else {
        (
            "matmul_naive",
            "matmul_naive",
            r#"
__kernel void matmul_naive(int n, __global const float *restrict a, __global const float *restrict b,
                           __global float *restrict c) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}"#
            .to_string(),
            None,
        )
    };
    Case {
        name,
        size: format!("{n}^2"),
        source,
        kernel,
        global: vec![n, n],
        local,
        args: vec![
            Arg::Scalar(Scalar::I32(n as i32)),
            Arg::Input(Data::F32(a)),
            Arg::Input(Data::F32(b)),
            Arg::Output(n * n * 4),
        ],
        bytes: 12.0 * (n * n) as f64,
        flops: 2.0 * (n as f64).powi(3),
        bound: Bound::Compute,
        check: Box::new(move |out| check_f32("C", &f32s(&out[0]), n * n, |i| (want[i].0, sum_tol(n, want[i].1)))),
    }
}

fn nbody(size: Size) -> Case {
    let n = size.pick(1024, 8192);
    let (dt, eps2) = (0.01f32, 0.01f32);
    let mut rng = Rng::new(7);
    let mut pos = Vec::with_capacity(4 * n);
    let mut vel = Vec::with_capacity(4 * n);
    for _ in 0..n {
        pos.extend([rng.f32_in(-1.0, 1.0), rng.f32_in(-1.0, 1.0), rng.f32_in(-1.0, 1.0), rng.f32_in(0.5, 1.0)]);
        vel.extend([rng.f32_in(-0.1, 0.1), rng.f32_in(-0.1, 0.1), rng.f32_in(-0.1, 0.1), 0.0]);
    }
    // Reference: per body, the expected new velocity and position with their tolerances.
    let mut want = vec![[(0.0f64, 0.0f64); 8]; n];
    {
        let (pos, vel) = (&pos, &vel);
        par_fill(&mut want, |start, chunk| {
            for (k, w) in chunk.iter_mut().enumerate() {
                let i = start + k;
                let p = [0, 1, 2].map(|c| f64::from(pos[4 * i + c]));
                let mut acc = [0.0f64; 3];
                let mut mag = [0.0f64; 3];
                for j in 0..n {
                    let d = [0, 1, 2].map(|c| f64::from(pos[4 * j + c]) - p[c]);
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + f64::from(eps2);
                    let s = f64::from(pos[4 * j + 3]) / (r2 * r2.sqrt());
                    for c in 0..3 {
                        acc[c] += s * d[c];
                        mag[c] += (s * d[c]).abs();
                    }
                }
                let dt = f64::from(dt);
                for c in 0..4 {
                    let v = f64::from(vel[4 * i + c]);
                    let (a, at) = if c < 3 { (acc[c], sum_tol(n, mag[c])) } else { (0.0, 0.0) };
                    let nv = v + a * dt;
                    let vt = dt * at + 4.0 * U * (v.abs() + (a * dt).abs());
                    w[4 + c] = (nv, vt);
                    let pp = f64::from(pos[4 * i + c]);
                    w[c] = if c < 3 {
                        (pp + nv * dt, dt * vt + 4.0 * U * (pp.abs() + (nv * dt).abs()))
                    } else {
                        (pp, 0.0)
                    };
                }
            }
        });
    }
    Case {
        name: "nbody",
        size: mega(n),
        source: r#"
__kernel void nbody(int n, float dt, float eps2, __global const float4 *restrict pos,
                    __global const float4 *restrict vel, __global float4 *restrict new_pos,
                    __global float4 *restrict new_vel) {
    int i = get_global_id(0);
    float4 p = pos[i];
    float3 acc = (float3)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float inv = rsqrt(dot(d, d) + eps2);
        acc += (q.w * inv * inv * inv) * d;
    }
    float4 v = vel[i];
    v.xyz += acc * dt;
    new_vel[i] = v;
    new_pos[i] = (float4)(p.xyz + v.xyz * dt, p.w);
}"#
        .into(),
        kernel: "nbody",
        global: vec![n],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::I32(n as i32)),
            Arg::Scalar(Scalar::F32(dt)),
            Arg::Scalar(Scalar::F32(eps2)),
            Arg::Input(Data::F32(Arc::new(pos))),
            Arg::Input(Data::F32(Arc::new(vel))),
            Arg::Output(n * 16),
            Arg::Output(n * 16),
        ],
        bytes: 64.0 * n as f64,
        flops: 20.0 * (n as f64) * (n as f64),
        bound: Bound::Compute,
        check: Box::new(move |out| {
            let p = check_f32("new_pos", &f32s(&out[0]), 4 * n, |k| want[k / 4][k % 4])?;
            let v = check_f32("new_vel", &f32s(&out[1]), 4 * n, |k| want[k / 4][4 + k % 4])?;
            Ok(format!("{p}; {v}"))
        }),
    }
}

/// The cumulative normal distribution by the Abramowitz-Stegun polynomial, as the kernel
/// computes it (in f64 here).
fn cnd(d: f64) -> f64 {
    const A: [f64; 5] = [0.319_381_53, -0.356_563_782, 1.781_477_937, -1.821_255_978, 1.330_274_429];
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))));
    let c = 0.398_942_280_401_432_7 * (-0.5 * d * d).exp() * poly;
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

fn black_scholes(size: Size) -> Case {
    let n = size.pick(1 << 16, 1 << 22);
    let (r, v) = (0.02f32, 0.30f32);
    let mut rng = Rng::new(8);
    let s = Arc::new(rng.f32_vec(n, 5.0, 30.0));
    let x = Arc::new(rng.f32_vec(n, 1.0, 100.0));
    let t = Arc::new(rng.f32_vec(n, 0.25, 10.0));
    let (rs, rx, rt) = (s.clone(), x.clone(), t.clone());
    let price = move |i: usize| -> (f64, f64, f64) {
        let (s, x, t) = (f64::from(rs[i]), f64::from(rx[i]), f64::from(rt[i]));
        let (r, v) = (f64::from(r), f64::from(v));
        let sqrt_t = t.sqrt();
        let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
        let d2 = d1 - v * sqrt_t;
        let (c1, c2) = (cnd(d1), cnd(d2));
        let e = (-r * t).exp();
        (s * c1 - x * e * c2, x * e * (1.0 - c2) - s * (1.0 - c1), 1e-4 + 2e-5 * (s + x))
    };
    Case {
        name: "black_scholes",
        size: mega(n),
        source: r#"
float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f;
    const float A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    return d > 0.0f ? 1.0f - c : c;
}

__kernel void black_scholes(float r, float v, __global const float *restrict s_in,
                            __global const float *restrict x_in, __global const float *restrict t_in,
                            __global float *restrict call, __global float *restrict put) {
    size_t i = get_global_id(0);
    float s = s_in[i], x = x_in[i], t = t_in[i];
    float sqrt_t = sqrt(t);
    float d1 = (log(s / x) + (r + 0.5f * v * v) * t) / (v * sqrt_t);
    float d2 = d1 - v * sqrt_t;
    float c1 = cnd(d1), c2 = cnd(d2);
    float e = exp(-r * t);
    call[i] = s * c1 - x * e * c2;
    put[i] = x * e * (1.0f - c2) - s * (1.0f - c1);
}"#
        .into(),
        kernel: "black_scholes",
        global: vec![n],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::F32(r)),
            Arg::Scalar(Scalar::F32(v)),
            Arg::Input(Data::F32(s)),
            Arg::Input(Data::F32(x)),
            Arg::Input(Data::F32(t)),
            Arg::Output(n * 4),
            Arg::Output(n * 4),
        ],
        bytes: 20.0 * n as f64,
        flops: 58.0 * n as f64,
        bound: Bound::Compute,
        check: Box::new(move |out| {
            let c = check_f32("call", &f32s(&out[0]), n, |i| {
                let (c, _, tol) = price(i);
                (c, tol)
            })?;
            let p = check_f32("put", &f32s(&out[1]), n, |i| {
                let (_, p, tol) = price(i);
                (p, tol)
            })?;
            Ok(format!("{c}; {p}"))
        }),
    }
}

/// Mandelbrot iteration count of one point, in f32 as the kernel computes it.
fn mandel_point(cr: f32, ci: f32, max_iter: u32) -> u32 {
    let (mut zr, mut zi, mut it) = (0.0f32, 0.0f32, 0);
    while it < max_iter && zr * zr + zi * zi <= 4.0 {
        let t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        it += 1;
    }
    it
}

fn mandelbrot(size: Size) -> Case {
    let (w, h) = size.pick((256, 256), (2048, 2048));
    let max_iter = 256u32;
    let (x0, y0, x1, y1) = (-2.2f32, -1.3f32, 0.8f32, 1.3f32);
    let (dx, dy) = ((x1 - x0) / w as f32, (y1 - y0) / h as f32);
    let mut want = vec![0u32; w * h];
    par_fill(&mut want, |start, chunk| {
        for (k, it) in chunk.iter_mut().enumerate() {
            let (px, py) = ((start + k) % w, (start + k) / w);
            *it = mandel_point(x0 + px as f32 * dx, y0 + py as f32 * dy, max_iter);
        }
    });
    let iterations: u64 = want.iter().map(|&i| u64::from(i)).sum();
    Case {
        name: "mandelbrot",
        size: format!("{w}x{h}"),
        source: r#"
__kernel void mandelbrot(int w, float x0, float y0, float dx, float dy, uint max_iter,
                         __global uint *restrict out) {
    int px = get_global_id(0), py = get_global_id(1);
    float cr = x0 + px * dx, ci = y0 + py * dy;
    float zr = 0.0f, zi = 0.0f;
    uint it = 0;
    while (it < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++it;
    }
    out[py * w + px] = it;
}"#
        .into(),
        kernel: "mandelbrot",
        global: vec![w, h],
        local: None,
        args: vec![
            Arg::Scalar(Scalar::I32(w as i32)),
            Arg::Scalar(Scalar::F32(x0)),
            Arg::Scalar(Scalar::F32(y0)),
            Arg::Scalar(Scalar::F32(dx)),
            Arg::Scalar(Scalar::F32(dy)),
            Arg::Scalar(Scalar::U32(max_iter)),
            Arg::Output(w * h * 4),
        ],
        bytes: 4.0 * (w * h) as f64,
        flops: 8.0 * iterations as f64,
        bound: Bound::Compute,
        check: Box::new(move |out| {
            let got = u32s(&out[0]);
            if got.len() != w * h {
                return Err(format!("{} pixels read back, {} expected", got.len(), w * h));
            }
            // Points on the set's boundary are chaotic: FMA contraction or another rounding
            // of the coordinates changes their count. Accept a few such pixels, no more.
            let bad: Vec<usize> = (0..w * h).filter(|&i| got[i] != want[i]).collect();
            let allowed = w * h / 200;
            if bad.len() > allowed || got.iter().any(|&i| i > max_iter) {
                let i = bad.first().copied().unwrap_or(0);
                Err(format!(
                    "{} of {} pixels differ (at most {allowed} may); first at ({}, {}): got {}, expected {}",
                    bad.len(),
                    w * h,
                    i % w,
                    i / w,
                    got[i],
                    want[i]
                ))
            } else {
                Ok(format!("{} of {} pixels differ from the f32 host reference (allowed {allowed})", bad.len(), w * h))
            }
        }),
    }
}

fn math(size: Size) -> Case {
    let n = size.pick(1 << 16, 1 << 23);
    let mut rng = Rng::new(12);
    let x = Arc::new(rng.f32_vec(n, -10.0, 10.0));
    let r = x.clone();
    Case {
        name: "math",
        size: mega(n),
        source: r#"
__kernel void math(__global const float *restrict x, __global float *restrict y) {
    size_t i = get_global_id(0);
    float v = x[i];
    y[i] = sin(v) * exp(-0.1f * v * v) + sqrt(v * v + 1.0f);
}"#
        .into(),
        kernel: "math",
        global: vec![n],
        local: None,
        args: vec![Arg::Input(Data::F32(x)), Arg::Output(n * 4)],
        bytes: 8.0 * n as f64,
        flops: 10.0 * n as f64,
        bound: Bound::Compute,
        check: Box::new(move |out| {
            check_f32("y", &f32s(&out[0]), n, |i| {
                let v = f64::from(r[i]);
                let arg = -0.1 * v * v;
                let t1 = v.sin() * arg.exp();
                let t2 = (v * v + 1.0).sqrt();
                // sin 4 ulp, exp 3 ulp and the rounding of its argument, sqrt 3 ulp, the
                // products and the sum: the OpenCL full-profile bounds with room.
                (t1 + t2, (16.0 + 4.0 * arg.abs()) * U * t1.abs() + 8.0 * U * t2 + f64::from(f32::MIN_POSITIVE))
            })
        }),
    }
}

/// clpeak-style compute throughput: each work-item runs one dependent chain of `mad`s on
/// `float` (lanes = 1) or `float16` (lanes = 16) in which two values feed each other, as in
/// clpeak's `x = mad(y, x, y); y = mad(x, y, x)`: here `x = mad(x, a, y); y = mad(y, a, x)`.
/// With a = -1 that is `(x, y) -> (y - x, -x)`, which comes back to `(x, y)` every third
/// step: the arithmetic stays exact (integers well inside f32's precision) whatever the
/// implementation does with `mad`, so the result is known, and a skipped or repeated step
/// changes it.
fn mad_chains(size: Size, lanes: usize) -> Case {
    const STEPS_PER_ITER: usize = 16;
    let (items, iters) = match (size, lanes) {
        (Size::Small, 1) => (1 << 14, 64),
        (Size::Small, _) => (1 << 12, 64),
        (Size::Full, 1) => (1 << 16, 256),
        (Size::Full, _) => (1 << 16, 256),
    };
    let a = -1.0f32;
    let (ty, name, kernel, lane_init) = if lanes == 1 {
        ("float", "mad_float", "mad_float", "0.0f".to_string())
    } else {
        let l: Vec<String> = (0..lanes).map(|l| format!("{l}.0f")).collect();
        ("float16", "mad_float16", "mad_float16", format!("(float16)({})", l.join(", ")))
    };
    let steps: String = (0..STEPS_PER_ITER / 2).map(|_| "        x = mad(x, a, y); y = mad(y, a, x);\n").collect();
    let source = format!(
        r#"
__kernel void {kernel}(__global {ty} *restrict out, int iters, float a) {{
    int gid = get_global_id(0);
    {ty} x = ({ty})((float)gid) + {lane_init};
    {ty} y = ({ty})((float)(gid & 255)) - {lane_init};
    for (int i = 0; i < iters; ++i) {{
{steps}    }}
    out[gid] = x + 2.0f * y;
}}"#
    );
    // iters * STEPS_PER_ITER / 2 steps of (x, y) -> (y - x, -x), which has period 3.
    let pair_steps = iters * STEPS_PER_ITER / 2;
    let want = move |k: usize| -> f32 {
        let (gid, lane) = (k / lanes, (k % lanes) as f64);
        let (mut x, mut y) = (gid as f64 + lane, (gid & 255) as f64 - lane);
        for _ in 0..pair_steps % 3 {
            (x, y) = (y - x, -x);
        }
        (x + 2.0 * y) as f32
    };
    Case {
        name,
        size: format!("{}x{}", mega(items), iters * STEPS_PER_ITER),
        source,
        kernel,
        global: vec![items],
        local: None,
        args: vec![Arg::Output(items * lanes * 4), Arg::Scalar(Scalar::I32(iters as i32)), Arg::Scalar(Scalar::F32(a))],
        bytes: (items * lanes * 4) as f64,
        flops: (items * lanes) as f64 * (iters * STEPS_PER_ITER) as f64 * 2.0,
        bound: Bound::Compute,
        check: Box::new(move |out| check_f32("out", &f32s(&out[0]), items * lanes, |k| (f64::from(want(k)), 0.0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outputs a launch that wrote nothing would leave: every read-back buffer as created.
    fn untouched_outputs(case: &Case) -> Vec<Vec<u8>> {
        case.args
            .iter()
            .filter_map(|a| match a {
                Arg::Output(bytes) => Some(vec![0u8; *bytes]),
                Arg::Reset(data) => Some(data.bytes().to_vec()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_check_rejects_an_untouched_output() {
        for (name, _) in KERNELS {
            let case = build(name, Size::Small).expect("listed kernels build");
            let outputs = untouched_outputs(&case);
            assert!(!outputs.is_empty(), "{name} reads nothing back");
            assert!((case.check)(&outputs).is_err(), "{name}: the check accepts an output the kernel never wrote");
        }
    }

    #[test]
    fn every_check_rejects_a_short_read_back() {
        for (name, _) in KERNELS {
            let case = build(name, Size::Small).expect("listed kernels build");
            let outputs: Vec<Vec<u8>> =
                untouched_outputs(&case).into_iter().map(|o| o[..o.len() - 4].to_vec()).collect();
            assert!((case.check)(&outputs).is_err(), "{name}: the check accepts a short output");
        }
    }

    #[test]
    fn the_histogram_check_accepts_the_true_counts_only() {
        let case = build("histogram", Size::Small).unwrap();
        let Arg::Input(Data::U8(data)) = &case.args[1] else { panic!("histogram's data is argument 1") };
        let mut bins = [0u32; 256];
        for &b in data.iter() {
            bins[b as usize] += 1;
        }
        let bytes = |b: &[u32; 256]| vec![bytemuck::cast_slice::<u32, u8>(b).to_vec()];
        assert!((case.check)(&bytes(&bins)).is_ok());
        bins[128] += 1;
        bins[127] -= 1;
        assert!((case.check)(&bytes(&bins)).is_err(), "one count moved between bins is caught");
    }

    #[test]
    fn the_vecadd_check_accepts_the_sum_and_catches_one_wrong_element() {
        let case = build("vecadd", Size::Small).unwrap();
        let (Arg::Input(Data::F32(a)), Arg::Input(Data::F32(b))) = (&case.args[0], &case.args[1]) else {
            panic!("vecadd's inputs are arguments 0 and 1")
        };
        let mut c: Vec<f32> = a.iter().zip(b.iter()).map(|(x, y)| x + y).collect();
        let bytes = |c: &[f32]| vec![bytemuck::cast_slice::<f32, u8>(c).to_vec()];
        assert!((case.check)(&bytes(&c)).is_ok());
        let i = c.len() / 3;
        c[i] = f32::from_bits(c[i].to_bits() + 4); // four ulps off
        let err = (case.check)(&bytes(&c)).unwrap_err();
        assert!(err.contains(&format!("[{i}]")), "{err}");
    }
}
