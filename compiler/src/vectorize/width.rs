//! The vector width W of a kernel: `intel_reqd_sub_group_size`, then the knob
//! (`CL_CONFIG_CPU_VECTORIZER_MODE`), then `vec_type_hint`, then the widest data type the
//! kernel computes with against the host's vector registers (16 lanes of 32 bits on AVX-512,
//! 8 on AVX2, 4 on SSE). [`register_bound`] is the heuristic's check for kernels written for
//! SIMD already.

use crate::ir::{self, InstData, TypeData};
use crate::kernel_info::KernelInfo;
use crate::Vectorizer;

/// The width chosen for a kernel and why (a report line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Width {
    /// Work-items per packet; 1 = scalar.
    pub lanes: u32,
    pub why: String,
    /// Chosen by the heuristic from the data types (no knob, hint or required sub-group
    /// size): [`interleave`] may double it.
    pub auto: bool,
}

/// Bits of the widest scalar element a kernel loads, stores or computes floating point
/// with (integer address arithmetic does not count: ids are 64-bit everywhere); 32 when
/// it has none.
pub fn widest_data_bits(m: &ir::Module, func: &ir::Function) -> u32 {
    let elem_bits = |t: ir::Type| -> u32 {
        let t = match m.types.get(t) {
            TypeData::Vector { elem, .. } => *elem,
            _ => t,
        };
        match m.types.get(t) {
            TypeData::Int { bits } | TypeData::Float { bits } => *bits as u32,
            _ => 0,
        }
    };
    let is_float = |t: ir::Type| {
        let t = match m.types.get(t) {
            TypeData::Vector { elem, .. } => *elem,
            _ => t,
        };
        matches!(m.types.get(t), TypeData::Float { .. })
    };
    let mut widest = 0;
    for &b in &func.layout.blocks {
        for &i in &func.layout.insts[b] {
            let bits = match &func.insts[i] {
                // Work-item state (`passes::barriers`) is no data the kernel moves.
                InstData::Load { ptr, .. } | InstData::Store { ptr, .. } if func.is_state_value_address(*ptr) => 0,
                InstData::Load { .. } => func.inst_result[i].map_or(0, |v| elem_bits(func.value_type(v))),
                InstData::Store { value, .. } => elem_bits(func.value_type(*value)),
                _ => match func.inst_result[i] {
                    Some(v) if is_float(func.value_type(v)) => elem_bits(func.value_type(v)),
                    _ => 0,
                },
            };
            widest = widest.max(bits);
        }
    }
    if widest == 0 {
        32
    } else {
        widest.clamp(8, 64)
    }
}

/// Bits of the widest explicit vector an arithmetic instruction (binary or unary operator)
/// of the kernel computes, e.g. 512 for `uint16` additions; 0 when it has none.
pub fn widest_vector_arith_bits(m: &ir::Module, func: &ir::Function) -> u32 {
    let vector_bits = |t: ir::Type| -> u32 {
        match m.types.get(t) {
            TypeData::Vector { elem, len } => match m.types.get(*elem) {
                TypeData::Int { bits } | TypeData::Float { bits } => *bits as u32 * *len,
                _ => 0,
            },
            _ => 0,
        }
    };
    func.layout
        .blocks
        .iter()
        .flat_map(|&b| func.layout.insts[b].iter())
        .filter(|&&i| matches!(func.insts[i], InstData::Binary { .. } | InstData::Unary { .. }))
        .filter_map(|&i| func.inst_result[i].map(|v| vector_bits(func.value_type(v))))
        .max()
        .unwrap_or(0)
}

/// Bits of a `vec_type_hint` type name ("float4" -> 128, "double" -> 64); `None` if unknown.
pub fn hint_bits(hint: &str) -> Option<u32> {
    let base = hint.trim_end_matches(|c: char| c.is_ascii_digit());
    let n: u32 = if base.len() == hint.len() { 1 } else { hint[base.len()..].parse().ok()? };
    let bits = match base {
        "char" | "uchar" => 8,
        "short" | "ushort" | "half" => 16,
        "int" | "uint" | "float" => 32,
        "long" | "ulong" | "double" => 64,
        _ => return None,
    };
    Some(bits * n)
}

/// Chooses W for `info`'s kernel. `Err` is a build error (a knob value that is not
/// understood).
pub fn choose(m: &ir::Module, func: &ir::Function, info: &KernelInfo, v: &Vectorizer) -> Result<Width, String> {
    let (register_bytes, forced) = match v {
        Vectorizer::Off => return Ok(Width { lanes: 1, why: "vectorizer off".into(), auto: false }),
        Vectorizer::Invalid(msg) => return Err(msg.clone()),
        Vectorizer::Auto { register_bytes } => (*register_bytes, None),
        Vectorizer::Forced { width, register_bytes } => (*register_bytes, Some(*width)),
    };
    let reg_bits = register_bytes.max(16) * 8;
    if let Some(sg) = info.reqd_sub_group_size {
        if sg <= 1 {
            return Ok(Width { lanes: 1, why: format!("intel_reqd_sub_group_size({sg})"), auto: false });
        }
        return Ok(Width { lanes: sg, why: format!("intel_reqd_sub_group_size({sg})"), auto: false });
    }
    if let Some(w) = forced {
        let why = if w * 32 > reg_bits {
            format!(
                "CL_CONFIG_CPU_VECTORIZER_MODE={w} (the host's vector registers hold {} 32-bit lanes: a value takes {})",
                reg_bits / 32,
                w * 32 / reg_bits
            )
        } else {
            format!("CL_CONFIG_CPU_VECTORIZER_MODE={w}")
        };
        return Ok(Width { lanes: w, why, auto: false });
    }
    if let Some(hint) = &info.vec_type_hint {
        if let Some(bits) = hint_bits(hint) {
            let lanes = (reg_bits / bits).clamp(1, 16);
            let lanes = if lanes < 4 { 1 } else { lanes };
            return Ok(Width { lanes, why: format!("vec_type_hint({hint}) on {reg_bits}-bit registers"), auto: false });
        }
    }
    let bits = widest_data_bits(m, func);
    let lanes = (reg_bits / bits).clamp(4, 16);
    Ok(Width { lanes, why: format!("widest data type {bits} bits on {reg_bits}-bit registers"), auto: true })
}

/// The heuristic width's check for a kernel written for SIMD already: it computes with
/// explicit vectors as wide as a register (hashcat's `u32x16` with VECT_SIZE=16, taken from
/// CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT) and its varying values live at once (`pressure`)
/// would not fit the register file even in packets of 4 work-items. Packets then gain no
/// vector width, only values of W registers each that spill: on the loaded 2-core AVX-512
/// machine hashcat's MD5 ran at 1.8 MH/s at W = 8 and 85 MH/s scalar, and SHA2-256's
/// unrolled rounds did not finish compiling in 20 minutes at W = 8 (3 s scalar). Kernels
/// whose few wide values stay in registers (a `float16` FMA chain) keep their packets:
/// those give the core independent chains.
pub fn register_bound(
    m: &ir::Module,
    func: &ir::Function,
    pressure: &crate::gen_abi::RegisterPressure,
    register_bytes: u32,
) -> Option<String> {
    let reg_bytes = register_bytes.max(16);
    let vector_bits = widest_vector_arith_bits(m, func);
    if vector_bits < reg_bytes * 8 {
        return None;
    }
    // 32 vector registers with AVX-512, 16 before.
    let file = reg_bytes * if reg_bytes >= 64 { 32 } else { 16 };
    let at_four = pressure.varying_bytes.saturating_mul(4);
    (at_four > file).then(|| {
        format!(
            "explicit vectors of {vector_bits} bits fill the {}-bit registers and {} bytes of varying values \
             are live at once ({at_four} bytes in packets of 4, for a {file}-byte register file)",
            reg_bytes * 8,
            pressure.varying_bytes
        )
    })
}

/// Loop-carried values (one FMA chain each) below which the heuristic width is doubled.
pub const INTERLEAVE_MAX_CHAINS: usize = 2;
/// Varying instructions a loop body may have for the doubled width (register pressure).
pub const INTERLEAVE_MAX_BODY: usize = 64;
/// Varying instructions a loop body may have for four packets: each of its values then takes
/// four registers.
pub const INTERLEAVE4_MAX_BODY: usize = 32;
/// Independent chains of vector operations a core needs in flight to issue one every cycle:
/// an FMA's latency (4 cycles) times the register-wide FMAs issued per cycle (one at 512
/// bits on the development machine). Measured there: clpeak's scalar row, one chain per
/// work-item, ran at 47% of the FMA peak with two packets interleaved (two chains) and the
/// benchmark's `mad_float`, two chains per work-item, at 98% (four).
pub const CHAINS_IN_FLIGHT: usize = 4;

/// How many packets run interleaved, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interleave {
    /// Packets per step of the packet loop (2 or 4): the width is multiplied by it.
    pub packets: u32,
    pub why: String,
}

/// Whether kernel `f`, at the heuristic width, should run several packets interleaved
/// (width 2W or 4W, each value in two or four registers), and why: its innermost loops carry
/// at most [`INTERLEAVE_MAX_CHAINS`] varying scalar values from one iteration to the next, so
/// at width W each iteration is one or two dependent chains of vector operations, bound by
/// their latency (an FMA's 4 cycles) rather than by the FMAs the core issues per cycle.
/// Interleaved packets give the core independent chains: as many packets as make
/// [`CHAINS_IN_FLIGHT`] chains, counting carried values that feed each other (clpeak's
/// `x = mad(y, x, y); y = mad(x, y, x)`) as one chain, and four packets only for loop bodies
/// of at most [`INTERLEAVE4_MAX_BODY`] varying instructions. Kernels with divergent
/// branches, barriers, explicit vectors carried around the loop (already several registers
/// per value), or a loop body of more than [`INTERLEAVE_MAX_BODY`] varying instructions
/// keep W.
pub fn interleave(
    m: &ir::Module,
    f: &ir::Function,
    wa: &crate::vectorize::analysis::WorkItemAnalysis,
) -> Option<Interleave> {
    if !wa.divergent_branches.is_empty() {
        return None;
    }
    let barrier = f
        .layout
        .blocks
        .iter()
        .any(|&b| f.layout.insts[b].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i])));
    if barrier {
        return None;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    let varying = |v: ir::Value| !wa.shape(f, v).is_uniform();
    let (mut carried_most, mut chains_fewest, mut body_most) = (0usize, usize::MAX, 0usize);
    for l in loops.loops().iter().filter(|l| l.children.is_empty()) {
        let carried: Vec<ir::Value> = f.blocks[l.header].params.iter().copied().filter(|&p| varying(p)).collect();
        // Explicit vectors (or anything but scalars) around the loop: not a short chain.
        if carried
            .iter()
            .any(|&p| !matches!(m.types.get(f.value_type(p)), TypeData::Int { .. } | TypeData::Float { .. }))
        {
            return None;
        }
        let body = l
            .blocks
            .iter()
            .flat_map(|&b| f.layout.insts[b].iter())
            .filter(|&&i| f.inst_result[i].is_some_and(varying))
            .count();
        if carried.is_empty() || carried.len() > INTERLEAVE_MAX_CHAINS || body > INTERLEAVE_MAX_BODY {
            return None;
        }
        carried_most = carried_most.max(carried.len());
        body_most = body_most.max(body);
        chains_fewest = chains_fewest.min(independent_chains(f, l, &carried));
    }
    if carried_most == 0 {
        return None;
    }
    let wanted = CHAINS_IN_FLIGHT.div_ceil(chains_fewest).next_power_of_two() as u32;
    let packets = wanted.clamp(2, if body_most <= INTERLEAVE4_MAX_BODY { 4 } else { 2 });
    Some(Interleave {
        packets,
        why: format!(
            "{packets} packets interleaved: innermost loops carry {carried_most} varying value(s) in \
             {chains_fewest} independent chain(s)"
        ),
    })
}

/// How many independent dependence chains the `carried` parameters of loop `l`'s header form:
/// two carried values are one chain when the value one of them takes around the back edge
/// depends, within an iteration, on the other.
fn independent_chains(f: &ir::Function, l: &crate::analysis::Loop, carried: &[ir::Value]) -> usize {
    let mut chain: Vec<usize> = (0..carried.len()).collect();
    fn root(chain: &mut [usize], mut i: usize) -> usize {
        while chain[i] != i {
            i = chain[i];
        }
        i
    }
    // The arguments the branches inside the loop pass to parameter `k` of block `b` (only the
    // header has branches from outside).
    let incoming = |b: ir::Block, k: usize| -> Vec<ir::Value> {
        f.branches_to(b)
            .into_iter()
            .filter(|&t| f.layout.inst_block[t].is_some_and(|tb| l.blocks.contains(&tb)))
            .flat_map(|t| {
                f.insts[t].successors().into_iter().filter(|c| c.block == b).map(|c| c.args[k]).collect::<Vec<_>>()
            })
            .collect()
    };
    for (i, &p) in carried.iter().enumerate() {
        let ir::ValueDef::Param(_, k) = f.values[p].def else { continue };
        let mut stack = incoming(l.header, k as usize);
        let mut seen = std::collections::HashSet::new();
        while let Some(v) = stack.pop() {
            if !seen.insert(v) {
                continue;
            }
            match f.values[v].def {
                ir::ValueDef::Param(b, _) if b == l.header => {
                    if let Some(j) = carried.iter().position(|&q| q == v) {
                        let (a, b) = (root(&mut chain, i), root(&mut chain, j));
                        chain[a] = b;
                    }
                }
                ir::ValueDef::Param(b, k) if l.blocks.contains(&b) => stack.extend(incoming(b, k as usize)),
                ir::ValueDef::Result(inst) if f.layout.inst_block[inst].is_some_and(|b| l.blocks.contains(&b)) => {
                    f.insts[inst].for_each_operand(|o| stack.push(o))
                }
                _ => {}
            }
        }
    }
    (0..carried.len()).filter(|&i| root(&mut chain, i) == i).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_bits_of_names() {
        assert_eq!(hint_bits("float"), Some(32));
        assert_eq!(hint_bits("float4"), Some(128));
        assert_eq!(hint_bits("double16"), Some(1024));
        assert_eq!(hint_bits("uchar"), Some(8));
        assert_eq!(hint_bits("pair_t"), None);
    }
}
