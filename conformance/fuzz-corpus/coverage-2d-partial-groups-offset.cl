// softcl-fuzz kernel, seed 99 (softcl-fuzz --emit 99 --without neighbours)
// covers: a 2D launch with partial work-groups (rows of the Gen device's linear-lanes variant) and a global offset, barriers in uniform branches, structs
// caught: nothing yet (runs every configuration as a regression guard)
// global: 10 5
// local: 5 5
// offset: 16 36
// data: 16180185434367679724
// features: branches loops switch local private_arrays structs struct_pointers struct_arrays volatile vectors division returns barriers struct_arrays_of offsets
#define NITEMS 50
#define LSZ 25
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
    uint m0;
    volatile int m1;
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
    int i0 = in[gid];
    int i1 = in[gid];
    uint u0 = (uint)i1;
    int p0[8] = { buf[gid * 4 + (u0 & 3u)], buf[gid * 4 + ((uint)i1 & 3u)], gid, ls, i1, i0, i1, i0 };
    int4 v0 = (int4)(i0, gid, -1, INT_MIN + l);
    uint4 w0 = (popcount(((uint4)((uint)i0, (uint)gid, u0, 1u))) + (uint4)((uint)l));
    S0 s0 = {  };
    S0 sa[2] = { s0, s0 };
    __global int *gb = buf + gid * 4;
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    barrier(CLK_LOCAL_MEM_FENCE);
    sa[l & 1].m0 = u0;
    p0[(8 - 1 - l % 8)] = t[l];
    i1 = (int)((uint)i1 + (uint)sa[1].m1);
    v0 = vload4(1, p0);
    if (ka != 0) {
        for (int k1 = 0; k1 < (l & 3) + 1; k1++) {
             {
                int k2 = 0;
                do {
                    vstore4(shuffle(v0.s1302, as_uint4(v0.s1302) & 3u), 0, buf + gid * 4);
                    sa[1].m1 ^= (int)(uint)k1;
                    h = mix(h, (~(mad24(w0.s3 & 0xfffu, 0x7fffffffu & 0xfffu, 0x10000u) - ((uint)v0.s3 & (uint)sa[1].m1))));
                    if (gid + 4 <= NITEMS) {
                        v0 = vload4(0, in + gid);
                    }
                } while (++k2 < 2);
            }
        }
    }
    p0[7] = all(v0 < v0.s1302);
    s0.m1 = (int)((uint)s0.m1 + sa[1].m0);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (ka > 0) {
        if (select(v0.s3, in[u0 % NITEMS], any(v0 < ((int4)(t[l])))) != 0) {
            for (int k3 = 0; k3 < (l & 3) + 1; k3++) {
                 {
                    int k4 = 0;
                    do {
                        h = mix(h, sa[l & 1].m0);
                        for (int k5 = 0; k5 < (int)(0x10000u & 7u); k5++) {
                            if (gid + 4 <= NITEMS) {
                                v0 = vload4(0, in + gid);
                            }
                            sa[l & 1].m1 = k4;
                        }
                        p0[3] = clamp((int)(s0.m0 + w0.s1), min(-237364948, p0[(w0.s1 % 8u)]), max(-237364948, p0[(w0.s1 % 8u)]));
                        sa[l & 1] = sa[1];
                    } while (++k4 < (int)((uint)sa[0].m1 & 7u));
                }
                i1 ^= v0.s0;
                buf[gid * 4 + (sa[l & 1].m0 & 3u)] = ((s0.m1 != 0 && (t[l] != INT_MIN || s0.m1 != -1)) ? t[l] % s0.m1 : t[l]);
            }
        }
        sa[1].m1 = t[l];
        sa[1].m1 = (int)((uint)sa[1].m1 + (~(~w0.s1)));
        barrier(CLK_GLOBAL_MEM_FENCE);
    } else {
        if (l > 0) {
            p0[(l < 8 ? l : 7)] = (int)(~(0xc93c0a7bu * 0xfffffffeu));
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    sa[1].m0 = mad24((uint)sa[l & 1].m1 & 0xfffu, (~(~s0.m0)) & 0xfffu, w0.s3);
    barrier(CLK_LOCAL_MEM_FENCE);
    h = mix(h, ((((uint)in[(uint)p0[(l < 8 ? l : 7)] % NITEMS] + w0.s2) * (~s0.m0)) + select((uint)p0[(8 - 1 - l % 8)], (uint)gid, (uint)2)));
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)s0.m1);
    h = mix(h, (uint)sa[0].m1);
    h = mix(h, (uint)sa[1].m1);
    h = mix(h, (uint)sa[l & 1].m1);
    h = mix(h, u0);
    h = mix(h, s0.m0);
    h = mix(h, sa[0].m0);
    h = mix(h, sa[1].m0);
    h = mix(h, sa[l & 1].m0);
    for (int z = 0; z < 8; z++) h = mix(h, (uint)p0[z]);
    h = mix(h, fold_i4(v0));
    h = mix(h, fold_i4(as_int4(w0)));
    out[gid] = h;
}
