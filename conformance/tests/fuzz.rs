//! The differential fuzzer's generator and its regression corpus.
//!
//! - The generator gives the same kernel for a seed every time, and its kernels build
//!   (clang accepts them, and so does the driver on both devices).
//! - Every kernel of `conformance/fuzz-corpus/*.cl` (a kernel the fuzzer once found wrong,
//!   reduced, with its launch in its header) runs in every configuration of the fuzzer
//!   (the CPU device scalar, at its heuristic width and at 4, 8 and 16 lanes; the Gen device
//!   at SIMD8, 16 and 32; PoCL when installed, unless the kernel's header has a
//!   `// not on pocl:` line), each in a child process of the `softcl-fuzz` binary, and gives
//!   the scalar run's results.

use softcl_conformance::fuzz::gen::{generate, GenOptions};
use softcl_conformance::fuzz::run::{configs, judge, run_all};
use softcl_conformance::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[test]
fn generator_is_deterministic() {
    let opts = GenOptions::default();
    let first: Vec<String> = (0..200).map(|s| generate(s, &opts).source()).collect();
    let again: Vec<String> = (0..200).map(|s| generate(s, &opts).source()).collect();
    assert_eq!(first, again, "a seed must always give the same kernel");
    let distinct: std::collections::HashSet<&String> = first.iter().collect();
    assert_eq!(distinct.len(), first.len(), "two seeds gave the same kernel");
    // Disabling a feature changes what is generated, deterministically too.
    let without = GenOptions { disabled: vec!["loops".into()] };
    assert_eq!(generate(7, &without).source(), generate(7, &without).source());
    assert!(!generate(7, &without).source().contains("for (int k"));
}

/// clang's verdict on one OpenCL C source (`-fsyntax-only`: the language, not the
/// optimiser or the SPIR-V translator).
fn clang_accepts(src: &str) -> Result<(), String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(clang_command())
        .args([
            "-fsyntax-only",
            "--target=spir64",
            "-cl-std=CL3.0",
            // As the driver builds it: with the generic address space and program-scope
            // variables, without pipes and device-side enqueue.
            "-Xclang",
            "-cl-ext=-__opencl_c_pipes,-__opencl_c_device_enqueue",
            "-Werror=implicit-function-declaration",
            "-x",
            "cl",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", clang_command()))?;
    child.stdin.take().expect("stdin").write_all(src.as_bytes()).map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn generated_kernels_build() {
    // The generator's side: every kernel is valid OpenCL C 3.0, with every feature and
    // without the loads below the work-item's own index. Seed 41060 once passed a
    // `__local` struct's address to a helper taking a private one.
    let without = GenOptions { disabled: vec!["neighbours".into()] };
    for opts in [GenOptions::default(), without.clone()] {
        for seed in (0..40).chain([41060]) {
            let src = generate(seed, &opts).source();
            // clang-15 alone does not know Intel's sub-group functions (the driver declares
            // them): the driver's side below builds those kernels.
            if src.contains("intel_sub_group") {
                continue;
            }
            clang_accepts(&src).unwrap_or_else(|e| panic!("seed {seed}:\n{e}\n{src}"));
        }
    }
    // The driver's side, on both devices (the CPU device at its heuristic width). Seeds 6
    // and 12 once failed to build: clang's optimiser left an i2 or i3 that llvm-spirv-15
    // rejects ("InvalidBitWidth"), which the front end's retry mends.
    // Then the first kernels with Intel's sub-group functions.
    let intel: Vec<String> = (0..40)
        .map(|seed| generate(seed, &GenOptions::default()).source())
        .filter(|src| src.contains("intel_sub_group"))
        .take(4)
        .collect();
    assert_eq!(intel.len(), 4, "seeds 0-39 have Intel's sub-group functions");
    for_each_device(|dev| {
        let env = dev.env();
        let sources = [1, 2, 3, 5, 6, 12].map(|seed| generate(seed, &without).source());
        for src in sources.iter().chain(&intel) {
            let p = env.try_build(src, "-cl-std=CL3.0").unwrap_or_else(|e| panic!("{e}\n{src}"));
            kernel_of(&p, "fuzz");
        }
    });
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz-corpus")
}

#[test]
fn corpus_kernels_match_scalar_in_every_configuration() {
    init_loader(); // the children inherit OCL_ICD_VENDORS
    let exe = Path::new(env!("CARGO_BIN_EXE_softcl-fuzz"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("conformance/fuzz-corpus")
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus is empty");
    let all = configs();
    let jobs = host_threads().min(4);
    let mut failed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a corpus kernel");
        let (launch, _) = softcl_conformance::fuzz::gen::parse_header(&text).expect("a corpus header");
        // A kernel that caught a defect of PoCL says so, and does not run there.
        let configs: Vec<_> =
            all.iter().filter(|c| c.name != "pocl" || !text.contains("// not on pocl:")).cloned().collect();
        let results = run_all(exe, &configs, file, jobs, Duration::from_secs(300));
        let failures = judge(&results, launch.items());
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        println!("{name}: {}", if failures.is_empty() { "ok".to_string() } else { format!("{failures:?}") });
        for f in failures {
            failed.push(format!("{name}: {} {}: {}", f.config, f.class, f.detail.lines().next().unwrap_or("")));
        }
    }
    assert!(failed.is_empty(), "corpus kernels that differ from the scalar run:\n{}", failed.join("\n"));
}
