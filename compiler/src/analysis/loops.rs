//! Natural loops and their nesting.

use super::cfg::{Cfg, RpoHeap};
use super::dom::DomTree;
use crate::ir::{Block, EntityRef, SecondaryMap};

/// A loop of a [`LoopInfo`] (an index into [`LoopInfo::loops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LoopId(pub u32);

impl LoopId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A natural loop: a header that dominates every block of the loop and back edges
/// (from the latches) to it. Back edges to one header form one loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub header: Block,
    /// Every block of the loop, nested loops' included, in reverse post-order (header first).
    pub blocks: Vec<Block>,
    /// The blocks with a back edge to the header.
    pub latches: Vec<Block>,
    /// Edges from a block of the loop to a block outside it, `(exiting, exit)`.
    pub exit_edges: Vec<(Block, Block)>,
    /// Blocks of the loop with a successor outside it.
    pub exiting: Vec<Block>,
    /// Distinct blocks outside the loop that an exit edge leads to.
    pub exits: Vec<Block>,
    /// The innermost loop containing this one.
    pub parent: Option<LoopId>,
    /// Loops directly nested in this one.
    pub children: Vec<LoopId>,
    /// Nesting depth: 1 for an outermost loop.
    pub depth: u32,
}

/// The natural loops of the reachable blocks and the irreducible control flow that is not
/// part of any (cycles entered other than through a dominating header).
#[derive(Debug, Clone)]
pub struct LoopInfo {
    /// Ordered by the reverse post-order of their headers: an enclosing loop comes before
    /// the loops nested in it.
    loops: Vec<Loop>,
    innermost: SecondaryMap<Block, Option<LoopId>>,
    irreducible_edges: Vec<(Block, Block)>,
}

impl LoopInfo {
    pub fn new(cfg: &Cfg, dom: &DomTree) -> LoopInfo {
        let mut loops: Vec<Loop> = Vec::new();
        let mut innermost: SecondaryMap<Block, Option<LoopId>> = SecondaryMap::default();
        let mut irreducible_edges = Vec::new();
        let mut member = vec![false; cfg.block_count()];
        for &header in cfg.rpo() {
            let Some(hn) = cfg.rpo_number(header) else { continue };
            let mut latches = Vec::new();
            for &p in cfg.preds(header) {
                // Retreating edges (to a block not after the source in reverse post-order)
                // close cycles; they are back edges of a natural loop only when the target
                // dominates the source.
                if cfg.rpo_number(p).is_some_and(|pn| pn >= hn) {
                    if dom.dominates(header, p) {
                        latches.push(p);
                    } else {
                        irreducible_edges.push((p, header));
                    }
                }
            }
            if latches.is_empty() {
                continue;
            }
            // The loop body: everything reaching a latch without passing the header.
            let mut blocks = vec![header];
            member[header.index()] = true;
            let mut stack: Vec<Block> = Vec::new();
            for &l in &latches {
                if !member[l.index()] {
                    member[l.index()] = true;
                    blocks.push(l);
                    stack.push(l);
                }
            }
            while let Some(b) = stack.pop() {
                for &p in cfg.preds(b) {
                    if !member[p.index()] {
                        member[p.index()] = true;
                        blocks.push(p);
                        stack.push(p);
                    }
                }
            }
            blocks.sort_by_key(|b| cfg.rpo_number(*b));
            let mut exit_edges = Vec::new();
            let mut exiting = Vec::new();
            let mut exits = Vec::new();
            for &b in &blocks {
                for &s in cfg.succs(b) {
                    if !member[s.index()] {
                        exit_edges.push((b, s));
                        if exiting.last() != Some(&b) {
                            exiting.push(b);
                        }
                        if !exits.contains(&s) {
                            exits.push(s);
                        }
                    }
                }
            }
            for &b in &blocks {
                member[b.index()] = false;
            }
            let id = LoopId(loops.len() as u32);
            // Loops are found outermost first: the innermost loop recorded for the header so
            // far is the one enclosing this loop.
            let parent = innermost[header];
            let depth = parent.map_or(1, |p: LoopId| loops[p.index()].depth + 1);
            if let Some(p) = parent {
                loops[p.index()].children.push(id);
            }
            for &b in &blocks {
                innermost[b] = Some(id);
            }
            loops.push(Loop {
                header,
                blocks,
                latches,
                exit_edges,
                exiting,
                exits,
                parent,
                children: Vec::new(),
                depth,
            });
        }
        LoopInfo { loops, innermost, irreducible_edges }
    }

    /// Every natural loop, enclosing loops before the loops nested in them.
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    pub fn get(&self, id: LoopId) -> &Loop {
        &self.loops[id.index()]
    }

    /// The innermost loop containing `b` (`None` outside every loop or unreachable).
    pub fn loop_of(&self, b: Block) -> Option<LoopId> {
        self.innermost[b]
    }

    /// Whether `b` belongs to loop `l` (directly or through a nested loop).
    pub fn contains(&self, l: LoopId, b: Block) -> bool {
        let mut current = self.innermost[b];
        while let Some(c) = current {
            if c == l {
                return true;
            }
            current = self.loops[c.index()].parent;
        }
        false
    }

    /// The number of loops around `b` (0 outside every loop).
    pub fn depth(&self, b: Block) -> u32 {
        self.innermost[b].map_or(0, |l| self.loops[l.index()].depth)
    }

    /// Whether `b` is the header of a loop.
    pub fn is_header(&self, b: Block) -> bool {
        self.innermost[b].is_some_and(|l| self.loops[l.index()].header == b)
    }

    /// Whether the CFG has cycles that are not natural loops (entered at more than one
    /// block). Passes that need structured control flow must not transform such a function.
    pub fn is_irreducible(&self) -> bool {
        !self.irreducible_edges.is_empty()
    }

    /// The retreating edges `(from, to)` whose target does not dominate their source: each
    /// closes a cycle that is not a natural loop.
    pub fn irreducible_edges(&self) -> &[(Block, Block)] {
        &self.irreducible_edges
    }

    /// The loop-contiguous topological order of [`Cfg::loop_order`].
    pub fn block_order(&self, cfg: &Cfg) -> Vec<Block> {
        let mut out = Vec::with_capacity(cfg.rpo().len());
        let mut member = vec![false; cfg.block_count()];
        self.order_region(cfg, None, &mut member, &mut out);
        out
    }

    /// Orders the blocks of `region` (the whole function when `None`), each directly nested
    /// loop collapsed into one node (its header) and expanded in place, recursively.
    fn order_region(&self, cfg: &Cfg, region: Option<LoopId>, member: &mut [bool], out: &mut Vec<Block>) {
        let blocks: &[Block] = match region {
            Some(l) => &self.loops[l.index()].blocks,
            None => cfg.rpo(),
        };
        let header = region.map(|l| self.loops[l.index()].header);
        // The node standing for `b` at this level: itself, or the header of the directly
        // nested loop holding it.
        let node_of = |b: Block| -> Block {
            let mut current = self.innermost[b];
            if current == region {
                return b;
            }
            while let Some(c) = current {
                let l = &self.loops[c.index()];
                if l.parent == region {
                    return l.header;
                }
                current = l.parent;
            }
            b
        };
        for &b in blocks {
            member[b.index()] = true;
        }
        let mut nodes: Vec<Block> = Vec::new();
        let mut edges: SecondaryMap<Block, Vec<Block>> = SecondaryMap::default();
        let mut in_degree: SecondaryMap<Block, u32> = SecondaryMap::default();
        for &b in blocks {
            let from = node_of(b);
            if from == b {
                nodes.push(b);
            }
            for &s in cfg.succs(b) {
                if !member[s.index()] || Some(s) == header {
                    continue;
                }
                let to = node_of(s);
                if to != from && !edges[from].contains(&to) {
                    edges[from].push(to);
                    in_degree[to] += 1;
                }
            }
        }
        for &b in blocks {
            member[b.index()] = false;
        }
        let mut emitted: SecondaryMap<Block, bool> = SecondaryMap::default();
        let mut ready = RpoHeap::new();
        for &n in &nodes {
            if in_degree[n] == 0 {
                ready.push(cfg, n);
            }
        }
        // `nodes` is in reverse post-order: when a cycle that is no natural loop leaves
        // nothing ready, the earliest node not yet emitted breaks it.
        let mut next_forced = 0;
        let mut done = 0;
        while done < nodes.len() {
            let node = match ready.pop() {
                Some(n) if !emitted[n] => n,
                Some(_) => continue,
                None => {
                    while next_forced < nodes.len() && emitted[nodes[next_forced]] {
                        next_forced += 1;
                    }
                    match nodes.get(next_forced) {
                        Some(&n) => n,
                        None => break,
                    }
                }
            };
            emitted[node] = true;
            done += 1;
            match self.innermost[node] {
                Some(l) if Some(l) != region => self.order_region(cfg, Some(l), member, out),
                _ => out.push(node),
            }
            for &t in &edges[node] {
                if in_degree[t] > 0 {
                    in_degree[t] -= 1;
                    if in_degree[t] == 0 && !emitted[t] {
                        ready.push(cfg, t);
                    }
                }
            }
        }
    }
}
