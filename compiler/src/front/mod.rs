//! Front end: OpenCL C -> SPIR-V (clang-15 | llvm-spirv-15) and SPIR-V -> SoftCL IR.

use crate::{BuildError, Program, Target};

pub fn compile_source(source: &str, options: &str, target: &Target) -> Result<Program, BuildError> {
    let _ = (source, options, target);
    todo!("front end")
}

pub fn load_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
    let _ = bytes;
    todo!("front end")
}
