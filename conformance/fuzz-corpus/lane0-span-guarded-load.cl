// softcl-fuzz regression kernel: written by hand
// caught: a load guarded below the work-item's own index (`gid >= 2 ? in[gid - 2] : 3`) crashes vector code: the packet's span address comes from lane 0 even when lane 0 is inactive (written by hand after the fuzzer's seeds with loads below the own index, `neighbours`, crashed)
// failed before the fix: crash(SIGSEGV) on cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8
// global: 17 4
// local: 8 4
// data: 1
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gid = (int)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    int i0 = (gid >= 2 ? in[gid - 2] : 3);
    out[gid] = i0;
}
