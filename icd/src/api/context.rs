//! Context entry points.

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr::{self, AppPtr};
use softcl_runtime::cl::*;
use softcl_runtime::context::{Context, ErrorCallback};
use softcl_runtime::device::Device;
use softcl_runtime::handle::RefCount;
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

type NotifyFn = unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void);

/// Wraps the application's pfn_notify (may be called from any thread, as the spec allows).
fn notify_callback(pfn_notify: Option<NotifyFn>, user_data: *mut c_void) -> Result<Option<ErrorCallback>, cl_int> {
    // "CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL."
    let Some(f) = pfn_notify else {
        return if user_data.is_null() { Ok(None) } else { Err(CL_INVALID_VALUE) };
    };
    let user_data = AppPtr(user_data);
    Ok(Some(Box::new(move |message: &str| {
        let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
        let user_data = user_data;
        // SAFETY: the application registered this callback for exactly this call signature
        // and owns user_data; the strings live for the duration of the call.
        unsafe { f(text.as_ptr(), std::ptr::null(), 0, user_data.0) }
    })))
}

/// The platform named by CL_CONTEXT_PLATFORM is checked by Context::new.
fn properties_arg(properties: *const cl_context_properties) -> Result<Vec<cl_context_properties>, cl_int> {
    ptr::property_list(properties)
}

fn create(
    properties: *const cl_context_properties,
    devices: Vec<Arc<Device>>,
    pfn_notify: Option<NotifyFn>,
    user_data: *mut c_void,
) -> Result<cl_context, cl_int> {
    let props = properties_arg(properties)?;
    let notify = notify_callback(pfn_notify, user_data)?;
    let ctx = Context::new(devices, props, notify)?;
    Ok(handles::new_handle(ctx))
}

pub extern "C" fn clCreateContext(
    properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Option<NotifyFn>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    entry::object("clCreateContext", errcode_ret, || {
        crate::platform();
        // "CL_INVALID_VALUE if devices is NULL; if num_devices is equal to zero".
        if devices.is_null() || num_devices == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let mut list: Vec<Arc<Device>> =
            handles::list(devices, num_devices, CL_INVALID_VALUE, Some(CL_INVALID_DEVICE))?;
        // Duplicate devices are ignored, as the specification says.
        let mut seen = Vec::new();
        list.retain(|d| {
            let p = Arc::as_ptr(d);
            let fresh = !seen.contains(&p);
            seen.push(p);
            fresh
        });
        create(properties, list, pfn_notify, user_data)
    })
}

pub extern "C" fn clCreateContextFromType(
    properties: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Option<NotifyFn>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    entry::object("clCreateContextFromType", errcode_ret, || {
        let platform = crate::platform();
        let known = (CL_DEVICE_TYPE_DEFAULT
            | CL_DEVICE_TYPE_CPU
            | CL_DEVICE_TYPE_GPU
            | CL_DEVICE_TYPE_ACCELERATOR
            | CL_DEVICE_TYPE_CUSTOM) as u64;
        if device_type != CL_DEVICE_TYPE_ALL as u64 && (device_type == 0 || device_type & !known != 0) {
            return Err(CL_INVALID_DEVICE_TYPE);
        }
        let list = platform.devices_of_type(device_type);
        if list.is_empty() {
            return Err(CL_DEVICE_NOT_FOUND);
        }
        create(properties, list, pfn_notify, user_data)
    })
}

pub extern "C" fn clRetainContext(context: cl_context) -> cl_int {
    entry::code("clRetainContext", || handles::retain::<Context, _>(context))
}

pub extern "C" fn clReleaseContext(context: cl_context) -> cl_int {
    entry::code("clReleaseContext", || handles::release::<Context, _>(context))
}

pub extern "C" fn clGetContextInfo(
    context: cl_context,
    param_name: cl_context_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetContextInfo", || {
        let ctx: &Context = handles::borrow(context)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_CONTEXT_REFERENCE_COUNT => out.write(&ctx.header_ref_count()),
            CL_CONTEXT_NUM_DEVICES => out.write(&(ctx.devices.len() as cl_uint)),
            CL_CONTEXT_DEVICES => {
                out.write(&ctx.devices.iter().map(handles::handle_of::<Device, c_void>).collect::<Vec<_>>())
            }
            CL_CONTEXT_PROPERTIES => {
                if ctx.properties.is_empty() {
                    out.bytes(&[])
                } else {
                    let mut list = ctx.properties.clone();
                    list.push(0);
                    out.write(&list)
                }
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clSetContextDestructorCallback(
    context: cl_context,
    pfn_notify: Option<unsafe extern "C" fn(cl_context, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    entry::code("clSetContextDestructorCallback", || {
        let ctx: &Context = handles::borrow(context)?;
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        let (handle, user_data) = (AppPtr(context as *mut c_void), AppPtr(user_data));
        ctx.add_destructor_callback(Box::new(move || {
            let (handle, user_data) = (handle, user_data);
            // SAFETY: the application registered this callback for this signature; the context
            // handle is passed for identification only (the object is being destroyed).
            unsafe { f(handle.0 as cl_context, user_data.0) }
        }));
        Ok(())
    })
}
