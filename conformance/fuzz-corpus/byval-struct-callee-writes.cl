// softcl-fuzz regression kernel: seed 5108 (softcl-fuzz --seed 5108 --reduce-for pocl), reduced by softcl-fuzz
// caught: a struct passed by value to a helper that writes to its copy: clang passes the caller's own object when the argument is a plain copy of it (`S0 sa[2] = { s0, s0 }; sa[1] = hs4(sa[1], ...)` passes &s0), relying on the callee to copy a ByVal parameter; SoftCL did not, so the first call's writes reached s0 (every SoftCL configuration agreed on the wrong value, PoCL was right)
// failed: mismatch on pocl (every SoftCL configuration agreed with the wrong scalar run)
// global: 2
// local: 1
// data: 11598741792516296713
#define NITEMS 2
#define LSZ 1
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    uint m0;
    volatile int m1;
    long16 m2;
    short m3;
} S0;
static S0 hs4(S0 v, uint a) {
    int x = (int)a;
    for (int k5 = 3; k5 > 0; k5--) {
        int k6 = 0;
        v.m0 ^= (clamp((uint)k5, min((uint)v.m1, (uint)x), max((uint)v.m1, (uint)x)) * (uint)v.m1);
    }
    return v;
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i2 = 2;
    long16 x0 = (long16)(0);
    S0 s0 = { .m1 = i2, .m2 = (long16)((long)i2), .m3 = (short)100 };
    S0 sa[2] = { s0, s0 };
    sa[1] = hs4(sa[1], (uint)sa[l & 1].m2.s6);
    int k7 = 0;
    s0 = hs4(s0, select(mad24(sa[0].m0 & 0xfffu, sa[1].m0 & 0xfffu, 2u), (~(uint)sa[l & 1].m1), ((uint)x0.s8 + (uint)sa[l & 1].m2.s4)));
    h = mix(h, s0.m0);
    out[gid] = h;
}
