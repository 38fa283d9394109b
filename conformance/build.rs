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

    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    bindings.write_to_file(out_dir.join("cl_bindings.rs")).expect("cannot write the OpenCL bindings");
    write_dispatch_slots(&out_dir.join("icd_dispatch_slots.rs"));
}

/// `ICD_DISPATCH_SLOTS`: the field names of `cl_icd_dispatch` in `<CL/cl_icd.h>`, in order,
/// for tests that look at a driver's dispatch table (the first word of every cl_khr_icd
/// handle). The struct is a flat list of `cl_api_X X;` fields without conditionals.
fn write_dispatch_slots(out: &std::path::Path) {
    const HEADER: &str = "/usr/include/CL/cl_icd.h";
    println!("cargo:rerun-if-changed={HEADER}");
    let text = std::fs::read_to_string(HEADER).expect("read <CL/cl_icd.h> (package opencl-c-headers)");
    let body = text
        .split_once("typedef struct _cl_icd_dispatch {")
        .and_then(|(_, rest)| rest.split_once("} cl_icd_dispatch;"))
        .map(|(body, _)| body)
        .expect("cl_icd_dispatch in <CL/cl_icd.h>");
    // Comments out, then one field per `;`: its name is the last word.
    let mut plain = String::new();
    let mut rest = body;
    while let Some((before, after)) = rest.split_once("/*") {
        plain.push_str(before);
        rest = after.split_once("*/").map_or("", |(_, a)| a);
    }
    plain.push_str(rest);
    let names: Vec<&str> = plain.split(';').filter_map(|field| field.split_whitespace().last()).collect();
    assert!(names.len() > 100 && names[0] == "clGetPlatformIDs", "unexpected cl_icd_dispatch: {names:?}");
    let list: String = names.iter().map(|n| format!("    \"{n}\",\n")).collect();
    std::fs::write(
        out,
        format!(
            "/// The slots of `cl_icd_dispatch`, in order.\npub const ICD_DISPATCH_SLOTS: &[&str] = &[\n{list}];\n"
        ),
    )
    .expect("write icd_dispatch_slots.rs");
}
