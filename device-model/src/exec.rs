//! The executor shared by every SoftCL device: NDRange enumeration, per-worker buffers and a
//! persistent thread pool.
//!
//! Design:
//! - One [`Executor`] per device owns a pool of worker threads (one per host hardware thread
//!   but one: the launching thread works too), started by the device's first launch that
//!   needs it and kept until the device is dropped.
//! - A launch becomes a [`Job`]: the kernel, a copy of the argument block, the layout of
//!   `__local` memory, the NDRange and a [`Schedule`]. The job is published in a slot and every
//!   worker takes it; workers claim work-groups in chunks from one atomic counter.
//! - Each worker keeps reusable 128-byte-aligned buffers across launches: `__local` memory
//!   (the kernel's static `__local` variables, then each `__local` argument, each aligned to
//!   128), work-item state (work-group size x `work_item_state_size`) and a private copy of the
//!   argument block whose `ArgKind::Local` slots point at the worker's local memory. Workers
//!   have stacks of [`crate::limits::KERNEL_THREAD_STACK_BYTES`] for the kernels' private
//!   memory; a launch whose packet's private memory would not fit is refused (`Job::new`).
//! - A work-group runs region by region: resume point 0, then each barrier id returned, until
//!   the kernel returns [`FINISHED`]. [`Schedule::WholeGroup`] runs all its work-items in one
//!   call per region (the CPU device); [`Schedule::Simd`] runs SIMD-width slices as hardware
//!   threads (the Gen device) and checks that they all reach the same barrier.
//! - Launches on one device are serialised (each already uses every worker). A panic in a
//!   worker is caught and turned into a [`LaunchError`]; the launch and the pool survive it.
//! - Small launches skip the pool: one work-group, or a kernel whose last launch measured its
//!   work-groups at less in all than waking the pool costs, runs on the launching thread with
//!   the executor's own buffers (see [`run_inline`]). Other launches run on the launching
//!   thread and up to `threads - 1` pool workers (only as many are woken as there are further
//!   chunks); an idle worker polls for 50 us before it sleeps, so a batch of launches does not
//!   pay a wake-up each.
//!
//! Everything a job holds is owned (`Arc`s and copies), so the persistent workers never see a
//! borrowed pointer and no lifetime needs erasing. The launching thread does not return before
//! every worker has stopped using the job, which keeps the compiled code (owned by the
//! caller's `NativeProgram`) alive for as long as it can be called.

use crate::launch::LaunchError;
use crate::observer::Observer;
use parking_lot::{Condvar, Mutex};
use softcl_compiler::abi::{PrintfBuffer, BLOCK_ALIGN};
use softcl_compiler::{ArgKind, KernelInfo, NativeKernel, WorkGroupContext, FINISHED};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// Compiled code the executor can run: [`NativeKernel`] in production, mocks in tests.
pub(crate) trait GroupKernel: Send + Sync {
    fn info(&self) -> &KernelInfo;
    /// Runs work-items `first..end` of the work-group `ctx` from `resume_at` (see
    /// `softcl_compiler::abi`); returns the barrier id reached or [`FINISHED`]. Called by the
    /// executor only, with an argument block and context it prepared for this kernel (what
    /// `NativeKernel::run` requires).
    fn run(&self, args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32;
    /// Its program's storage of program-scope variables (`WorkGroupContext::program_globals`).
    fn program_globals(&self) -> *mut u8 {
        std::ptr::null_mut()
    }
}

impl GroupKernel for NativeKernel {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32 {
        // SAFETY: the executor calls this only with its job's copy of a launch's argument
        // block (valid by `Launch::new`'s contract) with the `__local` slots pointing into
        // the work-group's local memory, and `ctx` built for this kernel's info.
        unsafe { NativeKernel::run(self, args, ctx, first, end, resume_at) }
    }
    fn program_globals(&self) -> *mut u8 {
        NativeKernel::program_globals(self)
    }
}

// ------------------------------------------------------------------------------------------
// Aligned buffers

/// One 128-byte block; a `Vec` of these is a 128-byte-aligned byte buffer.
#[repr(C, align(128))]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Chunk([u8; BLOCK_ALIGN]);

const _: () = assert!(std::mem::size_of::<Chunk>() == BLOCK_ALIGN);
const _: () = assert!(std::mem::align_of::<Chunk>() == BLOCK_ALIGN);

/// A reusable, zero-initialised, [`BLOCK_ALIGN`]-aligned byte buffer.
#[derive(Default)]
pub(crate) struct AlignedBuf {
    chunks: Vec<Chunk>,
    len: usize,
}

impl AlignedBuf {
    /// Makes the buffer `len` bytes long, reusing the allocation when it is big enough.
    /// Contents are unspecified (but initialised) afterwards.
    pub(crate) fn resize(&mut self, len: usize) -> Result<(), LaunchError> {
        let needed = len.div_ceil(BLOCK_ALIGN);
        if needed > self.chunks.len() {
            self.chunks.try_reserve_exact(needed - self.chunks.len()).map_err(|_| {
                LaunchError::OutOfResources(format!("cannot allocate {len} bytes of work-group memory"))
            })?;
            self.chunks.resize(needed, Chunk([0; BLOCK_ALIGN]));
        }
        self.len = len;
        Ok(())
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The start of the buffer (aligned to [`BLOCK_ALIGN`], never null).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.chunks.as_mut_ptr().cast()
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // `Chunk` is plain bytes without padding (Pod), so the chunks are viewed as bytes safely.
        &bytemuck::cast_slice::<Chunk, u8>(&self.chunks)[..self.len]
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<Chunk, u8>(&mut self.chunks)[..self.len]
    }
}

fn align_up(n: usize) -> Option<usize> {
    n.checked_next_multiple_of(BLOCK_ALIGN)
}

// ------------------------------------------------------------------------------------------
// NDRange enumeration

/// An NDRange split into work-groups. Work-groups are numbered linearly, dimension 0 fastest;
/// the last group along a dimension is smaller when the enqueued local size does not divide
/// the global size (a non-uniform NDRange).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NdRange {
    pub work_dim: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    /// The enqueued local size.
    pub local: [usize; 3],
    /// `ceil(global / local)` per dimension.
    pub num_groups: [usize; 3],
    /// Product of `num_groups`.
    pub group_count: usize,
}

impl NdRange {
    /// Checks and normalises a launch's geometry: dimensions beyond `work_dim` become global 1,
    /// local 1, offset 0. A zero global size gives an empty range (nothing runs).
    pub(crate) fn new(
        work_dim: u32,
        offset: [usize; 3],
        global: [usize; 3],
        local: [usize; 3],
    ) -> Result<Self, LaunchError> {
        if !(1..=3).contains(&work_dim) {
            return Err(LaunchError::Invalid(format!("work_dim {work_dim} is not 1, 2 or 3")));
        }
        let dims = work_dim as usize;
        let (mut o, mut g, mut l, mut n) = ([0; 3], [1; 3], [1; 3], [1; 3]);
        for d in 0..dims {
            if local[d] == 0 {
                return Err(LaunchError::Invalid(format!("local size is 0 in dimension {d}")));
            }
            if offset[d].checked_add(global[d]).is_none() {
                return Err(LaunchError::Invalid(format!("global offset + global size overflows in dimension {d}")));
            }
            o[d] = offset[d];
            g[d] = global[d];
            l[d] = local[d];
            n[d] = global[d].div_ceil(local[d]);
        }
        let group_count = n
            .iter()
            .try_fold(1usize, |acc, &x| acc.checked_mul(x))
            .filter(|&c| c <= usize::MAX / 2)
            .ok_or_else(|| LaunchError::Invalid("too many work-groups".into()))?;
        l.iter()
            .try_fold(1usize, |acc, &x| acc.checked_mul(x))
            .filter(|&s| s <= u32::MAX as usize)
            .ok_or_else(|| LaunchError::Invalid("work-group size overflows".into()))?;
        Ok(Self { work_dim, offset: o, global: g, local: l, num_groups: n, group_count })
    }

    /// The enqueued work-group size (product of `local`).
    pub(crate) fn enqueued_group_size(&self) -> usize {
        self.local.iter().product()
    }

    /// The group id of linear group number `linear`.
    pub(crate) fn group_id(&self, linear: usize) -> [usize; 3] {
        let [n0, n1, _] = self.num_groups;
        [linear % n0, (linear / n0) % n1, linear / (n0 * n1)]
    }

    /// The local size of group `id` (smaller than `local` for a last, partial group).
    pub(crate) fn group_size(&self, id: [usize; 3]) -> [usize; 3] {
        std::array::from_fn(|d| self.local[d].min(self.global[d] - id[d] * self.local[d]))
    }

    /// A context for this NDRange, group 0, without memory pointers.
    pub(crate) fn base_context(&self) -> WorkGroupContext {
        let w = |a: [usize; 3]| a.map(|x| x as u64);
        WorkGroupContext {
            group_id: [0; 3],
            local_size: w(self.group_size([0; 3])),
            enqueued_local_size: w(self.local),
            global_size: w(self.global),
            global_offset: w(self.offset),
            num_groups: w(self.num_groups),
            work_dim: self.work_dim,
            ..WorkGroupContext::default()
        }
    }

    /// Points `ctx` at linear group `linear`; returns its id and its number of work-items.
    pub(crate) fn set_group(&self, ctx: &mut WorkGroupContext, linear: usize) -> ([usize; 3], u32) {
        let id = self.group_id(linear);
        let size = self.group_size(id);
        ctx.group_id = id.map(|x| x as u64);
        ctx.local_size = size.map(|x| x as u64);
        // Fits: at most the enqueued size, checked against u32 in `new`.
        (id, size.iter().product::<usize>() as u32)
    }

    /// Work-items of all groups (the product of the global sizes).
    #[cfg(test)]
    pub(crate) fn work_items(&self) -> u128 {
        self.global.iter().map(|&g| g as u128).product()
    }

    /// Sum over all groups of `f(group size)`, computed without visiting every group: along
    /// each dimension there are at most two group sizes (full and the partial last one).
    pub(crate) fn sum_over_groups(&self, f: impl Fn(u64) -> u64) -> u128 {
        let per_dim: [[(u128, u64); 2]; 3] = std::array::from_fn(|d| {
            let (g, l) = (self.global[d], self.local[d]);
            [((g / l) as u128, l as u64), (u128::from(g % l != 0), (g % l) as u64)]
        });
        let mut total = 0u128;
        for a in per_dim[0] {
            for b in per_dim[1] {
                for c in per_dim[2] {
                    let count = a.0 * b.0 * c.0;
                    if count > 0 {
                        total = total.saturating_add(count.saturating_mul(f(a.1 * b.1 * c.1) as u128));
                    }
                }
            }
        }
        total
    }
}

/// The hardware threads a work-group of `n` work-items runs as at SIMD width `simd`: ranges
/// of linear local ids `first..end`.
pub(crate) fn simd_threads(n: u32, simd: u32) -> impl Iterator<Item = (u32, u32)> {
    let simd = simd.max(1);
    (0..n.div_ceil(simd)).map(move |t| (t * simd, n.min(t.saturating_add(1).saturating_mul(simd))))
}

// ------------------------------------------------------------------------------------------
// Jobs

/// How the work-items of one work-group are run in each region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schedule {
    /// All work-items in one call (the CPU device).
    WholeGroup,
    /// SIMD-width slices, one call per hardware thread (the Gen device).
    Simd(u32),
}

/// Device limits a launch is checked against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_work_group_size: usize,
    pub local_mem_size: u64,
    /// CL_DEVICE_PRINTF_BUFFER_SIZE: the bytes of printf records one launch may write.
    pub printf_buffer_size: usize,
}

/// A launch's printf buffer: the header generated code reaches through `ctx.printf` and the
/// zeroed storage its records go to. Shared by every worker of the launch; read only after
/// the launch has finished. The executor keeps the storage for the next launch, zeroing only
/// the part that was written.
pub(crate) struct PrintfStore {
    header: PrintfBuffer,
    storage: Vec<u8>,
}

impl PrintfStore {
    /// A buffer of `capacity` bytes, reusing `spare` (all zero) when it has that size.
    fn new(capacity: usize, spare: Option<Vec<u8>>) -> Result<Self, LaunchError> {
        let mut storage = match spare {
            Some(s) if s.len() == capacity => s,
            _ => {
                let mut fresh = Vec::new();
                fresh.try_reserve_exact(capacity).map_err(|_| {
                    LaunchError::OutOfResources(format!("cannot allocate a {capacity}-byte printf buffer"))
                })?;
                fresh.resize(capacity, 0);
                fresh
            }
        };
        // The kernel writes through this address; `storage` is neither moved nor resized
        // (its heap block stays put) and is only read after the launch.
        let data = storage.as_mut_ptr().expose_provenance() as u64;
        let header = PrintfBuffer { data, capacity: capacity as u64, used: Default::default() };
        Ok(Self { header, storage })
    }

    /// The records written, in buffer order (a reservation that did not fit left zeros).
    pub(crate) fn records(&self) -> &[u8] {
        let used = self.header.used.load(Ordering::SeqCst);
        &self.storage[..usize::try_from(used).unwrap_or(usize::MAX).min(self.storage.len())]
    }

    /// The storage, zeroed again (only records were written, all below `used`).
    fn into_storage(mut self) -> Vec<u8> {
        let written = self.records().len();
        self.storage[..written].fill(0);
        self.storage
    }
}

/// One launch, owned by the executor while it runs.
pub(crate) struct Job {
    kernel: Arc<dyn GroupKernel>,
    args: Vec<u8>,
    /// (offset of the argument slot in the block, offset in the worker's local memory).
    local_slots: Vec<(usize, usize)>,
    local_bytes: usize,
    state_bytes: usize,
    /// Words of a Gen-instrumented kernel's counter array (0 for other builds), and of the
    /// counter array with the counting code's memos after it (`GenKernelInfo::scratch_words`).
    gen_words: usize,
    gen_scratch_words: usize,
    /// Where a Gen-instrumented kernel with hot-address sites keeps its summary in the
    /// scratch words (`GenKernelInfo::hot_word`).
    gen_hot_word: Option<usize>,
    range: NdRange,
    schedule: Schedule,
    observer: Option<Arc<dyn Observer>>,
    /// The printf buffer size when the kernel calls printf; the buffer is set up by
    /// [`Executor::execute`].
    printf_capacity: Option<usize>,
    printf: Option<PrintfStore>,
    chunk: usize,
    next: AtomicUsize,
    completed: AtomicUsize,
    aborted: AtomicBool,
    error: Mutex<Option<LaunchError>>,
    /// Nanoseconds the threads of this launch spent running its work-groups (summed over
    /// threads): what the executor learns a kernel's cost per work-group from.
    busy_ns: AtomicU64,
}

impl Job {
    /// Checks a launch against the kernel's metadata and the device limits and lays out its
    /// `__local` memory.
    pub(crate) fn new(
        kernel: Arc<dyn GroupKernel>,
        args: &[u8],
        local_arg_sizes: &[(usize, usize)],
        range: NdRange,
        schedule: Schedule,
        observer: Option<Arc<dyn Observer>>,
        limits: Limits,
    ) -> Result<Self, LaunchError> {
        let info = kernel.info();
        let invalid = |m: String| Err(LaunchError::Invalid(format!("kernel {}: {m}", info.name)));
        if args.len() < info.arg_block_size {
            return invalid(format!(
                "argument block has {} bytes, the kernel needs {}",
                args.len(),
                info.arg_block_size
            ));
        }
        let wg = range.enqueued_group_size();
        if wg > limits.max_work_group_size {
            return invalid(format!("work-group size {wg} exceeds the device maximum {}", limits.max_work_group_size));
        }
        if let Some(reqd) = info.reqd_work_group_size {
            if reqd != range.local {
                return invalid(format!("local size {:?} differs from reqd_work_group_size {reqd:?}", range.local));
            }
        }
        if let Schedule::Simd(w) = schedule {
            if ![8, 16, 32].contains(&w) {
                return invalid(format!("SIMD width {w} is not 8, 16 or 32"));
            }
        }

        // __local memory: static variables first, then each __local argument.
        let too_big = || LaunchError::OutOfResources(format!("kernel {}: __local memory size overflows", info.name));
        let static_bytes = usize::try_from(info.static_local_mem_size).map_err(|_| too_big())?;
        let mut requested = static_bytes as u64;
        let mut local_bytes = align_up(static_bytes).ok_or_else(too_big)?;
        let mut local_slots = Vec::new();
        for &(index, _) in local_arg_sizes {
            match info.args.get(index) {
                Some(arg) if arg.kind == ArgKind::Local => {}
                _ => return invalid(format!("argument {index} is given a __local size but is not a __local pointer")),
            }
        }
        for (index, arg) in info.args.iter().enumerate() {
            if arg.kind != ArgKind::Local {
                continue;
            }
            let Some(&(_, size)) = local_arg_sizes.iter().find(|(i, _)| *i == index) else {
                return invalid(format!("__local argument {index} ({}) has no size", arg.name));
            };
            if arg.offset.checked_add(8).is_none_or(|end| end > info.arg_block_size) {
                return invalid(format!("__local argument {index} lies outside the argument block"));
            }
            local_slots.push((arg.offset, local_bytes));
            requested = requested.saturating_add(size as u64);
            local_bytes = local_bytes.checked_add(align_up(size).ok_or_else(too_big)?).ok_or_else(too_big)?;
        }
        if requested > limits.local_mem_size {
            return Err(LaunchError::OutOfResources(format!(
                "kernel {}: needs {requested} bytes of __local memory, the device has {}",
                info.name, limits.local_mem_size
            )));
        }
        // Private memory lives on the worker's stack, a packet at a time: a kernel whose packet
        // would overflow it is refused (the runtime refuses it at enqueue already).
        let packet = match schedule {
            Schedule::WholeGroup => info.simd_width as usize,
            Schedule::Simd(w) => w as usize,
        };
        if let Some(why) = crate::limits::private_refusal(info, packet) {
            return Err(LaunchError::OutOfResources(format!("kernel {}: {why}", info.name)));
        }
        let state_bytes = info.work_item_state_bytes(range.local).ok_or_else(|| {
            LaunchError::OutOfResources(format!("kernel {}: work-item state size overflows", info.name))
        })?;

        let mut owned_args = Vec::new();
        owned_args
            .try_reserve_exact(args.len())
            .map_err(|_| LaunchError::OutOfResources("cannot copy the argument block".into()))?;
        owned_args.extend_from_slice(args);
        let printf_capacity = info.uses_printf.then_some(limits.printf_buffer_size);
        let gen_words = info.gen.as_ref().map_or(0, |g| g.counter_words());
        let gen_scratch_words = info.gen.as_ref().map_or(0, |g| g.scratch_words());
        let gen_hot_word = info.gen.as_ref().filter(|g| g.has_hot_sites()).map(|g| g.hot_word());
        Ok(Self {
            kernel,
            args: owned_args,
            local_slots,
            local_bytes,
            state_bytes,
            gen_words,
            gen_scratch_words,
            gen_hot_word,
            range,
            schedule,
            observer,
            printf_capacity,
            printf: None,
            chunk: 1,
            next: AtomicUsize::new(0),
            completed: AtomicUsize::new(0),
            aborted: AtomicBool::new(false),
            error: Mutex::new(None),
            busy_ns: AtomicU64::new(0),
        })
    }

    fn fail(&self, error: LaunchError) {
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(error);
        }
        self.aborted.store(true, Ordering::SeqCst);
    }

    fn is_over(&self) -> bool {
        self.aborted.load(Ordering::SeqCst) || self.completed.load(Ordering::SeqCst) >= self.range.group_count
    }

    /// The worker side: prepare buffers, then claim and run chunks of work-groups; adds the
    /// time spent to `busy_ns`.
    fn work(&self, scratch: &mut Scratch, stop: &mut dyn FnMut() -> bool) {
        let start = Instant::now();
        self.work_groups(scratch, stop);
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Claims and runs chunks until none is left, or until `stop` (asked before each claim)
    /// says so: the rest stays claimable by other threads.
    fn work_groups(&self, scratch: &mut Scratch, stop: &mut dyn FnMut() -> bool) {
        let mut ctx = match scratch.prepare(self) {
            Ok(ctx) => ctx,
            Err(e) => return self.fail(e),
        };
        let args = scratch.args.bytes();
        let total = self.range.group_count;
        while !self.aborted.load(Ordering::SeqCst) {
            if stop() {
                break;
            }
            let start = self.next.fetch_add(self.chunk, Ordering::SeqCst);
            if start >= total {
                break;
            }
            // Completions are counted once per chunk: a shared counter written per
            // work-group bounced its cache line between the threads on every one (a 4096^2
            // NDRange on the Gen device is 65536 work-groups of 256).
            let end = total.min(start + self.chunk);
            for linear in start..end {
                if self.aborted.load(Ordering::SeqCst) {
                    return;
                }
                let (id, n) = self.range.set_group(&mut ctx, linear);
                let gen = &mut scratch.gen[..];
                let result = catch_unwind(AssertUnwindSafe(|| self.run_group(args, &ctx, id, n, gen)));
                match result {
                    Ok(Ok(())) => {
                        if !scratch.gen.is_empty() {
                            let counters = &scratch.gen[..self.gen_words];
                            scratch.run.add(self.observer.as_deref(), linear, id, counters);
                        }
                        if linear + 1 == end {
                            scratch.run.flush(self.observer.as_deref());
                            self.hand_hot_addresses(&mut scratch.gen);
                            // The kernel's non-temporal stores are visible to other threads
                            // only after a fence (softcl_compiler::abi): one per chunk,
                            // before the launch can be seen complete.
                            std::sync::atomic::fence(Ordering::SeqCst);
                            self.completed.fetch_add(end - start, Ordering::SeqCst);
                        }
                    }
                    Ok(Err(e)) => return self.fail(e),
                    Err(payload) => {
                        return self.fail(LaunchError::Invalid(format!(
                            "kernel {}: panic while running work-group {id:?}: {}",
                            self.kernel.info().name,
                            panic_message(&*payload)
                        )))
                    }
                }
            }
        }
    }

    /// Hands the worker's hot-address summary to the observer and clears it (once per chunk:
    /// the observer adds up what it is given).
    fn hand_hot_addresses(&self, gen: &mut [u64]) {
        let (Some(at), Some(o)) = (self.gen_hot_word, self.observer.as_deref()) else { return };
        let Some(summary) = gen.get_mut(at..at + softcl_compiler::gen_abi::HOT_WORDS) else { return };
        if summary.iter().any(|&w| w != 0) {
            o.gen_hot_addresses(summary);
            summary.fill(0);
        }
    }

    /// Runs one work-group region by region. A Gen-instrumented kernel's hardware threads
    /// all add to `gen` (zeroed first), which thus holds the work-group's sum of their
    /// counter arrays (`worst_bank_ways`: the maximum), for the caller to hand to the
    /// observer ([`CounterRun`]).
    fn run_group(
        &self,
        args: &[u8],
        ctx: &WorkGroupContext,
        id: [usize; 3],
        n: u32,
        gen: &mut [u64],
    ) -> Result<(), LaunchError> {
        let info = self.kernel.info();
        let observer = self.observer.as_deref();
        // `ctx.gen_counters` points at `gen` (`Scratch::prepare`): the counters, zeroed per
        // work-group, then the counting code's memos, kept.
        // Only a Gen-instrumented kernel has counters. The empty fill of every other launch
        // cost about 0.15 us per work-group here: glibc's AVX-512 memset of 0 bytes is a
        // masked store to the empty Vec's dangling address, which this AMD CPU seems to
        // assist in microcode (a 4096^2 stencil in work-groups of 256 on the CPU device:
        // 9-17 ms, 3.3-4.5 ms without it).
        if self.gen_words > 0 {
            gen[..self.gen_words].fill(0);
        }
        if let Some(o) = observer {
            o.work_group_begin(id);
        }
        let mut resume = 0;
        loop {
            let reached = match self.schedule {
                Schedule::WholeGroup => {
                    let r = self.kernel.run(args, ctx, 0, n, resume);
                    if let Some(o) = observer {
                        o.thread_region(id, 0, n, r);
                    }
                    r
                }
                Schedule::Simd(simd) if info.gen.is_some() => {
                    // A Gen-instrumented build's entry runs the hardware threads `first..end`
                    // one packet (= one thread) at a time: one call for the whole group.
                    let r = self.kernel.run(args, ctx, 0, n, resume);
                    if let Some(o) = observer.filter(|o| r != FINISHED || o.wants_final_regions()) {
                        for (first, end) in simd_threads(n, simd) {
                            o.thread_region(id, first, end - first, r);
                        }
                    }
                    r
                }
                Schedule::Simd(simd) => {
                    let mut reached = None;
                    for (first, end) in simd_threads(n, simd) {
                        let r = self.kernel.run(args, ctx, first, end, resume);
                        if let Some(o) = observer {
                            o.thread_region(id, first, end - first, r);
                        }
                        if reached.is_some_and(|prev| prev != r) {
                            return Err(LaunchError::Invalid(
                                "work-items of a work-group reached different barriers".into(),
                            ));
                        }
                        reached = Some(r);
                    }
                    reached.unwrap_or(FINISHED)
                }
            };
            if reached == FINISHED {
                break;
            }
            if reached > info.barrier_count {
                return Err(LaunchError::Invalid(format!(
                    "kernel {} returned barrier id {reached} but has {} barriers",
                    info.name, info.barrier_count
                )));
            }
            resume = reached;
        }
        if let Some(o) = observer {
            o.work_group_end(id);
        }
        Ok(())
    }
}

/// The Gen counters of a run of consecutive work-groups with equal counters, not yet given
/// to the observer: a worker hands them over once per run and at the end of each chunk
/// (`Observer::gen_counters`), not once per work-group. The observer takes a lock, and a
/// locked instruction waits for the work-group's non-temporal stores to drain: per
/// work-group, that made a 4096^2 copy in work-groups of 256 on the Gen device 2.5x slower.
#[derive(Default)]
struct CounterRun {
    /// The first work-group (linear id and id) and how many follow it.
    first: usize,
    first_id: [usize; 3],
    len: u64,
    counters: Vec<u64>,
}

impl CounterRun {
    /// Adds work-group `linear` (id `id`) with `counters`: to the run when it continues it,
    /// else the run goes to `observer` and a new one starts.
    fn add(&mut self, observer: Option<&dyn Observer>, linear: usize, id: [usize; 3], counters: &[u64]) {
        // Without an early exit, so that the comparison is vector code.
        let same = self.counters.len() == counters.len()
            && self.counters.iter().zip(counters).fold(0, |acc, (a, b)| acc | (a ^ b)) == 0;
        if self.len > 0 && same && linear == self.first + self.len as usize {
            self.len += 1;
            return;
        }
        self.flush(observer);
        self.first = linear;
        self.first_id = id;
        self.len = 1;
        self.counters.clear();
        self.counters.extend_from_slice(counters);
    }

    /// Hands the run to `observer`, if there is one.
    fn flush(&mut self, observer: Option<&dyn Observer>) {
        if self.len > 0 {
            if let Some(o) = observer {
                o.gen_counters(self.first_id, self.len, &self.counters);
            }
            self.len = 0;
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".into()
    }
}

/// A worker's reusable buffers.
#[derive(Default)]
struct Scratch {
    args: AlignedBuf,
    local: AlignedBuf,
    state: AlignedBuf,
    /// The Gen counter array of the work-group running.
    gen: Vec<u64>,
    /// The work-groups run whose counters the observer has not seen yet.
    run: CounterRun,
}

impl Scratch {
    /// Sizes the buffers for `job`, copies its argument block and points its `__local`
    /// argument slots at this worker's local memory. Returns the context template.
    fn prepare(&mut self, job: &Job) -> Result<WorkGroupContext, LaunchError> {
        self.args.resize(job.args.len())?;
        self.local.resize(job.local_bytes)?;
        self.state.resize(job.state_bytes)?;
        self.gen.clear();
        self.gen.try_reserve_exact(job.gen_scratch_words).map_err(|_| {
            LaunchError::OutOfResources(format!("cannot allocate {} Gen counters", job.gen_scratch_words))
        })?;
        self.gen.resize(job.gen_scratch_words, 0);
        // A run left by a launch that stopped early belongs to no observer now.
        self.run.len = 0;
        let local = self.local.as_mut_ptr();
        let work_item_state = self.state.as_mut_ptr();
        let base = local.expose_provenance();
        let block = self.args.bytes_mut();
        block.copy_from_slice(&job.args);
        for &(slot, offset) in &job.local_slots {
            // In bounds: checked against the argument block size in `Job::new`.
            let address = (base + offset) as u64;
            block[slot..slot + 8].copy_from_slice(&address.to_ne_bytes());
        }
        let printf = job.printf.as_ref().map_or(std::ptr::null(), |p| &p.header as *const PrintfBuffer);
        // Kept for the whole job: `gen` is not resized until the next `prepare`.
        let gen_counters = if self.gen.is_empty() { std::ptr::null_mut() } else { self.gen.as_mut_ptr() };
        Ok(WorkGroupContext {
            local_memory: local,
            work_item_state,
            printf,
            gen_counters,
            program_globals: job.kernel.program_globals(),
            local_memory_bytes: job.local_bytes as u64,
            work_item_state_bytes: job.state_bytes as u64,
            stack: thread_stack(),
            ..job.range.base_context()
        })
    }
}

// ------------------------------------------------------------------------------------------
// The thread pool

struct Slot {
    generation: u64,
    job: Option<Arc<Job>>,
    /// Workers currently holding the job.
    active: usize,
    shutdown: bool,
}

struct Shared {
    slot: Mutex<Slot>,
    /// The generation of the last job posted, readable without the lock (for polling).
    posted: AtomicU64,
    /// Wakes workers: a new job or shutdown.
    wake: Condvar,
    /// Wakes the launching thread: a worker let go of the job.
    done: Condvar,
}

struct Pool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    /// `cpus`: the CPUs every worker is pinned to (a sub-device's), or None (unpinned).
    fn start(threads: usize, name: &str, cpus: Option<Arc<[usize]>>) -> Result<Self, LaunchError> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot { generation: 0, job: None, active: 0, shutdown: false }),
            posted: AtomicU64::new(0),
            wake: Condvar::new(),
            done: Condvar::new(),
        });
        let mut handles = Vec::new();
        let mut last_error = None;
        for i in 0..threads.max(1) {
            let shared = Arc::clone(&shared);
            let cpus = cpus.clone();
            let body = move || {
                if let Some(cpus) = cpus {
                    // A failure leaves the worker unpinned; the pool's size still limits the
                    // sub-device to its share of threads (docs: README, cpu/fission.rs).
                    let _ = pin_current_thread(&cpus);
                }
                worker_main(&shared)
            };
            let builder = std::thread::Builder::new()
                .name(format!("softcl-{name}-{i}"))
                .stack_size(crate::limits::KERNEL_THREAD_STACK_BYTES);
            match builder.spawn(body) {
                Ok(h) => handles.push(h),
                Err(e) => last_error = Some(e),
            }
        }
        if handles.is_empty() {
            let why = last_error.map_or_else(String::new, |e| e.to_string());
            return Err(LaunchError::OutOfResources(format!("cannot start worker threads: {why}")));
        }
        Ok(Self { shared, threads: handles })
    }

    /// Runs `job` on the launching thread (with `scratch`; None: the launching thread only
    /// waits) and `helpers` workers (the others keep sleeping; any worker that is awake takes
    /// part too).
    fn run(&self, job: Arc<Job>, helpers: usize, scratch: Option<&mut Scratch>) {
        let shared = &self.shared;
        let mut slot = shared.slot.lock();
        slot.generation += 1;
        shared.posted.store(slot.generation, Ordering::SeqCst);
        slot.job = Some(Arc::clone(&job));
        if helpers >= self.threads.len() {
            shared.wake.notify_all();
        } else {
            for _ in 0..helpers {
                shared.wake.notify_one();
            }
        }
        drop(slot);
        if let Some(scratch) = scratch {
            run_backstop(&job, scratch);
        }
        let mut slot = shared.slot.lock();
        while !(job.is_over() && slot.active == 0) {
            shared.done.wait(&mut slot);
        }
        slot.job = None;
    }
}

/// Runs `job.work` catching what escapes it (`work` catches each work-group's panic; this is
/// the backstop for the rest); a panic fails the job and resets the buffers.
fn run_backstop(job: &Job, scratch: &mut Scratch) {
    run_backstop_until(job, scratch, &mut || false);
}

/// [`run_backstop`] that stops claiming chunks when `stop` says so.
fn run_backstop_until(job: &Job, scratch: &mut Scratch, stop: &mut dyn FnMut() -> bool) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| job.work(scratch, stop))) {
        job.fail(LaunchError::Invalid(format!("launch panicked: {}", panic_message(&*payload))));
        *scratch = Scratch::default();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.slot.lock().shutdown = true;
        // Ends a worker's polling at once.
        self.shared.posted.store(u64::MAX, Ordering::SeqCst);
        self.shared.wake.notify_all();
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

/// The calling thread's stack, `[low, high)` (`WorkGroupContext::stack`: a private variable
/// of a kernel lies there), found once per thread; `[0, 0]` where it cannot be found (then
/// `to_private` of a pointer to the stack is NULL).
pub(crate) fn thread_stack() -> [u64; 2] {
    thread_local! {
        static STACK: [u64; 2] = find_thread_stack();
    }
    STACK.with(|s| *s)
}

fn find_thread_stack() -> [u64; 2] {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pthread_attr_t is plain data for which all-zero is a valid value to overwrite.
        let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is writable; on success it is initialised and destroyed below.
        if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
            return [0; 2];
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        // SAFETY: `attr` was initialised by pthread_getattr_np; the out-pointers are writable.
        let rc = unsafe { libc::pthread_attr_getstack(&attr, &mut addr, &mut size) };
        // SAFETY: `attr` was initialised by pthread_getattr_np and is not used after this.
        unsafe { libc::pthread_attr_destroy(&mut attr) };
        if rc != 0 {
            return [0; 2];
        }
        let low = addr as u64;
        [low, low.saturating_add(size as u64)]
    }
    #[cfg(not(target_os = "linux"))]
    {
        [0; 2]
    }
}

/// The CPUs this process may run on (sched_getaffinity), in increasing order; None where the
/// call is not available or fails.
pub(crate) fn allowed_cpus() -> Option<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data for which all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 = this thread.
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return None;
        }
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: CPU_ISSET reads the set within its size (cpu < CPU_SETSIZE).
        let cpus: Vec<usize> = (0..max).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
        (!cpus.is_empty()).then_some(cpus)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Pins the calling thread to `cpus` (sched_setaffinity); false if it could not be.
pub(crate) fn pin_current_thread(cpus: &[usize]) -> bool {
    #[cfg(target_os = "linux")]
    {
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        if cpus.is_empty() || cpus.iter().any(|&c| c >= max) {
            return false;
        }
        // SAFETY: cpu_set_t is plain data for which all-zero is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            // SAFETY: c < CPU_SETSIZE (checked above), so CPU_SET writes inside the set.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 = the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        false
    }
}

fn worker_main(shared: &Shared) {
    let mut scratch = Scratch::default();
    let mut seen = 0;
    loop {
        // Poll for a while before sleeping: launches of a batch follow each other within
        // microseconds, sooner than a sleeping thread wakes.
        let start = Instant::now();
        while shared.posted.load(Ordering::SeqCst) == seen && start.elapsed() < POOL_SPIN {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
        let job = {
            let mut slot = shared.slot.lock();
            loop {
                if slot.shutdown {
                    return;
                }
                if slot.generation != seen {
                    seen = slot.generation;
                    if let Some(job) = slot.job.clone() {
                        slot.active += 1;
                        break job;
                    }
                }
                shared.wake.wait(&mut slot);
            }
        };
        // The accounting below always runs, so the launching thread is never left waiting.
        run_backstop(&job, &mut scratch);
        drop(job);
        let mut slot = shared.slot.lock();
        slot.active -= 1;
        if slot.active == 0 {
            shared.done.notify_all();
        }
    }
}

/// What the executor keeps across launches; held for the whole of a launch. A launch that
/// finds it held runs on its launching thread alone (see [`Executor::execute`]), so that
/// concurrent launches on one device (out-of-order queues, several queues) all progress.
#[derive(Default)]
struct ExecState {
    /// The pool, started by the first launch that needs it.
    pool: Option<Pool>,
    /// The launching thread's buffers, for launches it runs itself.
    scratch: Scratch,
    /// Per kernel name: the nanoseconds one work-group took in the kernel's last launch.
    cost: HashMap<String, u64>,
}

/// What waking the pool costs the launching thread before the first work-group starts (the
/// threads' wake-up latency), in nanoseconds.
const POOL_WAKE_NS: u64 = 10_000;
/// How long an idle pool worker polls for the next launch before it sleeps.
const POOL_SPIN: std::time::Duration = std::time::Duration::from_micros(50);
/// Forget the costs once this many kernels have been seen (they are only estimates).
const MAX_COST_ENTRIES: usize = 4096;

/// A device's executor: its lazily started pool.
///
/// Small launches run on the launching thread (the queue's worker, or a thread blocked in
/// clFinish): a launch of one work-group, or one whose kernel's last launch shows that all of
/// its work-groups take less time on one thread than waking the pool would save. Everything
/// else runs on the pool, whose threads wake only as many as there are chunks of work.
pub(crate) struct Executor {
    threads: usize,
    name: &'static str,
    /// A sub-device's CPUs: its `threads` workers are pinned to them and run every
    /// work-group (the launching thread, pinned elsewhere or not at all, only waits).
    cpus: Option<Arc<[usize]>>,
    state: Mutex<ExecState>,
    /// The last launch's printf storage (all zero), for the next launch that calls printf.
    printf_spare: Mutex<Option<Vec<u8>>>,
    /// Launches that went to the pool.
    #[cfg(test)]
    pool_launches: AtomicUsize,
    /// Launches that ran while another held the pool.
    #[cfg(test)]
    concurrent_launches: AtomicUsize,
    /// Concurrent launches of a sub-device that ran on a thread pinned to its CPUs.
    #[cfg(test)]
    pinned_concurrent: AtomicUsize,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").field("threads", &self.threads).finish_non_exhaustive()
    }
}

/// Whether a launch of `groups` work-groups, each estimated at `per_group_ns` (None: never
/// measured), is cheaper on the launching thread alone than on `threads` pool threads.
pub(crate) fn run_inline(groups: usize, threads: usize, per_group_ns: Option<u64>) -> bool {
    if groups <= 1 || threads <= 1 {
        return true;
    }
    let Some(per_group) = per_group_ns else { return false };
    // Serial time T inline, against about T / n + the wake-up on n threads.
    let n = threads.min(groups) as u128;
    let serial = per_group as u128 * groups as u128;
    serial * (n - 1) < POOL_WAKE_NS as u128 * n
}

impl Executor {
    /// An executor that will run on `threads` workers (at least one).
    pub(crate) fn new(threads: usize, name: &'static str) -> Self {
        Self::with_cpus(threads, name, None)
    }

    /// An executor of a sub-device: one worker per CPU of `cpus`, pinned to them.
    pub(crate) fn pinned(cpus: &[usize], name: &'static str) -> Self {
        Self::with_cpus(cpus.len(), name, Some(cpus.into()))
    }

    fn with_cpus(threads: usize, name: &'static str, cpus: Option<Arc<[usize]>>) -> Self {
        Self {
            threads: threads.max(1),
            name,
            cpus,
            state: Mutex::new(ExecState::default()),
            printf_spare: Mutex::new(None),
            #[cfg(test)]
            pool_launches: AtomicUsize::new(0),
            #[cfg(test)]
            concurrent_launches: AtomicUsize::new(0),
            #[cfg(test)]
            pinned_concurrent: AtomicUsize::new(0),
        }
    }

    /// Runs every work-group of `job`; returns when all have finished or one failed, after
    /// writing the launch's printf output to stdout.
    pub(crate) fn execute(&self, mut job: Job) -> Result<(), LaunchError> {
        let total = job.range.group_count;
        if total == 0 {
            return Ok(());
        }
        if let Some(capacity) = job.printf_capacity {
            let spare = self.printf_spare.lock().take();
            job.printf = Some(PrintfStore::new(capacity, spare)?);
        }
        let Some(mut state) = self.state.try_lock() else {
            return self.execute_concurrent(job, total);
        };
        let known = state.cost.get(job.kernel.info().name.as_str()).copied();
        let job = if self.cpus.is_none() && run_inline(total, self.threads, known) {
            job.chunk = total;
            let job = Arc::new(job);
            run_backstop(&job, &mut state.scratch);
            job
        } else {
            // Chunks: about 8 per thread to balance uneven groups, at most 64 groups each. The
            // launching thread takes part, so `threads - 1` workers are woken at most.
            job.chunk = (total / (self.threads * 8)).clamp(1, 64);
            let job = Arc::new(job);
            let ExecState { pool, scratch, .. } = &mut *state;
            let pool = self.pool(pool)?;
            #[cfg(test)]
            self.pool_launches.fetch_add(1, Ordering::SeqCst);
            let chunks = total.div_ceil(job.chunk);
            if self.cpus.is_some() {
                pool.run(Arc::clone(&job), chunks.min(self.threads), None);
            } else {
                pool.run(Arc::clone(&job), (chunks - 1).min(self.threads - 1), Some(scratch));
            }
            job
        };
        let completed = job.completed.load(Ordering::SeqCst);
        if completed > 0 {
            if state.cost.len() >= MAX_COST_ENTRIES {
                state.cost.clear();
            }
            let per_group = job.busy_ns.load(Ordering::Relaxed) / completed as u64;
            let name = job.kernel.info().name.as_str();
            match state.cost.get_mut(name) {
                Some(c) => *c = per_group,
                None => {
                    state.cost.insert(name.to_string(), per_group);
                }
            }
        }
        drop(state);
        self.finish_launch(job)
    }

    /// A launch that found the pool held by another launch (a concurrent command of an
    /// out-of-order queue, or of another queue on this device). Waiting for the pool could
    /// wait forever (kernels of one out-of-order queue may wait on each other), so this
    /// launch starts at once on the launching thread, with buffers of its own, chunk by
    /// chunk; as soon as the pool is free it hands the chunks left to the pool and takes part
    /// in them, so that it runs on one thread only while the other launch has the pool.
    fn execute_concurrent(&self, mut job: Job, total: usize) -> Result<(), LaunchError> {
        #[cfg(test)]
        self.concurrent_launches.fetch_add(1, Ordering::SeqCst);
        job.chunk = (total / (self.threads * 8)).clamp(1, 64);
        let job = Arc::new(job);
        match &self.cpus {
            // A sub-device's launch runs on its own CPUs: on a thread pinned to them for the
            // time the pool is held (the launching thread waits), on the launching thread
            // only if that thread cannot be started.
            Some(cpus) => std::thread::scope(|scope| {
                let spawned = std::thread::Builder::new()
                    .name(format!("softcl-{}-c", self.name))
                    .stack_size(crate::limits::KERNEL_THREAD_STACK_BYTES)
                    .spawn_scoped(scope, || {
                        let pinned = pin_current_thread(cpus);
                        #[cfg(test)]
                        self.pinned_concurrent.fetch_add(usize::from(pinned), Ordering::SeqCst);
                        let _ = pinned;
                        self.run_concurrent(&job, total)
                    });
                match spawned {
                    Ok(handle) => handle
                        .join()
                        .unwrap_or_else(|_| Err(LaunchError::Invalid("a concurrent launch panicked".into()))),
                    Err(_) => self.run_concurrent(&job, total),
                }
            })?,
            None => self.run_concurrent(&job, total)?,
        }
        self.finish_launch(job)
    }

    /// [`Self::execute_concurrent`] on the calling thread: chunks until the pool is free,
    /// then the rest on the pool.
    fn run_concurrent(&self, job: &Arc<Job>, total: usize) -> Result<(), LaunchError> {
        let mut acquired = None;
        run_backstop_until(job, &mut Scratch::default(), &mut || {
            acquired = self.state.try_lock();
            acquired.is_some()
        });
        if let Some(mut state) = acquired {
            let left = total.saturating_sub(job.next.load(Ordering::SeqCst));
            if left > 0 && !job.is_over() {
                let chunks = left.div_ceil(job.chunk);
                let helpers = (chunks - 1).min(self.threads - 1);
                let ExecState { pool, scratch, .. } = &mut *state;
                if self.cpus.is_some() {
                    let pool = self.pool(pool)?;
                    #[cfg(test)]
                    self.pool_launches.fetch_add(1, Ordering::SeqCst);
                    pool.run(Arc::clone(job), chunks.min(self.threads), None);
                } else if helpers == 0 {
                    run_backstop(job, scratch);
                } else {
                    let pool = self.pool(pool)?;
                    #[cfg(test)]
                    self.pool_launches.fetch_add(1, Ordering::SeqCst);
                    pool.run(Arc::clone(job), helpers, Some(scratch));
                }
            }
        }
        Ok(())
    }

    /// The pool, started on first use: `threads - 1` workers beside the launching thread, or
    /// for a sub-device `threads` workers pinned to its CPUs.
    fn pool<'a>(&self, pool: &'a mut Option<Pool>) -> Result<&'a mut Pool, LaunchError> {
        Ok(match pool {
            Some(pool) => pool,
            empty => {
                let workers = if self.cpus.is_some() { self.threads } else { self.threads - 1 };
                empty.insert(Pool::start(workers, self.name, self.cpus.clone())?)
            }
        })
    }

    /// Writes a launch's printf output and keeps its storage; the launch's result.
    fn finish_launch(&self, job: Arc<Job>) -> Result<(), LaunchError> {
        if let Some(store) = &job.printf {
            crate::printf::emit(store.records());
        }
        let error = job.error.lock().take();
        // Every worker has let go of the job (`Pool::run`), so this is the last reference.
        if let Some(store) = Arc::into_inner(job).and_then(|j| j.printf) {
            *self.printf_spare.lock() = Some(store.into_storage());
        }
        error.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests;
