//! The counting code of a Gen-instrumented build stays small per message: the general forms
//! of the counts (distinct L3 lines among the lanes, SLM bank ways) are helper functions
//! called from each message, not emitted again at every message. Emitted inline, a kernel
//! with 256 messages at SIMD32 (the CTS's compiler `multiple_libraries`) took 38 s to
//! optimise against 1.5 s with the helpers. The helpers are compiled once per process and
//! called by address, not compiled into every variant: in each variant they were half of
//! what LLVM optimised and emitted for a small kernel (a SIMD32 vector add: 120 ms per
//! variant with them, 25 ms without).

use softcl_compiler::{compile_source, GenBuild, Target, Vectorizer};

fn gen_target(simd: u32) -> Target {
    Target {
        gen: Some(GenBuild { simd, linear_lanes: false, row_width: 0 }),
        vectorizer: Vectorizer::Forced { width: simd, register_bytes: simd * 4 },
        ..Target::default()
    }
}

/// A kernel with `n` gathers from global memory and `n` from local memory, each at an
/// address only known at run time (the general forms of both counts).
fn kernel(n: usize) -> String {
    let mut body = String::new();
    for k in 0..n {
        body += &format!("    acc += a[idx[i + {k}]] + t[idx[i + {k}] & 255];\n");
    }
    format!(
        "__kernel void k(__global const float* a, __global const int* idx, __global float* out) {{\n\
         __local float t[256];\n\
         int i = get_global_id(0);\n\
         t[get_local_id(0) & 255] = a[i];\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         float acc = 0.0f;\n{body}    out[i] = acc;\n}}\n"
    )
}

/// Instructions of the optimised LLVM IR of `kernel(n)` for target `t`.
fn instructions_for(n: usize, t: &Target) -> usize {
    let prog = compile_source(&kernel(n), "", t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    let ir = prog.optimized_llvm_ir(t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    ir.lines().filter(|l| l.starts_with("  ") && !l.trim_start().starts_with(';')).count()
}

/// The instructions the Gen build at `simd` of `kernel(n)` has beyond the CPU device's
/// vector build at the same width: its counting code.
fn instructions(n: usize, simd: u32) -> usize {
    let cpu = Target { vectorizer: Vectorizer::Forced { width: simd, register_bytes: simd * 4 }, ..Target::default() };
    let gen = instructions_for(n, &gen_target(simd));
    let plain = instructions_for(n, &cpu);
    eprintln!("SIMD{simd} n={n}: Gen {gen}, CPU {plain}");
    gen.saturating_sub(plain)
}

#[test]
fn general_counts_are_one_helper_per_kind_not_code_per_message() {
    for simd in [16, 32] {
        let (small, large) = (instructions(4, simd), instructions(20, simd));
        // Per pair of messages (a gather from each space): the kernel's own loads, adds and
        // index arithmetic, the call of each helper and the counter updates. The inline forms
        // cost several hundred instructions per message at SIMD32.
        let per_pair = (large - small) / 16;
        assert!(
            per_pair < 150,
            "SIMD{simd}: {per_pair} instructions per pair of messages ({small} for 4, {large} for 20)"
        );
    }
}

#[test]
fn general_counts_are_not_compiled_into_the_variant() {
    for simd in [8, 16, 32] {
        let ir = {
            let t = gen_target(simd);
            let prog = compile_source(&kernel(4), "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
            prog.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log))
        };
        let defined: Vec<&str> = ir.lines().filter(|l| l.starts_with("define")).collect();
        assert_eq!(defined.len(), 1, "SIMD{simd}: only the work-group entry is defined, found {defined:#?}");
        assert!(ir.contains("call i64 @softcl_gen_count("), "SIMD{simd}: the general counts call the host's function");
    }
}

/// A kernel of `n` loads from global memory at addresses every lane shares, in one block.
fn uniform_loads(n: usize) -> String {
    let body: String = (0..n).map(|k| format!("    acc += a[{k}];\n")).collect();
    format!(
        "__kernel void k(__global const float* a, __global float* out) {{\n\
         float acc = 0.0f;\n{body}    out[get_global_id(0)] = acc;\n}}\n"
    )
}

#[test]
fn a_blocks_counters_are_updated_together() {
    // 32 messages in one block: each site's L3 lines, and the block's executions and
    // active lanes (which are also every site's messages and active lanes). Added to
    // memory one by one, that was 4 stores per message (over 260 in all); now the sites'
    // line counts go in vectors of 8 consecutive counters. The entry has two paths (full
    // and masked packets), each about ten stores: four vectors of line counts, the store
    // site's, the blocks' counters and the kernel's own store.
    let t = gen_target(16);
    let prog = compile_source(&uniform_loads(32), "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    let ir = prog.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    let stores = ir.lines().filter(|l| l.trim_start().starts_with("store ")).count();
    assert!(stores <= 24, "{stores} stores for 32 messages and the kernel's own store:\n{ir}");
}
