//! Irreducible control flow made reducible by node splitting, so that vector code can
//! linearize it (`passes::linearize` handles natural loops only). A cycle entered at more
//! than one block (a `goto` into a loop's middle, or what clang's jump threading leaves)
//! keeps the entry that comes first in reverse post-order as its header; for every other
//! entry `e`, the blocks of the cycle that `e` reaches before the header are copied, and
//! the edges from outside the cycle into `e` go to the copy, which leads into the header
//! (or out of the cycle) like the original. Repeated until no such cycle is left.
//!
//! The copies define their values a second time, so a value of the copied blocks that is
//! used outside them is first kept in a private variable (`barriers::demote_value`): stored
//! where it is defined, in the original and in the copy, loaded where it is used. LLVM's
//! SROA makes these registers again.
//!
//! Copying grows the function; past a budget (`MAX_COPIED` instructions) the pass leaves
//! the function irreducible, and it stays scalar (`linearize::check` says why).

use crate::analysis::{Cfg, DomTree, LoopInfo};
use crate::ir::{Block, BlockCall, Function, Inst, InstData, Module, TypeTable, Value};
use std::collections::{HashMap, HashSet};

/// The most instructions the pass copies in one function.
const MAX_COPIED: usize = 2000;

/// Makes every kernel of `m` reducible where it can.
pub fn run_module(m: &mut Module) -> Result<(), String> {
    super::for_each_kernel(m, |types, f| run(types, f).map(|_| ()))
}

/// Splits the entries of `f`'s irreducible cycles; returns whether `f` is reducible now.
pub fn run(types: &mut TypeTable, f: &mut Function) -> Result<bool, String> {
    let mut copied = 0usize;
    loop {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(&cfg);
        let loops = LoopInfo::new(&cfg, &dom);
        let Some(&(_, to)) = loops.irreducible_edges().first() else { return Ok(true) };
        // The cycle: the blocks `to` reaches that reach `to`.
        let fwd = reach(to, |b| cfg.succs(b).to_vec());
        let back = reach(to, |b| cfg.preds(b).to_vec());
        let scc: HashSet<Block> = fwd.intersection(&back).copied().collect();
        let mut entries: Vec<Block> = scc
            .iter()
            .copied()
            .filter(|&b| cfg.preds(b).iter().any(|p| !scc.contains(p)) || cfg.preds(b).is_empty())
            .collect();
        entries.sort_by_key(|&b| cfg.rpo_number(b));
        let Some((&header, others)) = entries.split_first() else {
            return Err("an irreducible cycle without an entry".into());
        };
        let Some(&e) = others.first() else {
            return Err("an irreducible cycle with one entry".into());
        };
        // What `e` reaches in the cycle before the header.
        let mut part: HashSet<Block> = HashSet::new();
        let mut work = vec![e];
        while let Some(x) = work.pop() {
            if x == header || !scc.contains(&x) || !part.insert(x) {
                continue;
            }
            work.extend(cfg.succs(x).iter().copied());
        }
        let size: usize = part.iter().map(|&b| f.layout.insts[b].len()).sum();
        copied += size;
        let variables =
            part.iter().any(|&b| f.layout.insts[b].iter().any(|&i| matches!(f.insts[i], InstData::Variable { .. })));
        if copied > MAX_COPIED || variables {
            return Ok(false);
        }
        let outside: Vec<Block> = cfg.preds(e).iter().copied().filter(|p| !scc.contains(p)).collect();
        split(types, f, &part, e, &outside)?;
    }
}

/// The blocks reachable from `from` along `next`.
fn reach(from: Block, next: impl Fn(Block) -> Vec<Block>) -> HashSet<Block> {
    let mut set = HashSet::new();
    let mut work = vec![from];
    while let Some(x) = work.pop() {
        if set.insert(x) {
            work.extend(next(x));
        }
    }
    set
}

/// Copies the blocks of `part` (entry `e`) and sends the edges from `outside` into `e` to
/// the copy.
fn split(
    types: &mut TypeTable,
    f: &mut Function,
    part: &HashSet<Block>,
    e: Block,
    outside: &[Block],
) -> Result<(), String> {
    let entry = f.layout.entry().ok_or("a function without an entry block")?;
    let order: Vec<Block> = f.layout.blocks.iter().copied().filter(|b| part.contains(b)).collect();
    // Values of `part` used elsewhere go through private variables.
    let mut defined: HashSet<Value> = HashSet::new();
    for &b in &order {
        defined.extend(f.blocks[b].params.iter().copied());
        defined.extend(f.layout.insts[b].iter().filter_map(|&i| f.inst_result[i]));
    }
    let mut uses: HashMap<Value, Vec<Inst>> = HashMap::new();
    for &b in f.layout.blocks.iter().filter(|b| !part.contains(b)) {
        for &i in &f.layout.insts[b] {
            f.insts[i].for_each_operand(|v| {
                if defined.contains(&v) {
                    let u = uses.entry(v).or_default();
                    if !u.contains(&i) {
                        u.push(i);
                    }
                }
            });
        }
    }
    let mut demoted: Vec<(Value, Vec<Inst>)> = uses.into_iter().collect();
    demoted.sort_by_key(|(v, _)| v.0);
    for (v, users) in demoted {
        let at = *f.layout.insts[entry].first().ok_or("an empty entry block")?;
        crate::passes::barriers::demote_value(types, f, at, v, &users).ok_or("a value that cannot be demoted")?;
    }
    // The copies.
    let copies: HashMap<Block, Block> = order.iter().map(|&b| (b, f.create_block())).collect();
    let mut map: HashMap<Value, Value> = HashMap::new();
    for &b in &order {
        let c = copies[&b];
        for &p in &f.blocks[b].params.clone() {
            let ty = f.value_type(p);
            map.insert(p, f.append_block_param(c, ty));
        }
    }
    for &b in &order {
        let c = copies[&b];
        for i in f.layout.insts[b].clone() {
            let mut data = f.insts[i].clone();
            data.for_each_operand_mut(|v| {
                if let Some(&n) = map.get(v) {
                    *v = n;
                }
            });
            for call in data.successors_mut() {
                if let Some(&n) = copies.get(&call.block) {
                    *call = BlockCall { block: n, args: std::mem::take(&mut call.args) };
                }
            }
            let ty = f.inst_result[i].map(|r| f.value_type(r));
            let (ni, nr) = f.append_inst(c, data, ty);
            f.inst_locs[ni] = f.inst_locs[i];
            if let (Some(r), Some(nr)) = (f.inst_result[i], nr) {
                map.insert(r, nr);
            }
        }
    }
    // Operands defined later in the copy (a value of a block placed after its use in layout
    // order cannot be, but a loop inside the part may pass one around): remap once more.
    for &b in &order {
        let c = copies[&b];
        for i in f.layout.insts[c].clone() {
            f.insts[i].for_each_operand_mut(|v| {
                if let Some(&n) = map.get(v) {
                    *v = n;
                }
            });
        }
    }
    let ce = copies[&e];
    for &p in outside {
        let Some(t) = f.terminator(p) else { continue };
        for call in f.insts[t].successors_mut() {
            if call.block == e {
                call.block = ce;
            }
        }
    }
    Ok(())
}
