//! OpenCL C kernels covering the SPIR-V constructs the front end translates: each must
//! build, validate, and come out with the IR the construct implies.

mod front_common;

use front_common::*;
use softcl_compiler::ir::{
    AtomicOp, BinaryOp, BuiltinVar, CmpOp, ConstData, ConvertOp, InstData, Rounding, Scope, TypeData, UnaryOp,
    ValueDef, WorkItemQuery,
};
use softcl_compiler::kernel_info::AddressSpace;
use softcl_compiler::{compile_source, Target};

#[test]
fn vector_add() {
    let program = build(
        "kernel void vadd(global const float *a, global const float *b, global float *c) {
             size_t i = get_global_id(0);
             c[i] = a[i] + b[i];
         }",
    );
    let m = &program.module;
    assert_eq!(m.kernels.len(), 1);
    let body = kernel_body(m, "vadd");
    let list = insts(body);
    let work_items: Vec<_> = list
        .iter()
        .filter_map(|(d, r)| match d {
            InstData::WorkItem { query } => Some((*query, r.expect("work-item result"))),
            _ => None,
        })
        .collect();
    assert_eq!(work_items.len(), 1);
    assert_eq!(work_items[0].0, WorkItemQuery::GlobalId);
    assert_eq!(value_type_name(m, body, work_items[0].1), "<3 x i64>");
    let loads = list.iter().filter(|(d, _)| matches!(d, InstData::Load { .. })).count();
    let stores = list.iter().filter(|(d, _)| matches!(d, InstData::Store { .. })).count();
    let fadds = list.iter().filter(|(d, _)| matches!(d, InstData::Binary { op: BinaryOp::FAdd, .. })).count();
    assert_eq!((loads, stores, fadds), (2, 1, 1));
    // The built-in is a module variable marked as such.
    assert!(m
        .globals
        .iter()
        .any(|(_, g)| g.builtin == Some(BuiltinVar::WorkItem(WorkItemQuery::GlobalId))
            && type_name(m, g.ty) == "<3 x i64>"));
    // The stub calling the body is the kernel; the body is an ordinary function.
    let kernel = m.kernel("vadd").unwrap();
    assert_eq!(m.functions[kernel.func].kind, softcl_compiler::ir::FuncKind::Kernel);
    assert_eq!(m.functions[kernel.func].name, "vadd");
    assert_eq!(body.kind, softcl_compiler::ir::FuncKind::Function);
    // The SPIR-V is kept.
    assert_eq!(program.spirv[0], 0x0723_0203);
}

#[test]
fn saxpy_uses_mad_or_fma() {
    let program = build(
        "kernel void saxpy(float a, global const float *x, global float *y) {
             size_t i = get_global_id(0);
             y[i] = a * x[i] + y[i];
         }",
    );
    let m = &program.module;
    let names = ext_inst_names(m);
    let fmuls =
        all_insts(m).iter().filter(|(_, d, _)| matches!(d, InstData::Binary { op: BinaryOp::FMul, .. })).count();
    assert!(names.iter().any(|n| n == "mad" || n == "fma") || fmuls == 1, "{names:?}");
}

const REDUCTION: &str = "
kernel void reduce(global const float *in, global float *out, local float *scratch) {
    local float partial[64];
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0) & 63] = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) out[get_group_id(0)] = partial[get_group_id(0) & 63];
}";

#[test]
fn reduction_with_local_memory_and_barriers_in_a_loop() {
    for options in ["", "-cl-opt-disable"] {
        let program = build_with(REDUCTION, options);
        let m = &program.module;
        let locals: Vec<_> = m.globals.iter().filter(|(_, g)| g.space == AddressSpace::Local).collect();
        assert_eq!(locals.len(), 1, "{options}");
        assert_eq!(type_name(m, locals[0].1.ty), "[64 x f32]");
        assert_eq!(locals[0].1.init, None);

        let body = kernel_body(m, "reduce");
        let barriers: Vec<(Scope, Scope, u32)> = insts(body)
            .into_iter()
            .filter_map(|(d, _)| match d {
                InstData::Barrier { exec_scope, mem_scope, semantics } => Some((*exec_scope, *mem_scope, *semantics)),
                _ => None,
            })
            .collect();
        assert!(barriers.len() >= 3, "{options}: {barriers:?}");
        assert!(barriers.iter().all(|(e, _, _)| *e == Scope::WorkGroup));
        assert!(barriers.iter().any(|(_, _, s)| *s == 0x110), "{barriers:?}");
        assert!(barriers.iter().any(|(_, _, s)| *s == 0x310), "{barriers:?}");
        // A loop: some branch goes back to a block earlier in the layout.
        let position = |b| body.layout.blocks.iter().position(|x| *x == b).unwrap();
        let back_edge =
            body.layout.blocks.iter().any(|&b| body.successors(b).into_iter().any(|s| position(s) <= position(b)));
        assert!(back_edge, "{options}: no loop found\n{}", m.display_function(m.kernel("reduce").unwrap().func));
        if options.is_empty() {
            // Optimised code keeps the loop counter in a block parameter (an OpPhi).
            assert!(body.layout.blocks.iter().any(|&b| !body.blocks[b].params.is_empty()));
        } else {
            assert!(insts(body).iter().any(|(d, _)| matches!(d, InstData::Variable { .. })));
        }
        let arg = &m.kernel("reduce").unwrap().info.args[2];
        assert_eq!(arg.kind, softcl_compiler::ArgKind::Local);
    }
}

#[test]
fn transpose_2d() {
    let program = build(
        "kernel void transpose(global float *out, global const float *in, int width, int height) {
             size_t x = get_global_id(0), y = get_global_id(1);
             if (x < width && y < height) out[x * height + y] = in[y * width + x];
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "transpose");
    let list = insts(body);
    // Components 0 and 1 of the global id are extracted with constant indices.
    let mut extracted = Vec::new();
    for (d, _) in &list {
        if let InstData::ExtractElement { vector, index } = d {
            if let ValueDef::Result(i) = body.values[*vector].def {
                if matches!(body.insts[i], InstData::WorkItem { query: WorkItemQuery::GlobalId }) {
                    extracted.push(const_int(m, body, *index).unwrap());
                }
            }
        }
    }
    extracted.sort_unstable();
    extracted.dedup();
    assert_eq!(extracted, vec![0, 1]);
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::Branch { .. })));
}

#[test]
fn divergent_branches_and_loops() {
    let source = "
        kernel void diverge(global int *data, int n) {
            int i = get_global_id(0);
            int acc = 0;
            if (data[i] > 0) {
                for (int k = 0; k < n; ++k) acc += data[k] * k;
            } else {
                int k = 0;
                while (acc < 1000 && k < n) { acc += data[(i + k) % n]; if (acc & 1) break; k++; }
            }
            data[i] = acc;
        }";
    for options in ["", "-cl-opt-disable"] {
        let program = build_with(source, options);
        let body = kernel_body(&program.module, "diverge");
        let branches = insts(body).iter().filter(|(d, _)| matches!(d, InstData::Branch { .. })).count();
        assert!(branches >= 4, "{options}: {branches} conditional branches");
        // Every branch argument list matches its target (the validator checked the types).
        for &b in &body.layout.blocks {
            let last = body.layout.last_inst(b).unwrap();
            for call in body.insts[last].successors() {
                assert_eq!(call.args.len(), body.blocks[call.block].params.len());
            }
        }
    }
}

#[test]
fn private_array_with_dynamic_index() {
    let program = build(
        "kernel void lut(global int *out, global const int *idx) {
             int table[16];
             for (int k = 0; k < 16; ++k) table[k] = out[k] * 3 + k;
             out[get_global_id(0)] = table[idx[get_global_id(0)] & 15];
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "lut");
    let variables: Vec<_> = insts(body)
        .into_iter()
        .filter_map(|(d, r)| match d {
            InstData::Variable { ty, .. } => Some((type_name(m, *ty), value_type_name(m, body, r.unwrap()))),
            _ => None,
        })
        .collect();
    assert_eq!(variables, vec![("[16 x i32]".to_string(), "ptr<private> [16 x i32]".to_string())]);
    // Some access chain into it uses a non-constant index.
    let dynamic = insts(body).iter().any(|(d, r)| match d {
        InstData::AccessChain { indices, .. } => {
            value_type_name(m, body, r.unwrap()) == "ptr<private> i32"
                && indices.iter().any(|i| const_int(m, body, *i).is_none())
        }
        _ => false,
    });
    assert!(dynamic);
}

#[test]
fn struct_passed_by_value() {
    let program = build(
        "typedef struct { float scale; int offset; float4 bias; } params_t;
         kernel void apply(global float4 *data, params_t p) {
             size_t i = get_global_id(0);
             data[i] = data[i] * p.scale + p.bias + (float)p.offset;
         }",
    );
    let m = &program.module;
    let info = &m.kernel("apply").unwrap().info;
    let arg = &info.args[1];
    assert_eq!(arg.kind, softcl_compiler::ArgKind::Value);
    assert_eq!((arg.size, arg.align, arg.offset), (32, 16, 16));
    assert_eq!(arg.type_name, "params_t");
    assert_eq!(arg.address_space, AddressSpace::Private);
    let kernel_fn = &m.functions[m.kernel("apply").unwrap().func];
    assert_eq!(type_name(m, kernel_fn.params[1]), "ptr<private> {f32, i32, <4 x f32>}");
    // The body function works on its own copy of the ByVal parameter (copied at its entry),
    // and reads members through access chains with constant member indices.
    let body = kernel_body(m, "apply");
    let param = body.blocks[body.layout.blocks[0]].params[1];
    let copy = insts(body)
        .iter()
        .find_map(|(d, _)| match d {
            InstData::CopyMemory { dst, src, .. } if *src == param => Some(*dst),
            _ => None,
        })
        .expect("the by-value parameter is copied at the body's entry");
    let member_reads = insts(body)
        .iter()
        .filter(
            |(d, _)| matches!(d, InstData::AccessChain { base, indices, .. } if *base == copy && !indices.is_empty()),
        )
        .count();
    assert!(member_reads >= 2, "{member_reads}");
}

#[test]
fn float4_swizzles() {
    let program = build(
        "kernel void swz(global float4 *v) {
             float4 a = v[0];
             v[1] = a.wzyx;
             v[2] = (float4)(a.xy, a.zz);
             v[3].yw = a.xz;
             v[4] = (float4)(a.s3, 1.0f, a.s0, 2.0f);
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "swz");
    let masks: Vec<Vec<Option<u32>>> = insts(body)
        .into_iter()
        .filter_map(|(d, _)| match d {
            InstData::Shuffle { mask, .. } => Some(mask.clone()),
            _ => None,
        })
        .collect();
    assert!(masks.contains(&vec![Some(3), Some(2), Some(1), Some(0)]), "{masks:?}");
    assert!(masks.len() >= 3, "{masks:?}");
}

#[test]
fn atomics_and_scopes() {
    let program = build(
        "kernel void atoms(global int *g, local int *l, global uint *u, global float *f) {
             atomic_add(g, 1);
             atomic_inc(l);
             atomic_cmpxchg(g + 1, 3, 4);
             atomic_max(u, 7u);
             atomic_min(g + 2, -1);
             atomic_xchg(f, 1.5f);
             atomic_and(g + 3, 6); atomic_or(g + 3, 1); atomic_xor(g + 3, 2); atomic_sub(g + 4, 5);
             atomic_dec(g + 5);
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "atoms");
    let atomics: Vec<(AtomicOp, Scope, String, bool)> = insts(body)
        .into_iter()
        .filter_map(|(d, _)| match d {
            InstData::Atomic { op, ptr, comparator, scope, .. } => {
                Some((*op, *scope, value_type_name(m, body, *ptr), comparator.is_some()))
            }
            _ => None,
        })
        .collect();
    let find = |op: AtomicOp| atomics.iter().find(|a| a.0 == op).unwrap_or_else(|| panic!("{op:?} in {atomics:?}"));
    // OpenCL 1.x atomics on global memory are widened to device scope; local stays work-group.
    assert_eq!(find(AtomicOp::IAdd).1, Scope::Device);
    assert_eq!(find(AtomicOp::IIncrement).1, Scope::WorkGroup);
    assert_eq!(find(AtomicOp::IIncrement).2, "ptr<local> i32");
    assert!(find(AtomicOp::CompareExchange).3);
    assert_eq!(find(AtomicOp::UMax).2, "ptr<global> i32");
    assert_eq!(find(AtomicOp::SMin).1, Scope::Device);
    assert_eq!(find(AtomicOp::Exchange).2, "ptr<global> f32");
    for op in [AtomicOp::And, AtomicOp::Or, AtomicOp::Xor, AtomicOp::ISub, AtomicOp::IDecrement] {
        find(op);
    }
}

#[test]
fn opencl_2_atomics_generic_pointers_and_program_scope_variables() {
    let program = build_with(
        "global int counter = 5;
         constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
         int load_through(int *p) { return *p; }
         kernel void k(global atomic_int *a, global int *out, local int *scratch) {
             atomic_fetch_add_explicit(a, 2, memory_order_relaxed, memory_scope_work_group);
             int v = atomic_load(a);
             scratch[get_local_id(0)] = v;
             out[get_global_id(0)] = load_through(out) + load_through(scratch) + counter + (int)table[v & 3];
             counter = v;
         }",
        "-cl-std=CL3.0",
    );
    let m = &program.module;
    let counter = m.globals.iter().find(|(_, g)| g.name == "counter").expect("counter").1;
    assert_eq!(counter.space, AddressSpace::Global);
    assert!(matches!(counter.init.map(|c| &m.constants[c]), Some(ConstData::Int { bits: 5, .. })));
    let table = m.globals.iter().find(|(_, g)| g.name == "table").expect("table").1;
    assert_eq!(table.space, AddressSpace::Constant);
    assert_eq!(type_name(m, table.ty), "[4 x f32]");
    match table.init.map(|c| &m.constants[c]) {
        Some(ConstData::Composite { parts, .. }) => {
            let values: Vec<u64> = parts
                .iter()
                .map(|p| match m.constants[*p] {
                    ConstData::Float { bits, .. } => bits,
                    _ => u64::MAX,
                })
                .collect();
            assert_eq!(values, [1.0f32, 2.0, 3.0, 4.0].map(|x| u64::from(x.to_bits())));
        }
        other => panic!("table initializer {other:?}"),
    }
    let all = all_insts(m);
    // Work-group scope on a global atomic is widened to the device.
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Atomic { op: AtomicOp::IAdd, scope: Scope::Device, .. })));
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Atomic { op: AtomicOp::Load, .. })));
    // Generic pointers: casts to generic, and a function taking one.
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Convert { op: ConvertOp::PtrCast, .. })));
    assert!(m.functions.iter().any(|(_, f)| f.params.iter().any(|p| type_name(m, *p) == "ptr<generic> i32")));
}

#[test]
fn math_builtins_are_extended_instructions() {
    let program = build(
        "kernel void maths(global float *x, global int *i) {
             x[0] = sqrt(x[1]) + sin(x[2]) + pow(x[3], x[4]) + fma(x[5], x[6], x[7]);
             x[8] = clamp(x[9], 0.0f, 1.0f) + native_exp(x[10]) + fabs(x[11]) + floor(x[12]);
             i[0] = max(i[1], i[2]) + clz(i[3]) + abs(i[4]);
         }",
    );
    let names = ext_inst_names(&program.module);
    for expected in ["sqrt", "sin", "pow", "fma", "fclamp", "native_exp", "fabs", "floor", "s_max", "clz", "s_abs"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
}

#[test]
fn switch_statement() {
    let program = build(
        "kernel void sw(global int *d) {
             switch (d[0]) {
                 case 1: d[1] = 10; break;
                 case 7: d[2] = 20; break;
                 case 42: d[3] = d[4] * 3; break;
                 default: d[5] = 0;
             }
         }",
    );
    let body = kernel_body(&program.module, "sw");
    let cases: Vec<u64> = insts(body)
        .into_iter()
        .find_map(|(d, _)| match d {
            InstData::Switch { cases, .. } => Some(cases.iter().map(|(v, _)| *v).collect()),
            _ => None,
        })
        .expect("a switch");
    assert_eq!(cases, vec![1, 7, 42]);
}

#[test]
fn vload4_and_vstore4() {
    let program = build(
        "kernel void vls(global const float *in, global float *out) {
             size_t i = get_global_id(0);
             float4 v = vload4(i, in);
             vstore4(v * 2.0f, i + 1, out);
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "vls");
    let mut seen = Vec::new();
    for (d, r) in insts(body) {
        if let InstData::ExtInst { opcode, args } = d {
            let name = ext_name(*opcode);
            if name == "vloadn" {
                assert_eq!(args.len(), 3);
                // The literal n arrives as an integer constant.
                assert_eq!(const_int(m, body, args[2]), Some(4));
                assert_eq!(value_type_name(m, body, r.unwrap()), "<4 x f32>");
            }
            if name == "vstoren" {
                assert_eq!(args.len(), 3);
                assert!(r.is_none());
                assert_eq!(value_type_name(m, body, args[0]), "<4 x f32>");
            }
            seen.push(name);
        }
    }
    assert!(seen.contains(&"vloadn".to_string()) && seen.contains(&"vstoren".to_string()), "{seen:?}");
}

#[test]
fn conversions_keep_saturation_and_rounding() {
    let program = build(
        "kernel void conv(global int *ip, global float *fp, global uchar *cp) {
             cp[0] = convert_uchar_sat(ip[0]);
             cp[1] = convert_char_sat((uint)ip[1]);
             ip[2] = convert_int_rtp(fp[2]);
             cp[3] = convert_uchar_sat((uint)ip[3]);
             ip[4] = as_int(fp[4]);
             fp[5] = convert_float_rtz(ip[5]);
             ip[6] = convert_int_sat_rtn(fp[6]);
         }",
    );
    let m = &program.module;
    let body = kernel_body(m, "conv");
    let converts: Vec<(ConvertOp, bool, Option<Rounding>)> = insts(body)
        .into_iter()
        .filter_map(|(d, _)| match d {
            InstData::Convert { op, saturate, rounding, .. } => Some((*op, *saturate, *rounding)),
            _ => None,
        })
        .collect();
    let has = |c: (ConvertOp, bool, Option<Rounding>)| converts.contains(&c);
    assert!(has((ConvertOp::SatSToU, true, None)), "{converts:?}");
    assert!(has((ConvertOp::SatUToS, true, None)), "{converts:?}");
    assert!(has((ConvertOp::FToS, false, Some(Rounding::TowardPositive))), "{converts:?}");
    assert!(has((ConvertOp::UConvert, true, None)), "{converts:?}");
    assert!(has((ConvertOp::SToF, false, Some(Rounding::TowardZero))), "{converts:?}");
    assert!(has((ConvertOp::FToS, true, Some(Rounding::TowardNegative))), "{converts:?}");
    // as_int(float) through memory comes out as a pointer bitcast or a value bitcast.
    assert!(converts.iter().any(|c| c.0 == ConvertOp::Bitcast), "{converts:?}");
}

#[test]
fn relational_and_bit_operations() {
    let program = build(
        "kernel void rel(global float *f, global int *i, global int4 *v) {
             i[0] = isnan(f[0]) + isinf(f[1]) + isfinite(f[2]) + isnormal(f[3]) + signbit(f[4]);
             i[1] = isordered(f[5], f[6]) + isunordered(f[7], f[8]) + islessgreater(f[9], f[10]);
             i[2] = any(v[0]) + all(v[1]) + popcount(i[3]);
             i[4] = f[11] < f[12] ? i[5] : i[6];
         }",
    );
    let m = &program.module;
    let all = all_insts(m);
    let unary: Vec<UnaryOp> = all
        .iter()
        .filter_map(|(_, d, _)| match d {
            InstData::Unary { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    for op in
        [UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::IsFinite, UnaryOp::IsNormal, UnaryOp::SignBitSet, UnaryOp::BitCount]
    {
        assert!(unary.contains(&op), "{op:?} missing from {unary:?}");
    }
    let compares: Vec<CmpOp> = all
        .iter()
        .filter_map(|(_, d, _)| match d {
            InstData::Compare { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    assert!(compares.contains(&CmpOp::FOrdered), "{compares:?}");
    assert!(compares.contains(&CmpOp::FUnordered), "{compares:?}");
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Select { .. })));
    // any(int4) is a vector compare with a <4 x bool> result.
    assert!(all.iter().any(|(f, d, r)| matches!(d, InstData::Compare { .. })
        && r.is_some_and(|r| is_vector_of(m, f.value_type(r), &TypeData::Bool, 4))));
}

#[test]
fn dot_vector_times_scalar_and_calls() {
    let program = build(
        "__attribute__((noinline)) float helper(float4 a, float s) { float4 t = a * s; return dot(t, a); }
         kernel void k(global float4 *v, global float *o, float s) {
             size_t i = get_global_id(0);
             o[i] = helper(v[i], s) + dot(v[i], v[i + 1]);
         }",
    );
    let m = &program.module;
    let helper = m.functions.iter().find(|(_, f)| f.name == "helper").expect("helper").1;
    assert_eq!(type_name(m, helper.ret), "f32");
    let body = kernel_body(m, "k");
    let calls: Vec<_> = insts(body)
        .into_iter()
        .filter_map(|(d, r)| match d {
            InstData::Call { func, args } => Some((*func, args.len(), r)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(m.functions[calls[0].0].name, "helper");
    assert_eq!(calls[0].1, 2);
    assert!(calls[0].2.is_some());
    // OpDot is expanded: a vector multiply and three scalar adds of extracted lanes.
    let list = insts(body);
    let vector_fmul = list.iter().any(|(d, r)| {
        matches!(d, InstData::Binary { op: BinaryOp::FMul, .. }) && value_type_name(m, body, r.unwrap()) == "<4 x f32>"
    });
    let fadds = list.iter().filter(|(d, _)| matches!(d, InstData::Binary { op: BinaryOp::FAdd, .. })).count();
    assert!(vector_fmul);
    assert!(fadds >= 4, "{fadds}");
}

#[test]
fn struct_copies_and_calls_at_o0() {
    let program = build_with(
        "typedef struct { int x; float y[3]; } S;
         S make(int a) { S s = {a, {1, 2, 3}}; return s; }
         kernel void k(global S *out, global int *a, S in) {
             S t = make(a[0]);
             out[0] = t;
             out[1] = in;
             int arr[4] = {1, 2, 3, 4};
             a[1] = arr[a[2] & 3];
         }",
        "-cl-opt-disable",
    );
    let m = &program.module;
    let all = all_insts(m);
    let copies = all.iter().filter(|(_, d, _)| matches!(d, InstData::CopyMemory { .. })).count();
    assert!(copies >= 2, "{copies}");
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Call { .. })));
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Variable { .. })));
    // The constant initializer of arr became a __constant module variable.
    assert!(m.globals.iter().any(|(_, g)| g.space == AddressSpace::Constant && type_name(m, g.ty) == "[4 x i32]"));
}

#[test]
fn every_work_item_function() {
    let program = build_with(
        "kernel void ids(global ulong *o) {
             o[0] = get_global_id(0) + get_local_id(1) + get_group_id(2) + get_local_size(0)
                  + get_enqueued_local_size(0) + get_global_size(1) + get_global_offset(2)
                  + get_num_groups(0) + get_work_dim() + get_global_linear_id() + get_local_linear_id();
         }",
        "-cl-std=CL2.0",
    );
    let m = &program.module;
    let mut queries: Vec<String> = all_insts(m)
        .into_iter()
        .filter_map(|(f, d, r)| match d {
            InstData::WorkItem { query } => Some(format!("{query:?}:{}", value_type_name(m, f, r.unwrap()))),
            _ => None,
        })
        .collect();
    queries.sort();
    queries.dedup();
    for expected in [
        "GlobalId:<3 x i64>",
        "LocalId:<3 x i64>",
        "GroupId:<3 x i64>",
        "LocalSize:<3 x i64>",
        "EnqueuedLocalSize:<3 x i64>",
        "GlobalSize:<3 x i64>",
        "GlobalOffset:<3 x i64>",
        "NumGroups:<3 x i64>",
        "WorkDim:i32",
    ] {
        assert!(queries.iter().any(|q| q == expected), "{expected} missing from {queries:?}");
    }
}

#[test]
fn printf_and_fences() {
    let program = build(
        "kernel void p(global int *d) {
             mem_fence(CLK_GLOBAL_MEM_FENCE);
             printf(\"%d %f\\n\", d[0], (float)d[1]);
         }",
    );
    let m = &program.module;
    let all = all_insts(m);
    assert!(all.iter().any(|(_, d, _)| matches!(d, InstData::Fence { .. })));
    let printf = all
        .iter()
        .find_map(|(f, d, r)| match d {
            InstData::ExtInst { opcode, args } if ext_name(*opcode) == "printf" => Some((*f, args.clone(), *r)),
            _ => None,
        })
        .expect("printf");
    assert_eq!(printf.1.len(), 3);
    // The format string is a __constant variable holding the bytes.
    assert!(m.globals.iter().any(|(_, g)| g.space == AddressSpace::Constant && type_name(m, g.ty) == "[7 x i8]"));
    assert_eq!(value_type_name(m, printf.0, printf.2.unwrap()), "i32");
}

#[test]
fn ir_printer_shows_the_kernel() {
    let program = build("kernel void k(global float *a) { a[get_global_id(0)] *= 2.0f; }");
    let m = &program.module;
    let text = m.to_string();
    assert!(text.contains("kernel @k(ptr<global> f32) -> void {"), "{text}");
    assert!(text.contains("work_item.GlobalId"), "{text}");
    assert!(text.contains("= fmul "), "{text}");
    assert!(text.contains("kernel k = "), "{text}");
    let body = kernel_body(m, "k");
    let plain = body.to_string();
    assert!(plain.contains("block0(v0: t"), "{plain}");
}

#[test]
fn async_copies_become_a_shared_loop_and_a_barrier() {
    let program = build_with(
        "kernel void k(global float4 *g, local float4 *l, global int *p) {
             event_t e = async_work_group_copy(l, g, 16, 0);
             event_t e2 = async_work_group_strided_copy(g, l, 8, 4, e);
             wait_group_events(1, &e2);
             p[0] = get_enqueued_num_sub_groups();
         }",
        "-cl-std=CL3.0",
    );
    let m = &program.module;
    let body = kernel_body(m, "k");
    let list = insts(body);
    // Each copy is a loop starting at the local linear id and stepping by the group size.
    let linear_ids =
        list.iter().filter(|(d, _)| matches!(d, InstData::WorkItem { query: WorkItemQuery::LocalLinearId })).count();
    assert_eq!(linear_ids, 2);
    let loop_headers: Vec<_> =
        body.layout.blocks.iter().skip(1).filter(|b| body.blocks[**b].params.len() == 1).collect();
    assert_eq!(loop_headers.len(), 2);
    // global -> local reads the global side with the stride (1), local -> global writes it (4).
    let copies: Vec<(String, String)> = list
        .iter()
        .filter_map(|(d, _)| match d {
            InstData::Store { ptr, value, .. } => match body.values[*value].def {
                ValueDef::Result(i) => match &body.insts[i] {
                    InstData::Load { ptr: from, .. } => {
                        Some((value_type_name(m, body, *from), value_type_name(m, body, *ptr)))
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        copies,
        [
            ("ptr<global> <4 x f32>".to_string(), "ptr<local> <4 x f32>".to_string()),
            ("ptr<local> <4 x f32>".to_string(), "ptr<global> <4 x f32>".to_string()),
        ]
    );
    // wait_group_events is a work-group barrier on local and global memory.
    assert!(list.iter().any(|(d, _)| matches!(
        d,
        InstData::Barrier { exec_scope: Scope::WorkGroup, mem_scope: Scope::WorkGroup, semantics: 0x310 }
    )));
    // get_enqueued_num_sub_groups() is a query of its own (how many depends on how the
    // device lays sub-groups out).
    assert!(list.iter().any(|(d, _)| matches!(d, InstData::WorkItem { query: WorkItemQuery::EnqueuedNumSubgroups })));
}

#[test]
fn kernels_whose_optimised_ir_has_freeze_still_build() {
    // clang-15 -O2 puts a `freeze` here (jump threading), which llvm-spirv-15 rejects.
    let program = build_with(
        "kernel void cf(global int *p, int n) {
             int i = get_global_id(0);
             int acc = 0;
             for (int k = 0; k < n; k++) {
                 if (k == i) continue;
                 for (int j = 0; j < k; j++) { if (p[j] < 0) goto out; acc += p[j]; }
             }
         out:
             p[i] = acc ? acc : -1;
         }",
        "-cl-std=CL3.0",
    );
    let body = kernel_body(&program.module, "cf");
    assert!(insts(body).iter().any(|(d, _)| matches!(d, InstData::Compare { op: CmpOp::IEq, .. })));
}

#[test]
fn kernels_whose_optimised_ir_has_odd_integer_widths_still_build() {
    // clang-15 -O2 narrows this switch to an i3, which llvm-spirv-15 rejects (InvalidBitWidth).
    let program = build_with(
        "kernel void k(global int *o) {
             int x = o[get_global_id(0)], r;
             switch (x & 7) { case 0: r = 5; break; case 1: r = 9; break; case 2: r = 11; break;
                              case 3: r = 2; break; case 5: r = 7; break; default: r = 1; }
             o[get_global_id(0)] = r;
         }",
        "",
    );
    let body = kernel_body(&program.module, "k");
    assert!(insts(body).iter().any(|(d, _)| matches!(d, InstData::Switch { .. } | InstData::Compare { .. })));
}

#[test]
fn unsupported_features_are_named_in_the_log() {
    // Translated (the front end knows the instructions), refused by code generation for a
    // device without sub-groups.
    let no_sub_groups = Target {
        disabled_features: vec!["__opencl_c_subgroups".into(), "cl_khr_subgroups".into()],
        ..Target::default()
    };
    let cases = [
        ("kernel void k(global int* o) { o[0] = sub_group_reduce_add(o[1]); }", "sub-group functions"),
        ("kernel void k(global uint* o) { o[0] = sub_group_ballot(o[1] > 2).x; }", "sub-group functions"),
    ];
    for (src, feature) in cases {
        let program = compile_source(src, "-cl-std=CL3.0", &Target::default()).expect(src);
        let err = program.codegen(&no_sub_groups).expect_err(src);
        assert!(err.log.contains(feature), "{src}: {}", err.log);
        assert!(program.codegen(&Target::default()).is_ok(), "{src}: a target with sub-groups builds it");
    }
}

#[test]
fn or_ed_compares_come_from_clangs_optimised_module() {
    // clang-15's SLP vectorizer combined the four compares of a stencil's border test into a
    // `freeze <4 x i1>`, which llvm-spirv-15 cannot translate, so such kernels went through
    // the unoptimised module (every local a variable, loaded and stored around each use):
    // an index kept in a `long` variable made its neighbours' loads gathers there.
    // `-fno-slp-vectorize` keeps the optimised module translatable.
    let program = build(
        "kernel void stencil5(int w, int h, global const float *restrict in, global float *restrict out) {
             int x = get_global_id(0), y = get_global_id(1);
             long i = (long)y * w + x;
             if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[i] = in[i]; return; }
             global const float *r = in + i;
             out[i] = 0.5f * r[0] + 0.125f * (r[-1] + r[1] + r[-(long)w] + r[w]);
         }",
    );
    let body = kernel_body(&program.module, "stencil5");
    let variables = insts(body).iter().filter(|(d, _)| matches!(d, InstData::Variable { .. })).count();
    assert_eq!(variables, 0, "the unoptimised module (its locals are variables) was translated");
}

/// A private struct whose initializer holds the address of a variable but also a constant
/// array: llvm-spirv puts the array in a module-scope variable of Function storage
/// (`constinit`), which becomes private data the kernel copies its struct's array from.
#[test]
fn constant_parts_of_a_private_initializer_are_private_data() {
    let program = build(
        "struct S { int a[5]; int *q; };
         kernel void k(global int *out) {
             int g = get_global_id(0);
             int x = g * 3;
             struct S d = {{1, 2, 3, 4, 5}, &x};
             d.a[g % 5] += g;
             *d.q += 1;
             out[g] = d.a[0] + d.a[4] + x;
         }",
    );
    let m = &program.module;
    let (g, data) = m
        .globals
        .iter()
        .find(|(_, d)| d.name.starts_with("constinit"))
        .expect("the constant part of the initializer as a module variable");
    assert_eq!(data.space, AddressSpace::Private);
    assert_eq!(type_name(m, data.ty), "[5 x i32]");
    let init = data.init.expect("its initializer");
    let ConstData::Composite { parts, .. } = &m.constants[init] else { panic!("initializer {:?}", m.constants[init]) };
    let values: Vec<u64> = parts
        .iter()
        .map(|&p| match m.constants[p] {
            ConstData::Int { bits, .. } => bits,
            ref other => panic!("element {other:?}"),
        })
        .collect();
    assert_eq!(values, [1, 2, 3, 4, 5]);
    // The kernel copies from it (through a cast of its address).
    let body = kernel_body(m, "k");
    let from_global = |v| {
        let mut v = v;
        loop {
            match body.values[v].def {
                ValueDef::Global(x) => return x == g,
                ValueDef::Result(i) => match &body.insts[i] {
                    InstData::Convert { arg, .. } => v = *arg,
                    InstData::AccessChain { base, .. } => v = *base,
                    _ => return false,
                },
                _ => return false,
            }
        }
    };
    let copies = insts(body)
        .into_iter()
        .filter(|(d, _)| matches!(d, InstData::CopyMemory { src, .. } if from_global(*src)))
        .count();
    assert_eq!(copies, 1);
}

/// The sub-group functions of cl_khr_subgroups and the cl_khr_subgroup_* extensions become
/// `Group` instructions of sub-group scope (uniform and non-uniform forms alike), and the
/// ballot's bit operations arithmetic on the ballot with the sub-group local id and size.
#[test]
fn sub_group_functions_become_group_instructions() {
    use softcl_compiler::ir::{GroupArith, GroupOp};
    let program = build_with(
        "kernel void k(global int *a, global float *b, global uint *c) {
             size_t i = get_global_id(0);
             a[i] = sub_group_reduce_add(a[i]) + sub_group_scan_inclusive_max(a[i]) + sub_group_broadcast(a[i], 2)
                  + sub_group_any(a[i] > 2) + sub_group_all(a[i] > 0);
             b[i] = sub_group_non_uniform_reduce_mul(b[i]) + sub_group_shuffle(b[i], 3) + sub_group_shuffle_xor(b[i], 1u)
                  + sub_group_shuffle_down(b[i], 1u) + sub_group_shuffle_up(b[i], 1u);
             uint4 bal = sub_group_ballot(a[i] > 3);
             c[i] = bal.x + sub_group_elect() + sub_group_non_uniform_all_equal(c[i]) + sub_group_broadcast_first(c[i])
                  + sub_group_clustered_reduce_xor(c[i], 4) + sub_group_ballot_bit_count(bal)
                  + sub_group_ballot_exclusive_scan(bal) + sub_group_ballot_find_msb(bal) + sub_group_inverse_ballot(bal);
         }",
        "-cl-std=CL3.0",
    );
    let body = kernel_body(&program.module, "k");
    let ops: Vec<GroupOp> = insts(body)
        .iter()
        .filter_map(|(d, _)| match d {
            InstData::Group { scope: Scope::SubGroup, op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    for want in [
        GroupOp::Reduce(GroupArith::IAdd),
        GroupOp::InclusiveScan(GroupArith::SMax),
        GroupOp::Broadcast,
        GroupOp::Any,
        GroupOp::All,
        GroupOp::Reduce(GroupArith::FMul),
        GroupOp::Shuffle,
        GroupOp::ShuffleXor,
        GroupOp::ShuffleDown,
        GroupOp::ShuffleUp,
        GroupOp::Ballot,
        GroupOp::Elect,
        GroupOp::AllEqual,
        GroupOp::BroadcastFirst,
        GroupOp::ClusteredReduce(GroupArith::Xor),
    ] {
        assert!(ops.contains(&want), "{want:?} in {ops:?}");
    }
    // One ballot: the bit count, scan, find and inverse are arithmetic on it.
    assert_eq!(ops.iter().filter(|o| **o == GroupOp::Ballot).count(), 1, "{ops:?}");
    let queries = insts(body)
        .iter()
        .filter(|(d, _)| {
            matches!(
                d,
                InstData::WorkItem {
                    query: WorkItemQuery::SubgroupLocalId
                        | WorkItemQuery::SubgroupSize
                        | WorkItemQuery::SubgroupMaxSize
                }
            )
        })
        .count();
    assert!(queries >= 3, "the ballot's bit operations read the sub-group local id and size");
}
