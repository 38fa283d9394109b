// softcl-fuzz regression kernel: seed 120 (softcl-fuzz --emit 120 --without neighbours), reduced by softcl-fuzz, then by hand
// caught: vector code crashes (SIGSEGV) in a loop entered by some lanes only that calls a helper with a pointer to an element of a private array of structs (`hp1(&sa[1], ...)`, the helper reading an `int4` member through it) next to a divergent `switch`; without the call, or without the struct array, it runs. Perhaps the lane-0 span address again, on private memory
// failed before the fixes of its change (the cause was not pinned down): crash(SIGSEGV) on cpu-w4 cpu-w8 gen-simd8
// global: 60
// local: 15
// data: 4320809508444172268
#define NITEMS 60
#define LSZ 15
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
typedef struct {
    short m0;
    uchar m1;
    int4 m2;
} S0;
typedef struct {
    short m0;
    int m1;
    short m2;
} S1;
static void hp1(S0 *sp, int b) {
    b = ((any(sp->m2 < sp->m2.s1302) != 0) || ((int)sp->m1 != 0) ? b : (!(!b)));
    return;
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    const int lx = (int)get_local_id(0);
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    uint u0 = 0u;
    int p0[8] = { in[(uint)in[gid] % NITEMS], in[NITEMS - 1 - gid], 2, i1, in[(uint)i0 % NITEMS], i0, gy, lx };
    int4 v0 = (int4)(0);
    uint4 w0 = (uint4)(0);
    S0 s0 = { .m0 = (short)-440913641, .m1 = 0, .m2 = v0 };
    S1 s1 = { .m0 = (short)(INT_MIN + 1), .m1 = (int)u0, .m2 = 0 };
    S0 sa[2] = { s0, s0 };
    if (p0[(8 - 1 - l % 8)] == s1.m1) {
        int k5 = 0;
        do {
            hp1(&sa[1], s1.m1);
            switch (l & 3) {
                case 3:
                case 0:
                break;
                default:
                s0.m1 = (uchar)in[gid];
                ;
            }
        } while (++k5 < min(s1.m1, 6));
    }
    for (int k9 = 2; k9 > 0; k9--) {
    }
    h = mix(h, (uint)(int)s0.m1);
    out[gid] = h;
}
