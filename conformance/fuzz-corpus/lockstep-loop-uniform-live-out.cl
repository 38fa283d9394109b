// softcl-fuzz regression kernel: seed 8022, reduced by softcl-fuzz
// caught: a loop whose lanes leave together (uniform trip count) linearized inside a zone: the value it leaves for the code after it, uniform before the pass, was kept under the leaving lanes' mask and so became varying, and a branch after the loop that the work-item analysis had taken as uniform was divergent in the linearized kernel, which then did not build ("divergent branches in vector code that was not linearized"). Such a kernel now runs scalar (the build log says "scalar after all"); the cause here, a uniform value stored to work-item state in a masked loop header (a store under a mask makes the variable varying), is not removed yet
// failed: build on cpu-auto, cpu-w4, cpu-w8, cpu-w16
// global: 10
// local: 2
// offset: 7
// data: 11850337161154778094
#define NITEMS 10
#define LSZ 2
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    long16 m0;
    int m1[2];
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
    int i3 = 3;
    uint u0 = 0u;
    uint u1 = 1u;
    ulong q0 = 0;
    S0 s0 = { .m0 = (long16)((long)i2) };
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r1 = 0; r1 < 2; r1++) {
        for (int k2 = 0; k2 < min(grp, 6); k2++) {
            u0 += (mad24((uint)i1 & 0xfffu, ((uint)buf[gid * 4 + (u1 & 3u)] >> ((uint)(q0 >> 32) & 31u)) & 0xfffu, (uint)q0) * ((l + 1 < ls && t[l + 1] != in[(uint)q0 % NITEMS] ? (uint)i2 : u0) + (u0 * (uint)i0)));
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        u1 = ((~((uint)s0.m0.sa + (uint)i3)) + u0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    h = mix(h, u1);
    out[gid] = h;
}
