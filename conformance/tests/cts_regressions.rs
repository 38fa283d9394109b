//! Defects found by running the Khronos OpenCL CTS (basic, vectors, math_brute_force),
//! each reduced to a kernel run on both devices through the loader.

use softcl_conformance::*;

/// vectors/vec_align_struct: a vector member of a `__private` or `__local` struct sits at an
/// address aligned to the vector's size (3-component vectors: 4 components).
#[test]
fn struct_vector_member_is_aligned() {
    for scope in ["__private", "__local"] {
        for (ty, size) in [("char", 1usize), ("short", 2), ("int", 4), ("long", 8), ("float", 4)] {
            for n in [2usize, 3, 4, 8, 16] {
                let src = format!(
                    "typedef struct {{ char c; {ty}{n} vec; char post; }} S;\n\
                     __kernel void k(__global uint* dest) {{\n\
                       {scope} S test;\n\
                       dest[get_global_id(0)] = (uint)(({scope} uchar*)&(test.vec));\n\
                     }}"
                );
                let align = size * if n == 3 { 4 } else { n };
                for_each_device(|d| {
                    let env = d.env();
                    let k = env.kernel(&src, "", "k");
                    let out = env.buffer(CL_MEM_READ_WRITE, 64 * 4);
                    k.set_mem(0, &out);
                    env.run(&k, &[64], Some(&[16]));
                    let got: Vec<u32> = env.read(&out, 64);
                    for (i, a) in got.iter().enumerate() {
                        assert_eq!(*a as usize % align, 0, "{scope} {ty}{n} item {i}: address {a:#x} on {}", d.kind);
                    }
                });
            }
        }
    }
}

/// vectors/vec_align_packed_struct: in a packed `__local` struct (whose "initializer" from
/// llvm-spirv is a composite of undefs) a vector member follows the members before it with
/// no padding.
#[test]
fn packed_local_struct_member_offset() {
    const SRC: &str = "typedef struct __attribute__((packed)) { char c; short3 s; float4 vec; char post; } S;\n\
        __kernel void k(__global uint* dest) {\n\
          __local S test;\n\
          dest[get_global_id(0)] = (uint)((__local uchar*)&(test.vec) - (__local uchar*)&test);\n\
        }";
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "k");
        let out = env.buffer(CL_MEM_READ_WRITE, 16 * 4);
        k.set_mem(0, &out);
        env.run(&k, &[16], Some(&[8]));
        let got: Vec<u32> = env.read(&out, 16);
        assert!(got.iter().all(|&o| o == 1 + 8), "offsets {got:?} on {}", d.kind);
    });
}
