//! Shared virtual memory through the loader: capabilities, clSVMAlloc/clSVMFree, SVM kernel
//! arguments and exec info, the SVM commands (events, wait lists, profiling) and their errors.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

fn caps(dev: cl_device_id) -> cl_device_svm_capabilities {
    device_info::<cl_device_svm_capabilities>(dev, CL_DEVICE_SVM_CAPABILITIES)
}

fn alloc(ctx: &Context, flags: cl_svm_mem_flags, size: usize, align: cl_uint) -> *mut c_void {
    // SAFETY: a valid context; clSVMAlloc reports failure as NULL.
    unsafe { clSVMAlloc(ctx.raw(), flags, size, align) }
}

fn free(ctx: &Context, p: *mut c_void) {
    // SAFETY: p is NULL or an allocation of ctx no command still uses.
    unsafe { clSVMFree(ctx.raw(), p) }
}

fn command_type(ev: &Event) -> cl_command_type {
    event_info::<cl_command_type>(ev.raw(), CL_EVENT_COMMAND_TYPE)
}

const SCALE: &str = r#"
__kernel void scale(__global int* p, int k) {
    size_t i = get_global_id(0);
    p[i] = p[i] * k + (int)i;
}
__kernel void span(__global int* begin, __global int* end, __global int* out) {
    out[0] = (int)(end - begin);
}
__kernel void count(volatile __global int* counter, __global int* out) {
    out[get_global_id(0)] = atomic_inc(counter);
}
// Nodes of a list: {value, pad, next} as longs (the next pointer is stored as an integer, so
// the kernel needs no recursive type).
__kernel void follow(__global long* head, __global int* out) {
    int sum = 0;
    for (__global long* n = head; n; n = (__global long*)n[1]) sum += (int)n[0];
    out[get_global_id(0)] = sum;
}
"#;

/// SoftCL's own answer: buffer SVM with atomics on both devices, system SVM on the CPU one.
#[test]
fn softcl_svm_capabilities() {
    for_each_device(|d| {
        let c = caps(d.id);
        let buffer = (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER | CL_DEVICE_SVM_ATOMICS)
            as cl_device_svm_capabilities;
        assert_eq!(c & buffer, buffer, "{:#x}", c);
        let system = c & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM as cl_device_svm_capabilities != 0;
        assert_eq!(system, d.kind == DeviceKind::Cpu, "fine-grain system SVM on the CPU device only");
    });
}

#[test]
fn alloc_errors_return_null() {
    for_each_device(|d| {
        let ctx = d.context();
        let rw = CL_MEM_READ_WRITE;
        assert!(alloc(&ctx, rw, 0, 0).is_null(), "size 0");
        assert!(alloc(&ctx, rw, usize::MAX / 2, 0).is_null(), "size above CL_DEVICE_MAX_MEM_ALLOC_SIZE");
        assert!(alloc(&ctx, rw, 64, 3).is_null(), "alignment not a power of two");
        assert!(alloc(&ctx, rw | CL_MEM_READ_ONLY, 64, 0).is_null(), "two access flags");
        assert!(alloc(&ctx, CL_MEM_SVM_ATOMICS, 64, 0).is_null(), "atomics without fine grain");
        assert!(alloc(&ctx, CL_MEM_USE_HOST_PTR, 64, 0).is_null(), "a buffer-only flag");
        // SAFETY: NULL is not a valid context; the call must fail, not crash.
        assert!(unsafe { clSVMAlloc(ptr::null_mut(), rw, 64, 0) }.is_null());
        for align in [0u32, 4, 256, 4096] {
            let p = alloc(&ctx, rw, 1000, align);
            assert!(!p.is_null());
            assert_eq!(p as usize % align.max(128) as usize, 0, "alignment {align}");
            free(&ctx, p);
        }
        // clSVMFree of NULL does nothing.
        free(&ctx, ptr::null_mut());
    });
}

#[test]
fn coarse_grain_map_kernel_unmap() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let n = 256usize;
        let p = alloc(ctx, CL_MEM_READ_WRITE, n * 4, 0) as *mut i32;
        assert!(!p.is_null());
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: p is an SVM allocation of n ints; maps are blocking, the kernel finishes
        // before the host reads.
        unsafe {
            cl!(clEnqueueSVMMap(env.q(), CL_TRUE, CL_MAP_WRITE, p.cast(), n * 4, 0, ptr::null(), &mut ev));
            let map = Event::from_raw(ev);
            assert_eq!(command_type(&map), CL_COMMAND_SVM_MAP);
            let [queued, submit, start, end] = map.profile();
            assert!(queued <= submit && submit <= start && start <= end);
            for i in 0..n {
                *p.add(i) = i as i32;
            }
            cl!(clEnqueueSVMUnmap(env.q(), p.cast(), 0, ptr::null(), &mut ev));
            assert_eq!(command_type(&Event::from_raw(ev)), CL_COMMAND_SVM_UNMAP);
            let k = env.kernel(SCALE, "", "scale");
            // An offset into the allocation is a valid SVM argument.
            cl!(clSetKernelArgSVMPointer(k.raw(), 0, p.add(16).cast()));
            k.set_arg(1, &3i32);
            env.run(&k, &[n - 16], None);
            cl!(clEnqueueSVMMap(env.q(), CL_TRUE, CL_MAP_READ, p.cast(), n * 4, 0, ptr::null(), ptr::null_mut()));
            for i in 0..n {
                let want = if i < 16 { i as i32 } else { i as i32 * 3 + (i - 16) as i32 };
                assert_eq!(*p.add(i), want, "element {i}");
            }
            cl!(clEnqueueSVMUnmap(env.q(), p.cast(), 0, ptr::null(), ptr::null_mut()));
            env.finish();
        }
        free(ctx, p.cast());
    });
}

#[test]
fn fine_grain_atomics_seen_by_the_host() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let flags = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
        let counter = alloc(ctx, flags, 4, 0) as *mut i32;
        let n = 1000usize;
        let out = alloc(ctx, flags, n * 4, 0) as *mut i32;
        assert!(!counter.is_null() && !out.is_null());
        // SAFETY: fine-grain allocations are host memory the host may touch without a map;
        // the kernel has finished before the host reads.
        unsafe {
            *counter = 5;
            let k = env.kernel(SCALE, "", "count");
            cl!(clSetKernelArgSVMPointer(k.raw(), 0, counter.cast()));
            cl!(clSetKernelArgSVMPointer(k.raw(), 1, out.cast()));
            env.run(&k, &[n], None);
            assert_eq!(*counter, 5 + n as i32);
            let mut seen: Vec<i32> = std::slice::from_raw_parts(out, n).to_vec();
            seen.sort();
            assert_eq!(seen, (5..5 + n as i32).collect::<Vec<_>>(), "every atomic_inc returned a distinct value");
        }
        free(ctx, counter.cast());
        free(ctx, out.cast());
    });
}

#[test]
fn memcpy_and_fill_with_events_and_errors() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let q = env.q();
        let a = alloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 1024, 0) as *mut u8;
        let b = alloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 1024, 0) as *mut u8;
        let pattern = [1u8, 2, 3, 4];
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: a and b are 1024-byte fine-grain allocations; every command below has
        // completed before the host reads them.
        unsafe {
            // clSVMAlloc does not promise zeroed memory.
            ptr::write_bytes(a, 0, 1024);
            ptr::write_bytes(b, 0, 1024);
            // A fill gated on a user event runs only once the event completes.
            let gate = cl_create!(clCreateUserEvent(ctx.raw()));
            cl!(clEnqueueSVMMemFill(q, a.cast(), pattern.as_ptr().cast(), 4, 1024, 1, &gate, &mut ev));
            let fill = Event::from_raw(ev);
            assert_eq!(command_type(&fill), CL_COMMAND_SVM_MEMFILL);
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(*a, 0, "the fill waits for its wait list");
            cl!(clSetUserEventStatus(gate, CL_COMPLETE));
            cl!(clReleaseEvent(gate));
            cl!(clEnqueueSVMMemcpy(q, CL_TRUE, b.cast(), a.add(8).cast(), 512, 0, ptr::null(), &mut ev));
            let copy = Event::from_raw(ev);
            assert_eq!(command_type(&copy), CL_COMMAND_SVM_MEMCPY);
            assert_eq!(copy.status(), CL_COMPLETE, "a blocking copy has completed");
            let [_, _, start, end] = copy.profile();
            assert!(start <= end);
            let got = std::slice::from_raw_parts(b, 1024);
            assert!(got[..512].chunks(4).all(|c| c == pattern));
            assert!(got[512..].iter().all(|&x| x == 0));
            // Copies between host memory and SVM.
            let host: Vec<u8> = (0..64).collect();
            cl!(clEnqueueSVMMemcpy(q, CL_TRUE, b.cast(), host.as_ptr().cast(), 64, 0, ptr::null(), ptr::null_mut()));
            assert_eq!(std::slice::from_raw_parts(b, 64), &host[..]);

            let err = |code: cl_int, want: cl_int, what: &str| assert_eq!(code, want, "{what}");
            let (pp, np) = (pattern.as_ptr().cast::<c_void>(), ptr::null::<cl_event>());
            let null = ptr::null_mut();
            err(clEnqueueSVMMemcpy(q, CL_TRUE, null, a.cast(), 4, 0, np, null.cast()), CL_INVALID_VALUE, "NULL dst");
            err(
                clEnqueueSVMMemcpy(q, CL_TRUE, a.cast(), ptr::null(), 4, 0, np, null.cast()),
                CL_INVALID_VALUE,
                "NULL src",
            );
            err(
                clEnqueueSVMMemcpy(q, CL_TRUE, a.cast(), a.add(2).cast(), 4, 0, np, null.cast()),
                CL_MEM_COPY_OVERLAP,
                "overlap",
            );
            err(
                clEnqueueSVMMemcpy(ptr::null_mut(), CL_TRUE, a.cast(), b.cast(), 4, 0, np, null.cast()),
                CL_INVALID_COMMAND_QUEUE,
                "queue",
            );
            err(
                clEnqueueSVMMemcpy(q, CL_TRUE, a.cast(), b.cast(), 4, 1, np, null.cast()),
                CL_INVALID_EVENT_WAIT_LIST,
                "wait list",
            );
            err(clEnqueueSVMMemFill(q, null, pp, 4, 16, 0, np, null.cast()), CL_INVALID_VALUE, "NULL svm_ptr");
            err(
                clEnqueueSVMMemFill(q, a.cast(), ptr::null(), 4, 16, 0, np, null.cast()),
                CL_INVALID_VALUE,
                "NULL pattern",
            );
            err(clEnqueueSVMMemFill(q, a.cast(), pp, 3, 12, 0, np, null.cast()), CL_INVALID_VALUE, "pattern size 3");
            err(clEnqueueSVMMemFill(q, a.cast(), pp, 0, 16, 0, np, null.cast()), CL_INVALID_VALUE, "pattern size 0");
            err(clEnqueueSVMMemFill(q, a.add(2).cast(), pp, 4, 16, 0, np, null.cast()), CL_INVALID_VALUE, "misaligned");
            err(
                clEnqueueSVMMemFill(q, a.cast(), pp, 4, 18, 0, np, null.cast()),
                CL_INVALID_VALUE,
                "size not a multiple",
            );
            err(clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, null, 16, 0, np, null.cast()), CL_INVALID_VALUE, "map NULL");
            err(
                clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, a.cast(), 0, 0, np, null.cast()),
                CL_INVALID_VALUE,
                "map size 0",
            );
            err(clEnqueueSVMMap(q, CL_TRUE, 1 << 9, a.cast(), 16, 0, np, null.cast()), CL_INVALID_VALUE, "map flags");
            err(clEnqueueSVMUnmap(q, null, 0, np, null.cast()), CL_INVALID_VALUE, "unmap NULL");
            env.finish();
        }
        free(ctx, a.cast());
        free(ctx, b.cast());
    });
}

struct FreeRecord {
    queue: cl_command_queue,
    pointers: Vec<usize>,
    context: cl_context,
}

extern "C" fn free_callback(queue: cl_command_queue, n: cl_uint, ptrs: *mut *mut c_void, user: *mut c_void) {
    // SAFETY: user_data is the FreeRecord the test passed; ptrs holds n pointers for the call.
    unsafe {
        let rec = &mut *(user as *mut FreeRecord);
        rec.queue = queue;
        rec.pointers = std::slice::from_raw_parts(ptrs, n as usize).iter().map(|&p| p as usize).collect();
        for &p in std::slice::from_raw_parts(ptrs, n as usize) {
            clSVMFree(rec.context, p);
        }
    }
}

#[test]
fn enqueue_svm_free_with_and_without_callback() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let q = env.q();
        let mut ptrs = [alloc(ctx, CL_MEM_READ_WRITE, 64, 0), alloc(ctx, CL_MEM_READ_WRITE, 128, 0)];
        let want: Vec<usize> = ptrs.iter().map(|&p| p as usize).collect();
        let mut rec = FreeRecord { queue: ptr::null_mut(), pointers: Vec::new(), context: ctx.raw() };
        let mut ev: cl_event = ptr::null_mut();
        // SAFETY: the pointers are allocations of ctx; rec outlives the command (waited for).
        unsafe {
            let user = (&mut rec as *mut FreeRecord).cast();
            cl!(clEnqueueSVMFree(q, 2, ptrs.as_mut_ptr(), Some(free_callback), user, 0, ptr::null(), &mut ev));
            // The application may reuse its array at once.
            ptrs = [ptr::null_mut(); 2];
            let e = Event::from_raw(ev);
            e.wait();
            assert_eq!(command_type(&e), CL_COMMAND_SVM_FREE);
            assert_eq!(rec.queue, q);
            assert_eq!(rec.pointers, want);
            // Without a callback the driver frees them.
            let mut more = [alloc(ctx, CL_MEM_READ_WRITE, 64, 0)];
            cl!(clEnqueueSVMFree(q, 1, more.as_mut_ptr(), None, ptr::null_mut(), 0, ptr::null(), &mut ev));
            Event::from_raw(ev).wait();
            let np = ptr::null::<cl_event>();
            assert_eq!(
                clEnqueueSVMFree(q, 1, ptr::null_mut(), None, ptr::null_mut(), 0, np, ptr::null_mut()),
                CL_INVALID_VALUE
            );
            assert_eq!(
                clEnqueueSVMFree(q, 0, more.as_mut_ptr(), None, ptr::null_mut(), 0, np, ptr::null_mut()),
                CL_INVALID_VALUE
            );
            // An empty list is a valid command.
            cl!(clEnqueueSVMFree(q, 0, ptr::null_mut(), None, ptr::null_mut(), 0, np, ptr::null_mut()));
            env.finish();
        }
        let _ = ptrs;
    });
}

#[test]
fn kernel_arg_and_exec_info() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let k = env.kernel(SCALE, "", "follow");
        let scale = env.kernel(SCALE, "", "scale");
        #[repr(C)]
        struct Node {
            value: i64,
            next: *mut Node,
        }
        let flags = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;
        // A list across two allocations: only the head is an argument, the other allocation
        // is named by CL_KERNEL_EXEC_INFO_SVM_PTRS.
        let a = alloc(ctx, flags, std::mem::size_of::<Node>() * 2, 0) as *mut Node;
        let b = alloc(ctx, flags, std::mem::size_of::<Node>(), 0) as *mut Node;
        let out = alloc(ctx, flags, 4, 0) as *mut i32;
        // SAFETY: fine-grain allocations of the sizes used; the kernel has finished before the
        // host reads `out`.
        unsafe {
            a.write(Node { value: 1, next: a.add(1) });
            a.add(1).write(Node { value: 20, next: b });
            b.write(Node { value: 300, next: ptr::null_mut() });
            cl!(clSetKernelArgSVMPointer(k.raw(), 0, a.cast()));
            cl!(clSetKernelArgSVMPointer(k.raw(), 1, out.cast()));
            let extra = [b as *mut c_void];
            cl!(clSetKernelExecInfo(k.raw(), CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, extra.as_ptr().cast()));
            env.run(&k, &[1], None);
            assert_eq!(*out, 321);

            let err = |code: cl_int, want: cl_int, what: &str| assert_eq!(code, want, "{what}");
            err(clSetKernelArgSVMPointer(k.raw(), 2, a.cast()), CL_INVALID_ARG_INDEX, "index");
            err(clSetKernelArgSVMPointer(scale.raw(), 1, a.cast()), CL_INVALID_ARG_VALUE, "an int argument");
            err(clSetKernelArgSVMPointer(ptr::null_mut(), 0, a.cast()), CL_INVALID_KERNEL, "kernel");
            err(
                clSetKernelExecInfo(k.raw(), CL_KERNEL_EXEC_INFO_SVM_PTRS, 7, extra.as_ptr().cast()),
                CL_INVALID_VALUE,
                "size",
            );
            err(clSetKernelExecInfo(k.raw(), CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, ptr::null()), CL_INVALID_VALUE, "NULL");
            err(clSetKernelExecInfo(k.raw(), 0x1234, 8, extra.as_ptr().cast()), CL_INVALID_VALUE, "param_name");
            err(
                clSetKernelExecInfo(k.raw(), CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, ptr::null()),
                CL_SUCCESS,
                "clearing the set",
            );
            let on: cl_bool = CL_TRUE;
            let set_system = clSetKernelExecInfo(
                k.raw(),
                CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
                std::mem::size_of::<cl_bool>(),
                (&on as *const cl_bool).cast(),
            );
            let system = caps(d.id) & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM as cl_device_svm_capabilities != 0;
            if system {
                err(set_system, CL_SUCCESS, "a device with fine-grain system SVM");
                // Fine-grain system SVM: a kernel reads and writes ordinary host memory.
                let mut host: Vec<i32> = (0..64).collect();
                cl!(clSetKernelArgSVMPointer(scale.raw(), 0, host.as_mut_ptr().cast()));
                scale.set_arg(1, &2i32);
                cl!(clSetKernelExecInfo(
                    scale.raw(),
                    CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
                    std::mem::size_of::<cl_bool>(),
                    (&on as *const cl_bool).cast()
                ));
                env.run(&scale, &[64], None);
                assert_eq!(host, (0..64).map(|i| i * 3).collect::<Vec<i32>>());
            } else {
                err(set_system, CL_INVALID_OPERATION, "no device with fine-grain system SVM");
                // Without system SVM an SVM argument must point into (or just past) a live
                // allocation: a host pointer, or one freed since, refuses the launch.
                let n = 64usize;
                let live = alloc(ctx, flags, n * 4, 0) as *mut i32;
                scale.set_arg(1, &2i32);
                let global = [n];
                let launch = |k: &Kernel| {
                    clEnqueueNDRangeKernel(
                        env.q(),
                        k.raw(),
                        1,
                        ptr::null(),
                        global.as_ptr(),
                        ptr::null(),
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                };
                let mut host: Vec<i32> = vec![0; n];
                cl!(clSetKernelArgSVMPointer(scale.raw(), 0, host.as_mut_ptr().cast()));
                err(launch(&scale), CL_INVALID_KERNEL_ARGS, "a host pointer");
                let freed = alloc(ctx, flags, n * 4, 0);
                cl!(clSetKernelArgSVMPointer(scale.raw(), 0, freed));
                free(ctx, freed);
                err(launch(&scale), CL_INVALID_KERNEL_ARGS, "a freed allocation");
                // The end of a live allocation is a valid pointer.
                let span = env.kernel(SCALE, "", "span");
                let out = alloc(ctx, flags, 4, 0) as *mut i32;
                cl!(clSetKernelArgSVMPointer(span.raw(), 0, live.cast()));
                cl!(clSetKernelArgSVMPointer(span.raw(), 1, live.add(n).cast()));
                cl!(clSetKernelArgSVMPointer(span.raw(), 2, out.cast()));
                let one = [1usize];
                let launch_one = clEnqueueNDRangeKernel(
                    env.q(),
                    span.raw(),
                    1,
                    ptr::null(),
                    one.as_ptr(),
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                );
                err(launch_one, CL_SUCCESS, "one past the end");
                env.finish();
                assert_eq!(*out, n as i32);
                free(ctx, out.cast());
                cl!(clSetKernelArgSVMPointer(scale.raw(), 0, live.cast()));
                err(launch(&scale), CL_SUCCESS, "a live allocation");
                env.finish();
                free(ctx, live.cast());
            }
        }
        for p in [a.cast(), b.cast(), out.cast()] {
            free(ctx, p);
        }
    });
}

#[test]
fn buffers_on_svm_pointers_and_migration() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let q = env.q();
        let p = alloc(ctx, CL_MEM_READ_WRITE, 4096, 0);
        // SAFETY: p is a 4096-byte allocation that outlives the buffers; host is a live array.
        unsafe {
            let buf = Mem::from_raw(cl_create!(clCreateBuffer(
                ctx.raw(),
                CL_MEM_USE_HOST_PTR,
                1024,
                p.cast::<u8>().add(256).cast()
            )));
            assert_eq!(mem_info::<cl_bool>(buf.raw(), CL_MEM_USES_SVM_POINTER), CL_TRUE);
            // A buffer may not reach past the end of the SVM allocation it uses.
            let (none, code) = cl_create_err!(clCreateBuffer(ctx.raw(), CL_MEM_USE_HOST_PTR, 8192, p));
            assert!(none.is_null());
            assert_eq!(code, CL_INVALID_BUFFER_SIZE);
            let region = cl_buffer_region { origin: 128, size: 256 };
            let sub = Mem::from_raw(cl_create!(clCreateSubBuffer(
                buf.raw(),
                CL_MEM_READ_WRITE,
                CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const cl_buffer_region).cast()
            )));
            assert_eq!(mem_info::<cl_bool>(sub.raw(), CL_MEM_USES_SVM_POINTER), CL_TRUE);
            // The buffer keeps its SVM memory even when the application frees the pointer
            // first: a 4 MiB allocation is its own mapping, unmapped when really freed.
            let big_size = 4 << 20;
            let big = alloc(ctx, CL_MEM_READ_WRITE, big_size, 0);
            let on_big = Mem::from_raw(cl_create!(clCreateBuffer(ctx.raw(), CL_MEM_USE_HOST_PTR, big_size, big)));
            free(ctx, big);
            let data: Vec<u32> = (0..(big_size / 4) as u32).collect();
            env.write(&on_big, &data);
            assert_eq!(env.read::<u32>(&on_big, big_size / 4), data);
            drop(on_big);
            let mut host = [0u8; 64];
            let plain =
                Mem::from_raw(cl_create!(clCreateBuffer(ctx.raw(), CL_MEM_USE_HOST_PTR, 64, host.as_mut_ptr().cast())));
            assert_eq!(mem_info::<cl_bool>(plain.raw(), CL_MEM_USES_SVM_POINTER), CL_FALSE);

            let mut ev: cl_event = ptr::null_mut();
            let ptrs = [p as *const c_void, p.cast::<u8>().add(100).cast()];
            let sizes = [4096usize, 0];
            let np = ptr::null::<cl_event>();
            let mut pp = ptrs;
            cl!(clEnqueueSVMMigrateMem(q, 2, pp.as_mut_ptr(), sizes.as_ptr(), 0, 0, np, &mut ev));
            assert_eq!(command_type(&Event::from_raw(ev)), CL_COMMAND_SVM_MIGRATE_MEM);
            cl!(clEnqueueSVMMigrateMem(
                q,
                2,
                pp.as_mut_ptr(),
                ptr::null(),
                CL_MIGRATE_MEM_OBJECT_HOST as u64,
                0,
                np,
                ptr::null_mut()
            ));
            let got = clEnqueueSVMMigrateMem(q, 2, pp.as_mut_ptr(), [8usize, 4000].as_ptr(), 0, 0, np, ptr::null_mut());
            assert_eq!(got, CL_INVALID_VALUE, "range beyond the allocation");
            assert_eq!(
                clEnqueueSVMMigrateMem(q, 0, pp.as_mut_ptr(), ptr::null(), 0, 0, np, ptr::null_mut()),
                CL_INVALID_VALUE
            );
            assert_eq!(
                clEnqueueSVMMigrateMem(q, 1, ptr::null_mut(), ptr::null(), 0, 0, np, ptr::null_mut()),
                CL_INVALID_VALUE
            );
            assert_eq!(
                clEnqueueSVMMigrateMem(q, 1, pp.as_mut_ptr(), ptr::null(), 1 << 8, 0, np, ptr::null_mut()),
                CL_INVALID_VALUE
            );
            let mut outside = [host.as_ptr() as *const c_void];
            assert_eq!(
                clEnqueueSVMMigrateMem(q, 1, outside.as_mut_ptr(), [4usize].as_ptr(), 0, 0, np, ptr::null_mut()),
                CL_INVALID_VALUE,
                "not an SVM allocation"
            );
            env.finish();
            drop((sub, buf, plain));
        }
        free(ctx, p);
    });
}

const LISTS: &str = r#"
typedef struct Node { int id; int pos; __global struct Node* next; } Node;
__kernel void create(__global Node* nodes, volatile __global int* next_free, int len) {
    int i = get_global_id(0);
    __global Node* node = &nodes[i];
    node->id = i; node->pos = 0;
    for (int j = 1; j < len; j++) {
        __global Node* fresh = &nodes[atomic_inc(next_free)];
        fresh->id = i; fresh->pos = j;
        node->next = fresh;
        node = fresh;
    }
    node->next = 0;
}
"#;

/// The CTS's shared-address-space case: a kernel builds linked lists (a recursive struct)
/// in one SVM allocation, linking nodes by their SVM addresses; the host walks them.
#[test]
fn kernel_built_linked_lists_walked_by_the_host() {
    #[repr(C)]
    struct Node {
        id: i32,
        pos: i32,
        next: *const Node,
    }
    for_each_device(|d| {
        let env = d.env();
        let ctx = &env.context;
        let (lists, len) = (64usize, 6usize);
        let nodes = alloc(ctx, CL_MEM_READ_WRITE, std::mem::size_of::<Node>() * lists * len, 0) as *mut Node;
        let next_free = alloc(ctx, CL_MEM_READ_WRITE, 4, 0) as *mut i32;
        let k = env.kernel(LISTS, "", "create");
        // SAFETY: both allocations hold what the kernel and the host touch; the host reads only
        // between a blocking map and the unmap, after the kernel finished.
        unsafe {
            cl!(clEnqueueSVMMap(env.q(), CL_TRUE, CL_MAP_WRITE, next_free.cast(), 4, 0, ptr::null(), ptr::null_mut()));
            *next_free = lists as i32;
            cl!(clEnqueueSVMUnmap(env.q(), next_free.cast(), 0, ptr::null(), ptr::null_mut()));
            cl!(clSetKernelArgSVMPointer(k.raw(), 0, nodes.cast()));
            cl!(clSetKernelArgSVMPointer(k.raw(), 1, next_free.cast()));
            k.set_arg(2, &(len as i32));
            env.run(&k, &[lists], None);
            let bytes = std::mem::size_of::<Node>() * lists * len;
            cl!(clEnqueueSVMMap(env.q(), CL_TRUE, CL_MAP_READ, nodes.cast(), bytes, 0, ptr::null(), ptr::null_mut()));
            for i in 0..lists {
                let mut node: *const Node = nodes.add(i);
                for j in 0..len {
                    assert!(!node.is_null(), "list {i} ends at {j}");
                    assert_eq!(((*node).id, (*node).pos), (i as i32, j as i32));
                    node = (*node).next;
                }
                assert!(node.is_null(), "list {i} is longer than {len}");
            }
            cl!(clEnqueueSVMUnmap(env.q(), nodes.cast(), 0, ptr::null(), ptr::null_mut()));
            env.finish();
        }
        free(ctx, nodes.cast());
        free(ctx, next_free.cast());
    });
}
