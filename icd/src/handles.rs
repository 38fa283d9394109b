//! Raw handles <-> runtime objects: validation on every call (non-null, aligned, our dispatch
//! table, the right kind, not released), borrowing without touching the count, and the
//! retain/release that move the application's reference count.

use crate::dispatch;
use softcl_runtime::cl::*;
use softcl_runtime::handle::{ClObject, Header};
use std::sync::Arc;

/// Checks that `h` is a live handle of a `T` and borrows the object for the call.
pub fn borrow<'a, T: ClObject, P>(h: *mut P) -> Result<&'a T, cl_int> {
    let p = h as *const T;
    if !plausible_address(p as usize) || !(p as usize).is_multiple_of(std::mem::align_of::<Header>()) {
        return Err(T::KIND.invalid_error());
    }
    // SAFETY: the application passes either a handle we returned (the address of a live
    // `T` whose first field is a Header) or something else that, per the OpenCL API contract,
    // must at least be a readable object pointer. We only read the header to tell them apart;
    // a pointer to unreadable memory is undefined behaviour in every OpenCL implementation.
    let header = unsafe { &*(p as *const Header) };
    if header.dispatch() != dispatch::table_address() || header.kind() != T::KIND || header.api_ref_count() == 0 {
        return Err(T::KIND.invalid_error());
    }
    // SAFETY: the header identifies a live T created by `new_handle` (the application still
    // holds a reference, so the Arc's strong count is at least one for the call's duration).
    Ok(unsafe { &*p })
}

/// Whether `a` can be the address of an object this process allocated: not in the lowest
/// 64 KiB (Linux never maps them: `vm.mmap_min_addr`; a small integer passed as a handle
/// lands there) and not beyond the 47 bits of user addresses on x86-64 (a negative or
/// otherwise forged value). Reading the header at such an address would crash.
fn plausible_address(a: usize) -> bool {
    const LOWEST: usize = 1 << 16;
    let highest: usize = if cfg!(target_arch = "x86_64") { 1 << 47 } else { usize::MAX };
    (LOWEST..highest).contains(&a)
}

/// Like [`borrow`], returning a new strong reference (for objects stored by other objects).
pub fn arc<T: ClObject, P>(h: *mut P) -> Result<Arc<T>, cl_int> {
    let obj: &T = borrow(h)?;
    let p = obj as *const T;
    // SAFETY: `p` came from `Arc::into_raw`/`Arc::as_ptr` of a live Arc<T> (validated above);
    // incrementing first keeps the count balanced when the new Arc is dropped.
    unsafe {
        Arc::increment_strong_count(p);
        Ok(Arc::from_raw(p))
    }
}

/// clRetain*.
pub fn retain<T: ClObject, P>(h: *mut P) -> Result<(), cl_int> {
    borrow::<T, P>(h)?.header().retain()
}

/// clRelease*: drops the handle's strong reference when the application's count reaches 0.
pub fn release<T: ClObject, P>(h: *mut P) -> Result<(), cl_int> {
    let obj: &T = borrow(h)?;
    if obj.header().release()? {
        // SAFETY: the handle owned one strong reference (given by `new_handle`); the
        // application's count just reached zero, so that reference is dropped exactly once.
        unsafe { drop(Arc::from_raw(obj as *const T)) };
    }
    Ok(())
}

/// Hands a new object to the application.
pub fn new_handle<T: ClObject, P>(obj: Arc<T>) -> *mut P {
    softcl_runtime::handle::new_handle(obj) as *mut P
}

/// The handle of an object created through `new_handle` (for info queries).
pub fn handle_of<T: ClObject, P>(obj: &Arc<T>) -> *mut P {
    obj.handle() as *mut P
}

/// A list of handles as the API passes them (pointer + count). `invalid_list` is the error
/// for an inconsistent pointer/count pair (CL_INVALID_VALUE, or CL_INVALID_EVENT_WAIT_LIST);
/// an invalid element gives `invalid_element` (None = the type's own invalid-handle error).
pub fn list<T: ClObject, P>(
    ptr: *const *mut P,
    count: cl_uint,
    invalid_list: cl_int,
    invalid_element: Option<cl_int>,
) -> Result<Vec<Arc<T>>, cl_int> {
    if ptr.is_null() != (count == 0) {
        return Err(invalid_list);
    }
    // SAFETY: the application's array of that many elements, valid for this call by the API
    // contract (NULL and misalignment are errors).
    let raw = unsafe { crate::ptr::slice(ptr, count as usize) }?;
    raw.iter().map(|&h| arc::<T, P>(h).map_err(|e| invalid_element.unwrap_or(e))).collect()
}

/// An event wait list (num_events_in_wait_list, event_wait_list).
pub fn wait_list(ptr: *const cl_event, count: cl_uint) -> Result<Vec<Arc<softcl_runtime::event::Event>>, cl_int> {
    list(ptr, count, CL_INVALID_EVENT_WAIT_LIST, Some(CL_INVALID_EVENT_WAIT_LIST))
}
