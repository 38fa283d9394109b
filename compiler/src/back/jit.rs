//! Native code in memory: an object file linked by LLVM ORC's LLJIT (JITLink).
//!
//! The object is emitted by the host `TargetMachine` (see [`super::target`]); the JIT only
//! links it. Undefined symbols (libm's `sinf`, `memcpy`, libgcc's `__truncdfhf2`, ...) are
//! resolved from the running process by a dynamic-library search generator.
//!
//! With `SOFTCL_PERF_MAP=1` each loaded program's kernels are appended to
//! `/tmp/perf-<pid>.map` ([`perf_map`]), the file `perf report` reads to name code that no
//! ELF file on disk describes: their samples show as `softcl:<kernel>` instead of bare
//! addresses.
//!
//! This file is the only place where the back end talks to LLVM through raw pointers.

use llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use llvm_sys::object::{
    LLVMCreateBinary, LLVMDisposeBinary, LLVMDisposeSymbolIterator, LLVMGetSymbolName, LLVMGetSymbolSize,
    LLVMMoveToNextSymbol, LLVMObjectFileCopySymbolIterator, LLVMObjectFileIsSymbolIteratorAtEnd,
};
use llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile, LLVMOrcLLJITGetGlobalPrefix,
    LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup, LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCSymbolMapPair, LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcDefinitionGeneratorRef,
    LLVMOrcDisposeMaterializationUnit, LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibDefine,
};
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};

/// Takes an `LLVMErrorRef` and returns its message (`None` for success).
fn take_error(err: LLVMErrorRef) -> Option<String> {
    if err.is_null() {
        return None;
    }
    // SAFETY: `err` is a non-null error returned by an LLVM API call and not consumed yet;
    // LLVMGetErrorMessage consumes it and returns a string we own and must dispose of.
    unsafe {
        let msg = LLVMGetErrorMessage(err);
        let text = CStr::from_ptr(msg).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(msg);
        Some(text)
    }
}

/// An LLJIT instance holding the code of one program.
pub struct Jit {
    jit: LLVMOrcLLJITRef,
}

// SAFETY: after `load` returns, the JIT is never used again except to be disposed of when the
// owning `NativeProgram` drops. ORC's LLJIT and ExecutionSession are internally synchronised
// and may be destroyed from any thread; the code it owns is immutable and callable from any
// thread.
unsafe impl Send for Jit {}
// SAFETY: see `Send`: no method takes `&self` after construction, so shared references give
// no access to the JIT at all.
unsafe impl Sync for Jit {}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: `self.jit` was created by LLVMOrcCreateLLJIT and is disposed of exactly once.
        // Code pointers looked up from it are only used while the owning NativeProgram lives.
        let err = unsafe { LLVMOrcDisposeLLJIT(self.jit) };
        let _ = take_error(err);
    }
}

impl Jit {
    /// Links `object` (an ELF relocatable for the host) and returns the JIT and the
    /// addresses of `symbols`, in order. `host` defines the functions of this process that
    /// the object calls by name (`super::host`): an object holds no address of the process
    /// that compiled it, so that it can be cached and loaded by another.
    pub fn load(object: &[u8], symbols: &[String], host: &[(String, usize)]) -> Result<(Jit, Vec<usize>), String> {
        let mut raw: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: a null builder asks for the default LLJIT configuration for the host;
        // `raw` receives the instance on success.
        let err = unsafe { LLVMOrcCreateLLJIT(&mut raw, std::ptr::null_mut()) };
        if let Some(e) = take_error(err) {
            return Err(format!("cannot create the LLVM JIT: {e}"));
        }
        let jit = Jit { jit: raw };

        // SAFETY: `jit.jit` is a live LLJIT. The generator created here is handed over to
        // the main JITDylib, which owns it from then on.
        unsafe {
            let jd = LLVMOrcLLJITGetMainJITDylib(jit.jit);
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit.jit);
            let mut generator: LLVMOrcDefinitionGeneratorRef = std::ptr::null_mut();
            let err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                prefix,
                None,
                std::ptr::null_mut(),
            );
            if let Some(e) = take_error(err) {
                return Err(format!("cannot resolve process symbols in the JIT: {e}"));
            }
            LLVMOrcJITDylibAddGenerator(jd, generator);
        }

        if !host.is_empty() {
            let mut pairs = Vec::with_capacity(host.len());
            for (name, addr) in host {
                let cname = CString::new(name.as_str()).map_err(|_| format!("bad host symbol name {name:?}"))?;
                // SAFETY: `jit.jit` is live and `cname` outlives the call; the returned pool
                // entry is retained for us, and LLVMOrcAbsoluteSymbols takes that reference over.
                let interned = unsafe { LLVMOrcLLJITMangleAndIntern(jit.jit, cname.as_ptr()) };
                let flags = LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8
                    | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8;
                pairs.push(LLVMOrcCSymbolMapPair {
                    Name: interned,
                    Sym: LLVMJITEvaluatedSymbol {
                        Address: *addr as u64,
                        Flags: LLVMJITSymbolFlags { GenericFlags: flags, TargetFlags: 0 },
                    },
                });
            }
            // SAFETY: `pairs` holds `pairs.len()` initialised pairs whose names were retained
            // above; the materialization unit takes them over. On success the JITDylib owns
            // the unit; on failure we still own it and dispose of it.
            let err = unsafe {
                let mu = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
                let err = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit.jit), mu);
                if !err.is_null() {
                    LLVMOrcDisposeMaterializationUnit(mu);
                }
                err
            };
            if let Some(e) = take_error(err) {
                return Err(format!("cannot define the host functions in the JIT: {e}"));
            }
        }

        // SAFETY: LLVMOrcLLJITAddObjectFile takes ownership of the buffer (a copy of
        // `object`) whether it succeeds or fails.
        let err = unsafe {
            let jd = LLVMOrcLLJITGetMainJITDylib(jit.jit);
            LLVMOrcLLJITAddObjectFile(jit.jit, jd, object_buffer(object))
        };
        if let Some(e) = take_error(err) {
            return Err(format!("the JIT rejected the object file: {e}"));
        }

        let mut addrs = Vec::with_capacity(symbols.len());
        for s in symbols {
            let cname = CString::new(s.as_str()).map_err(|_| format!("bad symbol name {s:?}"))?;
            let mut addr: u64 = 0;
            // SAFETY: `jit.jit` is live, `cname` is a NUL-terminated string that outlives the
            // call, and `addr` receives the address. The first lookup links the object.
            let err = unsafe { LLVMOrcLLJITLookup(jit.jit, &mut addr, cname.as_ptr()) };
            if let Some(e) = take_error(err) {
                return Err(format!("linking kernel code failed: {e}"));
            }
            if addr == 0 {
                return Err(format!("the JIT returned a null address for {s}"));
            }
            addrs.push(addr as usize);
        }
        Ok((jit, addrs))
    }
}

/// A new LLVM memory buffer holding a copy of `object`; the caller disposes of it or hands
/// it to an API that takes it over.
fn object_buffer(object: &[u8]) -> llvm_sys::prelude::LLVMMemoryBufferRef {
    let name = CString::new("softcl-program").unwrap_or_default();
    // SAFETY: the call copies `object.len()` bytes from a live slice and the name, which
    // outlives the call; the returned buffer owns its copy.
    unsafe {
        llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
            object.as_ptr() as *const c_char,
            object.len(),
            name.as_ptr(),
        )
    }
}

/// The size in bytes of each symbol of `object` (an ELF relocatable); empty when LLVM cannot
/// read it.
fn symbol_sizes(object: &[u8]) -> HashMap<String, u64> {
    let mut sizes = HashMap::new();
    // SAFETY: the binary reads the buffer (a copy of `object`) without taking it over, and
    // the buffer is disposed of after the binary; the symbol iterator belongs to the binary
    // and is disposed of before it; each name is a NUL-terminated string owned by the
    // binary, copied at once.
    unsafe {
        let buf = object_buffer(object);
        let mut err: *mut c_char = std::ptr::null_mut();
        let bin = LLVMCreateBinary(buf, std::ptr::null_mut(), &mut err);
        if bin.is_null() {
            if !err.is_null() {
                LLVMDisposeErrorMessage(err);
            }
            llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
            return sizes;
        }
        let it = LLVMObjectFileCopySymbolIterator(bin);
        while LLVMObjectFileIsSymbolIteratorAtEnd(bin, it) == 0 {
            let n = LLVMGetSymbolName(it);
            if !n.is_null() {
                sizes.insert(CStr::from_ptr(n).to_string_lossy().into_owned(), LLVMGetSymbolSize(it));
            }
            LLVMMoveToNextSymbol(it);
        }
        LLVMDisposeSymbolIterator(it);
        LLVMDisposeBinary(bin);
        llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
    }
    sizes
}

/// With `SOFTCL_PERF_MAP=1`: appends a line `<start> <size> softcl:<label>` (hex) for each
/// of `symbols`, linked at `addrs`, to `/tmp/perf-<pid>.map`. Nothing happens without it, and
/// a file that cannot be written is only a missing name in perf's report.
pub fn perf_map(object: &[u8], symbols: &[String], addrs: &[usize], labels: &[String]) {
    if std::env::var("SOFTCL_PERF_MAP").map_or(true, |v| v != "1") {
        return;
    }
    use std::io::Write;
    let sizes = symbol_sizes(object);
    let mut lines = String::new();
    for ((s, a), l) in symbols.iter().zip(addrs).zip(labels) {
        let size = sizes.get(s).copied().filter(|&n| n > 0).unwrap_or(1);
        lines += &format!("{a:x} {size:x} softcl:{l}\n");
    }
    let path = format!("/tmp/perf-{}.map", std::process::id());
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(lines.as_bytes());
    }
}
