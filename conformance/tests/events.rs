//! Events, profiling, user events, callbacks, markers, clFlush/clFinish ordering.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::mpsc;
use std::time::Duration;

const BUSY: &str = r#"
__kernel void busy(__global float* p, int iters) {
    size_t i = get_global_id(0);
    float x = p[i];
    for (int k = 0; k < iters; k++)
        x = x * 0.999f + 0.5f;
    p[i] = x;
}
__kernel void inc(__global int* p) { p[get_global_id(0)] += 1; }
"#;

#[test]
fn kernel_event_is_complete_after_wait() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(BUSY, "");
        let k = create_kernel(&program, "inc").unwrap();
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0i32; 64]);
        k.set_mem(0, &buf);
        let ev = env.enqueue(&k, &[64], None);
        ev.wait();
        assert_eq!(ev.status(), CL_COMPLETE);
        let e = ev.raw();
        assert_eq!(event_info::<cl_command_type>(e, CL_EVENT_COMMAND_TYPE), CL_COMMAND_NDRANGE_KERNEL);
        assert_eq!(event_info::<cl_command_queue>(e, CL_EVENT_COMMAND_QUEUE), env.q());
        assert_eq!(event_info::<cl_context>(e, CL_EVENT_CONTEXT), env.context.raw());
        assert_eq!(env.read::<i32>(&buf, 64), vec![1; 64]);
    });
}

#[test]
fn profiling_timestamps_are_ordered() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(BUSY, "", "busy");
        let n = 1 << 16;
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &vec![1.0f32; n]);
        k.set_mem(0, &buf);
        k.set_arg(1, &256i32);
        let ev = env.run(&k, &[n], Some(&[64]));
        let [queued, submit, start, end] = ev.profile();
        assert!(
            queued <= submit && submit <= start && start <= end,
            "QUEUED {queued} SUBMIT {submit} START {start} END {end}"
        );
        assert!(end - start > 0, "a real kernel took {} ns", end - start);
        // A second command is timed after the first one ended (in-order queue).
        let mut rev: cl_event = ptr::null_mut();
        let mut out = vec![0f32; n];
        // SAFETY: a blocking read into n floats.
        let rev = unsafe {
            cl!(clEnqueueReadBuffer(
                env.q(),
                buf.raw(),
                CL_TRUE,
                0,
                n * 4,
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                &mut rev
            ));
            Event::from_raw(rev)
        };
        let [q2, s2, st2, e2] = rev.profile();
        assert!(q2 <= s2 && s2 <= st2 && st2 <= e2);
        assert!(st2 >= end, "read started at {st2}, before the kernel ended at {end}");
        assert_eq!(event_info::<cl_command_type>(rev.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_READ_BUFFER);
        let mut x = 1.0f32;
        for _ in 0..256 {
            x = x * 0.999 + 0.5;
        }
        // Fused or not, 256 steps of a contraction stay within a few ulp-scale errors.
        assert!((out[0] - x).abs() <= 1e-3 * x, "busy result {} vs {x}", out[0]);
        assert!(out.iter().all(|v| *v == out[0]));
    });
}

#[test]
fn profiling_unavailable_without_queue_flag() {
    for_each_device(|d| {
        let ctx = d.context();
        let q = queue_for(&ctx, d.id, 0);
        let buf = {
            // SAFETY: a valid context, no host pointer.
            let raw = unsafe { cl_create!(clCreateBuffer(ctx.raw(), CL_MEM_READ_WRITE, 64, ptr::null_mut())) };
            // SAFETY: a new buffer whose reference we own.
            unsafe { Mem::from_raw(raw) }
        };
        let pattern = 0u32;
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: a fill of a valid buffer; the pattern is read during the call.
        let ev = unsafe {
            cl!(clEnqueueFillBuffer(
                q.raw(),
                buf.raw(),
                (&pattern as *const u32).cast(),
                4,
                0,
                64,
                0,
                ptr::null(),
                &mut ev
            ));
            Event::from_raw(ev)
        };
        ev.wait();
        let mut t: cl_ulong = 0;
        // SAFETY: an 8-byte output.
        let code = unsafe {
            clGetEventProfilingInfo(
                ev.raw(),
                CL_PROFILING_COMMAND_START,
                8,
                (&mut t as *mut cl_ulong).cast(),
                ptr::null_mut(),
            )
        };
        expect_error("clGetEventProfilingInfo", code, CL_PROFILING_INFO_NOT_AVAILABLE);
    });
}

#[test]
fn user_event_gates_dependent_command() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(BUSY, "", "inc");
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[41i32; 16]);
        k.set_mem(0, &buf);
        // SAFETY: a valid context.
        let user = unsafe { Event::from_raw(cl_create!(clCreateUserEvent(env.context.raw()))) };
        assert_eq!(user.status(), CL_SUBMITTED);
        assert_eq!(event_info::<cl_command_type>(user.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_USER);
        let run = enqueue_nd(env.q(), &k, None, &[16], None, &[user.raw()]);
        // SAFETY: a valid queue.
        unsafe { cl!(clFlush(env.q())) };
        // The kernel cannot have started: its dependency has not completed.
        let s = run.status();
        assert!(s == CL_QUEUED || s == CL_SUBMITTED, "dependent command status {s} before the user event completed");
        // SAFETY: a user event of this context, set once.
        unsafe { cl!(clSetUserEventStatus(user.raw(), CL_COMPLETE)) };
        run.wait();
        assert_eq!(run.status(), CL_COMPLETE);
        assert_eq!(env.read::<i32>(&buf, 16), vec![42; 16]);
    });
}

extern "C" fn on_complete(event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: user_data is the Box<Sender> leaked by the test; the callback runs once.
    let tx = unsafe { Box::from_raw(user_data.cast::<mpsc::Sender<(usize, cl_int)>>()) };
    let _ = tx.send((event as usize, status));
}

#[test]
fn event_callback_on_complete() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(BUSY, "", "inc");
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0i32; 16]);
        k.set_mem(0, &buf);
        let ev = env.enqueue(&k, &[16], None);
        let (tx, rx) = mpsc::channel::<(usize, cl_int)>();
        let data = Box::into_raw(Box::new(tx)).cast::<c_void>();
        // SAFETY: on_complete takes back ownership of data exactly once.
        unsafe { cl!(clSetEventCallback(ev.raw(), CL_COMPLETE, Some(on_complete), data)) };
        ev.wait();
        // The callback may run on another thread after clWaitForEvents returns: a bounded
        // wait on the channel (a failure bound, not a synchronisation delay).
        let (who, status) = rx.recv_timeout(Duration::from_secs(60)).expect("CL_COMPLETE callback never called");
        assert_eq!(who, ev.raw() as usize);
        assert_eq!(status, CL_COMPLETE);
    });
}

#[test]
fn finish_and_flush_order_an_in_order_queue() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(BUSY, "", "inc");
        let n = 1024usize;
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; n]);
        k.set_mem(0, &buf);
        let mut events = Vec::new();
        for _ in 0..10 {
            events.push(env.enqueue(&k, &[n], Some(&[32])));
        }
        // SAFETY: a valid queue.
        unsafe { cl!(clFlush(env.q())) };
        env.finish();
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.status(), CL_COMPLETE, "kernel {i} after clFinish");
        }
        assert_eq!(env.read::<i32>(&buf, n), vec![10; n]);
        // Marker and barrier commands complete too.
        let mut m: cl_event = ptr::null_mut();
        let mut b: cl_event = ptr::null_mut();
        let raw: Vec<cl_event> = events.iter().map(Event::raw).collect();
        // SAFETY: a valid queue; the wait list holds raw.len() valid events.
        unsafe {
            cl!(clEnqueueMarkerWithWaitList(env.q(), raw.len() as cl_uint, raw.as_ptr(), &mut m));
            cl!(clEnqueueBarrierWithWaitList(env.q(), 0, ptr::null(), &mut b));
        }
        // SAFETY: new events whose references we own.
        let (m, b) = unsafe { (Event::from_raw(m), Event::from_raw(b)) };
        let both = [m.raw(), b.raw()];
        // SAFETY: two valid events.
        unsafe { cl!(clWaitForEvents(2, both.as_ptr())) };
        assert_eq!(m.status(), CL_COMPLETE);
        assert_eq!(b.status(), CL_COMPLETE);
        assert_eq!(event_info::<cl_command_type>(m.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_MARKER);
    });
}
