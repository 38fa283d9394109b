//! Command-queue entry points. Queues are host queues only: device-side queues
//! (CL_QUEUE_ON_DEVICE) are not supported, so the calls about them fail honestly.

use crate::api::device::host_queue_properties;
use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::device::Device;
use softcl_runtime::handle::RefCount;
use softcl_runtime::queue::Queue;
use std::ffi::c_void;
use std::sync::Arc;

const OUT_OF_ORDER: u64 = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as u64;
const PROFILING: u64 = CL_QUEUE_PROFILING_ENABLE as u64;
const ON_DEVICE: u64 = CL_QUEUE_ON_DEVICE as u64;
const ON_DEVICE_DEFAULT: u64 = CL_QUEUE_ON_DEVICE_DEFAULT as u64;

/// Checks a CL_QUEUE_PROPERTIES bit-field against the specification and the device.
fn check_properties(device: &Device, properties: cl_command_queue_properties) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if values specified in properties are not valid": unknown bits,
    // CL_QUEUE_ON_DEVICE_DEFAULT without CL_QUEUE_ON_DEVICE, and CL_QUEUE_ON_DEVICE without
    // CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ("... must also be set").
    if properties & !(OUT_OF_ORDER | PROFILING | ON_DEVICE | ON_DEVICE_DEFAULT) != 0
        || (properties & ON_DEVICE_DEFAULT != 0 && properties & ON_DEVICE == 0)
        || (properties & ON_DEVICE != 0 && properties & OUT_OF_ORDER == 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are not
    // supported by the device": device-side queues, or out-of-order execution on a device that
    // does not list it in CL_DEVICE_QUEUE_ON_HOST_PROPERTIES.
    if properties & ON_DEVICE != 0 || properties & !host_queue_properties(device.info()) != 0 {
        return Err(CL_INVALID_QUEUE_PROPERTIES);
    }
    Ok(())
}

/// The context and device arguments of the queue constructors.
fn context_and_device(context: cl_context, device: cl_device_id) -> Result<(Arc<Context>, Arc<Device>), cl_int> {
    // "CL_INVALID_CONTEXT if context is not a valid context."
    let context: Arc<Context> = handles::arc(context)?;
    // "CL_INVALID_DEVICE if device is not a valid device or is not associated with context."
    let device: Arc<Device> = handles::arc(device)?;
    if !context.has_device(&device) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok((context, device))
}

fn create(
    (context, device): (Arc<Context>, Arc<Device>),
    properties: cl_command_queue_properties,
    properties_list: Vec<cl_queue_properties>,
) -> Result<cl_command_queue, cl_int> {
    check_properties(&device, properties)?;
    let queue = Queue::new(context, device, properties, properties_list)?;
    Ok(handles::new_handle(queue))
}

pub extern "C" fn clCreateCommandQueueWithProperties(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    entry::object("clCreateCommandQueueWithProperties", errcode_ret, || {
        let (context, device) = context_and_device(context, device)?;
        let list = ptr::property_list(properties).map_err(|_| CL_INVALID_VALUE)?;
        let mut bits: cl_command_queue_properties = 0;
        let mut queue_size = None;
        let mut seen = Vec::new();
        for pair in list.chunks(2) {
            let [name, value] = *pair else { return Err(CL_INVALID_VALUE) };
            // A property given twice is not a valid list.
            if seen.contains(&name) {
                return Err(CL_INVALID_VALUE);
            }
            seen.push(name);
            match name as u32 {
                CL_QUEUE_PROPERTIES => bits = value,
                CL_QUEUE_SIZE => queue_size = Some(value),
                // "CL_INVALID_VALUE if values specified in properties are not valid" (an
                // unknown name, e.g. CL_QUEUE_PRIORITY_KHR of an extension we do not offer).
                _ => return Err(CL_INVALID_VALUE),
            }
        }
        check_properties(&device, bits)?;
        // CL_QUEUE_SIZE applies to device queues only ("can only be specified if
        // CL_QUEUE_ON_DEVICE is set"), which this device does not support.
        if queue_size.is_some() {
            return Err(CL_INVALID_QUEUE_PROPERTIES);
        }
        // CL_QUEUE_PROPERTIES_ARRAY reports the list as given, with its terminator.
        let mut given = Vec::new();
        if !properties.is_null() {
            given = list;
            given.push(0);
        }
        create((context, device), bits, given)
    })
}

pub extern "C" fn clCreateCommandQueue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    entry::object("clCreateCommandQueue", errcode_ret, || {
        create(context_and_device(context, device)?, properties, Vec::new())
    })
}

pub extern "C" fn clRetainCommandQueue(command_queue: cl_command_queue) -> cl_int {
    entry::code("clRetainCommandQueue", || handles::retain::<Queue, _>(command_queue))
}

/// "clReleaseCommandQueue performs an implicit flush to issue any previously queued OpenCL
/// commands": commands already enqueued keep the queue alive until its worker has run them.
pub extern "C" fn clReleaseCommandQueue(command_queue: cl_command_queue) -> cl_int {
    entry::code("clReleaseCommandQueue", || {
        handles::borrow::<Queue, _>(command_queue)?.flush();
        handles::release::<Queue, _>(command_queue)
    })
}

pub extern "C" fn clGetCommandQueueInfo(
    command_queue: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetCommandQueueInfo", || {
        let queue: &Queue = handles::borrow(command_queue)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_QUEUE_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(&queue.context)),
            CL_QUEUE_DEVICE => out.write(&handles::handle_of::<Device, c_void>(&queue.device)),
            CL_QUEUE_REFERENCE_COUNT => out.write(&queue.header_ref_count()),
            CL_QUEUE_PROPERTIES => out.write(&queue.properties),
            CL_QUEUE_PROPERTIES_ARRAY => out.write(&queue.properties_list),
            // "CL_INVALID_COMMAND_QUEUE if ... command_queue is not a valid command-queue for
            // param_name": CL_QUEUE_SIZE is for device queues only.
            CL_QUEUE_SIZE => Err(CL_INVALID_COMMAND_QUEUE),
            // No device queues: there is no default device queue.
            CL_QUEUE_DEVICE_DEFAULT => out.write(&std::ptr::null_mut::<c_void>()),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clFlush(command_queue: cl_command_queue) -> cl_int {
    entry::code("clFlush", || {
        handles::borrow::<Queue, _>(command_queue)?.flush();
        Ok(())
    })
}

pub extern "C" fn clFinish(command_queue: cl_command_queue) -> cl_int {
    entry::code("clFinish", || {
        // Keep the queue alive for the wait even if another thread releases it meanwhile.
        let queue: Arc<Queue> = handles::arc(command_queue)?;
        queue.flush();
        queue.finish();
        Ok(())
    })
}

pub extern "C" fn clSetDefaultDeviceCommandQueue(
    context: cl_context,
    device: cl_device_id,
    _command_queue: cl_command_queue,
) -> cl_int {
    entry::code("clSetDefaultDeviceCommandQueue", || {
        context_and_device(context, device)?;
        // "CL_INVALID_OPERATION if device does not support a replaceable default on-device
        // queue": no device supports on-device queues, so there is no command_queue to check
        // (the CTS passes NULL and expects CL_INVALID_OPERATION, not
        // CL_INVALID_COMMAND_QUEUE).
        Err(CL_INVALID_OPERATION)
    })
}

/// OpenCL 1.0 (deprecated): changing the properties of an existing queue is not supported.
pub extern "C" fn clSetCommandQueueProperty(
    command_queue: cl_command_queue,
    _properties: cl_command_queue_properties,
    _enable: cl_bool,
    _old_properties: *mut cl_command_queue_properties,
) -> cl_int {
    entry::code("clSetCommandQueueProperty", || {
        handles::borrow::<Queue, _>(command_queue)?;
        Err(CL_INVALID_OPERATION)
    })
}
