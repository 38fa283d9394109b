//! Generates Rust declarations of the system's OpenCL 3.0 headers (package opencl-c-headers):
//! the API types and constants, and the ICD dispatch table of CL/cl_icd.h. The path of the
//! generated file is passed on to the icd crate's build script (DEP_SOFTCL_CL_HEADERS_BINDINGS)
//! so it can generate a function for every dispatch slot.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("cl_bindings.rs");
    let header = "#define CL_TARGET_OPENCL_VERSION 300\n\
                  #define CL_USE_DEPRECATED_OPENCL_1_0_APIS\n\
                  #define CL_USE_DEPRECATED_OPENCL_1_1_APIS\n\
                  #define CL_USE_DEPRECATED_OPENCL_1_2_APIS\n\
                  #define CL_USE_DEPRECATED_OPENCL_2_0_APIS\n\
                  #define CL_USE_DEPRECATED_OPENCL_2_1_APIS\n\
                  #define CL_USE_DEPRECATED_OPENCL_2_2_APIS\n\
                  #include <CL/cl_icd.h>\n\
                  #include <CL/cl_ext.h>\n";
    let bindings = bindgen::Builder::default()
        .header_contents("softcl_cl.h", header)
        .allowlist_type("cl_.*|_cl_.*")
        .allowlist_var("CL_.*")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen could not read the OpenCL headers (install opencl-c-headers): {e}"));
    bindings.write_to_file(&out).expect("write cl_bindings.rs");
    println!("cargo:bindings={}", out.display());
    println!("cargo:rerun-if-changed=build.rs");
    // The commit the driver is built from, part of the kernel cache's driver identity
    // (program_cache.rs), which also holds the loaded library's size and mtime.
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SOFTCL_GIT_COMMIT={commit}");
}
