//! Software prefetching for vector code: which consecutive loads prefetch their stream
//! ahead of the packet loop (`back::vector` emits the prefetches).

use crate::ir::{self, Inst, InstData, TypeData, Value};
use crate::vectorize::analysis::{Access, WorkItemAnalysis};

/// How far ahead of a packet's consecutive load its stream is prefetched: 4 KiB, 64 packets
/// of 16 floats. Measured on the 2-core AVX-512 host (docs/PERFORMANCE.md): the 5-point
/// stencil reads three rows of its input per output row; the hardware prefetcher keeps up
/// with one stream, not with three, and a software prefetch of each row 4 KiB ahead (into
/// L2: locality 1) took a branch-free stencil from 0.28 to 0.19 ns per element, level with a
/// plain copy kernel. Nearer (1 KiB, 2 KiB) left part of the latency exposed; farther did no
/// better (a hand-written C loop over the same rows, measured the same way).
pub const PREFETCH_AHEAD: u64 = 4096;

/// Whether vector code prefetches its streams ([`prefetched_loads`]): yes unless
/// `SOFTCL_PREFETCH=0`.
pub fn prefetch_allowed() -> bool {
    std::env::var("SOFTCL_PREFETCH").as_deref() != Ok("0")
}

/// The loads of vectorized kernel `f` that prefetch ahead of themselves: consecutive loads
/// of global or constant memory outside any loop of the work-item function (each packet then
/// reads the next W elements of a stream, so the stream runs through the packet loop).
/// Loads of one block a few elements apart (`in[i - 1]`, `in[i]`, `in[i + 1]`: the same
/// base, an index that differs by a constant, [`stream_key`]) are one stream: only the
/// first prefetches.
pub fn prefetched_loads(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis) -> std::collections::HashSet<Inst> {
    let mut out = std::collections::HashSet::new();
    if !prefetch_allowed() {
        return out;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    for &b in &f.layout.blocks {
        if loops.depth(b) > 0 {
            continue;
        }
        // Per block: a block may run without the others (its guard skips them).
        let mut streams: Vec<(StreamKey, i64)> = Vec::new();
        for &i in &f.layout.insts[b] {
            let InstData::Load { ptr, volatile: false, .. } = &f.insts[i] else { continue };
            let memory = matches!(
                m.types.get(f.value_type(*ptr)),
                TypeData::Pointer {
                    space: crate::kernel_info::AddressSpace::Global | crate::kernel_info::AddressSpace::Constant,
                    ..
                }
            );
            if memory && wa.access(i) == Some(Access::Consecutive) {
                match stream_key(m, f, *ptr) {
                    Some((key, offset)) => {
                        let near = |&(k, o): &(StreamKey, i64)| k == key && (o - offset).abs() < STREAM_SLACK;
                        if !streams.iter().any(near) {
                            streams.push((key, offset));
                            out.insert(i);
                        }
                    }
                    None => {
                        out.insert(i);
                    }
                }
            }
        }
    }
    out
}

/// Elements apart within which two loads of one [`stream_key`] share their prefetch.
const STREAM_SLACK: i64 = 16;

/// What identifies a stream: the base pointer and the root of the index.
type StreamKey = (Value, Value);

/// The stream of a load through `ptr` (an access chain `base[root + c]`) and its constant
/// offset `c`. The root is the index with constant additions, subtractions and integer
/// conversions peeled off; a load of a private variable stands for the variable (each block
/// loads `i` afresh). `None` when the pointer is not such an access chain.
fn stream_key(m: &ir::Module, f: &ir::Function, ptr: Value) -> Option<(StreamKey, i64)> {
    let def = |v: Value| match f.values[v].def {
        ir::ValueDef::Result(i) => Some(&f.insts[i]),
        _ => None,
    };
    // A private variable loaded afresh in each block stands for what it holds.
    let var_of = |v: Value| match def(v) {
        Some(InstData::Load { ptr: var, .. }) if matches!(def(*var), Some(InstData::Variable { .. })) => *var,
        _ => v,
    };
    let (base, index) = match def(ptr)? {
        InstData::AccessChain { base, element: Some(e), indices, .. } if indices.is_empty() => (*base, *e),
        InstData::AccessChain { base, element: None, indices, .. } if indices.len() == 1 => (*base, indices[0]),
        _ => return None,
    };
    let mut root = index;
    let mut offset = 0i64;
    for _ in 0..8 {
        match def(root) {
            Some(InstData::Convert { arg, .. }) => root = *arg,
            Some(InstData::Binary { op: ir::BinaryOp::IAdd, lhs, rhs }) => {
                match (super::analysis::const_int(m, f, *lhs), super::analysis::const_int(m, f, *rhs)) {
                    (_, Some(c)) => (root, offset) = (*lhs, offset.wrapping_add(c)),
                    (Some(c), _) => (root, offset) = (*rhs, offset.wrapping_add(c)),
                    _ => break,
                }
            }
            Some(InstData::Binary { op: ir::BinaryOp::ISub, lhs, rhs }) => {
                match super::analysis::const_int(m, f, *rhs) {
                    Some(c) => (root, offset) = (*lhs, offset.wrapping_sub(c)),
                    None => break,
                }
            }
            Some(InstData::Load { .. }) => {
                root = var_of(root);
                break;
            }
            _ => break,
        }
    }
    Some(((var_of(base), root), offset))
}
