// softcl-fuzz regression kernel: seed 17 (softcl-fuzz --emit 17 --without neighbours), reduced by softcl-fuzz, then by hand
// caught: a private pointer retargeted under divergent control in a loop (`pp = &i2` after a divergent `continue`), after another loop with a divergent `break`: vector code reads `*pp` from the old target (1 where the scalar run gives 2)
// failed: mismatch on cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// fixed: the work-item analysis followed a private pointer variable's stores only until it was not uniform, keeping the first target's stride (see private-pointer-two-targets.cl)
// global: 240
// local: 48
// data: 6965797780890815516
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    int gid = (int)get_global_id(0);
    int i1 = 1;
    int i2 = 2;
    int x = in[gid];
    int *pp = &i1;
    for (int k = 0; k < 3; k++) {
        if (i2 >= x) break;
    }
    for (int k7 = 0; k7 < 3; k7++) {
        if (x < i2) continue;
        pp = &i2;
    }
    out[gid] = (uint)*pp;
}
