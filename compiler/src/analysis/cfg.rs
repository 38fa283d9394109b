//! The control-flow graph of a function and the orders passes walk it in.

use super::dom::DomTree;
use super::loops::LoopInfo;
use crate::ir::{Block, EntityRef, Function, SecondaryMap};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Reverse post-order of the nodes reachable from `entry` in a graph given as successor
/// lists (`successors[n]` = the successors of node `n`; indices out of range are ignored).
///
/// The depth-first walk takes successors last to first, so the first successor's subtree
/// comes first in the result (the `then` side of a branch before the `else` side). Every
/// node comes before its successors except along back edges. This is the one reverse
/// post-order of the compiler: [`Cfg::rpo`] and the SPIR-V reader use it.
pub fn reverse_post_order(successors: &[Vec<usize>], entry: usize) -> Vec<usize> {
    let n = successors.len();
    let mut post = Vec::with_capacity(n);
    if entry >= n {
        return post;
    }
    let mut seen = vec![false; n];
    seen[entry] = true;
    // (node, how many of its successors, counted from the end, are still to visit)
    let mut stack: Vec<(usize, usize)> = vec![(entry, successors[entry].len())];
    while let Some(top) = stack.last_mut() {
        let (node, left) = *top;
        if left == 0 {
            post.push(node);
            stack.pop();
            continue;
        }
        top.1 -= 1;
        let s = successors[node][left - 1];
        if s < n && !seen[s] {
            seen[s] = true;
            stack.push((s, successors[s].len()));
        }
    }
    post.reverse();
    post
}

/// Successors and predecessors of the blocks reachable from the entry block.
///
/// Edges come from the terminators' branch targets (a block whose last instruction is not a
/// terminator has no successors). Each successor is listed once even when a terminator
/// branches to it several times (read the terminator for the exact `BlockCall`s). Blocks
/// unreachable from the entry are flagged ([`Cfg::is_reachable`]) and have no edges here:
/// the graph is that of the reachable blocks only. Branches to blocks outside the layout
/// are ignored (the validator reports them).
#[derive(Debug, Clone)]
pub struct Cfg {
    entry: Option<Block>,
    rpo: Vec<Block>,
    /// Position of each reachable block in `rpo`; `u32::MAX` = unreachable.
    rpo_number: SecondaryMap<Block, u32>,
    succs: SecondaryMap<Block, Vec<Block>>,
    preds: SecondaryMap<Block, Vec<Block>>,
    /// Layout blocks unreachable from the entry, in layout order.
    unreachable: Vec<Block>,
    block_count: usize,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let n = f.blocks.len();
        let mut in_layout = vec![false; n];
        for &b in &f.layout.blocks {
            if f.blocks.is_valid(b) {
                in_layout[b.index()] = true;
            }
        }
        let mut raw: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &b in &f.layout.blocks {
            if !in_layout[b.index()] || !raw[b.index()].is_empty() {
                continue;
            }
            let Some(term) = f.layout.insts[b].last().and_then(|&i| f.insts.get(i)) else { continue };
            raw[b.index()] =
                term.successors().iter().map(|c| c.block.index()).filter(|&s| s < n && in_layout[s]).collect();
        }
        let entry = f.layout.entry().filter(|b| f.blocks.is_valid(*b));
        let order = match entry {
            Some(e) => reverse_post_order(&raw, e.index()),
            None => Vec::new(),
        };
        let rpo: Vec<Block> = order.iter().map(|&i| Block::new(i)).collect();
        let mut rpo_number = SecondaryMap::with_default(u32::MAX);
        for (i, &b) in rpo.iter().enumerate() {
            rpo_number[b] = i as u32;
        }
        let mut succs: SecondaryMap<Block, Vec<Block>> = SecondaryMap::default();
        let mut preds: SecondaryMap<Block, Vec<Block>> = SecondaryMap::default();
        for &b in &rpo {
            let mut list: Vec<Block> = Vec::with_capacity(raw[b.index()].len());
            for &s in &raw[b.index()] {
                let s = Block::new(s);
                if !list.contains(&s) {
                    list.push(s);
                    preds[s].push(b);
                }
            }
            succs[b] = list;
        }
        let mut unreachable = Vec::new();
        for &b in &f.layout.blocks {
            if f.blocks.is_valid(b) && rpo_number[b] == u32::MAX && !unreachable.contains(&b) {
                unreachable.push(b);
            }
        }
        Cfg { entry, rpo, rpo_number, succs, preds, unreachable, block_count: n }
    }

    /// The entry block (`None` for a function without blocks).
    pub fn entry(&self) -> Option<Block> {
        self.entry
    }

    /// The blocks reachable from the entry in reverse post-order (the entry first; every
    /// block before its successors except along back edges).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// The position of `b` in [`Cfg::rpo`], `None` if it is unreachable.
    pub fn rpo_number(&self, b: Block) -> Option<usize> {
        let n = self.rpo_number[b];
        (n != u32::MAX).then_some(n as usize)
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_number[b] != u32::MAX
    }

    /// Layout blocks that cannot be reached from the entry, in layout order.
    pub fn unreachable_blocks(&self) -> &[Block] {
        &self.unreachable
    }

    /// Distinct successors of a reachable block, in terminator order.
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b]
    }

    /// Distinct predecessors of a reachable block (reachable ones only), in reverse
    /// post-order.
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b]
    }

    /// Reachable blocks without successors (returns and `unreachable` terminators).
    pub fn exits(&self) -> impl Iterator<Item = Block> + '_ {
        self.rpo.iter().copied().filter(|&b| self.succs[b].is_empty())
    }

    /// The size of the function's block arena when the CFG was built (an upper bound of
    /// block indices, for side tables).
    pub fn block_count(&self) -> usize {
        self.block_count
    }

    /// A topological order of the reachable blocks (back edges of natural loops left out) in
    /// which every natural loop's blocks are contiguous, its header first, and come before
    /// the loop's exit blocks. A block comes only after every block that can reach it
    /// without passing through it, so a join block is scheduled after both sides of the
    /// branch that leads to it. Ties are broken by reverse post-order.
    ///
    /// In an irreducible CFG the cycles that are not natural loops have no topological
    /// order; their blocks come in reverse post-order (see [`LoopInfo::is_irreducible`]).
    pub fn loop_order(&self) -> Vec<Block> {
        let dom = DomTree::new(self);
        let loops = LoopInfo::new(self, &dom);
        loops.block_order(self)
    }
}

/// A min-heap of nodes keyed by reverse post-order number (for deterministic topological
/// sorts that stay close to reverse post-order).
pub(super) struct RpoHeap(BinaryHeap<Reverse<(u32, u32)>>);

impl RpoHeap {
    pub(super) fn new() -> Self {
        RpoHeap(BinaryHeap::new())
    }
    pub(super) fn push(&mut self, cfg: &Cfg, b: Block) {
        self.0.push(Reverse((cfg.rpo_number[b], b.0)));
    }
    pub(super) fn pop(&mut self) -> Option<Block> {
        self.0.pop().map(|Reverse((_, b))| Block(b))
    }
}
