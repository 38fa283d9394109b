//! Program entry points: creation from source, IL and binaries, build / compile / link,
//! program and build queries, specialization constants.

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr::{self, AppPtr};
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::device::Device;
use softcl_runtime::handle::RefCount;
use softcl_runtime::program::{Origin, Program};
use std::ffi::{c_char, c_uchar, c_void};
use std::sync::Arc;

/// The build-completion callback of clBuildProgram, clCompileProgram and clLinkProgram.
type BuildNotify = unsafe extern "C" fn(program: cl_program, user_data: *mut c_void);

/// Checks a pfn_notify/user_data pair and returns the callback to call after the build.
fn build_notify(
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> Result<Option<(BuildNotify, AppPtr)>, cl_int> {
    match pfn_notify {
        Some(f) => Ok(Some((f, AppPtr(user_data)))),
        // "CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL."
        None if !user_data.is_null() => Err(CL_INVALID_VALUE),
        None => Ok(None),
    }
}

/// Builds run synchronously, so the callback is called once the build has completed, on the
/// calling thread, which the specification allows.
fn call_notify(notify: Option<(BuildNotify, AppPtr)>, program: cl_program) {
    if let Some((f, user_data)) = notify {
        // SAFETY: the application registered this callback with this signature and owns
        // user_data; the program handle is valid (the caller holds a reference).
        unsafe { f(program, user_data.0) }
    }
}

/// A (num_devices, device_list) pair: an empty list when both say "none".
fn device_list(num_devices: cl_uint, device_list: *const cl_device_id) -> Result<Vec<Arc<Device>>, cl_int> {
    // "CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
    // device_list is not NULL and num_devices is zero."
    handles::list(device_list, num_devices, CL_INVALID_VALUE, Some(CL_INVALID_DEVICE))
}

/// The options string; NULL is no options. Bytes that are not UTF-8 become U+FFFD, which
/// the option parser refuses with the build's options error and a log line.
fn options_arg(options: *const c_char) -> Result<String, cl_int> {
    if options.is_null() {
        return Ok(String::new());
    }
    // SAFETY: the application's NUL-terminated string, valid for this call by the API contract
    // (NULL checked above).
    Ok(unsafe { std::ffi::CStr::from_ptr(options) }.to_string_lossy().into_owned())
}

/// "CL_INVALID_DEVICE if any device in device_list is not in the list of devices associated
/// with context."
fn check_in_context(context: &Context, devices: &[Arc<Device>]) -> Result<(), cl_int> {
    if devices.iter().any(|d| !context.has_device(d)) {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(())
}

pub extern "C" fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    entry::object("clCreateProgramWithSource", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        // "CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL."
        if count == 0 || strings.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let strings = unsafe { ptr::slice(strings as *const *const c_char, count as usize) }?;
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let lengths = if lengths.is_null() { None } else { Some(unsafe { ptr::slice(lengths, count as usize) }?) };
        let mut source = Vec::new();
        for (i, &s) in strings.iter().enumerate() {
            if s.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // "If an element in lengths is zero, its accompanying string is null-terminated.
            // If lengths is NULL, all strings in the strings argument are considered
            // null-terminated. Any length value passed in that is greater than zero excludes
            // the null terminator in its count."
            match lengths.map(|l| l[i]).filter(|&n| n > 0) {
                // SAFETY: the application's array of that many elements, valid for this call by the
                // API contract (NULL and misalignment are errors).
                Some(n) => source.extend_from_slice(unsafe { ptr::slice(s as *const u8, n) }?),
                // SAFETY: a non-NULL string without a length is NUL-terminated per the API.
                None => source.extend_from_slice(unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes()),
            }
        }
        let source = String::from_utf8_lossy(&source).into_owned();
        Ok(handles::new_handle(Program::with_source(ctx, source)))
    })
}

pub extern "C" fn clCreateProgramWithIL(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    entry::object("clCreateProgramWithIL", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        // "CL_INVALID_VALUE if il is NULL or if length is zero."
        if il.is_null() || length == 0 {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let bytes = unsafe { ptr::slice(il as *const u8, length) }?.to_vec();
        Ok(handles::new_handle(Program::with_il(ctx, bytes)?))
    })
}

pub extern "C" fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    device_list_arg: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const c_uchar,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    entry::object("clCreateProgramWithBinary", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        // "CL_INVALID_VALUE if device_list is NULL or num_devices is zero."
        if device_list_arg.is_null() || num_devices == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let devices = device_list(num_devices, device_list_arg)?;
        // "CL_INVALID_DEVICE if any device in device_list is not in the list of devices
        // associated with context."
        check_in_context(&ctx, &devices)?;
        let n = num_devices as usize;
        // "CL_INVALID_VALUE if lengths or binaries is NULL or if any entry in lengths[i] is
        // zero or binaries[i] is NULL."
        if lengths.is_null() || binaries.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let lengths = unsafe { ptr::slice(lengths, n) }?;
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let pointers = unsafe { ptr::slice(binaries as *const *const c_uchar, n) }?;
        let mut status = vec![CL_SUCCESS as cl_int; n];
        for i in 0..n {
            if lengths[i] == 0 || pointers[i].is_null() {
                status[i] = CL_INVALID_VALUE;
            }
        }
        if status.iter().any(|&s| s != CL_SUCCESS as cl_int) {
            ptr::write_array(binary_status, n, &status);
            return Err(CL_INVALID_VALUE);
        }
        let blobs: Vec<&[u8]> =
            // SAFETY: the application's array of that many elements, valid for this call by the API
            // contract (NULL and misalignment are errors).
            pointers.iter().zip(lengths).map(|(&p, &len)| unsafe { ptr::slice(p, len) }).collect::<Result<_, _>>()?;
        let (program, status) = Program::with_binaries(ctx, devices, &blobs);
        ptr::write_array(binary_status, n, &status);
        Ok(handles::new_handle(program?))
    })
}

pub extern "C" fn clCreateProgramWithBuiltInKernels(
    context: cl_context,
    num_devices: cl_uint,
    device_list_arg: *const cl_device_id,
    kernel_names: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_program {
    entry::object("clCreateProgramWithBuiltInKernels", errcode_ret, || -> Result<cl_program, cl_int> {
        let ctx: &Context = handles::borrow(context)?;
        // "CL_INVALID_VALUE if device_list is NULL or num_devices is zero."
        if device_list_arg.is_null() || num_devices == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let devices = device_list(num_devices, device_list_arg)?;
        check_in_context(ctx, &devices)?;
        // "CL_INVALID_VALUE if kernel_names is NULL or kernel_names contains a kernel name
        // that is not supported by any of the devices in device_list." No SoftCL device has
        // built-in kernels (CL_DEVICE_BUILT_IN_KERNELS is empty).
        // SAFETY: the application's NUL-terminated string, valid for this call by the API contract
        // (NULL is an error).
        unsafe { ptr::c_str(kernel_names) }?;
        Err(CL_INVALID_VALUE)
    })
}

pub extern "C" fn clRetainProgram(program: cl_program) -> cl_int {
    entry::code("clRetainProgram", || handles::retain::<Program, _>(program))
}

pub extern "C" fn clReleaseProgram(program: cl_program) -> cl_int {
    entry::code("clReleaseProgram", || handles::release::<Program, _>(program))
}

pub extern "C" fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list_arg: *const cl_device_id,
    options: *const c_char,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> cl_int {
    entry::code("clBuildProgram", || {
        let prog: &Program = handles::borrow(program)?;
        let devices = device_list(num_devices, device_list_arg)?;
        let notify = build_notify(pfn_notify, user_data)?;
        let options = options_arg(options)?;
        let result = prog.build(&devices, &options);
        // Errors found before the build started leave nothing to notify about.
        if result.is_ok() || matches!(result, Err(CL_BUILD_PROGRAM_FAILURE)) {
            call_notify(notify, program);
        }
        result
    })
}

pub extern "C" fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list_arg: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> cl_int {
    entry::code("clCompileProgram", || {
        let prog: &Program = handles::borrow(program)?;
        let devices = device_list(num_devices, device_list_arg)?;
        let notify = build_notify(pfn_notify, user_data)?;
        let options = options_arg(options)?;
        // "CL_INVALID_VALUE if num_input_headers is zero and header_include_names or
        // input_headers are not NULL or if num_input_headers is not zero and
        // header_include_names or input_headers are NULL."
        let headers_given = (!input_headers.is_null(), !header_include_names.is_null());
        if (num_input_headers == 0 && headers_given != (false, false))
            || (num_input_headers != 0 && headers_given != (true, true))
        {
            return Err(CL_INVALID_VALUE);
        }
        let header_programs: Vec<Arc<Program>> =
            handles::list(input_headers, num_input_headers, CL_INVALID_VALUE, None)?;
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let names = unsafe { ptr::slice(header_include_names as *const *const c_char, num_input_headers as usize) }?;
        let mut headers = Vec::with_capacity(names.len());
        for (p, &name) in header_programs.iter().zip(names) {
            // SAFETY: the application's NUL-terminated string, valid for this call by the API
            // contract (NULL is an error).
            let name = unsafe { ptr::c_str(name) }?.to_string();
            // Headers are programs created from source; their source is the header text.
            let Origin::Source(text) = &p.origin else { return Err(CL_INVALID_VALUE) };
            headers.push((name, text.clone()));
        }
        let result = prog.compile(&devices, &options, &headers);
        if result.is_ok() || matches!(result, Err(CL_COMPILE_PROGRAM_FAILURE)) {
            call_notify(notify, program);
        }
        result
    })
}

pub extern "C" fn clLinkProgram(
    context: cl_context,
    num_devices: cl_uint,
    device_list_arg: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let mut link_status = CL_SUCCESS as cl_int;
    let program = entry::object("clLinkProgram", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        let devices = device_list(num_devices, device_list_arg)?;
        check_in_context(&ctx, &devices)?;
        let notify = build_notify(pfn_notify, user_data)?;
        // "CL_INVALID_VALUE if num_input_programs is zero and input_programs is NULL or if
        // num_input_programs is zero and input_programs is not NULL or if num_input_programs
        // is not zero and input_programs is NULL."
        if num_input_programs == 0 || input_programs.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_PROGRAM if programs specified in input_programs are not valid program
        // objects."
        let inputs: Vec<Arc<Program>> = handles::list(input_programs, num_input_programs, CL_INVALID_VALUE, None)?;
        let options = options_arg(options)?;
        let (linked, status) = Program::link(ctx, devices, &options, &inputs)?;
        link_status = status;
        let handle: cl_program = handles::new_handle(linked);
        call_notify(notify, handle);
        Ok(handle)
    });
    // "If pfn_notify is NULL, the errcode_ret will be set to CL_SUCCESS if the link operation
    // was successful and CL_LINK_FAILURE if there is a failure to link the compiled binaries
    // and/or libraries." The program is returned either way, for its build log.
    if !program.is_null() && link_status != CL_SUCCESS as cl_int {
        entry::set_errcode(errcode_ret, link_status);
    }
    program
}

/// OpenCL 1.1 (deprecated): the compiler runs as a subprocess per build, so nothing stays
/// loaded. Reached through clGetExtensionFunctionAddress only (its dispatch slot holds the
/// cl_khr_icd 2.0 tag).
pub extern "C" fn clUnloadCompiler() -> cl_int {
    entry::code("clUnloadCompiler", || Ok(()))
}

pub extern "C" fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetProgramInfo", || {
        let prog: &Program = handles::borrow(program)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PROGRAM_REFERENCE_COUNT => out.write(&prog.header_ref_count()),
            CL_PROGRAM_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(&prog.context)),
            CL_PROGRAM_NUM_DEVICES => out.write(&(prog.devices.len() as cl_uint)),
            CL_PROGRAM_DEVICES => {
                out.write(&prog.devices.iter().map(handles::handle_of::<Device, c_void>).collect::<Vec<_>>())
            }
            CL_PROGRAM_SOURCE => match &prog.origin {
                Origin::Source(s) => out.write(s.as_str()),
                // "a null string or the appropriate program source code is returned".
                _ => out.write(""),
            },
            CL_PROGRAM_IL => match &prog.origin {
                Origin::Il(il) => out.bytes(il),
                // "... the memory pointed to by param_value will be unchanged and
                // param_value_size_ret will be set to 0."
                _ => out.bytes(&[]),
            },
            CL_PROGRAM_BINARY_SIZES => out.write(&prog.binaries().iter().map(Vec::len).collect::<Vec<usize>>()),
            CL_PROGRAM_BINARIES => write_binaries(prog, param_value_size, param_value, param_value_size_ret),
            CL_PROGRAM_NUM_KERNELS => out.write(&prog.kernel_names()?.len()),
            CL_PROGRAM_KERNEL_NAMES => out.write(&prog.kernel_names()?.join(";")),
            CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => {
                // Same CL_INVALID_PROGRAM_EXECUTABLE rule as the kernel queries.
                prog.kernel_names()?;
                out.write(&false)
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// CL_PROGRAM_BINARIES: param_value is an array of one pointer per device, each to memory of
/// CL_PROGRAM_BINARY_SIZES bytes (or NULL to skip that device).
fn write_binaries(
    prog: &Program,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> Result<(), cl_int> {
    let binaries = prog.binaries();
    let needed = binaries.len() * std::mem::size_of::<*mut c_uchar>();
    if !param_value.is_null() {
        // "CL_INVALID_VALUE if ... size in bytes specified by param_value_size is < size of
        // return type".
        if param_value_size < needed {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let targets = unsafe { ptr::slice(param_value as *const *mut c_uchar, binaries.len()) }?;
        for (&dst, bin) in targets.iter().zip(&binaries) {
            // "If an entry value in the array is NULL, the implementation skips copying the
            // program binary for the specific device identified by the array index."
            if !dst.is_null() && !bin.is_empty() {
                // SAFETY: the application provides, per device, memory of at least the size
                // CL_PROGRAM_BINARY_SIZES reported.
                unsafe { std::ptr::copy_nonoverlapping(bin.as_ptr(), dst, bin.len()) };
            }
        }
    }
    ptr::write_opt(param_value_size_ret, needed);
    Ok(())
}

pub extern "C" fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetProgramBuildInfo", || {
        let prog: &Program = handles::borrow(program)?;
        let dev: &Device = handles::borrow(device)?;
        // "CL_INVALID_DEVICE if device is not in the list of devices associated with program."
        let build = prog.build_of(dev).ok_or(CL_INVALID_DEVICE)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PROGRAM_BUILD_STATUS => out.write(&build.status),
            CL_PROGRAM_BUILD_OPTIONS => out.write(&build.options),
            CL_PROGRAM_BUILD_LOG => out.write(&build.log),
            CL_PROGRAM_BINARY_TYPE => out.write(&build.binary_type),
            // The storage of the program-scope variables of an executable (none before).
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => {
                let executable = build.native.is_some();
                let size = build.front.as_ref().filter(|_| executable).map_or(0, |f| f.global_variable_total_size());
                out.write(&(size as usize))
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clSetProgramReleaseCallback(
    program: cl_program,
    pfn_notify: Option<BuildNotify>,
    _user_data: *mut c_void,
) -> cl_int {
    entry::code("clSetProgramReleaseCallback", || {
        handles::borrow::<Program, _>(program)?;
        // "CL_INVALID_VALUE if pfn_notify is NULL."
        if pfn_notify.is_none() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_OPERATION if no devices in the context associated with program support
        // destructors for program scope global variables." No SoftCL device does.
        Err(CL_INVALID_OPERATION)
    })
}

pub extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    spec_id: cl_uint,
    spec_size: usize,
    spec_value: *const c_void,
) -> cl_int {
    entry::code("clSetProgramSpecializationConstant", || {
        let prog: &Program = handles::borrow(program)?;
        // "CL_INVALID_VALUE if ... spec_value is NULL."
        if spec_value.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's array of that many elements, valid for this call by the API
        // contract (NULL and misalignment are errors).
        let value = unsafe { ptr::slice(spec_value as *const u8, spec_size) }?;
        prog.set_spec_constant(spec_id, value)
    })
}
