// softcl-fuzz regression kernel: seed 4 (softcl-fuzz --emit 4 --without neighbours), reduced by softcl-fuzz, then by hand
// caught: a private pointer retargeted to a private array element (`pp = &p0[2]` after `int *pp = &i0`), then a divergent `switch` with fall-through: vector code loses the value the switch assigns (`r` reads 0). Seeds 94, 155, 189, 266 and 277 (without `neighbours`) failed alike
// failed: mismatch on cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// fixed: the work-item analysis followed a private pointer variable's stores only until it was not uniform, keeping the first target's stride (see private-pointer-two-targets.cl)
// global: 34
// local: 17
// data: 17266375461231991630
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    int gid = (int)get_global_id(0);
    int i0 = 0;
    int p0[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    int *pp = &i0;
    pp = &p0[2];
    int b = in[gid];
    uint r = 7u;
    switch ((int)((uint)b % 5u)) {
        case 0:
        case 4:
        r = r * ((uint)b | 1u);
    }
    out[gid] = r ^ (uint)(*pp);
}
