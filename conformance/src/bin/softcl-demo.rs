//! SoftCL demo: lists the SoftCL platform and its devices, builds an OpenCL C program
//! (SAXPY and a __local-memory reduction), runs it on each device with profiling, checks
//! the results against the host, and prints the results and the profiling times.
//!
//! It reaches the driver only through the system ICD loader, like any OpenCL program.
//! With `SOFTCL_GEN_REPORT=1` (set by the demo unless already set) the runtime prints the
//! Gen model's per-kernel report to stderr.
//!
//!     cargo run --release -p softcl-conformance --bin softcl-demo

use softcl_conformance::*;
use std::process::ExitCode;

const PROGRAM: &str = r#"
__kernel void saxpy(float a, __global const float* x, __global float* y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

__kernel void reduce(__global const float* in, __global float* partial,
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
}
"#;

const N: usize = 1 << 20;
const ALPHA: f32 = 2.5;

fn type_name(ty: cl_device_type) -> &'static str {
    if ty & CL_DEVICE_TYPE_GPU != 0 {
        "GPU"
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        "CPU"
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "ACCELERATOR"
    } else {
        "OTHER"
    }
}

/// (queued -> start, start -> end) in microseconds.
fn times_us(ev: &Event) -> (f64, f64) {
    let [queued, _submit, start, end] = ev.profile();
    (start.saturating_sub(queued) as f64 / 1000.0, end.saturating_sub(start) as f64 / 1000.0)
}

fn print_device(d: &TestDevice) {
    let id = d.id;
    let ty: cl_device_type = device_info(id, CL_DEVICE_TYPE);
    let cus: cl_uint = device_info(id, CL_DEVICE_MAX_COMPUTE_UNITS);
    let mhz: cl_uint = device_info(id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    let wg: usize = device_info(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    let local: cl_ulong = device_info(id, CL_DEVICE_LOCAL_MEM_SIZE);
    let global: cl_ulong = device_info(id, CL_DEVICE_GLOBAL_MEM_SIZE);
    println!("  {} device: {}", type_name(ty), d.name);
    println!("    version          {}", device_info_string(id, CL_DEVICE_VERSION));
    println!("    compute units    {cus}");
    println!("    max clock        {mhz} MHz");
    println!("    max work-group   {wg}");
    println!("    local memory     {} KiB", local / 1024);
    println!("    global memory    {} MiB", global >> 20);
}

/// Runs SAXPY; returns true when every element matches the host.
fn run_saxpy(env: &TestEnv, program: &Program) -> bool {
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 7) as f32 - 3.0).collect();
    let k = create_kernel(program, "saxpy").unwrap_or_else(|e| panic!("{e}"));
    let bx = env.buffer_from(CL_MEM_READ_ONLY, &x);
    let by = env.buffer_from(CL_MEM_READ_WRITE, &y);
    k.set_arg(0, &ALPHA);
    k.set_mem(1, &bx);
    k.set_mem(2, &by);
    let ev = env.run(&k, &[N], None);
    let out: Vec<f32> = env.read(&by, N);
    // The inputs are multiples of 0.5 and small: a*x+y is exact, fused or not.
    let bad = (0..N).filter(|&i| out[i] != ALPHA * x[i] + y[i]).count();
    let (wait, run) = times_us(&ev);
    println!(
        "    saxpy   n={N:<8} {}  y[12345]={:<10} queued->start {wait:>9.1} us, start->end {run:>9.1} us",
        if bad == 0 { "OK      " } else { "MISMATCH" },
        out[12345]
    );
    if bad != 0 {
        println!("      {bad} of {N} elements differ from the host result");
    }
    bad == 0
}

/// Runs the __local reduction; returns true when the sums match the host.
fn run_reduce(env: &TestEnv, program: &Program) -> bool {
    let input: Vec<f32> = (0..N).map(|i| ((i * 7) % 31) as f32).collect();
    let k = create_kernel(program, "reduce").unwrap_or_else(|e| panic!("{e}"));
    let kernel_max: usize = kernel_wg_info(k.raw(), env.dev(), CL_KERNEL_WORK_GROUP_SIZE);
    // The largest power of two <= min(128, the kernel's work-group size limit).
    let cap = kernel_max.clamp(1, 128);
    let local = if cap.is_power_of_two() { cap } else { cap.next_power_of_two() / 2 };
    let groups = N / local;
    let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bpart = env.buffer(CL_MEM_WRITE_ONLY, groups * 4);
    k.set_mem(0, &bin);
    k.set_mem(1, &bpart);
    k.set_local(2, local * 4);
    let ev = env.run(&k, &[N], Some(&[local]));
    let partial: Vec<f32> = env.read(&bpart, groups);
    // Every partial sum is a small integer, exact in f32 whatever the order.
    let bad = (0..groups).filter(|&g| partial[g] != input[g * local..(g + 1) * local].iter().sum::<f32>()).count();
    let device_total: u64 = partial.iter().map(|&p| p as u64).sum();
    let host_total: u64 = input.iter().map(|&v| v as u64).sum();
    let ok = bad == 0 && device_total == host_total;
    let (wait, run) = times_us(&ev);
    println!(
        "    reduce  n={N:<8} {}  sum={device_total:<10} queued->start {wait:>9.1} us, start->end {run:>9.1} us  (local size {local})",
        if ok { "OK      " } else { "MISMATCH" },
    );
    if !ok {
        println!("      {bad} of {groups} partial sums differ; host total {host_total}");
    }
    ok
}

fn main() -> ExitCode {
    // The runtime prints the Gen model's per-kernel report to stderr when this is set.
    // Set before the first OpenCL call, while the process is single-threaded.
    if std::env::var_os("SOFTCL_GEN_REPORT").is_none() {
        std::env::set_var("SOFTCL_GEN_REPORT", "1");
    }
    init_loader();
    let p = platform();
    println!("Platform: {}", platform_info_string(p, CL_PLATFORM_NAME));
    println!("  vendor   {}", platform_info_string(p, CL_PLATFORM_VENDOR));
    println!("  version  {}", platform_info_string(p, CL_PLATFORM_VERSION));
    let devices = test_devices();
    for d in &devices {
        print_device(d);
    }
    println!();
    let mut ok = true;
    for d in &devices {
        println!("Running on the {} device ({}):", d.kind, d.name);
        let env = d.env();
        let program = env.build(PROGRAM, "");
        ok &= run_saxpy(&env, &program);
        ok &= run_reduce(&env, &program);
    }
    if ok {
        println!("\nAll results match the host computation.");
        ExitCode::SUCCESS
    } else {
        println!("\nFAILED: some results differ from the host computation.");
        ExitCode::FAILURE
    }
}
