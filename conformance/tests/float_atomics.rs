//! cl_ext_float_atomics through the loader: `atomic_fetch_add`, `_sub`, `_min` and `_max` of
//! `atomic_float` and `atomic_double` in `__global` and `__local` memory, many work-items on
//! one location, in every vectorizer mode of the CPU device and on the Gen device; the
//! extension, its features and its capability queries.
//!
//! The values are small integers, so that every order of the additions gives the same sum;
//! a NaN among the operands of min and max loses to the numbers (`fmin` / `fmax`).

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_FLOAT_ATOMICS_TEST_CHILD";

const SRC: &str = r#"
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    #if !defined(cl_ext_float_atomics) || !defined(__opencl_c_ext_fp32_global_atomic_add) \
        || !defined(__opencl_c_ext_fp64_local_atomic_min_max)
    #error cl_ext_float_atomics and its features are not defined
    #endif
    kernel void fa(global atomic_float *g, global atomic_double *gd, global float *own,
                   global float *groups, global const float *in) {
        local atomic_float l[3];
        local atomic_double ld;
        int i = get_global_id(0), lid = get_local_id(0), grp = get_group_id(0);
        if (lid == 0) {
            atomic_init(&l[0], 0.0f);
            atomic_init(&l[1], INFINITY);
            atomic_init(&l[2], -INFINITY);
            atomic_init(&ld, 0.0);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float x = in[i];
        float m = (i % 37 == 5) ? NAN : x;
        atomic_fetch_add(&g[0], x);
        atomic_fetch_min(&g[1], m);
        atomic_fetch_max_explicit(&g[2], m, memory_order_relaxed, memory_scope_device);
        atomic_fetch_add_explicit(&l[0], x, memory_order_relaxed, memory_scope_work_group);
        atomic_fetch_min(&l[1], m);
        atomic_fetch_max(&l[2], m);
        atomic_fetch_add(&gd[0], (double)x * 0.5);
        atomic_fetch_min(&gd[1], (double)m);
        atomic_fetch_max(&gd[2], (double)m);
        atomic_fetch_sub(&ld, (double)x);
        // The work-item's own location: the value before.
        own[i] = atomic_fetch_sub((global atomic_float *)&own[i], 2.5f) + 100.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            groups[4 * grp] = atomic_load(&l[0]);
            groups[4 * grp + 1] = atomic_load(&l[1]);
            groups[4 * grp + 2] = atomic_load(&l[2]);
            groups[4 * grp + 3] = (float)atomic_load(&ld);
        }
    }
"#;

/// Every float atomic against the host.
#[test]
fn float_atomics_of_many_work_items_match_the_host() {
    if run_in_modes(CHILD, "float_atomics_of_many_work_items_match_the_host", &every_width_modes(&[], true)) {
        return;
    }
    let dev = if vectorizer_mode(CHILD) == "gen" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    let env = device(dev).expect("the device").env();
    let k = kernel_of(&env.build(SRC, "-cl-std=CL3.0"), "fa");
    for (n, local) in [(256usize, 64usize), (100, 25), (48, 16)] {
        let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 201) as f32 - 100.0).collect();
        let g = env.buffer_from(CL_MEM_READ_WRITE, &[0.0f32, f32::INFINITY, f32::NEG_INFINITY]);
        let gd = env.buffer_from(CL_MEM_READ_WRITE, &[0.0f64, f64::INFINITY, f64::NEG_INFINITY]);
        let own_init: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let own = env.buffer_from(CL_MEM_READ_WRITE, &own_init);
        let groups = env.buffer_from(CL_MEM_READ_WRITE, &vec![0.0f32; 4 * (n / local)]);
        let inb = env.buffer_from(CL_MEM_READ_ONLY, &input);
        for (a, b) in [&g, &gd, &own, &groups, &inb].into_iter().enumerate() {
            k.set_mem(a as cl_uint, b);
        }
        env.run(&k, &[n], Some(&[local]));
        let what = format!("n {n} local {local} ({})", vectorizer_mode(CHILD));
        let numbers = |r: std::ops::Range<usize>| r.filter(|i| i % 37 != 5).map(|i| input[i]);
        let min = |r: std::ops::Range<usize>| numbers(r).fold(f32::INFINITY, f32::min);
        let max = |r: std::ops::Range<usize>| numbers(r).fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = input.iter().sum();
        assert_eq!(env.read::<f32>(&g, 3), vec![sum, min(0..n), max(0..n)], "global floats, {what}");
        let d: Vec<f64> = env.read(&gd, 3);
        assert_eq!(d, vec![f64::from(sum) * 0.5, f64::from(min(0..n)), f64::from(max(0..n))], "global doubles, {what}");
        let own_got: Vec<f32> = env.read(&own, n);
        let own_want: Vec<f32> = (0..n).map(|i| i as f32 + 100.0).collect();
        assert_eq!(own_got, own_want, "the old values of the own locations, {what}");
        let got: Vec<f32> = env.read(&groups, 4 * (n / local));
        for w in 0..n / local {
            let r = w * local..(w + 1) * local;
            let s: f32 = input[r.clone()].iter().sum();
            assert_eq!(got[4 * w..4 * w + 4], [s, min(r.clone()), max(r), -s], "work-group {w}, {what}");
        }
    }
}

/// The extension, its OpenCL C features and CL_DEVICE_{SINGLE,DOUBLE,HALF}_FP_ATOMIC_CAPABILITIES_EXT.
#[test]
fn float_atomic_capabilities_are_reported() {
    for_each_device(|d| {
        let ext = device_info_string(d.id, CL_DEVICE_EXTENSIONS);
        assert!(ext.split(' ').any(|e| e == "cl_ext_float_atomics"), "{ext}");
        // Global and local load/store, add, min/max (bits 0-2 and 16-18); no fp16.
        let all = 0b111u64 | (0b111 << 16);
        for (param, want) in [(0x4231u32, all), (0x4232, all), (0x4233, 0)] {
            let caps: u64 = device_info(d.id, param);
            assert_eq!(caps, want, "query {param:#x} on {}", d.kind);
        }
    });
}
