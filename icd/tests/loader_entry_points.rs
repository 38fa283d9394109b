//! The loader's entry points: platform enumeration and function lookup by name.

use softcl::api::platform::*;
use softcl_runtime::cl::*;
use std::ffi::CString;

fn our_platform() -> cl_platform_id {
    let mut p: cl_platform_id = std::ptr::null_mut();
    let mut n = 0;
    assert_eq!(clIcdGetPlatformIDsKHR(1, &mut p, &mut n), CL_SUCCESS as cl_int);
    assert_eq!(n, 1);
    assert!(!p.is_null());
    p
}

#[test]
fn platform_enumeration_checks_its_arguments() {
    let mut p: cl_platform_id = std::ptr::null_mut();
    assert_eq!(clIcdGetPlatformIDsKHR(0, &mut p, std::ptr::null_mut()), CL_INVALID_VALUE);
    assert_eq!(clIcdGetPlatformIDsKHR(1, std::ptr::null_mut(), std::ptr::null_mut()), CL_INVALID_VALUE);
    assert_eq!(our_platform(), our_platform(), "one platform, one handle");
}

#[test]
fn extension_lookup_returns_implemented_functions_only() {
    let name = |s: &str| CString::new(s).unwrap();
    // ocl-icd decides a library is an ICD by asking for clGetPlatformInfo this way.
    let info = clGetExtensionFunctionAddress(name("clGetPlatformInfo").as_ptr());
    assert_eq!(info, clGetPlatformInfo as *const () as *mut std::ffi::c_void);
    assert!(!clGetExtensionFunctionAddress(name("clIcdGetPlatformIDsKHR").as_ptr()).is_null());
    assert!(clGetExtensionFunctionAddress(name("clNoSuchFunction").as_ptr()).is_null());
    assert!(clGetExtensionFunctionAddress(std::ptr::null()).is_null());
    // A slot that is not implemented is not offered as an extension function.
    let missing = softcl::dispatch::ENTRY_POINTS.iter().find(|e| !e.implemented).expect("some slot is still missing");
    assert!(clGetExtensionFunctionAddress(name(missing.name).as_ptr()).is_null());
    // ...but cl_khr_icd 2.0's lookup returns every slot, so the loader's table has no holes.
    let p = our_platform();
    assert!(!clIcdGetFunctionAddressForPlatformKHR(p, name(missing.name).as_ptr()).is_null());
    assert!(!clGetExtensionFunctionAddressForPlatform(p, name("clGetPlatformInfo").as_ptr()).is_null());
    // A platform that is not ours yields NULL.
    let bogus = 8usize as cl_platform_id;
    assert!(clGetExtensionFunctionAddressForPlatform(bogus, name("clGetPlatformInfo").as_ptr()).is_null());
    assert!(clIcdGetFunctionAddressForPlatformKHR(bogus, name("clGetPlatformInfo").as_ptr()).is_null());
}

#[test]
fn dispatch_data_is_copied_into_new_objects() {
    let p = our_platform();
    let data = 0x1234usize as *mut std::ffi::c_void;
    assert_eq!(clIcdSetPlatformDispatchDataKHR(p, data), CL_SUCCESS as cl_int);
    // The second word of every handle is the dispatch data (cl_khr_icd 2.0 object layout).
    // SAFETY: a platform handle points at an object starting with {dispatch, dispatch data}.
    let word = unsafe { (p as *const usize).add(1).read() };
    assert_eq!(word, 0x1234);
    assert_eq!(clIcdSetPlatformDispatchDataKHR(std::ptr::null_mut(), data), CL_INVALID_PLATFORM);
}
