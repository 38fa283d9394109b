//! Per-source-line statistics of a Gen kernel and advice in the optimization guide's terms.
//!
//! Input: the kernel's [`GenKernelInfo`] (its message sites and blocks, each with an optional
//! source location) and their counters summed over a launch ([`SiteCounters`] per site,
//! [`BlockCounters`] per block), plus the work-group size. Output: one [`LineStats`] per
//! source line that has a site or an executed block, ranked worst first by the cycles its
//! advice says are lost.
//!
//! What each figure means (shared/reference/gen-model.md):
//! - `lines_per_message`: distinct 64-byte L3 lines per global/constant/private message;
//!   `ideal_lines` is what the same lanes need when their bytes are contiguous and aligned,
//!   ceil(active x bytes per lane / 64) per message;
//! - `efficiency`: bytes the lanes asked for / bytes the lines moved (lines x 64);
//! - SLM: cycles by the bank rules, the conflict cycles beyond ceil(active / 16), and the
//!   most ways one bank saw in one message;
//! - `lane_utilisation`: active lanes / (executions x SIMD width) over the line's blocks.
//!
//! Lost cycles (the ranking key) are in the units the model charges: one clock per L3 line
//! beyond the ideal (64 B per clock per sub-slice), one per SLM conflict cycle, and for lanes
//! idle under divergence the block's instructions times the idle fraction of its executions.
//! They rank lines against each other; the model (`gen/model`) gives the kernel's time.

use softcl_compiler::gen_abi::{AccessKind, BlockCounters, GenKernelInfo, GenSite, SiteCounters, SourceLoc};
use softcl_compiler::AddressSpace;

/// L3 line and SLM bus width in bytes.
const LINE_BYTES: u64 = 64;
/// SLM banks (4 bytes each).
const SLM_BANKS: u64 = 16;
/// Lane utilisation below this (relative to the kernel's entry) is reported as divergence.
const DIVERGENCE_THRESHOLD: f64 = 0.9;

/// What a piece of advice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdviceKind {
    /// Lanes of one hardware thread read or write different L3 lines that contiguous lanes
    /// would share (column access, strides).
    ScatteredLines,
    /// A contiguous access that straddles one line more than it needs (alignment).
    Misaligned,
    /// Private memory that lives in scratch (global) memory.
    PrivateSpill,
    /// SLM bank conflicts.
    BankConflict,
    /// Lanes idle under a divergent branch.
    Divergence,
    /// A work-group size that leaves lanes of its last hardware thread idle.
    PartialThread,
}

impl AdviceKind {
    /// The name in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            AdviceKind::ScatteredLines => "scattered_lines",
            AdviceKind::Misaligned => "misaligned",
            AdviceKind::PrivateSpill => "private_spill",
            AdviceKind::BankConflict => "bank_conflict",
            AdviceKind::Divergence => "divergence",
            AdviceKind::PartialThread => "partial_thread",
        }
    }
}

/// One piece of advice for a source line.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub kind: AdviceKind,
    /// The guide's terms, e.g. "column access: 16 lines per message; a <16,1,1> work-group
    /// reads 1".
    pub text: String,
    /// Cycles this costs over the launch (see the module documentation).
    pub lost_cycles: f64,
}

/// Statistics of one source line over a launch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineStats {
    /// `None`: sites and blocks without line information.
    pub loc: Option<SourceLoc>,
    /// Messages of the line's global, constant and private (scratch) sites.
    pub messages: u64,
    pub l3_lines: u64,
    /// `l3_lines / messages` (0 without messages).
    pub lines_per_message: f64,
    /// The lines contiguous, aligned lanes would touch.
    pub ideal_lines: u64,
    /// Useful bytes / moved bytes of those messages (1 without messages).
    pub efficiency: f64,
    pub useful_bytes: u64,
    /// Messages of the line's local (SLM) sites.
    pub slm_messages: u64,
    pub slm_cycles: u64,
    pub slm_conflict_cycles: u64,
    pub worst_bank_ways: u64,
    /// Active lanes / (executions x SIMD width) of the line's blocks; `None` if none ran.
    pub lane_utilisation: Option<f64>,
    /// Instructions the line's blocks issued (per hardware thread, summed).
    pub instructions: u64,
    /// FP32 and FP64 floating-point operations of the line's blocks (per active lane).
    pub flops: u64,
    pub flops_f64: u64,
    /// Messages of the line's sub-group block reads and writes (in `messages`: each moves
    /// whole lines of the block, `l3_lines` its lines).
    pub block_messages: u64,
    /// Sub-group shuffles the line's blocks made (per hardware thread, summed): values moved
    /// between lanes' registers, in `instructions`, no memory message.
    pub shuffles: u64,
    /// Advice, worst first.
    pub advice: Vec<Advice>,
    /// Sum of the advice's lost cycles: the ranking key.
    pub lost_cycles: f64,
}

impl LineStats {
    /// The line's figures as a short text: "1024 msg, 16.0 lines/msg, 6% efficient; SLM 1024
    /// msg, 15360 conflict cycles, worst 16 ways; 50% lanes".
    pub fn figures(&self) -> String {
        let mut parts = Vec::new();
        if self.messages > 0 {
            parts.push(format!(
                "{} msg, {:.1} lines/msg, {} efficient",
                self.messages,
                self.lines_per_message,
                percent(self.efficiency)
            ));
        }
        if self.block_messages > 0 {
            parts.push(format!("{} of them sub-group block msg (whole lines)", self.block_messages));
        }
        if self.shuffles > 0 {
            parts.push(format!("{} sub-group shuffles (register moves, no memory)", self.shuffles));
        }
        if self.slm_messages > 0 {
            let ways =
                if self.worst_bank_ways > 1 { format!(", worst {} ways", self.worst_bank_ways) } else { String::new() };
            parts.push(format!("SLM {} msg, {} conflict cycles{ways}", self.slm_messages, self.slm_conflict_cycles));
        }
        if let Some(u) = self.lane_utilisation {
            parts.push(format!("{} lanes", percent(u)));
        }
        parts.join("; ")
    }

    /// "<source>:12" (`files`: `GenKernelInfo::source_files`), or "(no line information)".
    pub fn place(&self, files: &[String]) -> String {
        match self.loc {
            Some(loc) => format!("{}:{}", file_name(files, loc.file), loc.line),
            None => "(no line information)".to_string(),
        }
    }
}

/// The `count` worst lines that have advice, as text for the report on stderr:
///
/// ```text
/// <source>:6: 30720 cycles lost; 1024 msg, 16.0 lines/msg, 6% efficient
///     strided access: every lane writes its own 64-byte line (...)
/// ```
pub fn worst_lines_text(lines: &[LineStats], files: &[String], count: usize) -> String {
    let mut out = String::new();
    for l in lines.iter().filter(|l| !l.advice.is_empty()).take(count) {
        let figures = l.figures();
        let sep = if figures.is_empty() { "" } else { "; " };
        out.push_str(&format!("{}: {:.0} cycles lost{sep}{figures}\n", l.place(files), l.lost_cycles));
        for a in &l.advice {
            out.push_str(&format!("    {}\n", a.text));
        }
    }
    out
}

/// The name of file `file` of `files`, or "file N" when it is not there.
pub fn file_name(files: &[String], file: u32) -> String {
    files.get(file as usize).cloned().unwrap_or_else(|| format!("file {file}"))
}

/// "50%".
pub fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The key lines are grouped by: file and line (columns merged).
fn line_key(loc: Option<SourceLoc>) -> Option<(u32, u32)> {
    loc.map(|l| (l.file, l.line))
}

/// Accumulates one line's sites and blocks.
#[derive(Default)]
struct Acc {
    loc: Option<SourceLoc>,
    messages: u64,
    l3_lines: u64,
    ideal_lines: u64,
    useful_bytes: u64,
    slm_messages: u64,
    slm_cycles: u64,
    slm_conflicts: u64,
    worst_ways: u64,
    executions: u64,
    block_lanes: u64,
    instructions: u64,
    idle_instruction_slots: f64,
    flops: u64,
    flops_f64: u64,
    block_messages: u64,
    shuffles: u64,
    /// The advice of the line's sites ([`site_advice`]).
    advice: Vec<Advice>,
}

/// The L3 lines the messages of a global, constant or private site would touch with their
/// active lanes contiguous and aligned: ceil(useful bytes / 64) per message (useful bytes:
/// active lanes x bytes per lane, or an image access's pixels).
fn ideal_lines(c: &SiteCounters) -> u64 {
    let bytes_per_message = ratio(c.useful_bytes, c.messages);
    let per_message = (bytes_per_message / LINE_BYTES as f64).ceil().max(1.0);
    (per_message * c.messages as f64).round() as u64
}

/// Per-line statistics, ranked worst first (then by file and line). `sites` and `blocks`
/// are the launch's summed counters, one per `info.sites` / `info.blocks` (missing entries
/// count as zero); `local_size` is the work-group size; the SIMD width is `info.simd`.
pub fn line_stats(
    info: &GenKernelInfo,
    sites: &[SiteCounters],
    blocks: &[BlockCounters],
    local_size: [usize; 3],
) -> Vec<LineStats> {
    line_stats_at(info, sites, blocks, info.simd, local_size)
}

/// [`line_stats`] of a launch run at SIMD `simd`.
pub fn line_stats_at(
    info: &GenKernelInfo,
    sites: &[SiteCounters],
    blocks: &[BlockCounters],
    simd: u32,
    local_size: [usize; 3],
) -> Vec<LineStats> {
    let simd = u64::from(simd.max(1));
    let mut order: Vec<Option<(u32, u32)>> = Vec::new();
    let mut accs: std::collections::HashMap<Option<(u32, u32)>, Acc> = std::collections::HashMap::new();
    let mut acc_for = |loc: Option<SourceLoc>| -> Option<(u32, u32)> {
        let key = line_key(loc);
        if !order.contains(&key) {
            order.push(key);
        }
        key
    };

    for (site, counters) in info.sites.iter().zip(sites.iter().chain(std::iter::repeat(&SiteCounters::default()))) {
        if counters.messages == 0 {
            continue;
        }
        let key = acc_for(site.loc);
        let acc = accs.entry(key).or_default();
        acc.loc = acc.loc.or(site.loc);
        if site.space == AddressSpace::Local {
            acc.slm_messages += counters.messages;
            acc.slm_cycles += counters.slm_cycles;
            acc.slm_conflicts += counters.slm_conflict_cycles;
            acc.worst_ways = acc.worst_ways.max(counters.worst_bank_ways);
        } else {
            acc.messages += counters.messages;
            acc.l3_lines += counters.l3_lines;
            acc.ideal_lines += ideal_lines(counters).min(counters.l3_lines);
            acc.useful_bytes += counters.useful_bytes;
            if site.sub_group_block {
                acc.block_messages += counters.messages;
            }
        }
        // Sites of one line with the same advice (in[i - 1] and in[i + 1], both misaligned)
        // say it once, with their lost cycles together.
        if let Some(a) = site_advice(site, counters, simd as u32, local_size) {
            match acc.advice.iter_mut().find(|b| b.kind == a.kind && b.text == a.text) {
                Some(b) => b.lost_cycles += a.lost_cycles,
                None => acc.advice.push(a),
            }
        }
    }

    // The kernel's baseline utilisation: its first block (the entry) runs on every
    // hardware thread with all its work-items, so idle lanes there come from the
    // work-group size, not from branches.
    let baseline = blocks
        .first()
        .filter(|c| c.executions > 0)
        .map(|c| ratio(c.active_lanes, c.executions * simd).min(1.0))
        .unwrap_or(1.0);
    for (block, counters) in info.blocks.iter().zip(blocks.iter().chain(std::iter::repeat(&BlockCounters::default()))) {
        if counters.executions == 0 {
            continue;
        }
        let key = acc_for(block.loc);
        let acc = accs.entry(key).or_default();
        acc.loc = acc.loc.or(block.loc);
        acc.executions += counters.executions;
        acc.block_lanes += counters.active_lanes;
        let issued = counters.executions * u64::from(block.instructions);
        acc.instructions += issued;
        let utilisation = ratio(counters.active_lanes, counters.executions * simd).min(1.0);
        // Idle relative to the baseline (what the work-group size already loses).
        let idle = (1.0 - utilisation / baseline.max(f64::MIN_POSITIVE)).max(0.0);
        acc.idle_instruction_slots += issued as f64 * idle;
        acc.flops += u64::from(block.flops) * counters.active_lanes;
        acc.flops_f64 += u64::from(block.flops_f64) * counters.active_lanes;
        acc.shuffles += counters.executions * u64::from(block.shuffles);
    }

    let wg_items: usize = local_size.iter().map(|&d| d.max(1)).product();
    let mut out: Vec<LineStats> =
        order.into_iter().filter_map(|key| accs.remove(&key)).map(|acc| finish(acc, simd)).collect();
    // The work-group size leaving the last hardware thread partly idle: advice on the
    // kernel's first line.
    if baseline < DIVERGENCE_THRESHOLD {
        let issued: u64 = out.iter().map(|l| l.instructions).sum();
        let lost = issued as f64 * (1.0 - baseline);
        let threads = wg_items.div_ceil(simd as usize);
        let text = format!(
            "work-group size {wg_items} fills {threads} SIMD{simd} threads at {:.0}% of lanes: use a multiple of {simd}",
            baseline * 100.0
        );
        if let Some(first) = out.iter_mut().filter(|l| l.loc.is_some()).min_by_key(|l| line_key(l.loc)) {
            first.advice.push(Advice { kind: AdviceKind::PartialThread, text, lost_cycles: lost });
            first.lost_cycles += lost;
            first.advice.sort_by(|a, b| b.lost_cycles.total_cmp(&a.lost_cycles));
        }
    }
    out.sort_by(|a, b| b.lost_cycles.total_cmp(&a.lost_cycles).then_with(|| line_key(a.loc).cmp(&line_key(b.loc))));
    out
}

impl AdviceKind {
    /// Whether what this advice loses is time of the resource `term` (a
    /// `time::Split::parts` name): lines in the L3 and memory, bank cycles in the SLM, idle
    /// lanes in compute; everything in the thread's own serial time (latency).
    pub fn loses_in(self, term: &str) -> bool {
        match self {
            AdviceKind::ScatteredLines | AdviceKind::Misaligned | AdviceKind::PrivateSpill => {
                matches!(term, "L3" | "memory" | "latency")
            }
            AdviceKind::BankConflict => matches!(term, "SLM" | "latency"),
            AdviceKind::Divergence | AdviceKind::PartialThread => matches!(term, "compute" | "latency"),
        }
    }
}

/// Ranks `lines` (and each line's advice) by the cycles lost in `term`, the resource that
/// binds the launch, first: in a memory-bound launch an SLM bank conflict or an idle lane
/// costs nothing until the memory traffic shrinks, so the lines that lose lines come first,
/// then the rest by their own lost cycles.
pub fn rank_in_binding_term(lines: &mut [LineStats], term: &str) {
    let binding =
        |l: &LineStats| -> f64 { l.advice.iter().filter(|a| a.kind.loses_in(term)).map(|a| a.lost_cycles).sum() };
    for l in lines.iter_mut() {
        l.advice.sort_by(|a, b| {
            b.kind.loses_in(term).cmp(&a.kind.loses_in(term)).then_with(|| b.lost_cycles.total_cmp(&a.lost_cycles))
        });
    }
    lines.sort_by(|a, b| {
        binding(b)
            .total_cmp(&binding(a))
            .then_with(|| b.lost_cycles.total_cmp(&a.lost_cycles))
            .then_with(|| line_key(a.loc).cmp(&line_key(b.loc)))
    });
}

fn shape(local_size: [usize; 3]) -> String {
    format!("<{},{},{}>", local_size[0].max(1), local_size[1].max(1), local_size[2].max(1))
}

/// Advice for one load, store or atomic site from its counters summed over a launch at SIMD
/// `simd` with work-groups of `local_size`, or `None` when it runs at full speed. The
/// per-line advice of [`line_stats`] is this, site by site; the model's report gives it per
/// site too.
pub fn site_advice(site: &GenSite, c: &SiteCounters, simd: u32, local_size: [usize; 3]) -> Option<Advice> {
    if c.messages == 0 {
        return None;
    }
    match site.space {
        AddressSpace::Local => slm_advice(site.kind, c),
        AddressSpace::Private => Some(Advice {
            kind: AdviceKind::PrivateSpill,
            text: format!(
                "private array in scratch memory: {} lines per message: index it with constants or make it smaller so it stays in registers",
                fmt_count(ratio(c.l3_lines, c.messages))
            ),
            lost_cycles: c.l3_lines as f64,
        }),
        _ => global_advice(site, c, u64::from(simd.max(1)), local_size),
    }
}

/// Global / constant: the lines beyond the ideal.
fn global_advice(site: &GenSite, c: &SiteCounters, simd: u64, local_size: [usize; 3]) -> Option<Advice> {
    let (messages, lines, lanes) = (c.messages, c.l3_lines, c.active_lanes);
    let ideal = ideal_lines(c);
    if lines <= ideal {
        return None;
    }
    let per_message = ratio(lines, messages);
    let ideal_per_message = ratio(ideal, messages);
    // The ideal is reckoned from the average lanes per message, so messages of different
    // sizes (a border block: mostly one lane, now and then a whole row) exceed it by a
    // fraction of a line per message that no message loses. Advice speaks of what a message
    // does: when the two figures read the same, there is none.
    if fmt_count(per_message) == fmt_count(ideal_per_message) {
        return None;
    }
    let lanes_per_message = ratio(lanes, messages);
    let verb = match site.kind {
        AccessKind::Load => "reads",
        AccessKind::Store => "writes",
        AccessKind::Atomic => "touches",
    };
    let one_line_per_lane = per_message >= lanes_per_message - 0.01 && per_message >= 2.0;
    // Lanes of one hardware thread span rows: the guide's column / square work-groups.
    let narrow = local_size[0] < simd as usize && (local_size[1] > 1 || local_size[2] > 1);
    let misaligned = lines - ideal <= messages;
    // What the lanes would touch as consecutive x of one row; which shape is faster for the
    // kernel as a whole is the model's launch-level suggestion (`model::reshape`), made only
    // where it re-counted every access.
    let text = if narrow && one_line_per_lane {
        format!(
            "column access: {} lines per message; lanes of one row would {} {}",
            fmt_count(per_message),
            verb_base(site.kind),
            fmt_count(ideal_per_message)
        )
    } else if narrow {
        // Even one line more per message is the shape's doing: <8,2,1> reads two half lines.
        format!(
            "narrow work-group: {} lines per message; lanes of one row would {} {} (this one is {})",
            fmt_count(per_message),
            verb_base(site.kind),
            fmt_count(ideal_per_message),
            shape(local_size)
        )
    } else if one_line_per_lane {
        format!(
            "strided access: every lane {verb} its own 64-byte line ({} lines per message, {} if consecutive work-items used consecutive {}-byte elements)",
            fmt_count(per_message),
            fmt_count(ideal_per_message),
            site.lane_bytes(c)
        )
    } else if misaligned {
        format!(
            "misaligned access: {} lines per message where {} would do: align the data to 64 bytes",
            fmt_count(per_message),
            fmt_count(ideal_per_message)
        )
    } else {
        format!(
            "scattered access: {} lines per message where {} would do ({:.0}% of the moved bytes used)",
            fmt_count(per_message),
            fmt_count(ideal_per_message),
            100.0 * ratio(c.useful_bytes, lines * LINE_BYTES)
        )
    };
    let kind =
        if misaligned && !narrow && !one_line_per_lane { AdviceKind::Misaligned } else { AdviceKind::ScatteredLines };
    Some(Advice { kind, text, lost_cycles: (lines - ideal) as f64 })
}

/// "read", "write", "touch".
fn verb_base(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "read",
        AccessKind::Store => "write",
        AccessKind::Atomic => "touch",
    }
}

/// SLM: the conflict cycles. A power-of-two stride of s dwords puts s x active / 16 lanes
/// on one bank (reads: distinct dwords; writes: lanes), so the stride follows from the worst
/// ways and the active lanes.
fn slm_advice(kind: AccessKind, c: &SiteCounters) -> Option<Advice> {
    if c.slm_conflict_cycles == 0 {
        return None;
    }
    let ways = c.worst_bank_ways;
    let active = ratio(c.active_lanes, c.messages).round() as u64;
    let stride = (ways * SLM_BANKS).checked_div(active).unwrap_or(0);
    let per_message = fmt_count(ratio(c.slm_conflict_cycles, c.messages));
    let text = if stride.is_power_of_two() && (2..=SLM_BANKS).contains(&stride) && stride * active == ways * SLM_BANKS {
        format!("SLM stride {stride} puts {ways} lanes on one bank: pad to {}", stride + 1)
    } else if kind == AccessKind::Store {
        format!(
            "SLM bank conflict: {ways} lanes write one bank ({per_message} conflict cycles per message): pad the row stride to an odd number of dwords"
        )
    } else {
        format!(
            "SLM bank conflict: {ways} different dwords in one bank ({per_message} conflict cycles per message): pad the row stride to an odd number of dwords"
        )
    };
    Some(Advice { kind: AdviceKind::BankConflict, text, lost_cycles: c.slm_conflict_cycles as f64 })
}

fn finish(acc: Acc, simd: u64) -> LineStats {
    let mut advice = acc.advice;
    let lane_utilisation = (acc.executions > 0).then(|| ratio(acc.block_lanes, acc.executions * simd).min(1.0));
    if acc.idle_instruction_slots > 0.0 {
        if let Some(u) = lane_utilisation.filter(|&u| u < DIVERGENCE_THRESHOLD) {
            let text = format!("divergent branch: {:.0}% of lanes active", u * 100.0);
            advice.push(Advice { kind: AdviceKind::Divergence, text, lost_cycles: acc.idle_instruction_slots });
        }
    }
    advice.sort_by(|a, b| b.lost_cycles.total_cmp(&a.lost_cycles));
    // (A fold from +0: an empty float sum is -0.)
    let lost_cycles = advice.iter().fold(0.0, |sum, a| sum + a.lost_cycles);
    LineStats {
        loc: acc.loc.map(|l| SourceLoc { column: 0, ..l }),
        messages: acc.messages,
        l3_lines: acc.l3_lines,
        lines_per_message: ratio(acc.l3_lines, acc.messages),
        ideal_lines: acc.ideal_lines,
        efficiency: if acc.l3_lines == 0 { 1.0 } else { ratio(acc.useful_bytes, acc.l3_lines * LINE_BYTES).min(1.0) },
        useful_bytes: acc.useful_bytes,
        slm_messages: acc.slm_messages,
        slm_cycles: acc.slm_cycles,
        slm_conflict_cycles: acc.slm_conflicts,
        worst_bank_ways: acc.worst_ways,
        lane_utilisation,
        instructions: acc.instructions,
        flops: acc.flops,
        flops_f64: acc.flops_f64,
        block_messages: acc.block_messages,
        shuffles: acc.shuffles,
        advice,
        lost_cycles,
    }
}

/// A count that is usually whole: "16", else "2.5".
fn fmt_count(x: f64) -> String {
    if (x - x.round()).abs() < 0.05 {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use softcl_compiler::gen_abi::GenBlock;

    fn loc(line: u32) -> Option<SourceLoc> {
        Some(SourceLoc { file: 0, line, column: 5 })
    }

    fn site(space: AddressSpace, kind: AccessKind, bytes: u32, line: u32) -> GenSite {
        GenSite {
            block: 0,
            space,
            kind,
            bytes_per_lane: bytes,
            loc: loc(line),
            waits_for: vec![],
            same_address: Default::default(),
            lane_strides: None,
            sub_group_block: false,
        }
    }

    fn block(instructions: u32, line: u32, divergent: bool) -> GenBlock {
        GenBlock { instructions, flops: 0, flops_f64: 0, divergent_branch: divergent, loc: loc(line), shuffles: 0 }
    }

    fn info(sites: Vec<GenSite>, blocks: Vec<GenBlock>) -> GenKernelInfo {
        GenKernelInfo { simd: 16, sites, blocks, ..Default::default() }
    }

    /// `messages` SIMD16 messages of 16 lanes, `lines` L3 lines each.
    fn global(messages: u64, lines: u64, bytes: u64) -> SiteCounters {
        SiteCounters {
            messages,
            active_lanes: messages * 16,
            l3_lines: messages * lines,
            useful_bytes: messages * 16 * bytes,
            ..Default::default()
        }
    }

    #[test]
    fn sites_of_one_line_with_the_same_advice_say_it_once() {
        // in[i - 1] and in[i + 1] on one line, both 2 lines per message where 1 would do.
        let k = info(
            vec![
                site(AddressSpace::Global, AccessKind::Load, 4, 7),
                site(AddressSpace::Global, AccessKind::Load, 4, 7),
            ],
            vec![block(10, 2, false)],
        );
        let stats = line_stats(&k, &[global(100, 2, 4), global(100, 2, 4)], &[full(100)], [256, 1, 1]);
        let line = stats.iter().find(|l| l.loc.map(|l| l.line) == Some(7)).expect("line 7");
        assert_eq!(line.advice.len(), 1, "{:?}", line.advice);
        assert_eq!(line.advice[0].lost_cycles, 200.0);
    }

    #[test]
    fn messages_of_mixed_sizes_get_no_misalignment_advice() {
        // A border block: 97 messages of 2 lanes (one line each) and 3 of a whole row of 16
        // (two lines: 64 bytes not aligned): 103 lines against an ideal of 100 reckoned from
        // 2.42 lanes per message; per message both read "1", which is no advice.
        let site = site(AddressSpace::Global, AccessKind::Load, 4, 3);
        let mixed = SiteCounters {
            messages: 100,
            active_lanes: 97 * 2 + 3 * 16,
            l3_lines: 97 + 3 * 2,
            useful_bytes: (97 * 2 + 3 * 16) * 4,
            ..Default::default()
        };
        assert_eq!(site_advice(&site, &mixed, 16, [256, 1, 1]), None);
        // Every message of 16 lanes touching 2 lines where 1 would do is misaligned.
        let advice = site_advice(&site, &global(100, 2, 4), 16, [256, 1, 1]).expect("advice");
        assert_eq!(advice.kind, AdviceKind::Misaligned, "{}", advice.text);
        assert!(advice.text.contains("2 lines per message where 1 would do"), "{}", advice.text);
    }

    fn full(executions: u64) -> BlockCounters {
        BlockCounters { executions, active_lanes: executions * 16 }
    }

    #[test]
    fn column_access_gets_the_guides_advice_and_ranks_first() {
        // Line 3: a row read (1 line per message); line 4: a column read (16).
        let k = info(
            vec![
                site(AddressSpace::Global, AccessKind::Load, 4, 3),
                site(AddressSpace::Global, AccessKind::Load, 4, 4),
            ],
            vec![block(10, 2, false)],
        );
        let stats = line_stats(&k, &[global(100, 1, 4), global(100, 16, 4)], &[full(100)], [1, 16, 1]);
        let first = &stats[0];
        assert_eq!(first.loc.map(|l| l.line), Some(4));
        assert_eq!(first.lines_per_message, 16.0);
        assert_eq!(first.ideal_lines, 100);
        assert!((first.efficiency - 1.0 / 16.0).abs() < 1e-9);
        assert_eq!(first.advice.len(), 1);
        assert_eq!(first.advice[0].text, "column access: 16 lines per message; lanes of one row would read 1");
        assert_eq!(first.advice[0].lost_cycles, 1500.0);
        let row = stats.iter().find(|l| l.loc.map(|l| l.line) == Some(3)).unwrap();
        assert!(row.advice.is_empty(), "{:?}", row.advice);
        assert_eq!(row.efficiency, 1.0);
    }

    #[test]
    fn worst_lines_as_text() {
        let k = info(vec![site(AddressSpace::Global, AccessKind::Load, 4, 4)], vec![]);
        let stats = line_stats(&k, &[global(100, 16, 4)], &[], [1, 16, 1]);
        let files = ["<source>".to_string()];
        assert_eq!(
            worst_lines_text(&stats, &files, 5),
            "<source>:4: 1500 cycles lost; 100 msg, 16.0 lines/msg, 6% efficient\n    column access: 16 lines per message; lanes of one row would read 1\n"
        );
        assert_eq!(worst_lines_text(&stats, &files, 0), "");
    }

    #[test]
    fn strided_and_misaligned_accesses() {
        let k = info(
            vec![
                site(AddressSpace::Global, AccessKind::Store, 4, 7),
                site(AddressSpace::Global, AccessKind::Load, 4, 8),
            ],
            vec![],
        );
        // a[gid*16]: 16 lines per message in a <64,1,1> work-group; a[gid+1]: 2 lines.
        let stats = line_stats(&k, &[global(10, 16, 4), global(10, 2, 4)], &[], [64, 1, 1]);
        assert_eq!(stats[0].loc.unwrap().line, 7);
        assert!(
            stats[0].advice[0]
                .text
                .starts_with("strided access: every lane writes its own 64-byte line (16 lines per message, 1 if"),
            "{}",
            stats[0].advice[0].text
        );
        assert_eq!(stats[1].advice[0].kind, AdviceKind::Misaligned);
        assert_eq!(
            stats[1].advice[0].text,
            "misaligned access: 2 lines per message where 1 would do: align the data to 64 bytes"
        );
        assert_eq!(stats[1].efficiency, 0.5);
    }

    #[test]
    fn narrow_work_groups_are_told_the_row_shape() {
        // <8,2,1> rows of 8 floats: 2 half lines per SIMD16 message where <16,1,1> reads 1;
        // <4,4,1>: 4 lines.
        let k = info(vec![site(AddressSpace::Global, AccessKind::Load, 4, 3)], vec![]);
        for (local, lines) in [([8, 2, 1], 2), ([4, 4, 1], 4)] {
            let stats = line_stats(&k, &[global(10, lines, 4)], &[], local);
            assert_eq!(
                stats[0].advice[0].text,
                format!(
                    "narrow work-group: {lines} lines per message; lanes of one row would read 1 (this one is <{},{},1>)",
                    local[0], local[1]
                )
            );
            assert_eq!(stats[0].advice[0].kind, AdviceKind::ScatteredLines);
        }
    }

    #[test]
    fn slm_stride_16_is_told_to_pad_to_17() {
        let k = info(vec![site(AddressSpace::Local, AccessKind::Load, 4, 12)], vec![]);
        let counters = SiteCounters {
            messages: 8,
            active_lanes: 128,
            slm_cycles: 128,
            slm_conflict_cycles: 120,
            worst_bank_ways: 16,
            ..Default::default()
        };
        let stats = line_stats(&k, &[counters], &[], [16, 1, 1]);
        assert_eq!(stats.len(), 1);
        assert_eq!(stats[0].slm_conflict_cycles, 120);
        assert_eq!(stats[0].worst_bank_ways, 16);
        assert_eq!(stats[0].advice[0].text, "SLM stride 16 puts 16 lanes on one bank: pad to 17");
        assert_eq!(stats[0].lost_cycles, 120.0);
        assert_eq!(stats[0].messages, 0, "SLM messages are not L3 messages");
        // Stride 4: 4 dwords on each of 4 banks.
        let stride4 = SiteCounters { slm_cycles: 32, slm_conflict_cycles: 24, worst_bank_ways: 4, ..counters };
        let stats = line_stats(&k, &[stride4], &[], [16, 1, 1]);
        assert_eq!(stats[0].advice[0].text, "SLM stride 4 puts 4 lanes on one bank: pad to 5");
        // Three ways from no power-of-two stride.
        let odd = SiteCounters { slm_cycles: 24, slm_conflict_cycles: 16, worst_bank_ways: 3, ..counters };
        let stats = line_stats(&k, &[odd], &[], [16, 1, 1]);
        assert_eq!(
            stats[0].advice[0].text,
            "SLM bank conflict: 3 different dwords in one bank (2 conflict cycles per message): pad the row stride to an odd number of dwords"
        );
    }

    #[test]
    fn divergence_is_reported_relative_to_the_entry() {
        // Entry on line 1 full; the `if` body on line 2 runs with half the lanes.
        let k = info(vec![], vec![block(4, 1, true), block(20, 2, false)]);
        let half = BlockCounters { executions: 10, active_lanes: 80 };
        let stats = line_stats(&k, &[], &[full(10), half], [64, 1, 1]);
        assert_eq!(stats[0].loc.unwrap().line, 2);
        assert_eq!(stats[0].lane_utilisation, Some(0.5));
        assert_eq!(stats[0].advice[0].text, "divergent branch: 50% of lanes active");
        assert_eq!(stats[0].advice[0].lost_cycles, 100.0);
        assert_eq!(stats[1].lane_utilisation, Some(1.0));
        assert!(stats[1].advice.is_empty());
        assert_eq!(stats[0].figures(), "50% lanes");
        assert_eq!(stats[0].place(&["<source>".to_string()]), "<source>:2");
    }

    #[test]
    fn a_partial_last_thread_is_not_divergence() {
        // Work-group of 24: SIMD16 threads of 16 and 8 lanes -> 75% everywhere.
        let k = info(vec![], vec![block(4, 1, false), block(8, 2, false)]);
        let c = BlockCounters { executions: 2, active_lanes: 24 };
        let stats = line_stats(&k, &[], &[c, c], [24, 1, 1]);
        let kinds: Vec<AdviceKind> = stats.iter().flat_map(|l| l.advice.iter().map(|a| a.kind)).collect();
        assert_eq!(kinds, vec![AdviceKind::PartialThread]);
        assert_eq!(stats[0].loc.unwrap().line, 1);
        assert!(stats[0].advice[0].text.contains("use a multiple of 16"), "{}", stats[0].advice[0].text);
    }

    #[test]
    fn private_spills_and_unknown_lines() {
        let mut spill = site(AddressSpace::Private, AccessKind::Load, 4, 0);
        spill.loc = None;
        let k = info(vec![spill], vec![]);
        let stats = line_stats(&k, &[global(5, 16, 4)], &[], [16, 1, 1]);
        assert_eq!(stats.len(), 1);
        assert_eq!(stats[0].loc, None);
        assert_eq!(stats[0].advice[0].kind, AdviceKind::PrivateSpill);
        assert_eq!(stats[0].place(&[]), "(no line information)");
    }

    #[test]
    fn flops_count_active_lanes() {
        let mut b = block(10, 3, false);
        b.flops = 2;
        b.flops_f64 = 1;
        let k = info(vec![], vec![b]);
        let stats = line_stats(&k, &[], &[BlockCounters { executions: 4, active_lanes: 60 }], [60, 1, 1]);
        assert_eq!((stats[0].flops, stats[0].flops_f64), (120, 60));
        assert_eq!(stats[0].instructions, 40);
    }

    #[test]
    fn sites_on_one_line_are_merged_and_idle_sites_are_left_out() {
        let k = info(
            vec![
                site(AddressSpace::Global, AccessKind::Load, 4, 5),
                site(AddressSpace::Global, AccessKind::Store, 4, 5),
                site(AddressSpace::Global, AccessKind::Load, 4, 9),
            ],
            vec![],
        );
        let stats = line_stats(&k, &[global(3, 1, 4), global(3, 1, 4)], &[], [16, 1, 1]);
        assert_eq!(stats.len(), 1, "the third site has no counters (never ran)");
        assert_eq!(stats[0].messages, 6);
        assert_eq!(stats[0].l3_lines, 6);
        assert_eq!(stats[0].useful_bytes, 6 * 64);
    }

    /// In a memory-bound launch the line losing L3 lines ranks above the line with more
    /// SLM conflict cycles; in an SLM-bound one the other way round.
    #[test]
    fn lines_rank_by_the_binding_term_first() {
        let line = |line: u32, kind: AdviceKind, lost: f64| LineStats {
            loc: loc(line),
            advice: vec![Advice { kind, text: String::new(), lost_cycles: lost }],
            lost_cycles: lost,
            ..Default::default()
        };
        let mut lines = vec![line(3, AdviceKind::BankConflict, 900.0), line(7, AdviceKind::ScatteredLines, 100.0)];
        rank_in_binding_term(&mut lines, "memory");
        assert_eq!(lines[0].loc, loc(7));
        rank_in_binding_term(&mut lines, "SLM");
        assert_eq!(lines[0].loc, loc(3));
        rank_in_binding_term(&mut lines, "latency");
        assert_eq!(lines[0].loc, loc(3), "in the thread's serial time both count: the larger first");
    }
}
