//! The description of one NDRange launch and what the device reports back.

use softcl_compiler::NativeKernel;

/// One clEnqueueNDRangeKernel, ready to run.
pub struct Launch<'a> {
    pub(crate) kernel: &'a NativeKernel,
    /// The argument block (`kernel.info.arg_block_size` bytes) with buffer addresses and
    /// values filled in; `__local` argument slots are filled by the device per work-group.
    pub(crate) args: &'a [u8],
    /// For each `ArgKind::Local` argument: (argument index, size in bytes).
    pub(crate) local_arg_sizes: &'a [(usize, usize)],
    pub(crate) work_dim: u32,
    pub(crate) global_offset: [usize; 3],
    pub(crate) global_size: [usize; 3],
    /// The enqueued work-group size (never zero; unused dimensions are 1).
    pub(crate) local_size: [usize; 3],
}

impl<'a> Launch<'a> {
    /// A launch of `kernel` with the argument block `args` over the NDRange of `work_dim`
    /// dimensions at `global_offset`, of `global_size` work-items in groups of `local_size`.
    ///
    /// # Safety
    /// The device runs the kernel's native code on `args` (see `NativeKernel::run`): `args`
    /// must be laid out as `kernel.info.args` says, and every buffer address, image and
    /// sampler in it must stay valid, for every access the kernel makes, until the launch
    /// returns.
    pub unsafe fn new(
        kernel: &'a NativeKernel,
        args: &'a [u8],
        local_arg_sizes: &'a [(usize, usize)],
        work_dim: u32,
        global_offset: [usize; 3],
        global_size: [usize; 3],
        local_size: [usize; 3],
    ) -> Self {
        Launch { kernel, args, local_arg_sizes, work_dim, global_offset, global_size, local_size }
    }
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
