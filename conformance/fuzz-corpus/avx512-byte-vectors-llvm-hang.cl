// softcl-fuzz regression kernel: seed 47145 (softcl-fuzz --seed 47079, on an AVX-512 host), reduced by softcl-fuzz
// caught: LLVM 22's instruction selection for AVX-512BW looping for ever on convert_uchar4_sat of an int4 masked and multiplied as a uint at 16 lanes (<64 x i32> to <64 x i8>, an interleaving shuffle, a multiply): the build hung on cpu-auto and cpu-w16 (and seed 900006's on gen-simd16); such functions are now compiled with 256-bit vectors legal
// failed: timeout on cpu-auto, cpu-w16
// global: 165
// local: 48
// offset: 37
// data: 7150017294847269058
#define NITEMS 165
#define LSZ 48
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint hf1(uint a, int b) {
    uint r = a ^ 0x5bd1e995u;
    int x = b;
    r ^= (~mad24((~(uint)x) & 0xfffu, ((uint)x * (uint)x) & 0xfffu, rhadd(r, r)));
    for (int k2 = 0; k2 < 4; k2++) {
        b ^= INT_MAX;
        x = (int)(((int)((uint)b - (uint)b) != 0 ? a : (uint)b) ^ (uint)b);
    }
    return r ^ (uint)x;
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
    int i0 = buf[gid * 4 + 1];
    int i1 = (int)((__global const char *)in)[(((uint)i0 + (uint)i0)) % (4u * NITEMS)];
    int i2 = i0;
    uint u0 = (uint)i2;
    uint u1 = ((u0 ^ (uint)2) > hf1((uint)in[(uint)i2 % NITEMS], i0) ? (uint)0 : (~u0));
    int p0[4] = { i2, i0, i0, i1 };
    ulong q0 = upsample(u0, (uint)gid);
    int *pp = &i1;
    int *pa = &p0[2];
    __global int *gb = buf + gid * 4;
    __local uint lc[8];
    if (l == 0) { uint lc0[8] = { 0x0u, 0x0u, 0xffffffffu, 0x0u, 0x7fffffffu, 0x80000000u, 0x0u, 0x0u }; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }
    barrier(CLK_LOCAL_MEM_FENCE);
    if ((gid & 1) == 1) {
        i0 = (int)((uint)i0 + u1);
        i0 = (int)((uint)i0 + (uint)pa[((uint)i2 % 2u)]);
        { int sv = in[gid];
        i0 ^= (sub_group_non_uniform_reduce_max(sv) < sv) + (sub_group_non_uniform_reduce_min(sv) > sv) * 2; }
    } else {
        atomic_max((volatile __local int *)&lc[5], (int)select(((uint)i0 > (uint)(q0 >> 32) ? u0 : (uint)pa[1]), ((uint)i2 & (uint)grp), ((uint)q0 + u0)));
    }
    if (gid + 1 < NITEMS) {
        (*pp) = in[gid + 1];
    }
    u0 ^= as_uint(convert_uchar4_sat(((int4)(ls))));
    atomic_fetch_max_explicit((volatile __local atomic_int *)&lc[5], rhadd((!ls), mul_hi(pa[((uint)gid % 2u)], i1)), memory_order_relaxed, memory_scope_work_group);
    u0 += clamp(rotate((u1 + (uint)i2), clz((uint)q0)), min(u0, (uint)i0), max(u0, (uint)i0));
    h = mix(h, 3u);
    { int sv = (int)(uint)p0[(4 - 1 - l % 4)];
    i0 ^= (sub_group_non_uniform_reduce_max(sv) < sv) + (sub_group_non_uniform_reduce_min(sv) > sv) * 2; }
    u1 = hf1((uint)(INT_MIN + 1), select((!i0), mad24((2 & 0xfff) - 0x800, (p0[(4 - 1 - l % 4)] & 0xfff) - 0x800, (p0[(4 - 1 - l % 4)] & 0x3fffffff) - 0x20000000), (!in[(uint)i1 % NITEMS])));
    if ((int)(max(u1, (uint)buf[gid * 4 + ((uint)q0 & 3u)]) << ((uint)i2 & 31u)) != 0) {
        i0 = (int)((uint)i0 + as_uint(rotate(as_uchar4(u0), (uchar4)(1, 2, 3, 4))));
    }
    p0[0] = 269849698;
    { int sc = ((((uint)grp ^ (uint)i1) ^ (uint)in[NITEMS - 1 - gid]) & 1u) != 0u;
    i0 ^= (int)(sub_group_ballot_bit_count(sub_group_ballot(sc)) - sub_group_non_uniform_reduce_add(sc ? 1u : 0u)); }
    h = mix(h, (u0 | hf1(mad24(u0 & 0xfffu, u1 & 0xfffu, (uint)q0), (!buf[gid * 4 + (kb & 3u)]))));
    if ((!(int)(uint)INT_MIN) != 0) {
        u0 ^= (uint)(*pp);
    }
    u0 = u0 * ((uint)i2 | 1u) + 0x3c6ef372u;
    buf[gid * 4 + 3 - (l & 3)] = (int)sub_sat((uint)in[(uint)in[NITEMS - 1 - gid] % NITEMS], popcount((uint)i1));
    u1 += (uint)(*pp);
    i2 = (int)((uint)i2 + (u1 | (i2 != 0 ? u0 : (uint)3)));
    atomic_xor(&lc[7], (((gid + 2 < NITEMS ? in[gid + 2] : (gid + 1 < NITEMS ? in[gid + 1] : l)) != 0 ? (uint)q0 : kb) * (uint)(q0 >> 32)));
    h = mix(h, u0);
    u0 = u0 * ((uint)in[NITEMS - 1 - gid] | 1u) + 0x3c6ef372u;
    { uint sv = mad24(as_uint(convert_uchar4_sat(((int4)(i2, i0, in[u1 % NITEMS], i2)))) & 0xfffu, u0 & 0xfffu, (uint)(*pp));
    i0 ^= (int)(sub_group_non_uniform_scan_inclusive_add(sv) - sub_group_non_uniform_scan_exclusive_add(sv) - sv); }
    u0 += (((uint)(*pp) ^ hf1((uint)i0, gy)) + (uint)(pa[(2 - 1 - l % 2)] != 0 ? ka : buf[gid * 4 + (0x80000000u & 3u)]));
    if (((i2 > pa[(2 - 1 - l % 2)]) == (buf[gid * 4 + ((uint)gx & 3u)] >= i2)) && (l < 4 && p0[l] > in[(uint)pa[(l < 2 ? l : 1)] % NITEMS])) {
        for (int k3 = 0; k3 < min(grp, 6); k3++) {
            u1 = ((((uint)i0 * u0) ^ (u0 * 0x2b18535eu)) + mul24((1u * (uint)i1) & 0xfffu, (uint)i1 & 0xfffu));
            { int sc = !(((u1 >> ((uint)i0 & 31u)) & 1u) != 0u);
            i0 ^= (int)(sub_group_ballot_bit_count(sub_group_ballot(sc)) - sub_group_non_uniform_reduce_add(sc ? 1u : 0u)); }
            i2 ^= i2;
            u0 = (mul24(u1 & 0xfffu, u0 & 0xfffu) ^ mad24((u0 ^ (uint)i2) & 0xfffu, ((uint)i2 << ((uint)p0[1] & 31u)) & 0xfffu, u1));
            q0 = rotate((ulong)u1, (ulong)((uint)k3 & 63u));
            { int sv = gx;
            i0 ^= (sub_group_non_uniform_reduce_max(sv) < sv) + (sub_group_non_uniform_reduce_min(sv) > sv) * 2; }
        }
    } else {
        h = mix(h, ((uint)as_ushort2(7u).y - mad24(as_uint(convert_uchar4_sat(((int4)((gid + 1 < NITEMS ? in[gid + 1] : buf[gid * 4 + ((uint)p0[(l < 4 ? l : 3)] & 3u)]), ls, i0, in[(uint)i2 % NITEMS])))) & 0xfffu, ((uint)ka * u0) & 0xfffu, (uint)lx)));
    }
    h = mix(h, (uint)i0);
    h = mix(h, (uint)i1);
    h = mix(h, (uint)i2);
    h = mix(h, (uint)(*pp));
    h = mix(h, u0);
    h = mix(h, u1);
    for (int z = 0; z < 4; z++) h = mix(h, (uint)p0[z]);
    for (int z = 0; z < 2; z++) h = mix(h, (uint)pa[z]);
    h = mix(h, (uint)q0 ^ (uint)(q0 >> 32));
    out[gid] = h;
}
