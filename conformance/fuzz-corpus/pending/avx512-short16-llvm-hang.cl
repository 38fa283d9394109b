// softcl-fuzz kernel: seed 47304 (softcl-fuzz --seed 47145, on an AVX-512 host), not reduced
// fails: timeout on cpu-w16 and gen-simd16 on AVX-512 hosts: LLVM 22's code generation loops for ever on its <256 x i16> values (short16 at 16 lanes) in the 512-bit form; compiled with 256-bit vectors legal, as the workaround for byte vectors does, it passes at 16 lanes but the same legality at 8 lanes (<128 x i16>) loops LLVM's DAG combiner instead, where the plain form compiles
// global: 42
// local: 17
// data: 18149415873642937710
#define NITEMS 42
#define LSZ 17
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
    int m0[3];
    int *m1;
    volatile int m2;
    short m3;
} S0;
static S0 hs1(S0 v, uint a) {
    int x = (int)a;
    if ((!687203263) != 0) {
        return v;
    }
    (*v.m1) = (!((!(*v.m1)) >= v.m2));
    a ^= clamp((~0xf8127438u), min((uint)(*v.m1), (uint)v.m0[((uint)(int)v.m3 % 3u)]), max((uint)(*v.m1), (uint)v.m0[((uint)(int)v.m3 % 3u)]));
    return v;
}
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
global int gtab[8] = { -485, -58, 46, -847, 753, 459, 531, 367 };
global int *gtp = &gtab[2];
global int gslot[NITEMS];
global long g64[NITEMS];
static int gspace(int *p, int v) {
    *p = (int)((uint)*p + (uint)v);
    return (int)((uint)get_fence(p) * 1000u + (uint)(to_global(p) != 0) * 100u
        + (uint)(to_local(p) != 0) * 10u + (uint)(to_private(p) != 0) + (uint)*p);
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int lx = (int)get_local_id(0);
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = (!in[0x10000u % NITEMS]);
    int i1 = in[NITEMS - 1 - gid];
    int i2 = buf[gid * 4 + 2];
    uint u0 = (min((uint)buf[gid * 4 + ((uint)i1 & 3u)], (uint)i0) ^ ((uint)(gid + 1 < NITEMS ? in[gid + 1] : -542658969) ^ (uint)i2));
    uint u1 = clamp(((uint)in[NITEMS - 1 - gid] * (uint)i2), min((uint)in[clamp(min(max(gid - 3, 3 - gid), 2 * (NITEMS - 1) - (gid - 3)), 0, NITEMS - 1)], (uint)i2), max((uint)in[clamp(min(max(gid - 3, 3 - gid), 2 * (NITEMS - 1) - (gid - 3)), 0, NITEMS - 1)], (uint)i2));
    int p0[4] = { i1, buf[gid * 4 + ((uint)i2 & 3u)], i1, i2 };
    int4 v0 = (int4)(i0, gid, -1, INT_MIN + l);
    uint4 w0 = rotate(((uint4)((uint)i2, u0, (uint)ka, (uint)i0)), (uint4)((uint)v0.s0));
    float4 f0 = (float4)((float)(gid & 255) - 128.0f, 0.25f, -3.0f, (float)(l & 15));
    float4 f1 = (float4)((float)((i0 & 511) - 256), 1.5f, (float)(gid % 7), -0.5f);
    ulong q0 = upsample(u0, (uint)gid);
    S0 s0 = { .m0 = { 2, v0.s0 }, .m1 = &i0, .m2 = (i2 <= i1 ? buf[gid * 4 + ((uint)in[clamp(min(max(gid - 2, 2 - gid), 2 * (NITEMS - 1) - (gid - 2)), 0, NITEMS - 1)] & 3u)] : (int)f0.s0), .m3 = (short)(int)f0.s3 };
    S0 s1 = { .m0 = { (int)s0.m3, i1, (int)s0.m3 }, .m1 = &i1, .m2 = (int)abs(in[clamp(min(max(gid - 1, 1 - gid), 2 * (NITEMS - 1) - (gid - 1)), 0, NITEMS - 1)]), .m3 = (short)gx };
    S0 s2 = { .m1 = &p0[3], .m2 = mad24((in[min((gid % 17) + (gid / 17) * 18, NITEMS - 1)] & 0xfff) - 0x800, (in[clamp(min(max(gid - 1, 1 - gid), 2 * (NITEMS - 1) - (gid - 1)), 0, NITEMS - 1)] & 0xfff) - 0x800, (1 & 0x3fffffff) - 0x20000000), .m3 = (short)(l >= 1 && l - 1 < 3 ? s1.m0[l - 1] : ls) };
    S0 sa[2] = { s0, s0 };
    __global int *gb = buf + gid * 4;
    __local S0 ts[LSZ];
    ts[l] = s0;
    __local uint lc[8];
    if (l == 0) { uint lc0[8] = { 0x0u, 0x0u, 0xffffffffu, 0x0u, 0x7fffffffu, 0x80000000u, 0x0u, 0x0u }; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    gslot[gid] = any(v0 < ((int4)(s1.m0[((uint)q0 % 3u)], (*s0.m1), (*s0.m1), buf[gid * 4 + ((uint)(*gtp) & 3u)])));
    __local int ga[LSZ];
    ga[l] = (gid + 1 < NITEMS ? in[gid + 1] : (int)sa[1].m3);
    { int gq = gspace(&i1, buf[gid * 4 + ((uint)((gid & 1) != 0 ? in[gid - 1] : in[gid]) & 3u)]); i1 ^= gq; }
    { int gq = gspace(gb + 3, (s1.m2 >> ((uint)-100 & 31u))); i0 ^= gq; }
    { int gq = gspace(&gslot[gid], max((l >= 2 && l - 2 < 3 ? s1.m0[l - 2] : i2), (int)sa[l & 1].m3)); i0 ^= gq; }
    { int gq = gspace(&i0, lx); i1 ^= gq; }
    i0 ^= (int)(atom_or((volatile __global long *)&g64[gid], (long)((ulong)(uint)((int)sa[0].m3) << 20)) >> 7);
    i1 ^= (int)(atom_xor((volatile __global long *)&g64[gid], (long)((ulong)(uint)((int)w0.s2) << 20)) >> 7);
    i1 ^= gslot[gid] + ga[l] + (int)(uint)(g64[gid] >> 9);
    ts[l].m2 = v0.s0;
    h = mix(h, (uint)-100);
    sa[1].m2 = (l < (ls >> 1) ? v0.s1 : (int)sa[0].m3);
    s2.m0[(3 - 1 - l % 3)] = ((l == 0) || (v0.s3 >= i1) ? (ts[l].m2 <= (*ts[l].m1)) : (!s0.m0[(3 - 1 - l % 3)]));
    if (gid >= 1) {
        sa[0].m2 = in[gid - 1];
    }
    if (gid >= 3) {
        i0 = (int)((uint)i0 ^ (uint)in[gid - 3]);
    }
    f1 = clamp(floor((f0 + f1.yxwz) * 4.0f) * 0.25f, -256.0f, 256.0f);
    s0.m2 ^= mul24((gx & 0xfff) - 0x800, ((l < (ls >> 1) ? buf[gid * 4 + (u1 & 3u)] : gy) & 0xfff) - 0x800);
    if (((1.75f - (f1.s0 * 0.5f)) + f0.s2) == ((f0.s1 * f1.s1) - ((-0.0f) * 0.5f))) {
        v0 = (select(((int4)(buf[gid * 4 + ((uint)v0.s3 & 3u)])), ((int4)(gtab[0])), ((int4)(buf[gid * 4 + ((uint)v0.s3 & 3u)])) < ((int4)(gtab[0]))) ^ as_int4(w0));
    }
    if (gid >= 2 && (31u < (uint)(gid + 2 < NITEMS ? in[gid + 2] : s1.m2))) {
        i0 = in[gid - 2];
    }
    if (gid + 1 < NITEMS) {
        (*s1.m1) = (int)((uint)(*s1.m1) ^ (uint)in[gid + 1]);
    }
    ts[l] = s2;
    s0.m2 = clamp((!((*sa[l & 1].m1) >> (u0 & 31u))), min(sa[0].m2, in[(uint)q0 % NITEMS]), max(sa[0].m2, in[(uint)q0 % NITEMS]));
    if (min((int)abs(buf[gid * 4 + ((uint)q0 & 3u)]), ((*sa[l & 1].m1) == v0.s3 ? (int)f0.s3 : (*s2.m1))) != 0) {
        h = mix(h, (uint)convert_int_rtn(fmax((((float)((int)(u1 & 0x1ffu) - 256) - f1.s2) + ((-3.0f) * f0.s0)), 1.75f)));
    }
    q0 = mul_hi((ulong)kb, (ulong)w0.s0 << 32);
    h = mix(h, (popcount(u1) * mad24((s0.m2 != 0 ? (uint)0 : (uint)q0) & 0xfffu, (u0 | (uint)s2.m2) & 0xfffu, mul24((uint)in[clamp(min(max(gid - 3, 3 - gid), 2 * (NITEMS - 1) - (gid - 3)), 0, NITEMS - 1)] & 0xfffu, u0 & 0xfffu))));
    h = mix(h, (l < (ls >> 1) ? ((uint)q0 * ((uint)sa[l & 1].m2 * (uint)((gid & 1) != 0 ? in[gid - 1] : in[gid]))) : u1));
    h = mix(h, ((uint)convert_int_rtp(fmax(((float)((int)(u1 & 0x1ffu) - 256) + (-0.0f)), ((0.0f - (float)((int)(u1 & 0x1ffu) - 256)) - (-0.0f)))) * select((uint)gtab[0], ((uint)q0 >> ((uint)2 & 31u)), (u1 * (uint)sa[1].m2))));
    (*sa[1].m1) = (int)kb;
    i0 ^= (!(gid + 3 < NITEMS ? in[gid + 3] : (int)sa[1].m3));
    if ((gid & 3) == 1) {
        h = mix(h, (~((uint)(l >= 1 && l - 1 < 3 ? ts[l].m0[l - 1] : s1.m0[(l < 3 ? l : 2)]) - (uint)(q0 >> 32))));
        (*sa[l & 1].m1) = (int)((uint)(*sa[l & 1].m1) + (l == 0 ? mad24((uint)v0.s1 & 0xfffu, (uint)(int)s0.m3 & 0xfffu, (uint)(q0 >> 32)) : (~(uint)(*s1.m1))));
    } else {
        if ((((uint)(q0 >> 32) & 1u) != 0u) || (in[NITEMS - 1 - gid] != 0)) {
            u0 = u0 * (((uint)all(v0 > v0.xxyy) + select((uint)in[clamp(min(max(gid - 2, 2 - gid), 2 * (NITEMS - 1) - (gid - 2)), 0, NITEMS - 1)], (~u0), (uint)buf[gid * 4 + (u1 & 3u)])) | 1u) + 0x3c6ef372u;
            h = mix(h, (select((int)f1.s0, (i1 >> (u1 & 31u)), mul24((buf[gid * 4 + ((uint)(*sa[1].m1) & 3u)] & 0xfff) - 0x800, (in[mad24(gy, (int)get_global_size(0), gx)] & 0xfff) - 0x800)) != s0.m0[2] ? ((u0 ^ u1) + (0x80000000u * (uint)ts[l].m0[2])) : ((~u0) & (uint)(int)f1.s3)));
        } else {
            i0 = (int)((uint)(int)abs(INT_MAX) | (~(uint)buf[gid * 4 + ((uint)in[min((gid % 15) + (gid / 15) * 16, NITEMS - 1)] & 3u)]));
        }
        h = mix(h, clz((uint)buf[gid * 4 + (u0 & 3u)]));
        h = mix(h, (~((~u0) >> ((u1 * u0) & 31u))));
    }
    h = mix(h, (mad24(clamp(u0, min(0x39594e40u, (uint)(q0 >> 32)), max(0x39594e40u, (uint)(q0 >> 32))) & 0xfffu, (u0 ^ u0) & 0xfffu, ((uint)in[w0.s3 % NITEMS] * 0u)) * (~((uint)q0 | (uint)(gid >= 3 ? in[gid - 3] : (*s2.m1))))));
    if ((gid & 1) == 0) {
        if (((((float)((int)(u0 & 0x1ffu) - 256) - (f1.s1 * f0.s2)) + f1.s0) + (float)((int)(u0 & 0x1ffu) - 256)) > (f0.s2 + (float)((int)((uint)p0[(4 - 1 - l % 4)] & 0x1ffu) - 256))) {
            s0.m0[0] = (int)((u1 - 7u) * (~(uint)lx));
        } else {
            u1 ^= ((uint)convert_int_rte(fabs(((f1.s3 * 0.5f) - (f1.s2 * 0.5f)))) & rhadd((u1 ^ (uint)s2.m2), (0x6e3affe2u * (uint)q0)));
        }
    }
    ts[l].m2 = (int)((uint)ts[l].m2 + (uint)gtab[0]);
    h = mix(h, ((uint)convert_int_sat_rtn(floor((((f0.s2 - f0.s1) - (0.25f * 0.25f)) + ((float)((int)(w0.s0 & 0x1ffu) - 256) * 0.5f)))) >> ((((2u & 1u) != 0u ? (uint)-2 : (uint)((gid & 1) != 0 ? in[gid - 1] : in[gid])) * (0xffffffffu ^ u0)) & 31u)));
    u0 = (~(uint)(!-100));
    if (l == ls - 1) {
        vstore4((((int4)(in[(uint)(q0 >> 32) % NITEMS], in[min((gid % 19) + (gid / 19) * 22, NITEMS - 1)], (int)f0.s3, ls)) == as_int4(w0)), 0, buf + gid * 4);
        atomic_fetch_min_explicit((volatile __local atomic_int *)&lc[4], (int)abs(((gid + 3 < NITEMS ? in[gid + 3] : ts[l].m2) >> (w0.s1 & 31u))), memory_order_relaxed, memory_scope_work_group);
        (*sa[0].m1) ^= (any(v0 < v0) >= gtab[0]);
        f0.s3 = clamp(floor(fabs(f1.s1) * 4.0f) * 0.25f, -256.0f, 256.0f);
    } else {
        sa[l & 1].m2 = (int)((uint)sa[l & 1].m2 + (((uint)buf[gid * 4 + ((uint)sa[0].m2 & 3u)] + u0) - rhadd(u1, u1)));
        h = mix(h, clamp(3u, min(u0, u0), max(u0, u0)));
        s1.m3 = (short)(*s2.m1);
    }
    q0 = (q0 * (ulong)(u1 & u1) + (ulong)in[min((gid % 8) + (gid / 8) * 11, NITEMS - 1)]);
    s2.m0[2] = (!(int)(u0 << (3u & 31u)));
    if (gid >= 2 && (v0.s0 != 0)) {
        ts[l].m2 = in[gid - 2];
    }
    vstore4(v0, 0, p0);
    if ((((float)((int)((uint)v0.s1 & 0x1ffu) - 256) * f0.s0) - (-3.0f)) < (((((float)((int)(w0.s0 & 0x1ffu) - 256) * 0.5f) - (float)((int)(u0 & 0x1ffu) - 256)) - ((float)((int)((uint)v0.s2 & 0x1ffu) - 256) * (float)((int)((uint)q0 & 0x1ffu) - 256))) + (f1.s1 * f1.s3))) {
        q0 = (q0 ^ ((ulong)u1 << 29));
    } else {
        u0 += u1;
        vstore4(v0, 0, p0);
    }
    s2 = hs1(s2, (popcount(u1) | clamp((uint)q0, min((uint)v0.s3, w0.s3), max((uint)v0.s3, w0.s3))));
    sa[1].m2 = mad24((select((int)u1, (gid >= 1 && in[gid - 1] > v0.s0 ? (*s1.m1) : i2), in[(uint)v0.s1 % NITEMS]) & 0xfff) - 0x800, (l & 0xfff) - 0x800, (((int)sa[1].m3 <= sa[0].m2) & 0x3fffffff) - 0x20000000);
    u0 += w0.s2;
    h = mix(h, clamp((uint)gtab[0], min(w0.s1, u1), max(w0.s1, u1)));
    s0.m3 = (short)(int)kb;
    u1 += (uint)(int)f1.s1;
    u0 += (uint)v0.s1;
    atomic_dec(&lc[1]);
    buf[gid * 4 + ((uint)(q0 >> 32) & 3u)] = (l >= 1 && l - 1 < 3 ? s2.m0[l - 1] : s1.m2);
    u1 = (mad24((uint)v0.s0 & 0xfffu, u1 & 0xfffu, u1) ^ u0);
    (*sa[0].m1) ^= (!(in[min((gid % 10) + (gid / 10) * 12, NITEMS - 1)] > 15252702));
    u0 = u0 * (((((uint)(*s1.m1) ^ (uint)(int)sa[l & 1].m3) & (uint)buf[gid * 4 + (0xffffffffu & 3u)]) ^ u1) | 1u) + 0x3c6ef372u;
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)i2);
    h = mix(h, (uint)(*s0.m1));
    h = mix(h, (uint)s0.m2);
    h = mix(h, (uint)(*s1.m1));
    h = mix(h, (uint)s1.m2);
    h = mix(h, (uint)(*s2.m1));
    h = mix(h, (uint)s2.m2);
    h = mix(h, (uint)(*sa[0].m1));
    h = mix(h, (uint)sa[0].m2);
    h = mix(h, (uint)(*sa[1].m1));
    h = mix(h, (uint)sa[1].m2);
    h = mix(h, (uint)(*sa[l & 1].m1));
    h = mix(h, (uint)sa[l & 1].m2);
    h = mix(h, (uint)(*ts[l].m1));
    h = mix(h, (uint)ts[l].m2);
    h = mix(h, (uint)(int)s0.m3);
    h = mix(h, (uint)(int)s1.m3);
    h = mix(h, (uint)(int)s2.m3);
    h = mix(h, (uint)(int)sa[0].m3);
    h = mix(h, (uint)(int)sa[1].m3);
    h = mix(h, (uint)(int)sa[l & 1].m3);
    h = mix(h, (uint)(int)ts[l].m3);
    h = mix(h, u0);
    h = mix(h, u1);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)p0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)s0.m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)s1.m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)s2.m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)sa[0].m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)sa[1].m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)sa[l & 1].m0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)ts[l].m0[z]);
    h = mix(h, fold_i4(v0));
    h = mix(h, fold_i4(as_int4(w0)));
    h = mix(h, fold_i4(convert_int4(f0 * 4.0f)));
    h = mix(h, fold_i4(convert_int4(f1 * 4.0f)));
    h = mix(h, (uint)q0 ^ (uint)(q0 >> 32));
    out[gid] = h;
}
