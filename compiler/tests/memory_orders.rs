//! OpenCL C's memory orders reach LLVM as the memory model says: each atomic and fence of
//! the order its `memory_order` (SPIR-V's memory semantics) gives, in scalar and vector code,
//! not every one sequentially consistent.

use softcl_compiler::{compile_source, Target, Vectorizer};

const SRC: &str = "kernel void k(global int *p, global atomic_int *a, global atomic_float *f) {
    atomic_add(p, 1);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_store_explicit(a, 1, memory_order_release);
    int x = atomic_load_explicit(a + 1, memory_order_acquire);
    atomic_fetch_add_explicit(a + 2, x, memory_order_relaxed);
    atomic_fetch_or(a + 3, x);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
    int e = 0;
    atomic_compare_exchange_strong_explicit(a + 4, &e, x, memory_order_acq_rel, memory_order_relaxed);
    atomic_fetch_max_explicit(f, 1.0f, memory_order_release, memory_scope_device);
    p[get_global_id(0) + 8] = x;
}";

fn optimized_ir(width: Option<u32>) -> String {
    let t = Target {
        vectorizer: match width {
            Some(w) => Vectorizer::Forced { width: w, register_bytes: 32 },
            None => Vectorizer::Off,
        },
        ..Target::default()
    };
    let p = compile_source(SRC, "-cl-std=CL3.0", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    p.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

#[test]
fn atomics_and_fences_keep_their_memory_orders() {
    for width in [None, Some(8)] {
        let ir = optimized_ir(width);
        let has = |what: &str| ir.lines().any(|l| l.contains(what));
        // The legacy atomic_add is relaxed; atomic_fetch_or without an order seq_cst.
        assert!(ir.lines().any(|l| l.contains("atomicrmw add") && l.contains("monotonic")), "{width:?}: {ir}");
        assert!(ir.lines().any(|l| l.contains("atomicrmw or") && l.contains("seq_cst")), "{width:?}");
        assert!(ir.lines().any(|l| l.contains("store atomic") && l.contains("release")), "{width:?}");
        assert!(ir.lines().any(|l| l.contains("load atomic") && l.contains("acquire")), "{width:?}");
        // mem_fence is an acquire-release fence, the seq_cst work-item fence one of its own.
        assert!(has("fence acq_rel"), "{width:?}");
        assert!(has("fence seq_cst"), "{width:?}");
        assert!(ir.lines().any(|l| l.contains("cmpxchg") && l.contains("acq_rel acquire")), "{width:?}");
        assert!(ir.lines().any(|l| l.contains("cmpxchg") && l.contains("release monotonic")), "{width:?}");
    }
}
