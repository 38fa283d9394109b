//! A missing toolchain binary is CL_COMPILER_NOT_AVAILABLE with a clear log. Alone in its
//! test binary because it changes the process environment.

use softcl_compiler::{compile_source, BuildErrorKind, Target};

#[test]
fn missing_binaries_are_reported() {
    let source = "kernel void k(global int *p) { p[0] = 1; }";
    std::env::set_var("SOFTCL_CLANG", "/nonexistent/softcl-clang");
    let error = compile_source(source, "", &Target::default()).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompilerNotAvailable);
    assert!(error.log.contains("/nonexistent/softcl-clang"), "{}", error.log);
    assert!(error.log.contains("SOFTCL_CLANG"), "{}", error.log);

    std::env::remove_var("SOFTCL_CLANG");
    std::env::set_var("SOFTCL_LLVM_SPIRV", "/nonexistent/softcl-llvm-spirv");
    let error = compile_source(source, "", &Target::default()).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompilerNotAvailable);
    assert!(error.log.contains("SOFTCL_LLVM_SPIRV"), "{}", error.log);

    // Pointing the variable at the real binary works again.
    std::env::set_var("SOFTCL_LLVM_SPIRV", "llvm-spirv-15");
    assert!(compile_source(source, "", &Target::default()).is_ok());
    std::env::remove_var("SOFTCL_LLVM_SPIRV");
}
