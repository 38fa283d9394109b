//! The IR editing API (insert, remove, replace uses, split blocks, add block parameters) on
//! hand-built functions: the validator accepts the result of every edit, and the analyses
//! see the new control flow.

use softcl_compiler::analysis::{Cfg, DefUse, DomTree, LoopInfo, PostDomTree};
use softcl_compiler::ir::validate::validate;
use softcl_compiler::ir::{
    BinaryOp, Block, BlockCall, ConstData, Func, FuncKind, Function, Inst, InstData, Module, Type, Value,
};

struct Fixture {
    module: Module,
    i32t: Type,
    boolt: Type,
}

fn fixture() -> Fixture {
    let mut module = Module::new();
    let i32t = module.types.int(32);
    let boolt = module.types.bool();
    Fixture { module, i32t, boolt }
}

fn bin(op: BinaryOp, lhs: Value, rhs: Value) -> InstData {
    InstData::Binary { op, lhs, rhs }
}

fn call(block: Block, args: Vec<Value>) -> BlockCall {
    BlockCall { block, args }
}

fn constant(fx: &mut Fixture, f: &mut Function, n: u64) -> Value {
    let c = fx.module.add_const(ConstData::Int { ty: fx.i32t, bits: n });
    f.const_value(c, fx.i32t)
}

/// Validates `f` inside the fixture's module and gives it back.
fn check(fx: &mut Fixture, f: Function) -> Function {
    let func: Func = fx.module.functions.push(f);
    let result = validate(&fx.module);
    let f = fx.module.functions[func].clone();
    // Leave the module as it was (functions cannot be removed from the arena: replace the
    // checked one by an empty import that validates).
    fx.module.functions[func] = Function::new("done", FuncKind::Import, Vec::new(), fx.i32t);
    if let Err(errors) = result {
        panic!("validation failed: {errors:#?}\n{f}");
    }
    f
}

fn errors(fx: &mut Fixture, f: Function) -> Vec<String> {
    let func = fx.module.functions.push(f);
    let result = validate(&fx.module);
    fx.module.functions[func] = Function::new("done", FuncKind::Import, Vec::new(), fx.i32t);
    match result {
        Ok(()) => Vec::new(),
        Err(e) => e.iter().map(|e| e.to_string()).collect(),
    }
}

/// `f(c: bool, x: i32) -> i32`:
/// block0(c, x): y = x + 1; z = y * 2; branch c, block1(z), block2(y)
/// block1(p): jump block3(p)
/// block2(q): jump block3(q)
/// block3(r): return r
struct Diamond {
    f: Function,
    b: [Block; 4],
    x: Value,
    y: Value,
    z: Value,
    y_inst: Inst,
    z_inst: Inst,
    branch: Inst,
}

fn diamond(fx: &mut Fixture) -> Diamond {
    let mut f = Function::new("diamond", FuncKind::Function, vec![fx.boolt, fx.i32t], fx.i32t);
    let b = [f.create_block(), f.create_block(), f.create_block(), f.create_block()];
    let c = f.append_block_param(b[0], fx.boolt);
    let x = f.append_block_param(b[0], fx.i32t);
    let one = constant(fx, &mut f, 1);
    let two = constant(fx, &mut f, 2);
    let (y_inst, y) = f.append_inst(b[0], bin(BinaryOp::IAdd, x, one), Some(fx.i32t));
    let y = y.unwrap();
    let (z_inst, z) = f.append_inst(b[0], bin(BinaryOp::IMul, y, two), Some(fx.i32t));
    let z = z.unwrap();
    let (branch, _) = f.append_inst(
        b[0],
        InstData::Branch { cond: c, then_dest: call(b[1], vec![z]), else_dest: call(b[2], vec![y]) },
        None,
    );
    let p = f.append_block_param(b[1], fx.i32t);
    f.append_inst(b[1], InstData::Jump { dest: call(b[3], vec![p]) }, None);
    let q = f.append_block_param(b[2], fx.i32t);
    f.append_inst(b[2], InstData::Jump { dest: call(b[3], vec![q]) }, None);
    let r = f.append_block_param(b[3], fx.i32t);
    f.append_inst(b[3], InstData::Return { value: Some(r) }, None);
    Diamond { f, b, x, y, z, y_inst, z_inst, branch }
}

#[test]
fn the_fixture_is_valid() {
    let mut fx = fixture();
    let d = diamond(&mut fx);
    check(&mut fx, d.f);
}

#[test]
fn insert_before_after_and_at_end() {
    let mut fx = fixture();
    let Diamond { mut f, b, x, y, z, y_inst, z_inst, branch } = diamond(&mut fx);
    // w = y * y right after y.
    let (w_inst, w) = f.insert_inst_after(y_inst, bin(BinaryOp::IMul, y, y), Some(fx.i32t));
    let w = w.unwrap();
    let mut f = check(&mut fx, f);
    // u = x - w, then v = u + x, both before z (they keep their order).
    let (u_inst, u) = f.insert_inst_before(z_inst, bin(BinaryOp::ISub, x, w), Some(fx.i32t));
    let (v_inst, v) = f.insert_inst_before(z_inst, bin(BinaryOp::IAdd, u.unwrap(), x), Some(fx.i32t));
    let mut f = check(&mut fx, f);
    // s = v + z at the end of block0: before the branch, after z.
    let (s_inst, s) = f.insert_inst_at_end(b[0], bin(BinaryOp::IAdd, v.unwrap(), z), Some(fx.i32t));
    let mut f = check(&mut fx, f);
    assert_eq!(f.layout.insts[b[0]], vec![y_inst, w_inst, u_inst, v_inst, z_inst, s_inst, branch]);
    assert_eq!(f.layout.inst_block[s_inst], Some(b[0]));
    // The branch passes s instead of z.
    assert_eq!(f.replace_uses_in(branch, z, s.unwrap()), 1);
    let f = check(&mut fx, f);
    let du = DefUse::new(&f);
    assert_eq!(du.users(s.unwrap()).collect::<Vec<_>>(), [branch]);
    assert_eq!(du.users(z).collect::<Vec<_>>(), [s_inst]);
    // Inserting after the terminator is caught by the validator, not hidden.
    let mut broken = f.clone();
    broken.insert_inst_after(branch, bin(BinaryOp::IAdd, x, x), Some(fx.i32t));
    assert!(errors(&mut fx, broken).iter().any(|e| e.contains("is not the last instruction")));
}

#[test]
fn insert_at_the_end_of_a_block_without_terminator_appends() {
    let mut fx = fixture();
    let mut f = Function::new("f", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    let (_, y) = f.insert_inst_at_end(b0, bin(BinaryOp::IAdd, x, x), Some(fx.i32t));
    assert_eq!(f.terminator(b0), None);
    let (ret, _) = f.insert_inst_at_end(b0, InstData::Return { value: y }, None);
    assert_eq!(f.terminator(b0), Some(ret));
    check(&mut fx, f);
}

#[test]
fn replace_all_uses_reaches_branch_arguments() {
    let mut fx = fixture();
    let Diamond { mut f, x, y, y_inst, z_inst, branch, .. } = diamond(&mut fx);
    // y is used by z and by the branch's else arguments.
    assert_eq!(f.replace_all_uses(y, x), 2);
    let mut f = check(&mut fx, f);
    let du = DefUse::new(&f);
    assert!(!du.is_used(y));
    assert_eq!(du.users(x).collect::<Vec<_>>(), [y_inst, z_inst, branch]);
    // y is now dead: remove its instruction.
    assert!(f.remove_inst(y_inst));
    assert!(!f.remove_inst(y_inst), "removing twice does nothing");
    assert_eq!(f.layout.inst_block[y_inst], None);
    let mut f = check(&mut fx, f);
    // Removing a used instruction is reported by the validator.
    assert!(f.remove_inst(z_inst));
    assert!(errors(&mut fx, f).iter().any(|e| e.contains("which is not in the layout")));
}

#[test]
fn split_block_keeps_parameter_passing_valid() {
    let mut fx = fixture();
    let Diamond { mut f, b, z_inst, branch, .. } = diamond(&mut fx);
    let tail = f.split_block(z_inst).unwrap();
    let f = check(&mut fx, f);
    assert_eq!(f.layout.blocks, vec![b[0], tail, b[1], b[2], b[3]]);
    assert_eq!(f.layout.insts[tail], vec![z_inst, branch]);
    assert_eq!(f.layout.inst_block[branch], Some(tail));
    assert_eq!(f.layout.insts[b[0]].len(), 2);
    assert!(
        matches!(&f.insts[f.terminator(b[0]).unwrap()], InstData::Jump { dest } if dest.block == tail && dest.args.is_empty())
    );
    let cfg = Cfg::new(&f);
    assert_eq!(cfg.succs(b[0]), &[tail]);
    assert_eq!(cfg.succs(tail), &[b[1], b[2]]);
    assert_eq!(cfg.preds(b[1]), &[tail]);
    let dom = DomTree::new(&cfg);
    assert_eq!(dom.idom(b[1]), Some(tail));
    assert_eq!(dom.idom(tail), Some(b[0]));
    assert_eq!(PostDomTree::new(&cfg).ipdom(tail), Some(b[3]));

    // At the terminator, at the first instruction, and of a block that is a branch target
    // with parameters.
    let mut f = f;
    let join = f.split_block(f.terminator(b[3]).unwrap()).unwrap();
    let mut f = check(&mut fx, f);
    let first = f.layout.insts[b[0]][0];
    let head_tail = f.split_block(first).unwrap();
    let f = check(&mut fx, f);
    assert_eq!(f.layout.insts[b[0]].len(), 1);
    assert_eq!(f.layout.blocks, vec![b[0], head_tail, tail, b[1], b[2], b[3], join]);
    // An instruction that is not placed cannot be split at.
    let mut f = f;
    let (loose, _) = f.make_inst(InstData::Unreachable, None);
    assert_eq!(f.split_block(loose), None);
    check(&mut fx, f);
}

#[test]
fn split_loop_header_stays_in_the_loop() {
    // block0: jump block1(0)
    // block1(i): i2 = i + 1; branch (i2 < 10), block1(i2), block2
    // block2: return i2
    let mut fx = fixture();
    let mut f = Function::new("loop", FuncKind::Function, vec![], fx.i32t);
    let b0 = f.create_block();
    let b1 = f.create_block();
    let b2 = f.create_block();
    let zero = constant(&mut fx, &mut f, 0);
    let ten = constant(&mut fx, &mut f, 10);
    let one = constant(&mut fx, &mut f, 1);
    f.append_inst(b0, InstData::Jump { dest: call(b1, vec![zero]) }, None);
    let i = f.append_block_param(b1, fx.i32t);
    let (add, i2) = f.append_inst(b1, bin(BinaryOp::IAdd, i, one), Some(fx.i32t));
    let i2 = i2.unwrap();
    let (_, more) =
        f.append_inst(b1, InstData::Compare { op: softcl_compiler::ir::CmpOp::SLt, lhs: i2, rhs: ten }, Some(fx.boolt));
    f.append_inst(
        b1,
        InstData::Branch { cond: more.unwrap(), then_dest: call(b1, vec![i2]), else_dest: call(b2, vec![]) },
        None,
    );
    f.append_inst(b2, InstData::Return { value: Some(i2) }, None);
    let mut f = check(&mut fx, f);
    let cfg = Cfg::new(&f);
    let loops = LoopInfo::new(&cfg, &DomTree::new(&cfg));
    assert_eq!(loops.loops().len(), 1);
    assert_eq!(loops.get(loops.loop_of(b1).unwrap()).latches, vec![b1]);

    let latch = f.split_block(add).unwrap();
    let mut f = check(&mut fx, f);
    let cfg = Cfg::new(&f);
    let loops = LoopInfo::new(&cfg, &DomTree::new(&cfg));
    let l = loops.get(loops.loop_of(latch).unwrap());
    assert_eq!((l.header, l.blocks.clone(), l.latches.clone()), (b1, vec![b1, latch], vec![latch]));
    assert_eq!(l.exit_edges, vec![(latch, b2)]);

    // A loop-carried value through a new header parameter: the sum of i.
    let sum = f.add_block_param(b1, fx.i32t, |_| zero);
    let (_, next) = f.insert_inst_at_end(latch, bin(BinaryOp::IAdd, sum, i), Some(fx.i32t));
    let next = next.unwrap();
    let branch = f.terminator(latch).unwrap();
    if let InstData::Branch { then_dest, .. } = &mut f.insts[branch] {
        then_dest.args[1] = next;
    }
    let f = check(&mut fx, f);
    assert_eq!(f.blocks[b1].params.len(), 2);
}

#[test]
fn add_block_param_passes_an_argument_on_every_edge() {
    let mut fx = fixture();
    let Diamond { mut f, b, x, y, .. } = diamond(&mut fx);
    // block3 gets a second parameter: x from block1, y from block2.
    let from_b1 = f.terminator(b[1]).unwrap();
    let extra = f.add_block_param(b[3], fx.i32t, |t| if t == from_b1 { x } else { y });
    let ret = f.terminator(b[3]).unwrap();
    let (_, total) = f.insert_inst_before(ret, bin(BinaryOp::IAdd, f.blocks[b[3]].params[0], extra), Some(fx.i32t));
    f.insts[ret] = InstData::Return { value: total };
    let f = check(&mut fx, f);
    assert!(matches!(&f.insts[from_b1], InstData::Jump { dest } if dest.args.len() == 2 && dest.args[1] == x));
    assert_eq!(f.branches_to(b[3]).len(), 2);

    // A switch with two edges to one block passes the argument on both.
    let mut g = Function::new("sw", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let s0 = g.create_block();
    let s1 = g.create_block();
    let sel = g.append_block_param(s0, fx.i32t);
    let (sw, _) = g.append_inst(
        s0,
        InstData::Switch {
            selector: sel,
            default: call(s1, vec![]),
            cases: vec![(1, call(s1, vec![])), (2, call(s1, vec![]))],
        },
        None,
    );
    g.append_inst(s1, InstData::Return { value: Some(sel) }, None);
    let mut calls = 0;
    let p = g.add_block_param(s1, fx.i32t, |_| {
        calls += 1;
        sel
    });
    assert_eq!(calls, 1, "one value per terminator");
    let ret = g.terminator(s1).unwrap();
    g.insts[ret] = InstData::Return { value: Some(p) };
    let g = check(&mut fx, g);
    assert!(g.insts[sw].successors().iter().all(|c| c.args == vec![sel]));
    // Without the arguments the validator would object: the API is what keeps it valid.
    let mut h = g.clone();
    h.append_block_param(s1, fx.i32t);
    assert!(errors(&mut fx, h).iter().any(|e| e.contains("passes 1 arguments")));
}

#[test]
fn split_edge_moves_the_arguments_to_the_new_jump() {
    let mut fx = fixture();
    let Diamond { mut f, b, y, z, branch, .. } = diamond(&mut fx);
    // The else edge (number 1) of block0's branch passes y to block2.
    let mid = f.split_edge(branch, 1).unwrap();
    let f = check(&mut fx, f);
    assert_eq!(f.layout.blocks, vec![b[0], mid, b[1], b[2], b[3]]);
    match &f.insts[branch] {
        InstData::Branch { then_dest, else_dest, .. } => {
            assert_eq!((then_dest.block, then_dest.args.clone()), (b[1], vec![z]));
            assert_eq!((else_dest.block, else_dest.args.clone()), (mid, vec![]));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&f.insts[f.terminator(mid).unwrap()], InstData::Jump { dest } if dest.block == b[2] && dest.args == vec![y])
    );
    let cfg = Cfg::new(&f);
    assert_eq!(cfg.preds(b[2]), &[mid]);
    assert_eq!(DomTree::new(&cfg).idom(b[2]), Some(mid));

    // One of two switch edges to the same block.
    let mut g = Function::new("sw", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let s0 = g.create_block();
    let s1 = g.create_block();
    let sel = g.append_block_param(s0, fx.i32t);
    let p = g.append_block_param(s1, fx.i32t);
    let (sw, _) = g.append_inst(
        s0,
        InstData::Switch { selector: sel, default: call(s1, vec![sel]), cases: vec![(7, call(s1, vec![sel]))] },
        None,
    );
    g.append_inst(s1, InstData::Return { value: Some(p) }, None);
    let mid = g.split_edge(sw, 1).unwrap();
    let mut g = check(&mut fx, g);
    let targets: Vec<Block> = g.insts[sw].successors().iter().map(|c| c.block).collect();
    assert_eq!(targets, [s1, mid]);
    let cfg = Cfg::new(&g);
    assert_eq!(cfg.preds(s1), &[s0, mid]);
    // No such edge, or not a terminator: nothing changes.
    let blocks_before = g.layout.blocks.clone();
    assert_eq!(g.split_edge(sw, 2), None);
    let first = g.layout.insts[mid][0];
    assert_eq!(g.split_edge(first, 1), None);
    let (loose, _) = g.make_inst(InstData::Jump { dest: call(s1, vec![sel]) }, None);
    assert_eq!(g.split_edge(loose, 0), None);
    assert_eq!(g.layout.blocks, blocks_before);
    assert_eq!(g.blocks.len(), 3, "no block created by a failed split");
    check(&mut fx, g);
}
