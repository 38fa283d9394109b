//! What limits a kernel's launches on a device besides the device's maxima: the memory each
//! worker gives a work-group. One place for CL_KERNEL_WORK_GROUP_SIZE and for the reasons a
//! kernel cannot run at all, used by the devices ([`crate::Device::kernel_work_group_size`],
//! [`crate::Device::kernel_refusal`]), the executor (which refuses such a launch rather than
//! overflow a stack) and the runtime (the queries, the build log, clEnqueueNDRangeKernel).
//!
//! A worker runs a work-group with
//! - `__local` memory: the kernel's own `__local` variables and its `__local` arguments, at
//!   most CL_DEVICE_LOCAL_MEM_SIZE (a heap buffer per worker, sized per launch);
//! - work-item state: the values live across barriers, [`KernelInfo::work_item_state_size`]
//!   bytes per work-item, kept per packet, so each row of dimension 0 is padded to a whole
//!   packet ([`KernelInfo::work_item_state_bytes`]); a heap buffer per worker, sized per launch;
//! - private memory on its stack: the rest of a work-item's private variables
//!   ([`KernelInfo::private_mem_size`] counts them all), once per work-item of the packet
//!   running, since a work-group runs one packet at a time between barriers.

use crate::info::DeviceInfo;
use softcl_compiler::KernelInfo;

/// The stack of every thread the driver starts to run kernels: the executor's workers and the
/// queues' workers. Only the pages a kernel touches are ever backed by memory.
pub const KERNEL_THREAD_STACK_BYTES: usize = 16 << 20;

/// The private memory one packet may keep on a kernel thread's stack: the stack less 1 MiB for
/// the frames of the driver and of the generated code (spills, calls of built-ins).
pub const PACKET_PRIVATE_BYTES: u64 = (KERNEL_THREAD_STACK_BYTES - (1 << 20)) as u64;

/// The work-item state one work-group may keep. Each worker holds one work-group's state at a
/// time, so a launch uses at most workers x this much; CL_KERNEL_WORK_GROUP_SIZE is lowered for
/// kernels that keep so much per work-item that the device's maximum work-group would exceed
/// it (64 MiB is 4096 work-items of 16 KiB, or of 1 KiB each in packets of 16 with rows of
/// one work-item).
pub const WORK_GROUP_STATE_BYTES: u64 = 64 << 20;

/// CL_KERNEL_WORK_GROUP_SIZE of `kernel` on `device`, whose launches run packets of at most
/// `packet` work-items: the device's maximum, lowered to the most work-items whose state fits
/// [`WORK_GROUP_STATE_BYTES`] in any shape of work-group (the worst one: rows of one
/// work-item, each padded to a packet), rounded down to whole packets when that leaves one,
/// at least 1. A kernel with a required work-group size
/// gets that size (within the device's maximum) whatever its state: it can run at no other, so
/// a budget below it would only make it unusable; its launches take the memory they need.
pub fn kernel_work_group_size(device: &DeviceInfo, kernel: &KernelInfo, packet: usize) -> usize {
    let max = device.max_work_group_size;
    if let Some(reqd) = kernel.reqd_work_group_size {
        return max.min(reqd.iter().product::<usize>().max(1));
    }
    let per_item = kernel.work_item_state_size.saturating_mul(packet.max(1) as u64);
    if per_item == 0 {
        return max;
    }
    let fits = usize::try_from(WORK_GROUP_STATE_BYTES / per_item).unwrap_or(usize::MAX);
    if fits >= max {
        return max;
    }
    let packet = packet.max(1);
    if fits >= packet {
        fits / packet * packet
    } else {
        fits.max(1)
    }
}

/// Why `kernel` cannot run on `device` at all, whatever the work-group size and arguments: its
/// own `__local` variables need more than CL_DEVICE_LOCAL_MEM_SIZE, or a packet of `packet`
/// work-items needs more private memory than [`PACKET_PRIVATE_BYTES`]. None when it can.
pub fn kernel_refusal(device: &DeviceInfo, kernel: &KernelInfo, packet: usize) -> Option<String> {
    if kernel.static_local_mem_size > device.local_mem_size {
        return Some(format!(
            "its __local variables need {} bytes, more than the device's {} bytes of local memory \
             (CL_DEVICE_LOCAL_MEM_SIZE)",
            kernel.static_local_mem_size, device.local_mem_size
        ));
    }
    private_refusal(kernel, packet)
}

/// Why a packet of `packet` work-items of `kernel` cannot keep its private memory on a kernel
/// thread's stack; None when it can.
pub(crate) fn private_refusal(kernel: &KernelInfo, packet: usize) -> Option<String> {
    let packet = packet.max(1) as u64;
    let bytes = kernel.private_mem_size.saturating_mul(packet);
    (bytes > PACKET_PRIVATE_BYTES).then(|| {
        format!(
            "a packet of {packet} work-item(s) needs {bytes} bytes of private memory ({} each), more than \
             the {PACKET_PRIVATE_BYTES} bytes a worker's stack holds",
            kernel.private_mem_size
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::DeviceKind;

    fn device(max: usize, local: u64) -> DeviceInfo {
        DeviceInfo {
            max_work_group_size: max,
            local_mem_size: local,
            ..crate::common::softcl_device_base(DeviceKind::Cpu)
        }
    }

    #[test]
    fn work_group_size_follows_state_and_required_size() {
        let d = device(4096, 256 << 10);
        let mut k = KernelInfo::default();
        assert_eq!(kernel_work_group_size(&d, &k, 16), 4096, "no state: the device's maximum");
        k.work_item_state_size = 1024;
        assert_eq!(kernel_work_group_size(&d, &k, 16), 4096, "1 KiB each in packets of 16 fits");
        k.work_item_state_size = 16 << 10;
        assert_eq!(kernel_work_group_size(&d, &k, 16), 256);
        assert_eq!(kernel_work_group_size(&d, &k, 1), 4096);
        k.work_item_state_size = 4112;
        assert_eq!(kernel_work_group_size(&d, &k, 16), 1008, "1020 fit: whole packets of 16");
        k.work_item_state_size = 1 << 20;
        assert_eq!(kernel_work_group_size(&d, &k, 16), 4, "less than a packet fits");
        k.work_item_state_size = 1 << 30;
        assert_eq!(kernel_work_group_size(&d, &k, 16), 1, "never below 1");
        k.reqd_work_group_size = Some([8, 4, 2]);
        assert_eq!(kernel_work_group_size(&d, &k, 16), 64, "the required size, whatever the state");
        k.reqd_work_group_size = Some([64, 64, 2]);
        assert_eq!(kernel_work_group_size(&d, &k, 16), 4096, "within the device's maximum");
    }

    #[test]
    fn refusals_name_the_resource() {
        let d = device(4096, 64 << 10);
        let mut k = KernelInfo { static_local_mem_size: 64 << 10, ..KernelInfo::default() };
        assert_eq!(kernel_refusal(&d, &k, 16), None, "exactly the device's local memory");
        k.static_local_mem_size = 66_560;
        assert!(kernel_refusal(&d, &k, 16).is_some_and(|why| why.contains("66560") && why.contains("65536")));
        k.static_local_mem_size = 0;
        k.private_mem_size = PACKET_PRIVATE_BYTES / 16;
        assert_eq!(kernel_refusal(&d, &k, 16), None);
        k.private_mem_size += 1;
        assert!(kernel_refusal(&d, &k, 16).is_some_and(|why| why.contains("private memory")));
        assert_eq!(kernel_refusal(&d, &k, 1), None);
    }
}
