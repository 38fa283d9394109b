// softcl-fuzz regression kernel: seed 50 (softcl-fuzz --emit 50 --without neighbours), reduced by softcl-fuzz
// caught: a valid kernel does not build in any configuration: llvm-spirv-15 dies on an assertion (`cast<ConstantInt>` of a non-constant in Casting.h) translating clang's output
// failed before the fix: build on cpu-scalar cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// global: 373
// local: 64
// offset: 13
// data: 4347341042137127475
#define NITEMS 373
#define LSZ 64
typedef struct {
    uint m0;
    uchar m1;
} S0;
typedef struct {
    uchar m0;
    int m1;
    int4 m2;
    int4 m3;
    S0 m4;
} S1;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    uint u0 = 0u;
    int4 v0 = (int4)(0);
    uint4 w0 = (uint4)(0);
    S1 s0 = { .m0 = (uchar)u0, .m2 = v0.s1302, .m3 = v0.xxyy, .m4 = { .m0 = (0x80000000u + (uint)i0), .m1 = (uchar)u0 } };
    S1 sa[2] = { s0, s0 };
    S1 *ps = &s0;
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (ls > 4) {
        ps->m4.m0 ^= (!((l & 3) != 2) ? (((uint)sa[l & 1].m1 >> ((uint)ka & 31u)) & (uint)sa[l & 1].m1) : (((uint)upsample((uchar)w0.s0, (uchar)ps->m4.m0) & 1u) != 0u ? (s0.m4.m0 * ps->m4.m0) : as_uint(add_sat(as_char4(s0.m4.m0), as_char4((uint)100)))));
        barrier(CLK_GLOBAL_MEM_FENCE);
    } else {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[gid] = h;
}
