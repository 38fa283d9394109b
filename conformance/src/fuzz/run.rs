//! Running one kernel file in every configuration, each in a child process (the driver reads
//! its knobs once per process), and comparing the results with the scalar run.
//!
//! A child is the `softcl-fuzz` binary run as `softcl-fuzz --child <config> <file>`: it
//! builds the kernel on the configuration's device, runs it with the launch and input data
//! of the file's header ([`super::gen::parse_header`], [`super::gen::input_data`],
//! [`super::gen::kernel_args`]) and
//! prints `out`, `buf` and `cnt` as hexadecimal words. The parent kills a child that runs
//! past its timeout and reads a signal as a crash.

use super::gen::{input_data, kernel_args, parse_header, COUNTER_INIT};
use crate::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How one configuration runs a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub name: &'static str,
    pub kind: DeviceKind,
    /// Environment variables of the child (the knobs of every configuration are removed
    /// first).
    pub env: Vec<(&'static str, String)>,
}

/// The configuration every other is compared with.
pub const REFERENCE: &str = "cpu-scalar";

/// The knobs a child's environment is cleared of before its configuration's are set.
const KNOBS: &[&str] = &[
    "CL_CONFIG_USE_VECTORIZER",
    "CL_CONFIG_CPU_VECTORIZER_MODE",
    "SOFTCL_GEN_SIMD",
    "SOFTCL_GEN_REPORT",
    "SOFTCL_VECTORIZER_REPORT",
    "SOFTCL_TEST_PLATFORM",
];

/// Where the fuzzer saves failing kernels by default: `<target dir>/fuzz`.
pub fn default_out_dir() -> PathBuf {
    PathBuf::from(env!("SOFTCL_CONFORMANCE_TARGET_DIR")).join("fuzz")
}

/// Another platform's ICD file, from the environment variable `var` or, when that is unset,
/// `default` where the file exists.
fn other_icd(var: &str, default: Option<&str>) -> Option<PathBuf> {
    let p = std::env::var_os(var).map(PathBuf::from).or_else(|| default.map(PathBuf::from))?;
    p.is_file().then_some(p)
}

/// The other platforms a kernel can also be compared on: PoCL's CPU device (its ICD file at
/// `/etc/OpenCL/vendors/pocl.icd`, or `SOFTCL_FUZZ_POCL_ICD`) and Intel's CPU runtime (only
/// when `SOFTCL_FUZZ_INTEL_ICD` names its ICD file: it is not a Debian package).
const OTHER_PLATFORMS: &[(&str, &str, Option<&str>, &str)] = &[
    ("pocl", "SOFTCL_FUZZ_POCL_ICD", Some("/etc/OpenCL/vendors/pocl.icd"), "Portable Computing Language"),
    ("intel", "SOFTCL_FUZZ_INTEL_ICD", None, "Intel(R) OpenCL"),
];

/// Whether configuration `name` is another platform's, not SoftCL's.
pub fn is_other_platform(name: &str) -> bool {
    OTHER_PLATFORMS.iter().any(|(n, ..)| *n == name)
}

/// Every configuration: the scalar reference first, then the CPU device at its heuristic
/// width and at 4, 8 and 16 lanes, the Gen device at SIMD8, 16 and 32, and the CPU devices
/// of the other platforms that are installed ([`OTHER_PLATFORMS`]).
pub fn configs() -> Vec<Config> {
    let cpu = |name, vars: &[(&'static str, &str)]| {
        let mut env: Vec<(&'static str, String)> = vars.iter().map(|(k, v)| (*k, v.to_string())).collect();
        env.push(("SOFTCL_VECTORIZER_REPORT", "1".into()));
        Config { name, kind: DeviceKind::Cpu, env }
    };
    let gen = |name, simd: &str| Config {
        name,
        kind: DeviceKind::Gpu,
        env: vec![("SOFTCL_GEN_SIMD", simd.into()), ("SOFTCL_GEN_REPORT", "1".into())],
    };
    let mut all = vec![
        cpu(REFERENCE, &[("CL_CONFIG_USE_VECTORIZER", "False")]),
        cpu("cpu-auto", &[]),
        cpu("cpu-w4", &[("CL_CONFIG_CPU_VECTORIZER_MODE", "4")]),
        cpu("cpu-w8", &[("CL_CONFIG_CPU_VECTORIZER_MODE", "8")]),
        cpu("cpu-w16", &[("CL_CONFIG_CPU_VECTORIZER_MODE", "16")]),
        gen("gen-simd8", "8"),
        gen("gen-simd16", "16"),
        gen("gen-simd32", "32"),
    ];
    for &(name, var, default, platform) in OTHER_PLATFORMS {
        if let Some(icd) = other_icd(var, default) {
            all.push(Config {
                name,
                kind: DeviceKind::Cpu,
                env: vec![("SOFTCL_TEST_PLATFORM", platform.into()), ("OCL_ICD_VENDORS", icd.display().to_string())],
            });
        }
    }
    all
}

/// The configuration named `name`.
pub fn config(name: &str) -> Option<Config> {
    configs().into_iter().find(|c| c.name == name)
}

/// What one configuration gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `out`, `buf` and `cnt`, one after the other; `note` says how the kernel ran
    /// (vectorized or not).
    Ok { data: Vec<u32>, note: String },
    /// clBuildProgram failed: the error and the build log.
    Build(String),
    /// An OpenCL call after the build failed.
    Run(String),
    /// The child died of a signal.
    Crash { signal: i32, detail: String },
    /// The child exited abnormally without a signal (a panic).
    Error(String),
    /// The child ran past its timeout and was killed.
    Timeout,
    /// The configuration does not apply to the kernel (PoCL and partial work-groups).
    Skipped(String),
}

impl Outcome {
    /// A short class for reports and reduction: "ok", "build", "run", "crash(SIGSEGV)",
    /// "error", "timeout", "skipped".
    pub fn class(&self) -> String {
        match self {
            Outcome::Ok { .. } => "ok".into(),
            Outcome::Build(_) => "build".into(),
            Outcome::Run(_) => "run".into(),
            Outcome::Crash { signal, .. } => format!("crash({})", signal_name(*signal)),
            Outcome::Error(_) => "error".into(),
            Outcome::Timeout => "timeout".into(),
            Outcome::Skipped(_) => "skipped".into(),
        }
    }
}

fn signal_name(sig: i32) -> String {
    match sig {
        4 => "SIGILL".into(),
        6 => "SIGABRT".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        9 => "SIGKILL".into(),
        11 => "SIGSEGV".into(),
        _ => format!("signal {sig}"),
    }
}

/// How a configuration failed, next to the reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub config: String,
    /// "mismatch" or an [`Outcome::class`].
    pub class: String,
    /// The build log's first error line, the first differing word, the signal's detail.
    pub detail: String,
}

impl Failure {
    /// The failure's signature for the reducer: the class, with the first line of the
    /// build log for build failures (digits and quoted names left out, so that a build that
    /// fails for another reason, a reduced kernel that no longer declares a variable, is
    /// told apart).
    pub fn signature(&self) -> String {
        if self.class != "build" {
            return self.class.clone();
        }
        let mut s = String::new();
        let mut quoted = false;
        for ch in self.detail.lines().next().unwrap_or("").chars() {
            match ch {
                '\'' | '`' | '"' => quoted = !quoted,
                '0'..='9' => {}
                _ if !quoted => s.push(ch),
                _ => {}
            }
        }
        format!("build: {s}")
    }
}

/// Runs the child for `config` on the kernel file `file` with the binary `exe`, killing it
/// after `timeout`.
pub fn run_child(exe: &Path, config: &Config, file: &Path, timeout: Duration) -> (Outcome, Duration) {
    let start = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.arg("--child").arg(config.name).arg(file);
    for k in KNOBS {
        cmd.env_remove(k);
    }
    for (k, v) in &config.env {
        cmd.env(k, v);
    }
    if std::env::var_os("SOFTCL_CACHE").is_none() {
        cmd.env("SOFTCL_CACHE", "0");
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (Outcome::Error(format!("cannot run {}: {e}", exe.display())), start.elapsed()),
    };
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = pipe.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out_t = reader(Box::new(child.stdout.take().expect("piped stdout")));
    let err_t = reader(Box::new(child.stderr.take().expect("piped stderr")));
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let elapsed = start.elapsed();
    let Some(status) = status else { return (Outcome::Timeout, elapsed) };
    (outcome_of(status, &stdout, &stderr), elapsed)
}

/// The last `lines` lines of a child's stderr, without the driver's report lines.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("softcl vectorizer:") && !l.starts_with("SoftCL report:"))
        .collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn outcome_of(status: std::process::ExitStatus, stdout: &str, stderr: &str) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return Outcome::Crash { signal, detail: tail(stderr, 6) };
    }
    let after = |tag: &str| stdout.split_once(tag).map(|(_, rest)| rest.trim().to_string());
    match status.code() {
        Some(0) => {
            let Some(hex) = after("SOFTCL-FUZZ-RESULT") else {
                return Outcome::Error(format!("no result printed\n{}", tail(stderr, 6)));
            };
            let data: Result<Vec<u32>, _> =
                hex.lines().next().unwrap_or("").split_whitespace().map(|w| u32::from_str_radix(w, 16)).collect();
            let mut note = stdout.lines().find_map(|l| l.strip_prefix("SOFTCL-FUZZ-NOTE ")).unwrap_or("").to_string();
            // The Gen device's launch line: "kernel fuzz: SIMD16 (why), vectorized; ...".
            if let Some(l) = stderr.lines().find(|l| l.starts_with("SoftCL report: kernel fuzz: SIMD")) {
                let how = l.split_once("), ").map(|(_, r)| r.split(';').next().unwrap_or("")).unwrap_or("");
                note = how.to_string();
            }
            match data {
                Ok(data) => Outcome::Ok { data, note },
                Err(e) => Outcome::Error(format!("unreadable result: {e}")),
            }
        }
        Some(3) => Outcome::Build(after("SOFTCL-FUZZ-BUILD-FAILED").unwrap_or_default()),
        Some(4) => Outcome::Run(after("SOFTCL-FUZZ-RUN-FAILED").unwrap_or_default()),
        Some(5) => Outcome::Skipped(after("SOFTCL-FUZZ-SKIPPED").unwrap_or_default()),
        code => Outcome::Error(format!("exit status {code:?}\n{}", tail(stderr, 8))),
    }
}

/// Runs `file` in each of `configs` with up to `jobs` children at once.
pub fn run_all(
    exe: &Path,
    configs: &[Config],
    file: &Path,
    jobs: usize,
    timeout: Duration,
) -> Vec<(Config, Outcome, Duration)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(Outcome, Duration)>>> = Mutex::new(vec![None; configs.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, configs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(cfg) = configs.get(i) else { break };
                let r = run_child(exe, cfg, file, timeout);
                results.lock().expect("results")[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().expect("results");
    configs
        .iter()
        .zip(results)
        .map(|(c, r)| {
            let (o, t) = r.unwrap_or((Outcome::Error("not run".into()), Duration::ZERO));
            (c.clone(), o, t)
        })
        .collect()
}

/// The failures of `results` next to the reference's (the first `cpu-scalar` entry): every
/// configuration that did not give the reference's words, and the reference itself when it
/// did not run.
pub fn judge(results: &[(Config, Outcome, Duration)], items: usize) -> Vec<Failure> {
    let reference = results.iter().find(|(c, _, _)| c.name == REFERENCE).map(|(_, o, _)| o);
    let mut failures = Vec::new();
    for (c, o, _) in results {
        let fail = |class: String, detail: String| Failure { config: c.name.to_string(), class, detail };
        match o {
            Outcome::Ok { data, .. } => {
                if let Some(Outcome::Ok { data: want, .. }) = reference {
                    if let Some(d) = difference(want, data, items) {
                        failures.push(fail("mismatch".into(), d));
                    }
                }
            }
            Outcome::Skipped(_) => {}
            Outcome::Build(text) => {
                // The first line is the error code, the build log follows.
                let log = text.split_once('\n').map_or("", |(_, log)| log);
                failures.push(fail(o.class(), first_error(log)))
            }
            Outcome::Run(msg) | Outcome::Error(msg) => failures.push(fail(o.class(), msg.clone())),
            Outcome::Crash { detail, .. } => failures.push(fail(o.class(), detail.clone())),
            Outcome::Timeout => failures.push(fail(o.class(), String::new())),
        }
    }
    failures
}

/// The line of a build log that says what failed: the first that says "error", else the
/// first that says "failed", else the last; clang's warnings and notes, and the source lines
/// and carets it quotes, are passed over.
pub fn first_error(log: &str) -> String {
    let said: Vec<&str> = log
        .lines()
        .filter(|l| {
            !l.trim().is_empty()
                && !l.starts_with(' ')
                && !l.contains(": warning:")
                && !l.contains(": note:")
                && !l.ends_with(" generated.")
        })
        .collect();
    let find = |w: &str| said.iter().find(|l| l.to_lowercase().contains(w)).copied();
    find("error").or_else(|| find("failed")).or_else(|| said.last().copied()).unwrap_or("").to_string()
}

/// Where two results differ: the first differing word, named by buffer and index, and how
/// many words differ.
pub fn difference(want: &[u32], got: &[u32], items: usize) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} words, the reference has {}", got.len(), want.len()));
    }
    let diffs: Vec<usize> = (0..want.len()).filter(|&i| want[i] != got[i]).collect();
    let &first = diffs.first()?;
    let name = if first < items {
        format!("out[{first}]")
    } else if first < 5 * items {
        format!("buf[{}]", first - items)
    } else {
        format!("cnt[{}]", first - 5 * items)
    };
    Some(format!(
        "{name} = 0x{:08x}, scalar 0x{:08x} ({} of {} words differ)",
        got[first],
        want[first],
        diffs.len(),
        want.len()
    ))
}

/// The child's work: builds and runs the kernel file on `config_name`'s device and prints
/// the results for [`run_child`]; returns the exit status.
pub fn child_main(config_name: &str, file: &Path) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            println!("SOFTCL-FUZZ-RUN-FAILED reading {}: {e}", file.display());
            return 4;
        }
    };
    let (launch, data_seed) = match parse_header(&text) {
        Ok(h) => h,
        Err(e) => {
            println!("SOFTCL-FUZZ-RUN-FAILED bad header: {e}");
            return 4;
        }
    };
    let Some(cfg) = config(config_name) else {
        println!("SOFTCL-FUZZ-RUN-FAILED unknown configuration {config_name}");
        return 4;
    };
    if cfg.name == "pocl" && launch.non_uniform() {
        println!("SOFTCL-FUZZ-SKIPPED PoCL has no partial work-groups");
        return 5;
    }
    if cfg.name == "pocl" && text.contains("work_group_") {
        println!("SOFTCL-FUZZ-SKIPPED PoCL has no work-group collective functions");
        return 5;
    }
    if cfg.name == "pocl" && text.contains("sub_group_") {
        println!("SOFTCL-FUZZ-SKIPPED the kernel calls sub-group functions, which PoCL 3.1 lacks");
        return 5;
    }
    if cfg.name == "pocl" && text.contains("global int gslot[") {
        println!("SOFTCL-FUZZ-SKIPPED PoCL 3.1 has no program-scope __global variables");
        return 5;
    }
    let Some(dev) = device(cfg.kind) else {
        println!("SOFTCL-FUZZ-SKIPPED no {} device", cfg.kind);
        return 5;
    };
    let env = dev.env();
    let program = match env.try_build(&text, "-cl-std=CL3.0") {
        Ok(p) => p,
        Err(f) => {
            println!("SOFTCL-FUZZ-BUILD-FAILED {}\n{}", error_name(f.code), f.log);
            return 3;
        }
    };
    let log = program_build_info_string(program.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
    if let Some(l) = log.lines().find(|l| l.contains("kernel `fuzz`:")) {
        let what = l.split_once("kernel `fuzz`:").map_or("", |(_, r)| r.trim());
        println!("SOFTCL-FUZZ-NOTE {what}");
    }
    let kernel = match create_kernel(&program, "fuzz") {
        Ok(k) => k,
        Err(e) => {
            println!("SOFTCL-FUZZ-RUN-FAILED {e}");
            return 4;
        }
    };
    let n = launch.items();
    let (inp, bufd) = input_data(data_seed, n);
    let b_in = env.buffer_from(CL_MEM_READ_ONLY, &inp);
    let b_out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0xdead_beefu32; n]);
    let b_buf = env.buffer_from(CL_MEM_READ_WRITE, &bufd);
    let b_cnt = env.buffer_from(CL_MEM_READ_WRITE, &COUNTER_INIT);
    for (i, b) in [&b_in, &b_out, &b_buf, &b_cnt].into_iter().enumerate() {
        kernel.set_mem(i as cl_uint, b);
    }
    let (ka, kb) = kernel_args(data_seed);
    kernel.set_arg(4, &ka);
    kernel.set_arg(5, &kb);
    let offset = launch.offset.iter().any(|&o| o != 0).then_some(&launch.offset[..]);
    let event = match try_enqueue_nd(env.q(), &kernel, offset, &launch.global, Some(&launch.local), &[]) {
        Ok(e) => e,
        Err(e) => {
            println!("SOFTCL-FUZZ-RUN-FAILED {e}");
            return 4;
        }
    };
    // SAFETY: one valid event handle.
    if let Err(e) = unsafe { cl_try!(clWaitForEvents(1, &event.raw())) } {
        println!("SOFTCL-FUZZ-RUN-FAILED {e}");
        return 4;
    }
    let mut words: Vec<u32> = env.read(&b_out, n);
    words.extend(env.read::<i32>(&b_buf, 4 * n).into_iter().map(|v| v as u32));
    words.extend(env.read::<u32>(&b_cnt, 8));
    let hex: Vec<String> = words.iter().map(|w| format!("{w:x}")).collect();
    println!("SOFTCL-FUZZ-RESULT {}", hex.join(" "));
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_buffer() {
        let items = 2;
        let want: Vec<u32> = (0..18).collect();
        let mut got = want.clone();
        assert_eq!(difference(&want, &got, items), None);
        got[3] = 99;
        got[17] = 5;
        let d = difference(&want, &got, items).unwrap();
        assert!(d.starts_with("buf[1] = 0x00000063"), "{d}");
        assert!(d.contains("2 of 18 words differ"), "{d}");
        got[3] = 3;
        assert!(difference(&want, &got, items).unwrap().starts_with("cnt[7]"));
    }

    #[test]
    fn the_error_line_of_a_build_log() {
        let log = "<source>:39:53: warning: use of logical '||' with constant operand\n    int i0 = 1;\n\
                   ^~\n1 warning generated.\nSPIR-V translation failed (exit code 10): InvalidBitWidth\n";
        assert_eq!(first_error(log), "SPIR-V translation failed (exit code 10): InvalidBitWidth");
        assert_eq!(first_error("a\n<source>:3:1: error: bad\nb\n"), "<source>:3:1: error: bad");
    }

    #[test]
    fn build_signatures_ignore_numbers_and_names() {
        let f = |d: &str| Failure { config: "c".into(), class: "build".into(), detail: d.into() }.signature();
        assert_eq!(f("error at line 12: `x3` is bad"), f("error at line 40: `y` is bad"));
        assert_ne!(f("error: use of undeclared identifier 'x'"), f("codegen: struct member store"));
    }
}
