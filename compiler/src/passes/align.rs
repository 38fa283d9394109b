//! Memory accesses get the alignment their address is guaranteed to have.
//!
//! A load, store or copy says how aligned its address is (SPIR-V's `Aligned`), and LLVM
//! believes it: an access that claims more than its address has may become an aligned
//! vector instruction that faults. A claim is what the producer knew of memory it laid out
//! itself, and SoftCL lays some of it out again. Clang's SROA gives a member split out of an
//! over-aligned struct (a `volatile int` beside a `long16`) a variable of its own and keeps
//! the struct's alignment (128) on its accesses, while SoftCL aligns a private variable to
//! its type or the alignment its producer declared, whichever is larger, and a vectorized
//! kernel keeps a variable's W copies in a row, each aligned so ([`lane_copy_stride`]).
//!
//! So the alignment of every access is decided here, once, and the back end uses it as it
//! is. Where every source of an address is memory SoftCL places - a private variable
//! ([`variable_align`]) or a module-scope variable ([`global_align`]) - reached through
//! access chains, pointer casts, selects and block arguments, the access gets exactly what
//! that placement guarantees: the minimum of the variable's alignment and the alignment of
//! every offset on the way ([`at_offset`]: a constant offset's lowest set bit, a variable
//! index's stride). Where some source is anything else (a kernel argument, a loaded
//! pointer, a function parameter), the access keeps at most its claim, which the
//! application guarantees by OpenCL C's rules (no claim: the natural alignment of the type
//! accessed). Every access of the result has a power-of-two alignment.
//!
//! The back end's own accesses follow the same rule: the argument block's values are
//! aligned to at most [`crate::abi::ARGS_ALIGN`] at their offsets (`back::llvm`).

use crate::abi::BLOCK_ALIGN;
use crate::ir::{self, ConstData, ConvertOp, InstData, TypeData, Value, ValueDef};
use std::collections::HashMap;

/// The largest alignment SoftCL gives a variable: the alignment of the blocks (local memory,
/// work-item state) variables may live in.
pub const MAX_ALIGN: u64 = BLOCK_ALIGN as u64;

/// The alignment the back end gives a private variable of type `ty` whose producer declared
/// alignment `declared` (0: none): its alloca, each of a vectorized kernel's lane copies
/// ([`lane_copy_stride`]), its slot in the work-item state.
pub fn variable_align(types: &ir::TypeTable, ty: ir::Type, declared: u32) -> u64 {
    u64::from(declared).max(types.align_of(ty)).clamp(1, MAX_ALIGN)
}

/// The bytes from one lane's copy of a private variable to the next in vector code (lane k's
/// copy at k times this): its size, rounded up so every copy keeps [`variable_align`].
pub fn lane_copy_stride(types: &ir::TypeTable, ty: ir::Type, declared: u32) -> u64 {
    types.size_of(ty).max(1).next_multiple_of(variable_align(types, ty, declared))
}

/// The alignment the back end gives module-scope variable `g` (in local memory or as a
/// global of the program's data).
pub fn global_align(types: &ir::TypeTable, g: &ir::GlobalVarData) -> u64 {
    variable_align(types, g.ty, g.align)
}

/// The alignment of `base + offset` for a `base` aligned to `base_align` (a power of two).
pub fn at_offset(base_align: u64, offset: u64) -> u64 {
    match offset {
        0 => base_align,
        _ => base_align.min(lowest_bit(offset)),
    }
}

/// The largest power of two dividing `x` (`x` > 0).
fn lowest_bit(x: u64) -> u64 {
    1u64 << x.trailing_zeros()
}

/// What is known of an address: aligned to `align` in every source SoftCL places; `placed`
/// when every source is such memory (else the access's claim also bounds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bound {
    align: u64,
    placed: bool,
}

/// No source seen yet (the identity of [`meet`]).
const NONE_YET: Bound = Bound { align: u64::MAX, placed: true };
/// A source SoftCL does not place.
const FOREIGN: Bound = Bound { align: u64::MAX, placed: false };

fn meet(a: Bound, b: Bound) -> Bound {
    Bound { align: a.align.min(b.align), placed: a.placed && b.placed }
}

/// Sets the alignment of every load, store and copy of `m`'s functions.
pub fn run_module(m: &mut ir::Module) {
    let ir::Module { types, constants, globals, functions, .. } = m;
    for (_, f) in functions.iter_mut() {
        if f.kind != ir::FuncKind::Import {
            run(types, constants, globals, f);
        }
    }
}

fn run(
    types: &ir::TypeTable,
    constants: &ir::Arena<ir::Const, ConstData>,
    globals: &ir::Arena<ir::GlobalVar, ir::GlobalVarData>,
    f: &mut ir::Function,
) {
    let bounds = address_bounds(types, constants, globals, f);
    let bound = |v: Value| bounds.get(&v).copied().unwrap_or(FOREIGN);
    let natural = |t: ir::Type| types.align_of(t).clamp(1, 1 << 31);
    // The alignment of an access through `p` that claims `claim` for a value of type `t`.
    let decide = |p: Value, claim: u32, t: ir::Type| -> u32 {
        let claim = match claim {
            0 => natural(t),
            c => lowest_bit(u64::from(c)),
        };
        // A placed bound above every placement's alignment has no source (a block argument
        // passed only to itself): it says nothing.
        let b = bound(p);
        let a = if b.placed && b.align <= MAX_ALIGN { b.align } else { b.align.min(claim) };
        a.clamp(1, 1 << 31) as u32
    };
    let insts: Vec<ir::Inst> = f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter().copied()).collect();
    for i in insts {
        let new = match &f.insts[i] {
            InstData::Load { ptr, align, .. } => match f.inst_result[i] {
                Some(r) => decide(*ptr, *align, f.value_type(r)),
                None => continue,
            },
            InstData::Store { ptr, value, align, .. } => decide(*ptr, *align, f.value_type(*value)),
            InstData::CopyMemory { dst, src, align, .. } => {
                let byte = |p: Value| match types.get(f.value_type(p)) {
                    TypeData::Pointer { pointee, .. } => *pointee,
                    _ => f.value_type(p),
                };
                decide(*dst, *align, byte(*dst)).min(decide(*src, *align, byte(*src)))
            }
            _ => continue,
        };
        match &mut f.insts[i] {
            InstData::Load { align, .. } | InstData::Store { align, .. } | InstData::CopyMemory { align, .. } => {
                *align = new
            }
            _ => {}
        }
    }
}

/// The [`Bound`] of every pointer value of `f` that some access could use, to a fixed
/// point over block arguments (loops).
fn address_bounds(
    types: &ir::TypeTable,
    constants: &ir::Arena<ir::Const, ConstData>,
    globals: &ir::Arena<ir::GlobalVar, ir::GlobalVarData>,
    f: &ir::Function,
) -> HashMap<Value, Bound> {
    // Block parameter -> the values branches pass to it.
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    for &b in &f.layout.blocks {
        let Some(t) = f.layout.last_inst(b) else { continue };
        for call in f.insts[t].successors() {
            for (p, &a) in f.blocks[call.block].params.iter().zip(&call.args) {
                incoming.entry(*p).or_default().push(a);
            }
        }
    }
    let entry = f.layout.entry();
    let is_pointer = |v: Value| matches!(types.get(f.value_type(v)), TypeData::Pointer { .. });
    let const_bits = |v: Value| match f.values.get(v).map(|d| d.def) {
        Some(ValueDef::Const(c)) => match constants.get(c) {
            Some(ConstData::Int { bits, .. }) => Some(*bits),
            Some(ConstData::Null { .. }) => Some(0),
            _ => None,
        },
        _ => None,
    };
    // The alignment of `index` steps of `size` bytes (a constant index's bits, sign- or
    // zero-extended, have the same low bits).
    let step = |index: Value, size: u64| -> u64 {
        match (const_bits(index), size) {
            (_, 0) => u64::MAX,
            (Some(n), s) => match n.wrapping_mul(s) {
                0 => u64::MAX,
                offset => lowest_bit(offset),
            },
            (None, s) => lowest_bit(s),
        }
    };
    let mut bounds: HashMap<Value, Bound> = HashMap::new();
    let values: Vec<Value> = f.values.keys().filter(|&v| is_pointer(v)).collect();
    loop {
        let mut changed = false;
        for &v in &values {
            let get = |x: Value| bounds.get(&x).copied().unwrap_or(NONE_YET);
            let b = match f.values[v].def {
                ValueDef::Global(g) => match globals.get(g) {
                    Some(data) if data.builtin.is_none() => Bound { align: global_align(types, data), placed: true },
                    _ => FOREIGN,
                },
                ValueDef::Const(_) => FOREIGN,
                ValueDef::Param(block, _) if Some(block) == entry => FOREIGN,
                ValueDef::Param(..) => match incoming.get(&v) {
                    Some(args) => args.iter().fold(NONE_YET, |acc, &a| meet(acc, get(a))),
                    None => FOREIGN,
                },
                ValueDef::Result(i) => match &f.insts[i] {
                    InstData::Variable { ty, align, .. } => {
                        Bound { align: variable_align(types, *ty, *align), placed: true }
                    }
                    InstData::Convert { op: ConvertOp::Bitcast | ConvertOp::PtrCast, arg, .. } if is_pointer(*arg) => {
                        get(*arg)
                    }
                    InstData::Select { if_true, if_false, .. } => meet(get(*if_true), get(*if_false)),
                    InstData::AccessChain { base, element, indices, .. } => {
                        let mut b = get(*base);
                        let mut cur = match types.get(f.value_type(*base)) {
                            TypeData::Pointer { pointee, .. } => *pointee,
                            _ => continue,
                        };
                        // The back end steps over bytes for a pointee without a size.
                        let size_of = |t: ir::Type| match types.get(t) {
                            TypeData::Void | TypeData::Function { .. } | TypeData::Opaque { .. } => 1,
                            _ => types.size_of(t),
                        };
                        if let Some(e) = element {
                            b.align = b.align.min(step(*e, size_of(cur)));
                        }
                        for &ix in indices {
                            match types.get(cur) {
                                TypeData::Struct { fields, .. } => {
                                    let n = const_bits(ix).unwrap_or(u64::MAX) as usize;
                                    let Some(&field) = fields.get(n) else {
                                        b = FOREIGN;
                                        break;
                                    };
                                    b.align = at_offset(b.align, types.field_offset(cur, n));
                                    cur = field;
                                }
                                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                                    b.align = b.align.min(step(ix, size_of(*elem)));
                                    cur = *elem;
                                }
                                _ => {
                                    b = FOREIGN;
                                    break;
                                }
                            }
                        }
                        b
                    }
                    _ => FOREIGN,
                },
            };
            if bounds.get(&v) != Some(&b) {
                bounds.insert(v, b);
                changed = true;
            }
        }
        if !changed {
            return bounds;
        }
    }
}
