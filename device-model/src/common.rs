//! Description values both devices share, and the launch path common to both.

use crate::exec::{Executor, GroupKernel, Job, Limits, NdRange, Schedule};
use crate::features;
use crate::info::{
    AtomicCapabilities, CacheType, DeviceInfo, DeviceKind, FpConfig, LocalMemKind, NameVersion, SvmCapabilities,
    VectorWidths,
};
use crate::launch::{Launch, LaunchError};
use crate::observer::Observer;
use softcl_compiler::{CodegenKnobs, Target, Vectorizer};
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

/// What every SoftCL device reports because it is a property of SoftCL's compiler and executor
/// rather than of the hardware described: versions, the optional features implemented so far
/// (fp64, fp16, images, sub-groups, collectives, the generic address space: not yet), atomics,
/// the host's single address space and the alignment the executor gives every block.
///
/// The hardware fields (name, vendor, compute units, clock, work-group limits, vector widths,
/// memory sizes, cache, local memory, limits of parameters and printf, timer resolution) are
/// placeholders here: each device sets all of them (a test checks that none is left 0).
pub(crate) fn softcl_device_base(kind: DeviceKind) -> DeviceInfo {
    DeviceInfo {
        kind,
        name: String::new(),
        vendor: String::new(),
        vendor_id: 0,
        version: device_version(),
        driver_version: env!("CARGO_PKG_VERSION").into(),
        opencl_c_version: opencl_c_version(),
        opencl_c_all_versions: opencl_c_all_versions(),
        // Derived from the capability flags by features::derive_feature_lists.
        opencl_c_features: Vec::new(),
        extensions: Vec::new(),
        ils: spirv_ils(4),
        latest_conformance_version_passed: NO_CONFORMANCE.into(),

        max_compute_units: 0,
        max_clock_frequency_mhz: 0,
        max_work_item_sizes: [0; 3],
        max_work_group_size: 0,
        preferred_work_group_size_multiple: 0,
        preferred_vector_widths: VectorWidths::default(),
        native_vector_widths: VectorWidths::default(),
        sub_group_sizes: Vec::new(),
        max_num_sub_groups: 0,

        address_bits: 64,
        global_mem_size: 0,
        max_mem_alloc_size: 0,
        global_mem_cache_type: CacheType::ReadWrite,
        global_mem_cacheline_size: 0,
        global_mem_cache_size: 0,
        max_constant_buffer_size: 0,
        max_constant_args: 8,
        local_mem_kind: LocalMemKind::Global,
        local_mem_size: 0,
        // 1024 bits = 128 bytes, the alignment of every block the executor hands to kernels.
        mem_base_addr_align_bits: 1024,
        min_data_type_align_size: 128,
        max_parameter_size: 0,
        host_unified_memory: true,
        error_correction_support: false,
        endian_little: cfg!(target_endian = "little"),
        printf_buffer_size: 0,

        single_fp_config: fp32_config(),
        double_fp_config: None,
        half_fp_config: None,

        images: None,
        atomic_memory_capabilities: atomic_memory_capabilities(),
        atomic_fence_capabilities: atomic_fence_capabilities(),
        // Kernels run on the host in the application's process: every SVM buffer is the
        // host's memory at the same address, and kernel atomics are host atomics on it, so
        // coarse- and fine-grain buffer SVM with atomics hold on every device. Fine-grain
        // system SVM is each device's choice (cpu/mod.rs, gen/mod.rs).
        svm: SvmCapabilities {
            coarse_grain_buffer: true,
            fine_grain_buffer: true,
            fine_grain_system: false,
            atomics: true,
        },
        non_uniform_work_group_support: true,
        // Both devices: the compiler makes them `__local` memory and barriers
        // (compiler passes::collectives).
        work_group_collective_functions_support: true,
        // Both devices: a generic pointer is an address; `get_fence` and `to_*` find its space
        // from the work-group's memory and the thread's stack (compiler `generic_space`).
        generic_address_space_support: true,
        // Both devices: 64-bit atomics are the host's (Gen9's hardware has them too).
        int64_atomics: true,
        // Both devices: a compare-exchange loop on the bits (compiler `atomic_float`).
        float_atomics: true,
        // Both devices: one block per program and device (compiler `program_globals`).
        program_scope_global_variables: true,
        sub_group_independent_forward_progress: false,

        profiling_timer_resolution_ns: 0,
        // Out-of-order host queues run their commands in order (runtime/src/queue.rs), which
        // the specification allows; wait lists, markers and barriers keep their meaning.
        queue_out_of_order: true,
    }
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

/// CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: every order at work-group, device and all-devices
/// scope. The code generator makes every atomic operation sequentially consistent on the
/// host's coherent memory, which satisfies each order at each scope. Each flag switches on its
/// `__opencl_c_atomic_*` feature (see [`features`]), and the conformance suite checks that
/// flags and macros agree.
pub(crate) fn atomic_memory_capabilities() -> AtomicCapabilities {
    AtomicCapabilities {
        order_relaxed: true,
        order_acq_rel: true,
        order_seq_cst: true,
        scope_work_group: true,
        scope_device: true,
        scope_all_devices: true,
        ..AtomicCapabilities::default()
    }
}

/// CL_DEVICE_ATOMIC_FENCE_CAPABILITIES: relaxed, acq_rel and seq_cst at work-group, device
/// and all-devices scope (every fence becomes a sequentially consistent host fence).
/// The same set as the memory capabilities.
pub(crate) fn atomic_fence_capabilities() -> AtomicCapabilities {
    atomic_memory_capabilities()
}

/// "OpenCL 3.0 ..." (CL_DEVICE_VERSION) as `__OPENCL_VERSION__` spells it: 300.
fn opencl_version_number(version: &str) -> Option<u32> {
    let (major, minor) = version.strip_prefix("OpenCL ")?.split_whitespace().next()?.split_once('.')?;
    Some(major.parse::<u32>().ok()? * 100 + minor.parse::<u32>().ok()? * 10)
}

/// The host target with every optional feature `info` does not advertise turned off, and the
/// code-generation knobs of the environment ([`codegen_knobs_from_env`]), read here once per
/// device (the CPU device adds its vectorizer knobs, the Gen device its builds).
pub(crate) fn target_for(info: &DeviceInfo) -> Target {
    Target {
        knobs: codegen_knobs_from_env(),
        disabled_features: features::disabled_features(info),
        cl_std_versions: info
            .opencl_c_all_versions
            .iter()
            .map(|v| format!("CL{}.{}", v.version.0, v.version.1))
            .collect(),
        opencl_version: opencl_version_number(&info.version).unwrap_or(Target::default().opencl_version),
        max_work_group_size: info.max_work_group_size as u64,
        ..Target::default()
    }
}

/// The CPU device's vectorizer knobs, as in Intel's CPU runtime: `CL_CONFIG_USE_VECTORIZER`
/// = True|False and `CL_CONFIG_CPU_VECTORIZER_MODE` = 0 (heuristic, the default) | 1 (off) |
/// 4 | 8 | 16 (forced width). `register_bytes` is the width of the host's vector registers.
pub(crate) fn vectorizer_knobs(use_vectorizer: Option<&str>, mode: Option<&str>, register_bytes: u32) -> Vectorizer {
    match use_vectorizer.map(str::trim) {
        None | Some("") => {}
        Some(v) if v.eq_ignore_ascii_case("true") || v == "1" => {}
        Some(v) if v.eq_ignore_ascii_case("false") || v == "0" => return Vectorizer::Off,
        Some(v) => return Vectorizer::Invalid(format!("CL_CONFIG_USE_VECTORIZER={v} is not True or False")),
    }
    match mode.map(str::trim) {
        None | Some("") | Some("0") => Vectorizer::Auto { register_bytes },
        Some("1") => Vectorizer::Off,
        Some(m @ ("4" | "8" | "16")) => Vectorizer::Forced { width: m.parse().unwrap_or(4), register_bytes },
        Some(m) => Vectorizer::Invalid(format!("CL_CONFIG_CPU_VECTORIZER_MODE={m} is not 0, 1, 4, 8 or 16")),
    }
}

/// The code-generation knobs of README's table from the variables' values (`var` gives a
/// variable's value, `None` when it is unset): `SOFTCL_PREFETCH=0` (no prefetches),
/// `SOFTCL_STREAMING_STORES=0` (no non-temporal stores) or `all` (every full aligned packet
/// streams), `SOFTCL_VECMATH=0` (math on vectors per lane); any other value is the default.
pub(crate) fn codegen_knobs(var: impl Fn(&str) -> Option<String>) -> CodegenKnobs {
    let default = CodegenKnobs::default();
    CodegenKnobs {
        prefetch: var("SOFTCL_PREFETCH").as_deref() != Some("0"),
        streaming_stores: match var("SOFTCL_STREAMING_STORES").as_deref() {
            Some("0") => None,
            Some("all") => Some(0),
            _ => default.streaming_stores,
        },
        vector_math: var("SOFTCL_VECMATH").as_deref() != Some("0"),
    }
}

/// [`codegen_knobs`] from the process environment.
pub(crate) fn codegen_knobs_from_env() -> CodegenKnobs {
    codegen_knobs(|n| std::env::var(n).ok())
}

/// [`vectorizer_knobs`] from the process environment.
pub(crate) fn vectorizer_from_env(register_bytes: u32) -> Vectorizer {
    let var = |n: &str| std::env::var(n).ok();
    vectorizer_knobs(
        var("CL_CONFIG_USE_VECTORIZER").as_deref(),
        var("CL_CONFIG_CPU_VECTORIZER_MODE").as_deref(),
        register_bytes,
    )
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
    let kernel = Arc::new(launch.kernel.clone());
    run_launch_with(executor, launch, kernel, schedule, observer, limits)
}

/// [`run_launch`] running `kernel` (code compiled for this launch, like the Gen device's
/// SIMD-width builds) in place of `launch.kernel`.
pub(crate) fn run_launch_with<T>(
    executor: &Executor,
    launch: &Launch<'_>,
    kernel: Arc<dyn GroupKernel>,
    schedule: impl FnOnce(&NdRange) -> Result<(Schedule, T), LaunchError>,
    observer: Option<Arc<dyn Observer>>,
    limits: Limits,
) -> Result<(NdRange, T), LaunchError> {
    let range = NdRange::new(launch.work_dim, launch.global_offset, launch.global_size, launch.local_size)?;
    let (schedule, extra) = schedule(&range)?;
    let name = launch.kernel.info.name.as_str();
    let job = Job::new(kernel, launch.args, launch.local_arg_sizes, range, schedule, observer.clone(), limits)?;
    if let Some(o) = &observer {
        o.kernel_begin(name, range.global, range.local);
    }
    let result = executor.execute(job);
    if let Some(o) = &observer {
        o.kernel_end(name);
    }
    result.map(|()| (range, extra))
}

#[cfg(test)]
mod base_tests {
    use crate::gen::GenConfig;
    use crate::Device;

    #[test]
    fn vectorizer_knobs_follow_intels_cpu_runtime() {
        use super::vectorizer_knobs;
        use softcl_compiler::Vectorizer as V;
        assert_eq!(vectorizer_knobs(None, None, 64), V::Auto { register_bytes: 64 });
        assert_eq!(vectorizer_knobs(Some("False"), Some("16"), 64), V::Off);
        assert_eq!(vectorizer_knobs(Some("True"), Some("1"), 64), V::Off);
        assert_eq!(vectorizer_knobs(Some("true"), Some("8"), 32), V::Forced { width: 8, register_bytes: 32 });
        assert_eq!(vectorizer_knobs(None, Some("0"), 16), V::Auto { register_bytes: 16 });
        assert!(matches!(vectorizer_knobs(None, Some("5"), 64), V::Invalid(_)));
        assert!(matches!(vectorizer_knobs(Some("maybe"), None, 64), V::Invalid(_)));
    }

    #[test]
    fn codegen_knobs_follow_the_readmes_table() {
        use super::codegen_knobs;
        use softcl_compiler::CodegenKnobs;
        let knobs =
            |vars: &[(&str, &str)]| codegen_knobs(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()));
        let default = CodegenKnobs::default();
        assert_eq!(knobs(&[]), default);
        assert!(default.prefetch && default.vector_math);
        assert_eq!(default.streaming_stores, Some(16 << 20));
        assert_eq!(knobs(&[("SOFTCL_PREFETCH", "0")]), CodegenKnobs { prefetch: false, ..default });
        assert_eq!(knobs(&[("SOFTCL_PREFETCH", "1")]), default);
        assert_eq!(knobs(&[("SOFTCL_STREAMING_STORES", "0")]), CodegenKnobs { streaming_stores: None, ..default });
        assert_eq!(knobs(&[("SOFTCL_STREAMING_STORES", "all")]), CodegenKnobs { streaming_stores: Some(0), ..default });
        assert_eq!(knobs(&[("SOFTCL_STREAMING_STORES", "yes")]), default);
        assert_eq!(knobs(&[("SOFTCL_VECMATH", "0")]), CodegenKnobs { vector_math: false, ..default });
        assert_eq!(knobs(&[("SOFTCL_VECMATH", "")]), default);
    }

    /// What `SOFTCL_GEN_CONFIG` changes in a build reaches the compiler through the target
    /// (the kernel cache keys by it): a configuration without fp64 hardware has a target of
    /// its own.
    #[test]
    fn gen_configurations_that_compile_differently_have_their_own_targets() {
        use crate::gen::GenDevice;
        let target = |name: &str| GenDevice::new(GenConfig::by_name(name).unwrap()).target().clone();
        assert_ne!(target("gen9-gt2"), target("gen11-gt2"));
        assert!(target("gen11-gt2").disabled_features.iter().any(|f| f.contains("fp64")));
        assert!(target("gen9-gt2").gen.is_some() && crate::cpu::CpuDevice::new().target().gen.is_none());
    }

    /// softcl_device_base leaves the hardware fields 0: every device must set each of them.
    #[test]
    fn every_device_sets_its_hardware_fields() {
        let mut infos = vec![crate::cpu::CpuDevice::new().info().clone()];
        for name in ["gen9-gt2", "gen9-gt3", "gen11-gt2", "xe-lp"] {
            let config = GenConfig::by_name(name).unwrap_or_else(|| panic!("configuration {name}"));
            infos.push(crate::gen::gen_device_info(&config));
        }
        for i in infos {
            let who = &i.name;
            assert!(!i.name.is_empty() && !i.vendor.is_empty(), "{who}: name and vendor");
            assert!(i.max_compute_units > 0 && i.max_work_group_size > 0, "{who}: compute limits");
            assert!(i.max_work_item_sizes.iter().all(|&n| n > 0), "{who}: item sizes");
            assert!(i.preferred_work_group_size_multiple > 0, "{who}: WG multiple");
            assert!(i.preferred_vector_widths.int > 0 && i.native_vector_widths.float > 0, "{who}: vector widths");
            assert!(
                i.global_mem_size > 0 && i.max_mem_alloc_size > 0 && i.max_constant_buffer_size > 0,
                "{who}: memory"
            );
            assert!(i.global_mem_cacheline_size > 0 && i.global_mem_cache_size > 0, "{who}: cache");
            assert!(i.local_mem_size > 0 && i.max_parameter_size > 0 && i.printf_buffer_size > 0, "{who}: limits");
            assert!(i.profiling_timer_resolution_ns > 0, "{who}: timer");
        }
    }
}
