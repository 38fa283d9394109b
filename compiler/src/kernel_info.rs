//! What the runtime needs to know about a kernel: its arguments, attributes and resources.

/// OpenCL address spaces as they appear on kernel arguments and pointers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
    Generic,
}

/// How an argument is passed in the argument block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgKind {
    /// A `__global` or `__constant` pointer: 8 bytes, the buffer's address (or null).
    Buffer { address_space: AddressSpace },
    /// A `__local` pointer: 8 bytes filled by the device with this work-group's allocation
    /// of the size the application set with clSetKernelArg(size, NULL).
    Local,
    /// A value passed by its bytes (scalar, vector, struct): `size` bytes.
    Value,
    /// A sampler_t (not supported yet: a kernel using one fails to build).
    Sampler,
    /// An image (not supported yet).
    Image,
}

/// CL_KERNEL_ARG_ACCESS_QUALIFIER values in Rust form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessQualifier {
    #[default]
    None,
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TypeQualifiers {
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
    pub is_pipe: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub name: String,
    /// The type as written in source ("float*", "float4", "pair_t").
    pub type_name: String,
    pub address_space: AddressSpace,
    pub access: AccessQualifier,
    pub qualifiers: TypeQualifiers,
    pub kind: ArgKind,
    /// Byte offset of the argument in the argument block.
    pub offset: usize,
    /// Size in bytes clSetKernelArg must be given (8 for pointers, the value's size otherwise).
    pub size: usize,
    /// Alignment of the value in the argument block.
    pub align: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// Size of the argument block (a multiple of 8).
    pub arg_block_size: usize,
    /// CL_KERNEL_ATTRIBUTES: the attributes as source text, space separated.
    pub attributes: String,
    pub reqd_work_group_size: Option<[usize; 3]>,
    pub work_group_size_hint: Option<[usize; 3]>,
    pub vec_type_hint: Option<String>,
    pub reqd_sub_group_size: Option<u32>,
    /// Bytes of `__local` variables declared in the kernel (not arguments).
    pub static_local_mem_size: u64,
    /// Bytes of private memory one work-item uses (CL_KERNEL_PRIVATE_MEM_SIZE).
    pub private_mem_size: u64,
    /// Number of barriers (resume points) in the compiled kernel.
    pub barrier_count: u32,
    /// Bytes of per-work-item state kept across barriers (0 without barriers).
    pub work_item_state_size: u64,
    /// The kernel (or a function it calls) calls printf: the device gives each launch a
    /// printf buffer (`abi::PrintfBuffer`) and prints its records when the launch completes.
    pub uses_printf: bool,
    /// Work-items per packet of the compiled entry (the vector width W; 0 or 1 = scalar).
    pub simd_width: u32,
    /// Register pressure at the worst point, for the Gen device's SIMD choice (`None` until
    /// the analysis computed it).
    pub register_pressure: Option<crate::gen_abi::RegisterPressure>,
    /// Present in a Gen-instrumented build (`Target::gen`): the sites and blocks whose
    /// counters the generated code keeps. Planned by the IR pass `passes::gen_instrument`,
    /// which numbers its `gen.block` / `gen.count` instructions by them (`simd` 0 until the
    /// lowering sets the width and the sources).
    pub gen: Option<crate::gen_abi::GenKernelInfo>,
}

impl KernelInfo {
    /// Bytes of work-item state a work-group of `local` size needs: with packets of W
    /// work-items each row of dimension 0 is padded to a multiple of W (state is kept per
    /// packet in structure-of-arrays form). `None` on overflow.
    pub fn work_item_state_bytes(&self, local: [usize; 3]) -> Option<usize> {
        let w = (self.simd_width as usize).max(1);
        let row = local[0].max(1).div_ceil(w).checked_mul(w)?;
        let items = row.checked_mul(local[1].max(1))?.checked_mul(local[2].max(1))?;
        usize::try_from(self.work_item_state_size).ok()?.checked_mul(items)
    }
}
