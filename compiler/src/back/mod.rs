//! Back end: SoftCL IR -> LLVM 22 (inkwell) -> native code (JIT).

use crate::{ir, BuildError, NativeProgram, Target};
use std::sync::Arc;

pub fn codegen(module: &ir::Module, target: &Target) -> Result<Arc<NativeProgram>, BuildError> {
    let _ = (module, target);
    todo!("back end")
}
