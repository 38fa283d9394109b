//! Occupancy of a sub-slice (shared/reference/gen-model.md, "Occupancy per sub-slice"; the
//! guide's "Work-Group Size Recommendations Summary"):
//!
//! ```text
//! threads_per_wg = ceil(wg_size / simd)
//! by_threads     = floor(threads_per_subslice / threads_per_wg)
//! by_barriers    = uses barriers ? barrier registers per sub-slice : unlimited
//! slm_alloc      = the configuration's rounding rule applied to the work-group's SLM bytes
//! by_slm         = slm_alloc > 0 ? floor(SLM per sub-slice / slm_alloc) : unlimited
//! wgs            = min(by_threads, by_barriers, by_slm, work-groups per sub-slice of the launch)
//! occupancy      = wgs x threads_per_wg / threads_per_subslice
//! ```

use crate::gen::GenConfig;

/// What limits the work-groups resident on one sub-slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Hardware threads (EUs x threads per EU).
    Threads,
    /// Barrier registers (one per work-group that uses barriers).
    Barriers,
    /// Shared local memory.
    Slm,
    /// The launch has fewer work-groups than the sub-slices could hold.
    WorkGroups,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Threads => "threads",
            Limit::Barriers => "barrier registers",
            Limit::Slm => "shared local memory",
            Limit::WorkGroups => "work-groups in the launch",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    pub threads_per_wg: u32,
    pub by_threads: u32,
    /// `None`: unlimited (no barriers).
    pub by_barriers: Option<u32>,
    /// Bytes of SLM allocated to one work-group (after rounding).
    pub slm_alloc: u64,
    /// `None`: unlimited (no SLM).
    pub by_slm: Option<u32>,
    /// Work-groups resident on one sub-slice at a time (at least 1: a work-group too big
    /// for a sub-slice is refused at launch, not modelled).
    pub wgs: u32,
    /// The limit that binds (the first of threads, barriers, SLM, launch that gives `wgs`).
    pub binding: Limit,
    /// Resident hardware threads / hardware threads of the sub-slice.
    pub occupancy: f64,
}

/// The occupancy of a launch of work-groups of `wg_size` work-items at SIMD `simd`, using
/// barriers or not and `slm_bytes` of SLM per work-group, with `groups` work-groups in all.
pub fn occupancy(
    config: &GenConfig,
    wg_size: usize,
    simd: u32,
    barriers: bool,
    slm_bytes: u64,
    groups: u64,
) -> Occupancy {
    let per_ss = config.threads_per_subslice();
    let threads_per_wg = (wg_size.max(1) as u64).div_ceil(u64::from(simd.max(1))).min(u64::from(u32::MAX)) as u32;
    let by_threads = per_ss / threads_per_wg.max(1);
    let by_barriers = barriers.then_some(config.barriers_per_subslice);
    let slm_alloc = config.slm_alloc.allocation(slm_bytes);
    let by_slm = (slm_alloc > 0).then(|| (config.slm_bytes_per_subslice / slm_alloc).min(u64::from(u32::MAX)) as u32);
    let by_launch = groups.div_ceil(u64::from(config.subslices())).min(u64::from(u32::MAX)) as u32;
    let mut wgs = by_threads;
    let mut binding = Limit::Threads;
    for (limit, n) in [(Limit::Barriers, by_barriers), (Limit::Slm, by_slm), (Limit::WorkGroups, Some(by_launch))] {
        if let Some(n) = n {
            if n < wgs {
                wgs = n;
                binding = limit;
            }
        }
    }
    let wgs = wgs.max(1);
    let occupancy = (f64::from(wgs) * f64::from(threads_per_wg) / f64::from(per_ss)).min(1.0);
    Occupancy { threads_per_wg, by_threads, by_barriers, slm_alloc, by_slm, wgs, binding, occupancy }
}
