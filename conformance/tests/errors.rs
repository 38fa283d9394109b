//! Error paths: NULL handles, bad sizes, bad kernel arguments, bad NDRanges, bad
//! enqueues and queries. (Handles that point at memory which is not an object of the
//! right type are in invalid_handles.rs.)

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

const K: &str = r#"
__kernel void k(__global int* p, int v, __local int* tmp) {
    tmp[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    p[get_global_id(0)] = tmp[0] + (int)get_local_size(0);
}"#;

fn kernel_ready(env: &TestEnv, options: &str) -> (Kernel, Mem) {
    let k = env.kernel(K, options, "k");
    let buf = env.buffer(CL_MEM_READ_WRITE, 4096 * 4);
    k.set_mem(0, &buf);
    k.set_arg(1, &5i32);
    k.set_local(2, 256 * 4);
    (k, buf)
}

fn nd_err(env: &TestEnv, k: &Kernel, global: &[usize], local: Option<&[usize]>) -> cl_int {
    match try_enqueue_nd(env.q(), k, None, global, local, &[]) {
        Ok(_) => CL_SUCCESS,
        Err(e) => e.code,
    }
}

#[test]
fn null_handles() {
    init_loader();
    for_each_device(|d| {
        let env = d.env();
        let mut err = CL_INT_UNSET;
        let props: [cl_queue_properties; 1] = [0];
        // SAFETY: NULL handles are rejected before any dereference; outputs are valid.
        unsafe {
            let m = clCreateBuffer(ptr::null_mut(), CL_MEM_READ_WRITE, 64, ptr::null_mut(), &mut err);
            assert!(m.is_null());
            expect_error("clCreateBuffer(NULL context)", err, CL_INVALID_CONTEXT);
            let q = clCreateCommandQueueWithProperties(ptr::null_mut(), d.id, props.as_ptr(), &mut err);
            assert!(q.is_null());
            expect_error("clCreateCommandQueueWithProperties(NULL context)", err, CL_INVALID_CONTEXT);
            let q = clCreateCommandQueueWithProperties(env.context.raw(), ptr::null_mut(), props.as_ptr(), &mut err);
            assert!(q.is_null());
            expect_error("clCreateCommandQueueWithProperties(NULL device)", err, CL_INVALID_DEVICE);
            let mut n: cl_uint = 0;
            expect_error(
                "clGetContextInfo(NULL)",
                clGetContextInfo(
                    ptr::null_mut(),
                    CL_CONTEXT_NUM_DEVICES,
                    4,
                    (&mut n as *mut cl_uint).cast(),
                    ptr::null_mut(),
                ),
                CL_INVALID_CONTEXT,
            );
            expect_error("clFinish(NULL)", clFinish(ptr::null_mut()), CL_INVALID_COMMAND_QUEUE);
            expect_error("clReleaseMemObject(NULL)", clReleaseMemObject(ptr::null_mut()), CL_INVALID_MEM_OBJECT);
            expect_error("clRetainKernel(NULL)", clRetainKernel(ptr::null_mut()), CL_INVALID_KERNEL);
            let null_event: cl_event = ptr::null_mut();
            expect_error("clWaitForEvents(NULL)", clWaitForEvents(1, &null_event), CL_INVALID_EVENT);
            let k = clCreateKernel(ptr::null_mut(), c"k".as_ptr(), &mut err);
            assert!(k.is_null());
            expect_error("clCreateKernel(NULL program)", err, CL_INVALID_PROGRAM);
            // These reach the driver through a valid first handle.
            let mut buf = [0u8; 16];
            expect_error(
                "clEnqueueReadBuffer(NULL buffer)",
                clEnqueueReadBuffer(
                    env.q(),
                    ptr::null_mut(),
                    CL_TRUE,
                    0,
                    16,
                    buf.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_MEM_OBJECT,
            );
        }
    });
}

#[test]
fn bad_buffer_creation() {
    for_each_device(|d| {
        let ctx = d.context();
        let max_alloc: cl_ulong = device_info(d.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
        let mut host = [0u8; 64];
        let cases: [(&str, cl_mem_flags, usize, *mut c_void, cl_int); 6] = [
            ("size 0", CL_MEM_READ_WRITE, 0, ptr::null_mut(), CL_INVALID_BUFFER_SIZE),
            (
                "size > CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                CL_MEM_READ_WRITE,
                max_alloc as usize + 1,
                ptr::null_mut(),
                CL_INVALID_BUFFER_SIZE,
            ),
            ("USE_HOST_PTR with NULL", CL_MEM_USE_HOST_PTR, 64, ptr::null_mut(), CL_INVALID_HOST_PTR),
            ("host_ptr without a host-ptr flag", CL_MEM_READ_WRITE, 64, host.as_mut_ptr().cast(), CL_INVALID_HOST_PTR),
            ("READ_ONLY | WRITE_ONLY", CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, ptr::null_mut(), CL_INVALID_VALUE),
            (
                "USE_HOST_PTR | ALLOC_HOST_PTR",
                CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
                64,
                host.as_mut_ptr().cast(),
                CL_INVALID_VALUE,
            ),
        ];
        for (what, flags, size, hp, want) in cases {
            // SAFETY: hp is NULL or points to 64 writable bytes; every case fails.
            let (m, err) = unsafe { cl_create_err!(clCreateBuffer(ctx.raw(), flags, size, hp)) };
            if !m.is_null() {
                // SAFETY: the driver wrongly created it: release our reference.
                unsafe { clReleaseMemObject(m) };
            }
            expect_error(&format!("clCreateBuffer({what})"), err, want);
        }
    });
}

#[test]
fn out_of_range_transfers() {
    for_each_device(|d| {
        let env = d.env();
        let buf = env.buffer_from(CL_MEM_READ_WRITE, &[0u32; 64]);
        let other = env.buffer_from(CL_MEM_READ_WRITE, &[0u32; 16]);
        let mut host = [0u8; 512];
        // SAFETY: host has 512 bytes; every call is rejected before any transfer.
        unsafe {
            expect_error(
                "clEnqueueReadBuffer past the end",
                clEnqueueReadBuffer(
                    env.q(),
                    buf.raw(),
                    CL_TRUE,
                    200,
                    100,
                    host.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clEnqueueReadBuffer NULL ptr",
                clEnqueueReadBuffer(
                    env.q(),
                    buf.raw(),
                    CL_TRUE,
                    0,
                    4,
                    ptr::null_mut(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clEnqueueWriteBuffer past the end",
                clEnqueueWriteBuffer(
                    env.q(),
                    buf.raw(),
                    CL_TRUE,
                    0,
                    257,
                    host.as_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clEnqueueCopyBuffer past the end of dst",
                clEnqueueCopyBuffer(env.q(), buf.raw(), other.raw(), 0, 0, 128, 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clEnqueueCopyBuffer overlapping",
                clEnqueueCopyBuffer(env.q(), buf.raw(), buf.raw(), 0, 16, 32, 0, ptr::null(), ptr::null_mut()),
                CL_MEM_COPY_OVERLAP,
            );
            let pat = [1u8, 2, 3];
            expect_error(
                "clEnqueueFillBuffer pattern size 3",
                clEnqueueFillBuffer(env.q(), buf.raw(), pat.as_ptr().cast(), 3, 0, 12, 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clEnqueueFillBuffer offset not a multiple of the pattern",
                clEnqueueFillBuffer(env.q(), buf.raw(), pat.as_ptr().cast(), 2, 1, 4, 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            let mut err = CL_INT_UNSET;
            let p = clEnqueueMapBuffer(
                env.q(),
                buf.raw(),
                CL_TRUE,
                CL_MAP_READ,
                250,
                8,
                0,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            );
            assert!(p.is_null());
            expect_error("clEnqueueMapBuffer past the end", err, CL_INVALID_VALUE);
            expect_error(
                "clEnqueueUnmapMemObject of a pointer never mapped",
                clEnqueueUnmapMemObject(env.q(), buf.raw(), host.as_mut_ptr().cast(), 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            let null_event: cl_event = ptr::null_mut();
            expect_error(
                "clEnqueueReadBuffer with a NULL event in the wait list",
                clEnqueueReadBuffer(
                    env.q(),
                    buf.raw(),
                    CL_TRUE,
                    0,
                    4,
                    host.as_mut_ptr().cast(),
                    1,
                    &null_event,
                    ptr::null_mut(),
                ),
                CL_INVALID_EVENT_WAIT_LIST,
            );
            expect_error(
                "clEnqueueReadBuffer with a wait list count but no list",
                clEnqueueReadBuffer(
                    env.q(),
                    buf.raw(),
                    CL_TRUE,
                    0,
                    4,
                    host.as_mut_ptr().cast(),
                    1,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_EVENT_WAIT_LIST,
            );
        }
    });
}

#[test]
fn bad_kernel_arguments() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(K, "", "k");
        let buf = env.buffer(CL_MEM_READ_WRITE, 64);
        let v8 = 0u64;
        let raw_mem = buf.raw();
        // SAFETY: every value pointer points to at least the size passed.
        unsafe {
            expect_error(
                "clSetKernelArg(int arg, size 8)",
                clSetKernelArg(k.raw(), 1, 8, (&v8 as *const u64).cast()),
                CL_INVALID_ARG_SIZE,
            );
            expect_error(
                "clSetKernelArg(buffer arg, size 4)",
                clSetKernelArg(k.raw(), 0, 4, (&raw_mem as *const cl_mem).cast()),
                CL_INVALID_ARG_SIZE,
            );
            expect_error(
                "clSetKernelArg(index 3 of 3)",
                clSetKernelArg(k.raw(), 3, 4, (&v8 as *const u64).cast()),
                CL_INVALID_ARG_INDEX,
            );
            expect_error(
                "clSetKernelArg(__local arg, size 0)",
                clSetKernelArg(k.raw(), 2, 0, ptr::null()),
                CL_INVALID_ARG_SIZE,
            );
            expect_error(
                "clSetKernelArg(__local arg, non-NULL value)",
                clSetKernelArg(k.raw(), 2, 64, (&v8 as *const u64).cast()),
                CL_INVALID_ARG_VALUE,
            );
            expect_error(
                "clSetKernelArg(int arg, NULL value)",
                clSetKernelArg(k.raw(), 1, 4, ptr::null()),
                CL_INVALID_ARG_VALUE,
            );
        }
    });
}

#[test]
fn enqueue_with_unset_argument() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(K, "", "k");
        let buf = env.buffer(CL_MEM_READ_WRITE, 64 * 4);
        k.set_mem(0, &buf);
        k.set_local(2, 64 * 4);
        // Argument 1 is never set.
        expect_error(
            "clEnqueueNDRangeKernel with arg 1 unset",
            nd_err(&env, &k, &[64], Some(&[64])),
            CL_INVALID_KERNEL_ARGS,
        );
    });
}

#[test]
fn bad_work_dimensions() {
    for_each_device(|d| {
        let env = d.env();
        let (k, _buf) = kernel_ready(&env, "");
        let sizes = [64usize; 4];
        for dim in [0u32, 4] {
            // SAFETY: sizes has 4 entries, enough for any work_dim tried.
            let code = unsafe {
                clEnqueueNDRangeKernel(
                    env.q(),
                    k.raw(),
                    dim,
                    ptr::null(),
                    sizes.as_ptr(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                )
            };
            expect_error(&format!("clEnqueueNDRangeKernel(work_dim {dim})"), code, CL_INVALID_WORK_DIMENSION);
        }
    });
}

#[test]
fn bad_work_group_sizes() {
    for_each_device(|d| {
        let env = d.env();
        // OpenCL C 1.2 (no -cl-std): local size must divide the global size.
        let (k, _b1) = kernel_ready(&env, "");
        expect_error("1000 / 64 with OpenCL C 1.2", nd_err(&env, &k, &[1000], Some(&[64])), CL_INVALID_WORK_GROUP_SIZE);
        // -cl-uniform-work-group-size under OpenCL C 3.0.
        let (k3, _b2) = kernel_ready(&env, "-cl-std=CL3.0 -cl-uniform-work-group-size");
        expect_error(
            "1000 / 64 with -cl-uniform-work-group-size",
            nd_err(&env, &k3, &[1000], Some(&[64])),
            CL_INVALID_WORK_GROUP_SIZE,
        );
        // More work-items per group than the device allows, each dimension within its
        // CL_DEVICE_MAX_WORK_ITEM_SIZES limit.
        let max_wg: usize = device_info(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        let items: Vec<usize> = device_info_array(d.id, CL_DEVICE_MAX_WORK_ITEM_SIZES);
        let a = items[0].min(max_wg);
        let b = max_wg / a + 1;
        assert!(b <= items[1], "cannot build an oversized group within the item limits");
        let local = [a, b];
        // A kernel without memory accesses, harmless even if wrongly accepted.
        let nop = env.kernel("__kernel void nop(int x) { }", "", "nop");
        nop.set_arg(0, &0i32);
        expect_error(
            &format!("local {a}x{b} > max work-group size {max_wg}"),
            nd_err(&env, &nop, &local, Some(&local)),
            CL_INVALID_WORK_GROUP_SIZE,
        );
        // A local size other than reqd_work_group_size.
        const REQD: &str = "__kernel __attribute__((reqd_work_group_size(16, 1, 1))) \
                            void r(__global int* p) { p[get_global_id(0)] = 1; }";
        let kr = env.kernel(REQD, "", "r");
        let buf = env.buffer(CL_MEM_READ_WRITE, 64 * 4);
        kr.set_mem(0, &buf);
        expect_error(
            "local 32 with reqd_work_group_size(16,1,1)",
            nd_err(&env, &kr, &[64], Some(&[32])),
            CL_INVALID_WORK_GROUP_SIZE,
        );
        // The valid configurations still work after the failures.
        assert_eq!(nd_err(&env, &kr, &[64], Some(&[16])), CL_SUCCESS);
        env.finish();
        assert_eq!(env.read::<i32>(&buf, 64), vec![1; 64]);
    });
}

#[test]
fn bad_info_queries() {
    for_each_device(|d| {
        let mut small = [0u8; 2];
        let mut size = 0usize;
        // SAFETY: small has 2 bytes, the size passed.
        unsafe {
            expect_error(
                "clGetDeviceInfo(CL_DEVICE_NAME into 2 bytes)",
                clGetDeviceInfo(d.id, CL_DEVICE_NAME, 2, small.as_mut_ptr().cast(), ptr::null_mut()),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clGetDeviceInfo(unknown param)",
                clGetDeviceInfo(d.id, 0x7fff, 0, ptr::null_mut(), &mut size),
                CL_INVALID_VALUE,
            );
            expect_error(
                "clGetPlatformInfo(unknown param)",
                clGetPlatformInfo(d.platform, 0x7fff, 0, ptr::null_mut(), &mut size),
                CL_INVALID_VALUE,
            );
        }
    });
}

#[test]
fn bad_program_objects() {
    for_each_device(|d| {
        let env = d.env();
        let mut err = CL_INT_UNSET;
        // SAFETY: count 0 with NULL arrays is rejected before any read.
        unsafe {
            let p = clCreateProgramWithSource(env.context.raw(), 0, ptr::null_mut(), ptr::null(), &mut err);
            assert!(p.is_null());
            expect_error("clCreateProgramWithSource(count 0)", err, CL_INVALID_VALUE);
        }
        // A program that was never built has no executable.
        let program = program_from_source(&env.context, K);
        let e = create_kernel(&program, "k").expect_err("kernel from an unbuilt program");
        expect_error("clCreateKernel before clBuildProgram", e.code, CL_INVALID_PROGRAM_EXECUTABLE);
        // A user event's status can only be set once.
        // SAFETY: a valid context; a user event of it.
        unsafe {
            let user = Event::from_raw(cl_create!(clCreateUserEvent(env.context.raw())));
            cl!(clSetUserEventStatus(user.raw(), CL_COMPLETE));
            expect_error(
                "clSetUserEventStatus twice",
                clSetUserEventStatus(user.raw(), CL_COMPLETE),
                CL_INVALID_OPERATION,
            );
        }
    });
}
