//! Device entry points: enumeration, the clGetDeviceInfo answers (from the device-model's
//! DeviceInfo) and sub-devices (device fission of the CPU device; the Gen device cannot be
//! partitioned).

use crate::api::platform::{cl_version_of, platform_arg};
use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_device_model::{AtomicCapabilities, CacheType, DeviceInfo, FpConfig, LocalMemKind, NameVersion};
use softcl_runtime::cl::*;
use softcl_runtime::device::Device;
use softcl_runtime::handle::RefCount;
use std::ffi::c_void;
use std::sync::Arc;

/// Device types clGetDeviceIDs accepts (besides CL_DEVICE_TYPE_ALL).
const KNOWN_DEVICE_TYPES: u64 = (CL_DEVICE_TYPE_DEFAULT
    | CL_DEVICE_TYPE_CPU
    | CL_DEVICE_TYPE_GPU
    | CL_DEVICE_TYPE_ACCELERATOR
    | CL_DEVICE_TYPE_CUSTOM) as u64;

/// The OpenCL C feature macro that enables program-scope global variables.
const GLOBAL_VARIABLES_FEATURE: &str = "__opencl_c_program_scope_global_variables";
/// The extension behind CL_DEVICE_SUB_GROUP_SIZES_INTEL.
const INTEL_SUBGROUP_SIZE_EXTENSION: &str = "cl_intel_required_subgroup_size";

pub extern "C" fn clGetDeviceIDs(
    platform: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> cl_int {
    entry::code("clGetDeviceIDs", || {
        // "CL_INVALID_PLATFORM if platform is not a valid platform." (NULL selects ours.)
        let platform = platform_arg(platform)?;
        // "CL_INVALID_DEVICE_TYPE if device_type is not a valid value."
        if device_type != CL_DEVICE_TYPE_ALL as u64 && (device_type == 0 || device_type & !KNOWN_DEVICE_TYPES != 0) {
            return Err(CL_INVALID_DEVICE_TYPE);
        }
        // "CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if both
        // num_devices and devices are NULL."
        if (num_entries == 0 && !devices.is_null()) || (num_devices.is_null() && devices.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        let found = platform.devices_of_type(device_type);
        // "CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found."
        if found.is_empty() {
            ptr::write_opt(num_devices, 0);
            return Err(CL_DEVICE_NOT_FOUND);
        }
        let handles: Vec<cl_device_id> = found.iter().map(handles::handle_of).collect();
        ptr::write_array(devices, num_entries as usize, &handles);
        ptr::write_opt(num_devices, handles.len() as cl_uint);
        Ok(())
    })
}

fn fp_config(c: &FpConfig) -> cl_device_fp_config {
    let flags = [
        (c.denorm, CL_FP_DENORM),
        (c.inf_nan, CL_FP_INF_NAN),
        (c.round_to_nearest, CL_FP_ROUND_TO_NEAREST),
        (c.round_to_zero, CL_FP_ROUND_TO_ZERO),
        (c.round_to_inf, CL_FP_ROUND_TO_INF),
        (c.fma, CL_FP_FMA),
        (c.soft_float, CL_FP_SOFT_FLOAT),
        (c.correctly_rounded_divide_sqrt, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT),
    ];
    flags.iter().filter(|(on, _)| *on).fold(0, |acc, (_, bit)| acc | *bit as u64)
}

fn atomic_capabilities(c: &AtomicCapabilities) -> cl_device_atomic_capabilities {
    let flags = [
        (c.order_relaxed, CL_DEVICE_ATOMIC_ORDER_RELAXED),
        (c.order_acq_rel, CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
        (c.order_seq_cst, CL_DEVICE_ATOMIC_ORDER_SEQ_CST),
        (c.scope_work_item, CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM),
        (c.scope_work_group, CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),
        (c.scope_device, CL_DEVICE_ATOMIC_SCOPE_DEVICE),
        (c.scope_all_devices, CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES),
    ];
    flags.iter().filter(|(on, _)| *on).fold(0, |acc, (_, bit)| acc | *bit as u64)
}

/// CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: profiling always, out-of-order when the device says so.
pub(crate) fn host_queue_properties(info: &DeviceInfo) -> cl_command_queue_properties {
    let mut p = CL_QUEUE_PROFILING_ENABLE as u64;
    if info.queue_out_of_order {
        p |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as u64;
    }
    p
}

/// CL_DEVICE_EXECUTION_CAPABILITIES: OpenCL kernels, and on the CPU device native kernels
/// (clEnqueueNativeKernel runs a host function, which only the host CPU device is).
pub(crate) fn execution_capabilities(info: &DeviceInfo) -> cl_device_exec_capabilities {
    let mut caps = CL_EXEC_KERNEL as cl_device_exec_capabilities;
    if info.kind == softcl_device_model::DeviceKind::Cpu {
        caps |= CL_EXEC_NATIVE_KERNEL as cl_device_exec_capabilities;
    }
    caps
}

/// "OpenCL <major>.<minor> ..." -> CL_MAKE_VERSION(major, minor, 0) (3.0 if unreadable).
fn numeric_version(version: &str) -> cl_version {
    let parsed = version.strip_prefix("OpenCL ").and_then(|rest| {
        let number = rest.split_whitespace().next()?;
        let (major, minor) = number.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    });
    let (major, minor) = parsed.unwrap_or((3, 0));
    cl_version_of(major, minor, 0)
}

/// CL_DEVICE_IL_VERSION: "<IL_Prefix>_<Major>.<Minor>" for each IL, space separated.
fn il_version(ils: &[NameVersion]) -> String {
    ils.iter().map(|il| format!("{}_{}.{}", il.name, il.version.0, il.version.1)).collect::<Vec<_>>().join(" ")
}

fn has_extension(info: &DeviceInfo, name: &str) -> bool {
    info.extensions.iter().any(|e| e.name == name)
}

fn device_info(device: &Device, param_name: cl_device_info, out: InfoOut) -> Result<(), cl_int> {
    let info = device.info();
    let images = info.images.unwrap_or_default();
    let preferred = &info.preferred_vector_widths;
    let native = &info.native_vector_widths;
    let global_variables = info.opencl_c_features.iter().any(|f| f.name == GLOBAL_VARIABLES_FEATURE);
    // Program-scope global variables: the 64 KiB the specification requires as a minimum,
    // bounded by the largest allocation.
    let max_global_variable_size: usize =
        if global_variables { (64 * 1024).min(info.max_mem_alloc_size as usize) } else { 0 };
    match param_name {
        // Identity and versions.
        CL_DEVICE_TYPE => out.write(&device.cl_type()),
        CL_DEVICE_VENDOR_ID => out.write(&info.vendor_id),
        CL_DEVICE_NAME => out.write(&info.name),
        CL_DEVICE_VENDOR => out.write(&info.vendor),
        CL_DRIVER_VERSION => out.write(&info.driver_version),
        CL_DEVICE_PROFILE => out.write("FULL_PROFILE"),
        CL_DEVICE_VERSION => out.write(&info.version),
        CL_DEVICE_NUMERIC_VERSION => out.write(&numeric_version(&info.version)),
        CL_DEVICE_OPENCL_C_VERSION => out.write(&info.opencl_c_version),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => out.write(&info.opencl_c_all_versions),
        CL_DEVICE_OPENCL_C_FEATURES => out.write(&info.opencl_c_features),
        CL_DEVICE_EXTENSIONS => {
            out.write(&info.extensions.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(" "))
        }
        CL_DEVICE_EXTENSIONS_WITH_VERSION => out.write(&info.extensions),
        CL_DEVICE_IL_VERSION => out.write(&il_version(&info.ils)),
        CL_DEVICE_ILS_WITH_VERSION => out.write(&info.ils),
        CL_DEVICE_BUILT_IN_KERNELS => out.write(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => out.write(&Vec::<NameVersion>::new()),
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => out.write(&info.latest_conformance_version_passed),
        CL_DEVICE_PLATFORM => out.write(&handles::handle_of::<_, c_void>(crate::platform())),
        CL_DEVICE_AVAILABLE | CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => out.write(&true),
        CL_DEVICE_EXECUTION_CAPABILITIES => out.write(&execution_capabilities(info)),
        CL_DEVICE_REFERENCE_COUNT => out.write(&device.header_ref_count()),

        // Compute and work-groups.
        CL_DEVICE_MAX_COMPUTE_UNITS => out.write(&info.max_compute_units),
        CL_DEVICE_MAX_CLOCK_FREQUENCY => out.write(&info.max_clock_frequency_mhz),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => out.write(&(info.max_work_item_sizes.len() as cl_uint)),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => out.write(&info.max_work_item_sizes),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => out.write(&info.max_work_group_size),
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => out.write(&info.preferred_work_group_size_multiple),
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => out.write(&info.non_uniform_work_group_support),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => out.write(&info.work_group_collective_functions_support),
        CL_DEVICE_MAX_NUM_SUB_GROUPS => out.write(&info.max_num_sub_groups),
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.write(&info.sub_group_independent_forward_progress),
        CL_DEVICE_SUB_GROUP_SIZES_INTEL if has_extension(info, INTEL_SUBGROUP_SIZE_EXTENSION) => {
            out.write(&info.sub_group_sizes)
        }
        // cl_ext_float_atomics (cl_ext.h of this system predates it: its values).
        0x4231..=0x4233 if has_extension(info, "cl_ext_float_atomics") => {
            let (single, double) = softcl_device_model::features::float_atomic_capabilities(info);
            let caps: u64 = match param_name {
                0x4231 => single,
                0x4232 => double,
                _ => 0, // half: no fp16
            };
            out.write(&caps)
        }
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR => out.write(&preferred.char),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT => out.write(&preferred.short),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT => out.write(&preferred.int),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG => out.write(&preferred.long),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF => out.write(&preferred.half),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT => out.write(&preferred.float),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE => out.write(&preferred.double),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => out.write(&native.char),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => out.write(&native.short),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => out.write(&native.int),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => out.write(&native.long),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => out.write(&native.half),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => out.write(&native.float),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => out.write(&native.double),

        // Floating point; 0 when a type is not supported.
        CL_DEVICE_SINGLE_FP_CONFIG => out.write(&fp_config(&info.single_fp_config)),
        CL_DEVICE_DOUBLE_FP_CONFIG => out.write(&info.double_fp_config.as_ref().map_or(0, fp_config)),
        CL_DEVICE_HALF_FP_CONFIG => out.write(&info.half_fp_config.as_ref().map_or(0, fp_config)),

        // Memory.
        CL_DEVICE_ADDRESS_BITS => out.write(&info.address_bits),
        CL_DEVICE_GLOBAL_MEM_SIZE => out.write(&info.global_mem_size),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => out.write(&info.max_mem_alloc_size),
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => out.write(&match info.global_mem_cache_type {
            CacheType::None => CL_NONE,
            CacheType::ReadOnly => CL_READ_ONLY_CACHE,
            CacheType::ReadWrite => CL_READ_WRITE_CACHE,
        }),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => out.write(&info.global_mem_cacheline_size),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => out.write(&info.global_mem_cache_size),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => out.write(&info.max_constant_buffer_size),
        CL_DEVICE_MAX_CONSTANT_ARGS => out.write(&info.max_constant_args),
        CL_DEVICE_LOCAL_MEM_TYPE => out.write(&match info.local_mem_kind {
            LocalMemKind::Local => CL_LOCAL,
            LocalMemKind::Global => CL_GLOBAL,
        }),
        CL_DEVICE_LOCAL_MEM_SIZE => out.write(&info.local_mem_size),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => out.write(&info.mem_base_addr_align_bits),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => out.write(&info.min_data_type_align_size),
        CL_DEVICE_MAX_PARAMETER_SIZE => out.write(&info.max_parameter_size),
        CL_DEVICE_HOST_UNIFIED_MEMORY => out.write(&info.host_unified_memory),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => out.write(&info.error_correction_support),
        CL_DEVICE_ENDIAN_LITTLE => out.write(&info.endian_little),
        CL_DEVICE_PRINTF_BUFFER_SIZE => out.write(&info.printf_buffer_size),
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE => out.write(&max_global_variable_size),
        CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => out.write(&max_global_variable_size),
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => out.write(&info.generic_address_space_support),
        // 0: aligned to the natural size of the type.
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => out.write(&0u32),
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES => out.write(&atomic_capabilities(&info.atomic_memory_capabilities)),
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => out.write(&atomic_capabilities(&info.atomic_fence_capabilities)),
        CL_DEVICE_SVM_CAPABILITIES => out.write(&softcl_runtime::svm::capability_bits(&info.svm)),

        // Images (all zero / CL_FALSE while images are not supported).
        CL_DEVICE_IMAGE_SUPPORT => out.write(&info.images.is_some()),
        CL_DEVICE_MAX_READ_IMAGE_ARGS => out.write(&images.max_read_image_args),
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS => out.write(&images.max_write_image_args),
        CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => out.write(&images.max_read_write_image_args),
        CL_DEVICE_IMAGE2D_MAX_WIDTH => out.write(&images.image2d_max_width),
        CL_DEVICE_IMAGE2D_MAX_HEIGHT => out.write(&images.image2d_max_height),
        CL_DEVICE_IMAGE3D_MAX_WIDTH => out.write(&images.image3d_max_width),
        CL_DEVICE_IMAGE3D_MAX_HEIGHT => out.write(&images.image3d_max_height),
        CL_DEVICE_IMAGE3D_MAX_DEPTH => out.write(&images.image3d_max_depth),
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => out.write(&images.image_max_buffer_size),
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => out.write(&images.image_max_array_size),
        CL_DEVICE_MAX_SAMPLERS => out.write(&images.max_samplers),
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT => out.write(&images.image_pitch_alignment),
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => out.write(&images.image_base_address_alignment),

        // Queues: host queues only (no device-side enqueue).
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => out.write(&host_queue_properties(info)),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => out.write(&(0 as cl_command_queue_properties)),
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE | CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE => out.write(&0u32),
        CL_DEVICE_MAX_ON_DEVICE_QUEUES | CL_DEVICE_MAX_ON_DEVICE_EVENTS => out.write(&0u32),
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => out.write(&(0 as cl_device_device_enqueue_capabilities)),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => out.write(&info.profiling_timer_resolution_ns),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => out.write(&true),

        // Pipes: not supported.
        CL_DEVICE_PIPE_SUPPORT => out.write(&false),
        CL_DEVICE_MAX_PIPE_ARGS | CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS | CL_DEVICE_PIPE_MAX_PACKET_SIZE => {
            out.write(&0u32)
        }

        // Partitioning (the CPU device and its sub-devices; the Gen device cannot be).
        CL_DEVICE_PARENT_DEVICE => out.write(
            &device.parent.as_ref().map_or(std::ptr::null_mut::<c_void>(), handles::handle_of::<Device, c_void>),
        ),
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => {
            out.write(&device.model.fission().map_or(0, |f| u32::try_from(f.max_sub_devices).unwrap_or(u32::MAX)))
        }
        CL_DEVICE_PARTITION_PROPERTIES => out.write(&match device.model.fission() {
            // "If the device cannot be partitioned ... a value of 0 will be returned."
            None => vec![0 as cl_device_partition_property],
            Some(f) => {
                let mut p = vec![CL_DEVICE_PARTITION_EQUALLY as isize, CL_DEVICE_PARTITION_BY_COUNTS as isize];
                if !f.domains.is_empty() {
                    p.push(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN as isize);
                }
                p
            }
        }),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => out.write(
            &device
                .model
                .fission()
                .map_or(0, |f| f.domains.iter().fold(0, |acc, &d| acc | softcl_runtime::device::affinity_bits(d))),
        ),
        // A root-level device: "the implementation may either return a param_value_size_ret
        // of 0 i.e. there is no partition type associated with device ...".
        CL_DEVICE_PARTITION_TYPE => out.write(&device.partition_type),

        // "CL_INVALID_VALUE if param_name is not one of the supported values".
        _ => Err(CL_INVALID_VALUE),
    }
}

pub extern "C" fn clGetDeviceInfo(
    device: cl_device_id,
    param_name: cl_device_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetDeviceInfo", || {
        let device: &Device = handles::borrow(device)?;
        device_info(device, param_name, InfoOut::new(param_value_size, param_value, param_value_size_ret))
    })
}

pub extern "C" fn clCreateSubDevices(
    in_device: cl_device_id,
    properties: *const cl_device_partition_property,
    num_devices: cl_uint,
    out_devices: *mut cl_device_id,
    num_devices_ret: *mut cl_uint,
) -> cl_int {
    entry::code("clCreateSubDevices", || {
        // "CL_INVALID_DEVICE if in_device is not a valid device."
        let device: Arc<Device> = handles::arc(in_device)?;
        // "CL_INVALID_VALUE if values specified in properties are not valid or if values
        // specified in properties are valid but not supported by the device" (a NULL list is
        // not valid; the Gen device supports no scheme).
        let props = ptr::partition_list(properties)?;
        let subs = device.create_sub_devices(&props)?;
        // "CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the
        // number of sub-devices created by the partition scheme."
        if !out_devices.is_null() && (num_devices as usize) < subs.len() {
            return Err(CL_INVALID_VALUE);
        }
        ptr::write_opt(num_devices_ret, subs.len() as cl_uint);
        if !out_devices.is_null() {
            let handles: Vec<cl_device_id> = subs.into_iter().map(handles::new_handle).collect();
            ptr::write_array(out_devices, num_devices as usize, &handles);
        }
        Ok(())
    })
}

/// Sub-devices are reference counted; for root devices retain and release validate the
/// handle and change nothing.
pub extern "C" fn clRetainDevice(device: cl_device_id) -> cl_int {
    entry::code("clRetainDevice", || {
        if handles::borrow::<Device, _>(device)?.is_sub_device() {
            handles::retain::<Device, _>(device)
        } else {
            Ok(())
        }
    })
}

pub extern "C" fn clReleaseDevice(device: cl_device_id) -> cl_int {
    entry::code("clReleaseDevice", || {
        if handles::borrow::<Device, _>(device)?.is_sub_device() {
            handles::release::<Device, _>(device)
        } else {
            Ok(())
        }
    })
}
