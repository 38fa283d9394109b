//! Contexts (one device, both devices, from type), queues, reference counting.

use softcl_conformance::*;
use std::ptr;

const STEP: &str = r#"
__kernel void add_one(__global int* p) { p[get_global_id(0)] += 1; }
__kernel void times_three(__global int* p) { p[get_global_id(0)] *= 3; }
"#;

#[test]
fn both_devices_share_a_buffer() {
    let devices = test_devices();
    if devices.len() < 2 && !is_softcl() {
        println!("note: only {} device(s) under SOFTCL_TEST_PLATFORM: skipped", devices.len());
        return;
    }
    assert_eq!(devices.len(), 2);
    let ids: Vec<cl_device_id> = devices.iter().map(|d| d.id).collect();
    let ctx = context_for(&ids);
    assert_eq!(context_info::<cl_uint>(ctx.raw(), CL_CONTEXT_NUM_DEVICES), 2);
    assert_eq!(context_info_array::<cl_device_id>(ctx.raw(), CL_CONTEXT_DEVICES), ids);
    let q_cpu = queue_for(&ctx, ids[0], CL_QUEUE_PROFILING_ENABLE);
    let q_gpu = queue_for(&ctx, ids[1], CL_QUEUE_PROFILING_ENABLE);
    // One build for both devices.
    let program = build_program(program_from_source(&ctx, STEP), &[], "").unwrap_or_else(|e| panic!("{e}"));
    for &id in &ids {
        let status: cl_build_status = program_build_info(program.raw(), id, CL_PROGRAM_BUILD_STATUS);
        assert_eq!(status, CL_BUILD_SUCCESS);
    }
    let add = create_kernel(&program, "add_one").unwrap();
    let mul = create_kernel(&program, "times_three").unwrap();
    let n = 4096usize;
    let init: Vec<i32> = (0..n as i32).collect();
    // SAFETY: COPY_HOST_PTR reads n ints during the call.
    let buf = unsafe {
        Mem::from_raw(cl_create!(clCreateBuffer(
            ctx.raw(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            n * 4,
            init.as_ptr() as *mut _
        )))
    };
    add.set_mem(0, &buf);
    mul.set_mem(0, &buf);
    // CPU: +1, then GPU: *3 waiting on the CPU's event, then CPU: +1 waiting on the GPU's.
    let e1 = enqueue_nd(q_cpu.raw(), &add, None, &[n], Some(&[64]), &[]);
    let e2 = enqueue_nd(q_gpu.raw(), &mul, None, &[n], Some(&[64]), &[e1.raw()]);
    let e3 = enqueue_nd(q_cpu.raw(), &add, None, &[n], Some(&[64]), &[e2.raw()]);
    e3.wait();
    let got: Vec<i32> = read_buffer(q_gpu.raw(), &buf, 0, n);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (i as i32 + 1) * 3 + 1, "[{i}]");
    }
    assert_eq!(event_info::<cl_command_queue>(e2.raw(), CL_EVENT_COMMAND_QUEUE), q_gpu.raw());
    // A read on the CPU queue sees the same data.
    assert_eq!(read_buffer::<i32>(q_cpu.raw(), &buf, 0, n), got);
}

#[test]
fn context_from_type() {
    let p = platform();
    let props: [cl_context_properties; 3] =
        [CL_CONTEXT_PLATFORM as cl_context_properties, p as cl_context_properties, 0];
    for d in test_devices() {
        // SAFETY: a zero-terminated property list naming a valid platform; no callback.
        let ctx = unsafe {
            Context::from_raw(cl_create!(clCreateContextFromType(
                props.as_ptr(),
                d.kind.cl_type(),
                None,
                ptr::null_mut()
            )))
        };
        let devs: Vec<cl_device_id> = context_info_array(ctx.raw(), CL_CONTEXT_DEVICES);
        assert_eq!(devs, vec![d.id], "{} context", d.kind);
        let got_props: Vec<cl_context_properties> = context_info_array(ctx.raw(), CL_CONTEXT_PROPERTIES);
        assert_eq!(got_props, props.to_vec());
    }
    // SAFETY: as above.
    let all = unsafe {
        Context::from_raw(cl_create!(clCreateContextFromType(
            props.as_ptr(),
            CL_DEVICE_TYPE_ALL,
            None,
            ptr::null_mut()
        )))
    };
    let n: cl_uint = context_info(all.raw(), CL_CONTEXT_NUM_DEVICES);
    assert_eq!(n as usize, devices_of_type(p, CL_DEVICE_TYPE_ALL).len());
    // A type the platform lacks.
    // SAFETY: as above.
    let (ctx, err) = unsafe {
        cl_create_err!(clCreateContextFromType(props.as_ptr(), CL_DEVICE_TYPE_ACCELERATOR, None, ptr::null_mut()))
    };
    expect_error("clCreateContextFromType(ACCELERATOR)", err, CL_DEVICE_NOT_FOUND);
    assert!(ctx.is_null());
}

#[test]
fn command_queue_info() {
    for_each_device(|d| {
        let env = d.env();
        let q = env.q();
        assert_eq!(queue_info::<cl_context>(q, CL_QUEUE_CONTEXT), env.context.raw());
        assert_eq!(queue_info::<cl_device_id>(q, CL_QUEUE_DEVICE), d.id);
        let props: cl_command_queue_properties = queue_info(q, CL_QUEUE_PROPERTIES);
        assert_eq!(props, CL_QUEUE_PROFILING_ENABLE);
        let plain = queue_for(&env.context, d.id, 0);
        assert_eq!(queue_info::<cl_command_queue_properties>(plain.raw(), CL_QUEUE_PROPERTIES), 0);
    });
}

fn count<T: Pod + Into<u64>>(v: T) -> u64 {
    v.into()
}

#[test]
fn reference_counting() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(STEP, "");
        let kernel = create_kernel(&program, "add_one").unwrap();
        let mem = env.buffer_from(CL_MEM_READ_WRITE, &[0i32; 16]);
        kernel.set_mem(0, &mem);
        let event = env.run(&kernel, &[16], None);

        macro_rules! check_counts {
            ($what:literal, $handle:expr, $info:ident, $param:ident, $retain:ident, $release:ident) => {{
                let h = $handle;
                let before = count($info::<cl_uint>(h, $param));
                assert!(before >= 1, "{} reference count {before}", $what);
                // SAFETY: h is a valid handle; each retain is matched by a release.
                unsafe {
                    cl!($retain(h));
                    assert_eq!(count($info::<cl_uint>(h, $param)), before + 1, "{} after retain", $what);
                    cl!($retain(h));
                    assert_eq!(count($info::<cl_uint>(h, $param)), before + 2, "{} after 2 retains", $what);
                    cl!($release(h));
                    cl!($release(h));
                }
                assert_eq!(count($info::<cl_uint>(h, $param)), before, "{} after releases", $what);
            }};
        }
        check_counts!(
            "context",
            env.context.raw(),
            context_info,
            CL_CONTEXT_REFERENCE_COUNT,
            clRetainContext,
            clReleaseContext
        );
        check_counts!(
            "queue",
            env.q(),
            queue_info,
            CL_QUEUE_REFERENCE_COUNT,
            clRetainCommandQueue,
            clReleaseCommandQueue
        );
        check_counts!("mem", mem.raw(), mem_info, CL_MEM_REFERENCE_COUNT, clRetainMemObject, clReleaseMemObject);
        check_counts!(
            "program",
            program.raw(),
            program_info,
            CL_PROGRAM_REFERENCE_COUNT,
            clRetainProgram,
            clReleaseProgram
        );
        check_counts!("kernel", kernel.raw(), kernel_info, CL_KERNEL_REFERENCE_COUNT, clRetainKernel, clReleaseKernel);
        check_counts!("event", event.raw(), event_info, CL_EVENT_REFERENCE_COUNT, clRetainEvent, clReleaseEvent);

        // Fresh objects nobody else references start at 1.
        let fresh = env.buffer(CL_MEM_READ_ONLY, 16);
        assert_eq!(mem_info::<cl_uint>(fresh.raw(), CL_MEM_REFERENCE_COUNT), 1);
        let ctx2 = d.context();
        assert_eq!(context_info::<cl_uint>(ctx2.raw(), CL_CONTEXT_REFERENCE_COUNT), 1);

        // Objects stay usable while another reference exists: a clone outlives the original.
        let k2 = kernel.clone();
        drop(kernel);
        assert_eq!(k2.name(), "add_one");
        let ev2 = env.run(&k2, &[16], None);
        assert_eq!(ev2.status(), CL_COMPLETE);
        assert_eq!(env.read::<i32>(&mem, 16), vec![2; 16]);
    });
}
