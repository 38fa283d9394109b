//! Device, command-queue and event entry points called directly through the crate (the same
//! functions the dispatch table points at).

#![allow(non_snake_case)]

use softcl::api::context::{clCreateContext, clReleaseContext};
use softcl::api::device::*;
use softcl::api::event::*;
use softcl::api::queue::*;
use softcl_runtime::cl::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const SUCCESS: cl_int = CL_SUCCESS as cl_int;
const COMPLETE: cl_int = CL_COMPLETE as cl_int;

fn all_devices() -> Vec<cl_device_id> {
    let mut n = 0;
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL as u64, 0, null_mut(), &mut n), SUCCESS);
    let mut devices = vec![null_mut(); n as usize];
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL as u64, n, devices.as_mut_ptr(), null_mut()), SUCCESS);
    devices
}

fn info_bytes(device: cl_device_id, param: cl_device_info) -> Result<Vec<u8>, cl_int> {
    let mut size = usize::MAX;
    let err = clGetDeviceInfo(device, param, 0, null_mut(), &mut size);
    if err != SUCCESS {
        return Err(err);
    }
    let mut buf = vec![0xABu8; size];
    let mut size2 = 0;
    let err = clGetDeviceInfo(device, param, size, buf.as_mut_ptr() as *mut c_void, &mut size2);
    assert_eq!((err, size2), (SUCCESS, size), "param {param:#x}");
    Ok(buf)
}

fn info_u32(device: cl_device_id, param: cl_device_info) -> u32 {
    u32::from_ne_bytes(info_bytes(device, param).unwrap().try_into().unwrap())
}

fn info_u64(device: cl_device_id, param: cl_device_info) -> u64 {
    u64::from_ne_bytes(info_bytes(device, param).unwrap().try_into().unwrap())
}

fn info_string(device: cl_device_id, param: cl_device_info) -> String {
    let b = info_bytes(device, param).unwrap();
    assert_eq!(b.last(), Some(&0), "strings end with NUL");
    String::from_utf8(b[..b.len() - 1].to_vec()).unwrap()
}

/// cl_name_version entries' names.
fn name_versions(b: &[u8]) -> Vec<(u32, String)> {
    assert_eq!(b.len() % 68, 0);
    b.chunks(68)
        .map(|c| {
            let v = u32::from_ne_bytes(c[..4].try_into().unwrap());
            let end = c[4..].iter().position(|&x| x == 0).expect("NUL-terminated name");
            (v, String::from_utf8(c[4..4 + end].to_vec()).unwrap())
        })
        .collect()
}

enum Size {
    Exactly(usize),
    String,
    NameVersions,
}

/// Every OpenCL 3.0 device query with the size of its answer.
fn device_queries() -> Vec<(cl_device_info, Size)> {
    use Size::*;
    let ptr = Exactly(std::mem::size_of::<*mut c_void>());
    let mut q: Vec<(cl_device_info, Size)> = Vec::new();
    for p in [
        CL_DEVICE_VENDOR_ID,
        CL_DEVICE_MAX_COMPUTE_UNITS,
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
        CL_DEVICE_MAX_CLOCK_FREQUENCY,
        CL_DEVICE_ADDRESS_BITS,
        CL_DEVICE_MAX_READ_IMAGE_ARGS,
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
        CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS,
        CL_DEVICE_MAX_SAMPLERS,
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT,
        CL_DEVICE_MAX_PIPE_ARGS,
        CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS,
        CL_DEVICE_PIPE_MAX_PACKET_SIZE,
        CL_DEVICE_MEM_BASE_ADDR_ALIGN,
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE,
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE,
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
        CL_DEVICE_MAX_CONSTANT_ARGS,
        CL_DEVICE_LOCAL_MEM_TYPE,
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
        CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE,
        CL_DEVICE_MAX_ON_DEVICE_QUEUES,
        CL_DEVICE_MAX_ON_DEVICE_EVENTS,
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
        CL_DEVICE_REFERENCE_COUNT,
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT,
        CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT,
        CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT,
        CL_DEVICE_MAX_NUM_SUB_GROUPS,
        CL_DEVICE_NUMERIC_VERSION,
    ] {
        q.push((p, Exactly(4)));
    }
    for p in [
        CL_DEVICE_IMAGE_SUPPORT,
        CL_DEVICE_ERROR_CORRECTION_SUPPORT,
        CL_DEVICE_HOST_UNIFIED_MEMORY,
        CL_DEVICE_ENDIAN_LITTLE,
        CL_DEVICE_AVAILABLE,
        CL_DEVICE_COMPILER_AVAILABLE,
        CL_DEVICE_LINKER_AVAILABLE,
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC,
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
        CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT,
        CL_DEVICE_PIPE_SUPPORT,
    ] {
        q.push((p, Exactly(4)));
    }
    for p in [
        CL_DEVICE_TYPE,
        CL_DEVICE_MAX_MEM_ALLOC_SIZE,
        CL_DEVICE_SINGLE_FP_CONFIG,
        CL_DEVICE_DOUBLE_FP_CONFIG,
        CL_DEVICE_HALF_FP_CONFIG,
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
        CL_DEVICE_GLOBAL_MEM_SIZE,
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
        CL_DEVICE_LOCAL_MEM_SIZE,
        CL_DEVICE_EXECUTION_CAPABILITIES,
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES,
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
        CL_DEVICE_SVM_CAPABILITIES,
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES,
    ] {
        q.push((p, Exactly(8)));
    }
    for p in [
        CL_DEVICE_MAX_WORK_GROUP_SIZE,
        CL_DEVICE_IMAGE2D_MAX_WIDTH,
        CL_DEVICE_IMAGE2D_MAX_HEIGHT,
        CL_DEVICE_IMAGE3D_MAX_WIDTH,
        CL_DEVICE_IMAGE3D_MAX_HEIGHT,
        CL_DEVICE_IMAGE3D_MAX_DEPTH,
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
        CL_DEVICE_MAX_PARAMETER_SIZE,
        CL_DEVICE_PROFILING_TIMER_RESOLUTION,
        CL_DEVICE_PRINTF_BUFFER_SIZE,
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
        CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE,
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
    ] {
        q.push((p, Exactly(std::mem::size_of::<usize>())));
    }
    q.push((CL_DEVICE_PLATFORM, ptr));
    q.push((CL_DEVICE_PARENT_DEVICE, Exactly(std::mem::size_of::<*mut c_void>())));
    q.push((CL_DEVICE_MAX_WORK_ITEM_SIZES, Exactly(3 * std::mem::size_of::<usize>())));
    // CL_DEVICE_PARTITION_PROPERTIES: a list (see device_query_values_are_consistent).
    q.push((CL_DEVICE_PARTITION_TYPE, Exactly(0)));
    q.push((CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, Exactly(0)));
    for p in [
        CL_DEVICE_NAME,
        CL_DEVICE_VENDOR,
        CL_DRIVER_VERSION,
        CL_DEVICE_PROFILE,
        CL_DEVICE_VERSION,
        CL_DEVICE_OPENCL_C_VERSION,
        CL_DEVICE_EXTENSIONS,
        CL_DEVICE_BUILT_IN_KERNELS,
        CL_DEVICE_IL_VERSION,
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
    ] {
        q.push((p, String));
    }
    for p in [
        CL_DEVICE_OPENCL_C_ALL_VERSIONS,
        CL_DEVICE_OPENCL_C_FEATURES,
        CL_DEVICE_EXTENSIONS_WITH_VERSION,
        CL_DEVICE_ILS_WITH_VERSION,
    ] {
        q.push((p, NameVersions));
    }
    q
}

#[test]
fn get_device_ids_argument_rules() {
    let mut n = 0;
    let all = all_devices();
    assert!(!all.is_empty(), "the platform has devices");
    // NULL platform = ours; the platform handle works too.
    let mut platform: cl_platform_id = null_mut();
    assert_eq!(softcl::api::platform::clGetPlatformIDs(1, &mut platform, null_mut()), SUCCESS);
    assert_eq!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL as u64, 0, null_mut(), &mut n), SUCCESS);
    assert_eq!(n as usize, all.len());
    let mut fake = [0u64; 8];
    assert_eq!(
        clGetDeviceIDs(fake.as_mut_ptr() as cl_platform_id, CL_DEVICE_TYPE_ALL as u64, 0, null_mut(), &mut n),
        CL_INVALID_PLATFORM
    );
    assert_eq!(clGetDeviceIDs(null_mut(), 0, 0, null_mut(), &mut n), CL_INVALID_DEVICE_TYPE);
    assert_eq!(clGetDeviceIDs(null_mut(), 1 << 40, 0, null_mut(), &mut n), CL_INVALID_DEVICE_TYPE);
    let mut one: cl_device_id = null_mut();
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL as u64, 0, &mut one, &mut n), CL_INVALID_VALUE);
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL as u64, 1, null_mut(), null_mut()), CL_INVALID_VALUE);
    for ty in [CL_DEVICE_TYPE_CUSTOM, CL_DEVICE_TYPE_ACCELERATOR] {
        assert_eq!(clGetDeviceIDs(null_mut(), ty as u64, 0, null_mut(), &mut n), CL_DEVICE_NOT_FOUND);
    }
    // DEFAULT: exactly one device, the first.
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_DEFAULT as u64, 1, &mut one, &mut n), SUCCESS);
    assert_eq!((n, one), (1, all[0]));
    // Fewer entries than devices: only num_entries are written.
    let mut two = [null_mut(); 2];
    assert_eq!(clGetDeviceIDs(null_mut(), CL_DEVICE_TYPE_ALL as u64, 1, two.as_mut_ptr(), &mut n), SUCCESS);
    assert_eq!((n as usize, two[0], two[1]), (all.len(), all[0], null_mut()));
    // CPU and GPU each list the devices of that type.
    let mut typed = 0;
    for ty in [CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU] {
        let err = clGetDeviceIDs(null_mut(), ty as u64, 0, null_mut(), &mut n);
        if err == SUCCESS {
            typed += n as usize;
        } else {
            assert_eq!(err, CL_DEVICE_NOT_FOUND);
        }
    }
    assert_eq!(typed, all.len());
}

#[test]
fn every_device_query_answers_with_its_size() {
    for device in all_devices() {
        for (param, size) in device_queries() {
            let b = info_bytes(device, param).unwrap_or_else(|e| panic!("query {param:#x} failed with {e}"));
            match size {
                Size::Exactly(n) => assert_eq!(b.len(), n, "size of query {param:#x}"),
                Size::String => assert_eq!(b.last(), Some(&0), "query {param:#x} is a NUL-terminated string"),
                Size::NameVersions => assert_eq!(b.len() % 68, 0, "query {param:#x} is cl_name_version[]"),
            }
        }
        // Too small a buffer, unknown queries.
        let mut small = 0u32;
        assert_eq!(
            clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, 4, &mut small as *mut u32 as *mut c_void, null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(info_bytes(device, 0xFFFF), Err(CL_INVALID_VALUE));
        assert_eq!(info_bytes(device, CL_DEVICE_TYPE - 1), Err(CL_INVALID_VALUE));
        assert_eq!(clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut 0), CL_INVALID_DEVICE);
    }
}

#[test]
fn device_query_values_are_consistent() {
    let mut platform: cl_platform_id = null_mut();
    assert_eq!(softcl::api::platform::clGetPlatformIDs(1, &mut platform, null_mut()), SUCCESS);
    for device in all_devices() {
        assert_eq!(info_u64(device, CL_DEVICE_PLATFORM) as usize, platform as usize);
        assert_eq!(info_u64(device, CL_DEVICE_PARENT_DEVICE), 0);
        assert_eq!(info_u32(device, CL_DEVICE_REFERENCE_COUNT), 1);
        // Fission on the CPU device only.
        let partition: Vec<isize> = info_bytes(device, CL_DEVICE_PARTITION_PROPERTIES)
            .unwrap()
            .chunks_exact(8)
            .map(|c| isize::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        if info_u64(device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU as u64 != 0 {
            assert_eq!(
                info_u32(device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES),
                info_u32(device, CL_DEVICE_MAX_COMPUTE_UNITS)
            );
            assert_eq!(partition[..2], [CL_DEVICE_PARTITION_EQUALLY as isize, CL_DEVICE_PARTITION_BY_COUNTS as isize]);
        } else {
            assert_eq!(info_u32(device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0);
            assert_eq!(partition, vec![0]);
            assert_eq!(info_u64(device, CL_DEVICE_PARTITION_AFFINITY_DOMAIN), 0);
        }
        assert_eq!(info_u32(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS), 3);
        assert_eq!(info_string(device, CL_DEVICE_PROFILE), "FULL_PROFILE");
        assert!(info_string(device, CL_DEVICE_VERSION).starts_with("OpenCL 3.0"));
        assert_eq!(info_u32(device, CL_DEVICE_NUMERIC_VERSION), 3 << 22);
        assert_ne!(info_u64(device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES) & CL_QUEUE_PROFILING_ENABLE as u64, 0);
        // Coarse- and fine-grain buffer SVM with atomics on every device (kernels run on the
        // host); fine-grain system SVM on the CPU device only.
        let svm = info_u64(device, CL_DEVICE_SVM_CAPABILITIES);
        let buffer =
            (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER | CL_DEVICE_SVM_ATOMICS) as u64;
        assert_eq!(svm & buffer, buffer);
        let system = svm & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM as u64 != 0;
        assert_eq!(system, info_u64(device, CL_DEVICE_TYPE) == CL_DEVICE_TYPE_CPU as u64);
        assert_eq!(info_u64(device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES), 0);
        assert_eq!(info_u32(device, CL_DEVICE_PIPE_SUPPORT), CL_FALSE);
        assert_eq!(info_string(device, CL_DEVICE_BUILT_IN_KERNELS), "");
        let ty = info_u64(device, CL_DEVICE_TYPE);
        assert!(ty == CL_DEVICE_TYPE_CPU as u64 || ty == CL_DEVICE_TYPE_GPU as u64);
        // Work-item sizes vs work-group size.
        let sizes = info_bytes(device, CL_DEVICE_MAX_WORK_ITEM_SIZES).unwrap();
        let wg = usize::from_ne_bytes(info_bytes(device, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap().try_into().unwrap());
        assert!(wg >= 1 && usize::from_ne_bytes(sizes[..8].try_into().unwrap()) >= 1);
        // Extensions: the string and the versioned list name the same extensions.
        let ext: Vec<String> =
            info_string(device, CL_DEVICE_EXTENSIONS).split_whitespace().map(str::to_string).collect();
        let ext_v: Vec<String> = name_versions(&info_bytes(device, CL_DEVICE_EXTENSIONS_WITH_VERSION).unwrap())
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        assert_eq!(ext, ext_v);
        // ILs likewise: "SPIR-V_1.0 ..." against the versioned list.
        let ils = info_string(device, CL_DEVICE_IL_VERSION);
        for (v, name) in name_versions(&info_bytes(device, CL_DEVICE_ILS_WITH_VERSION).unwrap()) {
            let wanted = format!("{name}_{}.{}", v >> 22, (v >> 12) & 0x3FF);
            assert!(ils.split(' ').any(|i| i == wanted), "{wanted} in {ils:?}");
        }
        // fp64/fp16: a config only with the extension.
        let has = |e: &str| ext.iter().any(|x| x == e);
        if !has("cl_khr_fp64") {
            assert_eq!(info_u64(device, CL_DEVICE_DOUBLE_FP_CONFIG), 0);
        }
        if !has("cl_khr_fp16") {
            assert_eq!(info_u64(device, CL_DEVICE_HALF_FP_CONFIG), 0);
        }
        // Images: zeros when unsupported.
        if info_u32(device, CL_DEVICE_IMAGE_SUPPORT) == CL_FALSE {
            assert_eq!(info_u32(device, CL_DEVICE_MAX_READ_IMAGE_ARGS), 0);
            assert_eq!(info_u64(device, CL_DEVICE_IMAGE2D_MAX_WIDTH), 0);
        }
        // The Intel sub-group sizes query exists only with its extension.
        let intel = info_bytes(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL);
        if has("cl_intel_required_subgroup_size") {
            assert_eq!(intel.unwrap().len() % std::mem::size_of::<usize>(), 0);
        } else {
            assert_eq!(intel, Err(CL_INVALID_VALUE));
        }
    }
}

#[test]
fn retain_release_and_sub_devices() {
    let device = all_devices()[0];
    assert_eq!(clRetainDevice(device), SUCCESS);
    assert_eq!(clReleaseDevice(device), SUCCESS);
    assert_eq!(clReleaseDevice(device), SUCCESS, "root devices: release is a no-op");
    assert_eq!(info_u32(device, CL_DEVICE_REFERENCE_COUNT), 1);
    assert_eq!(clRetainDevice(null_mut()), CL_INVALID_DEVICE);
    assert_eq!(clReleaseDevice(null_mut()), CL_INVALID_DEVICE);
    let props = [CL_DEVICE_PARTITION_EQUALLY as isize, 1, 0];
    let mut n = 7;
    // The CPU device (the first) splits into one sub-device per compute unit.
    assert_eq!(clCreateSubDevices(device, props.as_ptr(), 0, null_mut(), &mut n), SUCCESS);
    assert_eq!(n, info_u32(device, CL_DEVICE_MAX_COMPUTE_UNITS));
    let mut subs = vec![null_mut(); n as usize];
    assert_eq!(clCreateSubDevices(device, props.as_ptr(), n, subs.as_mut_ptr(), null_mut()), SUCCESS);
    let sub = subs[0];
    assert_eq!(info_u64(sub, CL_DEVICE_PARENT_DEVICE) as usize, device as usize);
    assert_eq!(clRetainDevice(sub), SUCCESS);
    assert_eq!(info_u32(sub, CL_DEVICE_REFERENCE_COUNT), 2);
    for s in subs {
        assert_eq!(clReleaseDevice(s), SUCCESS);
    }
    assert_eq!(info_u32(sub, CL_DEVICE_REFERENCE_COUNT), 1);
    assert_eq!(clReleaseDevice(sub), SUCCESS);
    // The Gen device (the second) cannot be partitioned.
    let gen = all_devices()[1];
    assert_eq!(clCreateSubDevices(gen, props.as_ptr(), 0, null_mut(), &mut n), CL_INVALID_VALUE);
    assert_eq!(clCreateSubDevices(device, null(), 0, null_mut(), &mut n), CL_INVALID_VALUE);
    assert_eq!(clCreateSubDevices(null_mut(), props.as_ptr(), 0, null_mut(), &mut n), CL_INVALID_DEVICE);
}

struct Fixture {
    context: cl_context,
    device: cl_device_id,
}

impl Fixture {
    fn new() -> Self {
        let device = all_devices()[0];
        let mut err = 0;
        let context = clCreateContext(null(), 1, &device, None, null_mut(), &mut err);
        assert_eq!(err, SUCCESS);
        Self { context, device }
    }

    fn queue(&self, props: &[cl_queue_properties]) -> Result<cl_command_queue, cl_int> {
        let mut err = 0;
        let p = if props.is_empty() { null() } else { props.as_ptr() };
        let q = clCreateCommandQueueWithProperties(self.context, self.device, p, &mut err);
        if err == SUCCESS {
            assert!(!q.is_null());
            Ok(q)
        } else {
            assert!(q.is_null());
            Err(err)
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        assert_eq!(clReleaseContext(self.context), SUCCESS);
    }
}

fn queue_info(q: cl_command_queue, param: cl_command_queue_info) -> Result<Vec<u8>, cl_int> {
    let mut size = 0;
    let err = clGetCommandQueueInfo(q, param, 0, null_mut(), &mut size);
    if err != SUCCESS {
        return Err(err);
    }
    let mut buf = vec![0u8; size];
    assert_eq!(clGetCommandQueueInfo(q, param, size, buf.as_mut_ptr() as *mut c_void, null_mut()), SUCCESS);
    Ok(buf)
}

fn word(b: Vec<u8>) -> u64 {
    match b.len() {
        4 => u32::from_ne_bytes(b.try_into().unwrap()) as u64,
        8 => u64::from_ne_bytes(b.try_into().unwrap()),
        n => panic!("unexpected size {n}"),
    }
}

#[test]
fn queue_creation_and_property_errors() {
    let f = Fixture::new();
    let props = CL_QUEUE_PROPERTIES as u64;
    let on_host = info_u64(f.device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
    let ooo = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as u64;
    // Valid lists.
    let q = f.queue(&[]).unwrap();
    assert_eq!(queue_info(q, CL_QUEUE_PROPERTIES_ARRAY).unwrap().len(), 0, "NULL list: size 0");
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    let q = f.queue(&[props, CL_QUEUE_PROFILING_ENABLE as u64, 0]).unwrap();
    assert_eq!(word(queue_info(q, CL_QUEUE_PROPERTIES).unwrap()), CL_QUEUE_PROFILING_ENABLE as u64);
    let arr = queue_info(q, CL_QUEUE_PROPERTIES_ARRAY).unwrap();
    assert_eq!(arr.len(), 24);
    assert_eq!(u64::from_ne_bytes(arr[16..].try_into().unwrap()), 0);
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    // Out-of-order only where the device offers it.
    let r = f.queue(&[props, ooo, 0]);
    if on_host & ooo != 0 {
        assert_eq!(clReleaseCommandQueue(r.unwrap()), SUCCESS);
    } else {
        assert_eq!(r, Err(CL_INVALID_QUEUE_PROPERTIES));
    }
    // Device queues are not supported; invalid combinations are invalid values.
    let on_device = CL_QUEUE_ON_DEVICE as u64;
    assert_eq!(f.queue(&[props, on_device | ooo, 0]), Err(CL_INVALID_QUEUE_PROPERTIES));
    assert_eq!(f.queue(&[props, on_device, 0]), Err(CL_INVALID_VALUE), "ON_DEVICE requires out-of-order");
    assert_eq!(f.queue(&[props, CL_QUEUE_ON_DEVICE_DEFAULT as u64 | ooo, 0]), Err(CL_INVALID_VALUE));
    assert_eq!(f.queue(&[props, 1 << 20, 0]), Err(CL_INVALID_VALUE));
    assert_eq!(f.queue(&[CL_QUEUE_SIZE as u64, 1024, 0]), Err(CL_INVALID_QUEUE_PROPERTIES));
    assert_eq!(f.queue(&[0x7777, 1, 0]), Err(CL_INVALID_VALUE));
    assert_eq!(f.queue(&[props, 0, props, 0, 0]), Err(CL_INVALID_VALUE), "duplicate property");
    // Bad context / device.
    let mut err = 0;
    assert!(clCreateCommandQueueWithProperties(null_mut(), f.device, null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    assert!(clCreateCommandQueueWithProperties(f.context, null_mut(), null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_DEVICE);
    // A device of the platform that is not in the context.
    if let Some(&other) = all_devices().get(1) {
        assert!(clCreateCommandQueueWithProperties(f.context, other, null(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_DEVICE);
    }
    // OpenCL 1.2 constructor.
    let q = clCreateCommandQueue(f.context, f.device, CL_QUEUE_PROFILING_ENABLE as u64, &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(queue_info(q, CL_QUEUE_PROPERTIES_ARRAY).unwrap().len(), 0);
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    assert!(clCreateCommandQueue(f.context, f.device, 1 << 20, &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    // errcode_ret may be NULL.
    let q = clCreateCommandQueue(f.context, f.device, 0, null_mut());
    assert!(!q.is_null());
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
}

#[test]
fn queue_info_and_lifetime() {
    let f = Fixture::new();
    let q = f.queue(&[]).unwrap();
    assert_eq!(word(queue_info(q, CL_QUEUE_CONTEXT).unwrap()) as usize, f.context as usize);
    assert_eq!(word(queue_info(q, CL_QUEUE_DEVICE).unwrap()) as usize, f.device as usize);
    assert_eq!(word(queue_info(q, CL_QUEUE_REFERENCE_COUNT).unwrap()), 1);
    assert_eq!(clRetainCommandQueue(q), SUCCESS);
    assert_eq!(word(queue_info(q, CL_QUEUE_REFERENCE_COUNT).unwrap()), 2);
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    assert_eq!(word(queue_info(q, CL_QUEUE_REFERENCE_COUNT).unwrap()), 1);
    assert_eq!(word(queue_info(q, CL_QUEUE_PROPERTIES).unwrap()), 0);
    assert_eq!(queue_info(q, CL_QUEUE_SIZE), Err(CL_INVALID_COMMAND_QUEUE));
    assert_eq!(word(queue_info(q, CL_QUEUE_DEVICE_DEFAULT).unwrap()), 0);
    assert_eq!(queue_info(q, 0x7777), Err(CL_INVALID_VALUE));
    assert_eq!(queue_info(null_mut(), CL_QUEUE_CONTEXT), Err(CL_INVALID_COMMAND_QUEUE));
    assert_eq!(clFlush(q), SUCCESS);
    assert_eq!(clFinish(q), SUCCESS);
    assert_eq!(clFlush(null_mut()), CL_INVALID_COMMAND_QUEUE);
    assert_eq!(clFinish(null_mut()), CL_INVALID_COMMAND_QUEUE);
    assert_eq!(clSetDefaultDeviceCommandQueue(f.context, f.device, q), CL_INVALID_OPERATION);
    assert_eq!(clSetDefaultDeviceCommandQueue(null_mut(), f.device, q), CL_INVALID_CONTEXT);
    assert_eq!(
        clSetCommandQueueProperty(q, CL_QUEUE_PROFILING_ENABLE as u64, CL_TRUE, null_mut()),
        CL_INVALID_OPERATION
    );
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    // Released: the handle is no longer valid.
    assert_eq!(clRetainCommandQueue(q), CL_INVALID_COMMAND_QUEUE);
    assert_eq!(clRetainCommandQueue(null_mut()), CL_INVALID_COMMAND_QUEUE);
}

fn event_info(e: cl_event, param: cl_event_info) -> Result<Vec<u8>, cl_int> {
    let mut size = 0;
    let err = clGetEventInfo(e, param, 0, null_mut(), &mut size);
    if err != SUCCESS {
        return Err(err);
    }
    let mut buf = vec![0u8; size];
    assert_eq!(clGetEventInfo(e, param, size, buf.as_mut_ptr() as *mut c_void, null_mut()), SUCCESS);
    Ok(buf)
}

fn status(e: cl_event) -> cl_int {
    word(event_info(e, CL_EVENT_COMMAND_EXECUTION_STATUS).unwrap()) as u32 as cl_int
}

fn profiling(e: cl_event, param: cl_profiling_info) -> Result<u64, cl_int> {
    let mut v = 0u64;
    let mut size = 0;
    match clGetEventProfilingInfo(e, param, 8, &mut v as *mut u64 as *mut c_void, &mut size) {
        0 => {
            assert_eq!(size, 8);
            Ok(v)
        }
        err => Err(err),
    }
}

fn user_event(context: cl_context) -> cl_event {
    let mut err = 0;
    let e = clCreateUserEvent(context, &mut err);
    assert_eq!(err, SUCCESS);
    e
}

/// What a test's callbacks saw: (event handle, status).
type Calls = Mutex<Vec<(usize, cl_int)>>;

extern "C" fn record_callback(event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: the tests pass a pointer to a `Calls` that outlives the event.
    let calls = unsafe { &*(user_data as *const Calls) };
    calls.lock().unwrap().push((event as usize, status));
}

#[test]
fn user_events_markers_and_callbacks() {
    let f = Fixture::new();
    let q = f.queue(&[CL_QUEUE_PROPERTIES as u64, CL_QUEUE_PROFILING_ENABLE as u64, 0]).unwrap();
    let gate = user_event(f.context);
    assert_eq!(status(gate), CL_SUBMITTED as cl_int);
    assert_eq!(word(event_info(gate, CL_EVENT_COMMAND_QUEUE).unwrap()), 0, "user events have no queue");
    assert_eq!(word(event_info(gate, CL_EVENT_CONTEXT).unwrap()) as usize, f.context as usize);
    assert_eq!(word(event_info(gate, CL_EVENT_COMMAND_TYPE).unwrap()), CL_COMMAND_USER as u64);
    assert_eq!(word(event_info(gate, CL_EVENT_REFERENCE_COUNT).unwrap()), 1);
    assert_eq!(event_info(gate, 0x7777), Err(CL_INVALID_VALUE));
    assert_eq!(profiling(gate, CL_PROFILING_COMMAND_QUEUED), Err(CL_PROFILING_INFO_NOT_AVAILABLE));

    let mut marker: cl_event = null_mut();
    assert_eq!(clEnqueueMarkerWithWaitList(q, 1, &gate, &mut marker), SUCCESS);
    assert!(!marker.is_null());
    assert_eq!(word(event_info(marker, CL_EVENT_COMMAND_QUEUE).unwrap()) as usize, q as usize);
    assert_eq!(word(event_info(marker, CL_EVENT_COMMAND_TYPE).unwrap()), CL_COMMAND_MARKER as u64);
    assert!(status(marker) > COMPLETE, "gated by the user event");
    assert_eq!(profiling(marker, CL_PROFILING_COMMAND_END), Err(CL_PROFILING_INFO_NOT_AVAILABLE));

    // Callbacks through the C function pointer.
    let calls: Calls = Mutex::new(Vec::new());
    let ud = &calls as *const Calls as *mut c_void;
    assert_eq!(clSetEventCallback(marker, COMPLETE, Some(record_callback), ud), SUCCESS);
    assert_eq!(clSetEventCallback(marker, COMPLETE, None, ud), CL_INVALID_VALUE);
    assert_eq!(clSetEventCallback(marker, CL_QUEUED as cl_int, Some(record_callback), ud), CL_INVALID_VALUE);
    assert_eq!(clSetEventCallback(null_mut(), COMPLETE, Some(record_callback), ud), CL_INVALID_EVENT);

    // A barrier after the marker; the 1.1 forms too.
    let mut barrier: cl_event = null_mut();
    assert_eq!(clEnqueueBarrierWithWaitList(q, 0, null(), &mut barrier), SUCCESS);
    assert_eq!(word(event_info(barrier, CL_EVENT_COMMAND_TYPE).unwrap()), CL_COMMAND_BARRIER as u64);
    assert_eq!(clEnqueueBarrier(q), SUCCESS);
    let mut old_marker: cl_event = null_mut();
    assert_eq!(clEnqueueMarker(q, &mut old_marker), SUCCESS);
    assert_eq!(clEnqueueMarker(q, null_mut()), CL_INVALID_VALUE);
    assert_eq!(clEnqueueWaitForEvents(q, 1, &gate), SUCCESS);
    assert_eq!(clEnqueueWaitForEvents(q, 0, null()), CL_INVALID_VALUE);

    // User event status rules.
    assert_eq!(clSetUserEventStatus(marker, COMPLETE), CL_INVALID_EVENT);
    assert_eq!(clSetUserEventStatus(gate, CL_RUNNING as cl_int), CL_INVALID_VALUE);
    assert_eq!(clSetUserEventStatus(gate, COMPLETE), SUCCESS);
    assert_eq!(clSetUserEventStatus(gate, COMPLETE), CL_INVALID_OPERATION);

    let events = [marker, barrier, old_marker];
    assert_eq!(clWaitForEvents(3, events.as_ptr()), SUCCESS);
    assert_eq!(clFinish(q), SUCCESS);
    for e in events {
        assert_eq!(status(e), COMPLETE);
        let t: Vec<u64> = [
            CL_PROFILING_COMMAND_QUEUED,
            CL_PROFILING_COMMAND_SUBMIT,
            CL_PROFILING_COMMAND_START,
            CL_PROFILING_COMMAND_END,
            CL_PROFILING_COMMAND_COMPLETE,
        ]
        .iter()
        .map(|&p| profiling(e, p).unwrap())
        .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
        assert_eq!(profiling(e, 0x7777), Err(CL_INVALID_VALUE));
    }
    // The barrier completes after the marker.
    assert!(
        profiling(barrier, CL_PROFILING_COMMAND_START).unwrap() >= profiling(marker, CL_PROFILING_COMMAND_END).unwrap()
    );
    // The callback ran once, with CL_COMPLETE and the marker's handle.
    assert_eq!(*calls.lock().unwrap(), vec![(marker as usize, COMPLETE)]);
    // Registering on a completed event calls back at once, with the status registered for.
    assert_eq!(clSetEventCallback(marker, CL_SUBMITTED as cl_int, Some(record_callback), ud), SUCCESS);
    assert_eq!(calls.lock().unwrap()[1], (marker as usize, CL_SUBMITTED as cl_int));

    assert_eq!(clRetainEvent(marker), SUCCESS);
    assert_eq!(word(event_info(marker, CL_EVENT_REFERENCE_COUNT).unwrap()), 2);
    for e in [marker, marker, barrier, old_marker, gate] {
        assert_eq!(clReleaseEvent(e), SUCCESS);
    }
    assert_eq!(clReleaseEvent(gate), CL_INVALID_EVENT);
    assert_eq!(clReleaseEvent(null_mut()), CL_INVALID_EVENT);
    assert_eq!(clRetainEvent(null_mut()), CL_INVALID_EVENT);
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
}

#[test]
fn wait_list_errors_and_failure_propagation() {
    let f = Fixture::new();
    let g = Fixture::new();
    let q = f.queue(&[]).unwrap();
    let gate = user_event(f.context);
    let foreign = user_event(g.context);

    // Inconsistent lists, invalid events, events of another context.
    let mut e: cl_event = null_mut();
    assert_eq!(clEnqueueMarkerWithWaitList(q, 1, null(), &mut e), CL_INVALID_EVENT_WAIT_LIST);
    assert_eq!(clEnqueueMarkerWithWaitList(q, 0, &gate, &mut e), CL_INVALID_EVENT_WAIT_LIST);
    let bad: cl_event = null_mut();
    assert_eq!(clEnqueueBarrierWithWaitList(q, 1, &bad, &mut e), CL_INVALID_EVENT_WAIT_LIST);
    assert_eq!(clEnqueueMarkerWithWaitList(q, 1, &foreign, &mut e), CL_INVALID_CONTEXT);
    assert_eq!(clEnqueueWaitForEvents(q, 1, &foreign), CL_INVALID_CONTEXT);
    assert_eq!(clEnqueueWaitForEvents(q, 1, &bad), CL_INVALID_EVENT);
    assert_eq!(clEnqueueMarkerWithWaitList(null_mut(), 0, null(), &mut e), CL_INVALID_COMMAND_QUEUE);
    assert!(e.is_null(), "no event on failure");

    assert_eq!(clWaitForEvents(0, &gate), CL_INVALID_VALUE);
    assert_eq!(clWaitForEvents(1, null()), CL_INVALID_VALUE);
    assert_eq!(clWaitForEvents(1, &bad), CL_INVALID_EVENT);
    let mixed = [gate, foreign];
    assert_eq!(clWaitForEvents(2, mixed.as_ptr()), CL_INVALID_CONTEXT);

    // A failed user event fails the commands waiting on it, and their callbacks see the error.
    let mut dependent: cl_event = null_mut();
    assert_eq!(clEnqueueMarkerWithWaitList(q, 1, &gate, &mut dependent), SUCCESS);
    let mut after: cl_event = null_mut();
    assert_eq!(clEnqueueBarrierWithWaitList(q, 1, &dependent, &mut after), SUCCESS);
    let calls: Calls = Mutex::new(Vec::new());
    let ud = &calls as *const Calls as *mut c_void;
    assert_eq!(clSetEventCallback(dependent, CL_RUNNING as cl_int, Some(record_callback), ud), SUCCESS);
    assert_eq!(clSetUserEventStatus(gate, -12345), SUCCESS);
    assert_eq!(clWaitForEvents(1, &dependent), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_eq!(status(dependent), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_eq!(clWaitForEvents(1, &after), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_eq!(status(gate), -12345);
    assert_eq!(*calls.lock().unwrap(), vec![(dependent as usize, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)]);
    // The queue goes on with commands that do not wait on the failure.
    let mut fine: cl_event = null_mut();
    assert_eq!(clEnqueueMarkerWithWaitList(q, 0, null(), &mut fine), SUCCESS);
    assert_eq!(clWaitForEvents(1, &fine), SUCCESS);

    for e in [gate, foreign, dependent, after, fine] {
        assert_eq!(clReleaseEvent(e), SUCCESS);
    }
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
}

#[test]
fn released_queue_runs_its_commands() {
    let f = Fixture::new();
    let q = f.queue(&[]).unwrap();
    let gate = user_event(f.context);
    let mut last: cl_event = null_mut();
    assert_eq!(clEnqueueMarkerWithWaitList(q, 1, &gate, null_mut()), SUCCESS);
    for _ in 0..10 {
        assert_eq!(clEnqueueBarrierWithWaitList(q, 0, null(), null_mut()), SUCCESS);
    }
    assert_eq!(clEnqueueMarkerWithWaitList(q, 0, null(), &mut last), SUCCESS);
    assert_eq!(clReleaseCommandQueue(q), SUCCESS);
    // The waiting thread returns once another thread sets the gate.
    let gate_addr = gate as usize;
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(clSetUserEventStatus(gate_addr as cl_event, COMPLETE), SUCCESS);
    });
    assert_eq!(clWaitForEvents(1, &last), SUCCESS);
    setter.join().unwrap();
    assert_eq!(status(last), COMPLETE);
    for e in [gate, last] {
        assert_eq!(clReleaseEvent(e), SUCCESS);
    }
}

#[test]
fn user_event_callback_may_release_the_event() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn release_self(event: cl_event, _status: cl_int, _user_data: *mut c_void) {
        assert_eq!(clReleaseEvent(event), SUCCESS);
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }
    let f = Fixture::new();
    let e = user_event(f.context);
    assert_eq!(clSetEventCallback(e, COMPLETE, Some(release_self), null_mut()), SUCCESS);
    assert_eq!(clSetUserEventStatus(e, COMPLETE), SUCCESS);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1);
    let mut err = 0;
    assert!(clCreateUserEvent(null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
}
