//! Shared virtual memory: clSVMAlloc, clSVMFree and the SVM commands (free, memcpy, fill,
//! map, unmap, migrate). The allocations and the checks that need no C pointer live in
//! runtime/src/svm.rs. Host and devices share one address space, so maps, unmaps and
//! migrations move no bytes: they are ordered commands with events like the others. Each
//! command holds the SVM allocations it touches, so a clSVMFree before it runs cannot free
//! them under it.

use crate::api::event::{check_wait_list, return_event};
use crate::entry;
use crate::handles;
use crate::ptr::{self, AppPtr};
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::event::Event;
use softcl_runtime::memory::raw::{self, HostPtr};
use softcl_runtime::queue::Queue;
use softcl_runtime::svm::{self, SvmAlloc};
use std::ffi::c_void;
use std::sync::Arc;

pub extern "C" fn clSVMAlloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    // clSVMAlloc has no errcode_ret: every failure is a NULL result.
    entry::object("clSVMAlloc", std::ptr::null_mut(), || {
        // "context is not a valid context" returns NULL.
        let ctx: &Context = handles::borrow(context)?;
        Ok(svm::alloc(ctx, flags, size, alignment)? as *mut c_void)
    })
}

pub extern "C" fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
    // clSVMFree returns nothing; an invalid context or pointer is ignored.
    entry::code("clSVMFree", || {
        let ctx: &Context = handles::borrow(context)?;
        // "If a NULL pointer is passed in svm_pointer, no action occurs."
        svm::free(ctx, svm_pointer as usize);
        Ok(())
    });
}

/// The queue and wait list of an SVM command, checked.
struct SvmCommand {
    queue: Arc<Queue>,
    wait_for: Vec<Arc<Event>>,
}

impl SvmCommand {
    fn new(command_queue: cl_command_queue, num_events: cl_uint, events: *const cl_event) -> Result<Self, cl_int> {
        // "CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue."
        let queue: Arc<Queue> = handles::arc(command_queue)?;
        // "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list >
        // 0, or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event
        // objects in event_wait_list are not valid events." "CL_INVALID_CONTEXT if context
        // associated with command_queue and events in event_wait_list are not the same."
        let wait_for = handles::wait_list(events, num_events)?;
        check_wait_list(&queue, &wait_for)?;
        Ok(Self { queue, wait_for })
    }

    /// The SVM allocations of the queue's context that hold `addrs` (kept by the command).
    fn hold(&self, addrs: &[usize]) -> Vec<Arc<SvmAlloc>> {
        self.queue.context.svm.find_all(addrs)
    }

    /// Enqueues `work`; hands the event to the application; waits for a blocking command.
    fn submit(
        self,
        command_type: u32,
        blocking: bool,
        event: *mut cl_event,
        work: impl FnOnce() -> Result<(), cl_int> + Send + 'static,
    ) -> Result<(), cl_int> {
        let ev = self.queue.enqueue(command_type, self.wait_for, Box::new(move || work().map(|()| None)));
        return_event(ev.clone(), event);
        // "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the copy operation is blocking and
        // the execution status of any of the events in event_wait_list is a negative integer
        // value." (Likewise for a blocking map.)
        if blocking && ev.wait_helping() < 0 {
            return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        }
        Ok(())
    }
}

type SvmFreeFn = unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void);

pub extern "C" fn clEnqueueSVMFree(
    command_queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *mut c_void,
    pfn_free_func: Option<SvmFreeFn>,
    user_data: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMFree", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if num_svm_pointers is 0 and svm_pointers is non-NULL, or if
        // svm_pointers is NULL and num_svm_pointers is not 0."
        if (num_svm_pointers == 0) != svm_pointers.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // The application may reuse its array once the call returns: the command (and the
        // callback, which receives the list) works on a copy.
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let list: Vec<AppPtr> = unsafe { ptr::slice(svm_pointers as *const *mut c_void, num_svm_pointers as usize) }?
            .iter()
            .map(|&p| AppPtr(p))
            .collect();
        let queue_handle = AppPtr(command_queue as *mut c_void);
        let user_data = AppPtr(user_data);
        let ctx = cmd.queue.context.clone();
        cmd.submit(CL_COMMAND_SVM_FREE, false, event, move || {
            let (queue_handle, user_data) = (queue_handle, user_data);
            match pfn_free_func {
                // "If pfn_free_func is specified, it will be called to free the SVM pointers";
                // the application frees them (clSVMFree) inside.
                Some(f) => {
                    let mut raw: Vec<*mut c_void> = list.iter().map(|p| p.0).collect();
                    let n = raw.len() as cl_uint;
                    // SAFETY: the application registered this callback with this signature; it
                    // receives the queue it was enqueued on, our copy of the pointer list
                    // (valid for the call) and its own user_data.
                    unsafe { f(queue_handle.0 as cl_command_queue, n, raw.as_mut_ptr(), user_data.0) };
                }
                // "If pfn_free_func is NULL, the SVM pointers will be freed by the OpenCL
                // implementation."
                None => {
                    for p in &list {
                        svm::free(&ctx, p.0 as usize);
                    }
                }
            }
            Ok(())
        })
    })
}

pub extern "C" fn clEnqueueSVMMemcpy(
    command_queue: cl_command_queue,
    blocking_copy: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMMemcpy", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if dst_ptr or src_ptr is NULL." "CL_MEM_COPY_OVERLAP if the values
        // specified for dst_ptr, src_ptr and size result in an overlapping copy."
        svm::check_memcpy(dst_ptr as usize, src_ptr as usize, size)?;
        // SAFETY: OpenCL requires both pointers to be valid for `size` bytes (SVM pointers,
        // or host memory) until the command completes.
        let (src, dst) = unsafe { (HostPtr::new(src_ptr, size)?, HostPtr::new(dst_ptr, size)?) };
        let held = cmd.hold(&[src_ptr as usize, dst_ptr as usize]);
        cmd.submit(CL_COMMAND_SVM_MEMCPY, blocking_copy != CL_FALSE, event, move || {
            let _held = held;
            raw::copy_host(&src, &dst, size)
        })
    })
}

pub extern "C" fn clEnqueueSVMMemFill(
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMMemFill", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        svm::check_fill(svm_ptr as usize, pattern.is_null(), pattern_size, size)?;
        // The pattern may be reused by the application as soon as the call returns.
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let pattern = unsafe { ptr::slice(pattern as *const u8, pattern_size) }?.to_vec();
        // SAFETY: OpenCL requires svm_ptr to be valid for `size` bytes until the command
        // completes.
        let dst = unsafe { HostPtr::new(svm_ptr, size)? };
        let held = cmd.hold(&[svm_ptr as usize]);
        cmd.submit(CL_COMMAND_SVM_MEMFILL, false, event, move || {
            let _held = held;
            raw::fill_host(&dst, &pattern, size)
        })
    })
}

pub extern "C" fn clEnqueueSVMMap(
    command_queue: cl_command_queue,
    blocking_map: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMMap", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if svm_ptr is NULL." "CL_INVALID_VALUE if size is 0 or if values
        // specified in map_flags are not valid."
        svm::check_map(svm_ptr as usize, size, flags)?;
        // The host sees the devices' memory at the same address: the map only orders.
        cmd.submit(CL_COMMAND_SVM_MAP, blocking_map != CL_FALSE, event, || Ok(()))
    })
}

pub extern "C" fn clEnqueueSVMUnmap(
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMUnmap", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if svm_ptr is NULL."
        if svm_ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        cmd.submit(CL_COMMAND_SVM_UNMAP, false, event, || Ok(()))
    })
}

pub extern "C" fn clEnqueueSVMMigrateMem(
    command_queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *const c_void,
    sizes: *const usize,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueSVMMigrateMem", || {
        let cmd = SvmCommand::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if num_svm_pointers is zero or svm_pointers is NULL."
        if num_svm_pointers == 0 || svm_pointers.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let n = num_svm_pointers as usize;
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let pointers = unsafe { ptr::slice(svm_pointers as *const *const c_void, n) }?;
        // "If sizes is NULL, then all allocations containing the pointers need to be
        // migrated" (as if every size were 0).
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let sizes = if sizes.is_null() { vec![0; n] } else { unsafe { ptr::slice(sizes, n) }?.to_vec() };
        let ranges: Vec<(usize, usize)> = pointers.iter().zip(sizes).map(|(&p, s)| (p as usize, s)).collect();
        svm::check_migrate(&cmd.queue.context, &ranges, flags)?;
        // One memory for host and devices: nothing moves.
        cmd.submit(CL_COMMAND_SVM_MIGRATE_MEM, false, event, || Ok(()))
    })
}
