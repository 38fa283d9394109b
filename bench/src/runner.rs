//! Running the cases and the launch-cost probes on one OpenCL device, through the loader.

use std::ptr;
use std::time::Instant;

use softcl_conformance::{
    self as cl, clEnqueueNDRangeKernel, clFinish, cl_command_queue, cl_device_id, cl_platform_id, cl_uint, Kernel, Mem,
    Queue, TestDevice, TestEnv, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE,
};

use crate::cases::{Arg, Case, Data, Scalar};

/// One device the benchmark runs on.
pub struct BenchDevice {
    /// The column label: "SoftCL", "PoCL" or the platform name.
    pub label: String,
    pub platform: String,
    pub name: String,
    pub env: TestEnv,
    /// A second in-order queue without profiling, for the launch probes.
    pub plain_queue: Queue,
}

/// The short label of a platform.
fn label_of(platform: &str) -> String {
    if platform.contains("SoftCL") {
        "SoftCL".into()
    } else if platform == "Portable Computing Language" {
        "PoCL".into()
    } else {
        platform.into()
    }
}

/// The devices matching the selection: platforms whose name contains `platform` (any when
/// `None`; case-insensitive), and devices of `kind` ("cpu", "gpu", "all").
pub fn select_devices(platform: Option<&str>, kind: &str) -> Result<Vec<BenchDevice>, String> {
    let ty = match kind {
        "cpu" => CL_DEVICE_TYPE_CPU,
        "gpu" => CL_DEVICE_TYPE_GPU,
        "all" => CL_DEVICE_TYPE_ALL,
        other => return Err(format!("--device {other}: expected cpu, gpu or all")),
    };
    let all: Vec<cl_platform_id> = cl::platforms();
    let mut names = Vec::new();
    let mut out = Vec::new();
    for p in all {
        let pname = cl::platform_info_string(p, cl::CL_PLATFORM_NAME);
        names.push(pname.clone());
        if let Some(want) = platform {
            if !pname.to_lowercase().contains(&want.to_lowercase()) {
                continue;
            }
        }
        for id in cl::devices_of_type(p, ty) {
            out.push(open_device(p, &pname, id));
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no {kind} device on {}; the loader reports platforms {names:?} (OCL_ICD_VENDORS={:?})",
            platform.map_or("any platform".to_string(), |p| format!("a platform matching {p:?}")),
            std::env::var("OCL_ICD_VENDORS").unwrap_or_default()
        ));
    }
    Ok(out)
}

fn open_device(platform: cl_platform_id, pname: &str, id: cl_device_id) -> BenchDevice {
    let dtype: cl::cl_device_type = cl::device_info(id, cl::CL_DEVICE_TYPE);
    let kind = if dtype & CL_DEVICE_TYPE_GPU != 0 { cl::DeviceKind::Gpu } else { cl::DeviceKind::Cpu };
    let name = cl::device_info_string(id, cl::CL_DEVICE_NAME);
    let dev = TestDevice { kind, id, platform, name: name.clone() };
    let env = dev.env();
    let plain_queue = cl::queue_for(&env.context, id, 0);
    let mut label = label_of(pname);
    if kind == cl::DeviceKind::Gpu {
        label.push_str(" GPU");
    }
    BenchDevice { label, platform: pname.to_string(), name, env, plain_queue }
}

/// What one case measured on one device.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Best kernel time from the profiling events (END - START), milliseconds.
    pub kernel_ms: f64,
    /// Best wall time of enqueue .. clFinish, milliseconds.
    pub wall_ms: f64,
    /// Median kernel time, milliseconds.
    pub median_ms: f64,
    /// What the check said.
    pub note: String,
}

/// A case built on one device with its buffers and arguments set, ready to launch.
pub struct Prepared<'a> {
    dev: &'a BenchDevice,
    kernel: Kernel,
    /// Every buffer, in argument order.
    buffers: Vec<Mem>,
    /// (index into `buffers`, bytes) of what the check reads back.
    read_back: Vec<(usize, usize)>,
    /// (index into `buffers`, data) restored before every launch.
    resets: Vec<(usize, Data)>,
    kernel_ns: Vec<u64>,
    wall_ms: Vec<f64>,
}

impl<'a> Prepared<'a> {
    /// Builds `case` on `dev`, creates its buffers and sets its arguments.
    pub fn new(dev: &'a BenchDevice, case: &Case) -> Result<Prepared<'a>, String> {
        let env = &dev.env;
        let program = env.try_build(&case.source, "").map_err(|e| e.to_string())?;
        let kernel = cl::create_kernel(&program, case.kernel).map_err(|e| e.to_string())?;
        let mut p = Prepared {
            dev,
            kernel,
            buffers: Vec::new(),
            read_back: Vec::new(),
            resets: Vec::new(),
            kernel_ns: Vec::new(),
            wall_ms: Vec::new(),
        };
        for (i, arg) in case.args.iter().enumerate() {
            let i = i as cl_uint;
            let k = &p.kernel;
            match arg {
                Arg::Scalar(Scalar::I32(v)) => k.set_arg(i, v),
                Arg::Scalar(Scalar::U32(v)) => k.set_arg(i, v),
                Arg::Scalar(Scalar::F32(v)) => k.set_arg(i, v),
                Arg::Scalar(Scalar::F32x4(v)) => k.set_arg(i, v),
                Arg::Local(bytes) => k.set_local(i, *bytes),
                Arg::Input(data) => p.add_buffer(i, env.buffer_from(CL_MEM_READ_ONLY, data.bytes())),
                Arg::Output(bytes) => {
                    p.read_back.push((p.buffers.len(), *bytes));
                    p.add_buffer(i, env.buffer_from(CL_MEM_READ_WRITE, &vec![0u8; *bytes]));
                }
                Arg::Reset(data) => {
                    p.read_back.push((p.buffers.len(), data.bytes().len()));
                    p.resets.push((p.buffers.len(), data.clone()));
                    p.add_buffer(i, env.buffer_from(CL_MEM_READ_WRITE, data.bytes()));
                }
            }
        }
        Ok(p)
    }

    fn add_buffer(&mut self, index: cl_uint, mem: Mem) {
        self.kernel.set_mem(index, &mem);
        self.buffers.push(mem);
    }

    /// One launch: restores the `Reset` buffers, then enqueues the kernel and waits for it;
    /// records its profiled and wall times when `timed` (not for the warm-up).
    pub fn launch(&mut self, case: &Case, timed: bool) -> Result<(), String> {
        let env = &self.dev.env;
        for (b, data) in &self.resets {
            env.write(&self.buffers[*b], data.bytes());
        }
        env.finish();
        let start = Instant::now();
        let event = cl::try_enqueue_nd(env.q(), &self.kernel, None, &case.global, case.local.as_deref(), &[])
            .map_err(|e| e.to_string())?;
        env.finish();
        let elapsed = start.elapsed().as_secs_f64() * 1e3;
        let [_, _, s, e] = event.profile();
        if timed {
            self.kernel_ns.push(e.saturating_sub(s));
            self.wall_ms.push(elapsed);
        }
        Ok(())
    }

    /// Reads the outputs back and checks them; the best and median times of the timed
    /// launches. `Err` on a wrong result.
    pub fn finish(mut self, case: &Case) -> Result<Measured, String> {
        let env = &self.dev.env;
        let outputs: Vec<Vec<u8>> =
            self.read_back.iter().map(|&(b, bytes)| env.read::<u8>(&self.buffers[b], bytes)).collect();
        let note = (case.check)(&outputs).map_err(|e| format!("WRONG RESULT: {e}"))?;
        if self.kernel_ns.is_empty() {
            return Err("no timed launch".into());
        }
        self.kernel_ns.sort_unstable();
        Ok(Measured {
            kernel_ms: self.kernel_ns[0] as f64 / 1e6,
            median_ms: self.kernel_ns[self.kernel_ns.len() / 2] as f64 / 1e6,
            wall_ms: self.wall_ms.iter().copied().fold(f64::INFINITY, f64::min),
            note,
        })
    }
}

/// The launch-cost probes of one device.
#[derive(Clone, Copy, Debug)]
pub struct LaunchCost {
    /// Microseconds per launch in a batch of `batch` back-to-back enqueues then one clFinish
    /// (best of three batches).
    pub batch_us: f64,
    pub batch: usize,
    /// Median microseconds of `single` enqueue + clFinish pairs.
    pub single_us: f64,
    pub single: usize,
}

const EMPTY_KERNEL: &str = "__kernel void empty(__global int *unused) { }";

/// Measures the launch cost of an empty one-work-item kernel on a queue without profiling.
pub fn launch_cost(dev: &BenchDevice, batch: usize, single: usize) -> Result<LaunchCost, String> {
    let program = dev.env.try_build(EMPTY_KERNEL, "").map_err(|e| e.to_string())?;
    let kernel = cl::create_kernel(&program, "empty").map_err(|e| e.to_string())?;
    let mem = dev.env.buffer(CL_MEM_READ_WRITE, 64);
    kernel.set_mem(0, &mem);
    let q = dev.plain_queue.raw();
    // Warm-up: the first launches may compile (PoCL) or start threads.
    for _ in 0..20 {
        enqueue_empty(q, &kernel)?;
    }
    finish(q)?;
    let mut batch_us = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..batch {
            enqueue_empty(q, &kernel)?;
        }
        finish(q)?;
        batch_us = batch_us.min(start.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    let mut times = Vec::with_capacity(single);
    for _ in 0..single {
        let start = Instant::now();
        enqueue_empty(q, &kernel)?;
        finish(q)?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok(LaunchCost { batch_us, batch, single_us: times[times.len() / 2], single })
}

/// Enqueues `kernel` on one work-item without an event (the way a batch of launches is
/// normally written).
fn enqueue_empty(q: cl_command_queue, kernel: &Kernel) -> Result<(), String> {
    let global = [1usize];
    // SAFETY: a valid queue and kernel (its one argument is set); global holds work_dim = 1
    // entry; no offset, local size, wait list or event.
    let code = unsafe {
        clEnqueueNDRangeKernel(
            q,
            kernel.raw(),
            1,
            ptr::null(),
            global.as_ptr(),
            ptr::null(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    cl::cl_result("clEnqueueNDRangeKernel", code).map_err(|e| e.to_string())
}

fn finish(q: cl_command_queue) -> Result<(), String> {
    // SAFETY: a valid queue.
    let code = unsafe { clFinish(q) };
    cl::cl_result("clFinish", code).map_err(|e| e.to_string())
}
