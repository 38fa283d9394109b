//! load_spirv: modules from the toolchain (either byte order), hand-built modules using
//! constructs clang does not emit, malformed input of every kind (errors, never panics).

mod front_common;

use front_common::*;
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, MemoryModel, StorageClass,
};
use softcl_compiler::front::opencl_c::compile_to_spirv;
use softcl_compiler::front::options::BuildOptions;
use softcl_compiler::ir::{AtomicOp, BinaryOp, CmpOp, ConvertOp, InstData, WorkItemQuery};
use softcl_compiler::{load_spirv, BuildErrorKind, Target};

const KERNELS: &str = "
typedef struct { float a; int b; } pair_t;
kernel void reduce(global const float *in, global float *out, local float *scratch, pair_t p) {
    local float tile[16];
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)] * p.a;
    tile[lid & 15] = p.b;
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s) scratch[lid] += scratch[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) out[get_group_id(0)] = scratch[0] + tile[3];
}
kernel void misc(global int *d, global float4 *v) {
    switch (d[0]) { case 1: d[1] = 2; break; case 9: d[2] = atomic_inc(d + 3); break; default: d[4] = 0; }
    float4 x = vload4(0, (global float *)v);
    v[1] = x.wzyx * 2.0f;
    int arr[8];
    for (int i = 0; i < 8; i++) arr[i] = d[i] * i;
    d[5] = arr[d[6] & 7] + convert_int_sat(x.y);
}";

fn spirv_bytes(source: &str, options: &str) -> Vec<u8> {
    let target = Target::default();
    let parsed = BuildOptions::parse(options).expect("options");
    compile_to_spirv(source, &parsed, &target).expect("compile").bytes
}

fn le_words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn to_le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn loads_compiled_modules_in_both_byte_orders() {
    let bytes = spirv_bytes(KERNELS, "");
    let from_il = load_spirv(&bytes).expect("little endian");
    assert_valid(&from_il.module);
    let names: Vec<&str> = from_il.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["reduce", "misc"]);

    let big: Vec<u8> = le_words(&bytes).iter().flat_map(|w| w.to_be_bytes()).collect();
    let from_big = load_spirv(&big).expect("big endian");
    assert_eq!(from_big.spirv, from_il.spirv);
    assert_eq!(from_big.kernel("reduce"), from_il.kernel("reduce"));

    // Same kernel metadata as building from source.
    let from_source = build(KERNELS);
    assert_eq!(from_source.kernel("reduce"), from_il.kernel("reduce"));
    assert_eq!(from_source.kernel("misc"), from_il.kernel("misc"));
    assert_eq!(from_source.module.to_string(), from_il.module.to_string());
}

#[test]
fn rejects_garbage_with_invalid_il() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "shorter than"),
        (vec![3, 2, 35], "shorter than"),
        (vec![0; 20], "magic"),
        (vec![0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1], "multiple of 4"),
        (b"this is not a SPIR-V module, really!".to_vec(), "magic"),
        // A header and nothing else: no Kernel capability.
        (to_le_bytes(&[0x0723_0203, 0x0001_0000, 0, 5, 0]), "Kernel capability"),
        // Unsupported version 2.0.
        (to_le_bytes(&[0x0723_0203, 0x0002_0000, 0, 5, 0]), "version"),
    ];
    for (bytes, expected) in cases {
        let error = load_spirv(&bytes).expect_err("garbage must not load");
        assert_eq!(error.kind, BuildErrorKind::InvalidIl, "{}", error.log);
        assert!(error.log.contains(expected), "{:?} should mention {expected}", error.log);
    }
}

#[test]
fn rejects_ids_beyond_the_bound() {
    let mut words = le_words(&spirv_bytes(KERNELS, ""));
    words[3] = 10; // the id bound
    let error = load_spirv(&to_le_bytes(&words)).expect_err("bound");
    assert_eq!(error.kind, BuildErrorKind::InvalidIl);
    assert!(error.log.contains("out of range"), "{}", error.log);
}

#[test]
fn truncated_and_corrupted_modules_never_panic() {
    let bytes = spirv_bytes(KERNELS, "");
    let words = le_words(&bytes);
    let mut outcomes = [0usize; 2];
    let mut check = |candidate: &[u8]| match load_spirv(candidate) {
        Ok(program) => {
            assert_valid(&program.module);
            outcomes[0] += 1;
        }
        Err(e) => {
            assert!(
                matches!(e.kind, BuildErrorKind::InvalidIl | BuildErrorKind::CompileFailed),
                "unexpected error kind {:?}",
                e.kind
            );
            assert!(!e.log.is_empty());
            outcomes[1] += 1;
        }
    };
    // Every truncation (odd lengths included near the header).
    for len in 0..bytes.len() {
        if len < 64 || len % 4 == 0 {
            check(&bytes[..len]);
        }
    }
    // Each word replaced by one of several values that break counts, opcodes, ids and
    // literals (cycling, so neighbouring words get different kinds of damage).
    for index in 0..words.len() {
        let original = words[index];
        let replacements = [
            0,
            u32::MAX,
            original ^ 1,
            original.wrapping_add(1),
            original.wrapping_sub(1),
            (original & 0xffff) | 0x0001_0000,
            (original & 0xffff_0000) | 0x0000_00ff,
        ];
        let mut mutated = words.clone();
        mutated[index] = replacements[index % replacements.len()];
        check(&to_le_bytes(&mutated));
    }
    // Random multi-word corruption (deterministic xorshift).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..600 {
        let mut mutated = words.clone();
        for _ in 0..(1 + next() % 4) {
            let index = 5 + (next() as usize) % (mutated.len() - 5);
            mutated[index] = match next() % 3 {
                0 => next() as u32,
                1 => mutated[index] ^ (1 << (next() % 32)),
                _ => (next() % 64) as u32,
            };
        }
        check(&to_le_bytes(&mutated));
    }
    // The untouched module loads; most mutations are rejected.
    assert!(load_spirv(&bytes).is_ok());
    assert!(outcomes[1] > outcomes[0], "{outcomes:?}");
}

#[test]
fn unsupported_instruction_in_il_is_a_build_failure_naming_it() {
    let bytes = spirv_bytes(
        "kernel void k(read_only pipe int p, global int *d) { int x = 0; read_pipe(p, &x); d[0] = x; }",
        "-cl-std=CL3.0",
    );
    let error = load_spirv(&bytes).expect_err("read_pipe");
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("OpReadPipe") && error.log.contains("pipes"), "{}", error.log);
}

#[test]
fn undefined_function_in_il_is_a_build_failure() {
    let bytes = spirv_bytes(
        "int helper_nobody_wrote(int x);
         kernel void k(global int *d) { d[0] = helper_nobody_wrote(d[1]); }",
        "",
    );
    let error = load_spirv(&bytes).expect_err("import");
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("undefined function helper_nobody_wrote"), "{}", error.log);
}

#[test]
fn module_without_kernel_capability_or_with_32_bit_addressing() {
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let error = load_spirv(&to_le_bytes(&b.module().assemble())).expect_err("shader");
    assert_eq!(error.kind, BuildErrorKind::InvalidIl);
    assert!(error.log.contains("Kernel capability"), "{}", error.log);

    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical32, MemoryModel::OpenCL);
    let error = load_spirv(&to_le_bytes(&b.module().assemble())).expect_err("32-bit");
    assert_eq!(error.kind, BuildErrorKind::InvalidIl);
    assert!(error.log.contains("Physical32"), "{}", error.log);
}

/// A kernel using constructs clang does not produce: blocks out of dominance order with a
/// phi referring to a later definition, a shift by a narrower amount, OpVectorTimesScalar,
/// nested composite insert/extract through a struct into a vector, OpAtomicFlagTestAndSet,
/// a 64-bit switch, OpSpecConstant, a module-scope OpUndef and a built-in read through an
/// access chain.
fn handmade_module() -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 2);
    for cap in [Capability::Addresses, Capability::Kernel, Capability::Int64] {
        b.capability(cap);
    }
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    let void = b.type_void();
    let u32t = b.type_int(32, 0);
    let u64t = b.type_int(64, 0);
    let boolt = b.type_bool();
    let f32t = b.type_float(32, None);
    let v4f = b.type_vector(f32t, 4);
    let v3u64 = b.type_vector(u64t, 3);
    let st = b.type_struct([u32t, v4f]);
    let p_u32 = b.type_pointer(None, StorageClass::CrossWorkgroup, u32t);
    let p_u64 = b.type_pointer(None, StorageClass::CrossWorkgroup, u64t);
    let p_f32 = b.type_pointer(None, StorageClass::CrossWorkgroup, f32t);
    let p_st = b.type_pointer(None, StorageClass::Function, st);
    let p_in = b.type_pointer(None, StorageClass::Input, v3u64);
    let p_in_u64 = b.type_pointer(None, StorageClass::Input, u64t);
    let fn_ty = b.type_function(void, [p_u32, p_u64, p_f32]);
    let c0 = b.constant_bit32(u32t, 0);
    let c1 = b.constant_bit32(u32t, 1);
    let c3 = b.constant_bit32(u32t, 3);
    let c10 = b.constant_bit32(u32t, 10);
    let big = b.constant_bit64(u64t, 1 << 40);
    let two = b.constant_bit32(f32t, 2.0f32.to_bits());
    let spec = b.spec_constant_bit32(u32t, 7);
    let undef_st = b.undef(st, None);
    let gid = b.variable(p_in, None, StorageClass::Input, None);
    b.decorate(gid, Decoration::BuiltIn, [Operand::BuiltIn(BuiltIn::GlobalInvocationId)]);

    let f = b.begin_function(void, None, FunctionControl::NONE, fn_ty).unwrap();
    let a = b.function_parameter(p_u32).unwrap();
    let wide = b.function_parameter(p_u64).unwrap();
    let fp = b.function_parameter(p_f32).unwrap();
    b.name(a, "a");
    b.name(wide, "wide");
    b.name(fp, "f");
    let (l_entry, l_header, l_body, l_exit) = (b.id(), b.id(), b.id(), b.id());
    let (l_case, l_default) = (b.id(), b.id());
    let i_next = b.id();

    b.begin_block(Some(l_entry)).unwrap();
    let var = b.variable(p_st, None, StorageClass::Function, None);
    let gid_y_ptr = b.in_bounds_access_chain(p_in_u64, None, gid, [c1]).unwrap();
    let gid_y = b.load(u64t, None, gid_y_ptr, None, []).unwrap();
    let x = b.load(u32t, None, a, None, []).unwrap();
    let x64 = b.u_convert(u64t, None, x).unwrap();
    let shifted = b.shift_left_logical(u64t, None, x64, c3).unwrap();
    let sum = b.i_add(u64t, None, shifted, gid_y).unwrap();
    b.branch(l_header).unwrap();

    // The exit block comes before the loop it follows.
    b.begin_block(Some(l_exit)).unwrap();
    let vf = b.load(f32t, None, fp, None, []).unwrap();
    let v = b.composite_construct(v4f, None, [vf, vf, vf, vf]).unwrap();
    let w = b.vector_times_scalar(v4f, None, v, two).unwrap();
    let s0 = b.composite_insert(st, None, w, undef_st, [1]).unwrap();
    let s1 = b.composite_insert(st, None, vf, s0, [1, 2]).unwrap();
    b.store(var, s1, None, []).unwrap();
    let e = b.composite_extract(f32t, None, s1, [1, 3]).unwrap();
    let _flag = b.atomic_flag_test_and_set(boolt, None, a, c1, c0).unwrap();
    b.store(fp, e, None, []).unwrap();
    b.store(a, spec, None, []).unwrap();
    let selector = b.load(u64t, None, wide, None, []).unwrap();
    b.switch(selector, l_default, [(Operand::LiteralBit64(1 << 40), l_case)]).unwrap();

    b.begin_block(Some(l_header)).unwrap();
    let i = b.phi(u32t, None, [(c0, l_entry), (i_next, l_body)]).unwrap();
    let cond = b.u_less_than(boolt, None, i, c10).unwrap();
    b.branch_conditional(cond, l_body, l_exit, []).unwrap();

    b.begin_block(Some(l_body)).unwrap();
    b.i_add(u32t, Some(i_next), i, c1).unwrap();
    b.branch(l_header).unwrap();

    b.begin_block(Some(l_case)).unwrap();
    b.store(wide, sum, None, []).unwrap();
    b.store(wide, big, None, []).unwrap();
    b.ret().unwrap();

    b.begin_block(Some(l_default)).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::Kernel, f, "hand", [gid]);
    b.module().assemble()
}

#[test]
fn handmade_module_with_constructs_clang_does_not_emit() {
    let program = load_spirv(&to_le_bytes(&handmade_module())).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log));
    let m = &program.module;
    assert_valid(m);
    let body = kernel_body(m, "hand");
    assert_eq!(body.name, "hand");
    let list = insts(body);
    let text = m.display_function(m.kernel("hand").unwrap().func).to_string();

    // The shift amount (u32) is converted to the shifted type (u64).
    assert!(
        list.iter().any(|(d, r)| matches!(d, InstData::Convert { op: ConvertOp::UConvert, .. })
            && value_type_name(m, body, r.unwrap()) == "i64"
            && list
                .iter()
                .any(|(s, _)| matches!(s, InstData::Binary { op: BinaryOp::Shl, rhs, .. } if Some(*rhs) == *r))),
        "{text}"
    );
    // The loop counter phi became a block parameter fed by the entry and the latch.
    let entry = body.layout.blocks[0];
    let with_params: Vec<_> =
        body.layout.blocks.iter().filter(|b| **b != entry && !body.blocks[**b].params.is_empty()).collect();
    assert_eq!(with_params.len(), 1, "{text}");
    assert_eq!(value_type_name(m, body, body.blocks[*with_params[0]].params[0]), "i32");
    // OpVectorTimesScalar: a splat and a vector multiply.
    assert!(
        list.iter().any(|(d, r)| matches!(d, InstData::Construct { parts } if parts.len() == 4)
            && value_type_name(m, body, r.unwrap()) == "<4 x f32>"),
        "{text}"
    );
    assert!(
        list.iter().any(|(d, r)| matches!(d, InstData::Binary { op: BinaryOp::FMul, .. })
            && value_type_name(m, body, r.unwrap()) == "<4 x f32>"),
        "{text}"
    );
    // Nested insert: extract the vector member, insert the lane, put it back.
    let extract_values: Vec<_> = list
        .iter()
        .filter_map(|(d, _)| match d {
            InstData::ExtractValue { indices, .. } => Some(indices.clone()),
            _ => None,
        })
        .collect();
    assert!(extract_values.iter().all(|i| i == &vec![1]), "{extract_values:?}");
    assert_eq!(extract_values.len(), 2, "{text}");
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::InsertElement { .. })), "{text}");
    assert!(
        list.iter().any(|(d, _)| matches!(d, InstData::InsertValue { indices, .. } if indices == &vec![1])),
        "{text}"
    );
    assert!(list.iter().any(|(d, r)| matches!(d, InstData::ExtractElement { .. })
        && value_type_name(m, body, r.unwrap()) == "f32"), "{text}");
    // Test-and-set: an exchange with 1 and a compare against 0.
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::Atomic { op: AtomicOp::Exchange, .. })), "{text}");
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::Compare { op: CmpOp::INe, .. })), "{text}");
    // The 64-bit case value survives.
    assert!(
        list.iter()
            .any(|(d, _)| matches!(d, InstData::Switch { cases, .. } if cases.len() == 1 && cases[0].0 == 1 << 40)),
        "{text}"
    );
    // The spec constant is stored with its default value.
    assert!(
        list.iter().any(|(d, _)| matches!(d, InstData::Store { value, .. } if const_int(m, body, *value) == Some(7))),
        "{text}"
    );
    // The built-in read through an access chain: a work-item query and a lane extract.
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::WorkItem { query: WorkItemQuery::GlobalId })), "{text}");
    // Without kernel_arg_type strings, type names come from the SPIR-V types.
    let info = program.kernel("hand").unwrap();
    let types: Vec<&str> = info.args.iter().map(|a| a.type_name.as_str()).collect();
    assert_eq!(types, ["uint*", "ulong*", "float*"]);
    let names: Vec<&str> = info.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["a", "wide", "f"]);
}

#[test]
fn handmade_module_truncations_never_panic() {
    let words = handmade_module();
    for len in 0..words.len() {
        let _ = load_spirv(&to_le_bytes(&words[..len]));
    }
    for index in 5..words.len() {
        for value in [0, 1, 2, 3, u32::MAX, words[index] + 1] {
            let mut mutated = words.clone();
            mutated[index] = value;
            let _ = load_spirv(&to_le_bytes(&mutated));
        }
    }
}

#[test]
fn il_with_debug_information_loads() {
    // clang -g makes llvm-spirv emit OpenCL.DebugInfo.100 instructions, some between
    // functions; they are dropped. (-g is not forwarded to clang by the build options:
    // llvm-spirv-15 crashes on some debug information.)
    const SOURCE: &str = "kernel void k(global int *p) { int x = p[1]; for (int i = 0; i < x; i++) p[i] += i; }";
    let target = Target::default();
    let mut options = BuildOptions::parse("-cl-std=CL3.0").unwrap();
    options.clang_args.push("-g".into());
    let bytes = compile_to_spirv(SOURCE, &options, &target).unwrap().bytes;
    let text: Vec<u8> = bytes.iter().copied().filter(|b| b.is_ascii_graphic()).collect();
    assert!(text.windows(16).any(|w| w == b"OpenCL.DebugInfo"), "the module should import OpenCL.DebugInfo.100");
    let program = load_spirv(&bytes).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log));
    let plain = build_with(SOURCE, "-cl-std=CL3.0");
    assert_eq!(program.kernel("k"), plain.kernel("k"));
    assert_eq!(
        program.module.display_function(program.module.kernel("k").unwrap().func).to_string(),
        plain.module.display_function(plain.module.kernel("k").unwrap().func).to_string()
    );
}
