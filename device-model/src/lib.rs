//! SoftCL devices. A [`Device`] describes itself ([`DeviceInfo`], the answers to
//! clGetDeviceInfo in Rust form), says what its code is compiled for ([`Device::target`]) and
//! runs NDRanges of compiled kernels ([`Device::launch`]). It knows nothing of handles or the
//! C ABI. Memory is host memory: buffer addresses in argument blocks are host addresses.

mod common;
pub mod cpu;
mod exec;
pub mod features;
pub mod gen;
pub mod info;
pub mod launch;
pub mod limits;
pub mod observer;
pub mod pick;
mod printf;

pub use cpu::fission::{AffinityDomain, FissionSupport, Partition, PartitionError};
pub use cpu::CpuDevice;
pub use gen::{GenConfig, GenDevice};
pub use info::*;
pub use launch::{footprint_of, Launch, LaunchError, LaunchReport};
pub use observer::Observer;

use softcl_compiler::Target;
use std::sync::{Arc, OnceLock};

pub trait Device: Send + Sync + std::fmt::Debug {
    /// The static description of the device.
    fn info(&self) -> &DeviceInfo;
    /// What kernels for this device are compiled for.
    fn target(&self) -> &Target;
    /// Runs a whole NDRange to completion on the device's workers. Returns when every
    /// work-group has finished.
    fn launch(&self, launch: &Launch<'_>) -> Result<LaunchReport, LaunchError>;
    /// The work-group size the device picks when the application passes a NULL local size;
    /// `non_uniform`: the program allows non-uniform work-groups (`pick.rs`).
    fn pick_local_size(
        &self,
        kernel: &softcl_compiler::KernelInfo,
        work_dim: u32,
        global: [usize; 3],
        non_uniform: bool,
    ) -> [usize; 3];
    /// The most work-items of `kernel` one call of its compiled code runs at once (a packet):
    /// a worker's stack holds their private memory, and work-item state is kept per packet
    /// (`limits.rs`). The kernel's vector width W by default.
    fn packet_width(&self, kernel: &softcl_compiler::KernelInfo) -> usize {
        (kernel.simd_width as usize).max(1)
    }
    /// CL_KERNEL_WORK_GROUP_SIZE: the largest work-group, of any shape, a launch of `kernel`
    /// can use on this device (`limits::kernel_work_group_size`).
    fn kernel_work_group_size(&self, kernel: &softcl_compiler::KernelInfo) -> usize {
        limits::kernel_work_group_size(self.info(), kernel, self.packet_width(kernel))
    }
    /// Why `kernel` cannot run on this device whatever the launch (its `__local` variables
    /// exceed the device's local memory, its private memory a worker's stack); None when it
    /// can (`limits::kernel_refusal`).
    fn kernel_refusal(&self, kernel: &softcl_compiler::KernelInfo) -> Option<String> {
        limits::kernel_refusal(self.info(), kernel, self.packet_width(kernel))
    }
    /// The sub-groups of `kernel` in a work-group of `local` work-items: (the largest
    /// sub-group, how many there are). A sub-group is a packet of the kernel's width W; by
    /// default packets of W consecutive work-items of one row, each row starting a new one
    /// (compiler `back::llvm::work_items`).
    fn sub_groups(&self, kernel: &softcl_compiler::KernelInfo, local: [usize; 3]) -> (usize, usize) {
        let w = self.packet_width(kernel);
        (w.min(local[0]), local[0].div_ceil(w) * local[1] * local[2])
    }
    /// How the device can be partitioned (clCreateSubDevices); None: it cannot.
    fn fission(&self) -> Option<cpu::fission::FissionSupport> {
        None
    }
    /// New sub-devices of this device and the affinity domain used (NEXT_PARTITIONABLE
    /// resolved); devices that cannot be partitioned refuse every scheme.
    #[allow(clippy::type_complexity)]
    fn create_sub_devices(
        &self,
        _scheme: &cpu::fission::Partition,
    ) -> Result<(Vec<Arc<dyn Device>>, Option<cpu::fission::AffinityDomain>), cpu::fission::PartitionError> {
        Err(cpu::fission::PartitionError::InvalidValue)
    }
}

/// The devices of the SoftCL platform, in the order clGetDeviceIDs lists them: the host CPU,
/// then the Gen GPU model (gen9-gt2 unless `SOFTCL_GEN_CONFIG` says otherwise).
///
/// The devices are created on the first call and shared by every later one (each owns a
/// worker pool, started by its first launch).
pub fn devices() -> Vec<Arc<dyn Device>> {
    static DEVICES: OnceLock<Vec<Arc<dyn Device>>> = OnceLock::new();
    DEVICES.get_or_init(|| vec![Arc::new(CpuDevice::new()) as Arc<dyn Device>, Arc::new(GenDevice::from_env())]).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_then_gen() {
        let d = devices();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].info().kind, DeviceKind::Cpu);
        assert_eq!(d[1].info().kind, DeviceKind::Gpu);
        // The same device objects every time (one worker pool each).
        assert!(Arc::ptr_eq(&d[0], &devices()[0]));
    }
}
