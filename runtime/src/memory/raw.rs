//! All raw memory handling of the runtime: the storage of buffers (owned allocations and the
//! application's CL_MEM_USE_HOST_PTR memory), the application pointers commands read from and
//! write to, and the byte copies between them. This is the only module of the runtime that
//! uses `unsafe`; every other module goes through the bounds-checked functions here.
//!
//! Concurrency: a buffer's bytes may be read and written at once by a command here and by a
//! kernel or a mapped host pointer; OpenCL leaves the result of such races undefined for the
//! application. The copies below therefore never create Rust references to buffer bytes, only
//! raw-pointer copies, so no aliasing rule of Rust is involved.

use crate::cl::*;
use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;

/// Alignment of every buffer allocation: CL_DEVICE_MEM_BASE_ADDR_ALIGN is 1024 bits.
pub const BUFFER_ALIGN: usize = 128;

/// The largest alignment for which the system allocator's `alloc_zeroed` is `calloc` (glibc's
/// malloc alignment on 64-bit hosts).
const CALLOC_ALIGN: usize = 16;

/// Start offsets of successive huge-page buffers within their first 2 MiB page: allocation `n`
/// starts `STAGGER[n % 3]` bytes in. Two buffers a kernel streams through side by side (one
/// read at index `i`, the other written at `i`) then never share their addresses' low 12 bits
/// (the L1 set and the 4 KiB alias a store buffer compares): every difference between two
/// of these offsets, either way round and modulo 4 KiB, is 1152 bytes or more, and each is a
/// multiple of [`BUFFER_ALIGN`]. Measured with the 4096^2 5-point stencil (docs/PERFORMANCE.md):
/// 3.3-3.8 ms against 3.6-4.3 ms with every buffer at its page's start; a distance
/// of 64 or 4160 bytes (the store 16 floats ahead of a load in the low 12 bits) doubled it.
const STAGGER: [usize; 3] = [0, 1152, 2304];

/// Size and alignment of a transparent huge page (x86-64, AArch64 with 4 KiB base pages).
/// Buffers of at least this size are mapped on their own, aligned to it and advised as huge-page
/// memory (see [`Storage::alloc`]).
pub const HUGE_PAGE: usize = 2 << 20;

/// Mappings of released huge-page buffers from [`Storage::alloc_reused`] (start, length),
/// kept for the next such buffer of their size, oldest first. An
/// application that creates an output buffer per operation (OpenCV's T-API does, for every
/// call) otherwise has the kernel zero fresh pages for each: 60% of a 1920x1080 float
/// `multiply` went there. At most [`KEPT_BYTES`] in [`KEPT_MAPPINGS`] mappings; the oldest go
/// back to the system. A kept mapping's untouched pages still cost nothing.
#[cfg(target_os = "linux")]
static KEPT: parking_lot::Mutex<Vec<(usize, usize)>> = parking_lot::const_mutex(Vec::new());
/// The most bytes of released mappings [`KEPT`] holds.
#[cfg(target_os = "linux")]
const KEPT_BYTES: usize = 256 << 20;
/// The most mappings [`KEPT`] holds.
#[cfg(target_os = "linux")]
const KEPT_MAPPINGS: usize = 16;

/// The bytes of a buffer: an owned allocation aligned to [`BUFFER_ALIGN`] (zero-initialised,
/// or, from [`Storage::alloc_reused`], possibly a released buffer's bytes), or the
/// application's memory for CL_MEM_USE_HOST_PTR.
#[derive(Debug)]
pub struct Storage {
    ptr: NonNull<u8>,
    len: usize,
    /// Who owns the bytes and how they are released.
    owner: Owner,
}

/// Owner of a [`Storage`]'s bytes.
#[derive(Debug)]
enum Owner {
    /// A block of the global allocator: its base address and layout.
    Heap(NonNull<u8>, Layout),
    /// An anonymous mapping of its own: its start and length, both multiples of
    /// [`HUGE_PAGE`]; the buffer starts at or a little after the start (see [`STAGGER`]).
    /// `keep`: released into [`KEPT`] for reuse ([`Storage::alloc_reused`]'s), else unmapped.
    #[cfg(target_os = "linux")]
    Mapped { start: usize, len: usize, keep: bool },
    /// The application's memory (CL_MEM_USE_HOST_PTR).
    Application,
}

// SAFETY: Storage is a pointer to memory owned by it (or lent by the application for its whole
// lifetime, see `Storage::use_host`); nothing in it is tied to a thread, and all access goes
// through raw-pointer copies whose races are the application's to avoid (see module docs).
unsafe impl Send for Storage {}
// SAFETY: as for Send: `&Storage` only hands out the address and performs raw copies.
unsafe impl Sync for Storage {}

impl Storage {
    /// A zero-initialised allocation of `len` (> 0) bytes aligned to [`BUFFER_ALIGN`].
    ///
    /// The memory is committed lazily, page by page as it is first touched, like a real
    /// driver's: applications probe free memory by creating buffers they barely touch
    /// (hashcat creates 64 MiB buffers up to CL_DEVICE_GLOBAL_MEM_SIZE).
    ///
    /// Buffers of at least [`HUGE_PAGE`] bytes (on Linux) get an anonymous mapping of their
    /// own, aligned to [`HUGE_PAGE`] and advised `MADV_HUGEPAGE` before their first touch
    /// (see [`Storage::map_huge`]). Smaller ones come from the global allocator:
    /// `alloc_zeroed` with an alignment above the allocator's minimum is `posix_memalign` +
    /// memset, which commits every page; with the minimum alignment it is `calloc`, whose large
    /// blocks are fresh zero pages (mmap). So the block is over-allocated at the minimum
    /// alignment and the buffer starts at its first [`BUFFER_ALIGN`] boundary.
    pub fn alloc(len: usize) -> Result<Self, cl_int> {
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE {
            return Self::map_huge(len, next_stagger(), false);
        }
        let size = len.max(1).checked_add(BUFFER_ALIGN).ok_or(CL_INVALID_BUFFER_SIZE)?;
        let layout = Layout::from_size_align(size, CALLOC_ALIGN).map_err(|_| CL_INVALID_BUFFER_SIZE)?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        let base = NonNull::new(base).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        let skip = base.as_ptr().align_offset(BUFFER_ALIGN);
        debug_assert!(skip < BUFFER_ALIGN);
        // SAFETY: skip < BUFFER_ALIGN, so `base + skip .. + len` lies inside the block of
        // len.max(1) + BUFFER_ALIGN bytes.
        let ptr = unsafe { base.add(skip) };
        Ok(Self { ptr, len, owner: Owner::Heap(base, layout) })
    }

    /// [`Storage::alloc`] for a buffer whose first contents are undefined (OpenCL's buffer
    /// without a host pointer, or one about to be filled from the application's memory): a
    /// huge-page buffer takes a released buffer's mapping of its size where one is kept
    /// ([`KEPT`]), its old bytes and all; anything else is a new zeroed allocation.
    pub fn alloc_reused(len: usize) -> Result<Self, cl_int> {
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE {
            let offset = next_stagger();
            let size = mapped_len(len, offset)?;
            let reused = {
                let mut kept = KEPT.lock();
                kept.iter().position(|&(_, l)| l == size).map(|k| kept.remove(k))
            };
            return match reused {
                Some((start, mapped)) => {
                    let ptr = NonNull::new((start + offset) as *mut u8).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
                    Ok(Self { ptr, len, owner: Owner::Mapped { start, len: mapped, keep: true } })
                }
                None => Self::map_huge(len, offset, true),
            };
        }
        Self::alloc(len)
    }

    /// The largest alignment [`Storage::alloc_aligned`] gives (clSVMAlloc's `alignment`).
    pub const MAX_ALIGN: usize = HUGE_PAGE;

    /// A zero-initialised allocation of `len` (> 0) bytes aligned to `align` (a power of two
    /// of at most [`Storage::MAX_ALIGN`]; below [`BUFFER_ALIGN`] it is [`BUFFER_ALIGN`]):
    /// the storage of an SVM allocation (clSVMAlloc).
    pub fn alloc_aligned(len: usize, align: usize) -> Result<Self, cl_int> {
        if !align.is_power_of_two() || align > Self::MAX_ALIGN {
            return Err(CL_INVALID_VALUE);
        }
        // Storage::alloc already aligns to BUFFER_ALIGN; a huge mapping without its stagger
        // is aligned to HUGE_PAGE.
        if align <= BUFFER_ALIGN {
            return Self::alloc(len);
        }
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE {
            return Self::map_huge(len, 0, false);
        }
        let size = len.max(1).checked_add(align).ok_or(CL_INVALID_BUFFER_SIZE)?;
        let layout = Layout::from_size_align(size, CALLOC_ALIGN).map_err(|_| CL_INVALID_BUFFER_SIZE)?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        let base = NonNull::new(base).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        let skip = base.as_ptr().align_offset(align);
        debug_assert!(skip < align);
        // SAFETY: skip < align, so `base + skip .. + len` lies inside the block of
        // len.max(1) + align bytes.
        let ptr = unsafe { base.add(skip) };
        Ok(Self { ptr, len, owner: Owner::Heap(base, layout) })
    }

    /// A private anonymous mapping of `offset + len` bytes rounded up to [`HUGE_PAGE`], starting
    /// at a [`HUGE_PAGE`] boundary, advised `MADV_HUGEPAGE` before anything touches it; the
    /// buffer starts `offset` bytes into it (a multiple of [`BUFFER_ALIGN`], see [`STAGGER`]).
    ///
    /// Where transparent huge pages are enabled on request only (`madvise`, the default of
    /// many distributions), 4 KiB pages cost streaming kernels a third or more of the memory
    /// bandwidth in TLB misses (docs/PERFORMANCE.md, copy bandwidth). An anonymous mapping is
    /// zero-filled and committed lazily (an untouched range costs nothing; with huge pages a
    /// first touch commits the 2 MiB around it). The kernel aligns mappings to 4 KiB only,
    /// so `len + HUGE_PAGE` bytes are mapped and the parts before the first boundary and after
    /// the rounded length are unmapped again. The advice is only a hint: where THP is
    /// unavailable or disabled it fails or is ignored and the buffer keeps 4 KiB pages.
    /// `keep`: the mapping goes to [`KEPT`] when the storage is released.
    #[cfg(target_os = "linux")]
    fn map_huge(len: usize, offset: usize, keep: bool) -> Result<Self, cl_int> {
        debug_assert!(offset.is_multiple_of(BUFFER_ALIGN) && offset < HUGE_PAGE);
        let mapped = mapped_len(len, offset)?;
        let over = mapped + HUGE_PAGE;
        // SAFETY: a new private anonymous mapping at an address of the kernel's choice touches
        // no existing memory; the result is checked for MAP_FAILED below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            // ENOMEM: the kernel's overcommit policy refused the size (as calloc fails).
            return Err(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        let base = base as usize;
        let start = base.next_multiple_of(HUGE_PAGE);
        let head = start - base;
        let tail = over - head - mapped;
        // SAFETY: `base .. start` (head bytes) and `start + mapped .. base + over` (tail bytes)
        // lie inside the mapping just created, which nothing else knows of; both are multiples
        // of the page size (base and over are page multiples, start and mapped multiples of
        // HUGE_PAGE). munmap of a zero length is skipped. A failure leaves the bytes mapped:
        // wasted address space only, never unsound, so it is ignored.
        unsafe {
            if head > 0 {
                libc::munmap(base as *mut c_void, head);
            }
            if tail > 0 {
                libc::munmap((start + mapped) as *mut c_void, tail);
            }
        }
        // SAFETY: `start .. start + mapped` is the mapping kept above, untouched so far;
        // MADV_HUGEPAGE changes neither its contents nor its validity. A failure (EINVAL:
        // kernel without THP) leaves 4 KiB pages, which is correct, so it is ignored.
        unsafe { libc::madvise(start as *mut c_void, mapped, libc::MADV_HUGEPAGE) };
        let ptr = NonNull::new((start + offset) as *mut u8).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        Ok(Self { ptr, len, owner: Owner::Mapped { start, len: mapped, keep } })
    }

    /// The application's memory as a buffer's storage (CL_MEM_USE_HOST_PTR): never copied.
    ///
    /// # Safety
    /// `ptr` must be non-null and valid for reads and writes of `len` bytes until the memory
    /// object using it is destroyed (after its destructor callbacks have run), which is what
    /// OpenCL requires of an application passing CL_MEM_USE_HOST_PTR.
    pub unsafe fn use_host(ptr: *mut c_void, len: usize) -> Result<Self, cl_int> {
        let ptr = NonNull::new(ptr as *mut u8).ok_or(CL_INVALID_HOST_PTR)?;
        Ok(Self { ptr, len, owner: Owner::Application })
    }

    /// Address of byte 0.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True for an owned allocation, false for the application's memory.
    pub fn is_owned(&self) -> bool {
        !matches!(self.owner, Owner::Application)
    }

    /// Address of byte `offset` after checking that `offset..offset+len` lies in the storage.
    fn range(&self, offset: usize, len: usize) -> Result<*mut u8, cl_int> {
        check_range(offset, len, self.len)?;
        // SAFETY: offset + len <= self.len (checked above), so the result stays inside (or one
        // past the end of) the allocation.
        Ok(unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// Copies `len` bytes at `offset` out into a vector (used by tests and diagnostics).
    pub fn to_vec(&self, offset: usize, len: usize) -> Result<Vec<u8>, cl_int> {
        let src = self.range(offset, len)?;
        let mut out = vec![0u8; len];
        // SAFETY: `src` is valid for `len` bytes (range check); `out` is a fresh vector of `len`
        // bytes, so the regions cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), len) };
        Ok(out)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        match self.owner {
            // SAFETY: `base` was returned by `alloc_zeroed(layout)` in `Storage::alloc` and is
            // deallocated exactly once, here.
            Owner::Heap(base, layout) => unsafe { std::alloc::dealloc(base.as_ptr(), layout) },
            // This storage's mapping is kept for reuse (`keep`) or unmapped, with the kept
            // ones that no longer fit.
            #[cfg(target_os = "linux")]
            Owner::Mapped { start, len, keep } => {
                let unmap = if keep { keep_released(start, len) } else { vec![(start, len)] };
                for (start, len) in unmap {
                    // SAFETY: each is a mapping `Storage::map_huge` kept that no storage
                    // uses (this one's, dropped now, or one released earlier and evicted
                    // from `KEPT`, which holds only released mappings), unmapped exactly
                    // once, here. A failure cannot be handled in a destructor and leaves the
                    // bytes mapped (a leak, not unsound).
                    unsafe { libc::munmap(start as *mut c_void, len) };
                }
            }
            Owner::Application => {}
        }
    }
}

/// The length of [`Storage::map_huge`]'s mapping for `len` bytes from `offset` on: rounded up
/// to [`HUGE_PAGE`], with room for one more (the alignment slack) within the global
/// allocator's limit (a Layout's size is at most isize::MAX).
#[cfg(target_os = "linux")]
fn mapped_len(len: usize, offset: usize) -> Result<usize, cl_int> {
    len.checked_add(offset)
        .and_then(|l| l.checked_next_multiple_of(HUGE_PAGE))
        .filter(|m| m.checked_add(HUGE_PAGE).is_some_and(|o| o <= isize::MAX as usize))
        .ok_or(CL_INVALID_BUFFER_SIZE)
}

/// The stagger offset of the next huge-page buffer ([`STAGGER`]).
#[cfg(target_os = "linux")]
fn next_stagger() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static HUGE_BUFFERS: AtomicUsize = AtomicUsize::new(0);
    STAGGER[HUGE_BUFFERS.fetch_add(1, Ordering::Relaxed) % STAGGER.len()]
}

/// Keeps the released mapping `start .. start + len` for reuse ([`KEPT`]) and returns the
/// mappings to unmap: the oldest kept ones that no longer fit, or this one if it cannot be
/// kept.
#[cfg(target_os = "linux")]
fn keep_released(start: usize, len: usize) -> Vec<(usize, usize)> {
    if len > KEPT_BYTES {
        return vec![(start, len)];
    }
    let mut kept = KEPT.lock();
    let mut out = Vec::new();
    while !kept.is_empty()
        && (kept.len() >= KEPT_MAPPINGS || kept.iter().map(|&(_, l)| l).sum::<usize>() + len > KEPT_BYTES)
    {
        out.push(kept.remove(0));
    }
    kept.push((start, len));
    out
}

/// An application pointer a command reads from or writes to (clEnqueueReadBuffer's `ptr`,
/// clCreateBuffer's host_ptr with CL_MEM_COPY_HOST_PTR, ...), with the byte length the command
/// may touch.
#[derive(Debug, Clone, Copy)]
pub struct HostPtr {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the pointer is only used by raw copies while the command runs, possibly on the queue's
// worker thread; the constructor's contract makes it valid there until the command completes.
unsafe impl Send for HostPtr {}
// SAFETY: as for Send; a shared HostPtr only performs raw copies.
unsafe impl Sync for HostPtr {}

impl HostPtr {
    /// Wraps an application pointer of `len` bytes.
    ///
    /// # Safety
    /// `ptr` must be valid for reads (and, for commands that write to it, writes) of `len` bytes
    /// until the command using it has completed, which is OpenCL's rule for the pointers given
    /// to clEnqueueReadBuffer, clEnqueueWriteBuffer and their rect variants (and, for
    /// clCreateBuffer with CL_MEM_COPY_HOST_PTR, until the call returns).
    pub unsafe fn new(ptr: *const c_void, len: usize) -> Result<Self, cl_int> {
        let ptr = NonNull::new(ptr as *mut u8).ok_or(CL_INVALID_VALUE)?;
        Ok(Self { ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn range(&self, offset: usize, len: usize) -> Result<*mut u8, cl_int> {
        check_range(offset, len, self.len)?;
        // SAFETY: offset + len <= self.len, the length the constructor's contract covers.
        Ok(unsafe { self.ptr.as_ptr().add(offset) })
    }
}

fn check_range(offset: usize, len: usize, total: usize) -> Result<(), cl_int> {
    match offset.checked_add(len) {
        Some(end) if end <= total => Ok(()),
        _ => Err(CL_INVALID_VALUE),
    }
}

/// Copies `len` bytes from the storage at `offset` to the application pointer at `host_offset`.
pub fn read(src: &Storage, offset: usize, dst: &HostPtr, host_offset: usize, len: usize) -> Result<(), cl_int> {
    let s = src.range(offset, len)?;
    let d = dst.range(host_offset, len)?;
    // SAFETY: both ranges were checked to lie within their regions, valid for `len` bytes
    // (storage: owned or lent for the buffer's lifetime; host: the HostPtr contract).
    // `ptr::copy` allows the application's pointer to overlap the buffer (e.g. a mapped
    // pointer or the CL_MEM_USE_HOST_PTR memory itself).
    unsafe { std::ptr::copy(s, d, len) };
    Ok(())
}

/// Copies `len` bytes from the application pointer at `host_offset` to the storage at `offset`.
pub fn write(dst: &Storage, offset: usize, src: &HostPtr, host_offset: usize, len: usize) -> Result<(), cl_int> {
    let d = dst.range(offset, len)?;
    let s = src.range(host_offset, len)?;
    // SAFETY: as in `read`, with the roles swapped.
    unsafe { std::ptr::copy(s, d, len) };
    Ok(())
}

/// Copies `len` bytes between (possibly the same) storages.
pub fn copy(src: &Storage, src_offset: usize, dst: &Storage, dst_offset: usize, len: usize) -> Result<(), cl_int> {
    let s = src.range(src_offset, len)?;
    let d = dst.range(dst_offset, len)?;
    // SAFETY: both ranges are checked to lie within their storages; `ptr::copy` handles overlap.
    unsafe { std::ptr::copy(s, d, len) };
    Ok(())
}

/// Fills `len` bytes at `offset` (a multiple of the pattern's length) with repeats of `pattern`.
pub fn fill(dst: &Storage, offset: usize, pattern: &[u8], len: usize) -> Result<(), cl_int> {
    if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
        return Err(CL_INVALID_VALUE);
    }
    let d = dst.range(offset, len)?;
    for i in (0..len).step_by(pattern.len()) {
        // SAFETY: i + pattern.len() <= len and `d..d+len` lies in the storage (range check);
        // `pattern` is a Rust slice, which cannot overlap the buffer storage.
        unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), d.add(i), pattern.len()) };
    }
    Ok(())
}

/// Copies `len` bytes between two application pointers (clEnqueueSVMMemcpy); the regions
/// may overlap.
pub fn copy_host(src: &HostPtr, dst: &HostPtr, len: usize) -> Result<(), cl_int> {
    let s = src.range(0, len)?;
    let d = dst.range(0, len)?;
    // SAFETY: both ranges lie within the lengths their HostPtr contracts cover (checked);
    // `ptr::copy` allows overlap.
    unsafe { std::ptr::copy(s, d, len) };
    Ok(())
}

/// Fills `len` bytes (a multiple of the pattern's length) at an application pointer with
/// repeats of `pattern` (clEnqueueSVMMemFill).
pub fn fill_host(dst: &HostPtr, pattern: &[u8], len: usize) -> Result<(), cl_int> {
    if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
        return Err(CL_INVALID_VALUE);
    }
    let d = dst.range(0, len)?;
    for i in (0..len).step_by(pattern.len()) {
        // SAFETY: i + pattern.len() <= len and `d..d+len` lies in the HostPtr's range
        // (checked); `pattern` is a Rust slice the application cannot reach.
        unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), d.add(i), pattern.len()) };
    }
    Ok(())
}

/// The [`softcl_compiler::abi::ImageArg`] an image memory object hands to kernels: boxed so
/// that its address stays fixed for the object's life (argument blocks hold that address).
pub struct ImageArgBox(Box<softcl_compiler::abi::ImageArg>);

// SAFETY: the ImageArg is never mutated after construction; its `data` pointer is the address
// of the image's storage, which kernels and commands access under OpenCL's own rules (as they
// access a buffer's storage through `Storage`, itself Send + Sync).
unsafe impl Send for ImageArgBox {}
// SAFETY: as for Send: shared access only reads the fields.
unsafe impl Sync for ImageArgBox {}

impl ImageArgBox {
    pub fn new(arg: softcl_compiler::abi::ImageArg) -> Self {
        Self(Box::new(arg))
    }

    /// The fixed address of the ImageArg (what an image kernel argument holds).
    pub fn address(&self) -> usize {
        &*self.0 as *const softcl_compiler::abi::ImageArg as usize
    }

    pub fn get(&self) -> &softcl_compiler::abi::ImageArg {
        &self.0
    }
}

impl std::fmt::Debug for ImageArgBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_zeroed() {
        for len in [1usize, 3, 128, 1000, 1 << 20, HUGE_PAGE - 1, HUGE_PAGE, HUGE_PAGE + 1, 5 << 20] {
            let s = Storage::alloc(len).unwrap();
            assert_eq!(s.as_ptr() as usize % BUFFER_ALIGN, 0);
            assert!(s.to_vec(0, len).unwrap().iter().all(|&b| b == 0));
            assert!(s.is_owned());
        }
    }

    /// No two of the stagger offsets share the low 12 bits of an address or come within
    /// 1152 bytes of each other modulo 4 KiB, either way round; a huge buffer starts at one of
    /// them and its whole length is usable.
    #[test]
    #[cfg(target_os = "linux")]
    fn huge_buffers_are_staggered() {
        for &a in &STAGGER {
            assert_eq!(a % BUFFER_ALIGN, 0);
            for &b in STAGGER.iter().filter(|&&b| b != a) {
                let d = (a + 4096 - b % 4096) % 4096;
                assert!((1152..=4096 - 1152).contains(&d), "{a} {b}");
            }
        }
        for offset in STAGGER {
            let b = Storage::map_huge(HUGE_PAGE + 5, offset, false).unwrap();
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE, offset);
            fill(&b, 0, &[7], b.len()).unwrap();
            assert_eq!(b.to_vec(b.len() - 1, 1).unwrap(), vec![7]);
        }
        let offsets: Vec<usize> =
            (0..3).map(|_| Storage::alloc(HUGE_PAGE).unwrap().as_ptr() as usize % HUGE_PAGE).collect();
        assert!(offsets.iter().all(|o| STAGGER.contains(o)), "{offsets:?}");
    }

    /// A released huge-page buffer's mapping comes back for the next buffer of its size
    /// whose contents may be anything, not for a zeroed one; the kept mappings stay bounded.
    #[test]
    #[cfg(target_os = "linux")]
    fn released_huge_buffers_are_reused_for_undefined_contents_only() {
        // A size no other test allocates, so that the kept mapping is this test's.
        let len = 7 * HUGE_PAGE + 12345;
        let first = Storage::alloc_reused(len).unwrap();
        fill(&first, 0, &[0x5a], len).unwrap();
        let Owner::Mapped { start, .. } = first.owner else { panic!("not a mapping") };
        drop(first);
        let zeroed = Storage::alloc(len).unwrap();
        assert!(zeroed.to_vec(0, len).unwrap().iter().all(|&b| b == 0), "a zeroed buffer got old bytes");
        assert!(matches!(zeroed.owner, Owner::Mapped { keep: false, .. }), "a zeroed allocation would be kept");
        let again = Storage::alloc_reused(len).unwrap();
        let Owner::Mapped { start: again_start, .. } = again.owner else { panic!("not a mapping") };
        assert_eq!(again_start, start, "the released mapping was not reused");
        assert_eq!(again.as_ptr() as usize % BUFFER_ALIGN, 0);
        assert!(STAGGER.contains(&(again.as_ptr() as usize - again_start)));
        fill(&again, 0, &[1], len).unwrap();
        drop((zeroed, again));
        let kept = KEPT.lock();
        assert!(kept.len() <= KEPT_MAPPINGS && kept.iter().map(|&(_, l)| l).sum::<usize>() <= KEPT_BYTES);
    }

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        // Larger than any address space (57-bit with 5-level paging) but a valid Layout size:
        // the allocation itself fails.
        assert_eq!(Storage::alloc(1 << 60).unwrap_err(), CL_MEM_OBJECT_ALLOCATION_FAILURE);
        for len in [isize::MAX as usize, usize::MAX - HUGE_PAGE, usize::MAX] {
            assert_eq!(Storage::alloc(len).unwrap_err(), CL_INVALID_BUFFER_SIZE, "{len}");
        }
    }

    #[test]
    fn copies_are_bounds_checked() {
        let s = Storage::alloc(16).unwrap();
        let mut host = [1u8, 2, 3, 4];
        // SAFETY: `host` outlives every use of `h` in this test.
        let h = unsafe { HostPtr::new(host.as_mut_ptr() as *const c_void, host.len()) }.unwrap();
        write(&s, 12, &h, 0, 4).unwrap();
        assert_eq!(write(&s, 13, &h, 0, 4), Err(CL_INVALID_VALUE));
        assert_eq!(write(&s, 0, &h, 1, 4), Err(CL_INVALID_VALUE));
        assert_eq!(read(&s, usize::MAX, &h, 0, 2), Err(CL_INVALID_VALUE));
        assert_eq!(s.to_vec(12, 4).unwrap(), vec![1, 2, 3, 4]);
        fill(&s, 0, &[9, 8], 4).unwrap();
        assert_eq!(fill(&s, 0, &[9, 8], 3), Err(CL_INVALID_VALUE));
        copy(&s, 0, &s, 2, 4).unwrap();
        assert_eq!(s.to_vec(0, 6).unwrap(), vec![9, 8, 9, 8, 9, 8]);
        read(&s, 0, &h, 0, 4).unwrap();
        assert_eq!(host, [9, 8, 9, 8]);
    }

    #[test]
    fn aligned_allocations() {
        for align in [1usize, 64, 128, 256, 4096, 1 << 16, HUGE_PAGE] {
            for len in [1usize, 100, 5000, HUGE_PAGE + 3] {
                let s = Storage::alloc_aligned(len, align).unwrap();
                assert_eq!(s.as_ptr() as usize % align.max(BUFFER_ALIGN), 0, "{len} {align}");
                assert!(s.to_vec(0, len).unwrap().iter().all(|&b| b == 0));
            }
        }
        assert_eq!(Storage::alloc_aligned(16, 3).unwrap_err(), CL_INVALID_VALUE);
        assert_eq!(Storage::alloc_aligned(16, 0).unwrap_err(), CL_INVALID_VALUE);
        assert_eq!(Storage::alloc_aligned(16, HUGE_PAGE * 2).unwrap_err(), CL_INVALID_VALUE);
    }

    #[test]
    fn host_copies_and_fills() {
        let mut a = [1u8, 2, 3, 4, 5, 6, 7, 8];
        // SAFETY: `a` outlives both pointers.
        let src = unsafe { HostPtr::new(a.as_ptr() as *const c_void, 6) }.unwrap();
        // SAFETY: as above.
        let dst = unsafe { HostPtr::new(a.as_mut_ptr().wrapping_add(2) as *const c_void, 6) }.unwrap();
        copy_host(&src, &dst, 6).unwrap();
        assert_eq!(a, [1, 2, 1, 2, 3, 4, 5, 6]);
        assert_eq!(copy_host(&src, &dst, 7), Err(CL_INVALID_VALUE));
        // SAFETY: as above.
        let d = unsafe { HostPtr::new(a.as_mut_ptr() as *const c_void, 8) }.unwrap();
        fill_host(&d, &[9, 8], 4).unwrap();
        assert_eq!(a, [9, 8, 9, 8, 3, 4, 5, 6]);
        assert_eq!(fill_host(&d, &[9, 8], 3), Err(CL_INVALID_VALUE));
        assert_eq!(fill_host(&d, &[0; 4], 12), Err(CL_INVALID_VALUE));
    }

    #[test]
    fn use_host_aliases_the_application_memory() {
        let mut host = vec![5u8; 64];
        // SAFETY: `host` outlives `s`.
        let s = unsafe { Storage::use_host(host.as_mut_ptr() as *mut c_void, host.len()) }.unwrap();
        assert_eq!(s.as_ptr(), host.as_mut_ptr());
        assert!(!s.is_owned());
        fill(&s, 8, &[7], 8).unwrap();
        drop(s);
        assert_eq!(&host[8..16], &[7; 8]);
        assert_eq!(host[16], 5);
    }
}
