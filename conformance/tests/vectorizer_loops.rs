//! Divergent loops in the CPU device's vectorizer, through the loader: loops whose lanes
//! leave in different iterations run in loop-mask form (the body runs for every lane while
//! any lane is active, a lane that exits leaves the loop mask and its live-outs are blended
//! into the exit's values as it leaves).
//!
//! As in `vectorizer_predication.rs`, each test runs in child processes of this test binary,
//! once per vectorizer setting (the heuristic width with `SOFTCL_VECTORIZER_REPORT=1`,
//! `CL_CONFIG_CPU_VECTORIZER_MODE=4`, and `CL_CONFIG_USE_VECTORIZER=False`); every run
//! checks its results against a host reference computed here, for several local sizes
//! (multiples of the width and not), so a lane that runs one iteration too many or too few,
//! keeps the wrong live-out, or stores while inactive fails the test.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_LOOPMASK_TEST_CHILD";

/// In the parent: runs test `name` in one child per vectorizer setting and returns true.
/// In a child: returns false.
fn run_in_every_mode(name: &str) -> bool {
    run_in_vectorizer_modes(CHILD, name, |_, _| {})
}

fn mode() -> String {
    vectorizer_mode(CHILD)
}

/// Builds `src` on the CPU device and checks the build log: with the vectorizer on, each
/// kernel of `kernels` is vectorized (at width 4 when forced) and its report line says its
/// divergent loop runs with a loop mask; off, no report line.
fn build(env: &TestEnv, src: &str, kernels: &[&str]) -> Program {
    build_expecting(env, src, kernels, &["linearized with masks", "loop mask, runs while any lane is active"])
}

/// [`build`] with the phrases each report line must hold when the kernel is vectorized.
fn build_expecting(env: &TestEnv, src: &str, kernels: &[&str], phrases: &[&str]) -> Program {
    build_reported(env, src, "-cl-std=CL3.0", &mode(), kernels, phrases)
}

/// Local sizes to run with: the device's choice, widths' multiples and sizes that leave a
/// masked tail in every packet row.
const LOCALS: [Option<usize>; 4] = [None, Some(16), Some(7), Some(29)];

/// An argument of a test launch: an input buffer, an int, or an output buffer of `len`
/// ints filled with `fill` before the launch.
enum Arg<'a> {
    Buf(&'a [i32]),
    Int(i32),
    Out(usize, i32),
}

/// Runs `k` over `n` work-items once per local size of [`LOCALS`], with fresh buffers for
/// `args`, and calls `check(local size, the output buffers read back in argument order)`.
fn run_each_local(env: &TestEnv, k: &Kernel, n: usize, args: &[Arg], check: impl Fn(Option<usize>, &[Vec<i32>])) {
    for local in LOCALS {
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for (index, a) in args.iter().enumerate() {
            let index = index as cl_uint;
            match a {
                Arg::Buf(data) => {
                    let b = env.buffer_from(CL_MEM_READ_ONLY, data);
                    k.set_mem(index, &b);
                    inputs.push(b);
                }
                Arg::Int(v) => k.set_arg(index, v),
                Arg::Out(len, fill) => {
                    let b = env.buffer_from(CL_MEM_READ_WRITE, &vec![*fill; *len]);
                    k.set_mem(index, &b);
                    outputs.push((b, *len));
                }
            }
        }
        let l = local.map(|l| [l]);
        env.run(k, &[n], l.as_ref().map(|l| &l[..]));
        let got: Vec<Vec<i32>> = outputs.iter().map(|(b, len)| env.read(b, *len)).collect();
        check(local, &got);
    }
}

#[test]
fn divergent_trip_counts() {
    if run_in_every_mode("divergent_trip_counts") {
        return;
    }
    // Collatz steps: every lane runs its own number of iterations (mandelbrot's shape, in
    // integers so the reference is exact), with a divergent branch inside the body.
    const SRC: &str = r#"
        __kernel void collatz(__global const uint* x, uint max_steps, __global uint* out) {
            size_t i = get_global_id(0);
            uint v = x[i];
            uint it = 0;
            while (v != 1 && it < max_steps) {
                if (v & 1)
                    v = 3 * v + 1;
                else
                    v = v / 2;
                ++it;
            }
            out[i] = it;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["collatz"]);
    let k = kernel_of(&p, "collatz");
    let n = 211usize;
    // The kernel's uints are passed as the same bits in i32s (all values are small).
    let x: Vec<i32> = (0..n as i32).map(|i| 1 + (i * 7919) % 1000).collect();
    let max_steps = 100i32;
    let want: Vec<i32> = x
        .iter()
        .map(|&x0| {
            let (mut v, mut it) = (x0 as u32, 0i32);
            while v != 1 && it < max_steps {
                v = if v & 1 != 0 { v.wrapping_mul(3).wrapping_add(1) } else { v / 2 };
                it += 1;
            }
            it
        })
        .collect();
    assert!(want.contains(&max_steps) && want.iter().any(|&w| w < 10), "trip counts vary: {want:?}");
    run_each_local(&env, &k, n, &[Arg::Buf(&x), Arg::Int(max_steps), Arg::Out(n, -1)], |local, out| {
        for i in 0..n {
            assert_eq!(out[0][i], want[i], "steps of {} (work-item {i}) with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn break_and_continue() {
    if run_in_every_mode("break_and_continue") {
        return;
    }
    const SRC: &str = r#"
        __kernel void bc(__global const int* x, int n, __global int* out) {
            int i = get_global_id(0);
            int v = x[i];
            int s = 0, k;
            for (k = 0; k < n; k++) {
                if ((k + v) % 3 == 0)
                    continue;
                s += k * v;
                if (s > 1000 + v * 7)
                    break;
                if ((v ^ k) % 11 == 5) {
                    s -= 3;
                    continue;
                }
                s += 1;
            }
            out[2 * i] = s;
            out[2 * i + 1] = k;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["bc"]);
    let k = kernel_of(&p, "bc");
    let m = 173usize;
    let n = 60i32;
    let x: Vec<i32> = (0..m as i32).map(|i| (i * 37) % 101 - 40).collect();
    let want: Vec<(i32, i32)> = x
        .iter()
        .map(|&v| {
            let (mut s, mut k) = (0i32, 0i32);
            while k < n {
                if (k + v) % 3 == 0 {
                    k += 1;
                    continue;
                }
                s = s.wrapping_add(k.wrapping_mul(v));
                if s > 1000 + v * 7 {
                    break;
                }
                if (v ^ k) % 11 == 5 {
                    s -= 3;
                    k += 1;
                    continue;
                }
                s += 1;
                k += 1;
            }
            (s, k)
        })
        .collect();
    assert!(want.iter().any(|w| w.1 < n) && want.iter().any(|w| w.1 == n), "some lanes break, some do not");
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Int(n), Arg::Out(2 * m, -1)], |local, out| {
        for i in 0..m {
            let got = (out[0][2 * i], out[0][2 * i + 1]);
            assert_eq!(got, want[i], "(s, k) of x = {} with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn early_return_from_a_loop() {
    if run_in_every_mode("early_return_from_a_loop") {
        return;
    }
    // A lane that returns inside the loop must not run the rest of the loop nor the store
    // after it.
    const SRC: &str = r#"
        __kernel void find(__global const int* data, int len, __global const int* key, __global int* out) {
            int i = get_global_id(0);
            int kk = key[i];
            out[i] = -1;
            for (int j = 0; j < len; j++) {
                if (data[j] == kk) {
                    out[i] = j;
                    return;
                }
                if (data[j] > kk + 500)
                    return;
            }
            out[i] = -1000 - kk;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["find"]);
    let k = kernel_of(&p, "find");
    let len = 97i32;
    let data: Vec<i32> = (0..len).map(|j| (j * 53) % 89 + j * 4).collect();
    let m = 190usize;
    let keys: Vec<i32> =
        (0..m as i32).map(|i| if i % 3 == 0 { data[((i * 7) % len) as usize] } else { i * 5 - 200 }).collect();
    let want: Vec<i32> = keys
        .iter()
        .map(|&kk| {
            for (j, &d) in data.iter().enumerate() {
                if d == kk {
                    return j as i32;
                }
                if d > kk + 500 {
                    return -1;
                }
            }
            -1000 - kk
        })
        .collect();
    assert!(want.contains(&-1) && want.iter().any(|&w| w >= 0) && want.iter().any(|&w| w <= -1000));
    let args = [Arg::Buf(&data), Arg::Int(len), Arg::Buf(&keys), Arg::Out(m, 7)];
    run_each_local(&env, &k, m, &args, |local, out| {
        for i in 0..m {
            assert_eq!(out[0][i], want[i], "key {} (work-item {i}) with local size {local:?}", keys[i]);
        }
    });
}

#[test]
fn nested_divergent_loops() {
    if run_in_every_mode("nested_divergent_loops") {
        return;
    }
    const SRC: &str = r#"
        __kernel void nested(__global const int* x, __global int* out) {
            int i = get_global_id(0);
            int n = x[i];
            int acc = 0;
            for (int a = 0; a < n; a++) {
                int b = a;
                while (b > 0 && (b & 3) != 1) {
                    acc += b;
                    b -= (i % 3) + 1;
                }
                acc ^= b * 31 + a;
                if (acc > 20000)
                    break;
            }
            out[i] = acc;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["nested"]);
    let k = kernel_of(&p, "nested");
    let m = 150usize;
    let x: Vec<i32> = (0..m as i32).map(|i| (i * 29) % 61).collect();
    let want: Vec<i32> = (0..m as i32)
        .map(|i| {
            let n = x[i as usize];
            let mut acc = 0i32;
            for a in 0..n {
                let mut b = a;
                while b > 0 && (b & 3) != 1 {
                    acc = acc.wrapping_add(b);
                    b -= (i % 3) + 1;
                }
                acc ^= b.wrapping_mul(31).wrapping_add(a);
                if acc > 20000 {
                    break;
                }
            }
            acc
        })
        .collect();
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Out(m, -1)], |local, out| {
        for i in 0..m {
            assert_eq!(out[0][i], want[i], "work-item {i} (n = {}) with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn live_outs_differ_per_exit() {
    if run_in_every_mode("live_outs_differ_per_exit") {
        return;
    }
    // Three breaks, each computing its own result from values of the iteration it leaves
    // in; `k` is live out of all of them.
    const SRC: &str = r#"
        __kernel void exits(__global const int* x, __global int* out) {
            int i = get_global_id(0);
            int v = x[i];
            int r;
            int k = 0;
            while (1) {
                if (v % 7 == 0) {
                    r = v * 3 + k;
                    break;
                }
                if (v < 0) {
                    r = -k;
                    break;
                }
                if (k > 40) {
                    r = 1000 + v;
                    break;
                }
                v = (v * 5 + 3) % 101 - 20;
                k++;
            }
            out[i] = r * 2 + k;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["exits"]);
    let k = kernel_of(&p, "exits");
    let m = 160usize;
    let x: Vec<i32> = (0..m as i32).map(|i| (i * 17) % 90 + 1).collect();
    let mut exits_taken = [0; 3];
    let want: Vec<i32> = x
        .iter()
        .map(|&x0| {
            let (mut v, mut k) = (x0, 0i32);
            let r = loop {
                if v % 7 == 0 {
                    exits_taken[0] += 1;
                    break v * 3 + k;
                }
                if v < 0 {
                    exits_taken[1] += 1;
                    break -k;
                }
                if k > 40 {
                    exits_taken[2] += 1;
                    break 1000 + v;
                }
                v = (v * 5 + 3) % 101 - 20;
                k += 1;
            };
            r * 2 + k
        })
        .collect();
    assert!(exits_taken[0] > 0 && exits_taken[1] > 0, "exits taken: {exits_taken:?}");
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Out(m, -1)], |local, out| {
        for i in 0..m {
            assert_eq!(out[0][i], want[i], "x = {} (work-item {i}) with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn atomics_and_stores_in_a_divergent_loop() {
    if run_in_every_mode("atomics_and_stores_in_a_divergent_loop") {
        return;
    }
    // Lanes that left the loop must neither count nor store: every trace slot past a
    // lane's own trip count keeps its fill value and the bins hold exactly the iterations.
    const SRC: &str = r#"
        __kernel void walk(__global const int* x, __global int* bins, __global int* trace) {
            int i = get_global_id(0);
            int v = x[i];
            int k = 0;
            while (v > 0) {
                atomic_add(&bins[v % 8], 1);
                atomic_inc(&bins[8]);
                trace[i * 16 + k] = v;
                v = v / 3 - (k & 1);
                k++;
            }
            trace[i * 16 + 15] = k;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["walk"]);
    let k = kernel_of(&p, "walk");
    let m = 140usize;
    let x: Vec<i32> = (0..m as i32).map(|i| if i % 5 == 0 { 0 } else { (i * 193) % 20000 }).collect();
    let mut bins = [0i32; 9];
    let mut trace = vec![-7i32; m * 16];
    for (i, &x0) in x.iter().enumerate() {
        let (mut v, mut k) = (x0, 0i32);
        while v > 0 {
            bins[(v % 8) as usize] += 1;
            bins[8] += 1;
            trace[i * 16 + k as usize] = v;
            v = v / 3 - (k & 1);
            k += 1;
        }
        assert!(k < 15);
        trace[i * 16 + 15] = k;
    }
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Out(9, 0), Arg::Out(m * 16, -7)], |local, out| {
        assert_eq!(out[0], bins.to_vec(), "bins with local size {local:?}");
        for i in 0..m {
            let (got, want) = (&out[1][i * 16..i * 16 + 16], &trace[i * 16..i * 16 + 16]);
            assert_eq!(got, want, "trace of x = {} with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn uniform_inner_loop_in_a_divergent_loop() {
    if run_in_every_mode("uniform_inner_loop_in_a_divergent_loop") {
        return;
    }
    // The inner loop's trip count is a kernel argument (the same for every lane); the outer
    // loop's differs per lane.
    const SRC: &str = r#"
        __kernel void poly(__global const int* c, int deg, __global const int* reps, __global int* out) {
            int i = get_global_id(0);
            int x = i % 7 + 1;
            int acc = 0;
            for (int r = 0; r < reps[i]; r++) {
                int p = 0;
                for (int d = 0; d < deg; d++)
                    p = p * x + c[d];
                acc += p ^ r;
                x = x / 2 + 1;
            }
            out[i] = acc;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["poly"]);
    if mode() != "off" {
        // All lanes run the inner loop in lock step for the same trip count: it keeps one
        // scalar branch per iteration, only the outer loop has a loop mask.
        let log = program_build_info_string(p.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
        assert_eq!(log.matches("loop mask").count(), 1, "one loop in loop-mask form: {log}");
    }
    let k = kernel_of(&p, "poly");
    let m = 120usize;
    let deg = 6i32;
    let c: Vec<i32> = vec![3, -1, 4, 1, -5, 9];
    let reps: Vec<i32> = (0..m as i32).map(|i| (i * 13) % 9).collect();
    let want: Vec<i32> = (0..m as i32)
        .map(|i| {
            let (mut x, mut acc) = (i % 7 + 1, 0i32);
            for r in 0..reps[i as usize] {
                let mut p = 0i32;
                for &cd in &c {
                    p = p.wrapping_mul(x).wrapping_add(cd);
                }
                acc = acc.wrapping_add(p ^ r);
                x = x / 2 + 1;
            }
            acc
        })
        .collect();
    let args = [Arg::Buf(&c), Arg::Int(deg), Arg::Buf(&reps), Arg::Out(m, -1)];
    run_each_local(&env, &k, m, &args, |local, out| {
        for i in 0..m {
            assert_eq!(out[0][i], want[i], "work-item {i} ({} repetitions) with local size {local:?}", reps[i]);
        }
    });
}

#[test]
fn irreducible_cycle_is_split_into_natural_loops() {
    if run_in_every_mode("irreducible_cycle_is_split_into_natural_loops") {
        return;
    }
    // A cycle entered at two blocks (goto into its middle) is no natural loop: the part the
    // second entry reaches before the first is copied for it (`passes::reducible`), and
    // what is left is natural loops, linearized with loop masks like any other.
    const SRC: &str = r#"
        __kernel void irr(__global const int* x, __global int* out) {
            int i = get_global_id(0);
            int v = x[i];
            int n = 0;
            if (v & 1)
                goto odd;
        even:
            v = v / 2 + 3;
            n++;
            if (n > 30 || v % 5 == 0)
                goto done;
        odd:
            v = v * 3 + 1;
            n += 2;
            if (v % 7 == 0 || n > 30)
                goto done;
            goto even;
        done:
            out[i] = v * 100 + n;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["irr"]);
    let k = kernel_of(&p, "irr");
    let m = 150usize;
    let x: Vec<i32> = (0..m as i32).map(|i| (i * 41) % 997 + 2).collect();
    let want: Vec<i32> = x
        .iter()
        .map(|&x0| {
            let (mut v, mut n) = (x0, 0i32);
            let mut at_odd = v & 1 != 0;
            loop {
                if !at_odd {
                    v = v / 2 + 3;
                    n += 1;
                    if n > 30 || v % 5 == 0 {
                        break;
                    }
                }
                at_odd = false;
                v = v.wrapping_mul(3).wrapping_add(1);
                n += 2;
                if v % 7 == 0 || n > 30 {
                    break;
                }
            }
            v.wrapping_mul(100).wrapping_add(n)
        })
        .collect();
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Out(m, -1)], |local, out| {
        for i in 0..m {
            assert_eq!(out[0][i], want[i], "x = {} (work-item {i}) with local size {local:?}", x[i]);
        }
    });
}

#[test]
fn divergent_loop_between_barriers() {
    if run_in_every_mode("divergent_loop_between_barriers") {
        return;
    }
    // A uniform loop holding barriers and, between them, a loop with a divergent exit: the
    // lanes all meet again at each barrier, and the work-group resumes after it with every
    // other lane mask empty.
    const SRC: &str = r#"
        __kernel void rounds(__global const int* x, __global int* out, __local int* tmp) {
            int lid = get_local_id(0), ls = get_local_size(0), gid = get_global_id(0);
            int v = x[gid];
            for (int r = 0; r < 3; r++) {
                int k = 0;
                while (v > 1 && k < 20) {
                    v = (v & 1) ? v * 3 + 1 : v / 2;
                    k++;
                }
                tmp[lid] = v + k;
                barrier(CLK_LOCAL_MEM_FENCE);
                v = tmp[(lid + 1) % ls] + r;
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            out[gid] = v;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["rounds"]);
    let k = kernel_of(&p, "rounds");
    let n = 336usize;
    let x: Vec<i32> = (0..n as i32).map(|i| (i * 71) % 300 + 1).collect();
    for ls in [16usize, 7, 48, 112] {
        let mut v = x.clone();
        for r in 0..3 {
            let tmp: Vec<i32> = v
                .iter_mut()
                .map(|v| {
                    let mut k = 0;
                    while *v > 1 && k < 20 {
                        *v = if *v & 1 != 0 { *v * 3 + 1 } else { *v / 2 };
                        k += 1;
                    }
                    *v + k
                })
                .collect();
            for (g, v) in v.iter_mut().enumerate() {
                let (group, lid) = (g / ls, g % ls);
                *v = tmp[group * ls + (lid + 1) % ls] + r;
            }
        }
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let bo = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1i32; n]);
        k.set_mem(0, &bx);
        k.set_mem(1, &bo);
        k.set_local(2, ls * 4);
        env.run(&k, &[n], Some(&[ls]));
        let got: Vec<i32> = env.read(&bo, n);
        assert_eq!(got, v, "local size {ls}");
    }
}

#[test]
fn loop_carried_values_that_take_each_others_old_values() {
    // pyopencl's complex Bessel function (the forward recurrence `j_{n+1} = 2n/z j_n -
    // j_{n-1}`, complex values as structs, until |j_n| is large or n too big) found this:
    // clang turns `a = b; b = c;` into header parameters whose back-edge argument is
    // another parameter of the same header (the old `b`). The loop-mask form stored the
    // back edge's arguments into the parameters' slots one by one, so a parameter passed
    // on after its own slot had been written took the new value instead of the old one.
    // The Gen device runs the same form at its SIMD width.
    if run_in_every_mode("loop_carried_values_that_take_each_others_old_values") {
        run_test_child(CHILD, "gen", "loop_carried_values_that_take_each_others_old_values", &[]);
        return;
    }
    const SRC: &str = r#"
        typedef struct { int re, im; } pair;
        pair make(int a, int b) { pair r; r.re = a; r.im = b; return r; }
        __kernel void shift(__global const int* x, __global int* out) {
            int i = get_global_id(0);
            int lim = x[i];
            pair a = make(0, 0), b = make(1, 0), c;
            int n = 0;
            while (1) {
                c = make(2 * b.re + a.re, b.im + a.im + n);
                n += 1;
                a = b;
                b = c;
                if (n > 1000) break;
                if (b.re * b.re + b.im > lim) break;
            }
            out[3 * i] = n;
            out[3 * i + 1] = a.re;
            out[3 * i + 2] = b.im;
        }"#;
    let kind = if mode() == "gen" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    let env = device(kind).expect("the device under test").env();
    let p = build(&env, SRC, &["shift"]);
    let k = kernel_of(&p, "shift");
    let m = 150usize;
    let x: Vec<i32> = (0..m as i32).map(|i| (i * 7919) % 5000 + 1).collect();
    let want: Vec<i32> = x
        .iter()
        .flat_map(|&lim| {
            let ((mut a_re, mut a_im), (mut b_re, mut b_im), mut n) = ((0i32, 0i32), (1i32, 0i32), 0i32);
            loop {
                let c = (2 * b_re + a_re, b_im + a_im + n);
                n += 1;
                (a_re, a_im) = (b_re, b_im);
                (b_re, b_im) = c;
                if n > 1000 || b_re * b_re + b_im > lim {
                    break;
                }
            }
            [n, a_re, b_im]
        })
        .collect();
    run_each_local(&env, &k, m, &[Arg::Buf(&x), Arg::Out(3 * m, -1)], |local, out| {
        for i in 0..m {
            assert_eq!(
                out[0][3 * i..3 * i + 3],
                want[3 * i..3 * i + 3],
                "lim {} (work-item {i}) with local size {local:?}",
                x[i]
            );
        }
    });
}
