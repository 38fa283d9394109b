// softcl-fuzz regression kernel: seed 161 (softcl-fuzz --emit 161 --without neighbours), reduced by softcl-fuzz
// caught: a valid kernel does not build in any configuration: clang -O2 leaves a `freeze` (here of a loop with a divergent `break` and a `select` of a byte rotation) that llvm-spirv-15 cannot translate ("InvalidInstruction: Can't translate llvm instruction: freeze i32"); -fno-slp-vectorize removed only the SLP vectorizer's freezes
// failed before the fix: build on cpu-scalar cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// global: 60
// local: 15
// offset: 9
// data: 6210923950471432430
#define NITEMS 60
#define LSZ 15
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    uint u0 = popcount((uint)grp);
    for (int k2 = 0; k2 < (int)(u0 & 7u); k2++) {
        if ((gid % 3 == 1) || (in[gid] != 0)) break;
    }
    h = mix(h, as_uint(as_uchar4((!(i1 != 0) ? ((uint)i0 ^ u0) : as_uint(rotate(as_uchar4((uint)(INT_MIN + 1)), (uchar4)(1, 2, 3, 4))))).wzyx));
    out[gid] = h;
}
