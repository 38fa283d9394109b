// softcl-fuzz regression kernel: seed 6138, reduced by softcl-fuzz
// caught: a divergent loop whose zone ends at the header of a second divergent loop's zone: the second zone, linearized first, gave its header a preheader, and the first zone's exit edges, now into the preheader, were never taken (the pass refused the kernel: "edges into blocks the zone's walk never reached")
// failed: build on cpu-auto, cpu-w4, cpu-w8, cpu-w16
// global: 6 2
// local: 2 2
// offset: 33 28
// data: 12983230329688869650
#define NITEMS 12
#define LSZ 4
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_l16(long16 v) {
    ulong16 u = as_ulong16(v);
    ulong8 a = u.lo ^ rotate(u.hi, (ulong8)(7));
    ulong4 b = a.lo ^ rotate(a.hi, (ulong4)(11));
    ulong2 c = b.lo ^ rotate(b.hi, (ulong2)(13));
    ulong d = c.x ^ rotate(c.y, (ulong)17);
    return (uint)d ^ (uint)(d >> 32);
}
typedef struct {
    uchar m0;
    int *m1;
    int *m2;
} S0;
typedef struct {
    int m0[2];
    int *m1;
} S1;
static int hg1(__global const int *g, int b) {
    int x = b;
    return x;
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int ls = (int)(get_local_size(0) * get_local_size(1));
    const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    uint u0 = 0u;
    uint u1 = 1u;
    long16 x0 = (long16)(0);
    S1 s0 = { .m0 = { i1, i0 }, .m1 = &i1 };
    S0 s1 = { .m1 = &i1, .m2 = &i0 };
    if (gid >= 2 && ((*s1.m1) != 0)) {
        (*s1.m2) = in[gid - 2];
    }
    if (gy != (int)((uint)x0.s6 ^ ((uint)in[gid] ^ (uint)x0.sb))) {
        x0 = as_long16(as_ulong16(x0) * (ulong16)((ulong)(uint)l) + (ulong16)((ulong)(long)-8));
    }
    if (mul24((i0 & 0xfff) - 0x800, ((grp >> ((uint)0 & 31u)) & 0xfff) - 0x800) != 0) {
        for (int k6 = 0; k6 < (int)((uint)x0.sc & 7u); k6++) {
            x0 = x0 >> (long16)((long)((uint)x0.sf & 63u));
        }
    } else {
        u0 = (select(mad24(u0 & 0xfffu, u0 & 0xfffu, (uint)gx), ((uint)3 * (uint)i1), as_uint(add_sat(as_char4(31u), as_char4(u0)))) ^ u1);
    }
    int k7 = 0;
    s0.m0[(l < 2 ? l : 1)] = (hg1(in, ((gid & 1) != 0 ? in[gid - 1] : in[gid])) == select((*s1.m2), ls, grp));
    int k9 = 0;
    do {
    } while (++k9 < (int)((uint)buf[gid * 4 + (u0 & 3u)] & 7u));
    int k11 = 0;
    do {
    } while (++k11 < 2);
    h = mix(h, fold_l16(x0));
    out[gid] = h;
}
