//! The CPU device: the host processor, described from /proc and /sys, running work-groups on
//! a persistent pool of one worker per hardware thread.
//!
//! Choices where implementations differ:
//! - Local memory is reported as CL_GLOBAL, as PoCL and Intel's CPU runtime do: `__local`
//!   buffers are ordinary cached host memory with no dedicated scratchpad, and applications
//!   that test for CL_LOCAL to decide whether tiling through local memory pays off then
//!   correctly learn that on this device it does not. There are 256 KiB of it per
//!   work-group, as Intel's CPU runtime reports (PoCL reports more): each worker gives the
//!   work-group it runs a heap buffer of the size the launch needs, so the limit is not the
//!   size of a scratchpad but what a tile sized to CL_DEVICE_LOCAL_MEM_SIZE should stay within
//!   to be cached near the core (a core's L2 is 256 KiB to 2 MiB). 64 KiB was too little for
//!   tiles a work-group of 4096 asks for (64 x 65 complex doubles are 66,560 bytes). The limit
//!   is enforced (`crate::limits`).
//! - The maximum work-group size is 4096 (Intel's CPU runtime reports 8192): each worker keeps
//!   work-item state for a whole work-group (size x state per work-item across barriers), and
//!   4096 keeps that bounded while leaving groups of hundreds of SIMD packets. A kernel that
//!   keeps so much state that 4096 work-items would exceed `limits::WORK_GROUP_STATE_BYTES`
//!   reports a smaller CL_KERNEL_WORK_GROUP_SIZE.
//! - Preferred and native vector widths are the host's register widths (as PoCL reports
//!   them); half is 0 because it is not supported yet.
//! - fp64 (`cl_khr_fp64`) is the host's: IEEE 754 doubles with denormals, every rounding mode
//!   and FMA (`features::fp64_config`); docs/MATH.md says how each built-in is computed.

pub mod fission;
pub mod host;

use crate::common;
use crate::exec::{Executor, Limits, Schedule};
use crate::features;
use crate::info::*;
use crate::launch::{Launch, LaunchError, LaunchReport};
use crate::observer::Observer;
use crate::pick::{pick_local_size, PickParams};
use crate::Device;
use fission::{AffinityDomain, FissionSupport, Partition, PartitionError, Topology};
use host::SimdBytes;
use softcl_compiler::{KernelInfo, Target};
use std::sync::Arc;
use std::time::Instant;

/// Maximum work-group size of the CPU device (see the module documentation).
pub const CPU_MAX_WORK_GROUP_SIZE: usize = 4096;
/// `__local` memory per work-group (see the module documentation).
pub const CPU_LOCAL_MEM_SIZE: u64 = 256 << 10;
/// Used when /proc/meminfo cannot be read.
const FALLBACK_GLOBAL_MEM: u64 = 1 << 30;
/// Used when /sys has no cache description.
const FALLBACK_CACHE: u64 = 1 << 20;

#[derive(Debug)]
pub struct CpuDevice {
    info: DeviceInfo,
    target: Target,
    simd_width: usize,
    executor: Executor,
    /// The CPUs (compute units) of this device: the process's for the root device, a share of
    /// its parent's for a sub-device (whose workers are pinned to them).
    cpus: Vec<usize>,
    topology: Arc<Topology>,
}

impl CpuDevice {
    /// The host processor as an OpenCL device.
    pub fn new() -> Self {
        let simd = SimdBytes::host();
        let info = host_device_info(&simd);
        let mut target = common::target_for(&info);
        target.vectorizer = common::vectorizer_from_env(simd.float);
        let threads = info.max_compute_units as usize;
        // The compute units are the CPUs the process may run on: the first `threads` of its
        // affinity mask (available_parallelism may count fewer, under a CPU quota), or
        // 0..threads where the mask is unreadable.
        let cpus = match crate::exec::allowed_cpus() {
            Some(allowed) if allowed.len() >= threads => allowed[..threads].to_vec(),
            _ => (0..threads).collect(),
        };
        let topology = Arc::new(Topology::host(&cpus));
        Self { info, target, simd_width: simd.float_lanes(), executor: Executor::new(threads, "cpu"), cpus, topology }
    }

    /// A sub-device of this device on `cpus` (a subset of this device's CPUs).
    fn sub_device(&self, cpus: Vec<usize>) -> Self {
        let mut info = self.info.clone();
        info.max_compute_units = u32::try_from(cpus.len()).unwrap_or(u32::MAX);
        Self {
            info,
            target: self.target.clone(),
            simd_width: self.simd_width,
            executor: Executor::pinned(&cpus, "cpu-sub"),
            cpus,
            topology: Arc::clone(&self.topology),
        }
    }

    /// The CPUs this device's compute units are.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// The SIMD width work-items are packed at (float lanes of the host's vector registers).
    pub fn simd_width(&self) -> usize {
        self.simd_width
    }

    /// [`Device::launch`] with an observer watching the execution.
    pub fn launch_observed(
        &self,
        launch: &Launch<'_>,
        observer: Option<Arc<dyn Observer>>,
    ) -> Result<LaunchReport, LaunchError> {
        let start = Instant::now();
        let limits = Limits {
            max_work_group_size: self.info.max_work_group_size,
            local_mem_size: self.info.local_mem_size,
            printf_buffer_size: self.info.printf_buffer_size,
        };
        common::run_launch(&self.executor, launch, |_| Ok((Schedule::WholeGroup, ())), observer, limits)?;
        let elapsed = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Ok(LaunchReport { device_time_ns: Some(elapsed), report: None })
    }

    fn pick_params(&self) -> PickParams {
        PickParams {
            max_work_group_size: self.info.max_work_group_size,
            max_work_item_sizes: self.info.max_work_item_sizes,
            multiple: self.simd_width,
            target_groups: self.info.max_compute_units as usize,
        }
    }
}

impl Default for CpuDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl Device for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn target(&self) -> &Target {
        &self.target
    }
    fn launch(&self, launch: &Launch<'_>) -> Result<LaunchReport, LaunchError> {
        self.launch_observed(launch, None)
    }
    fn pick_local_size(&self, kernel: &KernelInfo, work_dim: u32, global: [usize; 3], non_uniform: bool) -> [usize; 3] {
        let params = PickParams { max_work_group_size: self.kernel_work_group_size(kernel), ..self.pick_params() };
        pick_local_size(&params, kernel, work_dim, global, non_uniform)
    }
    fn fission(&self) -> Option<FissionSupport> {
        let domains = [
            AffinityDomain::Numa,
            AffinityDomain::Cache(4),
            AffinityDomain::Cache(3),
            AffinityDomain::Cache(2),
            AffinityDomain::Cache(1),
            AffinityDomain::NextPartitionable,
        ];
        Some(FissionSupport {
            max_sub_devices: self.cpus.len(),
            domains: domains.into_iter().filter(|&d| self.topology.splits(d, &self.cpus)).collect(),
        })
    }
    fn create_sub_devices(
        &self,
        scheme: &Partition,
    ) -> Result<(Vec<Arc<dyn Device>>, Option<AffinityDomain>), PartitionError> {
        let parts = fission::partition(&self.cpus, &self.topology, scheme, self.cpus.len())?;
        let devices = parts.cpus.into_iter().map(|cpus| Arc::new(self.sub_device(cpus)) as Arc<dyn Device>).collect();
        Ok((devices, parts.domain))
    }
}

/// CL_DEVICE_PREFERRED_VECTOR_WIDTH_*: 1 for every supported type, as Intel's CPU runtime
/// reports. The vectorizer packs work-items into the host's registers on its own, so a
/// kernel written with scalars gets the full width; applications that size their explicit
/// vectors from these values (OpenCV's T-API from the char width) otherwise pick vectors as
/// wide as a register per work-item, and some of them then leave OpenCL for the host
/// (OpenCV's threshold, absdiff, addWeighted, countNonZero, minMaxLoc and norm on rows whose
/// width is a multiple of 64, at a preferred char width of 64). The native widths stay the
/// registers' (`widths`).
fn preferred_widths(widths: &VectorWidths) -> VectorWidths {
    let one = |w: u32| u32::from(w > 0);
    VectorWidths {
        char: one(widths.char),
        short: one(widths.short),
        int: one(widths.int),
        long: one(widths.long),
        half: one(widths.half),
        float: one(widths.float),
        double: one(widths.double),
    }
}

/// The description of the host processor.
pub fn host_device_info(simd: &SimdBytes) -> DeviceInfo {
    let cpuinfo = host::parse_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default());
    let (vendor, vendor_id) = host::vendor(cpuinfo.vendor_id.as_deref());
    let name = cpuinfo.model_name.clone().unwrap_or_else(host::fallback_name);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The maximum clock: cpufreq's maximum, else the current "cpu MHz", else 0 (unknown).
    let clock = host::cpufreq_max_mhz().or_else(|| cpuinfo.mhz.map(|m| m.round() as u32)).unwrap_or(0);
    let global_mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| host::parse_meminfo_total(&t))
        .unwrap_or(FALLBACK_GLOBAL_MEM);
    let max_alloc = (global_mem / 4).max(128 << 20).min(global_mem);
    let widths = simd.vector_widths();

    let mut info = DeviceInfo {
        name,
        vendor,
        vendor_id,

        max_compute_units: u32::try_from(threads).unwrap_or(u32::MAX),
        max_clock_frequency_mhz: clock,
        max_work_item_sizes: [CPU_MAX_WORK_GROUP_SIZE; 3],
        max_work_group_size: CPU_MAX_WORK_GROUP_SIZE,
        preferred_work_group_size_multiple: simd.float_lanes(),
        preferred_vector_widths: preferred_widths(&widths),
        native_vector_widths: widths,

        global_mem_size: global_mem,
        max_mem_alloc_size: max_alloc,
        global_mem_cacheline_size: 64,
        global_mem_cache_size: host::largest_cache_bytes().unwrap_or(FALLBACK_CACHE),
        max_constant_buffer_size: 128 << 10, // as Intel's CPU runtime; the spec's minimum is 64 KiB
        local_mem_kind: LocalMemKind::Global,
        local_mem_size: CPU_LOCAL_MEM_SIZE,
        // The argument block is copied into a heap buffer: no hardware limit; 4 KiB.
        max_parameter_size: 4096,
        printf_buffer_size: 1 << 20,
        profiling_timer_resolution_ns: 1,
        double_fp_config: Some(features::fp64_config()),
        // A sub-group is the vectorizer's packet: one work-item in a scalar kernel, or the
        // width it chose (4, 8, 16, or `intel_reqd_sub_group_size`'s).
        sub_group_sizes: vec![1, 4, 8, 16],
        max_num_sub_groups: CPU_MAX_WORK_GROUP_SIZE as u32,
        ..common::softcl_device_base(DeviceKind::Cpu)
    };
    // Fine-grain system SVM: a kernel is host code in the application's process, so any
    // pointer the application may dereference (malloc, stack, globals) a kernel may too, and
    // the CPU device has no per-buffer bookkeeping a foreign pointer could upset.
    info.svm.fine_grain_system = true;
    // Images: the sizes of Intel's CPU runtime and PoCL
    // (2D 16384^2, 3D 2048^3, arrays of 2048), one pixel of pitch and base alignment (the
    // host has no sampler hardware with alignment rules).
    info.images = Some(ImageLimits {
        max_read_image_args: 128,
        max_write_image_args: 128,
        max_read_write_image_args: 64,
        image2d_max_width: 16384,
        image2d_max_height: 16384,
        image3d_max_width: 2048,
        image3d_max_height: 2048,
        image3d_max_depth: 2048,
        image_max_buffer_size: 1 << 27,
        image_max_array_size: 2048,
        max_samplers: 16,
        image_pitch_alignment: 1,
        image_base_address_alignment: 1,
    });
    features::derive_feature_lists(&mut info);
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_the_host() {
        let dev = CpuDevice::new();
        let info = dev.info();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string());
        assert!(!info.name.is_empty());
        if let Some(model) = model.filter(|m| !m.is_empty()) {
            assert_eq!(info.name, model);
        }
        assert_eq!(info.kind, DeviceKind::Cpu);
        assert_eq!(info.max_compute_units as usize, std::thread::available_parallelism().map_or(1, |n| n.get()));
        assert!(info.global_mem_size > 0);
        assert!(info.max_mem_alloc_size <= info.global_mem_size);
        assert!(info.max_mem_alloc_size >= (info.global_mem_size / 4).min(128 << 20));
        assert_eq!(info.local_mem_kind, LocalMemKind::Global);
        assert_eq!(info.local_mem_size, 256 << 10);
        assert_eq!(info.max_work_group_size, 4096);
        assert!([4, 8, 16].contains(&info.preferred_work_group_size_multiple));
        assert_eq!(info.preferred_work_group_size_multiple, dev.simd_width());
        // Preferred 1 (the vectorizer packs work-items), native the registers' lanes.
        let p = info.preferred_vector_widths;
        assert_eq!((p.char, p.short, p.int, p.long, p.float, p.double, p.half), (1, 1, 1, 1, 1, 1, 0));
        let n = info.native_vector_widths;
        assert_eq!(n.float, dev.simd_width() as u32);
        assert!(n.char >= n.short && n.short >= n.int && n.int == n.float && n.long == n.double && n.double > 0);
        assert_eq!(info.double_fp_config, Some(features::fp64_config()));
        assert!(info.half_fp_config.is_none());
        assert_eq!(
            info.images.map(|l| (l.image2d_max_width, l.image3d_max_depth, l.max_samplers)),
            Some((16384, 2048, 16))
        );
        assert_eq!(info.version, format!("OpenCL 3.0 SoftCL {}", env!("CARGO_PKG_VERSION")));
        assert_eq!(info.ils.len(), 5);
        assert!(info.global_mem_cache_size >= 1 << 10);
        #[cfg(target_arch = "x86_64")]
        {
            let expected = if std::arch::is_x86_feature_detected!("avx512f") {
                16
            } else if std::arch::is_x86_feature_detected!("avx") {
                8
            } else {
                4
            };
            assert_eq!(dev.simd_width(), expected);
            let vendor_id = cpuinfo.lines().find(|l| l.starts_with("vendor_id")).map(|l| l.contains("GenuineIntel"));
            if vendor_id == Some(true) {
                assert_eq!((info.vendor.as_str(), info.vendor_id), ("Intel(R) Corporation", 0x8086));
            }
        }
    }
}

#[cfg(test)]
mod fission_tests {
    use super::*;

    /// Sub-devices of the CPU device: their share of compute units, partitioned again; the
    /// Gen device has no fission.
    #[test]
    fn sub_devices_get_their_share_of_compute_units() {
        let cpu = CpuDevice::new();
        let n = cpu.cpus().len();
        assert_eq!(n, cpu.info().max_compute_units as usize);
        let support = cpu.fission().unwrap();
        assert_eq!(support.max_sub_devices, n);
        let (subs, domain) = cpu.create_sub_devices(&Partition::Equally(1)).unwrap();
        assert_eq!((subs.len(), domain), (n, None));
        for s in &subs {
            assert_eq!(s.info().max_compute_units, 1);
            assert_eq!(s.fission().unwrap().max_sub_devices, 1);
        }
        // A one-unit sub-device cannot be partitioned further; one of n - 1 >= 2 units can.
        assert_eq!(subs[0].create_sub_devices(&Partition::Equally(1)).err(), Some(PartitionError::Failed));
        if n >= 3 {
            let (most, _) = cpu.create_sub_devices(&Partition::ByCounts(vec![n - 1])).unwrap();
            let (again, _) = most[0].create_sub_devices(&Partition::Equally(1)).unwrap();
            assert_eq!(again.len(), n - 1);
        }
        assert!(crate::GenDevice::from_env().fission().is_none());
    }
}
