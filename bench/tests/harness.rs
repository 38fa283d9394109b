//! Runs the benchmark harness at `small` size on SoftCL's CPU device through the system ICD
//! loader and checks that it exits 0 and reports every kernel (and both launch probes)
//! verified. No timing is asserted.
//!
//! Needs the release driver: `cargo build --release -p softcl-icd` (the harness registers
//! target/release/libsoftcl.so, or SOFTCL_ICD_LIB, unless OCL_ICD_VENDORS is set).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_softcl-bench");

/// The kernel names the harness lists (`--list`), first word of each line.
fn listed_kernels() -> Vec<String> {
    let out = Command::new(BIN).arg("--list").output().expect("run softcl-bench --list");
    assert!(out.status.success(), "softcl-bench --list failed");
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
}

#[test]
fn small_run_on_softcl_cpu_verifies_every_kernel() {
    let kernels = listed_kernels();
    assert!(kernels.len() >= 13, "expected twelve kernels and the launch probes, listed {kernels:?}");
    let json_path = std::env::temp_dir().join(format!("softcl-bench-test-{}.json", std::process::id()));
    let out = Command::new(BIN)
        .args(["--platform", "SoftCL", "--device", "cpu", "--size", "small", "--reps", "1", "--json"])
        .arg(&json_path)
        .output()
        .expect("run softcl-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "softcl-bench exited with {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let json = std::fs::read_to_string(&json_path).expect("the --json file was written");
    let _ = std::fs::remove_file(&json_path);

    // One result per kernel on the one device, each verified; the launch probes give two.
    let results: Vec<&str> = json.lines().filter(|l| l.trim_start().starts_with("{\"kernel\"")).collect();
    assert_eq!(results.len(), kernels.len() + 1, "results in the JSON:\n{json}");
    assert!(results.iter().all(|r| r.contains("\"device\": \"SoftCL\"") && r.contains("\"verified\": true")), "{json}");
    for k in kernels.iter().filter(|k| *k != "launch") {
        let row = results.iter().find(|r| r.starts_with(&format!("    {{\"kernel\": \"{k}\",")));
        let row = row.unwrap_or_else(|| panic!("no result for {k} in\n{json}"));
        assert!(row.contains("\"kernel_ms\"") && row.contains("\"roof_pct\""), "{row}");
        assert!(stderr.contains(&format!("[bench] {k} ")) && stderr.contains("verified"), "{stderr}");
        // The Markdown table has the kernel's row with a time, not FAILED.
        let table_row =
            stdout.lines().find(|l| l.starts_with(&format!("| {k} |"))).unwrap_or_else(|| panic!("{stdout}"));
        assert!(!table_row.contains("FAILED"), "{table_row}");
    }
    assert!(results.iter().filter(|r| r.contains("\"us_per_launch\"")).count() == 2, "{json}");
    assert!(stdout.contains("| kernel | size | SoftCL ms | metric | % of roof |"), "{stdout}");
    // The issue-6 target summary is printed for SoftCL (PoCL's ratios are absent here).
    assert!(stdout.contains("| target | measured | met |"), "{stdout}");
    assert!(stdout.contains("| mad_float within 1.5x of mad_float16 (GFLOP/s) |"), "{stdout}");
}

#[test]
fn bad_arguments_are_refused() {
    for args in [
        &["--size", "huge"][..],
        &["--kernels", "nosuchkernel"],
        &["--reps", "0"],
        &["--rounds", "0"],
        &["--device", "fpga"],
    ] {
        let out = Command::new(BIN).args(args).output().expect("run softcl-bench");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn rounds_print_each_round_and_the_median() {
    let out = Command::new(BIN)
        .args(["--platform", "SoftCL", "--size", "small", "--reps", "1", "--rounds", "3", "--kernels", "vecadd,launch"])
        .output()
        .expect("run softcl-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for round in 1..=3 {
        assert!(stdout.contains(&format!("### Round {round} of 3")), "{stdout}");
    }
    let median = stdout.split("### Median of 3 rounds").nth(1).unwrap_or_else(|| panic!("{stdout}"));
    assert!(median.contains("- Median of 3 rounds:"), "{median}");
    assert!(median.lines().any(|l| l.starts_with("| vecadd |") && !l.contains("FAILED")), "{median}");
    assert!(median.contains("| target | measured | met |"), "{median}");
}
