//! The Gen model's HTML report page in headless Chromium: it renders (the screenshot is not
//! one colour, and the heat and chart colours are on it) and its script runs without errors.
//!
//! Needs Chromium (Debian package `chromium`, installed by scripts/install-deps.sh; another
//! binary through `SOFTCL_CHROMIUM`). Without it the test fails when CI=true and is skipped
//! with a message otherwise.

use softcl_compiler::gen_abi::{AccessKind, BlockCounters, GenBlock, GenKernelInfo, GenSite, SiteCounters, SourceLoc};
use softcl_compiler::{compile_source, AddressSpace};
use softcl_device_model::gen::html::{render, CycleShare, OccupancyLimit, ReportPage, READY_MARKER};
use softcl_device_model::gen::lines::line_stats;
use softcl_device_model::gen::model::ReportSink;
use softcl_device_model::{Device, GenDevice, Launch};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SOURCE: &str = "\
__kernel void transpose(__global const float *in, __global float *out, int n) {
    __local float tile[16][16];
    int x = get_global_id(0), y = get_global_id(1);
    tile[get_local_id(1)][get_local_id(0)] = in[y * n + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[x * n + y] = tile[get_local_id(0)][get_local_id(1)];   // <column & \"bank\">
}
";

fn loc(line: u32) -> Option<SourceLoc> {
    Some(SourceLoc { file: 0, line, column: 1 })
}

/// A page as the model's report fills it, from synthetic counters of the kernel above.
fn page() -> ReportPage {
    let site = |space, kind, line| GenSite {
        block: 0,
        space,
        kind,
        bytes_per_lane: 4,
        loc: loc(line),
        waits_for: vec![],
        same_address: Default::default(),
        lane_strides: None,
        sub_group_block: false,
    };
    let info = GenKernelInfo {
        simd: 16,
        sites: vec![
            site(AddressSpace::Global, AccessKind::Load, 4),
            site(AddressSpace::Local, AccessKind::Store, 4),
            site(AddressSpace::Local, AccessKind::Load, 6),
            site(AddressSpace::Global, AccessKind::Store, 6),
        ],
        blocks: vec![GenBlock {
            instructions: 40,
            flops: 0,
            flops_f64: 0,
            divergent_branch: false,
            loc: loc(3),
            shuffles: 0,
        }],
        source_files: vec!["<source>".into()],
        source_texts: vec![Some(SOURCE.into())],
        shape_free: false,
    };
    let m = 1024;
    let sites = [
        SiteCounters { messages: m, active_lanes: 16 * m, l3_lines: m, useful_bytes: 64 * m, ..Default::default() },
        SiteCounters { messages: m, active_lanes: 16 * m, slm_cycles: m, ..Default::default() },
        SiteCounters {
            messages: m,
            active_lanes: 16 * m,
            slm_cycles: 16 * m,
            slm_conflict_cycles: 15 * m,
            worst_bank_ways: 16,
            ..Default::default()
        },
        SiteCounters {
            messages: m,
            active_lanes: 16 * m,
            l3_lines: 16 * m,
            useful_bytes: 64 * m,
            ..Default::default()
        },
    ];
    let blocks = [BlockCounters { executions: m, active_lanes: 16 * m }];
    let lines = line_stats(&info, &sites, &blocks, [16, 16, 1]);
    assert!(lines[0].advice.iter().any(|a| a.text.starts_with("strided access")), "{:?}", lines[0].advice);
    ReportPage {
        title: "Kernel transpose on gen9-gt2 <model>".into(),
        summary: vec![
            ("SIMD width".into(), "16: SIMD32 needs more than 128 x 32 B of registers".into()),
            ("threads per work-group".into(), "16".into()),
            ("occupancy".into(), "3 work-groups per sub-slice (barrier registers bind)".into()),
            ("modelled time".into(), "12.5 us".into()),
        ],
        cycles: vec![
            CycleShare { name: "compute".into(), cycles: 4000.0 },
            CycleShare { name: "L3".into(), cycles: 17000.0 },
            CycleShare { name: "SLM".into(), cycles: 17000.0 },
            CycleShare { name: "memory".into(), cycles: 2000.0 },
            CycleShare { name: "barrier".into(), cycles: 800.0 },
        ],
        total_cycles: 17000.0,
        occupancy: vec![
            OccupancyLimit {
                name: "hardware threads".into(),
                work_groups: 3,
                detail: "56 threads / 16".into(),
                binding: true,
            },
            OccupancyLimit {
                name: "barrier registers".into(),
                work_groups: 16,
                detail: "16 barriers".into(),
                binding: false,
            },
            OccupancyLimit { name: "SLM".into(), work_groups: 64, detail: "64 KiB / 1 KiB".into(), binding: false },
        ],
        lines,
        source_files: info.source_files.clone(),
        source_texts: info.source_texts.clone(),
    }
}

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SOFTCL_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, stderr).
fn run_chromium(binary: &Path, profile: &Path, page: &Path, args: &[String]) -> (String, String) {
    let mut child = Command::new(binary)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("waiting for chromium").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("chromium did not finish within 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("chromium's output");
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

const COLUMN_SOURCE: &str = "\
__kernel void column(__global const float *in, __global float *out, int n) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * n + x] = in[y * n + x] * 2.0f;
}
__kernel void twice(__global float *out) {
    out[get_global_id(0)] *= 2.0f;
}
";

/// Runs `name` of COLUMN_SOURCE on `dev` over `global` in work-groups of `local`, with
/// buffers `inp` and `out` and `n` = 64.
fn launch(dev: &GenDevice, name: &str, inp: &mut [f32], out: &mut [f32], global: [usize; 3], local: [usize; 3]) {
    let program = compile_source(COLUMN_SOURCE, "", dev.target()).unwrap_or_else(|e| panic!("{}", e.log));
    let native = program.codegen(dev.target()).unwrap();
    let kernel = native.kernel(name).unwrap();
    let mut args = vec![0u8; kernel.info.arg_block_size];
    let pointers = if name == "column" {
        vec![inp.as_mut_ptr() as u64, out.as_mut_ptr() as u64]
    } else {
        vec![out.as_mut_ptr() as u64]
    };
    for (k, p) in pointers.iter().enumerate() {
        args[kernel.info.args[k].offset..][..8].copy_from_slice(&p.to_ne_bytes());
    }
    if name == "column" {
        args[kernel.info.args[2].offset..][..4].copy_from_slice(&64i32.to_ne_bytes());
    }
    // SAFETY: the block holds this kernel's arguments, its pointers into memory this test
    // keeps alive until the launch returns.
    let launch = unsafe { Launch::new(kernel, &args, &[], if global[1] > 1 { 2 } else { 1 }, [0; 3], global, local) };
    dev.launch(&launch).unwrap_or_else(|e| panic!("{name}: {e:?}"));
}

/// `SOFTCL_GEN_REPORT=html:<file>` (the sink set on the device, as tests run in parallel):
/// a real Gen launch of a column access writes the kernel's page with its source line and
/// the guide's advice; a second kernel gets `<stem>.<kernel>.html`; a later launch of the
/// first kernel rewrites its page.
#[test]
fn a_gen_launch_writes_its_html_page() {
    let dir = std::env::temp_dir().join(format!("softcl-gen-html-launch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.html");
    let dev = GenDevice::default().with_report_sink(ReportSink::Html(path.clone()));
    let mut inp: Vec<f32> = (0..64 * 64).map(|i| i as f32).collect();
    let mut out = vec![0f32; 64 * 64];
    launch(&dev, "column", &mut inp, &mut out, [64, 64, 1], [1, 16, 1]);
    assert_eq!((out[0], out[64 * 64 - 1]), (0.0, 2.0 * (64 * 64 - 1) as f32), "the kernel ran");
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<title>Kernel column on gen9-gt2</title>"), "{html}");
    assert!(html.contains("    out[y * n + x] = in[y * n + x] * 2.0f;"), "the source line: {html}");
    assert!(html.contains("column access: 16 lines per message; lanes of one row would read 1"), "{html}");
    assert!(html.contains("column access: 16 lines per message; lanes of one row would write 1"), "{html}");
    // The hot line is shaded and linked from the worst lines.
    assert!(html.contains("<tr id=\"L0-3\" class=\"hot\">"), "{html}");
    assert!(html.contains("(binding)") && html.contains("Where the cycles go"), "{html}");

    launch(&dev, "twice", &mut inp, &mut out, [256, 1, 1], [64, 1, 1]);
    let second = std::fs::read_to_string(dir.join("report.twice.html")).unwrap();
    assert!(second.contains("<title>Kernel twice on gen9-gt2</title>"), "{second}");
    assert!(second.contains("out[get_global_id(0)] *= 2.0f;"), "{second}");
    assert!(
        std::fs::read_to_string(&path).unwrap().contains("Kernel column"),
        "the first page stays the first kernel's"
    );

    // Row work-groups: the same kernel now reads one line per message; its page says so.
    launch(&dev, "column", &mut inp, &mut out, [64, 64, 1], [16, 1, 1]);
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(!html.contains("column access"), "{html}");
    assert!(html.contains("&lt;16,1,1&gt;"), "{html}");

    if let Some(binary) = chromium() {
        let (dom, log) = run_chromium(&binary, &dir.join("profile"), &path, &["--dump-dom".to_string()]);
        assert!(dom.contains(READY_MARKER), "the page's script did not run to its end\nDOM: {dom}\nlog: {log}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_report_page_renders_in_headless_chromium() {
    let Some(binary) = chromium() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("chromium is missing (scripts/install-deps.sh installs the Debian package)");
        }
        eprintln!("SKIPPED: chromium is not installed (apt-get install chromium, or set SOFTCL_CHROMIUM)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("softcl-gen-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("report.html");
    std::fs::write(&html, render(&page())).unwrap();

    // The script runs to its end: the marker it sets is in the DOM.
    let (dom, log) = run_chromium(&binary, &dir.join("profile"), &html, &["--dump-dom".to_string()]);
    assert!(dom.contains(READY_MARKER), "the page's script did not run to its end\nDOM: {dom}\nlog: {log}");
    assert!(dom.contains("strided access: every lane writes its own 64-byte line (16 lines per message"), "{dom}");
    assert!(dom.contains("SLM stride 16 puts 16 lanes on one bank: pad to 17"), "{dom}");
    assert!(dom.contains("// &lt;column &amp; \"bank\"&gt;"), "the source is escaped: {dom}");

    // No script error in the console, and a screenshot that is not blank.
    let png = dir.join("report.png");
    let (_, log) = run_chromium(
        &binary,
        &dir.join("profile"),
        &html,
        &[
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
            format!("--screenshot={}", png.display()),
            "--window-size=1200,1400".to_string(),
        ],
    );
    let errors: Vec<&str> =
        log.lines().filter(|l| l.contains("Uncaught") || (l.contains(":CONSOLE") && l.contains("Error"))).collect();
    assert!(errors.is_empty(), "script errors:\n{}", errors.join("\n"));
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap_or_else(|e| panic!("no screenshot ({e}): {log}")));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let channels = frame.color_type.samples();
    let pixels = &pixels[..frame.buffer_size()];
    assert!(channels >= 3, "{:?}", frame.color_type);
    let rgb = |chunk: &[u8]| (chunk[0], chunk[1], chunk[2]);
    let first = rgb(&pixels[..channels]);
    let distinct = pixels.chunks(channels).filter(|c| rgb(c) != first).count();
    assert!(distinct > 1000, "the screenshot is blank (all but {distinct} pixels are {first:?})");
    // Red: the hottest line's shading and the chart's L3 part.
    let red = pixels.chunks(channels).filter(|c| c[0] > 190 && c[1] < 150 && c[2] < 150).count();
    assert!(red > 500, "no heat or chart colour on the screenshot ({red} red pixels)");
    std::fs::remove_dir_all(&dir).ok();
}
