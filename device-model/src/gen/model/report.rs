//! The Gen model's report of one launch: per kernel, per site and per source line, with
//! advice in the optimisation guide's terms. [`GenReport::text`] is what
//! `SOFTCL_GEN_REPORT=1` prints on stderr, [`GenReport::json`] what `json:<file>` writes
//! (fields documented in docs/GEN_MODEL.md).

use super::occupancy::Occupancy;
use super::simd::SimdChoice;
use super::time::{site_counters, LaunchTime, BLOCK_WORDS, SITE_WORDS};
use super::GenShape;
use crate::gen::GenConfig;
use softcl_compiler::gen_abi::{AccessKind, GenKernelInfo, RegisterPressure, SiteCounters, SourceLoc};
use softcl_compiler::AddressSpace;
use std::fmt::Write;

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
}

/// One load, store or atomic of the kernel over the launch.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteReport {
    pub index: usize,
    /// "global", "constant", "local", "private".
    pub space: &'static str,
    /// "load", "store", "atomic".
    pub kind: &'static str,
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
    /// Useful bytes / bytes moved (global, constant, private).
    pub fn efficiency(&self) -> f64 {
        let c = &self.counters;
        if c.l3_lines == 0 {
            1.0
        } else {
            c.useful_bytes as f64 / (c.l3_lines * 64) as f64
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

/// One source line: the sites on it, summed.
#[derive(Debug, Clone, PartialEq)]
pub struct LineReport {
    pub file: u32,
    pub line: u32,
    pub sites: Vec<usize>,
    pub cycles: f64,
    /// Share of all sites' cycles, 0..1.
    pub share: f64,
    pub advice: Option<String>,
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
    pub sites: Vec<SiteReport>,
    /// Every block of the kernel, in the build's order.
    pub blocks: Vec<BlockReport>,
    pub lines: Vec<LineReport>,
    pub source_files: Vec<String>,
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

/// Advice for one site in the guide's terms, or `None` when it runs at full speed.
pub fn site_advice(s: &SiteReport, simd: u32, local: [usize; 3]) -> Option<String> {
    if s.counters.messages == 0 {
        return None;
    }
    if s.space == "local" {
        if s.counters.slm_conflict_cycles == 0 {
            return None;
        }
        let w = s.counters.worst_bank_ways;
        let speed = (s.counters.slm_cycles - s.counters.slm_conflict_cycles) as f64 / s.counters.slm_cycles as f64;
        // A power-of-two stride of s dwords puts s x active / 16 lanes on one bank.
        let active = ratio(s.counters.active_lanes, s.counters.messages).round() as u64;
        let stride = (w * 16).checked_div(active).unwrap_or(0);
        return Some(if stride.is_power_of_two() && (2..=16).contains(&stride) && stride * active == w * 16 {
            format!(
                "SLM stride {stride} puts {w} lanes on one bank: pad to {} ({:.0}% of full speed)",
                stride + 1,
                speed * 100.0
            )
        } else {
            format!("SLM bank conflicts: up to {w} ways on one bank ({:.0}% of full speed)", speed * 100.0)
        });
    }
    let lpm = s.lines_per_message();
    let active = ratio(s.counters.active_lanes, s.counters.messages);
    let ideal = ((active * f64::from(s.bytes_per_lane)) / 64.0).ceil().max(1.0);
    if s.space == "private" {
        return Some(format!(
            "private array in scratch memory: {lpm:.1} lines per message (each work-item its own line); \
             index it with constants so it stays in registers"
        ));
    }
    if lpm <= ideal * 1.05 {
        return None;
    }
    let eff = s.efficiency() * 100.0;
    Some(if local[0] < simd as usize && (local[1] > 1 || local[2] > 1) {
        let what = if local[0] == 1 { "column access" } else { "narrow work-group" };
        format!(
            "{what}: {lpm:.0} lines per message; a <{simd},1,1> work-group reads {ideal:.0} (this one is <{},{},{}>)",
            local[0], local[1], local[2]
        )
    } else if lpm >= 0.9 * active && active > 1.0 {
        format!(
            "strided access: {lpm:.0} lines per message, one per work-item ({eff:.0}% of the bytes moved are used): \
             let neighbouring work-items read neighbouring addresses"
        )
    } else if lpm <= ideal + 1.0 {
        format!("unaligned access: {lpm:.1} lines per message where {ideal:.0} would do: align the start to 64 bytes")
    } else {
        format!("strided access: {lpm:.1} lines per message where {ideal:.0} would do ({eff:.0}% of the bytes moved are used)")
    })
}

impl GenReport {
    pub fn build(i: &Inputs<'_>) -> Self {
        let c = i.counters;
        let word = |k: usize| c.get(k).copied().unwrap_or(0);
        let simd = i.shape.simd.max(1);
        let mut sites = Vec::with_capacity(i.gen.sites.len());
        let (mut global, mut scratch) = (Traffic::default(), Traffic::default());
        let (mut slm_messages, mut slm_cycles, mut slm_conflicts, mut worst_ways, mut atomics) = (0, 0, 0, 0, 0);
        for (k, site) in i.gen.sites.iter().enumerate() {
            let b = k * SITE_WORDS;
            let mut s = SiteReport {
                index: k,
                space: space_name(site.space),
                kind: kind_name(site.kind),
                bytes_per_lane: site.bytes_per_lane,
                loc: site.loc,
                counters: site_counters(c.get(b..).unwrap_or(&[])),
                cycles: 0.0,
                advice: None,
            };
            s.cycles = s.counters.l3_lines as f64 * 64.0 / f64::from(i.config.dataport_bytes_per_clock.max(1))
                + s.counters.slm_cycles as f64 * 64.0 / f64::from(i.config.slm_bytes_per_clock.max(1));
            s.advice = site_advice(&s, simd, i.shape.local_size);
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
                t.useful_bytes += s.counters.useful_bytes;
                t.moved_bytes += s.counters.l3_lines * 64;
            }
            sites.push(s);
        }
        let blocks_at = i.gen.sites.len() * SITE_WORDS;
        let (mut exec, mut active, mut div_exec, mut div_active, mut flops, mut flops_f64) = (0, 0, 0, 0, 0u64, 0u64);
        let util = |a: u64, e: u64| if e == 0 { 1.0 } else { a as f64 / (e as f64 * f64::from(simd)) };
        let mut blocks = Vec::with_capacity(i.gen.blocks.len());
        for (k, block) in i.gen.blocks.iter().enumerate() {
            let e = word(blocks_at + k * BLOCK_WORDS);
            let a = word(blocks_at + k * BLOCK_WORDS + 1);
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
        // Source lines: the sites on each, worst first.
        let total: f64 = sites.iter().map(|s| s.cycles).sum();
        let mut lines: Vec<LineReport> = Vec::new();
        for s in sites.iter().filter(|s| s.loc.is_some_and(|l| l.line > 0)) {
            let loc = s.loc.unwrap_or_default();
            let at = match lines.iter().position(|l| l.file == loc.file && l.line == loc.line) {
                Some(p) => p,
                None => {
                    lines.push(LineReport {
                        file: loc.file,
                        line: loc.line,
                        sites: Vec::new(),
                        cycles: 0.0,
                        share: 0.0,
                        advice: None,
                    });
                    lines.len() - 1
                }
            };
            let l = &mut lines[at];
            l.sites.push(s.index);
            l.cycles += s.cycles;
        }
        for l in &mut lines {
            l.share = if total > 0.0 { l.cycles / total } else { 0.0 };
            l.advice = l
                .sites
                .iter()
                .map(|&k| &sites[k])
                .filter(|s| s.advice.is_some())
                .max_by(|a, b| a.cycles.total_cmp(&b.cycles))
                .and_then(|s| s.advice.clone());
        }
        lines.sort_by(|a, b| b.cycles.total_cmp(&a.cycles).then(a.line.cmp(&b.line)));
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
            sites,
            blocks,
            lines,
            source_files: i.gen.source_files.clone(),
        }
    }

    /// The worst sites with advice, most cycles first.
    pub fn worst_sites(&self, n: usize) -> Vec<&SiteReport> {
        let mut v: Vec<&SiteReport> = self.sites.iter().filter(|s| s.advice.is_some()).collect();
        v.sort_by(|a, b| b.cycles.total_cmp(&a.cycles).then(a.index.cmp(&b.index)));
        v.truncate(n);
        v
    }

    fn file_name(&self, f: u32) -> &str {
        self.source_files.get(f as usize).map_or("<source>", |s| s.as_str())
    }

    /// The report as text (`SOFTCL_GEN_REPORT=1`).
    pub fn text(&self) -> String {
        let mut o = String::new();
        let t = &self.time;
        let oc = &self.occupancy;
        let _ =
            writeln!(o, "softcl gen [{}] kernel `{}`: modelled {:.3} us", self.config, self.kernel, t.time_ns / 1000.0);
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
        let s = &t.split;
        let _ = writeln!(
            o,
            "  cycles: compute {:.0}, L3 {:.0}, SLM {:.0}, memory {:.0}, latency {:.0}, barrier {:.0}; \
             {:.0} cycles in {} waves, {}-bound",
            s.compute,
            s.l3,
            s.slm,
            s.memory,
            s.latency,
            s.barrier,
            t.cycles,
            t.waves,
            t.bound()
        );
        let lines: Vec<&LineReport> = self.lines.iter().filter(|l| l.advice.is_some()).take(5).collect();
        if !lines.is_empty() {
            let _ = writeln!(o, "  worst source lines:");
            for l in lines {
                let _ = writeln!(
                    o,
                    "    {}:{}: {:.0}% of memory cycles: {}",
                    self.file_name(l.file),
                    l.line,
                    l.share * 100.0,
                    l.advice.as_deref().unwrap_or("")
                );
            }
        } else {
            let worst = self.worst_sites(5);
            if !worst.is_empty() {
                let _ = writeln!(o, "  worst sites:");
                for s in worst {
                    let _ = writeln!(
                        o,
                        "    site {} ({} {} of {} B per lane): {}",
                        s.index,
                        s.space,
                        s.kind,
                        s.bytes_per_lane,
                        s.advice.as_deref().unwrap_or("")
                    );
                }
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
                    "\"register_pressure\":{{\"uniform_bytes\":{},\"varying_bytes\":{}}},",
                    p.uniform_bytes, p.varying_bytes
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
            "\"cycles\":{{\"total\":{},\"compute\":{},\"l3\":{},\"slm\":{},\"memory\":{},\"latency\":{},\"barrier\":{},\"waves\":{},\"bound\":{}}},",
            num(t.cycles),
            num(s.compute),
            num(s.l3),
            num(s.slm),
            num(s.memory),
            num(s.latency),
            num(s.barrier),
            t.waves,
            json_str(t.bound())
        );
        let _ = write!(o, "\"time_ns\":{},\"memory_bytes\":{},", num(t.time_ns), t.memory_bytes);
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
                 \"slm_conflict_cycles\":{},\"worst_bank_ways\":{},\"cycles\":{},\"advice\":{}}}",
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
            let sites: Vec<String> = l.sites.iter().map(|s| s.to_string()).collect();
            let _ = write!(
                o,
                "{{\"file\":{},\"line\":{},\"sites\":[{}],\"cycles\":{},\"share\":{},\"advice\":{}}}",
                l.file,
                l.line,
                sites.join(","),
                num(l.cycles),
                num(l.share),
                l.advice.as_deref().map_or("null".to_string(), json_str)
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
    /// "html:<file>": the HTML page (rendered elsewhere).
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
    /// writing it is returned, for the caller to print; the launch itself succeeded). HTML
    /// is not written here.
    pub fn emit(&self, report: &GenReport) -> Result<(), String> {
        match self {
            ReportSink::Off | ReportSink::Html(_) => Ok(()),
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

/// A source location as JSON (`null` when unknown).
fn loc_json(loc: Option<SourceLoc>) -> String {
    loc.map_or("null".to_string(), |l| format!("{{\"file\":{},\"line\":{},\"column\":{}}}", l.file, l.line, l.column))
}

/// `s` as a JSON string literal.
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
    use super::{json_str, ReportSink};

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
