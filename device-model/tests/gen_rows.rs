//! Hardware threads of whole rows (a work-group's `local_size[0]` dividing the SIMD width,
//! its planes filling whole threads) run the rows variant, whose loads and stores of a row
//! are vector accesses and whose line and bank counts have closed forms. It must compute
//! what the linear-lanes variant computes, results and counters alike, whatever the steps
//! between lanes and rows (known, read at run time, negative), the masks (full, partial,
//! divergent), the element sizes and the work-group's depth; and a launch whose last
//! work-groups do not fill whole threads runs those with the linear-lanes variant.

use softcl_compiler::gen_abi::GenKernelInfo;
use softcl_compiler::GenBuild;
use softcl_device_model::GenDevice;
use std::sync::Arc;

mod support;
use support::{build, launch_with_ints, Buf, Sum};

/// Every kernel: `(global const int *in, global int *out, int w)`, `w` = 32.
const KERNELS: &str = r#"
#define TS 8
__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void tiled(global const int *in, global int *out, int w) {
    local int ta[TS][TS], tb[TS][TS];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    int acc = 0;
    for (int t = 0; t < w; t += TS) {
        ta[ly][lx] = in[row * w + t + lx];
        tb[ly][lx] = in[(t + ly) * w + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; ++k)
            acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[row * w + col] = acc;
}

__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void stencil(global const int *in, global int *out, int w) {
    int x = get_global_id(0), y = get_global_id(1), h = get_global_size(1);
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[i] = in[i]; return; }
    out[i] = 2 * in[i] + in[i - 1] + in[i + 1] + 3 * in[i - w] + in[i + w];
}

/* Rows and lanes in reverse, steps known at compile time. */
__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void reversed(global const int *in, global int *out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[(31 - y) * 32 + x] = in[y * 32 + (31 - x)] + in[(y / 2) * 64 + 2 * x];
}

/* A transpose through SLM (square work-groups): columns read down rows 68 and 64 bytes apart. */
__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void transpose(global const int *in, global int *out, int w) {
    local int t[16][17];
    local int u[16][16];
    int lx = get_local_id(0), ly = get_local_id(1);
    t[ly][lx] = in[get_global_id(1) * w + get_global_id(0)];
    u[lx][ly] = in[get_global_id(1) * w + get_global_id(0)] + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(1) * w + get_global_id(0)] = t[lx][ly] + 7 * u[ly][lx];
}

/* Narrow and wide elements, and a branch that splits every row. */
__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void mixed(global const int *in, global int *out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    global const uchar *b = (global const uchar *)in;
    global const short *s = (global const short *)in;
    global const int4 *v = (global const int4 *)in;
    int r = b[y * w + x] + s[y * 3 * w + x] + v[y + x].z;
    if (x & 1)
        r += in[y * w + 2 * x];
    else
        r -= in[x * w + y];
    out[y * w + x] = r;
}

/* A work-group of several planes: z is the same for a thread's lanes. */
__attribute__((intel_reqd_sub_group_size(SIMD)))
kernel void planes(global const int *in, global int *out, int w) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int i = (z * 4 + y) * 8 + x;
    out[i] = in[i] * 3 + in[z * 16 + x] + get_local_id(2);
}
"#;

/// Runs `kernel` of `KERNELS` at `simd` on `dev`; returns `out`, the summed counters and
/// the report.
fn run(
    dev: &GenDevice,
    simd: u32,
    kernel: &str,
    global: [usize; 3],
    local: [usize; 3],
) -> (Vec<i32>, Vec<u64>, String) {
    let program = build(dev, &KERNELS.replace("SIMD", &simd.to_string()));
    let k = program.kernel(kernel).expect("kernel exists");
    let mut input = Buf::new(4096, |i| (i as i32).wrapping_mul(2654435761u32 as i32) >> 7);
    let mut out = Buf::new(4096, |_| -1);
    let sum = Arc::new(Sum::default());
    let report =
        launch_with_ints(dev, k, &mut [&mut input, &mut out], &[(2, 32)], &[], global, local, Some(sum.clone()))
            .report
            .unwrap_or_default();
    let info: GenKernelInfo = k
        .gen_variant(GenBuild { simd, linear_lanes: true, row_width: 0 }, 0)
        .expect("a Gen build")
        .unwrap_or_else(|e| panic!("{kernel}: no linear-lanes variant: {e}"))
        .0
        .info
        .gen
        .expect("instrumented");
    ((0..4096).map(|i| out.get(i)).collect(), sum.words(&info), report)
}

/// A launch: kernel, SIMD width, global, local, and whether every thread is whole rows.
type Case = (&'static str, u32, [usize; 3], [usize; 3], bool);

const CASES: &[Case] = &[
    ("tiled", 32, [32, 32, 1], [8, 8, 1], true),
    ("tiled", 16, [32, 32, 1], [8, 8, 1], true),
    ("stencil", 32, [32, 32, 1], [16, 16, 1], true),
    ("stencil", 16, [32, 32, 1], [8, 8, 1], true),
    ("stencil", 32, [32, 32, 1], [4, 8, 1], true),
    // The last work-groups (8 x 2) are half a thread: they run the linear-lanes variant.
    ("stencil", 32, [32, 10, 1], [8, 4, 1], false),
    ("reversed", 32, [32, 32, 1], [8, 4, 1], true),
    ("reversed", 16, [32, 32, 1], [4, 4, 1], true),
    ("transpose", 32, [32, 32, 1], [16, 16, 1], true),
    ("transpose", 16, [32, 32, 1], [8, 8, 1], true),
    ("mixed", 32, [32, 32, 1], [16, 4, 1], true),
    ("mixed", 16, [32, 16, 1], [8, 2, 1], true),
    ("planes", 16, [4, 4, 8], [4, 4, 4], true),
    ("planes", 32, [8, 4, 8], [8, 4, 2], true),
];

#[test]
fn whole_rows_count_and_compute_as_linear_lanes() {
    let rows_dev = GenDevice::default();
    let linear_dev = GenDevice::default().with_row_variants(false);
    for &(kernel, simd, global, local, whole) in CASES {
        let what = format!("{kernel} at SIMD{simd}, global {global:?} local {local:?}");
        let (out, counters, report) = run(&rows_dev, simd, kernel, global, local);
        let (want_out, want_counters, linear_report) = run(&linear_dev, simd, kernel, global, local);
        assert!(report.contains(&format!("SIMD{simd}")) && !report.contains("uncounted"), "{what}: {report}");
        let rows_named = if whole { "linear lanes of whole rows" } else { "whole rows where they fit" };
        assert!(report.contains(rows_named), "{what}: {report}");
        assert!(!linear_report.contains("whole rows"), "{what}: {linear_report}");
        let items: usize = global.iter().product();
        assert!(kernel == "planes" || out.iter().take(items).all(|&v| v != -1), "{what}: every item wrote");
        if let Some(i) = (0..out.len()).find(|&i| out[i] != want_out[i]) {
            let wrong = (0..out.len()).filter(|&i| out[i] != want_out[i]).count();
            panic!("{what}: out[{i}] = {} where the linear lanes give {} ({wrong} differ)", out[i], want_out[i]);
        }
        assert_eq!(counters, want_counters, "{what}: the counters");
    }
}

/// The stencil's results are the stencil's (the rows variant is not only self-consistent).
#[test]
fn whole_rows_stencil_is_right() {
    let (out, _, _) = run(&GenDevice::default(), 32, "stencil", [32, 32, 1], [16, 16, 1]);
    let input: Vec<i32> = (0..4096).map(|i: i32| i.wrapping_mul(2654435761u32 as i32) >> 7).collect();
    for y in 0..32 {
        for x in 0..32 {
            let i = y * 32 + x;
            let want = if x == 0 || y == 0 || x == 31 || y == 31 {
                input[i]
            } else {
                2 * input[i] + input[i - 1] + input[i + 1] + 3 * input[i - 32] + input[i + 32]
            };
            assert_eq!(out[i], want, "({x}, {y})");
        }
    }
}
