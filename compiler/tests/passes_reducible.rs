//! `passes::reducible`: a cycle entered at two blocks (a `goto` into a loop's middle)
//! becomes natural loops, the copied blocks' values used elsewhere go through private
//! variables, and the module stays valid; the vector build then linearizes it.

use softcl_compiler::analysis::{Cfg, DomTree, LoopInfo};
use softcl_compiler::ir::Module;
use softcl_compiler::{compile_source, passes, Target, Vectorizer};

const SRC: &str = r#"
    __kernel void irr(__global const int *in, __global int *out) {
        int g = get_global_id(0);
        int v = in[g], steps = 0;
        if (v < 0) goto down;
    up:
        v += 7; steps++;
        if (v > 100 || steps > 40) goto out;
    down:
        v = v * 2 - 3; steps += 2;
        if (v < -50) goto out;
        goto up;
    out:
        out[g] = v + steps * 1000;
    }"#;

fn irreducible(m: &Module) -> bool {
    let f = &m.functions[m.kernels[0].func];
    let cfg = Cfg::new(f);
    LoopInfo::new(&cfg, &DomTree::new(&cfg)).is_irreducible()
}

fn blocks(m: &Module) -> usize {
    m.functions[m.kernels[0].func].layout.blocks.len()
}

#[test]
fn a_cycle_with_two_entries_becomes_natural_loops() {
    let mut m = compile_source(SRC, "", &Target::default()).expect("the kernel builds").module;
    softcl_compiler::vectorize::inline_kernel_calls(&mut m, 256).expect("inlining");
    assert!(irreducible(&m), "the goto makes a cycle with two entries");
    let before = blocks(&m);
    passes::run_pass(&mut m, "reducible", passes::reducible::run_module).expect("valid IR after the pass");
    assert!(!irreducible(&m), "{}", m.display_function(m.kernels[0].func));
    assert!(blocks(&m) > before, "the second entry's part is copied");
}

#[test]
fn the_vector_build_linearizes_what_the_split_leaves() {
    let target = Target { vectorizer: Vectorizer::Forced { width: 8, register_bytes: 64 }, ..Target::default() };
    let prog = compile_source(SRC, "", &target).expect("the kernel builds");
    let native = prog.codegen(&target).unwrap_or_else(|e| panic!("{}", e.log));
    let info = &native.kernels[0].info;
    assert_eq!(info.simd_width, 8, "vectorized at the forced width");
}
