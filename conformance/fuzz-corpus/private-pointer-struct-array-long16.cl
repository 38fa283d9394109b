// softcl-fuzz regression kernel: seed 20 (softcl-fuzz --emit 20 --without neighbours), reduced by softcl-fuzz
// caught: a private pointer retargeted to a private array element (`pp = &p0[1]` after `int *pp = &i0`) next to stores to members of an array of private structs holding a `long16` (`sa[l & 1].m3 = ...`): wrong results at forced widths and on the Gen device. It passes without the retarget (reading `p0[1]` directly), and also with the `long16` member made `long8` or `int16`: the pointer defect of private-pointer-*.cl, shown or hidden by the private memory layout; recheck it after the fix of misaligned member stores in structs with long16 too
// failed: mismatch on cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16
// fixed: the work-item analysis followed a private pointer variable's stores only until it was not uniform, keeping the first target's stride (see private-pointer-two-targets.cl)
// global: 111
// local: 33
// data: 4210981483764132078
#define NITEMS 111
#define LSZ 33
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    float4 m0;
    float4 m1;
    long16 m2;
    uint m3;
    int m4;
} S0;
static uint hf3(uint a, int b) {
    uint r = a ^ 0x5bd1e995u;
    int x = b;
    return r ^ (uint)x;
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i2 = 2;
    uint u0 = 0u;
    int p0[3] = { 0 };
    int4 v0 = (int4)(0);
    uint4 w0 = (uint4)(0);
    S0 s0 = { .m0 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m2 = (long16)((long)in[NITEMS - 1 - gid]), .m3 = u0, .m4 = (int)abs(in[NITEMS - 1 - gid]) };
    S0 s1 = { .m0 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m1 = (float4)(0.25f, -1.0f, 3.5f, 0.0f), .m2 = (long16)((long)i2), .m3 = as_uint(add_sat(as_char4(w0.s2), as_char4((uint)buf[gid * 4 + (s0.m3 & 3u)]))), .m4 = select(i0, in[w0.s2 % NITEMS], l) };
    S0 sa[2] = { s0, s0 };
    int *pp = &i0;
    S0 *ps = &s0;
    if (all(v0 == v0.wzyx) != 0) {
        h = mix(h, (uint)grp);
    } else {
        s0.m3 = hf3((uint)(int)(uint)sa[l & 1].m2.s0, in[gid]);
    }
    sa[l & 1].m3 = mad24(as_uint(rotate(as_uchar4(sa[0].m3), (uchar4)(1, 2, 3, 4))) & 0xfffu, popcount(mad24(sa[l & 1].m3 & 0xfffu, sa[0].m3 & 0xfffu, kb)) & 0xfffu, (hf3((uint)sa[l & 1].m2.s6, i2) - 0x64772b03u));
    sa[0].m3 = (uint)(int)(fmax((((float)((int)(ps->m3 & 0x1ffu) - 256) + ((-3.0f) * (-0.0f))) + (ps->m0.s2 * 0.25f)), (((sa[l & 1].m0.s3 * 0.5f) - (s1.m1.s2 * 0.5f)) + s0.m1.s1)));
    pp = &p0[1];
    p0[(l < 3 ? l : 2)] = in[0u % NITEMS];
    h = mix(h, (uint)(*pp));
    h = mix(h, sa[l & 1].m3);
    out[gid] = h;
}
