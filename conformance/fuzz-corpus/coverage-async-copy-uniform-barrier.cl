// softcl-fuzz kernel, seed 78 (softcl-fuzz --emit 78 --without neighbours)
// covers: an async_work_group_copy phase, barriers on both sides of a branch uniform in the work-group, struct pointer members, a global offset
// caught: nothing yet (runs every configuration as a regression guard)
// global: 96
// local: 16
// offset: 21
// data: 2525645634947330794
// features: branches loops switch local global_atomics structs struct_arrays division barriers pointers narrow_vectors async_copy c11_atomics offsets
#define NITEMS 96
#define LSZ 16
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
    int m0;
    short m1;
} S0;
typedef struct {
    int m0[4];
    uint m1;
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
    int i0 = in[NITEMS - 1 - gid];
    int i1 = in[gid];
    int i2 = buf[gid * 4 + 1];
    uint u0 = ((uint)i2 != 0u ? (uint)l % (uint)i2 : 0u);
    uint u1 = (mul24((i0 & 0xfff) - 0x800, (i0 & 0xfff) - 0x800) != 0 ? rhadd(u0, (uint)buf[gid * 4 + ((uint)i1 & 3u)]) : mad24(0x9f4cf777u & 0xfffu, (uint)i0 & 0xfffu, u0));
    uint u2 = u1;
    S1 s0 = { .m0 = { ka, in[(uint)grp % NITEMS], buf[gid * 4 + ((uint)i2 & 3u)] }, .m1 = clamp(u2, min((uint)i0, (uint)i2), max((uint)i0, (uint)i2)), .m2 = (uchar)(uint)i1 };
    S1 s1 = { .m0 = { in[(uint)(int)s0.m2 % NITEMS] }, .m1 = select(u1, 1u, (uint)buf[gid * 4 + (u1 & 3u)]), .m2 = (uchar)u0 };
    S1 s2 = { .m1 = select((uint)ka, u0, 0x80000000u), .m2 = (uchar)(uint)lx };
    int *pp = &s2.m0[3];
    int *pa = &s0.m0[2];
    S1 *ps = &s0;
    __global int *gb = buf + gid * 4;
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    barrier(CLK_LOCAL_MEM_FENCE);
     {
        event_t ev = async_work_group_copy(t, in + (grp * 5) % 81, 16, 0);
        wait_group_events(1, &ev);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_group_id(0) == 0) {
        (*pp) = (int)((uint)(*pp) + s2.m1);
        h = mix(h, as_uint(add_sat(as_char4((uint)i0), as_char4(((i0 != 0 ? (uint)pa[0] : (uint)(int)s2.m2) >> (u0 & 31u))))));
        switch (((*pp) != 0 ? (*pp) : -100)) {
            case 1:
            t[l] = (int)((uint)t[l] + u2);
            break;
            case 2:
            h = mix(h, ((((uint)(int)s2.m2 & (uint)in[NITEMS - 1 - gid]) >> (clamp(kb, min((uint)in[u0 % NITEMS], (uint)pa[((uint)in[(uint)i2 % NITEMS] & 1u)]), max((uint)in[u0 % NITEMS], (uint)pa[((uint)in[(uint)i2 % NITEMS] & 1u)])) & 31u)) | ((~(uint)i0) & rhadd(u0, (uint)(gid + 1 < NITEMS ? in[gid + 1] : i1)))));
            break;
            ;
        }
        switch (gid % 4) {
            case -1:
            pp = &i0;
            for (int k1 = 0; k1 < min(ps->m0[(s0.m1 & 3u)], 6); k1++) {
                buf[gid * 4 + 3 - (l & 3)] = mul_hi((!-2), (int)(uint)in[gid]);
                i1 = clamp((clamp(i0, min(0, i0), max(0, i0)) >> ((uint)-279785001 & 31u)), min(in[NITEMS - 1 - gid], gx), max(in[NITEMS - 1 - gid], gx));
                i1 = (int)((uint)i1 + (0x58efaffau + s0.m1));
                if ((l & 3) != 2) continue;
            }
            break;
            case 4:
            for (int k2 = 2; k2 > 0; k2--) {
                h = mix(h, (uint)k2);
            }
            break;
            ;
        }
        t[l] = (int)((uint)t[l] + (~s1.m1));
        (*pp) ^= select(gy, (!t[l]), mul24((gx & 0xfff) - 0x800, (i1 & 0xfff) - 0x800));
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    } else {
        if (in[(uint)lx % NITEMS] != 0) {
            s1.m1 += (uint)in[NITEMS - 1 - gid];
            s0.m2 = (uchar)((gid & 3) == 0 ? clamp(s0.m0[(4 - 1 - l % 4)], min(t[l], ps->m0[((uint)t[l] % 4u)]), max(t[l], ps->m0[((uint)t[l] % 4u)])) : mul24(((int)ps->m2 & 0xfff) - 0x800, (i0 & 0xfff) - 0x800));
            i2 = (int)((uint)i2 + ((gy != 0 ? (uint)in[(uint)i0 % NITEMS] : 1u) ^ ((uint)(int)s0.m2 < (uint)i0 ? ps->m1 : s0.m1)));
            i2 = (int)((uint)i2 + (s1.m1 != 0u ? u2 % s1.m1 : 0u));
        }
        i0 = (int)(uint)i0;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    i2 = (int)((uint)i2 + as_uint(convert_char4(((int4)(i2, ps->m0[(l < 4 ? l : 3)], ls, i0)))));
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)i2);
    h = mix(h, (uint)(*pp));
    h = mix(h, (uint)(int)s0.m2);
    h = mix(h, (uint)(int)s1.m2);
    h = mix(h, (uint)(int)s2.m2);
    h = mix(h, (uint)(int)ps->m2);
    h = mix(h, u0);
    h = mix(h, u1);
    h = mix(h, u2);
    h = mix(h, s0.m1);
    h = mix(h, s1.m1);
    h = mix(h, s2.m1);
    h = mix(h, ps->m1);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)s0.m0[z]);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)s1.m0[z]);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)s2.m0[z]);
    for (int z = 0; z < 2; z++) h = mix(h, (uint)pa[z]);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)ps->m0[z]);
    out[gid] = h;
}
