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
    /// Bytes of the memory the kernel's arguments give it (buffers, images, SVM
    /// allocations, each byte once), if that is all it can touch; `None`: unknown.
    pub(crate) footprint_bytes: Option<u64>,
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
        Launch {
            kernel,
            args,
            local_arg_sizes,
            work_dim,
            global_offset,
            global_size,
            local_size,
            footprint_bytes: None,
        }
    }

    /// This launch with the bytes of the memory its arguments give it (`None`: unknown, as
    /// when the kernel may follow pointers into other memory). The Gen model's memory
    /// hierarchy reads it: lines re-read within it can hit in the L3.
    pub fn with_footprint(mut self, bytes: Option<u64>) -> Self {
        self.footprint_bytes = bytes;
        self
    }
}

/// The bytes of the union of the address ranges `(start, bytes)`: memory given to a kernel
/// through several arguments (a buffer and its sub-buffer, one buffer twice) counts once.
pub fn footprint_of(ranges: impl IntoIterator<Item = (u64, u64)>) -> u64 {
    let mut r: Vec<(u64, u64)> =
        ranges.into_iter().filter(|&(_, n)| n > 0).map(|(a, n)| (a, a.saturating_add(n))).collect();
    r.sort_unstable();
    let (mut total, mut reach) = (0u64, 0u64);
    for (start, end) in r {
        let start = start.max(reach);
        if end > start {
            total += end - start;
            reach = end;
        }
    }
    total
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

#[cfg(test)]
mod tests {
    use super::footprint_of;

    #[test]
    fn a_footprint_counts_each_byte_once() {
        // A buffer, a sub-buffer inside it, the same buffer again, and one apart.
        assert_eq!(footprint_of([(1000, 100), (1050, 20), (1000, 100), (5000, 8)]), 108);
        // Overlapping and touching ranges, an empty one.
        assert_eq!(footprint_of([(0, 64), (32, 64), (96, 4), (200, 0)]), 100);
        assert_eq!(footprint_of([]), 0);
    }
}
