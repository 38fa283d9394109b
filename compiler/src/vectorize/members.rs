//! Struct members accessed together: loads (or stores) of several members of the same
//! array-of-structs element `base[e].m` in one block, with the element varying across the
//! packet. The vector lowering accesses each such group as one span (the W consecutive
//! structs of the packet are consecutive memory) and moves the members in and out of it with
//! shuffles, instead of one strided access with half of its slots masked off per member.
//! Lanes only touch the bytes some member of the group touches; nothing that may write
//! memory lies between a group's loads, and nothing that touches memory between its stores
//! (the merged store happens at the last one). Every member's access is aligned to its
//! element at least, so that the span, accessed aligned to its element, is.

use super::analysis::{Access, WorkItemAnalysis};
use crate::ir::{self, Inst, InstData, TypeData, Value};
use std::collections::HashMap;

/// One group of member accesses of one struct element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The accesses, in block order (the first is the leader, the last where stores happen).
    pub members: Vec<Inst>,
    /// Bytes of the struct (the distance between lanes).
    pub stride: u64,
    /// The scalar element type of every member.
    pub elem: ir::Type,
    /// Per element slot of the struct (stride / element size): whether a member covers it.
    pub slots: Vec<bool>,
}

/// The groups of a function, and each member's group and byte offset in the struct.
#[derive(Debug, Clone, Default)]
pub struct MemberGroups {
    pub groups: Vec<Group>,
    /// Access -> (index in `groups`, byte offset of its member in the struct).
    pub of: HashMap<Inst, (usize, u64)>,
}

/// Open candidates of a block: (is a store, base, element) -> (struct type, accesses with
/// their byte offset and type).
type Key = (bool, Value, Value);
type Open = HashMap<Key, (ir::Type, Vec<(Inst, u64, ir::Type)>)>;

/// What a member access is: (base, element, struct type, byte offset, member type).
fn member_of(m: &ir::Module, f: &ir::Function, ptr: Value) -> Option<(Value, Value, ir::Type, u64, ir::Type)> {
    let ir::ValueDef::Result(def) = f.values.get(ptr)?.def else { return None };
    let InstData::AccessChain { base, element: Some(e), indices, .. } = &f.insts[def] else { return None };
    let [ix] = indices.as_slice() else { return None };
    let TypeData::Pointer { pointee, .. } = m.types.get(f.value_type(*base)) else { return None };
    let TypeData::Struct { fields, .. } = m.types.get(*pointee) else { return None };
    let ir::ValueDef::Const(c) = f.values.get(*ix)?.def else { return None };
    let n = match m.constants.get(c)? {
        ir::ConstData::Int { bits, .. } => *bits as usize,
        ir::ConstData::Null { .. } => 0,
        _ => return None,
    };
    let field = *fields.get(n)?;
    Some((*base, *e, *pointee, m.types.field_offset(*pointee, n), field))
}

/// Whether `d` may write memory (a load group must not span it): stores, atomics, calls,
/// copies, barriers and fences, and built-ins that take pointers (vstore, printf, ...).
fn may_write(m: &ir::Module, f: &ir::Function, d: &InstData) -> bool {
    match d {
        InstData::Store { .. }
        | InstData::Atomic { .. }
        | InstData::Call { .. }
        | InstData::CopyMemory { .. }
        | InstData::Barrier { .. }
        | InstData::Fence { .. } => true,
        InstData::ExtInst { args, .. } => {
            args.iter().any(|a| matches!(m.types.get(f.value_type(*a)), TypeData::Pointer { .. }))
        }
        _ => false,
    }
}

/// Finds the groups of `f` (see the module documentation).
pub fn find(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis) -> MemberGroups {
    let mut out = MemberGroups::default();
    for &b in &f.layout.blocks {
        let mut open: Open = HashMap::new();
        let mut close = |open: &mut Open, keep: &dyn Fn(&Key) -> bool| {
            let keys: Vec<Key> = open.keys().filter(|k| !keep(k)).copied().collect();
            for k in keys {
                if let Some((st, list)) = open.remove(&k) {
                    add_group(m, &mut out, st, list);
                }
            }
        };
        for &i in &f.layout.insts[b] {
            let d = &f.insts[i];
            let access = match d {
                InstData::Load { ptr, volatile: false, align, .. } => Some((false, *ptr, *align)),
                InstData::Store { ptr, volatile: false, align, .. } => Some((true, *ptr, *align)),
                _ => None,
            };
            let member =
                access.and_then(|(is_store, ptr, align)| {
                    let (base, e, st, off, ty) = member_of(m, f, ptr)?;
                    let size = m.types.size_of(st) as i64;
                    // The span is accessed aligned to its element (members of a packed struct
                    // may not be).
                    let aligned = u64::from(align) >= m.types.size_of(m.types.scalar_of(ty));
                    (aligned && !wa.shape(f, ptr).is_uniform() && wa.access(i) == Some(Access::Strided(size)))
                        .then_some(((is_store, base, e), st, off, ty))
                });
            // Close the candidates this instruction separates from what follows.
            let is_write = may_write(m, f, d);
            if is_write || matches!(d, InstData::Load { .. }) {
                // Loads only separate stores; writes separate everything.
                let this = member.as_ref().map(|(k, ..)| *k);
                close(&mut open, &|k: &Key| Some(*k) == this || (!is_write && !k.0));
            }
            if let Some((key, st, off, ty)) = member {
                open.entry(key).or_insert_with(|| (st, Vec::new())).1.push((i, off, ty));
            }
        }
        close(&mut open, &|_| false);
    }
    out
}

/// Adds the group of `list` (accesses of struct `st`) if it has two members or more of one
/// element type, whose slots do not overlap.
fn add_group(m: &ir::Module, out: &mut MemberGroups, st: ir::Type, list: Vec<(Inst, u64, ir::Type)>) {
    if list.len() < 2 {
        return;
    }
    let elem = m.types.scalar_of(list[0].2);
    let esize = m.types.size_of(elem);
    let stride = m.types.size_of(st);
    if esize == 0 || !stride.is_multiple_of(esize) || stride / esize > 16 {
        return;
    }
    let mut slots = vec![false; (stride / esize) as usize];
    for &(_, off, ty) in &list {
        if m.types.scalar_of(ty) != elem || !off.is_multiple_of(esize) {
            return;
        }
        let first = (off / esize) as usize;
        let n = m.types.lanes(ty) as usize;
        if first + n > slots.len() {
            return;
        }
        for s in &mut slots[first..first + n] {
            if *s {
                // The same bytes twice (a member loaded twice, or stored twice).
                return;
            }
            *s = true;
        }
    }
    let g = out.groups.len();
    for &(i, off, _) in &list {
        out.of.insert(i, (g, off));
    }
    out.groups.push(Group { members: list.iter().map(|x| x.0).collect(), stride, elem, slots });
}
