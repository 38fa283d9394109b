//! Contexts: a set of devices of the platform, their properties and callbacks.

use crate::cl::*;
use crate::device::Device;
use crate::handle::{ClObject, Header, ObjectKind};
use crate::svm::SvmAllocations;
use parking_lot::Mutex;
use std::sync::Arc;

/// An application callback wrapped by the icd crate (which owns the C function pointer).
pub type ErrorCallback = Box<dyn Fn(&str) + Send + Sync>;
/// Runs once when the object is destroyed.
pub type DestructorCallback = Box<dyn FnOnce() + Send>;

#[repr(C)]
pub struct Context {
    header: Header,
    pub devices: Vec<Arc<Device>>,
    /// The properties as given (without the terminating 0), for CL_CONTEXT_PROPERTIES.
    pub properties: Vec<cl_context_properties>,
    notify: Option<ErrorCallback>,
    destructor_callbacks: Mutex<Vec<DestructorCallback>>,
    /// clSVMAlloc's allocations in this context (runtime/src/svm.rs); those the application
    /// never freed go with the context.
    pub svm: SvmAllocations,
}

impl ClObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Context {
    /// Creates a context. `properties` is the application's list without the terminating 0.
    pub fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<ErrorCallback>,
    ) -> Result<Arc<Self>, cl_int> {
        if devices.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_PROPERTY if context property name in properties is not a supported
        // property name, if the value specified for a supported property name is not valid, or
        // if the same property name is specified more than once."
        let platform = crate::platform::platform();
        let mut seen = Vec::new();
        for pair in properties.chunks(2) {
            let [name, value] = pair else { return Err(CL_INVALID_PROPERTY) };
            if seen.contains(name) {
                return Err(CL_INVALID_PROPERTY);
            }
            seen.push(*name);
            match *name as u32 {
                CL_CONTEXT_PLATFORM => {
                    if *value as usize != platform.handle() as usize {
                        return Err(CL_INVALID_PLATFORM);
                    }
                }
                // "CL_CONTEXT_INTEROP_USER_SYNC | cl_bool | ... The default value is CL_FALSE."
                CL_CONTEXT_INTEROP_USER_SYNC => {
                    if *value != CL_TRUE as cl_context_properties && *value != CL_FALSE as cl_context_properties {
                        return Err(CL_INVALID_PROPERTY);
                    }
                }
                _ => return Err(CL_INVALID_PROPERTY),
            }
        }
        crate::program_cache::warm_up(&devices.iter().map(|d| d.model.target()).collect::<Vec<_>>());
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Context),
            devices,
            properties,
            notify,
            destructor_callbacks: Mutex::new(Vec::new()),
            svm: SvmAllocations::default(),
        }))
    }

    pub fn has_device(&self, device: &Device) -> bool {
        self.devices.iter().any(|d| std::ptr::eq(d.as_ref(), device))
    }

    /// Reports an error to the application's pfn_notify, if it gave one.
    pub fn notify(&self, message: &str) {
        if let Some(f) = &self.notify {
            f(message);
        }
    }

    /// clSetContextDestructorCallback: callbacks run in reverse order of registration.
    pub fn add_destructor_callback(&self, cb: DestructorCallback) {
        self.destructor_callbacks.lock().push(cb);
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let callbacks = std::mem::take(&mut *self.destructor_callbacks.lock());
        for cb in callbacks.into_iter().rev() {
            cb();
        }
    }
}
