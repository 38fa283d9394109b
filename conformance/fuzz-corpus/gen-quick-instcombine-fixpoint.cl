// softcl-fuzz regression kernel: seed 46522, reduced
// caught: the Gen device's first tier ran LLVM's InstCombine named in a pipeline string, which checks that one run reached a fixpoint and aborts the process when it did not (LLVM ERROR: Instruction Combining on softcl_kernel_0 did not reach a fixpoint); the CPU configurations and PoCL fine
// failed: error (the child process exited) on gen-simd8 gen-simd16 gen-simd32
// fixed: the first tier's pipeline runs instcombine<no-verify-fixpoint>, as LLVM's default pipelines do
// global: 20
// local: 5
// offset: 22
// data: 9522545794166381911
#define NITEMS 20
#define LSZ 5
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    int *m0;
    float4 m1;
    int *m2;
    volatile int m3;
    int *m4;
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
    int4 v0 = (int4)(0);
    uint4 w0 = (uint4)(0);
    float4 f0 = (float4)(0.0f);
    float4 f1 = (float4)(0.0f);
    ulong q0 = 0;
    S0 s0 = { .m0 = &i0, .m1 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m2 = &i0, .m3 = all(v0 > ((int4)((int)f1.s1))), .m4 = &i0 };
    S0 s2 = { .m0 = &i2, .m1 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m2 = &i0, .m3 = (int)((uint)i2 << ((uint)(q0 >> 32) & 31u)), .m4 = &i1 };
    S0 sa[2] = { s0, s0 };
    __local S0 ts[LSZ];
    ts[l] = s0;
    int k3 = 0;
    do {
        if (1 != (int)mad24((uint)ka & 0xfffu, (uint)(*sa[0].m4) & 0xfffu, ((uint)(*s2.m0) - u0))) {
            if (gid >= 2 && in[gid - 2] > (*ts[l].m4)) break;
            (*s2.m4) = (int)((uint)(*s2.m4) + (clz(w0.s2) * (uint)(*s2.m0)));
            if (gid >= 2 && ((*ts[l].m0) != 0)) {
                sa[0].m3 = in[gid - 2];
            }
        }
    } while (++k3 < (l & 3) + 1);
    h = mix(h, (uint)(*s2.m4));
    out[gid] = h;
}
