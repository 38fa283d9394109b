//! SoftCL's persistent kernel cache (runtime/src/program_cache.rs), through the loader.
//!
//! Every build runs in a child process of this test binary (the `child` entry, ignored in
//! normal runs) with `SOFTCL_CACHE=1`, `SOFTCL_CACHE_DIR` in a fresh temporary directory (never
//! the user's cache), `SOFTCL_CACHE_TRACE=1` (hits, misses and stores on stderr) and
//! `SOFTCL_CLANG` pointing at a wrapper script that counts its runs and execs clang-15: a hit
//! must not run the toolchain at all.

use softcl_conformance::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CHILD: &str = "SOFTCL_KCACHE_TEST_CHILD";

/// `out[i] = i * 3 + ADD`, with a `#warning` so that the build log is not empty.
const SOURCE: &str = r#"
#ifndef ADD
#define ADD 1
#endif
#warning kernel cache test
__kernel void k(__global int* out) {
    int i = get_global_id(0);
    out[i] = i * 3 + ADD;
}
"#;

/// A child: builds `KC_SOURCE` (or the SPIR-V file `KC_IL`) with `KC_OPTIONS` on `KC_DEVICE`
/// (`KC_THREADS` times at once on as many threads), runs `k` and checks `out[i] == i * 3 +
/// KC_ADD`, then prints the build log between markers.
#[test]
#[ignore = "a child process of the kernel cache tests"]
fn child() {
    let Ok(device_name) = std::env::var(CHILD) else { return };
    let kind = if device_name == "gpu" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    let options = std::env::var("KC_OPTIONS").unwrap_or_default();
    let add: i32 = std::env::var("KC_ADD").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let threads: usize = std::env::var("KC_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let il = std::env::var_os("KC_IL").map(|p| std::fs::read(p).expect("the SPIR-V file"));
    let source = std::env::var("KC_SOURCE").unwrap_or_else(|_| SOURCE.to_string());
    let logs: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let env = device(kind).expect("the device under test").env();
                    let program = match &il {
                        Some(bytes) => program_from_il(&env.context, bytes).unwrap_or_else(|e| panic!("{e}")),
                        None => program_from_source(&env.context, &source),
                    };
                    let program = build_program(program, &[env.dev()], &options).unwrap_or_else(|e| panic!("{e}"));
                    let log = program_build_info_string(program.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
                    let status: cl_build_status = program_build_info(program.raw(), env.dev(), CL_PROGRAM_BUILD_STATUS);
                    assert_eq!(status, CL_BUILD_SUCCESS as cl_build_status);
                    let k = kernel_of(&program, "k");
                    // What the application can ask about the program and kernel: the same
                    // whether the build was compiled or came from the cache.
                    let info = format!(
                        "names {:?} type {} arg {:?} {:?} private {} local {} multiple {}",
                        program_info_string(program.raw(), CL_PROGRAM_KERNEL_NAMES),
                        program_build_info::<cl_program_binary_type>(program.raw(), env.dev(), CL_PROGRAM_BINARY_TYPE),
                        // (IL without names has no argument information.)
                        il.is_none().then(|| kernel_arg_info_string(k.raw(), 0, CL_KERNEL_ARG_NAME)),
                        il.is_none().then(|| kernel_arg_info_string(k.raw(), 0, CL_KERNEL_ARG_TYPE_NAME)),
                        kernel_wg_info::<cl_ulong>(k.raw(), env.dev(), CL_KERNEL_PRIVATE_MEM_SIZE),
                        kernel_wg_info::<cl_ulong>(k.raw(), env.dev(), CL_KERNEL_LOCAL_MEM_SIZE),
                        kernel_wg_info::<usize>(k.raw(), env.dev(), CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE),
                    );
                    let b = env.buffer(CL_MEM_WRITE_ONLY, 67 * 4);
                    k.set_mem(0, &b);
                    env.run(&k, &[67], None);
                    env.finish();
                    let got: Vec<i32> = env.read(&b, 67);
                    assert_eq!(got, (0..67).map(|i| i * 3 + add).collect::<Vec<i32>>());
                    format!("{log}>>>\nINFO<<<{info}")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a building thread")).collect()
    });
    for log in logs {
        println!("BUILD LOG<<<{log}>>>");
    }
}

/// A temporary directory with a cache directory and a counting clang wrapper.
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let root = std::env::temp_dir().join(format!("softcl-kcache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("cache")).expect("create the sandbox");
        let wrapper = root.join("clang-wrapper");
        let script = format!("#!/bin/sh\necho run >> '{}'\nexec clang-15 \"$@\"\n", root.join("clang-runs").display());
        std::fs::write(&wrapper, script).expect("write the clang wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod the wrapper");
        Sandbox { root }
    }

    fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// How many times clang has run.
    fn clang_runs(&self) -> usize {
        std::fs::read_to_string(self.root.join("clang-runs")).map(|s| s.lines().count()).unwrap_or(0)
    }

    fn entries(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.cache())
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "kc")).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    fn command(&self, device: &str, env: &[(&str, &str)]) -> Command {
        let exe = std::env::current_exe().expect("test binary path");
        let mut cmd = Command::new(exe);
        cmd.args(["child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD, device)
            .env("SOFTCL_CACHE", "1")
            .env("SOFTCL_CACHE_DIR", self.cache())
            .env("SOFTCL_CACHE_TRACE", "1")
            .env("SOFTCL_CLANG", self.root.join("clang-wrapper"))
            .env_remove("SOFTCL_LLVM_SPIRV")
            .env_remove("CL_CONFIG_USE_VECTORIZER")
            .env_remove("CL_CONFIG_CPU_VECTORIZER_MODE")
            .env_remove("SOFTCL_STREAMING_STORES")
            .env_remove("SOFTCL_DUMP_LLVM")
            .env_remove("SOFTCL_CODEGEN_TIMES")
            .env_remove("SOFTCL_VECTORIZER_REPORT");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs a child; panics with its output unless it succeeded.
    fn run(&self, device: &str, env: &[(&str, &str)]) -> Child {
        let out = self.command(device, env).output().expect("run the test binary");
        Child::checked(out)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

struct Child {
    stdout: String,
    stderr: String,
}

impl Child {
    fn checked(out: Output) -> Child {
        let c = Child {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(out.status.success(), "child failed\n--- stdout\n{}\n--- stderr\n{}", c.stdout, c.stderr);
        assert!(c.stdout.contains("BUILD LOG<<<"), "the child did not run:\n{}", c.stdout);
        c
    }
    fn trace(&self, what: &str) -> usize {
        self.stderr.lines().filter(|l| l.starts_with(&format!("softcl cache: {what}"))).count()
    }
    fn info(&self) -> String {
        self.stdout.split("INFO<<<").nth(1).and_then(|s| s.split(">>>").next()).unwrap_or_default().to_string()
    }
    fn logs(&self) -> Vec<String> {
        self.stdout
            .split("BUILD LOG<<<")
            .skip(1)
            .map(|s| s.split(">>>").next().unwrap_or_default().to_string())
            .collect()
    }
}

#[test]
fn a_second_build_is_a_hit_that_runs_no_toolchain_and_gives_the_same_log() {
    for device in ["cpu", "gpu"] {
        let sb = Sandbox::new(&format!("hit-{device}"));
        let cold = sb.run(device, &[]);
        assert_eq!((cold.trace("miss"), cold.trace("stored"), cold.trace("hit")), (1, 1, 0), "{}", cold.stderr);
        let runs = sb.clang_runs();
        assert!(runs >= 1, "the cold build runs clang");
        assert_eq!(sb.entries().len(), 1);

        let warm = sb.run(device, &[]);
        assert_eq!(warm.trace("hit"), 1, "{}", warm.stderr);
        assert_eq!(sb.clang_runs(), runs, "a hit must not run clang");
        // The same build log (clang's #warning) either way.
        assert!(cold.logs()[0].contains("kernel cache test"), "{}", cold.logs()[0]);
        assert_eq!(warm.logs(), cold.logs());
        // The same program and kernel information.
        assert!(cold.info().contains("names \"k\""), "{}", cold.info());
        assert_eq!(warm.info(), cold.info());
    }
}

#[test]
fn a_change_of_options_source_or_knob_is_a_miss() {
    let sb = Sandbox::new("miss");
    sb.run("cpu", &[]);
    let mut runs = sb.clang_runs();
    let changes: [&[(&str, &str)]; 4] = [
        &[("KC_OPTIONS", "-DADD=5"), ("KC_ADD", "5")],
        &[("KC_SOURCE", &SOURCE.replace("i * 3", "i * 3 + 0"))],
        &[("CL_CONFIG_CPU_VECTORIZER_MODE", "1")],
        &[("SOFTCL_STREAMING_STORES", "0")],
    ];
    for (n, env) in changes.iter().enumerate() {
        let c = sb.run("cpu", env);
        assert_eq!((c.trace("miss"), c.trace("hit")), (1, 0), "change {n}: {}", c.stderr);
        assert!(sb.clang_runs() > runs, "change {n} must compile again");
        runs = sb.clang_runs();
        // And that build is now cached on its own key.
        let again = sb.run("cpu", env);
        assert_eq!(again.trace("hit"), 1, "change {n} again: {}", again.stderr);
        assert_eq!(sb.clang_runs(), runs);
    }
    assert_eq!(sb.entries().len(), 5);
}

#[test]
fn a_truncated_or_corrupt_entry_is_ignored_and_rebuilt() {
    let sb = Sandbox::new("corrupt");
    sb.run("cpu", &[]);
    let entry = sb.entries().pop().expect("an entry");
    let good = std::fs::read(&entry).unwrap();
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 4] = [
        ("truncated", |b| b.truncate(b.len() / 2)),
        ("empty", |b| b.clear()),
        ("one byte flipped", |b| {
            let mid = b.len() / 2;
            b[mid] ^= 0x10
        }),
        ("garbage appended", |b| b.extend_from_slice(b"garbage")),
    ];
    for (what, damage) in damages {
        let mut bytes = good.clone();
        damage(&mut bytes);
        std::fs::write(&entry, &bytes).unwrap();
        let runs = sb.clang_runs();
        let c = sb.run("cpu", &[]);
        assert_eq!((c.trace("invalid entry"), c.trace("stored")), (1, 1), "{what}: {}", c.stderr);
        assert!(sb.clang_runs() > runs, "{what}: rebuilt");
        // The rebuild replaced the entry with a valid one.
        let next = sb.run("cpu", &[]);
        assert_eq!(next.trace("hit"), 1, "{what}: {}", next.stderr);
    }
}

#[test]
fn softcl_cache_0_disables_the_cache() {
    let sb = Sandbox::new("off");
    for _ in 0..2 {
        let c = sb.run("cpu", &[("SOFTCL_CACHE", "0")]);
        assert_eq!(c.trace(""), 0, "{}", c.stderr);
    }
    assert_eq!(sb.clang_runs(), 2, "both builds compile");
    assert!(sb.entries().is_empty());
}

#[test]
fn an_unwritable_cache_directory_does_not_fail_the_build() {
    let sb = Sandbox::new("unwritable");
    // A regular file where the directory should be: nothing can be created under it.
    let file = sb.root.join("not-a-directory");
    std::fs::write(&file, b"x").unwrap();
    let dir = file.join("cache");
    let dir = dir.to_str().unwrap();
    let c = sb.run("cpu", &[("SOFTCL_CACHE_DIR", dir)]);
    assert_eq!(c.trace("cannot store"), 1, "{}", c.stderr);
}

#[test]
fn concurrent_builds_leave_a_valid_entry() {
    let sb = Sandbox::new("concurrent");
    // Four processes, each building on three threads at once.
    let children: Vec<_> = (0..4)
        .map(|_| {
            sb.command("cpu", &[("KC_THREADS", "3")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a child")
        })
        .collect();
    for child in children {
        Child::checked(child.wait_with_output().expect("a child"));
    }
    assert_eq!(sb.entries().len(), 1, "one entry, no temporary files left: {:?}", list(&sb.cache()));
    assert_eq!(list(&sb.cache()).len(), 1, "{:?}", list(&sb.cache()));
    let runs = sb.clang_runs();
    let c = sb.run("cpu", &[]);
    assert_eq!(c.trace("hit"), 1, "{}", c.stderr);
    assert_eq!(sb.clang_runs(), runs);
}

fn list(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn il_programs_are_cached_on_both_devices() {
    let sb = Sandbox::new("il");
    let spirv = sb.root.join("k.spv");
    let bc = Command::new("clang-15")
        .args(["-c", "--target=spir64", "-cl-std=CL2.0", "-O2", "-emit-llvm", "-x", "cl", "-", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(SOURCE.replace("#warning kernel cache test", "").as_bytes())?;
            c.wait_with_output()
        })
        .expect("clang-15");
    let out = Command::new("llvm-spirv-15")
        .args(["-", "-o", spirv.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&bc.stdout)?;
            c.wait()
        })
        .expect("llvm-spirv-15");
    assert!(out.success());
    let il = spirv.to_str().unwrap();
    for device in ["cpu", "gpu"] {
        let cold = sb.run(device, &[("KC_IL", il)]);
        assert_eq!((cold.trace("miss"), cold.trace("stored")), (1, 1), "{device}: {}", cold.stderr);
        let warm = sb.run(device, &[("KC_IL", il)]);
        assert_eq!(warm.trace("hit"), 1, "{device}: {}", warm.stderr);
        assert_eq!(warm.logs(), cold.logs());
        assert_eq!(warm.info(), cold.info());
    }
    assert_eq!(sb.clang_runs(), 0, "IL needs no clang");
    assert_eq!(sb.entries().len(), 2, "one entry per device target");
}

#[test]
fn sources_with_an_include_are_not_cached() {
    let sb = Sandbox::new("include");
    let header = sb.root.join("add.h");
    std::fs::write(&header, "#define ADD 4\n").unwrap();
    let source = format!("#include \"{}\"\n{SOURCE}", header.display());
    for _ in 0..2 {
        let c = sb.run("cpu", &[("KC_SOURCE", &source), ("KC_ADD", "4")]);
        assert_eq!(c.trace(""), 0, "{}", c.stderr);
    }
    assert_eq!(sb.clang_runs(), 2);
    assert!(sb.entries().is_empty());
}
