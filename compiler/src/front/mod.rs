//! Front end: OpenCL C -> SPIR-V (clang-15 | llvm-spirv-15) and SPIR-V -> SoftCL IR.
//!
//! - [`options`]: the build options string -> clang arguments and flags.
//! - [`opencl_c`]: running the toolchain.
//! - `spirv`, `spirv_body`, `kernel_args`: SPIR-V -> IR module and kernel metadata.

mod kernel_args;
pub mod opencl_c;
pub mod options;
mod spirv;
mod spirv_body;

pub use options::{parse_options, BuildOptions, ClStd};

use crate::{ir, BuildError, BuildErrorKind, Program, Target};
use spirv::{ErrorClass, TranslateError};

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

fn translate_and_validate(words: &[u32], origin: Origin) -> Result<ir::Module, BuildError> {
    let module = spirv::translate(words).map_err(|e| build_error(e, origin))?;
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

/// OpenCL C source + build options -> Program.
pub fn compile_source(source: &str, options: &str, target: &Target) -> Result<Program, BuildError> {
    let options = options::parse_options(options, target)?;
    let output = opencl_c::compile_to_spirv(source, &options, target)?;
    let words = spirv::words_from_bytes(&output.bytes).map_err(|e| BuildError {
        kind: BuildErrorKind::CompileFailed,
        log: format!("{}the SPIR-V translator produced no valid module: {}", output.log, e.message),
    })?;
    let mut module = translate_and_validate(&words, Origin::Source).map_err(|mut e| {
        e.log = format!("{}{}", output.log, e.log);
        e
    })?;
    kernel_args::apply_source_vec_type_hints(&mut module, source);
    Ok(Program { spirv: words, module, log: output.log })
}

/// A SPIR-V binary (bytes, either byte order) -> Program.
pub fn load_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
    let words = spirv::words_from_bytes(bytes).map_err(|e| build_error(e, Origin::Il))?;
    let mut module = translate_and_validate(&words, Origin::Il)?;
    // "For kernels not created from OpenCL C source and the clCreateProgramWithSource API
    // call the string returned from this query [CL_KERNEL_ATTRIBUTES] will be empty."
    for kernel in &mut module.kernels {
        kernel.info.attributes.clear();
    }
    Ok(Program { spirv: words, module, log: String::new() })
}
