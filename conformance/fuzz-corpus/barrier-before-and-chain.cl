// softcl-fuzz regression kernel: seed 30003, reduced by lines and by hand
// caught: a barrier before the kernel's divergent branches counted as inside them, so every vector build ran scalar ("a work-group barrier in divergent control flow"): the `&&` whose second test shares the first's way out is a zone entered twice, which grew to the whole function after its entry block, and the inlined kernel body (barrier included) follows that block. Three quarters of the generated kernels ran scalar for it. Such a zone now grows to the branch around it, and the whole function starts after the straight line of blocks from its entry
// global: 48
// local: 16
// offset: 18
// data: 15970668311033605871
#define NITEMS 48
#define LSZ 16
static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }
static uint fold_l16(long16 v) {
}
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = in[gid];
    int i1 = i0 * 3;
    uint u0 = (uint)gid;
    int p0[16];
    for (int z = 0; z < 16; z++) p0[z] = gid + z;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r1 = 0; r1 < 1; r1++) {
        h = mix(h, (u0 + (l < 16 && p0[l] > 3 ? 31u : (uint)i1)));
    }
    out[gid] = h;
}