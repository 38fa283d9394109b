//! Defects and gaps found by running applications' own test suites (pyopencl's, see
//! scripts/pyopencl.sh) on SoftCL, each reduced to what matters.

use softcl_conformance::*;
use std::ptr;

const INC: &str = r#"
__kernel void inc(__global int* p) { p[get_global_id(0)] += 1; }
__kernel void twice(__global const int* a, __global int* b) {
    size_t i = get_global_id(0);
    b[i] = 2 * a[i];
}
"#;

/// pyopencl's test_outoforderqueue_* tests (test_array.py, test_clmath.py) were skipped:
/// creating a queue with CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE failed with
/// CL_INVALID_QUEUE_PROPERTIES. The devices now offer out-of-order host queues (which may run
/// commands in order); wait lists, markers and barriers without a wait list, and clFinish must
/// keep their out-of-order meaning.
#[test]
fn out_of_order_queue_keeps_event_dependencies() {
    for_each_device(|d| {
        let ooo = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties;
        let on_host: cl_command_queue_properties = device_info(d.id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
        assert_ne!(on_host & ooo, 0, "{} device: CL_DEVICE_QUEUE_ON_HOST_PROPERTIES {on_host:#x}", d.kind);
        let ctx = d.context();
        let q = queue_for(&ctx, d.id, ooo | CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties);
        let props: cl_command_queue_properties = queue_info(q.raw(), CL_QUEUE_PROPERTIES);
        assert_eq!(props & ooo, ooo);
        // The legacy constructor accepts it as well (pyopencl's CommandQueue on 1.x paths).
        // SAFETY: a valid context and device of it.
        let legacy = unsafe { Queue::from_raw(cl_create!(clCreateCommandQueue(ctx.raw(), d.id, ooo))) };
        drop(legacy);

        let program = build_program(program_from_source(&ctx, INC), &[d.id], "").expect("build");
        let inc = create_kernel(&program, "inc").unwrap();
        let twice = create_kernel(&program, "twice").unwrap();
        let n = 1024usize;
        let host: Vec<i32> = (0..n as i32).collect();
        // SAFETY: a valid context; no host pointer.
        let a =
            unsafe { Mem::from_raw(cl_create!(clCreateBuffer(ctx.raw(), CL_MEM_READ_WRITE, n * 4, ptr::null_mut()))) };
        // SAFETY: as above.
        let b =
            unsafe { Mem::from_raw(cl_create!(clCreateBuffer(ctx.raw(), CL_MEM_READ_WRITE, n * 4, ptr::null_mut()))) };
        inc.set_mem(0, &a);
        twice.set_mem(0, &a);
        twice.set_mem(1, &b);

        // A user event gates the upload; everything else hangs off events.
        // SAFETY: a valid context.
        let gate = unsafe { Event::from_raw(cl_create!(clCreateUserEvent(ctx.raw()))) };
        let mut write: cl_event = ptr::null_mut();
        // SAFETY: a non-blocking write of n ints from `host`, which outlives the command
        // (the test waits for everything before returning); one event in the wait list.
        unsafe {
            cl!(clEnqueueWriteBuffer(
                q.raw(),
                a.raw(),
                CL_FALSE,
                0,
                n * 4,
                host.as_ptr().cast(),
                1,
                &gate.raw(),
                &mut write
            ))
        };
        // SAFETY: clEnqueueWriteBuffer returned a new event we own.
        let write = unsafe { Event::from_raw(write) };
        let first = enqueue_nd(q.raw(), &inc, None, &[n], None, &[write.raw()]);
        let second = enqueue_nd(q.raw(), &inc, None, &[n], None, &[first.raw()]);
        let doubled = enqueue_nd(q.raw(), &twice, None, &[n], None, &[second.raw()]);
        // A marker with no wait list waits for every command enqueued before it.
        let mut marker: cl_event = ptr::null_mut();
        // SAFETY: a valid queue; no wait list; one event out.
        unsafe { cl!(clEnqueueMarkerWithWaitList(q.raw(), 0, ptr::null(), &mut marker)) };
        // SAFETY: a new event we own.
        let marker = unsafe { Event::from_raw(marker) };
        // SAFETY: a valid queue.
        unsafe { cl!(clFlush(q.raw())) };
        std::thread::sleep(std::time::Duration::from_millis(20));
        for (name, e) in [("write", &write), ("kernel", &doubled), ("marker", &marker)] {
            let s = e.status();
            assert!(s == CL_QUEUED || s == CL_SUBMITTED, "{} device: {name} ran before its gate: status {s}", d.kind);
        }
        // SAFETY: a user event of this context, set once.
        unsafe { cl!(clSetUserEventStatus(gate.raw(), CL_COMPLETE)) };
        marker.wait();
        for (name, e) in [("write", &write), ("inc", &first), ("inc", &second), ("twice", &doubled)] {
            assert_eq!(e.status(), CL_COMPLETE, "{} device: {name} not complete after the marker", d.kind);
        }
        // A barrier with no wait list, then a read waiting on nothing but the barrier.
        // SAFETY: a valid queue; no wait list, no event out.
        unsafe { cl!(clEnqueueBarrierWithWaitList(q.raw(), 0, ptr::null(), ptr::null_mut())) };
        let mut out = vec![0i32; n];
        // SAFETY: a non-blocking read of n ints into `out`, which is read only after clFinish.
        unsafe {
            cl!(clEnqueueReadBuffer(
                q.raw(),
                b.raw(),
                CL_FALSE,
                0,
                n * 4,
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut()
            ))
        };
        // SAFETY: a valid queue.
        unsafe { cl!(clFinish(q.raw())) };
        let want: Vec<i32> = host.iter().map(|x| 2 * (x + 2)).collect();
        assert_eq!(out, want, "{} device", d.kind);
    });
}

/// With out-of-order queues offered, the CTS api test consistency_device_enqueue reaches
/// clSetDefaultDeviceCommandQueue(context, device, NULL) and expects CL_INVALID_OPERATION
/// (the device has no on-device queues); SoftCL answered CL_INVALID_COMMAND_QUEUE.
#[test]
fn set_default_device_queue_without_device_enqueue_is_invalid_operation() {
    for_each_device(|d| {
        let caps: cl_device_device_enqueue_capabilities = device_info(d.id, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES);
        assert_eq!(caps, 0, "{} device", d.kind);
        let env = d.env();
        // SAFETY: a valid context and device; NULL and a host queue are both not device queues.
        let (null, host) = unsafe {
            (
                clSetDefaultDeviceCommandQueue(env.context.raw(), d.id, ptr::null_mut()),
                clSetDefaultDeviceCommandQueue(env.context.raw(), d.id, env.q()),
            )
        };
        expect_error("clSetDefaultDeviceCommandQueue(NULL)", null, CL_INVALID_OPERATION);
        expect_error("clSetDefaultDeviceCommandQueue(host queue)", host, CL_INVALID_OPERATION);
    });
}
