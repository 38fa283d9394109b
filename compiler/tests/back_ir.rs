//! Back-end tests from hand-built IR: codegen -> native code -> execution.

mod common;

use common::*;
use softcl_compiler::back::codegen;
use softcl_compiler::ir::{
    self, BinaryOp as B, CmpOp, ConvertOp, FuncKind, GlobalVarData, InstData, Module, TypeData, WorkItemQuery as Q,
};
use softcl_compiler::{AddressSpace as S, ArgKind, BuildErrorKind, Target};
use spirv::OpenclStd100Op as Op;

fn target() -> Target {
    Target::default()
}

/// c[i] = a[i] + b[i]
fn vadd_module() -> Module {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let (mut fb, p) = Fb::new(&mut m, "vadd", FuncKind::Kernel, &[pf, pf, pf], void);
    let i = fb.wi(Q::GlobalId, 0);
    let pa = fb.index(p[0], i);
    let pb = fb.index(p[1], i);
    let pc = fb.index(p[2], i);
    let a = fb.load(pa);
    let b = fb.load(pb);
    let s = fb.bin(B::FAdd, a, b);
    fb.store(pc, s);
    fb.ret(None);
    fb.finish_kernel(args_info("vadd", &[buffer_arg(), buffer_arg(), buffer_arg()]));
    m
}

#[test]
fn vector_add() {
    let m = vadd_module();
    let t0 = std::time::Instant::now();
    let prog = codegen(&m, &target()).expect("codegen");
    eprintln!("codegen of vadd: {:?}", t0.elapsed());
    let k = prog.kernel("vadd").unwrap();
    assert_eq!(k.info.barrier_count, 0);
    assert_eq!(k.info.work_item_state_size, 0);
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 0.5).collect();
    let mut c = vec![0f32; n];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, a.as_ptr());
    args.set_ptr(&k.info, 1, b.as_ptr());
    args.set_ptr(&k.info, 2, c.as_mut_ptr());
    run_1d(k, &mut args, n as u64, 64);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "at {i}");
    }
}

/// Codegen time of a small kernel (printed; run with --nocapture).
#[test]
fn codegen_time_small_kernel() {
    let m = vadd_module();
    let _ = codegen(&m, &target()).expect("warm-up");
    let mut times = Vec::new();
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let p = codegen(&m, &target()).expect("codegen");
        times.push(t0.elapsed());
        drop(p);
    }
    times.sort();
    eprintln!("codegen(vadd) median {:?} (min {:?}, max {:?})", times[2], times[0], times[4]);
}

/// Work-group reduction in __local memory with a barrier inside a loop, the loop counter
/// (a block parameter) live across the barrier.
fn reduce_module() -> Module {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let u64t = m.types.int(64);
    let void = m.types.void();
    let arr = m.types.intern(TypeData::Array { elem: f32t, len: 256 });
    let tmp = m.globals.push(GlobalVarData {
        name: "tmp".into(),
        ty: arr,
        space: S::Local,
        init: None,
        builtin: None,
        align: 4,
    });
    let pf = m.types.pointer(S::Global, f32t);
    let (mut fb, p) = Fb::new(&mut m, "reduce", FuncKind::Kernel, &[pf, pf], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let lid = fb.wi(Q::LocalId, 0);
    let ls = fb.wi(Q::LocalSize, 0);
    let tmpv = fb.global(tmp);
    let pin = fb.index(p[0], gid);
    let x = fb.load(pin);
    let pt = fb.elem(tmpv, lid);
    fb.store(pt, x);
    fb.barrier();
    let one = fb.cint(u64t, 1);
    let s0 = fb.bin(B::LShr, ls, one);
    let (header, hp) = fb.block(&[u64t]);
    let (body, _) = fb.block(&[]);
    let (add, _) = fb.block(&[]);
    let (latch, _) = fb.block(&[]);
    let (exit, _) = fb.block(&[]);
    let (wr, _) = fb.block(&[]);
    let (end, _) = fb.block(&[]);
    fb.jump(header, vec![s0]);

    fb.switch_to(header);
    let s = hp[0];
    let zero = fb.cint(u64t, 0);
    let c = fb.cmp(CmpOp::UGt, s, zero);
    fb.branch(c, body, vec![], exit, vec![]);

    fb.switch_to(body);
    let c2 = fb.cmp(CmpOp::ULt, lid, s);
    fb.branch(c2, add, vec![], latch, vec![]);

    fb.switch_to(add);
    let p1 = fb.elem(tmpv, lid);
    let a = fb.load(p1);
    let j = fb.bin(B::IAdd, lid, s);
    let p2 = fb.elem(tmpv, j);
    let b = fb.load(p2);
    let sum = fb.bin(B::FAdd, a, b);
    fb.store(p1, sum);
    fb.jump(latch, vec![]);

    fb.switch_to(latch);
    fb.barrier();
    let one2 = fb.cint(u64t, 1);
    let s2 = fb.bin(B::LShr, s, one2);
    fb.jump(header, vec![s2]);

    fb.switch_to(exit);
    let zero2 = fb.cint(u64t, 0);
    let c3 = fb.cmp(CmpOp::IEq, lid, zero2);
    fb.branch(c3, wr, vec![], end, vec![]);

    fb.switch_to(wr);
    let p0 = fb.elem(tmpv, zero2);
    let v = fb.load(p0);
    let grp = fb.wi(Q::GroupId, 0);
    let po = fb.index(p[1], grp);
    fb.store(po, v);
    fb.jump(end, vec![]);

    fb.switch_to(end);
    fb.ret(None);
    fb.finish_kernel(args_info("reduce", &[buffer_arg(), buffer_arg()]));
    m
}

fn check_reduce(pattern: Pattern) {
    let m = reduce_module();
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("reduce").unwrap();
    assert_eq!(k.info.barrier_count, 2);
    assert_eq!(k.info.static_local_mem_size, 1024);
    assert!(k.info.work_item_state_size >= 8, "the loop counter lives across the barrier");
    let local = 64u64;
    let groups = 5u64;
    let input: Vec<f32> = (0..local * groups).map(|i| (i % 17) as f32).collect();
    let mut out = vec![0f32; groups as usize];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, input.as_ptr());
    args.set_ptr(&k.info, 1, out.as_mut_ptr());
    run_ndrange(k, &mut args, 1, [local * groups, 1, 1], [local, 1, 1], [0; 3], pattern, &[]);
    for g in 0..groups as usize {
        let want: f32 = input[g * local as usize..(g + 1) * local as usize].iter().sum();
        assert_eq!(out[g], want, "group {g}");
    }
}

#[test]
fn reduction_barrier_in_loop() {
    check_reduce(Pattern::Whole);
}

#[test]
fn reduction_in_chunks_of_8() {
    check_reduce(Pattern::Chunks(8));
}

/// A private array with dynamic indexing, written before a barrier and read after it
/// (it must live in the work-item state), inside a helper function that gets inlined.
#[test]
fn private_array_across_barrier_in_helper() {
    let mut m = Module::new();
    let u32t = m.types.int(32);
    let u64t = m.types.int(64);
    let void = m.types.void();
    let arr = m.types.intern(TypeData::Array { elem: u32t, len: 8 });
    let parr = m.types.pointer(S::Private, arr);
    let pu = m.types.pointer(S::Global, u32t);
    // helper(out): int a[8]; for k: a[k] = lid*k; barrier; out[gid] = a[lid % 8]
    let (mut fb, hp) = Fb::new(&mut m, "helper", FuncKind::Function, &[pu], void);
    let var = fb.inst(InstData::Variable { ty: arr, init: None, align: 0 }, parr);
    let lid = fb.wi(Q::LocalId, 0);
    let gid = fb.wi(Q::GlobalId, 0);
    let lid32 = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: lid, saturate: false, rounding: None }, u32t);
    let (lp, lpp) = fb.block(&[u32t]);
    let (after, _) = fb.block(&[]);
    let z = fb.cint(u32t, 0);
    fb.jump(lp, vec![z]);
    fb.switch_to(lp);
    let k = lpp[0];
    let pk = fb.elem(var, k);
    let v = fb.bin(B::IMul, lid32, k);
    fb.store(pk, v);
    let one = fb.cint(u32t, 1);
    let k1 = fb.bin(B::IAdd, k, one);
    let eight = fb.cint(u32t, 8);
    let more = fb.cmp(CmpOp::ULt, k1, eight);
    fb.branch(more, lp, vec![k1], after, vec![]);
    fb.switch_to(after);
    fb.barrier();
    let seven = fb.cint(u64t, 7);
    let idx = fb.bin(B::And, lid, seven);
    let pi = fb.elem(var, idx);
    let r = fb.load(pi);
    let po = fb.index(hp[0], gid);
    fb.store(po, r);
    fb.ret(None);
    let helper = fb.finish();

    let (mut fb, p) = Fb::new(&mut m, "priv", FuncKind::Kernel, &[pu], void);
    fb.effect(InstData::Call { func: helper, args: vec![p[0]] });
    fb.ret(None);
    fb.finish_kernel(args_info("priv", &[buffer_arg()]));

    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("priv").unwrap();
    assert_eq!(k.info.barrier_count, 1);
    assert!(k.info.work_item_state_size >= 32, "state {}", k.info.work_item_state_size);
    for pattern in [Pattern::Whole, Pattern::Chunks(8)] {
        let n = 48u64;
        let mut out = vec![0u32; n as usize];
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, out.as_mut_ptr());
        run_ndrange(k, &mut args, 1, [n, 1, 1], [16, 1, 1], [0; 3], pattern, &[]);
        for g in 0..n {
            let lid = g % 16;
            assert_eq!(out[g as usize], (lid * (lid % 8)) as u32, "item {g} {pattern:?}");
        }
    }
}

/// Integer division and remainder by zero and INT_MIN / -1 must not trap.
#[test]
fn division_by_zero_does_not_trap() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let pi = m.types.pointer(S::Global, i32t);
    let (mut fb, p) = Fb::new(&mut m, "divs", FuncKind::Kernel, &[pi, pi, pi], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let a = fb.index(p[0], gid);
    let b = fb.index(p[1], gid);
    let x = fb.load(a);
    let y = fb.load(b);
    let q = fb.bin(B::SDiv, x, y);
    let r = fb.bin(B::SRem, x, y);
    let u = fb.bin(B::UDiv, x, y);
    let mo = fb.bin(B::SMod, x, y);
    let s1 = fb.bin(B::Xor, q, r);
    let s2 = fb.bin(B::Xor, s1, u);
    let s3 = fb.bin(B::Xor, s2, mo);
    let o = fb.index(p[2], gid);
    fb.store(o, s3);
    fb.ret(None);
    fb.finish_kernel(args_info("divs", &[buffer_arg(), buffer_arg(), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("divs").unwrap();
    let xs = [7i32, i32::MIN, -7, 0, 9, -9];
    let ys = [0i32, -1, 0, 0, 4, 4];
    let mut out = vec![0i32; 6];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, xs.as_ptr());
    args.set_ptr(&k.info, 1, ys.as_ptr());
    args.set_ptr(&k.info, 2, out.as_mut_ptr());
    run_1d(k, &mut args, 6, 6);
    // Defined cases: 9 / 4 and -9 / 4, and INT_MIN / -1 wraps.
    let smod = |x: i32, y: i32| x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 };
    for i in [4usize, 5] {
        let (x, y) = (xs[i], ys[i]);
        let want = (x / y) ^ (x % y) ^ ((x as u32 / y as u32) as i32) ^ smod(x, y);
        assert_eq!(out[i], want, "at {i}");
    }
    let want1 = i32::MIN.wrapping_div(-1) ^ ((i32::MIN as u32) / (-1i32 as u32)) as i32;
    assert_eq!(out[1], want1);
}

/// Struct by value: (int a; float b) -> out[gid] = a * gid + b.
#[test]
fn struct_by_value() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let f32t = m.types.float(32);
    let void = m.types.void();
    let st = m.types.intern(TypeData::Struct { fields: vec![i32t, f32t], packed: false });
    let pst = m.types.pointer(S::Private, st);
    let pf = m.types.pointer(S::Global, f32t);
    let pi = m.types.pointer(S::Private, i32t);
    let ppf = m.types.pointer(S::Private, f32t);
    let (mut fb, p) = Fb::new(&mut m, "sbv", FuncKind::Kernel, &[pst, pf], void);
    let zero = fb.cint(i32t, 0);
    let one = fb.cint(i32t, 1);
    let pa = fb.inst(InstData::AccessChain { base: p[0], element: None, indices: vec![zero], in_bounds: true }, pi);
    let pb = fb.inst(InstData::AccessChain { base: p[0], element: None, indices: vec![one], in_bounds: true }, ppf);
    let a = fb.load(pa);
    let b = fb.load(pb);
    // Write into the struct: must not change the argument block for the next work-item.
    let seven = fb.cint(i32t, 7);
    let a7 = fb.bin(B::IAdd, a, seven);
    fb.store(pa, a7);
    let gid = fb.wi(Q::GlobalId, 0);
    let g32 = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, i32t);
    let prod = fb.bin(B::IMul, a, g32);
    let pf32 = fb.inst(InstData::Convert { op: ConvertOp::SToF, arg: prod, saturate: false, rounding: None }, f32t);
    let r = fb.bin(B::FAdd, pf32, b);
    let po = fb.index(p[1], gid);
    fb.store(po, r);
    fb.ret(None);
    fb.finish_kernel(args_info("sbv", &[value_arg(8, 4), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("sbv").unwrap();
    let mut out = vec![0f32; 10];
    let mut args = ArgBlock::new(&k.info);
    args.set(&k.info, 0, (3i32, 0.25f32));
    args.set_ptr(&k.info, 1, out.as_mut_ptr());
    run_1d(k, &mut args, 10, 5);
    for (i, o) in out.iter().enumerate() {
        assert_eq!(*o, 3.0 * i as f32 + 0.25);
    }
}

/// Math built-ins against Rust's f32 results.
#[test]
fn math_builtins() {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let ops = [Op::sqrt, Op::sin, Op::cos, Op::exp, Op::log, Op::cbrt, Op::tanh, Op::floor, Op::fabs, Op::expm1];
    let (mut fb, p) = Fb::new(&mut m, "math", FuncKind::Kernel, &[pf, pf], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let px = fb.index(p[0], gid);
    let x = fb.load(px);
    let u64t = fb.int(64);
    let n = fb.cint(u64t, ops.len() as u64);
    let base = fb.bin(B::IMul, gid, n);
    for (k, op) in ops.iter().enumerate() {
        let r = fb.ext(*op, vec![x], f32t);
        let kk = fb.cint(u64t, k as u64);
        let at = fb.bin(B::IAdd, base, kk);
        let po = fb.index(p[1], at);
        fb.store(po, r);
    }
    fb.ret(None);
    fb.finish_kernel(args_info("math", &[buffer_arg(), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("math").unwrap();
    let xs = [0.5f32, 1.0, 2.5, 10.0, 0.001, 3.75, 100.0, 7.0];
    let mut out = vec![0f32; xs.len() * ops.len()];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, xs.as_ptr());
    args.set_ptr(&k.info, 1, out.as_mut_ptr());
    run_1d(k, &mut args, xs.len() as u64, 4);
    let refs: [fn(f32) -> f32; 10] =
        [f32::sqrt, f32::sin, f32::cos, f32::exp, f32::ln, f32::cbrt, f32::tanh, f32::floor, f32::abs, f32::exp_m1];
    for (i, x) in xs.iter().enumerate() {
        for (k, f) in refs.iter().enumerate() {
            let got = out[i * ops.len() + k];
            let want = f(*x);
            let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulps <= 2, "{:?}({x}) = {got}, want {want}", ops[k]);
        }
    }
}

/// convert_uchar_sat(float), convert_char_sat(int), convert_uchar_sat(int).
#[test]
fn saturated_conversions() {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let i32t = m.types.int(32);
    let i8t = m.types.int(8);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let pi = m.types.pointer(S::Global, i32t);
    let pb = m.types.pointer(S::Global, i8t);
    let (mut fb, p) = Fb::new(&mut m, "sat", FuncKind::Kernel, &[pf, pi, pb], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let u64t = fb.int(64);
    let three = fb.cint(u64t, 3);
    let base = fb.bin(B::IMul, gid, three);
    let px = fb.index(p[0], gid);
    let x = fb.load(px);
    let py = fb.index(p[1], gid);
    let y = fb.load(py);
    let a = fb.inst(InstData::Convert { op: ConvertOp::FToU, arg: x, saturate: true, rounding: None }, i8t);
    let b = fb.inst(InstData::Convert { op: ConvertOp::SConvert, arg: y, saturate: true, rounding: None }, i8t);
    let c = fb.inst(InstData::Convert { op: ConvertOp::SatSToU, arg: y, saturate: true, rounding: None }, i8t);
    for (k, v) in [a, b, c].into_iter().enumerate() {
        let kk = fb.cint(u64t, k as u64);
        let at = fb.bin(B::IAdd, base, kk);
        let po = fb.index(p[2], at);
        fb.store(po, v);
    }
    fb.ret(None);
    fb.finish_kernel(args_info("sat", &[buffer_arg(), buffer_arg(), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("sat").unwrap();
    let xs = [-5.0f32, 300.0, f32::NAN, 42.7];
    let ys = [-500i32, 500, 100, -100];
    let mut out = vec![0u8; 12];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, xs.as_ptr());
    args.set_ptr(&k.info, 1, ys.as_ptr());
    args.set_ptr(&k.info, 2, out.as_mut_ptr());
    run_1d(k, &mut args, 4, 4);
    let want: [[u8; 3]; 4] = [[0, (-128i8) as u8, 0], [255, 127, 255], [0, 100, 100], [42, (-100i8) as u8, 0]];
    for i in 0..4 {
        assert_eq!(&out[i * 3..i * 3 + 3], &want[i], "item {i}");
    }
}

/// atomic_add / atomic_inc on global memory from every work-item.
#[test]
fn atomics() {
    let mut m = Module::new();
    let u32t = m.types.int(32);
    let void = m.types.void();
    let pu = m.types.pointer(S::Global, u32t);
    let (mut fb, p) = Fb::new(&mut m, "atom", FuncKind::Kernel, &[pu], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let g32 = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, u32t);
    let one = fb.cint(u32t, 1);
    let p1 = fb.index(p[0], one);
    fb.inst(
        InstData::Atomic {
            op: ir::AtomicOp::IAdd,
            ptr: p[0],
            value: Some(g32),
            comparator: None,
            scope: ir::Scope::Device,
            semantics: 0,
        },
        u32t,
    );
    fb.inst(
        InstData::Atomic {
            op: ir::AtomicOp::IIncrement,
            ptr: p1,
            value: None,
            comparator: None,
            scope: ir::Scope::Device,
            semantics: 0,
        },
        u32t,
    );
    let two = fb.cint(u32t, 2);
    let p2 = fb.index(p[0], two);
    fb.inst(
        InstData::Atomic {
            op: ir::AtomicOp::UMax,
            ptr: p2,
            value: Some(g32),
            comparator: None,
            scope: ir::Scope::Device,
            semantics: 0,
        },
        u32t,
    );
    fb.ret(None);
    fb.finish_kernel(args_info("atom", &[buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("atom").unwrap();
    let mut out = vec![0u32; 3];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, out.as_mut_ptr());
    run_1d(k, &mut args, 100, 10);
    assert_eq!(out, vec![4950, 100, 99]);
}

/// An unresolved import is a build error naming the function, not a panic.
#[test]
fn unresolved_import_is_an_error() {
    let mut m = Module::new();
    let void = m.types.void();
    let ext = m.functions.push(ir::Function::new("mystery", FuncKind::Import, vec![], void));
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Kernel, &[], void);
    fb.effect(InstData::Call { func: ext, args: vec![] });
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[]));
    let err = codegen(&m, &target()).expect_err("must fail");
    assert_eq!(err.kind, BuildErrorKind::CompileFailed);
    assert!(err.log.contains("mystery") && err.log.contains("kernel `k`"), "{}", err.log);
}

/// printf without its format operand is reported clearly.
#[test]
fn printf_without_a_format_is_an_error() {
    let mut m = Module::new();
    let void = m.types.void();
    let i32t = m.types.int(32);
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Kernel, &[], void);
    fb.ext(Op::printf, vec![], i32t);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[]));
    let err = codegen(&m, &target()).expect_err("must fail");
    assert!(err.log.contains("printf without a format string"), "{}", err.log);
}

/// 2D ids: out[y * w + x] = x + 1000 * y with a global offset.
#[test]
fn two_dimensional_ids() {
    let mut m = Module::new();
    let u32t = m.types.int(32);
    let u64t = m.types.int(64);
    let void = m.types.void();
    let pu = m.types.pointer(S::Global, u32t);
    let (mut fb, p) = Fb::new(&mut m, "ids", FuncKind::Kernel, &[pu], void);
    let x = fb.wi(Q::GlobalId, 0);
    let y = fb.wi(Q::GlobalId, 1);
    let w = fb.wi(Q::GlobalSize, 0);
    let ox = fb.wi(Q::GlobalOffset, 0);
    let oy = fb.wi(Q::GlobalOffset, 1);
    let xr = fb.bin(B::ISub, x, ox);
    let yr = fb.bin(B::ISub, y, oy);
    let row = fb.bin(B::IMul, yr, w);
    let at = fb.bin(B::IAdd, row, xr);
    let k1000 = fb.cint(u64t, 1000);
    let v = fb.bin(B::IMul, y, k1000);
    let v = fb.bin(B::IAdd, v, x);
    let v32 = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: v, saturate: false, rounding: None }, u32t);
    let po = fb.index(p[0], at);
    fb.store(po, v32);
    fb.ret(None);
    fb.finish_kernel(args_info("ids", &[buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("ids").unwrap();
    let (gw, gh) = (12u64, 10u64);
    let mut out = vec![0u32; (gw * gh) as usize];
    for pattern in [Pattern::Whole, Pattern::Chunks(8)] {
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, out.as_mut_ptr());
        run_ndrange(k, &mut args, 2, [gw, gh, 1], [4, 3, 1], [5, 7, 0], pattern, &[]);
        for yy in 0..gh {
            for xx in 0..gw {
                assert_eq!(out[(yy * gw + xx) as usize], ((xx + 5) + 1000 * (yy + 7)) as u32);
            }
        }
    }
}

#[test]
fn arg_kind_local_pointer() {
    // out[gid] = gid via a __local scratch argument and a barrier.
    let mut m = Module::new();
    let u32t = m.types.int(32);
    let void = m.types.void();
    let pu = m.types.pointer(S::Global, u32t);
    let pl = m.types.pointer(S::Local, u32t);
    let (mut fb, p) = Fb::new(&mut m, "lp", FuncKind::Kernel, &[pu, pl], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let lid = fb.wi(Q::LocalId, 0);
    let ls = fb.wi(Q::LocalSize, 0);
    let g32 = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, u32t);
    let pl0 = fb.index(p[1], lid);
    fb.store(pl0, g32);
    fb.barrier();
    // read the neighbour's slot: (lid + 1) % ls
    let u64t = fb.int(64);
    let one = fb.cint(u64t, 1);
    let nb = fb.bin(B::IAdd, lid, one);
    let nb = fb.bin(B::URem, nb, ls);
    let pn = fb.index(p[1], nb);
    let v = fb.load(pn);
    let po = fb.index(p[0], gid);
    fb.store(po, v);
    fb.ret(None);
    fb.finish_kernel(args_info("lp", &[buffer_arg(), (ArgKind::Local, 8, 8)]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("lp").unwrap();
    let mut out = vec![0u32; 32];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, out.as_mut_ptr());
    run_ndrange(k, &mut args, 1, [32, 1, 1], [8, 1, 1], [0; 3], Pattern::Chunks(3), &[(1, 64)]);
    for g in 0..32u32 {
        let base = g / 8 * 8;
        assert_eq!(out[g as usize], base + (g % 8 + 1) % 8);
    }
}

/// One terminator reaching the same block twice with different arguments (phi edges), a
/// switch with shared targets, vector select and a shuffle of vectors of different lengths.
#[test]
fn shared_targets_select_shuffle() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let v2 = m.types.vector(i32t, 2);
    let v4 = m.types.vector(i32t, 4);
    let pi = m.types.pointer(S::Global, i32t);
    let pv4 = m.types.pointer(S::Global, v4);
    let (mut fb, p) = Fb::new(&mut m, "edges", FuncKind::Kernel, &[pi, pv4], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let g = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, i32t);
    let one = fb.cint(i32t, 1);
    let odd = fb.bin(B::And, g, one);
    let zero = fb.cint(i32t, 0);
    let is_odd = fb.cmp(CmpOp::INe, odd, zero);
    let (join, jp) = fb.block(&[i32t]);
    let c10 = fb.cint(i32t, 10);
    let c20 = fb.cint(i32t, 20);
    fb.branch(is_odd, join, vec![c10], join, vec![c20]);
    fb.switch_to(join);
    let x = jp[0];
    let (sw_end, sp) = fb.block(&[i32t]);
    let three = fb.cint(i32t, 3);
    let sel = fb.bin(B::And, g, three);
    let c1 = fb.cint(i32t, 100);
    let c2 = fb.cint(i32t, 200);
    let c3 = fb.cint(i32t, 300);
    fb.effect(InstData::Switch {
        selector: sel,
        default: ir::BlockCall { block: sw_end, args: vec![c1] },
        cases: vec![
            (1, ir::BlockCall { block: sw_end, args: vec![c2] }),
            (2, ir::BlockCall { block: sw_end, args: vec![c3] }),
        ],
    });
    fb.switch_to(sw_end);
    let y = sp[0];
    let s = fb.bin(B::IAdd, x, y);
    let po = fb.index(p[0], gid);
    fb.store(po, s);
    // Vector select and shuffle: (g, g+1) shuffled with (x, y, s, 7) -> 4 lanes.
    let g1 = fb.bin(B::IAdd, g, one);
    let a = fb.inst(InstData::Construct { parts: vec![g, g1] }, v2);
    let seven = fb.cint(i32t, 7);
    let b = fb.inst(InstData::Construct { parts: vec![x, y, s, seven] }, v4);
    let sh = fb.inst(InstData::Shuffle { a, b, mask: vec![Some(1), Some(5), Some(0), Some(2)] }, v4);
    let lanes_cmp = fb.cmp(CmpOp::SGt, sh, b);
    let chosen = fb.inst(InstData::Select { cond: lanes_cmp, if_true: sh, if_false: b }, v4);
    let pv = fb.index(p[1], gid);
    fb.store(pv, chosen);
    fb.ret(None);
    fb.finish_kernel(args_info("edges", &[buffer_arg(), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("edges").unwrap();
    let mut out = vec![0i32; 8];
    let mut out4 = vec![[0i32; 4]; 8];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, out.as_mut_ptr());
    args.set_ptr(&k.info, 1, out4.as_mut_ptr());
    run_1d(k, &mut args, 8, 8);
    for g in 0..8i32 {
        let x = if g & 1 == 1 { 10 } else { 20 };
        let y = match g & 3 {
            1 => 200,
            2 => 300,
            _ => 100,
        };
        assert_eq!(out[g as usize], x + y, "{g}");
        let b = [x, y, x + y, 7];
        let sh = [g + 1, 7, g, x];
        let want: Vec<i32> = (0..4).map(|c| if sh[c] > b[c] { sh[c] } else { b[c] }).collect();
        assert_eq!(out4[g as usize].to_vec(), want, "{g}");
    }
}

/// Float atomics (fadd, exchange) and compare-exchange.
#[test]
fn float_atomics_and_cmpxchg() {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let u32t = m.types.int(32);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let pu = m.types.pointer(S::Global, u32t);
    let (mut fb, p) = Fb::new(&mut m, "fat", FuncKind::Kernel, &[pf, pu], void);
    let half = fb.cf32(0.5);
    let atom = |fb: &mut Fb, op, ptr, value, comparator, ty| {
        fb.inst(InstData::Atomic { op, ptr, value, comparator, scope: ir::Scope::Device, semantics: 0 }, ty)
    };
    atom(&mut fb, ir::AtomicOp::FAdd, p[0], Some(half), None, f32t);
    let u64t = fb.int(64);
    let one = fb.cint(u64t, 1);
    let p1 = fb.index(p[0], one);
    let two = fb.cf32(2.0);
    atom(&mut fb, ir::AtomicOp::Exchange, p1, Some(two), None, f32t);
    // Each work-item tries cmpxchg(0 -> gid+1): exactly one succeeds.
    let gid = fb.wi(Q::GlobalId, 0);
    let g = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, u32t);
    let one32 = fb.cint(u32t, 1);
    let g1 = fb.bin(B::IAdd, g, one32);
    let zero = fb.cint(u32t, 0);
    let old = atom(&mut fb, ir::AtomicOp::CompareExchange, p[1], Some(g1), Some(zero), u32t);
    let won = fb.cmp(CmpOp::IEq, old, zero);
    let c1 = fb.cint(u32t, 1);
    let inc = fb.inst(InstData::Select { cond: won, if_true: c1, if_false: zero }, u32t);
    let pw = fb.index(p[1], one);
    atom(&mut fb, ir::AtomicOp::IAdd, pw, Some(inc), None, u32t);
    fb.ret(None);
    fb.finish_kernel(args_info("fat", &[buffer_arg(), buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("fat").unwrap();
    let mut f = vec![1.0f32, 0.0];
    let mut u = vec![0u32; 2];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, f.as_mut_ptr());
    args.set_ptr(&k.info, 1, u.as_mut_ptr());
    run_1d(k, &mut args, 64, 16);
    assert_eq!(f, vec![1.0 + 32.0, 2.0]);
    assert_eq!(u[1], 1, "exactly one compare-exchange wins");
    assert!(u[0] >= 1 && u[0] <= 64);
}

/// A cycle of calls through a function with a barrier is an error, not a hang.
#[test]
fn recursion_through_barrier_is_an_error() {
    let mut m = Module::new();
    let void = m.types.void();
    // f calls itself (the callee id is the function's own, known in advance).
    let self_id = ir::Func(m.functions.len() as u32);
    let (mut fb, _) = Fb::new(&mut m, "rec", FuncKind::Function, &[], void);
    fb.barrier();
    fb.effect(InstData::Call { func: self_id, args: vec![] });
    fb.ret(None);
    let f = fb.finish();
    assert_eq!(f, self_id);
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Kernel, &[], void);
    fb.effect(InstData::Call { func: f, args: vec![] });
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[]));
    let err = codegen(&m, &target()).expect_err("must fail");
    assert!(err.log.contains("recursi"), "{}", err.log);
}

/// A pointer into a private array is itself live across a barrier (so the array lives in
/// the work-item state and the state may not be `noalias`); a 3-vector is bit-cast; a
/// struct is built, updated and read back.
#[test]
fn pointer_into_private_array_across_barrier() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let f32t = m.types.float(32);
    let u64t = m.types.int(64);
    let void = m.types.void();
    let arr = m.types.intern(TypeData::Array { elem: i32t, len: 4 });
    let parr = m.types.pointer(S::Private, arr);
    let pi = m.types.pointer(S::Global, i32t);
    let f3 = m.types.vector(f32t, 3);
    let i3 = m.types.vector(i32t, 3);
    let st = m.types.intern(TypeData::Struct { fields: vec![i32t, f3], packed: false });
    let (mut fb, p) = Fb::new(&mut m, "pp", FuncKind::Kernel, &[pi], void);
    let var = fb.inst(InstData::Variable { ty: arr, init: None, align: 0 }, parr);
    let gid = fb.wi(Q::GlobalId, 0);
    let g = fb.inst(InstData::Convert { op: ConvertOp::UConvert, arg: gid, saturate: false, rounding: None }, i32t);
    let three = fb.cint(u64t, 3);
    let slot = fb.bin(B::And, gid, three);
    let pslot = fb.elem(var, slot); // live across the barrier
    fb.store(pslot, g);
    fb.barrier();
    let v = fb.load(pslot);
    let one = fb.cf32(1.0);
    let vf = fb.inst(InstData::Convert { op: ConvertOp::SToF, arg: v, saturate: false, rounding: None }, f32t);
    let f3v = fb.inst(InstData::Construct { parts: vec![vf, one, vf] }, f3);
    let bits = fb.inst(InstData::Convert { op: ConvertOp::Bitcast, arg: f3v, saturate: false, rounding: None }, i3);
    let x = fb.inst(InstData::ExtractValue { aggregate: bits, indices: vec![1] }, i32t);
    let undef_c = fb.m.add_const(ir::ConstData::Undef { ty: st });
    let su = fb.f.const_value(undef_c, st);
    let s1 = fb.inst(InstData::InsertValue { aggregate: su, value: x, indices: vec![0] }, st);
    let s2 = fb.inst(InstData::InsertValue { aggregate: s1, value: f3v, indices: vec![1] }, st);
    let a = fb.inst(InstData::ExtractValue { aggregate: s2, indices: vec![0] }, i32t);
    let z = fb.inst(InstData::ExtractValue { aggregate: s2, indices: vec![1, 2] }, f32t);
    let zi = fb.inst(InstData::Convert { op: ConvertOp::FToS, arg: z, saturate: false, rounding: None }, i32t);
    let r = fb.bin(B::IAdd, a, zi);
    let po = fb.index(p[0], gid);
    fb.store(po, r);
    fb.ret(None);
    fb.finish_kernel(args_info("pp", &[buffer_arg()]));
    let prog = codegen(&m, &target()).expect("codegen");
    let k = prog.kernel("pp").unwrap();
    assert!(k.info.work_item_state_size >= 16 + 8);
    for pattern in [Pattern::Whole, Pattern::Chunks(8)] {
        let mut out = vec![0i32; 32];
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, out.as_mut_ptr());
        run_ndrange(k, &mut args, 1, [32, 1, 1], [16, 1, 1], [0; 3], pattern, &[]);
        for g in 0..32 {
            assert_eq!(out[g as usize], 1.0f32.to_bits() as i32 + g, "{g}");
        }
    }
}

/// Target::cpu / features override the host's (a generic x86-64 here).
#[test]
fn explicit_generic_target() {
    let m = vadd_module();
    let t = Target { cpu: Some("x86-64".into()), features: Some(String::new()), ..Target::default() };
    let prog = codegen(&m, &t).expect("codegen");
    let k = prog.kernel("vadd").unwrap();
    let a: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let mut c = vec![0f32; 100];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, a.as_ptr());
    args.set_ptr(&k.info, 1, a.as_ptr());
    args.set_ptr(&k.info, 2, c.as_mut_ptr());
    run_1d(k, &mut args, 100, 10);
    assert!(c.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
}
