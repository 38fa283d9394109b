//! Kernel entry points: creation, arguments, kernel / argument / work-group queries, and the
//! NDRange enqueues (clEnqueueNDRangeKernel, clEnqueueTask).

use crate::api::event::{check_wait_list, return_event};
use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_compiler::{AccessQualifier, AddressSpace};
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::device::Device;
use softcl_runtime::handle::RefCount;
use softcl_runtime::kernel::{ArgRequest, ArgValue, Kernel};
use softcl_runtime::memory::Mem;
use softcl_runtime::program::Program;
use softcl_runtime::queue::Queue;
use softcl_runtime::sampler::SamplerObject;
use softcl_runtime::svm;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

pub extern "C" fn clCreateKernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    entry::object("clCreateKernel", errcode_ret, || {
        let prog: Arc<Program> = handles::arc(program)?;
        // "CL_INVALID_VALUE if kernel_name is NULL."
        // SAFETY: the application's NUL-terminated string, valid for this call by the API contract
        // (NULL is an error).
        let name = unsafe { ptr::c_str(kernel_name) }?;
        Ok(handles::new_handle(Kernel::new(prog, name)?))
    })
}

pub extern "C" fn clCreateKernelsInProgram(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    entry::code("clCreateKernelsInProgram", || {
        let prog: Arc<Program> = handles::arc(program)?;
        // "CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for any
        // device in program."
        let names = prog.kernel_names()?;
        // "CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of
        // kernels in program."
        if !kernels.is_null() && (num_kernels as usize) < names.len() {
            return Err(CL_INVALID_VALUE);
        }
        if !kernels.is_null() {
            // Kernel objects are created for the kernels that have the same definition on
            // every device; all of them do, since every device builds the same module.
            let created: Vec<Arc<Kernel>> =
                names.iter().map(|n| Kernel::new(prog.clone(), n)).collect::<Result<_, _>>()?;
            let handles: Vec<cl_kernel> = created.into_iter().map(handles::new_handle).collect();
            ptr::write_array(kernels, num_kernels as usize, &handles);
        }
        ptr::write_opt(num_kernels_ret, names.len() as cl_uint);
        Ok(())
    })
}

pub extern "C" fn clCloneKernel(source_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    entry::object("clCloneKernel", errcode_ret, || {
        let k: &Kernel = handles::borrow(source_kernel)?;
        Ok(handles::new_handle(k.clone_kernel()))
    })
}

pub extern "C" fn clRetainKernel(kernel: cl_kernel) -> cl_int {
    entry::code("clRetainKernel", || handles::retain::<Kernel, _>(kernel))
}

pub extern "C" fn clReleaseKernel(kernel: cl_kernel) -> cl_int {
    entry::code("clReleaseKernel", || handles::release::<Kernel, _>(kernel))
}

pub extern "C" fn clSetKernelArg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    entry::code("clSetKernelArg", || {
        let k: &Kernel = handles::borrow(kernel)?;
        let value = match k.check_arg(arg_index, arg_size, arg_value.is_null())? {
            ArgRequest::Local(size) => ArgValue::Local(size),
            ArgRequest::Buffer if arg_value.is_null() => ArgValue::Buffer(None),
            ArgRequest::Buffer => {
                // SAFETY: arg_size == sizeof(cl_mem) (checked); the application passes a
                // pointer to a cl_mem, possibly unaligned.
                let mem = unsafe { (arg_value as *const cl_mem).read_unaligned() };
                if mem.is_null() {
                    ArgValue::Buffer(None)
                } else {
                    // "CL_INVALID_MEM_OBJECT for an argument declared to be a memory object
                    // when the specified arg_value is not a valid memory object."
                    ArgValue::Buffer(Some(handles::arc::<Mem, _>(mem)?))
                }
            }
            ArgRequest::Bytes => ArgValue::Bytes(read_bytes(arg_value, arg_size)),
            ArgRequest::Image => {
                // SAFETY: arg_size == sizeof(cl_mem) and arg_value is not NULL (checked); the
                // application passes a pointer to a cl_mem, possibly unaligned.
                let mem = unsafe { (arg_value as *const cl_mem).read_unaligned() };
                // "CL_INVALID_MEM_OBJECT for an argument declared to be a memory object when
                // the specified arg_value is not a valid memory object."
                ArgValue::Image(handles::arc::<Mem, _>(mem)?)
            }
            ArgRequest::Sampler => {
                // SAFETY: arg_size == sizeof(cl_sampler) and arg_value is not NULL (checked).
                let sampler = unsafe { (arg_value as *const cl_sampler).read_unaligned() };
                // "CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when the
                // specified arg_value is not a valid sampler object."
                ArgValue::Sampler(handles::arc::<SamplerObject, _>(sampler)?)
            }
        };
        k.set_arg(arg_index, value)
    })
}

/// `len` bytes the application points at (any alignment).
fn read_bytes(p: *const c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: the application's arg_value points at arg_size readable bytes (API contract);
    // the copy is bytewise, so alignment does not matter.
    unsafe { std::ptr::copy_nonoverlapping(p as *const u8, out.as_mut_ptr(), len) };
    out
}

pub extern "C" fn clGetKernelInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetKernelInfo", || {
        let k: &Kernel = handles::borrow(kernel)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_FUNCTION_NAME => out.write(&k.name),
            CL_KERNEL_NUM_ARGS => out.write(&(k.num_args() as cl_uint)),
            CL_KERNEL_REFERENCE_COUNT => out.write(&k.header_ref_count()),
            CL_KERNEL_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(k.context())),
            CL_KERNEL_PROGRAM => out.write(&handles::handle_of::<Program, c_void>(&k.program)),
            CL_KERNEL_ATTRIBUTES => out.write(&k.info.attributes),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clGetKernelArgInfo(
    kernel: cl_kernel,
    arg_indx: cl_uint,
    param_name: cl_kernel_arg_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetKernelArgInfo", || {
        let k: &Kernel = handles::borrow(kernel)?;
        // "CL_INVALID_ARG_INDEX if arg_index is not a valid argument index."
        let arg = k.info.args.get(arg_indx as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        // "CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is not available for
        // kernel."
        if !k.program.arg_info_available(&k.info) {
            return Err(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
        }
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_ARG_ADDRESS_QUALIFIER => {
                let q: cl_kernel_arg_address_qualifier = match arg.address_space {
                    AddressSpace::Global => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                    AddressSpace::Constant => CL_KERNEL_ARG_ADDRESS_CONSTANT,
                    AddressSpace::Local => CL_KERNEL_ARG_ADDRESS_LOCAL,
                    AddressSpace::Private | AddressSpace::Generic => CL_KERNEL_ARG_ADDRESS_PRIVATE,
                };
                out.write(&q)
            }
            CL_KERNEL_ARG_ACCESS_QUALIFIER => {
                let q: cl_kernel_arg_access_qualifier = match arg.access {
                    AccessQualifier::None => CL_KERNEL_ARG_ACCESS_NONE,
                    AccessQualifier::ReadOnly => CL_KERNEL_ARG_ACCESS_READ_ONLY,
                    AccessQualifier::WriteOnly => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
                    AccessQualifier::ReadWrite => CL_KERNEL_ARG_ACCESS_READ_WRITE,
                };
                out.write(&q)
            }
            CL_KERNEL_ARG_TYPE_NAME => out.write(&arg.type_name),
            CL_KERNEL_ARG_TYPE_QUALIFIER => {
                let q = &arg.qualifiers;
                // "CL_KERNEL_ARG_TYPE_CONST is returned if the argument is a pointer and the
                // referenced type is declared with the const qualifier ... [or] declared with
                // the constant address space qualifier."
                let is_const = q.is_const || arg.address_space == AddressSpace::Constant;
                let mut bits = CL_KERNEL_ARG_TYPE_NONE as cl_kernel_arg_type_qualifier;
                for (on, bit) in [
                    (is_const, CL_KERNEL_ARG_TYPE_CONST),
                    (q.is_restrict, CL_KERNEL_ARG_TYPE_RESTRICT),
                    (q.is_volatile, CL_KERNEL_ARG_TYPE_VOLATILE),
                    (q.is_pipe, CL_KERNEL_ARG_TYPE_PIPE),
                ] {
                    if on {
                        bits |= bit as cl_kernel_arg_type_qualifier;
                    }
                }
                out.write(&bits)
            }
            CL_KERNEL_ARG_NAME => out.write(&arg.name),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// The device of a per-device kernel query: NULL means the kernel's only device.
fn kernel_device(k: &Kernel, device: cl_device_id) -> Result<&Arc<Device>, cl_int> {
    let devices = &k.program.devices;
    if device.is_null() {
        // "CL_INVALID_DEVICE if ... device is NULL but there is more than one device
        // associated with kernel."
        return match devices.as_slice() {
            [only] => Ok(only),
            _ => Err(CL_INVALID_DEVICE),
        };
    }
    let dev: &Device = handles::borrow(device)?;
    // "CL_INVALID_DEVICE if device is not in the list of devices associated with kernel".
    devices.iter().find(|d| std::ptr::eq(d.as_ref(), dev)).ok_or(CL_INVALID_DEVICE)
}

/// Whether `dev` offers cl_intel_required_subgroup_size, whose kernel queries answer only
/// there.
fn offers_required_sub_group_size(dev: &Device) -> bool {
    dev.info().extensions.iter().any(|e| e.name == "cl_intel_required_subgroup_size")
}

pub extern "C" fn clGetKernelWorkGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_work_group_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetKernelWorkGroupInfo", || {
        let k: &Kernel = handles::borrow(kernel)?;
        let dev = kernel_device(k, device)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_WORK_GROUP_SIZE => out.write(&k.work_group_size(dev)),
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE => out.write(&k.info.reqd_work_group_size.unwrap_or([0; 3])),
            CL_KERNEL_LOCAL_MEM_SIZE => out.write(&k.local_mem_size(dev)),
            CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
                // A vectorized kernel runs packets of W work-items: multiples of W have no tail.
                // Never more than CL_KERNEL_WORK_GROUP_SIZE (a kernel keeping much state across
                // barriers may have smaller work-groups than a packet).
                let w = k.device_info(dev).simd_width as usize;
                let multiple = if w > 1 { w } else { dev.info().preferred_work_group_size_multiple };
                out.write(&multiple.min(k.work_group_size(dev)))
            }
            CL_KERNEL_PRIVATE_MEM_SIZE => out.write(&k.device_info(dev).private_mem_size),
            // cl_intel_required_subgroup_size: private memory spilled by register allocation,
            // which neither device has (the CPU's stack is the private memory; the Gen model
            // picks a SIMD width that does not spill).
            CL_KERNEL_SPILL_MEM_SIZE_INTEL if offers_required_sub_group_size(dev) => out.write(&(0 as cl_ulong)),
            // "CL_INVALID_VALUE if param_name is CL_KERNEL_GLOBAL_WORK_SIZE and device is not a
            // custom device and kernel is not a built-in kernel."
            CL_KERNEL_GLOBAL_WORK_SIZE => Err(CL_INVALID_VALUE),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clGetKernelSubGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetKernelSubGroupInfo", || {
        let k: &Kernel = handles::borrow(kernel)?;
        let dev = kernel_device(k, device)?;
        // "CL_INVALID_OPERATION if device does not support subgroups."
        if dev.info().max_num_sub_groups == 0 {
            return Err(CL_INVALID_OPERATION);
        }
        let size_t = std::mem::size_of::<usize>();
        // The input: `input_value_size` bytes of size_t values.
        let input = |dims: std::ops::RangeInclusive<usize>| -> Result<Vec<usize>, cl_int> {
            let n = input_value_size / size_t;
            if input_value.is_null() || !input_value_size.is_multiple_of(size_t) || !dims.contains(&n) {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the application passes `input_value_size` readable bytes at
            // `input_value` (checked non-NULL above); read unaligned, as size_t values.
            Ok((0..n).map(|i| unsafe { (input_value as *const usize).add(i).read_unaligned() }).collect())
        };
        let local_of =
            |v: &[usize]| -> [usize; 3] { [v[0], v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)] };
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => {
                let local = local_of(&input(1..=3)?);
                out.write(&k.sub_groups(dev, local).0)
            }
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => {
                let local = local_of(&input(1..=3)?);
                out.write(&k.sub_groups(dev, local).1)
            }
            CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
                let count = input(1..=1)?[0];
                // The answer has as many dimensions as param_value has room for.
                let dims = param_value_size / size_t;
                if !param_value.is_null() && !(1..=3).contains(&dims) {
                    return Err(CL_INVALID_VALUE);
                }
                let dims = dims.clamp(1, 3);
                // The largest one-dimensional work-group with that many sub-groups; 0 if
                // none has.
                let max = k.work_group_size(dev);
                let x = (1..=max).rev().find(|&x| count > 0 && k.sub_groups(dev, [x, 1, 1]).1 == count).unwrap_or(0);
                let mut local = vec![if x == 0 { 0 } else { 1 }; dims];
                local[0] = x;
                out.write(&local)
            }
            CL_KERNEL_MAX_NUM_SUB_GROUPS => {
                let max = k.work_group_size(dev);
                out.write(&k.sub_groups(dev, [max, 1, 1]).1)
            }
            // No OpenCL C attribute sets a number of sub-groups.
            CL_KERNEL_COMPILE_NUM_SUB_GROUPS => out.write(&0usize),
            // `intel_reqd_sub_group_size(n)`: n; 0 without it.
            CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL if offers_required_sub_group_size(dev) => {
                out.write(&(k.device_info(dev).reqd_sub_group_size.unwrap_or(0) as usize))
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// cl_khr_subgroups' name for [`clGetKernelSubGroupInfo`] (OpenCL 2.0 applications look it
/// up through clGetExtensionFunctionAddressForPlatform).
#[allow(clippy::too_many_arguments)]
pub extern "C" fn clGetKernelSubGroupInfoKHR(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_value_size: usize,
    input_value: *const c_void,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    clGetKernelSubGroupInfo(
        kernel,
        device,
        param_name,
        input_value_size,
        input_value,
        param_value_size,
        param_value,
        param_value_size_ret,
    )
}

pub extern "C" fn clSetKernelArgSVMPointer(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int {
    entry::code("clSetKernelArgSVMPointer", || {
        // "CL_INVALID_KERNEL if kernel is not a valid kernel object."
        let k: &Kernel = handles::borrow(kernel)?;
        // "CL_INVALID_OPERATION if no devices in the context associated with kernel support
        // SVM."
        if !svm::context_has_svm(k.context()) {
            return Err(CL_INVALID_OPERATION);
        }
        // The pointer is passed to the kernel as it is (an SVM pointer, an offset into one,
        // NULL, or with fine-grain system SVM any host address): it is never dereferenced here.
        k.set_arg_svm(arg_index, arg_value as usize)
    })
}

pub extern "C" fn clSetKernelExecInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_exec_info,
    param_value_size: usize,
    param_value: *const c_void,
) -> cl_int {
    entry::code("clSetKernelExecInfo", || {
        // "CL_INVALID_KERNEL if kernel is a not a valid kernel object."
        let k: &Kernel = handles::borrow(kernel)?;
        let ctx = k.context();
        // "CL_INVALID_OPERATION if no devices in the context associated with kernel support
        // SVM."
        if !svm::context_has_svm(ctx) {
            return Err(CL_INVALID_OPERATION);
        }
        // "CL_INVALID_VALUE if param_name is not valid, if param_value is NULL or if the size
        // specified by param_value_size is not valid."
        if param_value.is_null() && !(param_name == CL_KERNEL_EXEC_INFO_SVM_PTRS && param_value_size == 0) {
            return Err(CL_INVALID_VALUE);
        }
        match param_name {
            // A NULL list of size 0 clears the set (the CTS's set_kernel_exec_info_svm_ptrs
            // tests this "unsetting previously set SVM pointers").
            CL_KERNEL_EXEC_INFO_SVM_PTRS if param_value.is_null() && param_value_size == 0 => {
                k.set_exec_svm_ptrs(Vec::new());
                Ok(())
            }
            CL_KERNEL_EXEC_INFO_SVM_PTRS => {
                let n = std::mem::size_of::<*const c_void>();
                if param_value_size == 0 || !param_value_size.is_multiple_of(n) {
                    return Err(CL_INVALID_VALUE);
                }
                // SAFETY: the application's array of that many elements, valid for this call by the
                // API contract (NULL and misalignment are errors).
                let ptrs = unsafe { ptr::slice(param_value as *const usize, param_value_size / n) }?.to_vec();
                k.set_exec_svm_ptrs(ptrs);
                Ok(())
            }
            CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM => {
                if param_value_size != std::mem::size_of::<cl_bool>() {
                    return Err(CL_INVALID_VALUE);
                }
                // SAFETY: the application's array of that many elements, valid for this call by the
                // API contract (NULL and misalignment are errors).
                let on = unsafe { ptr::slice(param_value as *const cl_bool, 1) }?[0] != CL_FALSE;
                // "CL_INVALID_OPERATION if param_name is CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM
                // and param_value is CL_TRUE but no devices in context associated with kernel
                // support fine-grain system SVM allocations."
                if on && !svm::context_has_system_svm(ctx) {
                    return Err(CL_INVALID_OPERATION);
                }
                k.set_exec_fine_grain_system(on);
                Ok(())
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// clEnqueueNDRangeKernel after the handles: reads the size arrays and enqueues.
#[allow(clippy::too_many_arguments)]
fn enqueue_ndrange(
    command_type: cl_command_type,
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> Result<(), cl_int> {
    // "CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue."
    let queue: Arc<Queue> = handles::arc(command_queue)?;
    // "CL_INVALID_KERNEL if kernel is not a valid kernel object."
    let k: &Kernel = handles::borrow(kernel)?;
    // "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0,
    // or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
    // event_wait_list are not valid events."
    let wait_for = handles::wait_list(event_wait_list, num_events_in_wait_list)?;
    check_wait_list(&queue, &wait_for)?;
    // "CL_INVALID_CONTEXT if context associated with command_queue and kernel are not the
    // same".
    if !Arc::ptr_eq(&queue.context, k.context()) {
        return Err(CL_INVALID_CONTEXT);
    }
    // The arrays hold work_dim values; an invalid work_dim is reported by check_ndrange
    // before any of them is used.
    let dims = if (1..=3).contains(&work_dim) { work_dim as usize } else { 0 };
    let read = |p: *const usize| -> Result<Option<&[usize]>, cl_int> {
        if p.is_null() {
            Ok(None)
        } else {
            // SAFETY: the application's array of that many elements, valid for this call by the API
            // contract (NULL and misalignment are errors).
            unsafe { ptr::slice(p, dims) }.map(Some)
        }
    };
    let (offset, global, local) = (read(global_work_offset)?, read(global_work_size)?, read(local_work_size)?);
    let nd = k.check_ndrange(&queue.device, work_dim, offset, global, local)?;
    return_event(k.enqueue_ndrange(&queue, command_type, wait_for, nd)?, event);
    Ok(())
}

pub extern "C" fn clEnqueueNDRangeKernel(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueNDRangeKernel", || {
        enqueue_ndrange(
            CL_COMMAND_NDRANGE_KERNEL,
            command_queue,
            kernel,
            work_dim,
            global_work_offset,
            global_work_size,
            local_work_size,
            num_events_in_wait_list,
            event_wait_list,
            event,
        )
    })
}

pub extern "C" fn clEnqueueTask(
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueTask", || {
        // "clEnqueueTask is equivalent to calling clEnqueueNDRangeKernel with work_dim set to
        // 1, global_work_offset set to NULL, global_work_size[0] set to 1, and
        // local_work_size[0] set to 1."
        let one = [1usize];
        enqueue_ndrange(
            CL_COMMAND_TASK,
            command_queue,
            kernel,
            1,
            std::ptr::null(),
            one.as_ptr(),
            one.as_ptr(),
            num_events_in_wait_list,
            event_wait_list,
            event,
        )
    })
}
