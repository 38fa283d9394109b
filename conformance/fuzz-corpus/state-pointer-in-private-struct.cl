// softcl-fuzz regression kernel: seed 3074 (softcl-fuzz --seed 3074 --reduce-for pocl), reduced by softcl-fuzz
// caught: a kernel with barriers keeping the address of a private variable in private structs (s0.m1 = &i1, copied into sa[2]): the variables live in the work-item state, whose pointer was marked noalias, so LLVM took the store through *s0.m1 and the load through *sa[l & 1].m1 for different memory and the scalar build read i1 before the update (0x80000001 where vector code and the hand computation give 0x80000002). PoCL 3.1 differs too (2)
// failed: mismatch on every vector configuration against the wrong scalar run
// not on pocl: PoCL 3.1 gives 2, losing the guarded update of i1
// global: 9 8
// local: 3 4
// offset: 14 28
// data: 6949132609785122672
// features: local structs struct_pointers volatile floats longs helpers returns barriers neighbours struct_arrays_of c11_atomics offsets
#define NITEMS 72
#define LSZ 12
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    float4 m0;
    int *m1;
    int *m2;
    int *m3;
    uint m4;
} S0;
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
    S0 s0 = { .m0 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m1 = &i1, .m2 = &i2, .m3 = &i0, .m4 = clamp(u0, min(u0, u0), max(u0, u0)) };
    S0 sa[2] = { s0, s0 };
    barrier(CLK_LOCAL_MEM_FENCE);
    (*s0.m1) ^= (int)(((uint)(*sa[l & 1].m1) - sa[l & 1].m4) | (u0 | (uint)(gid + 2 < NITEMS ? in[gid + 2] : (*sa[l & 1].m1))));
    if (gid >= 3) {
        (*sa[l & 1].m1) = (int)((uint)(*sa[l & 1].m1) ^ (uint)in[gid - 3]);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    h = mix(h, (uint)(*sa[l & 1].m1));
    out[gid] = h;
}
