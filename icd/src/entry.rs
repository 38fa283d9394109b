//! The edge between C and Rust for every entry point: API logic is a closure returning
//! `Result<T, cl_int>`; these helpers turn it into the return code or `errcode_ret`, and catch
//! any panic so that none crosses the C boundary (it becomes CL_OUT_OF_HOST_MEMORY, the
//! closest spec error for an internal failure, and is reported on stderr).

use softcl_runtime::cl::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs API logic that returns only a status code.
pub fn code(name: &str, f: impl FnOnce() -> Result<(), cl_int>) -> cl_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS as cl_int,
        Ok(Err(e)) => {
            trace_error(name, e);
            e
        }
        Err(panic) => {
            report_panic(name, &panic);
            CL_OUT_OF_HOST_MEMORY
        }
    }
}

/// Runs API logic that creates an object: the status goes to `errcode_ret` (if not NULL) and
/// the handle (or NULL on failure) is returned.
pub fn object<T>(name: &str, errcode_ret: *mut cl_int, f: impl FnOnce() -> Result<*mut T, cl_int>) -> *mut T {
    let (ptr, err) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(p)) => (p, CL_SUCCESS as cl_int),
        Ok(Err(e)) => {
            trace_error(name, e);
            (std::ptr::null_mut(), e)
        }
        Err(panic) => {
            report_panic(name, &panic);
            (std::ptr::null_mut(), CL_OUT_OF_HOST_MEMORY)
        }
    };
    set_errcode(errcode_ret, err);
    ptr
}

/// Stores `err` through `errcode_ret` when the application passed one.
pub fn set_errcode(errcode_ret: *mut cl_int, err: cl_int) {
    if !errcode_ret.is_null() {
        // SAFETY: a non-null errcode_ret is, by the OpenCL API contract, a valid pointer to a
        // cl_int owned by the caller for the duration of the call.
        unsafe { errcode_ret.write_unaligned(err) };
    }
}

fn report_panic(name: &str, panic: &(dyn std::any::Any + Send)) {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    eprintln!("SoftCL: internal error in {name}: {msg}");
}

fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SOFTCL_TRACE_ERRORS").is_some_and(|v| v != "0"))
}

/// With SOFTCL_TRACE_ERRORS=1 every failing call is reported with its error (Oclgrind-style
/// API misuse reporting).
fn trace_error(name: &str, err: cl_int) {
    if tracing() {
        eprintln!("SoftCL: {name} returned {} ({err})", softcl_runtime::error_name(err));
    }
}

/// Called by the generated functions of dispatch slots not implemented yet.
pub fn report_missing(name: &str) {
    if tracing() {
        eprintln!("SoftCL: {name} is not implemented yet (see docs/API_STATUS.md)");
    }
}
