//! Register pressure of a kernel for the Gen device's SIMD choice
//! (`gen_abi::RegisterPressure`): the bytes of values live at the worst point of the kernel
//! function, split into uniform values (one copy per hardware thread) and varying ones (one
//! copy per lane), by the work-item analysis ([`super::analysis`]).
//!
//! Liveness is the classic backward data flow on the block-parameter SSA form: a block's
//! parameters are defined at its start, the arguments a terminator passes are used there.
//! Every program point is measured; the worst is the one with the most bytes at SIMD16
//! (`uniform + varying x 16`), the width Intel's compiler weighs against SIMD32 and SIMD8.
//! Sizes: a value's type size; bools are 0 (flag registers); constants and module variables
//! are immediates or addresses the compiler rematerialises (0). Private variables kept in
//! registers (`WorkItemAnalysis::reg_candidates`) count as live everywhere (an
//! over-estimate); private arrays indexed at run time are their own figure
//! (`private_array_bytes`: registers at a width where they fit, else scratch traffic).
//! The variables that keep a value across a barrier (`passes::barriers`) count nothing:
//! the value counts where it is defined and where it is loaded.
//! [`kernel_pressure`] measures the kernel with its calls inlined (as the Gen compiler
//! inlines them); calls left over the limit count nothing.

use super::analysis::WorkItemAnalysis;
use crate::gen_abi::RegisterPressure;
use crate::ir::{self, Block, Function, InstData, TypeData, Value, ValueDef};
use std::collections::{HashMap, HashSet};

/// The width the worst point is chosen at.
const WEIGH_AT: u64 = 16;

/// Calls inlined at most before measuring (as many as the vectorizer inlines).
const INLINE_LIMIT: usize = 256;

/// The register pressure of kernel `f` with every call of a function with a body inlined
/// (into a copy; `wa` is `f`'s analysis, used when it has no such call).
pub fn kernel_pressure(m: &ir::Module, f: &Function, wa: &WorkItemAnalysis) -> RegisterPressure {
    let callee_of = |g: &Function, i: ir::Inst| match &g.insts[i] {
        InstData::Call { func, .. }
            if m.functions.is_valid(*func) && m.functions[*func].kind != ir::FuncKind::Import =>
        {
            Some(*func)
        }
        _ => None,
    };
    let first_call = |g: &Function| {
        g.layout
            .blocks
            .iter()
            .flat_map(|&b| g.layout.insts[b].iter().copied())
            .find_map(|i| Some((i, callee_of(g, i)?)))
    };
    if first_call(f).is_none() {
        return register_pressure(m, f, wa);
    }
    let mut g = f.clone();
    for _ in 0..INLINE_LIMIT {
        let Some((call, callee)) = first_call(&g) else { break };
        if m.functions[callee].name == g.name
            || crate::passes::inline::inline_call(&mut g, call, &m.functions[callee]).is_err()
        {
            break;
        }
    }
    let wa = super::analysis::analyze(m, &g);
    register_pressure(m, &g, &wa)
}

/// The register pressure (and the other facts the SIMD choice reads) of kernel `f`.
pub fn register_pressure(m: &ir::Module, f: &Function, wa: &WorkItemAnalysis) -> RegisterPressure {
    // Bytes and uniformity of each SSA value that lives in registers.
    let weight = |v: Value| -> (u64, bool) {
        let Some(d) = f.values.get(v) else { return (0, true) };
        match d.def {
            ValueDef::Const(_) | ValueDef::Global(_) => return (0, true),
            ValueDef::Result(i) if matches!(f.insts[i], InstData::Variable { .. }) => return (0, true),
            _ => {}
        }
        let bytes = match m.types.get(d.ty) {
            TypeData::Bool => 0,
            TypeData::Void => 0,
            _ => m.types.size_of(d.ty),
        };
        (bytes, wa.shape(f, v).is_uniform())
    };
    let blocks: Vec<Block> = f.layout.blocks.clone();
    // Per block: values used before their definition, values defined.
    let mut uses: HashMap<Block, HashSet<Value>> = HashMap::new();
    let mut defs: HashMap<Block, HashSet<Value>> = HashMap::new();
    let mut succs: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in &blocks {
        let mut u = HashSet::new();
        let mut d: HashSet<Value> = f.blocks[b].params.iter().copied().collect();
        for &i in &f.layout.insts[b] {
            f.insts[i].for_each_operand(|v| {
                if !d.contains(&v) && weight(v).0 > 0 {
                    u.insert(v);
                }
            });
            if let Some(r) = f.inst_result[i] {
                d.insert(r);
            }
        }
        let s = f
            .layout
            .last_inst(b)
            .map(|t| f.insts[t].successors().iter().map(|c| c.block).collect())
            .unwrap_or_default();
        uses.insert(b, u);
        defs.insert(b, d);
        succs.insert(b, s);
    }
    let mut live_in: HashMap<Block, HashSet<Value>> = blocks.iter().map(|&b| (b, HashSet::new())).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in blocks.iter().rev() {
            let mut set: HashSet<Value> = HashSet::new();
            for s in &succs[&b] {
                if let Some(l) = live_in.get(s) {
                    set.extend(l.iter().copied());
                }
            }
            set.retain(|v| !defs[&b].contains(v));
            set.extend(uses[&b].iter().copied());
            if set.len() != live_in[&b].len() {
                live_in.insert(b, set);
                changed = true;
            }
        }
    }
    // Register variables: live everywhere.
    let (mut base_u, mut base_v) = (0u64, 0u64);
    for &var in &wa.reg_candidates {
        let Some(ValueDef::Result(i)) = f.values.get(var).map(|d| d.def) else { continue };
        if f.state_values[i] {
            continue; // a value kept across barriers (`passes::barriers`): its loads count
        }
        let InstData::Variable { ty, .. } = &f.insts[i] else { continue };
        let bytes = m.types.size_of(*ty);
        if wa.private_regs.contains(&var) {
            base_v += bytes;
        } else {
            base_u += bytes;
        }
    }
    let mut worst = (base_u, base_v);
    let mut consider = |live: &HashSet<Value>| {
        let (mut u, mut v) = (base_u, base_v);
        for &x in live {
            let (bytes, uniform) = weight(x);
            if uniform {
                u += bytes
            } else {
                v += bytes
            }
        }
        if u + v * WEIGH_AT > worst.0 + worst.1 * WEIGH_AT {
            worst = (u, v);
        }
    };
    for &b in &blocks {
        let mut live: HashSet<Value> = HashSet::new();
        for s in &succs[&b] {
            live.extend(live_in.get(s).into_iter().flatten().copied());
        }
        consider(&live);
        for &i in f.layout.insts[b].iter().rev() {
            if let Some(r) = f.inst_result[i] {
                live.insert(r);
                consider(&live);
                live.remove(&r);
            }
            f.insts[i].for_each_operand(|v| {
                if weight(v).0 > 0 {
                    live.insert(v);
                }
            });
            consider(&live);
        }
    }
    RegisterPressure {
        uniform_bytes: worst.0.min(u64::from(u32::MAX)) as u32,
        varying_bytes: worst.1.min(u64::from(u32::MAX)) as u32,
        divergent_loops: divergent_loops(f, wa),
        subgroup_functions: uses_subgroups(m, f),
        instructions: blocks.iter().map(|&b| f.layout.insts[b].len()).sum::<usize>().min(u32::MAX as usize) as u32,
        private_array_bytes: crate::passes::gen_instrument::dynamic_private_arrays(m, f).1.min(u64::from(u32::MAX))
            as u32,
    }
}

/// A loop holds a branch on a condition that differs between work-items.
fn divergent_loops(f: &Function, wa: &WorkItemAnalysis) -> bool {
    if wa.divergent_branches.is_empty() {
        return false;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    wa.divergent_branches.iter().any(|&i| f.layout.inst_block[i].is_some_and(|b| loops.loop_of(b).is_some()))
}

/// Sub-group queries or calls of sub-group built-ins.
fn uses_subgroups(m: &ir::Module, f: &Function) -> bool {
    f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter()).any(|&i| match &f.insts[i] {
        InstData::WorkItem { query } => query.is_sub_group(),
        InstData::Group { scope: ir::Scope::SubGroup, .. } => true,
        InstData::Call { func, .. } => m.functions.is_valid(*func) && m.functions[*func].name.contains("sub_group"),
        _ => false,
    })
}
