//! The OpenCL entry points, one file per API area. Every `pub extern "C" fn cl*` here is wired
//! into the dispatch table by build.rs; slots without one get a generated function returning
//! an honest error (listed in docs/API_STATUS.md).

pub mod context;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod image;
pub mod kernel;
pub mod memory;
pub mod platform;
pub mod program;
pub mod queue;
pub mod sampler;
pub mod svm;
