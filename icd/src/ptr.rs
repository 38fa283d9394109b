//! Reading what the application passes by pointer: arrays, strings, property lists. The
//! OpenCL API contract makes the application responsible for the validity of these pointers;
//! these helpers check what can be checked (NULL, lengths) and confine the raw reads.

use softcl_runtime::cl::*;
use std::ffi::{c_char, CStr};

/// `len` elements at `ptr` (NULL allowed only when `len` is 0).
///
/// # Safety
/// A non-NULL `ptr` must point at `len` initialised elements that stay valid and unchanged
/// for the lifetime `'a` the caller picks (for the application's arguments: the call).
pub unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], cl_int> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() || !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: non-null and aligned (checked); the caller promises `len` valid elements for
    // `'a` (see above).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A NUL-terminated string (CL_INVALID_VALUE for NULL or non-UTF-8 text).
///
/// # Safety
/// A non-NULL `ptr` must point at a NUL-terminated string that stays valid and unchanged for
/// the lifetime `'a` the caller picks (for the application's arguments: the call).
pub unsafe fn c_str<'a>(ptr: *const c_char) -> Result<&'a str, cl_int> {
    if ptr.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: non-null (checked); the caller promises a NUL-terminated string valid for `'a`.
    unsafe { CStr::from_ptr(ptr) }.to_str().map_err(|_| CL_INVALID_VALUE)
}

/// A 0-terminated property list (without the terminator); empty for NULL. Property lists are
/// name/value pairs, so reading stops at a 0 in a name position.
pub fn property_list<T: Copy + Default + PartialEq>(ptr: *const T) -> Result<Vec<T>, cl_int> {
    let mut out = Vec::new();
    if ptr.is_null() {
        return Ok(out);
    }
    const MAX_ENTRIES: usize = 4096;
    loop {
        // SAFETY: the list is 0-terminated per the API contract; we read one element at a time
        // up to the terminator (at a name position) or a sanity bound.
        let name = unsafe { ptr.add(out.len()).read_unaligned() };
        if name == T::default() {
            return Ok(out);
        }
        // SAFETY: a non-zero name is followed by its value in a well-formed list.
        let value = unsafe { ptr.add(out.len() + 1).read_unaligned() };
        out.push(name);
        out.push(value);
        if out.len() > MAX_ENTRIES {
            return Err(CL_INVALID_PROPERTY);
        }
    }
}

/// clCreateSubDevices' partition property list: the scheme's name, its values and the
/// element after them (the terminator of a well-formed list), read one element at a time so
/// that nothing past what the scheme needs is touched. Empty for NULL.
pub fn partition_list(ptr: *const isize) -> Result<Vec<isize>, cl_int> {
    use softcl_runtime::cl::{
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, CL_DEVICE_PARTITION_BY_COUNTS, CL_DEVICE_PARTITION_EQUALLY,
    };
    const MAX_ENTRIES: usize = 4096;
    let mut out = Vec::new();
    if ptr.is_null() {
        return Ok(out);
    }
    // SAFETY: the list is 0-terminated per the API contract and each scheme's values precede
    // the terminator; we read one element at a time, only as far as the scheme's layout says.
    let read = |i: usize| unsafe { ptr.add(i).read_unaligned() };
    let name = read(0);
    out.push(name);
    match u32::try_from(name) {
        Ok(CL_DEVICE_PARTITION_EQUALLY | CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN) => {
            out.push(read(1));
            out.push(read(2));
        }
        Ok(CL_DEVICE_PARTITION_BY_COUNTS) => loop {
            let v = read(out.len());
            out.push(v);
            if v == 0 {
                out.push(read(out.len()));
                break;
            }
            if out.len() > MAX_ENTRIES {
                return Err(CL_INVALID_VALUE);
            }
        },
        _ => {}
    }
    Ok(out)
}

/// Writes `v` through an optional out-pointer.
pub fn write_opt<T>(ptr: *mut T, v: T) {
    if !ptr.is_null() {
        // SAFETY: a non-null out-pointer refers to caller-owned storage for one T.
        unsafe { ptr.write_unaligned(v) };
    }
}

/// Writes `values` into an application array of `capacity` elements (may be NULL).
pub fn write_array<T: Copy>(ptr: *mut T, capacity: usize, values: &[T]) {
    if ptr.is_null() {
        return;
    }
    for (i, v) in values.iter().take(capacity).enumerate() {
        // SAFETY: the application's array holds `capacity` elements; i < capacity.
        unsafe { ptr.add(i).write_unaligned(*v) };
    }
}

/// A pointer the application gave us to pass back later (user_data of callbacks, host
/// pointers), carried across threads. The application is responsible for its validity and
/// thread-safety, as the OpenCL specification states for callbacks.
#[derive(Debug, Clone, Copy)]
pub struct AppPtr(pub *mut std::ffi::c_void);
// SAFETY: see the type's documentation: OpenCL callbacks may be called from any thread.
unsafe impl Send for AppPtr {}
unsafe impl Sync for AppPtr {}
