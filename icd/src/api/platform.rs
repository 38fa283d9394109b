//! Platform entry points and the loader's own entry points (cl_khr_icd 1.0 and 2.0).

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_runtime::cl::*;
use softcl_runtime::handle::ClObject;
use softcl_runtime::platform::{Platform, ICD_SUFFIX, PLATFORM_EXTENSIONS, PLATFORM_NAME, PLATFORM_VENDOR};
use std::ffi::{c_char, c_void};

fn get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if num_entries is equal to zero and platforms is not NULL or if both
    // num_platforms and platforms are NULL."
    if (num_entries == 0 && !platforms.is_null()) || (num_platforms.is_null() && platforms.is_null()) {
        return Err(CL_INVALID_VALUE);
    }
    let handle: cl_platform_id = handles::handle_of(crate::platform());
    ptr::write_array(platforms, num_entries as usize, &[handle]);
    ptr::write_opt(num_platforms, 1);
    Ok(())
}

/// The loader's way to enumerate our platforms (cl_khr_icd; exported by `crate::exports`).
pub extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    entry::code("clIcdGetPlatformIDsKHR", || get_platform_ids(num_entries, platforms, num_platforms))
}

/// Reached only through clIcdGetFunctionAddressForPlatformKHR (its dispatch slot holds the
/// cl_khr_icd 2.0 tag).
pub extern "C" fn clGetPlatformIDs(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    entry::code("clGetPlatformIDs", || get_platform_ids(num_entries, platforms, num_platforms))
}

/// A platform handle, where NULL means our (only) platform as the specification allows.
pub(crate) fn platform_arg(platform: cl_platform_id) -> Result<&'static std::sync::Arc<Platform>, cl_int> {
    let p = crate::platform();
    if !platform.is_null() && platform as *mut c_void != p.handle() {
        return Err(CL_INVALID_PLATFORM);
    }
    Ok(p)
}

pub extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetPlatformInfo", || {
        platform_arg(platform)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PLATFORM_PROFILE => out.write("FULL_PROFILE"),
            CL_PLATFORM_VERSION => out.write(&Platform::version()),
            CL_PLATFORM_NUMERIC_VERSION => out.write(&cl_version_of(3, 0, 0)),
            CL_PLATFORM_NAME => out.write(PLATFORM_NAME),
            CL_PLATFORM_VENDOR => out.write(PLATFORM_VENDOR),
            CL_PLATFORM_EXTENSIONS => {
                out.write(&PLATFORM_EXTENSIONS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" "))
            }
            CL_PLATFORM_EXTENSIONS_WITH_VERSION => out.write(
                &PLATFORM_EXTENSIONS
                    .iter()
                    .map(|(n, (a, b, c))| softcl_device_model::NameVersion::new(n, *a, *b, *c))
                    .collect::<Vec<_>>(),
            ),
            CL_PLATFORM_HOST_TIMER_RESOLUTION => out.write(&1u64),
            CL_PLATFORM_ICD_SUFFIX_KHR => out.write(ICD_SUFFIX),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// CL_MAKE_VERSION.
pub(crate) fn cl_version_of(major: u32, minor: u32, patch: u32) -> cl_version {
    (major << 22) | (minor << 12) | patch
}

/// The functions clGetExtensionFunctionAddress* return: the loader's own extension functions
/// and, by name, every implemented entry point. Debian's ocl-icd asks for core functions such as
/// clGetPlatformInfo this way to decide whether a library is an ICD at all. All of them are the
/// unexported functions of `api/`, never the exported wrappers of `crate::exports`, which the
/// loader's symbols of the same names can interpose.
fn extension_function(name: &str) -> *mut c_void {
    match name {
        "clIcdGetPlatformIDsKHR" => clIcdGetPlatformIDsKHR as *const () as *mut c_void,
        "clIcdGetFunctionAddressForPlatformKHR" => clIcdGetFunctionAddressForPlatformKHR as *const () as *mut c_void,
        "clIcdSetPlatformDispatchDataKHR" => clIcdSetPlatformDispatchDataKHR as *const () as *mut c_void,
        _ => crate::dispatch::lookup_implemented(name).unwrap_or(std::ptr::null_mut()),
    }
}

/// Which functions a by-name lookup may return.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lookup {
    /// Implemented entry points and the loader's functions (clGetExtensionFunctionAddress*).
    Implemented,
    /// Also the slots not implemented yet (cl_khr_icd 2.0: the loader fills its own dispatch
    /// table this way, so those slots must get the function that reports them missing).
    AnySlot,
}

/// The body of every by-name lookup: NULL for a bad platform or name, never a panic.
fn lookup_function(platform: Option<cl_platform_id>, func_name: *const c_char, scope: Lookup) -> *mut c_void {
    std::panic::catch_unwind(|| {
        if platform.is_some_and(|p| platform_arg(p).is_err()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the application's NUL-terminated string, valid for this call by the API contract
        // (NULL is an error).
        let Ok(name) = (unsafe { ptr::c_str(func_name) }) else { return std::ptr::null_mut() };
        let found = extension_function(name);
        if found.is_null() && scope == Lookup::AnySlot {
            return crate::dispatch::lookup(name).unwrap_or(std::ptr::null_mut());
        }
        found
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Exported by `crate::exports`; the dispatch table holds this function, never the export.
pub extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    lookup_function(None, func_name, Lookup::Implemented)
}

/// Exported by `crate::exports`; the dispatch table holds this function, never the export.
pub extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    lookup_function(Some(platform), func_name, Lookup::Implemented)
}

/// cl_khr_icd 2.0: any entry point by name, for the loader's own dispatch tables (exported
/// by `crate::exports`).
pub extern "C" fn clIcdGetFunctionAddressForPlatformKHR(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    lookup_function(Some(platform), func_name, Lookup::AnySlot)
}

/// cl_khr_icd 2.0: the loader's dispatch data, stored in the platform and every object
/// (exported by `crate::exports`).
pub extern "C" fn clIcdSetPlatformDispatchDataKHR(platform: cl_platform_id, dispatch_data: *mut c_void) -> cl_int {
    entry::code("clIcdSetPlatformDispatchDataKHR", || {
        let p = platform_arg(platform)?;
        if platform.is_null() {
            return Err(CL_INVALID_PLATFORM);
        }
        softcl_runtime::handle::set_platform_dispatch_data(dispatch_data);
        p.header().set_dispatch_data(dispatch_data);
        for d in &p.devices {
            d.header().set_dispatch_data(dispatch_data);
        }
        Ok(())
    })
}

pub extern "C" fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int {
    entry::code("clUnloadPlatformCompiler", || {
        if platform.is_null() {
            return Err(CL_INVALID_PLATFORM);
        }
        // The compiler is a subprocess per build: there is nothing resident to unload.
        platform_arg(platform).map(|_| ())
    })
}

pub extern "C" fn clGetHostTimer(device: cl_device_id, host_timestamp: *mut cl_ulong) -> cl_int {
    entry::code("clGetHostTimer", || {
        handles::borrow::<softcl_runtime::device::Device, _>(device)?;
        if host_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        ptr::write_opt(host_timestamp, softcl_runtime::clock::now_ns());
        Ok(())
    })
}

pub extern "C" fn clGetDeviceAndHostTimer(
    device: cl_device_id,
    device_timestamp: *mut cl_ulong,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    entry::code("clGetDeviceAndHostTimer", || {
        handles::borrow::<softcl_runtime::device::Device, _>(device)?;
        if host_timestamp.is_null() || device_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // Device and host share one clock: profiling timestamps are host nanoseconds.
        let now = softcl_runtime::clock::now_ns();
        ptr::write_opt(device_timestamp, now);
        ptr::write_opt(host_timestamp, now);
        Ok(())
    })
}
