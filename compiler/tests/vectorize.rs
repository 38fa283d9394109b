//! The vectorizer at compiler level: the work-item analysis on small kernels (memory access
//! classes and divergence) and vectorized kernels run against the scalar build.

mod common;

use softcl_compiler::ir::InstData;
use softcl_compiler::vectorize::analysis::{analyze, Access, AccessCounts};
use softcl_compiler::{compile_source, passes, Target};

/// Compiles `src`, inlines the kernel `name`'s calls and returns the analysis counts and
/// the number of divergent branches.
fn counts(src: &str, name: &str) -> (AccessCounts, usize, Vec<Access>) {
    let t = Target::default();
    let mut prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    passes::inline::inline_barrier_calls(&mut prog.module).unwrap();
    softcl_compiler::vectorize::inline_kernel_calls(&mut prog.module, 256).unwrap();
    let k = prog.module.kernel(name).expect("kernel");
    let f = &prog.module.functions[k.func];
    if std::env::var("SHOW_IR").is_ok() {
        eprintln!("{}", prog.module.display_function(k.func));
    }
    let a = analyze(&prog.module, f);
    let mut classes = Vec::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            if matches!(f.insts[i], InstData::Load { .. } | InstData::Store { .. } | InstData::Atomic { .. }) {
                // Accesses to private register variables are not memory accesses.
                classes.extend(a.access(i));
            }
        }
    }
    (a.counts(f), a.divergent_branches.len(), classes)
}

#[test]
fn mandelbrot_store_is_consecutive_and_its_loop_divergent() {
    let (c, d, _) = counts(
        r#"__kernel void mandel(__global int* out, int w, int h, int max_iter) {
            int px = get_global_id(0), py = get_global_id(1);
            float cr = -2.0f + 3.0f * px / w, ci = -1.5f + 3.0f * py / h;
            float zr = 0.0f, zi = 0.0f;
            int k = 0;
            while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                k++;
            }
            out[py * w + px] = k;
        }
        __kernel void nested(__global const int* lim, __global int* out) {
            int i = get_global_id(0);
            int acc = 0;
            for (int a = 0; a < lim[i]; a++) {
                if (a % 3 == 1) continue;
                for (int b = 0; b < a; b++) {
                    if (b > i % 5) break;
                    acc += a * 10 + b;
                }
                if (acc > 500) break;
            }
            out[i] = acc;
        }"#,
        "mandel",
    );
    // The translator needs clang's unoptimised module here (llvm.umin): locals are register
    // variables, whose shapes the analysis follows through their stores.
    assert!(d >= 1, "the escape test is divergent");
    assert_eq!((c.consecutive, c.gather_scatter, c.uniform), (1, 0, 0), "{c:?}");
}

#[test]
fn counters_of_divergent_loops_keep_their_shape() {
    // Lanes of a loop with a divergent exit run it in lock step (loop-mask form): a counter
    // that starts consecutive and steps by a uniform amount stays consecutive in the loop
    // (one vector load, not a gather), and one that starts uniform stays uniform.
    let (c, d, classes) = counts(
        r#"__kernel void grid_stride(uint n, __global const uchar* data, __global uint* out) {
            uint s = 0;
            for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
                s += data[i];
            out[get_global_id(0)] = s;
        }"#,
        "grid_stride",
    );
    assert!(d >= 1, "the loop exit is divergent");
    assert_eq!(classes, vec![Access::Consecutive, Access::Consecutive], "{c:?}");
    let (c, d, classes) = counts(
        r#"__kernel void find(__global const int* keys, __global const int* table, int len, __global int* out) {
            int i = get_global_id(0);
            int key = keys[i];
            int j = 0;
            while (j < len && table[j] != key)
                j++;
            out[i] = j;
        }"#,
        "find",
    );
    assert!(d >= 1, "the loop exit is divergent");
    assert_eq!(classes.iter().filter(|a| **a == Access::Uniform).count(), 1, "table[j] is one scalar load: {c:?}");
}

fn vtarget(width: Option<u32>) -> Target {
    Target {
        vectorizer: match width {
            Some(w) => softcl_compiler::Vectorizer::Forced { width: w, register_bytes: 64 },
            None => softcl_compiler::Vectorizer::Off,
        },
        ..Target::default()
    }
}

#[test]
fn local_reduction_with_barriers_vectorized() {
    use common::*;
    let src = r#"__kernel void reduce(__global const float* in, __global float* partial,
                             __local float* scratch) {
            uint lid = get_local_id(0);
            scratch[lid] = in[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
                if (lid < s)
                    scratch[lid] += scratch[lid + s];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (lid == 0)
                partial[get_group_id(0)] = scratch[0];
        }"#;
    let n = 256usize;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7) % 31) as f32).collect();
    let widths: Vec<Option<u32>> = match std::env::var("W") {
        Ok(x) => vec![Some(x.parse().unwrap())],
        _ => vec![None, Some(4), Some(16)],
    };
    for w in widths {
        let t = vtarget(w);
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("{}", e.log));
        let native = prog.codegen(&t).unwrap_or_else(|e| panic!("{}", e.log));
        let k = native.kernel("reduce").unwrap();
        assert_eq!(k.info.simd_width, w.unwrap_or(0), "width");
        for local in [32usize, 64] {
            let mut part = vec![0f32; n / local];
            let mut args = ArgBlock::new(&k.info);
            args.set_ptr(&k.info, 0, input.as_ptr());
            args.set_ptr(&k.info, 1, part.as_mut_ptr());
            run_ndrange(
                k,
                &mut args,
                1,
                [n as u64, 1, 1],
                [local as u64, 1, 1],
                [0; 3],
                Pattern::Whole,
                &[(2, local * 4)],
            );
            for (g, p) in part.iter().enumerate() {
                let want: f32 = input[g * local..(g + 1) * local].iter().sum();
                assert_eq!(*p, want, "width {w:?} local {local} group {g}");
            }
        }
    }
}

#[test]
fn stencil_accesses_stay_consecutive_under_divergence() {
    let (c, d, _) = counts(
        r#"__kernel void stencil5(int w, int h, __global const float *restrict in, __global float *restrict out) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}"#,
        "stencil5",
    );
    assert!(d >= 1, "the border test is divergent");
    assert_eq!(c.gather_scatter, 0, "{c:?}");
    // From clang's optimised module: `in[i]` is loaded once before the border test and the
    // two stores are one after it (the unoptimised module, which clang's SLP vectorizer's
    // `freeze` forced on this kernel before `-fno-slp-vectorize`, had 8 accesses).
    assert_eq!(c.consecutive, 6, "{c:?}");
}

/// Runs `name` of `src` over a 2D range at every width and compares with the scalar build.
fn same_as_scalar_2d(
    src: &str,
    name: &str,
    w: usize,
    h: usize,
    local: [u64; 2],
    set: impl Fn(&mut common::ArgBlock, &softcl_compiler::NativeKernel, *mut f32, *mut f32),
) {
    use common::*;
    let input: Vec<f32> = (0..w * h).map(|i| ((i * 13) % 17) as f32 * 0.25).collect();
    let mut results = Vec::new();
    let widths: Vec<Option<u32>> = match std::env::var("W") {
        Ok(x) => vec![None, Some(x.parse().unwrap())],
        _ => vec![None, Some(4), Some(8), Some(16)],
    };
    for width in widths {
        let t = vtarget(width);
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("{}", e.log));
        let native = prog.codegen(&t).unwrap_or_else(|e| panic!("{}", e.log));
        let k = native.kernel(name).unwrap();
        assert_eq!(k.info.simd_width, width.unwrap_or(0));
        let mut inp = input.clone();
        let mut out = vec![-1f32; w * h];
        let mut args = ArgBlock::new(&k.info);
        set(&mut args, k, inp.as_mut_ptr(), out.as_mut_ptr());
        run_ndrange(k, &mut args, 2, [w as u64, h as u64, 1], [local[0], local[1], 1], [0; 3], Pattern::Whole, &[]);
        results.push((width, out));
    }
    for (width, out) in &results[1..] {
        assert_eq!(out, &results[0].1, "width {width:?} differs from the scalar build");
    }
}

#[test]
fn stencil_vectorized_matches_scalar() {
    let src = r#"__kernel void stencil5(int w, int h, __global const float *restrict in, __global float *restrict out) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}"#;
    let (w, h) = (45usize, 13usize);
    same_as_scalar_2d(src, "stencil5", w, h, [20, 3], |args, k, inp, out| {
        args.set(&k.info, 0, w as i32);
        args.set(&k.info, 1, h as i32);
        args.set_ptr(&k.info, 2, inp);
        args.set_ptr(&k.info, 3, out);
    });
}

#[test]
fn nbody_inner_loads_are_uniform() {
    let (c, d, _) = counts(
        r#"__kernel void nbody(int n, float dt, float eps2, __global const float4 *restrict pos,
                    __global const float4 *restrict vel, __global float4 *restrict new_pos,
                    __global float4 *restrict new_vel) {
    int i = get_global_id(0);
    float4 p = pos[i];
    float3 acc = (float3)(0.0f);
    for (int j = 0; j < n; ++j) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float inv = rsqrt(dot(d, d) + eps2);
        acc += (q.w * inv * inv * inv) * d;
    }
    float4 v = vel[i];
    v.xyz += acc * dt;
    new_vel[i] = v;
    new_pos[i] = (float4)(p.xyz + v.xyz * dt, p.w);
}"#,
        "nbody",
    );
    assert_eq!(d, 0, "the j loop is uniform");
    assert_eq!((c.uniform, c.gather_scatter), (1, 0), "{c:?}");
}

/// The member groups of kernel `name`: for each group, (is a store group, members, slots on).
fn member_groups(src: &str, name: &str) -> Vec<(bool, usize, usize)> {
    let t = Target::default();
    let mut prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    passes::inline::inline_barrier_calls(&mut prog.module).unwrap();
    softcl_compiler::vectorize::inline_kernel_calls(&mut prog.module, 256).unwrap();
    let k = prog.module.kernel(name).expect("kernel");
    let f = &prog.module.functions[k.func];
    let a = analyze(&prog.module, f);
    let g = softcl_compiler::vectorize::members::find(&prog.module, f, &a);
    g.groups
        .iter()
        .map(|g| {
            let store = matches!(f.insts[g.members[0]], InstData::Store { .. });
            (store, g.members.len(), g.slots.iter().filter(|&&s| s).count())
        })
        .collect()
}

#[test]
fn struct_members_of_one_element_form_span_groups() {
    // The particle update: pos and vel loaded together and stored together (8 of 8 slots).
    let g = member_groups(
        r#"typedef struct { float4 pos; float4 vel; } Particle;
        __kernel void particles(float dt, __global const Particle *restrict in, __global Particle *restrict out) {
            size_t i = get_global_id(0);
            Particle p = in[i];
            p.pos = p.pos + p.vel * dt;
            if (p.pos.y < 0.0f)
                p.pos.y = -p.pos.y;
            out[i] = p;
        }"#,
        "particles",
    );
    assert_eq!(g, vec![(false, 2, 8), (true, 2, 8)], "particles");
    // A load between two stores of one element splits them; a uniform element (every lane
    // the same struct) is no group; members of different elements are not grouped.
    let g = member_groups(
        r#"typedef struct { float x, y, z; } P3;
        __kernel void split(__global P3 *io, int k) {
            size_t i = get_global_id(0);
            io[i].x = io[i].y + io[i].z;
            float x = io[k].x;
            io[i].y = x;
            io[i].z = x + 1.0f;
            io[i + 1].x = io[k].y + io[k].z;
        }"#,
        "split",
    );
    assert_eq!(g, vec![(false, 2, 2), (true, 2, 2)], "split");
    // Members of a packed struct are aligned to a byte only: a span of them, accessed aligned
    // to its element, would claim more than its address has.
    let packed = r#"typedef struct __attribute__((packed)) { int a; int b; } P;
        __kernel void packed(__global P *io) {
            size_t i = get_global_id(0);
            int a = io[i].a, b = io[i].b;
            io[i].a = b;
            io[i].b = a + 1;
        }"#;
    assert_eq!(member_groups(packed, "packed"), vec![], "packed");
    assert_eq!(member_groups(&packed.replace("__attribute__((packed))", ""), "packed").len(), 2, "not packed");
}

/// A kernel that computes with explicit vectors as wide as the host's registers (hashcat's
/// `u32x16` on AVX-512) and keeps many of them live stays scalar under the heuristic: packets
/// of its work-items would gain no vector width, only values of W registers each that spill
/// (hashcat's SHA2-256 at W = 8 did not finish compiling in 20 minutes). Register-wide
/// vectors with few live values (a chain) and narrower vectors are still packed, and every
/// build computes the same results.
#[test]
fn register_wide_vectors_with_many_live_values_stay_scalar() {
    use common::*;
    // `words` values carried around a loop, each mixed with its neighbours.
    let src = |ty: &str, words: usize| {
        let load: String = (0..words).map(|w| format!("{ty} w{w} = in[{words} * i + {w}];\n")).collect();
        let round: String = (0..words)
            .map(|w| format!("w{w} = rotate(w{w} + w{}, ({ty})7) ^ w{};\n", (w + words - 1) % words, (w + 1) % words))
            .collect();
        let xor: Vec<String> = (0..words).map(|w| format!("w{w}")).collect();
        format!(
            "__kernel void mix(__global const {ty}* in, __global {ty}* out) {{\n\
             size_t i = get_global_id(0);\n{load}\
             for (int r = 0; r < 4; r++) {{\n{round}}}\n\
             out[i] = {};\n}}",
            xor.join(" ^ ")
        )
    };
    let auto = |bytes: u32| Target {
        vectorizer: softcl_compiler::Vectorizer::Auto { register_bytes: bytes },
        ..Target::default()
    };
    // (element lanes, live words, register bytes, scalar?)
    for (lanes, words, bytes, scalar) in [(16, 16, 64, true), (8, 16, 32, true), (16, 2, 64, false), (4, 16, 64, false)]
    {
        let name = format!("uint{lanes}");
        let t = auto(bytes);
        let prog = compile_source(&src(&name, words), "", &t).unwrap_or_else(|e| panic!("{}", e.log));
        let native = prog.codegen(&t).unwrap_or_else(|e| panic!("{}", e.log));
        let k = native.kernel("mix").unwrap();
        let what = format!("{words} live {name} on {bytes}-byte registers");
        assert_eq!(k.info.simd_width == 0, scalar, "{what}: simd_width {}", k.info.simd_width);

        let n = 64usize;
        let lanes = lanes as usize;
        // Vector loads may assume the vector's alignment.
        let input: Vec<u32> = (0..n * words * lanes).map(|i| (i as u32).wrapping_mul(2654435761)).collect();
        let mut in_buf = AlignedBuf::new(input.len() * 4);
        for (d, v) in in_buf.bytes_mut().chunks_exact_mut(4).zip(&input) {
            d.copy_from_slice(&v.to_ne_bytes());
        }
        let mut out_buf = AlignedBuf::new(n * lanes * 4);
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, in_buf.as_mut_ptr());
        args.set_ptr(&k.info, 1, out_buf.as_mut_ptr());
        run_1d(k, &mut args, n as u64, 16);
        let out: Vec<u32> =
            out_buf.bytes().chunks_exact(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        for i in 0..n {
            for l in 0..lanes {
                let mut w: Vec<u32> = (0..words).map(|j| input[(words * i + j) * lanes + l]).collect();
                for _ in 0..4 {
                    for j in 0..words {
                        let (prev, next) = (w[(j + words - 1) % words], w[(j + 1) % words]);
                        w[j] = w[j].wrapping_add(prev).rotate_left(7) ^ next;
                    }
                }
                assert_eq!(out[i * lanes + l], w.iter().fold(0, |a, b| a ^ b), "{what}: item {i} lane {l}");
            }
        }
    }
}

/// A kernel shaped like hashcat's pure kernels (`m00000_a0-pure.cl`: a bounds check that
/// returns, then a rule engine's loops over a private password buffer whose length varies by
/// work-item): `loops` divergent loops over a private array, each followed by a divergent
/// branch, then `mixes` steps of straight-line arithmetic (hashcat's unrolled hash rounds),
/// all of it under masks once vectorized.
fn rule_engine_source(loops: usize, mixes: usize) -> String {
    let mut s = String::from(
        "__kernel void rules(__global const uint* in, __global uint* out, uint n) {\n\
         size_t gid = get_global_id(0);\n\
         if (gid >= n) return;\n\
         uint buf[16];\n\
         for (int i = 0; i < 16; i++) buf[i] = in[gid * 16 + i];\n\
         uint len = in[gid] & 15;\n",
    );
    for j in 0..loops {
        s.push_str(&format!(
            "for (uint i = 0; i < len; i++) buf[i] = (buf[i] ^ {j}u) + buf[(i + {j}u) & 15];\n\
             if (buf[{}] & 1) len = (len + {}u) & 15;\n",
            j % 16,
            j % 5 + 1
        ));
    }
    s.push_str("uint x = 0;\nfor (int i = 0; i < 16; i++) x ^= buf[i];\n");
    for j in 0..mixes {
        s.push_str(&format!("x = rotate(x + buf[{}], {}u) ^ {j}u;\n", j % 16, j % 31 + 1));
    }
    s.push_str("out[gid] = x;\n}\n");
    s
}

/// What `rule_engine_source(loops, 0)` computes for work-item `gid`.
fn rule_engine_reference(input: &[u32], gid: usize, loops: usize) -> u32 {
    let mut buf: Vec<u32> = input[gid * 16..gid * 16 + 16].to_vec();
    let mut len = input[gid] & 15;
    for j in 0..loops as u32 {
        for i in 0..len as usize {
            buf[i] = (buf[i] ^ j).wrapping_add(buf[(i + j as usize) & 15]);
        }
        if buf[(j % 16) as usize] & 1 != 0 {
            len = (len + j % 5 + 1) & 15;
        }
    }
    buf.iter().fold(0, |a, b| a ^ b)
}

/// `vectorize::linearization_bound` of kernel `rules` in `src`, as the back end sees it (calls
/// inlined).
fn linearization_bound_of(src: &str) -> Option<String> {
    let mut prog = compile_source(src, "", &Target::default()).unwrap_or_else(|e| panic!("{}", e.log));
    softcl_compiler::vectorize::inline_kernel_calls(&mut prog.module, 256).unwrap();
    let f = &prog.module.functions[prog.module.kernel("rules").unwrap().func];
    softcl_compiler::vectorize::linearization_bound(f, &analyze(&prog.module, f))
}

/// The heuristic width's compile-time check (`vectorize::linearization_bound`): a kernel with
/// more than `MAX_LINEARIZED` instructions under masks and more than `MAX_LOOP_MASK_LOOPS`
/// loops in loop-mask form stays scalar, with the reason, where the same kernel with fewer
/// loops, or as long with few loops (hashcat's `-O` kernels), is packed; hashcat's pure MD5
/// kernel (9,000 instructions under masks, 39 such loops) took 411 s of code generation at
/// W = 8 and 1.1 s scalar. A Gen device's instrumented build refuses it (the device then
/// runs the scalar build). Both widths compute the same results.
#[test]
fn kernels_with_long_linearized_loop_nests_stay_scalar() {
    use common::*;
    use softcl_compiler::vectorize::{MAX_LINEARIZED, MAX_LOOP_MASK_LOOPS};
    // As long, but with 4 loops: packed.
    let long_few_loops = rule_engine_source(4, 2 * MAX_LINEARIZED);
    assert_eq!(linearization_bound_of(&long_few_loops), None);
    let auto = Target { vectorizer: softcl_compiler::Vectorizer::Auto { register_bytes: 64 }, ..Target::default() };
    for (loops, scalar) in [(300, true), (40, false)] {
        let src = rule_engine_source(loops, 0);
        let why = linearization_bound_of(&src);
        assert_eq!(why.is_some(), scalar, "{loops} loops: {why:?}");
        if let Some(why) = &why {
            let limits = format!("more than {MAX_LINEARIZED} and {MAX_LOOP_MASK_LOOPS}");
            assert!(why.contains(&format!("with {loops} loops in loop-mask form")) && why.contains(&limits), "{why}");
        }

        let prog = compile_source(&src, "", &auto).unwrap_or_else(|e| panic!("{}", e.log));
        let native = prog.codegen(&auto).unwrap_or_else(|e| panic!("{}", e.log));
        let k = native.kernel("rules").unwrap();
        assert_eq!(k.info.simd_width == 0, scalar, "{loops} loops: simd_width {}", k.info.simd_width);
        let n = 100usize;
        let input: Vec<u32> = (0..n * 16).map(|i| (i as u32).wrapping_mul(2654435761) >> 3).collect();
        let mut in_buf = AlignedBuf::new(input.len() * 4);
        for (d, v) in in_buf.bytes_mut().chunks_exact_mut(4).zip(&input) {
            d.copy_from_slice(&v.to_ne_bytes());
        }
        let mut out_buf = AlignedBuf::new(128 * 4);
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, in_buf.as_mut_ptr());
        args.set_ptr(&k.info, 1, out_buf.as_mut_ptr());
        args.set(&k.info, 2, n as u32);
        run_1d(k, &mut args, 128, 32);
        let out: Vec<u32> =
            out_buf.bytes().chunks_exact(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        for (gid, &got) in out.iter().enumerate().take(n) {
            assert_eq!(got, rule_engine_reference(&input, gid, loops), "{loops} loops: item {gid}");
        }
        assert!(out[n..].iter().all(|&x| x == 0), "{loops} loops: items past n wrote");

        // The Gen device's instrumented SIMD8 build refuses the long loop nest, with the reason.
        if scalar {
            let gen = Target {
                gen: Some(softcl_compiler::GenBuild { simd: 8, linear_lanes: false, row_width: 0 }),
                vectorizer: softcl_compiler::Vectorizer::Forced { width: 8, register_bytes: 32 },
                ..Target::default()
            };
            let Err(err) = prog.codegen(&gen) else { panic!("a Gen SIMD8 build of a long linearized loop nest") };
            assert!(
                err.log.contains("cannot run at SIMD8") && err.log.contains("loops in loop-mask form"),
                "{}",
                err.log
            );
        }
    }
}

#[test]
fn private_pointer_retargeted_takes_the_meet_of_its_targets() {
    // `pp` first holds the address of an int (lane copies 4 bytes apart: consecutive), then
    // of a struct member (lane copies a struct apart). Unoptimised, `pp` is a register
    // variable; the load through it may not keep the first target's stride.
    let src = r#"typedef struct { uint m0; int m1[4]; int m2[8]; } S;
        __kernel void k(__global const int *in, __global uint *out) {
            int gid = get_global_id(0);
            int i0 = in[gid];
            S s = { .m1 = { 1, 1, in[gid + 1] } };
            int *pp = &i0;
            pp = &s.m1[2];
            out[gid] = (uint)*pp;
        }"#;
    let t = Target::default();
    let mut prog = compile_source(src, "-cl-opt-disable", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    softcl_compiler::vectorize::inline_kernel_calls(&mut prog.module, 256).unwrap();
    let k = prog.module.kernel("k").expect("kernel");
    let f = &prog.module.functions[k.func];
    let a = analyze(&prog.module, f);
    // The access through `pp`: a load whose address is itself loaded from a private variable.
    let through_pp = f
        .layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter().copied())
        .filter(|&i| match &f.insts[i] {
            InstData::Load { ptr, .. } => match f.values[*ptr].def {
                softcl_compiler::ir::ValueDef::Result(d) => matches!(f.insts[d], InstData::Load { .. }),
                _ => false,
            },
            _ => false,
        })
        .filter_map(|i| a.access(i))
        .collect::<Vec<_>>();
    assert!(!through_pp.is_empty(), "the load through pp is a memory access");
    assert!(
        through_pp.iter().all(|&c| c != Access::Consecutive),
        "a pointer retargeted from `&i0` to `&s.m1[2]` is not consecutive: {through_pp:?}"
    );
}
