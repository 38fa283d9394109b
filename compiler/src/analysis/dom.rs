//! Dominator and post-dominator trees (Cooper, Harvey and Kennedy, "A Simple, Fast
//! Dominance Algorithm", 2001), with dominance frontiers.

use super::cfg::{reverse_post_order, Cfg};
use crate::ir::{Block, EntityRef, SecondaryMap};

const NONE: u32 = u32::MAX;

/// A dominator tree over nodes numbered in reverse post-order of the walked graph; node 0
/// is the root (a block, or the post-dominator tree's virtual exit).
#[derive(Debug, Clone)]
struct Tree {
    /// The block of each node; `None` for a virtual root.
    nodes: Vec<Option<Block>>,
    /// Node number of each block in the tree; `NONE` = not in the tree.
    number: SecondaryMap<Block, u32>,
    /// Immediate dominator of each node (the root's is itself).
    idom: Vec<u32>,
    /// Predecessors of each node in the walked graph.
    preds: Vec<Vec<u32>>,
    children: SecondaryMap<Block, Vec<Block>>,
}

impl Tree {
    /// `succs` is the graph over indices `0..succs.len()`, `root` the index it is walked
    /// from, `block_of` maps an index to its block (`None` for a virtual node).
    fn build(succs: &[Vec<usize>], root: usize, block_of: impl Fn(usize) -> Option<Block>) -> Tree {
        let order = reverse_post_order(succs, root);
        let mut index_number = vec![NONE; succs.len()];
        for (i, &n) in order.iter().enumerate() {
            index_number[n] = i as u32;
        }
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); order.len()];
        for (i, &n) in order.iter().enumerate() {
            for &s in &succs[n] {
                let sn = index_number[s];
                if sn != NONE && !preds[sn as usize].contains(&(i as u32)) {
                    preds[sn as usize].push(i as u32);
                }
            }
        }
        let idom = immediate_dominators(&preds);
        let nodes: Vec<Option<Block>> = order.iter().map(|&n| block_of(n)).collect();
        let mut number = SecondaryMap::with_default(NONE);
        for (i, b) in nodes.iter().enumerate() {
            if let Some(b) = b {
                number[*b] = i as u32;
            }
        }
        let mut children: SecondaryMap<Block, Vec<Block>> = SecondaryMap::default();
        for (i, b) in nodes.iter().enumerate().skip(1) {
            if let (Some(b), Some(parent)) = (b, nodes[idom[i] as usize]) {
                children[parent].push(*b);
            }
        }
        Tree { nodes, number, idom, preds, children }
    }

    fn contains(&self, b: Block) -> bool {
        self.number[b] != NONE
    }

    /// The block of the immediate dominator (`None` for the root, a virtual parent or a
    /// block outside the tree).
    fn parent(&self, b: Block) -> Option<Block> {
        let n = self.number[b];
        if n == NONE || n == 0 {
            return None;
        }
        self.nodes[self.idom[n as usize] as usize]
    }

    fn dominates(&self, a: Block, b: Block) -> bool {
        let (na, nb) = (self.number[a], self.number[b]);
        if na == NONE || nb == NONE {
            return false;
        }
        let mut current = nb;
        while current > na {
            current = self.idom[current as usize];
        }
        current == na
    }

    /// The nearest common dominator node of two nodes.
    fn intersect(&self, mut x: u32, mut y: u32) -> u32 {
        while x != y {
            while x > y {
                x = self.idom[x as usize];
            }
            while y > x {
                y = self.idom[y as usize];
            }
        }
        x
    }

    fn common(&self, a: Block, b: Block) -> Option<Block> {
        let (na, nb) = (self.number[a], self.number[b]);
        if na == NONE || nb == NONE {
            return None;
        }
        self.nodes[self.intersect(na, nb) as usize]
    }

    fn frontiers(&self) -> SecondaryMap<Block, Vec<Block>> {
        let mut df: SecondaryMap<Block, Vec<Block>> = SecondaryMap::default();
        for (n, preds) in self.preds.iter().enumerate() {
            let Some(b) = self.nodes[n] else { continue };
            if preds.len() < 2 {
                continue;
            }
            let stop = self.idom[n];
            for &p in preds {
                let mut runner = p;
                while runner != stop {
                    if let Some(r) = self.nodes[runner as usize] {
                        if !df[r].contains(&b) {
                            df[r].push(b);
                        }
                    }
                    runner = self.idom[runner as usize];
                }
            }
        }
        df
    }
}

/// The iterative algorithm on nodes numbered in reverse post-order, node 0 the root, every
/// node reachable from it (so each other node has a predecessor numbered lower than itself).
fn immediate_dominators(preds: &[Vec<u32>]) -> Vec<u32> {
    let mut idom = vec![NONE; preds.len()];
    if idom.is_empty() {
        return idom;
    }
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..preds.len() {
            let mut new_idom = NONE;
            for &p in &preds[b] {
                if idom[p as usize] == NONE {
                    continue;
                }
                new_idom = if new_idom == NONE {
                    p
                } else {
                    let (mut x, mut y) = (p, new_idom);
                    while x != y {
                        while x > y {
                            x = idom[x as usize];
                        }
                        while y > x {
                            y = idom[y as usize];
                        }
                    }
                    x
                };
            }
            if new_idom != NONE && idom[b] != new_idom {
                idom[b] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

/// The dominator tree of the blocks reachable from the entry.
#[derive(Debug, Clone)]
pub struct DomTree {
    tree: Tree,
}

impl DomTree {
    pub fn new(cfg: &Cfg) -> DomTree {
        let n = cfg.block_count();
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &b in cfg.rpo() {
            succs[b.index()] = cfg.succs(b).iter().map(|s| s.index()).collect();
        }
        let tree = match cfg.entry() {
            Some(entry) => Tree::build(&succs, entry.index(), |i| Some(Block::new(i))),
            None => Tree::build(&[], 0, |_| None),
        };
        DomTree { tree }
    }

    /// The dominator tree of the *barrier regions* of `f` (`passes::barriers`): the CFG
    /// without the edges of `BarrierResume` terminators, walked from a virtual root that
    /// leads to the entry and to every resume point (a work-item enters its code there, as
    /// the lowering's dispatch does). Without barriers, the same as [`DomTree::new`].
    pub fn of_regions(f: &crate::ir::Function) -> DomTree {
        use crate::ir::InstData;
        let n = f.blocks.len();
        let root = n;
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        let in_layout: std::collections::HashSet<Block> = f.layout.blocks.iter().copied().collect();
        if let Some(entry) = f.layout.entry().filter(|b| f.blocks.is_valid(*b)) {
            succs[root].push(entry.index());
        }
        for &b in &f.layout.blocks {
            let Some(term) = f.layout.insts[b].last().and_then(|&i| f.insts.get(i)) else { continue };
            let calls = term.successors();
            let targets = calls.iter().map(|c| c.block).filter(|t| in_layout.contains(t) && t.index() < n);
            match term {
                InstData::BarrierResume { dest, .. } if in_layout.contains(&dest.block) && dest.block.index() < n => {
                    succs[root].push(dest.block.index())
                }
                InstData::BarrierResume { .. } => {}
                _ if b.index() < n => succs[b.index()].extend(targets.map(|t| t.index())),
                _ => {}
            }
        }
        DomTree { tree: Tree::build(&succs, root, |i| (i < n).then(|| Block::new(i))) }
    }

    /// The immediate dominator of `b`; `None` for the entry and unreachable blocks.
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.tree.parent(b)
    }

    /// Whether `a` dominates `b` (every reachable block dominates itself; nothing dominates
    /// or is dominated by an unreachable block).
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.tree.dominates(a, b)
    }

    /// Whether `a` dominates `b` and differs from it.
    pub fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }

    /// The nearest block dominating both (`None` if either is unreachable).
    pub fn common_dominator(&self, a: Block, b: Block) -> Option<Block> {
        self.tree.common(a, b)
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.tree.contains(b)
    }

    /// The blocks `b` immediately dominates, in reverse post-order.
    pub fn children(&self, b: Block) -> &[Block] {
        &self.tree.children[b]
    }

    /// The dominance frontier of every reachable block: the blocks where its dominance
    /// ends (join points that it reaches but does not strictly dominate).
    pub fn frontiers(&self) -> SecondaryMap<Block, Vec<Block>> {
        self.tree.frontiers()
    }
}

/// The post-dominator tree of the blocks reachable from the entry, rooted at a virtual
/// exit that every block without successors leads to.
///
/// Blocks from which no exit can be reached (an infinite loop) would have no post-dominator;
/// for each such region one block (the first in post-order, inside the innermost cycle) is
/// also joined to the virtual exit, as LLVM does, so every reachable block is in the tree.
/// A block whose immediate post-dominator is the virtual exit has `ipdom` `None`.
#[derive(Debug, Clone)]
pub struct PostDomTree {
    tree: Tree,
    /// The blocks joined to the virtual exit: exits first, then the extra roots.
    roots: Vec<Block>,
}

impl PostDomTree {
    pub fn new(cfg: &Cfg) -> PostDomTree {
        let n = cfg.block_count();
        let virtual_exit = n;
        // The reversed graph: from each block to its predecessors.
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        for &b in cfg.rpo() {
            succs[b.index()] = cfg.preds(b).iter().map(|p| p.index()).collect();
        }
        let mut roots: Vec<Block> = cfg.exits().collect();
        let mut reached = vec![false; n + 1];
        let mark = |from: Block, reached: &mut Vec<bool>| {
            let mut stack = vec![from.index()];
            reached[from.index()] = true;
            while let Some(x) = stack.pop() {
                for &p in &succs[x] {
                    if !reached[p] {
                        reached[p] = true;
                        stack.push(p);
                    }
                }
            }
        };
        for &r in &roots {
            mark(r, &mut reached);
        }
        for &b in cfg.rpo().iter().rev() {
            if !reached[b.index()] {
                roots.push(b);
                mark(b, &mut reached);
            }
        }
        succs[virtual_exit] = roots.iter().map(|r| r.index()).collect();
        let tree = Tree::build(&succs, virtual_exit, |i| (i < n).then(|| Block::new(i)));
        PostDomTree { tree, roots }
    }

    /// The immediate post-dominator of `b`; `None` when it is the virtual exit (`b` is an
    /// exit, or its paths reach different exits) or `b` is unreachable.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        self.tree.parent(b)
    }

    /// Whether every path from `b` to an exit passes through `a` (every reachable block
    /// post-dominates itself).
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        self.tree.dominates(a, b)
    }

    /// The nearest block post-dominating both, `None` if only the virtual exit does.
    pub fn common_post_dominator(&self, a: Block, b: Block) -> Option<Block> {
        self.tree.common(a, b)
    }

    /// The blocks joined to the virtual exit: blocks without successors, then one block of
    /// each region that cannot reach them.
    pub fn roots(&self) -> &[Block] {
        &self.roots
    }

    /// The blocks `b` immediately post-dominates.
    pub fn children(&self, b: Block) -> &[Block] {
        &self.tree.children[b]
    }

    /// The post-dominance frontier of every reachable block: the branches it is control
    /// dependent on (blocks with a successor that leads to `b` and one that may avoid it).
    pub fn frontiers(&self) -> SecondaryMap<Block, Vec<Block>> {
        self.tree.frontiers()
    }
}
