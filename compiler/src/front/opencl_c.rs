//! OpenCL C -> SPIR-V: `clang-15 ... -emit-llvm -x cl - -o - | llvm-spirv-15 - -o -`,
//! piped, without temporary files (see /work/shared/reference/toolchain.md).
//!
//! clang-15's optimiser sometimes produces LLVM that llvm-spirv-15 cannot translate: `freeze`
//! instructions (jump threading, loop unswitching) and integers narrowed to odd widths (an
//! `i3` for `switch (x & 7)`). Unoptimised output contains neither, and the back end
//! optimises with LLVM 22 in any case, so when the translator rejects the optimised module
//! the source is compiled again without clang's optimiser and that module is translated.
//!
//! Builds for a target with `line_tables` (the Gen device) carry line tables
//! (`-gline-tables-only`, `Target::line_tables`): the translator writes an `OpLine`
//! before each instruction, which the SPIR-V reader keeps as the instruction's source
//! location. Should the translator reject a module only for its debug information, the last
//! attempt compiles without line tables.

use super::options::{BuildOptions, ClStd};
use crate::{BuildError, BuildErrorKind, Target};
use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Output, Stdio};

/// The default clang binary; overridden by the environment variable `SOFTCL_CLANG`.
pub const DEFAULT_CLANG: &str = "clang-15";
/// The default translator binary; overridden by `SOFTCL_LLVM_SPIRV`.
pub const DEFAULT_LLVM_SPIRV: &str = "llvm-spirv-15";

/// SPIR-V produced from source, with clang's warnings.
#[derive(Debug)]
pub struct SpirvOutput {
    /// The module's bytes as the translator wrote them.
    pub bytes: Vec<u8>,
    /// clang's diagnostics (warnings) of a successful compilation.
    pub log: String,
}

/// A program of the toolchain: the binary to run and the variable that overrides it.
pub(super) struct Tool {
    binary: String,
    env: &'static str,
}

impl Tool {
    pub(super) fn new(env: &'static str, default: &str) -> Tool {
        let binary = match std::env::var(env) {
            Ok(value) if !value.trim().is_empty() => value,
            _ => default.to_string(),
        };
        Tool { binary, env }
    }

    /// Runs the tool without input and collects its output.
    pub(super) fn run(&self, args: &[String]) -> Result<Output, BuildError> {
        let child = self.spawn(args, Stdio::null())?;
        child.wait_with_output().map_err(|e| wait_error(self, &e))
    }

    fn spawn(&self, args: &[String], stdin: Stdio) -> Result<Child, BuildError> {
        Command::new(&self.binary)
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BuildError {
                kind: BuildErrorKind::CompilerNotAvailable,
                log: format!(
                    "cannot run the OpenCL C compiler tool '{}': {e} (set {} to its path)",
                    self.binary, self.env
                ),
            })
    }
}

/// How one run of clang is set up: the first runs with the options' optimisation level and
/// the target's line tables; the retries (see the module documentation) turn them off.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    optimize: bool,
    line_tables: bool,
}

/// The clang command line for `options` at language version `cl_std` and `target`, reading the
/// source from stdin and writing LLVM bitcode to stdout.
fn clang_arguments(options: &BuildOptions, cl_std: ClStd, target: &Target, attempt: Attempt) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "-c".into(),
        "--target=spir64".into(),
        format!("-cl-std={}", cl_std.as_str()),
        if attempt.optimize { "-O2" } else { "-O0" }.into(),
        "-cl-kernel-arg-info".into(),
        "-fno-color-diagnostics".into(),
        // OpenCL C inherits C99's `inline`: a plain `inline` function is only an inline
        // definition, and a call the optimiser does not inline (any call at -O0, big callers
        // at -O2: hashcat's bcrypt kernel) is left to an external definition nobody provides,
        // so the program failed to link. Kernel sources are written for drivers that accept
        // them; GNU89 semantics emit the definition (`static inline` and `extern inline` keep
        // their meaning).
        "-fgnu89-inline".into(),
        // clang's loop and SLP vectorizers work for nobody here: the back end vectorizes
        // across work-items (and LLVM 22 runs its own vectorizers after), while the SLP
        // vectorizer's `freeze` of combined compares (`x == 0 || y == 0 || ...` became a
        // frozen <4 x i1>) is an instruction llvm-spirv-15 cannot translate, which sent such
        // kernels down the unoptimised path.
        "-fno-vectorize".into(),
        "-fno-slp-vectorize".into(),
    ];
    if attempt.line_tables {
        // Lines only (no variables or types): ~5-15% more toolchain time.
        args.push("-gline-tables-only".into());
    }
    // clang defines no __OPENCL_VERSION__; the application's -D/-U come after and win.
    args.push(format!("-D__OPENCL_VERSION__={}", target.opencl_version));
    // OpenCL C 2.1's channel data type, which clang-15's opencl-c-base.h lacks (cl.h's
    // CL_UNORM_INT_101010_2).
    args.push("-DCLK_UNORM_INT_101010_2=0x10E0".into());
    args.extend(options.clang_args.iter().cloned());
    let disabled: Vec<String> = target
        .disabled_features
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .map(|f| format!("-{}", f.trim_start_matches(['+', '-'])))
        .collect();
    if !disabled.is_empty() {
        args.push("-Xclang".into());
        args.push(format!("-cl-ext={}", disabled.join(",")));
    }
    args.extend(["-emit-llvm", "-x", "cl", "-", "-o", "-"].map(String::from));
    args
}

/// What clang reads: `source` after lines that undefine the feature macros clang-15 defines
/// whatever `-cl-ext` says (its opencl-c-base.h defines `__opencl_c_atomic_scope_device`,
/// `__opencl_c_read_write_images`, `cl_khr_subgroup_ballot` ... for SPIR, and
/// `__IMAGE_SUPPORT__` is always predefined) when the device does not advertise them. clang
/// offers a built-in function only while its feature macro is defined, so using one is then
/// a compile error. A `#line 1` keeps the diagnostics' line numbers those of `source`.
pub fn source_with_prelude(source: &str, target: &Target) -> Vec<u8> {
    let mut text = String::new();
    let mut undefine = |name: &str| {
        text.push_str("#undef ");
        text.push_str(name);
        text.push('\n');
    };
    for feature in &target.disabled_features {
        let name = feature.trim().trim_start_matches(['+', '-']);
        let is_macro = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if is_macro {
            undefine(name);
        }
        if name == "__opencl_c_images" {
            undefine("__IMAGE_SUPPORT__");
        }
    }
    if text.is_empty() {
        return source.as_bytes().to_vec();
    }
    text.push_str("#line 1\n");
    // A byte-order mark is only skipped at the start of the file.
    text.push_str(source.strip_prefix('\u{feff}').unwrap_or(source));
    text.into_bytes()
}

/// The translator's command line.
pub fn llvm_spirv_arguments() -> Vec<String> {
    ["--preserve-ocl-kernel-arg-type-metadata-through-string", "--spirv-gen-kernel-arg-name-md", "-", "-o", "-"]
        .map(String::from)
        .to_vec()
}

fn describe_status(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "terminated by a signal".to_string(),
    }
}

fn clean_log(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).replace("<stdin>", "<source>")
}

fn wait_error(tool: &Tool, e: &std::io::Error) -> BuildError {
    BuildError { kind: BuildErrorKind::CompilerNotAvailable, log: format!("waiting for '{}' failed: {e}", tool.binary) }
}

/// What the first program of a two-stage pipe did.
struct FirstStage {
    status: ExitStatus,
    stderr: Vec<u8>,
}

/// Runs `first args < input | second args`, feeding the input and draining the first
/// stage's diagnostics on their own threads so that no pipe can fill up while another is
/// being waited on.
fn pipe(
    first: &Tool,
    first_args: &[String],
    input: Vec<u8>,
    second: &Tool,
    second_args: &[String],
) -> Result<(FirstStage, Output), BuildError> {
    let mut producer = first.spawn(first_args, Stdio::piped())?;
    let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
        (producer.stdin.take(), producer.stdout.take(), producer.stderr.take())
    else {
        let _ = producer.kill();
        let _ = producer.wait();
        return Err(BuildError {
            kind: BuildErrorKind::CompilerNotAvailable,
            log: format!("cannot connect to the pipes of '{}'", first.binary),
        });
    };
    let consumer = match second.spawn(second_args, Stdio::from(stdout)) {
        Ok(child) => child,
        Err(e) => {
            drop(stdin);
            let _ = producer.kill();
            let _ = producer.wait();
            return Err(e);
        }
    };
    let writer = std::thread::spawn(move || {
        // The driver lives in an application that has not necessarily ignored SIGPIPE (Rust
        // programs do, C programs do not): if the tool exits before reading all its input,
        // the signal would terminate the application. Blocked on this thread, the write fails
        // with EPIPE instead, and the tool's status and log say why it stopped.
        let _ = nix::sys::signal::pthread_sigmask(
            nix::sys::signal::SigmaskHow::SIG_BLOCK,
            Some(&nix::sys::signal::SigSet::from(nix::sys::signal::Signal::SIGPIPE)),
            None,
        );
        let _ = stdin.write_all(&input);
    });
    let diagnostics = std::thread::spawn(move || {
        let mut log = Vec::new();
        let _ = stderr.read_to_end(&mut log);
        log
    });
    let output = consumer.wait_with_output();
    let status = producer.wait();
    let _ = writer.join();
    let stderr = diagnostics.join().unwrap_or_default();
    let status = status.map_err(|e| wait_error(first, &e))?;
    let output = output.map_err(|e| wait_error(second, &e))?;
    Ok((FirstStage { status, stderr }, output))
}

fn translation_failed(clang_log: &str, output: &Output) -> BuildError {
    BuildError {
        kind: BuildErrorKind::CompileFailed,
        log: format!(
            "{clang_log}SPIR-V translation failed ({}): {}",
            describe_status(output.status),
            clean_log(&output.stderr).trim()
        ),
    }
}

/// Compiles OpenCL C `source` to SPIR-V (an error of options that do not suit `target`, as a
/// `-cl-std` the device lacks, comes before the toolchain runs).
pub fn compile_to_spirv(source: &str, options: &BuildOptions, target: &Target) -> Result<SpirvOutput, BuildError> {
    let cl_std = options.cl_std_for(target)?;
    let first = Attempt { optimize: options.optimize, line_tables: target.line_tables };
    let clang = Tool::new("SOFTCL_CLANG", DEFAULT_CLANG);
    let translator = Tool::new("SOFTCL_LLVM_SPIRV", DEFAULT_LLVM_SPIRV);
    let translator_args = llvm_spirv_arguments();

    let (compiled, translated) = pipe(
        &clang,
        &clang_arguments(options, cl_std, target, first),
        source_with_prelude(source, target),
        &translator,
        &translator_args,
    )?;
    let clang_log = clean_log(&compiled.stderr);
    if !compiled.status.success() {
        let log = if clang_log.trim().is_empty() {
            format!("'{}' failed ({}) without a diagnostic", clang.binary, describe_status(compiled.status))
        } else {
            clang_log
        };
        return Err(BuildError { kind: BuildErrorKind::CompileFailed, log });
    }
    if translated.status.success() {
        return Ok(SpirvOutput { bytes: translated.stdout, log: clang_log });
    }
    // See the module documentation: translate clang's unoptimised module instead, then,
    // as a last resort, one without line tables.
    let mut retries = Vec::new();
    if first.optimize {
        retries.push(Attempt { optimize: false, ..first });
    }
    if first.line_tables {
        retries.push(Attempt { optimize: false, line_tables: false });
    }
    for retry in retries {
        let (recompiled, retranslated) = pipe(
            &clang,
            &clang_arguments(options, cl_std, target, retry),
            source_with_prelude(source, target),
            &translator,
            &translator_args,
        )?;
        if recompiled.status.success() && retranslated.status.success() {
            return Ok(SpirvOutput { bytes: retranslated.stdout, log: clang_log });
        }
    }
    // Report the first failure: it is the one the application's options produced.
    Err(translation_failed(&clang_log, &translated))
}
