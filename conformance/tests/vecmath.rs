//! Math built-ins on vectors through the loader: a float16 sin/exp kernel on every device
//! against a host reference, timed on the CPU device with the vector path (SLEEF, the
//! default) and, in a child process with `SOFTCL_VECMATH=0`, with one libm call per lane.
//! The child's build log carries the one line saying that vectors run per lane.

use softcl_conformance::*;
use std::time::Instant;

const SRC: &str = r#"
kernel void sinexp(global const float16* x, global float16* y, int reps) {
    size_t i = get_global_id(0);
    float16 v = x[i], acc = 0.0f;
    for (int r = 0; r < reps; r++) {
        acc += sin(v) * exp(-v);
        v += 0.001f;
    }
    y[i] = acc;
}"#;

const ITEMS: usize = 4096;
const REPS: i32 = 32;

/// The host reference of one lane, in double.
fn reference(x: f32) -> f64 {
    let mut v = x;
    let mut acc = 0.0f64;
    for _ in 0..REPS {
        acc += f64::from(v).sin() * (-f64::from(v)).exp();
        v += 0.001;
    }
    acc
}

/// Runs the kernel on `d`: checks every lane against the reference (sum of REPS terms, each
/// within a few ulp) and returns the best of three wall-clock times in milliseconds and the
/// build log.
fn run_and_time(d: &TestDevice) -> (f64, String) {
    let env = d.env();
    let program = env.build(SRC, "");
    let log = program_build_info_string(program.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
    let k = create_kernel(&program, "sinexp").expect("kernel");
    let n = ITEMS * 16;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 20000) as f32 * 0.001 - 10.0).collect();
    let xb = env.buffer_from(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &x);
    let yb = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &xb);
    k.set_mem(1, &yb);
    k.set_arg(2, &REPS);
    env.run(&k, &[ITEMS], None);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        env.run(&k, &[ITEMS], None);
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let y: Vec<f32> = env.read(&yb, n);
    for i in 0..n {
        let want = reference(x[i]);
        // Each term is within 4 + 3 ulp; the sum of REPS terms of magnitude up to e^10.
        let scale: f64 = (0..REPS).map(|r| (-(f64::from(x[i]) + 0.001 * f64::from(r))).exp()).sum();
        let tol = scale * 1e-6 + 1e-30;
        assert!(
            (f64::from(y[i]) - want).abs() <= tol,
            "{}: lane {i} x = {}: {} vs {want} (tolerance {tol:e})",
            d.name,
            x[i],
            y[i]
        );
    }
    (best, log)
}

/// The per-lane run, in a child process with SOFTCL_VECMATH=0 (results checked the same way).
#[test]
#[ignore = "run by float16_sin_exp_vector_path_and_speed in a child process"]
fn per_lane_child() {
    let Some(d) = device(DeviceKind::Cpu) else { return };
    let (ms, log) = run_and_time(&d);
    if is_softcl() {
        assert!(log.contains("vector math: SOFTCL_VECMATH=0"), "build log without the per-lane note: {log:?}");
    }
    println!("PER_LANE_MS {ms}");
}

#[test]
fn float16_sin_exp_vector_path_and_speed() {
    for_each_device(|d| {
        let (ms, log) = run_and_time(d);
        assert!(
            !log.contains("vector math:"),
            "{}: the vector path is off (is libsleef3 installed? scripts/install-deps.sh): {log:?}",
            d.name
        );
        if d.kind != DeviceKind::Cpu {
            return;
        }
        let exe = std::env::current_exe().expect("the test binary");
        let out = std::process::Command::new(exe)
            .args(["--ignored", "--exact", "per_lane_child", "--nocapture"])
            .env("SOFTCL_VECMATH", "0")
            .output()
            .expect("run the child test");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "child failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
        let per_lane: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("PER_LANE_MS "))
            .and_then(|v| v.trim().parse().ok())
            .expect("the child's time");
        eprintln!(
            "float16 sin*exp, {ITEMS} work-items x {REPS}: vector math {ms:.2} ms, per lane {per_lane:.2} ms, \
             speed-up {:.2}x",
            per_lane / ms
        );
    });
}
