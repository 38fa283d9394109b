//! Memory commands: read, write, copy and fill buffers (and their rect variants), map and
//! unmap, migrate, native kernels. The checks every command shares live in [`Enqueue`]; each command's work
//! runs on the queue's worker and holds `Arc`s of the buffers it touches, so a buffer released
//! right after a non-blocking enqueue lives until the command has run.

use crate::api::event::{check_wait_list, return_event};
use crate::entry;
use crate::handles;
use crate::ptr;
use softcl_runtime::cl::*;
use softcl_runtime::event::Event;
use softcl_runtime::memory::raw::HostPtr;
use softcl_runtime::memory::rect::{self, RectLayout};
use softcl_runtime::memory::Mem;
use softcl_runtime::queue::Queue;
use std::ffi::c_void;
use std::sync::Arc;

/// The queue and wait list of a command being enqueued, checked.
pub(crate) struct Enqueue {
    pub(crate) queue: Arc<Queue>,
    wait_for: Vec<Arc<Event>>,
}

/// Which host accesses a command makes to a buffer (for the CL_MEM_HOST_* flags).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum HostAccess {
    None,
    Read,
    Write,
}

impl Enqueue {
    pub(crate) fn new(
        command_queue: cl_command_queue,
        num_events: cl_uint,
        events: *const cl_event,
    ) -> Result<Self, cl_int> {
        let queue: Arc<Queue> = handles::arc(command_queue)?;
        // "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list >
        // 0, or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event
        // objects in event_wait_list are not valid events." "CL_INVALID_CONTEXT if the context
        // associated with command_queue and events in event_wait_list are not the same."
        let wait_for = handles::wait_list(events, num_events)?;
        check_wait_list(&queue, &wait_for)?;
        Ok(Self { queue, wait_for })
    }

    /// A buffer argument of the command.
    pub(crate) fn buffer(&self, mem: cl_mem, access: HostAccess) -> Result<Arc<Mem>, cl_int> {
        // "CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object."
        let mem: Arc<Mem> = handles::arc(mem)?;
        if mem.mem_type() != CL_MEM_OBJECT_BUFFER {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        // "CL_INVALID_CONTEXT if the context associated with command_queue and buffer are not
        // the same."
        if !Arc::ptr_eq(&mem.context, &self.queue.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        // "CL_MISALIGNED_SUB_BUFFER_OFFSET if buffer is a sub-buffer object and offset
        // specified when the sub-buffer object is created is not aligned to
        // CL_DEVICE_MEM_BASE_ADDR_ALIGN value for device associated with queue."
        let align = (self.queue.device.info().mem_base_addr_align_bits as usize / 8).max(1);
        if mem.is_sub_buffer() && !mem.offset().is_multiple_of(align) {
            return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        }
        // "CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has been
        // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS." "CL_INVALID_OPERATION
        // if clEnqueueWriteBuffer is called on buffer which has been created with
        // CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS." (Likewise for the rect variants.)
        match access {
            HostAccess::Read if !mem.host_readable() => return Err(CL_INVALID_OPERATION),
            HostAccess::Write if !mem.host_writable() => return Err(CL_INVALID_OPERATION),
            _ => {}
        }
        Ok(mem)
    }

    /// Enqueues `work`; hands the event to the application; waits for a blocking command.
    pub(crate) fn submit(
        self,
        command_type: u32,
        blocking: cl_bool,
        event: *mut cl_event,
        work: impl FnOnce() -> Result<(), cl_int> + Send + 'static,
    ) -> Result<(), cl_int> {
        let ev = self.queue.enqueue(command_type, self.wait_for, Box::new(move || work().map(|()| None)));
        return_event(ev.clone(), event);
        // "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the read and write operations are
        // blocking and the execution status of any of the events in event_wait_list is a
        // negative integer value."
        if blocking != CL_FALSE && ev.wait_helping() < 0 {
            return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        }
        Ok(())
    }
}

/// `offset..offset+size` within the buffer, else CL_INVALID_VALUE ("if the region being read or
/// written specified by (offset, size) is out of bounds").
fn check_range(mem: &Mem, offset: usize, size: usize) -> Result<(), cl_int> {
    mem.check_range(offset, size)
}

/// A size_t[3] argument (origin or region); NULL is CL_INVALID_VALUE.
pub(crate) fn triple(p: *const usize) -> Result<[usize; 3], cl_int> {
    // SAFETY: the application's array of that many elements, valid for this call by the API
    // contract (NULL and misalignment are errors).
    let s = unsafe { ptr::slice(p, 3) }?;
    Ok([s[0], s[1], s[2]])
}

/// "CL_INVALID_VALUE if any region array element is 0."
fn check_region(region: [usize; 3]) -> Result<(), cl_int> {
    if region.contains(&0) {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// The application's pointer of a read or write command.
///
/// # Safety
/// `ptr` must be NULL or valid for `len` bytes (readable, and writable for reads from a
/// buffer) until the command completes, as OpenCL requires of clEnqueueReadBuffer,
/// clEnqueueWriteBuffer and their rect variants.
unsafe fn app_ptr(ptr: *const c_void, len: usize) -> Result<HostPtr, cl_int> {
    // "CL_INVALID_VALUE if ... ptr is a NULL value."
    // SAFETY: forwarded from this function's contract.
    unsafe { HostPtr::new(ptr, len) }
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments, forwarded
fn read_write(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    wait: (cl_uint, *const cl_event),
    event: *mut cl_event,
    write: bool,
) -> Result<(), cl_int> {
    let cmd = Enqueue::new(command_queue, wait.0, wait.1)?;
    let mem = cmd.buffer(buffer, if write { HostAccess::Write } else { HostAccess::Read })?;
    check_range(&mem, offset, size)?;
    // SAFETY: the application's pointer must stay valid for `size` bytes until the command
    // completes (the OpenCL rule for ptr of clEnqueueReadBuffer / clEnqueueWriteBuffer).
    let host = unsafe { app_ptr(ptr, size) }?;
    if write {
        cmd.submit(CL_COMMAND_WRITE_BUFFER, blocking, event, move || mem.write(offset, &host, size))
    } else {
        cmd.submit(CL_COMMAND_READ_BUFFER, blocking, event, move || mem.read(offset, &host, size))
    }
}

pub extern "C" fn clEnqueueReadBuffer(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueReadBuffer", || {
        let wait = (num_events_in_wait_list, event_wait_list);
        read_write(command_queue, buffer, blocking_read, offset, size, ptr, wait, event, false)
    })
}

pub extern "C" fn clEnqueueWriteBuffer(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueWriteBuffer", || {
        let wait = (num_events_in_wait_list, event_wait_list);
        read_write(command_queue, buffer, blocking_write, offset, size, ptr, wait, event, true)
    })
}

/// CL_MEM_COPY_OVERLAP: whether two ranges of buffers sharing one storage (the same buffer,
/// sub-buffers of one buffer, or a buffer and its sub-buffer) overlap.
fn same_storage(a: &Mem, b: &Mem) -> bool {
    std::ptr::eq(a.storage().0, b.storage().0)
}

pub extern "C" fn clEnqueueCopyBuffer(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueCopyBuffer", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let src = cmd.buffer(src_buffer, HostAccess::None)?;
        let dst = cmd.buffer(dst_buffer, HostAccess::None)?;
        // "CL_INVALID_VALUE if src_offset, dst_offset, size, src_offset + size or dst_offset +
        // size require accessing elements outside the src_buffer and dst_buffer buffer objects
        // respectively."
        check_range(&src, src_offset, size)?;
        check_range(&dst, dst_offset, size)?;
        // "CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffer
        // object and the source and destination regions overlap or if src_buffer and
        // dst_buffer are different sub-buffers of the same associated buffer object and they
        // overlap."
        if same_storage(&src, &dst) && size > 0 {
            let s = src.storage().1 + src_offset;
            let d = dst.storage().1 + dst_offset;
            if s < d + size && d < s + size {
                return Err(CL_MEM_COPY_OVERLAP);
            }
        }
        cmd.submit(CL_COMMAND_COPY_BUFFER, CL_FALSE, event, move || src.copy_to(src_offset, &dst, dst_offset, size))
    })
}

pub extern "C" fn clEnqueueFillBuffer(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueFillBuffer", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let mem = cmd.buffer(buffer, HostAccess::None)?;
        // "CL_INVALID_VALUE if offset or offset + size require accessing elements outside the
        // buffer buffer object respectively."
        check_range(&mem, offset, size)?;
        // "CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if pattern_size is
        // not one of { 1, 2, 4, 8, 16, 32, 64, 128 }."
        if pattern.is_null() || !pattern_size.is_power_of_two() || pattern_size > 128 {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_VALUE if offset and size are not a multiple of pattern_size."
        if !offset.is_multiple_of(pattern_size) || !size.is_multiple_of(pattern_size) {
            return Err(CL_INVALID_VALUE);
        }
        // The pattern may be reused by the application as soon as the call returns.
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let pattern = unsafe { ptr::slice(pattern as *const u8, pattern_size) }?.to_vec();
        cmd.submit(CL_COMMAND_FILL_BUFFER, CL_FALSE, event, move || mem.fill(offset, &pattern, size))
    })
}

/// The arguments of clEnqueueReadBufferRect and clEnqueueWriteBufferRect as passed.
struct RectArgs {
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
}

fn read_write_rect(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    a: RectArgs,
    wait: (cl_uint, *const cl_event),
    event: *mut cl_event,
    write: bool,
) -> Result<(), cl_int> {
    let cmd = Enqueue::new(command_queue, wait.0, wait.1)?;
    let mem = cmd.buffer(buffer, if write { HostAccess::Write } else { HostAccess::Read })?;
    // "CL_INVALID_VALUE if buffer_origin, host_origin, or region is NULL."
    let (bo, ho, region) = (triple(a.buffer_origin)?, triple(a.host_origin)?, triple(a.region)?);
    check_region(region)?;
    // Pitch rules (row pitch 0 or >= region[0], slice pitch 0 or >= region[1] × row pitch and a
    // multiple of it) are checked by RectLayout::new.
    let buf = RectLayout::new(bo, region, a.buffer_row_pitch, a.buffer_slice_pitch)?;
    let host = RectLayout::new(ho, region, a.host_row_pitch, a.host_slice_pitch)?;
    // "CL_INVALID_VALUE if the region being read or written specified by (buffer_origin,
    // region, buffer_row_pitch, buffer_slice_pitch) is out of bounds."
    if buf.end(region)? > mem.size {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: OpenCL requires ptr to hold the host rectangle (the bytes up to its end) and stay
    // valid until the command completes.
    let host_ptr = unsafe { app_ptr(a.ptr, host.end(region)?) }?;
    if write {
        cmd.submit(CL_COMMAND_WRITE_BUFFER_RECT, blocking, event, move || {
            mem.write_rect(&buf, &host_ptr, &host, region)
        })
    } else {
        cmd.submit(CL_COMMAND_READ_BUFFER_RECT, blocking, event, move || mem.read_rect(&buf, &host_ptr, &host, region))
    }
}

pub extern "C" fn clEnqueueReadBufferRect(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueReadBufferRect", || {
        let a = RectArgs {
            buffer_origin,
            host_origin,
            region,
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
            ptr,
        };
        let wait = (num_events_in_wait_list, event_wait_list);
        read_write_rect(command_queue, buffer, blocking_read, a, wait, event, false)
    })
}

pub extern "C" fn clEnqueueWriteBufferRect(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueWriteBufferRect", || {
        let a = RectArgs {
            buffer_origin,
            host_origin,
            region,
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
            ptr,
        };
        let wait = (num_events_in_wait_list, event_wait_list);
        read_write_rect(command_queue, buffer, blocking_write, a, wait, event, true)
    })
}

pub extern "C" fn clEnqueueCopyBufferRect(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueCopyBufferRect", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let src = cmd.buffer(src_buffer, HostAccess::None)?;
        let dst = cmd.buffer(dst_buffer, HostAccess::None)?;
        let (so, dof, region) = (triple(src_origin)?, triple(dst_origin)?, triple(region)?);
        check_region(region)?;
        let s = RectLayout::new(so, region, src_row_pitch, src_slice_pitch)?;
        let d = RectLayout::new(dof, region, dst_row_pitch, dst_slice_pitch)?;
        // "CL_INVALID_VALUE if (src_origin, region, src_row_pitch, src_slice_pitch) or
        // (dst_origin, region, dst_row_pitch, dst_slice_pitch) require accessing elements
        // outside the src_buffer and dst_buffer buffer objects respectively."
        if s.end(region)? > src.size || d.end(region)? > dst.size {
            return Err(CL_INVALID_VALUE);
        }
        if Arc::ptr_eq(&src, &dst) {
            // "CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object and
            // src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is not equal to
            // dst_row_pitch."
            if s.slice_pitch != d.slice_pitch && s.row_pitch != d.row_pitch {
                return Err(CL_INVALID_VALUE);
            }
        }
        // "CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffer
        // object and the source and destination regions overlap or if src_buffer and
        // dst_buffer are different sub-buffers of the same associated buffer object and they
        // overlap." (Tested exactly, row by row.)
        if same_storage(&src, &dst) && rect::overlaps(&s, src.storage().1, &d, dst.storage().1, region) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        cmd.submit(CL_COMMAND_COPY_BUFFER_RECT, CL_FALSE, event, move || src.copy_rect_to(&s, &dst, &d, region))
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments, forwarded
fn map_buffer(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    wait: (cl_uint, *const cl_event),
    event: *mut cl_event,
) -> Result<*mut c_void, cl_int> {
    let cmd = Enqueue::new(command_queue, wait.0, wait.1)?;
    let read = map_flags & CL_MAP_READ as cl_map_flags != 0;
    let write = map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags != 0;
    let mem = cmd.buffer(buffer, HostAccess::None)?;
    // "CL_INVALID_VALUE if region being mapped given by (offset, size) is out of bounds or if
    // size is 0 or if values specified in map_flags are not valid." CL_MAP_WRITE_INVALIDATE_REGION
    // is mutually exclusive with CL_MAP_READ and CL_MAP_WRITE.
    let valid = (CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags;
    let invalidate = map_flags & CL_MAP_WRITE_INVALIDATE_REGION as cl_map_flags != 0;
    if size == 0
        || map_flags & !valid != 0
        || (invalidate && map_flags & (CL_MAP_READ | CL_MAP_WRITE) as cl_map_flags != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    check_range(&mem, offset, size)?;
    // "CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_WRITE_ONLY or
    // CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set in map_flags or if buffer has been created
    // with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or
    // CL_MAP_WRITE_INVALIDATE_REGION is set in map_flags."
    if (read && !mem.host_readable()) || (write && !mem.host_writable()) {
        return Err(CL_INVALID_OPERATION);
    }
    // Host and devices share the storage: the mapped region is the buffer's own memory (for
    // CL_MEM_USE_HOST_PTR the application's pointer + offset), so the command only orders the
    // map after its wait list.
    let address = mem.map(offset, size, map_flags)?;
    if let Err(e) = cmd.submit(CL_COMMAND_MAP_BUFFER, blocking_map, event, || Ok(())) {
        let _ = mem.unmap(address);
        return Err(e);
    }
    Ok(address as *mut c_void)
}

pub extern "C" fn clEnqueueMapBuffer(
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    entry::object("clEnqueueMapBuffer", errcode_ret, || {
        let wait = (num_events_in_wait_list, event_wait_list);
        map_buffer(command_queue, buffer, blocking_map, map_flags, offset, size, wait, event)
    })
}

pub extern "C" fn clEnqueueUnmapMemObject(
    command_queue: cl_command_queue,
    memobj: cl_mem,
    mapped_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueUnmapMemObject", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_MEM_OBJECT if memobj is not a valid memory object": a buffer or an image.
        let mem: Arc<Mem> = handles::arc(memobj)?;
        if !Arc::ptr_eq(&mem.context, &cmd.queue.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        // "CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by
        // clEnqueueMapBuffer or clEnqueueMapImage for memobj."
        mem.unmap(mapped_ptr as *mut u8)?;
        cmd.submit(CL_COMMAND_UNMAP_MEM_OBJECT, CL_FALSE, event, move || {
            drop(mem);
            Ok(())
        })
    })
}

pub extern "C" fn clEnqueueMigrateMemObjects(
    command_queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueMigrateMemObjects", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL."
        if num_mem_objects == 0 || mem_objects.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_MEM_OBJECT if any of the memory objects in mem_objects is not a valid
        // memory object." "CL_INVALID_CONTEXT if the context associated with command_queue and
        // memory objects in mem_objects are not the same".
        let mems: Vec<Arc<Mem>> = handles::list(mem_objects, num_mem_objects, CL_INVALID_VALUE, None)?;
        if mems.iter().any(|m| !Arc::ptr_eq(&m.context, &cmd.queue.context)) {
            return Err(CL_INVALID_CONTEXT);
        }
        // "CL_INVALID_VALUE if flags is not 0 or is not any of the values described in the
        // table above."
        let valid = (CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) as cl_mem_migration_flags;
        if flags & !valid != 0 {
            return Err(CL_INVALID_VALUE);
        }
        // One address space: there is nothing to move; the command only orders.
        cmd.submit(CL_COMMAND_MIGRATE_MEM_OBJECTS, CL_FALSE, event, move || {
            drop(mems);
            Ok(())
        })
    })
}

type NativeFn = unsafe extern "C" fn(*mut c_void);

/// clEnqueueNativeKernel (CPU device): `args` is copied now; each `args_mem_loc[i]` points
/// into the application's `args` at a slot that, in the copy, receives the address of
/// `mem_list[i]`'s storage; the worker calls `user_func` with the copy.
pub extern "C" fn clEnqueueNativeKernel(
    command_queue: cl_command_queue,
    user_func: Option<NativeFn>,
    args: *mut c_void,
    cb_args: usize,
    num_mem_objects: cl_uint,
    mem_list: *const cl_mem,
    args_mem_loc: *mut *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueNativeKernel", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        // "CL_INVALID_VALUE if user_func is NULL."
        let f = user_func.ok_or(CL_INVALID_VALUE)?;
        // "CL_INVALID_VALUE if args is a NULL value and cb_args > 0, or if args is a NULL value
        // and num_mem_objects > 0." "CL_INVALID_VALUE if args is not NULL and cb_args is 0."
        if (args.is_null() && (cb_args > 0 || num_mem_objects > 0)) || (!args.is_null() && cb_args == 0) {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_VALUE if num_mem_objects > 0 and mem_list or args_mem_loc are NULL."
        // "CL_INVALID_VALUE if num_mem_objects = 0 and mem_list or args_mem_loc are not NULL."
        let (any_list, both_lists) =
            (!mem_list.is_null() || !args_mem_loc.is_null(), !mem_list.is_null() && !args_mem_loc.is_null());
        if (num_mem_objects > 0 && !both_lists) || (num_mem_objects == 0 && any_list) {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_OPERATION if the device associated with command_queue cannot execute the
        // native kernel."
        if crate::api::device::execution_capabilities(cmd.queue.device.info()) & CL_EXEC_NATIVE_KERNEL as u64 == 0 {
            return Err(CL_INVALID_OPERATION);
        }
        // The copy of args, 8-byte aligned (the slots hold pointers).
        let mut block = vec![0u64; cb_args.div_ceil(8)];
        if cb_args > 0 {
            // SAFETY: the application's array of that many elements, valid for this call by the API
            // contract (NULL and misalignment are errors).
            let src = unsafe { ptr::slice(args as *const u8, cb_args) }?;
            // SAFETY: block holds at least cb_args bytes, and u64 has no invalid patterns.
            let dst = unsafe { std::slice::from_raw_parts_mut(block.as_mut_ptr().cast::<u8>(), cb_args) };
            dst.copy_from_slice(src);
        }
        let mut mems = Vec::new();
        if num_mem_objects > 0 {
            // SAFETY: the application's array of that many elements, valid for this call by the API
            // contract (NULL and misalignment are errors).
            let handles_in = unsafe { ptr::slice(mem_list, num_mem_objects as usize) }?;
            // SAFETY: the application's array of that many elements, valid for this call by the API
            // contract (NULL and misalignment are errors).
            let locs = unsafe { ptr::slice(args_mem_loc as *const *const c_void, num_mem_objects as usize) }?;
            for (&m, &loc) in handles_in.iter().zip(locs) {
                // "CL_INVALID_MEM_OBJECT if one or more memory objects specified in mem_list
                // are not valid or are not buffer objects."
                let mem: Arc<Mem> = handles::arc(m)?;
                if mem.mem_type() != CL_MEM_OBJECT_BUFFER {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                if !Arc::ptr_eq(&mem.context, &cmd.queue.context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                // The slot must lie inside args (a pointer elsewhere is not a valid location).
                let offset = (loc as usize).wrapping_sub(args as usize);
                if loc.is_null() || cb_args < size_of::<usize>() || offset > cb_args - size_of::<usize>() {
                    return Err(CL_INVALID_VALUE);
                }
                mems.push((offset, mem));
            }
        }
        cmd.submit(CL_COMMAND_NATIVE_KERNEL, CL_FALSE, event, move || {
            let mut block = block;
            let base = block.as_mut_ptr().cast::<u8>();
            for (offset, mem) in &mems {
                let address = mem.address() as usize;
                // SAFETY: offset + 8 <= cb_args <= the block's length (checked at enqueue);
                // an unaligned write, as the application's slot may be unaligned.
                unsafe { base.add(*offset).cast::<usize>().write_unaligned(address) };
            }
            let arg = if cb_args == 0 { std::ptr::null_mut() } else { base.cast::<c_void>() };
            // SAFETY: the application's function, called as clEnqueueNativeKernel specifies:
            // with a copy of its argument block, the buffers' addresses in place (held alive
            // by `mems` for the call).
            unsafe { f(arg) };
            drop(mems);
            Ok(())
        })
    })
}
