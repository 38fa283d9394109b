//! Kernel launches back to back and the work-group size picked for a NULL local size: many
//! small launches in a row each run once, in order, with their own argument values; profiling
//! intervals of an in-order queue never overlap; callbacks fire however a command is run (by
//! the queue's worker or by a thread waiting in clFinish); a prime global size runs correctly
//! with a NULL local size, in non-uniform work-groups for an OpenCL C 3.0 program and in
//! uniform ones for OpenCL C 1.2.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KERNELS: &str = r#"
// Launch i writes slot i (one work-item) or the i-th row of `width` slots.
kernel void put(global int *out, int i, int width) {
    size_t g = get_global_id(0);
    if (g < (size_t)width)
        out[i * width + g] = i * 7 + (int)g + 1;
}
// Order-sensitive: the final value depends on the order of the launches.
kernel void fold(global uint *acc, uint i) {
    if (get_global_id(0) == 0)
        acc[0] = acc[0] * 31u + i;
}
"#;

fn run_batch(env: &TestEnv, launches: usize, width: usize, finish_every: usize) {
    let put = create_kernel(&env.build(KERNELS, ""), "put").unwrap();
    let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; launches * width]);
    put.set_mem(0, &out);
    put.set_arg(2, &(width as cl_int));
    for i in 0..launches {
        // The argument value is captured at enqueue time: later clSetKernelArg calls do not
        // change launches already enqueued.
        put.set_arg(1, &(i as cl_int));
        // SAFETY: a valid queue and kernel; one dimension; NULL local size; no events.
        unsafe {
            cl!(clEnqueueNDRangeKernel(
                env.q(),
                put.raw(),
                1,
                ptr::null(),
                &width,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut()
            ))
        };
        if finish_every > 0 && i % finish_every == finish_every - 1 {
            env.finish();
        }
    }
    env.finish();
    let got = env.read::<i32>(&out, launches * width);
    for i in 0..launches {
        for g in 0..width {
            assert_eq!(got[i * width + g], (i * 7 + g + 1) as i32, "launch {i}, work-item {g} of {width}");
        }
    }
}

#[test]
fn a_thousand_back_to_back_launches_each_write_their_value() {
    for_each_device(|d| {
        let env = d.env();
        run_batch(&env, 1000, 1, 0);
        // Some finished one by one (run by the thread in clFinish), some in batches.
        run_batch(&env, 300, 1, 1);
        run_batch(&env, 300, 1, 7);
        // Wider launches: several work-groups, run on the device's threads.
        run_batch(&env, 200, 4096, 0);
        run_batch(&env, 100, 1021, 3);
    });
}

#[test]
fn back_to_back_launches_run_in_order() {
    for_each_device(|d| {
        let env = d.env();
        let fold = create_kernel(&env.build(KERNELS, ""), "fold").unwrap();
        let acc = env.buffer_from(CL_MEM_READ_WRITE, &[7u32]);
        fold.set_mem(0, &acc);
        let mut expected = 7u32;
        for i in 0..1500u32 {
            fold.set_arg(1, &i);
            let global = if i % 3 == 0 { 64 } else { 1 };
            drop(env.enqueue(&fold, &[global], None));
            expected = expected.wrapping_mul(31).wrapping_add(i);
            if i % 250 == 249 {
                env.finish();
            }
        }
        env.finish();
        assert_eq!(env.read::<u32>(&acc, 1), vec![expected]);
    });
}

#[test]
fn profiling_intervals_of_an_in_order_queue_do_not_overlap() {
    for_each_device(|d| {
        let env = d.env(); // profiling queue
        let put = create_kernel(&env.build(KERNELS, ""), "put").unwrap();
        let width = 64usize;
        let launches = 400usize;
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; launches * width]);
        put.set_mem(0, &out);
        put.set_arg(2, &(width as cl_int));
        let mut events = Vec::new();
        for i in 0..launches {
            put.set_arg(1, &(i as cl_int));
            events.push(env.enqueue(&put, &[width], None));
            match i % 5 {
                0 => env.finish(),
                1 => events[i].wait(),
                _ => {}
            }
        }
        env.finish();
        let mut prev_end = 0;
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.status(), CL_COMPLETE);
            let [queued, submit, start, end] = e.profile();
            assert!(queued <= submit && submit <= start && start <= end, "launch {i}: {queued} {submit} {start} {end}");
            assert!(start >= prev_end, "launch {i} started at {start}, before launch {} ended at {prev_end}", i - 1);
            prev_end = end;
        }
        let got = env.read::<i32>(&out, launches * width);
        assert!(got.iter().enumerate().all(|(k, &v)| v == ((k / width) * 7 + k % width + 1) as i32));
    });
}

#[test]
fn kernels_with_large_private_arrays_run_while_the_application_waits() {
    // 16 KiB of private memory per work-item: such kernels run on the queue's worker, never on
    // the thread waiting in clFinish (whose stack size SoftCL does not know).
    const BIG: &str = r#"
    kernel void big(global int *out, int i) {
        int a[4096];
        for (int k = 0; k < 4096; k++)
            a[k] = k * i + (int)get_global_id(0);
        out[i * 4 + get_global_id(0)] = a[(i * 7) % 4096] + a[4095];
    }
    "#;
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(BIG, "", "big");
        if is_softcl() {
            let private: cl_ulong = kernel_wg_info(k.raw(), env.dev(), CL_KERNEL_PRIVATE_MEM_SIZE);
            assert!(private > 8192, "CL_KERNEL_PRIVATE_MEM_SIZE {private}: the test needs more than 8 KiB");
        }
        let launches = 40usize;
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; launches * 4]);
        k.set_mem(0, &out);
        for i in 0..launches {
            k.set_arg(1, &(i as cl_int));
            drop(env.enqueue(&k, &[4], None));
            if i % 2 == 0 {
                env.finish();
            }
        }
        env.finish();
        let got = env.read::<i32>(&out, launches * 4);
        for i in 0..launches {
            for g in 0..4 {
                let expected = ((i * 7) % 4096 * i + g + 4095 * i + g) as i32;
                assert_eq!(got[i * 4 + g], expected, "launch {i}, work-item {g}");
            }
        }
    });
}

extern "C" fn count_complete(_event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: user_data is an Arc<AtomicUsize> leaked by the test, one reference per
    // callback registered; the callback runs once and takes that reference back.
    let counter = unsafe { Arc::from_raw(user_data.cast::<AtomicUsize>().cast_const()) };
    if status == CL_COMPLETE {
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn callbacks_fire_for_every_launch() {
    for_each_device(|d| {
        let env = d.env();
        let put = create_kernel(&env.build(KERNELS, ""), "put").unwrap();
        let launches = 300usize;
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; launches]);
        put.set_mem(0, &out);
        put.set_arg(2, &1i32);
        let counter = Arc::new(AtomicUsize::new(0));
        for i in 0..launches {
            put.set_arg(1, &(i as cl_int));
            let e = env.enqueue(&put, &[1], None);
            let data = Arc::into_raw(counter.clone()).cast_mut().cast::<c_void>();
            // SAFETY: count_complete takes back the reference in data exactly once.
            unsafe { cl!(clSetEventCallback(e.raw(), CL_COMPLETE, Some(count_complete), data)) };
            if i % 2 == 0 {
                env.finish();
            }
        }
        env.finish();
        // Callbacks may run on another thread after clFinish returns: a bounded wait (a
        // failure bound, not a timing assertion).
        let start = Instant::now();
        while counter.load(Ordering::SeqCst) < launches && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(counter.load(Ordering::SeqCst), launches);
        let got = env.read::<i32>(&out, launches);
        assert!(got.iter().enumerate().all(|(i, &v)| v == (i * 7 + 1) as i32));
    });
}

const SIZES: &str = r#"
kernel void sizes(global uint *out, global uint *local_size) {
    size_t g = get_global_id(0);
    out[g] = (uint)g * 3u + 1u;
    local_size[g] = (uint)get_local_size(0);
}
"#;

/// Runs `sizes` over `n` work-items with a NULL local size; checks every work-item ran once
/// and returns the distinct local sizes seen (sorted).
fn run_sizes(env: &TestEnv, options: &str, n: usize) -> Vec<u32> {
    let k = env.kernel(SIZES, options, "sizes");
    let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; n]);
    let local = env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; n]);
    k.set_mem(0, &out);
    k.set_mem(1, &local);
    env.run(&k, &[n], None);
    let got = env.read::<u32>(&out, n);
    for (g, &v) in got.iter().enumerate() {
        assert_eq!(v, g as u32 * 3 + 1, "work-item {g} of {n} ({options})");
    }
    let wg_size: usize = kernel_wg_info(k.raw(), env.dev(), CL_KERNEL_WORK_GROUP_SIZE);
    let mut sizes = env.read::<u32>(&local, n);
    sizes.sort_unstable();
    sizes.dedup();
    assert!(sizes.iter().all(|&s| s >= 1 && s as usize <= wg_size), "{sizes:?} vs CL_KERNEL_WORK_GROUP_SIZE {wg_size}");
    sizes
}

#[test]
fn null_local_size_for_a_prime_global_size() {
    for_each_device(|d| {
        let env = d.env();
        for n in [1021usize, 65_537, 1_000_003] {
            // OpenCL C 3.0: non-uniform work-groups are allowed, so a prime gets groups of many
            // work-items with a smaller last one.
            let cl30 = run_sizes(&env, "-cl-std=CL3.0", n);
            // OpenCL C 1.2 and -cl-uniform-work-group-size: every group has the same size,
            // which divides the prime: all of it or 1.
            for options in ["-cl-std=CL1.2", "-cl-std=CL3.0 -cl-uniform-work-group-size"] {
                let uniform = run_sizes(&env, options, n);
                assert_eq!(uniform.len(), 1, "{options}: one work-group size, got {uniform:?}");
                assert!(n.is_multiple_of(uniform[0] as usize), "{options}: {uniform:?} does not divide {n}");
            }
            if is_softcl() {
                // At most two sizes (the full groups and a smaller last one); full groups of
                // whole SIMD packets, never of 1.
                let full = *cl30.last().unwrap() as usize;
                assert!(cl30.len() <= 2 && full > 1, "global {n}: work-group sizes {cl30:?}");
                let multiple: usize = kernel_wg_info(
                    env.kernel(SIZES, "-cl-std=CL3.0", "sizes").raw(),
                    env.dev(),
                    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                );
                assert!(
                    full.is_multiple_of(multiple),
                    "global {n}: work-groups of {full}, not a multiple of {multiple}"
                );
            }
        }
    });
}
