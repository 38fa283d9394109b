// softcl-fuzz regression kernel: seed 3004 (softcl-fuzz --seed 3004), reduced by softcl-fuzz
// caught: nothing in SoftCL; it differed on PoCL only, and PoCL is wrong: a divergent switch with fall-through updating a private struct member, in a loop with barriers, loses the update (out[1] 0x29a8fa3a, as if s0.m4 stayed 0; SoftCL's 0x2747d7dd is mix(h, 0x3c6ef372), computed by hand)
// not on pocl: PoCL 3.1 loses the switch's update of s0.m4 in the loop with barriers
// global: 96
// local: 32
// offset: 27
// data: 13915007240266179878
// features: branches loops switch local local_atomics global_atomics private_arrays structs struct_arrays division returns barriers neighbours narrow_vectors c11_atomics offsets
#define NITEMS 96
#define LSZ 32
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    int m0[4];
    int m1[2];
    uint m2;
    uchar m3;
    uint m4;
} S1;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    int i2 = 2;
    uint u0 = 0u;
    uint u1 = 1u;
    S1 s0 = { .m1 = { i0 }, .m2 = (i1 > i1 ? (uint)i2 : u0) };
    S1 s1 = { .m0 = { i0 }, .m1 = { i2 }, .m2 = (((uint)0 & 1u) != 0u ? u1 : (uint)i1), .m3 = (uchar)(uint)i2 };
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r1 = 0; r1 < (ka & 1) + 1; r1++) {
        switch (l & 3) {
            case 1:
            case 3:
            s0.m4 = s0.m4 * ((uint)s1.m0[(l < 4 ? l : 3)] | 1u) + 0x3c6ef372u;
            case 2:
            case 0:
            ;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    h = mix(h, s0.m4);
    out[gid] = h;
}
