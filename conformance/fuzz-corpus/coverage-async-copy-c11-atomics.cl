// softcl-fuzz kernel, seed 170 (softcl-fuzz --emit 170 --without neighbours)
// covers: async_work_group_copy, C11 atomic_fetch_*_explicit on __global and __local counters, structs with pointer members, a global offset
// caught: nothing yet (runs every configuration as a regression guard)
// global: 192
// local: 32
// offset: 4
// data: 675729292451675352
// features: branches loops local global_atomics private_arrays structs struct_pointers struct_arrays division returns barriers narrow_vectors async_copy c11_atomics offsets
#define NITEMS 192
#define LSZ 32
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
    int m0[4];
    uchar m1;
    short m2;
    int m3[2];
} S0;
typedef struct {
    uint m0;
    int m1[3];
    uchar m2;
} S1;
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int lx = (int)get_local_id(0);
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = in[gid];
    int i2 = (!(!buf[gid * 4 + ((uint)i0 & 3u)]));
    int i3 = in[NITEMS - 1 - gid];
    uint u0 = 0xdb8c117eu;
    uint u1 = (uint)(gid + 3 < NITEMS ? in[gid + 3] : gid);
    int p0[3] = { (gid + 2 < NITEMS ? in[gid + 2] : in[NITEMS - 1 - gid]), i1, -100 };
    S1 s0 = { .m0 = 0xfffffffeu, .m1 = { i1, i2, i2 }, .m2 = (uchar)(uint)i3 };
    S0 s1 = { .m0 = { i2, gx, ls }, .m1 = (uchar)2u, .m2 = (short)in[1u % NITEMS], .m3 = { i0 } };
    S1 s2 = { .m1 = { i3 }, .m2 = (uchar)(uint)i3 };
    __global int *gb = buf + gid * 4;
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    barrier(CLK_LOCAL_MEM_FENCE);
    u0 += (~(s2.m0 * u0));
    if (gid + 3 < NITEMS) {
        i1 = (int)((uint)i1 ^ (uint)in[gid + 3]);
    }
    i1 = (int)((uint)i1 + ((uint)s2.m1[2] >> (0x65a653beu & 31u)));
    u0 = u0 * ((rhadd((u1 + (uint)t[l]), (uint)i1) ^ select((u1 << ((uint)(int)s2.m2 & 31u)), ((uint)ls + u1), mul24((uint)gy & 0xfffu, s2.m0 & 0xfffu))) | 1u) + 0x3c6ef372u;
    s1.m1 = (uchar)(int)s2.m2;
    h = mix(h, (uint)-500093958);
    for (int k1 = 0; k1 < (int)((uint)buf[gid * 4 + ((uint)lx & 3u)] & 7u); k1++) {
        u1 += mul24((s2.m0 ^ (uint)s1.m3[(2 - 1 - l % 2)]) & 0xfffu, (((uint)(int)s0.m2 * (uint)(gid + 3 < NITEMS ? in[gid + 3] : in[gid])) + as_uint(convert_uchar4_sat(((int4)(in[(uint)in[s2.m0 % NITEMS] % NITEMS], -507885463, buf[gid * 4 + ((uint)i0 & 3u)], gx))))) & 0xfffu);
        s0.m2 = (uchar)i3;
        i3 = (int)((uint)i3 + clamp((uint)in[NITEMS - 1 - gid], min((uint)i3, (uint)i0), max((uint)i3, (uint)i0)));
        t[l] = (int)((uint)t[l] + hadd((uint)i3, as_uint(as_uchar4(s0.m0).wzyx)));
    }
    buf[gid * 4 + 3 - (l & 3)] = select(add_sat(i0, i0), select(i0, i3, (int)s2.m2), (ls > buf[gid * 4 + ((uint)i1 & 3u)]));
    u0 = (uint)buf[gid * 4 + ((uint)gx & 3u)];
    if (i2 == ((l < 2 && s1.m3[l] > INT_MIN ? ls : i3) <= (int)s1.m2)) {
        h = mix(h, as_uint(convert_short2_sat((int2)(i2, t[l]))));
        atomic_fetch_xor_explicit((volatile __global atomic_uint *)&cnt[7], mul24(kb & 0xfffu, (~0x8ac73002u) & 0xfffu), memory_order_relaxed, memory_scope_device);
    } else {
        h = mix(h, 1u);
        h = mix(h, ((u1 * (uint)lx) + (uint)(int)s0.m2));
        i0 = (int)((uint)i0 + s2.m0);
    }
    buf[gid * 4 + 3 - (l & 3)] = i1;
    if ((int)(uint)-42002960 > ((t[l] != 0 && (i1 != INT_MIN || t[l] != -1)) ? i1 % t[l] : i1)) {
        for (int k2 = 0; k2 < 5; k2++) {
            s2.m0 = (l == 0 ? max(as_uint(convert_uchar4_sat(((int4)((gid + 2 < NITEMS ? in[gid + 2] : in[s2.m0 % NITEMS]))))), clz((uint)buf[gid * 4 + ((uint)i0 & 3u)])) : max(((uint)lx << (kb & 31u)), s2.m0));
        }
    } else {
        if (((!(int)s1.m1) != 0) || (lx != 0)) {
            if (l > 0) {
                s0.m0 += 0x7fffffffu;
                s1.m0[(s0.m0 % 4u)] = (((gid & 1) == 1) || (gid % 3 == 0) ? clamp(i2, min(i0, ls), max(i0, ls)) : (int)(uint)i0);
            }
            i2 = (int)((uint)i2 + max((kb + (uint)gid), (uint)(gid + 3 < NITEMS ? in[gid + 3] : i0)));
            h = mix(h, ((uint)(gid + 3 < NITEMS ? in[gid + 3] : buf[gid * 4 + ((uint)l & 3u)]) << (((uint)i0 ^ (u0 * (uint)t[l])) & 31u)));
        } else {
            buf[gid * 4 + ((uint)gy & 3u)] = (i2 < (int)select(kb, (uint)gy, s0.m0));
            s1.m3[(2 - 1 - l % 2)] = max((l < (ls >> 1) ? in[2u % NITEMS] : i3), (int)mad24((uint)ka & 0xfffu, (uint)gx & 0xfffu, (uint)i0));
        }
        if ((int)(((uint)i3 & u1) ^ as_uint(as_uchar4(s2.m0).wzyx)) < mad24(((i0 != 0 ? (int)s1.m1 : i2) & 0xfff) - 0x800, (i3 & 0xfff) - 0x800, (!t[l]))) {
            s2 = s0;
            u1 ^= (s0.m0 + (clamp(s2.m0, min((uint)2, 2u), max((uint)2, 2u)) | mad24((uint)l & 0xfffu, u1 & 0xfffu, u1)));
            buf[gid * 4 + ((uint)s1.m0[2] & 3u)] = (((u1 << (s0.m0 & 31u)) & 1u) != 0u ? 100 : clamp(-100, min(-2, l), max(-2, l)));
            t[l] = min(i1, select(37505830, i2, i0));
        }
    }
    s0.m1[(3 - 1 - l % 3)] = i0;
    barrier(CLK_LOCAL_MEM_FENCE);
     {
        event_t ev = async_work_group_strided_copy(t, in + grp % 130, 32, 2, 0);
        wait_group_events(1, &ev);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    s2.m1[(3 - 1 - l % 3)] = ((((uint)i0 + s2.m0) & 1u) != 0u ? select(i2, i3, i2) : (int)(uint)(int)s1.m1);
    s2.m0 = s2.m0 * ((select(popcount((uint)in[NITEMS - 1 - gid]), ((uint)gid * (uint)s1.m0[1]), (uint)grp) | (((uint)i3 + (uint)i2) * mul24((uint)i2 & 0xfffu, s2.m0 & 0xfffu))) | 1u) + 0x3c6ef372u;
    i0 ^= (int)(uint)i3;
    for (int k3 = 0; k3 < (int)(0u % 6u); k3++) {
        s0.m0 += ((!select(in[3u % NITEMS], i2, (int)s2.m2)) != 0 ? clz((uint)i0) : (uint)l);
        s0.m1[0] = ((ka >> ((uint)i0 & 31u)) >> (clz(u0) & 31u));
    }
    p0[0] = (!in[u1 % NITEMS]);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    i0 = (int)abs((int)(((uint)i1 ^ (uint)l) * (2 != 0 ? (uint)in[(uint)i0 % NITEMS] : (uint)i2)));
    buf[gid * 4 + 3 - (l & 3)] = (!select(i0, buf[gid * 4 + (s2.m0 & 3u)], gy));
    s1.m3[((uint)gid % 2u)] = (buf[gid * 4 + ((uint)(int)s1.m1 & 3u)] < (int)abs(in[0xbf1fa825u % NITEMS]));
    s2.m0 = mad24((mul24((uint)i3 & 0xfffu, u0 & 0xfffu) << ((s0.m0 != 0u ? (uint)l % s0.m0 : 0u) & 31u)) & 0xfffu, (((uint)i3 << (u0 & 31u)) - mad24(0x80000000u & 0xfffu, (uint)i3 & 0xfffu, (uint)gid)) & 0xfffu, ((uint)l * (uint)grp));
    barrier(CLK_GLOBAL_MEM_FENCE);
    u0 += (uint)in[NITEMS - 1 - gid];
    u0 = u0 * (((~select(s2.m0, (uint)i1, s0.m0)) * ((uint)i3 << ((uint)(int)s1.m1 & 31u))) | 1u) + 0x3c6ef372u;
    h = mix(h, clz((uint)i1));
    h = mix(h, 0x10000u);
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)i2);
    h = mix(h, (uint)i3);
    h = mix(h, (uint)(int)s0.m2);
    h = mix(h, (uint)(int)s1.m1);
    h = mix(h, (uint)(int)s1.m2);
    h = mix(h, (uint)(int)s2.m2);
    h = mix(h, u0);
    h = mix(h, u1);
    h = mix(h, s0.m0);
    h = mix(h, s2.m0);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)p0[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)s0.m1[z]);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)s1.m0[z]);
    for (int z = 0; z < 2; z++) h = mix(h, (uint)s1.m3[z]);
    for (int z = 0; z < 3; z++) h = mix(h, (uint)s2.m1[z]);
    out[gid] = h;
}
