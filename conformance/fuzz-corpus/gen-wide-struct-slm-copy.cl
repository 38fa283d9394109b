// softcl-fuzz regression kernel: seed 41283, not reduced (what made it slow is compile time, which a reducer keeping "slow" confuses with the machine's load)
// caught: private structs of 384 bytes (two long16 members) copied whole to and from a __local array at linear lanes: the Gen counting compared every dword of every lane at once (96 dwords x 8 lanes: a 768-lane SLM bank helper), code LLVM took 14 s to compile at SIMD8 and more than 600 s at SIMD16 and SIMD32; the CPU configurations and PoCL fine
// failed: timeout on gen-simd16 gen-simd32 (gen-simd8 13.75 s for 20 work-items)
// fixed: an SLM lane wider than four dwords is several messages of at most four dwords, costed alike; lanes spanning several lines are compared line by line in a loop
// global: 2 10
// local: 1 3
// offset: 21 20
// data: 4914048378627624381
#define NITEMS 20
#define LSZ 3
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_i4(int4 v) {
    return (uint)v.x ^ rotate((uint)v.y, 8u) ^ rotate((uint)v.z, 16u) ^ rotate((uint)v.w, 24u);
}
static uint fold_l16(long16 v) {
    ulong16 u = as_ulong16(v);
    ulong8 a = u.lo ^ rotate(u.hi, (ulong8)(7));
    ulong4 b = a.lo ^ rotate(a.hi, (ulong4)(11));
    ulong2 c = b.lo ^ rotate(b.hi, (ulong2)(13));
    ulong d = c.x ^ rotate(c.y, (ulong)17);
    return (uint)d ^ (uint)(d >> 32);
}
typedef struct {
    int *m0;
    int m1[5];
    long16 m2;
    long16 m3;
} S0;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int lx = (int)get_local_id(0);
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = (!(!-1));
    int i1 = buf[gid * 4 + 2];
    uint u0 = mad24((l < (ls >> 1) ? (uint)i1 : (uint)i0) & 0xfffu, 2u & 0xfffu, ((uint)i1 * (uint)gid));
    int p0[5];
    for (int z = 0; z < 5; z++) p0[z] = (int)((uint)gid * 31u + (uint)z) ^ i0;
    int4 v0 = (int4)(i0, gid, -1, INT_MIN + l);
    uint4 w0 = convert_uint4(((int4)((((int4)((gid + 1 < NITEMS ? in[gid + 1] : i1)))).hi, (v0.xxyy).lo)));
    float4 f0 = (float4)((float)(gid & 255) - 128.0f, 0.25f, -3.0f, (float)(l & 15));
    float4 f1 = (float4)((float)((i0 & 511) - 256), 1.5f, (float)(gid % 7), -0.5f);
    ulong q0 = upsample(u0, (uint)gid);
    S0 s0 = { .m0 = &p0[1], .m1 = { v0.s2, gid, in[0x10000u % NITEMS], ka, buf[gid * 4 + (u0 & 3u)] }, .m2 = (long16)((long)gx), .m3 = (long16)((long)gx) };
    S0 s1 = { .m0 = &i0, .m2 = (long16)((long)in[(uint)i0 % NITEMS]), .m3 = (long16)((long)in[u0 % NITEMS]) };
    __global int *gb = buf + gid * 4;
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    __local S0 ts[LSZ];
    ts[l] = s0;
    __local uint lc[8];
    if (l == 0) { uint lc0[8] = { 0x0u, 0x0u, 0xffffffffu, 0x0u, 0x7fffffffu, 0x80000000u, 0x0u, 0x0u }; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    (*ts[l].m0) = (int)mul24(u0 & 0xfffu, lc[3] & 0xfffu);
    u0 = ((gid & 7) == 1 ? as_uint(convert_uchar4_sat(v0.s1302)) : mul24((w0.s0 + (uint)(*s1.m0)) & 0xfffu, 0x7fffffffu & 0xfffu));
    (*s0.m0) = (int)((uint)(*s0.m0) + as_uint(convert_uchar4_sat(v0.wzyx)));
    u0 = (l < 5 && s1.m1[l] > (*s0.m0) ? (~clz(lc[1])) : w0.s3);
    t[l] = (int)((uint)t[l] + (~w0.s0));
    t[l] = in[gid];
    h = mix(h, lc[6]);
    u0 = u0 * ((((u0 - (uint)t[l]) | u0) ^ (uint)(q0 >> 32)) | 1u) + 0x3c6ef372u;
    u0 += lc[7];
    (*s0.m0) ^= mad24(((*s1.m0) & 0xfff) - 0x800, ((buf[gid * 4 + ((uint)in[NITEMS - 1 - gid] & 3u)] <= v0.s2) & 0xfff) - 0x800, (ka & 0x3fffffff) - 0x20000000);
    i1 = (int)((uint)i1 + (uint)as_ushort2((uint)i1).y);
    i1 = clamp(any(v0 != ((int4)(i1, (gid >= 3 ? in[gid - 3] : (int)f1.s1), buf[gid * 4 + (u0 & 3u)], v0.s0))), min((INT_MIN + 1), (int)f1.s2), max((INT_MIN + 1), (int)f1.s2));
    (*s1.m0) ^= (int)((~u0) * select((uint)t[l], 0xaa96fd2au, u0));
    h = mix(h, as_uint(convert_short2_sat((int2)(t[l], (int)abs((int)abs(0))))));
    vstore4(v0, 0, s0.m1);
    (*s0.m0) = all(v0 != ((int4)((*s0.m0))));
    u0 = u0;
    f0 = clamp(floor(fmax(f1.wzyx, fabs(f1)) * 4.0f) * 0.25f, -256.0f, 256.0f);
    w0 = convert_uint4(clamp(((int4)(t[l], gx, lx, in[w0.s1 % NITEMS])), (int4)(-5), (int4)(100)));
    if (gid >= 1) {
        (*s0.m0) = (int)((uint)(*s0.m0) ^ (uint)in[gid - 1]);
    }
    atomic_sub(&cnt[0], (uint)i1);
    u0 = u0 * (((uint)(int)(fabs((f1.s2 + (float)((int)((uint)ts[l].m2.sa & 0x1ffu) - 256)))) + (u0 + u0)) | 1u) + 0x3c6ef372u;
    if (gid + 1 < NITEMS) {
        (*s1.m0) = (int)((uint)(*s1.m0) ^ (uint)in[gid + 1]);
    }
    p0[(l < 5 ? l : 4)] = l;
    s0 = ts[l];
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)(*s0.m0));
    h = mix(h, (uint)(*s1.m0));
    h = mix(h, (uint)(*ts[l].m0));
    h = mix(h, u0);
    for (int z = 0; z < 5; z++) h = mix(h, (uint)p0[z]);
    for (int z = 0; z < 5; z++) h = mix(h, (uint)s0.m1[z]);
    for (int z = 0; z < 5; z++) h = mix(h, (uint)s1.m1[z]);
    for (int z = 0; z < 5; z++) h = mix(h, (uint)ts[l].m1[z]);
    h = mix(h, fold_i4(v0));
    h = mix(h, fold_i4(as_int4(w0)));
    h = mix(h, fold_i4(convert_int4(f0 * 4.0f)));
    h = mix(h, fold_i4(convert_int4(f1 * 4.0f)));
    h = mix(h, (uint)q0 ^ (uint)(q0 >> 32));
    h = mix(h, fold_l16(s0.m2));
    h = mix(h, fold_l16(s0.m3));
    h = mix(h, fold_l16(s1.m2));
    h = mix(h, fold_l16(s1.m3));
    h = mix(h, fold_l16(ts[l].m2));
    h = mix(h, fold_l16(ts[l].m3));
    out[gid] = h;
}
