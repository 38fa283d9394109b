//! What the Gen device's tests share: buffers of whole L3 lines, building a program for the
//! device and launching a kernel on it with buffer, image and `__local` arguments.

#![allow(dead_code)]

use softcl_compiler::gen_abi::{self, AccessKind, BlockCounters, GenKernelInfo, SiteCounters};
use softcl_compiler::{compile_source, AddressSpace, ArgKind, GenBuild, NativeKernel, NativeProgram};
use softcl_device_model::{Device, GenDevice, Launch, LaunchReport, Observer};
use std::sync::{Arc, Mutex};

/// 64-byte aligned ints (one L3 line each), so that line counts do not depend on where the
/// allocator put the buffer.
#[repr(C, align(64))]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Line([i32; 16]);

pub struct Buf(pub Vec<Line>);

impl Buf {
    pub fn new(ints: usize, f: impl Fn(usize) -> i32) -> Self {
        let mut v = vec![Line::default(); ints.div_ceil(16)];
        for i in 0..ints {
            v[i / 16].0[i % 16] = f(i);
        }
        Buf(v)
    }
    pub fn get(&self, i: usize) -> i32 {
        self.0[i / 16].0[i % 16]
    }
}

/// A kernel argument passed by its address: a buffer, or an image (its `ImageArg`).
pub trait ArgAddr {
    fn addr(&mut self) -> u64;
}

impl ArgAddr for Buf {
    fn addr(&mut self) -> u64 {
        self.0.as_mut_ptr() as u64
    }
}

pub fn build(dev: &GenDevice, source: &str) -> Arc<NativeProgram> {
    let program =
        compile_source(source, "-cl-std=CL1.2", dev.target()).unwrap_or_else(|e| panic!("build failed:\n{e}"));
    program.codegen(dev.target()).unwrap_or_else(|e| panic!("codegen failed:\n{e}"))
}

/// Launches `kernel` on the Gen device with buffer and image arguments `bufs` (in order) and `__local`
/// arguments `(index, bytes)`, watched by `observer`; returns the device's launch report.
pub fn launch_with(
    dev: &GenDevice,
    k: &NativeKernel,
    bufs: &mut [&mut dyn ArgAddr],
    locals: &[(usize, usize)],
    global: [usize; 3],
    local: [usize; 3],
    observer: Option<Arc<dyn Observer>>,
) -> LaunchReport {
    launch_with_ints(dev, k, bufs, &[], locals, global, local, observer)
}

/// [`launch_with`] with `int` arguments `(index, value)` too (the others are zero).
#[allow(clippy::too_many_arguments)]
pub fn launch_with_ints(
    dev: &GenDevice,
    k: &NativeKernel,
    bufs: &mut [&mut dyn ArgAddr],
    ints: &[(usize, i32)],
    locals: &[(usize, usize)],
    global: [usize; 3],
    local: [usize; 3],
    observer: Option<Arc<dyn Observer>>,
) -> LaunchReport {
    let mut block = vec![0u8; k.info.arg_block_size];
    for &(i, v) in ints {
        let at = k.info.args[i].offset;
        block[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }
    let mut bi = 0;
    for a in &k.info.args {
        if let ArgKind::Buffer { .. } | ArgKind::Image = a.kind {
            let addr = bufs[bi].addr();
            bi += 1;
            block[a.offset..a.offset + 8].copy_from_slice(&addr.to_ne_bytes());
        }
    }
    let work_dim = if global[2] > 1 {
        3
    } else if global[1] > 1 {
        2
    } else {
        1
    };
    // SAFETY: the block holds this kernel's arguments, its pointers into memory this test
    // keeps alive until the launch returns.
    let launch = unsafe { Launch::new(k, &block, locals, work_dim, [0; 3], global, local) };
    dev.launch_observed(&launch, observer).expect("launch")
}

/// Sums the counter arrays of every work-group (the worst bank ways as a maximum).
#[derive(Default)]
pub struct Sum {
    /// The runs of work-groups the executor reported: counters and how many work-groups.
    pub runs: Mutex<Vec<(Vec<u64>, u64)>>,
    pub groups: Mutex<u64>,
}

impl Observer for Sum {
    fn gen_counters(&self, _first: [usize; 3], groups: u64, counters: &[u64]) {
        self.runs.lock().unwrap().push((counters.to_vec(), groups));
        *self.groups.lock().unwrap() += groups;
    }
}

impl Sum {
    /// The launch's counter array: the runs summed as the device sums them.
    pub fn words(&self, info: &GenKernelInfo) -> Vec<u64> {
        let runs = self.runs.lock().unwrap();
        let mut sums = vec![0; info.counter_words()];
        for (words, times) in runs.iter() {
            assert_eq!(words.len(), sums.len(), "one layout per launch");
            gen_abi::add_counters(&mut sums, words, *times, info.sites.len());
        }
        sums
    }
    pub fn site(&self, info: &GenKernelInfo, k: usize) -> SiteCounters {
        assert!(k < info.sites.len());
        info.site_counters(&self.words(info), k)
    }
    pub fn block(&self, info: &GenKernelInfo, k: usize) -> BlockCounters {
        info.block_counters(&self.words(info), k)
    }
}

/// Runs `kernel` with buffer and image arguments `bufs` on the Gen device at SIMD16, vectorized;
/// returns the summed counters, the kernel's Gen description and the report.
pub fn run_simd16(
    dev: &GenDevice,
    program: &NativeProgram,
    kernel: &str,
    bufs: &mut [&mut dyn ArgAddr],
    global: [usize; 3],
    local: [usize; 3],
) -> (Arc<Sum>, GenKernelInfo, String) {
    let k = program.kernel(kernel).expect("kernel exists");
    let sum = Arc::new(Sum::default());
    let report = launch_with(dev, k, bufs, &[], global, local, Some(sum.clone())).report.unwrap_or_default();
    let simd = 16;
    // A one-row work-group runs the row variant whatever its width (its tail packet masked).
    let linear = local[1] * local[2] > 1 && !local[0].is_multiple_of(simd);
    let info = k
        .gen_variant(GenBuild { simd: simd as u32, linear_lanes: linear, row_width: 0 }, 0)
        .expect("a Gen build")
        .expect("vectorized at SIMD16")
        .0
        .info
        .gen
        .expect("instrumented");
    assert!(report.contains("SIMD16") && report.contains("vectorized"), "{report}");
    (sum, info, report)
}

/// The one site of `kind` in `space`.
pub fn site_of(info: &GenKernelInfo, space: AddressSpace, kind: AccessKind) -> usize {
    let found: Vec<usize> =
        (0..info.sites.len()).filter(|&k| info.sites[k].space == space && info.sites[k].kind == kind).collect();
    assert_eq!(found.len(), 1, "sites {:?}", info.sites);
    found[0]
}
