//! The calling convention between compiled kernels and the devices that run them.
//!
//! Every kernel is compiled into one *work-group entry*:
//!
//! ```text
//! u32 entry(const u8 *args, const WorkGroupContext *ctx, u32 first, u32 end, u32 resume_at)
//! ```
//!
//! It runs the work-items whose linear local index lies in `first..end` of the work-group
//! described by `ctx`, each starting at resume point `resume_at` (0 = the start of the
//! kernel, k = just after barrier k), until each reaches the next barrier or returns.
//! It returns the barrier id reached (1..=n) or [`FINISHED`] when the work-items returned.
//! A device runs a whole work-group by calling the entry for all its work-items with
//! resume point 0, then again with the barrier id returned, until it returns `FINISHED`.
//! The CPU device calls it once for the whole work-group per region; the Gen device calls it
//! once per SIMD-width hardware thread per region. Values live across a barrier are kept in
//! `ctx.work_item_state` (`KernelInfo::work_item_state_size` bytes per work-item), so memory
//! stays bounded by the work-group size whatever the NDRange.
//!
//! `args` is the argument block laid out by [`crate::KernelInfo::args`]: each argument at
//! its `offset`; buffers and `__local` pointers as 8-byte pointers, values by their bytes.
//!
//! An entry may return with non-temporal (weakly ordered) stores still in flight: the
//! calling thread sees them, but before another thread may read what the work-groups wrote,
//! the caller executes a store fence (`std::sync::atomic::fence(SeqCst)`; the devices'
//! executor does, once per chunk of work-groups). A fence in every entry drained each
//! work-group's stores before the next work-group started.

/// Returned by a work-group entry when the work-items ran to the end of the kernel.
pub const FINISHED: u32 = 0;

/// The description of one work-group, read by the compiled code.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct WorkGroupContext {
    pub group_id: [u64; 3],
    /// The size of this work-group (smaller than `enqueued_local_size` in the last group of a
    /// non-uniform NDRange).
    pub local_size: [u64; 3],
    pub enqueued_local_size: [u64; 3],
    pub global_size: [u64; 3],
    pub global_offset: [u64; 3],
    pub num_groups: [u64; 3],
    pub work_dim: u32,
    pub _reserved: u32,
    /// The kernel's own `__local` variables (`KernelInfo::static_local_mem_size` bytes,
    /// aligned to 128 bytes) of this work-group.
    pub local_memory: *mut u8,
    /// Per-work-item storage for values live across barriers: `local_size` product times
    /// `KernelInfo::work_item_state_size` bytes, aligned to 128 bytes.
    pub work_item_state: *mut u8,
    /// The launch's printf buffer, or null when the kernel's program calls no printf (then
    /// printf returns -1).
    pub printf: *const PrintfBuffer,
    /// The hardware thread's counters in a Gen-instrumented build (`crate::gen_abi`): the
    /// kernel's `GenKernelInfo::sites` [`crate::gen_abi::SiteCounters`] then its `blocks`
    /// [`crate::gen_abi::BlockCounters`], zeroed by the device per work-group, then the
    /// general counts' memos (`GenKernelInfo::scratch_words` in all, the memos zeroed before
    /// the first work-group and kept); null in other builds.
    pub gen_counters: *mut u64,
    /// The program's storage of its program-scope `__global` variables on this device
    /// ([`crate::NativeKernel::program_globals`]), or null when it has none.
    pub program_globals: *mut u8,
    /// The bytes at `local_memory` (the kernel's `__local` variables and arguments), and at
    /// `work_item_state`; the running thread's stack, `[low, high)`: where the generic address
    /// space's `get_fence`, `to_local` and `to_private` find `__local` and private memory.
    pub local_memory_bytes: u64,
    pub work_item_state_bytes: u64,
    pub stack: [u64; 2],
}

/// Where generated code appends printf records (layout in [`crate::printf`]): one per launch,
/// shared by every work-item. A call reserves its record with an atomic add on `used`; when
/// the record does not fit in `capacity`, nothing is written and printf returns -1 (`used`
/// may then exceed `capacity`; the space from the failed reservation on stays zero).
#[repr(C)]
#[derive(Debug, Default)]
pub struct PrintfBuffer {
    /// Address of the first of `capacity` zero-initialised bytes.
    pub data: u64,
    pub capacity: u64,
    /// Bytes reserved so far.
    pub used: std::sync::atomic::AtomicU64,
}

impl Default for WorkGroupContext {
    fn default() -> Self {
        Self {
            group_id: [0; 3],
            local_size: [1; 3],
            enqueued_local_size: [1; 3],
            global_size: [1; 3],
            global_offset: [0; 3],
            num_groups: [1; 3],
            work_dim: 1,
            _reserved: 0,
            local_memory: std::ptr::null_mut(),
            work_item_state: std::ptr::null_mut(),
            printf: std::ptr::null(),
            gen_counters: std::ptr::null_mut(),
            program_globals: std::ptr::null_mut(),
            local_memory_bytes: 0,
            work_item_state_bytes: 0,
            stack: [0; 2],
        }
    }
}

/// Alignment the devices give to local memory, work-item state and argument blocks.
pub const BLOCK_ALIGN: usize = 128;

/// Alignment a work-group entry declares for its argument block (LLVM may then hoist loads
/// of it out of the packet loop's branches); `NativeKernel::run` copies a block that lacks it.
/// The entry reads no argument aligned to more than this, whatever its type asks for.
pub const ARGS_ALIGN: usize = 8;

/// The native signature of a work-group entry.
pub type WorkGroupEntry =
    unsafe extern "C" fn(args: *const u8, ctx: *const WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32;

/// What an image kernel argument points at: the argument block holds an 8-byte pointer to
/// one of these, which stays valid and unchanged while any launch that received it runs
/// (the image's memory object owns it). `data` is byte 0 of pixel (0, 0, 0); pixel
/// (x, y, z) starts at `x * pixel_size + y * row_pitch + z * slice_pitch` with `size` and
/// `dim` as [`crate::image::Image`] has them: (width, height, depth), the layers of an
/// array in the dimension after its spatial ones (height of a 1D array, depth of a 2D
/// array) and 1 in the unused ones. `channel_order` and `channel_type` are the OpenCL
/// header's values (`CL_RGBA`, `CL_UNORM_INT8`, ...), which is what the image queries of
/// OpenCL C return. The image functions of compiled code read it through
/// [`crate::image`].
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ImageArg {
    pub data: *mut u8,
    pub row_pitch: u64,
    pub slice_pitch: u64,
    pub size: [u32; 3],
    /// [`ImageArg::dim_code`] of the image's [`crate::image::Dim`].
    pub dim: u32,
    pub channel_order: u32,
    pub channel_type: u32,
}

impl ImageArg {
    /// The `dim` field's value of each kind of image.
    pub fn dim_code(dim: crate::image::Dim) -> u32 {
        use crate::image::Dim::*;
        match dim {
            D1 => 0,
            D1Buffer => 1,
            D1Array => 2,
            D2 => 3,
            D2Array => 4,
            D3 => 5,
        }
    }

    /// The kind of image of a `dim` field (None for a value no image has).
    pub fn dim_of(code: u32) -> Option<crate::image::Dim> {
        use crate::image::Dim::*;
        Some(match code {
            0 => D1,
            1 => D1Buffer,
            2 => D1Array,
            3 => D2,
            4 => D2Array,
            5 => D3,
            _ => return None,
        })
    }
}

/// A sampler kernel argument: 8 bytes in the argument block holding the `sampler_t` bits of
/// [`crate::image::Sampler::bits`] (zero-extended), as a constant sampler of the program
/// has them.
pub const SAMPLER_ARG_BYTES: usize = 8;
