//! KernelInfo: argument names, source type names, qualifiers, address spaces, how each
//! argument is passed and where it sits in the argument block; kernel attributes.

mod front_common;

use front_common::*;
use softcl_compiler::front::opencl_c::compile_to_spirv;
use softcl_compiler::front::options::BuildOptions;
use softcl_compiler::kernel_info::{AccessQualifier, AddressSpace, ArgKind, TypeQualifiers};
use softcl_compiler::{load_spirv, Target};

const ATTRS: &str = "
struct pair { int a; float b; };
kernel __attribute__((reqd_work_group_size(8,4,1))) __attribute__((work_group_size_hint(16,1,1)))
__attribute__((vec_type_hint(uint2)))
void attrs(global const float * restrict in, global float4 *out, local int *tmp, constant uint *c,
           float s, float4 v, volatile global int *vol, uchar u, long l, int3 i3, struct pair pr) {}
__attribute__((intel_reqd_sub_group_size(16))) kernel void sg(global int *p) { p[0] = 1; }
__attribute__((vec_type_hint(float4))) kernel void plain(global int *p) { p[0] = 2; }
";

fn quals(is_const: bool, is_restrict: bool, is_volatile: bool) -> TypeQualifiers {
    TypeQualifiers { is_const, is_restrict, is_volatile, is_pipe: false }
}

#[test]
fn arguments_of_every_kind() {
    let program = build_with(ATTRS, "-cl-std=CL3.0");
    let info = program.kernel("attrs").expect("attrs");
    let names: Vec<&str> = info.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["in", "out", "tmp", "c", "s", "v", "vol", "u", "l", "i3", "pr"]);
    let types: Vec<&str> = info.args.iter().map(|a| a.type_name.as_str()).collect();
    assert_eq!(
        types,
        ["float*", "float4*", "int*", "uint*", "float", "float4", "int*", "uchar", "long", "int3", "struct pair"]
    );
    let spaces: Vec<AddressSpace> = info.args.iter().map(|a| a.address_space).collect();
    use AddressSpace::*;
    assert_eq!(spaces, [Global, Global, Local, Constant, Private, Private, Global, Private, Private, Private, Private]);
    let kinds: Vec<ArgKind> = info.args.iter().map(|a| a.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            ArgKind::Buffer { address_space: Global },
            ArgKind::Buffer { address_space: Global },
            ArgKind::Local,
            ArgKind::Buffer { address_space: Constant },
            ArgKind::Value,
            ArgKind::Value,
            ArgKind::Buffer { address_space: Global },
            ArgKind::Value,
            ArgKind::Value,
            ArgKind::Value,
            ArgKind::Value,
        ]
    );
    let qualifiers: Vec<TypeQualifiers> = info.args.iter().map(|a| a.qualifiers).collect();
    let none = quals(false, false, false);
    assert_eq!(
        qualifiers,
        [
            quals(true, true, false),
            none,
            none,
            quals(true, false, false),
            none,
            none,
            quals(false, false, true),
            none,
            none,
            none,
            none
        ]
    );
    assert!(info.args.iter().all(|a| a.access == AccessQualifier::None));
    let sizes: Vec<usize> = info.args.iter().map(|a| a.size).collect();
    assert_eq!(sizes, [8, 8, 8, 8, 4, 16, 8, 1, 8, 16, 8]);
    let aligns: Vec<usize> = info.args.iter().map(|a| a.align).collect();
    assert_eq!(aligns, [8, 8, 8, 8, 4, 16, 8, 1, 8, 16, 4]);
    // Each argument at the next offset aligned to its alignment.
    let offsets: Vec<usize> = info.args.iter().map(|a| a.offset).collect();
    assert_eq!(offsets, [0, 8, 16, 24, 32, 48, 64, 72, 80, 96, 112]);
    assert_eq!(info.arg_block_size, 120);
}

#[test]
fn attributes_in_source_form() {
    let program = build_with(ATTRS, "-cl-std=CL3.0");
    let attrs = program.kernel("attrs").unwrap();
    assert_eq!(attrs.reqd_work_group_size, Some([8, 4, 1]));
    assert_eq!(attrs.work_group_size_hint, Some([16, 1, 1]));
    // SPIR-V drops the signedness of the hint; the source spelling is restored.
    assert_eq!(attrs.vec_type_hint.as_deref(), Some("uint2"));
    assert_eq!(attrs.attributes, "reqd_work_group_size(8,4,1) work_group_size_hint(16,1,1) vec_type_hint(uint2)");
    let sg = program.kernel("sg").unwrap();
    assert_eq!(sg.reqd_sub_group_size, Some(16));
    assert_eq!(sg.attributes, "intel_reqd_sub_group_size(16)");
    assert_eq!(sg.reqd_work_group_size, None);
    let plain = program.kernel("plain").unwrap();
    assert_eq!(plain.attributes, "vec_type_hint(float4)");
    assert_eq!(plain.arg_block_size, 8);
    // Resources are left for the back end.
    assert_eq!((attrs.static_local_mem_size, attrs.private_mem_size, attrs.barrier_count), (0, 0, 0));
}

#[test]
fn kernels_built_from_il_report_no_attribute_string() {
    let target = Target::default();
    let options = BuildOptions::parse("-cl-std=CL3.0").unwrap();
    let bytes = compile_to_spirv(ATTRS, &options, &target).unwrap().bytes;
    let program = load_spirv(&bytes).unwrap();
    let attrs = program.kernel("attrs").unwrap();
    assert_eq!(attrs.attributes, "");
    assert_eq!(attrs.reqd_work_group_size, Some([8, 4, 1]));
    assert_eq!(attrs.vec_type_hint.as_deref(), Some("int2"));
}

#[test]
fn il_without_argument_strings_derives_type_names() {
    let target = Target::default();
    let options = BuildOptions::default();
    let bytes = compile_to_spirv(
        "kernel void k(global float *a, local int4 *b, constant char *c, float2 d, ulong e) { a[0] = d.x + e; }",
        &options,
        &target,
    )
    .unwrap()
    .bytes;
    // Drop every OpString (opcode 7): what IL from another producer looks like.
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut stripped = words[..5].to_vec();
    let mut index = 5;
    while index < words.len() {
        let count = (words[index] >> 16) as usize;
        if words[index] & 0xffff != 7 {
            stripped.extend_from_slice(&words[index..index + count]);
        }
        index += count;
    }
    assert!(stripped.len() < words.len());
    let bytes: Vec<u8> = stripped.iter().flat_map(|w| w.to_le_bytes()).collect();
    let program = load_spirv(&bytes).unwrap();
    let info = program.kernel("k").unwrap();
    let types: Vec<&str> = info.args.iter().map(|a| a.type_name.as_str()).collect();
    assert_eq!(types, ["float*", "uint4*", "uchar*", "float2", "ulong"]);
    let names: Vec<&str> = info.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    let offsets: Vec<usize> = info.args.iter().map(|a| a.offset).collect();
    assert_eq!(offsets, [0, 8, 16, 24, 32]);
    assert_eq!(info.arg_block_size, 40);
}

#[test]
fn several_kernels_and_a_kernel_calling_a_kernel() {
    let program = build(
        "kernel void inner(global int *p, int v) { p[get_global_id(0)] = v; }
         kernel void outer(global int *q) { inner(q, 7); }
         typedef struct { char c; double d; } padded_t;
         kernel void third(padded_t s, global double *o) { o[0] = s.d + s.c; }",
    );
    let names: Vec<&str> = program.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["inner", "outer", "third"]);
    let inner = program.kernel("inner").unwrap();
    assert_eq!(inner.args.iter().map(|a| (a.offset, a.size)).collect::<Vec<_>>(), [(0, 8), (8, 4)]);
    assert_eq!(inner.arg_block_size, 16);
    let third = program.kernel("third").unwrap();
    assert_eq!(third.args[0].type_name, "padded_t");
    assert_eq!((third.args[0].size, third.args[0].align), (16, 8));
    assert_eq!(third.args[1].offset, 16);
    // Kernel names are unique among the IR functions.
    let m = &program.module;
    let mut function_names: Vec<&str> = m.functions.iter().map(|(_, f)| f.name.as_str()).collect();
    function_names.sort_unstable();
    let count = function_names.len();
    function_names.dedup();
    assert_eq!(function_names.len(), count, "{function_names:?}");
    for kernel in &m.kernels {
        assert_eq!(m.functions[kernel.func].name, kernel.info.name);
    }
}

#[test]
fn image_and_sampler_arguments() {
    // The kernel uses the image functions, so that the program translates only with them.
    let program = build_with(
        "kernel void img(read_only image2d_t a, write_only image3d_t b, read_write image1d_array_t c,
                         sampler_t s, read_only image2d_array_t d, read_only image1d_buffer_t e,
                         global float4 *o) {
             o[0] = read_imagef(a, s, (float2)(0.5f)) + read_imagef(c, (int2)(0)) + read_imagef(d, s, (float4)(0.0f))
                    + read_imagef(e, 0);
             write_imagef(b, (int4)(0), o[1]);
         }",
        "-cl-std=CL3.0",
    );
    let info = program.kernel("img").expect("img");
    let types: Vec<&str> = info.args.iter().map(|a| a.type_name.as_str()).collect();
    assert_eq!(
        types,
        ["image2d_t", "image3d_t", "image1d_array_t", "sampler_t", "image2d_array_t", "image1d_buffer_t", "float4*"]
    );
    let access: Vec<AccessQualifier> = info.args.iter().map(|a| a.access).collect();
    use AccessQualifier::*;
    assert_eq!(access, [ReadOnly, WriteOnly, ReadWrite, None, ReadOnly, ReadOnly, None]);
    let kinds: Vec<ArgKind> = info.args.iter().map(|a| a.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            ArgKind::Image,
            ArgKind::Image,
            ArgKind::Image,
            ArgKind::Sampler,
            ArgKind::Image,
            ArgKind::Image,
            ArgKind::Buffer { address_space: AddressSpace::Global }
        ]
    );
    assert!(info.args[..6].iter().all(|a| a.size == 8), "image and sampler arguments are 8 bytes");
}
