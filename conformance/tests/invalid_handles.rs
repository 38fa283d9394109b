//! Handles that are not objects of the expected type must give that type's CL_INVALID_*.
//!
//! Only pointers to valid, readable memory are used, never wild pointers. A "fake" object
//! is a zeroed 4 KiB block whose first two words (the ICD loader's header: the dispatch
//! table pointer and the cl_khr_icd 2.0 dispatch-data word) are copied from a real handle,
//! so that the ICD loader routes the call to the driver, which must then notice that the
//! rest is not one of its objects. (A fully zeroed block would make the loader itself
//! jump through a NULL dispatch table.) The other tests pass a real object of another
//! type.
//!
//! Note: PoCL 3.1 does not validate handles this way (it crashes, even on a NULL kernel
//! passed with a valid queue), so this file is SoftCL-only in practice.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

/// A zeroed, 64-byte aligned 4 KiB block starting with a copy of a real handle's loader
/// header.
#[repr(C, align(64))]
struct Fake([usize; 512]);

impl Fake {
    fn like<T>(real: *mut T) -> Box<Fake> {
        assert!(!real.is_null());
        let mut f = Box::new(Fake([0; 512]));
        // SAFETY: every ICD handle starts with the dispatch pointer and the dispatch-data
        // word (cl_icd.h), so two words are readable.
        unsafe {
            let words = real.cast::<usize>();
            f.0[0] = *words;
            f.0[1] = *words.add(1);
        }
        f
    }

    fn handle<T>(&mut self) -> *mut T {
        (self as *mut Fake).cast()
    }
}

struct Objects {
    env: TestEnv,
    program: Program,
    kernel: Kernel,
    mem: Mem,
    event: Event,
}

fn objects(d: &TestDevice) -> Objects {
    let env = d.env();
    let program = env.build("__kernel void k(__global int* p) { p[0] = 1; }", "");
    let kernel = create_kernel(&program, "k").unwrap();
    let mem = env.buffer(CL_MEM_READ_WRITE, 64);
    kernel.set_mem(0, &mem);
    let event = env.run(&kernel, &[1], None);
    Objects { env, program, kernel, mem, event }
}

#[test]
fn fake_objects_with_a_real_dispatch_table() {
    for_each_device(|d| {
        let o = objects(d);
        let q = o.env.q();
        let mut fctx = Fake::like(o.env.context.raw());
        let mut fq = Fake::like(q);
        let mut fmem = Fake::like(o.mem.raw());
        let mut fprog = Fake::like(o.program.raw());
        let mut fk = Fake::like(o.kernel.raw());
        let mut fev = Fake::like(o.event.raw());
        let mut fdev = Fake::like(d.id);
        let mut err = CL_INT_UNSET;
        let mut host = [0u8; 64];
        let mut n: cl_uint = 0;
        let nptr = (&mut n as *mut cl_uint).cast::<c_void>();
        // SAFETY: every handle points to 4 KiB of readable memory; outputs are valid; all
        // calls are expected to fail before any transfer.
        unsafe {
            let m = clCreateBuffer(fctx.handle(), CL_MEM_READ_WRITE, 64, ptr::null_mut(), &mut err);
            assert!(m.is_null());
            expect_error("clCreateBuffer(fake context)", err, CL_INVALID_CONTEXT);
            expect_error(
                "clGetContextInfo(fake context)",
                clGetContextInfo(fctx.handle(), CL_CONTEXT_NUM_DEVICES, 4, nptr, ptr::null_mut()),
                CL_INVALID_CONTEXT,
            );
            expect_error("clRetainContext(fake)", clRetainContext(fctx.handle()), CL_INVALID_CONTEXT);

            expect_error("clFinish(fake queue)", clFinish(fq.handle()), CL_INVALID_COMMAND_QUEUE);
            expect_error(
                "clEnqueueReadBuffer(fake queue)",
                clEnqueueReadBuffer(
                    fq.handle(),
                    o.mem.raw(),
                    CL_TRUE,
                    0,
                    4,
                    host.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_COMMAND_QUEUE,
            );

            expect_error(
                "clEnqueueReadBuffer(fake buffer)",
                clEnqueueReadBuffer(
                    q,
                    fmem.handle(),
                    CL_TRUE,
                    0,
                    4,
                    host.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_MEM_OBJECT,
            );
            expect_error(
                "clGetMemObjectInfo(fake)",
                clGetMemObjectInfo(fmem.handle(), CL_MEM_SIZE, 8, host.as_mut_ptr().cast(), ptr::null_mut()),
                CL_INVALID_MEM_OBJECT,
            );
            let fake_mem: cl_mem = fmem.handle();
            expect_error(
                "clSetKernelArg(fake buffer)",
                clSetKernelArg(o.kernel.raw(), 0, std::mem::size_of::<cl_mem>(), (&fake_mem as *const cl_mem).cast()),
                CL_INVALID_MEM_OBJECT,
            );

            expect_error(
                "clBuildProgram(fake program)",
                clBuildProgram(fprog.handle(), 0, ptr::null(), ptr::null(), None, ptr::null_mut()),
                CL_INVALID_PROGRAM,
            );
            let k = clCreateKernel(fprog.handle(), c"k".as_ptr(), &mut err);
            assert!(k.is_null());
            expect_error("clCreateKernel(fake program)", err, CL_INVALID_PROGRAM);

            let v = 0i32;
            expect_error(
                "clSetKernelArg(fake kernel)",
                clSetKernelArg(fk.handle(), 0, 4, (&v as *const i32).cast()),
                CL_INVALID_KERNEL,
            );
            let global = [1usize];
            expect_error(
                "clEnqueueNDRangeKernel(fake kernel)",
                clEnqueueNDRangeKernel(
                    q,
                    fk.handle(),
                    1,
                    ptr::null(),
                    global.as_ptr(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_KERNEL,
            );

            let fe: cl_event = fev.handle();
            expect_error("clWaitForEvents(fake)", clWaitForEvents(1, &fe), CL_INVALID_EVENT);
            expect_error(
                "clGetEventInfo(fake)",
                clGetEventInfo(fe, CL_EVENT_COMMAND_EXECUTION_STATUS, 4, nptr, ptr::null_mut()),
                CL_INVALID_EVENT,
            );
            expect_error(
                "clEnqueueReadBuffer(fake event in wait list)",
                clEnqueueReadBuffer(q, o.mem.raw(), CL_TRUE, 0, 4, host.as_mut_ptr().cast(), 1, &fe, ptr::null_mut()),
                CL_INVALID_EVENT_WAIT_LIST,
            );

            expect_error(
                "clGetDeviceInfo(fake device)",
                clGetDeviceInfo(fdev.handle(), CL_DEVICE_TYPE, 8, host.as_mut_ptr().cast(), ptr::null_mut()),
                CL_INVALID_DEVICE,
            );
            let fd: cl_device_id = fdev.handle();
            let c = clCreateContext(ptr::null(), 1, &fd, None, ptr::null_mut(), &mut err);
            assert!(c.is_null());
            expect_error("clCreateContext(fake device)", err, CL_INVALID_DEVICE);
        }
        // The real objects are untouched.
        assert_eq!(o.env.read::<i32>(&o.mem, 1), vec![1]);
    });
}

#[test]
fn objects_of_the_wrong_type() {
    for_each_device(|d| {
        let o = objects(d);
        let q = o.env.q();
        let ctx = o.env.context.raw();
        let mut err = CL_INT_UNSET;
        let mut host = [0u8; 64];
        // SAFETY: every handle is a live object (of another type); outputs are valid.
        unsafe {
            let m = clCreateBuffer(q.cast(), CL_MEM_READ_WRITE, 64, ptr::null_mut(), &mut err);
            assert!(m.is_null());
            expect_error("clCreateBuffer(queue as context)", err, CL_INVALID_CONTEXT);
            expect_error("clFinish(buffer as queue)", clFinish(o.mem.raw().cast()), CL_INVALID_COMMAND_QUEUE);
            expect_error(
                "clEnqueueReadBuffer(context as buffer)",
                clEnqueueReadBuffer(
                    q,
                    ctx.cast(),
                    CL_TRUE,
                    0,
                    4,
                    host.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                CL_INVALID_MEM_OBJECT,
            );
            let k = clCreateKernel(o.kernel.raw().cast(), c"k".as_ptr(), &mut err);
            assert!(k.is_null());
            expect_error("clCreateKernel(kernel as program)", err, CL_INVALID_PROGRAM);
            let v = 0i32;
            expect_error(
                "clSetKernelArg(program as kernel)",
                clSetKernelArg(o.program.raw().cast(), 0, 4, (&v as *const i32).cast()),
                CL_INVALID_KERNEL,
            );
            let not_event: cl_event = o.mem.raw().cast();
            expect_error("clWaitForEvents(buffer as event)", clWaitForEvents(1, &not_event), CL_INVALID_EVENT);
            expect_error(
                "clGetDeviceInfo(context as device)",
                clGetDeviceInfo(ctx.cast(), CL_DEVICE_TYPE, 8, host.as_mut_ptr().cast(), ptr::null_mut()),
                CL_INVALID_DEVICE,
            );
            let not_mem: cl_mem = o.event.raw().cast();
            expect_error(
                "clSetKernelArg(event as buffer)",
                clSetKernelArg(o.kernel.raw(), 0, std::mem::size_of::<cl_mem>(), (&not_mem as *const cl_mem).cast()),
                CL_INVALID_MEM_OBJECT,
            );
        }
        // Every object still works.
        let ev = o.env.run(&o.kernel, &[1], None);
        assert_eq!(ev.status(), CL_COMPLETE);
    });
}

#[test]
fn null_kernel_behind_a_valid_queue() {
    for_each_device(|d| {
        let env = d.env();
        let global = [16usize];
        // SAFETY: the loader dispatches through the valid queue; the driver must reject the
        // NULL kernel before using it.
        let code = unsafe {
            clEnqueueNDRangeKernel(
                env.q(),
                ptr::null_mut(),
                1,
                ptr::null(),
                global.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        expect_error("clEnqueueNDRangeKernel(NULL kernel)", code, CL_INVALID_KERNEL);
    });
}

/// Small integers and forged addresses where a `cl_mem` or `cl_event` is expected, inside
/// an argument the loader does not dispatch through (the value of a buffer argument, an
/// event of a wait list): the type's error, not a crash reading an unmapped page.
#[test]
fn small_and_forged_addresses_inside_arguments() {
    for_each_device(|d| {
        let o = objects(d);
        for bad in [0x10usize, 0x1000, 0xffff_ffff_ffff_fff0, 0x8000_0000_0000_0000] {
            let mem = bad as cl_mem;
            // SAFETY: a valid kernel; the argument is a cl_mem-sized value (a forged handle).
            let err = unsafe {
                clSetKernelArg(o.kernel.raw(), 0, std::mem::size_of::<cl_mem>(), (&mem as *const cl_mem).cast())
            };
            expect_error(&format!("clSetKernelArg with cl_mem {bad:#x}"), err, CL_INVALID_MEM_OBJECT);
            let event = bad as cl_event;
            // SAFETY: a valid queue and kernel; the wait list holds one (forged) event.
            let err = unsafe {
                clEnqueueNDRangeKernel(
                    o.env.q(),
                    o.kernel.raw(),
                    1,
                    ptr::null(),
                    [1usize].as_ptr(),
                    ptr::null(),
                    1,
                    &event,
                    ptr::null_mut(),
                )
            };
            expect_error(&format!("a wait list with event {bad:#x}"), err, CL_INVALID_EVENT_WAIT_LIST);
        }
    });
}
