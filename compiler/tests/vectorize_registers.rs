//! The work-item analysis of private register variables (such as the work-item state
//! variables of `passes::barriers`): the shape of their loads is the meet of every store,
//! and a branch on such a load waits for the stores further down.

mod common;

use common::*;
use softcl_compiler::ir::{BinaryOp as B, CmpOp, FuncKind, InstData, Module, WorkItemQuery as Q};
use softcl_compiler::vectorize::analysis::{analyze, Access, Shape};
use softcl_compiler::AddressSpace as S;

/// A pointer variable stored `p + gid` (strided) and then `p + gid * gid` (varying): its
/// load varies, and the access through it is a gather, not a consecutive load.
#[test]
fn every_store_decides_the_shape_of_a_register_variable() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let pi = m.types.pointer(S::Global, i32t);
    let ppi = m.types.pointer(S::Private, pi);
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pi], void);
    let var = fb.inst(InstData::Variable { ty: pi, init: None, align: 0 }, ppi);
    let u64t = fb.int(64);
    let gid = fb.inst(InstData::WorkItem { query: Q::GlobalLinearId }, u64t);
    let strided = fb.index(p[0], gid);
    fb.store(var, strided);
    let sq = fb.bin(B::IMul, gid, gid);
    let varying = fb.index(p[0], sq);
    fb.store(var, varying);
    let ptr = fb.load(var);
    let x = fb.load(ptr);
    fb.store(strided, x);
    fb.ret(None);
    let func = fb.finish_kernel(args_info("k", &[buffer_arg()]));
    let f = &m.functions[func];
    let a = analyze(&m, f);
    assert_eq!(a.shape(f, strided), Shape::Strided(4));
    assert_eq!(a.shape(f, ptr), Shape::Varying);
    let load_x =
        f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter()).copied().find(|&i| f.inst_result[i] == Some(x));
    assert_eq!(a.access(load_x.expect("the load")), Some(Access::Random));
}

/// `if (v == 0)` on a register variable whose only store (a constant) comes later in the
/// layout than the branch: uniform, not divergent.
#[test]
fn a_branch_waits_for_the_stores_of_its_register_variable() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let pv = m.types.pointer(S::Private, i32t);
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Kernel, &[], void);
    let var = fb.inst(InstData::Variable { ty: i32t, init: None, align: 0 }, pv);
    let (test, _) = fb.block(&[]);
    let (yes, _) = fb.block(&[]);
    let (no, _) = fb.block(&[]);
    let (set, _) = fb.block(&[]);
    fb.jump(set, vec![]);
    fb.switch_to(test);
    let v = fb.load(var);
    let zero = fb.cint(i32t, 0);
    let c = fb.cmp(CmpOp::IEq, v, zero);
    fb.branch(c, yes, vec![], no, vec![]);
    fb.switch_to(yes);
    fb.ret(None);
    fb.switch_to(no);
    fb.ret(None);
    fb.switch_to(set);
    let five = fb.cint(i32t, 5);
    fb.store(var, five);
    fb.jump(test, vec![]);
    let func = fb.finish_kernel(args_info("k", &[]));
    let f = &m.functions[func];
    let a = analyze(&m, f);
    assert_eq!(a.shape(f, c), Shape::Uniform);
    assert!(a.divergent_branches.is_empty(), "{:?}", a.divergent_branches);
}
