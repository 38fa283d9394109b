//! Platform and device queries.
//!
//! `softcl_*` tests check SoftCL's own identity and the modelled Gen9 GPU's numbers; the
//! others hold for any OpenCL 3.0 platform (they also pass on PoCL).

use softcl_conformance::*;
use std::ptr;

const fn make_version(major: u32, minor: u32, patch: u32) -> cl_version {
    (major << 22) | (minor << 12) | patch
}

#[test]
fn platform_is_found_and_reports_opencl_3() {
    let p = platform();
    assert_eq!(platform_info_string(p, CL_PLATFORM_NAME), platform_name());
    let version = platform_info_string(p, CL_PLATFORM_VERSION);
    assert!(version.starts_with("OpenCL 3.0 "), "version {version:?}");
    assert_eq!(platform_info_string(p, CL_PLATFORM_PROFILE), "FULL_PROFILE");
    assert!(!platform_info_string(p, CL_PLATFORM_VENDOR).is_empty());
    let ext = platform_info_string(p, CL_PLATFORM_EXTENSIONS);
    assert!(ext.split_whitespace().any(|e| e == "cl_khr_icd"), "extensions {ext:?}");
    let numeric: cl_version = platform_info(p, CL_PLATFORM_NUMERIC_VERSION);
    assert_eq!(numeric, make_version(3, 0, 0));
}

#[test]
fn softcl_platform_identity() {
    let p = platform();
    assert_eq!(platform_info_string(p, CL_PLATFORM_NAME), "SoftCL");
    let version = platform_info_string(p, CL_PLATFORM_VERSION);
    assert!(version.starts_with("OpenCL 3.0 SoftCL"), "CL_PLATFORM_VERSION {version:?}");
    let ext_suffix = platform_info_string(p, CL_PLATFORM_ICD_SUFFIX_KHR_VALUE);
    assert!(!ext_suffix.is_empty(), "empty ICD suffix");
}

/// CL_PLATFORM_ICD_SUFFIX_KHR (cl_ext.h, not in cl.h): required by cl_khr_icd.
const CL_PLATFORM_ICD_SUFFIX_KHR_VALUE: cl_uint = 0x0920;

#[test]
fn softcl_has_exactly_one_cpu_and_one_gpu() {
    let p = platform();
    let all = devices_of_type(p, CL_DEVICE_TYPE_ALL);
    assert_eq!(all.len(), 2, "CL_DEVICE_TYPE_ALL");
    let cpu = devices_of_type(p, CL_DEVICE_TYPE_CPU);
    let gpu = devices_of_type(p, CL_DEVICE_TYPE_GPU);
    assert_eq!((cpu.len(), gpu.len()), (1, 1));
    assert!(all.contains(&cpu[0]) && all.contains(&gpu[0]));
    assert_ne!(cpu[0], gpu[0]);
    assert_eq!(devices_of_type(p, CL_DEVICE_TYPE_DEFAULT).len(), 1);
}

#[test]
fn device_ids_queries_and_errors() {
    init_loader();
    let p = platform();
    let all = devices_of_type(p, CL_DEVICE_TYPE_ALL);
    assert!(!all.is_empty());
    let mut n: cl_uint = 0;
    let mut one: cl_device_id = ptr::null_mut();
    // SAFETY: count queries and a one-entry output array.
    unsafe {
        expect_error(
            "clGetDeviceIDs(ACCELERATOR)",
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ACCELERATOR, 0, ptr::null_mut(), &mut n),
            CL_DEVICE_NOT_FOUND,
        );
        expect_error(
            "clGetDeviceIDs(type 1 << 40)",
            clGetDeviceIDs(p, 1 << 40, 0, ptr::null_mut(), &mut n),
            CL_INVALID_DEVICE_TYPE,
        );
        expect_error(
            "clGetDeviceIDs(num_entries 0, devices non-NULL)",
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &mut one, ptr::null_mut()),
            CL_INVALID_VALUE,
        );
        expect_error(
            "clGetDeviceIDs(both outputs NULL)",
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, ptr::null_mut(), ptr::null_mut()),
            CL_INVALID_VALUE,
        );
        cl!(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &mut one, ptr::null_mut()));
    }
    assert_eq!(one, all[0]);
}

#[test]
fn device_common_queries() {
    for_each_device(|d| {
        let id = d.id;
        let ty: cl_device_type = device_info(id, CL_DEVICE_TYPE);
        assert_eq!(ty & d.kind.cl_type(), d.kind.cl_type(), "CL_DEVICE_TYPE {ty:#x}");
        let plat: cl_platform_id = device_info(id, CL_DEVICE_PLATFORM);
        assert_eq!(plat, d.platform);
        assert_eq!(device_info::<cl_bool>(id, CL_DEVICE_AVAILABLE), CL_TRUE);
        assert_eq!(device_info::<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE), CL_TRUE);
        assert_eq!(device_info::<cl_bool>(id, CL_DEVICE_LINKER_AVAILABLE), CL_TRUE);
        assert_eq!(device_info::<cl_bool>(id, CL_DEVICE_ENDIAN_LITTLE), CL_TRUE);
        let version = device_info_string(id, CL_DEVICE_VERSION);
        assert!(version.starts_with("OpenCL 3.0 "), "CL_DEVICE_VERSION {version:?}");
        assert_eq!(device_info::<cl_version>(id, CL_DEVICE_NUMERIC_VERSION), make_version(3, 0, 0));
        let c_version = device_info_string(id, CL_DEVICE_OPENCL_C_VERSION);
        assert!(c_version.starts_with("OpenCL C "), "{c_version:?}");
        assert_eq!(device_info_string(id, CL_DEVICE_PROFILE), "FULL_PROFILE");
        assert!(!device_info_string(id, CL_DEVICE_VENDOR).is_empty());
        assert!(!device_info_string(id, CL_DRIVER_VERSION).is_empty());
        assert_eq!(device_info_string(id, CL_DEVICE_NAME), d.name);

        assert_eq!(device_info::<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS), 3);
        let max_wg: usize = device_info(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        assert!(max_wg >= 1);
        let items: Vec<usize> = device_info_array(id, CL_DEVICE_MAX_WORK_ITEM_SIZES);
        assert_eq!(items.len(), 3);
        assert!(items.iter().all(|&s| s >= 1));
        assert!(device_info::<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS) >= 1);
        assert_eq!(device_info::<cl_uint>(id, CL_DEVICE_ADDRESS_BITS), 64);

        let global: cl_ulong = device_info(id, CL_DEVICE_GLOBAL_MEM_SIZE);
        let max_alloc: cl_ulong = device_info(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
        assert!(global > 0 && max_alloc > 0 && max_alloc <= global);
        assert!(max_alloc >= (128 << 20).min(global / 4), "max alloc {max_alloc}");
        let local: cl_ulong = device_info(id, CL_DEVICE_LOCAL_MEM_SIZE);
        assert!(local >= 32 * 1024, "local mem {local}");
        assert!(device_info::<usize>(id, CL_DEVICE_MAX_PARAMETER_SIZE) >= 1024);
        assert!(device_info::<cl_uint>(id, CL_DEVICE_MAX_CONSTANT_ARGS) >= 8);

        let props: cl_command_queue_properties = device_info(id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
        assert_ne!(props & CL_QUEUE_PROFILING_ENABLE, 0, "profiling not supported");
        assert!(device_info::<usize>(id, CL_DEVICE_PROFILING_TIMER_RESOLUTION) >= 1);
        let ext = device_info_string(id, CL_DEVICE_EXTENSIONS);
        assert!(ext.is_ascii(), "extensions {ext:?}");
    });
}

#[test]
fn cpu_compute_units_are_host_threads() {
    let d = device(DeviceKind::Cpu).expect("CPU device");
    let cus: cl_uint = device_info(d.id, CL_DEVICE_MAX_COMPUTE_UNITS);
    assert_eq!(cus as usize, host_threads());
    let ty: cl_device_type = device_info(d.id, CL_DEVICE_TYPE);
    assert_eq!(ty & CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_CPU);
}

#[test]
fn softcl_gen9_device_numbers() {
    let d = device(DeviceKind::Gpu).expect("GPU device");
    let id = d.id;
    assert!(d.name.contains("SoftCL model"), "GPU name {:?}", d.name);
    assert_eq!(device_info::<cl_device_type>(id, CL_DEVICE_TYPE), CL_DEVICE_TYPE_GPU);
    assert_eq!(device_info::<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS), 24);
    assert_eq!(device_info::<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY), 1150);
    assert_eq!(device_info::<usize>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE), 256);
    assert_eq!(device_info_array::<usize>(id, CL_DEVICE_MAX_WORK_ITEM_SIZES), vec![256, 256, 256]);
    assert_eq!(device_info::<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE), 65536);
    assert_eq!(device_info::<cl_device_local_mem_type>(id, CL_DEVICE_LOCAL_MEM_TYPE), CL_LOCAL);
    assert_eq!(device_info::<cl_uint>(id, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE), 64);
}

#[test]
fn softcl_cpu_device_name() {
    let d = device(DeviceKind::Cpu).expect("CPU device");
    assert_eq!(device_info::<cl_device_type>(d.id, CL_DEVICE_TYPE), CL_DEVICE_TYPE_CPU);
    assert!(!d.name.contains("SoftCL model"), "CPU name {:?}", d.name);
}
