//! The IR validator and printer on hand-built IR: a correct function prints exactly as
//! expected, and each broken invariant is reported (with the function's name), never a panic.

use softcl_compiler::ir::validate::validate;
use softcl_compiler::ir::{
    BinaryOp, Block, BlockCall, CmpOp, ConstData, FuncKind, Function, InstData, Kernel, Module, Type, TypeData, Value,
};
use softcl_compiler::kernel_info::{AddressSpace, KernelInfo};

struct Fixture {
    module: Module,
    i32t: Type,
    i64t: Type,
    f32t: Type,
    boolt: Type,
}

fn fixture() -> Fixture {
    let mut module = Module::new();
    let i32t = module.types.int(32);
    let i64t = module.types.int(64);
    let f32t = module.types.float(32);
    let boolt = module.types.bool();
    Fixture { module, i32t, i64t, f32t, boolt }
}

fn jump(block: Block, args: Vec<Value>) -> InstData {
    InstData::Jump { dest: BlockCall { block, args } }
}

fn iadd(lhs: Value, rhs: Value) -> InstData {
    InstData::Binary { op: BinaryOp::IAdd, lhs, rhs }
}

/// `add(x: i32) -> i32 { return x + 5 }` through a second block.
fn valid_add(fx: &mut Fixture) -> Function {
    let mut f = Function::new("add", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let b1 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    let five = fx.module.add_const(ConstData::Int { ty: fx.i32t, bits: 5 });
    let c = f.const_value(five, fx.i32t);
    let (_, sum) = f.append_inst(b0, iadd(x, c), Some(fx.i32t));
    let p = f.append_block_param(b1, fx.i32t);
    f.append_inst(b0, jump(b1, vec![sum.unwrap()]), None);
    f.append_inst(b1, InstData::Return { value: Some(p) }, None);
    f
}

fn errors_of(module: &Module) -> Vec<String> {
    match validate(module) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
    }
}

fn assert_error(module: &Module, expected: &str) {
    let errors = errors_of(module);
    assert!(errors.iter().any(|e| e.contains(expected)), "expected an error containing {expected:?}, got {errors:#?}");
}

#[test]
fn valid_function_validates_and_prints() {
    let mut fx = fixture();
    let f = valid_add(&mut fx);
    let func = fx.module.functions.push(f);
    assert_eq!(errors_of(&fx.module), Vec::<String>::new());
    let text = fx.module.display_function(func).to_string();
    assert_eq!(
        text,
        "function @add(i32) -> i32 {\n    v1: i32 = const c0 (i32 5)\nblock0(v0: i32):\n    v2: i32 = iadd v0, v1\n    jump block1(v2)\nblock1(v3: i32):\n    return v3\n}\n"
    );
    // Alone, a function prints its types by reference.
    let plain = fx.module.functions[func].to_string();
    assert!(plain.starts_with("function @add(t0) -> t0 {"), "{plain}");
}

#[test]
fn block_without_terminator_and_terminator_in_the_middle() {
    let mut fx = fixture();
    let mut f = Function::new("noterm", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    f.append_inst(b0, iadd(x, x), Some(fx.i32t));
    fx.module.functions.push(f);
    assert_error(&fx.module, "block0 does not end with a terminator");
    let errors = validate(&fx.module).unwrap_err();
    assert!(errors.iter().all(|e| e.function == "noterm"));

    let mut fx = fixture();
    let mut f = Function::new("early", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    f.append_inst(b0, InstData::Return { value: Some(x) }, None);
    f.append_inst(b0, InstData::Return { value: Some(x) }, None);
    fx.module.functions.push(f);
    assert_error(&fx.module, "is not the last instruction of block0");
}

#[test]
fn branch_arguments_must_match_parameters() {
    let mut fx = fixture();
    let mut f = valid_add(&mut fx);
    let last = f.layout.insts[Block(0)][1];
    f.insts[last] = jump(Block(1), vec![]);
    fx.module.functions.push(f);
    assert_error(&fx.module, "passes 0 arguments to block1, which takes 1");

    let mut fx = fixture();
    let mut f = valid_add(&mut fx);
    let wide = fx.module.add_const(ConstData::Int { ty: fx.i64t, bits: 1 });
    let w = f.const_value(wide, fx.i64t);
    let last = f.layout.insts[Block(0)][1];
    f.insts[last] = jump(Block(1), vec![w]);
    fx.module.functions.push(f);
    assert_error(&fx.module, "argument 0 to block1 has type");
}

#[test]
fn definitions_must_dominate_uses() {
    // block0: brif c, block1, block2; block1: v = x + x; jump block3; block2: jump block3;
    // block3: return v   (block1 does not dominate block3)
    let mut fx = fixture();
    let mut f = Function::new("diamond", FuncKind::Function, vec![fx.i32t, fx.boolt], fx.i32t);
    let blocks: Vec<Block> = (0..4).map(|_| f.create_block()).collect();
    let x = f.append_block_param(blocks[0], fx.i32t);
    let c = f.append_block_param(blocks[0], fx.boolt);
    f.append_inst(
        blocks[0],
        InstData::Branch {
            cond: c,
            then_dest: BlockCall { block: blocks[1], args: vec![] },
            else_dest: BlockCall { block: blocks[2], args: vec![] },
        },
        None,
    );
    let (_, v) = f.append_inst(blocks[1], iadd(x, x), Some(fx.i32t));
    f.append_inst(blocks[1], jump(blocks[3], vec![]), None);
    f.append_inst(blocks[2], jump(blocks[3], vec![]), None);
    f.append_inst(blocks[3], InstData::Return { value: v }, None);
    fx.module.functions.push(f);
    assert_error(&fx.module, "does not dominate its use");

    // Use before the definition in the same block.
    let mut fx = fixture();
    let mut f = Function::new("order", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    let later = Value(f.values.len() as u32 + 1);
    let (_, first) = f.append_inst(b0, iadd(x, later), Some(fx.i32t));
    let (_, second) = f.append_inst(b0, iadd(x, x), Some(fx.i32t));
    assert_eq!(second, Some(later));
    f.append_inst(b0, InstData::Return { value: first }, None);
    fx.module.functions.push(f);
    assert_error(&fx.module, "does not dominate its use");
}

#[test]
fn operation_types_are_checked() {
    let mut fx = fixture();
    let ptr = fx.module.types.pointer(AddressSpace::Private, fx.i32t);
    let mut f = Function::new("types", FuncKind::Function, vec![fx.i32t, fx.i64t, ptr], fx.i32t);
    let b0 = f.create_block();
    let a = f.append_block_param(b0, fx.i32t);
    let w = f.append_block_param(b0, fx.i64t);
    let p = f.append_block_param(b0, ptr);
    f.append_inst(b0, iadd(a, w), Some(fx.i32t));
    f.append_inst(b0, InstData::Compare { op: CmpOp::IEq, lhs: a, rhs: a }, Some(fx.i32t));
    f.append_inst(b0, InstData::Load { ptr: p, align: 4, volatile: false, block: None }, Some(fx.f32t));
    f.append_inst(b0, InstData::Binary { op: BinaryOp::FAdd, lhs: a, rhs: a }, Some(fx.i32t));
    f.append_inst(b0, iadd(a, a), None);
    f.append_inst(b0, InstData::Store { ptr: p, value: a, align: 4, volatile: false, block: None }, Some(fx.i32t));
    f.append_inst(b0, InstData::Return { value: Some(w) }, None);
    let func = fx.module.functions.push(f);

    // A caller passing the wrong argument types.
    let mut caller = Function::new("caller", FuncKind::Function, vec![fx.i64t], fx.i32t);
    let c0 = caller.create_block();
    let x = caller.append_block_param(c0, fx.i64t);
    let (_, r) = caller.append_inst(c0, InstData::Call { func, args: vec![x] }, Some(fx.i32t));
    caller.append_inst(c0, InstData::Return { value: r }, None);
    fx.module.functions.push(caller);

    for expected in [
        "binary operands have different types",
        "compare result must be bool",
        "load result type differs from the pointee",
        "binary operand types do not suit the operation",
        "produces a value but has no result",
        "produces no value but has result",
        "returned value type differs from the return type",
        "call arguments do not match the callee's parameters",
    ] {
        assert_error(&fx.module, expected);
    }
}

#[test]
fn broken_references_are_reported_without_panicking() {
    let mut fx = fixture();
    let mut f = Function::new("dangling", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let x = f.append_block_param(b0, fx.i32t);
    f.append_inst(b0, iadd(x, Value(999)), Some(fx.i32t));
    f.append_inst(b0, jump(Block(77), vec![]), None);
    fx.module.functions.push(f);
    assert_error(&fx.module, "uses v999, which does not exist");
    assert_error(&fx.module, "not in the layout");

    // Entry block parameters that are not the function's.
    let mut fx = fixture();
    let mut f = Function::new("params", FuncKind::Function, vec![fx.i32t], fx.i32t);
    let b0 = f.create_block();
    let zero = fx.module.add_const(ConstData::Int { ty: fx.i32t, bits: 0 });
    let z = f.const_value(zero, fx.i32t);
    f.append_inst(b0, InstData::Return { value: Some(z) }, None);
    fx.module.functions.push(f);
    assert_error(&fx.module, "entry block's parameters do not match");

    // A type referring to a type that does not exist.
    let mut fx = fixture();
    fx.module.types.intern(TypeData::Vector { elem: Type(500), len: 4 });
    assert_error(&fx.module, "which is not defined before it");
}

#[test]
fn struct_members_need_constant_indices_and_kernels_need_kernel_functions() {
    let mut fx = fixture();
    let st = fx.module.types.intern(TypeData::Struct { fields: vec![fx.i32t, fx.f32t], packed: false });
    let pst = fx.module.types.pointer(AddressSpace::Global, st);
    let pf = fx.module.types.pointer(AddressSpace::Global, fx.f32t);
    let mut f = Function::new("member", FuncKind::Function, vec![pst, fx.i32t], fx.module.types.void());
    let b0 = f.create_block();
    let base = f.append_block_param(b0, pst);
    let index = f.append_block_param(b0, fx.i32t);
    f.append_inst(b0, InstData::AccessChain { base, element: None, indices: vec![index], in_bounds: true }, Some(pf));
    f.append_inst(b0, InstData::Return { value: None }, None);
    let func = fx.module.functions.push(f);
    fx.module.kernels.push(Kernel { func, info: KernelInfo { name: "member".into(), ..KernelInfo::default() } });
    assert_error(&fx.module, "struct members need constant indices");
    assert_error(&fx.module, "kernel member refers to member, which is not a kernel function");

    // With a constant member index the same chain is fine.
    let mut fx2 = fixture();
    let st = fx2.module.types.intern(TypeData::Struct { fields: vec![fx2.i32t, fx2.f32t], packed: false });
    let pst = fx2.module.types.pointer(AddressSpace::Global, st);
    let pf = fx2.module.types.pointer(AddressSpace::Global, fx2.f32t);
    let void = fx2.module.types.void();
    let mut f = Function::new("member", FuncKind::Kernel, vec![pst], void);
    let b0 = f.create_block();
    let base = f.append_block_param(b0, pst);
    let one = fx2.module.add_const(ConstData::Int { ty: fx2.i32t, bits: 1 });
    let one = f.const_value(one, fx2.i32t);
    f.append_inst(b0, InstData::AccessChain { base, element: None, indices: vec![one], in_bounds: true }, Some(pf));
    f.append_inst(b0, InstData::Return { value: None }, None);
    let func = fx2.module.functions.push(f);
    fx2.module.kernels.push(Kernel { func, info: KernelInfo { name: "member".into(), ..KernelInfo::default() } });
    assert_eq!(errors_of(&fx2.module), Vec::<String>::new());
}

/// A module with one function `img(image2d_t, sampler_t, int2, float2, float4)` whose body
/// `insts` makes from its parameters ([image, sampler, int2, float2, float4]) and the types
/// [float4, int2, float].
fn image_module(insts: impl Fn(&mut Function, [Value; 5], Block, [Type; 3])) -> Module {
    let mut fx = fixture();
    let t = &mut fx.module.types;
    let img = t.intern(TypeData::Opaque { name: "image2d_t".into() });
    let smp = t.intern(TypeData::Opaque { name: "sampler_t".into() });
    let v4f = t.vector(fx.f32t, 4);
    let v2i = t.vector(fx.i32t, 2);
    let v2f = t.vector(fx.f32t, 2);
    let void = t.void();
    let mut f = Function::new("img", FuncKind::Function, vec![img, smp, v2i, v2f, v4f], void);
    let b0 = f.create_block();
    let ps = [img, smp, v2i, v2f, v4f].map(|t| f.append_block_param(b0, t));
    insts(&mut f, ps, b0, [v4f, v2i, fx.f32t]);
    f.append_inst(b0, InstData::Return { value: None }, None);
    fx.module.functions.push(f);
    fx.module
}

#[test]
fn image_instructions_are_checked() {
    use softcl_compiler::ir::ImageOp;
    let image = |op, image, sampler, coord, texel| InstData::Image { op, image, sampler, coord, texel };
    // Valid: a sample with float coordinates, a sampler-less read, a write, a size query.
    let m = image_module(|f, [i, s, ci, cf, t], b, [v4f, v2i, _]| {
        f.append_inst(b, image(ImageOp::Sample, i, Some(s), Some(cf), None), Some(v4f));
        f.append_inst(b, image(ImageOp::Read, i, None, Some(ci), None), Some(v4f));
        f.append_inst(b, image(ImageOp::Write, i, None, Some(ci), Some(t)), None);
        f.append_inst(b, image(ImageOp::QuerySize, i, None, None, None), Some(v2i));
    });
    assert!(validate(&m).is_ok(), "{:?}", errors_of(&m));
    // Float coordinates without a sampler.
    let m = image_module(|f, [i, _, _, cf, _], b, [v4f, _, _]| {
        f.append_inst(b, image(ImageOp::Read, i, None, Some(cf), None), Some(v4f));
    });
    assert_error(&m, "image coordinate is not a 32-bit integer");
    // A sampler where the image goes.
    let m = image_module(|f, [_, s, ci, _, _], b, [v4f, _, _]| {
        f.append_inst(b, image(ImageOp::Read, s, None, Some(ci), None), Some(v4f));
    });
    assert_error(&m, "image operand is not an image");
    // A depth image's read returns one f32; a 2-vector result is wrong; a write without its
    // texel; a sample without its sampler.
    let m = image_module(|f, [i, _, ci, _, _], b, [_, _, f32t]| {
        f.append_inst(b, image(ImageOp::Read, i, None, Some(ci), None), Some(f32t));
    });
    assert!(validate(&m).is_ok(), "{:?}", errors_of(&m));
    let m = image_module(|f, [i, _, ci, _, _], b, [_, v2i, _]| {
        f.append_inst(b, image(ImageOp::Read, i, None, Some(ci), None), Some(v2i));
    });
    assert_error(&m, "image read result is not a 4-vector");
    let m = image_module(|f, [i, _, ci, _, _], b, _| {
        f.append_inst(b, image(ImageOp::Write, i, None, Some(ci), None), None);
    });
    assert_error(&m, "image texel present or missing wrongly");
    let m = image_module(|f, [i, _, _, cf, _], b, [v4f, _, _]| {
        f.append_inst(b, image(ImageOp::Sample, i, None, Some(cf), None), Some(v4f));
    });
    assert_error(&m, "image sampler present or missing wrongly");
}
