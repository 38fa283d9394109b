//! Out-of-order queues through the loader: concurrent kernels on one device, markers and
//! barriers, failure through wait lists and the callbacks it triggers, queue properties.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::mpsc;
use std::time::Duration;

const OOO: cl_command_queue_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties;

const FLAGS: &str = r#"
// Waits for flag[0] (a bounded number of polls, so that a scheduler that does not run the
// setter at the same time fails the test instead of hanging it); out[0] = what it saw.
__kernel void wait_flag(__global int* flag, __global int* out) {
    int seen = 0;
    for (uint i = 0; i < 200000000u && seen == 0; i++)
        seen = atomic_add(flag, 0);
    out[0] = seen;
}
__kernel void set_flag(__global int* flag) { atomic_xchg(flag, 1); }
__kernel void append(__global int* p, int digit) { p[0] = p[0] * 10 + digit; }
"#;

/// A context, an out-of-order profiling queue and the FLAGS program on `d`.
fn ooo_env(d: &TestDevice) -> TestEnv {
    let context = d.context();
    let queue = queue_for(&context, d.id, OOO | CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties);
    TestEnv { device: d.clone(), context, queue }
}

fn user_event(env: &TestEnv) -> Event {
    // SAFETY: a valid context.
    unsafe { Event::from_raw(cl_create!(clCreateUserEvent(env.context.raw()))) }
}

fn set_status(event: &Event, status: cl_int) {
    // SAFETY: a user event of this test, set once.
    unsafe { cl!(clSetUserEventStatus(event.raw(), status)) };
}

fn barrier(env: &TestEnv, wait: &[cl_event]) -> Event {
    let mut e: cl_event = ptr::null_mut();
    let list = if wait.is_empty() { ptr::null() } else { wait.as_ptr() };
    // SAFETY: a valid queue; the wait list holds wait.len() valid events.
    unsafe { cl!(clEnqueueBarrierWithWaitList(env.q(), wait.len() as cl_uint, list, &mut e)) };
    // SAFETY: a new event whose reference we own.
    unsafe { Event::from_raw(e) }
}

fn marker(env: &TestEnv, wait: &[cl_event]) -> Event {
    let mut e: cl_event = ptr::null_mut();
    let list = if wait.is_empty() { ptr::null() } else { wait.as_ptr() };
    // SAFETY: a valid queue; the wait list holds wait.len() valid events.
    unsafe { cl!(clEnqueueMarkerWithWaitList(env.q(), wait.len() as cl_uint, list, &mut e)) };
    // SAFETY: a new event whose reference we own.
    unsafe { Event::from_raw(e) }
}

/// Two kernels of one out-of-order queue run at once on one device: the first waits for a
/// flag that only the second sets.
#[test]
fn out_of_order_kernels_on_one_device_overlap() {
    for_each_device(|d| {
        let env = ooo_env(d);
        let program = env.build(FLAGS, "");
        let (waiter, setter) = (kernel_of(&program, "wait_flag"), kernel_of(&program, "set_flag"));
        let flag = env.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
        let out = env.buffer_from(CL_MEM_READ_WRITE, &[-1i32]);
        waiter.set_mem(0, &flag);
        waiter.set_mem(1, &out);
        setter.set_mem(0, &flag);
        let w = env.enqueue(&waiter, &[1], None);
        let s = env.enqueue(&setter, &[1], None);
        env.finish();
        assert_eq!(w.status(), CL_COMPLETE);
        assert_eq!(s.status(), CL_COMPLETE);
        assert_eq!(env.read::<i32>(&out, 1), vec![1], "the waiting kernel never saw the flag");
        // They overlapped: the setter started before the waiter ended. The Gen device's
        // profiling END is START plus the modelled time, not the host's: there the waiter
        // seeing the flag is the proof.
        if d.kind == DeviceKind::Cpu {
            let (pw, ps) = (w.profile(), s.profile());
            assert!(ps[2] < pw[3], "waiter {pw:?} setter {ps:?}");
        }
    });
}

/// A barrier with an empty wait list waits for every command before it, and every command
/// after it waits for it: `append(1)` gated by a user event, a barrier, `append(2)` gives 12.
#[test]
fn out_of_order_barrier_orders_kernels() {
    for_each_device(|d| {
        let env = ooo_env(d);
        let program = env.build(FLAGS, "");
        let (first, second) = (kernel_of(&program, "append"), kernel_of(&program, "append"));
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
        first.set_mem(0, &buf);
        first.set_arg(1, &1i32);
        second.set_mem(0, &buf);
        second.set_arg(1, &2i32);
        let gate = user_event(&env);
        let a = enqueue_nd(env.q(), &first, None, &[1], None, &[gate.raw()]);
        let b = barrier(&env, &[]);
        let c = env.enqueue(&second, &[1], None);
        assert!(b.status() > CL_COMPLETE && c.status() > CL_COMPLETE);
        set_status(&gate, CL_COMPLETE);
        env.finish();
        assert_eq!(env.read::<i32>(&buf, 1), vec![12]);
        let (pa, pb, pc) = (a.profile(), b.profile(), c.profile());
        assert!(pb[2] >= pa[3] && pc[2] >= pb[3], "{pa:?} {pb:?} {pc:?}");
        assert_eq!(event_info::<cl_command_type>(b.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_BARRIER);
    });
}

/// A marker with an empty wait list waits for every command before it but holds nothing
/// back; commands with no wait list run while an earlier one is blocked.
#[test]
fn out_of_order_marker_and_independent_commands() {
    for_each_device(|d| {
        let env = ooo_env(d);
        let program = env.build(FLAGS, "");
        let k = kernel_of(&program, "append");
        let (gated, free) = (env.buffer_from(CL_MEM_READ_WRITE, &[0i32]), env.buffer_from(CL_MEM_READ_WRITE, &[0i32]));
        k.set_mem(0, &gated);
        k.set_arg(1, &7i32);
        let gate = user_event(&env);
        let a = enqueue_nd(env.q(), &k, None, &[1], None, &[gate.raw()]);
        let m = marker(&env, &[]);
        k.set_mem(0, &free);
        let b = env.enqueue(&k, &[1], None);
        // In order, `b` would wait for the gate: a bounded wait (a failure bound).
        let start = std::time::Instant::now();
        while b.status() > CL_COMPLETE && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(b.status(), CL_COMPLETE, "an independent command waited for an earlier one");
        assert_eq!(env.read::<i32>(&free, 1), vec![7]);
        assert!(a.status() > CL_COMPLETE && m.status() > CL_COMPLETE, "the marker waits for `a`");
        set_status(&gate, CL_COMPLETE);
        m.wait();
        assert_eq!(a.status(), CL_COMPLETE);
        assert_eq!(env.read::<i32>(&gated, 1), vec![7]);
    });
}

extern "C" fn record_status(_event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: user_data is a Box<(cl_int, Sender)> leaked by the test; each callback runs once.
    let data = unsafe { Box::from_raw(user_data.cast::<(cl_int, mpsc::Sender<(cl_int, cl_int)>)>()) };
    let _ = data.1.send((data.0, status));
}

fn add_callback(event: &Event, when: cl_int, tx: &mpsc::Sender<(cl_int, cl_int)>) {
    let data = Box::into_raw(Box::new((when, tx.clone()))).cast::<c_void>();
    // SAFETY: record_status takes back ownership of data exactly once.
    unsafe { cl!(clSetEventCallback(event.raw(), when, Some(record_status), data)) };
}

/// A user event set to an error fails the commands that list it (and theirs); callbacks for
/// every status are called with the error; a barrier after them still completes.
#[test]
fn out_of_order_error_reaches_dependents_and_their_callbacks() {
    for_each_device(|d| {
        let env = ooo_env(d);
        let program = env.build(FLAGS, "");
        let k = kernel_of(&program, "append");
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
        k.set_mem(0, &buf);
        k.set_arg(1, &3i32);
        let gate = user_event(&env);
        let a = enqueue_nd(env.q(), &k, None, &[1], None, &[gate.raw()]);
        let m = marker(&env, &[a.raw()]);
        let (tx, rx) = mpsc::channel();
        for when in [CL_SUBMITTED, CL_RUNNING, CL_COMPLETE] {
            add_callback(&a, when, &tx);
        }
        add_callback(&m, CL_COMPLETE, &tx);
        set_status(&gate, -1234);
        let b = barrier(&env, &[]);
        b.wait();
        let mut got: Vec<(cl_int, cl_int)> =
            (0..4).map(|_| rx.recv_timeout(Duration::from_secs(60)).expect("a callback was never called")).collect();
        got.sort();
        let err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        // SUBMITTED was reached before the error (out-of-order commands are submitted when
        // enqueued); RUNNING never was: that callback gets the error.
        let mut expected =
            vec![(CL_COMPLETE, err), (CL_COMPLETE, err), (CL_RUNNING, err), (CL_SUBMITTED, CL_SUBMITTED)];
        expected.sort();
        assert_eq!(got, expected);
        assert_eq!(a.status(), err);
        assert_eq!(m.status(), err);
        assert_eq!(b.status(), CL_COMPLETE);
        assert_eq!(env.read::<i32>(&buf, 1), vec![0], "the failed command did not run");
        // Registered after the error: called at once with it.
        add_callback(&a, CL_COMPLETE, &tx);
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok((CL_COMPLETE, err)));
    });
}

/// CL_QUEUE_PROPERTIES and CL_QUEUE_PROPERTIES_ARRAY of an out-of-order queue.
#[test]
fn out_of_order_queue_properties() {
    for_each_device(|d| {
        let env = ooo_env(d);
        let bits = OOO | CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties;
        assert_eq!(queue_info::<cl_command_queue_properties>(env.q(), CL_QUEUE_PROPERTIES), bits);
        let array = queue_info_array::<cl_queue_properties>(env.q(), CL_QUEUE_PROPERTIES_ARRAY);
        assert_eq!(array, vec![CL_QUEUE_PROPERTIES as cl_queue_properties, bits, 0]);
        let supported = device_info::<cl_command_queue_properties>(d.id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
        assert_eq!(supported & OOO, OOO);
    });
}

#[repr(C)]
struct NativeArgs {
    n: u32,
    scale: f32,
    buf: *mut f32,
}

extern "C" fn native_scale(args: *mut c_void) {
    // SAFETY: the driver passes its copy of a NativeArgs whose `buf` it set to the buffer's
    // storage of `n` floats.
    unsafe {
        let a = &*args.cast::<NativeArgs>();
        for i in 0..a.n as usize {
            *a.buf.add(i) = i as f32 * a.scale;
        }
    }
}

/// clEnqueueNativeKernel on the CPU device: the function gets a copy of the argument block
/// with the buffer's address in place; the Gen device cannot run native kernels.
#[test]
fn native_kernel_on_the_cpu_device() {
    for_each_device(|d| {
        let env = d.env();
        let n = 64usize;
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1.0f32; n]);
        let mut args = NativeArgs { n: n as u32, scale: 2.5, buf: ptr::null_mut() };
        let args_ptr = (&mut args as *mut NativeArgs).cast::<c_void>();
        let mems = [buf.raw()];
        let mut locs = [(&args.buf as *const *mut f32).cast::<c_void>()];
        let size = std::mem::size_of::<NativeArgs>();
        let caps = device_info::<cl_device_exec_capabilities>(d.id, CL_DEVICE_EXECUTION_CAPABILITIES);
        let mut e: cl_event = ptr::null_mut();
        // SAFETY: args and locs live for the call (the driver copies args); one buffer.
        let code = unsafe {
            clEnqueueNativeKernel(
                env.q(),
                Some(native_scale),
                args_ptr,
                size,
                1,
                mems.as_ptr(),
                locs.as_mut_ptr(),
                0,
                ptr::null(),
                &mut e,
            )
        };
        if d.kind != DeviceKind::Cpu {
            assert_eq!(caps & CL_EXEC_NATIVE_KERNEL as cl_device_exec_capabilities, 0);
            expect_error("clEnqueueNativeKernel", code, CL_INVALID_OPERATION);
            return;
        }
        assert_ne!(caps & CL_EXEC_NATIVE_KERNEL as cl_device_exec_capabilities, 0);
        check("clEnqueueNativeKernel", code);
        // The application's block may change at once: the driver ran on its copy.
        args.scale = 100.0;
        // SAFETY: a new event whose reference we own.
        let e = unsafe { Event::from_raw(e) };
        e.wait();
        assert_eq!(event_info::<cl_command_type>(e.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_NATIVE_KERNEL);
        let got = env.read::<f32>(&buf, n);
        assert_eq!(got, (0..n).map(|i| i as f32 * 2.5).collect::<Vec<_>>());
        assert!(args.buf.is_null(), "the application's block is not written");

        // Errors.
        let q = env.q();
        // SAFETY: invalid argument combinations the driver must reject without using them.
        unsafe {
            let none: *mut *const c_void = ptr::null_mut();
            expect_error(
                "NULL user_func",
                clEnqueueNativeKernel(q, None, args_ptr, size, 0, ptr::null(), none, 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            expect_error(
                "NULL args, cb_args > 0",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    ptr::null_mut(),
                    size,
                    0,
                    ptr::null(),
                    none,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "args, cb_args 0",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    args_ptr,
                    0,
                    0,
                    ptr::null(),
                    none,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "mem objects, NULL mem_list",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    args_ptr,
                    size,
                    1,
                    ptr::null(),
                    locs.as_mut_ptr(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "no mem objects, a mem_list",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    args_ptr,
                    size,
                    0,
                    mems.as_ptr(),
                    none,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            let bad_mem = [ptr::null_mut::<c_void>() as cl_mem];
            expect_error(
                "invalid mem",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    args_ptr,
                    size,
                    1,
                    bad_mem.as_ptr(),
                    locs.as_mut_ptr(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_MEM_OBJECT,
            );
            expect_error(
                "wait list",
                clEnqueueNativeKernel(
                    q,
                    Some(native_scale),
                    args_ptr,
                    size,
                    0,
                    ptr::null(),
                    none,
                    1,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_EVENT_WAIT_LIST,
            );
            // A NULL call: nothing to pass.
            check(
                "no args",
                clEnqueueNativeKernel(
                    q,
                    Some(noop),
                    ptr::null_mut(),
                    0,
                    0,
                    ptr::null(),
                    none,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
            );
        }
        env.finish();
    });
}

extern "C" fn noop(args: *mut c_void) {
    assert!(args.is_null());
}

/// clGetDeviceAndHostTimer and clGetHostTimer read the clock of the profiling timestamps:
/// a command's QUEUED..END lies between two readings; resolutions are non-zero; NULL
/// arguments and invalid devices are errors.
#[test]
fn device_and_host_timers_share_the_profiling_clock() {
    let resolution = platform_info::<cl_ulong>(platform(), CL_PLATFORM_HOST_TIMER_RESOLUTION);
    assert!(resolution > 0, "a platform that implements the host timer reports its resolution");
    for_each_device(|d| {
        let env = d.env();
        assert!(device_info::<usize>(d.id, CL_DEVICE_PROFILING_TIMER_RESOLUTION) > 0);
        let (mut dev0, mut host0, mut dev1, mut host1, mut host2) = (0u64, 0u64, 0u64, 0u64, 0u64);
        // SAFETY: a valid device and out pointers.
        unsafe { check("clGetDeviceAndHostTimer", clGetDeviceAndHostTimer(d.id, &mut dev0, &mut host0)) };
        let program = env.build(FLAGS, "");
        let k = kernel_of(&program, "append");
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
        k.set_mem(0, &buf);
        k.set_arg(1, &1i32);
        // The Gen device's modelled END may lie past the host clock; START may not once
        // the command has completed (it is the first of a new queue).
        let e = env.enqueue(&k, &[1], None);
        e.wait();
        // SAFETY: as above.
        unsafe {
            check("clGetDeviceAndHostTimer", clGetDeviceAndHostTimer(d.id, &mut dev1, &mut host1));
            check("clGetHostTimer", clGetHostTimer(d.id, &mut host2));
        }
        let [queued, submit, start, end] = e.profile();
        assert!(dev0 <= queued && queued <= submit && submit <= start && start < end, "{dev0} {:?}", e.profile());
        assert!(start <= dev1, "START {start} after the later device reading {dev1}");
        assert!(host0 <= host1 && host1 <= host2 && dev0 <= dev1);
        // One clock: the device reading lies within the host readings around it.
        assert!(host0 <= dev1 && dev0 <= host2);
        // SAFETY: NULL out pointers and an invalid device must be rejected without use.
        unsafe {
            expect_error(
                "NULL device_timestamp",
                clGetDeviceAndHostTimer(d.id, ptr::null_mut(), &mut host1),
                CL_INVALID_VALUE,
            );
            expect_error(
                "NULL host_timestamp",
                clGetDeviceAndHostTimer(d.id, &mut dev1, ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            expect_error("NULL host_timestamp", clGetHostTimer(d.id, ptr::null_mut()), CL_INVALID_VALUE);
            expect_error("NULL device", clGetHostTimer(ptr::null_mut(), &mut host1), CL_INVALID_DEVICE);
            expect_error(
                "NULL device",
                clGetDeviceAndHostTimer(ptr::null_mut(), &mut dev1, &mut host1),
                CL_INVALID_DEVICE,
            );
        }
    });
}
