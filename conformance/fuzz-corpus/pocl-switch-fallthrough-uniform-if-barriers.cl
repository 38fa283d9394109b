// softcl-fuzz regression kernel: seed 11588, reduced and rewritten by hand
// caught: nothing in SoftCL; PoCL 3.1 skips the statement of a `switch` case that falls through, for its work-items, inside an `if` uniform in the work-group that holds barriers (0x68 where 0x6d is right). SoftCL matches the result computed on the host
// not on pocl: a switch falling through inside a uniform if with barriers
// global: 144
// local: 48
// data: 1
#define NITEMS 144
#define LSZ 48
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gid = (int)get_global_id(0);
    const int l = (int)get_local_id(0);
    uint h = (uint)gid;
    uint u1 = (uint)gid * 3u;
    if (get_group_id(0) == 0) {
        barrier(CLK_GLOBAL_MEM_FENCE);
        switch (l & 3) {
            case 2:
            h = h * 7u + 1u;
            case 0:
            case 1:
            h = h ^ u1;
            case 3:
            h = h + 100u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[gid] = h;
}
