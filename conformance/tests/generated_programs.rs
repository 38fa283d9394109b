//! Shapes of the programs a random program generator (CLSmith style) writes, through the
//! loader: private structs whose initialiser is not constant but holds constant arrays
//! (clang copies those parts from private constant data), and private structs with
//! `volatile` members and wide vectors copied whole.
//!
//! Each test runs in child processes of this test binary, one per setting: on the CPU
//! device at the heuristic width, at the forced widths 4, 8 and 16 where the host has them,
//! and scalar; on the Gen device with every kernel built at each of its SIMD widths 8, 16
//! and 32 (`intel_reqd_sub_group_size`, through `-DSG=n`). Every run checks its results
//! against a host reference, with local sizes that leave partial packets.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_GENERATED_TEST_CHILD";

/// In the parent: runs test `name` in one child per setting and returns true. In a child:
/// returns false (the test body runs there).
fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], true))
}

/// Per build: the device, the build options and the local sizes to run with. The CPU
/// device builds once (its width comes from the child's environment); the Gen device
/// builds once per SIMD width, with local sizes of partial and whole hardware threads.
fn builds() -> Vec<(TestEnv, String, Vec<Option<usize>>)> {
    let mode = vectorizer_mode(CHILD);
    if mode == "gen" {
        let dev = device(DeviceKind::Gpu).expect("the Gen device");
        [8, 16, 32]
            .into_iter()
            .map(|sg| (dev.env(), format!("-cl-std=CL3.0 -DSG={sg}"), vec![Some(3), Some(sg), Some(64), None]))
            .collect()
    } else {
        let dev = device(DeviceKind::Cpu).expect("the CPU device");
        vec![(dev.env(), "-cl-std=CL3.0".to_string(), vec![Some(1), Some(3), Some(17), Some(64), None])]
    }
}

/// Ahead of every source: `KATTR` fixes the sub-group size (the Gen SIMD width) when the
/// build defines `SG`.
const PRELUDE: &str = KATTR_PRELUDE;

/// Runs the one-argument kernel `name` of `src` over `n` work-items in every build and
/// local size and checks `out[g] == want(g)`.
fn check_each_item<T>(src: &str, name: &str, n: usize, want: impl Fn(usize) -> T)
where
    T: Pod + PartialEq + std::fmt::Debug + Default,
{
    let src = format!("{PRELUDE}{src}");
    for (env, options, locals) in builds() {
        let program = env.build(&src, &options);
        let k = kernel_of(&program, name);
        for local in locals {
            let l = local.map(|l| [l]);
            let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![T::default(); n]);
            k.set_mem(0, &out);
            env.run(&k, &[n], l.as_ref().map(|l| &l[..]));
            let got: Vec<T> = env.read(&out, n);
            for (g, x) in got.iter().enumerate() {
                assert_eq!(*x, want(g), "{name}: out[{g}] with {options:?}, local size {local:?}");
            }
        }
    }
}

/// A private struct holding a constant array and the address of a local variable: clang
/// copies the array from private constant data (`constinit`) and stores the pointer. Each
/// work-item changes its own copy, in straight-line code and afresh in every loop iteration.
#[test]
fn struct_with_a_constant_array_and_a_pointer() {
    if run_in_every_mode("struct_with_a_constant_array_and_a_pointer") {
        return;
    }
    const SRC: &str = r#"
        struct S { int a[5]; int *q; };
        KATTR __kernel void array_and_pointer(__global int *out) {
            int g = get_global_id(0);
            int x = g * 3;
            struct S d = {{1, 2, 3, 4, 5}, &x};
            d.a[g % 5] += g;
            *d.q += 1;
            out[g] = d.a[0] + d.a[1] * 10 + d.a[2] * 100 + d.a[3] * 1000 + d.a[4] * 10000 + x * 100000;
        }
        KATTR __kernel void fresh_each_iteration(__global int *out) {
            int g = get_global_id(0);
            int x = g;
            int sum = 0;
            for (int i = 0; i < (g & 3) + 2; i++) {
                struct S d = {{1, 2, 3, 4, 5}, &x};
                d.a[(g + i) % 5] += g + i;
                *d.q += d.a[i % 5];
                sum += d.a[0] + d.a[1] * 2 + d.a[2] * 3 + d.a[3] * 4 + d.a[4] * 5;
            }
            out[g] = sum * 1000 + x;
        }"#;
    let n = 301;
    check_each_item(SRC, "array_and_pointer", n, |g| {
        let mut a = [1i32, 2, 3, 4, 5];
        a[g % 5] += g as i32;
        let x = 3 * g as i32 + 1;
        a[0] + a[1] * 10 + a[2] * 100 + a[3] * 1000 + a[4] * 10000 + x * 100000
    });
    check_each_item(SRC, "fresh_each_iteration", n, |g| {
        let (mut x, mut sum) = (g as i32, 0i32);
        for i in 0..(g & 3) + 2 {
            let mut a = [1i32, 2, 3, 4, 5];
            a[(g + i) % 5] += (g + i) as i32;
            x += a[i % 5];
            sum += a[0] + a[1] * 2 + a[2] * 3 + a[3] * 4 + a[4] * 5;
        }
        sum * 1000 + x
    });
}

/// Arrays of unions, some holding pointers to local variables, inside and outside structs
/// whose other members are constant arrays.
#[test]
fn arrays_of_unions_holding_pointers() {
    if run_in_every_mode("arrays_of_unions_holding_pointers") {
        return;
    }
    const SRC: &str = r#"
        union U { long v; int *p; };
        union P { int *p; long v; };
        KATTR __kernel void constant_unions(__global long *out) {
            int g = get_global_id(0);
            int x = g;
            struct { union U u[4]; int *q; } t = {{{1}, {2}, {3}, {4}}, &x};
            t.u[g % 4].v += *t.q;
            *t.q += 7;
            out[g] = t.u[0].v + t.u[1].v * 10 + t.u[2].v * 100 + t.u[3].v * 1000 + x * 100000;
        }
        KATTR __kernel void pointer_unions(__global long *out) {
            int g = get_global_id(0);
            int x = g, y = 2 * g;
            union P us[4] = {{&x}, {&y}, {&x}, {&y}};
            struct { union P u[3]; int b[6]; int *q; } t = {{{&y}, {&x}, {&y}}, {9, 8, 7, 6, 5, 4}, &x};
            t.b[g % 6] += *us[g % 4].p;
            *t.u[1].p += 5;
            *t.q *= 3;
            long s = 0;
            for (int i = 0; i < 6; i++)
                s = s * 100 + t.b[i];
            out[g] = s * 10000 + x * 10 + y;
        }"#;
    let n = 203;
    check_each_item(SRC, "constant_unions", n, |g| {
        let mut u = [1i64, 2, 3, 4];
        u[g % 4] += g as i64;
        let x = g as i64 + 7;
        u[0] + u[1] * 10 + u[2] * 100 + u[3] * 1000 + x * 100000
    });
    check_each_item(SRC, "pointer_unions", n, |g| {
        let (mut x, y) = (g as i64, 2 * g as i64);
        let mut b = [9i64, 8, 7, 6, 5, 4];
        b[g % 6] += if g % 2 == 0 { x } else { y };
        x = (x + 5) * 3;
        let s = b.iter().fold(0i64, |s, &v| s * 100 + v);
        s * 10000 + x * 10 + y
    });
}

/// Nested structs: arrays of structs with constant arrays inside a struct that also holds a
/// pointer and another constant array.
#[test]
fn nested_structs_with_constant_arrays() {
    if run_in_every_mode("nested_structs_with_constant_arrays") {
        return;
    }
    const SRC: &str = r#"
        struct In { int a[3]; char c; };
        struct Out { struct In in[2]; int *p; long z[2]; };
        KATTR __kernel void nested(__global long *out) {
            int g = get_global_id(0);
            int x = g;
            struct Out o = {{{{1, 2, 3}, 'a'}, {{4, 5, 6}, 'b'}}, &x, {100, 200}};
            o.in[g & 1].a[g % 3] += g;
            o.in[(g >> 1) & 1].c += 1;
            o.z[g & 1] -= *o.p;
            out[g] = o.in[0].a[0] + o.in[0].a[1] * 3 + o.in[0].a[2] * 5 + o.in[1].a[0] * 7
                   + o.in[1].a[1] * 11 + o.in[1].a[2] * 13 + o.in[0].c * 1000 + o.in[1].c * 100000
                   + o.z[0] * 10000000 + o.z[1] * 1000000000;
        }"#;
    let n = 157;
    check_each_item(SRC, "nested", n, |g| {
        let mut a = [[1i64, 2, 3], [4, 5, 6]];
        let mut c = [b'a' as i64, b'b' as i64];
        let mut z = [100i64, 200];
        a[g & 1][g % 3] += g as i64;
        c[(g >> 1) & 1] += 1;
        z[g & 1] -= g as i64;
        a[0][0]
            + a[0][1] * 3
            + a[0][2] * 5
            + a[1][0] * 7
            + a[1][1] * 11
            + a[1][2] * 13
            + c[0] * 1000
            + c[1] * 100000
            + z[0] * 10000000
            + z[1] * 1000000000
    });
}

/// A struct with `volatile` members around a `long16`, copied whole from an initialised
/// one: clang gives a volatile member its own variable but keeps the struct's alignment (128)
/// on its accesses, which that variable does not have.
#[test]
fn volatile_members_and_a_long16_copied_whole() {
    if run_in_every_mode("volatile_members_and_a_long16_copied_whole") {
        return;
    }
    const SRC: &str = r#"
        struct S { volatile int a; long16 v; volatile int b; int c[3]; };
        KATTR __kernel void copied(__global long *out) {
            int g = get_global_id(0);
            struct S s0 = {1, (long16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), 2, {3, 4, 5}};
            s0.a = g;
            struct S s1 = s0;
            s1.v += (long16)(g);
            s1.b += s1.a;
            s1.c[g % 3] = s1.b * 7;
            out[g] = s1.v.s0 + s1.v.s7 * 3 + s1.v.sf * 5 + s1.a * 100 + s1.b * 1000
                   + s1.c[0] * 10000 + s1.c[1] * 100000 + s1.c[2] * 1000000;
        }
        struct T { volatile char k; long16 v; volatile short m; long16 w; };
        KATTR __kernel void two_vectors(__global long *out) {
            int g = get_global_id(0);
            struct T t0 = {3, (long16)(g), 4, (long16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)};
            t0.k += (char)g;
            struct T t1 = t0;
            t1.w += t1.v;
            t1.m += t1.k;
            out[g] = t1.w.s0 + t1.w.s5 * 7 + t1.w.sf * 11 + t1.m * 1000 + t1.k * 100000;
        }
        struct M { volatile char c; volatile int a; long16 v; volatile short s; volatile int b; };
        KATTR __kernel void mixed(__global long *out) {
            int g = get_global_id(0);
            struct M m0 = {1, 2, (long16)(3), 4, 5};
            m0.c += (char)g;
            m0.a += g;
            m0.s += (short)g;
            m0.b -= g;
            struct M m1 = m0;
            m1.v += (long16)(m1.a);
            out[g] = m1.v.s3 + m1.v.sc * 3 + m1.c * 10 + m1.a * 100 + m1.s * 1000 + m1.b * 10000;
        }"#;
    let n = 211;
    check_each_item(SRC, "copied", n, |g| {
        let g = g as i64;
        let v: Vec<i64> = (1..=16).map(|k| k + g).collect();
        let a = g;
        let b = 2 + a;
        let mut c = [3i64, 4, 5];
        c[(g % 3) as usize] = b * 7;
        v[0] + v[7] * 3 + v[15] * 5 + a * 100 + b * 1000 + c[0] * 10000 + c[1] * 100000 + c[2] * 1000000
    });
    check_each_item(SRC, "two_vectors", n, |g| {
        let k = (3 + g as i64) as i8 as i64;
        let w: Vec<i64> = (0..16).map(|j| j + g as i64).collect();
        let m = (4 + k) as i16 as i64;
        w[0] + w[5] * 7 + w[15] * 11 + m * 1000 + k * 100000
    });
    check_each_item(SRC, "mixed", n, |g| {
        let c = (1 + g as i64) as i8 as i64;
        let a = 2 + g as i64;
        let s = (4 + g as i64) as i16 as i64;
        let b = 5 - g as i64;
        let v = 3 + a;
        v + v * 3 + c * 10 + a * 100 + s * 1000 + b * 10000
    });
}
