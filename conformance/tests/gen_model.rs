//! The modelled Gen GPU through the loader, as an application sees it: profiling END-START
//! is the performance model's time (deterministic, ordered on the queue's timeline), and
//! kernel variants rank the way the optimization guide says they rank.

use softcl_conformance::*;

fn gen_env() -> TestEnv {
    device(DeviceKind::Gpu).expect("the modelled Gen device").env()
}

/// END - START of a finished event.
fn modelled_ns(event: &Event) -> u64 {
    let [_, _, start, end] = event.profile();
    end - start
}

const COPY: &str = r#"
    __kernel void copy2d(__global const int* in, __global int* out, uint width) {
        size_t x = get_global_id(0), y = get_global_id(1);
        out[y * width + x] = in[y * width + x];
    }
    __kernel void strided(__global const int* in, __global int* out, uint stride) {
        size_t i = get_global_id(0);
        out[i] = in[i * stride];
    }
    __kernel void fma_chain(__global float* data) {
        size_t i = get_global_id(0);
        float b = 1.0001f, c = 0.5f;
        float4 a0 = data[i], a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
        for (int k = 0; k < 256; k++) {
            a0 = fma(a0, b, c); a1 = fma(a1, b, c); a2 = fma(a2, b, c); a3 = fma(a3, b, c);
        }
        float4 s = a0 + a1 + a2 + a3;
        data[i] = s.x + s.y + s.z + s.w;
    }"#;

/// `copy2d` of `p` set up over a `w` x `w` input of 0, 1, 2, ...: the kernel, the input, and
/// the input and output buffers (kept alive by the caller while the kernel runs).
fn copy2d(env: &TestEnv, p: &Program, w: usize) -> (Kernel, Vec<i32>, [Mem; 2]) {
    let k = create_kernel(p, "copy2d").expect("copy2d");
    let input: Vec<i32> = (0..(w * w) as i32).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, w * w * 4);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    k.set_arg(2, &(w as u32));
    (k, input, [bi, bo])
}

#[test]
fn profiling_times_are_the_models_deterministic_and_ordered() {
    let env = gen_env();
    let p = env.build(COPY, "");
    let w = 256usize;
    let (k, input, [_bi, bo]) = copy2d(&env, &p, w);
    let events: Vec<Event> = (0..5).map(|_| env.enqueue(&k, &[w, w], Some(&[16, 1]))).collect();
    env.finish();
    let got: Vec<i32> = env.read(&bo, w * w);
    assert_eq!(got, input, "results are still computed");
    let times: Vec<u64> = events.iter().map(modelled_ns).collect();
    assert!(times.iter().all(|&t| t == times[0]), "the same launch is modelled the same: {times:?}");
    for pair in events.windows(2) {
        let (a, b) = (pair[0].profile(), pair[1].profile());
        assert!(b[2] >= a[3], "START {} of a command before END {} of the one before it", b[2], a[3]);
    }
}

#[test]
fn row_access_beats_column_access_and_coalesced_beats_strided() {
    let env = gen_env();
    let p = env.build(COPY, "");
    let w = 512usize;
    let (k, input, [_bi, bo]) = copy2d(&env, &p, w);
    // The guide's work-group shapes: a SIMD16 thread reads 1 line as a row, 4 as a square,
    // 16 as a column.
    let row = modelled_ns(&env.run(&k, &[w, w], Some(&[16, 1])));
    let square = modelled_ns(&env.run(&k, &[w, w], Some(&[4, 4])));
    let column = modelled_ns(&env.run(&k, &[w, w], Some(&[1, 16])));
    let got: Vec<i32> = env.read(&bo, w * w);
    assert_eq!(got, input);
    assert!(row < square && square < column, "row {row} ns, square {square} ns, column {column} ns");
    assert!(column as f64 >= 4.0 * row as f64, "column access costs its lines: row {row} ns, column {column} ns");

    let k = create_kernel(&p, "strided").expect("strided");
    let n = 1 << 16;
    let big: Vec<i32> = (0..(n * 16) as i32).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &big);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    let time = |stride: u32| {
        k.set_arg(2, &stride);
        modelled_ns(&env.run(&k, &[n], Some(&[64])))
    };
    let (s1, s4, s16) = (time(1), time(4), time(16));
    let got: Vec<i32> = env.read(&bo, n);
    assert!(got.iter().enumerate().all(|(i, &v)| v == (i * 16) as i32));
    assert!(s1 < s4 && s4 < s16, "stride 1: {s1} ns, 4: {s4} ns, 16: {s16} ns");
}

#[test]
fn an_fma_heavy_kernel_stays_under_the_peak() {
    let env = gen_env();
    let p = env.build(COPY, "");
    let k = create_kernel(&p, "fma_chain").expect("fma_chain");
    let n = 1 << 18;
    let data = vec![0.25f32; n];
    let b = env.buffer_from(CL_MEM_READ_WRITE, &data);
    k.set_mem(0, &b);
    let ns = modelled_ns(&env.run(&k, &[n], Some(&[256])));
    // 16 FMAs (32 FLOP) per iteration, 256 iterations per work-item.
    let flops = n as f64 * 256.0 * 32.0;
    let gflops = flops / ns as f64;
    // gen9-gt2 (the default configuration): 24 EUs x 16 FLOP x 1.15 GHz.
    assert!(gflops <= 441.6, "{gflops:.1} GFLOP/s is above gen9-gt2's peak");
    assert!(gflops >= 0.8 * 441.6, "{gflops:.1} GFLOP/s: an FMA-heavy kernel reaches 80% of the peak");
}

#[test]
fn a_stream_copy_reaches_the_memory_roof_and_not_beyond() {
    let env = gen_env();
    let p = env.build(COPY, "");
    let k = create_kernel(&p, "strided").expect("strided");
    let n = 1 << 22;
    let input: Vec<i32> = (0..n as i32).collect();
    let bi = env.buffer_from(CL_MEM_READ_ONLY, &input);
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    k.set_mem(0, &bi);
    k.set_mem(1, &bo);
    k.set_arg(2, &1u32);
    let ns = modelled_ns(&env.run(&k, &[n], Some(&[256])));
    let got: Vec<i32> = env.read(&bo, n);
    assert_eq!(got, input);
    // gen9-gt2's memory roof: the DRAM behind the GTI, 34.1 GB/s (device-model/src/gen/config.rs).
    let gbs = (2 * n * 4) as f64 / ns as f64;
    assert!(gbs <= 34.1, "{gbs:.1} GB/s is above gen9-gt2's memory roof");
    assert!(gbs >= 0.8 * 34.1, "{gbs:.1} GB/s: a copy reaches 80% of the memory roof");
}

/// `SOFTCL_GEN_REPORT=1` through the loader, as a user sets it: the demo's Gen launches
/// print the report on stderr with every part the issue names (SIMD width and why, threads
/// per work-group, occupancy and its binding limit, lane utilisation, messages, lines per
/// message, efficiency, SLM cycles and conflicts, barriers, FLOPs, the split of cycles, the
/// modelled time, the worst source lines with advice).
#[test]
fn the_gen_report_env_prints_the_report_on_stderr() {
    softcl_conformance::init_loader();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_softcl-demo"))
        .env("SOFTCL_GEN_REPORT", "1")
        .output()
        .expect("run softcl-demo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "softcl-demo failed:\n{stderr}");
    let reduce = stderr
        .split("softcl gen [")
        .find(|r| r.starts_with("gen9-gt2] kernel `reduce`"))
        .unwrap_or_else(|| panic!("no Gen report of the reduction:\n{stderr}"));
    for part in [
        ": modelled ",
        "  SIMD",
        "hardware thread(s) each",
        "occupancy ",
        "bound by ",
        "lane utilisation ",
        "global/constant: ",
        " per message), ",
        "(efficiency ",
        "SLM: ",
        " conflict cycles, worst ",
        "barriers: ",
        "FLOPs: ",
        "cycles: compute ",
        "worst source lines:",
        "<source>:",
        "divergent branch: ",
    ] {
        assert!(reduce.contains(part), "`{part}` missing from the report:\n{reduce}");
    }
}

/// A launch the model cannot count (here more than 1024 messages after inlining) is never
/// silent: without `SOFTCL_GEN_REPORT`, stderr says the kernel was not modelled and that its
/// profiling times are the host's.
#[test]
fn an_unmodelled_launch_says_so_on_stderr() {
    softcl_conformance::init_loader();
    let body: String = (0..1100).map(|j| format!("s += ret[({j} * 3 + g) % 64];\n")).collect();
    let src = format!("kernel void k(global int *ret) {{ int g = get_global_id(0); int s = 0;\n{body}ret[g] = s; }}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_softcl-printf-run"))
        .args(["gpu", "64", "16"])
        .env_remove("SOFTCL_GEN_REPORT")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start softcl-printf-run");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), src.as_bytes()).expect("write the source");
    let out = child.wait_with_output().expect("wait for softcl-printf-run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "softcl-printf-run failed:\n{stderr}");
    let told = "SoftCL: the Gen model could not model kernel `k` (";
    assert_eq!(stderr.matches(told).count(), 1, "{stderr}");
    assert!(stderr.contains("its profiling times are the host's, not modelled ones"), "{stderr}");
}
