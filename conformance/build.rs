//! Generates Rust bindings of the system's OpenCL 3.0 headers (package opencl-c-headers)
//! and links the ICD loader (libOpenCL.so, package ocl-icd-opencl-dev). The conformance
//! crate reaches SoftCL only through that loader, exactly as a user's program does.

use std::env;
use std::path::PathBuf;

use bindgen::callbacks::{IntKind, ParseCallbacks};

/// Gives the flag macros the type of the bitfield they are passed as, so that user code
/// needs no casts for the common cases; every other macro constant keeps bindgen's default
/// (u32 when non-negative, i32 when negative: the error codes are `cl_int`).
#[derive(Debug)]
struct ClMacroTypes;

const MEM_FLAGS: &[&str] = &[
    "CL_MEM_READ_WRITE",
    "CL_MEM_WRITE_ONLY",
    "CL_MEM_READ_ONLY",
    "CL_MEM_USE_HOST_PTR",
    "CL_MEM_ALLOC_HOST_PTR",
    "CL_MEM_COPY_HOST_PTR",
    "CL_MEM_HOST_WRITE_ONLY",
    "CL_MEM_HOST_READ_ONLY",
    "CL_MEM_HOST_NO_ACCESS",
    "CL_MEM_SVM_FINE_GRAIN_BUFFER",
    "CL_MEM_SVM_ATOMICS",
    "CL_MEM_KERNEL_READ_AND_WRITE",
];
const MAP_FLAGS: &[&str] = &["CL_MAP_READ", "CL_MAP_WRITE", "CL_MAP_WRITE_INVALIDATE_REGION"];
const QUEUE_PROPERTIES: &[&str] = &[
    "CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE",
    "CL_QUEUE_PROFILING_ENABLE",
    "CL_QUEUE_ON_DEVICE",
    "CL_QUEUE_ON_DEVICE_DEFAULT",
];

const EXECUTION_STATUS: &[&str] = &["CL_COMPLETE", "CL_RUNNING", "CL_SUBMITTED", "CL_QUEUED"];
const KERNEL_ARG_TYPE_QUALIFIERS: &[&str] = &[
    "CL_KERNEL_ARG_TYPE_NONE",
    "CL_KERNEL_ARG_TYPE_CONST",
    "CL_KERNEL_ARG_TYPE_RESTRICT",
    "CL_KERNEL_ARG_TYPE_VOLATILE",
    "CL_KERNEL_ARG_TYPE_PIPE",
];

impl ParseCallbacks for ClMacroTypes {
    fn int_macro(&self, name: &str, value: i64) -> Option<IntKind> {
        let custom = |name: &'static str, is_signed| Some(IntKind::Custom { name, is_signed });
        if name == "CL_SUCCESS"
            || (name.starts_with("CL_") && value < 0)
            || EXECUTION_STATUS.contains(&name)
            || name.starts_with("CL_BUILD_")
        {
            // Error codes, command execution status and build status are all cl_int.
            custom("cl_int", true)
        } else if KERNEL_ARG_TYPE_QUALIFIERS.contains(&name) {
            custom("cl_kernel_arg_type_qualifier", false)
        } else if name.starts_with("CL_DEVICE_TYPE_") {
            custom("cl_device_type", false)
        } else if MEM_FLAGS.contains(&name) {
            custom("cl_mem_flags", false)
        } else if MAP_FLAGS.contains(&name) {
            custom("cl_map_flags", false)
        } else if QUEUE_PROPERTIES.contains(&name) {
            custom("cl_command_queue_properties", false)
        } else {
            None
        }
    }
}

fn main() {
    println!("cargo:rustc-link-lib=OpenCL");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_DIR");

    // Where the driver is expected by default: <target dir>/release/libsoftcl.so, with the
    // target dir of this build (CARGO_TARGET_DIR if set, relative to the workspace root).
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("conformance/ lives inside the workspace").to_path_buf();
    let target_dir = match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    };
    println!(
        "cargo:rustc-env=SOFTCL_CONFORMANCE_DEFAULT_ICD_LIB={}",
        target_dir.join("release").join("libsoftcl.so").display()
    );
    println!("cargo:rustc-env=SOFTCL_CONFORMANCE_TARGET_DIR={}", target_dir.display());

    let bindings = bindgen::Builder::default()
        .header_contents("softcl_conformance_cl.h", "#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl.h>\n")
        .clang_arg("-DCL_TARGET_OPENCL_VERSION=300")
        .allowlist_function("cl.*")
        .allowlist_type("cl.*|_cl.*")
        .allowlist_var("CL_.*")
        .parse_callbacks(Box::new(ClMacroTypes))
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate_comments(false)
        .layout_tests(false)
        .derive_default(true)
        .generate()
        .expect(
            "bindgen could not read <CL/cl.h>: install opencl-c-headers and libclang1-15 \
             (LIBCLANG_PATH is set in .cargo/config.toml)",
        );

    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("cl_bindings.rs");
    bindings.write_to_file(&out).expect("cannot write the OpenCL bindings");
}
