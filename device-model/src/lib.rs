//! SoftCL devices. A [`Device`] describes itself ([`DeviceInfo`], the answers to
//! clGetDeviceInfo in Rust form), says what its code is compiled for ([`Device::target`]) and
//! runs NDRanges of compiled kernels ([`Device::launch`]). It knows nothing of handles or the
//! C ABI. Memory is host memory: buffer addresses in argument blocks are host addresses.

pub mod cpu;
pub mod gen;
pub mod info;
pub mod launch;
pub mod observer;

pub use info::*;
pub use launch::{Launch, LaunchError, LaunchReport};

use softcl_compiler::Target;
use std::sync::Arc;

pub trait Device: Send + Sync + std::fmt::Debug {
    /// The static description of the device.
    fn info(&self) -> &DeviceInfo;
    /// What kernels for this device are compiled for.
    fn target(&self) -> &Target;
    /// Runs a whole NDRange to completion on the device's workers. Returns when every
    /// work-group has finished.
    fn launch(&self, launch: &Launch<'_>) -> Result<LaunchReport, LaunchError>;
    /// The work-group size the device picks when the application passes a NULL local size.
    fn pick_local_size(&self, kernel: &softcl_compiler::KernelInfo, work_dim: u32, global: [usize; 3]) -> [usize; 3];
}

/// The devices of the SoftCL platform, in the order clGetDeviceIDs lists them.
pub fn devices() -> Vec<Arc<dyn Device>> {
    // The CPU device and the Gen9 GT2 model are added here by cpu/ and gen/.
    Vec::new()
}
