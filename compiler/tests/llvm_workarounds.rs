//! Kernels whose code LLVM 22 cannot generate as they stand (`back::llvm_workarounds`),
//! compiled for an AVX-512 CPU whatever the host (the object is made and linked, never run),
//! each in a thread of its own so that a hang fails the test instead of stalling it.

use softcl_compiler::{compile_source, Target, Vectorizer};
use std::sync::mpsc;
use std::time::Duration;

const AVX512_FEATURES: &str = "+sse2,+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,\
                               +movbe,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl";

/// Compiles `src` to native code for an AVX-512 CPU at 16 lanes, or fails after `limit`.
fn codegen_for_avx512(src: &'static str, limit: Duration) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let t = Target {
            cpu: Some("skylake-avx512".into()),
            features: Some(AVX512_FEATURES.into()),
            vectorizer: Vectorizer::Forced { width: 16, register_bytes: 64 },
            ..Target::default()
        };
        let built = compile_source(src, "", &t).and_then(|p| p.codegen(&t)).map(|_| ()).map_err(|e| e.log);
        let _ = tx.send(built);
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(())) => {}
        Ok(Err(log)) => panic!("the build failed: {log}"),
        Err(_) => panic!("code generation did not finish in {limit:?}"),
    }
}

/// `convert_uchar4_sat` of an `int4` of four loads, masked and multiplied as a `uint`: at 16
/// work-items a saturating `<64 x i32>` to `<64 x i8>` truncation, an interleaving shuffle
/// and a multiply, on which LLVM 22's instruction selection for AVX-512BW never finished
/// (a fuzz kernel's build hung on the CPU device at width 16 and on the Gen device at
/// SIMD16). With 256-bit vectors legal in that function it takes milliseconds.
#[test]
fn saturated_byte_vectors_of_sixteen_work_items_compile_for_avx512() {
    const SRC: &str = "kernel void k(global const int *in, global uint *out) {
        int g = get_global_id(0);
        out[g] = (as_uint(convert_uchar4_sat((int4)(in[g], in[g + 64], in[g + 128], in[g + 192]))) & 0xfffu) * 882u;
    }";
    codegen_for_avx512(SRC, Duration::from_secs(120));
}
