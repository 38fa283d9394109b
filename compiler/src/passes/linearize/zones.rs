//! Where the linearization runs: the *zones* of a function, each a single-entry set of
//! blocks around its divergent control flow (see the pass's header for what a zone is).

use crate::analysis::{Cfg, DomTree, LoopId, LoopInfo, PostDomTree};
use crate::ir::{Block, Function, InstData, Value, ValueDef};
use crate::vectorize::analysis::WorkItemAnalysis;
use std::collections::{HashMap, HashSet};

/// How control enters a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// The terminator of this block (which stays outside, unmasked) leads into the zone.
    Branch(Block),
    /// The zone begins with the header of this loop, entered from outside only there; the
    /// pass gives it a preheader, which becomes a `Branch` entry.
    Loop(LoopId),
}

/// One zone: its entry, its blocks and the block where its paths meet again.
#[derive(Clone, Debug)]
pub(super) struct Zone {
    pub entry: Entry,
    pub blocks: HashSet<Block>,
    /// The first block after the zone on every path; `None`: the zone ends in returns.
    pub exit: Option<Block>,
}

/// The analyses the zones are found with.
pub(super) struct Shapes<'a> {
    pub f: &'a Function,
    pub cfg: Cfg,
    pub dom: DomTree,
    pub pdom: PostDomTree,
    pub loops: LoopInfo,
}

impl<'a> Shapes<'a> {
    pub fn new(f: &'a Function) -> Self {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(&cfg);
        let pdom = PostDomTree::new(&cfg);
        let loops = LoopInfo::new(&cfg, &dom);
        Shapes { f, cfg, dom, pdom, loops }
    }

    /// The blocks reachable from `from` without passing through `stop`.
    fn reach(&self, from: &[Block], stop: Option<Block>) -> HashSet<Block> {
        let mut set = HashSet::new();
        let mut work = from.to_vec();
        while let Some(x) = work.pop() {
            if Some(x) == stop || !set.insert(x) {
                continue;
            }
            work.extend(self.cfg.succs(x).iter().copied());
        }
        set
    }

    /// The zone of loop `l`: from its header up to the first post-dominator of the header
    /// outside the loop, where every lane is again whatever iteration it left in.
    fn loop_zone(&self, l: LoopId) -> Zone {
        let h = self.loops.get(l).header;
        let mut exit = self.pdom.ipdom(h);
        while let Some(p) = exit.filter(|&p| self.loops.contains(l, p)) {
            exit = self.pdom.ipdom(p);
        }
        Zone { entry: Entry::Loop(l), blocks: self.reach(&[h], exit), exit }
    }

    /// The end of the straight line of blocks from the function's entry: each the only
    /// successor of the one before and entered only from it (an inlined kernel body
    /// follows its wrapper's entry so). Every lane runs these blocks, barriers included.
    fn straight_entry(&self) -> Option<Block> {
        let mut e = self.cfg.entry()?;
        let mut seen = HashSet::new();
        while let [next] = self.cfg.succs(e) {
            if self.cfg.preds(*next) != [e] || !seen.insert(*next) {
                break;
            }
            e = *next;
        }
        Some(e)
    }

    /// The zone of the whole function after the straight line from its entry.
    fn whole(&self) -> Option<Zone> {
        let e = self.straight_entry()?;
        Some(Zone { entry: Entry::Branch(e), blocks: self.reach(self.cfg.succs(e), None), exit: None })
    }

    /// The zone of the divergent branch ending `head`: the blocks up to its immediate
    /// post-dominator, or the zone of the outermost loop it leaves when a path comes back.
    fn branch_zone(&self, head: Block) -> Zone {
        let exit = self.pdom.ipdom(head);
        let blocks = self.reach(self.cfg.succs(head), exit);
        if !blocks.contains(&head) {
            return Zone { entry: Entry::Branch(head), blocks, exit };
        }
        // A path back to the branch: it runs through the header of a loop around it, whose
        // lanes leave in different iterations.
        let mut outer = None;
        let mut l = self.loops.loop_of(head);
        while let Some(id) = l {
            if blocks.contains(&self.loops.get(id).header) {
                outer = Some(id);
            }
            l = self.loops.get(id).parent;
        }
        match outer {
            Some(id) => self.loop_zone(id),
            None => Zone { entry: Entry::Branch(head), blocks, exit },
        }
    }

    /// The block of a zone's entry (inside the zone for a loop).
    fn entry_block(&self, z: &Zone) -> Block {
        match z.entry {
            Entry::Branch(b) => b,
            Entry::Loop(l) => self.loops.get(l).header,
        }
    }

    /// Whether control enters `z` only through its entry.
    fn single_entry(&self, z: &Zone) -> bool {
        z.blocks.iter().all(|&b| {
            self.cfg.preds(b).iter().all(|p| {
                z.blocks.contains(p)
                    || match z.entry {
                        Entry::Branch(x) => *p == x,
                        Entry::Loop(l) => b == self.loops.get(l).header,
                    }
            })
        }) && !matches!(z.entry, Entry::Branch(x) if z.blocks.contains(&x))
            && z.exit.is_none_or(|p| !z.blocks.contains(&p))
    }

    /// The zone of the nearest branch dominating `z`'s entry whose zone holds `z` and is
    /// entered only through its entry (the `if` around an `&&` whose second test shares
    /// the first's way out), outside any loop around `z`'s entry.
    fn branch_around(&self, z: &Zone) -> Option<Zone> {
        let from = self.entry_block(z);
        let around = self.loops.loop_of(from);
        let mut d = self.dom.idom(from);
        while let Some(b) = d {
            if self.loops.loop_of(b) != around {
                return None;
            }
            if self.cfg.succs(b).len() > 1 {
                let c = self.branch_zone(b);
                if c.blocks.contains(&from) && z.blocks.is_subset(&c.blocks) && self.single_entry(&c) {
                    return Some(c);
                }
            }
            d = self.dom.idom(b);
        }
        None
    }

    /// `z` grown until control enters it only through its entry: the zone of a branch around
    /// it, or of the loop around it, else the whole function.
    fn settle(&self, mut z: Zone) -> Option<Zone> {
        while !self.single_entry(&z) {
            if let Some(c) = self.branch_around(&z) {
                z = c;
                continue;
            }
            let around = match z.entry {
                Entry::Branch(x) => self.loops.loop_of(x),
                Entry::Loop(l) => self.loops.get(l).parent,
            };
            z = match around {
                Some(l) => self.loop_zone(l),
                None if matches!(z.entry, Entry::Branch(x) if Some(x) == self.straight_entry()) => return None,
                None => self.whole()?,
            };
        }
        Some(z)
    }
}

/// The zones of `f` (disjoint, outermost), or why the function cannot be linearized.
pub(super) fn zones(s: &Shapes, wa: &WorkItemAnalysis) -> Result<Vec<Zone>, String> {
    let f = s.f;
    if s.loops.is_irreducible() {
        return Err("irreducible control flow".into());
    }
    let mut found: Vec<Zone> = Vec::new();
    for &t in &wa.divergent_branches {
        let head = f.layout.inst_block[t].ok_or("a divergent branch outside the layout")?;
        let z = s.settle(s.branch_zone(head)).ok_or("divergent control flow entered at more than one block")?;
        found.push(z);
    }
    // Nested zones are linearized with the zones around them; zones that overlap otherwise
    // become the whole function.
    // (`a` holds `b`: `b`'s blocks and its entry are `a`'s.)
    let holds = |a: &Zone, b: &Zone| {
        b.blocks.is_subset(&a.blocks) && (a.blocks.contains(&s.entry_block(b)) || s.entry_block(a) == s.entry_block(b))
    };
    'merge: loop {
        for i in 0..found.len() {
            for j in i + 1..found.len() {
                let (a, b) = (&found[i], &found[j]);
                if holds(a, b) {
                    found.swap_remove(j);
                    continue 'merge;
                }
                if holds(b, a) {
                    found.swap_remove(i);
                    continue 'merge;
                }
                if !a.blocks.is_disjoint(&b.blocks)
                    || a.blocks.contains(&s.entry_block(b))
                    || b.blocks.contains(&s.entry_block(a))
                {
                    found = vec![s.whole().ok_or("a function without an entry block")?];
                    break 'merge;
                }
            }
        }
        break;
    }
    for z in &found {
        check(s, z)?;
    }
    Ok(found)
}

/// Whether the pass can linearize zone `z`: no barrier inside, terminators it knows, every
/// loop it enters whole, and no private variable declared in one of its loops and used
/// after it (its address would be kept per lane).
fn check(s: &Shapes, z: &Zone) -> Result<(), String> {
    let f = s.f;
    for &b in &z.blocks {
        if f.layout.insts[b].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i])) {
            return Err("a work-group barrier in divergent control flow".into());
        }
        match f.terminator(b).map(|i| &f.insts[i]) {
            Some(InstData::Jump { .. } | InstData::Branch { .. } | InstData::Switch { .. }) => {}
            Some(InstData::Return { value: None } | InstData::Unreachable) if z.exit.is_none() => {}
            _ => return Err(format!("block {b} of divergent control flow ends in an unexpected terminator")),
        }
    }
    let def_block: HashMap<Value, Block> = defs(f);
    for l in s.loops.loops() {
        if !z.blocks.contains(&l.header) {
            continue;
        }
        if l.blocks.iter().any(|b| !z.blocks.contains(b)) {
            return Err("a loop only partly inside divergent control flow".into());
        }
        let inside: HashSet<Block> = l.blocks.iter().copied().collect();
        for &ob in f.layout.blocks.iter().filter(|b| !inside.contains(b)) {
            for &i in &f.layout.insts[ob] {
                let mut bad = false;
                f.insts[i].for_each_operand(|v| {
                    bad |= def_block.get(&v).is_some_and(|d| inside.contains(d))
                        && matches!(f.values[v].def, ValueDef::Result(d) if matches!(f.insts[d], InstData::Variable { .. }));
                });
                if bad {
                    return Err("a private variable declared in a divergent loop and used after it".into());
                }
            }
        }
    }
    Ok(())
}

/// The block defining each value made in `f` (parameters of blocks and results).
fn defs(f: &Function) -> HashMap<Value, Block> {
    let mut out = HashMap::new();
    for &b in &f.layout.blocks {
        for &p in &f.blocks[b].params {
            out.insert(p, b);
        }
        for &i in &f.layout.insts[b] {
            if let Some(r) = f.inst_result[i] {
                out.insert(r, b);
            }
        }
    }
    out
}
