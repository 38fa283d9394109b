//! The description of one NDRange launch and what the device reports back.

use softcl_compiler::NativeKernel;

/// One clEnqueueNDRangeKernel, ready to run.
pub struct Launch<'a> {
    pub kernel: &'a NativeKernel,
    /// The argument block (`kernel.info.arg_block_size` bytes) with buffer addresses and
    /// values filled in; `__local` argument slots are filled by the device per work-group.
    pub args: &'a [u8],
    /// For each `ArgKind::Local` argument: (argument index, size in bytes).
    pub local_arg_sizes: &'a [(usize, usize)],
    pub work_dim: u32,
    pub global_offset: [usize; 3],
    pub global_size: [usize; 3],
    /// The enqueued work-group size (never zero; unused dimensions are 1).
    pub local_size: [usize; 3],
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchReport {
    /// Device time of the launch in nanoseconds: measured wall time on the CPU device, modelled
    /// time on the Gen device.
    pub device_time_ns: Option<u64>,
    /// A human-readable per-kernel report (the Gen model's), if the device makes one.
    pub report: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchError {
    /// The device could not get the memory the launch needs (CL_OUT_OF_RESOURCES).
    OutOfResources(String),
    /// The launch description is inconsistent (a runtime bug or unchecked input).
    Invalid(String),
}
