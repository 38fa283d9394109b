// softcl-fuzz regression kernel: seed 35 (softcl-fuzz --emit 35)
// caught: with barriers split as an IR pass, a state variable holding a private pointer (strided on one path, retargeted on another) kept the shape of its first store, and accesses through it were made consecutive at every vector width
// global: 128
// local: 64
// data: 3345167563320779988
#define NITEMS 128
#define LSZ 64
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
    long16 m0;
    int *m1;
    short m2;
} S0;
static S0 hs1(S0 v, uint a) {
    int x = (int)a;
    for (int k2 = 0; k2 < (int)(a & 7u); k2++) {
        v.m0.s9 = (long)(int)(a != 0u ? (uint)x / a : (uint)x) * (long)k2;
        a = (uint)x;
    }
    return v;
}
static int hg3(__global const int *g, int b) {
    int x = b;
    b = (int)(((uint)x >> ((uint)b & 31u)) >> ((((uint)b + 32u) ^ 0xfffffffeu) & 31u));
    for (int k4 = 0; k4 < 2; k4++) {
        x = (int)(uint)g[(uint)x % 128u];
    }
    return x;
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
    int i0 = in[NITEMS - 1 - gid];
    int i1 = in[NITEMS - 1 - gid];
    int i2 = buf[gid * 4 + 3];
    uint u0 = select((uint)gid, (uint)grp, ((uint)i2 ^ (uint)(INT_MIN + 1)));
    uint u1 = (uint)(int)((uint)i0 * (uint)i1);
    float4 f0 = (float4)((float)(gid & 255) - 128.0f, 0.25f, -3.0f, (float)(l & 15));
    float4 f1 = (float4)((float)((i0 & 511) - 256), 1.5f, (float)(gid % 7), -0.5f);
    ulong q0 = upsample(u0, (uint)gid);
    S0 s0 = { .m0 = (long16)((long)buf[gid * 4 + ((uint)i1 & 3u)]), .m1 = &i1, .m2 = (short)ka };
    S0 sa[2] = { s0, s0 };
    __global int *gb = buf + gid * 4;
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r5 = 0; r5 < (ls > 5) + 1; r5++) {
        for (int k6 = 0; k6 < (l & 3) + 1; k6++) {
            switch ((int)((u1 + (uint)(*sa[l & 1].m1)) % 5u)) {
                case 2:
                sa[0].m0.s0 = (long)(l > 0 ? (int)f0.s2 : ka) * (long)mul24((in[gid] & 0xfff) - 0x800, (ls & 0xfff) - 0x800);
                (*sa[1].m1) = (int)((uint)(*sa[1].m1) + ((~(uint)s0.m0.s6) * ((uint)(int)f1.s1 | u1)));
                case 4:
                break;
                ;
            }
            i2 = (int)s0.m2;
            (*sa[l & 1].m1) ^= (int)u0;
             {
                int k7 = 0;
                do {
                    (*s0.m1) = (!hg3(in, buf[gid * 4 + (0xffffffffu & 3u)]));
                    for (int k8 = (int)((uint)s0.m0.s8 % 6u); k8 > 0; k8--) {
                        u0 = u0 * (((((uint)s0.m0.s5 * u0) - select((uint)ka, (uint)t[LSZ - 1 - l], (uint)(int)sa[0].m2)) & ((~u0) >> ((l + 1 < ls && t[l + 1] != i1 ? u1 : u1) & 31u))) | 1u) + 0x3c6ef372u;
                        u1 = u1 * (u1 | 1u) + 0x3c6ef372u;
                        sa[1].m1 = &i0;
                        f0.s0 = clamp(floor((-(((f0.s2 * f1.s1) - (f1.s2 * 0.5f)))) * 4.0f) * 0.25f, -256.0f, 256.0f);
                    }
                    f1 = clamp(floor((f1.yxwz - f0.yxwz * ((float4)((float)((int)((uint)(q0 >> 32) & 0x1ffu) - 256), 256.0f, f1.s0, f0.s2))) * 4.0f) * 0.25f, -256.0f, 256.0f);
                } while (++k7 < gid % 5);
            }
        }
        (*sa[l & 1].m1) ^= (((int)f1.s0 >= in[NITEMS - 1 - gid]) != hadd((gid + 3 < NITEMS ? in[gid + 3] : t[(uint)buf[gid * 4 + ((uint)sa[1].m0.sb & 3u)] % LSZ]), r5));
        sa[0].m2 = (short)(gid + 2 < NITEMS ? in[gid + 2] : i1);
        (*sa[1].m1) = (int)((uint)(*sa[1].m1) + (uint)(int)(fmax((f0.s1 * (float)((int)(u1 & 0x1ffu) - 256)), ((float)((int)(0xd085b866u & 0x1ffu) - 256) + (float)((int)((uint)(*sa[l & 1].m1) & 0x1ffu) - 256)))));
        s0.m1 = &i2;
        (*sa[1].m1) = (int)as_uint(convert_char4(((int4)((int)f0.s2))));
        barrier(CLK_GLOBAL_MEM_FENCE);
        u1 += ((((uint)r5 + (uint)(*sa[l & 1].m1)) & ((uint)(int)f1.s2 + (uint)0)) + (uint)grp);
        t[l] = (int)((uint)t[l] + (~as_uint(convert_short2_sat((int2)(buf[gid * 4 + ((uint)s0.m0.sf & 3u)], (*sa[1].m1))))));
        u0 = 0xfffffffeu;
        sa[0].m2 = (short)hg3(in, (int)(uint)i1);
        h = mix(h, u1);
         {
            int k9 = 0;
            do {
                sa[0].m1 = &i0;
                t[l] = (int)((uint)t[l] + (gid % 3 == 2 ? mul24(u1 & 0xfffu, u1 & 0xfffu) : ((uint)(*sa[0].m1) * u1)));
                u1 += ((uint)hg3(in, (*sa[1].m1)) & ((uint)(*s0.m1) != 0u ? u0 % (uint)(*s0.m1) : 0u));
            } while (++k9 < (int)(1u % 6u));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    i2 = (int)((uint)i2 + ((gid & 1) == 0 ? ((uint)sa[0].m0.s9 << ((uint)t[l] & 31u)) : ((uint)(int)f1.s2 << ((uint)(q0 >> 32) & 31u))));
    u0 += (u1 >> (1u & 31u));
    barrier(CLK_GLOBAL_MEM_FENCE);
    (*sa[1].m1) = hg3(in, ((int)abs((int)f1.s0) >> ((uint)gid & 31u)));
    sa[0] = hs1(sa[0], (((*s0.m1) < in[(uint)-2 % NITEMS]) || (t[ls - 1 - l] != 0) ? mul24(u1 & 0xfffu, (uint)ls & 0xfffu) : (uint)l));
    buf[gid * 4 + 3 - (l & 3)] = (gid % 3 == 1 ? mad24(((*sa[0].m1) & 0xfff) - 0x800, ((int)f1.s3 & 0xfff) - 0x800, (*sa[0].m1)) : hg3(in, (*sa[0].m1)));
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)i2);
    h = mix(h, (uint)(*s0.m1));
    h = mix(h, (uint)(*sa[0].m1));
    h = mix(h, (uint)(*sa[1].m1));
    h = mix(h, (uint)(*sa[l & 1].m1));
    h = mix(h, (uint)(int)s0.m2);
    h = mix(h, (uint)(int)sa[0].m2);
    h = mix(h, (uint)(int)sa[1].m2);
    h = mix(h, (uint)(int)sa[l & 1].m2);
    h = mix(h, u0);
    h = mix(h, u1);
    h = mix(h, fold_i4(convert_int4(f0 * 4.0f)));
    h = mix(h, fold_i4(convert_int4(f1 * 4.0f)));
    h = mix(h, (uint)q0 ^ (uint)(q0 >> 32));
    h = mix(h, fold_l16(s0.m0));
    h = mix(h, fold_l16(sa[0].m0));
    h = mix(h, fold_l16(sa[1].m0));
    h = mix(h, fold_l16(sa[l & 1].m0));
    out[gid] = h;
}
