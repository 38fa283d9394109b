//! The work-item analysis of the vectorizer on small kernels: value shapes, memory access
//! classes and divergence.

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
                classes.push(a.access(i).expect("every access is classified"));
            }
        }
    }
    (a.counts(f), a.divergent_branches.len(), classes)
}

#[test]
fn mandel_ir() {
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
    eprintln!("{c:?} {d}");
}
