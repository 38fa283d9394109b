//! SoftCL IR -> LLVM IR: types, constants, module variables, functions and instructions.
//!
//! Every IR function reachable from a kernel becomes an internal LLVM function taking its
//! own parameters plus four hidden ones: the `WorkGroupContext` pointer and the local id
//! x, y, z (so that work-item functions work anywhere). A function that reaches `__local`
//! variables is emitted once per kernel, since each kernel lays out its own local memory.
//! A kernel's body is emitted as a *work-item function* (see `workgroup`): its parameters
//! come from the argument block and its barriers return to the work-group loop.
//!
//! Loads, stores and copies take their alignment from the IR, which `passes::align` made
//! what their addresses are guaranteed; variables get at least the alignment that pass
//! counts on, and the argument block's values are read aligned to `abi::ARGS_ALIGN` at most.
//!
//! Here: [`FnLower`], the lowering core (one function's lowering: parameters, variables,
//! values, work-item ids, instructions, block parameters as phis, branches), and
//! [`LowerHook`], through which vector mode (`back::vector`) and the Gen counting
//! (`back::gen`) take over the instructions they lower; they use the core and
//! the core knows nothing of them. By concern, in `llvm/`: `emitter` (the module-level
//! [`Emitter`] and the helpers on LLVM types), `helpers` (typed operations, intrinsics),
//! `lanes` (the shapes of values in a packet, [`VecState`], and the operations on them),
//! `masked` (masked blocks, in scalar and vector code),
//! `ops` ([`Ops`], mask and vector operations on any builder), `arith` (arithmetic,
//! compares, conversions), `aggregates` (access chains, shuffles, composites), `calls`
//! (calls and atomics), `images` (image instructions), `branches` (block parameters as phis,
//! branches), `work_items` (work-item and work-group queries).
//! Barriers are the IR's (`passes::barriers`): a `barrier_resume` is a `ret` and a case of
//! the resume switch (`workgroup::ResumePoints`), a state variable a slot of the state.

use super::workgroup::{ResumePoints, StatePlan};
use crate::abi::WorkGroupContext;
use crate::ir::{
    self, Block, CmpOp, ConstData, ConvertOp, EntityRef, Func, FuncKind, GlobalVar, Inst, InstData, Rounding,
    SecondaryMap, TypeData, UnaryOp, Value, ValueDef, WorkItemQuery,
};
use crate::kernel_info::{AddressSpace as ClSpace, ArgKind, KernelInfo};
use crate::passes::align;
use crate::program_globals;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FloatType, IntType, StructType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FloatValue, FunctionValue, GlobalValue, InstructionOpcode,
    IntValue, PhiValue, PointerValue, VectorValue,
};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, FloatPredicate, IntPredicate};
use std::collections::HashMap;

/// An error while generating code; becomes the build log.
#[derive(Debug)]
pub struct Error(pub String);

impl From<BuilderError> for Error {
    fn from(e: BuilderError) -> Self {
        Error(format!("LLVM builder: {e}"))
    }
}
impl From<String> for Error {
    fn from(e: String) -> Self {
        Error(e)
    }
}
impl From<&str> for Error {
    fn from(e: &str) -> Self {
        Error(e.to_string())
    }
}

pub type R<T> = Result<T, Error>;
pub type Val<'ctx> = BasicValueEnum<'ctx>;

macro_rules! bail {
    ($($t:tt)*) => { return Err($crate::back::llvm::Error(format!($($t)*))) };
}
pub(crate) use bail;

mod aggregates;
mod arith;
mod branches;
mod calls;
pub(crate) use calls::ordering;
mod emitter;
mod helpers;
mod images;
mod lanes;
mod masked;
mod ops;
mod sub_groups;
mod work_items;
pub use emitter::*;
pub use lanes::{wide_ty, VecState};
pub use masked::BlockSkip;
pub use ops::Ops;

/// Byte offsets of the `WorkGroupContext` fields.
pub mod ctx_offsets {
    use super::WorkGroupContext;
    use std::mem::offset_of;
    pub const GROUP_ID: u64 = offset_of!(WorkGroupContext, group_id) as u64;
    pub const LOCAL_SIZE: u64 = offset_of!(WorkGroupContext, local_size) as u64;
    pub const ENQUEUED_LOCAL_SIZE: u64 = offset_of!(WorkGroupContext, enqueued_local_size) as u64;
    pub const GLOBAL_SIZE: u64 = offset_of!(WorkGroupContext, global_size) as u64;
    pub const GLOBAL_OFFSET: u64 = offset_of!(WorkGroupContext, global_offset) as u64;
    pub const NUM_GROUPS: u64 = offset_of!(WorkGroupContext, num_groups) as u64;
    pub const WORK_DIM: u64 = offset_of!(WorkGroupContext, work_dim) as u64;
    pub const LOCAL_MEMORY: u64 = offset_of!(WorkGroupContext, local_memory) as u64;
    pub const WORK_ITEM_STATE: u64 = offset_of!(WorkGroupContext, work_item_state) as u64;
    pub const PRINTF: u64 = offset_of!(WorkGroupContext, printf) as u64;
    pub const GEN_COUNTERS: u64 = offset_of!(WorkGroupContext, gen_counters) as u64;
    pub const PROGRAM_GLOBALS: u64 = offset_of!(WorkGroupContext, program_globals) as u64;
    pub const LOCAL_MEMORY_BYTES: u64 = offset_of!(WorkGroupContext, local_memory_bytes) as u64;
    pub const WORK_ITEM_STATE_BYTES: u64 = offset_of!(WorkGroupContext, work_item_state_bytes) as u64;
    pub const STACK: u64 = offset_of!(WorkGroupContext, stack) as u64;
}

/// Builds a GEP. Every GEP of the back end goes through here.
pub fn gep<'ctx>(
    b: &Builder<'ctx>,
    ty: BasicTypeEnum<'ctx>,
    ptr: PointerValue<'ctx>,
    idx: &[IntValue<'ctx>],
    in_bounds: bool,
) -> R<PointerValue<'ctx>> {
    // SAFETY: the callers pass the source element type the indices walk and check every
    // struct index against the field count (a constant in range), so LLVM never reads past
    // a type description; array/vector indices may be anything. The address computed is
    // only dereferenced by the kernel code, under the kernel's own contract.
    let p = unsafe {
        if in_bounds {
            b.build_in_bounds_gep(ty, ptr, idx, "")
        } else {
            b.build_gep(ty, ptr, idx, "")
        }
    }?;
    Ok(p)
}

/// Where the code of a function gets the work-item and work-group values from.
#[derive(Clone, Copy)]
pub struct Env<'ctx> {
    pub ctx: PointerValue<'ctx>,
    pub lid: [IntValue<'ctx>; 3],
}

/// How the function being lowered is called.
pub enum Mode<'a> {
    /// An internal function with its parameters and the hidden (ctx, lx, ly, lz).
    Function,
    /// The work-item function of a kernel: (args, ctx, lx, ly, lz, state, resume_at) -> u32.
    Kernel { info: &'a KernelInfo, plan: &'a StatePlan },
}

/// The lowering of one IR function into one LLVM function.
pub struct FnLower<'a, 'ctx, 'ir> {
    pub e: &'a Emitter<'ctx, 'ir>,
    pub f: &'ir ir::Function,
    pub llf: FunctionValue<'ctx>,
    pub b: Builder<'ctx>,
    /// Positioned before the prologue's terminator: code here dominates the whole body.
    pub pb: Builder<'ctx>,
    pub env: Env<'ctx>,
    /// Kernel whose local-memory layout applies.
    pub kernel: usize,
    mode: Mode<'a>,
    vals: SecondaryMap<Value, Option<Val<'ctx>>>,
    blocks: SecondaryMap<Block, Option<BasicBlock<'ctx>>>,
    /// Per block parameter, its phi, or the parts of a varying vector split into `<W x T>`
    /// phis ([`Self::phi_parts`]).
    phis: HashMap<Block, Vec<Vec<PhiValue<'ctx>>>>,
    wi_cache: HashMap<WorkItemQuery, [IntValue<'ctx>; 3]>,
    global_cache: HashMap<GlobalVar, PointerValue<'ctx>>,
    /// The state pointer, the `resume_at` dispatch and the resume points (`workgroup`).
    resume: ResumePoints<'ctx>,
    /// Vector mode (`back::vector`): W work-items per call.
    pub vec: Option<VecState<'a, 'ctx>>,
    /// Kernel argument index of a `restrict` buffer -> the `noalias` parameter holding it.
    pub restrict_params: HashMap<usize, u32>,
    /// Scalar code: stores that stream (non-temporal) when their ND-range is large and
    /// their address aligned (`back::vector::scalar_streaming_stores`).
    pub stream_stores: std::collections::HashSet<Inst>,
    /// The number of work-items of the ND-range, once asked for (`back::vector`).
    pub ndrange_items: Option<IntValue<'ctx>>,
    /// One lane's operands while an instruction runs lane by lane (`back::vector`).
    pub lane_vals: HashMap<Value, Val<'ctx>>,
    /// The parts that take over instructions ([`LowerHook`]), asked in order.
    hooks: Vec<Box<dyn LowerHook<'a, 'ctx, 'ir> + 'a>>,
}

/// A part of the lowering that uses the core and takes over some of its work: vector mode
/// (`back::vector`: packet forms) and Gen counting (`back::gen`). The core asks the hooks
/// in order for every instruction before lowering it itself.
pub trait LowerHook<'a, 'ctx, 'ir> {
    /// Lowers `i` (true), or leaves it to the next hook and the core (false).
    fn inst(&mut self, l: &mut FnLower<'a, 'ctx, 'ir>, i: Inst) -> R<bool>;
}

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    pub fn new(
        e: &'a Emitter<'ctx, 'ir>,
        f: &'ir ir::Function,
        llf: FunctionValue<'ctx>,
        kernel: usize,
        mode: Mode<'a>,
    ) -> R<Self> {
        let cx = e.cx;
        let prologue = cx.append_basic_block(llf, "prologue");
        let dispatch = cx.append_basic_block(llf, "dispatch");
        let b = cx.create_builder();
        let pb = cx.create_builder();
        pb.position_at_end(prologue);
        let br = pb.build_unconditional_branch(dispatch)?;
        pb.position_before(&br);
        let np = llf.count_params();
        let p = |i: u32| llf.get_nth_param(i).ok_or_else(|| Error("missing LLVM parameter".into()));
        let (env, state) = match &mode {
            Mode::Function => {
                let base = np - 4;
                let env = Env {
                    ctx: as_ptr(p(base)?)?,
                    lid: [as_int(p(base + 1)?)?, as_int(p(base + 2)?)?, as_int(p(base + 3)?)?],
                };
                (env, None)
            }
            Mode::Kernel { .. } => {
                let env = Env { ctx: as_ptr(p(1)?)?, lid: [as_int(p(2)?)?, as_int(p(3)?)?, as_int(p(4)?)?] };
                (env, Some(as_ptr(p(5)?)?))
            }
        };
        Ok(FnLower {
            e,
            f,
            llf,
            b,
            pb,
            env,
            kernel,
            mode,
            vals: SecondaryMap::default(),
            blocks: SecondaryMap::default(),
            phis: HashMap::new(),
            wi_cache: HashMap::new(),
            global_cache: HashMap::new(),
            resume: ResumePoints::new(state, dispatch),
            vec: None,
            restrict_params: HashMap::new(),
            stream_stores: Default::default(),
            ndrange_items: None,
            lane_vals: HashMap::new(),
            hooks: Vec::new(),
        })
    }

    /// Adds a hook, asked after those added before it.
    pub fn add_hook(&mut self, h: Box<dyn LowerHook<'a, 'ctx, 'ir> + 'a>) {
        self.hooks.push(h);
    }

    /// Adds a hook asked before every other.
    pub fn add_first_hook(&mut self, h: Box<dyn LowerHook<'a, 'ctx, 'ir> + 'a>) {
        self.hooks.insert(0, h);
    }

    /// Asks the hooks, in order, to lower `i` (taken out of `self` meanwhile: a hook gets the
    /// core, not the hooks); true when one did.
    fn hooks_lower(&mut self, i: Inst) -> R<bool> {
        let mut hooks = std::mem::take(&mut self.hooks);
        let mut done = Ok(false);
        for h in hooks.iter_mut() {
            done = h.inst(self, i);
            if !matches!(done, Ok(false)) {
                break;
            }
        }
        self.hooks = hooks;
        done
    }

    fn err(&self, msg: impl std::fmt::Display) -> Error {
        Error(format!("function `{}`: {}", self.f.name, msg))
    }

    pub fn cx(&self) -> &'ctx Context {
        self.e.cx
    }

    pub fn ty(&self, t: ir::Type) -> R<BasicTypeEnum<'ctx>> {
        self.e.ty(t)
    }

    pub fn i32(&self) -> IntType<'ctx> {
        self.e.cx.i32_type()
    }
    pub fn i64(&self) -> IntType<'ctx> {
        self.e.cx.i64_type()
    }
    pub fn ptr_type(&self) -> inkwell::types::PointerType<'ctx> {
        self.e.cx.ptr_type(AddressSpace::default())
    }

    /// Lowers the whole function body.
    pub fn lower(mut self) -> R<()> {
        let f = self.f;
        let entry = f.layout.entry().ok_or_else(|| self.err("has no body"))?;
        let cfg = crate::analysis::Cfg::new(f);
        let order = cfg.rpo();
        // Vector code has no divergent branch left: `passes::linearize` made them masked
        // blocks, which set the mask of their code.
        if let Some(v) = self.vec.as_ref().filter(|v| !v.wa.divergent_branches.is_empty()) {
            let at: Vec<String> =
                v.wa.divergent_branches.iter().filter_map(|&t| f.layout.inst_block[t]).map(|b| b.to_string()).collect();
            return Err(self
                .err(format!("divergent branches in vector code that was not linearized (ending {})", at.join(", "))));
        }
        let masked = f.layout.blocks.iter().any(|&b| f.blocks[b].mask.is_some());
        // Blocks and phis first, so that branches can target anything.
        for &bb in order {
            let llb = self.cx().append_basic_block(self.llf, "");
            self.blocks[bb] = Some(llb);
            if bb != entry {
                self.b.position_at_end(llb);
                let mut phis = Vec::new();
                for &p in &f.blocks[bb].params {
                    let ty = self.value_llty(p)?;
                    let parts = match self.phi_parts(ty) {
                        Some((n, part)) => (0..n).map(|_| self.b.build_phi(part, "")).collect::<Result<_, _>>()?,
                        None => vec![self.b.build_phi(ty, "")?],
                    };
                    phis.push(parts);
                }
                self.phis.insert(bb, phis);
            }
        }
        if !cfg.preds(entry).is_empty() {
            return Err(self.err("the entry block has predecessors"));
        }
        self.setup_params(entry)?;
        self.setup_variables(order)?;

        for &bb in order {
            let llb = self.blocks[bb].ok_or_else(|| self.err("block not created"))?;
            self.b.position_at_end(llb);
            if bb == entry {
                for (dst, src, size, align) in std::mem::take(&mut self.resume.entry_copies) {
                    let n = self.i64().const_int(size, false);
                    self.b.build_memcpy(dst, align, src, align, n)?;
                }
            } else {
                let phis = self.phis.get(&bb).cloned().unwrap_or_default();
                for (&p, parts) in f.blocks[bb].params.iter().zip(phis) {
                    let v = self.join_phi_parts(&parts)?;
                    self.define(p, v)?;
                }
            }
            // After the parameters: a linearized loop's header is masked by its own.
            let skip = if masked { self.enter_block_mask(bb)? } else { None };
            for &i in &f.layout.insts[bb] {
                self.lower_inst(i).map_err(|e| {
                    if e.0.starts_with("function `") {
                        e
                    } else {
                        self.err(format!("{}: {}", describe(&f.insts[i]), e.0))
                    }
                })?;
            }
            if f.layout.last_inst(bb).is_none_or(|i| !f.insts[i].is_terminator()) {
                return Err(self.err(format!("block {bb} has no terminator")));
            }
            if let Some(skip) = skip {
                self.leave_block_mask(bb, skip)?;
            }
        }
        // The dispatch block: start of the body, or the resume point of a barrier.
        let body = self.blocks[entry].ok_or_else(|| self.err("no entry block"))?;
        let resume_at = match &self.mode {
            Mode::Kernel { .. } => Some(as_int(self.llf.get_nth_param(6).ok_or("missing resume parameter")?)?),
            Mode::Function => None,
        };
        self.resume.build_dispatch(&self.b, resume_at, body)
    }

    fn setup_params(&mut self, entry: Block) -> R<()> {
        let f = self.f;
        let params = &f.blocks[entry].params;
        if params.len() != f.params.len() {
            return Err(self.err("entry block parameters differ from the function's"));
        }
        match &self.mode {
            Mode::Function => {
                for (i, &p) in params.iter().enumerate() {
                    let v = self.llf.get_nth_param(i as u32).ok_or("missing parameter")?;
                    self.vals[p] = Some(v);
                }
            }
            Mode::Kernel { info, plan } => {
                if info.args.len() != params.len() {
                    return Err(self.err(format!(
                        "the kernel has {} parameters but {} described arguments",
                        params.len(),
                        info.args.len()
                    )));
                }
                let args_ptr = as_ptr(self.llf.get_nth_param(0).ok_or("missing args")?)?;
                for (i, (&p, arg)) in params.iter().zip(info.args.iter()).enumerate() {
                    let ir_ty = f.value_type(p);
                    let is_ptr = matches!(self.e.ir.types.get(ir_ty), TypeData::Pointer { .. });
                    let at = gep(
                        &self.pb,
                        self.cx().i8_type().into(),
                        args_ptr,
                        &[self.i64().const_int(arg.offset as u64, false)],
                        true,
                    )?;
                    // The block is only `abi::ARGS_ALIGN` aligned (`NativeKernel::run`): so is
                    // what it holds, at most, whatever the argument's type asks for.
                    let in_block = align::at_offset(crate::abi::ARGS_ALIGN as u64, arg.offset as u64) as u32;
                    let v: Val<'ctx> = match (&arg.kind, is_ptr) {
                        (ArgKind::Buffer { .. }, true) if self.restrict_params.contains_key(&i) => {
                            let pi = self.restrict_params[&i];
                            self.llf.get_nth_param(pi).ok_or("missing restrict parameter")?
                        }
                        (ArgKind::Buffer { .. } | ArgKind::Local, true) => {
                            let l = self.pb.build_load(self.ptr_type(), at, "")?;
                            set_align(l, in_block);
                            set_invariant(self.cx(), l);
                            l
                        }
                        (ArgKind::Value, true) => {
                            // A struct passed by value: a private copy, so that the kernel may
                            // write to it without touching the argument block.
                            let size = arg.size as u64;
                            let align = arg.align.clamp(1, 128) as u32;
                            let dst = if let Some(off) = plan.byval.get(&i) {
                                let at_off = self.i64().const_int(self.packet_off(*off), false);
                                let dst = self.resume.slot(&self.pb, self.cx().i8_type(), at_off)?;
                                self.resume.entry_copies.push((dst, at, size, in_block.min(align)));
                                dst
                            } else {
                                let arr = self.cx().i8_type().array_type(size as u32);
                                let dst = self.pb.build_alloca(arr, "")?;
                                if let Some(inst) = dst.as_instruction() {
                                    let _ = inst.set_alignment(align.max(16));
                                }
                                let n = self.i64().const_int(size, false);
                                self.pb.build_memcpy(dst, align.max(16), at, in_block, n)?;
                                dst
                            };
                            dst.into()
                        }
                        (ArgKind::Value, false) => {
                            let ty = self.ty(ir_ty)?;
                            let l = self.pb.build_load(ty, at, "")?;
                            set_align(l, in_block);
                            set_invariant(self.cx(), l);
                            l
                        }
                        (ArgKind::Sampler, _) | (ArgKind::Image, _) => {
                            // 8 bytes: the ImageArg pointer, or the sampler_t bits (`crate::abi`),
                            // both a pointer-typed value in the IR (an opaque type).
                            let l = self.pb.build_load(self.ptr_type(), at, "")?;
                            set_align(l, in_block);
                            set_invariant(self.cx(), l);
                            l
                        }
                        (ArgKind::Buffer { .. } | ArgKind::Local, false) => {
                            return Err(self.err(format!("argument `{}` is a buffer but not a pointer", arg.name)))
                        }
                    };
                    self.vals[p] = Some(v);
                }
            }
        }
        Ok(())
    }

    fn setup_variables(&mut self, order: &[Block]) -> R<()> {
        let f = self.f;
        for &bb in order {
            for &i in &f.layout.insts[bb] {
                let InstData::Variable { ty, align: declared, .. } = &f.insts[i] else { continue };
                let Some(r) = f.inst_result[i] else { continue };
                // Vector code: a varying register variable holds every lane's copy; an array
                // (or a variable whose address is used) has W copies, lane k's at k * stride.
                let mut lane_copies = None;
                let llty = match &self.vec {
                    Some(vs) if vs.wa.private_regs.contains(&r) => wide_ty(self.ty(*ty)?, vs.width)?,
                    Some(vs) if !vs.wa.reg_candidates.contains(&r) => {
                        let one = self.ty(*ty)?;
                        let stride = align::lane_copy_stride(&self.e.ir.types, *ty, *declared);
                        if self.e.alloc_size(one) > stride {
                            bail!("private variable of {} bytes laid out in {}", stride, self.e.alloc_size(one));
                        }
                        lane_copies = Some(stride);
                        self.cx().i8_type().array_type((stride * vs.width as u64) as u32).into()
                    }
                    _ => self.ty(*ty)?,
                };
                let state_off = match &self.mode {
                    Mode::Kernel { plan, .. } => plan.state_vars.get(&i).copied(),
                    Mode::Function => None,
                };
                let ptr = match state_off {
                    Some(off) => {
                        let at = self.i64().const_int(self.packet_off(off), false);
                        self.resume.slot(&self.pb, self.cx().i8_type(), at)?
                    }
                    None => {
                        let a = self.pb.build_alloca(llty, "")?;
                        // What `passes::align` counts on: the variable's alignment (lane copies:
                        // each copy's, their size a multiple of it).
                        let mut align =
                            self.e.abi_align(llty).max(align::variable_align(&self.e.ir.types, *ty, *declared));
                        if lane_copies.is_some() {
                            align = align.max(self.e.abi_align(self.ty(*ty)?));
                        }
                        if let Some(inst) = a.as_instruction() {
                            if align.is_power_of_two() {
                                let _ = inst.set_alignment(align as u32);
                            }
                        }
                        a
                    }
                };
                self.vals[r] = Some(match lane_copies {
                    Some(size) => self.lane_pointers(ptr, size)?,
                    None => ptr.into(),
                });
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- values

    /// The offset in a packet's state of what a work-item keeps at `off`: packets keep W
    /// work-items' state in structure-of-arrays form (a varying value stored whole).
    pub fn packet_off(&self, off: u64) -> u64 {
        off * self.vec.as_ref().map_or(1, |v| v.width as u64)
    }

    /// The LLVM value of `v` at the current position.
    pub fn get(&mut self, v: Value) -> R<Val<'ctx>> {
        if let Some(x) = self.lane_vals.get(&v) {
            return Ok(*x);
        }
        let Some(vd) = self.f.values.get(v) else { bail!("unknown value {v}") };
        match vd.def {
            ValueDef::Const(c) => {
                let val = self.e.constant(c)?;
                let want = self.ty(vd.ty)?;
                if val.get_type() != want {
                    bail!("constant {c} does not have the type of {v}");
                }
                Ok(val)
            }
            ValueDef::Global(g) => Ok(self.global_address(g)?.into()),
            _ => match self.vals[v] {
                Some(x) => Ok(x),
                None => bail!("value {v} is used where its definition does not reach"),
            },
        }
    }

    /// Records the value of `v`.
    pub fn define(&mut self, v: Value, val: Val<'ctx>) -> R<()> {
        let want = self.value_llty(v)?;
        if val.get_type() != want {
            bail!("produces {} where the IR says {}", val.get_type(), want);
        }
        self.vals[v] = Some(val);
        Ok(())
    }

    /// The LLVM block of `b`, once created.
    pub fn blocks_of(&self, b: Block) -> Option<BasicBlock<'ctx>> {
        self.blocks[b]
    }

    /// `v` is the address of a module variable plus constant offsets (AccessChain / pointer
    /// casts of a global with constant indices): cheap to recompute at any use.
    pub fn is_constant_address(&self, v: Value) -> bool {
        let f = self.f;
        let is_const = |x: Value| matches!(f.values.get(x).map(|d| d.def), Some(ValueDef::Const(_)));
        match f.values.get(v).map(|d| d.def) {
            Some(ValueDef::Global(_)) => true,
            Some(ValueDef::Result(i)) => match &f.insts[i] {
                InstData::AccessChain { base, element, indices, .. } => {
                    self.is_constant_address(*base)
                        && element.is_none_or(is_const)
                        && indices.iter().all(|x| is_const(*x))
                }
                InstData::Convert { op: ir::ConvertOp::PtrCast | ir::ConvertOp::Bitcast, arg, .. } => {
                    matches!(self.e.ir.types.get(f.value_type(*arg)), TypeData::Pointer { .. })
                        && matches!(self.e.ir.types.get(f.value_type(v)), TypeData::Pointer { .. })
                        && self.is_constant_address(*arg)
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The recorded value of `v` (no slot or state lookup).
    pub fn vals_get(&self, v: Value) -> R<Val<'ctx>> {
        self.vals[v].ok_or_else(|| Error(format!("value {v} has no value yet")))
    }

    /// Whether `v` has a value at this point of the lowering.
    pub fn vals_has(&self, v: Value) -> bool {
        self.vals[v].is_some()
    }

    /// The value recorded for `v`, if any.
    pub fn val_of(&self, v: Value) -> Option<Val<'ctx>> {
        self.vals[v]
    }

    /// Records `x` as the value of `v` without keeping it anywhere.
    pub fn set_val(&mut self, v: Value, x: Val<'ctx>) {
        self.vals[v] = Some(x);
    }

    fn global_address(&mut self, g: GlobalVar) -> R<PointerValue<'ctx>> {
        if let Some(p) = self.global_cache.get(&g) {
            return Ok(*p);
        }
        let Some(data) = self.e.ir.globals.get(g) else { bail!("unknown module variable {g}") };
        let p = if let Some(ir::BuiltinVar::WorkItem(q)) = data.builtin {
            // A built-in variable read as memory: a private copy of its value.
            let ty = self.ty(data.ty)?;
            let a = self.pb.build_alloca(ty, "")?;
            let v = self.work_item_value(q, ty)?;
            self.pb.build_store(a, v)?;
            a
        } else if let Some(off) = self.e.program_storage.as_ref().and_then(|(_, l)| l.offset_of(g)) {
            let base = self.ctx_field_ptr(ctx_offsets::PROGRAM_GLOBALS)?;
            let base = as_ptr(self.pb.build_load(self.ptr_type(), base, "")?)?;
            gep(&self.pb, self.cx().i8_type().into(), base, &[self.i64().const_int(off, false)], true)?
        } else if is_local_var(data) {
            let layout = self.e.layouts.get(self.kernel).ok_or("no local layout")?;
            let off = *layout.offsets.get(&g).ok_or_else(|| format!("__local `{}` has no offset", data.name))?;
            let base = self.ctx_field_ptr(ctx_offsets::LOCAL_MEMORY)?;
            let base = as_ptr(self.pb.build_load(self.ptr_type(), base, "")?)?;
            gep(&self.pb, self.cx().i8_type().into(), base, &[self.i64().const_int(off, false)], true)?
        } else {
            self.e.global_ptr(g).ok_or_else(|| format!("module variable `{}` was not emitted", data.name))?
        };
        self.global_cache.insert(g, p);
        Ok(p)
    }

    // ---------------------------------------------------------------- instructions

    fn result_ty(&self, i: Inst) -> R<Option<BasicTypeEnum<'ctx>>> {
        match self.f.inst_result[i] {
            Some(v) => {
                let t = self.f.value_type(v);
                if self.e.is_void(t) {
                    Ok(None)
                } else {
                    Ok(Some(self.value_llty(v)?))
                }
            }
            None => Ok(None),
        }
    }

    pub(super) fn need_result(&self, i: Inst) -> R<(Value, BasicTypeEnum<'ctx>)> {
        let v = self.f.inst_result[i].ok_or("instruction has no result")?;
        Ok((v, self.value_llty(v)?))
    }

    fn lower_inst(&mut self, i: Inst) -> R<()> {
        // Gen counting and vector mode first (neither takes a `barrier_resume`).
        if self.hooks_lower(i)? {
            return Ok(());
        }
        let result = self.lower_scalar(i)?;
        match (result, self.f.inst_result[i]) {
            (Some(val), Some(v)) => self.define(v, val)?,
            (None, Some(v))
                if !matches!(self.f.insts[i], InstData::Variable { .. }) && !self.e.is_void(self.f.value_type(v)) =>
            {
                bail!("produced no value");
            }
            _ => {}
        }
        Ok(())
    }

    /// The scalar lowering of instruction `i`: its result, not yet defined.
    pub(crate) fn lower_scalar(&mut self, i: Inst) -> R<Option<Val<'ctx>>> {
        let data = &self.f.insts[i];
        use InstData as I;
        let result: Option<Val<'ctx>> = match data {
            I::Binary { op, lhs, rhs } => {
                let (a, b) = (self.get(*lhs)?, self.get(*rhs)?);
                Some(self.lower_binary(*op, a, b)?)
            }
            I::Unary { op, arg } => {
                let a = self.get(*arg)?;
                let (_, rt) = self.need_result(i)?;
                Some(self.lower_unary(*op, a, rt)?)
            }
            I::Compare { op, lhs, rhs } => {
                let (a, b) = (self.get(*lhs)?, self.get(*rhs)?);
                Some(self.lower_compare(*op, a, b)?)
            }
            I::Select { cond, if_true, if_false } => {
                let c = self.get(*cond)?;
                let t = self.get(*if_true)?;
                let f = self.get(*if_false)?;
                Some(self.select(c, t, f)?)
            }
            // The work-item alone: its own condition.
            I::AnyActive { cond } => Some(self.get(*cond)?),
            I::GenericSpace { ptr } => {
                let p = self.get(*ptr)?;
                Some(self.generic_space(p)?)
            }
            // Work-group collectives are local memory and barriers by now
            // (`passes::collectives`).
            I::Group { scope: ir::Scope::SubGroup, .. } => Some(self.sub_group_scalar(i)?),
            I::Group { .. } => bail!("a work-group collective the middle end did not expand"),
            I::Convert { op, arg, saturate, rounding } => {
                let a = self.get(*arg)?;
                let (_, rt) = self.need_result(i)?;
                Some(self.lower_convert(*op, a, rt, *saturate, *rounding)?)
            }
            I::Variable { ty, init, align } => {
                if let Some(init) = init {
                    let (r, _) = self.need_result(i)?;
                    let p = as_ptr(self.vals[r].ok_or("variable without storage")?)?;
                    let v = self.get(*init)?;
                    let st = self.b.build_store(p, v)?;
                    let _ = st.set_alignment(align::variable_align(&self.e.ir.types, *ty, *align) as u32);
                }
                None // the pointer was set up in the prologue
            }
            I::Load { ptr, align, volatile, .. } => {
                let p = as_ptr(self.get(*ptr)?)?;
                let (_, rt) = self.need_result(i)?;
                let l = self.b.build_load(rt, p, "")?;
                if let Some(inst) = l.as_instruction_value() {
                    if *align > 0 && align.is_power_of_two() {
                        let _ = inst.set_alignment(*align);
                    }
                    if *volatile {
                        let _ = inst.set_volatile(true);
                    }
                }
                Some(l)
            }
            I::Store { ptr, value, .. } if self.stream_stores.contains(&i) => {
                let p = as_ptr(self.get(*ptr)?)?;
                let v = self.get(*value)?;
                self.scalar_stream_store(p, v)?;
                None
            }
            I::Store { ptr, value, align, volatile, .. } => {
                let p = as_ptr(self.get(*ptr)?)?;
                let v = self.get(*value)?;
                let s = self.b.build_store(p, v)?;
                if *align > 0 && align.is_power_of_two() {
                    let _ = s.set_alignment(*align);
                }
                if *volatile {
                    let _ = s.set_volatile(true);
                }
                None
            }
            I::CopyMemory { dst, src, size, align } => {
                let d = as_ptr(self.get(*dst)?)?;
                let s = as_ptr(self.get(*src)?)?;
                let n = as_int(self.get(*size)?)?;
                let a = if *align > 0 && align.is_power_of_two() { *align } else { 1 };
                self.b.build_memcpy(d, a, s, a, n)?;
                None
            }
            I::AccessChain { base, element, indices, in_bounds } => {
                Some(self.lower_access_chain(*base, *element, indices, *in_bounds)?.into())
            }
            I::ExtractElement { vector, index } => {
                let v = as_vec(self.get(*vector)?)?;
                let idx = as_int(self.get(*index)?)?;
                Some(self.b.build_extract_element(v, idx, "")?)
            }
            I::InsertElement { vector, value, index } => {
                let v = as_vec(self.get(*vector)?)?;
                let x = self.get(*value)?;
                let idx = as_int(self.get(*index)?)?;
                if x.get_type() != v.get_type().get_element_type() {
                    bail!("inserting {} into {}", x.get_type(), v.get_type());
                }
                Some(self.b.build_insert_element(v, x, idx, "")?.into())
            }
            I::Shuffle { a, b, mask } => {
                let va = as_vec(self.get(*a)?)?;
                let vb = as_vec(self.get(*b)?)?;
                Some(self.lower_shuffle(va, vb, mask)?)
            }
            I::ExtractValue { aggregate, indices } => {
                let agg = self.get(*aggregate)?;
                let ty = self.f.value_type(*aggregate);
                Some(self.extract_path(agg, ty, indices)?)
            }
            I::InsertValue { aggregate, value, indices } => {
                let agg = self.get(*aggregate)?;
                let v = self.get(*value)?;
                let ty = self.f.value_type(*aggregate);
                Some(self.insert_path(agg, ty, indices, v)?)
            }
            I::Construct { parts } => {
                let (_, rt) = self.need_result(i)?;
                let vals: Vec<Val<'ctx>> = parts.iter().map(|p| self.get(*p)).collect::<R<_>>()?;
                Some(self.lower_construct(rt, &vals)?)
            }
            I::Call { func, args } => self.lower_call(i, *func, args)?,
            I::ExtInst { opcode, args } => {
                let rt = self.result_ty(i)?;
                let vals: Vec<Val<'ctx>> = args.iter().map(|p| self.get(*p)).collect::<R<_>>()?;
                let arg_tys: Vec<ir::Type> = args.iter().map(|a| self.f.value_type(*a)).collect();
                super::builtins::lower(self, *opcode, &vals, &arg_tys, rt)?
            }
            I::WorkItem { query } => {
                let (_, rt) = self.need_result(i)?;
                Some(self.work_item_value(*query, rt)?)
            }
            I::Barrier { .. } if crate::passes::inline::is_work_group_barrier(data) => {
                // The `barrier_resume` after it returns to the work-group loop.
                if !matches!(self.mode, Mode::Kernel { .. }) {
                    bail!("barrier outside a kernel body (it should have been inlined)");
                }
                None
            }
            I::Barrier { .. } => {
                // A sub-group barrier: sub-groups have one work-item, only the fence remains.
                self.b.build_fence(AtomicOrdering::SequentiallyConsistent, false, "")?;
                None
            }
            I::Image { op, image, sampler, coord, texel } => {
                self.lower_image(i, *op, *image, *sampler, *coord, *texel)?
            }
            // A fence of the order its semantics give (`calls::ordering`); a relaxed one, or
            // one of a work-item's own memory, orders nothing.
            I::Fence { scope, semantics } => {
                let order = calls::ordering(*semantics);
                if !matches!(scope, ir::Scope::WorkItem) && order != AtomicOrdering::Monotonic {
                    self.b.build_fence(order, false, "")?;
                }
                None
            }
            I::Atomic { op, ptr, value, comparator, semantics, .. } => {
                let rt = self.result_ty(i)?;
                self.lower_atomic(*op, *ptr, *value, *comparator, *semantics, rt)?
            }
            I::Jump { .. } | I::Branch { .. } | I::Switch { .. } => {
                self.lower_branch(data)?;
                None
            }
            I::Return { value } => {
                match &self.mode {
                    Mode::Kernel { .. } => {
                        self.b.build_return(Some(&self.i32().const_zero()))?;
                    }
                    Mode::Function => match value {
                        Some(v) => {
                            let v = self.get(*v)?;
                            self.b.build_return(Some(&v))?;
                        }
                        None => {
                            if self.e.is_void(self.f.ret) {
                                self.b.build_return(None)?;
                            } else {
                                let u = undef_of(self.ty(self.f.ret)?);
                                self.b.build_return(Some(&u))?;
                            }
                        }
                    },
                }
                None
            }
            I::Unreachable => {
                self.b.build_unreachable()?;
                None
            }
            // Lowered by the Gen counting's hook (`back::gen`) in a build that counts.
            I::GenBlock { .. } | I::GenCount { .. } => bail!("Gen instrumentation in a build without counters"),
            I::BarrierResume { id, dest } => {
                self.lower_resume(*id, dest.block)?;
                None
            }
        };
        Ok(result)
    }

    /// `barrier_resume id, dest`: back to the work-group loop with `id`; the dispatch
    /// continues at `dest` when called with `resume_at` = `id`, every lane of a packet active
    /// (a barrier is never under divergence).
    fn lower_resume(&mut self, id: u32, dest: Block) -> R<()> {
        if !matches!(self.mode, Mode::Kernel { .. }) {
            bail!("barrier_resume outside a kernel body");
        }
        self.b.build_return(Some(&self.i32().const_int(id as u64, false)))?;
        let target = self.blocks[dest].ok_or("resume point without a block")?;
        self.resume.points.push((id, target));
        Ok(())
    }
}

/// Marks a load of the argument block or the work-group context `!invariant.load`: neither
/// changes while a work-group runs, so LLVM may hoist such loads out of the work-item loop.
pub(crate) fn set_invariant(cx: &Context, v: Val<'_>) {
    if let Some(i) = v.as_instruction_value() {
        let _ = i.set_metadata(cx.metadata_node(&[]), cx.get_kind_id("invariant.load"));
    }
}

fn set_align(v: Val<'_>, align: u32) {
    if let Some(i) = v.as_instruction_value() {
        if align.is_power_of_two() {
            let _ = i.set_alignment(align);
        }
    }
}

/// A short description of an instruction for error messages.
pub fn describe(d: &InstData) -> String {
    let s = format!("{d:?}");
    let name: String = s.chars().take_while(|c| c.is_alphanumeric()).collect();
    match d {
        InstData::ExtInst { opcode, .. } => {
            let n = spirv::OpenclStd100Op::from_u32(*opcode)
                .map(|o| format!("{o:?}"))
                .unwrap_or_else(|| opcode.to_string());
            format!("OpenCL.std {n}")
        }
        InstData::Binary { op, .. } => format!("{op:?}"),
        InstData::Unary { op, .. } => format!("{op:?}"),
        InstData::Convert { op, .. } => format!("convert {op:?}"),
        InstData::Atomic { op, .. } => format!("atomic {op:?}"),
        _ => name,
    }
}

/// Calls LLVM intrinsic `name` of module `m`, overloaded on `tys`, with `b`.
pub fn call_intrinsic<'ctx>(
    b: &Builder<'ctx>,
    m: &inkwell::module::Module<'ctx>,
    name: &str,
    tys: &[BasicTypeEnum<'ctx>],
    args: &[Val<'ctx>],
) -> R<Val<'ctx>> {
    let Some(i) = Intrinsic::find(name) else { bail!("LLVM has no intrinsic {name}") };
    let Some(decl) = i.get_declaration(m, tys) else { bail!("cannot declare {name}") };
    let params = decl.get_type().get_param_types();
    if params.len() != args.len() || params.iter().zip(args).any(|(p, a)| *p != a.get_type().into()) {
        bail!("{name} called with arguments of the wrong types");
    }
    let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
    let call = b.build_call(decl, &args, "")?;
    call.try_as_basic_value().basic().ok_or_else(|| Error(format!("{name} has no result")))
}
