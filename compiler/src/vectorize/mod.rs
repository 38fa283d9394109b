//! Whole-function vectorization of work-items (CPU device): W consecutive work-items of
//! dimension 0 run as the lanes of one call of a vector work-item function
//! (`back::vector` lowers it, `back::workgroup::build_entry` calls it per packet).
//!
//! - [`width`]: the width W of a kernel (knobs, hints, host registers).
//! - [`pressure`]: register pressure (uniform / varying bytes live) for the Gen SIMD choice.
//! - [`analysis`]: uniform / strided / varying values, divergence, memory access classes.
//! - [`members`]: accesses to several members of one array-of-structs element (one span).
//! - [`prefetch`]: the consecutive loads that prefetch their stream ahead.
//! - [`blocker`]: what the vector lowering cannot do yet (sub-group built-ins, a barrier
//!   under a branch whose condition is not element-wise; the kernel then runs scalar and the
//!   report names the reason); [`per_lane`]: what runs lane by lane inside the vector body
//!   (`back::vector::lanes`); [`Report`]: the `SOFTCL_VECTORIZER_REPORT` lines.

pub mod analysis;
pub mod members;
pub mod prefetch;
pub mod pressure;
pub mod width;

use crate::ir::{self, InstData, TypeData};
use analysis::{AccessCounts, WorkItemAnalysis};

/// OpenCL.std instructions that mix components or take pointers (no element-wise form).
pub const CROSS_COMPONENT: &[u32] = &[
    30, 31, 36, 45, 52, 58, // fract frexp lgamma_r modf remquo sincos (pointer results)
    104, 105, 106, 107, 108, 109, 110, // geometric
    171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, // vload / vstore
    182, 183, 184, 185, // shuffle, shuffle2, printf, prefetch
];

/// Why kernel `f` cannot run vectorized yet, or `None` if the vector lowering handles all
/// of it. `barriers`: the kernel has work-group barriers.
pub fn blocker(_m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis, barriers: bool) -> Option<String> {
    if barriers {
        for &b in &f.layout.blocks {
            let in_divergence = wa.divergent_blocks.contains(&b);
            if in_divergence
                && f.layout.insts[b].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i]))
            {
                return Some("a barrier in divergent control flow (not every work-item of a packet reaches it)".into());
            }
        }
    }
    None
}

/// Why instruction `i` of kernel `f` runs lane by lane inside the vector body
/// (`back::vector::lanes`), as a report phrase, or `None` if it has a vector form (or is
/// uniform). Calls always do: the callee may read its work-item's ids.
pub fn per_lane(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis, i: ir::Inst) -> Option<&'static str> {
    let varying = |v: ir::Value| !wa.shape(f, v).is_uniform();
    let aggregate = |t: ir::Type| {
        matches!(m.types.get(t), TypeData::Struct { .. } | TypeData::Array { .. } | TypeData::Opaque { .. })
    };
    let d = &f.insts[i];
    if let InstData::Call { .. } = d {
        return Some("calls");
    }
    if d.is_instrumentation() {
        return None;
    }
    // Image writes have an effect: under the mask even when every lane writes the same.
    if let InstData::Image { op: ir::ImageOp::Write, .. } = d {
        return Some("image functions");
    }
    let res = f.inst_result[i];
    let any_varying = d.operands().into_iter().any(varying) || res.is_some_and(varying);
    // Terminators pass struct values as block arguments (blended per lane at joins).
    if !any_varying || d.is_terminator() {
        return None;
    }
    match d {
        InstData::CopyMemory { .. } => Some("memory copies"),
        InstData::Image { .. } => Some("image functions"),
        InstData::Variable { init: Some(_), .. } if !res.is_some_and(|r| wa.reg_candidates.contains(&r)) => {
            Some("private arrays initialised per lane")
        }
        InstData::Variable { .. } => None,
        InstData::Load { .. } | InstData::Store { .. } => {
            let t = match d {
                InstData::Store { value, .. } => f.value_type(*value),
                _ => res.map(|r| f.value_type(r))?,
            };
            aggregate(t).then_some("struct/array loads and stores")
        }
        InstData::ExtractValue { .. } | InstData::InsertValue { .. } => Some("struct/array members"),
        _ if res.is_some_and(|r| varying(r) && aggregate(f.value_type(r)))
            || d.operands().into_iter().any(|v| varying(v) && aggregate(f.value_type(v))) =>
        {
            Some("struct/array values")
        }
        _ => None,
    }
}

/// What runs lane by lane in kernel `f`: (report phrase, count), in first-seen order.
pub fn per_lane_summary(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let why = match &f.insts[i] {
                InstData::Atomic { .. } => Some("atomics"),
                _ => per_lane(m, f, wa, i),
            };
            if let Some(w) = why {
                match out.iter_mut().find(|(x, _)| *x == w) {
                    Some(e) => e.1 += 1,
                    None => out.push((w, 1)),
                }
            }
        }
    }
    out
}

/// Inlines every call in the kernels' functions (at most `limit` per kernel): the entry
/// point is a stub that calls the real kernel function, and the vector lowering works on one
/// body. Calls left (over the limit, or to imports) keep the kernel scalar with a reason.
pub fn inline_kernel_calls(m: &mut ir::Module, limit: usize) -> Result<(), String> {
    let kernels: Vec<ir::Func> = m.kernels.iter().map(|k| k.func).collect();
    for kf in kernels {
        if !m.functions.is_valid(kf) || m.functions[kf].kind == ir::FuncKind::Import {
            continue;
        }
        for _ in 0..limit {
            let func = &m.functions[kf];
            let call =
                func.layout.blocks.iter().flat_map(|&b| func.layout.insts[b].iter().copied()).find_map(|i| match &func
                    .insts[i]
                {
                    InstData::Call { func: c, .. }
                        if m.functions.is_valid(*c) && m.functions[*c].kind != ir::FuncKind::Import && *c != kf =>
                    {
                        Some((i, *c))
                    }
                    _ => None,
                });
            let Some((call, callee)) = call else { break };
            let callee_fn = m.functions[callee].clone();
            crate::passes::inline::inline_call(&mut m.functions[kf], call, &callee_fn)?;
        }
    }
    Ok(())
}

/// Instructions a kernel may run under masks (after its calls are inlined) for the vector
/// lowering when it also has more than [`MAX_LOOP_MASK_LOOPS`] loops in loop-mask form: see
/// [`linearization_bound`].
pub const MAX_LINEARIZED: usize = 4096;
/// Loops with a divergent exit (loop-mask form) a kernel of more than [`MAX_LINEARIZED`]
/// instructions under masks may have: see [`linearization_bound`].
pub const MAX_LOOP_MASK_LOOPS: usize = 16;

/// The heuristic width's compile-time check: kernel `f` (its calls inlined) runs more than
/// [`MAX_LINEARIZED`] instructions in divergent code (blocks under a mask: after a divergent
/// branch, in loops with a divergent exit) and has more than [`MAX_LOOP_MASK_LOOPS`] loops
/// whose lanes leave in different iterations. The vector lowering turns such code into one
/// body of masked vector operations, each of those loops with its loop mask, blends of its
/// live-outs and values live across it, and LLVM's code generation (register allocation above
/// all) grows much faster than the body: hashcat's pure MD5 kernel (`m00000_a0-pure.cl`, rule
/// engine and MD5 inlined: 9,000 instructions under masks, 39 such loops nested 4 deep) took
/// 411 s of code generation for its two kernels at W = 8 against 1.1 s scalar. hashcat's
/// optimised (`-O`) kernels, as long but with at most 5 such loops, keep their packets (the
/// Gen device's instrumented builds of them, too). The kernel then runs scalar (its work-item
/// loop), and the report names the reason. A forced width (`CL_CONFIG_CPU_VECTORIZER_MODE`)
/// skips it; the Gen device's instrumented builds apply it (the kernel then runs its scalar
/// build, uncounted).
pub fn linearization_bound(f: &ir::Function, wa: &WorkItemAnalysis) -> Option<String> {
    if wa.divergent_branches.is_empty() {
        return None;
    }
    let masked = f
        .layout
        .blocks
        .iter()
        .filter(|b| wa.divergent_blocks.contains(b))
        .flat_map(|&b| f.layout.insts[b].iter())
        .filter(|&&i| {
            let d = &f.insts[i];
            !matches!(d, InstData::Variable { .. }) && !d.is_terminator() && !d.is_instrumentation()
        })
        .count();
    if masked <= MAX_LINEARIZED {
        return None;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let pdom = crate::analysis::PostDomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    let loop_masks = loops.loops().iter().filter(|l| divergent_exit(f, wa, &pdom, l) == Some(true)).count();
    (loop_masks > MAX_LOOP_MASK_LOOPS).then(|| {
        format!(
            "{masked} instructions run under masks with {loop_masks} loops in loop-mask form (more than \
             {MAX_LINEARIZED} and {MAX_LOOP_MASK_LOOPS}): code generation of such a linearized body takes minutes"
        )
    })
}

/// What the vectorizer did with one kernel (SOFTCL_VECTORIZER_REPORT=1 and the build log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub kernel: String,
    /// The width the kernel was compiled at (1 = scalar).
    pub width: u32,
    /// Why this width (or the width it would have had).
    pub why: String,
    pub counts: AccessCounts,
    pub divergent_branches: usize,
    /// Why the kernel runs scalar, if it does although vectorization was asked for.
    pub scalar_reason: Option<String>,
    /// How divergent branches run when vectorized ([`control_flow`]).
    pub control_flow: Option<String>,
    /// What runs lane by lane inside the vector body ([`per_lane_summary`]).
    pub per_lane: Vec<(&'static str, usize)>,
    /// Branches on varying conditions that control a barrier, run as work-group uniform
    /// (`analysis::WorkItemAnalysis::barrier_uniform`).
    pub barrier_uniform: usize,
}

/// How a vectorized kernel with divergent branches runs them (a report phrase), with one
/// clause per loop that holds divergent code: a loop whose lanes may leave in different
/// iterations (a divergent exit, break or return) runs in loop-mask form; a loop whose exit
/// is uniform keeps one branch per iteration and if-converts the divergent code inside.
pub fn control_flow(f: &ir::Function, wa: &WorkItemAnalysis) -> Option<String> {
    if wa.divergent_branches.is_empty() {
        return None;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let pdom = crate::analysis::PostDomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    let order = loops.block_order(&cfg);
    let pos = |b: ir::Block| order.iter().position(|x| *x == b).unwrap_or(usize::MAX);
    let mut all: Vec<&crate::analysis::Loop> = loops.loops().iter().collect();
    all.sort_by_key(|l| pos(l.header));
    let mut clauses = Vec::new();
    for (k, l) in all.iter().enumerate() {
        let Some(divergent_exit) = divergent_exit(f, wa, &pdom, l) else { continue };
        let returns = l
            .blocks
            .iter()
            .filter(|&&b| f.layout.last_inst(b).is_some_and(|t| matches!(f.insts[t], InstData::Return { .. })))
            .count();
        let line = l
            .blocks
            .iter()
            .flat_map(|&b| f.layout.insts[b].iter())
            .filter_map(|&i| f.inst_locs[i])
            .map(|loc| loc.line)
            .filter(|&n| n > 0)
            .min();
        let name = match line {
            Some(n) => format!("loop {} (line {n}, depth {})", k + 1, l.depth),
            None => format!("loop {} (depth {})", k + 1, l.depth),
        };
        let how = if divergent_exit {
            let exits = l.exit_edges.len() + returns;
            format!(
                "{name}: loop mask, runs while any lane is active, {exits} exit(s) with live-outs blended as lanes leave"
            )
        } else {
            format!("{name}: uniform exit, its divergent branches if-converted under the body mask")
        };
        clauses.push(how);
    }
    let mut out = String::from("linearized with masks");
    if clauses.is_empty() {
        out.push_str(": every block runs once under its mask");
    } else {
        out.push_str(": ");
        out.push_str(&clauses.join("; "));
    }
    Some(out)
}

/// Whether loop `l` of `f` holds divergent branches (`None` if it holds none) and whether
/// one of them leaves it: lanes may then leave in different iterations, and the loop runs in
/// loop-mask form.
pub(crate) fn divergent_exit(
    f: &ir::Function,
    wa: &WorkItemAnalysis,
    pdom: &crate::analysis::PostDomTree,
    l: &crate::analysis::Loop,
) -> Option<bool> {
    let inside = |b: ir::Block| l.blocks.contains(&b);
    let branches: Vec<ir::Block> =
        wa.divergent_branches.iter().filter_map(|&t| f.layout.inst_block[t]).filter(|&b| inside(b)).collect();
    (!branches.is_empty()).then(|| branches.iter().any(|&b| pdom.ipdom(b).is_none_or(|p| !inside(p))))
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counts;
        write!(f, "vectorizer: kernel `{}`: ", self.kernel)?;
        match &self.scalar_reason {
            None => {
                write!(f, "vectorized at width {} ({})", self.width, self.why)?;
                if let Some(c) = &self.control_flow {
                    write!(f, "; divergent branches {c}")?;
                }
                if !self.per_lane.is_empty() {
                    let parts: Vec<String> = self.per_lane.iter().map(|(w, n)| format!("{n} {w}")).collect();
                    write!(f, "; lane by lane: {}", parts.join(", "))?;
                }
                if self.barrier_uniform > 0 {
                    write!(
                        f,
                        "; {} branch(es) controlling a barrier taken as work-group uniform (any active lane's condition)",
                        self.barrier_uniform
                    )?;
                }
            }
            Some(r) => write!(f, "scalar: {r}")?,
        }
        write!(
            f,
            "; memory accesses: {} uniform, {} consecutive, {} strided, {} gather/scatter ({} masked, {} atomic); {} divergent branch(es)",
            c.uniform, c.consecutive, c.strided, c.gather_scatter, c.masked, c.atomics, self.divergent_branches
        )
    }
}

/// `SOFTCL_VECTORIZER_REPORT=1`: print the report to stderr and put it in the build log.
pub fn report_enabled() -> bool {
    std::env::var("SOFTCL_VECTORIZER_REPORT").is_ok_and(|v| !v.is_empty() && v != "0")
}
