//! A device's description: every value clGetDeviceInfo reports, in Rust form. The icd crate
//! turns these into the OpenCL constants and bit-fields.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Cpu,
    Gpu,
}

/// Preferred or native vector widths per scalar type (0 = type not supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorWidths {
    pub char: u32,
    pub short: u32,
    pub int: u32,
    pub long: u32,
    pub half: u32,
    pub float: u32,
    pub double: u32,
}

/// CL_DEVICE_{SINGLE,DOUBLE,HALF}_FP_CONFIG as flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FpConfig {
    pub denorm: bool,
    pub inf_nan: bool,
    pub round_to_nearest: bool,
    pub round_to_zero: bool,
    pub round_to_inf: bool,
    pub fma: bool,
    pub correctly_rounded_divide_sqrt: bool,
    pub soft_float: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    None,
    ReadOnly,
    ReadWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalMemKind {
    /// Dedicated local memory (CL_LOCAL).
    Local,
    /// Local memory emulated in global memory (CL_GLOBAL).
    Global,
}

/// Image limits (all zero while images are not supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImageLimits {
    pub max_read_image_args: u32,
    pub max_write_image_args: u32,
    pub max_read_write_image_args: u32,
    pub image2d_max_width: usize,
    pub image2d_max_height: usize,
    pub image3d_max_width: usize,
    pub image3d_max_height: usize,
    pub image3d_max_depth: usize,
    pub image_max_buffer_size: usize,
    pub image_max_array_size: usize,
    pub max_samplers: u32,
    pub image_pitch_alignment: u32,
    pub image_base_address_alignment: u32,
}

/// Shared virtual memory the device supports (CL_DEVICE_SVM_CAPABILITIES).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SvmCapabilities {
    pub coarse_grain_buffer: bool,
    pub fine_grain_buffer: bool,
    pub fine_grain_system: bool,
    /// Atomics on fine-grain SVM are consistent with host atomics.
    pub atomics: bool,
}

impl SvmCapabilities {
    /// Any kind of SVM at all.
    pub fn any(&self) -> bool {
        self.coarse_grain_buffer || self.fine_grain_buffer || self.fine_grain_system
    }
}

/// Memory-order and scope capabilities (CL_DEVICE_ATOMIC_*_CAPABILITIES).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtomicCapabilities {
    pub order_relaxed: bool,
    pub order_acq_rel: bool,
    pub order_seq_cst: bool,
    pub scope_work_item: bool,
    pub scope_work_group: bool,
    pub scope_device: bool,
    pub scope_all_devices: bool,
}

/// A name with a version (cl_name_version): version as (major, minor, patch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameVersion {
    pub name: String,
    pub version: (u32, u32, u32),
}

impl NameVersion {
    pub fn new(name: &str, major: u32, minor: u32, patch: u32) -> Self {
        Self { name: name.to_string(), version: (major, minor, patch) }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    pub kind: DeviceKind,
    pub name: String,
    pub vendor: String,
    pub vendor_id: u32,
    /// CL_DEVICE_VERSION ("OpenCL 3.0 SoftCL 0.1.0").
    pub version: String,
    pub driver_version: String,
    /// CL_DEVICE_OPENCL_C_VERSION ("OpenCL C 1.2 SoftCL").
    pub opencl_c_version: String,
    /// CL_DEVICE_OPENCL_C_ALL_VERSIONS.
    pub opencl_c_all_versions: Vec<NameVersion>,
    /// CL_DEVICE_OPENCL_C_FEATURES (the `__opencl_c_*` macros supported).
    pub opencl_c_features: Vec<NameVersion>,
    pub extensions: Vec<NameVersion>,
    /// CL_DEVICE_ILS_WITH_VERSION ("SPIR-V" 1.0 ...).
    pub ils: Vec<NameVersion>,
    pub latest_conformance_version_passed: String,

    pub max_compute_units: u32,
    pub max_clock_frequency_mhz: u32,
    pub max_work_item_sizes: [usize; 3],
    pub max_work_group_size: usize,
    pub preferred_work_group_size_multiple: usize,
    pub preferred_vector_widths: VectorWidths,
    pub native_vector_widths: VectorWidths,
    /// Sub-group sizes the device can compile for (empty: no sub-groups).
    pub sub_group_sizes: Vec<usize>,
    pub max_num_sub_groups: u32,

    pub address_bits: u32,
    pub global_mem_size: u64,
    pub max_mem_alloc_size: u64,
    pub global_mem_cache_type: CacheType,
    pub global_mem_cacheline_size: u32,
    pub global_mem_cache_size: u64,
    pub max_constant_buffer_size: u64,
    pub max_constant_args: u32,
    pub local_mem_kind: LocalMemKind,
    pub local_mem_size: u64,
    /// CL_DEVICE_MEM_BASE_ADDR_ALIGN in bits.
    pub mem_base_addr_align_bits: u32,
    pub min_data_type_align_size: u32,
    pub max_parameter_size: usize,
    pub host_unified_memory: bool,
    pub error_correction_support: bool,
    pub endian_little: bool,
    pub printf_buffer_size: usize,

    pub single_fp_config: FpConfig,
    /// None = no fp64.
    pub double_fp_config: Option<FpConfig>,
    /// None = no fp16.
    pub half_fp_config: Option<FpConfig>,

    pub images: Option<ImageLimits>,
    pub atomic_memory_capabilities: AtomicCapabilities,
    pub atomic_fence_capabilities: AtomicCapabilities,
    /// CL_DEVICE_SVM_CAPABILITIES.
    pub svm: SvmCapabilities,
    pub non_uniform_work_group_support: bool,
    pub work_group_collective_functions_support: bool,
    pub generic_address_space_support: bool,
    /// cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics.
    pub int64_atomics: bool,
    /// cl_ext_float_atomics: atomic load, store, add, min and max of `float` (and of
    /// `double` with fp64) in `__global` and `__local` memory.
    pub float_atomics: bool,
    /// `__opencl_c_program_scope_global_variables` (CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE > 0).
    pub program_scope_global_variables: bool,
    pub sub_group_independent_forward_progress: bool,

    /// Resolution of the profiling timer in nanoseconds.
    pub profiling_timer_resolution_ns: usize,
    pub queue_out_of_order: bool,
}
