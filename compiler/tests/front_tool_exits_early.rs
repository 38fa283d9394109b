//! A compiler tool that exits without reading its input must not take the application down
//! with SIGPIPE, which C programs (unlike Rust ones) leave at its default action: terminate.
//! Its own test binary, because it changes the process's signal disposition and environment.

use nix::sys::signal::{signal, SigHandler, Signal};
use softcl_compiler::{compile_source, BuildErrorKind, Target};

#[test]
fn a_tool_that_exits_early_is_a_build_error_not_a_signal() {
    // SAFETY: restoring the default disposition of SIGPIPE, as a C host program has it; no
    // handler runs Rust code, and this test binary holds no other test that relies on it.
    unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) }.expect("reset SIGPIPE");
    // `true` exits at once without reading stdin; the source is larger than a pipe's buffer,
    // so the writer is still writing when the reader is gone.
    std::env::set_var("SOFTCL_CLANG", "true");
    let source = format!("kernel void k(global int* p) {{ p[0] = 1; }}\n{}", "// padding\n".repeat(100_000));
    let err = compile_source(&source, "", &Target::default()).expect_err("no SPIR-V can come out of `true`");
    assert!(matches!(err.kind, BuildErrorKind::CompileFailed | BuildErrorKind::CompilerNotAvailable), "{err:?}");
}
