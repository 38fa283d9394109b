//! The Gen device runs each hardware thread as one call of the kernel vectorized at its SIMD
//! width, counting messages in generated code: the counters of the optimisation guide's
//! worked cases (16 work-items reading int), exactly, and the results still right.

use softcl_compiler::abi::ImageArg;
use softcl_compiler::gen_abi::{self, AccessKind, GenKernelInfo, SiteCounters};
use softcl_compiler::image::Dim;
use softcl_compiler::{AddressSpace, GenBuild};
use softcl_device_model::GenDevice;
use std::sync::Arc;

mod support;
use support::{build, launch_with, launch_with_ints, run_simd16 as run, site_of, ArgAddr, Buf, Sum};

/// A 2D image of `width` x `height` pixels of `pixel_bytes` over 64-byte aligned rows, so
/// that line counts do not depend on where the allocator put it.
struct Image2d {
    pixels: Buf,
    arg: ImageArg,
}

impl Image2d {
    fn new(order: u32, ty: u32, pixel_bytes: usize, width: u32, height: u32) -> Self {
        let row_pitch = width as u64 * pixel_bytes as u64;
        assert!(row_pitch.is_multiple_of(64), "rows of whole lines");
        let mut pixels = Buf::new(row_pitch as usize * height as usize / 4, |_| 0);
        let arg = ImageArg {
            data: pixels.addr() as *mut u8,
            row_pitch,
            slice_pitch: row_pitch * u64::from(height),
            size: [width, height, 1],
            dim: ImageArg::dim_code(Dim::D2),
            channel_order: order,
            channel_type: ty,
        };
        Image2d { pixels, arg }
    }
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.pixels.0)
    }
}

impl ArgAddr for Image2d {
    fn addr(&mut self) -> u64 {
        &self.arg as *const ImageArg as u64
    }
}

/// A Gen device whose reports go to a JSON file of a directory of this test's own (`tag`):
/// the directory, the file and the device.
fn json_sink(tag: &str) -> (std::path::PathBuf, std::path::PathBuf, GenDevice) {
    use softcl_device_model::gen::model::ReportSink;
    let dir = std::env::temp_dir().join(format!("softcl-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let dev = GenDevice::default().with_report_sink(ReportSink::Json(json.clone()));
    (dir, json, dev)
}

const SHAPES: &str = r#"
kernel void copy2d(global const int *a, global int *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 16 + x] = a[y * 16 + x] + 1;
}
"#;

/// Work-group shapes of 16 work-items reading a row-major 16 x 16 int array.
#[test]
fn work_group_shape_decides_lines_per_message() {
    let dev = GenDevice::default();
    let program = build(&dev, SHAPES);
    for (local, lines) in [([16, 1, 1], 1), ([4, 4, 1], 4), ([1, 16, 1], 16)] {
        let mut a = Buf::new(256, |i| i as i32);
        let mut out = Buf::new(256, |_| 0);
        let (sum, info, report) = run(&dev, &program, "copy2d", &mut [&mut a, &mut out], [16, 16, 1], local);
        for i in 0..256 {
            assert_eq!(out.get(i), i as i32 + 1, "{local:?}: out[{i}]");
        }
        let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
        // 256 work-items = 16 hardware threads of 16 lanes, one message each.
        assert_eq!((load.messages, load.active_lanes, load.useful_bytes), (16, 256, 1024), "{local:?} {report}");
        assert_eq!(load.l3_lines, 16 * lines, "{local:?}: {lines} lines per message; {report}");
        let store = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Store));
        assert_eq!(store.l3_lines, 16 * lines, "{local:?}: the store too");
    }
}

const GLOBAL: &str = r#"
#define N 512
kernel void g_gid(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[g]; }
kernel void g_gid1(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[g + 1]; }
kernel void g_rev(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[N - 1 - g]; }
kernel void g_x4(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[g * 4]; }
kernel void g_x16(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[g * 16]; }
kernel void g_x32(global const int *a, global int *out) { int g = get_global_id(0); out[g] = a[g * 32]; }
kernel void g_rev_behind(global const int *a, global int *out) {
    int g = get_global_id(0);
    int v = 1533;
    if (g >= 1)
        v = a[N - g];
    out[g] = v;
}
"#;

/// The guide's global-memory table: 16 work-items reading int.
#[test]
fn global_access_patterns() {
    let dev = GenDevice::default();
    let program = build(&dev, GLOBAL);
    type Index = fn(usize) -> usize;
    let cases: [(&str, Index, u64); 6] = [
        ("g_gid", |g| g, 1),
        ("g_gid1", |g| g + 1, 2),
        ("g_rev", |g| 511 - g, 1),
        ("g_x4", |g| g * 4, 4),
        ("g_x16", |g| g * 16, 16),
        ("g_x32", |g| g * 32, 16),
    ];
    for (name, index, lines) in cases {
        let mut a = Buf::new(16 * 32 + 32, |i| 3 * i as i32);
        let mut out = Buf::new(16, |_| -1);
        let (sum, info, report) = run(&dev, &program, name, &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
        for g in 0..16 {
            assert_eq!(out.get(g), 3 * index(g) as i32, "{name}: out[{g}]");
        }
        let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
        assert_eq!((load.messages, load.active_lanes), (1, 16), "{name}");
        assert_eq!(load.l3_lines, lines, "{name}: lines of one message; {report}");
        let store = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Store));
        assert_eq!(store.l3_lines, 1, "{name}: out[gid]");
    }
}

/// A backward load with lane 0 off: lanes 1-15 read a[511] down to a[497], one line. Lane
/// 0's address is found from the first active lane's, the greatest of the active lanes'
/// (taking the least put lane 0 at a[498] and the lanes on two lines).
#[test]
fn a_backward_load_without_lane_0_counts_its_lanes_lines() {
    let dev = GenDevice::default();
    let program = build(&dev, GLOBAL);
    let mut a = Buf::new(16 * 32 + 32, |i| 3 * i as i32);
    let mut out = Buf::new(16, |_| -1);
    let (sum, info, report) = run(&dev, &program, "g_rev_behind", &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        assert_eq!(out.get(g), if g == 0 { 1533 } else { 3 * (512 - g as i32) }, "out[{g}]");
    }
    let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
    assert_eq!((load.messages, load.active_lanes, load.l3_lines), (1, 15, 1), "{report}");
}

const SLM: &str = r#"
#define N 16
#define CASE(name, index) \
kernel void name(global int *out) { \
    local int s[16 * 17 + 16]; \
    int g = get_local_id(0); \
    for (int i = g; i < 16 * 17 + 16; i += 16) s[i] = i; \
    barrier(1); /* CLK_LOCAL_MEMORY_FENCE */ \
    out[get_global_id(0)] = s[index]; \
}
CASE(l_gid, g)
CASE(l_gid1, g + 1)
CASE(l_rev, N - 1 - g)
CASE(l_pairs, g & ~1)
CASE(l_x2, g * 2)
CASE(l_x16, g * 16)
CASE(l_x17, g * 17)
kernel void l_even_x2(global int *out) {
    local int s[64];
    int g = get_local_id(0);
    s[g] = g;
    s[g + 16] = g + 16;
    barrier(1);
    if (g % 2 == 0)
        out[get_global_id(0)] = s[g * 2];
}
"#;

/// The guide's local-memory table: 16 work-items reading int from SLM.
#[test]
fn slm_access_patterns() {
    let dev = GenDevice::default();
    let program = build(&dev, SLM);
    type Index = fn(usize) -> usize;
    let cases: [(&str, Index, u64); 7] = [
        ("l_gid", |g| g, 1),
        ("l_gid1", |g| g + 1, 1),
        ("l_rev", |g| 15 - g, 1),
        ("l_pairs", |g| g & !1, 1),
        ("l_x2", |g| g * 2, 2),
        ("l_x16", |g| g * 16, 16),
        ("l_x17", |g| g * 17, 1),
    ];
    for (name, index, cycles) in cases {
        let mut out = Buf::new(32, |_| -1);
        let (sum, info, report) = run(&dev, &program, name, &mut [&mut out], [32, 1, 1], [16, 1, 1]);
        for g in 0..32 {
            assert_eq!(out.get(g), index(g % 16) as i32, "{name}: out[{g}]");
        }
        let load = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Load));
        // Two work-groups, one message each.
        assert_eq!((load.messages, load.active_lanes), (2, 32), "{name}");
        assert_eq!(load.slm_cycles, 2 * cycles, "{name}: {cycles} cycles per message; {report}");
        assert_eq!(load.slm_conflict_cycles, 2 * (cycles - 1), "{name}");
        assert_eq!(load.worst_bank_ways, cycles, "{name}");
        assert_eq!(load.l3_lines, 0, "{name}: SLM is not L3");
        // The initialisation writes 16 consecutive ints per message: full speed.
        let store = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Store));
        assert_eq!(store.slm_cycles, store.messages, "{name}: s[i] = i");
        assert_eq!(store.messages, 2 * 18, "{name}: 18 iterations per work-group");
    }
    // Stride 2 ints under a mask of the even lanes: dwords 0, 4, ..., 28 on banks 0, 4, 8,
    // 12, twice each (not the 1 cycle of 8 consecutive lanes at that stride).
    let mut out = Buf::new(16, |_| -1);
    let (sum, info, report) = run(&dev, &program, "l_even_x2", &mut [&mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        assert_eq!(out.get(g), if g % 2 == 0 { 2 * g as i32 } else { -1 }, "out[{g}]");
    }
    let load = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Load));
    assert_eq!((load.messages, load.active_lanes, load.slm_cycles, load.worst_bank_ways), (1, 8, 2, 2), "{report}");
}

const WIDE_SLM: &str = r#"
kernel void w_f4(global float4 *out) {
    local float4 t[64];
    int g = get_local_id(0);
    t[g] = (float4)(g, g + 1, g + 2, g + 3);
    barrier(1);
    out[get_global_id(0)] = t[g];
}
kernel void w_f4_x2(global float4 *out) {
    local float4 t[64];
    int g = get_local_id(0);
    t[g] = (float4)(g);
    t[g + 16] = (float4)(g + 16);
    barrier(1);
    out[get_global_id(0)] = t[g * 2];
}
kernel void w_i2_gather(global int2 *out) {
    local int2 t[16];
    int g = get_local_id(0);
    t[g] = (int2)(g, -g);
    barrier(1);
    out[get_global_id(0)] = t[(g * 5) & 15];
}
"#;

/// SLM accesses of more than one dword per lane: every dword of every lane is in its bank
/// (16 lanes of float4 are 64 dwords, at least 4 cycles). Before, only each lane's first
/// dword was counted, as if float4 cost what int does.
#[test]
fn wide_slm_accesses_count_every_dword() {
    let dev = GenDevice::default();
    let program = build(&dev, WIDE_SLM);
    // (kernel, load cycles, conflict cycles, worst ways): float4 packed: 64 dwords, 4 per
    // bank; float4 at stride 32 bytes: dwords 8g..8g+3, the even lanes on banks 0-3 and the
    // odd ones on banks 8-11, 8 each; int2 gathered by a permutation: 32 dwords, 2 per bank.
    let cases = [("w_f4", 4, 0, 4), ("w_f4_x2", 8, 4, 8), ("w_i2_gather", 2, 0, 2)];
    for (name, cycles, conflicts, ways) in cases {
        let mut out = Buf::new(64, |_| -1);
        let (sum, info, report) = run(&dev, &program, name, &mut [&mut out], [16, 1, 1], [16, 1, 1]);
        let load = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Load));
        assert_eq!(
            (load.messages, load.slm_cycles, load.slm_conflict_cycles, load.worst_bank_ways),
            (1, cycles, conflicts, ways),
            "{name}: {report}"
        );
        // The stores of consecutive elements fill the banks in turn.
        for (k, site) in info.sites.iter().enumerate() {
            if site.space == AddressSpace::Local && site.kind == AccessKind::Store {
                let st = sum.site(&info, k);
                let per_lane = u64::from(site.bytes_per_lane) / 4;
                assert_eq!(st.slm_cycles, per_lane, "{name}: store {k}");
                assert_eq!(st.slm_conflict_cycles, 0, "{name}: store {k}");
            }
        }
    }
    // The values are right too.
    let mut out = Buf::new(64, |_| -1);
    run(&dev, &program, "w_f4", &mut [&mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        for c in 0..4 {
            assert_eq!(f32::from_bits(out.get(4 * g + c) as u32), (g + c) as f32, "w_f4 out[{g}].{c}");
        }
    }
}

const DIVERGE: &str = r#"
kernel void quarter(global const int *a, global int *out) {
    int g = get_global_id(0);
    if (g % 4 == 0)
        out[g] = a[g] * 3;
}
kernel void uniform_read(global const int *a, global int *out) {
    out[get_global_id(0)] = a[7];
}
"#;

/// A divergent branch: the block under it runs with a quarter of the lanes; its load of
/// lanes 0, 4, 8, 12 touches one line.
#[test]
fn divergent_branch_lane_utilisation() {
    let dev = GenDevice::default();
    let program = build(&dev, DIVERGE);
    let mut a = Buf::new(64, |i| i as i32);
    let mut out = Buf::new(64, |_| -1);
    let (sum, info, report) = run(&dev, &program, "quarter", &mut [&mut a, &mut out], [64, 1, 1], [16, 1, 1]);
    for g in 0..64 {
        assert_eq!(out.get(g), if g % 4 == 0 { 3 * g as i32 } else { -1 }, "out[{g}]");
    }
    assert!(info.blocks.iter().any(|b| b.divergent_branch), "{:?}", info.blocks);
    let utils: Vec<(u64, u64)> =
        (0..info.blocks.len()).map(|k| sum.block(&info, k)).map(|b| (b.executions, b.active_lanes)).collect();
    assert!(utils.contains(&(4, 64)), "the entry block: 4 threads, all lanes: {utils:?}");
    assert!(utils.contains(&(4, 16)), "the branch: 4 threads, a quarter of the lanes: {utils:?}");
    let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
    assert_eq!((load.messages, load.active_lanes, load.useful_bytes), (4, 16, 64), "{report}");
    assert_eq!(load.l3_lines, 4, "lanes 0, 4, 8, 12 of 16 ints: one line per message");
    assert!(info.blocks.iter().any(|b| b.instructions > 0));

    // Every lane reading one element: one line per message.
    let mut out = Buf::new(64, |_| -1);
    let (sum, info, _) = run(&dev, &program, "uniform_read", &mut [&mut a, &mut out], [64, 1, 1], [16, 1, 1]);
    assert!((0..64).all(|g| out.get(g) == 7));
    let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
    assert_eq!((load.messages, load.active_lanes, load.l3_lines), (4, 64, 4));
}

const ONE_ROW: &str = r#"
kernel void plus1(global const int *a, global int *out) {
    int g = get_global_id(0);
    out[g] = a[g] + 1;
}
"#;

/// A one-row work-group whose width is not a multiple of the SIMD width runs the row
/// variant (its last thread the row's masked tail packet), not the linear-lanes variant:
/// the threads and lines are those of consecutive linear ids all the same.
#[test]
fn a_one_row_work_group_of_any_width_runs_the_row_variant() {
    let dev = GenDevice::default();
    let program = build(&dev, ONE_ROW);
    let mut a = Buf::new(36, |i| i as i32);
    let mut out = Buf::new(36, |_| -1);
    let (sum, info, report) = run(&dev, &program, "plus1", &mut [&mut a, &mut out], [36, 1, 1], [12, 1, 1]);
    assert!((0..36).all(|g| out.get(g) == g as i32 + 1));
    assert!(!report.contains("linear lanes"), "{report}");
    let load = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
    // One SIMD16 thread per work-group, of ints 0-11 | 12-23 | 24-35: 1 | 2 | 2 lines.
    assert_eq!((load.messages, load.active_lanes, load.l3_lines), (3, 36, 5), "{report}");
}

const VLOAD3: &str = r#"
kernel void v3(global const int *a, global int *out) {
    size_t i = get_global_id(0);
    vstore3(vload3(i, a) + 1, i, out);
}
"#;

/// vload3 / vstore3 are messages of 12 bytes per lane (not lane-by-lane accesses the model
/// does not see, nor 16 bytes of a 3-component vector's padding): SIMD16 thread of 16
/// consecutive ids reads and writes 192 bytes, three lines.
#[test]
fn vload3_and_vstore3_are_messages_of_twelve_bytes_per_lane() {
    let dev = GenDevice::default();
    let program = build(&dev, VLOAD3);
    let mut a = Buf::new(96, |i| i as i32);
    let mut out = Buf::new(96, |_| -1);
    let (sum, info, report) = run(&dev, &program, "v3", &mut [&mut a, &mut out], [32, 1, 1], [16, 1, 1]);
    assert!((0..96).all(|i| out.get(i) == i as i32 + 1));
    for kind in [AccessKind::Load, AccessKind::Store] {
        let k = site_of(&info, AddressSpace::Global, kind);
        assert_eq!(info.sites[k].bytes_per_lane, 12, "{kind:?}");
        let c = sum.site(&info, k);
        assert_eq!((c.messages, c.active_lanes, c.l3_lines, c.useful_bytes), (2, 32, 6, 384), "{kind:?}: {report}");
    }
}

const LONG16: &str = r#"
__attribute__((intel_reqd_sub_group_size(32)))
kernel void copy16(global const long16 *a, global long16 *out) {
    int g = get_global_id(0);
    out[g] = a[g];
}
__attribute__((intel_reqd_sub_group_size(32)))
kernel void private16(global const long16 *a, global long16 *out, global const int *idx) {
    int g = get_global_id(0);
    long16 p[3];
    p[0] = a[g];
    p[1] = a[g] * 2;
    p[2] = a[g] * 3;
    out[g] = p[idx[g] % 3];
}
"#;

/// 128-byte (long16) messages at SIMD32 are counted: the general line count of 32 lanes of
/// 128 bytes compares 96 points (each lane's first, middle and last byte), and the count of
/// those points once failed to build ("Type too small for ZExt"), so such kernels ran their
/// scalar build, uncounted.
#[test]
fn long16_messages_at_simd32_are_counted() {
    let dev = GenDevice::default();
    let program = build(&dev, LONG16);
    // 64 work-items of one long16 each (16 x 64-bit = 32 ints); long k is ints 2k, 2k + 1.
    let long_of = |b: &Buf, k: usize| (b.get(2 * k) as u32 as u64 | (b.get(2 * k + 1) as u32 as u64) << 32) as i64;
    for kernel in ["copy16", "private16"] {
        let k = program.kernel(kernel).unwrap();
        let info = k
            .gen_variant(GenBuild { simd: 32, linear_lanes: false, row_width: 0 }, 0)
            .expect("a Gen build")
            .unwrap_or_else(|e| panic!("{kernel}: no instrumented SIMD32 variant: {e}"))
            .0
            .info
            .gen
            .expect("instrumented");
        let mut a = Buf::new(64 * 32, |i| if i % 2 == 0 { i as i32 } else { 0 });
        let mut out = Buf::new(64 * 32, |_| -1);
        let mut idx = Buf::new(64, |g| g as i32);
        let sum = Arc::new(Sum::default());
        let mut bufs: Vec<&mut dyn ArgAddr> = vec![&mut a, &mut out];
        if kernel == "private16" {
            bufs.push(&mut idx);
        }
        let r = launch_with(&dev, k, &mut bufs, &[], [64, 1, 1], [32, 1, 1], Some(sum.clone()));
        let report = r.report.unwrap_or_default();
        assert!(report.contains("SIMD32") && !report.contains("uncounted"), "{kernel}: {report}");
        for g in 0..64 {
            let times = if kernel == "copy16" { 1 } else { g as i64 % 3 + 1 };
            for j in 0..16 {
                let e = g * 16 + j;
                assert_eq!(long_of(&out, e), 2 * e as i64 * times, "{kernel}: out[{g}].s{j:x}");
            }
        }
        // Two hardware threads of 32 lanes, each lane 128 bytes: two lines a lane.
        let wide = |s: &gen_abi::GenSite| s.space == AddressSpace::Global && s.bytes_per_lane == 128;
        let loads: Vec<usize> =
            (0..info.sites.len()).filter(|&s| wide(&info.sites[s]) && info.sites[s].kind == AccessKind::Load).collect();
        assert_eq!(loads.len(), 1, "{kernel}: sites {:?}", info.sites);
        let load = sum.site(&info, loads[0]);
        assert_eq!((load.messages, load.active_lanes, load.l3_lines), (2, 64, 128), "{kernel}: {report}");
        let store = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Store));
        assert_eq!((store.messages, store.l3_lines), (2, 128), "{kernel}: {report}");
        if kernel == "private16" {
            // The dynamically indexed private array: scratch messages of 128 bytes a lane.
            let scratch: Vec<usize> =
                (0..info.sites.len()).filter(|&s| info.sites[s].space == AddressSpace::Private).collect();
            assert!(!scratch.is_empty(), "sites {:?}", info.sites);
            for s in scratch {
                assert_eq!(info.sites[s].bytes_per_lane, 128, "{:?}", info.sites[s]);
                let c = sum.site(&info, s);
                assert!(c.messages == 2 && c.l3_lines >= 128, "private site {s}: {c:?}; {report}");
            }
        }
    }
}

/// A kernel of 4100 loads in one block: more messages than an instrumented build is made
/// for (passes::gen_instrument::MAX_SITES), so the Gen device runs it uncounted.
fn refused_source() -> String {
    let loads: String = (0..4100).map(|j| format!("    s += a[{j} * 3 + g];\n")).collect();
    format!(
        "kernel void refused(global const int *a, global int *out, local int *tmp) {{\n\
         size_t g = get_global_id(0);\n    int s = 0;\n{loads}    tmp[get_local_id(0)] = s;\n\
         out[g] = tmp[get_local_id(0)];\n}}\n"
    )
}

const LONG: &str = r#"
kernel void long_block(global const int *a, global int *out) {
    size_t g = get_global_id(0);
    int s = 0;
    #pragma unroll
    for (int j = 0; j < 1100; j++)
        s += a[j * 3 + g];
    out[g] = s;
}
"#;

/// A kernel of more than a thousand messages in one block is counted and modelled (its
/// variant compiled with LLVM's fast instruction selection): every load one message of one
/// line per hardware thread (16 consecutive ints of one 64-byte line).
#[test]
fn more_than_a_thousand_messages_are_counted() {
    let dev = GenDevice::default();
    let program = build(&dev, LONG);
    let mut a = Buf::new(3400, |i| i as i32);
    let mut out = Buf::new(32, |_| -1);
    let (sum, info, report) = run(&dev, &program, "long_block", &mut [&mut a, &mut out], [32, 1, 1], [16, 1, 1]);
    let want = |g: usize| (0..1100).map(|j| (j * 3 + g) as i32).sum::<i32>();
    assert!((0..32).all(|g| out.get(g) == want(g)), "the kernel ran");
    assert!(!report.contains("uncounted"), "{report}");
    let loads: Vec<usize> = (0..info.sites.len()).filter(|&s| info.sites[s].kind == AccessKind::Load).collect();
    assert_eq!(loads.len(), 1100, "a site per load");
    let lines: u64 = loads.iter().map(|&s| sum.site(&info, s).l3_lines).sum();
    let messages: u64 = loads.iter().map(|&s| sum.site(&info, s).messages).sum();
    assert_eq!(messages, 2 * 1100, "two hardware threads, a message per load each");
    // Lane 0 at 4 * (3j + g0): the 16 ints span one line or two.
    let want_lines: u64 = (0..1100u64)
        .flat_map(|j| [0u64, 16].map(|g0| ((3 * j + g0) * 4, (3 * j + g0 + 15) * 4)))
        .map(|(lo, hi)| hi / 64 - lo / 64 + 1)
        .sum();
    assert_eq!(lines, want_lines, "{report}");
}

/// A kernel that runs uncounted (its scalar build) is not modelled: no device time (profiling
/// END - START is the host's), and the report says so and why, in text and JSON, instead of
/// a modelled time of nothing.
#[test]
fn an_uncounted_launch_is_not_modelled() {
    let (dir, json, dev) = json_sink("uncounted");
    let program = build(&dev, &refused_source());
    let k = program.kernel("refused").unwrap();
    let mut a = Buf::new(12700, |i| i as i32);
    let mut out = Buf::new(32, |_| -1);
    let r = launch_with(&dev, k, &mut [&mut a, &mut out], &[(2, 16 * 4)], [32, 1, 1], [16, 1, 1], None);
    let want = |g: usize| (0..4100).map(|j| (j * 3 + g) as i32).sum::<i32>();
    assert!((0..32).all(|g| out.get(g) == want(g)), "the kernel ran");
    let text = r.report.unwrap_or_default();
    assert!(text.contains("uncounted"), "{text}");
    assert_eq!(r.device_time_ns, None, "no modelled time: {text}");
    let j = std::fs::read_to_string(&json).unwrap();
    assert!(j.contains("\"time_ns\":null,\"not_modelled\":\"scalar, uncounted: "), "{j}");
    // Never silent: the device told stderr, and knows which kernel.
    assert_eq!(dev.unmodelled_kernels(), ["refused"]);
    let _ = std::fs::remove_dir_all(&dir);
}

const CONFLICTS: &str = r#"
kernel void w_x16(global int *out, global int *count) {
    local int s[16 * 16];
    int g = get_local_id(0);
    s[g * 16] = g;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[g * 16];
    atomic_inc(count);
}
kernel void w_x17(global int *out, global int *count) {
    local int s[16 * 17];
    int g = get_local_id(0);
    s[g * 17] = g;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[g * 17];
    atomic_inc(count);
}
kernel void spill(global const int *idx, global int *out) {
    int p[256];
    for (int i = 0; i < 256; i++)
        p[i] = i * 3 + (int)get_global_id(0);
    out[get_global_id(0)] = p[idx[get_global_id(0)] & 255];
}
"#;

/// Through the device, as a user's launch runs: SLM writes of 16 lanes to one bank cost 16
/// cycles (the guide: writes to one bank always conflict), stride 17 costs 1, the report
/// advises padding the stride to 17; atomics are counted per message; a dynamically
/// indexed private array is scratch traffic with its advice.
#[test]
fn slm_write_conflicts_atomics_and_private_arrays_through_the_device() {
    let (dir, json, dev) = json_sink("conflicts");
    let program = build(&dev, CONFLICTS);
    for (name, ways) in [("w_x16", 16), ("w_x17", 1)] {
        let mut out = Buf::new(32, |_| -1);
        let mut count = Buf::new(16, |_| 0);
        let (sum, info, report) = run(&dev, &program, name, &mut [&mut out, &mut count], [32, 1, 1], [16, 1, 1]);
        assert!((0..32).all(|g| out.get(g) == (g % 16) as i32), "{name}");
        assert_eq!(count.get(0), 32, "{name}: every work-item's atomic_inc");
        let store = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Store));
        assert_eq!(
            (store.messages, store.slm_cycles, store.slm_conflict_cycles, store.worst_bank_ways),
            (2, 2 * ways, 2 * (ways - 1), ways),
            "{name}: {report}"
        );
        let load = sum.site(&info, site_of(&info, AddressSpace::Local, AccessKind::Load));
        assert_eq!((load.slm_cycles, load.worst_bank_ways), (2 * ways, ways), "{name}");
        let atomic = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Atomic));
        assert_eq!((atomic.messages, atomic.active_lanes), (2, 32), "{name}: one atomic message per thread");
        // The sink keeps the latest report of each kernel: this kernel's.
        let j = std::fs::read_to_string(&json).unwrap();
        let mine = j.split("{\"kernel\":").find(|r| r.starts_with(&format!("\"{name}\""))).unwrap_or("");
        assert_eq!(
            mine.contains("SLM stride 16 puts 16 lanes on one bank: pad to 17"),
            name == "w_x16",
            "{name}: the advice\n{j}"
        );
    }
    let mut idx = Buf::new(32, |g| (g * 7) as i32);
    let mut out = Buf::new(32, |_| -1);
    let (sum, info, report) = run(&dev, &program, "spill", &mut [&mut idx, &mut out], [32, 1, 1], [16, 1, 1]);
    // 1 KB per work-item: more than registers hold at any width (8 KB at SIMD8), scratch.
    assert!((0..32).all(|g| out.get(g) == ((g * 7) % 256 * 3 + g) as i32));
    let private = (0..info.sites.len()).find(|&k| info.sites[k].space == AddressSpace::Private);
    let private = private.unwrap_or_else(|| panic!("no private site: {:?}", info.sites));
    assert!(sum.site(&info, private).messages > 0, "{report}");
    let j = std::fs::read_to_string(&json).unwrap();
    assert!(j.contains("\"kind\":\"private_spill\""), "{j}");
    let _ = std::fs::remove_dir_all(&dir);
}

const SLM_LOOP: &str = r#"
#define KERNEL(name, stride) \
kernel void name(global int *out) { \
    local int s[256 * stride]; \
    int l = get_local_id(0); \
    s[l * stride] = l; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    int acc = 0; \
    for (int k = 0; k < 64; k++) \
        acc += s[((l + k) & 255) * stride]; \
    out[get_global_id(0)] = acc; \
}
KERNEL(slm16, 16)
KERNEL(slm17, 17)
"#;

/// The guide's ranking through the device: a[l * 17] beats a[l * 16] in SLM, in modelled
/// time, for a launch whose SLM reads dominate (64 per work-item).
#[test]
fn slm_stride_17_beats_16_in_modelled_time() {
    let dev = GenDevice::default();
    let program = build(&dev, SLM_LOOP);
    let time = |name: &str| {
        let mut out = Buf::new(8192, |_| 0);
        let k = program.kernel(name).unwrap();
        let r = launch_with(&dev, k, &mut [&mut out], &[], [8192, 1, 1], [256, 1, 1], None);
        let want: i32 = (0..64).map(|k| k % 256).sum();
        assert_eq!(out.get(0), want, "{name}");
        r.device_time_ns.unwrap_or_else(|| panic!("{name} not modelled: {:?}", r.report))
    };
    let (t16, t17) = (time("slm16"), time("slm17"));
    assert!(t16 as f64 > 4.0 * t17 as f64, "stride 16 {t16} ns, stride 17 {t17} ns");
}

/// `intel_reqd_sub_group_size` in a kernel's source fixes the Gen SIMD width (here 8 where
/// register pressure would allow 32), and the launch says why.
#[test]
fn a_required_sub_group_size_in_the_source_fixes_the_width() {
    let dev = GenDevice::default();
    let program = build(
        &dev,
        "__attribute__((intel_reqd_sub_group_size(8)))\n\
         kernel void sg8(global int *out) { out[get_global_id(0)] = (int)get_global_id(0); }",
    );
    let k = program.kernel("sg8").unwrap();
    assert_eq!(k.info.reqd_sub_group_size, Some(8));
    let mut out = Buf::new(256, |_| -1);
    let r = launch_with(&dev, k, &mut [&mut out], &[], [256, 1, 1], [64, 1, 1], None);
    let text = r.report.unwrap_or_default();
    assert!((0..256).all(|g| out.get(g) == g as i32));
    assert!(
        text.contains("SIMD8 (required sub-group size)")
            && text.contains("vectorized")
            && text.contains("8 hardware threads"),
        "{text}"
    );
}

const CL_R: u32 = 0x10B0;
const CL_RGBA: u32 = 0x10B5;
const CL_UNORM_INT8: u32 = 0x10D2;
const CL_FLOAT: u32 = 0x10DE;

const IMAGES: &str = r#"
kernel void read_x(read_only image2d_t img, global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 64 + x] = read_imagef(img, (int2)(x, y)).x;
}
kernel void read_two(read_only image2d_t odd, read_only image2d_t even, global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 64 + x] = (x & 1) ? read_imagef(odd, (int2)(x, y)).x : read_imagef(even, (int2)(x, y)).x;
}
kernel void write_x(write_only image2d_t img) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), (float4)(x / 255.0f, 0.0f, 0.0f, 1.0f));
}
constant sampler_t NEAREST = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
constant sampler_t LINEAR = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
kernel void read_nearest(read_only image2d_t img, global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 64 + x] = read_imagef(img, NEAREST, (float2)(x + 0.5f, y + 1.0f)).x;
}
kernel void read_linear(read_only image2d_t img, global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 64 + x] = read_imagef(img, LINEAR, (float2)(x + 0.5f, y + 1.0f)).x;
}
"#;

/// `field`'s number in the JSON report object that starts at `from` in `j`.
fn json_number(j: &str, from: &str, field: &str) -> f64 {
    let at = j.find(from).unwrap_or_else(|| panic!("no {from} in {j}"));
    let rest = &j[at..];
    let key = format!("\"{field}\":");
    let v = &rest[rest.find(&key).unwrap_or_else(|| panic!("no {field} after {from}")) + key.len()..];
    let end = v.find([',', '}']).unwrap_or(v.len());
    v[..end].parse().unwrap_or_else(|e| panic!("{field}: {:?}: {e}", &v[..end]))
}

/// An image access's useful bytes are the pixels of the image bound at run time, and its
/// lines those of the Tile-Y surface (a line is 16 bytes of 4 rows): 16 lanes reading (or
/// writing) consecutive x of a CL_R / CL_UNORM_INT8 image use 16 bytes of the one line they
/// touch (25%), of a CL_RGBA / CL_FLOAT image 256 bytes of 16 lines, a pixel each (25%;
/// linearly, 4 lines and 100%); never the 16-byte texel a lane receives whatever the
/// format (400% of the line for one byte).
#[test]
fn image_accesses_use_the_bytes_of_the_bound_pixels() {
    let (dir, json, dev) = json_sink("image-bytes");
    let program = build(&dev, IMAGES);
    for (order, ty, pixel, lines_per_message) in [(CL_R, CL_UNORM_INT8, 1u64, 1u64), (CL_RGBA, CL_FLOAT, 16, 16)] {
        let what = format!("{pixel}-byte pixels");
        // 64 x 4 pixels, work-groups of one row of 16: 16 messages of 16 lanes per access,
        // each of 16 pixels on `lines_per_message` lines.
        let want_counts = (16, 256, 16 * lines_per_message, 256 * pixel);
        let want = (16 * pixel) as f64 / (64 * lines_per_message) as f64;
        let counts = |c: SiteCounters| (c.messages, c.active_lanes, c.l3_lines, c.useful_bytes);
        // The sink keeps the latest report of each kernel; its global traffic (used, moved).
        let report_of = |name: &str| {
            let j = std::fs::read_to_string(&json).unwrap();
            j[j.find(&format!("{{\"kernel\":\"{name}\"")).expect("the kernel's report")..].to_string()
        };
        let global =
            |r: &str| (json_number(r, "\"global\":", "useful_bytes"), json_number(r, "\"global\":", "moved_bytes"));

        let mut img = Image2d::new(order, ty, pixel as usize, 64, 4);
        let (sum, info, report) = run(&dev, &program, "write_x", &mut [&mut img], [64, 4, 1], [16, 1, 1]);
        let texel = |x: usize, y: usize| &img.bytes()[(y * 64 + x) * pixel as usize..][..pixel as usize];
        let first = |x: usize| {
            if pixel == 1 {
                f32::from(texel(x, 1)[0])
            } else {
                f32::from_ne_bytes(texel(x, 1)[..4].try_into().unwrap()) * 255.0
            }
        };
        assert!((0..64).all(|x| (first(x) - x as f32).abs() < 0.01), "{what}: the writes");
        let write = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Store));
        assert_eq!(counts(write), want_counts, "{what}: {report}");
        // The write is the kernel's one global access: its efficiency is the report's.
        let mine = report_of("write_x");
        assert_eq!(global(&mine), ((256 * pixel) as f64, (16 * 64 * lines_per_message) as f64), "{what}: {mine}");
        assert_eq!(json_number(&mine, "\"sites\":", "efficiency"), want, "{what}: {mine}");

        let mut out = Buf::new(256, |_| -1);
        let (sum, info, report) = run(&dev, &program, "read_x", &mut [&mut img, &mut out], [64, 4, 1], [16, 1, 1]);
        let got = |i: usize| f32::from_bits(out.get(i) as u32);
        assert!((0..256).all(|i| (got(i) * 255.0 - (i % 64) as f32).abs() < 0.01), "{what}: the reads");
        let read = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
        assert_eq!(counts(read), want_counts, "{what}: {report}");
        let mine = report_of("read_x");
        let load = &mine[mine.find("\"kind\":\"load\"").expect("the read's site")..];
        assert_eq!(json_number(load, "\"kind\"", "efficiency"), want, "{what}: {mine}");
        // With the float stores (64 bytes of one line per message): never above 100%.
        let stores = (1024.0, 1024.0);
        assert_eq!(
            global(&mine),
            ((256 * pixel) as f64 + stores.0, (16 * 64 * lines_per_message) as f64 + stores.1),
            "{what}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An image is a Tile-Y surface (a 64-byte line is 16 bytes of 4 rows), so its work-group
/// shapes rank the other way round from a buffer's (`work_group_shape_decides_lines_per_message`:
/// a row of 16 ints is one line, a 4 x 4 block four): 16 lanes reading CL_RGBA /
/// CL_UNORM_INT8 pixels (4 bytes) of one row touch 4 lines, of a 4 x 4 block one. The
/// hardware tiles images so that 2-D neighbourhoods share lines (the guide: prefer images
/// where the access pattern is other than simple linear).
#[test]
fn an_image_favours_square_work_groups_where_a_buffer_favours_rows() {
    let dev = GenDevice::default();
    let program = build(&dev, IMAGES);
    for (local, lines) in [([16, 1, 1], 4u64), ([4, 4, 1], 1), ([8, 2, 1], 2)] {
        let mut img = Image2d::new(CL_RGBA, CL_UNORM_INT8, 4, 64, 4);
        let mut out = Buf::new(256, |_| -1);
        let (sum, info, report) = run(&dev, &program, "read_x", &mut [&mut img, &mut out], [64, 4, 1], local);
        let read = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
        assert_eq!((read.messages, read.l3_lines), (16, 16 * lines), "{local:?}: {report}");
    }
}

/// A linear filter loads the 2x2 pixels around each lane's coordinates, and the Gen model
/// counts their lines: 16 lanes reading at (x + 0.5, y + 1) of a 64 x 4 image (work-groups
/// of one row of 16) load x .. x + 1 of rows y and y + 1 (clamped at the last column and
/// row), and the image's 4 rows share their Tile-Y lines (16 bytes of 4 rows each).
/// CL_RGBA / CL_FLOAT: a line per pixel column, 17 per message (16 in the last work-group of
/// a row): 4 x (3 x 17 + 16) = 268 lines, where a nearest filter at the same coordinates
/// counts 16 per message, 256. CL_R / CL_UNORM_INT8 (16 pixels to a line): 2 lines per
/// message (1 in the last), 4 x 7 = 28 against 16. The useful bytes stay the pixels the
/// lanes receive.
#[test]
fn linear_filters_count_the_lines_of_their_pixels() {
    let dev = GenDevice::default();
    let program = build(&dev, IMAGES);
    for (order, ty, pixel, nearest, linear) in
        [(CL_RGBA, CL_FLOAT, 16u64, 256u64, 268u64), (CL_R, CL_UNORM_INT8, 1, 16, 28)]
    {
        let what = format!("{pixel}-byte pixels");
        let mut img = Image2d::new(order, ty, pixel as usize, 64, 4);
        run(&dev, &program, "write_x", &mut [&mut img], [64, 4, 1], [16, 1, 1]);
        for (kernel, lines) in [("read_nearest", nearest), ("read_linear", linear)] {
            let mut out = Buf::new(256, |_| -1);
            let (sum, info, report) = run(&dev, &program, kernel, &mut [&mut img, &mut out], [64, 4, 1], [16, 1, 1]);
            let got = |i: usize| f32::from_bits(out.get(i) as u32);
            assert!((0..256).all(|i| (got(i) * 255.0 - (i % 64) as f32).abs() < 0.01), "{what}, {kernel}: the reads");
            let read = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Load));
            let counts = (read.messages, read.active_lanes, read.l3_lines, read.useful_bytes);
            assert_eq!(counts, (16, 256, lines, 256 * pixel), "{what}, {kernel}: {report}");
        }
    }
}

/// Each lane counts the pixel of its own image: odd x read a CL_R / CL_UNORM_INT8 image (8
/// lanes x 1 byte of one line per message), even x a CL_RGBA / CL_FLOAT one (8 lanes x 16
/// bytes of eight Tile-Y lines, a pixel column each). The front end makes the two reads one of an image chosen per lane
/// (each lane's pixel size asked for); as two reads under the branch's masks the sums are
/// the same.
#[test]
fn image_reads_count_the_pixels_of_each_lanes_image() {
    let dev = GenDevice::default();
    let program = build(&dev, IMAGES);
    let mut odd = Image2d::new(CL_R, CL_UNORM_INT8, 1, 64, 4);
    let mut even = Image2d::new(CL_RGBA, CL_FLOAT, 16, 64, 4);
    let mut out = Buf::new(256, |_| -1);
    let (sum, info, report) =
        run(&dev, &program, "read_two", &mut [&mut odd, &mut even, &mut out], [64, 4, 1], [16, 1, 1]);
    assert!((0..256).all(|i| out.get(i) == 0), "zero pixels read");
    let reads: Vec<SiteCounters> =
        (0..info.sites.len()).filter(|&k| info.sites[k].is_image()).map(|k| sum.site(&info, k)).collect();
    let total = reads.iter().fold((0, 0, 0), |(a, l, u), c| (a + c.active_lanes, l + c.l3_lines, u + c.useful_bytes));
    assert_eq!(total, (256, 16 + 16 * 8, 128 + 128 * 16), "{:?} {report}", reads);
}

const TILE_WALK: &str = r#"
kernel void tile(global int *out) {
    local int t[16 * 16];
    int lx = get_local_id(0), ly = get_local_id(1);
    for (int i = ly * 4 + lx; i < 256; i += 16) t[i] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    #pragma unroll 1
    for (int k = 0; k < 8; k++) s += t[ly * 16 + k] + t[k * 16 + lx] + t[lx * (k + 1)];
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = s;
}
"#;

/// Work-groups of <4,4,1> at SIMD16, the k loop kept a loop (one site per access): a
/// thread's lanes are 4 rows of 4 (linear lanes), so
/// its SLM reads have no closed form and take the general count, whose memo answers a
/// repeated pattern (the k loop walks the tile one dword or one row at a time) without
/// recounting. The counts stay exact: `t[ly * 16 + k]` puts the 4 rows' 4 distinct dwords in
/// one bank (4 cycles, 4 ways), `t[k * 16 + lx]` reads one row's 4 dwords in 4 banks,
/// the same for every row (1 cycle), at every k, in every work-group, launch after launch;
/// `t[lx * (k + 1)]` changes its pattern with k (dwords 0, k + 1, 2k + 2, 3k + 3: two on a
/// bank at k = 7), which a memo must not answer from the pattern before.
#[test]
fn memoised_general_counts_stay_exact() {
    let dev = GenDevice::default();
    let program = build(&dev, TILE_WALK);
    for _ in 0..2 {
        let mut out = Buf::new(64, |_| -1);
        let (sum, info, report) = run(&dev, &program, "tile", &mut [&mut out], [8, 8, 1], [4, 4, 1]);
        let want = |x: usize, y: usize| -> i32 {
            let (lx, ly) = (x % 4, y % 4);
            (0..8).map(|k| (ly * 16 + k + k * 16 + lx + lx * (k + 1)) as i32).sum()
        };
        assert!((0..64).all(|i| out.get(i) == want(i % 8, i / 8)), "{report}");
        let reads: Vec<usize> = (0..info.sites.len())
            .filter(|&k| info.sites[k].space == AddressSpace::Local && info.sites[k].kind == AccessKind::Load)
            .collect();
        let total: u64 = reads.iter().map(|&k| sum.site(&info, k).slm_cycles).sum();
        let ways = reads.iter().map(|&k| sum.site(&info, k).worst_bank_ways).max();
        // 4 work-groups of one thread, 8 steps of 4 + 1 cycles and the ways of the third.
        let third: u64 = (0..8u64)
            .map(|k| {
                let mut banks = [0u64; 16];
                (0..4).for_each(|lx| banks[(lx * (k + 1) % 16) as usize] += 1);
                *banks.iter().max().unwrap()
            })
            .sum();
        assert_eq!(total, 4 * (8 * 5 + third), "{report}");
        assert_eq!(ways, Some(4), "{report}");
    }
}

const WIDER_THAN_A_MESSAGE: &str = r#"
typedef struct { int v[6]; } Six;
kernel void w_i8(global int8 *out) {
    local int8 t[16];
    int g = get_local_id(0);
    t[g] = (int8)(g);
    barrier(1);
    out[get_global_id(0)] = t[g];
}
kernel void w_six(global const Six *in, global Six *out) {
    local Six t[16];
    int g = get_local_id(0);
    t[g] = in[g];
    barrier(1);
    out[g] = t[(g * 5) & 15];
}
kernel void w_l16_gather(global const long *a, global const int *idx, global long16 *out) {
    int g = get_global_id(0);
    out[g] = vload16(0, a + idx[g] * 5);
}
"#;

/// The bank cost of one SLM message of `d` dwords per lane at the lanes' byte addresses
/// (the guide's rule): (cycles, ceil(dwords / 16), the most distinct dwords on one bank).
fn slm_message_cost(addrs: &[u64], d: u64) -> (u64, u64, u64) {
    let mut banks: Vec<std::collections::BTreeSet<u64>> = vec![Default::default(); 16];
    for a in addrs {
        for j in 0..d {
            let dword = a / 4 + j;
            banks[(dword % 16) as usize].insert(dword);
        }
    }
    let ways = banks.iter().map(|b| b.len() as u64).max().unwrap_or(0);
    let base = (addrs.len() as u64 * d).div_ceil(16);
    (base.max(ways), base, ways)
}

/// An SLM lane wider than four dwords (int8, a struct copied whole) is several messages of
/// at most four dwords per lane, each its lanes' next 16 bytes: int8 packed end to end puts
/// the even lanes' first four dwords on banks 0-3 and the odd lanes' on 8-11, 8 ways each.
/// Before, the whole lane was one message (int8 packed cost no conflict), and the lanes'
/// dwords were compared all at once: a 384-byte struct at SIMD16 took minutes to compile.
#[test]
fn slm_lanes_wider_than_four_dwords_are_several_messages() {
    let dev = GenDevice::default();
    let program = build(&dev, WIDER_THAN_A_MESSAGE);
    // Lane g at `lane_addr(g)`, `dwords` per lane: the sum over its messages.
    let expect = |lane_addr: &dyn Fn(u64) -> u64, dwords: u64| -> (u64, u64, u64) {
        let (mut cycles, mut conflicts, mut worst) = (0, 0, 0);
        let mut at = 0;
        while at < dwords {
            let d = (dwords - at).min(4);
            let addrs: Vec<u64> = (0..16).map(|g| lane_addr(g) + 4 * at).collect();
            let (c, base, ways) = slm_message_cost(&addrs, d);
            (cycles, conflicts, worst) = (cycles + c, conflicts + c - base, worst.max(ways));
            at += d;
        }
        (cycles, conflicts, worst)
    };
    let slm = |sum: &Sum, info: &GenKernelInfo, kind: AccessKind| {
        let c = sum.site(info, site_of(info, AddressSpace::Local, kind));
        (c.slm_cycles, c.slm_conflict_cycles, c.worst_bank_ways)
    };

    let mut out = Buf::new(16 * 8, |_| -1);
    let (sum, info, report) = run(&dev, &program, "w_i8", &mut [&mut out], [16, 1, 1], [16, 1, 1]);
    assert!((0..16 * 8).all(|i| out.get(i) == (i / 8) as i32), "w_i8 values; {report}");
    let packed = expect(&|g| 32 * g, 8);
    assert_eq!(packed, (16, 8, 8), "two messages of 8 cycles, 4 of them conflicts");
    assert_eq!(slm(&sum, &info, AccessKind::Load), packed, "w_i8 load: {report}");
    assert_eq!(slm(&sum, &info, AccessKind::Store), packed, "w_i8 store: {report}");

    let mut input = Buf::new(16 * 6, |i| i as i32 * 3);
    let mut out = Buf::new(16 * 6, |_| -1);
    let (sum, info, report) = run(&dev, &program, "w_six", &mut [&mut input, &mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        let src = (g * 5) & 15;
        assert!((0..6).all(|k| out.get(6 * g + k) == input.get(6 * src + k)), "w_six out[{g}]; {report}");
    }
    // Six dwords: a message of four and one of two, read through a permutation.
    let store = expect(&|g| 24 * g, 6);
    let load = expect(&|g| 24 * ((g * 5) & 15), 6);
    assert_eq!(slm(&sum, &info, AccessKind::Store), store, "w_six store: {report}");
    assert_eq!(slm(&sum, &info, AccessKind::Load), load, "w_six load: {report}");
}

/// A gather of lanes spanning several lines (vload16 of long at 40-byte steps, lanes
/// overlapping and repeated): the distinct lines of the union of the lanes' ranges.
#[test]
fn gathered_lanes_of_several_lines_count_their_union() {
    let dev = GenDevice::default();
    let program = build(&dev, WIDER_THAN_A_MESSAGE);
    let idx_of = |g: usize| ((g * 7) % 11) as i32;
    let mut a = Buf::new(2 * 16 * 64, |i| i as i32);
    let mut idx = Buf::new(16, idx_of);
    let mut out = Buf::new(16 * 32, |_| -1);
    let (sum, info, report) =
        run(&dev, &program, "w_l16_gather", &mut [&mut a, &mut idx, &mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        let first = idx_of(g) as usize * 10;
        assert!((0..32).all(|j| out.get(32 * g + j) == (first + j) as i32), "out[{g}]; {report}");
    }
    let lines: std::collections::BTreeSet<u64> = (0..16)
        .flat_map(|g| {
            let at = 40 * idx_of(g) as u64;
            (at / 64)..=((at + 127) / 64)
        })
        .collect();
    let sites: Vec<usize> = (0..info.sites.len())
        .filter(|&k| info.sites[k].kind == AccessKind::Load && info.sites[k].bytes_per_lane == 128)
        .collect();
    assert_eq!(sites.len(), 1, "sites {:?}", info.sites);
    let load = sum.site(&info, sites[0]);
    assert_eq!((load.messages, load.l3_lines), (1, lines.len() as u64), "{report}");
}

const REGISTER_TILE: &str = r#"
#define N 256
kernel void gemm4(global const float *A, global const float *B, global float *C) {
    int tx = get_global_id(0), ty = get_global_id(1);
    float acc[4][4];
    for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int k = 0; k < N; k++) {
        float a[4], b[4];
        for (int i = 0; i < 4; i++) a[i] = A[(ty * 4 + i) * N + k];
        for (int j = 0; j < 4; j++) b[j] = B[k * N + tx * 4 + j];
        for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
    }
    for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) C[(ty * 4 + i) * N + tx * 4 + j] = acc[i][j];
}
kernel void gemm8(global const float *A, global const float *B, global float *C) {
    int tx = get_global_id(0), ty = get_global_id(1);
    float acc[8][8];
    for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    for (int k = 0; k < N; k++) {
        float a[8], b[8];
        for (int i = 0; i < 8; i++) a[i] = A[(ty * 8 + i) * N + k];
        for (int j = 0; j < 8; j++) b[j] = B[k * N + tx * 8 + j];
        for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) acc[i][j] += a[i] * b[j];
    }
    for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) C[(ty * 8 + i) * N + tx * 8 + j] = acc[i][j];
}
"#;

/// The model's report gives the width the launch chose and the launch's reason for it. A
/// 4x4 register tile in 16x16 work-groups runs at SIMD32 (the program's register pressure
/// fits); the report said "compiled at SIMD32 (the model would choose SIMD16: register
/// pressure: wider widths would spill)", the rule applied again to the instrumented
/// variant's own pressure, next to the launch's "register pressure fits the GRF at SIMD32".
#[test]
fn the_report_gives_the_launchs_width_and_reason() {
    let (dir, json, dev) = json_sink("simd-reason");
    let program = build(&dev, REGISTER_TILE);
    let k = program.kernel("gemm4").unwrap();
    let mut a = Buf::new(256 * 256, |i| (i % 7) as i32);
    let mut b = Buf::new(256 * 256, |i| (i % 5) as i32);
    let mut c = Buf::new(256 * 256, |_| -1);
    let r = launch_with(&dev, k, &mut [&mut a, &mut b, &mut c], &[], [64, 64, 1], [16, 16, 1], None);
    let launch = r.report.unwrap_or_default();
    let text = std::fs::read_to_string(&json).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // The file holds the latest report of every kernel this process launched.
    let text = &text[text.find("\"kernel\":\"gemm4\"").unwrap_or_else(|| panic!("no gemm4 in {text}"))..];
    let reason = {
        let key = "\"simd_reason\":\"";
        let at = text.find(key).unwrap_or_else(|| panic!("no simd_reason in {text}")) + key.len();
        text[at..at + text[at..].find('"').unwrap()].to_string()
    };
    let simd = json_number(text, "\"simd\"", "simd");
    assert!(launch.contains(&format!("SIMD{simd} ({reason})")), "launch: {launch}\nmodel: SIMD{simd} ({reason})");
}

const RESHAPE: &str = r#"
kernel void colcopy(global const float *in, global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * n + x] = in[y * n + x] * 2.0f;
}
kernel void transpose(global const float *in, global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1);
    out[x * n + y] = in[y * n + x];
}
kernel void tiled(global const float *in, global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * n + x] = in[y * n + x] + (float)get_local_id(1);
}
"#;

/// The launch-level shape advice: a work-group shape of the same size is suggested only
/// where the model, every access re-counted from its strides (`n` a kernel argument read at
/// launch), prices the launch faster, and the price it gives is the one a launch in that
/// shape gets. Before, each site advised a <16,1,1> work-group on its own: for a transpose
/// in <16,16> work-groups at SIMD32 the write's advice pointed to a shape the model prices
/// 1.31x slower.
#[test]
fn a_work_group_shape_is_suggested_only_where_the_model_prices_it_faster() {
    let (dir, json, dev) = json_sink("reshape");
    let program = build(&dev, RESHAPE);
    let n = 512usize;
    // (kernel, local size) -> (modelled ns, the suggested shape and its modelled ns).
    let launch = |kernel: &str, local: [usize; 3]| -> (f64, Option<([usize; 3], f64)>) {
        let k = program.kernel(kernel).unwrap();
        let mut a = Buf::new(n * n, |i| i as i32);
        let mut b = Buf::new(n * n, |_| 0);
        let r = launch_with_ints(&dev, k, &mut [&mut a, &mut b], &[(2, n as i32)], &[], [n, n, 1], local, None);
        assert!(r.device_time_ns.is_some(), "{kernel} {local:?} modelled");
        let text = std::fs::read_to_string(&json).unwrap();
        let at = text.find(&format!("\"kernel\":\"{kernel}\"")).unwrap_or_else(|| panic!("{text}"));
        let text = &text[at..];
        let time = json_number(text, "\"time_ns\"", "time_ns");
        let key = "\"shape_suggestion\":";
        let rest = &text[text.find(key).unwrap() + key.len()..];
        let suggestion = (!rest.starts_with("null")).then(|| {
            let sizes = &rest[rest.find('[').unwrap() + 1..rest.find(']').unwrap()];
            let s: Vec<usize> = sizes.split(',').map(|x| x.parse().unwrap()).collect();
            ([s[0], s[1], s[2]], json_number(rest, "\"time_ns\"", "time_ns"))
        });
        (time, suggestion)
    };
    let cases: [(&str, [usize; 3]); 3] =
        [("colcopy", [1, 16, 1]), ("transpose", [32, 8, 1]), ("transpose", [256, 1, 1])];
    for (kernel, local) in cases {
        let (time, suggestion) = launch(kernel, local);
        let (shape, predicted) = suggestion.unwrap_or_else(|| panic!("{kernel} {local:?}: no suggestion"));
        assert!(predicted < 0.95 * time, "{kernel} {local:?}: {predicted} vs {time}");
        let (actual, again) = launch(kernel, shape);
        let off = (predicted - actual).abs() / actual;
        assert!(off < 0.02, "{kernel} {local:?} -> {shape:?}: predicted {predicted} ns, launched {actual} ns");
        assert!(again.is_none(), "{kernel} {shape:?}: the suggested shape gets no suggestion of its own");
    }
    // The row shape of a copy: nothing faster. A kernel that reads its local id: no shape
    // is suggested, however its lines look.
    assert!(launch("colcopy", [16, 1, 1]).1.is_none());
    assert!(launch("tiled", [1, 16, 1]).1.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A register tile indexed by loop counters is the guide's "dynamically-indexed private
/// arrays in registers" where it fits: the 8x8 tile (320 bytes per work-item with its
/// operands) runs at SIMD8 with no scratch message, modelled within 3x of the 4x4 tile, and
/// computes the product. Before, private arrays indexed at run time were always scratch:
/// the 8x8 tile ran at SIMD32 with a message per access, 44x the 4x4 tile.
#[test]
fn a_register_tile_stays_in_registers_at_the_width_where_it_fits() {
    let dev = GenDevice::default();
    let program = build(&dev, REGISTER_TILE);
    let (a, b) = (|i: usize| (i % 7) as f32, |i: usize| (i % 5) as f32);
    let run = |kernel: &str, tile: usize| {
        let k = program.kernel(kernel).unwrap();
        let mut ab = Buf::new(256 * 256, |i| a(i).to_bits() as i32);
        let mut bb = Buf::new(256 * 256, |i| b(i).to_bits() as i32);
        let mut c = Buf::new(256 * 256, |_| -1);
        let sum = Arc::new(Sum::default());
        let groups = [256 / tile, 256 / tile, 1];
        let r = launch_with(&dev, k, &mut [&mut ab, &mut bb, &mut c], &[], groups, [16, 16, 1], Some(sum.clone()));
        for (row, col) in [(0, 0), (17, 200), (255, 255)] {
            let want: f32 = (0..256).map(|k| a(row * 256 + k) * b(k * 256 + col)).sum();
            assert_eq!(f32::from_bits(c.get(row * 256 + col) as u32), want, "{kernel}: C[{row}][{col}]");
        }
        // The variant the launch ran (rows of 16 are whole SIMD8 or SIMD16 threads).
        let simd = [8, 16, 32].into_iter().find(|w| r.report.as_deref().unwrap_or("").contains(&format!("SIMD{w} ")));
        let info = k.gen_variant(GenBuild { simd: simd.unwrap_or(8), linear_lanes: simd == Some(32), row_width: 0 }, 0);
        let info = info.expect("a Gen build").expect("vectorized").0.info.gen.expect("instrumented");
        let runs = sum.runs.lock().unwrap();
        let scratch: u64 = (0..info.sites.len())
            .filter(|&s| info.sites[s].space == AddressSpace::Private)
            .map(|s| runs.iter().map(|(words, groups)| info.site_counters(words, s).messages * groups).sum::<u64>())
            .sum();
        (r, scratch)
    };
    let (r4, _) = run("gemm4", 4);
    let (r8, scratch8) = run("gemm8", 8);
    let report = r8.report.clone().unwrap_or_default();
    assert!(
        report.contains("SIMD8 (private arrays indexed at run time stay in registers only at this width)"),
        "{report}"
    );
    assert_eq!(scratch8, 0, "no scratch message: {report}");
    let (t4, t8) = (r4.device_time_ns.unwrap(), r8.device_time_ns.unwrap());
    assert!((t8 as f64) < 3.0 * t4 as f64, "8x8 tile {t8} ns, 4x4 tile {t4} ns");
}

const HISTOGRAM: &str = r#"
kernel void hist(global const int *in, global int *h) {
    atomic_inc(&h[in[get_global_id(0)]]);
}
"#;

/// A histogram's atomics (bins from the data, so the compiler cannot tell which lanes share
/// an address): the lanes of a message on one bin wait for each other, so each message
/// counts its most lanes on one address, 16 / B for 16 lanes over B bins, and the launch's
/// modelled time grows as the bins shrink. Before, such atomics cost their lines only: one
/// bin for all lanes cost what 16 bins did.
#[test]
fn histogram_atomics_count_their_lanes_on_one_bin() {
    let dev = GenDevice::default();
    let program = build(&dev, HISTOGRAM);
    let mut times = Vec::new();
    for bins in [1usize, 4, 16] {
        let mut input = Buf::new(16, |g| (g % bins) as i32);
        let mut h = Buf::new(16, |_| 0);
        let (sum, info, report) = run(&dev, &program, "hist", &mut [&mut input, &mut h], [16, 1, 1], [16, 1, 1]);
        assert!((0..bins).all(|b| h.get(b) == (16 / bins) as i32), "{bins} bins: {report}");
        let atomic = sum.site(&info, site_of(&info, AddressSpace::Global, AccessKind::Atomic));
        assert_eq!((atomic.messages, atomic.atomic_ways), (1, (16 / bins) as u64), "{bins} bins: {report}");
        let k = program.kernel("hist").unwrap();
        let n = 1 << 16;
        let mut input = Buf::new(n, |g| (g % bins) as i32);
        let mut h = Buf::new(16, |_| 0);
        let r = launch_with(&dev, k, &mut [&mut input, &mut h], &[], [n, 1, 1], [256, 1, 1], None);
        times.push(r.device_time_ns.unwrap());
    }
    assert!(times[0] > times[1] && times[1] > times[2], "1, 4, 16 bins: {times:?} ns");
}

/// Atomics on few addresses wait for each other across messages and threads too: the L3
/// does one address's atomics one at a time, so 2^16 increments of 16 bins (4096 atomics a
/// bin, a message's lanes on 16 different bins) take at least 4096 x the L3's atomic clocks,
/// and one bin for all at least 2^16 x them, where 2^16 different bins are nowhere near one
/// at a time. Before, only the lanes of one message waited for each other: one bin's 2^16
/// atomics were modelled at 77.8 us, a third of the 228 us the L3 needs for them.
#[test]
fn atomics_on_few_bins_wait_for_each_other_across_messages() {
    let dev = GenDevice::default();
    let program = build(&dev, HISTOGRAM);
    let k = program.kernel("hist").unwrap();
    let n = 1usize << 16;
    let time = |bins: usize| {
        let mut input = Buf::new(n, |g| (g % bins) as i32);
        let mut h = Buf::new(n, |_| 0);
        let r = launch_with(&dev, k, &mut [&mut input, &mut h], &[], [n, 1, 1], [256, 1, 1], None);
        assert!((0..bins).all(|b| h.get(b) == (n / bins) as i32), "{bins} bins");
        let text = r.report.unwrap_or_default();
        (r.device_time_ns.unwrap() as f64, text)
    };
    let config = softcl_device_model::gen::GenConfig::default();
    let serial_ns = |atomics: usize| atomics as f64 * f64::from(config.l3_atomic_clocks) / config.clocks_per_ns();
    let (one, one_report) = time(1);
    let (few, few_report) = time(16);
    let (all, all_report) = time(n);
    assert!(one >= serial_ns(n), "1 bin: {one} ns, at least {} ns: {one_report}", serial_ns(n));
    assert!(few >= serial_ns(n / 16), "16 bins: {few} ns, at least {} ns: {few_report}", serial_ns(n / 16));
    // Distinct bins make no address hot: far from one at a time.
    assert!(all < serial_ns(n) / 8.0, "{n} bins: {all} ns: {all_report}");
    assert!(one > few, "1 bin {one} ns, 16 bins {few} ns");
}
