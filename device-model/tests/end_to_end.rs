//! OpenCL C compiled by softcl_compiler and run on both devices.

use softcl_compiler::{compile_source, ArgKind, KernelInfo, NativeProgram};
use softcl_device_model::{CpuDevice, Device, GenConfig, GenDevice, Launch, LaunchError, LaunchReport};
use std::sync::Arc;

/// A kernel argument as the runtime would set it.
enum Arg {
    /// A buffer: its host address.
    Buffer(u64),
    Int(u32),
    /// A `__local` pointer of this many bytes.
    Local(usize),
}

/// Lays out the argument block the way `KernelInfo::args` says.
fn arg_block(info: &KernelInfo, args: &[Arg]) -> (Vec<u8>, Vec<(usize, usize)>) {
    assert_eq!(info.args.len(), args.len(), "argument count of {}", info.name);
    let mut block = vec![0u8; info.arg_block_size];
    let mut locals = Vec::new();
    for (i, (meta, arg)) in info.args.iter().zip(args).enumerate() {
        match (arg, &meta.kind) {
            (Arg::Buffer(address), ArgKind::Buffer { .. }) => {
                block[meta.offset..meta.offset + 8].copy_from_slice(&address.to_ne_bytes())
            }
            (Arg::Int(v), ArgKind::Value) => {
                assert_eq!(meta.size, 4);
                block[meta.offset..meta.offset + 4].copy_from_slice(&v.to_ne_bytes())
            }
            (Arg::Local(size), ArgKind::Local) => locals.push((i, *size)),
            (_, kind) => panic!("argument {i} of {} is {kind:?}", info.name),
        }
    }
    (block, locals)
}

fn build(dev: &dyn Device, source: &str) -> Arc<NativeProgram> {
    let program =
        compile_source(source, "-cl-std=CL3.0", dev.target()).unwrap_or_else(|e| panic!("build failed:\n{e}"));
    program.codegen(dev.target()).unwrap_or_else(|e| panic!("codegen failed:\n{e}"))
}

fn both_devices() -> Vec<Box<dyn Device>> {
    vec![Box::new(CpuDevice::new()), Box::new(GenDevice::default())]
}

#[allow(clippy::too_many_arguments)]
fn launch(
    dev: &dyn Device,
    program: &NativeProgram,
    kernel: &str,
    args: &[Arg],
    work_dim: u32,
    offset: [usize; 3],
    global: [usize; 3],
    local: Option<[usize; 3]>,
) -> Result<LaunchReport, LaunchError> {
    let kernel = program.kernel(kernel).expect("kernel exists");
    let (block, locals) = arg_block(&kernel.info, args);
    let local = local.unwrap_or_else(|| dev.pick_local_size(&kernel.info, work_dim, global, false));
    // SAFETY: the block holds this kernel's arguments, its pointers into memory this test
    // keeps alive until the launch returns.
    dev.launch(&unsafe { Launch::new(kernel, &block, &locals, work_dim, offset, global, local) })
}

const VADD: &str = r#"
kernel void vadd(global const float *a, global const float *b, global float *c, uint n) {
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
"#;

#[test]
fn vector_add_non_uniform_with_offset() {
    const OFFSET: usize = 16;
    const GLOBAL: usize = 1000; // 15 groups of 64 and one of 40
    const N: usize = OFFSET + GLOBAL + 8;
    for dev in both_devices() {
        let program = build(dev.as_ref(), VADD);
        let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..N).map(|i| (2 * i) as f32 + 0.5).collect();
        let mut c = vec![-1.0f32; N];
        let args = [
            Arg::Buffer(a.as_ptr() as u64),
            Arg::Buffer(b.as_ptr() as u64),
            Arg::Buffer(c.as_mut_ptr() as u64),
            Arg::Int(N as u32),
        ];
        let report = launch(dev.as_ref(), &program, "vadd", &args, 1, [OFFSET, 0, 0], [GLOBAL, 1, 1], Some([64, 1, 1]))
            .unwrap_or_else(|e| panic!("{}: {e:?}", dev.info().name));
        for (i, &x) in c.iter().enumerate() {
            let expected = if (OFFSET..OFFSET + GLOBAL).contains(&i) { a[i] + b[i] } else { -1.0 };
            assert_eq!(x, expected, "{}: c[{i}]", dev.info().name);
        }
        match dev.info().kind {
            softcl_device_model::DeviceKind::Cpu => assert!(report.device_time_ns.is_some()),
            softcl_device_model::DeviceKind::Gpu => {
                let text = report.report.expect("Gen report");
                // Little register pressure: SIMD32 (gen/model/simd.rs).
                assert!(text.contains("SIMD32"), "{text}");
                // 15 groups x 2 threads + 1 group of 40 x 2 threads.
                assert!(text.contains("32 hardware threads launched"), "{text}");
            }
        }
    }
}

#[test]
fn vector_add_with_picked_local_size_2d() {
    const W: usize = 96;
    const H: usize = 40;
    let source = r#"
kernel void vadd2(global const float *a, global const float *b, global float *c, uint w) {
    size_t i = get_global_id(1) * w + get_global_id(0);
    c[i] = a[i] + b[i];
}
"#;
    for dev in both_devices() {
        let program = build(dev.as_ref(), source);
        let a: Vec<f32> = (0..W * H).map(|i| i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..W * H).map(|i| 1.0 - i as f32).collect();
        let mut c = vec![0.0f32; W * H];
        let args = [
            Arg::Buffer(a.as_ptr() as u64),
            Arg::Buffer(b.as_ptr() as u64),
            Arg::Buffer(c.as_mut_ptr() as u64),
            Arg::Int(W as u32),
        ];
        launch(dev.as_ref(), &program, "vadd2", &args, 2, [0; 3], [W, H, 1], None).unwrap();
        for i in 0..W * H {
            assert_eq!(c[i], a[i] + b[i], "{}: c[{i}]", dev.info().name);
        }
    }
}

const REDUCE: &str = r#"
kernel void reduce(global const int *in, global int *out, local int *scratch) {
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}

kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce_static(global const int *in, global int *out) {
    local int tile[64];
    size_t lid = get_local_id(0);
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = 32; s > 0; s >>= 1) {
        if (lid < s)
            tile[lid] += tile[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = tile[0];
}
"#;

#[test]
fn local_reduction_with_barriers() {
    for dev in both_devices() {
        let program = build(dev.as_ref(), REDUCE);
        for (kernel, local) in [("reduce", 128usize), ("reduce", 16), ("reduce_static", 64)] {
            let groups = 37;
            let n = groups * local;
            let input: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 101 - 50).collect();
            let mut out = vec![0i32; groups];
            let mut args = vec![Arg::Buffer(input.as_ptr() as u64), Arg::Buffer(out.as_mut_ptr() as u64)];
            if kernel == "reduce" {
                args.push(Arg::Local(local * 4));
            }
            launch(dev.as_ref(), &program, kernel, &args, 1, [0; 3], [n, 1, 1], Some([local, 1, 1]))
                .unwrap_or_else(|e| panic!("{} {kernel}/{local}: {e:?}", dev.info().name));
            for (g, &sum) in out.iter().enumerate() {
                let expected: i32 = input[g * local..(g + 1) * local].iter().sum();
                assert_eq!(sum, expected, "{} {kernel}/{local}: group {g}", dev.info().name);
            }
        }
        let info = &program.kernel("reduce").unwrap().info;
        assert!(info.barrier_count >= 2, "barrier_count {}", info.barrier_count);
    }
}

#[test]
fn too_much_local_memory_is_out_of_resources() {
    for dev in both_devices() {
        let program = build(dev.as_ref(), REDUCE);
        let input = vec![0i32; 64];
        let mut out = vec![0i32; 1];
        let args = [
            Arg::Buffer(input.as_ptr() as u64),
            Arg::Buffer(out.as_mut_ptr() as u64),
            Arg::Local(dev.info().local_mem_size as usize + 4),
        ];
        let r = launch(dev.as_ref(), &program, "reduce", &args, 1, [0; 3], [64, 1, 1], Some([64, 1, 1]));
        assert!(matches!(r, Err(LaunchError::OutOfResources(_))), "{r:?}");
    }
}

#[test]
fn unsupported_features_do_not_build() {
    for dev in both_devices() {
        let source = "kernel void k(global half *d) { d[0] = 1.0h; }";
        let error = compile_source(source, "-cl-std=CL3.0", dev.target()).expect_err("fp16 is not supported");
        assert!(error.log.contains("cl_khr_fp16"), "{}: {}", dev.info().name, error.log);
    }
}

/// Doubles build on the CPU and Gen9, and not on the Gen configurations without fp64.
#[test]
fn fp64_builds_only_where_advertised() {
    let source = "kernel void k(global double *d) { d[0] = 1.0; }";
    for dev in both_devices() {
        compile_source(source, "-cl-std=CL3.0", dev.target()).unwrap_or_else(|e| panic!("{}", e.log));
    }
    for config in [GenConfig::gen11_gt2(), GenConfig::xe_lp()] {
        let dev = GenDevice::new(config);
        let error = compile_source(source, "-cl-std=CL3.0", dev.target()).expect_err("no fp64 hardware");
        assert!(error.log.contains("fp64"), "{}: {}", dev.info().name, error.log);
    }
}

#[derive(Default)]
struct Counts {
    kernels: std::sync::atomic::AtomicU32,
    groups: std::sync::atomic::AtomicU32,
    ends: std::sync::atomic::AtomicU32,
    lanes: std::sync::atomic::AtomicU32,
}

impl softcl_device_model::Observer for Counts {
    fn kernel_begin(&self, _: &str, _: [usize; 3], _: [usize; 3]) {
        self.kernels.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn work_group_begin(&self, _: [usize; 3]) {
        self.groups.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn work_group_end(&self, _: [usize; 3]) {
        self.ends.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn thread_region(&self, _: [usize; 3], _: u32, lanes: u32, barrier: u32) {
        if barrier == 0 {
            self.lanes.fetch_add(lanes, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[test]
fn gen_observer_sees_the_launch() {
    let dev = GenDevice::default();
    let program = build(&dev, VADD);
    let kernel = program.kernel("vadd").unwrap();
    let (a, b, mut c) = (vec![1.0f32; 300], vec![2.0f32; 300], vec![0.0f32; 300]);
    let args = [
        Arg::Buffer(a.as_ptr() as u64),
        Arg::Buffer(b.as_ptr() as u64),
        Arg::Buffer(c.as_mut_ptr() as u64),
        Arg::Int(300),
    ];
    let (block, locals) = arg_block(&kernel.info, &args);
    let counts = Arc::new(Counts::default());
    // SAFETY: the block holds this kernel's arguments, its pointers into memory this test
    // keeps alive until the launch returns.
    let launch = unsafe { Launch::new(kernel, &block, &locals, 1, [0; 3], [300, 1, 1], [64, 1, 1]) };
    dev.launch_observed(&launch, Some(counts.clone())).unwrap();
    assert!(c.iter().all(|&x| x == 3.0));
    let get = |a: &std::sync::atomic::AtomicU32| a.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(get(&counts.kernels), 1);
    assert_eq!((get(&counts.groups), get(&counts.ends)), (5, 5));
    // Every work-item finished exactly once, in SIMD slices.
    assert_eq!(get(&counts.lanes), 300);
}
