//! `passes::barriers`: a kernel split into barrier regions (`barrier_resume id, dest`), the
//! values live across a barrier kept in work-item state variables, and the validator's rules
//! for them (`ir::regions`).

mod common;

use common::*;
use softcl_compiler::ir::{self, BinaryOp as B, BlockCall, CmpOp, FuncKind, InstData, Module, WorkItemQuery as Q};
use softcl_compiler::passes::barriers;
use softcl_compiler::AddressSpace as S;

/// `p[gid] = x` after a loop of four barriers, `x = p[gid]` read before: `x`, `gid` and the
/// loop counter (a block parameter) live across the barrier.
fn loop_kernel() -> Module {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let u64t = m.types.int(64);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pf], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let at = fb.index(p[0], gid);
    let x = fb.load(at);
    let (header, hp) = fb.block(&[u64t]);
    let (body, _) = fb.block(&[]);
    let (exit, _) = fb.block(&[]);
    let zero = fb.cint(u64t, 0);
    fb.jump(header, vec![zero]);
    fb.switch_to(header);
    let four = fb.cint(u64t, 4);
    let c = fb.cmp(CmpOp::ULt, hp[0], four);
    fb.branch(c, body, vec![], exit, vec![]);
    fb.switch_to(body);
    fb.barrier();
    let one = fb.cint(u64t, 1);
    let next = fb.bin(B::IAdd, hp[0], one);
    fb.jump(header, vec![next]);
    fb.switch_to(exit);
    let two = fb.cf32(2.0);
    let y = fb.bin(B::FMul, x, two);
    let at2 = fb.index(p[0], gid);
    fb.store(at2, y);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[buffer_arg()]));
    m
}

fn kernel_text(m: &Module) -> String {
    m.display_function(m.kernels[0].func).to_string()
}

fn problems(m: &Module) -> Vec<String> {
    match ir::validate::validate(m) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
    }
}

/// The loop counter (a block parameter), `x` and `gid` are stored after their definitions;
/// uses in the region of the definition keep the value, the others (after the resume point,
/// and the exit, which the loop reaches from it) load it.
#[test]
fn barriers_end_their_blocks_and_live_values_go_to_state() {
    let mut m = loop_kernel();
    barriers::run_module(&mut m).expect("the pass runs");
    assert_eq!(problems(&m), Vec::<String>::new());
    let text = kernel_text(&m);
    let want = "\
kernel @k(ptr<global> f32) -> void {
    v6: i64 = const c0 (i64 0)
    v7: i64 = const c1 (i64 4)
    v9: i64 = const c2 (i64 1)
    v11: f32 = const c3 (f32 2.0)
block0(v0: ptr<global> f32):
    v14: ptr<private> i64 = state_variable i64
    v16: ptr<private> f32 = state_variable f32
    v18: ptr<private> i64 = state_variable i64
    v1: <3 x i64> = work_item.GlobalId
    v2: i64 = extract_value v1, [0]
    store v2, v14, align 8
    v3: ptr<global> f32 = access_chain.inbounds v0 [v2]
    v4: f32 = load v3, align 4
    store v4, v16, align 4
    jump block1(v6)
block1(v5: i64):
    store v5, v18, align 8
    v8: bool = cmp.ult v5, v7
    brif v8, block2, block3
block2:
    barrier WorkGroup, WorkGroup, 0x110
    barrier_resume 1, block4
block4:
    v19: i64 = load v18, align 8
    v10: i64 = iadd v19, v9
    jump block1(v10)
block3:
    v17: f32 = load v16, align 4
    v12: f32 = fmul v17, v11
    v15: i64 = load v14, align 8
    v13: ptr<global> f32 = access_chain.inbounds v0 [v15]
    store v12, v13, align 4
    return
}
";
    assert_eq!(text, want, "got:\n{text}");
}

/// The validator rejects a value used in another barrier region than its definition's: the
/// pass's demotion is what makes a split kernel valid.
#[test]
fn a_value_live_across_a_barrier_must_be_in_state() {
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pf], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let at = fb.index(p[0], gid);
    let x = fb.load(at);
    fb.barrier();
    let (rest, _) = fb.block(&[]);
    fb.effect(InstData::BarrierResume { id: 1, dest: BlockCall { block: rest, args: vec![] } });
    fb.switch_to(rest);
    fb.store(at, x);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[buffer_arg()]));
    let found = problems(&m);
    assert!(found.iter().any(|p| p.contains("is live across a barrier")), "{found:?}");

    // The same kernel before splitting: the pass keeps `x` in state and computes the
    // address again after the barrier (an access chain of a parameter and a work-item id).
    let mut m = Module::new();
    let f32t = m.types.float(32);
    let void = m.types.void();
    let pf = m.types.pointer(S::Global, f32t);
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pf], void);
    let gid = fb.wi(Q::GlobalId, 0);
    let at = fb.index(p[0], gid);
    let x = fb.load(at);
    fb.barrier();
    fb.store(at, x);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[buffer_arg()]));
    barriers::run_module(&mut m).expect("the pass runs");
    assert_eq!(problems(&m), Vec::<String>::new());
    let f = &m.functions[m.kernels[0].func];
    let states = f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter()).filter(|&&i| f.is_state_var(i)).count();
    assert_eq!(states, 1, "x alone:\n{}", kernel_text(&m));
}

/// Misplaced resume points: outside a kernel, not after a barrier, with arguments, ids not
/// unique; a barrier of a split kernel without one.
#[test]
fn resume_points_are_checked() {
    let mut m = Module::new();
    let void = m.types.void();
    let u32t = m.types.int(32);
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Kernel, &[], void);
    let (a, _) = fb.block(&[]);
    let (b, bp) = fb.block(&[u32t]);
    let (c, _) = fb.block(&[]);
    let one = fb.cint(u32t, 1);
    fb.effect(InstData::BarrierResume { id: 1, dest: BlockCall { block: a, args: vec![] } });
    fb.switch_to(a);
    fb.barrier();
    fb.effect(InstData::BarrierResume { id: 1, dest: BlockCall { block: b, args: vec![one] } });
    fb.switch_to(b);
    let _ = bp;
    fb.barrier();
    fb.jump(c, vec![]);
    fb.switch_to(c);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[]));
    let found = problems(&m).join("\n");
    for want in [
        "barrier_resume does not follow a work-group barrier",
        "resume id 1 is 0 or not unique",
        "takes arguments",
        "a work-group barrier that does not end its region",
    ] {
        assert!(found.contains(want), "missing `{want}` in:\n{found}");
    }

    let mut m = Module::new();
    let void = m.types.void();
    let (mut fb, _) = Fb::new(&mut m, "f", FuncKind::Function, &[], void);
    let (a, _) = fb.block(&[]);
    fb.barrier();
    fb.effect(InstData::BarrierResume { id: 1, dest: BlockCall { block: a, args: vec![] } });
    fb.switch_to(a);
    fb.ret(None);
    fb.finish();
    let found = problems(&m).join("\n");
    assert!(found.contains("barrier_resume outside a kernel"), "{found}");
}

/// A private variable whose address is used after a barrier lives in the state; one used
/// only between two barriers stays an ordinary variable (an alloca LLVM keeps in registers).
#[test]
fn only_variables_whose_address_crosses_a_barrier_are_state() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let pi = m.types.pointer(S::Global, i32t);
    let pv = m.types.pointer(S::Private, i32t);
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Kernel, &[pi], void);
    let kept = fb.inst(InstData::Variable { ty: i32t, init: None, align: 0 }, pv);
    let local = fb.inst(InstData::Variable { ty: i32t, init: None, align: 0 }, pv);
    let seven = fb.cint(i32t, 7);
    fb.store(kept, seven);
    fb.store(local, seven);
    let l = fb.load(local);
    fb.store(p[0], l);
    fb.barrier();
    let k = fb.load(kept);
    fb.store(p[0], k);
    fb.ret(None);
    fb.finish_kernel(args_info("k", &[buffer_arg()]));
    barriers::run_module(&mut m).expect("the pass runs");
    assert_eq!(problems(&m), Vec::<String>::new());
    let f = &m.functions[m.kernels[0].func];
    let def = |v: ir::Value| match f.values[v].def {
        ir::ValueDef::Result(i) => i,
        _ => panic!("not an instruction"),
    };
    assert!(f.is_state_var(def(kept)), "{}", kernel_text(&m));
    assert!(!f.is_state_var(def(local)), "{}", kernel_text(&m));
}

/// The heuristic width does not count the state's loads and stores as data: a reduction
/// whose 64-bit ids and counter live across its barriers keeps the width of its 32-bit data.
#[test]
fn state_accesses_do_not_narrow_the_heuristic_width() {
    let src = "__kernel void r(__global const float *in, __global float *out, __local float *s) {
        size_t lid = get_local_id(0), ls = get_local_size(0);
        s[lid] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t stride = ls / 2; stride > 0; stride >>= 1) {
            if (lid < stride) s[lid] += s[lid + stride];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) out[get_group_id(0)] = s[0];
    }";
    let t = softcl_compiler::Target::default();
    let mut prog = softcl_compiler::compile_source(src, "", &t).expect("builds");
    let m = &mut prog.module;
    softcl_compiler::passes::inline::inline_barrier_calls(m).expect("inlines");
    barriers::run_module(m).expect("the pass runs");
    let k = m.kernels[0].clone();
    let f = &m.functions[k.func];
    assert!(f.layout.blocks.iter().any(|&b| f.layout.insts[b].iter().any(|&i| f.is_state_var(i))), "no state");
    let auto = softcl_compiler::Vectorizer::Auto { register_bytes: 64 };
    let w = softcl_compiler::vectorize::width::choose(m, f, &k.info, &auto).expect("a width");
    assert_eq!(w.lanes, 16, "{}", w.why);
}

/// A tiled product as clang leaves it: the inner loop unrolled and the tile addresses
/// (`&ta[ly][k]`, `&tb[k][lx]`, one per step) hoisted above the loop of barriers. Each is an
/// access chain of a `__local` array and work-item ids, computed again after the barriers:
/// kept in state they took 32 pointers per work-item (a vector of W of them in vector
/// code), a store and a load per region, and hid their strides from the vectorizer.
#[test]
fn tile_addresses_are_computed_again_after_a_barrier() {
    let src = r#"
        #define TS 16
        __kernel void mm(int n, __global const float *a, __global const float *b, __global float *c) {
            __local float ta[TS][TS];
            __local float tb[TS][TS];
            int lx = get_local_id(0), ly = get_local_id(1);
            int col = get_global_id(0), row = get_global_id(1);
            float acc = 0.0f;
            for (int t = 0; t < n; t += TS) {
                ta[ly][lx] = a[row * n + t + lx];
                tb[ly][lx] = b[(t + ly) * n + col];
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int k = 0; k < TS; ++k)
                    acc += ta[ly][k] * tb[k][lx];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            c[row * n + col] = acc;
        }"#;
    let t = softcl_compiler::Target::default();
    let prog = softcl_compiler::compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    let k = p.kernel("mm").expect("kernel mm");
    // acc, t and the loop's condition or counter: a few words, not 32 pointers.
    assert!(k.info.work_item_state_size <= 64, "work-item state of {} bytes", k.info.work_item_state_size);
}
