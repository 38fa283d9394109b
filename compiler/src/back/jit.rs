//! Native code in memory: an object file linked by LLVM ORC's LLJIT (JITLink).
//!
//! The object is emitted by the host `TargetMachine` (see [`super::target`]); the JIT only
//! links it. Undefined symbols (libm's `sinf`, `memcpy`, libgcc's `__truncdfhf2`, ...) are
//! resolved from the running process by a dynamic-library search generator.
//!
//! This file is the only place where the back end talks to LLVM through raw pointers.

use llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile, LLVMOrcLLJITGetGlobalPrefix,
    LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup, LLVMOrcLLJITRef,
};
use llvm_sys::orc2::{
    LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcDefinitionGeneratorRef, LLVMOrcJITDylibAddGenerator,
};
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
    /// addresses of `symbols`, in order.
    pub fn load(object: &[u8], symbols: &[String]) -> Result<(Jit, Vec<usize>), String> {
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

        let name = CString::new("softcl-program").unwrap_or_default();
        // SAFETY: the memory buffer copies `object`; LLVMOrcLLJITAddObjectFile takes
        // ownership of the buffer whether it succeeds or fails.
        let err = unsafe {
            let jd = LLVMOrcLLJITGetMainJITDylib(jit.jit);
            let buf = llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
                object.as_ptr() as *const c_char,
                object.len(),
                name.as_ptr(),
            );
            LLVMOrcLLJITAddObjectFile(jit.jit, jd, buf)
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
