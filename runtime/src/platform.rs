//! The SoftCL platform: one per process, owning the devices.

use crate::cl::*;
use crate::device::Device;
use crate::handle::{ClObject, Header, ObjectKind};
use std::sync::{Arc, OnceLock};

pub const PLATFORM_NAME: &str = "SoftCL";
pub const PLATFORM_VENDOR: &str = "SoftCL";
/// Suffix the ICD loader shows for our functions (CL_PLATFORM_ICD_SUFFIX_KHR).
pub const ICD_SUFFIX: &str = "SoftCL";

/// Extensions the platform supports (CL_PLATFORM_EXTENSIONS): those all devices share.
pub const PLATFORM_EXTENSIONS: &[(&str, (u32, u32, u32))] =
    &[("cl_khr_icd", (1, 0, 0)), ("cl_khr_il_program", (1, 0, 0))];

#[repr(C)]
pub struct Platform {
    header: Header,
    pub devices: Vec<Arc<Device>>,
}

impl ClObject for Platform {
    const KIND: ObjectKind = ObjectKind::Platform;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Platform {
    pub fn version() -> String {
        format!("OpenCL 3.0 SoftCL {}", env!("CARGO_PKG_VERSION"))
    }

    /// The devices matching a cl_device_type bit-field (CL_DEVICE_TYPE_DEFAULT = the first).
    pub fn devices_of_type(&self, ty: cl_device_type) -> Vec<Arc<Device>> {
        if ty == CL_DEVICE_TYPE_ALL as u64 {
            return self.devices.clone();
        }
        let mut out: Vec<Arc<Device>> = self.devices.iter().filter(|d| ty & d.cl_type() != 0).cloned().collect();
        if let Some(first) = self.devices.first() {
            if ty & CL_DEVICE_TYPE_DEFAULT as u64 != 0 && !out.iter().any(|d| Arc::ptr_eq(d, first)) {
                out.insert(0, first.clone());
            }
        }
        out
    }
}

/// The process's platform, created on first use with the devices of device-model.
pub fn platform() -> &'static Arc<Platform> {
    static PLATFORM: OnceLock<Arc<Platform>> = OnceLock::new();
    PLATFORM.get_or_init(|| {
        let devices = softcl_device_model::devices().into_iter().map(|m| Arc::new(Device::new(m))).collect();
        Arc::new(Platform { header: Header::new(ObjectKind::Platform), devices })
    })
}
