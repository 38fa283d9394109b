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
    // The copy streams 2 MiB through memory whatever the shape: the lines a square or a
    // column re-reads hit in the L3 (the buffers are the launch's footprint), so the square's
    // 4 lines per message fit within the data ports' bandwidth while the row waits for
    // memory, and the column's 16 are bound by the data ports: 16 x 64 B per message over
    // 3 x 64 B per clock against memory's 29.7 B per clock, about 2.5x the row.
    assert!(row <= square && square < column, "row {row} ns, square {square} ns, column {column} ns");
    assert!(column as f64 >= 2.0 * row as f64, "column access costs its lines: row {row} ns, column {column} ns");

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
        "  memory: ",
        " B through the GTI for ",
        "(the launch's buffers: ",
        "cycles: compute ",
        "worst source lines (",
        "<source>:",
        "divergent branch: ",
    ] {
        assert!(reduce.contains(part), "`{part}` missing from the report:\n{reduce}");
    }
}

/// A launch the model cannot count (here more than 4096 messages after inlining) is never
/// silent: without `SOFTCL_GEN_REPORT`, stderr says the kernel was not modelled and that its
/// profiling times are the host's.
#[test]
fn an_unmodelled_launch_says_so_on_stderr() {
    softcl_conformance::init_loader();
    let body: String = (0..4100).map(|j| format!("s += ret[({j} * 3 + g) % 64];\n")).collect();
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

const REUSE: &str = r#"
    __kernel void reread(__global const int* table, __global int* out) {
        size_t g = get_global_id(0);
        int s = 0;
        for (int k = 0; k < 16; k++) s += table[(g + k * 1024) & 4095];
        out[g] = s;
    }
    __kernel void stream16(__global const int* big, __global int* out) {
        size_t g = get_global_id(0), n = get_global_size(0);
        int s = 0;
        for (int k = 0; k < 16; k++) s += big[g + k * n];
        out[g] = s;
    }
    __kernel void lut(__global const int* in, __global const int* table, __global int* out) {
        size_t g = get_global_id(0);
        out[g] = in[g] + table[in[g] & 255];
    }
    __kernel void copy(__global const int* in, __global const int* table, __global int* out) {
        size_t g = get_global_id(0);
        out[g] = in[g];
    }"#;

/// The L3 holds what a launch re-reads: 16 reads per work-item of one 16 KB table cost its
/// lines at the data ports, not 16 times the table from memory as 16 reads of 16 different
/// stretches of a 64 MB buffer do; a 1 KB lookup table read beside a streamed input costs
/// little more than the stream. Before the model knew the launch's buffers (its footprint),
/// every L3 line went to memory: `reread` was priced like `stream16` (1.00x) and `lut` at
/// 1.5x `copy`.
#[test]
fn the_l3_holds_what_a_launch_re_reads() {
    let env = gen_env();
    let p = env.build(REUSE, "");
    let n = 1usize << 20;
    let table: Vec<i32> = (0..4096).collect();
    let big: Vec<i32> = (0..(16 * n) as i32).collect();
    let (bt, bb) = (env.buffer_from(CL_MEM_READ_ONLY, &table), env.buffer_from(CL_MEM_READ_ONLY, &big));
    let bo = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
    let run = |name: &str, input: &Mem| {
        let k = create_kernel(&p, name).expect(name);
        k.set_mem(0, input);
        k.set_mem(1, &bo);
        modelled_ns(&env.run(&k, &[n], Some(&[256])))
    };
    let reread = run("reread", &bt);
    let got: Vec<i32> = env.read(&bo, n);
    assert!(got.iter().enumerate().all(|(g, &v)| v == (0..16).map(|k| ((g + 1024 * k) & 4095) as i32).sum()));
    let stream = run("stream16", &bb);
    assert!(stream as f64 > 4.0 * reread as f64, "re-reading 16 KB {reread} ns, streaming 64 MB {stream} ns");

    let lut = |name: &str| {
        let k = create_kernel(&p, name).expect(name);
        let bi = env.buffer_from(CL_MEM_READ_ONLY, &big[..n]);
        k.set_mem(0, &bi);
        k.set_mem(1, &bt);
        k.set_mem(2, &bo);
        let t = modelled_ns(&env.run(&k, &[n], Some(&[256])));
        let got: Vec<i32> = env.read(&bo, n);
        let want = |g: usize| g as i32 + if name == "lut" { (g & 255) as i32 } else { 0 };
        assert!(got.iter().enumerate().all(|(g, &v)| v == want(g)), "{name}");
        t
    };
    let (with_table, plain) = (lut("lut"), lut("copy"));
    assert!((with_table as f64) < 1.2 * plain as f64, "lookup {with_table} ns, copy {plain} ns");
}
