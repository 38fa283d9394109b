//! Instructions. Operands are `Value`s; branch targets pass block arguments (no phi nodes).
//! Integer operations say how they read their operands (signed or unsigned); vector operands
//! are handled component-wise wherever the scalar operation is defined.

use super::entities::{Block, Func, Type, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    IAdd,
    ISub,
    IMul,
    UDiv,
    SDiv,
    URem,
    /// Remainder with the sign of the dividend (C `%`).
    SRem,
    /// Remainder with the sign of the divisor (SPIR-V OpSMod).
    SMod,
    FAdd,
    FSub,
    FMul,
    FDiv,
    /// Remainder with the sign of the dividend (C fmod).
    FRem,
    /// Remainder with the sign of the divisor (SPIR-V OpFMod).
    FMod,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    /// Logical operations on bool (or vectors of bool).
    LogicalAnd,
    LogicalOr,
    LogicalEq,
    LogicalNe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    INeg,
    FNeg,
    /// Bitwise complement.
    Not,
    LogicalNot,
    BitCount,
    BitReverse,
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBitSet,
    /// True if any / all components of a bool vector are true.
    Any,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    IEq,
    INe,
    ULt,
    ULe,
    UGt,
    UGe,
    SLt,
    SLe,
    SGt,
    SGe,
    FOrdEq,
    FOrdNe,
    FOrdLt,
    FOrdLe,
    FOrdGt,
    FOrdGe,
    FUnordEq,
    FUnordNe,
    FUnordLt,
    FUnordLe,
    FUnordGt,
    FUnordGe,
    /// Both operands are not NaN / either is NaN.
    FOrdered,
    FUnordered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvertOp {
    /// Integer width change, reading the operand as unsigned (zero-extend or truncate).
    UConvert,
    /// Integer width change, reading the operand as signed (sign-extend or truncate).
    SConvert,
    FConvert,
    FToU,
    FToS,
    UToF,
    SToF,
    Bitcast,
    PtrToInt,
    IntToPtr,
    /// A pointer to another address space (to or from generic).
    PtrCast,
    /// Integer width change reading the operand as signed and clamping the result into the
    /// unsigned range of the destination (SPIR-V OpSatConvertSToU, `convert_uchar_sat(int)`).
    SatSToU,
    /// Integer width change reading the operand as unsigned and clamping the result into the
    /// signed range of the destination (SPIR-V OpSatConvertUToS, `convert_char_sat(uint)`).
    SatUToS,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    NearestEven,
    TowardZero,
    TowardPositive,
    TowardNegative,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    IIncrement,
    IDecrement,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    /// Float atomics (`cl_ext_float_atomics`): addition, and `fmin` / `fmax` (a NaN operand
    /// loses to a number).
    FAdd,
    FMin,
    FMax,
}

/// How a group reduction or scan combines two values (the arithmetic of SPIR-V's `OpGroup*`
/// and `OpGroupNonUniform*` instructions). `FMin` / `FMax` are OpenCL's `fmin` / `fmax`;
/// the logical ones take `bool`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupArith {
    IAdd,
    FAdd,
    IMul,
    FMul,
    SMin,
    UMin,
    FMin,
    SMax,
    UMax,
    FMax,
    And,
    Or,
    Xor,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
}

/// A collective function of a work-group or a sub-group: every work-item of the group
/// reaches it (in uniform control flow) and gets a result computed from all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupOp {
    /// The operand combined over the group, in order of the work-items' linear local ids.
    Reduce(GroupArith),
    /// The combination of the operands of the work-items up to and including this one.
    InclusiveScan(GroupArith),
    /// The combination of the operands of the work-items before this one; the operation's
    /// identity for the first.
    ExclusiveScan(GroupArith),
    /// The first operand of the work-item whose local id is the second operand (a scalar, or
    /// a vector of one component per dimension).
    Broadcast,
    /// Whether the `bool` operand is true for any / for all of the work-items.
    Any,
    All,
    /// Sub-groups only. The operand of the active work-item of lowest sub-group local id.
    BroadcastFirst,
    /// Whether the operand is the same for every active work-item (a `bool`).
    AllEqual,
    /// True for the active work-item of lowest sub-group local id only (no operand).
    Elect,
    /// The operand of the work-item whose sub-group local id is the second operand / this
    /// one's xor the second / this one's less the second / this one's plus the second.
    /// Undefined (here: this work-item's own operand) when that work-item is outside the
    /// sub-group or inactive.
    Shuffle,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    /// A `uint4` with bit k set when the `bool` operand is true for the active work-item of
    /// sub-group local id k.
    Ballot,
    /// The combination over the active work-items of this one's cluster: the sub-group
    /// local ids of the same quotient by the second operand (a constant power of two).
    ClusteredReduce(GroupArith),
}

impl GroupOp {
    /// A shuffle: the operand of another work-item of the sub-group.
    pub fn is_shuffle(self) -> bool {
        matches!(self, GroupOp::Shuffle | GroupOp::ShuffleXor | GroupOp::ShuffleUp | GroupOp::ShuffleDown)
    }

    /// Whether every work-item of the group gets the same result (a reduction, a broadcast,
    /// a vote, a ballot), as opposed to one of its own (a scan, a shuffle, `elect`).
    pub fn gives_one_value(self) -> bool {
        matches!(
            self,
            GroupOp::Reduce(_)
                | GroupOp::Broadcast
                | GroupOp::BroadcastFirst
                | GroupOp::Any
                | GroupOp::All
                | GroupOp::AllEqual
                | GroupOp::Ballot
        )
    }
}

/// Memory scope of an atomic or a fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    CrossDevice,
    Device,
    WorkGroup,
    SubGroup,
    WorkItem,
}

/// The work-item functions; each yields a `u64` per dimension (a v3ulong for the built-in
/// variables, as SPIR-V loads them) or a scalar where noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkItemQuery {
    GlobalId,
    LocalId,
    GroupId,
    LocalSize,
    EnqueuedLocalSize,
    GlobalSize,
    GlobalOffset,
    NumGroups,
    /// Scalar u32.
    WorkDim,
    /// Scalar u64.
    GlobalLinearId,
    /// Scalar u64.
    LocalLinearId,
    /// Scalar u32: sub-group queries.
    SubgroupSize,
    SubgroupMaxSize,
    NumSubgroups,
    SubgroupId,
    SubgroupLocalId,
    /// get_enqueued_num_sub_groups(): the sub-groups of a work-group of the enqueued size.
    EnqueuedNumSubgroups,
}

impl WorkItemQuery {
    /// A sub-group query (get_sub_group_size, get_sub_group_id, ...).
    pub fn is_sub_group(self) -> bool {
        use WorkItemQuery::*;
        matches!(
            self,
            SubgroupSize | SubgroupMaxSize | NumSubgroups | SubgroupId | SubgroupLocalId | EnqueuedNumSubgroups
        )
    }
}

/// The OpenCL C image functions. `image` is an image value (an `Opaque` image type: at run
/// time a pointer to an [`crate::abi::ImageArg`]), `sampler` a `sampler_t` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageOp {
    /// `read_image*(image, sampler, coord)`: `coord` a float or 32-bit integer scalar or
    /// vector (x, y, z or layer; extra components ignored); result a 4-vector of f32 or i32
    /// (the image's format decides the values), or an f32, the first component (a depth
    /// image's `read_imagef`).
    Sample,
    /// `read_image*(image, coord)` without a sampler: integer `coord`, result as `Sample`.
    Read,
    /// `write_image*(image, coord, texel)`: integer `coord`, `texel` a 4-vector of f32 or
    /// i32, or a depth image's f32 (the first component, the others 0); no result. A pixel
    /// outside the image is not written.
    Write,
    /// The image's size (width, height, depth or layers) as the result's 1-4 integer
    /// components (`get_image_width/height/depth/array_size/dim`).
    QuerySize,
    /// OpImageQueryOrder: SPIR-V's ImageChannelOrder of the image (the CL header's
    /// `CL_R`-based value less 0x10B0; `get_image_channel_order` adds it back), a 32-bit integer.
    QueryOrder,
    /// `intel_sub_group_block_read*` of an image, one component of one work-item: the
    /// `bytes` (1, 2, 4 or 8) at byte `coord.x` of row `coord.y` (an `int2`) as stored,
    /// an integer of `bytes`; clamped to the image.
    BlockRead { bytes: u8 },
    /// `intel_sub_group_block_write*` of an image, one component of one work-item: `texel`
    /// (an integer of `bytes`) to byte `coord.x` of row `coord.y`; nothing outside the image.
    BlockWrite { bytes: u8 },
    /// OpImageQueryFormat: SPIR-V's ImageChannelDataType (the CL header's value less 0x10D0;
    /// `get_image_channel_data_type` adds it back), a 32-bit integer.
    QueryFormat,
}

/// The addresses a `gen.count` counts: a load's, store's or atomic's pointer, or an image
/// access's image, sampler and coordinate (the pixel each lane reads or writes).
#[derive(Debug, Clone, PartialEq)]
pub enum GenAccess {
    Memory { ptr: Value },
    Image { image: Value, sampler: Option<Value>, coord: Value },
}

/// Part `part` of `parts` of a sub-group block read or write (`intel_sub_group_block_read4`
/// and the like): the load or store of component `part` of every work-item of the
/// sub-group, at the block's base plus `part` x the sub-group size plus the work-item's
/// sub-group local id, in elements. The access is an ordinary one for every pass and the
/// lowering; the Gen model counts a block's parts as the one message of whole lines the
/// hardware sends (`passes::gen_instrument`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockPart {
    pub part: u8,
    pub parts: u8,
}

/// The branch target of a terminator with the block arguments it passes.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockCall {
    pub block: Block,
    pub args: Vec<Value>,
}

/// [`InstData::GenericSpace`] of a pointer into `__global` memory (CrossWorkgroupMemory).
pub const GENERIC_GLOBAL: u32 = 0x200;
/// [`InstData::GenericSpace`] of a pointer into `__local` memory (WorkgroupMemory).
pub const GENERIC_LOCAL: u32 = 0x100;

#[derive(Debug, Clone, PartialEq)]
pub enum InstData {
    Binary {
        op: BinaryOp,
        lhs: Value,
        rhs: Value,
    },
    Unary {
        op: UnaryOp,
        arg: Value,
    },
    Compare {
        op: CmpOp,
        lhs: Value,
        rhs: Value,
    },
    Select {
        cond: Value,
        if_true: Value,
        if_false: Value,
    },
    /// `saturate` (SPIR-V SaturatedConversion): `UConvert` clamps unsigned -> unsigned,
    /// `SConvert` signed -> signed, `FToU`/`FToS` clamp to the integer range with NaN -> 0.
    /// `rounding` (FPRoundingMode): for float results the rounding of the conversion, for
    /// `FToU`/`FToS` how the float is rounded to an integer (default toward zero).
    Convert {
        op: ConvertOp,
        arg: Value,
        saturate: bool,
        rounding: Option<Rounding>,
    },

    /// A private variable (Function storage): the result is a `Private` pointer to `ty`.
    /// `align`: the alignment its producer declared (0: none), which the producer's own
    /// accesses may count on beyond the type's (`passes::align::variable_align`).
    Variable {
        ty: Type,
        init: Option<Value>,
        align: u32,
    },
    /// `block`: the load is a part of a sub-group block read (see [`BlockPart`]).
    Load {
        ptr: Value,
        align: u32,
        volatile: bool,
        block: Option<BlockPart>,
    },
    /// `block`: the store is a part of a sub-group block write (see [`BlockPart`]).
    Store {
        ptr: Value,
        value: Value,
        align: u32,
        volatile: bool,
        block: Option<BlockPart>,
    },
    CopyMemory {
        dst: Value,
        src: Value,
        size: Value,
        align: u32,
    },
    /// Pointer arithmetic as SPIR-V OpPtrAccessChain / LLVM GEP: first `element` steps over
    /// whole pointees (absent for OpAccessChain), then `indices` select members.
    AccessChain {
        base: Value,
        element: Option<Value>,
        indices: Vec<Value>,
        in_bounds: bool,
    },

    ExtractElement {
        vector: Value,
        index: Value,
    },
    InsertElement {
        vector: Value,
        value: Value,
        index: Value,
    },
    /// Components from the concatenation of `a` and `b`; `None` = undefined component.
    Shuffle {
        a: Value,
        b: Value,
        mask: Vec<Option<u32>>,
    },
    ExtractValue {
        aggregate: Value,
        indices: Vec<u32>,
    },
    InsertValue {
        aggregate: Value,
        value: Value,
        indices: Vec<u32>,
    },
    /// A vector, array or struct from its parts (vectors may be concatenated).
    Construct {
        parts: Vec<Value>,
    },

    Call {
        func: Func,
        args: Vec<Value>,
    },
    /// An OpenCL.std extended instruction (number from the OpenCL.std grammar).
    ExtInst {
        opcode: u32,
        args: Vec<Value>,
    },
    WorkItem {
        query: WorkItemQuery,
    },

    /// Work-group barrier (OpControlBarrier): execution scope, memory scope, semantics bits.
    Barrier {
        exec_scope: Scope,
        mem_scope: Scope,
        semantics: u32,
    },
    /// Memory fence (OpMemoryBarrier).
    Fence {
        scope: Scope,
        semantics: u32,
    },
    Atomic {
        op: AtomicOp,
        ptr: Value,
        /// The operand (absent for load, increment, decrement).
        value: Option<Value>,
        /// The expected value of compare-exchange.
        comparator: Option<Value>,
        scope: Scope,
        semantics: u32,
    },

    /// An image function; `sampler` only for `Sample`, `coord` for `Sample`, `Read` and
    /// `Write`, `texel` only for `Write`.
    Image {
        op: ImageOp,
        image: Value,
        sampler: Option<Value>,
        coord: Option<Value>,
        texel: Option<Value>,
    },

    /// Gen instrumentation (`passes::gen_instrument`, only in a Gen-instrumented build's
    /// kernel): one execution of block `id` of the kernel's plan (`KernelInfo::gen`) under
    /// the current lane mask; the first instruction of its block. `back::gen::hooks` lowers it.
    GenBlock {
        id: u32,
    },
    /// Gen instrumentation: the message of `site` of the kernel's plan, counted under the
    /// current lane mask from the addresses of `access`, the memory access that follows it.
    GenCount {
        site: u32,
        access: GenAccess,
    },

    /// A collective function over the work-items of `scope` (`WorkGroup` or `SubGroup`).
    /// Work-group ones become local memory and barriers (`passes::collectives`) before the
    /// back end.
    Group {
        scope: Scope,
        op: GroupOp,
        args: Vec<Value>,
    },

    /// Whether `cond` (a `bool`) is true for any work-item that runs this code together with
    /// this one: the active lanes of the packet in vector code, the work-item alone in a
    /// scalar build. The result is the same for all of them (uniform). Only
    /// `passes::linearize` makes it, for the latch of a linearized loop.
    AnyActive {
        cond: Value,
    },

    /// Which named address space the generic pointer `ptr` points into, as SPIR-V's
    /// OpGenericPtrMemSemantics says it (an `i32`): [`GENERIC_GLOBAL`] for `__global`,
    /// [`GENERIC_LOCAL`] for `__local`, 0 for private memory (what `get_fence`, `to_global`,
    /// `to_local` and `to_private` ask). `passes::generic_spaces` folds those whose pointer
    /// is known to come from one space; the others test the address at run time.
    GenericSpace {
        ptr: Value,
    },

    // Terminators.
    Jump {
        dest: BlockCall,
    },
    Branch {
        cond: Value,
        then_dest: BlockCall,
        else_dest: BlockCall,
    },
    Switch {
        selector: Value,
        default: BlockCall,
        cases: Vec<(u64, BlockCall)>,
    },
    Return {
        value: Option<Value>,
    },
    Unreachable,
    /// The end of a barrier region (`passes::barriers`): right after a work-group barrier,
    /// the work-item returns `id` (1-based, unique in the kernel) to the work-group loop and,
    /// once every work-item got there, resumes at `dest` (no arguments: what lives across
    /// the barrier is in work-item state variables). Kernels only.
    BarrierResume {
        id: u32,
        dest: BlockCall,
    },
}

impl InstData {
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstData::Jump { .. }
                | InstData::Branch { .. }
                | InstData::Switch { .. }
                | InstData::Return { .. }
                | InstData::Unreachable
                | InstData::BarrierResume { .. }
        )
    }

    /// Gen instrumentation (`gen.block`, `gen.count`): no effect on the kernel's values or
    /// memory, not counted as the kernel's own work.
    pub fn is_instrumentation(&self) -> bool {
        matches!(self, InstData::GenBlock { .. } | InstData::GenCount { .. })
    }

    /// Every value operand, block arguments included.
    pub fn operands(&self) -> Vec<Value> {
        let mut v = Vec::new();
        self.for_each_operand(|x| v.push(x));
        v
    }

    pub fn for_each_operand(&self, mut f: impl FnMut(Value)) {
        use InstData::*;
        match self {
            Binary { lhs, rhs, .. } | Compare { lhs, rhs, .. } => {
                f(*lhs);
                f(*rhs)
            }
            Unary { arg, .. } | Convert { arg, .. } | AnyActive { cond: arg } | GenericSpace { ptr: arg } => f(*arg),
            Select { cond, if_true, if_false } => {
                f(*cond);
                f(*if_true);
                f(*if_false)
            }
            Variable { init, .. } => init.iter().copied().for_each(f),
            Load { ptr, .. } => f(*ptr),
            Store { ptr, value, .. } => {
                f(*ptr);
                f(*value)
            }
            CopyMemory { dst, src, size, .. } => {
                f(*dst);
                f(*src);
                f(*size)
            }
            AccessChain { base, element, indices, .. } => {
                f(*base);
                element.iter().copied().for_each(&mut f);
                indices.iter().copied().for_each(f)
            }
            ExtractElement { vector, index } => {
                f(*vector);
                f(*index)
            }
            InsertElement { vector, value, index } => {
                f(*vector);
                f(*value);
                f(*index)
            }
            Shuffle { a, b, .. } => {
                f(*a);
                f(*b)
            }
            ExtractValue { aggregate, .. } => f(*aggregate),
            InsertValue { aggregate, value, .. } => {
                f(*aggregate);
                f(*value)
            }
            Construct { parts } => parts.iter().copied().for_each(f),
            Call { args, .. } | ExtInst { args, .. } | Group { args, .. } => args.iter().copied().for_each(f),
            WorkItem { .. } | Barrier { .. } | Fence { .. } | Unreachable => {}
            Atomic { ptr, value, comparator, .. } => {
                f(*ptr);
                value.iter().copied().for_each(&mut f);
                comparator.iter().copied().for_each(f)
            }
            Image { image, sampler, coord, texel, .. } => {
                f(*image);
                sampler.iter().copied().for_each(&mut f);
                coord.iter().copied().for_each(&mut f);
                texel.iter().copied().for_each(f)
            }
            Jump { dest } => dest.args.iter().copied().for_each(f),
            Branch { cond, then_dest, else_dest } => {
                f(*cond);
                then_dest.args.iter().copied().for_each(&mut f);
                else_dest.args.iter().copied().for_each(f)
            }
            Switch { selector, default, cases } => {
                f(*selector);
                default.args.iter().copied().for_each(&mut f);
                for (_, c) in cases {
                    c.args.iter().copied().for_each(&mut f)
                }
            }
            Return { value } => value.iter().copied().for_each(f),
            GenBlock { .. } => {}
            GenCount { access: GenAccess::Memory { ptr }, .. } => f(*ptr),
            GenCount { access: GenAccess::Image { image, sampler, coord }, .. } => {
                f(*image);
                sampler.iter().copied().for_each(&mut f);
                f(*coord)
            }
            BarrierResume { dest, .. } => dest.args.iter().copied().for_each(f),
        }
    }

    /// Every value operand, mutable (for rewriting uses).
    pub fn for_each_operand_mut(&mut self, mut f: impl FnMut(&mut Value)) {
        use InstData::*;
        match self {
            Binary { lhs, rhs, .. } | Compare { lhs, rhs, .. } => {
                f(lhs);
                f(rhs)
            }
            Unary { arg, .. } | Convert { arg, .. } | AnyActive { cond: arg } | GenericSpace { ptr: arg } => f(arg),
            Select { cond, if_true, if_false } => {
                f(cond);
                f(if_true);
                f(if_false)
            }
            Variable { init, .. } => init.iter_mut().for_each(f),
            Load { ptr, .. } => f(ptr),
            Store { ptr, value, .. } => {
                f(ptr);
                f(value)
            }
            CopyMemory { dst, src, size, .. } => {
                f(dst);
                f(src);
                f(size)
            }
            AccessChain { base, element, indices, .. } => {
                f(base);
                element.iter_mut().for_each(&mut f);
                indices.iter_mut().for_each(f)
            }
            ExtractElement { vector, index } => {
                f(vector);
                f(index)
            }
            InsertElement { vector, value, index } => {
                f(vector);
                f(value);
                f(index)
            }
            Shuffle { a, b, .. } => {
                f(a);
                f(b)
            }
            ExtractValue { aggregate, .. } => f(aggregate),
            InsertValue { aggregate, value, .. } => {
                f(aggregate);
                f(value)
            }
            Construct { parts } => parts.iter_mut().for_each(f),
            Call { args, .. } | ExtInst { args, .. } | Group { args, .. } => args.iter_mut().for_each(f),
            WorkItem { .. } | Barrier { .. } | Fence { .. } | Unreachable => {}
            Atomic { ptr, value, comparator, .. } => {
                f(ptr);
                value.iter_mut().for_each(&mut f);
                comparator.iter_mut().for_each(f)
            }
            Image { image, sampler, coord, texel, .. } => {
                f(image);
                sampler.iter_mut().for_each(&mut f);
                coord.iter_mut().for_each(&mut f);
                texel.iter_mut().for_each(f)
            }
            Jump { dest } => dest.args.iter_mut().for_each(f),
            Branch { cond, then_dest, else_dest } => {
                f(cond);
                then_dest.args.iter_mut().for_each(&mut f);
                else_dest.args.iter_mut().for_each(f)
            }
            Switch { selector, default, cases } => {
                f(selector);
                default.args.iter_mut().for_each(&mut f);
                for (_, c) in cases {
                    c.args.iter_mut().for_each(&mut f)
                }
            }
            Return { value } => value.iter_mut().for_each(f),
            GenBlock { .. } => {}
            GenCount { access: GenAccess::Memory { ptr }, .. } => f(ptr),
            GenCount { access: GenAccess::Image { image, sampler, coord }, .. } => {
                f(image);
                sampler.iter_mut().for_each(&mut f);
                f(coord)
            }
            BarrierResume { dest, .. } => dest.args.iter_mut().for_each(f),
        }
    }

    /// The successor blocks of a terminator (empty for other instructions).
    pub fn successors(&self) -> Vec<&BlockCall> {
        match self {
            InstData::Jump { dest } | InstData::BarrierResume { dest, .. } => vec![dest],
            InstData::Branch { then_dest, else_dest, .. } => vec![then_dest, else_dest],
            InstData::Switch { default, cases, .. } => {
                let mut v = vec![default];
                v.extend(cases.iter().map(|(_, c)| c));
                v
            }
            _ => Vec::new(),
        }
    }

    pub fn successors_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            InstData::Jump { dest } | InstData::BarrierResume { dest, .. } => vec![dest],
            InstData::Branch { then_dest, else_dest, .. } => vec![then_dest, else_dest],
            InstData::Switch { default, cases, .. } => {
                let mut v = vec![default];
                v.extend(cases.iter_mut().map(|(_, c)| c));
                v
            }
            _ => Vec::new(),
        }
    }
}
