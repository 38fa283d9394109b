//! The contract between a Gen-instrumented build of a kernel and the Gen performance model.
//!
//! The modelled Gen device runs a kernel vectorized at its SIMD width (8, 16 or 32): one call
//! of the work-group entry per hardware thread, each vector memory access one *message*.
//! A Gen-instrumented build (`Target::gen`) counts in generated code, with no callback per
//! access: every load, store and atomic in the kernel is a *site* with its
//! [`SiteCounters`], every block a [`BlockCounters`], kept in the hardware thread's counter
//! array (`WorkGroupContext::gen_counters`: `sites.len()` [`SiteCounters`] followed by
//! `blocks.len()` [`BlockCounters`]). The device sums the arrays per work-group and per
//! launch and hands them, with [`GenKernelInfo`], to the model in `device-model/src/gen/`.
//!
//! The per-message rules (shared/reference/gen-model.md) that generated code applies:
//! - global and constant: `lines` = distinct 64-byte lines touched by the active lanes;
//! - local (SLM, 16 banks of 4 bytes, bank = (addr / 4) mod 16): reads cost
//!   max(ceil(active / 16), most distinct dwords in one bank), writes
//!   max(ceil(active / 16), most lanes writing to one bank); conflict cycles are the excess
//!   over ceil(active / 16);
//! - private memory that lives in memory (dynamically indexed arrays): counted as global
//!   (scratch) traffic with `space` = Private.

use crate::kernel_info::AddressSpace;

/// Where a site or block comes from in the program's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SourceLoc {
    /// Index into [`GenKernelInfo::source_files`].
    pub file: u32,
    /// 1-based line; 0 = unknown.
    pub line: u32,
    /// 1-based column; 0 = unknown.
    pub column: u32,
}

/// What a message site does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// One load, store or atomic of the kernel (after inlining).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenSite {
    pub space: AddressSpace,
    pub kind: AccessKind,
    /// Bytes each lane moves (4 for an int, 16 for a float4 access).
    pub bytes_per_lane: u32,
    pub loc: Option<SourceLoc>,
}

/// One block of the instrumented kernel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GenBlock {
    /// Gen instructions one execution of the block issues per hardware thread (the model's
    /// estimate from the IR: one per scalar operation, vector operations by their lanes).
    pub instructions: u32,
    /// FP32 floating-point operations per lane per execution (an FMA counts 2); FP64 ones are
    /// counted separately.
    pub flops: u32,
    pub flops_f64: u32,
    /// The block ends in a branch whose condition differs between lanes.
    pub divergent_branch: bool,
    pub loc: Option<SourceLoc>,
}

/// Register pressure the Gen SIMD choice needs: bytes of values live at the worst point,
/// split into uniform ones (one copy per hardware thread) and varying ones (one per lane);
/// and the other facts that choice reads (`vectorize::pressure` computes it all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegisterPressure {
    pub uniform_bytes: u32,
    pub varying_bytes: u32,
    /// A loop with a branch whose condition differs between work-items (SIMD32 skipped).
    pub divergent_loops: bool,
    /// The kernel uses sub-group built-ins (SIMD32 skipped).
    pub subgroup_functions: bool,
    /// IR instructions of the kernel after inlining (very large kernels skip SIMD32).
    pub instructions: u32,
}

/// What a Gen-instrumented build tells the model about one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GenKernelInfo {
    /// The SIMD width it was compiled for.
    pub simd: u32,
    pub sites: Vec<GenSite>,
    pub blocks: Vec<GenBlock>,
    /// The program's source files as named by the front end (the first is the program's
    /// source; headers follow).
    pub source_files: Vec<String>,
    /// The text of each of `source_files` where known (`ir::Module::source_texts`), for the
    /// report's source listing.
    pub source_texts: Vec<Option<std::sync::Arc<str>>>,
}

impl GenKernelInfo {
    /// Takes the source file names and texts of the module the kernel was built from.
    pub fn set_sources(&mut self, module: &crate::ir::Module) {
        self.source_files = module.source_files.clone();
        self.source_texts = module.source_texts.clone();
    }
}

/// Counters of one site, summed over the messages of a hardware thread.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SiteCounters {
    /// Executions with at least one active lane.
    pub messages: u64,
    /// Active lanes summed over the messages.
    pub active_lanes: u64,
    /// Global / constant / private: distinct 64-byte lines, summed over the messages.
    pub l3_lines: u64,
    /// Bytes the active lanes asked for (active lanes x bytes per lane).
    pub useful_bytes: u64,
    /// Local: cycles by the bank rules, summed over the messages.
    pub slm_cycles: u64,
    /// Local: cycles beyond ceil(active / 16), summed over the messages.
    pub slm_conflict_cycles: u64,
    /// Local: the most ways (dwords or lanes) one bank saw in one message.
    pub worst_bank_ways: u64,
}

/// Counters of one block, summed over a hardware thread's executions of it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockCounters {
    /// Executions with at least one active lane.
    pub executions: u64,
    /// Active lanes summed over the executions (lane utilisation = active / (executions x simd)).
    pub active_lanes: u64,
}
