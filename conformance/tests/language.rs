//! The kernel language through the loader: SPIR-V the Khronos translator of other versions
//! emits, build options as clang takes them, the OpenCL C feature macros against the device
//! queries, work-item functions beyond get_work_dim(), and constructs clang emits for
//! `__local` structs and as_type.

use softcl_conformance::*;

/// Assembles SPIR-V text (`assemble_spirv`).
fn assemble(text: &str) -> Vec<u8> {
    assemble_spirv(text)
}

/// Builds SPIR-V text for `env`'s device; the build failure (code and log) on error.
fn build_il(env: &TestEnv, text: &str) -> Result<Program, BuildFailure> {
    let program = program_from_il(&env.context, &assemble(text)).unwrap_or_else(|e| panic!("{e}"));
    build_program(program, &[env.dev()], "")
}

/// Every work-item's built-in values, read as whole vectors (the GlobalInvocationId in
/// UniformConstant storage, as older translators declare it), by OpVectorExtractDynamic,
/// through OpAccessChain / OpInBoundsPtrAccessChain into the variable and as scalars.
#[test]
fn builtins_read_in_every_way_give_each_work_items_values() {
    const TEXT: &str = include_str!("language/builtins_every_access.spvasm");
    let (offset, global, local) = ([3usize, 1], [8usize, 6], [4usize, 2]);
    let items = global[0] * global[1];
    for_each_device(|d| {
        let env = d.env();
        let program = build_il(&env, TEXT).unwrap_or_else(|e| panic!("{e}"));
        let k = create_kernel(&program, "ids").unwrap();
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![u64::MAX; items * 16]);
        k.set_mem(0, &out);
        k.set_arg(1, &1u32);
        enqueue_nd(env.q(), &k, Some(&offset), &global, Some(&local), &[]).wait();
        let got: Vec<u64> = env.read(&out, items * 16);
        for y in 0..global[1] {
            for x in 0..global[0] {
                let slot = &got[(y * global[0] + x) * 16..][..16];
                let (lx, ly) = (x % local[0], y % local[1]);
                let want = [
                    (x + offset[0]) as u64,
                    (y + offset[1]) as u64,
                    lx as u64,
                    ly as u64,
                    (x / local[0]) as u64,
                    (y / local[1]) as u64,
                    global[1] as u64,
                    2,
                    (y * global[0] + x) as u64,
                    (ly * local[0] + lx) as u64,
                    (global[0] / local[0]) as u64,
                    (global[1] / local[1]) as u64,
                    local[0] as u64,
                    local[1] as u64,
                    offset[0] as u64,
                    offset[1] as u64,
                ];
                assert_eq!(slot, want, "work-item ({x}, {y}) on {}", d.kind);
            }
        }
    });
}

/// A built-in vector read through its address cast to a pointer to one component, then
/// indexed (constant and variable element offsets).
#[test]
fn builtins_read_through_a_cast_address() {
    const TEXT: &str = include_str!("language/builtins_through_casts.spvasm");
    let global = [4usize, 3, 2];
    let items: usize = global.iter().product();
    for_each_device(|d| {
        let env = d.env();
        let program = build_il(&env, TEXT).unwrap_or_else(|e| panic!("{e}"));
        let k = create_kernel(&program, "cast_ids").unwrap();
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![u64::MAX; items * 3]);
        k.set_mem(0, &out);
        k.set_arg(1, &1u32);
        env.run(&k, &global, Some(&[2, 3, 1]));
        let got: Vec<u64> = env.read(&out, items * 3);
        for z in 0..global[2] {
            for y in 0..global[1] {
                for x in 0..global[0] {
                    let lin = x + global[0] * (y + global[1] * z);
                    assert_eq!(got[lin * 3..][..3], [x as u64, y as u64, z as u64], "({x}, {y}, {z}) on {}", d.kind);
                }
            }
        }
    });
}

/// A built-in the front end cannot read correctly is a build error naming it, never a
/// kernel that runs with made-up values.
#[test]
fn builtins_that_cannot_be_translated_are_build_errors() {
    const HEADER: &str = "
               OpCapability Addresses
               OpCapability Linkage
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k \"bad\"
               OpName %k \"bad\"
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
    %v3ulong = OpTypeVector %ulong 3
    %v2ulong = OpTypeVector %ulong 2
     %uint_0 = OpConstant %uint 0
%ptr_cw_ulong = OpTypePointer CrossWorkgroup %ulong
       %void = OpTypeVoid
         %fn = OpTypeFunction %void %ptr_cw_ulong
";
    let cases = [
        // A per-dimension built-in declared as a 2-component vector.
        (
            "OpDecorate %b BuiltIn GlobalSize
             %pt = OpTypePointer Input %v2ulong
             %b = OpVariable %pt Input",
            "%v = OpLoad %v2ulong %b
             %x = OpCompositeExtract %ulong %v 0",
            "GlobalSize",
        ),
        // A scalar built-in declared as a vector.
        (
            "OpDecorate %b BuiltIn WorkDim
             %pt = OpTypePointer Input %v3ulong
             %b = OpVariable %pt Input",
            "%v = OpLoad %v3ulong %b
             %x = OpCompositeExtract %ulong %v 0",
            "WorkDim",
        ),
        // A built-in SoftCL does not know.
        (
            "OpDecorate %b BuiltIn DeviceIndex
             %pt = OpTypePointer Input %ulong
             %b = OpVariable %pt Input",
            "%x = OpLoad %ulong %b",
            "DeviceIndex",
        ),
        // A built-in in private (Function-like) storage.
        (
            "OpDecorate %b BuiltIn GlobalInvocationId
             %pt = OpTypePointer CrossWorkgroup %v3ulong
             %b = OpVariable %pt CrossWorkgroup",
            "%v = OpLoad %v3ulong %b
             %x = OpCompositeExtract %ulong %v 0",
            "GlobalInvocationId",
        ),
        // A built-in's address used as a value.
        (
            "OpDecorate %b BuiltIn GlobalInvocationId
             %pt = OpTypePointer Input %v3ulong
             %pg = OpTypePointer Generic %v3ulong
             %b = OpVariable %pt Input",
            "%g = OpPtrCastToGeneric %pg %b
             %v = OpLoad %v3ulong %g
             %x = OpCompositeExtract %ulong %v 0",
            "built-in variable",
        ),
    ];
    for_each_device(|d| {
        let env = d.env();
        for (decls, body, named) in cases {
            let (decorations, types): (Vec<&str>, Vec<&str>) =
                decls.lines().map(str::trim).partition(|l| l.starts_with("OpDecorate"));
            let text = format!(
                "{}\n{}\n{HEADER}\n{}\n%k = OpFunction %void None %fn\n%out = OpFunctionParameter %ptr_cw_ulong\n\
                 %entry = OpLabel\n{body}\nOpStore %out %x\nOpReturn\nOpFunctionEnd\n",
                "",
                decorations.join("\n"),
                types.join("\n")
            );
            // Decorations must precede the types: move them after the header's OpName.
            let text = text.replacen(&decorations.join("\n"), "", 1).replacen(
                "OpName %k \"bad\"",
                &format!("OpName %k \"bad\"\n{}", decorations.join("\n")),
                1,
            );
            let il = assemble(&text);
            let program = program_from_il(&env.context, &il).unwrap_or_else(|e| panic!("{named}: {e}"));
            let error = build_program(program, &[env.dev()], "").expect_err(named);
            assert_eq!(error.code, CL_BUILD_PROGRAM_FAILURE, "{named}: {}", error.log);
            assert!(error.log.contains(named), "{named}: {}", error.log);
        }
    });
}

/// get_global_size, get_local_size, get_num_groups, get_enqueued_local_size give 1 and
/// get_global_id, get_local_id, get_group_id, get_global_offset give 0 for a dimension not
/// below get_work_dim(): literal dimensions beyond 2 (which clang turns into out-of-range
/// components) and variable ones.
#[test]
fn work_item_functions_beyond_the_work_dim() {
    const SRC: &str = r#"
        kernel void dims(global ulong *out, uint d) {
            size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
            global ulong *o = out + i * 24;
            o[0] = get_global_size(3);  o[1] = get_local_size(7);  o[2] = get_num_groups(3);
            o[3] = get_enqueued_local_size(4);
            o[4] = get_global_id(3);  o[5] = get_local_id(9);  o[6] = get_group_id(5);
            o[7] = get_global_offset(3);
            o[8] = get_global_size(d);  o[9] = get_local_size(d);  o[10] = get_num_groups(d);
            o[11] = get_enqueued_local_size(d);
            o[12] = get_global_id(d);  o[13] = get_local_id(d);  o[14] = get_group_id(d);
            o[15] = get_global_offset(d);
            uint e = d + 100;
            o[16] = get_global_size(e);  o[17] = get_local_size(e);  o[18] = get_num_groups(e);
            o[19] = get_enqueued_local_size(e);
            o[20] = get_global_id(e);  o[21] = get_local_id(e);  o[22] = get_group_id(e);
            o[23] = get_global_offset(e);
        }"#;
    for_each_device(|dev| {
        let env = dev.env();
        let ranges = [(vec![6usize], vec![3usize], 1u32), (vec![4, 3], vec![2, 3], 2), (vec![5], vec![5], 2)];
        for options in ["-cl-std=CL3.0", "-cl-std=CL3.0 -cl-opt-disable"] {
            let k = env.kernel(SRC, options, "dims");
            for (global, local, d) in ranges.clone() {
                let items: usize = global.iter().product();
                let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![u64::MAX; items * 24]);
                k.set_mem(0, &out);
                k.set_arg(1, &d);
                let offset = vec![0usize; global.len()];
                enqueue_nd(env.q(), &k, Some(&offset), &global, Some(&local), &[]).wait();
                let got: Vec<u64> = env.read(&out, items * 24);
                let sizes_then_ids = [1, 1, 1, 1, 0, 0, 0, 0];
                for (item, slot) in got.chunks(24).enumerate() {
                    let want: Vec<u64> = sizes_then_ids.iter().cycle().take(24).copied().collect();
                    assert_eq!(slot, want, "work-item {item}, global {global:?}, d = {d}, {options} on {}", dev.kind);
                }
            }
        }
    });
}

/// Build options as clang takes them: a function-like macro (hashcat's `-D 'XM2S(x)=#x'`),
/// values with quotes and spaces, include directories with spaces; options that are not
/// OpenCL's are still refused with a log line.
#[test]
fn build_options_pass_through_as_clang_takes_them() {
    let dir = std::env::temp_dir().join(format!("softcl language include {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("inc.h"), "#define FROM_HEADER 5\n").unwrap();
    const SRC: &str = r#"
        #include "inc.h"
        constant char name[] = XM2S(hashcat);
        kernel void k(global int *out) {
            out[0] = name[0];
            out[1] = sizeof(name);
            out[2] = FROM_HEADER;
            out[3] = sizeof(SPACED);
            out[4] = QUOTED[0];
        }"#;
    let options = format!(r#"-D 'XM2S(x)=#x' -I "{}" -D SPACED="\"a b\"" -DQUOTED=\"s\""#, dir.display());
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, &options, "k");
        let out = env.buffer(CL_MEM_READ_WRITE, 5 * 4);
        k.set_mem(0, &out);
        env.run(&k, &[1], None);
        let got: Vec<i32> = env.read(&out, 5);
        assert_eq!(got, [b'h' as i32, 8, 5, 4, b's' as i32], "on {}", d.kind);
        for bad in ["-D 'F(1)=x'", "-O3", "-cl-no-such-option", "-cl-std=CL1.0"] {
            let error = env.try_build(SRC, bad).expect_err(bad);
            assert_eq!(error.code, CL_INVALID_BUILD_OPTIONS, "{bad}: {}", error.log);
            assert!(!error.log.is_empty(), "{bad}: empty build log");
        }
    });
    std::fs::remove_dir_all(&dir).ok();
}

/// A `__local` struct: clang gives its SPIR-V variable an undef initializer, which must be
/// accepted (local memory starts uninitialised), with and without optimisation.
#[test]
fn local_struct_variables_build_and_run() {
    const SRC: &str = r#"
        struct S { int a; float b[4]; };
        void fill(local struct S *p, int i) { p->b[i & 3] = i * 2; p->a = i; }
        kernel void k(global int *o, global const struct S *g) {
            local struct S s;
            if (get_local_id(0) == 0) { s = g[0]; fill(&s, o[0]); }
            barrier(CLK_LOCAL_MEM_FENCE);
            o[get_global_id(0) + 1] = s.a + (int)s.b[1] + (int)s.b[2] + (int)get_local_id(0);
        }"#;
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct S {
        a: i32,
        b: [f32; 4],
    }
    for_each_device(|d| {
        let env = d.env();
        for options in ["", "-cl-opt-disable"] {
            let k = env.kernel(SRC, options, "k");
            let o = env.buffer_from(CL_MEM_READ_WRITE, &[1i32; 9]);
            let g = env.buffer_from(CL_MEM_READ_ONLY, &[S { a: 100, b: [0.0, 0.0, 30.0, 0.0] }]);
            k.set_mem(0, &o);
            k.set_mem(1, &g);
            env.run(&k, &[8], Some(&[8]));
            let got: Vec<i32> = env.read(&o, 9);
            // o[0] = 1: s.a = 1, s.b[1] = 2, s.b[2] = 30 from g.
            let want: Vec<i32> = std::iter::once(1).chain((0..8).map(|lid| 1 + 2 + 30 + lid)).collect();
            assert_eq!(got, want, "{options:?} on {}", d.kind);
        }
    });
}

/// as_type between types of the same size but different lane counts or element types, on
/// values (not through memory), with and without optimisation; 3-component vectors are
/// 4-component-sized.
#[test]
fn as_type_between_vector_shapes() {
    const SRC: &str = r#"
        typedef union { int i; short2 s; } U;
        kernel void k(global long *o, int2 a, long b, int c, float4 f, int3 i3) {
            o[0] = as_long(a + (int2)(1, 2));
            int2 x = as_int2(b * 3);
            o[1] = x.y + x.x;
            char4 ch = as_char4(c + 1);
            o[2] = ch.z;
            U u; u.i = c * 5; o[3] = u.s.y;
            float3 f3 = as_float3(as_int4(f * 2.0f));
            o[4] = (long)f3.y;
            int4 i4 = as_int4(f + 1.0f);
            o[5] = i4.w;
            short8 s8 = as_short8(f * 4.0f);
            o[6] = s8.s7;
            float3 g3 = as_float3(i3 + 1);
            o[7] = as_int(g3.z);
            uchar16 u16 = as_uchar16(f);
            o[8] = u16.sf;
            float2 h = as_float2(b + 1);
            o[9] = as_int(h.y);
            o[10] = as_long(as_float2(as_long(a)));
            o[11] = as_char3(c).y;
            o[12] = as_short3(b).z;
            o[13] = as_uchar3(f.x).z;
            o[14] = as_int(as_char3(c + 1) + (char3)(1, 0, 0)) & 0xffffff; // the 4th byte is undefined
        }"#;
    let b: i64 = 0x0000_0005_0000_0007;
    let c: i32 = 0x0102_0304;
    let want: [i64; 15] = [
        2 | (4 << 32),
        0x15 + 0xF,
        2,
        0x050A,
        4,
        5.0f32.to_bits() as i64,
        (16.0f32.to_bits() >> 16) as i64,
        4,
        0x40,
        5,
        1 | (2 << 32),
        3,
        5,
        0x80,
        0x02_0306,
    ];
    for_each_device(|d| {
        let env = d.env();
        for options in ["", "-cl-opt-disable"] {
            let k = env.kernel(SRC, options, "k");
            let o = env.buffer_from(CL_MEM_READ_WRITE, &[-1i64; 15]);
            k.set_mem(0, &o);
            k.set_arg(1, &[1i32, 2]);
            k.set_arg(2, &b);
            k.set_arg(3, &c);
            k.set_arg(4, &[1.0f32, 2.0, 3.0, 4.0]);
            k.set_arg(5, &[1i32, 2, 3, 0]);
            env.run(&k, &[1], None);
            let got: Vec<i64> = env.read(&o, 15);
            assert_eq!(got, want, "{options:?} on {}", d.kind);
        }
    });
}

/// OpenCL C 3.0 feature macros and the extension macros that affect the language (the
/// names clang-15 can define for SPIR).
const FEATURE_MACROS: &[&str] = &[
    "__opencl_c_3d_image_writes",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_fp64",
    "__opencl_c_images",
    "__opencl_c_int64",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_read_write_images",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "__opencl_c_ext_fp16_global_atomic_load_store",
    "__opencl_c_ext_fp16_local_atomic_load_store",
    "__opencl_c_ext_fp16_global_atomic_add",
    "__opencl_c_ext_fp16_local_atomic_add",
    "__opencl_c_ext_fp16_global_atomic_min_max",
    "__opencl_c_ext_fp16_local_atomic_min_max",
    "__opencl_c_ext_fp32_global_atomic_add",
    "__opencl_c_ext_fp32_local_atomic_add",
    "__opencl_c_ext_fp32_global_atomic_min_max",
    "__opencl_c_ext_fp32_local_atomic_min_max",
    "__opencl_c_ext_fp64_global_atomic_add",
    "__opencl_c_ext_fp64_local_atomic_add",
    "__opencl_c_ext_fp64_global_atomic_min_max",
    "__opencl_c_ext_fp64_local_atomic_min_max",
];
const EXTENSION_MACROS: &[&str] = &[
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_3d_image_writes",
    "cl_khr_depth_images",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_gl_msaa_sharing",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_subgroups",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_srgb_image_writes",
    "cl_ext_float_atomics",
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
];

/// Every feature and extension macro is defined iff clGetDeviceInfo lists the feature
/// (CL_DEVICE_OPENCL_C_FEATURES) or extension (CL_DEVICE_EXTENSIONS); __IMAGE_SUPPORT__ iff
/// CL_DEVICE_IMAGE_SUPPORT; __OPENCL_VERSION__ is the device's version, __OPENCL_C_VERSION__
/// the -cl-std one.
#[test]
fn feature_macros_agree_with_the_device_queries() {
    for_each_device(|d| {
        let env = d.env();
        let features: Vec<String> = device_info_array::<[u8; 68]>(d.id, CL_DEVICE_OPENCL_C_FEATURES)
            .iter()
            .map(|nv| {
                let name = &nv[4..];
                String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(64)]).into_owned()
            })
            .collect();
        let extensions = device_info_string(d.id, CL_DEVICE_EXTENSIONS);
        let extensions: Vec<&str> = extensions.split_whitespace().collect();
        let images = device_info::<cl_bool>(d.id, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE;
        let version = device_info_string(d.id, CL_DEVICE_VERSION);
        let (major, minor) = version["OpenCL ".len()..].split_whitespace().next().unwrap().split_once('.').unwrap();
        let device_version: i32 = major.parse::<i32>().unwrap() * 100 + minor.parse::<i32>().unwrap() * 10;
        for (std, c_version, features_apply) in [("CL3.0", 300, true), ("CL1.2", 120, false)] {
            let names: Vec<&str> = if features_apply {
                FEATURE_MACROS.iter().chain(EXTENSION_MACROS).copied().collect()
            } else {
                EXTENSION_MACROS.to_vec()
            };
            let mut src = String::from("kernel void k(global int *o) {\n");
            for (i, name) in names.iter().enumerate() {
                src.push_str(&format!("#ifdef {name}\n o[{i}] = 1;\n#else\n o[{i}] = 0;\n#endif\n"));
            }
            let n = names.len();
            src.push_str(&format!(
                "#ifdef __IMAGE_SUPPORT__\n o[{n}] = 1;\n#else\n o[{n}] = 0;\n#endif\n\
                 #ifdef __OPENCL_VERSION__\n o[{}] = __OPENCL_VERSION__;\n#else\n o[{}] = -1;\n#endif\n\
                 o[{}] = __OPENCL_C_VERSION__;\n}}\n",
                n + 1,
                n + 1,
                n + 2
            ));
            let k = env.kernel(&src, &format!("-cl-std={std}"), "k");
            let out = env.buffer(CL_MEM_READ_WRITE, (n + 3) * 4);
            k.set_mem(0, &out);
            env.run(&k, &[1], None);
            let got: Vec<i32> = env.read(&out, n + 3);
            for (i, name) in names.iter().enumerate() {
                // The cl_khr_subgroup_* extensions are for OpenCL C 2.0 and later: clang
                // offers neither their functions nor their macros to OpenCL C 1.2.
                if !features_apply && name.starts_with("cl_khr_subgroup_") {
                    continue;
                }
                let listed = features.iter().any(|f| f == name) || extensions.contains(name);
                assert_eq!(got[i] == 1, listed, "{name} defined = {}, listed = {listed}, {std} on {}", got[i], d.kind);
            }
            assert_eq!(got[n] == 1, images, "__IMAGE_SUPPORT__, {std} on {}", d.kind);
            assert_eq!(got[n + 1], device_version, "__OPENCL_VERSION__, {std} on {}", d.kind);
            assert_eq!(got[n + 2], c_version, "__OPENCL_C_VERSION__, {std} on {}", d.kind);
        }
    });
}

/// The atomic orders and scopes the device advertises work: seq_cst and acq_rel read-modify-
/// writes at device scope from every work-item of many work-groups, the implicit-order
/// functions, compare-exchange loops and fences.
#[test]
fn advertised_atomic_orders_and_scopes_work() {
    const SRC: &str = r#"
        kernel void k(global atomic_int *counter, global atomic_int *maxv, global atomic_uint *bits,
                      global int *slots) {
            int i = get_global_id(0);
            int ticket = atomic_fetch_add_explicit(counter, 1, memory_order_seq_cst, memory_scope_device);
            slots[ticket] = i;
            atomic_fetch_max_explicit(maxv, i, memory_order_acq_rel, memory_scope_all_devices);
            uint old = atomic_load(bits);
            while (!atomic_compare_exchange_weak(bits, &old, old + 3u)) {}
            atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
            atomic_fetch_sub(counter, 0);
        }"#;
    let n = 4096usize;
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "-cl-std=CL3.0", "k");
        let counter = env.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
        let maxv = env.buffer_from(CL_MEM_READ_WRITE, &[-1i32]);
        let bits = env.buffer_from(CL_MEM_READ_WRITE, &[0u32]);
        let slots = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1i32; n]);
        for (i, m) in [&counter, &maxv, &bits, &slots].into_iter().enumerate() {
            k.set_mem(i as cl_uint, m);
        }
        env.run(&k, &[n], Some(&[64]));
        assert_eq!(env.read::<i32>(&counter, 1)[0], n as i32, "on {}", d.kind);
        assert_eq!(env.read::<i32>(&maxv, 1)[0], n as i32 - 1, "on {}", d.kind);
        assert_eq!(env.read::<u32>(&bits, 1)[0], 3 * n as u32, "on {}", d.kind);
        let mut seen = env.read::<i32>(&slots, n);
        seen.sort_unstable();
        assert!(seen.iter().enumerate().all(|(i, &v)| v == i as i32), "every ticket once, on {}", d.kind);
    });
}

/// The lines the compiler puts ahead of the source (undefining feature macros) leave the
/// build log's line numbers those of the application's source, byte-order mark or not.
#[test]
fn build_log_lines_are_the_sources() {
    for_each_device(|d| {
        let env = d.env();
        for bom in ["", "\u{feff}"] {
            let src = format!("{bom}kernel void k(global int *o) {{\n  o[0] = 1;\n  o[1] = undeclared_name;\n}}\n");
            let error = env.try_build(&src, "").expect_err("undeclared identifier");
            assert_eq!(error.code, CL_BUILD_PROGRAM_FAILURE);
            assert!(error.log.contains(":3:"), "{bom:?} on {}: {}", d.kind, error.log);
            assert!(error.log.contains("undeclared_name"), "{}", error.log);
            assert!(!error.log.contains("#undef"), "{}", error.log);
            assert!(!error.log.contains(":1:"), "{bom:?} on {}: {}", d.kind, error.log);
            env.build(&format!("{bom}kernel void fine(global int *o) {{ o[0] = 1; }}"), "");
        }
    });
}
