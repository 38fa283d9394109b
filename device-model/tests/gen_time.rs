//! Modelled time of real kernels on the Gen device. Where one hardware thread is alone on
//! its sub-slice (low occupancy: no other thread hides its latency), independent messages
//! overlap their latency, dependent ones wait for each other, and what a message costs at
//! the data port or in the SLM banks (strides, bank conflicts) shows as it does at full
//! occupancy. Over many work-groups, memory copies are messages and built-ins cost what
//! the EU spends on them, so the guide's rankings hold.

use softcl_device_model::GenDevice;

mod support;
use softcl_compiler::NativeProgram;
use support::{build, launch_with, ArgAddr, Buf};

/// Kernel `name` of `program` over `n` work-items in work-groups of `local`: its modelled
/// time in ns.
fn modelled_1d(
    dev: &GenDevice,
    program: &NativeProgram,
    name: &str,
    bufs: &mut [&mut dyn ArgAddr],
    n: usize,
    local: usize,
) -> u64 {
    let k = program.kernel(name).unwrap_or_else(|| panic!("{name}"));
    let r = launch_with(dev, k, bufs, &[], [n, 1, 1], [local, 1, 1], None);
    r.device_time_ns.unwrap_or_else(|| panic!("{name} not modelled: {:?}", r.report))
}

/// Sixteen loads of the same addresses per work-item (`a[i] = i + 64`, so the chase visits
/// `g, g + 64, ..., g + 960` as `indep` does): independent in `indep`, each needing the one
/// before in `chase`.
const CHAINS: &str = "kernel void indep(global const int *a, global int *out) {\n\
    int g = get_global_id(0); int s = 0;\n\
    #pragma unroll\n\
    for (int k = 0; k < 16; k++) s += a[g + 64 * k];\n\
    out[g] = s; }\n\
    kernel void chase(global const int *a, global int *out) {\n\
    int i = get_global_id(0);\n\
    #pragma unroll\n\
    for (int k = 0; k < 16; k++) i = a[i];\n\
    out[get_global_id(0)] = i; }";

/// One SIMD16 thread alone on the device: its time in ns, its output checked by `want`.
fn one_thread(dev: &GenDevice, source: &str, kernel: &str, input: &mut Buf, want: impl Fn(usize) -> i32) -> u64 {
    let program = build(dev, source);
    let k = program.kernel(kernel).unwrap_or_else(|| panic!("{kernel}"));
    let mut out = Buf::new(16, |_| -1);
    let r = launch_with(dev, k, &mut [input, &mut out], &[], [16, 1, 1], [16, 1, 1], None);
    for g in 0..16 {
        assert_eq!(out.get(g), want(g), "{kernel}: out[{g}]");
    }
    let report = r.report.unwrap_or_default();
    assert!(report.contains("SIMD16") && report.contains("vectorized"), "{kernel}: {report}");
    r.device_time_ns.unwrap_or_else(|| panic!("{kernel} not modelled: {report}"))
}

/// The guide's overview of the EU ("latency hiding of longer operations such as memory
/// requests") and "Using Loops" (unroll, minimize memory accesses within the loop): a thread
/// sends its messages and waits only where it uses their data, so sixteen independent loads
/// of one thread wait about one latency and a chase of sixteen loads sixteen. Before the
/// model had dependency chains, both cost 16 latencies (ratio 1.0).
#[test]
fn independent_loads_overlap_their_latency() {
    let dev = GenDevice::default();
    let mut a = Buf::new(2048, |i| ((i + 64) % 2048) as i32);
    let indep = one_thread(&dev, CHAINS, "indep", &mut a, |g| (0..16).map(|k| (g + 64 * k + 64) as i32).sum());
    let chase = one_thread(&dev, CHAINS, "chase", &mut a, |g| (g + 64 * 16) as i32);
    assert!(chase as f64 > 8.0 * indep as f64, "chase {chase} ns, independent {indep} ns");
}

/// Eight independent loads per iteration, 32 iterations, of global ints at a stride of
/// `S` ints between lanes, or of `__local` ints (`i % 7` at `t[i]`) at a row stride of `S`.
fn strided_source(s: u32) -> String {
    format!(
        "kernel void glob(global const int *a, global int *out) {{\n\
         int g = get_global_id(0); int s = 0;\n\
         for (int r = 0; r < 32; r++) {{\n\
         #pragma unroll\n\
         for (int k = 0; k < 8; k++) s += a[(g + 16 * k + 128 * r) * {s}];\n\
         }}\n\
         out[g] = s; }}\n\
         kernel void slm(global const int *a, global int *out) {{\n\
         local int t[512]; int l = get_local_id(0);\n\
         for (int i = l; i < 512; i += 16) t[i] = i % 7;\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         int s = 0;\n\
         for (int r = 0; r < 32; r++) {{\n\
         #pragma unroll\n\
         for (int k = 0; k < 8; k++) s += t[l * {s} + k + r];\n\
         }}\n\
         out[get_global_id(0)] = s; }}"
    )
}

/// At low occupancy a stride still costs its lines and a bank conflict its cycles: one
/// thread's messages pass its data port (64 B per clock) and the SLM banks one after
/// another. The guide's global cases (`a[gid]` 1 line, `a[gid*16]` 16) and local cases
/// (`a[gid*16]` 1/16 speed, `a[gid*17]` full) rank the same with one thread per sub-slice as
/// with many. Before, the latency of each load (300 or 40 clocks) hid both: 1.00x.
#[test]
fn strides_and_bank_conflicts_show_at_low_occupancy() {
    let dev = GenDevice::default();
    let mut a = Buf::new(65536, |i| (i % 7) as i32);
    let time = |s: u32, kernel: &str, a: &mut Buf| {
        let want = |g: usize| -> i32 {
            let s = s as usize;
            let idx = |k: usize, r: usize| if kernel == "glob" { (g + 16 * k + 128 * r) * s } else { g * s + k + r };
            (0..32).flat_map(|r| (0..8).map(move |k| (r, k))).map(|(r, k)| (idx(k, r) % 7) as i32).sum()
        };
        one_thread(&dev, &strided_source(s), kernel, a, want)
    };
    let (g1, g16) = (time(1, "glob", &mut a), time(16, "glob", &mut a));
    assert!(g16 as f64 > 1.2 * g1 as f64, "global stride 16 {g16} ns, stride 1 {g1} ns");
    let (s17, s16) = (time(17, "slm", &mut a), time(16, "slm", &mut a));
    assert!(s16 as f64 > 1.5 * s17 as f64, "SLM stride 16 {s16} ns, stride 17 {s17} ns");
}

/// The optimisation guide's "Applying Shared Local Memory" example: BAD copies the whole
/// 256-entry table in every work-item (clang makes the loop one 1 KB memory copy per
/// work-item), GOOD strides the copy over the work-group, BEST copies one entry per
/// work-item. Before memory copies were messages, BAD was free and came out fastest.
const GUIDE_SLM: &str = "kernel void bad(global const int *table, global int *out) {\n\
    local int slm[256];\n\
    for (uint index = 0; index < 256; index++) slm[index] = table[index];\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    out[get_global_id(0)] = slm[(get_global_id(0) * 7) & 255]; }\n\
    kernel void good(global const int *table, global int *out) {\n\
    local int slm[256];\n\
    int lidx = get_local_id(0); int size_x = get_local_size(0);\n\
    for (uint index = lidx; index < 256; index += size_x) slm[index] = table[index];\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    out[get_global_id(0)] = slm[(get_global_id(0) * 7) & 255]; }\n\
    kernel void best(global const int *table, global int *out) {\n\
    local int slm[256];\n\
    int lidx = get_local_id(0);\n\
    slm[lidx] = table[lidx];\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    out[get_global_id(0)] = slm[(get_global_id(0) * 7) & 255]; }\n\
    typedef struct { float v[16]; } S;\n\
    kernel void copy(global S *d, global const S *s) { d[get_global_id(0)] = s[get_global_id(0)]; }";

#[test]
fn memory_copies_are_messages_and_the_guides_slm_example_ranks() {
    let dev = GenDevice::default();
    let program = build(&dev, GUIDE_SLM);
    let n = 65536;
    let time = |name: &str| {
        let mut table = Buf::new(256, |i| (i * 3) as i32);
        let mut out = Buf::new(n, |_| -1);
        let t = modelled_1d(&dev, &program, name, &mut [&mut table, &mut out], n, 256);
        assert!((0..n).all(|g| out.get(g) == ((g * 7) & 255) as i32 * 3), "{name}");
        t
    };
    let (bad, good, best) = (time("bad"), time("good"), time("best"));
    assert!(bad as f64 > 4.0 * good as f64, "BAD {bad} ns, GOOD {good} ns");
    assert!(best <= good, "BEST {best} ns, GOOD {good} ns");
    // A 64-byte struct assignment per work-item: a load and a store of 64 bytes per lane,
    // 2 MiB through memory, so at least the time gen9-gt2's 34.1 GB/s needs for them.
    let items = 16384;
    let mut s = Buf::new(items * 16, |i| i as i32);
    let mut d = Buf::new(items * 16, |_| -1);
    let t = modelled_1d(&dev, &program, "copy", &mut [&mut d, &mut s], items, 64);
    assert!((0..items * 16).all(|i| d.get(i) == i as i32), "the copy");
    let roof_ns = (2 * items * 64) as f64 / 34.1;
    assert!(t as f64 >= 0.95 * roof_ns, "copy {t} ns, memory needs {roof_ns:.0} ns");
}

/// The guide's "Considering native_ and half_ Versions of Math Built-Ins": the native
/// versions "are generally supported in hardware and run substantially faster". A
/// compute-bound chain of 64 `sin` per work-item against `native_sin` (before the model
/// priced built-ins, both were one instruction and the same time).
const MATH: &str = "kernel void precise(global float *a) {\n\
    int g = get_global_id(0); float x = a[g];\n\
    for (int k = 0; k < 64; k++) x = sin(x) + 0.5f;\n\
    a[g] = x; }\n\
    kernel void native(global float *a) {\n\
    int g = get_global_id(0); float x = a[g];\n\
    for (int k = 0; k < 64; k++) x = native_sin(x) + 0.5f;\n\
    a[g] = x; }";

#[test]
fn native_math_is_cheaper_than_precise_math() {
    let dev = GenDevice::default();
    let program = build(&dev, MATH);
    let n = 1 << 16;
    let time = |name: &str| {
        let mut a = Buf::new(n, |i| ((i % 100) as f32 / 100.0).to_bits() as i32);
        let t = modelled_1d(&dev, &program, name, &mut [&mut a], n, 256);
        for i in [0, 1, 99, n - 1] {
            let mut x = (i % 100) as f32 / 100.0;
            for _ in 0..64 {
                x = x.sin() + 0.5;
            }
            let got = f32::from_bits(a.get(i) as u32);
            assert!((got - x).abs() < 1e-3, "{name}: a[{i}] = {got}, want {x}");
        }
        t
    };
    let (precise, native) = (time("precise"), time("native"));
    assert!(precise as f64 > 3.0 * native as f64, "sin {precise} ns, native_sin {native} ns");
}

/// Atomics on one address serialise: a million `atomic_inc` on one global counter wait for
/// each other across the device, on a counter per work-group only within each message
/// (the work-groups' counters are different lines of the L3), on a counter per work-item
/// not at all. Before, the one counter of the launch was modelled as the cheapest case,
/// faster than a plain store of the same work-items.
const ATOMICS: &str = "kernel void one(global int *c) { atomic_inc(&c[0]); }\n\
    kernel void per_group(global int *c) { atomic_inc(&c[get_group_id(0) * 16]); }\n\
    kernel void per_item(global int *c) { atomic_inc(&c[get_global_id(0)]); }\n\
    kernel void store(global int *c) { c[get_global_id(0)] = 1; }";

#[test]
fn atomics_on_one_address_serialise() {
    let dev = GenDevice::default();
    let program = build(&dev, ATOMICS);
    let n = 1 << 20;
    let time = |name: &str| {
        let mut c = Buf::new(n, |_| 0);
        let t = modelled_1d(&dev, &program, name, &mut [&mut c], n, 256);
        let want = |i: usize| match name {
            "one" => i32::from(i == 0) * n as i32,
            "per_group" => i32::from(i.is_multiple_of(16) && i / 16 < n / 256) * 256,
            _ => 1,
        };
        assert!((0..n).all(|i| c.get(i) == want(i)), "{name}");
        t
    };
    let (one, group, item, store) = (time("one"), time("per_group"), time("per_item"), time("store"));
    // 2^20 lane atomics at the L3's 4 clocks each, one after another: about 3.6 ms.
    assert!(one as f64 > 10.0 * store as f64, "one address {one} ns, plain store {store} ns");
    assert!(one > group && group > item, "one {one} ns, per group {group} ns, per item {item} ns");
}

/// The guide's "Kernel Memory Access Optimization Summary": "load two, three, or four
/// 32-bit quantities at a time". A lane's vector is one message of its contiguous bytes, so a
/// copy of the same 4 MiB as float, float2, float4 or float8 costs the same modelled time
/// (a float4 message of 16 lanes is 4 whole lines, not four strided scalar messages).
const VECTOR_COPIES: &str =
    "kernel void c1(global const float *a, global float *b) { b[get_global_id(0)] = a[get_global_id(0)]; }\n\
    kernel void c2(global const float2 *a, global float2 *b) { b[get_global_id(0)] = a[get_global_id(0)]; }\n\
    kernel void c4(global const float4 *a, global float4 *b) { b[get_global_id(0)] = a[get_global_id(0)]; }\n\
    kernel void c8(global const float8 *a, global float8 *b) { b[get_global_id(0)] = a[get_global_id(0)]; }";

#[test]
fn vector_copies_cost_their_bytes() {
    let dev = GenDevice::default();
    let program = build(&dev, VECTOR_COPIES);
    let ints = 1 << 20;
    let times: Vec<u64> = [(1, "c1"), (2, "c2"), (4, "c4"), (8, "c8")]
        .iter()
        .map(|&(width, name)| {
            let mut a = Buf::new(ints, |i| i as i32);
            let mut b = Buf::new(ints, |_| -1);
            let t = modelled_1d(&dev, &program, name, &mut [&mut a, &mut b], ints / width, 256);
            assert!((0..ints).all(|i| b.get(i) == i as i32), "{name}");
            t
        })
        .collect();
    assert!(
        times.iter().all(|&t| t.abs_diff(times[0]) * 100 <= times[0]),
        "float, float2, float4, float8: {times:?} ns"
    );
}

/// The rules priced over many work-groups above rank alike with one SIMD16 thread alone on
/// the device (low occupancy, nothing hides its latency): `sin` above `native_sin`, one
/// counter's atomics (serialised in the message) above one per lane, a 64-byte struct copy
/// above a 4-byte one. (The guide's SLM example is a throughput rule: alone, GOOD's 16
/// dependent iterations, each store waiting for its load, take 4.5 us against BAD's one
/// 1 KB copy's 1.3 us; over many work-groups BAD's redundant SLM writes bind.)
#[test]
fn the_rules_rank_alike_at_low_occupancy() {
    let dev = GenDevice::default();
    let one_thread = |source: &str, name: &str, bufs: &mut [&mut dyn ArgAddr]| -> u64 {
        let program = build(&dev, source);
        modelled_1d(&dev, &program, name, bufs, 16, 16)
    };
    let math = |name: &str| one_thread(MATH, name, &mut [&mut Buf::new(16, |i| i as i32)]);
    let (precise, native) = (math("precise"), math("native"));
    // The thread's load and store latency is the same in both: 2.9x (3.4x over many).
    assert!(precise as f64 > 2.0 * native as f64, "sin {precise} ns, native_sin {native} ns");

    let atomics = |name: &str| one_thread(ATOMICS, name, &mut [&mut Buf::new(4096, |_| 0)]);
    let (one, item) = (atomics("one"), atomics("per_item"));
    assert!(one > item, "one counter {one} ns, one per lane {item} ns");

    let copies = "typedef struct { float v[16]; } S;\n\
        kernel void wide(global S *d, global const S *s) { d[get_global_id(0)] = s[get_global_id(0)]; }\n\
        kernel void narrow(global float *d, global const float *s) { d[get_global_id(0)] = s[get_global_id(0)]; }";
    let copy =
        |name: &str| one_thread(copies, name, &mut [&mut Buf::new(256, |_| 0), &mut Buf::new(256, |i| i as i32)]);
    let (wide, narrow) = (copy("wide"), copy("narrow"));
    // 32 lines against 2 through the thread's data port at 64 B per clock, next to two
    // latencies of about 300 clocks each: 1.1x (16x the bytes over many work-groups).
    assert!(wide > narrow, "64-byte copy {wide} ns, 4-byte copy {narrow} ns");
}

/// Dependency chains at full occupancy: many threads hide each other's latency, so a chase
/// of sixteen loads costs no less than sixteen independent loads of the same lines, and not
/// the sixteen latencies it costs alone (the ranking holds, the ratio shrinks).
#[test]
fn chains_rank_alike_at_full_occupancy() {
    let dev = GenDevice::default();
    let program = build(&dev, CHAINS);
    let n = 1 << 16;
    let time = |name: &str| {
        let mut a = Buf::new(n + 1024, |i| (i + 64) as i32);
        let mut out = Buf::new(n, |_| -1);
        modelled_1d(&dev, &program, name, &mut [&mut a, &mut out], n, 256)
    };
    let (indep, chase) = (time("indep"), time("chase"));
    assert!(chase >= indep, "chase {chase} ns, independent {indep} ns");
    assert!((chase as f64) < 8.0 * indep as f64, "latency hidden: chase {chase} ns, independent {indep} ns");
}

/// The guide's "Loading and Storing Data in Greatest Chunks": `amp` on RGBA8 pixels as
/// uchar4 (one pixel per work-item, converted to uint4) against uint4 (four pixels per
/// work-item, unpacked by hand, a quarter of the work-items): "using (u)int4 ... saves a
/// lot of compute, even if you unpack data manually afterward". The same bytes move; the
/// uint4 version is modelled faster (the uchar4 one is bound by its per-pixel work over four
/// times the hardware threads).
const AMP: &str = "kernel void amp_uchar4(constant uchar4 *src, global uchar4 *dst) {\n\
    int offset = get_global_id(0);\n\
    uint4 tempSrc = convert_uint4(src[offset]);\n\
    uint value = (tempSrc.z + tempSrc.y + tempSrc.x) / 3;\n\
    uint4 tempDst = (uint4)(value) + (tempSrc - (uint4)(value)) * 2u;\n\
    dst[offset] = convert_uchar4_sat(tempDst); }\n\
    kernel void amp_uint4(constant uint4 *src, global uint4 *dst) {\n\
    int offset = get_global_id(0);\n\
    uint4 tempSrc = src[offset]; uint4 final = 0;\n\
    for (int p = 0; p < 4; p++) {\n\
        uint px = tempSrc[p];\n\
        uint r = px & 0xff, g = (px >> 8) & 0xff, b = (px >> 16) & 0xff, a = px >> 24;\n\
        uint value = (r + g + b) / 3;\n\
        r = min(value + (r - value) * 2u, 255u); g = min(value + (g - value) * 2u, 255u);\n\
        b = min(value + (b - value) * 2u, 255u); a = min(value + (a - value) * 2u, 255u);\n\
        final[p] = r | (g << 8) | (b << 16) | (a << 24); }\n\
    dst[offset] = final; }";

#[test]
fn the_guides_amp_example_ranks_uint4_first() {
    let dev = GenDevice::default();
    let program = build(&dev, AMP);
    let pixels = 1 << 20;
    let src = |i: usize| ((i * 37) % 251) as i32 * 0x0101_0101;
    let time = |name: &str, items: usize| {
        let mut s = Buf::new(pixels, src);
        let mut d = Buf::new(pixels, |_| -1);
        let t = modelled_1d(&dev, &program, name, &mut [&mut s, &mut d], items, 256);
        // Every pixel is grey (r = g = b = a), so it comes out unchanged.
        assert!((0..pixels).step_by(997).all(|i| d.get(i) == src(i)), "{name}");
        t
    };
    let (uchar4, uint4) = (time("amp_uchar4", pixels), time("amp_uint4", pixels / 4));
    assert!(uint4 < uchar4, "uint4 {uint4} ns, uchar4 {uchar4} ns");
}
