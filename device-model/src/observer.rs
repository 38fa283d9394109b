//! Observer hooks for anything that watches execution (the Gen model, memory checking, race
//! detection), in the manner of Oclgrind's plugins: every hook is a no-op by default.
//!
//! An observer is passed to `CpuDevice::launch_observed` / `GenDevice::launch_observed` as an
//! `Option<Arc<dyn Observer>>` (owned, because the persistent worker threads outlive the
//! call's borrows). `kernel_begin` / `kernel_end` run on the launching thread; the other hooks
//! run on the worker threads, concurrently for different work-groups and in order within one.
//! On the CPU device a "hardware thread" is the whole work-group (one call per region); on the
//! Gen device it is one SIMD-width slice.

/// Hooks called around the execution of an NDRange.
pub trait Observer: Send + Sync {
    fn kernel_begin(&self, _kernel: &str, _global_size: [usize; 3], _local_size: [usize; 3]) {}
    fn kernel_end(&self, _kernel: &str) {}
    fn work_group_begin(&self, _group_id: [usize; 3]) {}
    fn work_group_end(&self, _group_id: [usize; 3]) {}
    /// A hardware thread of `lanes` work-items (starting at linear local id `first`) ran one
    /// barrier region, ending at `barrier` (0 = the kernel's end).
    fn thread_region(&self, _group_id: [usize; 3], _first: u32, _lanes: u32, _barrier: u32) {}
    /// Whether [`Observer::thread_region`] is wanted for regions that end at the kernel's end
    /// (barrier 0) too; `false` lets the executor skip a call per hardware thread when no
    /// barrier was reached (the Gen model counts barrier regions only).
    fn wants_final_regions(&self) -> bool {
        true
    }
    /// Work-groups of a Gen-instrumented build finished: `groups` consecutive work-groups in
    /// linear order (dimension 0 fastest) from `first_group`, each of whose `counters` is
    /// the sum over its hardware threads of their counter arrays
    /// (`softcl_compiler::gen_abi`: the kernel's sites' `SiteCounters`, then its blocks'
    /// `BlockCounters`, as u64 words). The executor reports runs of work-groups with equal
    /// counters, after they ran and at the latest when its chunk of work-groups ends.
    fn gen_counters(&self, _first_group: [usize; 3], _groups: u64, _counters: &[u64]) {}
    /// A worker thread's summary of the addresses its atomics hit most
    /// (`softcl_compiler::gen_abi::HOT_ENTRIES`: address, count pairs), since its last one:
    /// handed over at the end of each chunk of work-groups, before the launch completes.
    fn gen_hot_addresses(&self, _summary: &[u64]) {}
}
