//! Shared virtual memory (OpenCL 2.0+, optional in 3.0): clSVMAlloc's allocations, kept per
//! context, and the checks of the SVM entry points that need no C pointer.
//!
//! Both devices run kernels on the host in the application's process, so an SVM allocation
//! is plain host memory at one address for the host and every device: coarse-grain maps and
//! unmaps need no copy, fine-grain buffers are coherent by construction and kernel atomics on
//! them are host atomics. An allocation's bytes are a [`Storage`] (zeroed, aligned as asked);
//! commands and launches that name an allocation hold an `Arc` of it, so a clSVMFree while
//! one of them is pending cannot free memory under it.

use crate::cl::*;
use crate::context::Context;
use crate::memory::raw::Storage;
use parking_lot::Mutex;
use softcl_device_model::SvmCapabilities;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The flags valid for clSVMAlloc.
pub const SVM_ALLOC_FLAGS: cl_svm_mem_flags =
    (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)
        as cl_svm_mem_flags;

/// CL_DEVICE_SVM_CAPABILITIES as the bit field of the API.
pub fn capability_bits(caps: &SvmCapabilities) -> cl_device_svm_capabilities {
    let mut bits = 0;
    for (on, bit) in [
        (caps.coarse_grain_buffer, CL_DEVICE_SVM_COARSE_GRAIN_BUFFER),
        (caps.fine_grain_buffer, CL_DEVICE_SVM_FINE_GRAIN_BUFFER),
        (caps.fine_grain_system, CL_DEVICE_SVM_FINE_GRAIN_SYSTEM),
        (caps.atomics, CL_DEVICE_SVM_ATOMICS),
    ] {
        if on {
            bits |= bit as cl_device_svm_capabilities;
        }
    }
    bits
}

/// One clSVMAlloc allocation.
#[derive(Debug)]
pub struct SvmAlloc {
    storage: Storage,
    pub flags: cl_svm_mem_flags,
}

impl SvmAlloc {
    /// The address clSVMAlloc returned.
    pub fn address(&self) -> usize {
        self.storage.as_ptr() as usize
    }

    pub fn size(&self) -> usize {
        self.storage.len()
    }

    /// Whether `addr` points into the allocation or just past its end (a valid C pointer).
    pub fn holds(&self, addr: usize) -> bool {
        addr >= self.address() && addr <= self.address() + self.size()
    }

    /// Whether `addr..addr+len` lies inside the allocation.
    pub fn contains(&self, addr: usize, len: usize) -> bool {
        let start = self.address();
        addr >= start && addr.checked_add(len).is_some_and(|end| end <= start + self.size())
    }
}

/// The SVM allocations of one context, by address.
#[derive(Debug, Default)]
pub struct SvmAllocations {
    map: Mutex<BTreeMap<usize, Arc<SvmAlloc>>>,
}

impl SvmAllocations {
    /// The allocation holding the byte at `addr` (any address inside it, not only its start).
    pub fn find(&self, addr: usize) -> Option<Arc<SvmAlloc>> {
        let map = self.map.lock();
        let (_, a) = map.range(..=addr).next_back()?;
        // A zero-length query at the end of an allocation is not inside it.
        a.contains(addr, 1).then(|| a.clone())
    }

    /// The allocations holding each of `addrs` (addresses outside every allocation are
    /// skipped: with fine-grain system SVM they are the application's own memory).
    pub fn find_all(&self, addrs: &[usize]) -> Vec<Arc<SvmAlloc>> {
        let mut out: Vec<Arc<SvmAlloc>> = Vec::new();
        for &a in addrs {
            // A pointer just past the end keeps its allocation too.
            if let Some(alloc) = self.find(a).or_else(|| self.find(a.checked_sub(1)?).filter(|x| x.holds(a))) {
                if !out.iter().any(|o| Arc::ptr_eq(o, &alloc)) {
                    out.push(alloc);
                }
            }
        }
        out
    }

    /// Removes the allocation that starts at `addr`; None if there is none.
    fn remove(&self, addr: usize) -> Option<Arc<SvmAlloc>> {
        self.map.lock().remove(&addr)
    }

    fn insert(&self, alloc: Arc<SvmAlloc>) {
        self.map.lock().insert(alloc.address(), alloc);
    }

    /// How many allocations are live.
    pub fn len(&self) -> usize {
        self.map.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The SVM capabilities every device of `ctx` has (the intersection).
pub fn common_capabilities(ctx: &Context) -> SvmCapabilities {
    let mut caps =
        SvmCapabilities { coarse_grain_buffer: true, fine_grain_buffer: true, fine_grain_system: true, atomics: true };
    for d in &ctx.devices {
        let s = d.info().svm;
        caps.coarse_grain_buffer &= s.coarse_grain_buffer;
        caps.fine_grain_buffer &= s.fine_grain_buffer;
        caps.fine_grain_system &= s.fine_grain_system;
        caps.atomics &= s.atomics;
    }
    caps
}

/// Whether some device of `ctx` supports SVM at all.
pub fn context_has_svm(ctx: &Context) -> bool {
    ctx.devices.iter().any(|d| d.info().svm.any())
}

/// Whether some device of `ctx` supports fine-grain system SVM.
pub fn context_has_system_svm(ctx: &Context) -> bool {
    ctx.devices.iter().any(|d| d.info().svm.fine_grain_system)
}

/// clSVMAlloc: the address of a new allocation of `size` bytes. clSVMAlloc reports no error
/// code (it returns NULL); the error here says which rule refused the allocation.
pub fn alloc(ctx: &Context, flags: cl_svm_mem_flags, size: usize, alignment: u32) -> Result<usize, cl_int> {
    let has = |f: u32| flags & f as cl_svm_mem_flags != 0;
    // "If no devices in context support SVM, clSVMAlloc returns NULL" (not an SVM context).
    if !context_has_svm(ctx) {
        return Err(CL_INVALID_OPERATION);
    }
    // "flags does not contain a valid combination of values": unknown bits, more than one of
    // the read/write flags ("Memory Flags": mutually exclusive), CL_MEM_SVM_ATOMICS without
    // CL_MEM_SVM_FINE_GRAIN_BUFFER ("CL_MEM_SVM_ATOMICS ... can only be used with
    // CL_MEM_SVM_FINE_GRAIN_BUFFER").
    if flags & !SVM_ALLOC_FLAGS != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let access = [CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY].iter().filter(|&&f| has(f)).count();
    if access > 1 || (has(CL_MEM_SVM_ATOMICS) && !has(CL_MEM_SVM_FINE_GRAIN_BUFFER)) {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_MEM_SVM_FINE_GRAIN_BUFFER or CL_MEM_SVM_ATOMICS is specified in flags and these are
    // not supported by at least one device in context."
    let caps = common_capabilities(ctx);
    if (has(CL_MEM_SVM_FINE_GRAIN_BUFFER) && !caps.fine_grain_buffer) || (has(CL_MEM_SVM_ATOMICS) && !caps.atomics) {
        return Err(CL_INVALID_VALUE);
    }
    // "size is 0 or > CL_DEVICE_MAX_MEM_ALLOC_SIZE value for any device in context."
    let max = ctx.devices.iter().map(|d| d.info().max_mem_alloc_size).min().unwrap_or(0);
    if size == 0 || size as u64 > max {
        return Err(CL_INVALID_VALUE);
    }
    // "alignment is not a power of two or the OpenCL implementation cannot support the
    // specified alignment for at least one device in context." 0 is the default: "the size
    // of the largest data type supported by the OpenCL implementation" (long16: 128 bytes,
    // which every allocation gets anyway).
    let align = if alignment == 0 { 128 } else { alignment as usize };
    if !align.is_power_of_two() || align > Storage::MAX_ALIGN {
        return Err(CL_INVALID_VALUE);
    }
    let storage = Storage::alloc_aligned(size, align)?;
    let alloc = Arc::new(SvmAlloc { storage, flags });
    let address = alloc.address();
    ctx.svm.insert(alloc);
    Ok(address)
}

/// clSVMFree: forgets the allocation starting at `addr` (its bytes go once no pending command
/// or launch holds it). NULL, or an address that is not the start of an allocation of `ctx`,
/// does nothing: clSVMFree has no way to report an error.
pub fn free(ctx: &Context, addr: usize) -> Option<Arc<SvmAlloc>> {
    if addr == 0 {
        return None;
    }
    ctx.svm.remove(addr)
}

/// The checks of clEnqueueSVMMemcpy that need no pointer read: "CL_MEM_COPY_OVERLAP if the
/// values specified for dst_ptr, src_ptr and size result in an overlapping copy."
pub fn check_memcpy(dst: usize, src: usize, size: usize) -> Result<(), cl_int> {
    if dst == 0 || src == 0 {
        return Err(CL_INVALID_VALUE);
    }
    let (Some(dst_end), Some(src_end)) = (dst.checked_add(size), src.checked_add(size)) else {
        return Err(CL_INVALID_VALUE);
    };
    if size > 0 && src < dst_end && dst < src_end {
        return Err(CL_MEM_COPY_OVERLAP);
    }
    Ok(())
}

/// The checks of clEnqueueSVMMemFill on its scalar arguments.
pub fn check_fill(svm_ptr: usize, pattern_is_null: bool, pattern_size: usize, size: usize) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if svm_ptr is NULL." "CL_INVALID_VALUE if pattern is NULL or if
    // pattern_size is 0 or if pattern_size is not one of {1, 2, 4, 8, 16, 32, 64, 128}."
    if svm_ptr == 0 || pattern_is_null || !pattern_size.is_power_of_two() || pattern_size > 128 {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if svm_ptr is not aligned to pattern_size bytes." "CL_INVALID_VALUE if
    // size is not a multiple of pattern_size."
    if !svm_ptr.is_multiple_of(pattern_size) || !size.is_multiple_of(pattern_size) {
        return Err(CL_INVALID_VALUE);
    }
    if svm_ptr.checked_add(size).is_none() {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// The checks of clEnqueueSVMMap on its scalar arguments.
pub fn check_map(svm_ptr: usize, size: usize, flags: cl_map_flags) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if svm_ptr is NULL." "CL_INVALID_VALUE if size is 0 or if values
    // specified in map_flags are not valid." (CL_MAP_WRITE_INVALIDATE_REGION excludes the
    // other two, as for clEnqueueMapBuffer.)
    let valid = (CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags;
    let invalidate = CL_MAP_WRITE_INVALIDATE_REGION as cl_map_flags;
    if svm_ptr == 0 || size == 0 || flags & !valid != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if flags & invalidate != 0 && flags & !invalidate != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if svm_ptr.checked_add(size).is_none() {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// The checks of clEnqueueSVMMigrateMem: `ranges` are (pointer, size) pairs as given.
pub fn check_migrate(ctx: &Context, ranges: &[(usize, usize)], flags: cl_mem_migration_flags) -> Result<(), cl_int> {
    // "CL_INVALID_VALUE if flags is not 0 or is not any of the values described in the
    // table above."
    let valid = (CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) as cl_mem_migration_flags;
    if flags & !valid != 0 {
        return Err(CL_INVALID_VALUE);
    }
    for &(ptr, size) in ranges {
        // "CL_INVALID_VALUE if any pointer in svm_pointers is NULL" and "if sizes[i] is
        // non-zero range [svm_pointers[i], svm_pointers[i]+sizes[i]) is not contained within
        // an existing clSVMAlloc allocation."
        if ptr == 0 {
            return Err(CL_INVALID_VALUE);
        }
        let alloc = ctx.svm.find(ptr).ok_or(CL_INVALID_VALUE)?;
        if size != 0 && !alloc.contains(ptr, size) {
            return Err(CL_INVALID_VALUE);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> Arc<Context> {
        Context::new(crate::platform::platform().devices.clone(), Vec::new(), None).unwrap()
    }

    #[test]
    fn alloc_find_and_free() {
        let ctx = context();
        let rw = CL_MEM_READ_WRITE as cl_svm_mem_flags;
        let a = alloc(&ctx, rw, 1000, 0).unwrap();
        assert_eq!(a % 128, 0);
        let b = alloc(&ctx, rw | CL_MEM_SVM_FINE_GRAIN_BUFFER as cl_svm_mem_flags, 64, 4096).unwrap();
        assert_eq!(b % 4096, 0);
        assert_eq!(ctx.svm.len(), 2);
        assert_eq!(ctx.svm.find(a + 999).unwrap().address(), a);
        assert!(ctx.svm.find(a + 1000).is_none_or(|x| x.address() != a));
        assert_eq!(ctx.svm.find(b + 3).unwrap().size(), 64);
        assert_eq!(ctx.svm.find_all(&[a, a + 8, b, 16]).len(), 2);
        // One past the end belongs to the allocation (unless another starts there).
        assert!(ctx.svm.find(b + 64).is_none_or(|x| x.address() != b));
        assert!(ctx.svm.find_all(&[b + 64]).iter().any(|x| x.address() == b || x.address() == b + 64));
        assert!(ctx.svm.find(b).unwrap().holds(b + 64) && !ctx.svm.find(b).unwrap().holds(b + 65));
        // Freeing an inner address or NULL does nothing.
        assert!(free(&ctx, a + 8).is_none());
        assert!(free(&ctx, 0).is_none());
        let held = free(&ctx, a).unwrap();
        assert_eq!(held.address(), a, "a command holding the allocation keeps it");
        assert!(ctx.svm.find(a).is_none());
        assert!(free(&ctx, b).is_some());
        assert!(ctx.svm.is_empty());
    }

    #[test]
    fn alloc_rejects_what_the_specification_rejects() {
        let ctx = context();
        let f = |x: u32| x as cl_svm_mem_flags;
        assert_eq!(alloc(&ctx, f(CL_MEM_READ_WRITE), 0, 0), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_READ_WRITE), usize::MAX, 0), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_READ_WRITE), 64, 3), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_READ_WRITE), 64, 1 << 30), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_READ_WRITE | CL_MEM_READ_ONLY), 64, 0), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_SVM_ATOMICS), 64, 0), Err(CL_INVALID_VALUE));
        assert_eq!(alloc(&ctx, f(CL_MEM_USE_HOST_PTR), 64, 0), Err(CL_INVALID_VALUE));
        let ok = alloc(&ctx, f(CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS), 64, 0).unwrap();
        assert!(free(&ctx, ok).is_some());
    }

    #[test]
    fn scalar_checks() {
        assert_eq!(check_memcpy(0, 8, 4), Err(CL_INVALID_VALUE));
        assert_eq!(check_memcpy(8, 0, 4), Err(CL_INVALID_VALUE));
        assert_eq!(check_memcpy(100, 104, 8), Err(CL_MEM_COPY_OVERLAP));
        assert_eq!(check_memcpy(104, 100, 8), Err(CL_MEM_COPY_OVERLAP));
        assert_eq!(check_memcpy(100, 108, 8), Ok(()));
        assert_eq!(check_memcpy(100, 100, 0), Ok(()));
        assert_eq!(check_fill(0, false, 4, 16), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(64, true, 4, 16), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(64, false, 3, 12), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(64, false, 256, 256), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(66, false, 4, 16), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(64, false, 4, 18), Err(CL_INVALID_VALUE));
        assert_eq!(check_fill(128, false, 128, 256), Ok(()));
        let r = CL_MAP_READ as cl_map_flags;
        assert_eq!(check_map(0, 4, r), Err(CL_INVALID_VALUE));
        assert_eq!(check_map(64, 0, r), Err(CL_INVALID_VALUE));
        assert_eq!(check_map(64, 4, 1 << 7), Err(CL_INVALID_VALUE));
        assert_eq!(
            check_map(64, 4, (CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(check_map(64, 4, r), Ok(()));
    }

    #[test]
    fn migrate_checks_ranges() {
        let ctx = context();
        let a = alloc(&ctx, CL_MEM_READ_WRITE as cl_svm_mem_flags, 256, 0).unwrap();
        assert_eq!(check_migrate(&ctx, &[(a, 256), (a + 16, 0)], 0), Ok(()));
        assert_eq!(check_migrate(&ctx, &[(a + 16, 256)], 0), Err(CL_INVALID_VALUE));
        assert_eq!(check_migrate(&ctx, &[(0, 0)], 0), Err(CL_INVALID_VALUE));
        assert_eq!(check_migrate(&ctx, &[(a, 4)], 1 << 9), Err(CL_INVALID_VALUE));
        free(&ctx, a);
        assert_eq!(check_migrate(&ctx, &[(a, 4)], 0), Err(CL_INVALID_VALUE));
    }

    #[test]
    fn devices_report_svm() {
        let devices = &crate::platform::platform().devices;
        for d in devices {
            let bits = capability_bits(&d.info().svm);
            let buffer = (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER | CL_DEVICE_SVM_ATOMICS)
                as cl_device_svm_capabilities;
            assert_eq!(bits & buffer, buffer);
        }
    }
}
