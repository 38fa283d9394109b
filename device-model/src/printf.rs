//! Printing a launch's printf records (formatted by `softcl_compiler::printf`) to the
//! process's standard output, once the launch has finished and before its command completes.

use std::io::Write;

/// Formats `records` and writes them to stdout (fd 1) under one lock, each record's text in
/// one write, then flushes, so that an application that waited for the command sees the
/// output. Write errors (a closed stdout) are ignored, as C's printf ignores them.
pub(crate) fn emit(records: &[u8]) {
    if records.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    softcl_compiler::printf::format_records(records, |text| {
        let _ = out.write_all(text);
    });
    let _ = out.flush();
}
