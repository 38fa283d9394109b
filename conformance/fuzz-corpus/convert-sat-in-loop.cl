// softcl-fuzz regression kernel: seed 11 (softcl-fuzz --seed 11 --reduce-for pocl), reduced by softcl-fuzz, then by hand
// caught: convert_short2_sat in a loop whose body clang places after the exit block: llvm-spirv-15 leaves the SaturatedConversion decoration on an id nothing defines, and every SoftCL configuration truncated (out 0x20b5 where PoCL, right, gave 0x8000). FPRoundingMode (convert_int_rtp) was lost the same way
// failed: mismatch on pocl (every SoftCL configuration agreed with the wrong scalar run)
// global: 320
// local: 64
// data: 11817633586490456822
#define NITEMS 320
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gid = (int)get_global_id(0);
    const int l = (int)get_local_id(0);
    int i1 = 1;
    int p0[3] = { 0 };
    if (gid + 3 < NITEMS) {
        i1 = in[gid + 3];
    }
    for (int k2 = (l & 3) + 1; k2 > 0; k2--) {
        p0[0] = (int)as_uint(convert_short2_sat((int2)(i1, 0)));
    }
    out[gid] = p0[0];
}
