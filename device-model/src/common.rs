//! Description values both devices share, and the launch path common to both.

use crate::exec::{Executor, Job, Limits, NdRange, Schedule};
use crate::features;
use crate::info::{AtomicCapabilities, DeviceInfo, FpConfig, NameVersion};
use crate::launch::{Launch, LaunchError};
use crate::observer::Observer;
use softcl_compiler::Target;
use std::sync::Arc;

/// CL_DEVICE_VERSION.
pub(crate) fn device_version() -> String {
    format!("OpenCL 3.0 SoftCL {}", env!("CARGO_PKG_VERSION"))
}

/// CL_DEVICE_OPENCL_C_VERSION: 1.2, the highest pre-3.0 version, as OpenCL 3.0 devices report.
pub(crate) fn opencl_c_version() -> String {
    "OpenCL C 1.2 SoftCL".into()
}

pub(crate) fn opencl_c_all_versions() -> Vec<NameVersion> {
    [(1, 0), (1, 1), (1, 2), (3, 0)]
        .iter()
        .map(|&(major, minor)| NameVersion::new("OpenCL C", major, minor, 0))
        .collect()
}

/// "SPIR-V" 1.0 to 1.`max_minor`.
pub(crate) fn spirv_ils(max_minor: u32) -> Vec<NameVersion> {
    (0..=max_minor).map(|minor| NameVersion::new("SPIR-V", 1, minor, 0)).collect()
}

/// No conformance version passed yet.
pub(crate) const NO_CONFORMANCE: &str = "v0000-01-01-00";

/// Single precision as computed on the host: IEEE 754 with denormals, every rounding mode and
/// fused multiply-add. Correctly rounded divide and sqrt is not claimed: it is an option of the
/// compiler (-cl-fp32-correctly-rounded-divide-sqrt), not a property of the executor.
pub(crate) fn fp32_config() -> FpConfig {
    FpConfig {
        denorm: true,
        inf_nan: true,
        round_to_nearest: true,
        round_to_zero: true,
        round_to_inf: true,
        fma: true,
        correctly_rounded_divide_sqrt: false,
        soft_float: false,
    }
}

/// CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: the OpenCL 3.0 mandated minimum, relaxed order at
/// work-group scope. Device scope, acq_rel and seq_cst are withheld until the compiler
/// implements them; each flag switches on its `__opencl_c_atomic_*` feature (see
/// [`features`]), and the conformance suite checks that flags and macros agree.
pub(crate) fn atomic_memory_capabilities() -> AtomicCapabilities {
    AtomicCapabilities { order_relaxed: true, scope_work_group: true, ..AtomicCapabilities::default() }
}

/// CL_DEVICE_ATOMIC_FENCE_CAPABILITIES: the OpenCL 3.0 mandated minimum, relaxed and acq_rel
/// at work-group scope (what `barrier` / `atomic_work_item_fence` need).
pub(crate) fn atomic_fence_capabilities() -> AtomicCapabilities {
    AtomicCapabilities {
        order_relaxed: true,
        order_acq_rel: true,
        scope_work_group: true,
        ..AtomicCapabilities::default()
    }
}

/// The host target with every optional feature `info` does not advertise turned off.
pub(crate) fn target_for(info: &DeviceInfo) -> Target {
    Target { disabled_features: features::disabled_features(info), ..Target::default() }
}

/// Checks `launch`, builds the job (with the schedule `schedule` picks for its NDRange) and
/// runs it on `executor`, calling the kernel-level observer hooks around it. Returns the
/// NDRange that ran and the schedule used.
pub(crate) fn run_launch<T>(
    executor: &Executor,
    launch: &Launch<'_>,
    schedule: impl FnOnce(&NdRange) -> Result<(Schedule, T), LaunchError>,
    observer: Option<Arc<dyn Observer>>,
    limits: Limits,
) -> Result<(NdRange, T), LaunchError> {
    let range = NdRange::new(launch.work_dim, launch.global_offset, launch.global_size, launch.local_size)?;
    let (schedule, extra) = schedule(&range)?;
    let name = launch.kernel.info.name.as_str();
    let job = Job::new(
        Arc::new(launch.kernel.clone()),
        launch.args,
        launch.local_arg_sizes,
        range,
        schedule,
        observer.clone(),
        limits,
    )?;
    if let Some(o) = &observer {
        o.kernel_begin(name, range.global, range.local);
    }
    let result = executor.execute(job);
    if let Some(o) = &observer {
        o.kernel_end(name);
    }
    result.map(|()| (range, extra))
}
