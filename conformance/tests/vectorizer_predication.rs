//! If-conversion in the CPU device's vectorizer, through the loader: loop-free kernels with
//! divergent branches run every block once under its lane mask, with
//! masked loads and stores, so lanes that do not take a side never touch its memory.
//!
//! As in `vectorizer.rs`, each test runs in child processes of this test binary, once per
//! vectorizer setting (the heuristic width with `SOFTCL_VECTORIZER_REPORT=1`, which may keep
//! these short kernels scalar; `CL_CONFIG_CPU_VECTORIZER_MODE=4`, which vectorizes them; and
//! `CL_CONFIG_USE_VECTORIZER=False`), and every run checks its results against a host
//! reference. A lane that loaded memory it must not touch crashes its child, which fails
//! the test.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_PREDICATION_TEST_CHILD";

/// In the parent: runs test `name` in one child per vectorizer setting and returns true.
/// In a child: returns false.
fn run_in_every_mode(name: &str) -> bool {
    run_in_vectorizer_modes(CHILD, name, |_, _| {})
}

fn mode() -> String {
    vectorizer_mode(CHILD)
}

/// Builds `src` on the CPU device and checks the build log ([`build_reported`]): with the
/// vectorizer on, each kernel of `kernels` is vectorized and its divergent branches
/// linearized with masks; off, no report line.
fn build(env: &TestEnv, src: &str, kernels: &[&str]) -> Program {
    build_reported(env, src, "-cl-std=CL3.0", &mode(), kernels, &["linearized with masks"])
}

#[test]
fn store_on_one_side_only_under_masks() {
    if run_in_every_mode("store_on_one_side_only_under_masks") {
        return;
    }
    const SRC: &str = r#"
        __kernel void one_side(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            float v = x[i];
            if (v > 0.0f)
                y[i] = v * 2.0f;
        }
        __kernel void two_sides(__global const int* x, __global int* a, __global int* b) {
            int i = get_global_id(0);
            int v = x[i];
            int r;
            if (v % 3 == 0) {
                a[i] = v + 1;
                r = 7;
            } else {
                b[i] = v - 1;
                r = v * 5;
            }
            a[i + get_global_size(0)] = r;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["one_side", "two_sides"]);
    let one = kernel_of(&p, "one_side");
    let two = kernel_of(&p, "two_sides");
    let n = 203usize;
    let x: Vec<f32> = (0..n).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
    let xi: Vec<i32> = (0..n as i32).map(|i| (i * 13) % 29).collect();
    for local in [Some(1usize), Some(7), Some(16), Some(29), None] {
        let l = local.map(|l| [l]);
        let l = l.as_ref().map(|l| &l[..]);
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let by = env.buffer_from(CL_MEM_READ_WRITE, &vec![-5.0f32; n]);
        one.set_mem(0, &bx);
        one.set_mem(1, &by);
        env.run(&one, &[n], l);
        let y: Vec<f32> = env.read(&by, n);
        for i in 0..n {
            let want = if x[i] > 0.0 { x[i] * 2.0 } else { -5.0 };
            assert_eq!(y[i], want, "y[{i}] with local size {local:?}");
        }

        let bxi = env.buffer_from(CL_MEM_READ_ONLY, &xi);
        let ba = env.buffer_from(CL_MEM_READ_WRITE, &vec![-9i32; 2 * n]);
        let bb = env.buffer_from(CL_MEM_READ_WRITE, &vec![-9i32; n]);
        two.set_mem(0, &bxi);
        two.set_mem(1, &ba);
        two.set_mem(2, &bb);
        env.run(&two, &[n], l);
        let a: Vec<i32> = env.read(&ba, 2 * n);
        let b: Vec<i32> = env.read(&bb, n);
        for i in 0..n {
            let v = xi[i];
            let (wa, wb, r) = if v % 3 == 0 { (v + 1, -9, 7) } else { (-9, v - 1, v * 5) };
            assert_eq!((a[i], b[i], a[n + i]), (wa, wb, r), "work-item {i} (x = {v}) with local size {local:?}");
        }
    }
}

#[test]
fn short_circuit_conditions() {
    if run_in_every_mode("short_circuit_conditions") {
        return;
    }
    const SRC: &str = r#"
        __kernel void border(int w, int h, __global const float* restrict in, __global float* restrict out) {
            int x = get_global_id(0), y = get_global_id(1);
            int i = y * w + x;
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
                out[i] = in[i];
                return;
            }
            out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
        }
        __kernel void guarded(__global const int* idx, __global const int* data, int n, __global int* out) {
            int i = get_global_id(0);
            int j = idx[i];
            int r = -1;
            if (j >= 0 && j < n && data[j] > 10)
                r = data[j] - 10;
            else if (j == -7 || (j > n && (j & 1)))
                r = -2;
            out[i] = r;
        }
        __kernel void divided(__global const int* d, __global int* out, int n) {
            int i = get_global_id(0);
            int v = d[i];
            int r = -1;
            if (v != 0 && n / v > 2 && i % 3 != 1) r = n / v;
            out[i] = r;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["border", "guarded", "divided"]);
    let border = kernel_of(&p, "border");
    let guarded = kernel_of(&p, "guarded");
    // The four `||` terms of the border test fold into one divergent branch
    // (`passes::short_circuit`); `divided`'s second term divides by what its first tests, so
    // it must not run for the lanes the first stopped (a division by zero traps on x86).
    if mode() == "w4" {
        let log = program_build_info_string(p.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
        let line = log.lines().find(|l| l.contains("kernel `border`:")).unwrap_or_default();
        assert!(line.ends_with("; 1 divergent branch(es)"), "the border test is one branch: {line}");
    }
    let divided = kernel_of(&p, "divided");
    let nd = 100usize;
    let d: Vec<i32> = (0..nd as i32).map(|i| if i % 4 == 0 { 0 } else { i % 23 - 11 }).collect();
    let bdiv = env.buffer_from(CL_MEM_READ_ONLY, &d);
    let bq = env.buffer_from(CL_MEM_READ_WRITE, &vec![7i32; nd]);
    divided.set_mem(0, &bdiv);
    divided.set_mem(1, &bq);
    divided.set_arg(2, &1000i32);
    env.run(&divided, &[nd], None);
    let q: Vec<i32> = env.read(&bq, nd);
    for i in 0..nd {
        let v = d[i];
        let want = if v != 0 && 1000 / v > 2 && i % 3 != 1 { 1000 / v } else { -1 };
        assert_eq!(q[i], want, "divided: out[{i}]");
    }

    let (w, h) = (45usize, 13usize);
    let input: Vec<f32> = (0..w * h).map(|i| ((i * 13) % 17) as f32 * 0.25).collect();
    for local in [None, Some([5usize, 3]), Some([16, 1]), Some([45, 1])] {
        let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bo = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1.0f32; w * h]);
        border.set_arg(0, &(w as i32));
        border.set_arg(1, &(h as i32));
        border.set_mem(2, &bi);
        border.set_mem(3, &bo);
        env.run(&border, &[w, h], local.as_ref().map(|l| &l[..]));
        let out: Vec<f32> = env.read(&bo, w * h);
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let want = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                    input[i]
                } else {
                    0.5 * input[i] + 0.125 * (input[i - 1] + input[i + 1] + input[i - w] + input[i + w])
                };
                assert_eq!(out[i], want, "out[{x}, {y}] with local size {local:?}");
            }
        }
    }

    let n = 50i32;
    let m = 301usize;
    // Indices in range, negative, -7, and beyond n (odd and even): every path of the
    // conditions; the out-of-range ones must not load `data`.
    let idx: Vec<i32> = (0..m as i32)
        .map(|i| match i % 6 {
            0 | 1 => (i * 7) % n,
            2 => -1 - i * 1000,
            3 => -7,
            4 => n + 1 + 2 * i,
            _ => n + 1_000_000 + 2 * i + 1,
        })
        .collect();
    let data: Vec<i32> = (0..n).map(|k| (k * 11) % 23).collect();
    let bidx = env.buffer_from(CL_MEM_READ_ONLY, &idx);
    let bd = env.buffer_from(CL_MEM_READ_ONLY, &data);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, m * 4);
    guarded.set_mem(0, &bidx);
    guarded.set_mem(1, &bd);
    guarded.set_arg(2, &n);
    guarded.set_mem(3, &bo);
    env.run(&guarded, &[m], Some(&[43]));
    let out: Vec<i32> = env.read(&bo, m);
    for i in 0..m {
        let j = idx[i];
        let want = if j >= 0 && j < n && data[j as usize] > 10 {
            data[j as usize] - 10
        } else if j == -7 || (j > n && (j & 1) != 0) {
            -2
        } else {
            -1
        };
        assert_eq!(out[i], want, "out[{i}] (index {j})");
    }
}

#[test]
fn inactive_lanes_do_not_load_out_of_bounds() {
    if run_in_every_mode("inactive_lanes_do_not_load_out_of_bounds") {
        return;
    }
    // Lanes whose index is negative would read about 4 GiB before `x` (unmapped memory: a
    // load there crashes the process); only lanes with a valid index may load or store.
    const SRC: &str = r#"
        __kernel void pick(__global const int* idx, __global const float* x, __global float* y) {
            int i = get_global_id(0);
            int j = idx[i];
            if (j >= 0) {
                y[i] = x[j] * 3.0f;
            } else {
                y[i] = -1.0f;
            }
        }
        __kernel void pick_store(__global const int* idx, __global float* x) {
            int i = get_global_id(0);
            int j = idx[i];
            if (j >= 0)
                x[j] = (float)i;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["pick", "pick_store"]);
    let pick = kernel_of(&p, "pick");
    let pick_store = kernel_of(&p, "pick_store");
    let n = 333usize;
    let far = -(1i32 << 30);
    // Every lane pattern: all valid, none valid, alternating, and runs of each.
    let idx: Vec<i32> = (0..n as i32)
        .map(|i| match (i / 16) % 4 {
            0 => (i * 5) % n as i32,
            1 => far + i,
            2 if i % 2 == 0 => far,
            _ => (n as i32 - 1 - i).max(0),
        })
        .collect();
    let x: Vec<f32> = (0..n).map(|k| k as f32 * 0.5 - 20.0).collect();
    for local in [Some(16usize), Some(11), None] {
        let l = local.map(|l| [l]);
        let l = l.as_ref().map(|l| &l[..]);
        let bidx = env.buffer_from(CL_MEM_READ_ONLY, &idx);
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let by = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        pick.set_mem(0, &bidx);
        pick.set_mem(1, &bx);
        pick.set_mem(2, &by);
        env.run(&pick, &[n], l);
        let y: Vec<f32> = env.read(&by, n);
        for i in 0..n {
            let want = if idx[i] >= 0 { x[idx[i] as usize] * 3.0 } else { -1.0 };
            assert_eq!(y[i], want, "y[{i}] (index {}) with local size {local:?}", idx[i]);
        }
    }
    // Stores: one writer per target (the valid indices of the first pattern are distinct
    // multiples of 5 mod n; the fourth pattern's reach other targets only if they collide,
    // so use a single valid pattern here).
    let idx2: Vec<i32> = (0..n as i32).map(|i| if (i / 8) % 2 == 0 { i } else { far + i }).collect();
    let bidx = env.buffer_from(CL_MEM_READ_ONLY, &idx2);
    let bx = env.buffer_from(CL_MEM_READ_WRITE, &vec![-3.0f32; n]);
    pick_store.set_mem(0, &bidx);
    pick_store.set_mem(1, &bx);
    env.run(&pick_store, &[n], Some(&[37]));
    let got: Vec<f32> = env.read(&bx, n);
    for i in 0..n {
        let want = if idx2[i] >= 0 { i as f32 } else { -3.0 };
        assert_eq!(got[i], want, "x[{i}]");
    }
}

#[test]
fn one_sided_bounce_on_float4_structs() {
    if run_in_every_mode("one_sided_bounce_on_float4_structs") {
        return;
    }
    // The benchmark's particle update: an array of {float4 pos; float4 vel} and one
    // divergent branch that changes two members.
    const SRC: &str = r#"
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
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["particles"]);
    let k = kernel_of(&p, "particles");
    let n = 157usize;
    let data: Vec<[f32; 8]> = (0..n)
        .map(|i| {
            let f = i as f32;
            [f * 0.1 - 3.0, (i % 5) as f32 * 0.02 - 0.03, -f, 1.0, 0.5, (i % 7) as f32 - 3.0, f * 0.01, 0.0]
        })
        .collect();
    let (dt, g) = (0.01f32, [0.0f32, -9.81, 0.0, 0.0]);
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &data);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 32);
    k.set_arg(0, &dt);
    k.set_arg(1, &g);
    k.set_mem(2, &bi);
    k.set_mem(3, &bo);
    env.run(&k, &[n], Some(&[19]));
    let out: Vec<[f32; 8]> = env.read(&bo, n);
    let mut bounced = 0;
    for i in 0..n {
        let d = data[i];
        let mut v = [0f32; 4];
        let mut p = [0f32; 4];
        for c in 0..4 {
            v[c] = d[4 + c] * 0.999 + g[c] * dt;
            p[c] = d[c] + v[c] * dt;
        }
        if p[1] < 0.0 {
            p[1] = -p[1];
            v[1] *= -0.9;
            bounced += 1;
        }
        let want = [p[0], p[1], p[2], p[3], v[0], v[1], v[2], v[3]];
        for c in 0..8 {
            assert!(
                (out[i][c] - want[c]).abs() <= 1e-6 * want[c].abs().max(1.0),
                "particle {i}: {:?} != {want:?}",
                out[i]
            );
        }
    }
    assert!(bounced > 0 && bounced < n, "both sides of the branch are taken ({bounced} bounced)");
}
