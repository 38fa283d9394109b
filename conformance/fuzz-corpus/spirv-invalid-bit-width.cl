// softcl-fuzz regression kernel: seed 6 (softcl-fuzz --emit 6 --without neighbours), reduced by softcl-fuzz, then by hand
// caught: a valid kernel does not build in any configuration: clang -O2 leaves an integer type of 2 or 3 bits (nested `switch`es) that llvm-spirv-15 rejects ("InvalidBitWidth: Invalid bit width in input: 3"); seeds 12, 27, 48 and others fail the same way
// failed before the fix: build on cpu-scalar cpu-auto cpu-w4 cpu-w8 cpu-w16 gen-simd8 gen-simd16 gen-simd32
// global: 208
// local: 31
// offset: 39
// data: 17526469500722628381
#define NITEMS 208
#define LSZ 31
__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, __global uint *cnt, int ka, uint kb) {
    const int gx = (int)(get_global_id(0) - get_global_offset(0));
    const int gy = (int)(get_global_id(1) - get_global_offset(1));
    const int gid = gy * (int)get_global_size(0) + gx;
    const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
    uint h = 0x811c9dc5u ^ (uint)gid;
    int i0 = buf[gid * 4 + 3];
    uint u0 = 0u;
    uint u2 = 2u;
    float4 f1 = (float4)((float)((i0 & 511) - 256), 1.5f, (float)(gid % 7), -0.5f);
    int *pp = &i0;
    switch (in[gid + 1 < NITEMS ? gid + 1 : 0]) {
        case 4:
        switch ((int)((uint)in[gid] % 5u)) {
            case 1:
            case 4:
            break;
            default:
            buf[gid * 4] = 1;
        }
    }
    u2 = sub_sat((as_uint(rotate(as_uchar4((uint)-248068346), (uchar4)(1, 2, 3, 4))) + (u0 + 0x7fffffffu)), ((uint)(int)(((*pp) > in[NITEMS - 1 - gid] ? f1.s3 : (f1.s1 * 0.5f)))));
    out[gid] = 0;
}
