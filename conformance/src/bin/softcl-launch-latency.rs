//! Measures kernel launch overhead through the ICD loader, on any platform.
//!
//! Usage: `softcl-launch-latency [--global N] [--rounds R] [--options "build options"]
//! [--out-of-order] [platform ...]`, where a platform is
//! a name ("SoftCL", "Portable Computing Language") or an index into the loader's list;
//! without one, every platform is measured. On each platform's first CPU device (else its
//! first device) it builds `kernel void empty(global int *p) {}` and measures, R times
//! (best round reported):
//! - batch: 1000 back-to-back clEnqueueNDRangeKernel of the empty kernel (global size N,
//!   NULL local size, no events), then one clFinish: microseconds per launch;
//! - single: 200 times one enqueue + clFinish: the median in microseconds.
//!
//! `--out-of-order` measures on a queue with CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE.
//!
//! Loader: unless OCL_ICD_VENDORS is set, the program registers SoftCL's driver of this
//! build (`SOFTCL_ICD_LIB` or target/release/libsoftcl.so) together with every vendor file in
//! /etc/OpenCL/vendors, so SoftCL and the system's platforms (PoCL) are measured in one run.

use softcl_conformance::*;
use std::process::ExitCode;
use std::ptr;
use std::time::Instant;

const BATCH: usize = 1000;
const SINGLES: usize = 200;

struct Options {
    global: usize,
    rounds: usize,
    options: String,
    out_of_order: bool,
    platforms: Vec<String>,
}

fn parse_args() -> Option<Options> {
    let mut o = Options { global: 1, rounds: 3, options: String::new(), out_of_order: false, platforms: Vec::new() };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--global" => o.global = args.next()?.parse().ok().filter(|&g| g > 0)?,
            "--rounds" => o.rounds = args.next()?.parse().ok().filter(|&r| r > 0)?,
            "--options" => o.options = args.next()?,
            "--out-of-order" => o.out_of_order = true,
            "-h" | "--help" => return None,
            _ => o.platforms.push(a),
        }
    }
    Some(o)
}

/// Registers SoftCL's driver and the system's vendors in one directory (see the module
/// documentation); must run before the first OpenCL call.
fn register_vendors() -> Result<(), String> {
    if std::env::var_os("OCL_ICD_VENDORS").is_some() {
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("softcl-launch-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let lib = driver_library();
    let lib = std::path::absolute(&lib).unwrap_or(lib);
    if lib.is_file() {
        std::fs::write(dir.join("softcl.icd"), format!("{}\n", lib.display())).map_err(|e| e.to_string())?;
    } else {
        eprintln!("note: {} does not exist; SoftCL is not measured", lib.display());
    }
    if let Ok(entries) = std::fs::read_dir("/etc/OpenCL/vendors") {
        for e in entries.flatten() {
            let _ = std::fs::copy(e.path(), dir.join(e.file_name()));
        }
    }
    std::env::set_var("OCL_ICD_VENDORS", &dir);
    Ok(())
}

struct Result1 {
    batch_us: f64,
    single_median_us: f64,
}

fn measure(platform: cl_platform_id, o: &Options) -> Result<(String, Result1), String> {
    let mut ids = devices_of_type(platform, CL_DEVICE_TYPE_CPU);
    if ids.is_empty() {
        ids = devices_of_type(platform, CL_DEVICE_TYPE_ALL);
    }
    let device = *ids.first().ok_or("no device")?;
    let name = device_info_string(device, CL_DEVICE_NAME);
    let context = context_for(&[device]);
    let properties =
        if o.out_of_order { CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties } else { 0 };
    let queue = queue_for(&context, device, properties);
    let program = program_from_source(&context, "kernel void empty(global int *p) {}");
    let program = build_program(program, &[device], &o.options).map_err(|e| e.to_string())?;
    let kernel = create_kernel(&program, "empty").map_err(|e| e.to_string())?;
    // SAFETY: a valid context; no host pointer.
    let buf =
        unsafe { Mem::from_raw(cl_create!(clCreateBuffer(context.raw(), CL_MEM_READ_WRITE, 64, ptr::null_mut()))) };
    kernel.set_mem(0, &buf);
    let global = [o.global];
    let enqueue = || {
        // SAFETY: a valid queue and kernel; one dimension; no events.
        unsafe {
            cl!(clEnqueueNDRangeKernel(
                queue.raw(),
                kernel.raw(),
                1,
                ptr::null(),
                global.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut()
            ))
        }
    };
    // SAFETY: a valid queue.
    let finish = || unsafe { cl!(clFinish(queue.raw())) };
    // Warm up: the first launch compiles nothing more but starts worker threads.
    for _ in 0..20 {
        enqueue();
    }
    finish();
    let mut best_batch = f64::INFINITY;
    let mut best_single = f64::INFINITY;
    for _ in 0..o.rounds {
        let t = Instant::now();
        for _ in 0..BATCH {
            enqueue();
        }
        finish();
        best_batch = best_batch.min(t.elapsed().as_secs_f64() * 1e6 / BATCH as f64);
        let mut singles: Vec<f64> = (0..SINGLES)
            .map(|_| {
                let t = Instant::now();
                enqueue();
                finish();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        singles.sort_by(f64::total_cmp);
        best_single = best_single.min(singles[SINGLES / 2]);
    }
    Ok((name, Result1 { batch_us: best_batch, single_median_us: best_single }))
}

fn main() -> ExitCode {
    let Some(o) = parse_args() else {
        eprintln!(
            "usage: softcl-launch-latency [--global N] [--rounds R] [--options \"build options\"] \
             [platform name or index ...]"
        );
        return ExitCode::from(2);
    };
    if let Err(e) = register_vendors() {
        eprintln!("cannot register the ICD vendors: {e}");
        return ExitCode::from(3);
    }
    let all = platforms();
    let names: Vec<String> = all.iter().map(|&p| platform_info_string(p, CL_PLATFORM_NAME)).collect();
    let chosen: Vec<usize> = if o.platforms.is_empty() {
        (0..all.len()).collect()
    } else {
        let mut v = Vec::new();
        for want in &o.platforms {
            match want.parse::<usize>().ok().filter(|&i| i < all.len()).or_else(|| names.iter().position(|n| n == want))
            {
                Some(i) => v.push(i),
                None => {
                    eprintln!("no platform {want:?}; the loader reports {names:?}");
                    return ExitCode::from(4);
                }
            }
        }
        v
    };
    if chosen.is_empty() {
        eprintln!("no OpenCL platform found");
        return ExitCode::from(4);
    }
    println!(
        "empty kernel, global size {}, NULL local size, build options {:?}; best of {} rounds; \
         batch = {BATCH} enqueues + 1 clFinish, single = median of {SINGLES} enqueue + clFinish",
        o.global, o.options, o.rounds
    );
    println!("{:<32} {:<40} {:>16} {:>18}", "platform", "device", "batch us/launch", "single median us");
    let mut failed = false;
    for i in chosen {
        match measure(all[i], &o) {
            Ok((device, r)) => println!(
                "{:<32} {:<40} {:>16.2} {:>18.2}",
                names[i],
                device.chars().take(40).collect::<String>(),
                r.batch_us,
                r.single_median_us
            ),
            Err(e) => {
                failed = true;
                eprintln!("{}: {e}", names[i]);
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
