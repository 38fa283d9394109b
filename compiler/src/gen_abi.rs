//! The contract between a Gen-instrumented build of a kernel and the Gen performance model.
//!
//! The modelled Gen device runs a kernel vectorized at its SIMD width (8, 16 or 32): one call
//! of the work-group entry per hardware thread, each vector memory access one *message*.
//! A Gen-instrumented build (`Target::gen`) counts in generated code, with no callback per
//! access: every load, store and atomic in the kernel is a *site* with its
//! [`SiteCounters`], every block a [`BlockCounters`], kept in the hardware thread's counter
//! array (`WorkGroupContext::gen_counters`: [`SITE_WORDS`] counters per site, counter by
//! counter ([`site_word_index`]: the sites of a block, numbered in order, update
//! consecutive words, one vector addition), then [`BLOCK_WORDS`] per block, then one word
//! per image site: its useful bytes ([`useful_bytes_word`])). The device
//! sums the arrays per work-group and per launch ([`add_counters`]) and hands them, with
//! [`GenKernelInfo`], to the model in
//! `device-model/src/gen/`, which reads them with [`GenKernelInfo::site_counters`] and
//! [`GenKernelInfo::block_counters`].
//!
//! A site runs once per execution of its block, under the block's mask, so its messages,
//! active lanes and useful bytes are its block's executions, active lanes, and active lanes
//! x bytes per lane: the array holds only what the lanes' addresses decide (L3 lines, SLM
//! cycles, conflict cycles, worst bank ways). Counting those three per site as well cost
//! three more additions to memory per message, and a kernel with a thousand messages took
//! seconds more to compile. An image read or write is the exception: a lane moves one pixel
//! of the image bound at run time (1 to 16 bytes by its format), so its useful bytes (active
//! lanes x pixel bytes) are counted, in a word of their own after the blocks'.
//!
//! The per-message rules (shared/reference/gen-model.md) that generated code applies:
//! - global and constant: `lines` = distinct 64-byte lines touched by the active lanes;
//! - local (SLM, 16 banks of 4 bytes, bank = (addr / 4) mod 16): reads cost
//!   max(ceil(active / 16), most distinct dwords in one bank), writes
//!   max(ceil(active / 16), most lanes writing to one bank); conflict cycles are the excess
//!   over ceil(active / 16). A lane of a wider access (int2, float4: k dwords) reads or
//!   writes its k consecutive dwords, each in its bank: the floor is ceil(active x k / 16)
//!   (64 bytes a clock), reads count the distinct dwords of all lanes per bank, writes every
//!   lane's dwords per bank;
//! - private memory that lives in memory (dynamically indexed arrays): counted as global
//!   (scratch) traffic with `space` = Private;
//! - a sub-group block read or write ([`GenSite::sub_group_block`]): the whole block's lines, as the
//!   hardware's block messages move it, in messages of at most [`BLOCK_MESSAGE_BYTES`].

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

/// One load, store or atomic of the kernel (after inlining), or an image read or write (a
/// global load or store of one pixel per lane; its lines are its pixels').
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenSite {
    /// Index into [`GenKernelInfo::blocks`] of the block the site is in.
    pub block: u32,
    pub space: AddressSpace,
    pub kind: AccessKind,
    /// Bytes each lane moves (4 for an int, 16 for a float4 access); 0 for an image read or
    /// write ([`GenSite::is_image`]), whose lanes move a pixel of the image bound at run time
    /// (its useful bytes are counted: [`useful_bytes_word`]).
    pub bytes_per_lane: u32,
    pub loc: Option<SourceLoc>,
    /// The load, atomic and image-read sites of the same block whose results this site's
    /// operands (its address, coordinates or stored value) are computed from, the nearest
    /// on each path: the thread cannot send this message before their data has arrived. The
    /// model's dependency chains (independent messages overlap their latency).
    pub waits_for: Vec<u32>,
    /// Which lanes share the site's address, as far as the compiler can tell: what
    /// serialises an atomic.
    pub same_address: SameAddress,
    /// A global or constant site's address as a step in bytes per local id of each
    /// dimension, the rest the same for every work-item of a work-group (`a[y * w + x]` of
    /// ints: `[4, 4w, 0]`, `w` a kernel argument), each step a sum of terms known at launch
    /// (`passes::gen_strides`); `None` when it is not that (a gather, a private or SLM
    /// site). What the model re-counts the site's lines from for another work-group shape.
    pub lane_strides: Option<[Vec<StrideTerm>; 3]>,
    /// A sub-group block read or write (`intel_sub_group_block_read4` ...: the IR's
    /// `BlockPart` accesses, one site for all parts): each lane moves `bytes_per_lane` (the
    /// parts' elements), and the hardware thread's message is the whole block, `simd x
    /// bytes_per_lane` contiguous bytes from the block's base, whatever the mask: its lines
    /// are the block's, its messages those of at most [`BLOCK_MESSAGE_BYTES`] it takes
    /// ([`GenSite::messages_per_execution`]).
    pub sub_group_block: bool,
}

/// The most bytes one block message moves (Gen's OWord block read and write: 8 OWords).
pub const BLOCK_MESSAGE_BYTES: u32 = 128;

/// A value known when the kernel is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaunchValue {
    /// Scalar integer argument `k` of the kernel.
    Arg(u32),
    GlobalSize(u8),
    LocalSize(u8),
}

/// A constant times a launch value (`None`: 1).
pub type StrideTerm = (i64, Option<LaunchValue>);

/// Which lanes of a site's messages share one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SameAddress {
    /// Nothing is known (a gather, a scatter, a histogram's bins).
    #[default]
    Unknown,
    /// Every lane of a message: the address is uniform in the hardware thread (a
    /// work-group's counter, say).
    Message,
    /// Every lane of the launch: the address comes from the kernel's arguments and
    /// constants only (one global counter).
    Launch,
}

impl GenSite {
    /// The messages one execution of the site's block sends at `simd`: 1, or a block's bytes
    /// in messages of at most [`BLOCK_MESSAGE_BYTES`].
    pub fn messages_per_execution(&self, simd: u32) -> u64 {
        if self.sub_group_block {
            u64::from(simd.saturating_mul(self.bytes_per_lane).div_ceil(BLOCK_MESSAGE_BYTES).max(1))
        } else {
            1
        }
    }

    /// An image read or write: its useful bytes are counted at run time.
    pub fn is_image(&self) -> bool {
        self.bytes_per_lane == 0
    }

    /// The bytes an active lane of the site moved on average over counters `c`: its
    /// `bytes_per_lane`, or for an image access the pixel size of the images bound (0 if it
    /// never ran).
    pub fn lane_bytes(&self, c: &SiteCounters) -> u32 {
        if self.is_image() {
            u32::try_from(c.useful_bytes.checked_div(c.active_lanes).unwrap_or(0)).unwrap_or(u32::MAX)
        } else {
            self.bytes_per_lane
        }
    }
}

/// Words of the counter array of a kernel with `sites` and `blocks` blocks.
pub fn counter_words(sites: &[GenSite], blocks: usize) -> usize {
    sites.len() * SITE_WORDS + blocks * BLOCK_WORDS + sites.iter().filter(|s| s.is_image()).count()
}

/// Where the useful bytes of site `k` of `sites` (a kernel with `blocks` blocks) are counted:
/// for an image site, the word after the blocks' counters numbered by the image sites before
/// it; `None` for other sites (their useful bytes are active lanes x bytes per lane).
pub fn useful_bytes_word(sites: &[GenSite], blocks: usize, k: usize) -> Option<usize> {
    sites.get(k).filter(|s| s.is_image())?;
    let before = sites[..k].iter().filter(|s| s.is_image()).count();
    Some(sites.len() * SITE_WORDS + blocks * BLOCK_WORDS + before)
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
    /// Sub-group shuffles one execution makes (each moves a value between the lanes'
    /// registers: in `instructions`, no memory message).
    pub shuffles: u32,
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
    /// Bytes per work-item of the private arrays indexed at run time (a register tile
    /// indexed by loop counters): in registers at a width where they fit
    /// ([`private_arrays_in_registers`]), scratch memory otherwise.
    pub private_array_bytes: u32,
}

/// Bytes of one hardware thread's general register file on every modelled configuration
/// (128 registers of 32 bytes).
pub const GRF_BYTES: u64 = 4096;

/// Whether private arrays of `bytes` per work-item indexed at run time live in registers
/// at SIMD `simd`: the guide ("in some cases, [the compiler] can map dynamically-indexed
/// private arrays in registers") leaves the limit to the compiler; the model keeps them
/// there while all lanes' copies take at most three quarters of the GRF (an estimate), the
/// rest for the kernel's other values (the SIMD choice checks that everything fits). Beyond
/// it they are scratch memory.
pub fn private_arrays_in_registers(bytes: u64, simd: u32) -> bool {
    bytes > 0 && bytes * u64::from(simd) <= GRF_BYTES * 3 / 4
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
    /// The kernel's work-items do not depend on the work-group shape: no local id, group id,
    /// local size or sub-group query, no barrier and no SLM. Another shape of the same size
    /// computes the same thing, so the model may suggest one.
    pub shape_free: bool,
}

/// General counts per variant function that keep a memo of their last call (the lowering's
/// `GenLower::call_helper`), in the words after the counters: per worker thread, kept
/// across its work-groups, never summed or given to the model.
pub const MEMO_SLOTS: usize = 256;
/// The most lanes a memoised count has.
pub const MEMO_LANES: u32 = 32;
/// Words of one memo: the lanes' offsets from lane 0 (up to [`MEMO_LANES`]), lane 0's
/// address, the mask's bits, the count, and a tag naming the count (0: empty).
pub const MEMO_SLOT_WORDS: usize = MEMO_LANES as usize + 4;

/// Global atomics whose lanes' addresses the compiler cannot tell apart (a histogram's
/// bins) add their active lanes' addresses to a summary of the addresses hit most, kept by
/// each worker thread in the words after the memos: `HOT_ENTRIES` pairs (address, count)
/// updated by Misra and Gries' frequent-items rule ([`hot_add`]), so that a count is at most
/// the address's true count and falls short of it by at most the atomics summarised over
/// `HOT_ENTRIES + 1`. The device hands each worker's summary to the model after every chunk
/// of work-groups and zeroes it; the model adds them up, and the L3 serialises the hottest
/// address's atomics across the whole device.
pub const HOT_ENTRIES: usize = 16;
/// Words of the hot-address summary.
pub const HOT_WORDS: usize = 2 * HOT_ENTRIES;

/// Adds one atomic on `addr` to the hot-address summary `summary` ([`HOT_WORDS`] words:
/// address, count; a count of 0 is a free entry).
pub fn hot_add(summary: &mut [u64], addr: u64) {
    let entries = summary.len() / 2;
    let mut free = None;
    for e in 0..entries {
        if summary[2 * e + 1] == 0 {
            free = free.or(Some(e));
        } else if summary[2 * e] == addr {
            summary[2 * e + 1] += 1;
            return;
        }
    }
    match free {
        Some(e) => (summary[2 * e], summary[2 * e + 1]) = (addr, 1),
        // No room: every count drops by one (this atomic and one of each kept address).
        None => (0..entries).for_each(|e| summary[2 * e + 1] -= 1),
    }
}

/// The (address, count) pairs of a hot-address summary in use.
pub fn hot_entries(summary: &[u64]) -> impl Iterator<Item = (u64, u64)> + '_ {
    summary.chunks_exact(2).filter(|e| e[1] > 0).map(|e| (e[0], e[1]))
}

impl GenKernelInfo {
    /// Words a worker thread keeps for the kernel: the counter array
    /// ([`Self::counter_words`], zeroed per work-group), the memos after it (zeroed per
    /// launch) and the hot-address summary ([`Self::hot_word`]).
    pub fn scratch_words(&self) -> usize {
        self.hot_word() + HOT_WORDS
    }

    /// The first word of the hot-address summary ([`HOT_ENTRIES`]).
    pub fn hot_word(&self) -> usize {
        self.counter_words() + MEMO_SLOTS * MEMO_SLOT_WORDS
    }

    /// Whether a site adds to the hot-address summary (a global atomic on addresses the
    /// compiler cannot tell apart).
    pub fn has_hot_sites(&self) -> bool {
        self.sites.iter().any(|s| {
            s.kind == AccessKind::Atomic
                && s.same_address == SameAddress::Unknown
                && s.space != crate::kernel_info::AddressSpace::Local
        })
    }

    /// The first word of memo `slot`.
    pub fn memo_word(&self, slot: usize) -> usize {
        self.counter_words() + slot * MEMO_SLOT_WORDS
    }

    /// Takes the source file names and texts of the module the kernel was built from.
    pub fn set_sources(&mut self, module: &crate::ir::Module) {
        self.source_files = module.source_files.clone();
        self.source_texts = module.source_texts.clone();
    }
}

impl GenKernelInfo {
    /// Length in u64 words of a hardware thread's counter array.
    pub fn counter_words(&self) -> usize {
        counter_words(&self.sites, self.blocks.len())
    }

    /// The counters of block `b` in counter array `words` (missing words read 0).
    pub fn block_counters(&self, words: &[u64], b: usize) -> BlockCounters {
        let at = self.sites.len() * SITE_WORDS + b * BLOCK_WORDS;
        let w = |i: usize| words.get(at + i).copied().unwrap_or(0);
        BlockCounters { executions: w(0), active_lanes: w(1) }
    }

    /// The counters of site `k` in counter array `words` (missing words read 0): its own
    /// words, and what its block's counters say of its messages.
    pub fn site_counters(&self, words: &[u64], k: usize) -> SiteCounters {
        let w = |field: usize| words.get(site_word_index(self.sites.len(), k, field)).copied().unwrap_or(0);
        let Some(site) = self.sites.get(k) else { return SiteCounters::default() };
        let block = self.block_counters(words, site.block as usize);
        let useful_bytes = match useful_bytes_word(&self.sites, self.blocks.len(), k) {
            Some(i) => words.get(i).copied().unwrap_or(0),
            None => block.active_lanes.saturating_mul(u64::from(site.bytes_per_lane)),
        };
        SiteCounters {
            messages: block.executions.saturating_mul(site.messages_per_execution(self.simd)),
            active_lanes: block.active_lanes,
            l3_lines: w(site_word::L3_LINES),
            useful_bytes,
            slm_cycles: if site.space == AddressSpace::Local { w(site_word::SLM_CYCLES) } else { 0 },
            slm_conflict_cycles: w(site_word::SLM_CONFLICT_CYCLES),
            worst_bank_ways: w(site_word::WORST_BANK_WAYS),
            atomic_ways: if site.space == AddressSpace::Local { 0 } else { w(site_word::ATOMIC_WAYS) },
        }
    }
}

/// u64 words of one site in the counter array ([`site_word`] says which is which).
pub const SITE_WORDS: usize = 4;

/// Where counter `field` ([`site_word`]) of site `k` of a kernel with `sites` sites is in
/// the counter array: the sites' L3 lines first, then their SLM cycles, and so on.
pub fn site_word_index(sites: usize, k: usize, field: usize) -> usize {
    field * sites + k
}
/// u64 words of one block in the counter array: executions with an active lane, active
/// lanes summed over them.
pub const BLOCK_WORDS: usize = 2;

/// The counters of a site ([`site_word_index`] places them).
pub mod site_word {
    /// Global / constant / private: distinct 64-byte lines, summed over the messages.
    pub const L3_LINES: usize = 0;
    /// Local: cycles by the bank rules, summed over the messages.
    pub const SLM_CYCLES: usize = 1;
    /// Global atomics (the same word as [`SLM_CYCLES`], which only local sites use): the
    /// most active lanes of a message on one address, summed over the messages.
    pub const ATOMIC_WAYS: usize = 1;
    /// Local: cycles beyond ceil(active / 16), summed over the messages.
    pub const SLM_CONFLICT_CYCLES: usize = 2;
    /// Local: the most ways one bank saw in one message: a maximum, not a sum.
    pub const WORST_BANK_WAYS: usize = 3;
}

/// Adds `times` copies of counter array `words` of a kernel with `sites` sites to `sums`:
/// every word is summed except each site's worst bank ways, a maximum.
pub fn add_counters(sums: &mut [u64], words: &[u64], times: u64, sites: usize) {
    let ways = site_word_index(sites, 0, site_word::WORST_BANK_WAYS)..site_word_index(sites, 0, SITE_WORDS);
    for (i, (s, &c)) in sums.iter_mut().zip(words).enumerate() {
        *s = if ways.contains(&i) { (*s).max(c) } else { s.saturating_add(c.saturating_mul(times)) };
    }
}

/// Counters of one site, summed over the messages of a hardware thread (as
/// [`GenKernelInfo::site_counters`] reads them from a counter array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SiteCounters {
    /// Executions with at least one active lane (of a block access: times the messages of
    /// one, [`GenSite::messages_per_execution`]).
    pub messages: u64,
    /// Active lanes summed over the messages.
    pub active_lanes: u64,
    /// Global / constant / private: distinct 64-byte lines, summed over the messages.
    pub l3_lines: u64,
    /// Bytes the active lanes asked for (active lanes x bytes per lane; of an image access,
    /// the active lanes' pixels).
    pub useful_bytes: u64,
    /// Local: cycles by the bank rules, summed over the messages.
    pub slm_cycles: u64,
    /// Local: cycles beyond ceil(active / 16), summed over the messages.
    pub slm_conflict_cycles: u64,
    /// Local: the most ways (dwords or lanes) one bank saw in one message.
    pub worst_bank_ways: u64,
    /// Global atomics: the most active lanes of a message on one address, summed over the
    /// messages (lanes on one address wait for each other at the L3).
    pub atomic_ways: u64,
}

/// Counters of one block, summed over a hardware thread's executions of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockCounters {
    /// Executions with at least one active lane.
    pub executions: u64,
    /// Active lanes summed over the executions (lane utilisation = active / (executions x simd)).
    pub active_lanes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary's counts never exceed the true ones and miss them by at most the
    /// atomics over HOT_ENTRIES + 1: one hot bin among many cold ones is found.
    #[test]
    fn the_hot_address_summary_finds_the_hot_bin() {
        let mut summary = [0u64; HOT_WORDS];
        let mut truth = std::collections::HashMap::new();
        let mut x = 12345u64;
        let n = 10_000u64;
        for k in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // A third of the atomics on bin 7, the rest over 1000 bins.
            let addr = if k % 3 == 0 { 7 * 4 } else { (x >> 33) % 1000 * 4 + 4000 };
            hot_add(&mut summary, addr);
            *truth.entry(addr).or_insert(0u64) += 1;
        }
        for (addr, count) in hot_entries(&summary) {
            let t = truth[&addr];
            assert!(count <= t && t - count <= n / (HOT_ENTRIES as u64 + 1), "{addr}: {count} of {t}");
        }
        let hot = hot_entries(&summary).max_by_key(|e| e.1).unwrap();
        assert_eq!(hot.0, 28);
        assert!(hot.1 >= truth[&28] - n / (HOT_ENTRIES as u64 + 1));
    }
}
