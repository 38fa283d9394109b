//! The Gen performance model against the optimisation guide
//! (shared/seeds/004_62a5a3a4c49fae02.txt) and its roofs: the per-message rules reproduce
//! the guide's tables exactly, occupancy its work-group examples, the SIMD choice the rules
//! of gen-model.md, and the modelled time ranks kernel variants the way the guide does.
//!
//! Counters here are made the way a Gen-instrumented build makes them: every hardware
//! thread's lanes get addresses from the guide's index expressions, and `model::rules`
//! turns each message into lines or bank cycles (`Simulated`).

use softcl_compiler::gen_abi::{
    site_word, site_word_index, AccessKind, GenBlock, GenKernelInfo, GenSite, RegisterPressure, SourceLoc, BLOCK_WORDS,
    SITE_WORDS,
};
use softcl_compiler::{compile_source, AddressSpace, KernelInfo};
use softcl_device_model::gen::model::rules::{l3_message, slm_message};
use softcl_device_model::gen::model::{occupancy, GenLaunchModel, GenModel, GenShape, Limit};
use softcl_device_model::gen::{model::simd, SlmAllocRule};
use softcl_device_model::{Device, GenConfig, GenDevice, Observer};

// ---------------------------------------------------------------------------------------
// Lane addresses of one SIMD16 hardware thread, from the guide's index expressions.

const INT: u64 = 4;

/// The 16 work-items of group 0 of `local` shape, in linear local id order (x fastest):
/// their global ids.
fn work_items(local: [usize; 3]) -> Vec<[u64; 3]> {
    let mut v = Vec::new();
    for z in 0..local[2] {
        for y in 0..local[1] {
            for x in 0..local[0] {
                v.push([x as u64, y as u64, z as u64]);
            }
        }
    }
    v
}

fn global_lines(index: impl Fn([u64; 3]) -> u64, local: [usize; 3]) -> u32 {
    let addrs: Vec<u64> = work_items(local).into_iter().map(|g| index(g) * INT).collect();
    assert_eq!(addrs.len(), 16);
    l3_message(&addrs, 0xffff, 4).lines
}

/// Guide, "__global Memory and __constant Memory": `myArray[get_global_id(0) +
/// get_global_id(1) * width]` read by work-groups of sixteen work-items.
#[test]
fn guide_work_group_shapes_and_l3_lines() {
    let width = 1024;
    let index = |g: [u64; 3]| g[0] + g[1] * width;
    assert_eq!(global_lines(index, [16, 1, 1]), 1, "row work-group <16,1,1>");
    assert_eq!(global_lines(index, [4, 4, 1]), 4, "square work-group <4,4,1>");
    assert_eq!(global_lines(index, [1, 16, 1]), 16, "column work-group <1,16,1>");
}

/// Guide, same section: cases 1-6 for a row work-group <16,1,1>.
#[test]
fn guide_global_memory_cases() {
    let n = 4096; // get_global_size(0)
    let row = [16, 1, 1];
    let case = |f: &dyn Fn(u64) -> u64| {
        let addrs: Vec<u64> = (0..16).map(|g| f(g) * INT).collect();
        let m = l3_message(&addrs, 0xffff, 4);
        (m.lines, m.efficiency())
    };
    assert_eq!(case(&|g| g), (1, 1.0), "case 1: a[gid]");
    assert_eq!(case(&|g| g + 1), (2, 0.5), "case 2: a[gid+1]");
    assert_eq!(case(&|g| n - 1 - g), (1, 1.0), "case 3: a[N-1-gid]");
    assert_eq!(case(&|g| g * 4), (4, 0.25), "case 4: a[gid*4]");
    assert_eq!(case(&|g| g * 16), (16, 1.0 / 16.0), "case 5: a[gid*16]");
    assert_eq!(case(&|g| g * 32), (16, 1.0 / 16.0), "case 6: a[gid*32]");
    assert_eq!(global_lines(|g| g[0], row), 1);
}

/// Guide, "__local Memory": cases 1-7 (reads by a row work-group <16,1,1>); speed is the
/// fraction of full bandwidth.
#[test]
fn guide_local_memory_cases() {
    let n = 4096;
    let case = |f: &dyn Fn(u64) -> u64| {
        let addrs: Vec<u64> = (0..16).map(|g| f(g) * INT).collect();
        let m = slm_message(&addrs, 0xffff, 4, AccessKind::Load);
        (m.cycles, m.conflict_cycles, m.speed())
    };
    assert_eq!(case(&|g| g), (1, 0, 1.0), "case 1: a[gid]: 16 banks");
    assert_eq!(case(&|g| g + 1), (1, 0, 1.0), "case 2: a[gid+1]: 16 banks");
    assert_eq!(case(&|g| n - 1 - g), (1, 0, 1.0), "case 3: a[N-1-gid]");
    assert_eq!(case(&|g| g & !1), (1, 0, 1.0), "case 4: a[gid & ~1]: 8 banks, same address pairs");
    assert_eq!(case(&|g| g * 2), (2, 1, 0.5), "case 5: a[gid*2]: half speed");
    assert_eq!(case(&|g| g * 16), (16, 15, 1.0 / 16.0), "case 6: a[gid*16]: one bank, 1/16");
    assert_eq!(case(&|g| g * 17), (1, 0, 1.0), "case 7: a[gid*17]: 16 banks");
    // "Writes to the same bank always result in a bank conflict, even if the writes are
    // going to the same address" (Kernel Memory Access Optimization Summary).
    let pairs: Vec<u64> = (0..16).map(|g| (g & !1) * INT).collect();
    assert_eq!(slm_message(&pairs, 0xffff, 4, AccessKind::Store).cycles, 2);
    let worst = slm_message(&(0..16).map(|g| g * 16 * INT).collect::<Vec<_>>(), 0xffff, 4, AccessKind::Load);
    assert_eq!(worst.worst_ways, 16);
}

// ---------------------------------------------------------------------------------------
// Occupancy: the guide's "Work-Group Size Recommendations Summary".

#[test]
fn guide_occupancy_examples() {
    let c = GenConfig::gen9_gt2();
    let many = 1 << 20;
    // "There are 16 barrier registers per sub-slice, so no more than 16 work-groups can be
    // executed simultaneously": 16 work-items at SIMD16 are one thread each, 56 would fit.
    let o = occupancy(&c, 16, 16, true, 0, many);
    assert_eq!((o.threads_per_wg, o.by_threads, o.by_barriers, o.wgs), (1, 56, Some(16), 16));
    assert_eq!(o.binding, Limit::Barriers);
    assert!((o.occupancy - 16.0 / 56.0).abs() < 1e-12);
    // Without barriers or local memory "these restrictions do not apply".
    let o = occupancy(&c, 16, 16, false, 0, many);
    assert_eq!((o.wgs, o.binding), (56, Limit::Threads));
    assert_eq!(o.occupancy, 1.0);
    // "If for example a work-group requires 32KB of shared local memory, only 2 of those
    // work-groups can run concurrently, regardless of work-group size."
    for wg in [64, 128, 256] {
        let o = occupancy(&c, wg, 16, true, 32 << 10, many);
        assert_eq!((o.wgs, o.binding, o.slm_alloc), (2, Limit::Slm, 32 << 10), "work-group of {wg}");
    }
    // "Use power-of-two workgroup sizes between 64 and 256": 256 at SIMD16 is 16 threads,
    // three per sub-slice (48 of 56 threads) with barriers; 64 is 4 threads, 14 work-groups.
    let o = occupancy(&c, 256, 16, true, 0, many);
    assert_eq!((o.threads_per_wg, o.wgs, o.binding), (16, 3, Limit::Threads));
    let o = occupancy(&c, 64, 16, true, 0, many);
    assert_eq!((o.wgs, o.binding), (14, Limit::Threads));
    // "A bare minimum SLM allocation size is 4k per workgroup ... the granularity of SLM
    // allocation is 1K": the guide's rule as a configuration value.
    let guide = GenConfig { slm_alloc: SlmAllocRule::Granular { min: 4 << 10, granularity: 1 << 10 }, ..c.clone() };
    let o = occupancy(&guide, 16, 16, false, 100, many);
    assert_eq!((o.slm_alloc, o.by_slm, o.wgs, o.binding), (4096, Some(16), 16, Limit::Slm));
    let o = occupancy(&guide, 16, 16, false, 5000, many);
    assert_eq!((o.slm_alloc, o.by_slm), (5120, Some(12)));
    // Intel's runtime rounds to a power of two from 1 KB (the default configuration).
    let o = occupancy(&c, 16, 16, false, 100, many);
    assert_eq!((o.slm_alloc, o.by_slm, o.binding), (1024, Some(64), Limit::Threads));
    let o = occupancy(&c, 16, 16, false, 5000, many);
    assert_eq!((o.slm_alloc, o.wgs, o.binding), (8192, 8, Limit::Slm));
    // A launch with fewer work-groups than the sub-slices hold.
    let o = occupancy(&c, 256, 16, false, 0, 3);
    assert_eq!((o.wgs, o.binding), (1, Limit::WorkGroups));
    // Xe-LP: 32 barrier registers, 128 KB of SLM per dual sub-slice.
    let xe = GenConfig::xe_lp();
    let o = occupancy(&xe, 16, 16, true, 32 << 10, many);
    assert_eq!((o.by_barriers, o.by_slm, o.wgs), (Some(32), Some(4), 4));
}

// ---------------------------------------------------------------------------------------
// SIMD width.

fn with_pressure(p: RegisterPressure) -> KernelInfo {
    KernelInfo { name: "k".into(), register_pressure: Some(p), ..KernelInfo::default() }
}

#[test]
fn simd_choice_from_register_pressure() {
    let c = GenConfig::gen9_gt2();
    let p = |u: u32, v: u32| RegisterPressure { uniform_bytes: u, varying_bytes: v, ..Default::default() };
    // 256 + 120 x 32 = 4096: fits SIMD32 exactly.
    let k = with_pressure(p(256, 120));
    assert_eq!(simd::choose(&c, &k, 256).unwrap().simd, 32);
    // 256 + 121 x 32 = 4128 > 4096; x 16 = 2192 fits.
    let ch = simd::choose(&c, &with_pressure(p(256, 121)), 256).unwrap();
    assert_eq!((ch.simd, ch.rule), (16, simd::SimdRule::WiderSpills));
    assert!(
        ch.reason(&c, Some(p(256, 121))).contains("SIMD32 needs 4128 B of 4096 B"),
        "{}",
        ch.reason(&c, Some(p(256, 121)))
    );
    // Fits only SIMD8.
    assert_eq!(simd::choose(&c, &with_pressure(p(0, 400)), 256).unwrap().simd, 8);
    // Fits nothing: SIMD8, spilling.
    let ch = simd::choose(&c, &with_pressure(p(0, 600)), 256).unwrap();
    assert_eq!((ch.simd, ch.rule), (8, simd::SimdRule::Spills));
    // Work-group size rules come first.
    let light = with_pressure(p(64, 16));
    assert_eq!(simd::choose(&c, &light, 8).unwrap().simd, 8);
    assert_eq!(simd::choose(&c, &light, 16).unwrap().rule, simd::SimdRule::WorkGroupUpTo16);
    assert_eq!(simd::choose(&c, &light, 17).unwrap().simd, 32);
    // SIMD32 skipped for divergent loops, sub-group functions and very large kernels.
    for (q, rule) in [
        (RegisterPressure { divergent_loops: true, ..p(64, 16) }, simd::SimdRule::DivergentLoops),
        (RegisterPressure { subgroup_functions: true, ..p(64, 16) }, simd::SimdRule::SubGroupFunctions),
        (RegisterPressure { instructions: 100_000, ..p(64, 16) }, simd::SimdRule::LargeKernel),
    ] {
        let ch = simd::choose(&c, &with_pressure(q), 256).unwrap();
        assert_eq!((ch.simd, ch.rule), (16, rule));
    }
    // Private arrays indexed at run time: in registers (and in the pressure) at the widest
    // width where the lanes' copies take at most 3 KB: 64 B at SIMD32 (2 KB), 320 B only at
    // SIMD8 (2.5 KB); 512 B nowhere (scratch: the pressure alone decides).
    let arrays = |bytes: u32| with_pressure(RegisterPressure { private_array_bytes: bytes, ..p(64, 16) });
    let ch = simd::choose(&c, &arrays(64), 256).unwrap();
    assert_eq!((ch.simd, ch.rule, ch.pressure_bytes), (32, simd::SimdRule::PressureFits, 64 + (16 + 64) * 32));
    let ch = simd::choose(&c, &arrays(320), 256).unwrap();
    assert_eq!((ch.simd, ch.rule), (8, simd::SimdRule::PrivateArrays));
    let ch = simd::choose(&c, &arrays(512), 256).unwrap();
    assert_eq!((ch.simd, ch.rule, ch.pressure_bytes), (32, simd::SimdRule::PressureFits, 64 + 16 * 32));
    // A required sub-group size fixes it, whatever the pressure.
    let reqd = KernelInfo { reqd_sub_group_size: Some(32), ..with_pressure(p(0, 600)) };
    assert_eq!(simd::choose(&c, &reqd, 8).unwrap().simd, 32);
}

fn codegen_infos(source: &str) -> Vec<KernelInfo> {
    let dev = GenDevice::default();
    let program = compile_source(source, "-cl-std=CL3.0", dev.target()).unwrap_or_else(|e| panic!("build:\n{e}"));
    let native = program.codegen(dev.target()).unwrap_or_else(|e| panic!("codegen:\n{e}"));
    native.kernels.iter().map(|k| k.info.clone()).collect()
}

/// The compiler's register pressure: a kernel keeping 64 float4 values of each work-item
/// live needs more than a copy, and its SIMD width is narrower.
#[test]
fn compiler_register_pressure_decides_the_width() {
    let mut heavy = String::from(
        "kernel void heavy(global const float4 *a, global float4 *b) {\n size_t i = get_global_id(0) * 64;\n",
    );
    for k in 0..64 {
        heavy.push_str(&format!(" float4 v{k} = a[i + {k}];\n"));
    }
    heavy.push_str(" float4 s = (float4)(0.0f);\n");
    for k in 0..64 {
        heavy.push_str(&format!(" s = s * v{k} + v{};\n", 63 - k));
    }
    heavy.push_str(" b[get_global_id(0)] = s;\n}\n");
    let source = format!(
        "kernel void copy(global const float *a, global float *b) {{ size_t i = get_global_id(0); b[i] = a[i]; }}\n\
         kernel void loop(global const float *a, global float *b) {{\n\
           size_t i = get_global_id(0); float s = 0.0f;\n\
           for (size_t k = 0; k < i % 7; k++) s += a[k];\n\
           b[i] = s; }}\n{heavy}"
    );
    let infos = codegen_infos(&source);
    let get = |n: &str| infos.iter().find(|k| k.name == n).unwrap().clone();
    let (copy, lp, heavy) = (get("copy"), get("loop"), get("heavy"));
    let pc = copy.register_pressure.expect("set at codegen");
    let ph = heavy.register_pressure.expect("set at codegen");
    assert!(pc.varying_bytes > 0 && pc.varying_bytes <= 64, "copy: {pc:?}");
    assert!(ph.varying_bytes >= 64 * 16, "heavy keeps 64 float4 live: {ph:?}");
    assert!(!pc.divergent_loops && !pc.subgroup_functions);
    assert!(lp.register_pressure.unwrap().divergent_loops, "a loop whose trip count differs per work-item");
    let c = GenConfig::gen9_gt2();
    assert_eq!(simd::choose(&c, &copy, 256).unwrap().simd, 32);
    assert_eq!(simd::choose(&c, &lp, 256).unwrap().rule, simd::SimdRule::DivergentLoops);
    let h = simd::choose(&c, &heavy, 256).unwrap();
    assert!(h.simd <= 8, "{h:?} {ph:?}");
    // The device's choice is the model's.
    assert_eq!(softcl_device_model::gen::choose_simd(&c, &copy, 256).unwrap().0, 32);
}

// ---------------------------------------------------------------------------------------
// Modelled time from simulated counters.

/// One site of a simulated kernel: where each work-item's lane points (global ids in,
/// byte address out), how often per work-item.
struct SimSite {
    space: AddressSpace,
    kind: AccessKind,
    bytes: u32,
    addr: Box<dyn Fn([u64; 3]) -> u64>,
    /// The sites whose data its address needs (`GenSite::waits_for`).
    waits_for: Vec<u32>,
}

/// A one-block kernel run `repeats` times per work-item: `instructions` per hardware thread
/// and `flops` per lane per execution.
struct Simulated {
    name: &'static str,
    sites: Vec<SimSite>,
    instructions: u32,
    flops: u32,
    repeats: u64,
    barriers: u32,
    slm_bytes: u64,
    pressure: RegisterPressure,
}

impl Simulated {
    fn gen(&self, simd: u32) -> GenKernelInfo {
        GenKernelInfo {
            simd,
            sites: self
                .sites
                .iter()
                .enumerate()
                .map(|(k, s)| GenSite {
                    block: 0,
                    space: s.space,
                    kind: s.kind,
                    bytes_per_lane: s.bytes,
                    loc: Some(SourceLoc { file: 0, line: 10 + k as u32, column: 5 }),
                    waits_for: s.waits_for.clone(),
                    same_address: Default::default(),
                    lane_strides: None,
                    sub_group_block: false,
                })
                .collect(),
            blocks: vec![GenBlock { instructions: self.instructions, flops: self.flops, ..Default::default() }],
            source_files: vec!["kernel.cl".into()],
            ..GenKernelInfo::default()
        }
    }

    fn info(&self, simd: u32) -> KernelInfo {
        KernelInfo {
            name: self.name.into(),
            barrier_count: self.barriers,
            register_pressure: Some(self.pressure),
            gen: Some(self.gen(simd)),
            ..KernelInfo::default()
        }
    }

    /// Counters of work-group `group` (summed over its hardware threads), as a
    /// Gen-instrumented build computes them.
    fn group_counters(&self, simd: u32, global: [usize; 3], local: [usize; 3], group: [usize; 3]) -> Vec<u64> {
        // The counter array of `gen_abi`: each site's words, then the one block's.
        let mut words = vec![0u64; self.sites.len() * SITE_WORDS + BLOCK_WORDS];
        let items: Vec<[u64; 3]> = work_items(local)
            .into_iter()
            .map(|l| [0, 1, 2].map(|d| (group[d] * local[d]) as u64 + l[d]))
            .filter(|g| (0..3).all(|d| g[d] < global[d] as u64))
            .collect();
        for thread in items.chunks(simd as usize) {
            let active = if thread.len() >= 32 { u32::MAX } else { (1u32 << thread.len()) - 1 };
            for (k, s) in self.sites.iter().enumerate() {
                let addrs: Vec<u64> = thread.iter().map(|&g| (s.addr)(g)).collect();
                let at = |field| site_word_index(self.sites.len(), k, field);
                if s.space == AddressSpace::Local {
                    let m = slm_message(&addrs, active, s.bytes, s.kind);
                    words[at(site_word::SLM_CYCLES)] += u64::from(m.cycles) * self.repeats;
                    words[at(site_word::SLM_CONFLICT_CYCLES)] += u64::from(m.conflict_cycles) * self.repeats;
                    let ways = &mut words[at(site_word::WORST_BANK_WAYS)];
                    *ways = (*ways).max(u64::from(m.worst_ways));
                } else {
                    words[at(site_word::L3_LINES)] +=
                        u64::from(l3_message(&addrs, active, s.bytes).lines) * self.repeats;
                }
            }
            // Messages and active lanes are the block's.
            let b = self.sites.len() * SITE_WORDS;
            words[b] += self.repeats;
            words[b + 1] += thread.len() as u64 * self.repeats;
        }
        words
    }

    /// Runs the model over the NDRange, feeding work-groups in `order` (linear ids; all
    /// of them in order when `None`).
    fn model(
        &self,
        config: &GenConfig,
        global: [usize; 3],
        local: [usize; 3],
        order: Option<Vec<usize>>,
    ) -> GenLaunchModel {
        let groups = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
        let wg: usize = local.iter().product();
        let probe = self.info(16);
        let simd = simd::choose(config, &probe, wg).unwrap().simd;
        let info = self.info(simd);
        let shape = GenShape {
            global_size: global,
            local_size: local,
            groups,
            simd,
            barriers: self.barriers,
            slm_bytes: self.slm_bytes,
            footprint_bytes: None,
            int_args: vec![],
        };
        let model = GenModel::new(config, &info, shape);
        let count = groups.iter().product::<usize>();
        let order = order.unwrap_or_else(|| (0..count).collect());
        for lin in order {
            let id = [lin % groups[0], lin / groups[0] % groups[1], lin / (groups[0] * groups[1])];
            model.gen_counters(id, 1, &self.group_counters(simd, global, local, id));
        }
        model.finish()
    }
}

fn site(space: AddressSpace, kind: AccessKind, bytes: u32, addr: impl Fn([u64; 3]) -> u64 + 'static) -> SimSite {
    SimSite { space, kind, bytes, addr: Box::new(addr), waits_for: Vec::new() }
}

const LIGHT: RegisterPressure = RegisterPressure {
    uniform_bytes: 128,
    varying_bytes: 64,
    divergent_loops: false,
    subgroup_functions: false,
    instructions: 20,
    private_array_bytes: 0,
};
const MEDIUM: RegisterPressure = RegisterPressure { varying_bytes: 200, ..LIGHT };

/// STREAM copy: b[i] = a[i] (float), one load and one store message per thread.
fn stream() -> Simulated {
    Simulated {
        name: "stream_copy",
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4, |g| 4 * g[0]),
            site(AddressSpace::Global, AccessKind::Store, 4, |g| (1 << 30) + 4 * g[0]),
        ],
        instructions: 8,
        flops: 0,
        repeats: 1,
        barriers: 0,
        slm_bytes: 0,
        pressure: MEDIUM,
    }
}

#[test]
fn stream_reaches_the_memory_roof_and_not_beyond() {
    for config in GenConfig::all() {
        let n = 1 << 22;
        let m = stream().model(&config, [n, 1, 1], [256, 1, 1], None);
        let bytes = 2.0 * 4.0 * n as f64;
        let bw = bytes / (m.time_ns as f64 * 1e-9);
        let roof = config.memory_bytes_per_sec();
        assert!(bw >= 0.8 * roof, "{}: {:.1} GB/s of {:.1}", config.key, bw / 1e9, roof / 1e9);
        assert!(bw <= roof * 1.0001, "{}: {:.1} GB/s above the roof {:.1}", config.key, bw / 1e9, roof / 1e9);
        assert_eq!(m.report.time.bound(), "memory");
    }
}

/// 128 dependent FMAs per work-item on a value loaded once.
fn fma_heavy() -> Simulated {
    Simulated { name: "fma", instructions: 132, flops: 256, ..stream() }
}

#[test]
fn fma_heavy_reaches_peak_flops_and_not_beyond() {
    for config in GenConfig::all() {
        let n = 1 << 22;
        let m = fma_heavy().model(&config, [n, 1, 1], [256, 1, 1], None);
        let flops = m.report.flops as f64;
        assert_eq!(flops, 256.0 * n as f64);
        let rate = flops / (m.time_ns as f64 * 1e-9);
        let peak = config.peak_flops();
        assert!(rate >= 0.8 * peak, "{}: {:.1} GFLOP/s of {:.1}", config.key, rate / 1e9, peak / 1e9);
        assert!(rate <= peak * 1.0001, "{}: {:.1} GFLOP/s above peak {:.1}", config.key, rate / 1e9, peak / 1e9);
        assert_eq!(m.report.time.bound(), "compute");
    }
    assert!((GenConfig::gen9_gt2().peak_flops() - 441.6e9).abs() < 1.0);
}

/// A kernel with a barrier: work-groups of 16 are bound by the 16 barrier registers (16 of
/// 56 threads busy), work-groups of 256 by threads (48 of 56).
#[test]
fn binding_occupancy_loses() {
    let config = GenConfig::gen9_gt2();
    let k = Simulated { barriers: 1, ..stream() };
    let n = 1 << 20;
    let small = k.model(&config, [n, 1, 1], [16, 1, 1], None);
    let large = k.model(&config, [n, 1, 1], [256, 1, 1], None);
    assert_eq!(small.report.occupancy.binding, Limit::Barriers);
    assert_eq!(large.report.occupancy.binding, Limit::Threads);
    assert!(small.report.occupancy.occupancy < large.report.occupancy.occupancy);
    assert!(small.time_ns as f64 > 1.5 * large.time_ns as f64, "binding {} ns vs {} ns", small.time_ns, large.time_ns);
    assert_eq!(small.report.barriers_per_group, 1.0);
}

/// The guide's "Work-Group Size Recommendations Summary": with barriers or SLM, small
/// work-groups bind occupancy (above); "if your kernel is not using local memory or
/// barriers, these restrictions do not apply, and work-group size of 32 work-items is
/// optimal for the most cases": without them a work-group of 32 is as fast as one of 256
/// (within 2%).
#[test]
fn work_groups_of_32_are_enough_without_barriers_or_slm() {
    let config = GenConfig::gen9_gt2();
    let n = 1 << 20;
    let free = stream();
    let (w32, w256) =
        (free.model(&config, [n, 1, 1], [32, 1, 1], None), free.model(&config, [n, 1, 1], [256, 1, 1], None));
    assert_eq!(w32.report.occupancy.binding, Limit::Threads);
    assert!((w32.time_ns as f64) <= 1.02 * w256.time_ns as f64, "32: {} ns, 256: {} ns", w32.time_ns, w256.time_ns);
    // With a barrier, a work-group of 32 is bound by the 16 barrier registers.
    let bound = Simulated { barriers: 1, ..stream() };
    assert_eq!(bound.model(&config, [n, 1, 1], [32, 1, 1], None).report.occupancy.binding, Limit::Barriers);
}

/// Row-major vs column-major work-groups over a 2-D int array: the guide's 1 vs 16 lines
/// per message become 16x the lines and (every line going to memory) 16x the time.
#[test]
fn column_access_loses_by_the_line_ratio() {
    let config = GenConfig::gen9_gt2();
    let width = 1024u64;
    let k = Simulated {
        name: "read2d",
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4, move |g| 4 * (g[0] + g[1] * width)),
            site(AddressSpace::Global, AccessKind::Store, 4, move |g| (1 << 30) + 4 * (g[0] + g[1] * width)),
        ],
        ..stream()
    };
    let global = [1024, 1024, 1];
    let row = k.model(&config, global, [16, 1, 1], None);
    let square = k.model(&config, global, [4, 4, 1], None);
    let column = k.model(&config, global, [1, 16, 1], None);
    let lines = |m: &GenLaunchModel| m.report.global.lines as f64;
    assert_eq!(lines(&column) / lines(&row), 16.0);
    assert_eq!(lines(&square) / lines(&row), 4.0);
    let r = column.time_ns as f64 / row.time_ns as f64;
    assert!((0.9 * 16.0..=16.0 * 1.0001).contains(&r), "column / row = {r}");
    assert!(square.time_ns > row.time_ns && column.time_ns > square.time_ns);
    // The advice in the guide's terms.
    let advice = column.report.sites[0].advice.clone().unwrap();
    assert!(advice.starts_with("column access: 16 lines per message; lanes of one row would read 1"), "{advice}");
    assert!(row.report.sites[0].advice.is_none());
    assert!(column.report.text().contains("kernel.cl:10: "), "{}", column.report.text());
    // Per line: the load (line 10) and the store (line 11) lose 15 of 16 lines each.
    let worst = &column.report.lines[0];
    assert_eq!((worst.loc.map(|l| l.line), worst.lines_per_message), (Some(10), 16.0));
    assert_eq!(worst.advice[0].text, advice);
    assert!(column.report.lines[1].advice[0]
        .text
        .starts_with("column access: 16 lines per message; lanes of one row would write 1"));
    let square_advice = square.report.sites[0].advice.clone().unwrap();
    assert_eq!(
        square_advice,
        "narrow work-group: 4 lines per message; lanes of one row would read 1 (this one is <4,4,1>)"
    );
    assert!(row.report.lines.iter().all(|l| l.advice.is_empty()), "{:?}", row.report.lines);
}

/// Coalesced a[gid] beats strided a[gid*4] and a[gid*16] by their lines.
#[test]
fn coalesced_beats_strided() {
    let config = GenConfig::gen9_gt2();
    let with_stride = |s: u64| Simulated {
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4, move |g| 4 * s * g[0]),
            site(AddressSpace::Global, AccessKind::Store, 4, |g| (1 << 32) + 4 * g[0]),
        ],
        ..stream()
    };
    let n = 1 << 20;
    let t: Vec<u64> =
        [1, 4, 16].iter().map(|&s| with_stride(s).model(&config, [n, 1, 1], [256, 1, 1], None).time_ns).collect();
    assert!(t[0] < t[1] && t[1] < t[2], "{t:?}");
    let m = with_stride(16).model(&config, [n, 1, 1], [256, 1, 1], None);
    let advice = m.report.sites[0].advice.clone().unwrap();
    assert!(
        advice.starts_with("strided access: every lane reads its own 64-byte line (16 lines per message"),
        "{advice}"
    );
    // The same advice on its source line, which ranks first.
    assert_eq!(m.report.lines[0].loc.map(|l| l.line), Some(10));
    assert_eq!(m.report.lines[0].advice[0].text, advice);
    let m = with_stride(1).model(&config, [n + 1, 1, 1], [256, 1, 1], None);
    assert!(m.report.sites[0].advice.is_none());
}

/// Sixteen loads per work-item, one SIMD16 thread on the device: independent they wait one
/// global latency, chained (each waits for the one before: `GenSite::waits_for`) sixteen.
#[test]
fn chained_messages_wait_for_each_other() {
    let config = GenConfig::gen9_gt2();
    let loads = |chained: bool| Simulated {
        name: "loads",
        sites: (0..16u64)
            .map(|k| {
                let mut s = site(AddressSpace::Global, AccessKind::Load, 4, move |g| 4 * (g[0] + 64 * k));
                if chained && k > 0 {
                    s.waits_for = vec![k as u32 - 1];
                }
                s
            })
            .collect(),
        ..stream()
    };
    let time = |chained: bool| loads(chained).model(&config, [16, 1, 1], [16, 1, 1], None);
    let (free, chain) = (time(false), time(true));
    let latency = f64::from(config.global_latency_clocks);
    let stall = |m: &GenLaunchModel| m.report.time.split.latency;
    assert!(stall(&chain) >= 16.0 * latency && stall(&free) < 2.0 * latency, "{} {}", stall(&chain), stall(&free));
    assert!(chain.time_ns > 8 * free.time_ns, "chained {} ns, independent {} ns", chain.time_ns, free.time_ns);
}

/// A column walk of a 16-wide local array: stride 16 puts every lane on one bank, stride 17
/// spreads them (guide, "__local Memory", cases 6 and 7).
#[test]
fn slm_stride_17_beats_16() {
    let config = GenConfig::gen9_gt2();
    let with_stride = |s: u64| Simulated {
        name: "slm",
        sites: vec![site(AddressSpace::Local, AccessKind::Load, 4, move |g| 4 * s * (g[0] % 256))],
        instructions: 4,
        flops: 0,
        repeats: 64,
        barriers: 1,
        slm_bytes: 17 * 256 * 4,
        pressure: MEDIUM,
    };
    let n = 1 << 18;
    let s16 = with_stride(16).model(&config, [n, 1, 1], [256, 1, 1], None);
    let s17 = with_stride(17).model(&config, [n, 1, 1], [256, 1, 1], None);
    assert!(s16.time_ns > 4 * s17.time_ns, "{}\n{}", s16.report.text(), s17.report.text());
    assert_eq!(s16.report.worst_bank_ways, 16);
    assert_eq!(s17.report.slm_conflict_cycles, 0);
    let advice = s16.report.sites[0].advice.clone().unwrap();
    assert!(advice.starts_with("SLM stride 16 puts 16 lanes on one bank: pad to 17"), "{advice}");
    assert!(s17.report.sites[0].advice.is_none());
    assert_eq!(s16.report.time.bound(), "SLM");
}

/// The model is deterministic: work-groups reported in any order give the same time and
/// report.
#[test]
fn deterministic_in_any_order() {
    let config = GenConfig::gen9_gt2();
    let k = Simulated { barriers: 1, ..fma_heavy() };
    let global = [1 << 14, 1, 1];
    let a = k.model(&config, global, [64, 1, 1], None);
    let reversed: Vec<usize> = (0..(1 << 14) / 64).rev().collect();
    let b = k.model(&config, global, [64, 1, 1], Some(reversed));
    assert_eq!(a.time_ns, b.time_ns);
    assert_eq!(a.report, b.report);
}

/// Work-groups reported from several threads at once (each thread adds to its own shard of
/// the totals, and runs of work-groups with the same counters are costed once) give the
/// same time and report as one thread reporting them in order, also when the runs are
/// broken by work-groups that count differently (the partial last group, a stride that
/// changes every few groups).
#[test]
fn deterministic_from_several_threads_and_runs() {
    let config = GenConfig::gen9_gt2();
    let k = Simulated {
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4, |g| 4 * g[0] * (1 + (g[0] / 192) % 3)),
            site(AddressSpace::Global, AccessKind::Store, 4, |g| 4 * g[0]),
        ],
        ..fma_heavy()
    };
    let global = [(1 << 14) + 40, 1, 1];
    let local = [64, 1, 1];
    let one = k.model(&config, global, local, None);
    let groups = global[0].div_ceil(local[0]);
    let probe = k.info(16);
    let simd = simd::choose(&config, &probe, 64).unwrap().simd;
    let shape = GenShape {
        global_size: global,
        local_size: local,
        groups: [groups, 1, 1],
        simd,
        barriers: k.barriers,
        slm_bytes: k.slm_bytes,
        footprint_bytes: None,
        int_args: vec![],
    };
    let model = GenModel::new(&config, &k.info(simd), shape);
    let counters: Vec<Vec<u64>> = (0..groups).map(|g| k.group_counters(simd, global, local, [g, 0, 0])).collect();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (model, counters) = (&model, &counters);
            scope.spawn(move || {
                // Thread t takes chunks t, t + 4, ... of 5 work-groups.
                for chunk in (t..groups.div_ceil(5)).step_by(4) {
                    for (lin, c) in counters.iter().enumerate().skip(chunk * 5).take(5) {
                        model.gen_counters([lin, 0, 0], 1, c);
                    }
                }
            });
        }
    });
    let many = model.finish();
    assert_eq!(one.time_ns, many.time_ns);
    assert_eq!(one.report, many.report);
}

/// Each configuration uses its own figures: the same work is faster on the bigger GPUs.
#[test]
fn configurations_differ() {
    let times: Vec<u64> =
        GenConfig::all().iter().map(|c| fma_heavy().model(c, [1 << 20, 1, 1], [256, 1, 1], None).time_ns).collect();
    // gen9-gt2 (24 EUs) > gen9-gt3 (48) > gen11-gt2 (64) > xe-lp (96).
    assert!(times.windows(2).all(|w| w[0] > w[1]), "{times:?}");
}

/// Each configuration's own figures reach occupancy and time: Gen11 and Xe-LP have 32
/// barrier registers per sub-slice (Gen9 16), Xe-LP 128 KB of SLM per sub-slice and a
/// 128 B/clock data port (Gen9 64 KB, 64 B/clock).
#[test]
fn configuration_figures_reach_occupancy_and_time() {
    let many = 1 << 20;
    // 16 work-items with barriers: one thread each, bound by the barrier registers.
    for (c, barriers) in [(GenConfig::gen9_gt2(), 16), (GenConfig::gen11_gt2(), 32), (GenConfig::xe_lp(), 32)] {
        let o = occupancy(&c, 16, 16, true, 0, many);
        assert_eq!((o.by_barriers, o.wgs, o.binding), (Some(barriers), barriers, Limit::Barriers), "{}", c.key);
    }
    // 32 KB of SLM per work-group: 2 per Gen9 sub-slice, 4 per Xe-LP one.
    for (c, wgs) in [(GenConfig::gen9_gt2(), 2), (GenConfig::xe_lp(), 4)] {
        let o = occupancy(&c, 64, 16, true, 32 << 10, many);
        assert_eq!((o.by_slm, o.binding), (Some(wgs), Limit::Slm), "{}", c.key);
    }
    // One work-group (with a barrier: it stays on one sub-slice) whose every lane reads its
    // own line: its L3 cycles are lines x 64 B over the sub-slice's data port, half as many
    // on Xe-LP.
    let scattered = Simulated {
        name: "scattered",
        sites: vec![site(AddressSpace::Global, AccessKind::Load, 4, |g| 64 * g[0])],
        instructions: 4,
        flops: 0,
        repeats: 1,
        barriers: 1,
        slm_bytes: 0,
        pressure: LIGHT,
    };
    let l3 = |c: &GenConfig| scattered.model(c, [256, 1, 1], [256, 1, 1], None).report.time.split.l3;
    let (gen9, xe) = (l3(&GenConfig::gen9_gt2()), l3(&GenConfig::xe_lp()));
    assert_eq!(gen9, 256.0, "256 lines at 64 B per clock");
    assert_eq!(xe, 128.0, "256 lines at 128 B per clock");
}

/// gen-model.md: "A kernel without barriers or SLM is spread over all sub-slices; with
/// either, a work-group stays on one sub-slice." One work-group of 256 work-items (16
/// SIMD16 threads) on gen9-gt2: with a barrier its threads share one sub-slice's 8 EUs and
/// data port; without, they use 16 of the device's 24 EUs and all 3 data ports.
#[test]
fn kernels_without_barriers_or_slm_spread_over_the_sub_slices() {
    let c = GenConfig::gen9_gt2();
    let kernel = |barriers: u32| Simulated {
        name: "one_group",
        sites: vec![site(AddressSpace::Global, AccessKind::Load, 4, |g| 64 * g[0])],
        instructions: 400,
        flops: 0,
        repeats: 1,
        barriers,
        slm_bytes: 0,
        pressure: RegisterPressure { varying_bytes: 128, ..LIGHT },
    };
    let split = |barriers: u32| kernel(barriers).model(&c, [256, 1, 1], [256, 1, 1], None).report.time.split;
    let (kept, spread) = (split(1), split(0));
    assert!((kept.compute / spread.compute - 2.0).abs() < 1e-9, "8 EUs vs 16: {kept:?} {spread:?}");
    assert!((kept.l3 / spread.l3 - 3.0).abs() < 1e-9, "one data port vs three: {kept:?} {spread:?}");
    // Many work-groups: the same throughput either way (the device's EUs are all busy).
    let big = |barriers: u32| kernel(barriers).model(&c, [256 * 240, 1, 1], [256, 1, 1], None).time_ns as f64;
    let (kept, spread) = (big(1), big(0));
    assert!(spread <= kept && spread > 0.8 * kept, "{kept} vs {spread}");
}

// ---------------------------------------------------------------------------------------
// The report.

#[test]
fn report_text_and_json() {
    let config = GenConfig::gen9_gt2();
    let k = Simulated {
        name: "two\"sites",
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4, |g| 4 * 16 * g[0]),
            site(AddressSpace::Local, AccessKind::Store, 4, |g| 4 * 16 * (g[0] % 64)),
            site(AddressSpace::Global, AccessKind::Atomic, 4, |_| 0),
        ],
        instructions: 10,
        flops: 2,
        repeats: 1,
        barriers: 1,
        slm_bytes: 4096,
        pressure: LIGHT,
    };
    let m = k.model(&config, [4096, 1, 1], [64, 1, 1], None);
    let r = &m.report;
    assert_eq!(r.simd, 32);
    assert_eq!(r.simd_reason, "register pressure fits the GRF at SIMD32");
    assert_eq!(r.threads_per_wg, 2);
    assert_eq!(r.atomic_messages, 4096 / 32);
    assert_eq!(r.flops, 2 * 4096);
    assert_eq!(r.lane_utilisation, 1.0);
    let text = r.text();
    for want in [
        "kernel `two\"sites`",
        "SIMD32 (register pressure fits the GRF at SIMD32)",
        "2 hardware thread(s) each",
        "occupancy",
        "bound by",
        "lines per message",
        "conflict cycles",
        "barriers: 1.0 per work-group",
        "cycles: compute",
        "worst source lines (",
        "kernel.cl:10: ",
        "SLM stride 16 puts 32 lanes on one bank: pad to 17",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let json = r.json();
    validate_json(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
    for want in [
        "\"kernel\":\"two\\\"sites\"",
        "\"simd\":32",
        "\"binding\":",
        "\"lines_per_message\":",
        "\"worst_bank_ways\":32",
        "\"source_files\":[\"kernel.cl\"]",
        "\"lines\":[{\"file\":0,\"line\":10,",
        "\"advice\":[{\"kind\":\"bank_conflict\",\"text\":\"SLM stride 16 puts 32 lanes on one bank: pad to 17\",",
        "\"time_ns\":",
    ] {
        assert!(json.contains(want), "missing {want} in {json}");
    }
    assert!(!json.contains(":-0"), "no negative zero: {json}");
}

/// A 1-D NDRange without barriers or SLM.
fn shape_1d(global: usize, local: usize, simd: u32) -> GenShape {
    GenShape {
        global_size: [global, 1, 1],
        local_size: [local, 1, 1],
        groups: [global.div_ceil(local), 1, 1],
        simd,
        barriers: 0,
        slm_bytes: 0,
        footprint_bytes: None,
        int_args: vec![],
    }
}

/// A kernel built without instrumentation gives a model that saw nothing: no time beyond
/// the minimum and an empty report, not a crash.
#[test]
fn no_counters_no_crash() {
    let config = GenConfig::gen9_gt2();
    let info = KernelInfo { name: "plain".into(), ..KernelInfo::default() };
    let m = GenModel::new(&config, &info, shape_1d(64, 64, 16));
    m.gen_counters([0, 0, 0], 1, &[]);
    let r = m.finish();
    assert_eq!(r.time_ns, 1);
    validate_json(&r.report.json()).unwrap();
}

/// A strict JSON syntax check (RFC 8259), enough to catch unescaped strings, trailing
/// commas and NaN.
fn validate_json(s: &str) -> Result<(), String> {
    fn ws(b: &[u8], i: &mut usize) {
        while *i < b.len() && matches!(b[*i], b' ' | b'\n' | b'\r' | b'\t') {
            *i += 1;
        }
    }
    fn value(b: &[u8], i: &mut usize) -> Result<(), String> {
        ws(b, i);
        let err = |i: usize, what: &str| Err(format!("{what} at byte {i}"));
        match b.get(*i) {
            Some(b'{') => {
                *i += 1;
                ws(b, i);
                if b.get(*i) == Some(&b'}') {
                    *i += 1;
                    return Ok(());
                }
                loop {
                    ws(b, i);
                    string(b, i)?;
                    ws(b, i);
                    if b.get(*i) != Some(&b':') {
                        return err(*i, "expected ':'");
                    }
                    *i += 1;
                    value(b, i)?;
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return Ok(());
                        }
                        _ => return err(*i, "expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                *i += 1;
                ws(b, i);
                if b.get(*i) == Some(&b']') {
                    *i += 1;
                    return Ok(());
                }
                loop {
                    value(b, i)?;
                    ws(b, i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b']') => {
                            *i += 1;
                            return Ok(());
                        }
                        _ => return err(*i, "expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => string(b, i),
            Some(b't') if b[*i..].starts_with(b"true") => {
                *i += 4;
                Ok(())
            }
            Some(b'f') if b[*i..].starts_with(b"false") => {
                *i += 5;
                Ok(())
            }
            Some(b'n') if b[*i..].starts_with(b"null") => {
                *i += 4;
                Ok(())
            }
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = *i;
                *i += 1;
                while *i < b.len() && matches!(b[*i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    *i += 1;
                }
                let t = std::str::from_utf8(&b[start..*i]).unwrap();
                t.parse::<f64>().map(|_| ()).map_err(|_| format!("bad number {t} at {start}"))
            }
            _ => err(*i, "expected a value"),
        }
    }
    fn string(b: &[u8], i: &mut usize) -> Result<(), String> {
        if b.get(*i) != Some(&b'"') {
            return Err(format!("expected a string at byte {i}"));
        }
        *i += 1;
        while let Some(&c) = b.get(*i) {
            match c {
                b'"' => {
                    *i += 1;
                    return Ok(());
                }
                b'\\' => match b.get(*i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => *i += 2,
                    Some(b'u') if b.len() >= *i + 6 && b[*i + 2..*i + 6].iter().all(u8::is_ascii_hexdigit) => *i += 6,
                    _ => return Err(format!("bad escape at byte {i}")),
                },
                c if c < 0x20 => return Err(format!("control character in a string at byte {i}")),
                _ => *i += 1,
            }
        }
        Err("unterminated string".into())
    }
    let b = s.as_bytes();
    let mut i = 0;
    value(b, &mut i)?;
    ws(b, &mut i);
    if i != b.len() {
        return Err(format!("trailing text at byte {i}"));
    }
    Ok(())
}

/// `GenShape::for_launch` from a real launch, the model as the launch's observer (counting
/// barrier regions per work-group), and barrier crossings in the report.
#[test]
fn model_observes_a_gen_launch() {
    use softcl_device_model::Launch;
    use std::sync::Arc;
    let dev = GenDevice::default();
    let source = "kernel void rev(global int *a, local int *tmp) {\n\
                    size_t l = get_local_id(0), n = get_local_size(0);\n\
                    tmp[l] = a[get_global_id(0)];\n\
                    barrier(CLK_LOCAL_MEM_FENCE);\n\
                    a[get_global_id(0)] = tmp[n - 1 - l];\n\
                  }";
    let program = compile_source(source, "-cl-std=CL3.0", dev.target()).unwrap();
    let native = program.codegen(dev.target()).unwrap();
    let kernel = native.kernel("rev").unwrap();
    let mut data: Vec<i32> = (0..1024).collect();
    let mut args = vec![0u8; kernel.info.arg_block_size];
    args[kernel.info.args[0].offset..][..8].copy_from_slice(&(data.as_mut_ptr() as u64).to_ne_bytes());
    let locals = [(1usize, 64 * 4usize)];
    // SAFETY: the block holds this kernel's arguments, its pointers into memory this test
    // keeps alive until the launch returns.
    let launch = unsafe { Launch::new(kernel, &args, &locals, 1, [0; 3], [1024, 1, 1], [64, 1, 1]) };
    let simd = softcl_device_model::gen::choose_simd(dev.config(), &kernel.info, 64).unwrap().0;
    let shape = GenShape::for_launch(&launch, simd);
    assert_eq!(
        (shape.groups, shape.slm_bytes, shape.barriers),
        ([16, 1, 1], 256 + kernel.info.static_local_mem_size, 1)
    );
    // The device runs its own model (of the instrumented build); the caller's observer
    // watches beside it and sees every work-group's counters. A model of the program's own
    // (scalar, uncounted) build has nothing to model.
    assert_eq!(GenModel::new(dev.config(), &kernel.info, shape.clone()).finish().launch_report().device_time_ns, None);
    let variant = kernel
        .gen_variant(softcl_compiler::GenBuild { simd, linear_lanes: false, row_width: 0 }, 0)
        .expect("a Gen build")
        .expect("vectorized");
    let model = Arc::new(GenModel::new(dev.config(), &variant.0.info, shape));
    let device_report = dev.launch_observed(&launch, Some(model.clone())).unwrap();
    assert_eq!(data[0], 63, "the kernel ran");
    assert!(device_report.device_time_ns.is_some_and(|t| t > 0), "the device reports a modelled time");
    let finished = model.finish();
    let lr = finished.launch_report();
    assert_eq!(lr.device_time_ns, Some(finished.time_ns));
    assert!(lr.report.unwrap().contains("kernel `rev`"));
    let r = finished.report;
    assert_eq!(r.groups, 16);
    assert_eq!(r.barriers_per_group, 1.0, "one barrier region per hardware thread, counted");
    assert_eq!(r.occupancy.slm_alloc, 1024);
}

/// `SOFTCL_GEN_REPORT=json:<file>`: one JSON array with the latest report of each kernel.
#[test]
fn json_sink_keeps_the_latest_report_per_kernel() {
    use softcl_device_model::gen::model::ReportSink;
    let config = GenConfig::gen9_gt2();
    let path = std::env::temp_dir().join(format!("softcl_gen_model_{}.json", std::process::id()));
    let sink = ReportSink::Json(path.clone());
    let a = stream().model(&config, [4096, 1, 1], [256, 1, 1], None).report;
    let b = fma_heavy().model(&config, [4096, 1, 1], [256, 1, 1], None).report;
    let a2 = stream().model(&config, [8192, 1, 1], [256, 1, 1], None).report;
    for r in [&a, &b, &a2] {
        sink.emit(r).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    validate_json(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(text.matches("\"kernel\":").count(), 2, "{text}");
    assert_eq!(text.matches("\"global_size\":[8192,1,1]").count(), 1, "the stream kernel's latest launch");
    assert_eq!(text.matches("\"global_size\":[4096,1,1]").count(), 1, "the fma kernel's only launch");
    let bad = ReportSink::Json("/nonexistent-dir/x.json".into());
    assert!(bad.emit(&a).unwrap_err().contains("cannot write"));
}

/// Lane utilisation per block: a branch taken by half the lanes of every thread.
#[test]
fn lane_utilisation_of_divergent_blocks() {
    let config = GenConfig::gen9_gt2();
    let gen = GenKernelInfo {
        simd: 16,
        sites: vec![],
        blocks: vec![
            GenBlock {
                instructions: 4,
                divergent_branch: true,
                loc: Some(SourceLoc { file: 0, line: 3, column: 1 }),
                ..Default::default()
            },
            GenBlock {
                instructions: 20,
                flops: 8,
                loc: Some(SourceLoc { file: 0, line: 4, column: 5 }),
                ..Default::default()
            },
        ],
        source_files: vec!["k.cl".into()],
        ..GenKernelInfo::default()
    };
    let info =
        KernelInfo { name: "half".into(), gen: Some(gen), register_pressure: Some(MEDIUM), ..KernelInfo::default() };
    let model = GenModel::new(&config, &info, shape_1d(1024, 64, 16));
    for g in 0..16 {
        // 4 threads: the branch block with all 16 lanes, the taken side with 8.
        model.gen_counters([g, 0, 0], 1, &[4, 64, 4, 32]);
    }
    let r = model.finish().report;
    assert_eq!((r.blocks[0].utilisation, r.blocks[1].utilisation), (1.0, 0.5));
    assert_eq!(r.blocks[1].idle_lanes, 16 * 4 * 8);
    assert_eq!(r.divergent_branches, 1);
    assert_eq!(r.lane_utilisation, 0.75);
    assert_eq!(r.flops, 8 * 16 * 32, "FLOPs of active lanes only");
    let text = r.text();
    assert!(text.contains("k.cl:4: 50% of lanes active in 64 executions"), "{text}");
    validate_json(&r.json()).unwrap();
    assert!(r.json().contains("\"utilisation\":0.5,\"divergent_branch\":false"));
}

/// The guide ("Optimizing Utilization of Execution Units"): "Launch enough work items to
/// keep EU threads busy, keep in mind that compiler may pack up to 32 work items per thread
/// (with SIMD-32)". A small NDRange at SIMD32 leaves half the EUs idle and takes longer than
/// at SIMD16; a large one runs as fast at either width.
#[test]
fn simd32_needs_enough_work_items() {
    let config = GenConfig::gen9_gt2();
    let at32 = Simulated { pressure: LIGHT, ..fma_heavy() };
    let at16 = Simulated { pressure: MEDIUM, ..fma_heavy() };
    // 3 work-groups of 128: one per sub-slice, 8 threads at SIMD16 (one per EU), 4 at SIMD32.
    let small = [384, 1, 1];
    let (s32, s16) = (at32.model(&config, small, [128, 1, 1], None), at16.model(&config, small, [128, 1, 1], None));
    assert_eq!((s32.report.simd, s16.report.simd), (32, 16));
    let r = s32.time_ns as f64 / s16.time_ns as f64;
    // Each SIMD32 thread issues twice the cycles of a SIMD16 one and half the EUs have a
    // thread: (2 x 260 issue + 300 load latency) / (260 + 300) clocks.
    assert!((1.4..=2.0).contains(&r), "small NDRange: SIMD32 / SIMD16 = {r}");
    let large = [1 << 20, 1, 1];
    let (l32, l16) = (at32.model(&config, large, [256, 1, 1], None), at16.model(&config, large, [256, 1, 1], None));
    let r = l32.time_ns as f64 / l16.time_ns as f64;
    assert!((0.95..=1.05).contains(&r), "large NDRange: SIMD32 / SIMD16 = {r}");
}
