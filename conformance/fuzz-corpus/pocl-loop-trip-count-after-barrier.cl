// softcl-fuzz regression kernel: seed 11167, reduced and rewritten by hand
// caught: nothing in SoftCL; PoCL 3.1 runs a loop whose trip count depends on the local id, after a barrier, for the largest trip count in every work-item (0xfffff where 0x1f is right). SoftCL matches the result computed on the host
// not on pocl: loops after a barrier with a trip count per work-item
// global: 8
// local: 4
// data: 1
#define NITEMS 8
#define LSZ 4
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gid = (int)get_global_id(0);
    const int l = (int)get_local_id(0);
    uint u0 = (uint)in[gid] & 3u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k6 = 0; k6 < (l & 3) + 1; k6++) {
        int k8 = 0;
        do {
            u0 ^= 1u + u0;
        } while (++k8 < 5);
    }
    out[gid] = u0;
}
