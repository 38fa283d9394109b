//! Modelled time: per work-group costs from the summed counters of a Gen-instrumented build,
//! the work-groups in waves over the sub-slices, the memory roof over the whole launch.
//!
//! Per work-group (counters summed over its hardware threads):
//! - EU cycles: per block execution `max(instructions x simd / L, simd x (flops + flops_f64 /
//!   fp64_rate) / F)`, with F = FP32 FLOP per clock per EU (16 on Gen9: two SIMD-4 FMA
//!   pipes) and L = F / 2 lanes per clock (an FMA is 2 FLOP), so a SIMD16 instruction
//!   issues in 2 clocks and a SIMD16 FMA stream reaches 16 FLOP per clock per EU;
//! - L3: global / constant / private lines x 64 B / (data port bytes per clock);
//! - SLM: the bank-rule cycles (one cycle moves 64 B) x 64 / (SLM bytes per clock);
//! - stalls: per block execution the latency of its longest dependency chain of messages
//!   (`chain_latencies`: independent loads overlap, a load whose address needs an earlier
//!   load's data waits for it; stores add no latency), plus the thread's own messages
//!   passing the data port (lines x 64 B over its bytes per clock) and SLM one after
//!   another;
//! - barriers crossed x the barrier latency.
//!
//! A sub-slice runs `wgs` work-groups at a time (occupancy.rs); work-group `i` of the launch
//! (linear order) runs in wave `i / (wgs x sub-slices)` on sub-slice `i mod sub-slices`. A
//! wave lasts the longest of: its EU cycles over `min(EUs, resident threads)` (the resident
//! threads hide each other's latency), its L3 and SLM cycles (shared per sub-slice), and the
//! serial time of one of its threads (issue + stalls + barriers: latency not hidden). A
//! sub-slice's time is the sum of its waves; the launch's is the slowest sub-slice's, or
//! the bytes through the GTI over the memory roof if that is longer.
//!
//! A kernel without barriers or SLM is spread over all sub-slices (gen-model.md, "Occupancy
//! per sub-slice"): its hardware threads go to any sub-slice, so the device is one pool of
//! all EUs, thread slots and data ports. Its work-groups run in waves of as many as the
//! device's threads hold (`spread_wgs`), each wave's EU cycles over `min(all EUs, its
//! threads)` and its L3 cycles over all data ports: a launch of fewer work-groups than
//! sub-slices uses the EUs of every sub-slice. Cycles are at the
//! maximum clock. Deterministic: the same counters give the same time, whatever order the
//! work-groups finished in.

use crate::gen::GenConfig;
use softcl_compiler::gen_abi::{AccessKind, GenKernelInfo, SameAddress};
use softcl_compiler::AddressSpace;

/// What one work-group (or one wave, summed) costs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GroupCost {
    pub threads: u64,
    /// EU issue cycles summed over its threads.
    pub eu_cycles: f64,
    pub l3_lines: u64,
    pub slm_cycles: u64,
    /// Latency clocks summed over its threads.
    pub stall_clocks: f64,
    /// Barriers crossed (each by every thread).
    pub barriers: u64,
    /// The longest serial time of one thread (for a wave: of any of its work-groups).
    pub serial: f64,
    /// L3 cycles of global atomics whose lanes share one address and so serialise.
    pub atomic_cycles: f64,
    /// Lane atomics on the one address of the whole launch (`SameAddress::Launch`): they
    /// serialise across the device, whichever sub-slice sends them.
    pub launch_atomics: u64,
}

impl GroupCost {
    /// The cost of one work-group from its counter array (`counters`, laid out as
    /// `softcl_compiler::gen_abi` says) run as `threads` hardware threads crossing
    /// `barriers` barriers; `chains` is the kernel's [`chain_latencies`], computed once per
    /// launch.
    pub fn from_counters(
        config: &GenConfig,
        kernel: &GenKernelInfo,
        chains: &[f64],
        simd: u32,
        counters: &[u64],
        threads: u64,
        barriers: u64,
    ) -> Self {
        let simd_f = f64::from(simd);
        let flops_per_clock = f64::from(config.fp32_flops_per_clock_per_eu.max(2));
        let lanes_per_clock = flops_per_clock / 2.0;
        let fp64_rate = f64::from(config.fp64_rate.unwrap_or(1.0 / 16.0));
        let mut c = GroupCost { threads: threads.max(1), barriers, ..Self::default() };
        // A thread's own messages pass its sub-slice's data port (or SLM) one after another.
        let port = f64::from(config.dataport_bytes_per_clock.max(1));
        let slm_port = f64::from(config.slm_bytes_per_clock.max(1));
        for (s, site) in kernel.sites.iter().enumerate() {
            let sc = kernel.site_counters(counters, s);
            match site.space {
                AddressSpace::Local => {
                    c.slm_cycles += sc.slm_cycles;
                    c.stall_clocks += sc.slm_cycles as f64 * 64.0 / slm_port;
                }
                _ if site.kind == AccessKind::Atomic && site.same_address != SameAddress::Unknown => {
                    // Every lane of a message on one address: the L3 does them one after
                    // another, at its atomic rate, and so does the thread that waits.
                    let cycles = sc.active_lanes as f64 * f64::from(config.l3_atomic_clocks);
                    c.atomic_cycles += cycles;
                    c.stall_clocks += cycles;
                    if site.same_address == SameAddress::Launch {
                        c.launch_atomics += sc.active_lanes;
                    }
                }
                _ => {
                    c.l3_lines += sc.l3_lines;
                    c.stall_clocks += sc.l3_lines as f64 * 64.0 / port;
                    // Other atomics (a histogram's bins): the lanes of a message on one
                    // address one after another, at the L3's atomic rate.
                    if site.kind == AccessKind::Atomic {
                        let cycles = sc.atomic_ways as f64 * f64::from(config.l3_atomic_clocks);
                        c.atomic_cycles += cycles;
                        c.stall_clocks += cycles;
                    }
                }
            }
        }
        for (b, block) in kernel.blocks.iter().enumerate() {
            let executions = kernel.block_counters(counters, b).executions as f64;
            let issue = f64::from(block.instructions) * simd_f / lanes_per_clock;
            let flops = simd_f * (f64::from(block.flops) + f64::from(block.flops_f64) / fp64_rate) / flops_per_clock;
            c.eu_cycles += executions * issue.max(flops);
            c.stall_clocks += executions * chains.get(b).copied().unwrap_or(0.0);
        }
        let t = c.threads as f64;
        c.serial = (c.eu_cycles + c.stall_clocks) / t + barriers as f64 * f64::from(config.barrier_latency_clocks);
        c
    }

    /// Adds work-group `g` to this wave.
    pub fn add(&mut self, g: &GroupCost) {
        self.add_times(g, 1);
    }

    /// [`Self::add`] of `n` work-groups that each cost `g`.
    pub fn add_times(&mut self, g: &GroupCost, n: u64) {
        let f = n as f64;
        self.threads += g.threads.saturating_mul(n);
        self.eu_cycles += g.eu_cycles * f;
        self.l3_lines += g.l3_lines.saturating_mul(n);
        self.slm_cycles += g.slm_cycles.saturating_mul(n);
        self.stall_clocks += g.stall_clocks * f;
        self.atomic_cycles += g.atomic_cycles * f;
        self.launch_atomics += g.launch_atomics.saturating_mul(n);
        self.barriers = self.barriers.max(g.barriers);
        self.serial = self.serial.max(g.serial);
    }
}

/// The latency one execution of each block of `kernel` waits for: its longest dependency
/// chain of messages (`GenSite::waits_for`), each load, atomic or image read adding its
/// latency (global or SLM) and a store none. Independent messages are in flight together,
/// so their latencies overlap: 16 independent loads wait about one latency, 16 loads that
/// each need the one before (a pointer chase) sixteen.
pub fn chain_latencies(config: &GenConfig, kernel: &GenKernelInfo) -> Vec<f64> {
    let mut done = vec![0.0f64; kernel.sites.len()];
    let mut blocks = vec![0.0f64; kernel.blocks.len()];
    for (s, site) in kernel.sites.iter().enumerate() {
        let latency = match (site.kind, site.space) {
            (AccessKind::Store, _) => 0.0,
            (_, AddressSpace::Local) => f64::from(config.slm_latency_clocks),
            _ => f64::from(config.global_latency_clocks),
        };
        let start = site.waits_for.iter().filter_map(|&w| done.get(w as usize)).fold(0.0f64, |a, &b| a.max(b));
        done[s] = start + latency;
        if let Some(b) = blocks.get_mut(site.block as usize) {
            *b = b.max(done[s]);
        }
    }
    blocks
}

/// The bytes through the GTI of a launch that moved `l3_bytes` through the L3 in `waves`
/// waves of the device (the threads resident at a time), its footprint `footprint` bytes if
/// known. A line the launch touches comes from memory once and then hits in the L3 while
/// the traffic of one wave fits the L3's data capacity; a wave that moves more than that
/// evicts what the next one would re-read, so the footprint is read again in proportion
/// (`footprint x wave traffic / capacity`). Never more than every L3 line, which is also
/// what an unknown footprint costs.
pub fn memory_bytes(config: &GenConfig, l3_bytes: u64, footprint: Option<u64>, waves: u64) -> u64 {
    let Some(footprint) = footprint else { return l3_bytes };
    let per_wave = l3_bytes as f64 / waves.max(1) as f64;
    let refills = (per_wave / config.l3_data_bytes.max(1) as f64).max(1.0);
    l3_bytes.min((footprint as f64 * refills).ceil() as u64)
}

/// The cycles of one wave, by resource.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Split {
    pub compute: f64,
    pub l3: f64,
    pub slm: f64,
    /// The serial time of the slowest thread: its own issue plus its stalls (latency no other
    /// thread hides), barriers excluded.
    pub latency: f64,
    pub barrier: f64,
    /// The launch's bytes through the GTI over the memory roof (launch level only).
    pub memory: f64,
    /// The launch's atomics on its one shared address, one after another (launch level
    /// only).
    pub atomics: f64,
}

impl Split {
    /// The parts by name, in the report's order: compute, L3, SLM, memory, atomics,
    /// latency, barrier.
    pub fn parts(&self) -> [(&'static str, f64); 7] {
        [
            ("compute", self.compute),
            ("L3", self.l3),
            ("SLM", self.slm),
            ("memory", self.memory),
            ("atomics", self.atomics),
            ("latency", self.latency),
            ("barrier", self.barrier),
        ]
    }
    /// How long a wave with these resource times lasts.
    pub fn wave_cycles(&self) -> f64 {
        self.compute.max(self.l3).max(self.slm).max(self.serial())
    }
    /// The slowest thread's time, barriers included.
    fn serial(&self) -> f64 {
        self.latency + self.barrier
    }
    pub fn add(&mut self, o: &Split) {
        self.compute += o.compute;
        self.l3 += o.l3;
        self.slm += o.slm;
        self.latency += o.latency;
        self.barrier += o.barrier;
        self.memory += o.memory;
        self.atomics += o.atomics;
    }
}

/// Work-groups of `threads_per_wg` hardware threads that a spread kernel (no barriers, no
/// SLM) has resident at a time over the whole device: as many as all its threads hold, at
/// most `groups`, at least one.
pub fn spread_wgs(config: &GenConfig, threads_per_wg: u32, groups: u64) -> u64 {
    let all = u64::from(config.threads_per_subslice()) * u64::from(config.subslices());
    (all / u64::from(threads_per_wg.max(1))).min(groups).max(1)
}

/// The resource times of a wave on one sub-slice, or (`spread`) on the whole device.
pub fn wave_split(config: &GenConfig, w: &GroupCost, spread: bool) -> Split {
    let units = if spread { f64::from(config.subslices().max(1)) } else { 1.0 };
    let eus = (f64::from(config.eus_per_subslice) * units).min(w.threads.max(1) as f64);
    let barrier = w.barriers as f64 * f64::from(config.barrier_latency_clocks);
    Split {
        compute: w.eu_cycles / eus,
        l3: (w.l3_lines as f64 * 64.0 / f64::from(config.dataport_bytes_per_clock.max(1)) + w.atomic_cycles) / units,
        slm: w.slm_cycles as f64 * 64.0 / (f64::from(config.slm_bytes_per_clock.max(1)) * units),
        latency: (w.serial - barrier).max(0.0),
        barrier,
        memory: 0.0,
        atomics: 0.0,
    }
}

/// The modelled time of a launch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LaunchTime {
    pub cycles: f64,
    pub time_ns: f64,
    /// The resource times of the slowest sub-slice, summed over its waves, and the memory
    /// roof of the launch.
    pub split: Split,
    pub waves: u64,
    /// Bytes through the GTI.
    pub memory_bytes: u64,
}

impl LaunchTime {
    /// The resource that bounds the launch ("compute", "L3", "SLM", "memory", "atomics",
    /// "latency", "barrier").
    pub fn bound(&self) -> &'static str {
        self.split.parts().iter().fold(("compute", f64::MIN), |a, b| if b.1 > a.1 { *b } else { a }).0
    }
}

/// The launch time from its waves: `waves[w * subslices + s]` is wave `w` on sub-slice `s`;
/// for a `spread` kernel `waves[w]` is wave `w` on the whole device. `hot_atomics`: the
/// atomics on the hottest address of those whose addresses the compiler could not tell
/// apart (`gen_abi::HOT_ENTRIES`); with the atomics on the launch's one shared address, the
/// larger is done one at a time by the L3 (the `atomics` term).
pub fn launch_time(
    config: &GenConfig,
    waves: &[GroupCost],
    memory_bytes: u64,
    spread: bool,
    hot_atomics: u64,
) -> LaunchTime {
    let subslices = if spread { 1 } else { (config.subslices() as usize).max(1) };
    let mut per_ss = vec![(0.0f64, Split::default()); subslices];
    for wave in waves.chunks(subslices) {
        for (s, g) in wave.iter().enumerate().take(subslices) {
            if g.threads == 0 {
                continue;
            }
            let split = wave_split(config, g, spread);
            per_ss[s].0 += split.wave_cycles();
            per_ss[s].1.add(&split);
        }
    }
    let (schedule, mut split) = per_ss.into_iter().fold((0.0, Split::default()), |a, b| if b.0 > a.0 { b } else { a });
    let bytes_per_clock = config.memory_bytes_per_sec() / (f64::from(config.max_clock_mhz) * 1e6);
    split.memory = memory_bytes as f64 / bytes_per_clock;
    let launch_atomics: u64 = waves.iter().map(|g| g.launch_atomics).sum();
    split.atomics = launch_atomics.max(hot_atomics) as f64 * f64::from(config.l3_atomic_clocks);
    let cycles = schedule.max(split.memory).max(split.atomics);
    let waves = waves.len().div_ceil(subslices) as u64;
    LaunchTime { cycles, time_ns: cycles / config.clocks_per_ns(), split, waves, memory_bytes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_the_footprint_once_while_a_wave_fits_the_l3() {
        let c = GenConfig::gen9_gt2();
        let l3 = c.l3_data_bytes;
        // Unknown footprint: every line goes to memory.
        assert_eq!(memory_bytes(&c, 100 << 20, None, 100), 100 << 20);
        // A 16 KB table re-read: 100 MB through the L3 in 1000 waves of 100 KB each.
        assert_eq!(memory_bytes(&c, 100_000_000, Some(16 << 10), 1000), 16 << 10);
        // Never more than the L3 lines.
        assert_eq!(memory_bytes(&c, 1000, Some(1 << 20), 1), 1000);
        // A wave moving 4x the L3's data capacity reads its footprint 4 times.
        assert_eq!(memory_bytes(&c, 40 * l3, Some(2 * l3), 10), 8 * l3);
    }
}
