//! The Gen model's report of one launch: per kernel, per site and per source line, with
//! advice in the optimisation guide's terms. [`GenReport::text`] is what
//! `SOFTCL_GEN_REPORT=1` prints on stderr, [`GenReport::json`] what `json:<file>` writes
//! (fields documented in docs/GEN_MODEL.md).

use super::occupancy::Limit;
use super::occupancy::Occupancy;
use super::simd::SimdChoice;
use super::time::LaunchTime;
use super::GenShape;
use crate::gen::html::{self, CycleShare, OccupancyLimit, ReportPage};
use crate::gen::lines::{self, LineStats};
use crate::gen::GenConfig;
use softcl_compiler::gen_abi::{AccessKind, BlockCounters, GenKernelInfo, RegisterPressure, SiteCounters, SourceLoc};
use softcl_compiler::AddressSpace;
use std::fmt::Write;
use std::sync::Arc;

/// What [`GenReport::build`] reads.
pub struct Inputs<'a> {
    pub config: &'a GenConfig,
    pub kernel: &'a str,
    pub gen: &'a GenKernelInfo,
    pub shape: &'a GenShape,
    pub choice: &'a Result<SimdChoice, String>,
    pub pressure: Option<RegisterPressure>,
    pub occupancy: &'a Occupancy,
    /// Counter words summed over the launch.
    pub counters: &'a [u64],
    pub groups: u64,
    /// Barriers crossed, summed over the work-groups.
    pub barriers: u64,
    pub time: &'a LaunchTime,
    /// Why the launch ran uncounted, if it did ([`GenReport::not_modelled`]).
    pub not_modelled: Option<&'a str>,
    /// The fastest other work-group shape the model priced, if it is faster.
    pub reshaped: Option<ShapeSuggestion>,
}

/// A work-group shape of the same size that the model, every access re-counted, prices
/// faster than the launch's (`reshape`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapeSuggestion {
    pub local_size: [usize; 3],
    /// The launch's modelled time in that shape.
    pub time_ns: f64,
    /// The launch's time over that one.
    pub speedup: f64,
}

/// One load, store or atomic of the kernel over the launch.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteReport {
    pub index: usize,
    /// "global", "constant", "local", "private".
    pub space: &'static str,
    /// "load", "store", "atomic".
    pub kind: &'static str,
    /// Bytes a lane moves (of an image access: the pixel size of the images bound,
    /// `GenSite::lane_bytes`).
    pub bytes_per_lane: u32,
    pub loc: Option<SourceLoc>,
    /// Summed over the launch (`worst_bank_ways`: the maximum).
    pub counters: SiteCounters,
    /// Data port clocks this site costs (L3 lines or SLM cycles, at 64 B per clock).
    pub cycles: f64,
    pub advice: Option<String>,
}

impl SiteReport {
    pub fn lines_per_message(&self) -> f64 {
        ratio(self.counters.l3_lines, self.counters.messages)
    }
    /// Useful bytes / bytes moved (global, constant, private), at most 1: lanes that read
    /// the same bytes (a uniform address, a histogram's bin) use them once.
    pub fn efficiency(&self) -> f64 {
        let c = &self.counters;
        if c.l3_lines == 0 {
            1.0
        } else {
            (c.useful_bytes as f64 / (c.l3_lines * 64) as f64).min(1.0)
        }
    }
}

/// One block of the kernel over the launch.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockReport {
    pub index: usize,
    pub loc: Option<SourceLoc>,
    /// Executions by hardware threads with at least one active lane.
    pub executions: u64,
    pub active_lanes: u64,
    /// active lanes / (executions x SIMD width).
    pub utilisation: f64,
    /// The block ends in a divergent branch.
    pub divergent_branch: bool,
    /// Lanes idle in its executions: executions x SIMD - active lanes.
    pub idle_lanes: u64,
}

/// Memory totals of one kind of traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Traffic {
    pub messages: u64,
    pub lines: u64,
    pub useful_bytes: u64,
    pub moved_bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GenReport {
    pub kernel: String,
    pub config: &'static str,
    pub simd: u32,
    pub simd_reason: String,
    pub pressure: Option<RegisterPressure>,
    pub global_size: [usize; 3],
    pub local_size: [usize; 3],
    pub groups: u64,
    pub threads_per_wg: u32,
    pub occupancy: Occupancy,
    /// Active lanes / (block executions x SIMD width), over the whole launch.
    pub lane_utilisation: f64,
    pub divergent_branches: u32,
    /// Lane utilisation of the blocks ending in a divergent branch.
    pub divergent_utilisation: f64,
    /// Global and constant traffic.
    pub global: Traffic,
    /// Private arrays in scratch memory.
    pub scratch: Traffic,
    pub slm_messages: u64,
    pub slm_cycles: u64,
    pub slm_conflict_cycles: u64,
    pub worst_bank_ways: u64,
    pub atomic_messages: u64,
    /// Barriers crossed per work-group (average).
    pub barriers_per_group: f64,
    pub flops: u64,
    pub flops_f64: u64,
    pub time: LaunchTime,
    /// Bytes of the memory the launch's arguments give it (`GenShape::footprint_bytes`);
    /// `None`: unknown, every L3 line goes to memory.
    pub footprint_bytes: Option<u64>,
    /// Why the launch was not modelled: it ran its scalar build, uncounted (a construct the
    /// vectorizer refuses, or more messages than an instrumented build is made for). Its
    /// counters and time are then zero, and profiling END - START is the host's time.
    pub not_modelled: Option<String>,
    /// A faster work-group shape, when the model found one ([`ShapeSuggestion`]).
    pub shape_suggestion: Option<ShapeSuggestion>,
    pub sites: Vec<SiteReport>,
    /// Every block of the kernel, in the build's order.
    pub blocks: Vec<BlockReport>,
    /// Per source line, worst first (`gen::lines::line_stats`).
    pub lines: Vec<LineStats>,
    pub source_files: Vec<String>,
    /// The texts of `source_files` where known (`GenKernelInfo::source_texts`), for the HTML
    /// page's listing.
    pub source_texts: Vec<Option<Arc<str>>>,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn space_name(s: AddressSpace) -> &'static str {
    match s {
        AddressSpace::Global => "global",
        AddressSpace::Constant => "constant",
        AddressSpace::Local => "local",
        AddressSpace::Private => "private",
        AddressSpace::Generic => "generic",
    }
}

fn kind_name(k: AccessKind) -> &'static str {
    match k {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::Atomic => "atomic",
    }
}

impl GenReport {
    pub fn build(i: &Inputs<'_>) -> Self {
        let c = i.counters;
        let simd = i.shape.simd.max(1);
        let mut sites = Vec::with_capacity(i.gen.sites.len());
        let (mut global, mut scratch) = (Traffic::default(), Traffic::default());
        let (mut slm_messages, mut slm_cycles, mut slm_conflicts, mut worst_ways, mut atomics) = (0, 0, 0, 0, 0);
        for (k, site) in i.gen.sites.iter().enumerate() {
            let counters = i.gen.site_counters(c, k);
            let mut s = SiteReport {
                index: k,
                space: space_name(site.space),
                kind: kind_name(site.kind),
                bytes_per_lane: site.lane_bytes(&counters),
                loc: site.loc,
                counters,
                cycles: 0.0,
                advice: None,
            };
            s.cycles = s.counters.l3_lines as f64 * 64.0 / f64::from(i.config.dataport_bytes_per_clock.max(1))
                + s.counters.slm_cycles as f64 * 64.0 / f64::from(i.config.slm_bytes_per_clock.max(1))
                + s.counters.atomic_ways as f64 * f64::from(i.config.l3_atomic_clocks);
            s.advice = lines::site_advice(site, &s.counters, simd, i.shape.local_size).map(|a| a.text);
            if site.kind == AccessKind::Atomic {
                atomics += s.counters.messages;
            }
            let t = match site.space {
                AddressSpace::Local => {
                    slm_messages += s.counters.messages;
                    slm_cycles += s.counters.slm_cycles;
                    slm_conflicts += s.counters.slm_conflict_cycles;
                    worst_ways = worst_ways.max(s.counters.worst_bank_ways);
                    None
                }
                AddressSpace::Private => Some(&mut scratch),
                _ => Some(&mut global),
            };
            if let Some(t) = t {
                t.messages += s.counters.messages;
                t.lines += s.counters.l3_lines;
                // Lanes that read the same bytes use them once (efficiency at most 100%).
                t.useful_bytes += s.counters.useful_bytes.min(s.counters.l3_lines * 64);
                t.moved_bytes += s.counters.l3_lines * 64;
            }
            sites.push(s);
        }
        let (mut exec, mut active, mut div_exec, mut div_active, mut flops, mut flops_f64) = (0, 0, 0, 0, 0u64, 0u64);
        let util = |a: u64, e: u64| if e == 0 { 1.0 } else { a as f64 / (e as f64 * f64::from(simd)) };
        let mut blocks = Vec::with_capacity(i.gen.blocks.len());
        for (k, block) in i.gen.blocks.iter().enumerate() {
            let BlockCounters { executions: e, active_lanes: a } = i.gen.block_counters(c, k);
            blocks.push(BlockReport {
                index: k,
                loc: block.loc,
                executions: e,
                active_lanes: a,
                utilisation: util(a, e),
                divergent_branch: block.divergent_branch,
                idle_lanes: (e.saturating_mul(u64::from(simd))).saturating_sub(a),
            });
            exec += e;
            active += a;
            if block.divergent_branch {
                div_exec += e;
                div_active += a;
            }
            flops = flops.saturating_add(a.saturating_mul(u64::from(block.flops)));
            flops_f64 = flops_f64.saturating_add(a.saturating_mul(u64::from(block.flops_f64)));
        }
        let site_counters: Vec<SiteCounters> = sites.iter().map(|s| s.counters).collect();
        let block_counters: Vec<BlockCounters> =
            blocks.iter().map(|b| BlockCounters { executions: b.executions, active_lanes: b.active_lanes }).collect();
        let mut lines = lines::line_stats_at(i.gen, &site_counters, &block_counters, simd, i.shape.local_size);
        lines::rank_in_binding_term(&mut lines, i.time.bound());
        let (simd_reason, simd) = match i.choice {
            Ok(ch) if ch.simd == i.shape.simd => (ch.reason(i.config, i.pressure), i.shape.simd),
            Ok(ch) => (
                format!(
                    "compiled at SIMD{} (the model would choose SIMD{}: {})",
                    i.shape.simd,
                    ch.simd,
                    ch.rule.text()
                ),
                i.shape.simd,
            ),
            Err(e) => (e.clone(), i.shape.simd),
        };
        GenReport {
            footprint_bytes: i.shape.footprint_bytes,
            kernel: i.kernel.to_string(),
            config: i.config.key,
            simd,
            simd_reason,
            pressure: i.pressure,
            global_size: i.shape.global_size,
            local_size: i.shape.local_size,
            groups: i.groups,
            threads_per_wg: i.occupancy.threads_per_wg,
            occupancy: *i.occupancy,
            lane_utilisation: util(active, exec),
            divergent_branches: i.gen.blocks.iter().filter(|b| b.divergent_branch).count() as u32,
            divergent_utilisation: util(div_active, div_exec),
            global,
            scratch,
            slm_messages,
            slm_cycles,
            slm_conflict_cycles: slm_conflicts,
            worst_bank_ways: worst_ways,
            atomic_messages: atomics,
            barriers_per_group: ratio(i.barriers, i.groups),
            flops,
            flops_f64,
            time: *i.time,
            not_modelled: i.not_modelled.map(str::to_string),
            shape_suggestion: i.reshaped.filter(|_| i.not_modelled.is_none()),
            sites,
            blocks,
            lines,
            source_files: i.gen.source_files.clone(),
            source_texts: i.gen.source_texts.clone(),
        }
    }

    fn file_name(&self, f: u32) -> String {
        lines::file_name(&self.source_files, f)
    }

    /// The report as the HTML page's content (`SOFTCL_GEN_REPORT=html:<file>`).
    pub fn page(&self) -> ReportPage {
        let t = &self.time;
        let oc = &self.occupancy;
        let g = &self.global;
        let [gx, gy, gz] = self.global_size;
        let [lx, ly, lz] = self.local_size;
        let mut summary = vec![
            (
                "modelled time".to_string(),
                match &self.not_modelled {
                    Some(why) => format!("not modelled ({why}); profiling times are host times"),
                    None => format!(
                        "{:.3} us ({:.0} cycles in {} waves, {}-bound)",
                        t.time_ns / 1000.0,
                        t.cycles,
                        t.waves,
                        t.bound()
                    ),
                },
            ),
            ("SIMD width".to_string(), format!("SIMD{} ({})", self.simd, self.simd_reason)),
            (
                "NDRange".to_string(),
                format!("<{gx},{gy},{gz}> in work-groups <{lx},{ly},{lz}>: {} work-groups", self.groups),
            ),
            ("threads per work-group".to_string(), self.threads_per_wg.to_string()),
            (
                "occupancy".to_string(),
                format!(
                    "{:.0}%: {} work-groups per sub-slice, bound by {}",
                    oc.occupancy * 100.0,
                    oc.wgs,
                    oc.binding.name()
                ),
            ),
            (
                "lane utilisation".to_string(),
                format!(
                    "{:.0}%; {} divergent branch(es) at {:.0}%",
                    self.lane_utilisation * 100.0,
                    self.divergent_branches,
                    self.divergent_utilisation * 100.0
                ),
            ),
            (
                "global/constant".to_string(),
                format!(
                    "{} messages, {} L3 lines ({:.2} per message), efficiency {:.0}%",
                    g.messages,
                    g.lines,
                    ratio(g.lines, g.messages),
                    if g.moved_bytes == 0 { 100.0 } else { g.useful_bytes as f64 * 100.0 / g.moved_bytes as f64 }
                ),
            ),
        ];
        if let Some(sg) = &self.shape_suggestion {
            summary.push((
                "work-group shape".to_string(),
                format!(
                    "{} is modelled at {:.3} us, {:.2}x faster (every access re-counted)",
                    shape_text(sg.local_size),
                    sg.time_ns / 1000.0,
                    sg.speedup
                ),
            ));
        }
        if self.scratch.messages > 0 {
            summary.push((
                "private (scratch)".to_string(),
                format!("{} messages, {} L3 lines", self.scratch.messages, self.scratch.lines),
            ));
        }
        summary.push((
            "SLM".to_string(),
            format!(
                "{} messages, {} cycles, {} conflict cycles, worst {} ways on one bank",
                self.slm_messages, self.slm_cycles, self.slm_conflict_cycles, self.worst_bank_ways
            ),
        ));
        summary.push(("atomic messages".to_string(), self.atomic_messages.to_string()));
        summary.push(("barriers per work-group".to_string(), format!("{:.1}", self.barriers_per_group)));
        summary.push(("FLOPs".to_string(), format!("{} fp32, {} fp64", self.flops, self.flops_f64)));
        let cycles =
            t.split.parts().into_iter().map(|(name, cycles)| CycleShare { name: name.to_string(), cycles }).collect();
        // The configuration's figures behind each limit (unknown for a configuration not
        // built in: the limit is shown without them).
        let config = GenConfig::by_name(self.config);
        let per = |f: &dyn Fn(&GenConfig) -> String| config.as_ref().map_or(String::new(), f);
        let tpw = self.threads_per_wg;
        let mut occupancy = vec![OccupancyLimit {
            name: Limit::Threads.name().to_string(),
            work_groups: oc.by_threads,
            detail: per(&|c| format!("{} hardware threads / {tpw} per work-group", c.threads_per_subslice())),
            binding: oc.binding == Limit::Threads,
        }];
        if let Some(n) = oc.by_barriers {
            occupancy.push(OccupancyLimit {
                name: Limit::Barriers.name().to_string(),
                work_groups: n,
                detail: per(&|c| format!("{} barrier registers, one per work-group", c.barriers_per_subslice)),
                binding: oc.binding == Limit::Barriers,
            });
        }
        if let Some(n) = oc.by_slm {
            let alloc = oc.slm_alloc;
            occupancy.push(OccupancyLimit {
                name: Limit::Slm.name().to_string(),
                work_groups: n,
                detail: per(&|c| format!("{} B / {alloc} B allocated per work-group", c.slm_bytes_per_subslice)),
                binding: oc.binding == Limit::Slm,
            });
        }
        if oc.binding == Limit::WorkGroups {
            occupancy.push(OccupancyLimit {
                name: Limit::WorkGroups.name().to_string(),
                work_groups: oc.wgs,
                detail: format!("{} work-groups over the sub-slices", self.groups),
                binding: true,
            });
        }
        ReportPage {
            total_cycles: t.cycles,
            title: format!("Kernel {} on {}", self.kernel, self.config),
            summary,
            cycles,
            occupancy,
            lines: self.lines.clone(),
            source_files: self.source_files.clone(),
            source_texts: self.source_texts.clone(),
        }
    }

    /// The report as text (`SOFTCL_GEN_REPORT=1`).
    pub fn text(&self) -> String {
        let mut o = String::new();
        let t = &self.time;
        let oc = &self.occupancy;
        match &self.not_modelled {
            Some(why) => {
                let _ = writeln!(
                    o,
                    "softcl gen [{}] kernel `{}`: not modelled ({why}); profiling times are host times",
                    self.config, self.kernel
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "softcl gen [{}] kernel `{}`: modelled {:.3} us",
                    self.config,
                    self.kernel,
                    t.time_ns / 1000.0
                );
            }
        }
        let _ = writeln!(o, "  SIMD{} ({})", self.simd, self.simd_reason);
        let _ = writeln!(
            o,
            "  NDRange <{},{},{}> in work-groups <{},{},{}>: {} work-groups, {} hardware thread(s) each",
            self.global_size[0],
            self.global_size[1],
            self.global_size[2],
            self.local_size[0],
            self.local_size[1],
            self.local_size[2],
            self.groups,
            self.threads_per_wg
        );
        let lim = |n: Option<u32>| n.map_or("-".to_string(), |n| n.to_string());
        let _ = writeln!(
            o,
            "  occupancy {:.0}%: {} work-groups per sub-slice, bound by {} (threads {}, barriers {}, SLM {} with {} B allocated)",
            oc.occupancy * 100.0,
            oc.wgs,
            oc.binding.name(),
            oc.by_threads,
            lim(oc.by_barriers),
            lim(oc.by_slm),
            oc.slm_alloc
        );
        let _ = writeln!(
            o,
            "  lane utilisation {:.0}%; {} divergent branch(es) at {:.0}%",
            self.lane_utilisation * 100.0,
            self.divergent_branches,
            self.divergent_utilisation * 100.0
        );
        let mut masked: Vec<&BlockReport> =
            self.blocks.iter().filter(|b| b.utilisation < 0.9 && b.executions > 0).collect();
        masked.sort_by(|a, b| b.idle_lanes.cmp(&a.idle_lanes).then(a.index.cmp(&b.index)));
        for b in masked.iter().take(3) {
            let at = b
                .loc
                .filter(|l| l.line > 0)
                .map_or(format!("block {}", b.index), |l| format!("{}:{}", self.file_name(l.file), l.line));
            let _ = writeln!(
                o,
                "    {at}: {:.0}% of lanes active in {} executions{}",
                b.utilisation * 100.0,
                b.executions,
                if b.divergent_branch { ", ends in a divergent branch" } else { "" }
            );
        }
        let g = &self.global;
        let _ = writeln!(
            o,
            "  global/constant: {} messages, {} L3 lines ({:.2} per message), {} B moved for {} B used (efficiency {:.0}%)",
            g.messages,
            g.lines,
            ratio(g.lines, g.messages),
            g.moved_bytes,
            g.useful_bytes,
            if g.moved_bytes == 0 { 100.0 } else { g.useful_bytes as f64 * 100.0 / g.moved_bytes as f64 }
        );
        if self.scratch.messages > 0 {
            let _ =
                writeln!(o, "  private (scratch): {} messages, {} L3 lines", self.scratch.messages, self.scratch.lines);
        }
        let _ = writeln!(
            o,
            "  SLM: {} messages, {} cycles, {} conflict cycles, worst {} ways on one bank; {} atomic messages",
            self.slm_messages, self.slm_cycles, self.slm_conflict_cycles, self.worst_bank_ways, self.atomic_messages
        );
        let _ = writeln!(
            o,
            "  barriers: {:.1} per work-group; FLOPs: {} fp32, {} fp64",
            self.barriers_per_group, self.flops, self.flops_f64
        );
        let through_l3 = (self.global.lines + self.scratch.lines) * 64;
        let _ = match self.footprint_bytes {
            Some(f) => writeln!(
                o,
                "  memory: {} B through the GTI for {through_l3} B through the L3 (the launch's buffers: {f} B)",
                t.memory_bytes
            ),
            None => writeln!(
                o,
                "  memory: {} B through the GTI for {through_l3} B through the L3 (footprint unknown: every line from memory)",
                t.memory_bytes
            ),
        };
        let s = &t.split;
        let _ = writeln!(
            o,
            "  cycles: compute {:.0}, L3 {:.0}, SLM {:.0}, memory {:.0}, atomics {:.0}, latency {:.0}, barrier {:.0}; \
             {:.0} cycles in {} waves, {}-bound",
            s.compute,
            s.l3,
            s.slm,
            s.memory,
            s.atomics,
            s.latency,
            s.barrier,
            t.cycles,
            t.waves,
            t.bound()
        );
        if let Some(s) = &self.shape_suggestion {
            let _ = writeln!(
                o,
                "  work-group shape: {} is modelled at {:.3} us, {:.2}x faster than {} (every access re-counted)",
                shape_text(s.local_size),
                s.time_ns / 1000.0,
                s.speedup,
                shape_text(self.local_size)
            );
        }
        let worst = lines::worst_lines_text(&self.lines, &self.source_files, 5);
        if !worst.is_empty() {
            let _ = writeln!(o, "  worst source lines ({}-bound: what loses {} time first):", t.bound(), t.bound());
            for l in worst.lines() {
                let _ = writeln!(o, "    {l}");
            }
        }
        o
    }

    /// The report as one JSON object (`SOFTCL_GEN_REPORT=json:<file>`; docs/GEN_MODEL.md).
    pub fn json(&self) -> String {
        let mut o = String::from("{");
        let oc = &self.occupancy;
        let t = &self.time;
        let num = |x: f64| if x.is_finite() { format!("{x}") } else { "null".to_string() };
        let opt = |x: Option<u32>| x.map_or("null".to_string(), |n| n.to_string());
        let arr = |a: [usize; 3]| format!("[{},{},{}]", a[0], a[1], a[2]);
        let traffic = |t: &Traffic| {
            format!(
                "{{\"messages\":{},\"lines\":{},\"useful_bytes\":{},\"moved_bytes\":{}}}",
                t.messages, t.lines, t.useful_bytes, t.moved_bytes
            )
        };
        let _ = write!(o, "\"kernel\":{},\"config\":{},", json_str(&self.kernel), json_str(self.config));
        let _ = write!(o, "\"simd\":{},\"simd_reason\":{},", self.simd, json_str(&self.simd_reason));
        match self.pressure {
            Some(p) => {
                let _ = write!(
                    o,
                    "\"register_pressure\":{{\"uniform_bytes\":{},\"varying_bytes\":{},\"private_array_bytes\":{}}},",
                    p.uniform_bytes, p.varying_bytes, p.private_array_bytes
                );
            }
            None => o.push_str("\"register_pressure\":null,"),
        }
        let _ = write!(
            o,
            "\"global_size\":{},\"local_size\":{},\"groups\":{},\"threads_per_wg\":{},",
            arr(self.global_size),
            arr(self.local_size),
            self.groups,
            self.threads_per_wg
        );
        let _ = write!(
            o,
            "\"occupancy\":{{\"fraction\":{},\"wgs_per_subslice\":{},\"binding\":{},\"by_threads\":{},\"by_barriers\":{},\"by_slm\":{},\"slm_alloc\":{}}},",
            num(oc.occupancy),
            oc.wgs,
            json_str(oc.binding.name()),
            oc.by_threads,
            opt(oc.by_barriers),
            opt(oc.by_slm),
            oc.slm_alloc
        );
        let _ = write!(
            o,
            "\"lane_utilisation\":{},\"divergent_branches\":{},\"divergent_utilisation\":{},",
            num(self.lane_utilisation),
            self.divergent_branches,
            num(self.divergent_utilisation)
        );
        let _ = write!(o, "\"global\":{},\"scratch\":{},", traffic(&self.global), traffic(&self.scratch));
        let _ = write!(
            o,
            "\"slm\":{{\"messages\":{},\"cycles\":{},\"conflict_cycles\":{},\"worst_bank_ways\":{}}},",
            self.slm_messages, self.slm_cycles, self.slm_conflict_cycles, self.worst_bank_ways
        );
        let _ = write!(
            o,
            "\"atomic_messages\":{},\"barriers_per_group\":{},\"flops\":{},\"flops_f64\":{},",
            self.atomic_messages,
            num(self.barriers_per_group),
            self.flops,
            self.flops_f64
        );
        let s = &t.split;
        let _ = write!(
            o,
            "\"cycles\":{{\"total\":{},\"compute\":{},\"l3\":{},\"slm\":{},\"memory\":{},\"atomics\":{},\"latency\":{},\"barrier\":{},\"waves\":{},\"bound\":{}}},",
            num(t.cycles),
            num(s.compute),
            num(s.l3),
            num(s.slm),
            num(s.memory),
            num(s.atomics),
            num(s.latency),
            num(s.barrier),
            t.waves,
            json_str(t.bound())
        );
        let time_ns = if self.not_modelled.is_some() { "null".to_string() } else { num(t.time_ns) };
        let not_modelled = self.not_modelled.as_deref().map_or("null".to_string(), json_str);
        let _ = write!(o, "\"time_ns\":{time_ns},\"not_modelled\":{not_modelled},\"memory_bytes\":{},", t.memory_bytes);
        let footprint = self.footprint_bytes.map_or("null".to_string(), |f| f.to_string());
        let _ = write!(o, "\"footprint_bytes\":{footprint},");
        let suggestion = self.shape_suggestion.map_or("null".to_string(), |s| {
            let [x, y, z] = s.local_size;
            format!("{{\"local_size\":[{x},{y},{z}],\"time_ns\":{},\"speedup\":{}}}", num(s.time_ns), num(s.speedup))
        });
        let _ = write!(o, "\"shape_suggestion\":{suggestion},");
        o.push_str("\"sites\":[");
        for (k, s) in self.sites.iter().enumerate() {
            if k > 0 {
                o.push(',');
            }
            let loc = loc_json(s.loc);
            let _ = write!(
                o,
                "{{\"index\":{},\"space\":{},\"kind\":{},\"bytes_per_lane\":{},\"loc\":{loc},\"messages\":{},\"active_lanes\":{},\
                 \"l3_lines\":{},\"lines_per_message\":{},\"useful_bytes\":{},\"efficiency\":{},\"slm_cycles\":{},\
                 \"slm_conflict_cycles\":{},\"worst_bank_ways\":{},\"atomic_ways\":{},\"cycles\":{},\"advice\":{}}}",
                s.index,
                json_str(s.space),
                json_str(s.kind),
                s.bytes_per_lane,
                s.counters.messages,
                s.counters.active_lanes,
                s.counters.l3_lines,
                num(s.lines_per_message()),
                s.counters.useful_bytes,
                num(s.efficiency()),
                s.counters.slm_cycles,
                s.counters.slm_conflict_cycles,
                s.counters.worst_bank_ways,
                s.counters.atomic_ways,
                num(s.cycles),
                s.advice.as_deref().map_or("null".to_string(), json_str)
            );
        }
        o.push_str("],\"blocks\":[");
        for (k, b) in self.blocks.iter().enumerate() {
            if k > 0 {
                o.push(',');
            }
            let loc = loc_json(b.loc);
            let _ = write!(
                o,
                "{{\"index\":{},\"loc\":{loc},\"executions\":{},\"active_lanes\":{},\"utilisation\":{},\"divergent_branch\":{}}}",
                b.index,
                b.executions,
                b.active_lanes,
                num(b.utilisation),
                b.divergent_branch
            );
        }
        o.push_str("],\"lines\":[");
        for (k, l) in self.lines.iter().enumerate() {
            if k > 0 {
                o.push(',');
            }
            let (file, line) = l
                .loc
                .map_or(("null".to_string(), "null".to_string()), |loc| (loc.file.to_string(), loc.line.to_string()));
            let advice: Vec<String> = l
                .advice
                .iter()
                .map(|a| {
                    format!(
                        "{{\"kind\":{},\"text\":{},\"lost_cycles\":{}}}",
                        json_str(a.kind.name()),
                        json_str(&a.text),
                        num(a.lost_cycles)
                    )
                })
                .collect();
            let _ = write!(
                o,
                "{{\"file\":{file},\"line\":{line},\"messages\":{},\"l3_lines\":{},\"lines_per_message\":{},\
                 \"ideal_lines\":{},\"efficiency\":{},\"useful_bytes\":{},\"slm_messages\":{},\"slm_cycles\":{},\
                 \"slm_conflict_cycles\":{},\"worst_bank_ways\":{},\"lane_utilisation\":{},\"instructions\":{},\
                 \"flops\":{},\"flops_f64\":{},\"block_messages\":{},\"shuffles\":{},\"lost_cycles\":{},\"advice\":[{}]}}",
                l.messages,
                l.l3_lines,
                num(l.lines_per_message),
                l.ideal_lines,
                num(l.efficiency),
                l.useful_bytes,
                l.slm_messages,
                l.slm_cycles,
                l.slm_conflict_cycles,
                l.worst_bank_ways,
                l.lane_utilisation.map_or("null".to_string(), num),
                l.instructions,
                l.flops,
                l.flops_f64,
                l.block_messages,
                l.shuffles,
                num(l.lost_cycles),
                advice.join(",")
            );
        }
        o.push_str("],\"source_files\":[");
        let files: Vec<String> = self.source_files.iter().map(|f| json_str(f)).collect();
        o.push_str(&files.join(","));
        o.push_str("]}");
        o
    }
}

/// Where `SOFTCL_GEN_REPORT` sends the reports of Gen launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportSink {
    /// Unset, empty or "0".
    Off,
    /// "1" (or any other value): [`GenReport::text`] on stderr.
    Text,
    /// "json:<file>": the file holds a JSON array of the latest report of each kernel
    /// ([`GenReport::json`]), rewritten after every launch.
    Json(std::path::PathBuf),
    /// "html:<file>": one self-contained HTML page per kernel ([`GenReport::page`]), of its
    /// latest launch: the first kernel reported goes to `<file>`, each other one to
    /// `<stem>.<kernel>.html` beside it ([`html_page_path`]), rewritten after every launch.
    Html(std::path::PathBuf),
}

/// The environment variable choosing the [`ReportSink`].
pub const REPORT_ENV: &str = "SOFTCL_GEN_REPORT";

impl ReportSink {
    pub fn parse(v: &str) -> Self {
        let v = v.trim();
        if v.is_empty() || v == "0" {
            ReportSink::Off
        } else if let Some(f) = v.strip_prefix("json:").filter(|f| !f.is_empty()) {
            ReportSink::Json(f.into())
        } else if let Some(f) = v.strip_prefix("html:").filter(|f| !f.is_empty()) {
            ReportSink::Html(f.into())
        } else {
            ReportSink::Text
        }
    }

    pub fn from_env() -> Self {
        std::env::var(REPORT_ENV).map_or(ReportSink::Off, |v| Self::parse(&v))
    }

    /// Sends `report` where this sink says: text to stderr, JSON into its file (an error
    /// writing it is returned, for the caller to print; the launch itself succeeded), the
    /// kernel's HTML page into its file.
    pub fn emit(&self, report: &GenReport) -> Result<(), String> {
        match self {
            ReportSink::Off => Ok(()),
            ReportSink::Html(path) => {
                // The kernels each file name has seen, in order: the first one owns `path`.
                static KERNELS: std::sync::Mutex<Vec<(std::path::PathBuf, Vec<String>)>> =
                    std::sync::Mutex::new(Vec::new());
                let first = {
                    let mut all = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
                    let at = match all.iter().position(|(p, _)| p == path) {
                        Some(at) => at,
                        None => {
                            all.push((path.clone(), Vec::new()));
                            all.len() - 1
                        }
                    };
                    let kernels = &mut all[at].1;
                    if !kernels.contains(&report.kernel) {
                        kernels.push(report.kernel.clone());
                    }
                    kernels[0] == report.kernel
                };
                let file = html_page_path(path, first, &report.kernel);
                std::fs::write(&file, html::render(&report.page()))
                    .map_err(|e| format!("{REPORT_ENV}: cannot write {}: {e}", file.display()))
            }
            ReportSink::Text => {
                eprint!("{}", report.text());
                Ok(())
            }
            ReportSink::Json(path) => {
                static LATEST: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
                let mut latest = LATEST.lock().unwrap_or_else(|e| e.into_inner());
                let json = report.json();
                match latest.iter_mut().find(|(k, _)| *k == report.kernel) {
                    Some(entry) => entry.1 = json,
                    None => latest.push((report.kernel.clone(), json)),
                }
                let all: Vec<&str> = latest.iter().map(|(_, j)| j.as_str()).collect();
                std::fs::write(path, format!("[{}]\n", all.join(",\n")))
                    .map_err(|e| format!("{REPORT_ENV}: cannot write {}: {e}", path.display()))
            }
        }
    }
}

/// The file of the HTML page of `kernel` for `html:<path>`: `path` itself for the first
/// kernel reported, `<stem>.<kernel>.html` in the same directory for the others (characters
/// other than letters, digits, '_' and '-' in the kernel name become '_').
pub fn html_page_path(path: &std::path::Path, first: bool, kernel: &str) -> std::path::PathBuf {
    if first {
        return path.to_path_buf();
    }
    let stem = path.file_stem().map_or("report".into(), |s| s.to_string_lossy());
    let name: String =
        kernel.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    path.with_file_name(format!("{stem}.{name}.html"))
}

/// A source location as JSON (`null` when unknown).
fn loc_json(loc: Option<SourceLoc>) -> String {
    loc.map_or("null".to_string(), |l| format!("{{\"file\":{},\"line\":{},\"column\":{}}}", l.file, l.line, l.column))
}

/// `s` as a JSON string literal.
/// "<16,16,1>".
fn shape_text(s: [usize; 3]) -> String {
    format!("<{},{},{}>", s[0], s[1], s[2])
}

pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::{html_page_path, json_str, ReportSink};
    use std::path::{Path, PathBuf};

    #[test]
    fn html_pages_per_kernel() {
        let p = Path::new("/tmp/out/report.html");
        assert_eq!(html_page_path(p, true, "k"), PathBuf::from("/tmp/out/report.html"));
        assert_eq!(html_page_path(p, false, "mat_mul"), PathBuf::from("/tmp/out/report.mat_mul.html"));
        assert_eq!(html_page_path(Path::new("r"), false, "a/b"), PathBuf::from("r.a_b.html"));
    }

    #[test]
    fn report_sinks() {
        assert_eq!(ReportSink::parse(""), ReportSink::Off);
        assert_eq!(ReportSink::parse("0"), ReportSink::Off);
        assert_eq!(ReportSink::parse("1"), ReportSink::Text);
        assert_eq!(ReportSink::parse("json:/tmp/r.json"), ReportSink::Json("/tmp/r.json".into()));
        assert_eq!(ReportSink::parse("html:r.html"), ReportSink::Html("r.html".into()));
        assert_eq!(ReportSink::parse("json:"), ReportSink::Text);
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\u0001é\"");
    }
}
