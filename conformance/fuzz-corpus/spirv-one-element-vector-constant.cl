// softcl-fuzz regression kernel: seed 42313, reduced by softcl-fuzz
// caught: `as_char4((uint)-2)`: clang folds it into a bitcast of a one-element vector constant (`<1 x i32> <i32 -2>`), which llvm-spirv-15 refuses at -O0 (SPIR-V vectors have 2, 3, 4, 8 or 16 components), while at -O2 instcombine turns a long16 read of the kernel into a 32-element vector the translator refuses too; every rescue step started from the unoptimised module and failed
// failed: build on cpu-scalar cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32 (PoCL fine)
// fixed: the rescue rewrites such constants as the integer vectors they are (`<i8 -2, i8 -1, i8 -1, i8 -1>`) and, last, translates the module without optimisation passes
// global: 8
// local: 4
// offset: 32
// data: 11959997467420490397
#define NITEMS 8
#define LSZ 4
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_i4(int4 v) {
    return (uint)v.x ^ rotate((uint)v.y, 8u) ^ rotate((uint)v.z, 16u) ^ rotate((uint)v.w, 24u);
}
typedef struct {
    uint m0;
    int *m1;
    short m2;
    int m3;
} S0;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    int i2 = 2;
    uint u0 = 0u;
    uint u2 = ((uint)i2 * as_uint(add_sat(as_char4(u0), as_char4((uint)-2))));
    int p0[13] = { 0 };
    uint4 w0 = (uint4)(0);
    long16 x0 = (long16)(0);
    S0 s0 = { .m1 = &i1, .m2 = (short)i1, .m3 = (l < (ls >> 1) ? gx : i0) };
    S0 sa[2] = { s0, s0 };
    if (grp & 1) {
    } else {
        x0.s7 = (long)(i2 > p0[(l < 13 ? l : 12)]) * (long)sa[l & 1].m3;
    }
    w0 = (((uint4)((uint)(*s0.m1), (uint)gy, u0, (uint)(*s0.m1))) >> ((uint4)((uint)x0.s4) & 31u));
    h = mix(h, fold_i4(as_int4(w0)));
    out[gid] = h;
}
