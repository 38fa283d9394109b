//! The header every object an application holds a handle to starts with (cl_khr_icd), and the
//! reference counting the API exposes.
//!
//! A handle is the address of an `Arc`-owned object whose first field is a [`Header`]:
//! {dispatch table, dispatch data (cl_khr_icd 2.0), kind tag, API reference count}. The API
//! reference count is what clRetain*/clRelease* move and CL_*_REFERENCE_COUNT reports; the
//! handle owns one strong `Arc` reference while it is above zero. Objects that refer to each
//! other internally (a kernel to its program, an event to its queue) hold `Arc` clones, so an
//! object lives on after its last clRelease while something still uses it.
//!
//! Turning a raw handle back into a reference needs `unsafe` and lives in the icd crate.

use crate::cl::{cl_int, cl_uint};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Arc;

/// Which OpenCL object a header belongs to.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Platform = 0x5343_0001,
    Device = 0x5343_0002,
    Context = 0x5343_0003,
    Queue = 0x5343_0004,
    Mem = 0x5343_0005,
    Sampler = 0x5343_0006,
    Program = 0x5343_0007,
    Kernel = 0x5343_0008,
    Event = 0x5343_0009,
}

impl ObjectKind {
    /// The error code for a handle that is not a valid object of this kind.
    pub fn invalid_error(self) -> cl_int {
        use crate::cl::*;
        match self {
            ObjectKind::Platform => CL_INVALID_PLATFORM,
            ObjectKind::Device => CL_INVALID_DEVICE,
            ObjectKind::Context => CL_INVALID_CONTEXT,
            ObjectKind::Queue => CL_INVALID_COMMAND_QUEUE,
            ObjectKind::Mem => CL_INVALID_MEM_OBJECT,
            ObjectKind::Sampler => CL_INVALID_SAMPLER,
            ObjectKind::Program => CL_INVALID_PROGRAM,
            ObjectKind::Kernel => CL_INVALID_KERNEL,
            ObjectKind::Event => CL_INVALID_EVENT,
        }
    }
}

static DISPATCH_TABLE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static DISPATCH_DATA: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the dispatch table every new object's header points at (called by the icd crate
/// before the platform is first handed out).
pub fn install_dispatch_table(table: *const c_void) {
    DISPATCH_TABLE.store(table as *mut c_void, Ordering::Release);
}

/// The dispatch table installed by the icd crate.
pub fn dispatch_table() -> *const c_void {
    DISPATCH_TABLE.load(Ordering::Acquire)
}

/// cl_khr_icd 2.0: the loader's dispatch data for the platform; copied into every object
/// created afterwards (objects inherit their platform's dispatch data).
pub fn set_platform_dispatch_data(data: *mut c_void) {
    DISPATCH_DATA.store(data, Ordering::Release);
}

#[repr(C)]
#[derive(Debug)]
pub struct Header {
    dispatch: *const c_void,
    dispatch_data: AtomicPtr<c_void>,
    kind: ObjectKind,
    api_refs: AtomicU32,
}

// SAFETY: the raw pointers in the header are addresses handed to the ICD loader (our dispatch
// table, the loader's dispatch data); Header never dereferences them, so sending and sharing
// it between threads is sound.
unsafe impl Send for Header {}
unsafe impl Sync for Header {}

impl Header {
    pub fn new(kind: ObjectKind) -> Self {
        Self {
            dispatch: dispatch_table(),
            dispatch_data: AtomicPtr::new(DISPATCH_DATA.load(Ordering::Acquire)),
            kind,
            api_refs: AtomicU32::new(1),
        }
    }
    pub fn dispatch(&self) -> *const c_void {
        self.dispatch
    }
    pub fn kind(&self) -> ObjectKind {
        self.kind
    }
    /// The count CL_*_REFERENCE_COUNT reports.
    pub fn api_ref_count(&self) -> u32 {
        self.api_refs.load(Ordering::Acquire)
    }
    pub fn set_dispatch_data(&self, data: *mut c_void) {
        self.dispatch_data.store(data, Ordering::Release);
    }
    /// clRetain*: fails on an object already released by the application.
    pub fn retain(&self) -> Result<(), cl_int> {
        let mut n = self.api_refs.load(Ordering::Acquire);
        loop {
            if n == 0 {
                return Err(self.kind.invalid_error());
            }
            match self.api_refs.compare_exchange_weak(n, n + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(cur) => n = cur,
            }
        }
    }
    /// clRelease*: returns true when this was the application's last reference, in which case
    /// the caller must drop the handle's strong reference.
    pub fn release(&self) -> Result<bool, cl_int> {
        let mut n = self.api_refs.load(Ordering::Acquire);
        loop {
            if n == 0 {
                return Err(self.kind.invalid_error());
            }
            match self.api_refs.compare_exchange_weak(n, n - 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(n == 1),
                Err(cur) => n = cur,
            }
        }
    }
}

/// An object an application can hold a handle to. Implementors are `#[repr(C)]` with the
/// [`Header`] as their first field, so that a handle (the object's address) points at it.
pub trait ClObject: Send + Sync + Sized + 'static {
    const KIND: ObjectKind;
    fn header(&self) -> &Header;

    /// The handle of an object created through [`new_handle`].
    fn handle(self: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(self) as *mut c_void
    }
}

/// Gives a new object to the application: the returned handle owns one strong reference.
pub fn new_handle<T: ClObject>(obj: Arc<T>) -> *mut c_void {
    debug_assert_eq!(obj.header().api_ref_count(), 1);
    Arc::into_raw(obj) as *mut c_void
}

/// The application's reference count of any object (CL_*_REFERENCE_COUNT).
pub trait RefCount {
    fn header_ref_count(&self) -> cl_uint;
}

impl<T: ClObject> RefCount for T {
    fn header_ref_count(&self) -> cl_uint {
        self.header().api_ref_count()
    }
}
