//! Front end: OpenCL C -> SPIR-V (clang-15 | llvm-spirv-15) and SPIR-V -> SoftCL IR.
//!
//! - [`options`]: the build and link options strings -> typed values (clang arguments and
//!   flags).
//! - [`opencl_c`]: running the toolchain.
//! - `spirv`, `spirv_body`, `kernel_args`: SPIR-V -> IR module and kernel metadata.
//! - [`link`]: imported and exported symbols; linking modules with `spirv-link`.
//! - [`specialize`]: specialization constants found and written in a SPIR-V module.

pub mod intel_sub_groups;
mod kernel_args;
pub mod link;
pub mod opencl_c;
pub mod options;
pub mod specialize;
mod spirv;
mod spirv_body;
mod spirv_repair;

pub use options::{BuildOptions, ClStd, LinkOptions};

use crate::{ir, BuildError, BuildErrorKind, Program, Target};
use spirv::{ErrorClass, TranslateError};
use std::sync::Arc;

/// Where a module came from: errors map to different OpenCL error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Built from OpenCL C: every failure is a build failure.
    Source,
    /// Given as IL (clCreateProgramWithIL): malformed IL, or IL not meant for an OpenCL
    /// 64-bit device, is CL_INVALID_VALUE; well-formed IL using what SoftCL cannot
    /// translate fails to build, with the reason in the build log.
    Il,
}

fn build_error(error: TranslateError, origin: Origin) -> BuildError {
    let kind = match (origin, error.class) {
        (Origin::Source, _) | (Origin::Il, ErrorClass::Undefined | ErrorClass::Unsupported) => {
            BuildErrorKind::CompileFailed
        }
        (Origin::Il, ErrorClass::Malformed) => BuildErrorKind::InvalidIl,
    };
    BuildError { kind, log: error.message }
}

fn translate_and_validate(words: &[u32], origin: Origin, lines: &spirv::LinkedLines) -> Result<ir::Module, BuildError> {
    let module = spirv::translate_linked(words, lines).map_err(|e| build_error(e, origin))?;
    if let Err(errors) = ir::validate::validate(&module) {
        let log = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n");
        let kind = match origin {
            Origin::Source => BuildErrorKind::CompileFailed,
            Origin::Il => BuildErrorKind::InvalidIl,
        };
        return Err(BuildError { kind, log: format!("the translated module is not valid IR:\n{log}") });
    }
    Ok(module)
}

/// OpenCL C source -> SPIR-V words and clang's warnings.
fn source_to_spirv(source: &str, options: &BuildOptions, target: &Target) -> Result<(Vec<u32>, String), BuildError> {
    let output = opencl_c::compile_to_spirv(source, options, target)?;
    let words = spirv::words_from_bytes(&output.bytes).map_err(|e| BuildError {
        kind: BuildErrorKind::CompileFailed,
        log: format!("{}the SPIR-V translator produced no valid module: {}", output.log, e.message),
    })?;
    Ok((words, output.log))
}

/// Translates the SPIR-V compiled from OpenCL C `sources` (in the order their modules were
/// linked, as `lines` describes them; the sources add vec_type_hint attributes and the
/// report's texts).
fn source_program(
    words: Vec<u32>,
    log: String,
    sources: Vec<Arc<str>>,
    lines: &spirv::LinkedLines,
) -> Result<Program, BuildError> {
    let mut module = translate_and_validate(&words, Origin::Source, lines).map_err(|mut e| {
        e.log = format!("{log}{}", e.log);
        e
    })?;
    for source in &sources {
        kernel_args::apply_source_vec_type_hints(&mut module, source);
    }
    attach_source_texts(&mut module, &sources);
    Ok(Program { spirv: words, module, log, unresolved: Vec::new(), sources })
}

/// Headers larger than this are not kept for reports.
const MAX_HEADER_TEXT: u64 = 4 << 20;

/// Fills `Module::source_texts` of a module built from `sources`: the programs' own sources
/// (the k-th program source the line tables name is `sources[k]`) and the headers they name
/// (read now, by their absolute paths, so that a report shows what was compiled).
fn attach_source_texts(module: &mut ir::Module, sources: &[Arc<str>]) {
    module.source_texts = module
        .source_files
        .iter()
        .map(|name| {
            if let Some(k) = spirv::program_source_index(name) {
                let source = sources.get(k)?;
                return Some(source.strip_prefix('\u{feff}').unwrap_or(source).into());
            }
            let path = std::path::Path::new(name);
            let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_HEADER_TEXT);
            if !path.is_absolute() || !small {
                return None;
            }
            std::fs::read_to_string(path).ok().map(std::sync::Arc::from)
        })
        .collect();
}

/// OpenCL C source + build options -> Program.
pub fn compile_source(source: &str, options: &BuildOptions, target: &Target) -> Result<Program, BuildError> {
    let (words, log) = source_to_spirv(source, options, target)?;
    source_program(words, log, vec![source.into()], &Default::default())
}

/// [`compile_source`]'s program from the SPIR-V and log it produced, without the toolchain.
pub fn source_program_from_spirv(words: Vec<u32>, log: String, source: &str) -> Result<Program, BuildError> {
    source_program(words, log, vec![source.into()], &Default::default())
}

/// A module that imports symbols defined elsewhere: kept as SPIR-V until it is linked (its
/// IR module is empty and it has no kernels yet).
fn unlinked(words: Vec<u32>, log: String, unresolved: Vec<String>, sources: Vec<Arc<str>>) -> Program {
    Program { spirv: words, module: ir::Module::new(), log, unresolved, sources }
}

/// OpenCL C source -> a compiled object (clCompileProgram): like [`compile_source`], but
/// functions and variables declared `extern` may stay undefined until link time.
pub fn compile_object(source: &str, options: &BuildOptions, target: &Target) -> Result<Program, BuildError> {
    let (words, log) = source_to_spirv(source, options, target)?;
    let imports = link::linkage(&words).imports;
    if !imports.is_empty() {
        return Ok(unlinked(words, log, imports, vec![source.into()]));
    }
    source_program(words, log, vec![source.into()], &Default::default())
}

/// A SPIR-V binary (bytes, either byte order) -> Program.
pub fn load_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
    let words = spirv::words_from_bytes(bytes).map_err(|e| build_error(e, Origin::Il))?;
    il_program(words)
}

fn il_program(words: Vec<u32>) -> Result<Program, BuildError> {
    let mut module = translate_and_validate(&words, Origin::Il, &Default::default())?;
    // "For kernels not created from OpenCL C source and the clCreateProgramWithSource API
    // call the string returned from this query [CL_KERNEL_ATTRIBUTES] will be empty."
    for kernel in &mut module.kernels {
        kernel.info.attributes.clear();
    }
    Ok(Program { spirv: words, module, log: String::new(), unresolved: Vec::new(), sources: Vec::new() })
}

/// A SPIR-V module as a compiled object or library (clCompileProgram of IL, binaries of
/// those types): imports may stay unresolved until link time.
pub fn load_spirv_object(bytes: &[u8]) -> Result<Program, BuildError> {
    let words = spirv::words_from_bytes(bytes).map_err(|e| build_error(e, Origin::Il))?;
    let imports = link::linkage(&words).imports;
    if !imports.is_empty() {
        return Ok(unlinked(words, String::new(), imports, Vec::new()));
    }
    il_program(words)
}

/// Links compiled objects and libraries: into a library (`create_library`: exports kept,
/// imports may stay unresolved) or into an executable program (every import resolved).
pub fn link(inputs: &[&Program], create_library: bool) -> Result<Program, BuildError> {
    let words = match inputs {
        [] => return Err(BuildError { kind: BuildErrorKind::CompileFailed, log: "nothing to link".into() }),
        // One input with nothing to resolve is its own result.
        [one] if one.unresolved.is_empty() || create_library => return Ok((*one).clone()),
        _ => {
            let modules: Vec<&[u32]> = inputs.iter().map(|p| p.spirv.as_slice()).collect();
            link::link_modules(&modules, create_library)?
        }
    };
    let imports = link::linkage(&words).imports;
    // The linked module's program sources, in the order of its inputs.
    let sources: Vec<Arc<str>> = inputs.iter().flat_map(|p| p.sources.iter().cloned()).collect();
    if !imports.is_empty() {
        if create_library {
            return Ok(unlinked(words, String::new(), imports, sources));
        }
        return Err(undefined_symbols(&imports));
    }
    let lines = spirv::LinkedLines { inputs: inputs.iter().map(|p| spirv::InputLines::of(&p.spirv)).collect() };
    // Translation errors of the linked module are link failures.
    source_program(words, String::new(), sources, &lines)
}

/// The failure of code generation or linking for a module with unresolved imports.
pub fn undefined_symbols(names: &[String]) -> BuildError {
    let log = names.iter().map(|n| format!("link error: undefined symbol \"{n}\"\n")).collect();
    BuildError { kind: BuildErrorKind::CompileFailed, log }
}
