//! A device as the API sees it: the handle around a device-model device.

use crate::cl::*;
use crate::handle::{ClObject, Header, ObjectKind};
use softcl_device_model::{DeviceInfo, DeviceKind};
use std::sync::Arc;

#[repr(C)]
pub struct Device {
    header: Header,
    pub model: Arc<dyn softcl_device_model::Device>,
}

impl ClObject for Device {
    const KIND: ObjectKind = ObjectKind::Device;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Device {
    pub fn new(model: Arc<dyn softcl_device_model::Device>) -> Self {
        Self { header: Header::new(ObjectKind::Device), model }
    }
    pub fn info(&self) -> &DeviceInfo {
        self.model.info()
    }
    /// CL_DEVICE_TYPE of this device (the first device is also CL_DEVICE_TYPE_DEFAULT).
    pub fn cl_type(&self) -> u64 {
        match self.info().kind {
            DeviceKind::Cpu => CL_DEVICE_TYPE_CPU as u64,
            DeviceKind::Gpu => CL_DEVICE_TYPE_GPU as u64,
        }
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.info().name)
    }
}
