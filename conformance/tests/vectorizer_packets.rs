//! The vector packet's memory side on the CPU device, through the loader: members of one
//! array-of-structs element loaded and stored as one span (W consecutive structs) and
//! shuffled, non-temporal (streaming) stores of full aligned packets, and border branches
//! where a packet lies entirely inside, entirely on, or across the border.
//!
//! Each test runs in child processes of this test binary, one per setting: the heuristic
//! width, forced widths 4, 8 and 16 where the host has them, and the vectorizer off. The
//! vectorized settings run with `SOFTCL_STREAMING_STORES=all`, so that every full aligned
//! packet stores with a non-temporal store whatever the size of the ND-range. Every run
//! checks its results against a host reference; partial packets come from local sizes 1, 3
//! and 17 and global sizes that are not multiples of the width.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_PACKETS_TEST_CHILD";

/// In the parent: runs test `name` in one child per setting and returns true. In a child:
/// returns false (the test body runs there).
fn run_in_every_mode(name: &str) -> bool {
    let vector = [("SOFTCL_VECTORIZER_REPORT", "1"), ("SOFTCL_STREAMING_STORES", "all")];
    run_in_modes(CHILD, name, &every_width_modes(&vector, false))
}

fn mode() -> String {
    vectorizer_mode(CHILD)
}

/// Builds `src` and checks that each kernel of `kernels` is vectorized (at the forced width
/// in the `wN` settings) with [`build_reported`].
fn build(env: &TestEnv, src: &str, kernels: &[&str]) -> Program {
    build_reported(env, src, "-cl-std=CL3.0", &mode(), kernels, &[])
}

/// The local sizes each 1D test runs with (None: the driver's choice).
const LOCALS: [Option<usize>; 5] = [Some(1), Some(3), Some(17), Some(64), None];

#[test]
fn struct_members_load_and_store_as_one_span() {
    if run_in_every_mode("struct_members_load_and_store_as_one_span") {
        return;
    }
    const SRC: &str = r#"
        typedef struct { float4 pos; float4 vel; } Particle;
        __kernel void particles(float dt, float4 gravity, __global const Particle *restrict in,
                                __global Particle *restrict out) {
            size_t i = get_global_id(0);
            Particle p = in[i];
            p.vel = p.vel * 0.5f + gravity * dt;
            p.pos = p.pos + p.vel * dt;
            if (p.pos.y < 0.0f) {
                p.pos.y = -p.pos.y;
                p.vel.y = -0.5f * p.vel.y;
            }
            out[i] = p;
        }
        typedef struct { float a; float4 b; float c; } Gap;
        // Members a and c of each struct: a span with b's slots off, which must keep their
        // old contents.
        __kernel void gap(__global const Gap *in, __global Gap *out) {
            size_t i = get_global_id(0);
            float a = in[i].a, c = in[i].c;
            out[i].c = a * 2.0f;
            out[i].a = c + 1.0f;
        }
        typedef struct { float x, y, z; } P3;
        // Run with `in` and `out` the same buffer: the load of in[i].x reads the x just
        // stored, so the stores before it must not be merged past it.
        __kernel void p3(__global const P3 *in, __global P3 *out) {
            size_t i = get_global_id(0);
            out[i].x = in[i].y + in[i].z;
            float x = out[i].x;
            out[i].y = x * 3.0f;
            out[i].z = in[i].x;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["particles", "gap", "p3"]);
    let particles = kernel_of(&p, "particles");
    let gap = kernel_of(&p, "gap");
    let p3 = kernel_of(&p, "p3");
    let n = 301usize;
    let dt = 0.25f32;
    let gravity = [0.0f32, -4.0, 0.0, 0.0];
    let mut data = Vec::with_capacity(8 * n);
    for i in 0..n {
        let f = i as f32;
        data.extend([f * 0.5 - 7.0, (i % 5) as f32 - 1.5, f * 0.25, 1.0]);
        data.extend([(i % 7) as f32 - 3.0, (i % 3) as f32 - 1.0, 0.5, 0.0]);
    }
    // Gap: a at float 0, b at 4..8 (float4 alignment), c at 8, 12 floats (48 bytes) each.
    const GAP: usize = 12;
    let gap_in: Vec<f32> = (0..GAP * n).map(|k| k as f32 * 0.5 - 9.0).collect();
    let p3_in: Vec<f32> = (0..3 * n).map(|k| ((k * 7) % 31) as f32 - 15.0).collect();
    for local in LOCALS {
        let l = local.map(|l| [l]);
        let l = l.as_ref().map(|l| &l[..]);
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &data);
        let bout = env.buffer_from(CL_MEM_READ_WRITE, &vec![-77.0f32; 8 * n + 8]);
        particles.set_arg(0, &dt);
        particles.set_arg(1, &gravity);
        particles.set_mem(2, &bin);
        particles.set_mem(3, &bout);
        env.run(&particles, &[n], l);
        let out: Vec<f32> = env.read(&bout, 8 * n + 8);
        for i in 0..n {
            let s = &data[8 * i..8 * i + 8];
            let mut want = [0.0f32; 8];
            for c in 0..4 {
                want[4 + c] = s[4 + c] * 0.5 + gravity[c] * dt;
                want[c] = s[c] + want[4 + c] * dt;
            }
            if want[1] < 0.0 {
                want[1] = -want[1];
                want[5] *= -0.5;
            }
            assert_eq!(&out[8 * i..8 * i + 8], &want, "particle {i} with local size {local:?}");
        }
        assert_eq!(&out[8 * n..], &[-77.0f32; 8], "past the last particle, local size {local:?}");

        let bin = env.buffer_from(CL_MEM_READ_ONLY, &gap_in);
        let bout = env.buffer_from(CL_MEM_READ_WRITE, &vec![-5.0f32; GAP * n]);
        gap.set_mem(0, &bin);
        gap.set_mem(1, &bout);
        env.run(&gap, &[n], l);
        let out: Vec<f32> = env.read(&bout, GAP * n);
        for i in 0..n {
            let s = &gap_in[GAP * i..GAP * i + GAP];
            let o = &out[GAP * i..GAP * i + GAP];
            assert_eq!(o[8], s[0] * 2.0, "gap[{i}].c with local size {local:?}");
            assert_eq!(o[0], s[8] + 1.0, "gap[{i}].a with local size {local:?}");
            for (k, &x) in o.iter().enumerate() {
                if k != 0 && k != 8 {
                    assert_eq!(x, -5.0, "gap[{i}] float {k} (not a or c) with local size {local:?}");
                }
            }
        }

        let both = env.buffer_from(CL_MEM_READ_WRITE, &p3_in);
        p3.set_mem(0, &both);
        p3.set_mem(1, &both);
        env.run(&p3, &[n], l);
        let out: Vec<f32> = env.read(&both, 3 * n);
        for i in 0..n {
            let s = &p3_in[3 * i..3 * i + 3];
            let x = s[1] + s[2];
            assert_eq!(&out[3 * i..3 * i + 3], &[x, x * 3.0, x], "p3[{i}] with local size {local:?}");
        }
    }
}

#[test]
fn streaming_stores_in_full_partial_and_unaligned_packets() {
    if run_in_every_mode("streaming_stores_in_full_partial_and_unaligned_packets") {
        return;
    }
    const SRC: &str = r#"
        __kernel void add(__global const float *restrict a, __global const float *restrict b,
                          __global float *restrict c, int shift) {
            size_t i = get_global_id(0);
            c[i + shift] = a[i] + b[i];
        }
        // Stored, then read by another work-item of the group after a barrier (the same
        // thread runs the whole group: its own non-temporal stores must be visible). The
        // kernel reads the buffer through a second argument bound to it, as a store into a
        // buffer read through the same argument does not stream.
        __kernel void neighbour(__global const float *restrict a, __global float *tmp,
                                __global float *restrict out, __global const float *tmp_again) {
            size_t i = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
            size_t g = i - l;
            tmp[i] = a[i] * 2.0f;
            barrier(CLK_GLOBAL_MEM_FENCE);
            out[i] = tmp_again[g + (l + 1) % n] + 1.0f;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["add", "neighbour"]);
    let add = kernel_of(&p, "add");
    let neighbour = kernel_of(&p, "neighbour");
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.75).collect();
    let b: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    for local in LOCALS {
        let l = local.map(|l| [l]);
        let l = l.as_ref().map(|l| &l[..]);
        for shift in [0i32, 1, 3] {
            let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
            let bb = env.buffer_from(CL_MEM_READ_ONLY, &b);
            let bc = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1.0f32; n + 8]);
            add.set_mem(0, &ba);
            add.set_mem(1, &bb);
            add.set_mem(2, &bc);
            add.set_arg(3, &shift);
            env.run(&add, &[n], l);
            let c: Vec<f32> = env.read(&bc, n + 8);
            for (k, &x) in c.iter().enumerate() {
                let want = if k >= shift as usize && k < n + shift as usize {
                    a[k - shift as usize] + b[k - shift as usize]
                } else {
                    -1.0
                };
                assert_eq!(x, want, "c[{k}] with shift {shift}, local size {local:?}");
            }
        }
    }
    for local in [1usize, 5, 17, 40] {
        let m = 680usize; // a multiple of every local size above
        let ba = env.buffer_from(CL_MEM_READ_ONLY, &a[..m]);
        let bt = env.buffer(CL_MEM_READ_WRITE, m * 4);
        let bo = env.buffer(CL_MEM_WRITE_ONLY, m * 4);
        neighbour.set_mem(0, &ba);
        neighbour.set_mem(1, &bt);
        neighbour.set_mem(2, &bo);
        neighbour.set_mem(3, &bt);
        env.run(&neighbour, &[m], Some(&[local]));
        let out: Vec<f32> = env.read(&bo, m);
        for (i, &x) in out.iter().enumerate() {
            let g = i - i % local;
            let j = g + (i % local + 1) % local;
            assert_eq!(x, a[j] * 2.0 + 1.0, "out[{i}] with local size {local}");
        }
    }
}

#[test]
fn border_packets_inside_on_and_across_the_border() {
    if run_in_every_mode("border_packets_inside_on_and_across_the_border") {
        return;
    }
    const SRC: &str = r#"
        __kernel void stencil(int w, int h, __global const float *restrict in, __global float *restrict out) {
            int x = get_global_id(0), y = get_global_id(1);
            int i = y * w + x;
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
                out[i] = in[i];
                return;
            }
            out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["stencil"]);
    let stencil = kernel_of(&p, "stencil");
    // Widths: a multiple of 16 (packets inside or with one border lane at either end), one
    // more (a packet of one lane per row), and one that leaves 3 lanes in the last packet.
    for (w, h) in [(64usize, 9usize), (65, 5), (35, 4)] {
        let input: Vec<f32> = (0..w * h).map(|i| ((i * 13) % 17) as f32 * 0.25 - 1.0).collect();
        let mut locals: Vec<Option<[usize; 2]>> = vec![None, Some([1, 1])];
        for lx in [3usize, 16, 17] {
            if w % lx == 0 {
                locals.push(Some([lx, 1]));
            }
        }
        locals.push(Some([w, 1]));
        if h % 2 == 0 || h % 3 == 0 {
            let ly = if h % 2 == 0 { 2 } else { 3 };
            locals.push(Some([w, ly]));
        }
        for local in locals {
            let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
            let bo = env.buffer_from(CL_MEM_READ_WRITE, &vec![-3.0f32; w * h]);
            stencil.set_arg(0, &(w as i32));
            stencil.set_arg(1, &(h as i32));
            stencil.set_mem(2, &bi);
            stencil.set_mem(3, &bo);
            env.run(&stencil, &[w, h], local.as_ref().map(|l| &l[..]));
            let out: Vec<f32> = env.read(&bo, w * h);
            for y in 0..h {
                for x in 0..w {
                    let i = y * w + x;
                    let want = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                        input[i]
                    } else {
                        0.5 * input[i] + 0.125 * (input[i - 1] + input[i + 1] + input[i - w] + input[i + w])
                    };
                    assert_eq!(out[i], want, "out[{x}, {y}] of {w}x{h} with local size {local:?}");
                }
            }
        }
    }
}

#[test]
fn gathers_and_scatters_that_turn_out_consecutive() {
    if run_in_every_mode("gathers_and_scatters_that_turn_out_consecutive") {
        return;
    }
    // A column reflected at the border (OpenCV's BORDER_REFLECT_101): a varying index to the
    // analysis, consecutive in packets away from the border (one vector access), descending
    // past it (a gather and a scatter, two work-items writing the same byte the same value).
    const SRC: &str = r#"
        __kernel void reflect(__global const uchar *src, __global uchar *dst, int cols) {
            int x = get_global_id(0);
            int c = min(max(x, -x), 2 * (cols - 1) - x);
            dst[c] = (uchar)(src[c] * 3 + 1);
        }
        __kernel void reflect_int(__global const int *src, __global int *dst, int cols) {
            int x = get_global_id(0);
            int c = min(max(x, -x), 2 * (cols - 1) - x);
            dst[c] = src[c] * 3 + 7;
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    let p = build(&env, SRC, &["reflect", "reflect_int"]);
    for cols in [64usize, 61, 17] {
        let global = 2 * cols - 1;
        let src: Vec<u8> = (0..cols).map(|i| (i * 37 % 251) as u8).collect();
        let srci: Vec<i32> = (0..cols as i32).map(|i| i * 1001 - 40_000).collect();
        for local in LOCALS {
            let l = local.map(|l| [l]);
            let l = l.as_ref().map(|l| &l[..]);
            if local.is_some_and(|l| global % l != 0) {
                continue;
            }
            let k = kernel_of(&p, "reflect");
            let (bs, bd) =
                (env.buffer_from(CL_MEM_READ_ONLY, &src), env.buffer_from(CL_MEM_READ_WRITE, &vec![9u8; cols]));
            k.set_mem(0, &bs);
            k.set_mem(1, &bd);
            k.set_arg(2, &(cols as i32));
            env.run(&k, &[global], l);
            let got: Vec<u8> = env.read(&bd, cols);
            for (c, &v) in got.iter().enumerate() {
                assert_eq!(v, src[c].wrapping_mul(3).wrapping_add(1), "reflect dst[{c}], cols {cols}, local {local:?}");
            }
            let k = kernel_of(&p, "reflect_int");
            let (bs, bd) =
                (env.buffer_from(CL_MEM_READ_ONLY, &srci), env.buffer_from(CL_MEM_READ_WRITE, &vec![9i32; cols]));
            k.set_mem(0, &bs);
            k.set_mem(1, &bd);
            k.set_arg(2, &(cols as i32));
            env.run(&k, &[global], l);
            let got: Vec<i32> = env.read(&bd, cols);
            for (c, &v) in got.iter().enumerate() {
                assert_eq!(v, srci[c] * 3 + 7, "reflect_int dst[{c}], cols {cols}, local {local:?}");
            }
        }
    }
}
