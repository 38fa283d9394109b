// softcl-fuzz regression kernel: seed 94 (softcl-fuzz --emit 94 --without neighbours), reduced by softcl-fuzz, then by hand
// caught: a private pointer variable given two targets (`pp = &i0`, then `pp = &s0.m1[2]`) kept the shape of the first store only (lane copies 4 bytes apart: consecutive), so vector code read `*pp` as one vector load from lane copies of `i0`; the work-item analysis stopped following a register variable's stores once it was not uniform. Seeds 155, 189, 277 and the kernels of private-pointer-*.cl failed alike
// failed: mismatch on cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// global: 5 17
// local: 3 5
// offset: 17 4
// data: 10121022603726811806
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct { uint m0; int m1[4]; int m2[8]; } S0;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    S0 s0 = { .m1 = { 1, 1, buf[gid * 4 + ((uint)in[1] & 3u)] }, .m2={0} };
    S0 s2 = { .m0 = (uint)upsample((uchar)0, (uchar)(uint)buf[gid * 4]), .m2={0} };
    int *pp = &i0;
    pp = &s0.m1[2];
    h = mix(h, (uint)(*pp));
    if (buf[gid * 4] == 0) {
            s0.m0 += s2.m0;
            switch ((int)(s0.m0 % 5u)) {
                case 3:
                case 0:
                break;
                default:
                h = mix(h, s2.m0);
            }
    }
    out[gid] = h;
}
