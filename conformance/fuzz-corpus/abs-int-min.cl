// softcl-fuzz regression kernel: seed 1043 (softcl-fuzz --emit 1043), reduced for PoCL's mismatch, then by hand
// caught: the fuzzer's PoCL comparison: PoCL 3.1 computes abs(INT_MIN) as 13 (and the comparison below as false), where OpenCL's abs returns 2^31 as a uint; SoftCL gives 0x80000000 in every configuration and must keep doing so
// not on pocl: PoCL 3.1 computes abs(INT_MIN) wrongly
// global: 30
// local: 5
// data: 1
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    int gid = (int)get_global_id(0);
    int x = buf[gid * 4] | (int)0x80000000;
    x = (x == INT_MIN) ? x : INT_MIN + (gid & 1);
    out[gid] = (uint)((int)abs((int)abs(x)) <= 5);
    buf[gid * 4 + 1] = (int)abs(x);
    buf[gid * 4 + 2] = (int)abs_diff(x, 1);
}
