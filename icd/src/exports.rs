//! The library's exported symbols: the entry points the ICD loader finds with dlsym. Each is a
//! thin wrapper of the driver's own function in `api/`, which is what the dispatch table and
//! the by-name lookups hold.
//!
//! Why two functions for one entry point: the loader (libOpenCL.so) exports functions of the
//! same names (clGetExtensionFunctionAddress, clGetExtensionFunctionAddressForPlatform, ...)
//! and is loaded first, so in the process's global symbol scope its definitions come first. A
//! reference inside this library to one of *our* exported symbols (taking its address for the
//! dispatch table goes through the GOT) is bound by the dynamic linker to that first
//! definition: the loader's. The dispatch slot of clGetExtensionFunctionAddressForPlatform then
//! held the loader's function, which passes an unknown name on to the platform's slot, i.e. to
//! itself, forever. The functions in `api/` are not exported (no `#[no_mangle]`: Rust keeps
//! them local to the library), so nothing can interpose them and every reference to them binds
//! here, whatever the link order or the loader. build.rs refuses an exported function under
//! `api/`, so a dispatch slot can never name an exported symbol.
//!
//! Linking with `-Bsymbolic-functions` would also bind our references locally, but only while
//! that flag reaches the final link (a cdylib link argument of this crate, lost when the rlib
//! is linked into another library or by another linker); a symbol that is never exported needs
//! no flag.

use crate::api::platform;
use softcl_runtime::cl::*;
use std::ffi::{c_char, c_void};

/// The loader's way to enumerate our platforms (cl_khr_icd).
#[no_mangle]
pub extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    platform::clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms)
}

#[no_mangle]
pub extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    platform::clGetExtensionFunctionAddress(func_name)
}

#[no_mangle]
pub extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    platform::clGetExtensionFunctionAddressForPlatform(platform, func_name)
}

/// cl_khr_icd 2.0: any entry point by name, for the loader's own dispatch tables.
#[no_mangle]
pub extern "C" fn clIcdGetFunctionAddressForPlatformKHR(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    platform::clIcdGetFunctionAddressForPlatformKHR(platform, func_name)
}

/// cl_khr_icd 2.0: the loader's dispatch data, stored in the platform and every object.
#[no_mangle]
pub extern "C" fn clIcdSetPlatformDispatchDataKHR(platform: cl_platform_id, dispatch_data: *mut c_void) -> cl_int {
    platform::clIcdSetPlatformDispatchDataKHR(platform, dispatch_data)
}
