// softcl-fuzz regression kernel: seed 45110, reduced by softcl-fuzz
// caught: clang folds `x % -1 <= y` far enough that LLVM has a `bitreverse` of an i1, which llvm-spirv-15 writes as an OpBitReverse of a bool; the front end made it a BitReverse of a bool, which the IR validator rejects ("integer operand expected"): reversing one bit is the identity
// failed: build on every configuration
// global: 142
// local: 31
// offset: 27
// data: 933200987674950052
#define NITEMS 142
#define LSZ 31
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = (((-1 != 0 && (gy != INT_MIN || -1 != -1)) ? gy % -1 : gy) <= (int)(uint)((gid & 1) != 0 ? in[gid - 1] : in[gid]));
    uint u0 = ((uint)i0 != 0u ? (uint)i0 / (uint)i0 : (uint)i0);
    uint u1 = (u0 | (uint)i0);
    h = mix(h, u1);
    out[gid] = h;
}
