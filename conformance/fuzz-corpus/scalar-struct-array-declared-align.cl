// softcl-fuzz regression kernel: seed 44970, reduced by softcl-fuzz
// caught: clang builds `(int4)(sa[0].m0, ...)` from a `<4 x i32>` load of `sa` (a private array of two 20-byte structs) claiming align 16, the alignment clang declares for the array; SoftCL placed the variable at its type's alignment (4) in the work-item state, and as the load goes through a pointer kept in the work-item state the align pass kept the claim: a 16-byte aligned load (vmovdqa) of an address 4 mod 16. A private variable now keeps the alignment its SPIR-V declares.
// failed: cpu-scalar (CL_CONFIG_USE_VECTORIZER=False) crashed with SIGSEGV
// global: 16 7
// local: 7 2
// data: 197077454626597507
#define NITEMS 112
#define LSZ 14
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_i4(int4 v) {
    return (uint)v.x ^ rotate((uint)v.y, 8u) ^ rotate((uint)v.z, 16u) ^ rotate((uint)v.w, 24u);
}
typedef struct {
    int m0;
    uint m1;
    volatile int m2;
    int m3;
    short m4;
} S0;
typedef struct {
    uchar m0;
    short m1;
    int m2;
} S1;
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
    int i2 = 2;
    int i3 = 3;
    uint u1 = 1u;
    int4 v0 = (int4)(0);
    uint4 w0 = (uint4)(0);
    ulong q0 = 0;
    S0 s0 = { .m1 = 0x10000u, .m2 = any(v0 != as_int4(w0)), .m4 = (short)i0 };
    S1 s1 = { .m0 = (uchar)w0.s1, .m1 = (short)i3, .m2 = mad24((s0.m2 & 0xfff) - 0x800, (l & 0xfff) - 0x800, (in[NITEMS - 1 - gid] & 0x3fffffff) - 0x20000000) };
    S0 s2 = { .m0 = (s0.m3 == s0.m0), .m1 = (u1 ^ (uint)0), .m2 = (int)s1.m0, .m3 = select(gy, i1, (gid + 1 < NITEMS ? in[gid + 1] : i1)), .m4 = (short)in[(uint)s0.m2 % NITEMS] };
    S0 sa[2] = { s0, s0 };
    __local int t[LSZ];
    for (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;
    __local S0 ts[LSZ];
    ts[l] = s0;
    __local uint lc[8];
    if (l == 0) { uint lc0[8] = { 0x0u, 0x0u, 0xffffffffu, 0x0u, 0x7fffffffu, 0x80000000u, 0x0u, 0x0u }; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);
    event_t ev = async_work_group_copy(t, in + (grp * 5) % 99, 14, 0);
    wait_group_events(1, &ev);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r4 = 0; r4 < 2; r4++) {
        v0 = v0.s3120;
        sa[0].m1 = mul24(as_uint(convert_uchar4_sat(((int4)(sa[0].m0, gid, sa[l & 1].m3, s1.m2)))) & 0xfffu, (v0.s1 != 0 ? (uint)buf[gid * 4 + ((uint)(q0 >> 32) & 3u)] : w0.s0) & 0xfffu);
        q0 = ((ulong)ts[l].m1 * (ulong)select(lc[3], s2.m1, (uint)438788833) + (ulong)(i2 >> (sa[1].m1 & 31u)));
        h = mix(h, ((uint)as_ushort2(sa[l & 1].m1).y << (as_uint(convert_char4(v0.zwxy)) & 31u)));
        barrier(CLK_GLOBAL_MEM_FENCE);
        sa[l & 1].m2 = (int)((uint)sa[l & 1].m2 + (uint)((int)ts[l].m4 < s2.m0));
        i0 = (int)((uint)i0 + (clamp(0xfffffffeu, min((uint)(q0 >> 32), (uint)q0), max((uint)(q0 >> 32), (uint)q0)) * (s2.m1 + 2u)));
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    h = mix(h, (uint)i0);
    h = mix(h, s0.m1);
    h = mix(h, fold_i4(v0));
    out[gid] = h;
}
