// softcl-fuzz regression kernel: seed 3108 (softcl-fuzz --seed 3108), reduced by softcl-fuzz
// caught: a valid kernel that did not build anywhere: clang -O2 leaves a `freeze` already in its early passes, so no prefix of the pipeline translates, and llvm-spirv-15 asserts on the unoptimised module (a vector of a length SPIR-V lacks). Seed 3244 failed alike
// failed: build on every configuration ("InvalidInstruction: Can't translate llvm instruction: freeze")
// global: 15 8
// local: 5 4
// data: 1397842748690361512
// features: branches loops local local_atomics global_atomics structs volatile longs helpers division neighbours pointers struct_arrays_of narrow_vectors async_copy c11_atomics
#define NITEMS 120
#define LSZ 20
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    int m0;
    uint m1;
} S0;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    ulong q0 = 0;
    S0 s0 = { .m0 = (i0 >> ((uint)l & 31u)), .m1 = ((uint)i0 + (uint)i1) };
    S0 sa[2] = { s0, s0 };
    int *pp = &i1;
    S0 *ps = &s0;
    __local uint lc[8];
    if (l == 0) { uint lc0[8] = { 0x0u, 0x0u, 0xffffffffu, 0x0u, 0x7fffffffu, 0x80000000u, 0x0u, 0x0u }; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    (*pp) ^= clamp(mul24((buf[gid * 4 + ((uint)(gid >= 3 ? in[gid - 3] : (gid + 2 < NITEMS ? in[gid + 2] : in[NITEMS - 1 - gid])) & 3u)] & 0xfff) - 0x800, (-701503336 & 0xfff) - 0x800), min((gid + 3 < NITEMS ? in[gid + 3] : ((gid & 1) != 0 ? in[gid - 1] : in[gid])), ps->m0), max((gid + 3 < NITEMS ? in[gid + 3] : ((gid & 1) != 0 ? in[gid - 1] : in[gid])), ps->m0));
    int k2 = 0;
    if ((((uint)-1 != 0u ? (uint)i1 % (uint)-1 : 0u) > mad24((uint)q0 & 0xfffu, sa[l & 1].m1 & 0xfffu, (uint)gx) ? mul24((i1 & 0xfff) - 0x800, (i1 & 0xfff) - 0x800) : (int)(lc[0] & s0.m1)) < (int)((uint)100 + mul24(sa[l & 1].m1 & 0xfffu, 7u & 0xfffu))) {
    }
    h = mix(h, as_uint(add_sat(as_char4(0x76bb9149u), as_char4(ps->m1))));
    h = mix(h, (uint)(*pp));
    out[gid] = h;
}
