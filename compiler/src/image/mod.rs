//! Images as OpenCL C reads and writes them, in plain Rust: formats and their conversions
//! ([`format`]) and sampling ([`sample`]). The kernel image built-ins call these through
//! small `extern "C"` functions (`back::imagelib`, as `back::mathlib` does for math
//! built-ins), and the runtime uses the same conversions for `clEnqueueFillImage`, so that a
//! pixel means the same thing on the host and in a kernel, on both devices.

pub mod format;
pub mod sample;

pub use format::{ChannelOrder, ChannelType, Components, Format, Kind};
pub use sample::{Addressing, Dim, Image, Sampler};

#[cfg(test)]
mod tests;
