//! OpenCL C -> SPIR-V: `clang-15 ... -emit-llvm -x cl - -o - | llvm-spirv-15 - -o -`,
//! piped, without temporary files (see /work/shared/reference/toolchain.md).
//!
//! clang-15's optimiser sometimes produces LLVM that llvm-spirv-15 cannot translate:
//! `freeze` instructions (loop unswitching, jump threading), integers narrowed to odd widths
//! (an `i3` for a `switch` on a value known to lie in 0..4), or a module on which the
//! translator dies on an assertion. The first attempt is the only one for a module that
//! translates; when the translator refuses it, these are tried in turn, the first whose
//! module translates wins, and the build log gets a note naming the refusal and the rescue:
//!
//! 1. clang's unoptimised (`-O0`) module. It has neither `freeze` nor odd widths, but keeps
//!    constant expressions the translator also refuses (a `bitcast` of a `<1 x i32>` for
//!    `as_uchar4` of a constant).
//! 2. clang's module before its optimiser (`-Xclang -disable-llvm-passes`, as LLVM
//!    assembly) with native integer widths added to its data layout (`-n8:16:32:64`: the
//!    spir64 layout declares none, so InstCombine narrows integers to any width), then
//!    clang's `-O2` pipeline on it (`-x ir`). This mends the odd widths.
//! 3. The module of step 2 through a prefix of the `-O2` pipeline: `-mllvm
//!    -opt-bisect-limit=N` runs only the first N optional passes, and skipping optional
//!    passes never changes a module's meaning. N is tried at 7/8, 6/8, ... 1/8 of the
//!    pipeline: the passes that leave what the translator refuses run late (loop
//!    unswitching's `freeze`), while the early ones fold the constant expressions of step 1.
//!
//! 4. The module of step 2 through the whole `-O2` pipeline as LLVM assembly, with each
//!    `freeze` written as the value it freezes (`select i1 true, T x, T x`, which the
//!    translator takes) and assembled again without optimisation: for a `freeze` that the
//!    early passes already make (InstCombine), when the unoptimised module is refused too.
//!    A `freeze` only pins a value an optimisation speculated, which a kernel free of
//!    undefined behaviour never uses; SPIR-V has no such instruction.
//! 5. The module of step 2 with no optional pass at all (`-opt-bisect-limit=0`).
//!
//! When steps 2-4 fail, they run again on the module of step 2 with each bitcast of a
//! one-element integer vector constant written as the vector it is
//! ([`scalar_one_element_constants`]): clang folds `as_char4((uint)-2)` into `bitcast (<1 x
//! i32> <i32 -2> to <4 x i8>)`, which the translator refuses in step 1's module too; step 5
//! uses that module.
//!
//! Step 1 comes first so that kernels it rescued before steps 2 and 3 existed keep the module
//! and the build time they had, except for a refusal of a `freeze`, where step 4 on the
//! first attempt's module comes first: the unoptimised module keeps every local in a
//! variable, which the middle end sees as memory (a division beside a remainder of the same
//! operands, which the optimiser computes from frozen operands, is common: OpenCV's `morph`
//! kept its locals in work-item state across its barrier and stored its result by a
//! scatter, 1.7x as slow).
//!
//! The back end optimises with LLVM 22 in any case, but SoftCL's own passes run before it
//! and see what the rescued module holds. A build with `-cl-opt-disable`, whose first
//! attempt is the `-O0` module, goes through steps 2 and 3 as well. When nothing translates,
//! the error is the first attempt's translator message.
//!
//! Builds for a target with `line_tables` (the Gen device) carry line tables
//! (`-gline-tables-only`, `Target::line_tables`): the translator writes an `OpLine`
//! before each instruction, which the SPIR-V reader keeps as the instruction's source
//! location. Should the translator reject a module only for its debug information, the last
//! attempt compiles at `-O0` without line tables.

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

    /// Runs the tool with `input` on its stdin and collects its output.
    fn run_with_input(&self, args: &[String], input: Vec<u8>) -> Result<Output, BuildError> {
        let mut child = self.spawn(args, Stdio::piped())?;
        let writer = child.stdin.take().map(|stdin| feed(stdin, input));
        let output = child.wait_with_output().map_err(|e| wait_error(self, &e));
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        output
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
    // Intel's sub-group extensions, which clang-15 does not know (`intel_sub_groups`), and
    // cl_ext_float_atomics, whose macro clang-15 defines for OpenCL C 2.0 and later only: an
    // extension the device lists has its macro in every version.
    args.extend(super::intel_sub_groups::macro_options(target));
    if target.offers("cl_ext_float_atomics") {
        args.push("-Dcl_ext_float_atomics=1".into());
    }
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

/// `args` for a `source` that calls sub-group functions, with clang's hoisting and sinking
/// of code common to both sides of a branch turned off. LLVM 15 lets those move a
/// `convergent` call to where more work-items run it (`if (c) r = sub_group_broadcast_first(x);
/// else r = sub_group_broadcast_first(y);` became one call of a phi after the branch),
/// which changes what a non-uniform sub-group function combines. Only for such sources (the
/// text names `sub_group`): elsewhere the merged code is what the vectorizer wants.
fn with_convergence_kept(mut args: Vec<String>, source: &str) -> Vec<String> {
    if source.contains("sub_group") {
        let at = args.len().saturating_sub(6).min(args.len());
        for flag in ["-simplifycfg-sink-common=false", "-simplifycfg-hoist-common=false"] {
            args.insert(at, flag.into());
            args.insert(at, "-mllvm".into());
        }
    }
    args
}

/// What clang reads: `source` after lines that undefine the feature macros clang-15 defines
/// whatever `-cl-ext` says (its opencl-c-base.h defines `__opencl_c_atomic_scope_device`,
/// `__opencl_c_read_write_images`, `cl_khr_subgroup_ballot` ... for SPIR, and
/// `__IMAGE_SUPPORT__` is always predefined) when the device does not advertise them. clang
/// offers a built-in function only while its feature macro is defined, so using one is then
/// a compile error. Then the declarations of Intel's sub-group functions for a source that
/// calls them (`intel_sub_groups`). A `#line 1` keeps the diagnostics' line numbers those of
/// `source`.
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
    text.push_str(&super::intel_sub_groups::declarations(source, target));
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
    [
        "--preserve-ocl-kernel-arg-type-metadata-through-string",
        "--spirv-gen-kernel-arg-name-md",
        // Intel's sub-group functions as their instructions (`intel_sub_groups`); float
        // atomics (`cl_ext_float_atomics`) as OpAtomicFAddEXT / FMinEXT / FMaxEXT;
        // `sub_group_rotate` as OpGroupNonUniformRotateKHR.
        "--spirv-ext=+SPV_INTEL_subgroups,+SPV_EXT_shader_atomic_float_add,+SPV_EXT_shader_atomic_float_min_max,\
         +SPV_KHR_subgroup_rotate",
        "-",
        "-o",
        "-",
    ]
    .map(String::from)
    .to_vec()
}

fn describe_status(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "terminated by a signal".to_string(),
    }
}

/// The most bytes of a tool's diagnostics a build log keeps: clang warns once per element of
/// some large constant tables, and a 19 MB log helps no one (clang stops after 19 errors
/// by itself, not after any number of warnings).
const LOG_LIMIT: usize = 256 << 10;

/// A tool's diagnostics as the build log shows them: the source called `<source>`, and at
/// most [`LOG_LIMIT`] bytes (cut at a line's end, with a line saying how much was left out).
fn clean_log(raw: &[u8]) -> String {
    let (kept, left_out) = if raw.len() > LOG_LIMIT {
        let end = raw[..LOG_LIMIT].iter().rposition(|&b| b == b'\n').map_or(LOG_LIMIT, |i| i + 1);
        (&raw[..end], raw.len() - end)
    } else {
        (raw, 0)
    };
    let mut text = String::from_utf8_lossy(kept).replace("<stdin>", "<source>");
    if left_out > 0 {
        text.push_str(&format!("... ({left_out} more bytes of diagnostics left out)\n"));
    }
    text
}

fn wait_error(tool: &Tool, e: &std::io::Error) -> BuildError {
    BuildError { kind: BuildErrorKind::CompilerNotAvailable, log: format!("waiting for '{}' failed: {e}", tool.binary) }
}

/// Writes `input` to a tool's stdin on a thread of its own, closing it after.
fn feed(mut stdin: std::process::ChildStdin, input: Vec<u8>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
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
    })
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
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
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
    let writer = feed(stdin, input);
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
        &with_convergence_kept(clang_arguments(options, cl_std, target, first), source),
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
    // See the module documentation: the unoptimised module, the optimiser again with native
    // integer widths, a shortened optimisation pipeline and, as a last resort, the
    // unoptimised module without line tables.
    let refusal = translator_message(&translated.stderr);
    let which = if first.optimize { "optimised" } else { "unoptimised" };
    let rescued = |bytes: Vec<u8>, how: &str| {
        let note = format!(
            "note: SPIR-V translation of the {which} module failed ({refusal}); the program was \
             built from {how}\n"
        );
        Ok(SpirvOutput { bytes, log: format!("{clang_log}{note}") })
    };
    let without_freeze = |count| format!("the optimised module with its {count} `freeze` instruction(s) removed");
    let front = FrontEnd {
        clang: &clang,
        translator: &translator,
        translator_args: &translator_args,
        options,
        cl_std,
        target,
        source,
    };
    if first.optimize && refusal.contains("freeze") {
        // Step 4 first for a `freeze` (see the module documentation).
        if let Some((bytes, count)) = front.first_without_freeze(first)? {
            return rescued(bytes, &without_freeze(count));
        }
    }
    if first.optimize {
        let retry = Attempt { optimize: false, ..first };
        if let Some(bytes) = front.compile_and_translate(retry)? {
            return rescued(bytes, "clang's unoptimised module");
        }
    }
    if let Some(ir) = front.unoptimised_ir(first)? {
        // Steps 2-4, then (clang folds `as_char4((uint)-2)` into a bitcast of a one-element
        // vector constant, which the translator refuses: SPIR-V vectors have 2, 3, 4, 8 or
        // 16 components) the same on the module with those constants written as the
        // vectors they are, and step 5.
        let repaired = scalar_one_element_constants(&ir);
        for ir in std::iter::once(&ir).chain(repaired.as_ref()) {
            if let Some(bytes) = front.optimise_and_translate(ir, None)? {
                return rescued(bytes, "a module optimised with native integer widths declared");
            }
            if let Some((bytes, limit, passes)) = front.shortened_pipeline(ir)? {
                return rescued(
                    bytes,
                    &format!("a module optimised by the first {limit} of {passes} optimisation passes"),
                );
            }
            if let Some((bytes, count)) = front.optimised_without_freeze(ir)? {
                return rescued(bytes, &without_freeze(count));
            }
        }
        if let Some(bytes) = front.optimise_and_translate(repaired.as_ref().unwrap_or(&ir), Some(0))? {
            return rescued(bytes, "the module without optimisation passes");
        }
    }
    if first.line_tables {
        let retry = Attempt { optimize: false, line_tables: false };
        if let Some(bytes) = front.compile_and_translate(retry)? {
            return rescued(bytes, "clang's unoptimised module without line tables");
        }
    }
    // Report the first failure: it is the one the application's options produced.
    Err(translation_failed(&clang_log, &translated))
}

/// The translator's message in one line: its diagnostics up to the crash report that
/// follows an assertion, without the translator's source location, at most 300 characters.
fn translator_message(raw: &[u8]) -> String {
    let log = clean_log(raw);
    let message: Vec<&str> = log
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("PLEASE submit") && !l.starts_with("Stack dump"))
        .filter(|l| !l.is_empty())
        .collect();
    let message = message.join(" ");
    let message = message.split(" [Src: ").next().unwrap_or(&message).trim();
    match message.char_indices().nth(300) {
        _ if message.is_empty() => "no diagnostic".to_string(),
        Some((end, _)) => format!("{}...", &message[..end]),
        None => message.to_string(),
    }
}

/// The integer widths declared native in the module's data layout for the rescue: clang-15's
/// spir64 layout declares none, so InstCombine narrows integers to any width (a `switch` on
/// `x % 5` that can only be 0..4 becomes a switch on an `i3`), which SPIR-V cannot express.
const NATIVE_INTEGERS: &str = "-n8:16:32:64";

/// `ir` (LLVM assembly) with [`NATIVE_INTEGERS`] added to its data layout, `None` when it has
/// no data layout or already declares native widths.
pub fn with_native_integers(ir: &str) -> Option<String> {
    const KEY: &str = "target datalayout = \"";
    let start = ir.find(KEY)? + KEY.len();
    let len = ir[start..].find('"')?;
    let layout = &ir[start..start + len];
    if layout.split('-').any(|part| part.starts_with('n')) {
        return None;
    }
    Some(format!("{}{layout}{NATIVE_INTEGERS}{}", &ir[..start], &ir[start + len..]))
}

/// `ir` (LLVM assembly) with each bitcast of a one-element integer vector constant to an
/// integer vector written as the vector it is (`bitcast (<1 x i32> <i32 -2> to <4 x i8>)`
/// -> `<i8 -2, i8 -1, i8 -1, i8 -1>`, little endian as spir64 is; LLVM folds a
/// scalar bitcast back into the one-element form); `None` when there is none.
pub fn scalar_one_element_constants(ir: &str) -> Option<String> {
    const OPEN: &str = "bitcast (<1 x i";
    if !ir.contains(OPEN) {
        return None;
    }
    let int_bits = |t: &str| t.strip_prefix('i').and_then(|b| b.parse::<u32>().ok()).filter(|&b| (1..=64).contains(&b));
    let mut out = String::with_capacity(ir.len());
    let mut rest = ir;
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + "bitcast (<1 x ".len()..];
        // `<1 x iN> <iN V> to <M x iK>)`
        let folded = (|| {
            let (ty, tail) = after.split_once("> <")?;
            let bits = int_bits(ty)?;
            let (inner, tail) = tail.split_once('>')?;
            let value: i128 = inner.strip_prefix(ty)?.trim().parse().ok()?;
            let tail = tail.strip_prefix(" to <")?;
            let (count, tail) = tail.split_once(" x ")?;
            let count: u32 = count.parse().ok()?;
            let (elem, tail) = tail.split_once('>')?;
            let tail = tail.strip_prefix(')')?;
            let k = int_bits(elem)?;
            if count * k != bits || k == 64 && count > 1 {
                return None;
            }
            let raw = (value as u128) & ((1u128 << bits) - 1);
            let parts: Vec<String> = (0..count)
                .map(|j| {
                    let v = (raw >> (j * k)) & ((1u128 << k) - 1);
                    // Printed signed, as LLVM does.
                    let signed = if k > 1 && v >> (k - 1) == 1 { v as i128 - (1i128 << k) } else { v as i128 };
                    format!("{elem} {signed}")
                })
                .collect();
            // The operand's type is written before the bitcast already.
            Some((format!("<{}>", parts.join(", ")), tail))
        })();
        match folded {
            Some((vector, tail)) => {
                out.push_str(&rest[..at]);
                out.push_str(&vector);
                rest = tail;
            }
            None => {
                out.push_str(&rest[..at + OPEN.len()]);
                rest = &rest[at + OPEN.len()..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The toolchain of the rescue attempts and the build they rescue.
struct FrontEnd<'a> {
    clang: &'a Tool,
    translator: &'a Tool,
    translator_args: &'a [String],
    options: &'a BuildOptions,
    cl_std: ClStd,
    target: &'a Target,
    source: &'a str,
}

impl FrontEnd<'_> {
    /// clang's arguments for the source with `attempt`'s flags, writing LLVM assembly instead
    /// of bitcode when `text`.
    fn source_arguments(&self, attempt: Attempt, text: bool) -> Vec<String> {
        let mut args =
            with_convergence_kept(clang_arguments(self.options, self.cl_std, self.target, attempt), self.source);
        if text {
            args[0] = "-S".into();
        }
        args
    }

    /// clang's input: the source with its prelude.
    fn input(&self) -> Vec<u8> {
        source_with_prelude(self.source, self.target)
    }

    /// Compiles with `attempt`'s flags and translates; `None` when either tool fails.
    fn compile_and_translate(&self, attempt: Attempt) -> Result<Option<Vec<u8>>, BuildError> {
        let (compiled, translated) = pipe(
            self.clang,
            &self.source_arguments(attempt, false),
            self.input(),
            self.translator,
            self.translator_args,
        )?;
        Ok((compiled.status.success() && translated.status.success()).then_some(translated.stdout))
    }

    /// clang's module before its optimiser runs (generated for `-O2`, so with the type-based
    /// alias information of optimised builds), as LLVM assembly with native integer widths
    /// declared; `None` when clang fails or the layout cannot be changed.
    fn unoptimised_ir(&self, first: Attempt) -> Result<Option<String>, BuildError> {
        let mut args = self.source_arguments(Attempt { optimize: true, ..first }, true);
        let at = args.iter().position(|a| a == "-emit-llvm").unwrap_or(args.len());
        args.splice(at..at, ["-Xclang", "-disable-llvm-passes"].map(String::from));
        let output = self.clang.run_with_input(&args, self.input())?;
        if !output.status.success() {
            return Ok(None);
        }
        Ok(with_native_integers(&String::from_utf8_lossy(&output.stdout)))
    }

    /// clang's `-O2` pipeline on `ir`, all of it or (with `limit`) its first `limit` optional
    /// passes, then the translator; `None` when either fails.
    fn optimise_and_translate(&self, ir: &str, limit: Option<usize>) -> Result<Option<Vec<u8>>, BuildError> {
        let (optimised, translated) = pipe(
            self.clang,
            &ir_arguments(limit.map(|l| l as i64)),
            ir.as_bytes().to_vec(),
            self.translator,
            self.translator_args,
        )?;
        Ok((optimised.status.success() && translated.status.success()).then_some(translated.stdout))
    }

    /// The `-O2` pipeline on `ir` as LLVM assembly, its `freeze` instructions written as the
    /// values they freeze ([`freeze_as_select`]), assembled at `-O0` and translated (step 4
    /// of the module documentation). Returns the SPIR-V and the number of `freeze`s; `None`
    /// when there were none or a tool failed.
    fn optimised_without_freeze(&self, ir: &str) -> Result<Option<(Vec<u8>, usize)>, BuildError> {
        let mut args = ir_arguments(None);
        args[0] = "-S".into();
        let optimised = self.clang.run_with_input(&args, ir.as_bytes().to_vec())?;
        if !optimised.status.success() {
            return Ok(None);
        }
        self.translate_without_freeze(&optimised.stdout)
    }

    /// The first attempt's module as LLVM assembly (clang's `-O2` on the source), translated
    /// without its `freeze` instructions as in [`Self::optimised_without_freeze`]: two tool
    /// runs, where the same from the module before optimisation takes three.
    fn first_without_freeze(&self, first: Attempt) -> Result<Option<(Vec<u8>, usize)>, BuildError> {
        let optimised = self.clang.run_with_input(&self.source_arguments(first, true), self.input())?;
        if !optimised.status.success() {
            return Ok(None);
        }
        self.translate_without_freeze(&optimised.stdout)
    }

    /// LLVM assembly `text` with each `freeze` written as the value it freezes, assembled at
    /// `-O0` and translated; `None` when it has no `freeze` or a tool failed.
    fn translate_without_freeze(&self, text: &[u8]) -> Result<Option<(Vec<u8>, usize)>, BuildError> {
        let (text, count) = freeze_as_select(&String::from_utf8_lossy(text));
        if count == 0 {
            return Ok(None);
        }
        let assemble: Vec<String> =
            ["-c", "--target=spir64", "-O0", "-fno-color-diagnostics", "-emit-llvm", "-x", "ir", "-", "-o", "-"]
                .map(String::from)
                .to_vec();
        let (assembled, translated) =
            pipe(self.clang, &assemble, text.into_bytes(), self.translator, self.translator_args)?;
        Ok((assembled.status.success() && translated.status.success()).then_some((translated.stdout, count)))
    }

    /// A long prefix of the `-O2` pipeline (`-opt-bisect-limit`: the passes skipped are
    /// optional, so the module keeps its meaning) whose module translates, searched in eighths
    /// from the top; the passes that leave what the translator refuses (`freeze` from loop
    /// unswitching, a module it asserts on) run late, while the early ones fold the constant
    /// expressions of the unoptimised module it refuses as well. Returns the SPIR-V, the limit
    /// and the number of passes.
    fn shortened_pipeline(&self, ir: &str) -> Result<Option<(Vec<u8>, usize, usize)>, BuildError> {
        let counted = self.clang.run_with_input(&ir_arguments(Some(-1)), ir.as_bytes().to_vec())?;
        if !counted.status.success() {
            return Ok(None);
        }
        let passes =
            String::from_utf8_lossy(&counted.stderr).lines().filter(|l| l.starts_with("BISECT: running pass")).count();
        for eighth in (1..8).rev() {
            let limit = passes * eighth / 8;
            if limit == 0 {
                continue;
            }
            if let Some(bytes) = self.optimise_and_translate(ir, Some(limit))? {
                return Ok(Some((bytes, limit, passes)));
            }
        }
        Ok(None)
    }
}

/// `ir` (LLVM assembly) with every `%x = freeze T v` written as `%x = select i1 true, T v,
/// T v`, and how many there were.
pub fn freeze_as_select(ir: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = String::with_capacity(ir.len());
    for line in ir.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let rewritten = body.split_once(" = freeze ").and_then(|(lhs, rest)| {
            if !lhs.trim_start().starts_with('%') || lhs.contains(';') {
                return None;
            }
            // Metadata attachments (`, !dbg !12`) follow the operand.
            let (operand, meta) = match rest.find(", !") {
                Some(k) => (&rest[..k], &rest[k..]),
                None => (rest, ""),
            };
            let (ty, value) = operand.trim_end().rsplit_once(' ')?;
            Some(format!("{lhs} = select i1 true, {ty} {value}, {ty} {value}{meta}"))
        });
        match rewritten {
            Some(text) => {
                count += 1;
                out.push_str(&text);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    (out, count)
}

/// clang's arguments to optimise LLVM assembly from stdin at `-O2` (with `-opt-bisect-limit`
/// when `limit` is given) and write bitcode to stdout.
fn ir_arguments(limit: Option<i64>) -> Vec<String> {
    let mut args: Vec<String> =
        ["-c", "--target=spir64", "-O2", "-fno-color-diagnostics", "-fno-vectorize", "-fno-slp-vectorize"]
            .map(String::from)
            .to_vec();
    if let Some(limit) = limit {
        args.push("-mllvm".into());
        args.push(format!("-opt-bisect-limit={limit}"));
    }
    args.extend(["-emit-llvm", "-x", "ir", "-", "-o", "-"].map(String::from));
    args
}

#[cfg(test)]
mod one_element_tests {
    use super::scalar_one_element_constants;

    #[test]
    fn one_element_vector_constants_become_scalars() {
        let ir = "  %66 = call <4 x i8> @f(<4 x i8> %65, <4 x i8> bitcast (<1 x i32> <i32 -2> to <4 x i8>))";
        assert_eq!(
            scalar_one_element_constants(ir).as_deref(),
            Some("  %66 = call <4 x i8> @f(<4 x i8> %65, <4 x i8> <i8 -2, i8 -1, i8 -1, i8 -1>)")
        );
        assert_eq!(scalar_one_element_constants("  ret <4 x i8> %x"), None);
    }
}

#[cfg(test)]
mod log_tests {
    use super::{clean_log, LOG_LIMIT};

    #[test]
    fn a_huge_log_is_cut_at_a_line_with_a_note() {
        let line = "<stdin>:1:2: warning: implicit conversion loses precision\n";
        let raw = line.repeat(20_000);
        let log = clean_log(raw.as_bytes());
        // (Each `<source>` is a byte longer than the `<stdin>` it replaces.)
        assert!(log.len() < LOG_LIMIT + LOG_LIMIT / 10, "{} bytes", log.len());
        assert!(log.starts_with("<source>:1:2: warning"));
        let note = log.lines().last().unwrap();
        assert!(note.starts_with("... (") && note.ends_with("more bytes of diagnostics left out)"), "{note}");
        assert_eq!(clean_log(line.as_bytes()), line.replace("<stdin>", "<source>"));
    }
}
