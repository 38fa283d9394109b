//! Kernels of many shapes, each run on both devices and checked against a Rust reference.

use softcl_conformance::*;
use std::ptr;

fn arg_mem(k: &Kernel, index: cl_uint, mem: &Mem) {
    k.set_mem(index, mem);
}

#[test]
fn vector_add_float() {
    const SRC: &str = r#"
        __kernel void vadd(__global const float* a, __global const float* b,
                           __global float* c) {
            size_t i = get_global_id(0);
            c[i] = a[i] + b[i];
        }"#;
    let n = 4096;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| (n - i) as f32 * 0.25).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "vadd");
        let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
        let bb = env.buffer_from(CL_MEM_READ_ONLY, &b);
        let bc = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        arg_mem(&k, 0, &ba);
        arg_mem(&k, 1, &bb);
        arg_mem(&k, 2, &bc);
        env.run(&k, &[n], Some(&[64]));
        let c: Vec<f32> = env.read(&bc, n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "c[{i}]");
        }
    });
}

#[test]
fn vector_add_int_with_bounds_check() {
    const SRC: &str = r#"
        __kernel void vadd_int(__global const int* a, __global const int* b,
                               __global int* c, int n) {
            int i = get_global_id(0);
            if (i < n)
                c[i] = a[i] + b[i];
        }"#;
    let n = 1000usize;
    let global = 1024usize;
    let a: Vec<i32> = (0..global as i32).map(|i| i * 3 - 700).collect();
    let b: Vec<i32> = (0..global as i32).map(|i| 5000 - i * i).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "vadd_int");
        let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
        let bb = env.buffer_from(CL_MEM_READ_ONLY, &b);
        let bc = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1i32; global]);
        arg_mem(&k, 0, &ba);
        arg_mem(&k, 1, &bb);
        arg_mem(&k, 2, &bc);
        k.set_arg(3, &(n as cl_int));
        env.run(&k, &[global], Some(&[128]));
        let c: Vec<i32> = env.read(&bc, global);
        for i in 0..global {
            let want = if i < n { a[i] + b[i] } else { -1 };
            assert_eq!(c[i], want, "c[{i}]");
        }
    });
}

#[test]
fn saxpy_scalar_by_value() {
    const SRC: &str = r#"
        __kernel void saxpy(float a, __global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            y[i] = a * x[i] + y[i];
        }"#;
    let n = 10000;
    let alpha = 2.5f32;
    // Integer-valued inputs: a*x+y is exact whether or not the compiler fuses it.
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 0.5).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "saxpy");
        let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let by = env.buffer_from(CL_MEM_READ_WRITE, &y);
        k.set_arg(0, &alpha);
        arg_mem(&k, 1, &bx);
        arg_mem(&k, 2, &by);
        env.run(&k, &[n], None);
        let out: Vec<f32> = env.read(&by, n);
        for i in 0..n {
            assert_eq!(out[i], alpha * x[i] + y[i], "y[{i}]");
        }
    });
}

#[test]
fn local_memory_tree_reduction() {
    const SRC: &str = r#"
        __kernel void reduce(__global const float* in, __global float* partial,
                             __local float* scratch) {
            uint lid = get_local_id(0);
            scratch[lid] = in[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
                if (lid < s)
                    scratch[lid] += scratch[lid + s];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (lid == 0)
                partial[get_group_id(0)] = scratch[0];
        }"#;
    let n = 8192usize;
    // Small integers: every partial sum is exact in f32, so the order does not matter.
    let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 31) as f32).collect();
    let total: f32 = input.iter().sum();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "reduce");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        for local in [32usize, 64, 128] {
            let groups = n / local;
            let bpart = env.buffer(CL_MEM_WRITE_ONLY, groups * 4);
            arg_mem(&k, 0, &bin);
            arg_mem(&k, 1, &bpart);
            k.set_local(2, local * 4);
            env.run(&k, &[n], Some(&[local]));
            let partial: Vec<f32> = env.read(&bpart, groups);
            for (g, p) in partial.iter().enumerate() {
                let want: f32 = input[g * local..(g + 1) * local].iter().sum();
                assert_eq!(*p, want, "local {local}, group {g}");
            }
            assert_eq!(partial.iter().sum::<f32>(), total, "local {local}");
        }
    });
}

#[test]
fn matrix_transpose_2d_ndrange() {
    const SRC: &str = r#"
        #define T 16
        __kernel void transpose(__global const float* in, __global float* out,
                                int width, int height) {
            __local float tile[T][T + 1];
            int x = get_global_id(0), y = get_global_id(1);
            int lx = get_local_id(0), ly = get_local_id(1);
            tile[ly][lx] = in[y * width + x];
            barrier(CLK_LOCAL_MEM_FENCE);
            int ox = get_group_id(1) * T + lx;
            int oy = get_group_id(0) * T + ly;
            out[oy * height + ox] = tile[lx][ly];
        }
        __kernel void ids2d(__global uint* out) {
            size_t x = get_global_id(0), y = get_global_id(1);
            size_t i = 4 * (y * get_global_size(0) + x);
            out[i + 0] = (uint)(get_local_id(0) | (get_local_id(1) << 8));
            out[i + 1] = (uint)(get_group_id(0) | (get_group_id(1) << 8));
            out[i + 2] = (uint)(get_local_size(0) | (get_local_size(1) << 8));
            out[i + 3] = (uint)(get_num_groups(0) | (get_num_groups(1) << 8)
                                | (get_work_dim() << 16));
        }"#;
    let (w, h) = (64usize, 48usize);
    let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(SRC, "");
        let k = create_kernel(&program, "transpose").unwrap();
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, w * h * 4);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bout);
        k.set_arg(2, &(w as cl_int));
        k.set_arg(3, &(h as cl_int));
        env.run(&k, &[w, h], Some(&[16, 16]));
        let out: Vec<f32> = env.read(&bout, w * h);
        for r in 0..w {
            for c in 0..h {
                assert_eq!(out[r * h + c], input[c * w + r], "out[{r}][{c}]");
            }
        }

        let ids = create_kernel(&program, "ids2d").unwrap();
        let bids = env.buffer(CL_MEM_WRITE_ONLY, w * h * 16);
        arg_mem(&ids, 0, &bids);
        env.run(&ids, &[w, h], Some(&[16, 16]));
        let got: Vec<u32> = env.read(&bids, w * h * 4);
        for y in 0..h {
            for x in 0..w {
                let i = 4 * (y * w + x);
                let want = [
                    ((x % 16) | ((y % 16) << 8)) as u32,
                    ((x / 16) | ((y / 16) << 8)) as u32,
                    (16 | (16 << 8)) as u32,
                    ((w / 16) | ((h / 16) << 8) | (2 << 16)) as u32,
                ];
                assert_eq!(got[i..i + 4], want, "work-item ({x},{y})");
            }
        }
    });
}

fn collatz_steps(mut n: u64) -> u32 {
    let mut s = 0;
    while n != 1 {
        n = if n & 1 == 1 { 3 * n + 1 } else { n / 2 };
        s += 1;
    }
    s
}

#[test]
fn divergent_loop_collatz() {
    const SRC: &str = r#"
        __kernel void collatz(__global uint* steps, ulong start) {
            size_t gid = get_global_id(0);
            if (gid % 5 == 4) {          /* divergent early exit */
                steps[gid] = 0xFFFFFFFFu;
                return;
            }
            ulong n = start + gid;
            uint s = 0;
            while (n != 1) {             /* divergent trip counts */
                if (n & 1)
                    n = 3 * n + 1;
                else
                    n >>= 1;
                s++;
            }
            steps[gid] = s;
        }"#;
    let n = 4096usize;
    let start = 1u64;
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "collatz");
        let bsteps = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        arg_mem(&k, 0, &bsteps);
        k.set_arg(1, &start);
        env.run(&k, &[n], Some(&[64]));
        let got: Vec<u32> = env.read(&bsteps, n);
        for (i, g) in got.iter().enumerate() {
            let want = if i % 5 == 4 { u32::MAX } else { collatz_steps(start + i as u64) };
            assert_eq!(*g, want, "steps[{i}]");
        }
        // A few known values: 27 takes 111 steps, 97 takes 118.
        assert_eq!(got[26], 111);
        assert_eq!(got[96], 118);
    });
}

#[test]
fn private_array_dynamic_indexing() {
    const SRC: &str = r#"
        __kernel void private_array(__global const int* in, __global int* out) {
            int gid = get_global_id(0);
            int priv[16];
            for (int k = 0; k < 16; k++)
                priv[k] = in[gid] * (k + 1);
            priv[(gid * 7) % 16] += 1000;
            int idx = in[gid] & 15;
            out[gid] = priv[idx] + priv[(idx + 3) & 15];
        }"#;
    let n = 512usize;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 13 + 5) % 97).collect();
    let want: Vec<i32> = (0..n)
        .map(|gid| {
            let mut p: Vec<i32> = (0..16).map(|k| input[gid] * (k + 1)).collect();
            p[(gid * 7) % 16] += 1000;
            let idx = (input[gid] & 15) as usize;
            p[idx] + p[(idx + 3) & 15]
        })
        .collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "private_array");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bout);
        env.run(&k, &[n], Some(&[32]));
        assert_eq!(env.read::<i32>(&bout, n), want);
    });
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Params {
    n: i32,
    scale: f32,
    offset: f32,
    flags: i32,
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Float4([f32; 4]);

#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct Int2([i32; 2]);

#[test]
fn struct_and_vector_arguments_by_value() {
    const SRC: &str = r#"
        typedef struct { int n; float scale; float offset; int flags; } Params;
        __kernel void struct_args(__global const float* in, __global float* out,
                                  Params p, float4 v, int2 pair) {
            int i = get_global_id(0);
            if (i >= p.n)
                return;
            float r = in[i] * p.scale + p.offset
                    + v.x + 2.0f * v.y + 4.0f * v.z + 8.0f * v.w
                    + (float)(pair.x - pair.y);
            if (p.flags & 1)
                r = -r;
            out[i] = r;
        }"#;
    let global = 256usize;
    let params = Params { n: 250, scale: 0.5, offset: 3.0, flags: 1 };
    let v = Float4([1.0, 0.5, 0.25, 0.125]);
    let pair = Int2([10, 3]);
    let input: Vec<f32> = (0..global).map(|i| i as f32).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "struct_args");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer_from(CL_MEM_READ_WRITE, &vec![99.0f32; global]);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bout);
        k.set_arg(2, &params);
        k.set_arg(3, &v);
        k.set_arg(4, &pair);
        env.run(&k, &[global], Some(&[64]));
        let out: Vec<f32> = env.read(&bout, global);
        for (i, o) in out.iter().enumerate() {
            let want = if i < 250 { -(i as f32 * 0.5 + 3.0 + 4.0 + 7.0) } else { 99.0 };
            assert_eq!(*o, want, "out[{i}]");
        }
    });
}

#[test]
fn global_work_offset() {
    const SRC: &str = r#"
        __kernel void offset_ids(__global uint* out) {
            size_t g = get_global_id(0);
            size_t o = get_global_offset(0);
            out[g - o] = (uint)(g | (get_group_id(0) << 16));
            if (g == o)
                out[get_global_size(0)] = (uint)o;
        }"#;
    let (global, offset, local) = (256usize, 1000usize, 64usize);
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "offset_ids");
        let bout = env.buffer(CL_MEM_WRITE_ONLY, (global + 1) * 4);
        arg_mem(&k, 0, &bout);
        let ev = enqueue_nd(env.q(), &k, Some(&[offset]), &[global], Some(&[local]), &[]);
        ev.wait();
        let out: Vec<u32> = env.read(&bout, global + 1);
        for (i, o) in out[..global].iter().enumerate() {
            // get_group_id does not include the offset.
            let want = ((offset + i) | ((i / local) << 16)) as u32;
            assert_eq!(*o, want, "out[{i}]");
        }
        assert_eq!(out[global], offset as u32);
    });
}

#[test]
fn null_local_size_picks_a_dividing_size() {
    const SRC: &str = r#"
        __kernel void fill_ids(__global uint* out, __global uint* lsize) {
            size_t g = get_global_id(0);
            out[g] = (uint)(g * 3);
            if (g == 0)
                lsize[0] = (uint)get_local_size(0);
        }"#;
    let global = 1000usize;
    for_each_device(|d| {
        let env = d.env();
        // No -cl-std: OpenCL C 1.2, whose work-groups are uniform.
        let k = env.kernel(SRC, "", "fill_ids");
        let bout = env.buffer(CL_MEM_WRITE_ONLY, global * 4);
        let bl = env.buffer(CL_MEM_WRITE_ONLY, 4);
        arg_mem(&k, 0, &bout);
        arg_mem(&k, 1, &bl);
        env.run(&k, &[global], None);
        let out: Vec<u32> = env.read(&bout, global);
        for (i, o) in out.iter().enumerate() {
            assert_eq!(*o, (i * 3) as u32, "out[{i}]");
        }
        let lsize = env.read::<u32>(&bl, 1)[0] as usize;
        let max: usize = device_info(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        assert!(
            lsize >= 1 && lsize <= max && global.is_multiple_of(lsize),
            "chosen local size {lsize} (max {max}) does not divide {global}"
        );
    });
}

#[test]
fn non_uniform_ndrange() {
    const SRC: &str = r#"
        __kernel void nonuniform(__global uint* out, __global uint* enq) {
            size_t g = get_global_id(0);
            out[g] = (uint)get_local_size(0);
            if (get_local_id(0) == 0)
                enq[get_group_id(0)] = (uint)(get_enqueued_local_size(0)
                                              | (get_num_groups(0) << 16));
        }"#;
    let (global, local) = (1000usize, 64usize);
    let groups = global.div_ceil(local);
    for_each_device(|d| {
        let support: cl_bool = device_info(d.id, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT);
        assert_eq!(support, CL_TRUE, "CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT");
        let env = d.env();
        // The devices support OpenCL C 1.0-1.2 and 3.0, not 2.0: "-cl-std=CL2.0 will fail to
        // compile the program for any devices [whose] CL_DEVICE_OPENCL_C_ALL_VERSIONS does not
        // include OpenCL C 2.0".
        if is_softcl() {
            let Err(failure) = env.try_build(SRC, "-cl-std=CL2.0") else { panic!("OpenCL C 2.0 is not offered") };
            assert_eq!(failure.code, CL_INVALID_BUILD_OPTIONS, "{}", failure.log);
            assert!(failure.log.contains("OpenCL C 2.0"), "{}", failure.log);
        }
        for std in ["-cl-std=CL3.0"] {
            let k = env.kernel(SRC, std, "nonuniform");
            let bout = env.buffer(CL_MEM_WRITE_ONLY, global * 4);
            let benq = env.buffer(CL_MEM_WRITE_ONLY, groups * 4);
            arg_mem(&k, 0, &bout);
            arg_mem(&k, 1, &benq);
            env.run(&k, &[global], Some(&[local]));
            let out: Vec<u32> = env.read(&bout, global);
            let last = global - (groups - 1) * local;
            for (i, o) in out.iter().enumerate() {
                let want = if i < (groups - 1) * local { local } else { last };
                assert_eq!(*o as usize, want, "{std}: local size of item {i}");
            }
            let enq: Vec<u32> = env.read(&benq, groups);
            for (g, e) in enq.iter().enumerate() {
                assert_eq!(*e as usize, local | groups << 16, "{std}: group {g}");
            }
        }
    });
}

#[test]
fn enqueue_task() {
    const SRC: &str = r#"
        __kernel void task(__global int* out) {
            out[0] = (int)(get_global_size(0) * 100 + get_local_size(0) * 10
                           + get_work_dim());
            out[1] = (int)(get_global_id(0) + get_local_id(0) + get_group_id(0));
        }"#;
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "task");
        let bout = env.buffer_from(CL_MEM_READ_WRITE, &[-1i32, -1]);
        arg_mem(&k, 0, &bout);
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: a valid queue and kernel; ev receives a new event.
        let ev = unsafe {
            cl!(clEnqueueTask(env.q(), k.raw(), 0, ptr::null(), &mut ev));
            Event::from_raw(ev)
        };
        ev.wait();
        assert_eq!(env.read::<i32>(&bout, 2), vec![111, 0]);
    });
}

#[test]
fn atomics_global_and_local() {
    const SRC: &str = r#"
        __kernel void histogram(__global const uint* in, __global uint* bins,
                                __global uint* count) {
            __local uint local_bins[8];
            uint lid = get_local_id(0);
            if (lid < 8)
                local_bins[lid] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            atomic_inc(&local_bins[in[get_global_id(0)] & 7]);
            atomic_add(count, 1u);
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < 8)
                atomic_add(&bins[lid], local_bins[lid]);
        }"#;
    let n = 4096usize;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
    let mut want = [0u32; 8];
    for v in &input {
        want[(v & 7) as usize] += 1;
    }
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "histogram");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bbins = env.buffer_from(CL_MEM_READ_WRITE, &[0u32; 8]);
        let bcount = env.buffer_from(CL_MEM_READ_WRITE, &[0u32]);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bbins);
        arg_mem(&k, 2, &bcount);
        env.run(&k, &[n], Some(&[64]));
        assert_eq!(env.read::<u32>(&bbins, 8), want.to_vec());
        assert_eq!(env.read::<u32>(&bcount, 1), vec![n as u32]);
    });
}

#[test]
fn math_builtins_and_conversions() {
    const SRC: &str = r#"
        __kernel void math(__global const float* in, __global float* out,
                           __global int* iout) {
            size_t i = get_global_id(0);
            float x = in[i];
            out[4 * i + 0] = sqrt(x);
            out[4 * i + 1] = fabs(x - 50.0f);
            out[4 * i + 2] = fmin(x, 10.0f) + fmax(x, 90.0f);
            out[4 * i + 3] = floor(x * 0.5f + 0.25f);
            iout[2 * i + 0] = convert_int_sat(x * 1.0e8f);
            iout[2 * i + 1] = clamp((int)x, 20, 80) + max(3, (int)i) + (int)(i >> 2);
        }"#;
    let n = 100usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "math");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 16);
        let biout = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bout);
        arg_mem(&k, 2, &biout);
        env.run(&k, &[n], None);
        let out: Vec<f32> = env.read(&bout, n * 4);
        let iout: Vec<i32> = env.read(&biout, n * 2);
        for i in 0..n {
            let x = input[i];
            // OpenCL C allows sqrt 3 ulp of error (without -cl-fp32-correctly-rounded-...).
            let ulps = (out[4 * i].to_bits() as i64 - x.sqrt().to_bits() as i64).abs();
            assert!(ulps <= 3, "sqrt({x}) = {} ({ulps} ulp off)", out[4 * i]);
            assert_eq!(out[4 * i + 1], (x - 50.0).abs());
            assert_eq!(out[4 * i + 2], x.min(10.0) + x.max(90.0));
            assert_eq!(out[4 * i + 3], (i / 2) as f32, "floor({x} * 0.5 + 0.25)");
            // Rust's float-to-int `as` saturates like convert_int_sat (rounding to zero).
            assert_eq!(iout[2 * i], (x * 1.0e8) as i32, "convert_int_sat({x}e8)");
            assert_eq!(iout[2 * i + 1], (i as i32).clamp(20, 80) + (i as i32).max(3) + (i as i32 >> 2));
        }
    });
}

#[test]
fn saturating_and_rounding_conversions_in_loops() {
    // In a loop whose body comes after its exit block, clang's conversion is used before it
    // is defined, and llvm-spirv-15 leaves the SaturatedConversion and FPRoundingMode
    // decorations on an id nothing defines: without repair, the conversions truncated and
    // rounded toward zero.
    const SRC: &str = r#"
        __kernel void conv(__global const int *in, __global const float *fin,
                           __global uint *out, __global int *iout) {
            int gid = get_global_id(0), l = get_local_id(0);
            int p0[3] = {0};
            int q0[3] = {0};
            int i1 = in[gid];
            float f = fin[gid];
            for (int k = (l & 3) + 1; k > 0; k--) {
                p0[0] = (int)as_uint(convert_short2_sat((int2)(i1, 0)));
                q0[0] = convert_int_rtp(f);
            }
            out[gid] = p0[0];
            iout[gid] = q0[0];
        }"#;
    let ints: Vec<i32> = vec![
        0,
        1,
        -1,
        32767,
        32768,
        -32768,
        -32769,
        70000,
        -70000,
        i32::MAX,
        i32::MIN,
        12345,
        -12345,
        65535,
        65536,
        100000,
    ];
    let floats: Vec<f32> =
        vec![0.0, 0.25, -0.25, 1.5, -1.5, 2.0, 7.01, -7.99, 100.5, 3.0, -0.75, 0.999, 1e6, -2.5, 41.1, -41.1];
    let n = ints.len();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "conv");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &ints);
        let bfin = env.buffer_from(CL_MEM_READ_ONLY, &floats);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        let biout = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bfin);
        arg_mem(&k, 2, &bout);
        arg_mem(&k, 3, &biout);
        env.run(&k, &[n], Some(&[n]));
        let out: Vec<u32> = env.read(&bout, n);
        let iout: Vec<i32> = env.read(&biout, n);
        for i in 0..n {
            let sat = ints[i].clamp(-32768, 32767) as i16 as u16 as u32;
            assert_eq!(out[i], sat, "convert_short2_sat(({}, 0)) in a loop", ints[i]);
            assert_eq!(iout[i], floats[i].ceil() as i32, "convert_int_rtp({}) in a loop", floats[i]);
        }
    });
}

#[test]
fn a_struct_passed_by_value_is_the_callees_own_copy() {
    // `sa[1]` is a plain copy of `s0`, so clang passes `&s0` for `hs(sa[1], ...)` and relies
    // on the callee to copy its ByVal parameter before writing to it: without that copy the
    // first call's writes reached `s0`, and the second call started from them.
    const SRC: &str = r#"
        typedef struct { uint m0; volatile int m1; long16 m2; short m3; } S;
        static S hs(S v, uint a) {
            int x = (int)a;
            for (int k = 3; k > 0; k--)
                v.m0 ^= clamp((uint)k, min((uint)v.m1, (uint)x), max((uint)v.m1, (uint)x)) * (uint)v.m1;
            return v;
        }
        __kernel void byval(__global const int *in, __global uint *out) {
            int gid = get_global_id(0), l = get_local_id(0);
            S s0 = { .m1 = in[gid], .m2 = (long16)((long)in[gid]), .m3 = (short)100 };
            S sa[2] = { s0, s0 };
            sa[1] = hs(sa[1], (uint)sa[l & 1].m2.s6);
            s0 = hs(s0, 0xFFFFFFFDu);
            out[gid] = s0.m0 * 1000 + sa[1].m0 * 10 + sa[0].m0;
        }"#;
    // The helper on the host: three rounds of m0 ^= clamp(k, min(m1, x), max(m1, x)) * m1.
    fn hs(m0: u32, m1: i32, a: u32) -> u32 {
        let (m, x) = (m1 as u32, a);
        (1..=3u32).rev().fold(m0, |acc, k| acc ^ k.clamp(m.min(x), m.max(x)).wrapping_mul(m))
    }
    let input: Vec<i32> = vec![2, 3, 1, 7, 2, 5, 4, 2];
    let n = input.len();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "byval");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        arg_mem(&k, 0, &bin);
        arg_mem(&k, 1, &bout);
        env.run(&k, &[n], Some(&[n]));
        let out: Vec<u32> = env.read(&bout, n);
        for (i, &m1) in input.iter().enumerate() {
            let sa1 = hs(0, m1, m1 as u32);
            let s0 = hs(0, m1, 0xFFFF_FFFD);
            let want = s0.wrapping_mul(1000).wrapping_add(sa1 * 10);
            assert_eq!(out[i], want, "work-item {i}, m1 = {m1}");
        }
    });
}

/// `SOFTCL_PERF_MAP=1`: each loaded kernel's code gets a line `<start> <size> softcl:<name>`
/// in `/tmp/perf-<pid>.map`, which `perf report` reads to name JIT code, the start the
/// kernel's entry and the size its function's in the object file.
#[test]
fn perf_map_names_each_kernels_code() {
    const CHILD: &str = "SOFTCL_PERF_MAP_TEST_CHILD";
    if run_in_modes(
        CHILD,
        "perf_map_names_each_kernels_code",
        &[("perf-map", vec![("SOFTCL_PERF_MAP", "1"), ("SOFTCL_CACHE", "0")])],
    ) {
        return;
    }
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let _ = std::fs::remove_file(&path);
    for_each_device(|d| {
        let env = d.env();
        let p = env.build(
            "__kernel void perf_map_first(__global int *a) { a[get_global_id(0)] += 1; }
             __kernel void perf_map_second(__global float *a) { a[get_global_id(0)] *= 2.0f; }",
            "",
        );
        let k = kernel_of(&p, "perf_map_second");
        let b = env.buffer_from(CL_MEM_READ_WRITE, &[1.0f32; 64]);
        k.set_mem(0, &b);
        env.run(&k, &[64], None);
        assert_eq!(env.read::<f32>(&b, 64), vec![2.0f32; 64], "{}", d.name);
    });
    let map = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let _ = std::fs::remove_file(&path);
    for name in ["perf_map_first", "perf_map_second"] {
        let line = map.lines().find(|l| l.ends_with(&format!(" softcl:{name}"))).unwrap_or_else(|| panic!("{map}"));
        let f: Vec<&str> = line.split(' ').collect();
        let (start, size) = (u64::from_str_radix(f[0], 16), u64::from_str_radix(f[1], 16));
        assert!(start.is_ok_and(|s| s > 0) && size.is_ok_and(|s| s > 16), "{line}");
    }
}
