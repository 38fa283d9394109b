//! Memory object entry points: buffers, sub-buffers, their queries (images' too) and
//! destructor callbacks. Images are created in `image.rs`.

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr::{self, AppPtr};
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::handle::RefCount;
use softcl_runtime::memory::raw::{HostPtr, Storage};
use softcl_runtime::memory::{BufferInit, Mem, BUFFER_FLAGS, DEVICE_ACCESS, HOST_ACCESS};
use std::ffi::c_void;
use std::sync::Arc;

fn has(flags: cl_mem_flags, flag: u32) -> bool {
    flags & flag as cl_mem_flags != 0
}

/// At most one bit of `group` set.
fn exclusive(flags: cl_mem_flags, group: cl_mem_flags) -> bool {
    (flags & group).count_ones() <= 1
}

/// Checks `flags` against the Memory Flags table; `allowed` is the set of flags valid for the
/// call (buffers, sub-buffers or image format queries).
pub(crate) fn check_mem_flags(flags: cl_mem_flags, allowed: cl_mem_flags) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if values specified in flags are not valid as defined in the Memory
    // Flags table." The table makes these groups mutually exclusive: CL_MEM_READ_WRITE /
    // CL_MEM_WRITE_ONLY / CL_MEM_READ_ONLY; CL_MEM_USE_HOST_PTR with CL_MEM_ALLOC_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR; CL_MEM_HOST_WRITE_ONLY / CL_MEM_HOST_READ_ONLY /
    // CL_MEM_HOST_NO_ACCESS.
    let use_with = (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR) as cl_mem_flags;
    let use_copy = (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) as cl_mem_flags;
    if flags & !allowed != 0
        || !exclusive(flags, DEVICE_ACCESS)
        || !exclusive(flags, use_with)
        || !exclusive(flags, use_copy)
        || !exclusive(flags, HOST_ACCESS)
    {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

fn create_buffer(
    context: cl_context,
    properties: Option<Vec<cl_mem_properties>>,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let ctx: Arc<Context> = handles::arc(context)?;
    // "CL_INVALID_PROPERTY if a property name in properties is not a supported property name,
    // if the value specified for a supported property name is not valid, or if the same
    // property name is specified more than once." No buffer property is supported.
    if properties.as_ref().is_some_and(|p| !p.is_empty()) {
        return Err(CL_INVALID_PROPERTY);
    }
    check_mem_flags(flags, BUFFER_FLAGS)?;
    // "CL_INVALID_BUFFER_SIZE if size is 0, or if size is greater than
    // CL_DEVICE_MAX_MEM_ALLOC_SIZE value specified in the Device Queries table for all devices
    // in context."
    let max = ctx.devices.iter().map(|d| d.info().max_mem_alloc_size).max().unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    // "CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
    // are set in flags or if host_ptr is not NULL but CL_MEM_COPY_HOST_PTR or
    // CL_MEM_USE_HOST_PTR are not set in flags."
    let wants_ptr = has(flags, CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    if host_ptr.is_null() == wants_ptr {
        return Err(CL_INVALID_HOST_PTR);
    }
    // "CL_INVALID_BUFFER_SIZE if CL_MEM_USE_HOST_PTR is set in flags and host_ptr is a pointer
    // returned by clSVMAlloc and size is greater than the size passed to clSVMAlloc." (A
    // pointer into an allocation likewise may not reach past its end.)
    let svm = if has(flags, CL_MEM_USE_HOST_PTR) { ctx.svm.find(host_ptr as usize) } else { None };
    if let Some(alloc) = &svm {
        if !alloc.contains(host_ptr as usize, size) {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
    }
    let init = if has(flags, CL_MEM_USE_HOST_PTR) {
        // SAFETY: OpenCL requires the memory host_ptr points to for CL_MEM_USE_HOST_PTR to hold
        // `size` bytes and stay valid while the memory object exists.
        BufferInit::Use(unsafe { Storage::use_host(host_ptr, size) }?)
    } else if has(flags, CL_MEM_COPY_HOST_PTR) {
        // SAFETY: for CL_MEM_COPY_HOST_PTR host_ptr must point at `size` readable bytes for the
        // duration of the call, during which the copy is made.
        BufferInit::Copy(unsafe { HostPtr::new(host_ptr, size) }?)
    } else {
        BufferInit::Zeroed
    };
    let mem = Mem::new_buffer(ctx, flags, size, init, properties)?;
    if let Some(alloc) = svm {
        // The buffer keeps the SVM allocation it uses: a clSVMFree before the buffer is
        // released (which the application must not do) cannot free memory under it.
        mem.add_destructor_callback(Box::new(move || drop(alloc)));
    }
    Ok(handles::new_handle(mem))
}

pub extern "C" fn clCreateBuffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateBuffer", errcode_ret, || create_buffer(context, None, flags, size, host_ptr))
}

pub extern "C" fn clCreateBufferWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateBufferWithProperties", errcode_ret, || {
        // A NULL list is "no properties" (CL_MEM_PROPERTIES then returns nothing); an empty
        // list is remembered so that the query returns it.
        let props = if properties.is_null() { None } else { Some(ptr::property_list(properties)?) };
        create_buffer(context, props, flags, size, host_ptr)
    })
}

pub extern "C" fn clCreateSubBuffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    buffer_create_type: cl_buffer_create_type,
    buffer_create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateSubBuffer", errcode_ret, || {
        let parent: Arc<Mem> = handles::arc(buffer)?;
        // "CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer
        // object."
        if parent.is_sub_buffer() || parent.mem_type() != CL_MEM_OBJECT_BUFFER as cl_mem_object_type {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        // "CL_INVALID_VALUE if values specified in flags are not valid"; the parent's
        // CL_MEM_*_HOST_PTR may not be given (checked with the inheritance rules by the runtime).
        check_mem_flags(flags, BUFFER_FLAGS)?;
        // "CL_INVALID_VALUE if value specified in buffer_create_type is not valid."
        if buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_VALUE if value(s) specified in buffer_create_info (for a given
        // buffer_create_type) is not valid or if buffer_create_info is NULL."
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let region = unsafe { ptr::slice(buffer_create_info as *const cl_buffer_region, 1) }?[0];
        Ok(handles::new_handle(Mem::new_sub_buffer(&parent, flags, region.origin, region.size)?))
    })
}

pub extern "C" fn clRetainMemObject(memobj: cl_mem) -> cl_int {
    entry::code("clRetainMemObject", || handles::retain::<Mem, _>(memobj))
}

pub extern "C" fn clReleaseMemObject(memobj: cl_mem) -> cl_int {
    entry::code("clReleaseMemObject", || handles::release::<Mem, _>(memobj))
}

pub extern "C" fn clGetMemObjectInfo(
    memobj: cl_mem,
    param_name: cl_mem_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetMemObjectInfo", || {
        let mem: &Mem = handles::borrow(memobj)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_MEM_TYPE => out.write(&mem.mem_type()),
            CL_MEM_FLAGS => out.write(&mem.flags),
            CL_MEM_SIZE => out.write(&mem.size),
            CL_MEM_HOST_PTR => out.write(&(mem.host_ptr() as *mut c_void)),
            CL_MEM_MAP_COUNT => out.write(&(mem.map_count() as cl_uint)),
            CL_MEM_REFERENCE_COUNT => out.write(&mem.header_ref_count()),
            CL_MEM_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(&mem.context)),
            CL_MEM_ASSOCIATED_MEMOBJECT => {
                let parent = mem.parent().map_or(std::ptr::null_mut(), handles::handle_of::<Mem, c_void>);
                out.write(&parent)
            }
            CL_MEM_OFFSET => out.write(&mem.offset()),
            // "CL_TRUE if memobj is a buffer object that was created with CL_MEM_USE_HOST_PTR or is a
            // sub-buffer object of a buffer object that was created with CL_MEM_USE_HOST_PTR and
            // the host_ptr specified when the buffer object was created is a SVM pointer".
            CL_MEM_USES_SVM_POINTER => {
                let root = mem.parent().map_or(mem, |p| p.as_ref());
                let svm = root.has_flag(CL_MEM_USE_HOST_PTR) && root.context.svm.find(root.host_ptr()).is_some();
                out.write(&cl_bool::from(svm))
            }
            // "If the properties argument specified in clCreateBufferWithProperties ... was not
            // NULL, the implementation must return the values specified in the properties
            // argument in the same order" (with its terminating 0); otherwise nothing.
            CL_MEM_PROPERTIES => match &mem.properties {
                Some(p) => out.write(&p.iter().copied().chain([0]).collect::<Vec<_>>()),
                None => out.bytes(&[]),
            },
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clSetMemObjectDestructorCallback(
    memobj: cl_mem,
    pfn_notify: Option<unsafe extern "C" fn(cl_mem, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    entry::code("clSetMemObjectDestructorCallback", || {
        let mem: &Mem = handles::borrow(memobj)?;
        // "CL_INVALID_VALUE if pfn_notify is NULL."
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        let (handle, user_data) = (AppPtr(memobj as *mut c_void), AppPtr(user_data));
        mem.add_destructor_callback(Box::new(move || {
            let (handle, user_data) = (handle, user_data);
            // SAFETY: the application registered this callback for this signature; the handle
            // is passed for identification only (the object is being destroyed).
            unsafe { f(handle.0 as cl_mem, user_data.0) }
        }));
        Ok(())
    })
}

/// clCreatePipe: OpenCL 2.0 pipes, which no SoftCL device supports.
pub extern "C" fn clCreatePipe(
    context: cl_context,
    _flags: cl_mem_flags,
    _pipe_packet_size: cl_uint,
    _pipe_max_packets: cl_uint,
    _properties: *const cl_pipe_properties,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreatePipe", errcode_ret, || {
        let _ctx: &Context = handles::borrow(context)?;
        // "CL_INVALID_OPERATION if no devices in context support pipes": no SoftCL device
        // does (clGetDeviceInfo answers CL_DEVICE_PIPE_SUPPORT with CL_FALSE).
        Err(CL_INVALID_OPERATION)
    })
}

pub extern "C" fn clGetPipeInfo(
    pipe: cl_mem,
    _param_name: cl_pipe_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetPipeInfo", || {
        let _mem: &Mem = handles::borrow(pipe)?;
        // "CL_INVALID_MEM_OBJECT if pipe is a not a valid pipe object": clCreatePipe never
        // succeeds, so every memory object is a buffer.
        Err(CL_INVALID_MEM_OBJECT)
    })
}
