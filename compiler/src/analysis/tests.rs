//! The analyses on hand-built control-flow graphs, checked against the textbook answers
//! and, on many pseudo-random graphs, against brute-force definitions.

use super::*;
use crate::ir::{Block, BlockCall, FuncKind, Function, InstData, Module, Type, Value};

/// A void function `f(c: bool, s: i32)` whose block `i` branches to `succs[i]`: no successor
/// = return, one = jump, two = branch on `c`, more = switch on `s` (the first the default).
fn graph(succs: &[&[usize]]) -> (Function, Vec<Block>) {
    let mut m = Module::new();
    let boolt = m.types.bool();
    let i32t = m.types.int(32);
    let void = m.types.void();
    graph_with_types(succs, boolt, i32t, void)
}

fn graph_with_types(succs: &[&[usize]], boolt: Type, i32t: Type, void: Type) -> (Function, Vec<Block>) {
    let mut f = Function::new("g", FuncKind::Function, vec![boolt, i32t], void);
    let blocks: Vec<Block> = (0..succs.len()).map(|_| f.create_block()).collect();
    let c = f.append_block_param(blocks[0], boolt);
    let s = f.append_block_param(blocks[0], i32t);
    for (i, targets) in succs.iter().enumerate() {
        let call = |t: usize| BlockCall { block: blocks[t], args: Vec::new() };
        let term = match targets.len() {
            0 => InstData::Return { value: None },
            1 => InstData::Jump { dest: call(targets[0]) },
            2 => InstData::Branch { cond: c, then_dest: call(targets[0]), else_dest: call(targets[1]) },
            _ => InstData::Switch {
                selector: s,
                default: call(targets[0]),
                cases: targets[1..].iter().enumerate().map(|(k, &t)| (k as u64 + 1, call(t))).collect(),
            },
        };
        f.append_inst(blocks[i], term, None);
    }
    (f, blocks)
}

fn ids(blocks: &[Block], list: &[Block]) -> Vec<usize> {
    list.iter().map(|b| blocks.iter().position(|x| x == b).expect("block of the graph")).collect()
}

struct All {
    cfg: Cfg,
    dom: DomTree,
    pdom: PostDomTree,
    loops: LoopInfo,
}

fn analyse(f: &Function) -> All {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(&cfg);
    let pdom = PostDomTree::new(&cfg);
    let loops = LoopInfo::new(&cfg, &dom);
    All { cfg, dom, pdom, loops }
}

#[test]
fn diamond() {
    let (f, b) = graph(&[&[1, 2], &[3], &[3], &[]]);
    let a = analyse(&f);
    assert_eq!(ids(&b, a.cfg.rpo()), [0, 1, 2, 3]);
    assert_eq!(ids(&b, a.cfg.succs(b[0])), [1, 2]);
    assert_eq!(ids(&b, a.cfg.preds(b[3])), [1, 2]);
    assert_eq!(a.cfg.entry(), Some(b[0]));
    assert_eq!(ids(&b, &a.cfg.exits().collect::<Vec<_>>()), [3]);
    assert_eq!(a.dom.idom(b[0]), None);
    assert_eq!(a.dom.idom(b[1]), Some(b[0]));
    assert_eq!(a.dom.idom(b[3]), Some(b[0]));
    assert!(a.dom.dominates(b[0], b[3]) && a.dom.dominates(b[3], b[3]));
    assert!(!a.dom.dominates(b[1], b[3]) && !a.dom.strictly_dominates(b[3], b[3]));
    assert_eq!(a.dom.common_dominator(b[1], b[2]), Some(b[0]));
    assert_eq!(ids(&b, a.dom.children(b[0])), [1, 2, 3]);
    let df = a.dom.frontiers();
    assert_eq!(ids(&b, &df[b[1]]), [3]);
    assert_eq!(ids(&b, &df[b[2]]), [3]);
    assert!(df[b[0]].is_empty() && df[b[3]].is_empty());
    assert_eq!(a.pdom.ipdom(b[0]), Some(b[3]));
    assert_eq!(a.pdom.ipdom(b[1]), Some(b[3]));
    assert_eq!(a.pdom.ipdom(b[3]), None);
    assert!(a.pdom.post_dominates(b[3], b[0]) && !a.pdom.post_dominates(b[1], b[0]));
    assert_eq!(a.pdom.common_post_dominator(b[1], b[2]), Some(b[3]));
    let pdf = a.pdom.frontiers();
    assert_eq!(ids(&b, &pdf[b[1]]), [0]);
    assert_eq!(ids(&b, &pdf[b[2]]), [0]);
    assert!(pdf[b[3]].is_empty());
    assert!(a.loops.loops().is_empty() && !a.loops.is_irreducible());
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 1, 2, 3]);
}

#[test]
fn nested_loops() {
    // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> {2, 4}; 4 -> {1, 5}; 5 returns.
    let (f, b) = graph(&[&[1], &[2], &[3], &[2, 4], &[1, 5], &[]]);
    let a = analyse(&f);
    assert_eq!(a.loops.loops().len(), 2);
    let outer = a.loops.loop_of(b[1]).unwrap();
    let inner = a.loops.loop_of(b[3]).unwrap();
    assert_ne!(outer, inner);
    let (lo, li) = (a.loops.get(outer), a.loops.get(inner));
    assert_eq!(lo.header, b[1]);
    assert_eq!(ids(&b, &lo.blocks), [1, 2, 3, 4]);
    assert_eq!(ids(&b, &lo.latches), [4]);
    assert_eq!(lo.exit_edges, vec![(b[4], b[5])]);
    assert_eq!((lo.parent, lo.depth, lo.children.clone()), (None, 1, vec![inner]));
    assert_eq!(li.header, b[2]);
    assert_eq!(ids(&b, &li.blocks), [2, 3]);
    assert_eq!(ids(&b, &li.latches), [3]);
    assert_eq!(li.exit_edges, vec![(b[3], b[4])]);
    assert_eq!((li.parent, li.depth), (Some(outer), 2));
    assert_eq!(a.loops.loop_of(b[4]), Some(outer));
    assert_eq!(a.loops.loop_of(b[0]), None);
    assert_eq!(a.loops.loop_of(b[5]), None);
    assert!(a.loops.contains(outer, b[3]) && !a.loops.contains(inner, b[4]));
    assert_eq!([0, 1, 2, 3, 4, 5].map(|i| a.loops.depth(b[i])), [0, 1, 2, 2, 1, 0]);
    assert!(a.loops.is_header(b[2]) && !a.loops.is_header(b[3]));
    assert_eq!(a.dom.idom(b[4]), Some(b[3]));
    assert_eq!(a.pdom.ipdom(b[1]), Some(b[2]));
    assert_eq!(a.pdom.ipdom(b[3]), Some(b[4]));
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn loop_order_puts_exits_after_the_loop() {
    // Reverse post-order visits the exit (2) before the loop body (3); the loop order does
    // not. 1 -> {2 exit, 3}; 3 -> {4, 5}; 4 -> 1; 5 -> 1 (two latches); 2 returns.
    let (f, b) = graph(&[&[1], &[2, 3], &[], &[4, 5], &[1], &[1]]);
    let a = analyse(&f);
    assert_eq!(ids(&b, a.cfg.rpo()), [0, 1, 2, 3, 4, 5]);
    let l = a.loops.get(a.loops.loop_of(b[3]).unwrap());
    assert_eq!(ids(&b, &l.latches), [4, 5]);
    assert_eq!(ids(&b, &l.exits), [2]);
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 1, 3, 4, 5, 2]);
    assert_eq!(a.loops.block_order(&a.cfg), a.cfg.loop_order());
}

#[test]
fn loop_with_two_exits() {
    // Loop {1, 2, 3}: 1 -> {2, 5}, 2 -> {3, 6}, 3 -> 1; 5 and 6 join at 7.
    let (f, b) = graph(&[&[1], &[2, 5], &[3, 6], &[1], &[], &[7], &[7], &[]]);
    let a = analyse(&f);
    assert!(!a.cfg.is_reachable(b[4]));
    let l = a.loops.get(a.loops.loop_of(b[2]).unwrap());
    assert_eq!(ids(&b, &l.blocks), [1, 2, 3]);
    assert_eq!(l.exit_edges, vec![(b[1], b[5]), (b[2], b[6])]);
    assert_eq!(ids(&b, &l.exiting), [1, 2]);
    assert_eq!(ids(&b, &l.exits), [5, 6]);
    assert_eq!(a.pdom.ipdom(b[1]), Some(b[7]));
    assert_eq!(a.pdom.ipdom(b[2]), Some(b[7]));
    assert_eq!(a.pdom.ipdom(b[3]), Some(b[1]));
    let order = ids(&b, &a.cfg.loop_order());
    // 6 before 5: reverse post-order breaks the tie.
    assert_eq!(order, [0, 1, 2, 3, 6, 5, 7]);
    // Control dependence: the exits depend on the exiting branches.
    let pdf = a.pdom.frontiers();
    assert_eq!(ids(&b, &pdf[b[5]]), [1]);
    assert_eq!(ids(&b, &pdf[b[6]]), [2]);
    assert_eq!(ids(&b, &pdf[b[3]]), [2]);
    assert_eq!(ids(&b, &pdf[b[1]]), [2]);
}

#[test]
fn several_returns() {
    let (f, b) = graph(&[&[1, 2], &[], &[3, 4], &[], &[]]);
    let a = analyse(&f);
    assert_eq!(ids(&b, &a.cfg.exits().collect::<Vec<_>>()), [1, 3, 4]);
    assert_eq!(ids(&b, a.pdom.roots()), [1, 3, 4]);
    for (i, &x) in b.iter().enumerate() {
        assert_eq!(a.pdom.ipdom(x), None, "block {i}");
    }
    assert!(!a.pdom.post_dominates(b[1], b[0]));
    assert!(a.pdom.post_dominates(b[2], b[2]));
    assert_eq!(a.pdom.common_post_dominator(b[3], b[4]), None);
    let pdf = a.pdom.frontiers();
    assert_eq!(ids(&b, &pdf[b[1]]), [0]);
    assert_eq!(ids(&b, &pdf[b[2]]), [0]);
    assert_eq!(ids(&b, &pdf[b[3]]), [2]);
}

#[test]
fn unreachable_blocks_are_flagged_and_have_no_edges() {
    // 1 is unreachable and branches to 2; 3 is an unreachable self-loop; 4 is reachable.
    let (f, b) = graph(&[&[2], &[2], &[4], &[3], &[]]);
    let a = analyse(&f);
    assert_eq!(ids(&b, a.cfg.rpo()), [0, 2, 4]);
    assert_eq!(ids(&b, a.cfg.unreachable_blocks()), [1, 3]);
    assert!(!a.cfg.is_reachable(b[1]) && a.cfg.rpo_number(b[1]).is_none());
    assert_eq!(a.cfg.rpo_number(b[4]), Some(2));
    assert_eq!(ids(&b, a.cfg.preds(b[2])), [0]);
    assert!(a.cfg.succs(b[1]).is_empty() && a.cfg.preds(b[3]).is_empty());
    assert_eq!(a.dom.idom(b[1]), None);
    assert!(!a.dom.dominates(b[1], b[1]) && !a.dom.dominates(b[0], b[1]) && !a.dom.is_reachable(b[3]));
    assert_eq!(a.dom.common_dominator(b[1], b[2]), None);
    assert_eq!(a.pdom.ipdom(b[1]), None);
    assert!(a.loops.loops().is_empty(), "the unreachable self-loop is no loop");
    assert_eq!(a.loops.loop_of(b[3]), None);
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 2, 4]);
}

#[test]
fn infinite_loops_do_not_break_post_dominators() {
    // 0 -> {1, 3}; 1 -> 2 -> 1 forever; 3 returns.
    let (f, b) = graph(&[&[1, 3], &[2], &[1], &[]]);
    let a = analyse(&f);
    let l = a.loops.get(a.loops.loop_of(b[1]).unwrap());
    assert_eq!(ids(&b, &l.blocks), [1, 2]);
    assert!(l.exits.is_empty() && l.exit_edges.is_empty());
    assert_eq!(ids(&b, a.pdom.roots()), [3, 2]);
    assert_eq!(a.pdom.ipdom(b[2]), None);
    assert_eq!(a.pdom.ipdom(b[1]), Some(b[2]));
    assert_eq!(a.pdom.ipdom(b[0]), None);
    assert!(a.pdom.post_dominates(b[2], b[1]) && !a.pdom.post_dominates(b[3], b[0]));
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 1, 2, 3]);

    // No exit at all: 0 -> 1 -> 1.
    let (f, b) = graph(&[&[1], &[1]]);
    let a = analyse(&f);
    assert_eq!(a.cfg.exits().count(), 0);
    assert_eq!(ids(&b, a.pdom.roots()), [1]);
    assert_eq!(a.pdom.ipdom(b[0]), Some(b[1]));
    assert_eq!(a.pdom.ipdom(b[1]), None);
    let l = a.loops.get(a.loops.loop_of(b[1]).unwrap());
    assert_eq!((l.header, l.latches.clone()), (b[1], vec![b[1]]));
}

#[test]
fn irreducible_cfg_is_reported() {
    // The cycle 1 <-> 2 is entered at both blocks.
    let (f, b) = graph(&[&[1, 2], &[2], &[1, 3], &[]]);
    let a = analyse(&f);
    assert!(a.loops.is_irreducible());
    assert_eq!(a.loops.irreducible_edges(), &[(b[1], b[2])]);
    assert!(a.loops.loops().is_empty());
    assert_eq!(a.dom.idom(b[1]), Some(b[0]));
    assert_eq!(a.dom.idom(b[2]), Some(b[0]));
    // No topological order exists: the cycle's blocks come in reverse post-order.
    assert_eq!(ids(&b, a.cfg.rpo()), [0, 2, 1, 3]);
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 2, 1, 3]);

    // An irreducible cycle inside a natural loop: 1 is the header, 2 <-> 3 entered at both.
    let (f, b) = graph(&[&[1], &[2, 3], &[3, 4], &[2, 4], &[1, 5], &[]]);
    let a = analyse(&f);
    assert!(a.loops.is_irreducible());
    let l = a.loops.get(a.loops.loop_of(b[4]).unwrap());
    assert_eq!(ids(&b, &l.blocks), [1, 3, 2, 4]);
    assert_eq!(a.loops.irreducible_edges(), &[(b[2], b[3])]);
    assert_eq!(ids(&b, &a.cfg.loop_order()), [0, 1, 3, 2, 4, 5]);
}

#[test]
fn switch_with_repeated_targets_lists_each_successor_once() {
    let (f, b) = graph(&[&[1, 2, 1, 2], &[3], &[3], &[]]);
    let a = analyse(&f);
    assert_eq!(ids(&b, a.cfg.succs(b[0])), [1, 2]);
    assert_eq!(ids(&b, a.cfg.preds(b[1])), [0]);
    assert_eq!(a.pdom.ipdom(b[0]), Some(b[3]));
}

#[test]
fn self_loop() {
    let (f, b) = graph(&[&[1], &[1, 2], &[]]);
    let a = analyse(&f);
    let l = a.loops.get(a.loops.loop_of(b[1]).unwrap());
    assert_eq!((l.header, l.blocks.clone(), l.latches.clone()), (b[1], vec![b[1]], vec![b[1]]));
    assert_eq!(l.exit_edges, vec![(b[1], b[2])]);
    assert_eq!(a.pdom.ipdom(b[1]), Some(b[2]));
}

#[test]
fn branches_outside_the_layout_are_ignored() {
    let (mut f, b) = graph(&[&[1], &[]]);
    // A third block that exists but is not placed, and a branch to it.
    let stray = f.blocks.push(Default::default());
    let term = f.layout.last_inst(b[0]).unwrap();
    f.insts[term] = InstData::Branch {
        cond: f.blocks[b[0]].params[0],
        then_dest: BlockCall { block: stray, args: Vec::new() },
        else_dest: BlockCall { block: b[1], args: Vec::new() },
    };
    let a = analyse(&f);
    assert_eq!(ids(&b, a.cfg.succs(b[0])), [1]);
    assert!(!a.cfg.is_reachable(stray));
    // A function without blocks.
    let f = Function::new("empty", FuncKind::Import, Vec::new(), Type(0));
    let a = analyse(&f);
    assert!(a.cfg.rpo().is_empty() && a.cfg.entry().is_none() && a.cfg.loop_order().is_empty());
    assert!(a.pdom.roots().is_empty() && a.loops.loops().is_empty());
}

#[test]
fn def_use() {
    let mut m = Module::new();
    let boolt = m.types.bool();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let (mut f, b) = graph_with_types(&[&[1, 2], &[], &[]], boolt, i32t, void);
    let c = f.blocks[b[0]].params[0];
    let s = f.blocks[b[0]].params[1];
    // block1 takes two i32 parameters; block0 passes (s + s, s) to it.
    let p0 = f.append_block_param(b[1], i32t);
    let p1 = f.append_block_param(b[1], i32t);
    let term = f.layout.insts[b[0]].pop().unwrap();
    let (add, sum) =
        f.append_inst(b[0], InstData::Binary { op: crate::ir::BinaryOp::IAdd, lhs: s, rhs: s }, Some(i32t));
    let sum = sum.unwrap();
    f.layout.insts[b[0]].push(term);
    if let InstData::Branch { then_dest, .. } = &mut f.insts[term] {
        then_dest.args = vec![sum, s];
    }
    let du = DefUse::new(&f);
    assert_eq!(
        du.uses(s),
        &[
            Use { inst: add, kind: UseKind::Operand },
            Use { inst: add, kind: UseKind::Operand },
            Use { inst: term, kind: UseKind::BlockArg { edge: 0, target: b[1], param: 1 } }
        ]
    );
    assert_eq!(du.uses(sum), &[Use { inst: term, kind: UseKind::BlockArg { edge: 0, target: b[1], param: 0 } }]);
    assert_eq!(du.uses(c), &[Use { inst: term, kind: UseKind::Operand }]);
    assert_eq!(du.users(s).collect::<Vec<_>>(), [add, add, term]);
    assert!(!du.is_used(p0) && !du.is_used(p1) && du.is_used(sum));
    assert_eq!(du.def_block(sum), Some(b[0]));
    assert_eq!(du.def_block(p1), Some(b[1]));
    assert_eq!(du.def_block(c), Some(b[0]));
    let five = m.add_const(crate::ir::ConstData::Int { ty: i32t, bits: 5 });
    let k: Value = f.const_value(five, i32t);
    assert_eq!(du.def_block(k), None);
}

/// A deterministic pseudo-random generator (no dependencies).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// The blocks reachable from `from` without entering `avoid`, following `succ`.
fn reach(n: usize, from: &[usize], avoid: Option<usize>, succ: &dyn Fn(usize) -> Vec<usize>) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    for &x in from {
        if Some(x) != avoid && !seen[x] {
            seen[x] = true;
            stack.push(x);
        }
    }
    while let Some(x) = stack.pop() {
        for s in succ(x) {
            if Some(s) != avoid && !seen[s] {
                seen[s] = true;
                stack.push(s);
            }
        }
    }
    seen
}

#[test]
fn random_graphs_match_brute_force_definitions() {
    let mut rng = Lcg(0x5eed);
    let mut reducible_seen = 0;
    let mut irreducible_seen = 0;
    for round in 0..1000 {
        let n = 2 + rng.next(11);
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                // Mostly forward edges, some backward, some exits.
                let count = [0, 1, 1, 2, 2, 2, 3][rng.next(7)];
                let count = if i == n - 1 { 0 } else { count };
                (0..count)
                    .map(|_| if rng.next(3) == 0 { rng.next(n) } else { (i + 1 + rng.next(n - i)).min(n - 1) })
                    .collect()
            })
            .collect();
        let slices: Vec<&[usize]> = succs.iter().map(Vec::as_slice).collect();
        let (f, b) = graph(&slices);
        let a = analyse(&f);
        let succ_of = |x: usize| ids(&b, a.cfg.succs(b[x]));
        let reachable = reach(n, &[0], None, &succ_of);
        for x in 0..n {
            assert_eq!(a.cfg.is_reachable(b[x]), reachable[x], "round {round}: {succs:?}");
        }
        // Reverse post-order: every non-retreating edge goes forward; the entry first.
        let rpo = ids(&b, a.cfg.rpo());
        assert_eq!(rpo[0], 0);
        // Dominators: a dominates x iff x is not reachable when a is removed.
        for d in 0..n {
            let without = reach(n, &[0], Some(d), &succ_of);
            for x in 0..n {
                let expected = reachable[x] && reachable[d] && (d == x || !without[x]);
                assert_eq!(a.dom.dominates(b[d], b[x]), expected, "round {round}: {d} dom {x} in {succs:?}");
            }
        }
        for x in 1..n {
            if let Some(i) = a.dom.idom(b[x]) {
                assert!(a.dom.strictly_dominates(i, b[x]));
                for d in 0..n {
                    if a.dom.strictly_dominates(b[d], b[x]) {
                        assert!(a.dom.dominates(b[d], i), "round {round}: idom is not the nearest");
                    }
                }
            }
        }
        // Post-dominators, where every reachable block reaches an exit.
        let exits: Vec<usize> = (0..n).filter(|&x| reachable[x] && succ_of(x).is_empty()).collect();
        let pred_of = |x: usize| ids(&b, a.cfg.preds(b[x]));
        let reaches_exit = reach(n, &exits, None, &pred_of);
        if (0..n).all(|x| !reachable[x] || reaches_exit[x]) {
            let mut roots = ids(&b, a.pdom.roots());
            roots.sort();
            assert_eq!(roots, exits);
            for p in 0..n {
                for x in 0..n {
                    if !reachable[x] || !reachable[p] {
                        continue;
                    }
                    let escapes = reach(n, &[x], Some(p), &succ_of);
                    let expected = p == x || !exits.iter().any(|&e| escapes[e]);
                    assert_eq!(a.pdom.post_dominates(b[p], b[x]), expected, "round {round}: {p} pdom {x} in {succs:?}");
                }
            }
        }
        // Loops: the header dominates its blocks; every block of the loop reaches a latch
        // without passing the header.
        for l in a.loops.loops() {
            for &x in &l.blocks {
                assert!(a.dom.dominates(l.header, x));
                assert!(a.loops.contains(LoopId(a.loops.loops().iter().position(|y| y == l).unwrap() as u32), x));
            }
            for &(from, to) in &l.exit_edges {
                assert!(l.blocks.contains(&from) && !l.blocks.contains(&to));
            }
        }
        // The loop order: a permutation of the reachable blocks, the entry first, every
        // loop contiguous, and (if reducible) every edge but a back edge goes forward.
        let order = a.cfg.loop_order();
        let mut sorted = ids(&b, &order);
        sorted.sort();
        let mut expected: Vec<usize> = (0..n).filter(|&x| reachable[x]).collect();
        expected.sort();
        assert_eq!(sorted, expected, "round {round}");
        assert_eq!(order[0], b[0]);
        let pos = |x: Block| order.iter().position(|&y| y == x).unwrap();
        for l in a.loops.loops() {
            let positions: Vec<usize> = l.blocks.iter().map(|&x| pos(x)).collect();
            let (lo, hi) = (*positions.iter().min().unwrap(), *positions.iter().max().unwrap());
            assert_eq!(hi - lo + 1, l.blocks.len(), "round {round}: loop not contiguous in {succs:?}");
            assert_eq!(lo, pos(l.header));
        }
        if a.loops.is_irreducible() {
            irreducible_seen += 1;
        } else {
            reducible_seen += 1;
            for &x in a.cfg.rpo() {
                for &s in a.cfg.succs(x) {
                    let back = a.loops.is_header(s) && a.loops.get(a.loops.loop_of(s).unwrap()).latches.contains(&x);
                    assert!(back || pos(x) < pos(s), "round {round}: edge {x}->{s} goes backward in {succs:?}");
                }
            }
        }
    }
    assert!(reducible_seen > 50 && irreducible_seen > 10, "{reducible_seen} reducible, {irreducible_seen} irreducible");
}
