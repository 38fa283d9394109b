//! softcl-bench: a benchmark of OpenCL CPU implementations through the system ICD loader.
//!
//! Runs twelve kernels (streaming, compute, barriers, atomics, divergence, float4, math
//! built-ins) and two launch-cost probes on every selected device, checks every result
//! against a host reference, and prints one Markdown table: each kernel's time, GB/s or
//! GFLOP/s, its share of the host's measured copy bandwidth or FP32 FMA peak, and, when
//! PoCL runs in the same process, the SoftCL/PoCL speed ratio and its geomean.
//! See docs/PERFORMANCE.md.

mod cases;
mod host;
mod report;
mod runner;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;

use cases::{Size, KERNELS};
use report::{Cell, Report, Row};

const USAGE: &str = "\
usage: softcl-bench [options]
  --platform NAME   platforms whose name contains NAME (case-insensitive); default: all
  --device KIND     cpu (default), gpu or all
  --kernels A,B     kernels to run (default: all; `launch` selects the launch probes)
  --size S          small (quick, for CI) or full (default)
  --reps N          timed runs per kernel after one warm-up (default 5; 3 at small size)
  --rounds N        run every kernel N times over, round by round, and report each
                    kernel's median round (default 1)
  --json FILE       also write the results as JSON
  --list            list the kernels and exit
When OCL_ICD_VENDORS is not set, the loader is pointed at the system's vendors
(/etc/OpenCL/vendors) plus SoftCL's library of this build (or SOFTCL_ICD_LIB).";

struct Options {
    platform: Option<String>,
    device: String,
    kernels: Vec<String>,
    size: Size,
    reps: usize,
    rounds: usize,
    json: Option<String>,
}

const LAUNCH: &str = "launch";

fn parse_args() -> Result<Option<Options>, String> {
    let mut o = Options {
        platform: None,
        device: "cpu".into(),
        kernels: KERNELS.iter().map(|k| k.0.to_string()).chain([LAUNCH.to_string()]).collect(),
        size: Size::Full,
        reps: 0,
        rounds: 1,
        json: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--platform" => o.platform = Some(value()?),
            "--device" => {
                o.device = value()?.to_lowercase();
                if !["cpu", "gpu", "all"].contains(&o.device.as_str()) {
                    return Err(format!("--device {}: expected cpu, gpu or all", o.device));
                }
            }
            "--kernels" => {
                let list = value()?;
                o.kernels = list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                for k in &o.kernels {
                    if k != LAUNCH && !KERNELS.iter().any(|(n, _)| n == k) {
                        return Err(format!("unknown kernel {k:?} (see --list)"));
                    }
                }
            }
            "--size" => {
                o.size = match value()?.as_str() {
                    "small" => Size::Small,
                    "full" => Size::Full,
                    s => return Err(format!("--size {s}: expected small or full")),
                }
            }
            "--reps" => o.reps = positive_count(&a, &value()?)?,
            "--rounds" => o.rounds = positive_count(&a, &value()?)?,
            "--json" => o.json = Some(value()?),
            "--list" => {
                for (name, what) in KERNELS {
                    println!("{name:18} {what}");
                }
                println!("{LAUNCH:18} launch cost: 1000 back-to-back empty kernels, and enqueue + clFinish");
                return Ok(None);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            other => return Err(format!("unknown option {other:?}\n{USAGE}")),
        }
    }
    if o.reps == 0 {
        o.reps = if o.size == Size::Small { 3 } else { 5 };
    }
    Ok(Some(o))
}

/// The value of a count option (`--reps`, `--rounds`): a positive integer.
fn positive_count(option: &str, v: &str) -> Result<usize, String> {
    v.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("{option} {v}: expected a positive count"))
}

/// Runs `f`, turning a panic (the OpenCL helpers panic on an error code) into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".into())),
    }
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(Some(o)) => o,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("softcl-bench: {e}");
            return ExitCode::from(2);
        }
    };
    match host::setup_vendors() {
        Ok(v) => eprintln!("[bench] OCL_ICD_VENDORS={v}"),
        Err(e) => {
            eprintln!("softcl-bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    let load_start = host::load_average();
    // The roofs first, before any OpenCL implementation starts its threads.
    eprintln!("[bench] measuring the host's copy bandwidth and FMA peak ...");
    let measure_roofs = || {
        let roofs = match opts.size {
            Size::Small => host::measure_roofs(64 << 20, 5, 1_000_000, 5),
            Size::Full => host::measure_roofs(512 << 20, 5, 5_000_000, 10),
        };
        eprintln!(
            "[bench] copy {:.1} GB/s, FMA {:.1} GFLOP/s ({}-bit)",
            roofs.copy_gbs, roofs.fma_gflops, roofs.fma_bits
        );
        roofs
    };
    let roofs_start = measure_roofs();
    let devices = match guarded(|| runner::select_devices(opts.platform.as_deref(), &opts.device)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("softcl-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    for d in &devices {
        eprintln!("[bench] device {}: {} / {}", d.label, d.platform, d.name);
    }
    let mut failures = 0;
    let mut rounds = Vec::new();
    for round in 1..=opts.rounds {
        if opts.rounds > 1 {
            eprintln!("[bench] round {round} of {}", opts.rounds);
        }
        rounds.push(run_round(&opts, &devices, &mut failures));
    }
    let labels: Vec<String> = devices.iter().map(|d| d.label.clone()).collect();
    let device_names: Vec<(String, String)> = devices.iter().map(|d| (d.platform.clone(), d.name.clone())).collect();
    drop(devices);
    // Again at the end, without the implementations' queues and contexts: each roof is the
    // better of the two measurements.
    eprintln!("[bench] measuring the roofs again ...");
    let roofs = roofs_start.best(measure_roofs());
    let load_end = host::load_average();
    let (host_cpu, threads) = (host::cpu_model(), host::threads());
    let report_of = |rows: Vec<Row>, rounds: usize| Report {
        labels: labels.clone(),
        devices: device_names.clone(),
        size: format!("{:?}", opts.size).to_lowercase(),
        reps: opts.reps,
        rounds,
        host_cpu: host_cpu.clone(),
        threads,
        load_start: load_start.clone(),
        load_end: load_end.clone(),
        roofs,
        rows,
    };
    if rounds.len() > 1 {
        // Each round's table, then the median one the targets are judged on.
        for (i, rows) in rounds.iter().enumerate() {
            println!("### Round {} of {}\n\n{}", i + 1, rounds.len(), report_of(rows.clone(), 1).markdown());
        }
        println!("### Median of {} rounds\n", rounds.len());
    }
    let report = report_of(report::median_rows(&rounds), rounds.len());
    println!("{}", report.markdown());
    let targets = report.targets();
    if !targets.is_empty() {
        println!("{targets}");
    }
    if let Some(path) = &opts.json {
        if let Err(e) = std::fs::write(path, report.json()) {
            eprintln!("softcl-bench: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if failures > 0 {
        eprintln!("softcl-bench: {failures} run(s) FAILED (errors or wrong results): see above");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// One round: every selected kernel (then the launch probes) on every device, one row each.
fn run_round(opts: &Options, devices: &[runner::BenchDevice], failures: &mut usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, _) in KERNELS.iter().filter(|(n, _)| opts.kernels.iter().any(|k| k == n)) {
        let case = cases::build(name, opts.size).expect("every listed kernel builds");
        // Every device gets the case ready, then the launches alternate between the devices
        // (warm-up, then rep 1 on each, rep 2 on each ...), so that a burst of load from
        // elsewhere on the machine falls on all of them alike.
        let mut prepared: Vec<Result<runner::Prepared, String>> =
            devices.iter().map(|d| guarded(|| runner::Prepared::new(d, &case))).collect();
        // A memory-bound kernel's roof: the copy bandwidth right before and right after its
        // runs (with its buffers already allocated), the better of the two.
        let copy_next_to_it = |reps| match (case.bound, opts.size) {
            (cases::Bound::Memory, Size::Small) => Some(host::copy_bandwidth(64 << 20, reps)),
            (cases::Bound::Memory, Size::Full) => Some(host::copy_bandwidth(512 << 20, reps)),
            (cases::Bound::Compute, _) => None,
        };
        let copy_before = copy_next_to_it(3);
        for rep in 0..=opts.reps {
            for p in prepared.iter_mut() {
                if let Ok(run) = p {
                    if let Err(e) = guarded(|| run.launch(&case, rep > 0)) {
                        *p = Err(e);
                    }
                }
            }
        }
        let mut cells = Vec::new();
        for (d, p) in devices.iter().zip(prepared) {
            let cell = match p.and_then(|run| guarded(|| run.finish(&case))) {
                Ok(m) => {
                    eprintln!(
                        "[bench] {} {} on {}: {:.3} ms (median {:.3}, wall {:.3}); verified: {}",
                        case.name, case.size, d.label, m.kernel_ms, m.median_ms, m.wall_ms, m.note
                    );
                    Cell::Kernel { ms: m.kernel_ms, wall_ms: m.wall_ms, median_ms: m.median_ms, note: m.note }
                }
                Err(e) => {
                    *failures += 1;
                    eprintln!("[bench] FAILED: {} {} on {}: {e}", case.name, case.size, d.label);
                    Cell::Failed(e)
                }
            };
            cells.push(cell);
        }
        let copy_gbs = match (copy_before, copy_next_to_it(3)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if let Some(c) = copy_gbs {
            eprintln!("[bench] copy bandwidth next to {}: {c:.1} GB/s", case.name);
        }
        rows.push(Row {
            kernel: case.name.into(),
            size: case.size.clone(),
            work: Some((case.bound, case.bytes, case.flops)),
            cells,
            copy_gbs,
        });
    }
    if opts.kernels.iter().any(|k| k == LAUNCH) {
        let (batch, single) = (1000, 200);
        let mut batch_cells = Vec::new();
        let mut single_cells = Vec::new();
        for d in devices {
            match guarded(|| runner::launch_cost(d, batch, single)) {
                Ok(c) => {
                    eprintln!(
                    "[bench] launch on {}: {:.2} us each in a batch of {}, median {:.2} us of {} enqueue + clFinish",
                    d.label, c.batch_us, c.batch, c.single_us, c.single
                );
                    batch_cells.push(Cell::Launch { us: c.batch_us });
                    single_cells.push(Cell::Launch { us: c.single_us });
                }
                Err(e) => {
                    *failures += 1;
                    eprintln!("[bench] FAILED: launch probes on {}: {e}", d.label);
                    batch_cells.push(Cell::Failed(e.clone()));
                    single_cells.push(Cell::Failed(e));
                }
            }
        }
        rows.push(Row {
            kernel: "empty launch, batch".into(),
            size: format!("x{batch}"),
            work: None,
            cells: batch_cells,
            copy_gbs: None,
        });
        rows.push(Row {
            kernel: "empty enqueue+finish".into(),
            size: format!("median of {single}"),
            work: None,
            cells: single_cells,
            copy_gbs: None,
        });
    }
    rows
}
