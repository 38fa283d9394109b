//! The options strings of clBuildProgram / clCompileProgram ([`BuildOptions`]) and of
//! clLinkProgram ([`LinkOptions`]): split like a shell would, checked against the options
//! OpenCL defines, and turned into one typed value each (for builds: clang arguments plus the
//! flags later stages need). The runtime parses a string once, where the API call hands it
//! over, and passes the value down.

use crate::{BuildError, BuildErrorKind, Target};

/// An OpenCL C language version (`-cl-std=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClStd {
    Cl11,
    Cl12,
    Cl20,
    Cl30,
}

impl ClStd {
    /// Parses "CL1.1" ... "CL3.0", the values of `-cl-std` the OpenCL specification defines
    /// (it has no "CL1.0").
    pub fn parse(text: &str) -> Option<ClStd> {
        Some(match text {
            "CL1.1" => ClStd::Cl11,
            "CL1.2" => ClStd::Cl12,
            "CL2.0" => ClStd::Cl20,
            "CL3.0" => ClStd::Cl30,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ClStd::Cl11 => "CL1.1",
            ClStd::Cl12 => "CL1.2",
            ClStd::Cl20 => "CL2.0",
            ClStd::Cl30 => "CL3.0",
        }
    }
}

/// The options string of clBuildProgram / clCompileProgram, parsed once where the runtime
/// receives it ([`BuildOptions::parse`]) and handed to the front end as it is. Parsing needs no
/// device: what depends on one (the language version a device supports, its default) is
/// answered by [`BuildOptions::cl_std_for`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// The string as the application gave it (CL_PROGRAM_BUILD_OPTIONS, the kernel cache's key,
    /// binaries).
    text: String,
    /// `-cl-std`, if given (the last one given wins); see [`BuildOptions::cl_std_for`].
    pub cl_std: Option<ClStd>,
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
    /// `-cl-kernel-arg-info` (recorded: argument information is always kept).
    pub kernel_arg_info: bool,
    /// `-w`: no warnings.
    pub inhibit_warnings: bool,
    /// `-Werror`.
    pub warnings_as_errors: bool,
    /// `-g` (recorded; no debug information beyond the target's line tables is generated:
    /// `Target::line_tables`).
    pub debug_info: bool,
    /// The arguments these options contribute to the clang command line (everything but
    /// `-cl-std` and the optimisation level, which the front end places itself).
    pub clang_args: Vec<String>,
}

impl Default for BuildOptions {
    /// No options (an empty or NULL options string).
    fn default() -> Self {
        Self {
            text: String::new(),
            cl_std: None,
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
            kernel_arg_info: false,
            inhibit_warnings: false,
            warnings_as_errors: false,
            debug_info: false,
            clang_args: Vec::new(),
        }
    }
}

impl std::str::FromStr for BuildOptions {
    type Err = BuildError;
    fn from_str(text: &str) -> Result<Self, BuildError> {
        Self::parse(text)
    }
}

impl BuildOptions {
    /// The options string as the application gave it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The language version of a build for `target`: `-cl-std`, which the device must support
    /// ("Calls to clBuildProgram ... with the -cl-std=CLx.y option will fail to compile the
    /// program for any devices \[whose\] CL_DEVICE_OPENCL_C_ALL_VERSIONS does not include OpenCL
    /// C x.y"), or without it "the highest OpenCL C 1.x language version supported by each
    /// device" (CL1.2 when the target names none).
    pub fn cl_std_for(&self, target: &Target) -> Result<ClStd, BuildError> {
        let supported: Vec<ClStd> = target.cl_std_versions.iter().filter_map(|v| ClStd::parse(v)).collect();
        let Some(std) = self.cl_std else {
            return Ok(supported.iter().copied().filter(|&v| v < ClStd::Cl20).max().unwrap_or(ClStd::Cl12));
        };
        if !supported.contains(&std) {
            let list: Vec<&str> = supported.iter().map(|v| v.as_str()).collect();
            return Err(invalid(format!(
                "invalid build option -cl-std={}: the device does not support OpenCL C {} \
                 (CL_DEVICE_OPENCL_C_ALL_VERSIONS: {})",
                std.as_str(),
                std.as_str().trim_start_matches("CL"),
                list.join(", ")
            )));
        }
        Ok(std)
    }

    /// Whether every work-group of an NDRange of a kernel built from source for `target` must
    /// have the same size: always before OpenCL C 2.0, and with `-cl-uniform-work-group-size`
    /// (also when the options do not suit `target`: that build fails anyway).
    pub fn requires_uniform_work_groups(&self, target: &Target) -> bool {
        self.uniform_work_group_size || self.cl_std_for(target).map_or(true, |std| std < ClStd::Cl20)
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

    /// One more include directory after the application's (clCompileProgram's input headers);
    /// [`BuildOptions::text`] stays the application's string.
    pub fn add_include_dir(&mut self, dir: &str) -> Result<(), BuildError> {
        add_include(self, dir)
    }
}

fn invalid(message: String) -> BuildError {
    BuildError { kind: BuildErrorKind::InvalidOptions, log: message }
}

/// Splits an options string into words: whitespace separates words, double quotes group
/// (with `\"` and `\\` escapes inside), single quotes group literally, and a backslash
/// outside quotes escapes the next character.
pub fn split_words(options: &str) -> Result<Vec<String>, BuildError> {
    // The API layer hands over options that were not UTF-8 with U+FFFD for the bytes it could
    // not read: they would reach clang as other text than the application wrote.
    if let Some(at) = options.find('\u{FFFD}') {
        return Err(invalid(format!(
            "the options are not UTF-8 text (byte {at} of \"{}\" is not)",
            options.escape_debug()
        )));
    }
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

impl BuildOptions {
    /// Parses the options string of clBuildProgram / clCompileProgram (the options OpenCL
    /// defines, split like a shell would: [`split_words`]). An error is
    /// CL_INVALID_BUILD_OPTIONS (CL_INVALID_COMPILER_OPTIONS) with its log line.
    pub fn parse(options: &str) -> Result<BuildOptions, BuildError> {
        let mut parsed = BuildOptions { text: options.to_string(), ..BuildOptions::default() };
        let words = split_words(options)?;
        let mut iter = words.into_iter();
        while let Some(word) = iter.next() {
            let p = &mut parsed;
            match word.as_str() {
                "-D" | "-I" => {
                    let Some(operand) = iter.next() else {
                        return Err(invalid(format!("build option {word} needs an argument")));
                    };
                    if word == "-D" {
                        add_define(p, &operand)?;
                    } else {
                        add_include(p, &operand)?;
                    }
                }
                w if w.starts_with("-D") => add_define(p, &w[2..])?,
                w if w.starts_with("-I") => add_include(p, &w[2..])?,
                w if w.starts_with("-cl-std=") => {
                    let version = &w["-cl-std=".len()..];
                    let Some(std) = ClStd::parse(version) else {
                        return Err(invalid(format!("invalid build option {w}: unknown OpenCL C version {version}")));
                    };
                    p.cl_std = Some(std);
                }
                "-cl-opt-disable" => p.optimize = false,
                "-cl-mad-enable" => set_flag(&mut p.mad_enable, &mut p.clang_args, &word),
                "-cl-no-signed-zeros" => set_flag(&mut p.no_signed_zeros, &mut p.clang_args, &word),
                "-cl-unsafe-math-optimizations" => set_flag(&mut p.unsafe_math_optimizations, &mut p.clang_args, &word),
                "-cl-finite-math-only" => set_flag(&mut p.finite_math_only, &mut p.clang_args, &word),
                "-cl-fast-relaxed-math" => set_flag(&mut p.fast_relaxed_math, &mut p.clang_args, &word),
                "-cl-single-precision-constant" => set_flag(&mut p.single_precision_constant, &mut p.clang_args, &word),
                "-cl-fp32-correctly-rounded-divide-sqrt" => {
                    set_flag(&mut p.fp32_correctly_rounded_divide_sqrt, &mut p.clang_args, &word)
                }
                "-cl-uniform-work-group-size" => set_flag(&mut p.uniform_work_group_size, &mut p.clang_args, &word),
                // clang only uses this one for AMD GPUs and warns that it is unused: record only.
                "-cl-denorms-are-zero" => p.denorms_are_zero = true,
                // Not known to clang-15: record only.
                "-cl-no-subgroup-ifp" => p.no_subgroup_ifp = true,
                // Always on (the front end passes it to clang itself): record only.
                "-cl-kernel-arg-info" => p.kernel_arg_info = true,
                // Deprecated since OpenCL 1.1 but still accepted: no effect.
                "-cl-strict-aliasing" => {}
                "-w" => set_flag(&mut p.inhibit_warnings, &mut p.clang_args, &word),
                "-Werror" => set_flag(&mut p.warnings_as_errors, &mut p.clang_args, &word),
                "-g" => p.debug_info = true,
                _ => return Err(invalid(format!("invalid build option: {word}"))),
            }
        }
        Ok(parsed)
    }
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

/// The options string of clLinkProgram, parsed once where the runtime receives it
/// ([`LinkOptions::parse`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// The string as the application gave it (CL_PROGRAM_BUILD_OPTIONS of the linked program).
    text: String,
    /// `-create-library`: a library, not an executable.
    pub create_library: bool,
    /// `-enable-link-options`: a library that takes the program linking options.
    pub enable_link_options: bool,
    /// The program linking options given (`-cl-denorms-are-zero`, `-cl-no-signed-zeros` or
    /// `-cl-no-signed-zeroes`, `-cl-unsafe-math-optimizations`, `-cl-finite-math-only`,
    /// `-cl-fast-relaxed-math`, `-cl-no-subgroup-ifp`), in order. They allow optimisations;
    /// results stay within the precision the specification requires without them, so the code
    /// generator need not change.
    pub math: Vec<String>,
}

impl LinkOptions {
    /// Parses the options string of clLinkProgram (split as [`split_words`] does). An error is
    /// CL_INVALID_LINKER_OPTIONS.
    pub fn parse(options: &str) -> Result<LinkOptions, BuildError> {
        let mut parsed = LinkOptions { text: options.to_string(), ..LinkOptions::default() };
        for word in split_words(options)? {
            match word.as_str() {
                "-create-library" => parsed.create_library = true,
                "-enable-link-options" => parsed.enable_link_options = true,
                "-cl-denorms-are-zero"
                | "-cl-no-signed-zeros"
                | "-cl-no-signed-zeroes"
                | "-cl-unsafe-math-optimizations"
                | "-cl-finite-math-only"
                | "-cl-fast-relaxed-math"
                | "-cl-no-subgroup-ifp" => parsed.math.push(word),
                // "CL_INVALID_LINKER_OPTIONS if the linker options specified by options are
                // invalid."
                _ => return Err(invalid(format!("invalid link option: {word}"))),
            }
        }
        // "-enable-link-options ... must be specified with the -create-library option", and a
        // library takes the program linking options only with it.
        if parsed.enable_link_options && !parsed.create_library {
            return Err(invalid("link option -enable-link-options needs -create-library".into()));
        }
        if let (Some(math), true, false) = (parsed.math.first(), parsed.create_library, parsed.enable_link_options) {
            return Err(invalid(format!("link option {math} with -create-library needs -enable-link-options")));
        }
        Ok(parsed)
    }

    /// The options string as the application gave it.
    pub fn text(&self) -> &str {
        &self.text
    }
}
