//! The Gen performance model (docs/GEN_MODEL.md; shared/reference/gen-model.md).
//!
//! - [`rules`]: the per-message rules (L3 lines, SLM banks) the instrumented build applies;
//! - [`occupancy`]: work-groups per sub-slice and the binding limit;
//! - [`simd`]: the SIMD width choice from register pressure;
//! - [`time`]: per work-group cycles, waves over the sub-slices, the memory roof;
//! - [`report`]: what a person reads (`SOFTCL_GEN_REPORT`: text, JSON).
//!
//! Use: the Gen launch creates a [`GenModel`] for the kernel and the NDRange, passes it as
//! the launch's [`Observer`] (the executor calls [`Observer::gen_counters`] with the
//! counters of each work-group, summed over its hardware threads, a run of equal ones at a
//! time, and
//! [`Observer::thread_region`] per barrier region), then calls [`GenModel::finish`]:
//! `time_ns` is the command's profiling END - START, `report` goes to stderr / a file.

pub mod occupancy;
pub mod report;
pub mod reshape;
pub mod rules;
pub mod simd;
pub mod time;

pub use occupancy::{occupancy, Limit, Occupancy};
pub use report::{GenReport, ReportSink};
pub use simd::{SimdChoice, SimdRule};
pub use time::{GroupCost, LaunchTime, Split};

use crate::gen::GenConfig;
use crate::observer::Observer;
use softcl_compiler::gen_abi::{self, GenKernelInfo};
use softcl_compiler::KernelInfo;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// The NDRange of one launch as the model needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct GenShape {
    pub global_size: [usize; 3],
    /// The (enqueued) work-group size.
    pub local_size: [usize; 3],
    /// Work-groups per dimension.
    pub groups: [usize; 3],
    /// The SIMD width the kernel runs at (`GenKernelInfo::simd` of the build).
    pub simd: u32,
    /// Barriers one work-group crosses when the executor does not report barrier regions
    /// (`KernelInfo::barrier_count` is the usual estimate).
    pub barriers: u32,
    /// Bytes of SLM per work-group: `__local` variables plus `__local` arguments.
    pub slm_bytes: u64,
    /// Bytes of the buffers the kernel can touch, if known (`Launch::with_footprint`): what
    /// goes through the GTI is this, read again as often as the threads resident at a time
    /// move more than the L3 holds (`time::memory_bytes`). `None`: every L3 line goes to
    /// memory.
    pub footprint_bytes: Option<u64>,
    /// The kernel's scalar integer arguments by index (`None`: another kind), for the
    /// strides of its addresses (`reshape`).
    pub int_args: Vec<Option<i64>>,
}

impl GenShape {
    /// The shape of `launch` run at `simd`: dimensions beyond `work_dim` are 1, SLM is the
    /// kernel's `__local` variables plus its `__local` arguments, barriers the kernel's
    /// barrier count, the footprint unknown.
    pub fn for_launch(launch: &crate::Launch<'_>, simd: u32) -> Self {
        let info = &launch.kernel.info;
        let dims = (launch.work_dim as usize).clamp(1, 3);
        let pick = |a: [usize; 3]| std::array::from_fn(|d| if d < dims { a[d].max(1) } else { 1 });
        let global: [usize; 3] = std::array::from_fn(|d| if d < dims { launch.global_size[d] } else { 1 });
        let local = pick(launch.local_size);
        let local_args: u64 = launch.local_arg_sizes.iter().map(|&(_, n)| n as u64).sum();
        GenShape {
            global_size: global,
            local_size: local,
            groups: std::array::from_fn(|d| global[d].div_ceil(local[d])),
            simd,
            barriers: info.barrier_count,
            slm_bytes: info.static_local_mem_size.saturating_add(local_args),
            footprint_bytes: launch.footprint_bytes,
            int_args: int_args(info, launch.args),
        }
    }

    /// The value of `v` in this launch, if known.
    pub fn launch_value(&self, v: gen_abi::LaunchValue) -> Option<i64> {
        match v {
            gen_abi::LaunchValue::Arg(k) => self.int_args.get(k as usize).copied().flatten(),
            gen_abi::LaunchValue::GlobalSize(d) => self.global_size.get(d as usize).map(|&n| n as i64),
            gen_abi::LaunchValue::LocalSize(d) => self.local_size.get(d as usize).map(|&n| n as i64),
        }
    }

    pub fn work_group_size(&self) -> usize {
        self.local_size.iter().map(|&n| n.max(1)).product()
    }
    pub fn group_count(&self) -> u64 {
        self.groups.iter().map(|&n| n.max(1) as u64).product()
    }
    fn linear_group(&self, id: [usize; 3]) -> u64 {
        let [n0, n1, _] = self.groups.map(|n| n.max(1) as u64);
        id[0] as u64 + id[1] as u64 * n0 + id[2] as u64 * n0 * n1
    }
}

/// Each argument of `info` read from argument block `args` as a signed integer when it is a
/// value of 1, 2, 4 or 8 bytes.
fn int_args(info: &KernelInfo, args: &[u8]) -> Vec<Option<i64>> {
    info.args
        .iter()
        .map(|a| {
            let bytes = args.get(a.offset..a.offset + a.size)?;
            match (&a.kind, a.size) {
                (softcl_compiler::ArgKind::Value, 1) => Some(i64::from(bytes[0] as i8)),
                (softcl_compiler::ArgKind::Value, 2) => Some(i64::from(i16::from_ne_bytes(bytes.try_into().ok()?))),
                (softcl_compiler::ArgKind::Value, 4) => Some(i64::from(i32::from_ne_bytes(bytes.try_into().ok()?))),
                (softcl_compiler::ArgKind::Value, 8) => Some(i64::from_ne_bytes(bytes.try_into().ok()?)),
                _ => None,
            }
        })
        .collect()
}

/// What [`GenModel::finish`] returns.
#[derive(Debug, Clone)]
pub struct GenLaunchModel {
    /// Modelled duration of the launch in ns (profiling END - START), at least 1.
    pub time_ns: u64,
    pub report: GenReport,
}

impl GenLaunchModel {
    /// The device time of the launch (profiling END - START): the modelled time, or `None`
    /// (the host's time) for a launch that ran uncounted and was not modelled.
    pub fn device_time_ns(&self) -> Option<u64> {
        self.report.not_modelled.is_none().then_some(self.time_ns)
    }

    /// What the Gen device returns for the launch: [`Self::device_time_ns`] and the report's
    /// text.
    pub fn launch_report(&self) -> crate::LaunchReport {
        crate::LaunchReport { device_time_ns: self.device_time_ns(), report: Some(self.report.text()) }
    }
}

/// Another work-group shape is suggested when the model prices the launch in it below
/// this fraction of its time (5% faster or more).
const SUGGEST_BELOW: f64 = 0.95;

/// Shards of the totals: a worker adds its work-groups to the shard of its thread
/// ([`shard_of_thread`]), so the executor's threads do not contend for one lock per
/// work-group (a 4096^2 stencil has 65536 of them); [`GenModel::finish`] merges them.
const SHARDS: usize = 8;

/// This thread's shard: threads take shards in the order they first add a work-group.
fn shard_of_thread() -> usize {
    use std::sync::atomic::AtomicUsize;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

#[derive(Debug, Default)]
struct Totals {
    /// Counter words summed over the work-groups (worst bank ways: the maximum).
    counters: Vec<u64>,
    /// `waves[w * subslices + s]`: the work-groups of wave `w` on sub-slice `s`, summed
    /// (one flat table: a launch has thousands of waves).
    waves: Vec<GroupCost>,
    groups: u64,
    barriers: u64,
    memory_bytes: u64,
    /// The counters of the last few kinds of work-group this shard saw (oldest first), not
    /// yet in `counters`: at most [`RECENT_GROUPS`].
    recent: Vec<LastGroup>,
    /// The last work-group placed: its linear id, wave, position in the wave and sub-slice.
    cursor: Option<(u64, u64, u64, u64)>,
    /// Per other shape priced (`GenModel::reshapes`): its waves and GTI bytes, as `waves`
    /// and `memory_bytes`.
    alt_waves: Vec<Vec<GroupCost>>,
    alt_memory: Vec<u64>,
}

/// The kinds of work-group a shard remembers the cost of. Neighbouring work-groups often
/// alternate between a few (8 x 8 work-groups of a stencil: rows 32 bytes into a line or at
/// its start), and pricing each of them again was a third of such a launch's host time.
const RECENT_GROUPS: usize = 4;

/// Work-groups with the same counters and barriers: one cost, added `repeats` times to the
/// counter sums when the shard forgets them ([`Totals::flush_recent`]).
#[derive(Debug, Default)]
struct LastGroup {
    counters: Vec<u64>,
    barriers: u64,
    cost: GroupCost,
    /// The cost in each other shape priced.
    alt_costs: Vec<GroupCost>,
    repeats: u64,
}

impl Totals {
    /// The wave and sub-slice of work-group `linear` (dispatched in order, `wgs` per
    /// sub-slice per wave, round robin over `subslices`). A thread's work-groups mostly come
    /// in order, so the next one is placed from the last without dividing.
    fn place(&mut self, linear: u64, wgs: u64, subslices: u64) -> (usize, usize) {
        let subslices = subslices.max(1);
        let per_wave = wgs.max(1) * subslices;
        let (wave, pos, sub) = match self.cursor {
            Some((last, wave, pos, sub)) if linear == last + 1 => {
                if pos + 1 == per_wave {
                    (wave + 1, 0, 0)
                } else {
                    (wave, pos + 1, if sub + 1 == subslices { 0 } else { sub + 1 })
                }
            }
            _ => {
                let pos = linear % per_wave;
                (linear / per_wave, pos, pos % subslices)
            }
        };
        self.cursor = Some((linear, wave, pos, sub));
        (wave as usize, sub as usize)
    }

    /// Adds `n` work-groups of recent kind `k` placed in `cell` (`add_in_cell`): their
    /// costs to the wave tables, their count to the kind's repeats and the totals.
    fn add_placed(&mut self, (k, cell, n): (usize, (usize, usize), u64)) {
        let g = &mut self.recent[k];
        g.repeats += n;
        let barriers = g.barriers;
        add_in_cell(&mut self.waves, cell, &g.cost, n);
        for (j, alt) in g.alt_costs.iter().enumerate() {
            add_in_cell(&mut self.alt_waves[j], cell, alt, n);
            self.alt_memory[j] = self.alt_memory[j].saturating_add(alt.l3_lines.saturating_mul(64 * n));
        }
        self.groups += n;
        self.barriers += barriers.saturating_mul(n);
        self.memory_bytes = self.memory_bytes.saturating_add(g.cost.l3_lines.saturating_mul(64 * n));
    }

    /// Adds the run of [`LastGroup`] to the counter sums and empties it.
    fn flush_recent(&mut self, sites: usize) {
        for g in std::mem::take(&mut self.recent) {
            self.flush_group(&g, sites);
        }
    }

    fn flush_group(&mut self, g: &LastGroup, sites: usize) {
        if g.repeats > 0 {
            gen_abi::add_counters(&mut self.counters, &g.counters, g.repeats, sites);
        }
    }

    /// Adds `counters` of one work-group (`gen_abi::add_counters`). `sites`: the number of
    /// sites.
    fn add_counters(&mut self, counters: &[u64], sites: usize) {
        gen_abi::add_counters(&mut self.counters, counters, 1, sites);
    }

    /// Adds the totals of another shard.
    fn merge(&mut self, o: &Totals, sites: usize) {
        self.add_counters(&o.counters, sites);
        add_waves(&mut self.waves, &o.waves);
        self.groups += o.groups;
        self.barriers += o.barriers;
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
        for (j, (waves, memory)) in o.alt_waves.iter().zip(&o.alt_memory).enumerate() {
            add_waves(&mut self.alt_waves[j], waves);
            self.alt_memory[j] = self.alt_memory[j].saturating_add(*memory);
        }
    }
}

/// Adds `n` times `cost` to cell `cell.0` of wave table `waves`, grown to `cell.1` cells (the end of
/// the cell's wave) if it is shorter.
fn add_in_cell(waves: &mut Vec<GroupCost>, cell: (usize, usize), cost: &GroupCost, n: u64) {
    if waves.len() <= cell.0 {
        waves.resize(cell.1, GroupCost::default());
    }
    waves[cell.0].add_times(cost, n);
}

/// Adds wave table `from` to `to`, cell by cell.
fn add_waves(to: &mut Vec<GroupCost>, from: &[GroupCost]) {
    if to.len() < from.len() {
        to.resize(from.len(), GroupCost::default());
    }
    for (cost, o) in to.iter_mut().zip(from) {
        cost.add(o);
    }
}

/// The performance model of one launch, an [`Observer`].
#[derive(Debug)]
pub struct GenModel {
    config: GenConfig,
    kernel: String,
    gen: GenKernelInfo,
    /// Each block's dependency-chain latency (`time::chain_latencies`), for every
    /// work-group's cost.
    chains: Vec<f64>,
    shape: GenShape,
    choice: Result<SimdChoice, String>,
    pressure: Option<softcl_compiler::gen_abi::RegisterPressure>,
    occupancy: Occupancy,
    /// Barrier regions ended per work-group (linear id), counted by `thread_region`.
    regions: Vec<AtomicU32>,
    /// Per-thread shards ([`SHARDS`]), merged by [`GenModel::finish`]; each on cache lines of
    /// its own, or the threads' lock operations on neighbouring shards contend for one line.
    totals: Vec<crossbeam::utils::CachePadded<Mutex<Totals>>>,
    /// Why the launch is not modelled (`kernel.gen` is `None`: the kernel runs uncounted).
    not_modelled: Option<String>,
    /// Other work-group shapes priced alongside (`reshape`).
    reshapes: Vec<reshape::Reshape>,
    /// The workers' hot-address summaries added up (`Observer::gen_hot_addresses`): atomics
    /// per address, at most the true count.
    hot: Mutex<std::collections::HashMap<u64, u64>>,
}

impl GenModel {
    /// The model of a launch of `kernel` (a Gen-instrumented build: `kernel.gen` is its
    /// sites and blocks; without it the model sees no counters) over `shape`.
    pub fn new(config: &GenConfig, kernel: &KernelInfo, shape: GenShape) -> Self {
        let gen = kernel.gen.clone().unwrap_or_else(|| GenKernelInfo { simd: shape.simd, ..Default::default() });
        let barriers = kernel.barrier_count > 0 || shape.barriers > 0;
        let occupancy =
            occupancy(config, shape.work_group_size(), shape.simd, barriers, shape.slm_bytes, shape.group_count());
        // Barrier regions are counted per work-group for launches of up to 16 Mi work-groups
        // (64 MiB of counts); larger ones use `shape.barriers`.
        let count_regions = barriers && shape.group_count() <= 1 << 24;
        let regions =
            if count_regions { (0..shape.group_count()).map(|_| AtomicU32::new(0)).collect() } else { Vec::new() };
        let words = gen.counter_words();
        let chains = time::chain_latencies(config, &gen);
        Self {
            chains,
            config: config.clone(),
            kernel: kernel.name.clone(),
            choice: simd::choose(config, kernel, shape.work_group_size()),
            pressure: kernel.register_pressure,
            gen,
            occupancy,
            regions,
            totals: (0..SHARDS)
                .map(|_| {
                    crossbeam::utils::CachePadded::new(Mutex::new(Totals {
                        counters: vec![0; words],
                        ..Default::default()
                    }))
                })
                .collect(),
            shape,
            not_modelled: kernel.gen.is_none().then(|| "the kernel ran uncounted".to_string()),
            reshapes: Vec::new(),
            hot: Mutex::default(),
        }
    }

    /// Prices the launch in other work-group shapes too, for the report's shape advice
    /// (`reshape`): a wave table per shape, so only where a report is written (call before
    /// the launch).
    pub fn with_shape_advice(mut self) -> Self {
        self.reshapes = reshape::candidates(&self.gen, &self.shape);
        let n = self.reshapes.len();
        for shard in &self.totals {
            let mut t = shard.lock().unwrap_or_else(|e| e.into_inner());
            t.alt_waves = vec![Vec::new(); n];
            t.alt_memory = vec![0; n];
        }
        self
    }

    /// The width the launch chose and why, from the program's register pressure: the report
    /// gives the launch's reason, not one re-derived from the variant's own build (whose
    /// pressure, counted at its width with the counting's values, differs).
    pub fn with_choice(
        mut self,
        choice: SimdChoice,
        pressure: Option<softcl_compiler::gen_abi::RegisterPressure>,
    ) -> Self {
        self.choice = Ok(choice);
        self.pressure = pressure;
        self
    }

    /// Why the launch is not modelled, for a kernel that runs uncounted (without a
    /// Gen-instrumented build); ignored for an instrumented one.
    pub fn with_not_modelled(mut self, why: &str) -> Self {
        if self.not_modelled.is_some() {
            self.not_modelled = Some(why.to_string());
        }
        self
    }

    pub fn occupancy(&self) -> &Occupancy {
        &self.occupancy
    }

    /// Whether the launch's hardware threads are spread over all sub-slices: its kernel has
    /// no barriers and no SLM (`time`'s module documentation).
    pub fn spread(&self) -> bool {
        self.occupancy.by_barriers.is_none() && self.occupancy.slm_alloc == 0
    }

    /// Adds `groups` work-groups with linear ids from `first`, each with `counters` (what
    /// `gen_counters` does; public for tests and replays).
    pub fn add_groups(&self, first: u64, groups: u64, counters: &[u64]) {
        // A work-group outside the NDRange would be an executor bug; it is not counted
        // (rather than growing the wave table without bound).
        let count = self.shape.group_count();
        debug_assert!(first.saturating_add(groups) <= count, "work-groups {first}+{groups} outside the NDRange");
        let end = first.saturating_add(groups).min(count);
        let threads = u64::from(self.occupancy.threads_per_wg);
        let (wgs, subslices) = if self.spread() {
            (time::spread_wgs(&self.config, self.occupancy.threads_per_wg, count), 1)
        } else {
            (u64::from(self.occupancy.wgs), u64::from(self.config.subslices()))
        };
        let mut t = self.totals[shard_of_thread()].lock().unwrap_or_else(|e| e.into_inner());
        let t = &mut *t;
        // Most work-groups of a launch count the same as one of the few before them on this
        // thread (the rows of a stencil, the blocks of a matrix product): their cost is
        // computed once and their counters are added once, times their number. Without an
        // early exit, so that the comparison is vector code (a word-by-word loop that stops
        // at the first difference took most of this function's time).
        let equal = |g: &LastGroup| {
            g.counters.len() == counters.len()
                && g.counters.iter().zip(counters).fold(0, |acc, (a, b)| acc | (a ^ b)) == 0
        };
        let mut same = t.recent.iter().rposition(equal);
        // Work-groups of one kind placed in one cell, added together (a wave's work-groups
        // are mostly alike): (kind, cell, how many).
        let mut pending: Option<(usize, (usize, usize), u64)> = None;
        for linear in first..end {
            let seen = self.regions.get(linear as usize).map_or(0, |r| u64::from(r.load(Ordering::Relaxed)));
            let barriers = if seen > 0 { seen.div_ceil(threads.max(1)) } else { u64::from(self.shape.barriers) };
            let (wave, subslice) = t.place(linear, wgs, subslices);
            let k = match same.filter(|&k| t.recent[k].barriers == barriers) {
                Some(k) => k,
                None => {
                    // The kinds are about to change: what is pending goes in first.
                    if let Some(p) = pending.take() {
                        t.add_placed(p);
                    }
                    let price = |counters: &[u64]| {
                        GroupCost::from_counters(
                            &self.config,
                            &self.gen,
                            &self.chains,
                            self.shape.simd,
                            counters,
                            threads,
                            barriers,
                        )
                    };
                    let cost = price(counters);
                    let mut scaled = Vec::new();
                    let alt_costs = self
                        .reshapes
                        .iter()
                        .map(|r| {
                            r.apply(counters, &mut scaled);
                            price(&scaled)
                        })
                        .collect();
                    // The oldest kind gives its counter words to the new one.
                    let mut words = Vec::new();
                    if t.recent.len() >= RECENT_GROUPS {
                        let old = t.recent.remove(0);
                        t.flush_group(&old, self.gen.sites.len());
                        words = old.counters;
                    }
                    words.clear();
                    words.extend_from_slice(counters);
                    t.recent.push(LastGroup { counters: words, barriers, cost, alt_costs, repeats: 0 });
                    same = Some(t.recent.len() - 1);
                    t.recent.len() - 1
                }
            };
            let subslices = subslices as usize;
            let cell = (wave * subslices + subslice, (wave + 1) * subslices);
            match &mut pending {
                Some((pk, pc, n)) if *pk == k && *pc == cell => *n += 1,
                _ => {
                    if let Some(p) = pending.replace((k, cell, 1)) {
                        t.add_placed(p);
                    }
                }
            }
        }
        if let Some(p) = pending {
            t.add_placed(p);
        }
    }

    /// The modelled time and the report of what was observed so far (call after the launch).
    pub fn finish(&self) -> GenLaunchModel {
        let sites = self.gen.sites.len();
        let n = self.reshapes.len();
        let mut t = Totals {
            counters: vec![0; self.gen.counter_words()],
            alt_waves: vec![Vec::new(); n],
            alt_memory: vec![0; n],
            ..Default::default()
        };
        for shard in &self.totals {
            let mut shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            shard.flush_recent(sites);
            t.merge(&shard, sites);
        }
        let per_wave = if self.spread() { 1 } else { (self.config.subslices() as usize).max(1) };
        let waves_of = |w: &[GroupCost]| w.len().div_ceil(per_wave) as u64;
        let waves = waves_of(&t.waves);
        let memory = time::memory_bytes(&self.config, t.memory_bytes, self.shape.footprint_bytes, waves);
        // The atomics of the launch's hottest address, which the L3 does one at a time.
        let hot = self.hot.lock().unwrap_or_else(|e| e.into_inner()).values().copied().max().unwrap_or(0);
        let time = time::launch_time(&self.config, &t.waves, memory, self.spread(), hot);
        let lines: Vec<u64> = (0..sites).map(|k| self.gen.site_counters(&t.counters, k).l3_lines).collect();
        let reshaped = self
            .reshapes
            .iter()
            .zip(t.alt_waves.iter().zip(&t.alt_memory))
            .filter(|(r, _)| r.known(&lines))
            .map(|(r, (waves, &bytes))| {
                let memory = time::memory_bytes(&self.config, bytes, self.shape.footprint_bytes, waves_of(waves));
                (r.local_size, time::launch_time(&self.config, waves, memory, self.spread(), hot).time_ns)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|&(_, ns)| ns < SUGGEST_BELOW * time.time_ns)
            .map(|(local_size, ns)| report::ShapeSuggestion { local_size, time_ns: ns, speedup: time.time_ns / ns });
        let report = GenReport::build(&report::Inputs {
            config: &self.config,
            kernel: &self.kernel,
            gen: &self.gen,
            shape: &self.shape,
            choice: &self.choice,
            pressure: self.pressure,
            occupancy: &self.occupancy,
            counters: &t.counters,
            groups: t.groups,
            barriers: t.barriers,
            time: &time,
            not_modelled: self.not_modelled.as_deref(),
            reshaped,
        });
        GenLaunchModel { time_ns: (time.time_ns.ceil() as u64).max(1), report }
    }
}

impl Observer for GenModel {
    fn wants_final_regions(&self) -> bool {
        false
    }
    fn thread_region(&self, group_id: [usize; 3], _first: u32, _lanes: u32, barrier: u32) {
        if barrier != 0 {
            if let Some(r) = self.regions.get(self.shape.linear_group(group_id) as usize) {
                r.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    fn gen_counters(&self, first_group: [usize; 3], groups: u64, counters: &[u64]) {
        self.add_groups(self.shape.linear_group(first_group), groups, counters);
    }
    fn gen_hot_addresses(&self, summary: &[u64]) {
        let mut hot = self.hot.lock().unwrap_or_else(|e| e.into_inner());
        for (addr, count) in softcl_compiler::gen_abi::hot_entries(summary) {
            *hot.entry(addr).or_default() += count;
        }
    }
}
