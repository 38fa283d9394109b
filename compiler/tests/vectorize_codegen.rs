//! What the vector code of a kernel looks like after LLVM's optimisation (the optimised IR
//! from `Program::optimized_llvm_ir`): a `float3` accumulator is not carried around its loop
//! as one `<48 x float>` (which instruction selection copies lane by lane), and `rsqrt` on
//! AVX-512 hosts is `vrsqrt14ps` plus a Newton step rather than a square root and a division.
//! The context and argument loads of a branchy kernel leave the packet loop, and loads outside
//! loops prefetch their streams when a block reads more than two.
//! Results of these kernels are checked in `conformance/tests/vectorizer_math.rs`.

use softcl_compiler::{compile_source, GenBuild, Target, Vectorizer};

fn target(width: Option<u32>) -> Target {
    Target {
        vectorizer: match width {
            Some(w) => Vectorizer::Forced { width: w, register_bytes: 64 },
            None => Vectorizer::Off,
        },
        ..Target::default()
    }
}

fn optimized_ir(src: &str, width: Option<u32>) -> String {
    optimized_ir_for(src, &target(width))
}

fn optimized_ir_for(src: &str, t: &Target) -> String {
    let prog = compile_source(src, "", t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    prog.optimized_llvm_ir(t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

/// Phis of a vector type whose length is not a power of two that take a value from their
/// own block or a block printed after it (a loop's back edge), as their IR lines.
fn loop_carried_odd_vector_phis(ir: &str) -> Vec<String> {
    // Block labels in print order, then each phi's incoming blocks.
    let mut order: Vec<String> = Vec::new();
    let mut phis: Vec<(usize, String)> = Vec::new();
    for line in ir.lines() {
        if line.starts_with("define ") {
            order.clear();
            order.push("entry-of-function".into());
        } else if let Some(label) = line.split(':').next().filter(|_| {
            !line.starts_with(' ') && !line.starts_with(';') && line.contains(':') && !line.starts_with('}')
        }) {
            order.push(label.trim().to_string());
        } else if let Some(rest) = line.trim_start().split_once("= phi <") {
            let n: u32 = rest.1.split(' ').next().and_then(|x| x.parse().ok()).unwrap_or(1);
            if !n.is_power_of_two() {
                let cur = order.len() - 1;
                let back = rest.1.split('[').skip(1).any(|inc| {
                    let from = inc.split('%').next_back().unwrap_or("").trim_end_matches([' ', ']', ',']);
                    order.iter().position(|l| l == from).is_none_or(|k| k >= cur)
                });
                if back {
                    phis.push((cur, line.trim().to_string()));
                }
            }
        }
    }
    phis.into_iter().map(|(_, l)| l).collect()
}

const NBODY: &str = r#"
    __kernel void nbody(int n, float eps2, __global const float4 *restrict pos,
                        __global float4 *restrict out) {
        int i = get_global_id(0);
        float4 p = pos[i];
        float3 acc = (float3)(0.0f);
        for (int j = 0; j < n; ++j) {
            float4 q = pos[j];
            float3 d = q.xyz - p.xyz;
            float inv = rsqrt(dot(d, d) + eps2);
            acc += (q.w * inv * inv * inv) * d;
        }
        out[i] = (float4)(acc, p.w);
    }
    __kernel void int3_loop(int n, __global const int* a, __global int4* out) {
        int i = get_global_id(0);
        int3 s = (int3)(i, 0, 1);
        for (int j = 0; j < n; ++j) {
            int v = a[j];
            s = (int3)(s.y + v, s.z ^ v, s.x * 3 + j);
        }
        out[i] = (int4)(s, -i);
    }"#;

#[test]
fn float3_accumulators_are_carried_per_component() {
    for w in [4, 8, 16] {
        let ir = optimized_ir(NBODY, Some(w));
        let bad = loop_carried_odd_vector_phis(&ir);
        assert!(bad.is_empty(), "width {w}: loop-carried vectors of odd length:\n{}", bad.join("\n"));
        // The per-component phis are there: three W-lane float accumulators in the loop.
        let per_lane = format!("phi <{w} x float>");
        assert!(ir.matches(&per_lane).count() >= 3, "width {w}: no {per_lane} accumulators:\n{ir}");
    }
}

#[test]
fn the_odd_phi_detector_finds_a_back_edge() {
    let ir = "define void @f() {\nentry:\n  br label %l\n\nl:\n  %a = phi <48 x float> [ zeroinitializer, %entry ], [ %b, %l ]\n  %c = phi <16 x float> [ zeroinitializer, %entry ], [ %d, %l ]\n  br label %x\n\nx:\n  %e = phi <48 x float> [ %b, %l ]\n  ret void\n}\n";
    let found = loop_carried_odd_vector_phis(ir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("%a = "));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn rsqrt_on_vectors_is_an_estimate_and_a_newton_step_on_avx512() {
    let avx512 = std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl");
    let src = r#"__kernel void rs(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            y[i] = rsqrt(x[i]);
        }
        __kernel void rs3(__global const float* x, __global float* y) {
            size_t i = get_global_id(0);
            vstore3(rsqrt(vload3(i, x)), i, y);
        }"#;
    for w in [4, 8, 16] {
        let ir = optimized_ir(src, Some(w));
        if avx512 {
            assert!(ir.contains("@llvm.x86.avx512.rsqrt14.ps"), "width {w}: no vrsqrt14ps:\n{ir}");
            assert!(!ir.contains("fdiv"), "width {w}: a division left:\n{ir}");
            assert!(!ir.contains("@llvm.sqrt"), "width {w}: a square root left:\n{ir}");
        } else {
            assert!(!ir.contains("rsqrt14"), "width {w}: AVX-512 code on a host without it");
        }
    }
    // Scalar code (vectorizer off) keeps 1/sqrt for float (LLVM's loop vectorizer may widen it).
    let ir = optimized_ir(src, None);
    assert!(ir.contains("@llvm.sqrt"), "scalar build without sqrt:\n{ir}");
}

/// `interleave`'s decision for kernel `name` of `src`.
fn interleave_of(src: &str, name: &str) -> Option<String> {
    let t = Target::default();
    let mut prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    softcl_compiler::passes::inline::inline_barrier_calls(&mut prog.module).unwrap();
    softcl_compiler::vectorize::inline_kernel_calls(&mut prog.module, 256).unwrap();
    let k = prog.module.kernel(name).expect("kernel");
    let f = &prog.module.functions[k.func];
    let wa = softcl_compiler::vectorize::analysis::analyze(&prog.module, f);
    softcl_compiler::vectorize::width::interleave(&prog.module, f, &wa).map(|i| format!("{}: {}", i.packets, i.why))
}

#[test]
fn packets_interleave_only_for_short_scalar_chains() {
    let src = r#"
        __kernel void chain2(__global float* out, int iters, float a, float b) {
            int gid = get_global_id(0);
            float x = (float)gid, y = 1.0f - x;
            for (int i = 0; i < iters; ++i) { x = mad(x, a, b); y = mad(y, a, b); }
            out[gid] = x + y;
        }
        __kernel void crossed(__global float* out, int iters, float a) {
            float x = a, y = (float)get_local_id(0);
            for (int i = 0; i < iters; ++i) { x = mad(y, x, y); y = mad(x, y, x); }
            out[get_global_id(0)] = y;
        }
        __kernel void chain1(__global float* out, int iters, float a, float b) {
            int gid = get_global_id(0);
            float x = (float)gid;
            for (int i = 0; i < iters; ++i) x = mad(x, a, b);
            out[gid] = x;
        }
        __kernel void chain3(__global float* out, int iters, float a, float b) {
            int gid = get_global_id(0);
            float x = (float)gid, y = 1.0f - x, z = 2.0f * x;
            for (int i = 0; i < iters; ++i) { x = mad(x, a, b); y = mad(y, a, b); z = mad(z, a, b); }
            out[gid] = x + y + z;
        }
        __kernel void chain16(__global float16* out, int iters, float a, float b) {
            int gid = get_global_id(0);
            float16 x = (float16)((float)gid);
            for (int i = 0; i < iters; ++i) x = mad(x, a, b);
            out[gid] = x;
        }
        __kernel void divergent(__global float* out, int iters, float a, float b) {
            int gid = get_global_id(0);
            float x = (float)gid;
            for (int i = 0; i < gid % 7; ++i) x = mad(x, a, b);
            out[gid] = x;
        }
        __kernel void straight(__global float* out, float a) {
            int gid = get_global_id(0);
            out[gid] = a * out[gid];
        }"#;
    let why = interleave_of(src, "chain2").expect("two chains interleave");
    assert!(why.starts_with("2: 2 packets") && why.contains("2 varying value(s) in 2 independent"), "{why}");
    // clpeak's scalar row: two carried values that feed each other are one chain, which
    // takes four packets to give the core four independent chains.
    let why = interleave_of(src, "crossed").expect("one chain interleaves");
    assert!(why.starts_with("4: 4 packets") && why.contains("2 varying value(s) in 1 independent"), "{why}");
    let why = interleave_of(src, "chain1").expect("one chain interleaves");
    assert!(why.starts_with("4: 4 packets") && why.contains("1 varying value(s) in 1 independent"), "{why}");
    for k in ["chain3", "chain16", "divergent", "straight"] {
        assert_eq!(interleave_of(src, k), None, "kernel {k}");
    }
    assert_eq!(interleave_of(NBODY, "nbody"), None, "nbody carries a float3");
}

/// Loads of the work-group context (`%1`) and the argument block (`%0`) in the entry
/// function's blocks from the packet loop's header (`x:`) on, as IR lines. Their addresses
/// are the entry's parameters plus constants, so LLVM hoists them when it may speculate them
/// (the parameters are `dereferenceable` and `align`ed).
fn loads_of_entry_params_in_packet_loop(ir: &str) -> Vec<String> {
    let entry = ir.split("define ").find(|f| f.contains("@softcl_kernel_")).expect("entry function");
    let mut param_ptrs: Vec<String> = vec!["%0".into(), "%1".into()];
    let mut in_loop = false;
    let mut found = Vec::new();
    for line in entry.lines() {
        let t = line.trim();
        if t.starts_with("x:") {
            in_loop = true;
        }
        if let Some((name, rhs)) = t.split_once(" = ") {
            if rhs.starts_with("getelementptr") && (rhs.contains("ptr %0,") || rhs.contains("ptr %1,")) {
                param_ptrs.push(name.to_string());
                continue;
            }
            if in_loop && rhs.starts_with("load ") {
                let addr = rhs.split(", ptr ").nth(1).and_then(|a| a.split([',', ' ']).next()).unwrap_or("");
                if param_ptrs.iter().any(|p| p == addr) {
                    found.push(t.to_string());
                }
            }
        }
    }
    found
}

/// The benchmark's 5-point stencil: a border test (a divergent branch) before the rows.
const STENCIL5: &str = r#"
        __kernel void stencil5(int w, int h, __global const float *restrict in, __global float *restrict out) {
            int x = get_global_id(0), y = get_global_id(1);
            int i = y * w + x;
            if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[i] = in[i]; return; }
            out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
        }"#;

#[test]
fn context_and_argument_loads_leave_the_packet_loop_of_branchy_kernels() {
    // The interior store runs under a mask: the id and argument loads sit in a conditional
    // block of the packet loop, where only speculation can hoist them.
    let ir = optimized_ir(STENCIL5, Some(16));
    assert!(ir.contains("\nx:"), "no packet loop header `x:`:\n{ir}");
    let in_loop = loads_of_entry_params_in_packet_loop(&ir);
    assert!(in_loop.is_empty(), "loads of the context or arguments left in the packet loop: {in_loop:#?}\n{ir}");
}

#[test]
fn atomics_on_local_memory_are_plain_read_modify_writes() {
    // Only the host thread running a work-group touches its `__local` memory, so a local
    // atomic needs no `lock`: the global one keeps its atomicrmw, in vector and scalar code.
    let src = r#"
        __kernel void hist(__global const uchar *in, __global uint *bins, __local uint *t) {
            uint l = get_local_id(0);
            t[l] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint old = atomic_inc(&t[in[get_global_id(0)] % get_local_size(0)]);
            atomic_max(&t[0], old);
            atomic_cmpxchg(&t[1], 0u, old);
            barrier(CLK_LOCAL_MEM_FENCE);
            atomic_add(&bins[l], t[l]);
        }"#;
    // The global add only: in scalar code once; in vector code once per lane of each packet
    // path, and no max or compare-exchange.
    for width in [None, Some(16)] {
        let ir = optimized_ir(src, width);
        let atomics: Vec<&str> = ir.lines().filter(|l| l.contains("atomicrmw") || l.contains("cmpxchg")).collect();
        let all_adds = !atomics.is_empty() && atomics.iter().all(|l| l.contains("atomicrmw add ptr"));
        assert!(
            all_adds && (width.is_some() || atomics.len() == 1),
            "only the global atomic_add is atomic ({width:?}): {atomics:#?}\n{ir}"
        );
    }
}

#[test]
fn stores_into_a_buffer_the_kernel_reads_are_not_non_temporal() {
    // An update in place finds its lines in the cache: a non-temporal store would evict them
    // and write around the cache. A store into a buffer read only through another argument
    // (even the same buffer, bound twice) streams.
    let src = r#"
        __kernel void update(__global float *ex, __global const float *hz, __global float *out) {
            size_t i = get_global_id(0);
            ex[i] = ex[i] - 0.5f * (hz[i] - hz[i + 1]);
            out[i] = hz[i] * 2.0f;
        }"#;
    for width in [None, Some(16)] {
        let ir = optimized_ir(src, width);
        let nt: Vec<&str> = ir.lines().filter(|l| l.contains("!nontemporal")).collect();
        // The scalar kernel keeps plain float stores (none streams); vector code streams the
        // output's packets only.
        match width {
            None => assert!(nt.is_empty(), "no scalar store streams: {nt:#?}"),
            Some(_) => {
                // Each stored value is the output's product, none the update's difference.
                let def_of = |l: &str| {
                    let v = l.split("store <16 x float> ").nth(1).and_then(|r| r.split(',').next()).unwrap_or("?");
                    let at = format!("  {v} = ");
                    ir.lines().find(|d| d.starts_with(&at)).unwrap_or("").to_string()
                };
                let defs: Vec<String> = nt.iter().map(|l| def_of(l)).collect();
                assert!(!nt.is_empty() && defs.iter().all(|d| d.contains("fmul")), "{nt:#?} {defs:#?}\n{ir}");
            }
        }
    }
}

#[test]
fn local_memory_and_buffers_read_after_a_barrier_are_not_stored_non_temporally() {
    // A reduction's tree: `scratch` is local memory, read right after each barrier (a
    // non-temporal store would send it to DRAM and back); the kernel's arguments reach the
    // barrier regions through a block of their own and through work-item state, where the
    // reads' pointers were not traced to `scratch` and both of its stores streamed.
    let src = r#"
        __kernel void reduce_sum(__global const float *restrict in, __global float *restrict partial,
                                 __local float *scratch) {
            size_t lid = get_local_id(0), ls = get_local_size(0);
            size_t gid = get_global_id(0), gs = get_global_size(0);
            float s = 0.0f;
            for (int j = 0; j < 16; ++j)
                s += in[gid + j * gs];
            scratch[lid] = s;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (size_t stride = ls / 2; stride > 0; stride >>= 1) {
                if (lid < stride)
                    scratch[lid] += scratch[lid + stride];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (lid == 0)
                partial[get_group_id(0)] = scratch[0];
        }"#;
    let ir = optimized_ir(src, Some(8));
    let nt: Vec<&str> = ir.lines().filter(|l| l.contains("!nontemporal")).collect();
    assert!(nt.is_empty(), "non-temporal stores: {nt:#?}\n{ir}");
}

#[test]
fn a_masked_packets_first_active_lane_is_picked_not_reduced() {
    // Where lane 0 is off (a row's first packet of the stencil's interior), the span starts
    // from the first active lane's address moved back by its lane's strides. An OR over every
    // active lane's base (a wide select and a 64-bit reduction per access) made half of a
    // SIMD32 Gen variant's code generation on AVX2 hosts; the lane picked by its number
    // (`cttz` of the mask, one variable extract) costs LLVM little, and the stencil no time
    // as long as only packets with lane 0 off take that path: LLVM, left to itself, made the
    // Gen variant's branches selects and ran the extract (through the stack) on every packet.
    let gen = |simd: u32| Target {
        gen: Some(GenBuild { simd, linear_lanes: false, row_width: 0 }),
        vectorizer: Vectorizer::Forced { width: simd, register_bytes: simd * 4 },
        ..Target::default()
    };
    for (what, t) in [("CPU, 16 lanes", target(Some(16))), ("Gen SIMD16", gen(16)), ("Gen SIMD32", gen(32))] {
        let ir = optimized_ir_for(STENCIL5, &t);
        assert!(!ir.contains("@llvm.vector.reduce.or.v16i64"), "{what}: the base by a reduction over the lanes:\n{ir}");
        assert!(ir.contains("@llvm.cttz.i"), "{what}: the first active lane by its number:\n{ir}");
        let mut block = String::new();
        let mut speculated = Vec::new();
        for line in ir.lines() {
            if !line.starts_with(' ') && !line.starts_with(';') && line.contains(':') {
                block = line.split(':').next().unwrap_or_default().to_string();
            }
            let variable = (line.contains("extractelement <16 x ptr>") || line.contains("extractelement <32 x ptr>"))
                && line.rsplit(", ").next().is_some_and(|ix| ix.contains('%'));
            if variable && !block.starts_with("slow") {
                speculated.push(format!("{block}: {line}"));
            }
        }
        assert!(speculated.is_empty(), "{what}: lanes extracted off the slow path: {speculated:#?}\n{ir}");
    }
}

#[test]
fn loads_outside_loops_prefetch_past_two_streams_and_loop_loads_do_not() {
    // The stencil reads three rows of one array: in[i - w], in[i + w] and in[i - 1], in[i],
    // in[i + 1] (one stream: the same base, indices a constant apart), with i = y * w + x.
    // The packet loop walks the rows in order, so rows i and i - w were row i + w one and two
    // rows before and are read from the cache: only the leading row prefetches, 4 KiB ahead,
    // once in the full and once in the masked packet.
    let stencil = r#"
        __kernel void stencil(int w, __global const float *restrict in, __global float *restrict out) {
            int i = get_global_id(1) * w + get_global_id(0);
            out[i] = in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w];
        }"#;
    let ir = optimized_ir(stencil, Some(16));
    // (full packet, masked packet): the full packet's code is printed from `packet.full:` to
    // `packet.masked:`, the masked packet's after it. The masked packet places a span on one
    // of two paths (lane 0 active, or the first active lane), and LLVM may thread a prefetch
    // into both.
    let by_packet = |ir: &str| {
        let (mut full, mut masked, mut at) = (0, 0, 0);
        for l in ir.lines() {
            if l.starts_with("define ") {
                at = 0;
            } else if l.starts_with("packet.full:") {
                at = 1;
            } else if l.starts_with("packet.masked:") {
                at = 2;
            } else if l.contains("call void @llvm.prefetch") {
                match at {
                    1 => full += 1,
                    2 => masked += 1,
                    _ => {}
                }
            }
        }
        (full, masked)
    };
    let prefetches = |ir: &str| ir.lines().filter(|l| l.contains("call void @llvm.prefetch")).count();
    let streams = |ir: &str, n: usize| {
        let (full, masked) = by_packet(ir);
        full == n && (n..=2 * n).contains(&masked) && prefetches(ir) == full + masked
    };
    assert!(streams(&ir, 1), "the leading row prefetches, in the full and the masked packet:\n{ir}");
    assert!(
        ir.lines()
            .filter(|l| l.contains("@llvm.prefetch"))
            .all(|l| !l.contains("call") || l.contains("i32 0, i32 1, i32 1")),
        "prefetches read into L2 (locality 1):\n{ir}"
    );
    // The same with `in[i]` loaded before a divergent branch and the other rows after it
    // (clang's optimised code of the benchmark's stencil): the row the branch leads to
    // leads, `in[i]` is on a row read before.
    let ir = optimized_ir(STENCIL5, Some(16));
    assert_eq!(prefetches(&ir), 2, "the leading row prefetches:\n{ir}");
    // A uniform distance that is not the pitch of the index: two streams of their own, left
    // to the hardware prefetcher, as are `c = a + b`'s; three streams prefetch each.
    let halves = r#"
        __kernel void halves(int n, __global const float *restrict in, __global float *restrict out) {
            int i = get_global_id(0);
            out[i] = in[i] + in[i + n];
        }"#;
    let ir = optimized_ir(halves, Some(16));
    assert_eq!(prefetches(&ir), 0, "streams of their own prefetch:\n{ir}");
    let vecadd = r#"
        __kernel void vecadd(__global const float *restrict a, __global const float *restrict b, __global float *restrict c) {
            int i = get_global_id(0);
            c[i] = a[i] + b[i];
        }"#;
    assert_eq!(prefetches(&optimized_ir(vecadd, Some(16))), 0, "vecadd's streams prefetch");
    let thirds = r#"
        __kernel void thirds(int n, __global const float *restrict in, __global float *restrict out) {
            int i = get_global_id(0);
            out[i] = in[i] + in[i + n] + in[i + 2 * n];
        }"#;
    let ir = optimized_ir(thirds, Some(16));
    assert!(streams(&ir, 3), "three streams prefetch, in the full and the masked packet:\n{ir}");
    let matmul = r#"
        __kernel void mm(int n, __global const float *restrict a, __global const float *restrict b, __global float *restrict c) {
            int col = get_global_id(0), row = get_global_id(1);
            float s = 0.0f;
            for (int k = 0; k < n; k++) s += a[row * n + k] * b[k * n + col];
            c[row * n + col] = s;
        }"#;
    let ir = optimized_ir(matmul, Some(16));
    assert!(!ir.contains("call void @llvm.prefetch"), "a load in a loop prefetches:\n{ir}");
    assert!(!optimized_ir(stencil, None).contains("call void @llvm.prefetch"), "the scalar build prefetches");
    // A packet wider than a line (16 doubles here, 32 floats in a Gen SIMD32 thread) reads
    // two lines of each row: both are prefetched, 4 KiB and 4 KiB + 64 ahead (prefetching
    // one line a packet left every other line of the leading row to the hardware: the Gen
    // device's SIMD32 stencil ran 1.7x as long).
    let ir = optimized_ir(&stencil.replace("float", "double"), Some(16));
    let aheads: Vec<&str> = ir
        .lines()
        .filter(|l| l.contains("getelementptr") && (l.contains("i64 4096") || l.contains("i64 4160")))
        .collect();
    assert!(
        aheads.iter().any(|l| l.contains("i64 4096")) && aheads.iter().any(|l| l.contains("i64 4160")),
        "both lines of a SIMD32 packet's row prefetched:\n{ir}"
    );
    assert!(streams(&ir, 2), "the leading row's two lines prefetch, in the full and the masked packet:\n{ir}");
}

/// A packet's span of several slots per lane whose length is not a power of two (`vload3` /
/// `vstore3`: 48 floats per packet at width 16) is loaded and stored in pieces of at most
/// one 512-bit register, each masked from the lane mask's bits: one `<48 x float>` masked
/// access under a shuffled `<48 x i1>` mask made instruction selection move the mask bit by
/// bit. A span whose length is a power of two stays one access (see the particle kernel in
/// docs/PERFORMANCE.md: its pieces ran 1.7x as long).
#[test]
fn spans_are_accessed_in_register_sized_pieces() {
    let src = r#"
        __kernel void spans(__global const float *a, __global float *b) {
            size_t i = get_global_id(0);
            vstore3(vload3(i, a) + 1.0f, i, b);
        }"#;
    let ir = optimized_ir(src, Some(16));
    let mut accesses = 0;
    for call in ir.split("@llvm.masked.").skip(1) {
        let (kind, rest) = call.split_once(".v").unwrap_or(("", ""));
        if kind != "load" && kind != "store" {
            continue;
        }
        // `<n><f|i><bits>` after `.v`.
        let n: u64 = rest.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap_or(0);
        let bits: u64 = rest[n.to_string().len() + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .unwrap_or(0);
        assert!(n > 0 && n * bits <= 512, "a masked {kind} of {n} x {bits} bits:\n{ir}");
        accesses += 1;
    }
    assert!(accesses >= 6, "the spans are not masked loads and stores:\n{ir}");
    assert!(!ir.contains("shufflevector <16 x i1>"), "a mask shuffled as i1 lanes:\n{ir}");
    // A float4 member span (64 floats per packet): one access.
    let members = r#"
        typedef struct { float4 p; } P;
        __kernel void members(__global P *s) {
            size_t i = get_global_id(0);
            s[i].p = s[i].p * 2.0f;
        }"#;
    let ir = optimized_ir(members, Some(16));
    assert!(ir.contains("masked.load.v64f32") || ir.contains("load <64 x float>"), "{ir}");
}

/// The benchmark's particle update: a divergent branch around arithmetic only. Its masked
/// block runs for every lane without testing whether any lane is in it (no `any` of the
/// mask, no branch around it): the lanes' values are blended by the join's selects.
#[test]
fn a_masked_block_of_arithmetic_only_is_not_skipped() {
    let src = r#"
        typedef struct { float4 pos; float4 vel; } Particle;
        __kernel void particles(float dt, float4 gravity, __global const Particle *restrict in,
                                __global Particle *restrict out) {
            size_t i = get_global_id(0);
            Particle p = in[i];
            p.vel = p.vel * 0.999f + gravity * dt;
            p.pos = p.pos + p.vel * dt;
            if (p.pos.y < 0.0f) {
                p.pos.y = -p.pos.y;
                p.vel.y = -0.9f * p.vel.y;
            }
            out[i] = p;
        }"#;
    let ir = optimized_ir(src, Some(8));
    let entry = ir.split("define ").find(|f| f.contains("@softcl_kernel_")).expect("entry function");
    // The block's lane mask is named `bmask` (the packet's own mask stays: partial packets).
    let any_tests: Vec<&str> = entry.lines().filter(|l| l.contains("bitcast <8 x i1> %bmask")).collect();
    assert!(any_tests.is_empty(), "{any_tests:?}\n{entry}");
}

#[test]
fn gathers_and_scatters_whose_addresses_are_consecutive_at_run_time_are_vector_accesses() {
    // OpenCV's pyrDown reads its source at a column reflected at the image's border,
    // `min(max(x, -x), 2 * (cols - 1) - x)`: the analysis sees a varying index, so the load
    // is a gather, a scalar load per lane for bytes. Away from the border the addresses are
    // consecutive, and a full packet whose lanes' addresses are loads (and stores) them as
    // one vector.
    let src = r#"
        __kernel void reflect(__global const uchar *src, __global uchar *dst, int cols) {
            int x = get_global_id(0);
            int c = min(max(x, -x), 2 * (cols - 1) - x);
            dst[c] = src[c] + 1;
        }"#;
    for (cpu, _, ir) in width_16_on_avx2_and_avx512(src) {
        // No x86 target gathers or scatters bytes: other packets loop over their lanes.
        assert!(loops_over_active_elements(&ir), "{cpu}: the gather and scatter of other packets:\n{ir}");
        assert!(!ir.contains("@llvm.masked.gather.v16i8"), "{cpu}: a gather LLVM unrolls:\n{ir}");
        assert!(!ir.contains("@llvm.masked.scatter.v16i8"), "{cpu}: a scatter LLVM unrolls:\n{ir}");
        assert!(ir.lines().any(|l| l.contains("load <16 x i8>, ptr")), "{cpu}: no vector load:\n{ir}");
        assert!(ir.lines().any(|l| l.contains("store <16 x i8> ")), "{cpu}: no vector store:\n{ir}");
    }
}

#[test]
fn a_full_packets_span_with_holes_is_loaded_whole_without_avx512() {
    // OpenCV's countNonZero reads a `uchar4` a work-item, which clang splits into four byte
    // loads 4 bytes apart: each a span with one slot in four. Without AVX-512 their masked
    // loads were a branch and a scalar load per lane; a full packet now reads the span from
    // lane 0's byte to the last lane's (the holes between are never used) in two
    // overlapping plain loads of a power of two of bytes. With AVX-512 the masked load stays.
    let src = r#"
        __kernel void count(__global const uchar4 *src, __global int *dst, int n) {
            int i = get_global_id(0);
            if (i < n) {
                uchar4 v = src[i];
                dst[i] = (v.x != 0) + (v.y != 0) + (v.z != 0) + (v.w != 0);
            }
        }"#;
    for (cpu, avx512, ir) in width_16_on_avx2_and_avx512(src) {
        let plain = ir.lines().any(|l| l.contains("load <32 x i8>, ptr") || l.contains("load <64 x i8>, ptr"));
        assert_eq!(plain, !avx512, "{cpu}:\n{ir}");
        assert_partial_packet_access(cpu, avx512, &ir, "load.v64i8");
    }
}

/// Whether `ir` has a loop over the set bits of a mask (`back::vector::masked_loop`): its
/// blocks keep their names, and each trip finds the next element by `cttz`.
fn loops_over_active_elements(ir: &str) -> bool {
    ir.lines().any(|l| l.starts_with("elem:") || l.starts_with("elem.")) && ir.contains("@llvm.cttz.i64")
}

/// The partial packet's masked access of bytes (`intrinsic`, e.g. "load.v16i8"): with
/// AVX-512 the masked instruction; without, a loop over the active elements (LLVM would
/// unroll the intrinsic into a branch and two blocks per element).
fn assert_partial_packet_access(cpu: &str, avx512: bool, ir: &str, intrinsic: &str) {
    let masked = ir.contains(&format!("@llvm.masked.{intrinsic}"));
    assert_eq!(masked, avx512, "{cpu}: the partial packet's masked {intrinsic}:\n{ir}");
    assert_eq!(loops_over_active_elements(ir), !avx512, "{cpu}: the partial packet's loop:\n{ir}");
}

/// `src` built at width 16 for an AVX2 host (haswell) and an AVX-512 one (skylake-avx512):
/// (cpu, whether it has AVX-512, the optimised LLVM IR) each.
fn width_16_on_avx2_and_avx512(src: &str) -> Vec<(&'static str, bool, String)> {
    [
        ("haswell", "+avx,+avx2,+fma,+sse4.2,+popcnt,+bmi,+bmi2", false),
        ("skylake-avx512", "+avx,+avx2,+fma,+sse4.2,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512cd", true),
    ]
    .into_iter()
    .map(|(cpu, features, avx512)| {
        let t = Target {
            cpu: Some(cpu.into()),
            features: Some(features.into()),
            vectorizer: Vectorizer::Forced { width: 16, register_bytes: 64 },
            ..Target::default()
        };
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
        (cpu, avx512, prog.optimized_llvm_ir(&t).unwrap_or_else(|e| panic!("back end: {}", e.log)))
    })
    .collect()
}

#[test]
fn masked_accesses_without_an_instruction_loop_over_the_active_elements() {
    // Under divergent control flow a packet's 16-bit struct members and its byte gather are
    // masked. Without AVX-512 no instruction does either: LLVM unrolls each into a branch
    // and two blocks per element (256 for a span of 16 lanes' 16-byte structs), and a
    // generated kernel with a few dozen of them spent minutes in the register allocator.
    // They loop over the mask's set bits instead; with AVX-512 the masked loads of 16-bit
    // elements are instructions and stay, and no x86 target gathers bytes.
    let src = r#"
        typedef struct { short a; short b; short c; short d; } S;
        __kernel void k(__global const S *in, __global const uchar *bytes, __global const int *idx,
                        __global int *out) {
            int i = get_global_id(0);
            if (idx[i] > 3) {
                S s = in[i];
                out[i] = s.a + s.b + s.d + bytes[idx[i]];
            }
        }"#;
    for (cpu, avx512, ir) in width_16_on_avx2_and_avx512(src) {
        let narrow_masked: Vec<&str> = ir
            .lines()
            .filter(|l| l.contains("call") && l.contains("@llvm.masked.load.v") && l.contains("i16.p0"))
            .collect();
        assert_eq!(
            !narrow_masked.is_empty(),
            avx512,
            "{cpu}: masked loads of 16-bit elements {narrow_masked:?}:\n{ir}"
        );
        assert!(!ir.contains("@llvm.masked.gather.v16i8"), "{cpu}: a byte gather LLVM unrolls:\n{ir}");
        assert!(loops_over_active_elements(&ir), "{cpu}: no loop over the active elements:\n{ir}");
    }
}

#[test]
fn masked_byte_accesses_are_plain_under_a_full_mask_without_avx512() {
    // OpenCV's threshold: bytes under an `x < cols` test. Without AVX-512 a masked load or
    // store of bytes is a branch and a scalar access per lane; the mask is full in all but a
    // row's last packet, so a plain access runs there (9x faster on an AVX2 host). With
    // AVX-512 the masked access is one instruction and stays.
    let src = r#"
        __kernel void thr(__global const uchar *src, __global uchar *dst, int cols) {
            int x = get_global_id(0), y = get_global_id(1);
            if (x < cols) {
                uchar v = src[y * cols + x];
                dst[y * cols + x] = v > 127 ? 255 : 0;
            }
        }"#;
    for (cpu, avx512, ir) in width_16_on_avx2_and_avx512(src) {
        let plain = !avx512;
        let plain_load = ir.lines().any(|l| l.contains("load <16 x i8>, ptr"));
        let plain_store = ir.lines().any(|l| l.contains("store <16 x i8> ") && !l.contains("!nontemporal"));
        assert_eq!((plain_load, plain_store), (plain, plain), "{cpu}:\n{ir}");
        assert_partial_packet_access(cpu, avx512, &ir, "load.v16i8");
    }
}

/// x86 has no vector integer division: LLVM divides an `<8 x i32>` one element at a time,
/// each a long-latency scalar division. Vector code divides packets (and explicit vectors of
/// four or more elements) of 32-bit and narrower integers in floating point instead, exact
/// as `conformance/tests/vectorizer_math.rs` checks, when the divisor varies or is known
/// only at run time; a constant divisor stays an integer division (LLVM multiplies by its
/// reciprocal).
#[test]
fn integer_division_of_a_packet_is_a_floating_point_division() {
    let varying = r#"
        __kernel void d(__global const int* a, __global const int* b, __global int* q, int u) {
            size_t i = get_global_id(0);
            q[i] = a[i] / b[i] + a[i] % u;
        }"#;
    let ir = optimized_ir(varying, Some(8));
    let int_divs: Vec<&str> =
        ir.lines().filter(|l| ["sdiv <", "srem <", "udiv <", "urem <"].iter().any(|op| l.contains(op))).collect();
    assert!(int_divs.is_empty(), "{int_divs:#?}");
    assert!(ir.contains("fdiv <8 x double>"), "{ir}");
    let shorts = r#"
        __kernel void d(__global const ushort8* a, __global const ushort8* b, __global ushort8* q) {
            size_t i = get_global_id(0);
            q[i] = a[i] / b[i];
        }"#;
    assert!(optimized_ir(shorts, None).contains("fdiv <8 x float>"), "ushort8, scalar code");
    let constant = r#"
        __kernel void d(__global const int* a, __global int* q) {
            size_t i = get_global_id(0);
            q[i] = a[i] / 7 + a[i] % 10;
        }"#;
    assert!(!optimized_ir(constant, Some(8)).contains("fdiv"), "a constant divisor");
}
