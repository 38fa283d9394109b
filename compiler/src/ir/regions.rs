//! The validator's rules for barrier regions (`passes::barriers` makes them; `validate`
//! calls [`problems`] for every function).
//!
//! - `barrier_resume id, dest` is a kernel's terminator right after a work-group barrier;
//!   `id` is at least 1 and unique in the function; `dest` is not the entry block, takes
//!   no parameters and gets no arguments.
//! - In a function with resume points, every work-group barrier ends its region (is
//!   followed by `barrier_resume`).
//! - Nothing but work-item state crosses a barrier: every use is dominated by its
//!   definition in the region graph (`DomTree::of_regions`: a work-item enters at the entry
//!   or at a resume point), except the values the lowering recomputes at every entry:
//!   kernel parameters, work-item queries and variable addresses.
//! - Only `Variable` instructions of kernels are marked as work-item state.

use super::function::{FuncKind, Function, ValueDef};
use super::instructions::InstData;
use crate::analysis::DomTree;
use std::collections::HashSet;

/// What is wrong with the barrier regions and state variables of `f`.
pub(super) fn problems(f: &Function) -> Vec<String> {
    let mut out = Vec::new();
    let Some(entry) = f.layout.entry() else { return out };
    let mut ids = HashSet::new();
    let mut resumes = 0usize;
    for &b in &f.layout.blocks {
        let insts = &f.layout.insts[b];
        for (pos, &i) in insts.iter().enumerate() {
            let Some(data) = f.insts.get(i) else { continue };
            if f.state_values[i] && !f.is_state_var(i) {
                out.push(format!("{i} keeps a value in work-item state but is not marked as state"));
            }
            if f.is_state_var(i) {
                if !matches!(data, InstData::Variable { .. }) {
                    out.push(format!("{i} is marked as work-item state but is not a variable"));
                } else if f.kind != FuncKind::Kernel {
                    out.push(format!("{i}: work-item state outside a kernel"));
                }
            }
            let barrier_here = crate::passes::inline::is_work_group_barrier(data);
            let next = insts.get(pos + 1).and_then(|&n| f.insts.get(n));
            if let InstData::BarrierResume { id, dest } = data {
                resumes += 1;
                if f.kind != FuncKind::Kernel {
                    out.push(format!("{i}: barrier_resume outside a kernel"));
                }
                let after_barrier =
                    pos > 0 && f.insts.get(insts[pos - 1]).is_some_and(crate::passes::inline::is_work_group_barrier);
                if !after_barrier {
                    out.push(format!("{i}: barrier_resume does not follow a work-group barrier"));
                }
                if *id == 0 || !ids.insert(*id) {
                    out.push(format!("{i}: resume id {id} is 0 or not unique"));
                }
                if !dest.args.is_empty() || f.blocks.get(dest.block).is_some_and(|d| !d.params.is_empty()) {
                    out.push(format!("{i}: the resume point {} takes arguments", dest.block));
                }
                if dest.block == entry {
                    out.push(format!("{i}: the resume point is the entry block"));
                }
            } else if barrier_here && !matches!(next, Some(InstData::BarrierResume { .. })) {
                // Checked below once we know whether the function was split at all.
                out.push(format!("{i}: a work-group barrier that does not end its region"));
            }
        }
    }
    if resumes == 0 {
        // Not split (yet): barriers need no resume point.
        out.retain(|p| !p.ends_with("does not end its region"));
        return out;
    }
    let dom = DomTree::of_regions(f);
    let recomputed = |v| match f.values.get(v).map(|d| d.def) {
        Some(ValueDef::Param(b, _)) => b == entry,
        Some(ValueDef::Result(d)) => {
            matches!(f.insts.get(d), Some(InstData::WorkItem { .. } | InstData::Variable { .. }))
        }
        _ => true,
    };
    for &b in &f.layout.blocks {
        if !dom.is_reachable(b) {
            continue;
        }
        for &i in &f.layout.insts[b] {
            let Some(data) = f.insts.get(i) else { continue };
            data.for_each_operand(|v| {
                if recomputed(v) {
                    return;
                }
                let def_block = match f.values.get(v).map(|d| d.def) {
                    Some(ValueDef::Param(pb, _)) => Some(pb),
                    Some(ValueDef::Result(d)) => f.layout.inst_block[d],
                    _ => None,
                };
                if let Some(db) = def_block {
                    if db != b && !dom.dominates(db, b) {
                        out.push(format!(
                            "{v} (defined in {db}) is live across a barrier: its use by {i} in {b} is in another \
                             barrier region (it must be kept in work-item state)"
                        ));
                    }
                }
            });
        }
    }
    out
}
