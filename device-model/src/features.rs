//! Optional OpenCL features and extensions, derived from a [`DeviceInfo`]'s capability flags.
//!
//! This is the single place that decides which optional `__opencl_c_*` features and `cl_khr_*`
//! extensions a device advertises and which ones its compiler [`Target`] turns off. Both come
//! from the same flags (`double_fp_config`, `images`, `atomic_memory_capabilities`, ...), so
//! what clGetDeviceInfo reports and what the compiler accepts cannot disagree: the conformance
//! suite checks exactly that (each feature macro is defined iff the device query says so).
//!
//! [`Target`]: softcl_compiler::Target

use crate::info::{DeviceInfo, FpConfig, NameVersion};

/// CL_DEVICE_DOUBLE_FP_CONFIG of a device with fp64 (the OpenCL 3.0 minimum for a device
/// with cl_khr_fp64, which SoftCL meets on the host: IEEE 754 doubles with denormals, every
/// rounding mode and fused multiply-add). Setting `double_fp_config` to this turns on
/// `cl_khr_fp64` and `__opencl_c_fp64`.
pub fn fp64_config() -> FpConfig {
    // The host computes doubles with the same IEEE 754 properties as floats.
    crate::common::fp32_config()
}

/// Extensions every SoftCL device supports whatever its flags (the OpenCL 1.0 atomics and
/// byte-addressable stores are core since 1.1 but still listed, as every implementation does;
/// `cl_khr_il_program` because programs are built from SPIR-V).
pub const BASE_EXTENSIONS: &[&str] = &[
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_il_program",
];

/// The `cl_khr_subgroup_*` extensions a device with sub-groups offers: the compiler has every
/// function of these, for every type they name (compiler `back::vector::sub_groups`).
pub const SUB_GROUP_EXTENSIONS: [&str; 8] = [
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
];

/// Intel's sub-group extensions, offered with sub-groups: shuffles of every type
/// (`intel_sub_group_shuffle`, `_down`, `_up`, `_xor`), block reads and writes on buffers
/// and 2D images of 32-, 16- and 8-bit data, `intel_reqd_sub_group_size` and the SPIR-V
/// instructions of `SPV_INTEL_subgroups` (compiler `front::intel_sub_groups`). clang-15 knows
/// none of their functions: the compiler declares them for a source that calls them.
pub const INTEL_SUB_GROUP_EXTENSIONS: [&str; 5] = [
    "cl_intel_subgroups",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_char",
    "cl_intel_required_subgroup_size",
    "cl_intel_spirv_subgroups",
];

/// Every optional OpenCL C feature and extension that clang's OpenCL front end can enable for
/// the `spir64` target (clang enables all of them for SPIR unless told otherwise), but for
/// [`SUB_GROUP_EXTENSIONS`] ([`known_optional`] lists both). Whatever of these a device does
/// not advertise goes into `Target::disabled_features`.
pub const KNOWN_OPTIONAL: &[&str] = &[
    // OpenCL C 3.0 optional features.
    "__opencl_c_fp64",
    "__opencl_c_images",
    "__opencl_c_3d_image_writes",
    "__opencl_c_read_write_images",
    "__opencl_c_generic_address_space",
    "__opencl_c_pipes",
    "__opencl_c_device_enqueue",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    // Optional extensions.
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_3d_image_writes",
    "cl_khr_depth_images",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_gl_msaa_sharing",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_subgroups",
    // Defined by clang-15's opencl-c-base.h for SPIR whatever -cl-ext says (as are
    // SUB_GROUP_EXTENSIONS): the compiler undefines those the device does not advertise.
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_srgb_image_writes",
    "cl_ext_float_atomics",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "__opencl_c_ext_fp16_global_atomic_load_store",
    "__opencl_c_ext_fp16_local_atomic_load_store",
    "__opencl_c_ext_fp16_global_atomic_add",
    "__opencl_c_ext_fp16_local_atomic_add",
    "__opencl_c_ext_fp16_global_atomic_min_max",
    "__opencl_c_ext_fp16_local_atomic_min_max",
    "__opencl_c_ext_fp32_global_atomic_add",
    "__opencl_c_ext_fp32_local_atomic_add",
    "__opencl_c_ext_fp32_global_atomic_min_max",
    "__opencl_c_ext_fp32_local_atomic_min_max",
    "__opencl_c_ext_fp64_global_atomic_add",
    "__opencl_c_ext_fp64_local_atomic_add",
    "__opencl_c_ext_fp64_global_atomic_min_max",
    "__opencl_c_ext_fp64_local_atomic_min_max",
];

/// [`KNOWN_OPTIONAL`], [`SUB_GROUP_EXTENSIONS`] and [`INTEL_SUB_GROUP_EXTENSIONS`]: every
/// name the compiler may turn off.
pub fn known_optional() -> impl Iterator<Item = &'static str> {
    KNOWN_OPTIONAL.iter().chain(SUB_GROUP_EXTENSIONS.iter()).chain(INTEL_SUB_GROUP_EXTENSIONS.iter()).copied()
}

/// The `__opencl_c_*` features the device supports, from its flags.
///
/// `__opencl_c_int64` is always present (full profile); 3D image writes come with images.
/// Pipes and device-side enqueue have no flag in [`DeviceInfo`] yet and are never advertised.
pub fn opencl_c_features(info: &DeviceInfo) -> Vec<NameVersion> {
    let mem = &info.atomic_memory_capabilities;
    let images = info.images.is_some();
    let read_write_images = info.images.is_some_and(|i| i.max_read_write_image_args > 0);
    let fp64 = info.double_fp_config.is_some();
    let fp32_atomics = info.float_atomics;
    let fp64_atomics = info.float_atomics && fp64;
    let candidates: [(&str, bool); 21] = [
        ("__opencl_c_int64", true),
        ("__opencl_c_fp64", info.double_fp_config.is_some()),
        ("__opencl_c_images", images),
        ("__opencl_c_3d_image_writes", images),
        ("__opencl_c_read_write_images", read_write_images),
        ("__opencl_c_generic_address_space", info.generic_address_space_support),
        ("__opencl_c_program_scope_global_variables", info.program_scope_global_variables),
        ("__opencl_c_subgroups", !info.sub_group_sizes.is_empty() && info.max_num_sub_groups > 0),
        ("__opencl_c_work_group_collective_functions", info.work_group_collective_functions_support),
        ("__opencl_c_atomic_order_acq_rel", mem.order_acq_rel),
        ("__opencl_c_atomic_order_seq_cst", mem.order_seq_cst),
        ("__opencl_c_atomic_scope_device", mem.scope_device),
        ("__opencl_c_atomic_scope_all_devices", mem.scope_all_devices),
        // cl_ext_float_atomics (`float_atomic_capabilities`).
        ("__opencl_c_ext_fp32_global_atomic_add", fp32_atomics),
        ("__opencl_c_ext_fp32_local_atomic_add", fp32_atomics),
        ("__opencl_c_ext_fp32_global_atomic_min_max", fp32_atomics),
        ("__opencl_c_ext_fp32_local_atomic_min_max", fp32_atomics),
        ("__opencl_c_ext_fp64_global_atomic_add", fp64_atomics),
        ("__opencl_c_ext_fp64_local_atomic_add", fp64_atomics),
        ("__opencl_c_ext_fp64_global_atomic_min_max", fp64_atomics),
        ("__opencl_c_ext_fp64_local_atomic_min_max", fp64_atomics),
    ];
    candidates
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| {
            // The extension's features are of its version 1.0.0.
            let major = if name.starts_with("__opencl_c_ext_") { 1 } else { 3 };
            NameVersion::new(name, major, 0, 0)
        })
        .collect()
}

/// The extensions the device supports: [`BASE_EXTENSIONS`] plus those its flags imply.
pub fn extensions(info: &DeviceInfo) -> Vec<NameVersion> {
    let images = info.images.is_some();
    let sub_groups = !info.sub_group_sizes.is_empty() && info.max_num_sub_groups > 0;
    let conditional: [(&str, bool); 9] = [
        ("cl_khr_image2d_from_buffer", images),
        ("cl_khr_3d_image_writes", images),
        ("cl_khr_depth_images", images),
        ("cl_khr_fp64", info.double_fp_config.is_some()),
        ("cl_khr_fp16", info.half_fp_config.is_some()),
        ("cl_khr_int64_base_atomics", info.int64_atomics),
        ("cl_khr_int64_extended_atomics", info.int64_atomics),
        ("cl_ext_float_atomics", info.float_atomics),
        // The extension (unlike OpenCL 3.0's optional feature) requires independent forward
        // progress of the sub-groups of a work-group, which SoftCL's devices, running a
        // work-group's packets one after the other, do not have.
        ("cl_khr_subgroups", sub_groups && info.sub_group_independent_forward_progress),
    ];
    BASE_EXTENSIONS
        .iter()
        .copied()
        .chain(conditional.iter().filter(|(_, on)| *on).map(|(name, _)| *name))
        .chain(SUB_GROUP_EXTENSIONS.iter().copied().filter(|_| sub_groups))
        .chain(INTEL_SUB_GROUP_EXTENSIONS.iter().copied().filter(|_| sub_groups))
        .map(|name| NameVersion::new(name, 1, 0, 0))
        .collect()
}

/// The `-cl-ext` names the compiler must turn off for this device: every known optional
/// feature or extension that `info` does not advertise.
pub fn disabled_features(info: &DeviceInfo) -> Vec<String> {
    known_optional().filter(|name| !advertises(info, name)).map(str::to_string).collect()
}

/// Whether `info` lists `name` among its extensions or OpenCL C features.
pub fn advertises(info: &DeviceInfo, name: &str) -> bool {
    info.extensions.iter().chain(&info.opencl_c_features).any(|nv| nv.name == name)
}

/// CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT and CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT
/// of `info` (cl_ext_float_atomics): load and store, add, min and max, in global and local
/// memory, where the device has float atomics (and, for doubles, fp64); 0 otherwise.
pub fn float_atomic_capabilities(info: &DeviceInfo) -> (u64, u64) {
    // GLOBAL_FP_ATOMIC_LOAD_STORE | _ADD | _MIN_MAX, and LOCAL_ the same (bits 16-18).
    let all: u64 = 0b111 | (0b111 << 16);
    let single = if info.float_atomics { all } else { 0 };
    let double = if info.float_atomics && info.double_fp_config.is_some() { all } else { 0 };
    (single, double)
}

/// Fills `opencl_c_features` and `extensions` from the flags of `info`.
pub fn derive_feature_lists(info: &mut DeviceInfo) {
    info.opencl_c_features = opencl_c_features(info);
    info.extensions = extensions(info);
}

/// The extension string (CL_DEVICE_EXTENSIONS): names separated by single spaces.
pub fn extension_string(info: &DeviceInfo) -> String {
    info.extensions.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CpuDevice, Device, FpConfig, GenDevice};

    /// What the brief for both devices requires the compiler to reject.
    const MUST_BE_DISABLED: &[&str] = &[
        "cl_khr_fp16",
        "__opencl_c_pipes",
        "__opencl_c_device_enqueue",
        // Sub-groups are OpenCL 3.0's feature, without independent forward progress.
        "cl_khr_subgroups",
        "cl_khr_integer_dot_product",
    ];

    fn check_consistent(info: &DeviceInfo, disabled: &[String]) {
        for name in known_optional() {
            assert_ne!(advertises(info, name), disabled.iter().any(|d| d == name), "{name}");
        }
        let fp64 = info.double_fp_config.is_some();
        assert_eq!(advertises(info, "cl_khr_fp64"), fp64);
        assert_eq!(advertises(info, "__opencl_c_fp64"), fp64);
        assert_eq!(advertises(info, "cl_khr_fp16"), info.half_fp_config.is_some());
        assert_eq!(advertises(info, "__opencl_c_images"), info.images.is_some());
        let mem = info.atomic_memory_capabilities;
        assert_eq!(advertises(info, "__opencl_c_atomic_scope_device"), mem.scope_device);
        assert_eq!(advertises(info, "__opencl_c_atomic_order_seq_cst"), mem.order_seq_cst);
        assert!(advertises(info, "__opencl_c_int64"));
    }

    #[test]
    fn devices_advertise_exactly_what_the_compiler_accepts() {
        let devices: Vec<Box<dyn Device>> = vec![Box::new(CpuDevice::new()), Box::new(GenDevice::default())];
        for dev in devices {
            let info = dev.info();
            let disabled = &dev.target().disabled_features;
            check_consistent(info, disabled);
            // Both devices have images (and so the image features).
            assert!(info.images.is_some());
            for name in ["__opencl_c_images", "__opencl_c_3d_image_writes", "__opencl_c_read_write_images"] {
                assert!(!disabled.iter().any(|d| d == name), "{name} disabled for {}", info.name);
            }
            for name in MUST_BE_DISABLED {
                assert!(disabled.iter().any(|d| d == name), "{name} not disabled for {}", info.name);
            }
            let ext: Vec<_> = info.extensions.iter().map(|e| e.name.as_str()).collect();
            let image_ext = ["cl_khr_image2d_from_buffer", "cl_khr_3d_image_writes", "cl_khr_depth_images"];
            let with_fp64: Vec<_> = BASE_EXTENSIONS
                .iter()
                .copied()
                .chain(image_ext)
                .chain(["cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"])
                .chain(["cl_ext_float_atomics"])
                .chain(SUB_GROUP_EXTENSIONS)
                .chain(INTEL_SUB_GROUP_EXTENSIONS)
                .collect();
            assert_eq!(ext, with_fp64);
            assert_eq!(extension_string(info).split(' ').count(), with_fp64.len());
            let feats: Vec<_> = info.opencl_c_features.iter().map(|e| e.name.as_str()).collect();
            let image_feats = ["__opencl_c_images", "__opencl_c_3d_image_writes", "__opencl_c_read_write_images"];
            let expected: Vec<_> = ["__opencl_c_int64", "__opencl_c_fp64"]
                .into_iter()
                .chain(image_feats)
                .chain(["__opencl_c_generic_address_space", "__opencl_c_program_scope_global_variables"])
                .chain(["__opencl_c_subgroups", "__opencl_c_work_group_collective_functions"])
                .chain([
                    "__opencl_c_atomic_order_acq_rel",
                    "__opencl_c_atomic_order_seq_cst",
                    "__opencl_c_atomic_scope_device",
                    "__opencl_c_atomic_scope_all_devices",
                ])
                .chain(["fp32", "fp64"].into_iter().flat_map(|t| {
                    ["global_atomic_add", "local_atomic_add", "global_atomic_min_max", "local_atomic_min_max"]
                        .map(|f| &*format!("__opencl_c_ext_{t}_{f}").leak())
                }))
                .collect();
            assert_eq!(feats, expected);
            assert_eq!(info.double_fp_config, Some(fp64_config()));
            assert!(info.preferred_vector_widths.double > 0 && info.native_vector_widths.double > 0);
            let mem = info.atomic_memory_capabilities;
            assert!(mem.order_relaxed && mem.scope_work_group);
            let fence = info.atomic_fence_capabilities;
            assert!(fence.order_relaxed && fence.order_acq_rel && fence.scope_work_group);
        }
    }

    /// Gen11 and Xe-LP have no fp64 hardware: neither the extension, the feature, the config
    /// nor a double vector width, and the compiler rejects doubles.
    #[test]
    fn no_fp64_without_the_hardware() {
        use crate::gen::GenConfig;
        for config in [GenConfig::gen11_gt2(), GenConfig::xe_lp()] {
            let dev = GenDevice::new(config);
            let info = dev.info();
            check_consistent(info, &dev.target().disabled_features);
            assert!(info.double_fp_config.is_none(), "{}", info.name);
            assert_eq!((info.preferred_vector_widths.double, info.native_vector_widths.double), (0, 0));
            for name in ["cl_khr_fp64", "__opencl_c_fp64"] {
                assert!(dev.target().disabled_features.iter().any(|d| d == name), "{name} on {}", info.name);
            }
        }
        let gt3 = GenDevice::new(GenConfig::gen9_gt3());
        assert!(advertises(gt3.info(), "cl_khr_fp64") && gt3.info().preferred_vector_widths.double == 1);
    }

    #[test]
    fn flags_switch_features_on() {
        let mut info = CpuDevice::new().info().clone();
        info.double_fp_config = Some(FpConfig::default());
        info.sub_group_sizes = vec![8];
        info.max_num_sub_groups = 1;
        info.sub_group_independent_forward_progress = true;
        derive_feature_lists(&mut info);
        let disabled = disabled_features(&info);
        check_consistent(&info, &disabled);
        for name in
            ["cl_khr_fp64", "__opencl_c_fp64", "cl_khr_subgroups", "__opencl_c_subgroups", "cl_khr_subgroup_ballot"]
        {
            assert!(advertises(&info, name) && !disabled.iter().any(|d| d == name), "{name}");
        }
    }
}
