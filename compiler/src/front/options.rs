//! The options string of clBuildProgram / clCompileProgram: split like a shell would,
//! checked against the options OpenCL defines, and turned into clang arguments plus the
//! flags later stages need.

use crate::{BuildError, BuildErrorKind, Target};

/// An OpenCL C language version (`-cl-std=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClStd {
    Cl10,
    Cl11,
    Cl12,
    Cl20,
    Cl30,
}

impl ClStd {
    /// Parses "CL1.0" ... "CL3.0" (the spellings the OpenCL specification defines).
    pub fn parse(text: &str) -> Option<ClStd> {
        Some(match text {
            "CL1.0" => ClStd::Cl10,
            "CL1.1" => ClStd::Cl11,
            "CL1.2" => ClStd::Cl12,
            "CL2.0" => ClStd::Cl20,
            "CL3.0" => ClStd::Cl30,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ClStd::Cl10 => "CL1.0",
            ClStd::Cl11 => "CL1.1",
            ClStd::Cl12 => "CL1.2",
            ClStd::Cl20 => "CL2.0",
            ClStd::Cl30 => "CL3.0",
        }
    }
}

/// A parsed options string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// The language version: `-cl-std`, or CL1.2 (capped by the device) when absent.
    pub cl_std: ClStd,
    /// False with `-cl-opt-disable`.
    pub optimize: bool,
    /// `-D name[=value]` in order (`None` = defined as 1); `name` may carry a parameter
    /// list (`F(x)`) for a function-like macro.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I dir` in order.
    pub include_dirs: Vec<String>,
    pub mad_enable: bool,
    pub no_signed_zeros: bool,
    pub unsafe_math_optimizations: bool,
    pub finite_math_only: bool,
    pub fast_relaxed_math: bool,
    pub denorms_are_zero: bool,
    pub single_precision_constant: bool,
    pub fp32_correctly_rounded_divide_sqrt: bool,
    /// `-cl-uniform-work-group-size` (see [`BuildOptions::requires_uniform_work_groups`]).
    pub uniform_work_group_size: bool,
    pub no_subgroup_ifp: bool,
    /// `-w`: no warnings.
    pub inhibit_warnings: bool,
    /// `-Werror`.
    pub warnings_as_errors: bool,
    /// `-g` (recorded; no debug information beyond the line tables below is generated).
    pub debug_info: bool,
    /// Line tables (clang's `-gline-tables-only`): SPIR-V OpLine before each instruction,
    /// read into `ir::Function::inst_locs` for the Gen model's per-line report. From
    /// `Target::line_tables` (the Gen device).
    pub line_tables: bool,
    /// The arguments these options contribute to the clang command line (everything but
    /// `-cl-std` and the optimisation level, which the caller places itself).
    pub clang_args: Vec<String>,
}

impl BuildOptions {
    /// Whether every work-group of an NDRange must have the same size: always before
    /// OpenCL C 2.0, and with `-cl-uniform-work-group-size`.
    pub fn requires_uniform_work_groups(&self) -> bool {
        self.uniform_work_group_size || self.cl_std < ClStd::Cl20
    }
    /// `-cl-fast-relaxed-math` implies `-cl-unsafe-math-optimizations` and
    /// `-cl-finite-math-only`, which imply `-cl-no-signed-zeros` and `-cl-mad-enable`.
    pub fn unsafe_math(&self) -> bool {
        self.unsafe_math_optimizations || self.fast_relaxed_math
    }
    pub fn finite_math(&self) -> bool {
        self.finite_math_only || self.fast_relaxed_math
    }
    pub fn mad_allowed(&self) -> bool {
        self.mad_enable || self.unsafe_math()
    }
    pub fn signed_zeros_ignored(&self) -> bool {
        self.no_signed_zeros || self.unsafe_math()
    }
}

fn invalid(message: String) -> BuildError {
    BuildError { kind: BuildErrorKind::InvalidOptions, log: message }
}

/// Splits an options string into words: whitespace separates words, double quotes group
/// (with `\"` and `\\` escapes inside), single quotes group literally, and a backslash
/// outside quotes escapes the next character.
pub fn split_words(options: &str) -> Result<Vec<String>, BuildError> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(invalid(format!("unterminated double quote in build options: {options}"))),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\')) => current.push(e),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => {
                                return Err(invalid(format!("unterminated double quote in build options: {options}")))
                            }
                        },
                        Some(other) => current.push(other),
                    }
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(invalid(format!("unterminated single quote in build options: {options}"))),
                        Some('\'') => break,
                        Some(other) => current.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(e) => current.push(e),
                    None => return Err(invalid(format!("trailing backslash in build options: {options}"))),
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Parses the options string of clBuildProgram / clCompileProgram for `target`.
pub fn parse_options(options: &str, target: &Target) -> Result<BuildOptions, BuildError> {
    let supported: Vec<ClStd> = target.cl_std_versions.iter().filter_map(|v| ClStd::parse(v)).collect();
    // Without -cl-std, "the highest OpenCL C 1.x language version supported by each device".
    let default_std = supported.iter().copied().filter(|&v| v < ClStd::Cl20).max().unwrap_or(ClStd::Cl12);
    let mut parsed = BuildOptions {
        cl_std: default_std,
        optimize: true,
        defines: Vec::new(),
        include_dirs: Vec::new(),
        mad_enable: false,
        no_signed_zeros: false,
        unsafe_math_optimizations: false,
        finite_math_only: false,
        fast_relaxed_math: false,
        denorms_are_zero: false,
        single_precision_constant: false,
        fp32_correctly_rounded_divide_sqrt: false,
        uniform_work_group_size: false,
        no_subgroup_ifp: false,
        inhibit_warnings: false,
        warnings_as_errors: false,
        debug_info: false,
        line_tables: target.line_tables,
        clang_args: Vec::new(),
    };
    let words = split_words(options)?;
    let mut iter = words.into_iter();
    while let Some(word) = iter.next() {
        match word.as_str() {
            "-D" | "-I" => {
                let Some(operand) = iter.next() else {
                    return Err(invalid(format!("build option {word} needs an argument")));
                };
                if word == "-D" {
                    add_define(&mut parsed, &operand)?;
                } else {
                    add_include(&mut parsed, &operand)?;
                }
            }
            w if w.starts_with("-D") => add_define(&mut parsed, &w[2..])?,
            w if w.starts_with("-I") => add_include(&mut parsed, &w[2..])?,
            w if w.starts_with("-cl-std=") => {
                let version = &w["-cl-std=".len()..];
                let Some(std) = ClStd::parse(version) else {
                    return Err(invalid(format!("invalid build option {w}: unknown OpenCL C version {version}")));
                };
                if !supported.contains(&std) {
                    let list: Vec<&str> = supported.iter().map(|v| v.as_str()).collect();
                    return Err(invalid(format!(
                        "invalid build option {w}: the device does not support OpenCL C {} \
                         (CL_DEVICE_OPENCL_C_ALL_VERSIONS: {})",
                        version.trim_start_matches("CL"),
                        list.join(", ")
                    )));
                }
                parsed.cl_std = std;
            }
            "-cl-opt-disable" => parsed.optimize = false,
            "-cl-mad-enable" => set_flag(&mut parsed.mad_enable, &mut parsed.clang_args, &word),
            "-cl-no-signed-zeros" => set_flag(&mut parsed.no_signed_zeros, &mut parsed.clang_args, &word),
            "-cl-unsafe-math-optimizations" => {
                set_flag(&mut parsed.unsafe_math_optimizations, &mut parsed.clang_args, &word)
            }
            "-cl-finite-math-only" => set_flag(&mut parsed.finite_math_only, &mut parsed.clang_args, &word),
            "-cl-fast-relaxed-math" => set_flag(&mut parsed.fast_relaxed_math, &mut parsed.clang_args, &word),
            "-cl-single-precision-constant" => {
                set_flag(&mut parsed.single_precision_constant, &mut parsed.clang_args, &word)
            }
            "-cl-fp32-correctly-rounded-divide-sqrt" => {
                set_flag(&mut parsed.fp32_correctly_rounded_divide_sqrt, &mut parsed.clang_args, &word)
            }
            "-cl-uniform-work-group-size" => {
                set_flag(&mut parsed.uniform_work_group_size, &mut parsed.clang_args, &word)
            }
            // clang only uses this one for AMD GPUs and warns that it is unused: record only.
            "-cl-denorms-are-zero" => parsed.denorms_are_zero = true,
            // Not known to clang-15: record only.
            "-cl-no-subgroup-ifp" => parsed.no_subgroup_ifp = true,
            // Always on; deprecated since OpenCL 1.1 but still accepted: no effect.
            "-cl-kernel-arg-info" | "-cl-strict-aliasing" => {}
            "-w" => set_flag(&mut parsed.inhibit_warnings, &mut parsed.clang_args, &word),
            "-Werror" => set_flag(&mut parsed.warnings_as_errors, &mut parsed.clang_args, &word),
            "-g" => parsed.debug_info = true,
            _ => return Err(invalid(format!("invalid build option: {word}"))),
        }
    }
    Ok(parsed)
}

fn set_flag(flag: &mut bool, clang_args: &mut Vec<String>, word: &str) {
    if !*flag {
        clang_args.push(word.to_string());
    }
    *flag = true;
}

/// A macro name as `-D` takes it: an identifier, or an identifier with a parameter list
/// (`F(a, b)`, `G(x, ...)`, `H()`) for a function-like macro.
fn is_macro_name(name: &str) -> bool {
    let Some((identifier, rest)) = name.split_once('(') else {
        return is_identifier(name);
    };
    let Some(params) = rest.strip_suffix(')') else {
        return false;
    };
    if !is_identifier(identifier) {
        return false;
    }
    if params.trim().is_empty() {
        return true;
    }
    let params: Vec<&str> = params.split(',').map(str::trim).collect();
    params.iter().enumerate().all(|(i, p)| is_identifier(p) || (*p == "..." && i + 1 == params.len()))
}

fn add_define(parsed: &mut BuildOptions, operand: &str) -> Result<(), BuildError> {
    let (name, value) = match operand.split_once('=') {
        Some((name, value)) => (name, Some(value.to_string())),
        None => (operand, None),
    };
    if !is_macro_name(name) {
        return Err(invalid(format!("invalid build option -D {operand}: '{name}' is not a macro name")));
    }
    // One argument in joined form, so that nothing in it can be read as another option.
    parsed.clang_args.push(match &value {
        Some(value) => format!("-D{name}={value}"),
        None => format!("-D{name}"),
    });
    parsed.defines.push((name.to_string(), value));
    Ok(())
}

fn add_include(parsed: &mut BuildOptions, dir: &str) -> Result<(), BuildError> {
    if dir.is_empty() {
        return Err(invalid("invalid build option -I: empty directory".to_string()));
    }
    parsed.clang_args.push(format!("-I{dir}"));
    parsed.include_dirs.push(dir.to_string());
    Ok(())
}
