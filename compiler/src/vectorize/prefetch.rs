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

/// The loads of vectorized kernel `f` that prefetch ahead of themselves (none unless
/// `allowed`: `CodegenKnobs::prefetch`, which `SOFTCL_PREFETCH=0` turns off): consecutive loads
/// of global or constant memory outside any loop of the work-item function (each packet then
/// reads the next W elements of a stream, so the stream runs through the packet loop).
/// Loads of one block a few elements apart (`in[i - 1]`, `in[i]`, `in[i + 1]`: the same
/// base, an index that differs by a constant, [`stream_key`]) are one stream: only the
/// first prefetches. Loads a uniform distance apart (`in[i - w]`, `in[i]`, `in[i + w]`: the
/// rows of a stencil) are rows of one array walked one row after the other: the packet
/// loop reaches row `y + 1` after row `y`, so what `in[i + w]` reads is read again as
/// `in[i]` and `in[i - w]` one and two rows later, from the cache. Only the leading row
/// (the largest multiple of the distance) prefetches; the other rows' prefetches found
/// their lines already in L2 and cost two instructions a packet each. A block that reads no
/// more than [`HARDWARE_STREAMS`] streams prefetches nothing: the hardware keeps up.
pub fn prefetched_loads(
    m: &ir::Module,
    f: &ir::Function,
    wa: &WorkItemAnalysis,
    allowed: bool,
) -> std::collections::HashSet<Inst> {
    let mut out = std::collections::HashSet::new();
    if !allowed {
        return out;
    }
    let cfg = crate::analysis::Cfg::new(f);
    let dom = crate::analysis::DomTree::new(&cfg);
    let loops = crate::analysis::LoopInfo::new(&cfg, &dom);
    // Per block: a block may run without the others (its guard skips them).
    let mut blocks: Vec<Vec<(Inst, Option<Stream>)>> = Vec::new();
    for &b in &f.layout.blocks {
        if loops.depth(b) > 0 {
            continue;
        }
        let mut loads = Vec::new();
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
                loads.push((i, stream_key(m, f, wa, *ptr)));
            }
        }
        blocks.push(loads);
    }
    // The rows of each 2D array a block reads: (base, root, distance) and the leading row's
    // load and multiple.
    let rows_of = |loads: &[(Inst, Option<Stream>)]| {
        let mut rows: Vec<((Value, Value, Value), Inst, i64)> = Vec::new();
        for &(i, ref stream) in loads {
            if let Some(Stream::Row { base, root, distance, multiple }) = *stream {
                let key = (base, root, distance);
                match rows.iter_mut().find(|(k, ..)| *k == key) {
                    Some(row) if row.2 < multiple => (row.1, row.2) = (i, multiple),
                    Some(_) => {}
                    None => rows.push((key, i, multiple)),
                }
            }
        }
        rows
    };
    // Arrays whose rows ahead some block prefetches: their row 0 (`in[i + c]`), in any block
    // (an optimised kernel loads `in[i]` before the branch that leads to the other rows), is
    // read from the cache.
    let led: Vec<(Value, Value)> =
        blocks.iter().flat_map(|l| rows_of(l)).filter(|r| r.2 > 0).map(|((b, r, _), ..)| (b, r)).collect();
    for loads in blocks {
        if block_streams(&loads) <= HARDWARE_STREAMS {
            continue;
        }
        let rows = rows_of(&loads);
        let mut streams: Vec<(StreamKey, i64)> = Vec::new();
        for (i, stream) in loads {
            match stream {
                Some(Stream::Row { .. }) => {
                    if rows.iter().any(|&(_, lead, _)| lead == i) {
                        out.insert(i);
                    }
                }
                Some(Stream::Elements(key, _)) if led.contains(&key) => {}
                Some(Stream::Elements(key, offset)) => {
                    if first_of_stream(&mut streams, key, offset) {
                        out.insert(i);
                    }
                }
                None => {
                    out.insert(i);
                }
            }
        }
    }
    out
}

/// Elements apart within which two loads of one [`stream_key`] share their prefetch.
const STREAM_SLACK: i64 = 16;

/// Whether a load of `key` at `offset` starts a stream not in `seen` (none of its loads within
/// [`STREAM_SLACK`] elements); if so it is added.
fn first_of_stream(seen: &mut Vec<(StreamKey, i64)>, key: StreamKey, offset: i64) -> bool {
    let new = !seen.iter().any(|&(k, o)| k == key && (o - offset).abs() < STREAM_SLACK);
    if new {
        seen.push((key, offset));
    }
    new
}

/// Streams one block may read and be left to the hardware prefetcher. Measured on the
/// development machine (docs/PERFORMANCE.md, "Software prefetches only past two streams"):
/// `c = a + b` and `z = alpha * x + y` (two streams) ran 5-10% faster without prefetches,
/// while the stencil's three rows and the reduction's sixteen strided streams need them.
pub const HARDWARE_STREAMS: usize = 2;

/// The streams a block's consecutive loads read: each row of each 2D array, each stream of
/// its own (loads a few elements apart are one), and each load of no recognised form.
fn block_streams(loads: &[(Inst, Option<Stream>)]) -> usize {
    let mut rows: Vec<((Value, Value, Value), i64)> = Vec::new();
    let mut elements: Vec<(StreamKey, i64)> = Vec::new();
    let mut other = 0;
    for (_, stream) in loads {
        match *stream {
            Some(Stream::Row { base, root, distance, multiple }) => {
                if !rows.contains(&((base, root, distance), multiple)) {
                    rows.push(((base, root, distance), multiple));
                }
            }
            Some(Stream::Elements(key, offset)) => {
                first_of_stream(&mut elements, key, offset);
            }
            None => other += 1,
        }
    }
    rows.len() + elements.len() + other
}

/// What identifies a stream: the base pointer and the root of the index.
type StreamKey = (Value, Value);

/// The stream a consecutive load belongs to ([`stream_key`]).
enum Stream {
    /// `base[root + c]`: the key (base, root) and the constant `c`.
    Elements(StreamKey, i64),
    /// `base[root + multiple * distance (+ c)]` with a uniform `distance` that is not a
    /// constant: a row of a 2D array whose rows are `distance` elements apart.
    Row { base: Value, root: Value, distance: Value, multiple: i64 },
}

/// The stream of a load through `ptr` (an access chain `base[root + c]` or
/// `base[root +- distance + c]`). The root is the index with constant additions,
/// subtractions and integer conversions peeled off, and one addition or subtraction of a
/// uniform value (the distance); a load of a private variable stands for the variable (each
/// block loads `i` afresh). `None` when the pointer is not such an access chain.
fn stream_key(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis, ptr: Value) -> Option<Stream> {
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
    let uniform = |v: Value| wa.shape(f, v).is_uniform();
    // `index +- distance` moves by rows when the index is `y * distance + x`.
    let is_row = |index: Value, distance: Value| {
        uniform(distance) && !uniform(index) && has_pitch(f, var_of(index), var_of(distance), &var_of)
    };
    let mut root = index;
    let mut offset = 0i64;
    let mut row: Option<(Value, i64)> = None;
    for _ in 0..8 {
        match def(root) {
            Some(InstData::Convert { arg, .. }) => root = *arg,
            Some(InstData::Binary { op: ir::BinaryOp::IAdd, lhs, rhs }) => {
                match (super::analysis::const_int(m, f, *lhs), super::analysis::const_int(m, f, *rhs)) {
                    (_, Some(c)) => (root, offset) = (*lhs, offset.wrapping_add(c)),
                    (Some(c), _) => (root, offset) = (*rhs, offset.wrapping_add(c)),
                    _ if row.is_none() && is_row(*lhs, *rhs) => (root, row) = (*lhs, Some((var_of(*rhs), 1))),
                    _ if row.is_none() && is_row(*rhs, *lhs) => (root, row) = (*rhs, Some((var_of(*lhs), 1))),
                    _ => break,
                }
            }
            Some(InstData::Binary { op: ir::BinaryOp::ISub, lhs, rhs }) => match super::analysis::const_int(m, f, *rhs)
            {
                Some(c) => (root, offset) = (*lhs, offset.wrapping_sub(c)),
                None if row.is_none() && is_row(*lhs, *rhs) => (root, row) = (*lhs, Some((var_of(*rhs), -1))),
                None => break,
            },
            Some(InstData::Load { .. }) => {
                root = var_of(root);
                break;
            }
            _ => break,
        }
    }
    let base = var_of(base);
    // A uniform addend that is not the pitch of the index stays in the root: the two parts
    // are not rows of one array walked in order (`in[i + n]` with `n` half the array).
    Some(match row {
        Some((distance, multiple)) => Stream::Row { base, root, distance, multiple },
        None => Stream::Elements((base, root), offset),
    })
}

/// Whether index `root` is `y * distance + x` (up to integer conversions and the order of
/// the operands): row-major with rows `distance` elements apart.
fn has_pitch(f: &ir::Function, root: Value, distance: Value, var_of: &dyn Fn(Value) -> Value) -> bool {
    let def = |v: Value| match f.values[v].def {
        ir::ValueDef::Result(i) => Some(&f.insts[i]),
        _ => None,
    };
    let peel = |mut v: Value| {
        while let Some(InstData::Convert { arg, .. }) = def(v) {
            v = *arg;
        }
        v
    };
    let is_row_start = |v: Value| match def(peel(v)) {
        Some(InstData::Binary { op: ir::BinaryOp::IMul, lhs, rhs }) => {
            var_of(peel(*lhs)) == distance || var_of(peel(*rhs)) == distance
        }
        _ => false,
    };
    // A private variable (unoptimised code keeps `i` in one) holds what its one store wrote.
    let root = match def(root) {
        Some(InstData::Variable { .. }) => {
            let mut stored =
                f.layout.blocks.iter().flat_map(|&b| &f.layout.insts[b]).filter_map(|&i| match f.insts[i] {
                    InstData::Store { ptr, value, .. } if ptr == root => Some(value),
                    _ => None,
                });
            match (stored.next(), stored.next()) {
                (Some(v), None) => v,
                _ => return false,
            }
        }
        _ => root,
    };
    match def(peel(root)) {
        Some(InstData::Binary { op: ir::BinaryOp::IAdd, lhs, rhs }) => is_row_start(*lhs) || is_row_start(*rhs),
        _ => false,
    }
}
