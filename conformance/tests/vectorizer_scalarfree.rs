//! Nothing makes a kernel fall back to scalar wholesale: calls left after
//! inlining, struct and array values, varying memory copies, initialised private arrays,
//! barriers under uniform-but-unprovable conditions and irreducible loops all run inside the
//! vector body (lane by lane where they have no vector form).
//!
//! Each test runs in child processes of this test binary, once per vectorizer setting
//! (heuristic width with `SOFTCL_VECTORIZER_REPORT=1`, forced width 4, off), and checks its
//! results against a host reference; the build log must say that the kernel was vectorized
//! (and, where it matters, what ran lane by lane).

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_SCALARFREE_TEST_CHILD";

fn mode() -> String {
    vectorizer_mode(CHILD)
}

fn cpu_env() -> TestEnv {
    device(DeviceKind::Cpu).expect("the CPU device").env()
}

/// Builds `src` and checks the report line of each kernel of `kernels`: vectorized (at
/// width 4 in the "w4" run; the heuristic may keep a short divergent kernel scalar for cost,
/// saying so, but never for a reason the lowering cannot handle), containing each of
/// `expect` in the vectorized runs; no report in the scalar run.
fn build(env: &TestEnv, src: &str, kernels: &[&str], expect: &[&str]) -> Program {
    build_with(env, src, "", kernels, expect)
}

/// [`build`] with build options.
fn build_with(env: &TestEnv, src: &str, options: &str, kernels: &[&str], expect: &[&str]) -> Program {
    build_reported(env, src, options, &mode(), kernels, expect)
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    f: f32,
    i: i32,
}

#[test]
fn struct_values_through_a_helper_function() {
    if run_in_vectorizer_modes(CHILD, "struct_values_through_a_helper_function", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        typedef struct { float f; int i; } Pair;
        __attribute__((noinline)) Pair scale(Pair p, float s) {
            Pair r; r.f = p.f * s; r.i = p.i + (int)s; return r;
        }
        __kernel void pairs(__global const Pair* in, __global Pair* out) {
            int g = get_global_id(0);
            Pair p = in[g];
            Pair q = scale(p, (float)(g % 4));
            if (q.i & 1) q.f = -q.f;
            out[g] = q;
        }"#;
    let env = cpu_env();
    // Optimised, clang leaves members; unoptimised, whole structs, copies and the call.
    for options in ["", "-cl-opt-disable"] {
        let p = build_with(&env, SRC, options, &["pairs"], &[]);
        check_pairs(&env, &kernel_of(&p, "pairs"));
    }
}

fn check_pairs(env: &TestEnv, k: &Kernel) {
    let n = 50usize;
    let input: Vec<Pair> = (0..n).map(|g| Pair { f: g as f32 * 1.25 - 7.0, i: (g * 7) as i32 - 20 }).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    env.run(k, &[n], Some(&[25]));
    let words: Vec<u32> = env.read(&bo, n * 2);
    let got: Vec<Pair> = words.chunks(2).map(|w| Pair { f: f32::from_bits(w[0]), i: w[1] as i32 }).collect();
    for (g, (x, y)) in input.iter().zip(&got).enumerate() {
        let s = (g % 4) as f32;
        let mut q = Pair { f: x.f * s, i: x.i + s as i32 };
        if q.i & 1 != 0 {
            q.f = -q.f;
        }
        assert_eq!(*y, q, "pairs[{g}]");
    }
}

#[test]
fn initialised_private_lookup_table() {
    if run_in_vectorizer_modes(CHILD, "initialised_private_lookup_table", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        __kernel void lut(__global int* out) {
            int t[8] = {3, 1, 4, 1, 5, 9, 2, 6};
            int g = get_global_id(0);
            t[g % 8] += g;
            out[g] = t[(g * 3) % 8] * 100 + t[g % 8];
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, &["lut"], &[]);
    let k = kernel_of(&p, "lut");
    let n = 45usize;
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bo);
    env.run(&k, &[n], Some(&[15]));
    let got: Vec<i32> = env.read(&bo, n);
    for (g, y) in got.iter().enumerate() {
        let mut t = [3, 1, 4, 1, 5, 9, 2, 6];
        t[g % 8] += g as i32;
        assert_eq!(*y, t[(g * 3) % 8] * 100 + t[g % 8], "lut[{g}]");
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rec {
    a: f32,
    b: i32,
    c: [f32; 3],
}

#[test]
fn struct_assignment_between_private_and_global_memory() {
    if run_in_vectorizer_modes(CHILD, "struct_assignment_between_private_and_global_memory", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        typedef struct { float a; int b; float c[3]; } Rec;
        __kernel void copy(__global const Rec* in, __global Rec* out, int n) {
            int g = get_global_id(0);
            Rec tmp[2];
            tmp[g & 1] = in[g];
            tmp[(g & 1) ^ 1] = in[(g + 1) % n];
            tmp[g & 1].a += 1.0f;
            tmp[g & 1].c[g % 3] = (float)g;
            out[g] = tmp[g & 1];
            out[g].b += tmp[(g & 1) ^ 1].b;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, &["copy"], &[]);
    let k = kernel_of(&p, "copy");
    let n = 37usize;
    let input: Vec<Rec> = (0..n)
        .map(|g| Rec { a: g as f32 * 0.5, b: g as i32 * 3 + 1, c: [g as f32, -(g as f32), 2.0 * g as f32] })
        .collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * std::mem::size_of::<Rec>());
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    k.set_arg(2, &(n as i32));
    env.run(&k, &[n], Some(&[37]));
    let words: Vec<u32> = env.read(&bo, n * 5);
    let f = f32::from_bits;
    let got: Vec<Rec> =
        words.chunks(5).map(|w| Rec { a: f(w[0]), b: w[1] as i32, c: [f(w[2]), f(w[3]), f(w[4])] }).collect();
    for (g, y) in got.iter().enumerate() {
        let mut r = input[g];
        r.a += 1.0;
        r.c[g % 3] = g as f32;
        r.b += input[(g + 1) % n].b;
        assert_eq!(*y, r, "copy[{g}]");
    }
}

/// A chain of helpers that calls 512 leaves: more than the vectorizer's 256 inlines, so
/// calls are left in the kernel and run once per active lane.
#[test]
fn call_chain_deeper_than_the_inline_limit() {
    if run_in_vectorizer_modes(CHILD, "call_chain_deeper_than_the_inline_limit", |_, _| {}) {
        return;
    }
    let mut src = String::from("__attribute__((noinline)) int h9(int x) { return x * 3 + (int)get_local_id(0); }\n");
    for d in (0..9).rev() {
        src.push_str(&format!(
            "__attribute__((noinline)) int h{d}(int x) {{ return h{n}(x) ^ h{n}(x + {e}); }}\n",
            n = d + 1,
            e = d + 1
        ));
    }
    src.push_str(
        "__kernel void chain(__global const int* in, __global int* out) {
            int g = get_global_id(0);
            if (in[g] > 0) out[g] = h0(in[g]); else out[g] = -1;
        }",
    );
    fn h(d: u32, x: i32, lid: i32) -> i32 {
        if d == 9 {
            x.wrapping_mul(3).wrapping_add(lid)
        } else {
            h(d + 1, x, lid) ^ h(d + 1, x.wrapping_add(d as i32 + 1), lid)
        }
    }
    let env = cpu_env();
    let p = build(&env, &src, &["chain"], &["calls"]);
    let k = kernel_of(&p, "chain");
    let (n, local) = (42usize, 21usize);
    let input: Vec<i32> = (0..n as i32).map(|g| if g % 5 == 0 { -g } else { g * 11 }).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    env.run(&k, &[n], Some(&[local]));
    let got: Vec<i32> = env.read(&bo, n);
    for (g, y) in got.iter().enumerate() {
        let want = if input[g] > 0 { h(0, input[g], (g % local) as i32) } else { -1 };
        assert_eq!(*y, want, "chain[{g}]");
    }
}

/// Barriers under conditions the analysis cannot prove uniform but that every work-item of
/// a work-group evaluates alike (as OpenCL requires of a condition that controls a barrier).
#[test]
fn barriers_under_uniform_but_unprovable_conditions() {
    if run_in_vectorizer_modes(CHILD, "barriers_under_uniform_but_unprovable_conditions", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        __kernel void rev(__global const float* in, __global float* out, __local float* tmp) {
            size_t l = get_local_id(0), n = get_local_size(0);
            tmp[l] = in[get_global_id(0)];
            if (l < n) {
                barrier(CLK_LOCAL_MEM_FENCE);
                out[get_global_id(0)] = tmp[n - 1 - l];
            }
        }
        __kernel void rounds(__global const int* steps, __global int* out, __local int* tmp) {
            size_t l = get_local_id(0), n = get_local_size(0);
            int v = (int)get_global_id(0);
            int s = steps[get_global_id(0) / n];
            for (int r = 0; r < s; r++) {
                tmp[l] = v;
                barrier(CLK_LOCAL_MEM_FENCE);
                v += tmp[(l + 1) % n];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            out[get_global_id(0)] = v;
        }"#;
    let env = cpu_env();
    let p = build(&env, SRC, &["rev", "rounds"], &["taken as work-group uniform"]);
    let k = kernel_of(&p, "rev");
    let (n, local) = (60usize, 30usize);
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
    let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bx);
    k.set_mem(1, &bo);
    k.set_local(2, local * 4);
    env.run(&k, &[n], Some(&[local]));
    let got: Vec<f32> = env.read(&bo, n);
    for (g, y) in got.iter().enumerate() {
        let (grp, l) = (g / local, g % local);
        assert_eq!(*y, x[grp * local + local - 1 - l], "rev[{g}]");
    }

    let k = kernel_of(&p, "rounds");
    let (n, local) = (54usize, 18usize);
    let steps = [3i32, 0, 5];
    let bs = env.buffer_from(CL_MEM_READ_ONLY, &steps);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bs);
    k.set_mem(1, &bo);
    k.set_local(2, local * 4);
    env.run(&k, &[n], Some(&[local]));
    let got: Vec<i32> = env.read(&bo, n);
    let mut want: Vec<i32> = (0..n as i32).collect();
    for grp in 0..n / local {
        for _ in 0..steps[grp] {
            let old: Vec<i32> = want[grp * local..(grp + 1) * local].to_vec();
            for l in 0..local {
                want[grp * local + l] += old[(l + 1) % local];
            }
        }
    }
    assert_eq!(got, want);
}

/// A loop with two entries (goto into its middle): irreducible control flow with divergent
/// branches, made natural loops by copying the second entry's part, then linearized.
#[test]
fn irreducible_loop_with_divergent_exits() {
    if run_in_vectorizer_modes(CHILD, "irreducible_loop_with_divergent_exits", |_, _| {}) {
        return;
    }
    const SRC: &str = r#"
        __kernel void irr(__global const int* in, __global int* out) {
            int g = get_global_id(0);
            int x = in[g], acc = 0, n = 0;
            if (x & 1) goto odd;
        even:
            acc += x; x = x / 2; n++;
            if (n > 20) goto done;
        odd:
            acc ^= x * 3; x = x - 1; n++;
            if (x > 0) goto even;
        done:
            out[g] = acc + n * 1000;
        }"#;
    fn irr(mut x: i32) -> i32 {
        let (mut acc, mut n) = (0i32, 0i32);
        let mut at_odd = x & 1 != 0;
        loop {
            if !at_odd {
                acc += x;
                x /= 2;
                n += 1;
                if n > 20 {
                    break;
                }
            }
            at_odd = false;
            acc ^= x * 3;
            x -= 1;
            n += 1;
            if x <= 0 {
                break;
            }
        }
        acc + n * 1000
    }
    let env = cpu_env();
    let p = build(&env, SRC, &["irr"], &["linearized with masks", "loop mask, runs while any lane is active"]);
    let k = kernel_of(&p, "irr");
    let n = 70usize;
    let input: Vec<i32> = (0..n as i32).map(|g| (g * 37) % 101 - 10).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    env.run(&k, &[n], Some(&[35]));
    let got: Vec<i32> = env.read(&bo, n);
    for (g, y) in got.iter().enumerate() {
        assert_eq!(*y, irr(input[g]), "irr[{g}] (input {})", input[g]);
    }
}

/// What clang at -O2 never leaves but other producers do: a whole-struct load from a varying
/// address, its members read and replaced (OpCompositeExtract / OpCompositeInsert), a struct
/// block parameter (OpPhi) joining a divergent branch, a whole-struct store, and a private
/// array declared with an initializer (OpVariable Function with a constant).
#[test]
fn struct_values_and_an_initialised_private_array_from_spirv() {
    if run_in_vectorizer_modes(CHILD, "struct_values_and_an_initialised_private_array_from_spirv", |_, _| {}) {
        return;
    }
    const TEXT: &str = include_str!("vectorizer_scalarfree/struct_values_and_initialised_array.spvasm");
    let env = cpu_env();
    let program = program_from_il(&env.context, &assemble_spirv(TEXT)).unwrap_or_else(|e| panic!("{e}"));
    let program = build_program(program, &[env.dev()], "").unwrap_or_else(|e| panic!("{e}"));
    let log = program_build_info_string(program.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
    let line = log.lines().find(|l| l.contains("kernel `pairs`:"));
    match mode().as_str() {
        "w4" => {
            let l = line.unwrap_or_else(|| panic!("no report; build log:\n{log}"));
            assert!(l.contains("vectorized at width 4 "), "{l}");
            for e in ["struct/array loads and stores", "struct/array members", "private arrays initialised per lane"] {
                assert!(l.contains(e), "the report should say `{e}`: {l}");
            }
        }
        "auto" => assert!(
            line.is_some_and(|l| l.contains("vectorized at width") || l.contains("short kernel")),
            "build log:\n{log}"
        ),
        _ => assert!(line.is_none(), "scalar build reports {line:?}"),
    }
    let k = kernel_of(&program, "pairs");
    let n = 43usize;
    let input: Vec<u32> = (0..n).flat_map(|g| [(g as f32 * 0.75 - 3.0).to_bits(), (g * 5) as u32]).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    env.run(&k, &[n], Some(&[43]));
    let got: Vec<u32> = env.read(&bo, n * 2);
    for g in 0..n {
        let (f, i) = (f32::from_bits(input[2 * g]), input[2 * g + 1]);
        let mut t = [3u32, 1, 4, 1];
        t[g & 3] += g as u32;
        let want = if g & 1 == 1 { [(f * 2.0).to_bits(), i + t[(g + 1) & 3]] } else { [f.to_bits(), i] };
        assert_eq!(got[2 * g..2 * g + 2], want, "pairs[{g}]");
    }
}
