//! The differential fuzzer: random UB-free OpenCL C kernels run on every configuration of
//! the driver (the CPU device scalar, at each forced vector width and at its heuristic
//! width; the Gen device at SIMD8, 16 and 32; PoCL when installed), compared with the scalar
//! run, and reduced when they differ.
//!
//! - [`rng`]: the fuzzer's own SplitMix64, so that a seed means the same kernel everywhere;
//! - [`ast`]: kernels as trees of statements, for the reducer;
//! - [`gen`], `stmt`, `expr`, `spaces` and `intel`: the generator (what it generates: its module documentation);
//! - [`run`]: configurations, kernel files, child processes and the comparison;
//! - [`reduce`]: the reducer.
//!
//! The `softcl-fuzz` binary drives them (`scripts/fuzz.sh`); `tests/fuzz.rs` runs the
//! regression corpus (`conformance/fuzz-corpus/*.cl`) in every configuration.

pub mod ast;
mod expr;
pub mod gen;
mod intel;
pub mod reduce;
pub mod rng;
pub mod run;
mod spaces;
mod stmt;
