// softcl-fuzz regression kernel: seed 44224, reduced by softcl-fuzz
// caught: a flag joined inside a divergent loop (whether `in[gid + 3]` was read) is also the condition of a branch after the loop; that branch's zone, linearized first, masked its block with the join's parameter, and the loop's linearization, which replaced the parameter in instructions only, left the mask naming a value no block declares (the lowering refused the kernel: "value v16 is used where its definition does not reach")
// failed: build on cpu-auto, cpu-w4, cpu-w8, cpu-w16
// global: 43
// local: 31
// offset: 3
// data: 11211061671354513879
#define NITEMS 43
#define LSZ 31
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_i4(int4 v) {
    return (uint)v.x ^ rotate((uint)v.y, 8u) ^ rotate((uint)v.z, 16u) ^ rotate((uint)v.w, 24u);
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = 0;
    int i1 = 1;
    int i2 = 2;
    int4 v0 = (int4)(0);
    ulong q0 = 0;
    int k5 = 0;
    do {
        if (gid >= 3) {
            v0 = vload4(0, in + (gid - 3));
        }
        if (gid + 3 < NITEMS) {
            i2 = in[gid + 3];
        }
    } while (++k5 < gid % 5);
    q0 = (q0 * (ulong)(uint)i2 + (ulong)(int)(uint)(gid + 3 < NITEMS ? in[gid + 3] : i0));
    buf[gid * 4 + ((uint)i1 & 3u)] = (((gid + 2 < NITEMS ? in[gid + 2] : i0) != 0 && (i1 != INT_MIN || (gid + 2 < NITEMS ? in[gid + 2] : i0) != -1)) ? i1 % (gid + 2 < NITEMS ? in[gid + 2] : i0) : i1);
    buf[gid * 4 + 3 - (l & 3)] = ka;
    h = mix(h, (uint)i2);
    h = mix(h, fold_i4(v0));
    h = mix(h, (uint)q0 ^ (uint)(q0 >> 32));
    out[gid] = h;
}
