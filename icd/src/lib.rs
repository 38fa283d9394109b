//! libsoftcl.so: the SoftCL OpenCL driver as the ICD loader sees it.
//!
//! Exported symbols are only the loader's entry points (clIcdGetPlatformIDsKHR,
//! clGetExtensionFunctionAddress, clGetExtensionFunctionAddressForPlatform and the
//! cl_khr_icd 2.0 pair), defined in `exports` as wrappers of unexported functions in `api/`;
//! every other function is reached through the dispatch table that starts each handle, whose
//! slots all hold unexported functions (see `exports` for why). Each entry point under `api/` validates its arguments, runs plain Rust
//! logic returning `Result<_, cl_int>` and turns the result into the C return convention
//! through `entry`, which also catches panics.

// Entry points carry their OpenCL C names.
#![allow(non_snake_case)]
// Entry points are C functions whose pointer arguments the OpenCL API contract governs; they
// are dereferenced only in ptr.rs, handles.rs and info.rs, each place with a SAFETY note.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod api;
pub mod dispatch;
pub mod entry;
pub mod exports;
pub mod handles;
pub mod info;
pub mod ptr;

use softcl_runtime::platform::Platform;
use std::sync::{Arc, Once};

/// The platform, with our dispatch table installed before any object is created.
pub fn platform() -> &'static Arc<Platform> {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| softcl_runtime::handle::install_dispatch_table(dispatch::table_address()));
    softcl_runtime::platform::platform()
}
