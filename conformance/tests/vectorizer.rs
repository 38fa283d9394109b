//! The CPU device's whole-function vectorizer, through the loader.
//!
//! Each test runs its kernels in child processes of this test binary, once per vectorizer
//! setting: the default (heuristic width, with `SOFTCL_VECTORIZER_REPORT=1` so that the build
//! log says which kernels were vectorized), `CL_CONFIG_CPU_VECTORIZER_MODE=4` (narrow packets:
//! more tails and masks) and `CL_CONFIG_USE_VECTORIZER=False` (scalar). Every run checks its
//! results against a host reference, so the vectorized and scalar builds must agree with each
//! other. Each test runs once more on the Gen device (the "gen" run), which runs the same
//! kernels vectorized at its SIMD width. The knobs are read when the driver creates its devices, hence the child processes.

use softcl_conformance::*;
use std::process::Command;

const CHILD: &str = "SOFTCL_VECTORIZER_TEST_CHILD";

/// In the parent: runs test `name` in one child per vectorizer setting and returns true
/// (the parent has nothing else to do). In a child: returns false.
fn run_in_every_mode(name: &str) -> bool {
    if !run_in_vectorizer_modes(CHILD, name, |_, _| {}) {
        return false;
    }
    // And on the Gen device, whose hardware threads run the kernel vectorized at the SIMD
    // width (counting in generated code).
    run_test_child(CHILD, "gen", name, &[]);
    true
}

fn mode() -> String {
    vectorizer_mode(CHILD)
}

/// The CPU device, or the Gen device in the "gen" run.
fn cpu_env() -> TestEnv {
    let kind = if mode() == "gen" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    device(kind).expect("the device under test").env()
}

/// Builds `src` and checks the report in the build log ([`build_reported`]): each kernel of
/// `vectorized` was vectorized (at width 4 in the "w4" run, or kept scalar for cost by the
/// heuristic), or, in the scalar and Gen runs, that none reports.
fn build(env: &TestEnv, src: &str, options: &str, vectorized: &[&str]) -> Program {
    build_reported(env, src, options, &mode(), vectorized, &[])
}

/// The preferred work-group size multiple of a built kernel: W when vectorized.
fn preferred_multiple(env: &TestEnv, k: &Kernel) -> usize {
    kernel_wg_info(k.raw(), env.dev(), CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
}

#[test]
fn straight_line_with_masked_tails() {
    if run_in_every_mode("straight_line_with_masked_tails") {
        return;
    }
    const SRC: &str = r#"
        __kernel void saxpy(float a, __global const float* restrict x, __global float* restrict y) {
            size_t i = get_global_id(0);
            y[i] = a * x[i] + y[i];
        }
        __kernel void ids(__global int* lid, __global int* grp) {
            size_t i = get_global_id(0);
            lid[i] = (int)get_local_id(0) * 1000 + (int)get_local_size(0);
            grp[i] = (int)get_group_id(0);
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "-cl-std=CL3.0", &["saxpy", "ids"]);
    let saxpy = kernel_of(&p, "saxpy");
    let ids = kernel_of(&p, "ids");
    if mode() == "w4" {
        assert_eq!(preferred_multiple(&env, &saxpy), 4);
    }
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 100.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    for local in [Some(1usize), Some(3), Some(17), Some(100), None] {
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let by = env.buffer_from(CL_MEM_READ_WRITE, &y0);
        saxpy.set_arg(0, &2.5f32);
        saxpy.set_mem(1, &bx);
        saxpy.set_mem(2, &by);
        let l = local.map(|l| [l]);
        env.run(&saxpy, &[n], l.as_ref().map(|l| &l[..]));
        let y: Vec<f32> = env.read(&by, n);
        for i in 0..n {
            assert_eq!(y[i], 2.5f32 * x[i] + y0[i], "y[{i}] with local size {local:?}");
        }
        if let Some(ls) = local {
            let bl = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
            let bg = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
            ids.set_mem(0, &bl);
            ids.set_mem(1, &bg);
            env.run(&ids, &[n], Some(&[ls]));
            let lid: Vec<i32> = env.read(&bl, n);
            let grp: Vec<i32> = env.read(&bg, n);
            for i in 0..n {
                // The last group of a non-uniform NDRange is smaller.
                let size = if i / ls == n / ls { n % ls } else { ls };
                assert_eq!(lid[i], ((i % ls) * 1000 + size) as i32, "local id of {i}, local size {ls}");
                assert_eq!(grp[i], (i / ls) as i32);
            }
        }
    }
}

#[test]
fn float4_array_of_structures_and_swizzles() {
    if run_in_every_mode("float4_array_of_structures_and_swizzles") {
        return;
    }
    const SRC: &str = r#"
        __kernel void particles(__global float4* pos, __global const float4* vel, float dt,
                                __global float4* swz, __global int2* pairs) {
            size_t i = get_global_id(0);
            float4 p = pos[i];
            float4 v = vel[i];
            p.xyz += v.xyz * dt;
            p.w = p.w * 0.5f + (float)i;
            pos[i] = p;
            swz[i] = v.wzyx * 2.0f + (float4)(v.x);
            pairs[i] = (int2)((int)i, (int)i * 3) + pairs[i].yx;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["particles"]);
    let k = kernel_of(&p, "particles");
    let n = 203usize;
    let pos: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, -(i as f32), 0.25 * i as f32, 4.0]).collect();
    let vel: Vec<[f32; 4]> = (0..n).map(|i| [1.0, 2.0 + i as f32, -3.0, i as f32 * 0.125]).collect();
    let pairs: Vec<[i32; 2]> = (0..n as i32).map(|i| [i * 7, -i]).collect();
    let bp = env.buffer_from(CL_MEM_READ_WRITE, &pos);
    let bv = env.buffer_from(CL_MEM_READ_ONLY, &vel);
    let bs = env.buffer(CL_MEM_WRITE_ONLY, n * 16);
    let bq = env.buffer_from(CL_MEM_READ_WRITE, &pairs);
    k.set_mem(0, &bp);
    k.set_mem(1, &bv);
    k.set_arg(2, &0.5f32);
    k.set_mem(3, &bs);
    k.set_mem(4, &bq);
    env.run(&k, &[n], Some(&[7]));
    let got: Vec<[f32; 4]> = env.read(&bp, n);
    let sw: Vec<[f32; 4]> = env.read(&bs, n);
    let pr: Vec<[i32; 2]> = env.read(&bq, n);
    for i in 0..n {
        let (p, v) = (pos[i], vel[i]);
        let want = [p[0] + v[0] * 0.5, p[1] + v[1] * 0.5, p[2] + v[2] * 0.5, p[3] * 0.5 + i as f32];
        assert_eq!(got[i], want, "pos[{i}]");
        let ws = [v[3] * 2.0 + v[0], v[2] * 2.0 + v[0], v[1] * 2.0 + v[0], v[0] * 2.0 + v[0]];
        assert_eq!(sw[i], ws, "swz[{i}]");
        assert_eq!(pr[i], [i as i32 + pairs[i][1], i as i32 * 3 + pairs[i][0]], "pairs[{i}]");
    }
}

#[test]
fn divergent_if_else_early_return_and_switch() {
    if run_in_every_mode("divergent_if_else_early_return_and_switch") {
        return;
    }
    const SRC: &str = r#"
        __kernel void branches(__global const float* x, __global float* y, __global int* tag, int n) {
            int i = get_global_id(0);
            if (i >= n) return;
            float v = x[i];
            float r;
            if (v > 0.0f) {
                r = sqrt(v) + 1.0f;
            } else {
                r = -v * 2.0f;
                if (v < -10.0f) r = 100.0f;
            }
            y[i] = r;
            int t;
            switch (i % 4) {
                case 0: t = 10; break;
                case 1: t = 20; break;
                case 3: t = i; break;
                default: t = -1;
            }
            tag[i] = t;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["branches"]);
    let k = kernel_of(&p, "branches");
    let n = 290usize;
    let global = 320usize;
    let x: Vec<f32> = (0..global).map(|i| ((i * 37) % 61) as f32 - 30.0).collect();
    let by = env.buffer_from(CL_MEM_READ_WRITE, &vec![-7.0f32; global]);
    let bt = env.buffer_from(CL_MEM_READ_WRITE, &vec![-7i32; global]);
    let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
    k.set_mem(0, &bx);
    k.set_mem(1, &by);
    k.set_mem(2, &bt);
    k.set_arg(3, &(n as i32));
    env.run(&k, &[global], Some(&[32]));
    let y: Vec<f32> = env.read(&by, global);
    let t: Vec<i32> = env.read(&bt, global);
    for i in 0..global {
        if i >= n {
            assert_eq!((y[i], t[i]), (-7.0, -7), "work-item {i} returned early");
            continue;
        }
        let v = x[i];
        let r = if v > 0.0 {
            v.sqrt() + 1.0
        } else if v < -10.0 {
            100.0
        } else {
            -v * 2.0
        };
        assert_eq!(y[i], r, "y[{i}]");
        let want = match i % 4 {
            0 => 10,
            1 => 20,
            3 => i as i32,
            _ => -1,
        };
        assert_eq!(t[i], want, "tag[{i}]");
    }
}

#[test]
fn loops_with_divergent_exits_break_and_continue() {
    if run_in_every_mode("loops_with_divergent_exits_break_and_continue") {
        return;
    }
    const SRC: &str = r#"
        __kernel void mandel(__global int* out, int w, int h, int max_iter) {
            int px = get_global_id(0), py = get_global_id(1);
            float cr = -2.0f + 3.0f * px / w, ci = -1.5f + 3.0f * py / h;
            float zr = 0.0f, zi = 0.0f;
            int k = 0;
            while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                k++;
            }
            out[py * w + px] = k;
        }
        __kernel void nested(__global const int* lim, __global int* out) {
            int i = get_global_id(0);
            int acc = 0;
            for (int a = 0; a < lim[i]; a++) {
                if (a % 3 == 1) continue;
                for (int b = 0; b < a; b++) {
                    if (b > i % 5) break;
                    acc += a * 10 + b;
                }
                if (acc > 500) break;
            }
            out[i] = acc;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["mandel", "nested"]);
    let mandel = kernel_of(&p, "mandel");
    let (w, h, max_iter) = (48usize, 20usize, 60i32);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, w * h * 4);
    mandel.set_mem(0, &bo);
    mandel.set_arg(1, &(w as i32));
    mandel.set_arg(2, &(h as i32));
    mandel.set_arg(3, &max_iter);
    env.run(&mandel, &[w, h], Some(&[24, 2]));
    let got: Vec<i32> = env.read(&bo, w * h);
    for py in 0..h {
        for px in 0..w {
            let cr = -2.0f32 + 3.0f32 * px as f32 / w as f32;
            let ci = -1.5f32 + 3.0f32 * py as f32 / h as f32;
            let (mut zr, mut zi, mut k) = (0.0f32, 0.0f32, 0);
            while k < max_iter && zr * zr + zi * zi <= 4.0 {
                let t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                k += 1;
            }
            // Contraction into fma may change the last bits; compare the iteration count
            // with the scalar build's through the host reference with a tolerance of one.
            let g = got[py * w + px];
            assert!((g - k).abs() <= 1, "mandel({px},{py}) = {g}, host {k}");
        }
    }
    let nested = kernel_of(&p, "nested");
    let n = 77usize;
    let lim: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 23).collect();
    let bl = env.buffer_from(CL_MEM_READ_ONLY, &lim);
    let bn = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    nested.set_mem(0, &bl);
    nested.set_mem(1, &bn);
    env.run(&nested, &[n], Some(&[11]));
    let got: Vec<i32> = env.read(&bn, n);
    for i in 0..n {
        let mut acc = 0;
        for a in 0..lim[i] {
            if a % 3 == 1 {
                continue;
            }
            for b in 0..a {
                if b > i as i32 % 5 {
                    break;
                }
                acc += a * 10 + b;
            }
            if acc > 500 {
                break;
            }
        }
        assert_eq!(got[i], acc, "nested({i})");
    }
}

#[test]
fn two_and_three_dimensional_ranges() {
    if run_in_every_mode("two_and_three_dimensional_ranges") {
        return;
    }
    const SRC: &str = r#"
        __kernel void ids3(__global int* out) {
            size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
            size_t gx = get_global_size(0), gy = get_global_size(1);
            out[(z * gy + y) * gx + x] = (int)(x + 100 * y + 10000 * z)
                + (int)(get_local_linear_id() << 20);
        }
        __kernel void transpose(__global const float* a, __global float* b, int w, int h) {
            int x = get_global_id(0), y = get_global_id(1);
            b[x * h + y] = a[y * w + x];
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "-cl-std=CL3.0", &["ids3", "transpose"]);
    let k = kernel_of(&p, "ids3");
    let g = [21usize, 6, 4];
    let l = [5usize, 3, 2];
    let bo = env.buffer(CL_MEM_WRITE_ONLY, g.iter().product::<usize>() * 4);
    k.set_mem(0, &bo);
    env.run(&k, &g, Some(&l));
    let got: Vec<i32> = env.read(&bo, g.iter().product());
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let size_x = if x / l[0] == g[0] / l[0] { g[0] % l[0] } else { l[0] };
                let lin = ((z % l[2]) * l[1] + y % l[1]) * size_x + x % l[0];
                let want = (x + 100 * y + 10000 * z) as i32 + ((lin as i32) << 20);
                assert_eq!(got[(z * g[1] + y) * g[0] + x], want, "({x},{y},{z})");
            }
        }
    }
    let t = kernel_of(&p, "transpose");
    let (w, h) = (37usize, 19usize);
    let a: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
    let bb = env.buffer(CL_MEM_WRITE_ONLY, w * h * 4);
    t.set_mem(0, &ba);
    t.set_mem(1, &bb);
    t.set_arg(2, &(w as i32));
    t.set_arg(3, &(h as i32));
    env.run(&t, &[w, h], Some(&[16, 4]));
    let b: Vec<f32> = env.read(&bb, w * h);
    for y in 0..h {
        for x in 0..w {
            assert_eq!(b[x * h + y], a[y * w + x], "b[{x}][{y}]");
        }
    }
}

#[test]
fn masked_gathers_scatters_and_uniform_stores() {
    if run_in_every_mode("masked_gathers_scatters_and_uniform_stores") {
        return;
    }
    const SRC: &str = r#"
        __kernel void permute(__global const int* idx, __global const float* src, __global float* dst,
                              __global int* sizes) {
            int i = get_global_id(0);
            if (i % 3 != 0)
                dst[idx[i]] = src[idx[(i * 7) % get_global_size(0)]] * 2.0f;
            sizes[get_group_id(0)] = get_local_size(0) + 1;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "-cl-std=CL3.0", &["permute"]);
    let k = kernel_of(&p, "permute");
    let n = 97usize;
    let idx: Vec<i32> = (0..n).map(|i| ((i * 31) % n) as i32).collect();
    let src: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &idx);
    let bs = env.buffer_from(CL_MEM_READ_ONLY, &src);
    let bd = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1.0f32; n]);
    let local = 10usize;
    let groups = n.div_ceil(local);
    let bz = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; groups]);
    k.set_mem(0, &bi);
    k.set_mem(1, &bs);
    k.set_mem(2, &bd);
    k.set_mem(3, &bz);
    env.run(&k, &[n], Some(&[local]));
    let dst: Vec<f32> = env.read(&bd, n);
    let mut want = vec![-1.0f32; n];
    for i in 0..n {
        if i % 3 != 0 {
            want[idx[i] as usize] = src[idx[(i * 7) % n] as usize] * 2.0;
        }
    }
    assert_eq!(dst, want);
    let sizes: Vec<i32> = env.read(&bz, groups);
    for (g, s) in sizes.iter().enumerate() {
        let size = if g == groups - 1 && !n.is_multiple_of(local) { n % local } else { local };
        assert_eq!(*s, size as i32 + 1, "group {g}");
    }
}

#[test]
fn atomics_under_divergence_barriers_in_loops_and_private_arrays() {
    if run_in_every_mode("atomics_under_divergence_barriers_in_loops_and_private_arrays") {
        return;
    }
    const SRC: &str = r#"
        __kernel void histogram(__global const int* data, __global int* bins) {
            int v = data[get_global_id(0)];
            if (v >= 0) atomic_inc(&bins[v % 8]);
        }
        __kernel void reduce(__global const float* x, __global float* out, __local float* tmp) {
            size_t l = get_local_id(0), n = get_local_size(0);
            tmp[l] = x[get_global_id(0)];
            for (size_t s = n / 2; s > 0; s /= 2) {
                barrier(CLK_LOCAL_MEM_FENCE);
                if (l < s) tmp[l] += tmp[l + s];
            }
            if (l == 0) out[get_group_id(0)] = tmp[0];
        }
        __kernel void priv(__global int* out) {
            int a[8];
            int i = get_global_id(0);
            for (int k = 0; k < 8; k++) a[k] = i * k;
            out[i] = a[i % 8] + a[(i + 3) % 8];
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["histogram", "reduce", "priv"]);
    let h = kernel_of(&p, "histogram");
    let n = 300usize;
    let data: Vec<i32> = (0..n as i32).map(|i| if i % 5 == 0 { -1 } else { i * 13 }).collect();
    let bd = env.buffer_from(CL_MEM_READ_ONLY, &data);
    let bb = env.buffer_from(CL_MEM_READ_WRITE, &[0i32; 8]);
    h.set_mem(0, &bd);
    h.set_mem(1, &bb);
    env.run(&h, &[n], Some(&[20]));
    let bins: Vec<i32> = env.read(&bb, 8);
    let mut want = [0i32; 8];
    for v in &data {
        if *v >= 0 {
            want[(*v % 8) as usize] += 1;
        }
    }
    assert_eq!(bins, want);

    let r = kernel_of(&p, "reduce");
    let x: Vec<f32> = (0..256).map(|i| (i % 10) as f32).collect();
    let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, 4 * 4);
    r.set_mem(0, &bx);
    r.set_mem(1, &bo);
    r.set_local(2, 64 * 4);
    env.run(&r, &[256], Some(&[64]));
    let sums: Vec<f32> = env.read(&bo, 4);
    for (g, s) in sums.iter().enumerate() {
        assert_eq!(*s, x[g * 64..(g + 1) * 64].iter().sum::<f32>(), "group {g}");
    }

    let pk = kernel_of(&p, "priv");
    let bp = env.buffer(CL_MEM_WRITE_ONLY, 50 * 4);
    pk.set_mem(0, &bp);
    env.run(&pk, &[50], Some(&[25]));
    let got: Vec<i32> = env.read(&bp, 50);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (i * (i % 8) + i * ((i + 3) % 8)) as i32, "priv[{i}]");
    }
}

/// The CTS's atomic_cmpxchg kernel: a loop with a divergent exit that re-reads one address
/// each iteration. The load's address is the same for every lane but its value varies (lanes
/// leave the loop at different iterations); it was once emitted as a vector load of W
/// consecutive elements, so lane k compared against `dest[k]` and never got out.
#[test]
fn uniform_address_loads_in_a_divergent_loop() {
    if run_in_every_mode("uniform_address_loads_in_a_divergent_loop") {
        return;
    }
    const SRC: &str = r#"
        __kernel void cmpxchg_loop(volatile __global int* dest, __global int* old_out,
                                   __global int* tries_out) {
            int tid = get_global_id(0);
            int old, orig, tries = 0;
            do {
                orig = dest[0];
                old = atomic_cmpxchg(&dest[0], orig, orig + tid + 2);
                tries++;
            } while (old != orig && tries < 100000);
            old_out[tid] = orig; // used after the loop: varies with the iteration a lane left
            tries_out[tid] = tries;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["cmpxchg_loop"]);
    let k = kernel_of(&p, "cmpxchg_loop");
    let n = 200usize;
    // dest[0] is the counter; the elements after it hold values no lane may read.
    let dest: Vec<i32> = (0..64).map(|i| if i == 0 { 0 } else { 1_000_000 + i }).collect();
    let bd = env.buffer_from(CL_MEM_READ_WRITE, &dest);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    let bt = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bd);
    k.set_mem(1, &bo);
    k.set_mem(2, &bt);
    env.run(&k, &[n], Some(&[50]));
    let got: Vec<i32> = env.read(&bd, 64);
    assert_eq!(got[0], (0..n as i32).map(|t| t + 2).sum::<i32>(), "every work-item added once");
    assert_eq!(&got[1..], &dest[1..], "nothing else written");
    // The exchanges form one chain: in the order they happened, each work-item found the
    // counter where the previous one left it.
    let olds: Vec<i32> = env.read(&bo, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&t| olds[t]);
    let mut counter = 0;
    for &t in &order {
        assert_eq!(olds[t], counter, "work-item {t} found {} where the chain had {counter}", olds[t]);
        counter += t as i32 + 2;
    }
    let tries: Vec<i32> = env.read(&bt, n);
    assert!(tries.iter().all(|&t| (1..100000).contains(&t)), "a work-item never got its exchange: {tries:?}");
}

/// reikna's FFT (Bluestein's algorithm) found this: a private vector whose first write is one
/// component (`res.y = sincos(theta, &tmp); res.x = tmp;`) is, at clang's -O0 (where
/// clang's optimised module is one the translator rejects), a load of its undefined content,
/// an insert and a store. The analysis waited for a store to tell it what the variable holds,
/// the store waited for the load, so the variable stayed uniform: one copy for the packet,
/// the last lane's values written to every lane's result.
#[test]
fn private_vector_first_written_one_component_at_a_time() {
    if run_in_every_mode("private_vector_first_written_one_component_at_a_time") {
        return;
    }
    const SRC: &str = r#"
        __kernel void components(__global const float* x, __global float2* out) {
            size_t i = get_global_id(0);
            float2 r;
            r.y = x[i];
            r.x = 1.0f;
            out[i] = r;
        }
        float2 twiddle(size_t pos) {
            float2 res;
            float c;
            res.y = sincos(1.0471975803375244f * ((pos * pos) % 6), &c);
            res.x = c;
            return res;
        }
        __kernel void rotate(__global const float2* x, __global float2* out) {
            size_t t = get_local_id(0);
            size_t pos = t % 3 + 3 * (t / 3);
            float2 v = x[pos];
            float2 w = twiddle(pos / 3 + get_group_id(0));
            out[get_global_id(0)] = (float2)(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "-cl-opt-disable", &["components", "rotate"]);
    let n = 48usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let components = kernel_of(&p, "components");
    let rotate = kernel_of(&p, "rotate");
    for local in [3usize, 16] {
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
        components.set_mem(0, &bx);
        components.set_mem(1, &bo);
        env.run(&components, &[n], Some(&[local]));
        let got: Vec<[f32; 2]> = env.read(&bo, n);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, [1.0, x[i]], "components[{i}], local size {local}");
        }

        let pairs: Vec<[f32; 2]> = (0..n).map(|i| [i as f32, 1.0 - i as f32 * 0.25]).collect();
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &pairs);
        rotate.set_mem(0, &bx);
        rotate.set_mem(1, &bo);
        env.run(&rotate, &[n], Some(&[local]));
        let got: Vec<[f32; 2]> = env.read(&bo, n);
        for (i, g) in got.iter().enumerate() {
            let t = i % local;
            let v = pairs[t];
            let pos = t / 3 + i / local;
            let theta = std::f32::consts::FRAC_PI_3 * ((pos * pos) % 6) as f32;
            let (s, c) = theta.sin_cos();
            let want = [v[0] * c - v[1] * s, v[0] * s + v[1] * c];
            let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * (1.0 + b.abs());
            assert!(
                close(g[0], want[0]) && close(g[1], want[1]),
                "rotate[{i}], local size {local}: {g:?}, want {want:?}"
            );
        }
    }
}

#[test]
fn scalar_select_and_scalar_conditions_of_vector_values() {
    // The CTS's relational_select_{signed,unsigned} found this: a scalar select(a, b, c)
    // takes b when c is nonzero (the most significant bit decides only for vectors), but
    // vectorized across work-items the scalar condition became a vector and was tested on
    // its sign bit.
    if run_in_every_mode("scalar_select_and_scalar_conditions_of_vector_values") {
        return;
    }
    const SRC: &str = r#"
        __kernel void sel_i(__global const int* a, __global const int* b, __global const int* c,
                            __global int* out) {
            int i = get_global_id(0);
            out[i] = select(a[i], b[i], c[i]);
        }
        __kernel void sel_u(__global const uint* a, __global const uint* b, __global const uint* c,
                            __global uint* out) {
            int i = get_global_id(0);
            out[i] = select(a[i], b[i], c[i]);
        }
        __kernel void sel_v(__global const int2* a, __global const int2* b, __global const int2* c,
                            __global int2* out) {
            int i = get_global_id(0);
            out[i] = select(a[i], b[i], c[i]);
        }
        __kernel void cond_v(__global const int2* a, __global const int2* b, __global const int* c,
                             __global int2* out) {
            int i = get_global_id(0);
            out[i] = c[i] ? a[i] : b[i];
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["sel_i", "sel_u", "sel_v", "cond_v"]);
    let n = 64usize;
    let a: Vec<i32> = (0..n as i32).map(|i| 1000 + i).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| -2000 - i).collect();
    // Conditions: zero, small positive (sign bit clear), negative (sign bit set).
    let c: Vec<i32> = (0..n as i32).map(|i| [0, 0x5e0a_a566, -7, 1][(i % 4) as usize]).collect();
    for name in ["sel_i", "sel_u"] {
        let k = kernel_of(&p, name);
        let (ba, bb, bc) = (
            env.buffer_from(CL_MEM_READ_ONLY, &a),
            env.buffer_from(CL_MEM_READ_ONLY, &b),
            env.buffer_from(CL_MEM_READ_ONLY, &c),
        );
        let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        for (j, m) in [&ba, &bb, &bc, &bo].into_iter().enumerate() {
            k.set_mem(j as u32, m);
        }
        env.run(&k, &[n], Some(&[16]));
        let got: Vec<i32> = env.read(&bo, n);
        let want: Vec<i32> = (0..n).map(|i| if c[i] != 0 { b[i] } else { a[i] }).collect();
        assert_eq!(got, want, "{name}: scalar select takes b where c is nonzero");
    }
    // A scalar condition choosing whole vectors (the CTS's integer_ops vector_scalar:
    // `valC ? valA : valB` with char valC and char2 values).
    let k = kernel_of(&p, "cond_v");
    let (ba, bb, bc) = (
        env.buffer_from(CL_MEM_READ_ONLY, &a),
        env.buffer_from(CL_MEM_READ_ONLY, &b),
        env.buffer_from(CL_MEM_READ_ONLY, &c),
    );
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    for (j, m) in [&ba, &bb, &bc, &bo].into_iter().enumerate() {
        k.set_mem(j as u32, m);
    }
    env.run(&k, &[n / 2], Some(&[16]));
    let got: Vec<i32> = env.read(&bo, n);
    let want: Vec<i32> = (0..n).map(|i| if c[i / 2] != 0 { a[i] } else { b[i] }).collect();
    assert_eq!(got, want, "a scalar ?: condition selects the whole vector");
    // int2: component-wise, on the sign bit.
    let k = kernel_of(&p, "sel_v");
    let (ba, bb, bc) = (
        env.buffer_from(CL_MEM_READ_ONLY, &a),
        env.buffer_from(CL_MEM_READ_ONLY, &b),
        env.buffer_from(CL_MEM_READ_ONLY, &c),
    );
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    for (j, m) in [&ba, &bb, &bc, &bo].into_iter().enumerate() {
        k.set_mem(j as u32, m);
    }
    env.run(&k, &[n / 2], Some(&[16]));
    let got: Vec<i32> = env.read(&bo, n);
    let want: Vec<i32> = (0..n).map(|i| if c[i] < 0 { b[i] } else { a[i] }).collect();
    assert_eq!(got, want, "vector select tests the sign bit of each component");
}

#[test]
fn vec_type_hint_narrows_the_width() {
    if run_in_every_mode("vec_type_hint_narrows_the_width") {
        return;
    }
    const SRC: &str = r#"
        __kernel __attribute__((vec_type_hint(float4)))
        void hinted(__global float* a) { size_t i = get_global_id(0); a[i] = a[i] * 2.0f + 1.0f; }"#;
    let env = cpu_env();
    // Vectorized on AVX-512 (4 lanes of float4 width), scalar on narrower registers.
    let p = build(&env, SRC, "", &[]);
    let log = program_build_info_string(p.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
    if mode() == "auto" {
        // 128-bit hint: 512 / 128 = 4 lanes on AVX-512, 2 -> scalar on AVX2 and SSE.
        let line = log.lines().find(|l| l.contains("kernel `hinted`")).unwrap_or_default();
        assert!(line.contains("vec_type_hint(float4)"), "{log}");
    }
    let k = kernel_of(&p, "hinted");
    let data: Vec<f32> = (0..37).map(|i| i as f32).collect();
    let b = env.buffer_from(CL_MEM_READ_WRITE, &data);
    k.set_mem(0, &b);
    env.run(&k, &[37], Some(&[37]));
    let got: Vec<f32> = env.read(&b, 37);
    for i in 0..37 {
        assert_eq!(got[i], data[i] * 2.0 + 1.0);
    }
}

#[test]
fn printf_under_divergence_prints_once_per_work_item() {
    let check = |mode: &str, out: &str| {
        // The first line may follow the harness's "test ... " on the same line.
        let mut lines: Vec<&str> = out.lines().filter_map(|l| l.find("wi ").map(|at| &l[at..])).collect();
        lines.sort();
        let mut want: Vec<String> = (0..37)
            .filter(|i| i % 3 != 2)
            .map(|i| format!("wi {i} is {} of {}", if i % 2 == 1 { "odd" } else { "even" }, i * i))
            .collect();
        want.sort();
        assert_eq!(lines, want, "printf lines with the vectorizer {mode}");
    };
    if run_in_vectorizer_modes(CHILD, "printf_under_divergence_prints_once_per_work_item", check) {
        return;
    }
    const SRC: &str = r#"
        __kernel void talk(__global int* sq) {
            int i = get_global_id(0);
            if (i % 3 != 2) printf("wi %d is %s of %d\n", i, (i % 2) ? "odd" : "even", i * i);
            sq[i] = i * i;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, "", &["talk"]);
    let k = kernel_of(&p, "talk");
    let b = env.buffer(CL_MEM_WRITE_ONLY, 37 * 4);
    k.set_mem(0, &b);
    env.run(&k, &[37], Some(&[37]));
    env.finish();
    let got: Vec<i32> = env.read(&b, 37);
    assert_eq!(got, (0..37).map(|i| i * i).collect::<Vec<i32>>());
}

#[test]
fn a_knob_value_that_is_not_understood_fails_the_build_with_a_log_line() {
    if std::env::var(CHILD).is_err() {
        let exe = std::env::current_exe().expect("test binary path");
        let out = Command::new(exe)
            .args(["a_knob_value_that_is_not_understood_fails_the_build_with_a_log_line", "--exact"])
            .env(CHILD, "bad")
            .env_remove("CL_CONFIG_USE_VECTORIZER")
            .env("CL_CONFIG_CPU_VECTORIZER_MODE", "7")
            .output()
            .expect("run the test binary");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        return;
    }
    let env = cpu_env();
    let err = env.try_build("__kernel void k(__global int* p) { p[get_global_id(0)] = 1; }", "").err();
    let err = err.expect("the build must fail");
    assert_eq!(err.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(err.log.contains("CL_CONFIG_CPU_VECTORIZER_MODE=7"), "build log: {}", err.log);
}
