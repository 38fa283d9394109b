//! The modelled Intel Gen GPU device.
//!
//! Results are computed on the host (its [`Target`] is the host CPU), but work-groups run the
//! way the GPU runs them: each work-group as `ceil(size / simd)` SIMD-width hardware threads,
//! region by region between barriers, with [`Observer`] hooks around work-groups and thread
//! regions where the performance model plugs in. The description is what a real Gen9 GT2
//! reports through clinfo (NEO), except for what SoftCL does not implement yet.
//!
//! Withheld until implemented (a real Gen9 has them; advertising them would let applications
//! build code that then fails or computes wrongly):
//! - fp16 (`cl_khr_fp16`, half widths 8): widths are reported as 0, as the specification
//!   requires for unsupported types (fp64 is reported where the hardware has it: Gen9, not
//!   Gen11 or Xe-LP, from `GenConfig::fp64_rate`);
//! - `cl_khr_subgroups` (independent forward progress of sub-groups; OpenCL 3.0's
//!   sub-groups and Intel's, of sizes 8, 16 and 32, are offered);
//! - correctly rounded fp32 divide/sqrt.
//!
//! Images (NEO's Gen9 limits), out-of-order queues, 64-bit and device-scope atomics, the
//! generic address space and program-scope variables are offered as on the CPU device.

pub mod config;
pub mod html;
pub mod lines;
pub mod model;
mod threads;

pub use config::{GenConfig, SlmAllocRule};

use crate::common;
use crate::cpu::host;
use crate::exec::{self, Executor, Limits, NdRange, Schedule};
use crate::features;
use crate::info::*;
use crate::launch::{Launch, LaunchError, LaunchReport};
use crate::observer::Observer;
use crate::pick::{pick_local_size, PickParams};
use crate::Device;
use softcl_compiler::{GenBuild, KernelInfo, Target};
use std::sync::Arc;

/// NEO's CL_DEVICE_MAX_MEM_ALLOC_SIZE on Gen9: 4 GiB minus 8 KiB.
const NEO_MAX_ALLOC: u64 = (4 << 30) - (8 << 10);

#[derive(Debug)]
pub struct GenDevice {
    config: GenConfig,
    info: DeviceInfo,
    target: Target,
    executor: Executor,
    /// Where the model's reports go; `None`: `SOFTCL_GEN_REPORT` at each launch.
    report_sink: Option<model::ReportSink>,
    /// Hardware threads that are whole rows run the rows variant (`threads`); off, the
    /// linear-lanes variant runs them (the same counts, more slowly: the tests compare).
    row_variants: bool,
    /// Kernels whose launch could not be modelled and that stderr was told of (once each).
    unmodelled_told: parking_lot::Mutex<std::collections::HashSet<String>>,
}

impl GenDevice {
    /// The device modelling `config`.
    pub fn new(config: GenConfig) -> Self {
        let info = gen_device_info(&config);
        // Kernels compile scalar at build time, with line tables for the model's per-line
        // report; each launch runs a SIMD-width build with counters, compiled lazily
        // (`threads`).
        let target = Target { line_tables: true, gen: Some(GenBuild::default()), ..common::target_for(&info) };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            config,
            info,
            target,
            executor: Executor::new(threads, "gen"),
            report_sink: None,
            row_variants: true,
            unmodelled_told: Default::default(),
        }
    }

    /// This device sending the model's reports to `sink` instead of where
    /// `SOFTCL_GEN_REPORT` says (tests running in parallel; tools).
    pub fn with_report_sink(mut self, sink: model::ReportSink) -> Self {
        self.report_sink = Some(sink);
        self
    }

    /// This device running hardware threads of whole rows with the rows variant (`true`, the
    /// default) or with the linear-lanes variant, as any other thread spanning rows.
    pub fn with_row_variants(mut self, on: bool) -> Self {
        self.row_variants = on;
        self
    }

    /// The kernels with a launch this device could not model, in no order.
    pub fn unmodelled_kernels(&self) -> Vec<String> {
        self.unmodelled_told.lock().iter().cloned().collect()
    }

    /// A launch of `kernel` was not modelled (`why`): its profiling times are the host's.
    /// Never silent: stderr is told once per kernel even without `SOFTCL_GEN_REPORT` (the
    /// text report, `reported`, already says it at every launch).
    fn tell_unmodelled(&self, kernel: &str, why: &str, reported: bool) {
        if self.unmodelled_told.lock().insert(kernel.to_string()) && !reported {
            eprintln!(
                "SoftCL: the Gen model could not model kernel `{kernel}` ({why}); its profiling times \
                 are the host's, not modelled ones"
            );
        }
    }

    /// The device for the configuration chosen by `SOFTCL_GEN_CONFIG` (default gen9-gt2). An
    /// unknown name falls back to the default with a warning on stderr.
    pub fn from_env() -> Self {
        let config = GenConfig::from_env().unwrap_or_else(|e| {
            eprintln!("SoftCL: {e}; using {}", GenConfig::default().key);
            GenConfig::default()
        });
        Self::new(config)
    }

    pub fn config(&self) -> &GenConfig {
        &self.config
    }

    /// [`Device::launch`] with an observer (the performance model, a checker) watching.
    pub fn launch_observed(
        &self,
        launch: &Launch<'_>,
        observer: Option<Arc<dyn Observer>>,
    ) -> Result<LaunchReport, LaunchError> {
        let info = &launch.kernel.info;
        let limits = Limits {
            max_work_group_size: self.info.max_work_group_size,
            local_mem_size: self.info.local_mem_size,
            printf_buffer_size: self.info.printf_buffer_size,
        };
        let range = NdRange::new(launch.work_dim, launch.global_offset, launch.global_size, launch.local_size)?;
        let choice =
            model::simd::choose(&self.config, info, range.enqueued_group_size()).map_err(LaunchError::Invalid)?;
        let (simd, why) = (choice.simd, choice.rule.text());
        // Work-group sizes along dimension 0: the enqueued one and a partial last one.
        let rem = range.global[0] % range.local[0];
        let x_sizes: Vec<usize> = [range.local[0], rem].into_iter().filter(|&x| x > 0).collect();
        let rem = range.global[1] % range.local[1];
        let y_sizes: Vec<usize> = [range.local[1], rem].into_iter().filter(|&y| y > 0).collect();
        let one_row = range.local[1] * range.local[2] == 1;
        let items = range.global.iter().map(|&n| n as u64).product();
        let (kernel, how) =
            threads::GenThreads::new(launch.kernel, items, simd, &x_sizes, &y_sizes, one_row, self.row_variants);
        let builds = kernel.builds();
        // The performance model watches every launch (its counters come from the
        // instrumented build; a kernel left scalar and uncounted is not modelled: the report
        // says why and profiling END - START is the host's time), next to the caller's
        // observer if there is one.
        let sink = self.report_sink.clone().unwrap_or_else(model::ReportSink::from_env);
        let mut model = model::GenModel::new(
            &self.config,
            exec::GroupKernel::info(&kernel),
            model::GenShape::for_launch(launch, simd),
        )
        .with_choice(choice, info.register_pressure)
        .with_not_modelled(&how);
        // The shape advice prices the launch again in other shapes: only for a report.
        if sink != model::ReportSink::Off {
            model = model.with_shape_advice();
        }
        let model = Arc::new(model);
        let watcher: Arc<dyn Observer> = match observer {
            Some(other) => Arc::new(Both(model.clone(), other)),
            None => model.clone(),
        };
        let choose = |_: &NdRange| Ok((Schedule::Simd(simd), ()));
        let started = std::time::Instant::now();
        let (range, ()) =
            common::run_launch_with(&self.executor, launch, Arc::new(kernel), choose, Some(watcher), limits)?;
        // What decides when a variant's quick tier is compiled again at the default level.
        let ran = started.elapsed();
        for build in builds {
            launch.kernel.gen_ran(build, ran);
        }
        let modelled = model.finish();
        let simd64 = u64::from(simd);
        let threads_per_wg = (range.enqueued_group_size() as u64).div_ceil(simd64);
        let hw_threads = range.sum_over_groups(|n| n.div_ceil(simd64));
        let report = format!(
            "kernel {}: SIMD{simd} ({why}), {how}; {threads_per_wg} hardware threads per work-group of {}; \
             {} work-groups; {hw_threads} hardware threads launched",
            info.name,
            range.enqueued_group_size(),
            range.group_count,
        );
        if sink == model::ReportSink::Text {
            eprintln!("SoftCL report: {report}");
        }
        if let Err(e) = sink.emit(&modelled.report) {
            eprintln!("SoftCL: the Gen report of kernel {} could not be written: {e}", info.name);
        }
        if let Some(why) = &modelled.report.not_modelled {
            self.tell_unmodelled(&info.name, why, sink == model::ReportSink::Text);
        }
        Ok(LaunchReport { device_time_ns: modelled.device_time_ns(), report: Some(report) })
    }
}

/// Two observers watching one launch (the performance model and the caller's).
struct Both(Arc<dyn Observer>, Arc<dyn Observer>);

impl Observer for Both {
    fn kernel_begin(&self, kernel: &str, global_size: [usize; 3], local_size: [usize; 3]) {
        self.0.kernel_begin(kernel, global_size, local_size);
        self.1.kernel_begin(kernel, global_size, local_size);
    }
    fn kernel_end(&self, kernel: &str) {
        self.0.kernel_end(kernel);
        self.1.kernel_end(kernel);
    }
    fn work_group_begin(&self, group_id: [usize; 3]) {
        self.0.work_group_begin(group_id);
        self.1.work_group_begin(group_id);
    }
    fn work_group_end(&self, group_id: [usize; 3]) {
        self.0.work_group_end(group_id);
        self.1.work_group_end(group_id);
    }
    fn thread_region(&self, group_id: [usize; 3], first: u32, lanes: u32, barrier: u32) {
        self.0.thread_region(group_id, first, lanes, barrier);
        self.1.thread_region(group_id, first, lanes, barrier);
    }
    fn wants_final_regions(&self) -> bool {
        self.0.wants_final_regions() || self.1.wants_final_regions()
    }
    fn gen_counters(&self, first_group: [usize; 3], groups: u64, counters: &[u64]) {
        self.0.gen_counters(first_group, groups, counters);
        self.1.gen_counters(first_group, groups, counters);
    }
    fn gen_hot_addresses(&self, summary: &[u64]) {
        self.0.gen_hot_addresses(summary);
        self.1.gen_hot_addresses(summary);
    }
}

impl Default for GenDevice {
    fn default() -> Self {
        Self::new(GenConfig::default())
    }
}

impl Device for GenDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn target(&self) -> &Target {
        &self.target
    }
    fn launch(&self, launch: &Launch<'_>) -> Result<LaunchReport, LaunchError> {
        self.launch_observed(launch, None)
    }
    /// A launch runs the kernel at the SIMD width it chooses then: at most the widest.
    fn packet_width(&self, _kernel: &KernelInfo) -> usize {
        self.config.simd_widths.iter().copied().max().unwrap_or(1)
    }
    /// A sub-group is a hardware thread: the SIMD width the model picks for work-groups of
    /// this size, over consecutive linear local ids (the row and rows variants group the
    /// same work-items where they run).
    fn sub_groups(&self, kernel: &KernelInfo, local: [usize; 3]) -> (usize, usize) {
        let n = local[0] * local[1] * local[2];
        let w = model::simd::choose(&self.config, kernel, n).map_or(1, |c| c.simd as usize).max(1);
        (w.min(n), n.div_ceil(w))
    }
    fn pick_local_size(&self, kernel: &KernelInfo, work_dim: u32, global: [usize; 3], non_uniform: bool) -> [usize; 3] {
        let params = PickParams {
            max_work_group_size: self.kernel_work_group_size(kernel),
            max_work_item_sizes: self.info.max_work_item_sizes,
            multiple: self.config.preferred_work_group_multiple,
            target_groups: self.config.subslices() as usize,
        };
        pick_local_size(&params, kernel, work_dim, global, non_uniform)
    }
}

/// The SIMD width a kernel runs at, and which rule decided it (`model::simd`: a required
/// sub-group size; `SOFTCL_GEN_SIMD`; work-group size <= 8 forces SIMD8, <= 16 rules out
/// SIMD32; SIMD32 skipped for divergent loops, sub-group functions, very large kernels; else
/// SIMD32, 16, 8, the first whose register pressure fits the GRF).
pub fn choose_simd(
    config: &GenConfig,
    kernel: &KernelInfo,
    work_group_size: usize,
) -> Result<(u32, &'static str), LaunchError> {
    model::simd::choose(config, kernel, work_group_size).map(|c| (c.simd, c.rule.text())).map_err(LaunchError::Invalid)
}

/// What the modelled GPU reports through clinfo (see the module documentation for what is
/// withheld).
pub fn gen_device_info(c: &GenConfig) -> DeviceInfo {
    // Integrated GPU: global memory is the host's. NEO reports 80% of system memory and caps
    // a single allocation at 4 GiB - 8 KiB.
    let host_mem =
        std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| host::parse_meminfo_total(&t)).unwrap_or(1 << 30);
    let global_mem = host_mem / 5 * 4;
    let max_alloc = global_mem.min(NEO_MAX_ALLOC);
    let double = u32::from(c.fp64_rate.is_some());
    let widths = VectorWidths { char: 16, short: 8, int: 4, long: 1, half: 0, float: 1, double };
    let mut info = DeviceInfo {
        name: c.device_name.into(),
        vendor: "Intel(R) Corporation".into(),
        vendor_id: 0x8086,
        ils: common::spirv_ils(c.spirv_max_minor),

        max_compute_units: c.eus(),
        max_clock_frequency_mhz: c.max_clock_mhz,
        max_work_item_sizes: [c.max_work_group_size; 3],
        max_work_group_size: c.max_work_group_size,
        preferred_work_group_size_multiple: c.preferred_work_group_multiple,
        preferred_vector_widths: widths,
        native_vector_widths: widths,

        global_mem_size: global_mem,
        max_mem_alloc_size: max_alloc,
        global_mem_cacheline_size: c.cacheline_bytes,
        global_mem_cache_size: c.l3_bytes,
        max_constant_buffer_size: max_alloc,
        local_mem_kind: LocalMemKind::Local,
        local_mem_size: c.slm_max_per_work_group,
        max_parameter_size: 2048,
        printf_buffer_size: c.printf_buffer_bytes,
        profiling_timer_resolution_ns: c.timer_resolution_ns,
        double_fp_config: c.fp64_rate.map(|_| features::fp64_config()),
        // A sub-group is the hardware thread: its SIMD width's lanes.
        sub_group_sizes: c.simd_widths.to_vec(),
        max_num_sub_groups: (c.max_work_group_size / c.simd_widths.iter().copied().min().unwrap_or(8)) as u32,
        ..common::softcl_device_base(DeviceKind::Gpu)
    };
    // Fine-grain system SVM would be sound here too: kernels run on the host, and the Gen
    // model counts each memory message by the lines of its addresses, never by the buffer
    // they belong to (`footprint_bytes` is None), so a malloc'd pointer is costed like any
    // other and there is no memory checker to trip. It is not reported all the same: the
    // modelled part (Gen9 with Intel's NEO driver) offers coarse- and fine-grain buffer SVM
    // with atomics but not system SVM, and code tuned against the model must not come to
    // rely on what the real device lacks.
    info.svm.fine_grain_system = false;
    // Images, as /work/shared/reference/gen-model.md lists
    // NEO's Gen9 values: 2D 16384^2, 3D 16384x16384x2048, 16 samplers, 128 read and 128
    // write image args. Not listed there: read_write args 64, arrays of 2048, 1D buffer
    // images of 2^28 pixels, pitch and base address alignment 4 pixels (NEO's clinfo values
    // as remembered, not checked against a device).
    info.images = Some(ImageLimits {
        max_read_image_args: 128,
        max_write_image_args: 128,
        max_read_write_image_args: 64,
        image2d_max_width: 16384,
        image2d_max_height: 16384,
        image3d_max_width: 16384,
        image3d_max_height: 16384,
        image3d_max_depth: 2048,
        image_max_buffer_size: 1 << 28,
        image_max_array_size: 2048,
        max_samplers: 16,
        image_pitch_alignment: 4,
        image_base_address_alignment: 4,
    });
    features::derive_feature_lists(&mut info);
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use softcl_compiler::gen_abi::RegisterPressure;

    #[test]
    fn gen9_gt2_reports_the_clinfo_values() {
        let dev = GenDevice::default();
        let i = dev.info();
        assert_eq!(i.kind, DeviceKind::Gpu);
        assert_eq!(i.name, "Intel(R) Gen9 HD Graphics GT2 (SoftCL model)");
        assert!(i.name.contains("SoftCL model"));
        assert_eq!((i.vendor.as_str(), i.vendor_id), ("Intel(R) Corporation", 0x8086));
        assert_eq!(i.max_compute_units, 24);
        assert_eq!(i.max_clock_frequency_mhz, 1150);
        assert_eq!(i.max_work_group_size, 256);
        assert_eq!(i.max_work_item_sizes, [256; 3]);
        assert_eq!(i.preferred_work_group_size_multiple, 32);
        let w = i.preferred_vector_widths;
        assert_eq!((w.char, w.short, w.int, w.long, w.float), (16, 8, 4, 1, 1));
        assert_eq!((w.half, w.double), (0, 1), "fp16 withheld, fp64 as NEO reports it");
        assert_eq!(i.native_vector_widths, w);
        assert_eq!(i.address_bits, 64);
        assert_eq!(i.global_mem_cacheline_size, 64);
        assert_eq!(i.global_mem_cache_size, 768 << 10);
        assert_eq!(i.global_mem_cache_type, CacheType::ReadWrite);
        assert_eq!((i.local_mem_kind, i.local_mem_size), (LocalMemKind::Local, 65536));
        assert_eq!(i.min_data_type_align_size, 128);
        assert_eq!(i.mem_base_addr_align_bits, 1024);
        assert_eq!(i.profiling_timer_resolution_ns, 83);
        assert_eq!(i.printf_buffer_size, 4 << 20);
        assert_eq!(i.ils.iter().map(|v| v.version).collect::<Vec<_>>(), [(1, 0, 0), (1, 1, 0), (1, 2, 0), (1, 3, 0)]);
        assert!(i.max_mem_alloc_size <= i.global_mem_size);
        // Withheld until implemented.
        assert!(i.half_fp_config.is_none());
        assert_eq!(
            i.images.map(|l| (l.image2d_max_width, l.image3d_max_depth, l.max_samplers)),
            Some((16384, 2048, 16))
        );
        assert_eq!(i.double_fp_config, Some(features::fp64_config()));
        assert_eq!((i.sub_group_sizes.as_slice(), i.max_num_sub_groups), ([8, 16, 32].as_slice(), 32));
        assert_eq!(dev.config().simd_widths, [8, 16, 32]);
        assert_eq!(dev.target().cpu, None, "results are computed on the host");
    }

    #[test]
    fn other_configurations() {
        let gt3 = GenDevice::new(GenConfig::gen9_gt3());
        assert_eq!(gt3.info().max_compute_units, 48);
        assert_eq!(gt3.info().global_mem_cache_size, 1536 << 10);
        let xe = GenDevice::new(GenConfig::xe_lp());
        assert_eq!(xe.info().max_work_group_size, 512);
        assert_eq!(xe.info().preferred_work_group_size_multiple, 64);
        assert_eq!(xe.info().local_mem_size, 64 << 10);
    }

    #[test]
    fn simd_choice() {
        let c = GenConfig::default();
        let k = KernelInfo::default();
        assert_eq!(choose_simd(&c, &k, 1).unwrap().0, 8);
        assert_eq!(choose_simd(&c, &k, 8).unwrap().0, 8);
        assert_eq!(choose_simd(&c, &k, 9).unwrap().0, 16);
        assert_eq!(choose_simd(&c, &k, 16).unwrap().0, 16);
        assert_eq!(choose_simd(&c, &k, 256).unwrap().0, 16, "no register pressure: SIMD16");
        let light = KernelInfo {
            register_pressure: Some(RegisterPressure { uniform_bytes: 64, varying_bytes: 32, ..Default::default() }),
            ..KernelInfo::default()
        };
        assert_eq!(choose_simd(&c, &light, 256).unwrap(), (32, "register pressure fits the GRF at SIMD32"));
        assert_eq!(choose_simd(&c, &light, 16).unwrap().0, 16);
        let reqd = KernelInfo { reqd_sub_group_size: Some(32), ..KernelInfo::default() };
        assert_eq!(choose_simd(&c, &reqd, 8).unwrap(), (32, "required sub-group size"));
        let bad = KernelInfo { reqd_sub_group_size: Some(12), ..KernelInfo::default() };
        assert!(choose_simd(&c, &bad, 64).is_err());
    }

    #[test]
    fn simd_forced_by_the_knob() {
        use model::simd::{choose_forced, SimdRule};
        let c = GenConfig::default();
        let k = KernelInfo::default();
        for (v, wg) in [("8", 256), ("16", 3), ("32", 1), (" 32 ", 13)] {
            let ch = choose_forced(&c, &k, wg, Some(v)).unwrap();
            assert_eq!((ch.simd, ch.rule), (v.trim().parse().unwrap(), SimdRule::Forced), "{v} at {wg}");
        }
        assert_eq!(choose_forced(&c, &k, 3, Some("")).unwrap().simd, 8, "empty: the usual rules");
        assert!(choose_forced(&c, &k, 64, Some("4")).is_err());
        assert!(choose_forced(&c, &k, 64, Some("x")).is_err());
        let reqd = KernelInfo { reqd_sub_group_size: Some(16), ..KernelInfo::default() };
        assert_eq!(choose_forced(&c, &reqd, 64, Some("8")).unwrap().simd, 16, "a required size wins");
    }

    #[test]
    fn picks_multiples_of_32_up_to_256() {
        let dev = GenDevice::default();
        let k = KernelInfo::default();
        assert_eq!(dev.pick_local_size(&k, 1, [1 << 20, 1, 1], false), [256, 1, 1]);
        assert_eq!(dev.pick_local_size(&k, 1, [96, 1, 1], false), [32, 1, 1]);
        assert_eq!(dev.pick_local_size(&k, 2, [640, 480, 1], false), [160, 1, 1]);
    }
}
