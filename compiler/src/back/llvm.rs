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

use super::workgroup::{ResumePoints, StatePlan};
use crate::abi::WorkGroupContext;
use crate::ir::{
    self, Block, CmpOp, ConstData, ConvertOp, EntityRef, Func, FuncKind, GlobalVar, Inst, InstData, Rounding,
    SecondaryMap, TypeData, UnaryOp, Value, ValueDef, WorkItemQuery,
};
use crate::kernel_info::{AddressSpace as ClSpace, ArgKind, KernelInfo};
use crate::passes::align;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FloatType, IntType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FloatValue, FunctionValue, InstructionOpcode, IntValue,
    PhiValue, PointerValue, VectorValue,
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

/// Where a kernel's `__local` variables live in `ctx.local_memory`.
#[derive(Debug, Clone, Default)]
pub struct LocalLayout {
    pub offsets: HashMap<GlobalVar, u64>,
    pub size: u64,
}

/// Module-level state of the LLVM translation.
pub struct Emitter<'ctx, 'ir> {
    pub cx: &'ctx Context,
    pub m: Module<'ctx>,
    pub ir: &'ir ir::Module,
    pub td: TargetData,
    types: Vec<Option<BasicTypeEnum<'ctx>>>,
    globals: HashMap<GlobalVar, PointerValue<'ctx>>,
    /// LLVM functions by (IR function, kernel whose local layout it uses).
    pub funcs: HashMap<(Func, Option<usize>), FunctionValue<'ctx>>,
    pub layouts: Vec<LocalLayout>,
    pub uses_local: Vec<bool>,
    /// Widest SIMD register (bits) math built-ins may pass vectors in (`vecmath`); 0 = none.
    pub math_vector_bits: u32,
    /// `rsqrt` on float vectors by `vrsqrt14ps` and a Newton step (`vecmath::rsqrt`).
    pub rsqrt14: bool,
    /// The target's code-generation knobs (streaming stores, prefetches, vector math).
    pub knobs: crate::CodegenKnobs,
}

pub fn is_local_var(g: &ir::GlobalVarData) -> bool {
    g.space == ClSpace::Local && g.builtin.is_none()
}

impl<'ctx, 'ir> Emitter<'ctx, 'ir> {
    pub fn new(cx: &'ctx Context, m: Module<'ctx>, ir: &'ir ir::Module, td: TargetData) -> R<Self> {
        let mut e = Emitter {
            cx,
            m,
            ir,
            td,
            types: Vec::new(),
            globals: HashMap::new(),
            funcs: HashMap::new(),
            layouts: Vec::new(),
            uses_local: Vec::new(),
            math_vector_bits: 0,
            rsqrt14: false,
            knobs: crate::CodegenKnobs::default(),
        };
        e.build_types();
        e.compute_uses_local();
        Ok(e)
    }

    fn build_types(&mut self) {
        let cx = self.cx;
        let mut out: Vec<Option<BasicTypeEnum<'ctx>>> = Vec::with_capacity(self.ir.types.len());
        for (_, data) in self.ir.types.iter() {
            let get = |t: ir::Type| out.get(t.index()).copied().flatten();
            let ty: Option<BasicTypeEnum<'ctx>> = match data {
                TypeData::Void | TypeData::Function { .. } => None,
                TypeData::Bool => Some(cx.bool_type().into()),
                TypeData::Int { bits } if *bits > 0 && *bits <= 128 => {
                    int_type(cx, *bits as u32).ok().map(|t| t.into())
                }
                TypeData::Int { .. } => None,
                TypeData::Float { bits: 16 } => Some(cx.f16_type().into()),
                TypeData::Float { bits: 32 } => Some(cx.f32_type().into()),
                TypeData::Float { bits: 64 } => Some(cx.f64_type().into()),
                TypeData::Float { .. } => None,
                TypeData::Vector { elem, len } if *len > 0 => match get(*elem) {
                    Some(BasicTypeEnum::IntType(t)) => Some(t.vec_type(*len).into()),
                    Some(BasicTypeEnum::FloatType(t)) => Some(t.vec_type(*len).into()),
                    Some(BasicTypeEnum::PointerType(t)) => Some(t.vec_type(*len).into()),
                    _ => None,
                },
                TypeData::Vector { .. } => None,
                TypeData::Pointer { .. } | TypeData::Opaque { .. } => Some(cx.ptr_type(AddressSpace::default()).into()),
                TypeData::Array { elem, len } => match (get(*elem), u32::try_from(*len)) {
                    (Some(t), Ok(n)) => Some(t.array_type(n).into()),
                    _ => None,
                },
                TypeData::Struct { fields, packed } => {
                    let fs: Option<Vec<BasicTypeEnum<'ctx>>> = fields.iter().map(|f| get(*f)).collect();
                    fs.map(|fs| cx.struct_type(&fs, *packed).into())
                }
            };
            out.push(ty);
        }
        self.types = out;
    }

    /// The LLVM type of an IR type that has values.
    pub fn ty(&self, t: ir::Type) -> R<BasicTypeEnum<'ctx>> {
        match self.types.get(t.index()).copied().flatten() {
            Some(t) => Ok(t),
            None => bail!("type {:?} has no machine representation", self.ir.types.get(t)),
        }
    }

    pub fn is_void(&self, t: ir::Type) -> bool {
        matches!(self.ir.types.get(t), TypeData::Void)
    }

    pub fn alloc_size(&self, t: BasicTypeEnum<'ctx>) -> u64 {
        self.td.get_abi_size(&t)
    }
    pub fn abi_align(&self, t: BasicTypeEnum<'ctx>) -> u64 {
        self.td.get_abi_alignment(&t) as u64
    }

    // ---------------------------------------------------------------- constants

    pub fn constant(&self, c: ir::Const) -> R<Val<'ctx>> {
        let Some(data) = self.ir.constants.get(c) else { bail!("unknown constant {c}") };
        let ty = self.ty(data.ty())?;
        Ok(match data {
            // A sampler_t constant: its bits as the pointer-sized value a sampler is.
            ConstData::Int { bits, .. } if ty.is_pointer_type() => {
                self.cx.i64_type().const_int(*bits, false).const_to_pointer(ty.into_pointer_type()).into()
            }
            ConstData::Int { bits, .. } => const_int_like(ty, *bits)?,
            ConstData::Float { bits, .. } => {
                let elem = elem_type(ty);
                let BasicTypeEnum::FloatType(ft) = elem else { bail!("float constant of a non-float type") };
                let f = float_from_bits(ft, *bits);
                splat_const(ty, f.into())?
            }
            ConstData::Null { .. } => ty.const_zero(),
            ConstData::Undef { .. } => undef_of(ty),
            ConstData::Composite { parts, .. } => {
                let vals: Vec<Val<'ctx>> = parts.iter().map(|p| self.constant(*p)).collect::<R<_>>()?;
                match ty {
                    BasicTypeEnum::VectorType(vt) => {
                        if vals.len() != vt.get_size() as usize {
                            bail!("vector constant with {} parts for {} lanes", vals.len(), vt.get_size());
                        }
                        inkwell::types::VectorType::const_vector(&vals).into()
                    }
                    BasicTypeEnum::StructType(st) => {
                        if vals.len() != st.count_fields() as usize {
                            bail!("struct constant with the wrong number of fields");
                        }
                        for (i, v) in vals.iter().enumerate() {
                            if st.get_field_type_at_index(i as u32) != Some(v.get_type()) {
                                bail!("struct constant field {i} has the wrong type");
                            }
                        }
                        st.const_named_struct(&vals).into()
                    }
                    BasicTypeEnum::ArrayType(at) => {
                        if vals.len() != at.len() as usize {
                            bail!("array constant with the wrong number of elements");
                        }
                        const_array(at.get_element_type(), &vals)?
                    }
                    _ => bail!("composite constant of a scalar type"),
                }
            }
        })
    }

    // ---------------------------------------------------------------- module variables

    /// Creates the LLVM globals of `__constant` and program-scope variables.
    pub fn declare_globals(&mut self) -> R<()> {
        for (g, data) in self.ir.globals.iter() {
            if data.builtin.is_some() || is_local_var(data) {
                continue;
            }
            let ty = self.ty(data.ty).map_err(|e| Error(format!("module variable `{}`: {}", data.name, e.0)))?;
            let gv = self.m.add_global(ty, None, &format!("g{}.{}", g.index(), sanitize(&data.name)));
            gv.set_linkage(Linkage::Internal);
            let init = match data.init {
                Some(c) => self.constant(c)?,
                None => ty.const_zero(),
            };
            if init.get_type() != ty {
                bail!("module variable `{}`: initializer of the wrong type", data.name);
            }
            gv.set_initializer(&init);
            gv.set_constant(data.space == ClSpace::Constant);
            let align = self.abi_align(ty).max(align::global_align(&self.ir.types, data));
            if align.is_power_of_two() {
                gv.set_alignment(align as u32);
            }
            self.globals.insert(g, gv.as_pointer_value());
        }
        Ok(())
    }

    pub fn global_ptr(&self, g: GlobalVar) -> Option<PointerValue<'ctx>> {
        self.globals.get(&g).copied()
    }

    // ---------------------------------------------------------------- call graph

    fn compute_uses_local(&mut self) {
        let n = self.ir.functions.len();
        let mut uses = vec![false; n];
        let mut callees: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (f, func) in self.ir.functions.iter() {
            for (_, vd) in func.values.iter() {
                if let ValueDef::Global(g) = vd.def {
                    if self.ir.globals.get(g).is_some_and(is_local_var) {
                        uses[f.index()] = true;
                    }
                }
            }
            for &b in &func.layout.blocks {
                for &i in &func.layout.insts[b] {
                    if let InstData::Call { func: c, .. } = &func.insts[i] {
                        if c.index() < n {
                            callees[f.index()].push(c.index());
                        }
                    }
                }
            }
        }
        loop {
            let mut changed = false;
            for f in 0..n {
                if !uses[f] && callees[f].iter().any(|&c| uses[c]) {
                    uses[f] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        self.uses_local = uses;
    }

    /// Functions reachable from `root` through calls (`root` included), in discovery order.
    pub fn reachable_functions(&self, root: Func) -> Vec<Func> {
        let mut seen = vec![false; self.ir.functions.len()];
        let mut order = Vec::new();
        let mut stack = vec![root];
        while let Some(f) = stack.pop() {
            if f.index() >= seen.len() || seen[f.index()] {
                continue;
            }
            seen[f.index()] = true;
            order.push(f);
            let func = &self.ir.functions[f];
            for &b in &func.layout.blocks {
                for &i in &func.layout.insts[b] {
                    if let InstData::Call { func: c, .. } = &func.insts[i] {
                        stack.push(*c);
                    }
                }
            }
        }
        order
    }

    /// Lays out the `__local` variables the kernel `k` (function `root`) reaches.
    pub fn layout_locals(&mut self, k: usize, root: Func) -> R<()> {
        let mut used: Vec<GlobalVar> = Vec::new();
        for f in self.reachable_functions(root) {
            for (_, vd) in self.ir.functions[f].values.iter() {
                if let ValueDef::Global(g) = vd.def {
                    if self.ir.globals.get(g).is_some_and(is_local_var) && !used.contains(&g) {
                        used.push(g);
                    }
                }
            }
        }
        used.sort();
        let mut layout = LocalLayout::default();
        let mut off = 0u64;
        for g in used {
            let data = &self.ir.globals[g];
            let ty = self.ty(data.ty).map_err(|e| Error(format!("__local variable `{}`: {}", data.name, e.0)))?;
            let align = self.abi_align(ty).max(align::global_align(&self.ir.types, data));
            off = off.next_multiple_of(align);
            layout.offsets.insert(g, off);
            off += self.alloc_size(ty);
        }
        layout.size = off;
        while self.layouts.len() <= k {
            self.layouts.push(LocalLayout::default());
        }
        self.layouts[k] = layout;
        Ok(())
    }

    /// The layout key of `f` when called in kernel `k`.
    pub fn instance_key(&self, f: Func, k: usize) -> (Func, Option<usize>) {
        let local = self.uses_local.get(f.index()).copied().unwrap_or(false);
        (f, if local { Some(k) } else { None })
    }

    /// Declares the internal LLVM function for an IR function instance.
    pub fn declare_function(&mut self, key: (Func, Option<usize>)) -> R<FunctionValue<'ctx>> {
        if let Some(f) = self.funcs.get(&key) {
            return Ok(*f);
        }
        let func = &self.ir.functions[key.0];
        if func.kind == FuncKind::Import {
            bail!("call to `{}`, which is declared but never defined", func.name);
        }
        let mut params: Vec<BasicMetadataTypeEnum<'ctx>> = Vec::new();
        for &p in &func.params {
            params.push(self.ty(p).map_err(|e| Error(format!("function `{}`: parameter: {}", func.name, e.0)))?.into());
        }
        let ptr = self.cx.ptr_type(AddressSpace::default());
        let i64t = self.cx.i64_type();
        params.extend::<[BasicMetadataTypeEnum<'ctx>; 4]>([ptr.into(), i64t.into(), i64t.into(), i64t.into()]);
        let fn_ty = if self.is_void(func.ret) {
            self.cx.void_type().fn_type(&params, false)
        } else {
            self.ty(func.ret)?.fn_type(&params, false)
        };
        let name = match key.1 {
            Some(k) => format!("f{}.k{}.{}", key.0.index(), k, sanitize(&func.name)),
            None => format!("f{}.{}", key.0.index(), sanitize(&func.name)),
        };
        let fv = self.m.add_function(&name, fn_ty, Some(Linkage::Internal));
        self.add_fn_attr(fv, "nounwind");
        self.funcs.insert(key, fv);
        Ok(fv)
    }

    pub fn add_fn_attr(&self, f: FunctionValue<'ctx>, name: &str) {
        let kind = Attribute::get_named_enum_kind_id(name);
        if kind != 0 {
            f.add_attribute(AttributeLoc::Function, self.cx.create_enum_attribute(kind, 0));
        }
    }

    pub fn add_param_attr(&self, f: FunctionValue<'ctx>, param: u32, name: &str) {
        let kind = Attribute::get_named_enum_kind_id(name);
        if kind != 0 {
            f.add_attribute(AttributeLoc::Param(param), self.cx.create_enum_attribute(kind, 0));
        }
    }

    /// Declares (once) an external C function, such as a libm routine.
    pub fn extern_fn(
        &self,
        name: &str,
        ret: BasicTypeEnum<'ctx>,
        params: &[BasicTypeEnum<'ctx>],
        pure: bool,
    ) -> FunctionValue<'ctx> {
        if let Some(f) = self.m.get_function(name) {
            return f;
        }
        let ps: Vec<BasicMetadataTypeEnum<'ctx>> = params.iter().map(|t| (*t).into()).collect();
        let f = self.m.add_function(name, ret.fn_type(&ps, false), Some(Linkage::External));
        self.add_fn_attr(f, "nounwind");
        self.add_fn_attr(f, "willreturn");
        if pure {
            // memory(none): errno is of no interest to kernels.
            let kind = Attribute::get_named_enum_kind_id("memory");
            if kind != 0 {
                f.add_attribute(AttributeLoc::Function, self.cx.create_enum_attribute(kind, 0));
            }
        }
        f
    }
}

/// The integer type of `bits` bits.
pub fn int_type(cx: &Context, bits: u32) -> R<IntType<'_>> {
    Ok(match bits {
        1 => cx.bool_type(),
        8 => cx.i8_type(),
        16 => cx.i16_type(),
        32 => cx.i32_type(),
        64 => cx.i64_type(),
        128 => cx.i128_type(),
        n => match std::num::NonZeroU32::new(n).map(|n| cx.custom_width_int_type(n)) {
            Some(Ok(t)) => t,
            _ => bail!("no integer type of {n} bits"),
        },
    })
}

/// A name safe for LLVM symbols and dumps.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).take(64).collect()
}

// ---------------------------------------------------------------- type helpers

pub fn elem_type(t: BasicTypeEnum<'_>) -> BasicTypeEnum<'_> {
    match t {
        BasicTypeEnum::VectorType(v) => v.get_element_type(),
        t => t,
    }
}

pub fn lanes(t: BasicTypeEnum<'_>) -> u32 {
    match t {
        BasicTypeEnum::VectorType(v) => v.get_size(),
        _ => 1,
    }
}

/// `ty` with the same number of lanes but element type `elem`.
pub fn with_elem<'ctx>(ty: BasicTypeEnum<'ctx>, elem: BasicTypeEnum<'ctx>) -> R<BasicTypeEnum<'ctx>> {
    let n = lanes(ty);
    if !ty.is_vector_type() {
        return Ok(elem);
    }
    Ok(match elem {
        BasicTypeEnum::IntType(t) => t.vec_type(n).into(),
        BasicTypeEnum::FloatType(t) => t.vec_type(n).into(),
        BasicTypeEnum::PointerType(t) => t.vec_type(n).into(),
        _ => bail!("vector of a non-scalar type"),
    })
}

pub fn undef_of(ty: BasicTypeEnum<'_>) -> Val<'_> {
    match ty {
        BasicTypeEnum::ArrayType(t) => t.get_undef().into(),
        BasicTypeEnum::FloatType(t) => t.get_undef().into(),
        BasicTypeEnum::IntType(t) => t.get_undef().into(),
        BasicTypeEnum::PointerType(t) => t.get_undef().into(),
        BasicTypeEnum::StructType(t) => t.get_undef().into(),
        BasicTypeEnum::VectorType(t) => t.get_undef().into(),
        BasicTypeEnum::ScalableVectorType(t) => t.get_undef().into(),
    }
}

pub fn float_from_bits(ft: FloatType<'_>, bits: u64) -> FloatValue<'_> {
    let v = match ft.get_bit_width() {
        16 => half_to_f64(bits as u16),
        32 => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits),
    };
    ft.const_float(v)
}

pub fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-24),
        31 if man == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A constant of `ty` (a scalar or a vector of it) with every lane `v`.
pub fn splat_const<'ctx>(ty: BasicTypeEnum<'ctx>, v: Val<'ctx>) -> R<Val<'ctx>> {
    match ty {
        BasicTypeEnum::VectorType(vt) => {
            let parts = vec![v; vt.get_size() as usize];
            Ok(inkwell::types::VectorType::const_vector(&parts).into())
        }
        _ => Ok(v),
    }
}

/// An integer constant of `ty` (int, bool, or vector of them; splatted).
pub fn const_int_like(ty: BasicTypeEnum<'_>, bits: u64) -> R<Val<'_>> {
    let BasicTypeEnum::IntType(it) = elem_type(ty) else { bail!("integer constant of a non-integer type") };
    splat_const(ty, it.const_int(bits, false).into())
}

pub fn const_float_like(ty: BasicTypeEnum<'_>, v: f64) -> R<Val<'_>> {
    let BasicTypeEnum::FloatType(ft) = elem_type(ty) else { bail!("float constant of a non-float type") };
    splat_const(ty, ft.const_float(v).into())
}

fn const_array<'ctx>(elem: BasicTypeEnum<'ctx>, vals: &[Val<'ctx>]) -> R<Val<'ctx>> {
    if vals.iter().any(|v| v.get_type() != elem) {
        bail!("array constant element of the wrong type");
    }
    Ok(match elem {
        BasicTypeEnum::IntType(t) => t.const_array(&vals.iter().map(|v| v.into_int_value()).collect::<Vec<_>>()).into(),
        BasicTypeEnum::FloatType(t) => {
            t.const_array(&vals.iter().map(|v| v.into_float_value()).collect::<Vec<_>>()).into()
        }
        BasicTypeEnum::PointerType(t) => {
            t.const_array(&vals.iter().map(|v| v.into_pointer_value()).collect::<Vec<_>>()).into()
        }
        BasicTypeEnum::StructType(t) => {
            t.const_array(&vals.iter().map(|v| v.into_struct_value()).collect::<Vec<_>>()).into()
        }
        BasicTypeEnum::ArrayType(t) => {
            t.const_array(&vals.iter().map(|v| v.into_array_value()).collect::<Vec<_>>()).into()
        }
        BasicTypeEnum::VectorType(t) => {
            t.const_array(&vals.iter().map(|v| v.into_vector_value()).collect::<Vec<_>>()).into()
        }
        BasicTypeEnum::ScalableVectorType(_) => bail!("scalable vectors are not supported"),
    })
}

pub fn as_int<'ctx>(v: Val<'ctx>) -> R<IntValue<'ctx>> {
    match v {
        BasicValueEnum::IntValue(i) => Ok(i),
        _ => bail!("expected an integer scalar, found {}", v.get_type()),
    }
}
pub fn as_ptr<'ctx>(v: Val<'ctx>) -> R<PointerValue<'ctx>> {
    match v {
        BasicValueEnum::PointerValue(p) => Ok(p),
        _ => bail!("expected a pointer, found {}", v.get_type()),
    }
}
pub fn as_vec<'ctx>(v: Val<'ctx>) -> R<VectorValue<'ctx>> {
    match v {
        BasicValueEnum::VectorValue(p) => Ok(p),
        _ => bail!("expected a vector, found {}", v.get_type()),
    }
}

pub fn is_int_like(t: BasicTypeEnum<'_>) -> bool {
    elem_type(t).is_int_type()
}
pub fn is_float_like(t: BasicTypeEnum<'_>) -> bool {
    elem_type(t).is_float_type()
}
/// The largest value of a float type of `float_bits` bits (16, 32 or 64) that is at most `v`
/// (`v` >= 0): `v` with its bits below the type's precision cleared, or the type's largest
/// finite value.
pub fn float_at_most(v: i128, float_bits: u32) -> f64 {
    let (precision, max) = match float_bits {
        16 => (11, 65504.0),
        32 => (24, f64::from(f32::MAX)),
        _ => (53, f64::MAX),
    };
    let len = 128 - v.leading_zeros();
    let kept = if len > precision { v & !((1i128 << (len - precision)) - 1) } else { v };
    (kept as f64).min(max)
}

pub fn int_width(t: BasicTypeEnum<'_>) -> u32 {
    match elem_type(t) {
        BasicTypeEnum::IntType(i) => i.get_bit_width(),
        BasicTypeEnum::FloatType(f) => f.get_bit_width(),
        _ => 64,
    }
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
    pub vec: Option<super::vector::VecState<'a, 'ctx>>,
    /// Linearized control flow (`back::linearize`) of a vector function with divergence.
    pub lin: Option<super::linearize::Lin<'ctx>>,
    /// Kernel argument index of a `restrict` buffer -> the `noalias` parameter holding it.
    pub restrict_params: HashMap<usize, u32>,
    /// Scalar code: stores that stream (non-temporal) when their ND-range is large and
    /// their address aligned (`back::vector::scalar_streaming_stores`).
    pub stream_stores: std::collections::HashSet<Inst>,
    /// The number of work-items of the ND-range, once asked for (`back::vector`).
    pub ndrange_items: Option<IntValue<'ctx>>,
    /// A Gen-instrumented build's counting (`back::gen_count`).
    pub gen: Option<super::gen_count::GenState<'a, 'ctx>>,
    /// One lane's operands while an instruction runs lane by lane (`back::vector_lanes`).
    pub lane_vals: HashMap<Value, Val<'ctx>>,
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
            lin: None,
            restrict_params: HashMap::new(),
            stream_stores: Default::default(),
            ndrange_items: None,
            gen: None,
            lane_vals: HashMap::new(),
        })
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
        let linearize = self.vec.as_ref().is_some_and(|v| !v.wa.divergent_branches.is_empty());
        // Blocks and phis first, so that branches can target anything.
        for &bb in order {
            let llb = self.cx().append_basic_block(self.llf, "");
            self.blocks[bb] = Some(llb);
            if bb != entry && !linearize {
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
        if linearize {
            self.setup_linearized(entry)?;
        }

        for &bb in order {
            let llb = self.blocks[bb].ok_or_else(|| self.err("block not created"))?;
            self.b.position_at_end(llb);
            if linearize {
                self.lin_enter(bb)?;
            }
            if bb == entry {
                for (dst, src, size, align) in std::mem::take(&mut self.resume.entry_copies) {
                    let n = self.i64().const_int(size, false);
                    self.b.build_memcpy(dst, align, src, align, n)?;
                }
            } else if !linearize {
                let phis = self.phis.get(&bb).cloned().unwrap_or_default();
                for (&p, parts) in f.blocks[bb].params.iter().zip(phis) {
                    let v = self.join_phi_parts(&parts)?;
                    self.define(p, v)?;
                }
            }
            if self.gen.is_some() {
                self.gen_block(bb)?;
            }
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
        }
        // The dispatch block: start of the body, or the resume point of a barrier.
        let body = match &self.lin {
            Some(lin) => lin.start,
            None => self.blocks[entry].ok_or_else(|| self.err("no entry block"))?,
        };
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
                let InstData::Variable { ty, .. } = &f.insts[i] else { continue };
                let Some(r) = f.inst_result[i] else { continue };
                // Vector code: a varying register variable holds every lane's copy; an array
                // (or a variable whose address is used) has W copies, lane k's at k * size.
                let mut lane_copies = None;
                let llty = match &self.vec {
                    Some(vs) if vs.wa.private_regs.contains(&r) => super::vector::wide_ty(self.ty(*ty)?, vs.width)?,
                    Some(vs) if !vs.wa.reg_candidates.contains(&r) => {
                        let one = self.ty(*ty)?;
                        let size = self.e.ir.types.size_of(*ty).max(1);
                        if self.e.alloc_size(one) > size {
                            bail!("private variable of {} bytes laid out in {}", size, self.e.alloc_size(one));
                        }
                        lane_copies = Some(size);
                        self.cx().i8_type().array_type((size * vs.width as u64) as u32).into()
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
                        let mut align = self.e.abi_align(llty).max(align::variable_align(&self.e.ir.types, *ty));
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
            _ => {
                if self.lin.is_some() && self.is_constant_address(v) {
                    // Recomputed where used (no slot): printf needs its format as a constant.
                    if let ValueDef::Result(i) = vd.def {
                        if let InstData::AccessChain { base, element, indices, in_bounds } = &self.f.insts[i] {
                            return Ok(self.lower_access_chain(*base, *element, indices, *in_bounds)?.into());
                        }
                        if let InstData::Convert { arg, .. } = &self.f.insts[i] {
                            let a = self.get(*arg)?;
                            let ty = self.ty(vd.ty)?;
                            return Ok(if a.get_type() == ty { a } else { self.b.build_bit_cast(a, ty, "")? });
                        }
                    }
                }
                if let Some(x) = self.lin_get(v)? {
                    return Ok(x);
                }
                match self.vals[v] {
                    Some(x) => Ok(x),
                    None => bail!("value {v} is used where its definition does not reach"),
                }
            }
        }
    }

    /// Records the value of `v`.
    pub fn define(&mut self, v: Value, val: Val<'ctx>) -> R<()> {
        let want = self.value_llty(v)?;
        if val.get_type() != want {
            bail!("produces {} where the IR says {}", val.get_type(), want);
        }
        self.vals[v] = Some(val);
        self.lin_define(v, val)
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

    // ---------------------------------------------------------------- work-item values

    fn ctx_field_ptr(&self, off: u64) -> R<PointerValue<'ctx>> {
        gep(&self.pb, self.cx().i8_type().into(), self.env.ctx, &[self.i64().const_int(off, false)], true)
    }

    pub(crate) fn ctx_u64x3(&self, off: u64) -> R<[IntValue<'ctx>; 3]> {
        let mut out = [self.i64().const_zero(); 3];
        for (d, o) in out.iter_mut().enumerate() {
            let p = self.ctx_field_ptr(off + 8 * d as u64)?;
            let l = self.pb.build_load(self.i64(), p, "")?;
            set_align(l, 8);
            set_invariant(self.cx(), l);
            *o = as_int(l)?;
        }
        Ok(out)
    }

    /// The three components (or the scalar in [0]) of a work-item query, in the prologue.
    fn work_item_raw(&mut self, q: WorkItemQuery) -> R<[IntValue<'ctx>; 3]> {
        if let Some(v) = self.wi_cache.get(&q) {
            return Ok(*v);
        }
        use WorkItemQuery as Q;
        let pb = &self.pb;
        let zero = self.i64().const_zero();
        let v = match q {
            Q::LocalId => self.env.lid,
            Q::GroupId => self.ctx_u64x3(ctx_offsets::GROUP_ID)?,
            Q::LocalSize => self.ctx_u64x3(ctx_offsets::LOCAL_SIZE)?,
            Q::EnqueuedLocalSize => self.ctx_u64x3(ctx_offsets::ENQUEUED_LOCAL_SIZE)?,
            Q::GlobalSize => self.ctx_u64x3(ctx_offsets::GLOBAL_SIZE)?,
            Q::GlobalOffset => self.ctx_u64x3(ctx_offsets::GLOBAL_OFFSET)?,
            Q::NumGroups => self.ctx_u64x3(ctx_offsets::NUM_GROUPS)?,
            Q::GlobalId => {
                let g = self.work_item_raw(Q::GroupId)?;
                let e = self.work_item_raw(Q::EnqueuedLocalSize)?;
                let o = self.work_item_raw(Q::GlobalOffset)?;
                let l = self.env.lid;
                let pb = &self.pb;
                let mut out = [zero; 3];
                for d in 0..3 {
                    let m = pb.build_int_mul(g[d], e[d], "")?;
                    let a = pb.build_int_add(m, l[d], "")?;
                    out[d] = pb.build_int_add(a, o[d], "")?;
                }
                out
            }
            Q::WorkDim => {
                let p = self.ctx_field_ptr(ctx_offsets::WORK_DIM)?;
                let l = as_int(pb.build_load(self.i32(), p, "")?)?;
                [l, zero, zero]
            }
            Q::GlobalLinearId => {
                let g = self.work_item_raw(Q::GlobalId)?;
                let o = self.work_item_raw(Q::GlobalOffset)?;
                let s = self.work_item_raw(Q::GlobalSize)?;
                let pb = &self.pb;
                let x = pb.build_int_sub(g[0], o[0], "")?;
                let y = pb.build_int_sub(g[1], o[1], "")?;
                let z = pb.build_int_sub(g[2], o[2], "")?;
                let zy = pb.build_int_add(pb.build_int_mul(z, s[1], "")?, y, "")?;
                let r = pb.build_int_add(pb.build_int_mul(zy, s[0], "")?, x, "")?;
                [r, zero, zero]
            }
            Q::LocalLinearId | Q::SubgroupId => {
                let s = self.work_item_raw(Q::LocalSize)?;
                let l = self.env.lid;
                let pb = &self.pb;
                let zy = pb.build_int_add(pb.build_int_mul(l[2], s[1], "")?, l[1], "")?;
                let r = pb.build_int_add(pb.build_int_mul(zy, s[0], "")?, l[0], "")?;
                [r, zero, zero]
            }
            // Sub-groups of one work-item each.
            Q::SubgroupSize | Q::SubgroupMaxSize => [self.i64().const_int(1, false), zero, zero],
            Q::SubgroupLocalId => [zero, zero, zero],
            Q::NumSubgroups => {
                let s = self.work_item_raw(Q::LocalSize)?;
                let pb = &self.pb;
                let r = pb.build_int_mul(pb.build_int_mul(s[0], s[1], "")?, s[2], "")?;
                [r, zero, zero]
            }
        };
        self.wi_cache.insert(q, v);
        Ok(v)
    }

    /// A work-item query as a value of `ty` (a vector takes the dimensions, a scalar the
    /// first component), computed in the prologue.
    pub(crate) fn work_item_value(&mut self, q: WorkItemQuery, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        let raw = self.work_item_raw(q)?;
        let BasicTypeEnum::IntType(et) = elem_type(ty) else { bail!("work-item query of a non-integer type {ty}") };
        let pb = &self.pb;
        let conv = |v: IntValue<'ctx>| -> R<IntValue<'ctx>> { Ok(pb.build_int_cast_sign_flag(v, et, false, "")?) };
        match ty {
            BasicTypeEnum::VectorType(vt) => {
                let mut acc = vt.get_undef();
                for lane in 0..vt.get_size() {
                    let c = if lane < 3 { conv(raw[lane as usize])? } else { et.const_zero() };
                    acc = pb.build_insert_element(acc, c, self.i32().const_int(lane as u64, false), "")?;
                }
                Ok(acc.into())
            }
            _ => Ok(conv(raw[0])?.into()),
        }
    }

    // ---------------------------------------------------------------- generic helpers

    pub fn binop(&self, op: InstructionOpcode, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        if a.get_type() != b.get_type() {
            bail!("operands of different types {} and {}", a.get_type(), b.get_type());
        }
        Ok(self.b.build_binop(op, a, b, "")?)
    }

    pub fn icmp(&self, p: IntPredicate, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        Ok(match (a, b) {
            (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) if x.get_type() == y.get_type() => {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y))
                if x.get_type() == y.get_type() && is_int_like(x.get_type().into()) =>
            {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::PointerValue(x), BasicValueEnum::PointerValue(y)) => {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            _ => bail!("integer comparison of {} and {}", a.get_type(), b.get_type()),
        })
    }

    pub fn fcmp(&self, p: FloatPredicate, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        Ok(match (a, b) {
            (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y)) if x.get_type() == y.get_type() => {
                self.b.build_float_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y))
                if x.get_type() == y.get_type() && is_float_like(x.get_type().into()) =>
            {
                self.b.build_float_compare(p, x, y, "")?.into()
            }
            _ => bail!("float comparison of {} and {}", a.get_type(), b.get_type()),
        })
    }

    pub fn select(&self, c: Val<'ctx>, t: Val<'ctx>, f: Val<'ctx>) -> R<Val<'ctx>> {
        if t.get_type() != f.get_type() {
            bail!("select between {} and {}", t.get_type(), f.get_type());
        }
        Ok(match c {
            BasicValueEnum::IntValue(x) if x.get_type().get_bit_width() == 1 => self.b.build_select(x, t, f, "")?,
            BasicValueEnum::VectorValue(x)
                if lanes(x.get_type().into()) == lanes(t.get_type()) && t.is_vector_value() =>
            {
                self.b.build_select(x, t, f, "")?
            }
            _ => bail!("select condition of type {}", c.get_type()),
        })
    }

    pub fn cast(&self, op: InstructionOpcode, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        if lanes(v.get_type()) != lanes(ty) || v.get_type().is_vector_type() != ty.is_vector_type() {
            bail!("conversion from {} to {} changes the number of components", v.get_type(), ty);
        }
        Ok(self.b.build_cast(op, v, ty, "")?)
    }

    /// Integer width change (zero- or sign-extending), or nothing.
    pub fn int_resize(&self, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>, signed: bool) -> R<Val<'ctx>> {
        let (from, to) = (int_width(v.get_type()), int_width(ty));
        if !is_int_like(v.get_type()) || !is_int_like(ty) {
            bail!("integer conversion from {} to {}", v.get_type(), ty);
        }
        if from == to {
            return Ok(v);
        }
        let op = if from > to {
            InstructionOpcode::Trunc
        } else if signed {
            InstructionOpcode::SExt
        } else {
            InstructionOpcode::ZExt
        };
        self.cast(op, v, ty)
    }

    /// A constant of the same type as `like` with every lane `bits`.
    pub fn cint(&self, like: BasicTypeEnum<'ctx>, bits: u64) -> R<Val<'ctx>> {
        const_int_like(like, bits)
    }
    pub fn cfloat(&self, like: BasicTypeEnum<'ctx>, v: f64) -> R<Val<'ctx>> {
        const_float_like(like, v)
    }

    /// Calls an LLVM intrinsic, overloaded on `tys`.
    pub fn intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>], args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        call_intrinsic(&self.b, &self.e.m, name, tys, args)
    }

    /// Calls an intrinsic returning nothing.
    pub fn intrinsic_void(&self, name: &str, tys: &[BasicTypeEnum<'ctx>], args: &[Val<'ctx>]) -> R<()> {
        let Some(i) = Intrinsic::find(name) else { bail!("LLVM has no intrinsic {name}") };
        let Some(decl) = i.get_declaration(&self.e.m, tys) else { bail!("cannot declare {name}") };
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        self.b.build_call(decl, &args, "")?;
        Ok(())
    }

    /// Calls a unary/binary intrinsic overloaded on its first argument's type.
    pub fn intr(&self, name: &str, args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        let t = args.first().ok_or("intrinsic without arguments")?.get_type();
        self.intrinsic(name, &[t], args)
    }

    pub fn extract(&self, v: Val<'ctx>, lane: u32) -> R<Val<'ctx>> {
        match v {
            BasicValueEnum::VectorValue(vv) => {
                Ok(self.b.build_extract_element(vv, self.i32().const_int(lane as u64, false), "")?)
            }
            _ if lane == 0 => Ok(v),
            _ => bail!("lane {lane} of a scalar"),
        }
    }

    /// A vector of `ty` from its lanes (or the scalar itself).
    pub fn gather(&self, ty: BasicTypeEnum<'ctx>, parts: &[Val<'ctx>]) -> R<Val<'ctx>> {
        match ty {
            BasicTypeEnum::VectorType(vt) => {
                if parts.len() != vt.get_size() as usize {
                    bail!("{} components for {}", parts.len(), ty);
                }
                let mut acc = vt.get_undef();
                for (i, p) in parts.iter().enumerate() {
                    if p.get_type() != vt.get_element_type() {
                        bail!("component of type {} for {}", p.get_type(), ty);
                    }
                    acc = self.b.build_insert_element(acc, *p, self.i32().const_int(i as u64, false), "")?;
                }
                Ok(acc.into())
            }
            _ => parts.first().copied().ok_or_else(|| Error("no components".into())),
        }
    }

    /// `v` (a scalar) broadcast to `ty` if `ty` is a vector; vectors pass through.
    pub fn splat_to(&self, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        match ty {
            BasicTypeEnum::VectorType(vt) if !v.is_vector_value() => {
                let n = vt.get_size() as usize;
                self.gather(ty, &vec![v; n])
            }
            _ => Ok(v),
        }
    }

    /// Applies `f` to each lane (scalars: once) and gathers a result of `ret_ty`.
    pub fn per_lane(
        &self,
        ret_ty: BasicTypeEnum<'ctx>,
        args: &[Val<'ctx>],
        mut f: impl FnMut(&Self, &[Val<'ctx>]) -> R<Val<'ctx>>,
    ) -> R<Val<'ctx>> {
        let n = lanes(ret_ty);
        if !ret_ty.is_vector_type() {
            return f(self, args);
        }
        let mut out = Vec::with_capacity(n as usize);
        for lane in 0..n {
            let la: Vec<Val<'ctx>> = args
                .iter()
                .map(|a| if a.is_vector_value() { self.extract(*a, lane) } else { Ok(*a) })
                .collect::<R<_>>()?;
            out.push(f(self, &la)?);
        }
        self.gather(ret_ty, &out)
    }

    /// Calls a C function per lane: `name32` for f32 lanes, `name64` for f64 lanes (f16
    /// lanes go through f32).
    pub fn libm(&self, name32: &str, name64: &str, ret_ty: BasicTypeEnum<'ctx>, args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        self.per_lane(ret_ty, args, |s, la| {
            let BasicTypeEnum::FloatType(ft) = elem_type(ret_ty) else { bail!("{name32} of a non-float type") };
            let wide = ft.get_bit_width() == 64;
            let ct: FloatType<'ctx> = if wide { s.cx().f64_type() } else { s.cx().f32_type() };
            let mut cargs = Vec::new();
            let mut ptys = Vec::new();
            for a in la {
                let a = match a {
                    BasicValueEnum::FloatValue(fv) if fv.get_type() != ct => s.b.build_float_cast(*fv, ct, "")?.into(),
                    other => *other,
                };
                ptys.push(a.get_type());
                cargs.push(a.into());
            }
            let f = s.e.extern_fn(if wide { name64 } else { name32 }, ct.into(), &ptys, true);
            let r = s.b.build_call(f, &cargs, "")?.try_as_basic_value().basic().ok_or("libm call without result")?;
            let r = r.into_float_value();
            Ok(if ct != ft { s.b.build_float_cast(r, ft, "")?.into() } else { r.into() })
        })
    }

    /// An alloca in the prologue (scratch for out-parameters).
    pub fn scratch(&self, ty: BasicTypeEnum<'ctx>) -> R<PointerValue<'ctx>> {
        Ok(self.pb.build_alloca(ty, "")?)
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
        if self.gen.is_some() && self.f.insts[i].is_terminator() {
            self.gen_flush()?;
        }
        if let InstData::BarrierResume { id, dest } = &self.f.insts[i] {
            return self.lower_resume(*id, dest.block);
        }
        if self.lin.is_some() && self.f.insts[i].is_terminator() {
            return self.lin_terminator(&self.f.insts[i]);
        }
        if self.gen.is_some() {
            self.gen_access(i)?;
        }
        if self.vec.is_some() && self.lower_vector_inst(i)? {
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
            I::Convert { op, arg, saturate, rounding } => {
                let a = self.get(*arg)?;
                let (_, rt) = self.need_result(i)?;
                Some(self.lower_convert(*op, a, rt, *saturate, *rounding)?)
            }
            I::Variable { ty, init } => {
                if let Some(init) = init {
                    let (r, _) = self.need_result(i)?;
                    let p = as_ptr(self.vals[r].ok_or("variable without storage")?)?;
                    let v = self.get(*init)?;
                    let st = self.b.build_store(p, v)?;
                    let _ = st.set_alignment(align::variable_align(&self.e.ir.types, *ty) as u32);
                }
                None // the pointer was set up in the prologue
            }
            I::Load { ptr, align, volatile } => {
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
            I::Store { ptr, value, align, volatile } => {
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
            I::Fence { scope, .. } => {
                if !matches!(scope, ir::Scope::WorkItem) {
                    self.b.build_fence(AtomicOrdering::SequentiallyConsistent, false, "")?;
                }
                None
            }
            I::Atomic { op, ptr, value, comparator, .. } => {
                let rt = self.result_ty(i)?;
                self.lower_atomic(*op, *ptr, *value, *comparator, rt)?
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
        if self.lin.is_none() {
            let target = self.blocks[dest].ok_or("resume point without a block")?;
            self.resume.points.push((id, target));
            return Ok(());
        }
        let resume = self.cx().append_basic_block(self.llf, &format!("resume{id}"));
        self.resume.points.push((id, resume));
        self.b.position_at_end(resume);
        self.lin_resume()?;
        self.lin_terminator(&InstData::Jump { dest: ir::BlockCall { block: dest, args: Vec::new() } })
    }

    pub(crate) fn lower_binary(&self, op: ir::BinaryOp, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        use ir::BinaryOp as B;
        use InstructionOpcode as O;
        let ty = a.get_type();
        let is_int = is_int_like(ty);
        let is_float = is_float_like(ty);
        let need_int = || -> R<()> {
            if is_int {
                Ok(())
            } else {
                bail!("integer operation on {ty}")
            }
        };
        let need_float = || -> R<()> {
            if is_float {
                Ok(())
            } else {
                bail!("float operation on {ty}")
            }
        };
        Ok(match op {
            B::IAdd => {
                need_int()?;
                self.binop(O::Add, a, b)?
            }
            B::ISub => {
                need_int()?;
                self.binop(O::Sub, a, b)?
            }
            B::IMul => {
                need_int()?;
                self.binop(O::Mul, a, b)?
            }
            B::UDiv | B::URem => {
                need_int()?;
                // Division by zero is undefined in OpenCL; it must not trap the host.
                let zero = self.cint(ty, 0)?;
                let one = self.cint(ty, 1)?;
                let is0 = self.icmp(IntPredicate::EQ, b, zero)?;
                let d = self.select(is0, one, b)?;
                self.binop(if op == B::UDiv { O::UDiv } else { O::URem }, a, d)?
            }
            B::SDiv | B::SRem | B::SMod => {
                need_int()?;
                let zero = self.cint(ty, 0)?;
                let one = self.cint(ty, 1)?;
                let minus1 = self.cint(ty, u64::MAX)?;
                let is0 = self.icmp(IntPredicate::EQ, b, zero)?;
                let ism1 = self.icmp(IntPredicate::EQ, b, minus1)?;
                let bad = self.binop(O::Or, is0, ism1)?;
                let d = self.select(bad, one, b)?;
                match op {
                    B::SDiv => {
                        // x / -1 = -x (wrapping, so INT_MIN / -1 does not trap).
                        let q = self.binop(O::SDiv, a, d)?;
                        let neg = self.binop(O::Sub, zero, a)?;
                        self.select(ism1, neg, q)?
                    }
                    B::SRem => {
                        let r = self.binop(O::SRem, a, d)?;
                        self.select(ism1, zero, r)?
                    }
                    _ => {
                        let r = self.binop(O::SRem, a, d)?;
                        let r = self.select(ism1, zero, r)?;
                        // Sign of the divisor: add the divisor when signs differ.
                        let nz = self.icmp(IntPredicate::NE, r, zero)?;
                        let x = self.binop(O::Xor, r, b)?;
                        let diff = self.icmp(IntPredicate::SLT, x, zero)?;
                        let fix = self.binop(O::And, nz, diff)?;
                        let adj = self.binop(O::Add, r, b)?;
                        self.select(fix, adj, r)?
                    }
                }
            }
            B::FAdd => {
                need_float()?;
                self.binop(O::FAdd, a, b)?
            }
            B::FSub => {
                need_float()?;
                self.binop(O::FSub, a, b)?
            }
            B::FMul => {
                need_float()?;
                self.binop(O::FMul, a, b)?
            }
            B::FDiv => {
                need_float()?;
                self.binop(O::FDiv, a, b)?
            }
            B::FRem => {
                need_float()?;
                self.binop(O::FRem, a, b)?
            }
            B::FMod => {
                need_float()?;
                let r = self.binop(O::FRem, a, b)?;
                let zero = self.cfloat(ty, 0.0)?;
                let nz = self.fcmp(FloatPredicate::ONE, r, zero)?;
                let rneg = self.fcmp(FloatPredicate::OLT, r, zero)?;
                let bneg = self.fcmp(FloatPredicate::OLT, b, zero)?;
                let diff = self.binop(O::Xor, rneg, bneg)?;
                let fix = self.binop(O::And, nz, diff)?;
                let adj = self.binop(O::FAdd, r, b)?;
                self.select(fix, adj, r)?
            }
            B::Shl | B::LShr | B::AShr => {
                need_int()?;
                // Shift counts are taken modulo the bit width (OpenCL C), never poison.
                let b = if b.get_type() != ty { self.int_resize(b, ty, false)? } else { b };
                let w = int_width(ty) as u64;
                let mask = self.cint(ty, w - 1)?;
                let n = self.binop(O::And, b, mask)?;
                let opc = match op {
                    B::Shl => O::Shl,
                    B::LShr => O::LShr,
                    _ => O::AShr,
                };
                self.binop(opc, a, n)?
            }
            B::And | B::LogicalAnd => {
                need_int()?;
                self.binop(O::And, a, b)?
            }
            B::Or | B::LogicalOr => {
                need_int()?;
                self.binop(O::Or, a, b)?
            }
            B::Xor | B::LogicalNe => {
                need_int()?;
                self.binop(O::Xor, a, b)?
            }
            B::LogicalEq => self.icmp(IntPredicate::EQ, a, b)?,
        })
    }

    pub(crate) fn lower_unary(&self, op: UnaryOp, a: Val<'ctx>, rt: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let ty = a.get_type();
        Ok(match op {
            UnaryOp::INeg => {
                let zero = self.cint(ty, 0)?;
                self.binop(O::Sub, zero, a)?
            }
            UnaryOp::FNeg => {
                if !is_float_like(ty) {
                    bail!("fneg of {ty}");
                }
                match a {
                    BasicValueEnum::FloatValue(f) => self.b.build_float_neg(f, "")?.into(),
                    BasicValueEnum::VectorValue(v) => self.b.build_float_neg(v, "")?.into(),
                    _ => bail!("fneg of {ty}"),
                }
            }
            UnaryOp::Not | UnaryOp::LogicalNot => {
                let ones = self.cint(ty, u64::MAX)?;
                self.binop(O::Xor, a, ones)?
            }
            UnaryOp::BitCount => {
                let c = self.intr("llvm.ctpop", &[a])?;
                if c.get_type() != rt {
                    self.int_resize(c, rt, false)?
                } else {
                    c
                }
            }
            UnaryOp::BitReverse => self.intr("llvm.bitreverse", &[a])?,
            UnaryOp::IsNan => self.fcmp(FloatPredicate::UNO, a, a)?,
            UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::IsNormal => {
                let abs = self.intr("llvm.fabs", &[a])?;
                let inf = self.cfloat(ty, f64::INFINITY)?;
                match op {
                    UnaryOp::IsInf => self.fcmp(FloatPredicate::OEQ, abs, inf)?,
                    UnaryOp::IsFinite => self.fcmp(FloatPredicate::ONE, abs, inf)?,
                    _ => {
                        let min_normal = match int_width(ty) {
                            16 => 6.103515625e-05,
                            32 => f32::MIN_POSITIVE as f64,
                            _ => f64::MIN_POSITIVE,
                        };
                        let m = self.cfloat(ty, min_normal)?;
                        let ge = self.fcmp(FloatPredicate::OGE, abs, m)?;
                        let lt = self.fcmp(FloatPredicate::OLT, abs, inf)?;
                        self.binop(O::And, ge, lt)?
                    }
                }
            }
            UnaryOp::SignBitSet => {
                let w = int_width(ty);
                let it = with_elem(ty, int_type(self.cx(), w)?.into())?;
                let bits = self.cast(O::BitCast, a, it)?;
                let zero = self.cint(it, 0)?;
                self.icmp(IntPredicate::SLT, bits, zero)?
            }
            UnaryOp::Any | UnaryOp::All => {
                if !ty.is_vector_type() {
                    a
                } else {
                    let name = if op == UnaryOp::Any { "llvm.vector.reduce.or" } else { "llvm.vector.reduce.and" };
                    self.intr(name, &[a])?
                }
            }
        })
    }

    pub(crate) fn lower_compare(&self, op: CmpOp, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        use CmpOp as C;
        let ip = |p| self.icmp(p, a, b);
        let fp = |p| self.fcmp(p, a, b);
        match op {
            C::IEq => ip(IntPredicate::EQ),
            C::INe => ip(IntPredicate::NE),
            C::ULt => ip(IntPredicate::ULT),
            C::ULe => ip(IntPredicate::ULE),
            C::UGt => ip(IntPredicate::UGT),
            C::UGe => ip(IntPredicate::UGE),
            C::SLt => ip(IntPredicate::SLT),
            C::SLe => ip(IntPredicate::SLE),
            C::SGt => ip(IntPredicate::SGT),
            C::SGe => ip(IntPredicate::SGE),
            C::FOrdEq => fp(FloatPredicate::OEQ),
            C::FOrdNe => fp(FloatPredicate::ONE),
            C::FOrdLt => fp(FloatPredicate::OLT),
            C::FOrdLe => fp(FloatPredicate::OLE),
            C::FOrdGt => fp(FloatPredicate::OGT),
            C::FOrdGe => fp(FloatPredicate::OGE),
            C::FUnordEq => fp(FloatPredicate::UEQ),
            C::FUnordNe => fp(FloatPredicate::UNE),
            C::FUnordLt => fp(FloatPredicate::ULT),
            C::FUnordLe => fp(FloatPredicate::ULE),
            C::FUnordGt => fp(FloatPredicate::UGT),
            C::FUnordGe => fp(FloatPredicate::UGE),
            C::FOrdered => fp(FloatPredicate::ORD),
            C::FUnordered => fp(FloatPredicate::UNO),
        }
    }

    pub fn lower_convert(
        &self,
        op: ConvertOp,
        a: Val<'ctx>,
        rt: BasicTypeEnum<'ctx>,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> R<Val<'ctx>> {
        use ConvertOp as C;
        use InstructionOpcode as O;
        let at = a.get_type();
        Ok(match op {
            C::UConvert | C::SConvert | C::SatSToU | C::SatUToS => {
                if !is_int_like(at) || !is_int_like(rt) {
                    bail!("integer conversion from {at} to {rt}");
                }
                let (from, to) = (int_width(at), int_width(rt));
                let signed_src = matches!(op, C::SConvert | C::SatSToU);
                let sat = saturate || matches!(op, C::SatSToU | C::SatUToS);
                if !sat {
                    return self.int_resize(a, rt, signed_src);
                }
                let max_u = |w: u32| if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                let max_s = |w: u32| max_u(w) >> 1;
                match op {
                    C::UConvert => {
                        let x = if to < from { self.intr("llvm.umin", &[a, self.cint(at, max_u(to))?])? } else { a };
                        self.int_resize(x, rt, false)?
                    }
                    C::SConvert => {
                        let x = if to < from {
                            let hi = self.intr("llvm.smin", &[a, self.cint(at, max_s(to))?])?;
                            self.intr("llvm.smax", &[hi, self.cint(at, !max_s(to))?])?
                        } else {
                            a
                        };
                        self.int_resize(x, rt, true)?
                    }
                    C::SatSToU => {
                        let x = self.intr("llvm.smax", &[a, self.cint(at, 0)?])?;
                        let x = if to < from { self.intr("llvm.umin", &[x, self.cint(at, max_u(to))?])? } else { x };
                        self.int_resize(x, rt, false)?
                    }
                    _ => {
                        let x = if to <= from { self.intr("llvm.umin", &[a, self.cint(at, max_s(to))?])? } else { a };
                        self.int_resize(x, rt, false)?
                    }
                }
            }
            C::FConvert => {
                if !is_float_like(at) || !is_float_like(rt) {
                    bail!("float conversion from {at} to {rt}");
                }
                let (from, to) = (int_width(at), int_width(rt));
                if from == to {
                    a
                } else if from < to {
                    self.cast(O::FPExt, a, rt)?
                } else {
                    let f = self.cast(O::FPTrunc, a, rt)?;
                    match rounding {
                        None | Some(Rounding::NearestEven) => f,
                        Some(mode) => {
                            let back = self.cast(O::FPExt, f, at)?;
                            let gt = self.fcmp(FloatPredicate::OGT, back, a)?;
                            let lt = self.fcmp(FloatPredicate::OLT, back, a)?;
                            self.round_adjust(f, gt, lt, mode)?
                        }
                    }
                }
            }
            C::FToU | C::FToS => {
                if !is_float_like(at) || !is_int_like(rt) {
                    bail!("float to integer conversion from {at} to {rt}");
                }
                let x = match rounding {
                    None | Some(Rounding::TowardZero) => a,
                    Some(Rounding::NearestEven) => self.intr("llvm.roundeven", &[a])?,
                    Some(Rounding::TowardPositive) => self.intr("llvm.ceil", &[a])?,
                    Some(Rounding::TowardNegative) => self.intr("llvm.floor", &[a])?,
                };
                // Always saturating: out-of-range conversions are undefined in OpenCL C
                // without _sat, and LLVM's fptosi would turn them into poison.
                let _ = saturate;
                self.fp_to_int_sat(x, rt, op == C::FToS)?
            }
            C::UToF | C::SToF => {
                if !is_int_like(at) || !is_float_like(rt) {
                    bail!("integer to float conversion from {at} to {rt}");
                }
                let signed = op == C::SToF;
                let f = self.cast(if signed { O::SIToFP } else { O::UIToFP }, a, rt)?;
                let from = int_width(at);
                let mant = match int_width(rt) {
                    16 => 11,
                    32 => 24,
                    _ => 53,
                };
                let exact = if signed { from - 1 <= mant } else { from <= mant };
                match rounding {
                    None | Some(Rounding::NearestEven) => f,
                    Some(_) if exact => f,
                    Some(mode) => {
                        // Compare the rounded value with the integer exactly.
                        let limit = if signed { 2f64.powi(from as i32 - 1) } else { 2f64.powi(from as i32) };
                        let big = self.fcmp(FloatPredicate::OGE, f, self.cfloat(rt, limit)?)?;
                        // Below the limit the rounded value is an integer of the source type
                        // (rounding to nearest never passes its minimum), so converting it
                        // back is exact; the lanes at or above it convert 0 instead of poison.
                        let in_range = self.select(big, self.cfloat(rt, 0.0)?, f)?;
                        let back = self.cast(if signed { O::FPToSI } else { O::FPToUI }, in_range, at)?;
                        let (pgt, plt) = if signed {
                            (IntPredicate::SGT, IntPredicate::SLT)
                        } else {
                            (IntPredicate::UGT, IntPredicate::ULT)
                        };
                        let gt0 = self.icmp(pgt, back, a)?;
                        let gt = self.binop(O::Or, big, gt0)?;
                        let lt0 = self.icmp(plt, back, a)?;
                        let nbig = self.binop(O::Xor, big, self.cint(big.get_type(), 1)?)?;
                        let lt = self.binop(O::And, nbig, lt0)?;
                        self.round_adjust(f, gt, lt, mode)?
                    }
                }
            }
            C::Bitcast => {
                let agg = |t: BasicTypeEnum<'_>| t.is_struct_type() || t.is_array_type();
                if at == rt || (at.is_pointer_type() && rt.is_pointer_type()) {
                    a
                } else if at.is_pointer_type() && rt.is_int_type() {
                    self.cast(O::PtrToInt, a, rt)?
                } else if at.is_int_type() && rt.is_pointer_type() {
                    self.cast(O::IntToPtr, a, rt)?
                } else if agg(at) || agg(rt) {
                    bail!("bitcast from {at} to {rt}");
                } else if self.e.td.get_bit_size(&at) == self.e.td.get_bit_size(&rt) {
                    self.b.build_bit_cast(a, rt, "")?
                } else if self.e.alloc_size(at) == self.e.alloc_size(rt) {
                    // A 3-component vector and a 4-component one of the same size (as_type):
                    // through memory; the extra component is undefined.
                    let tmp =
                        self.scratch(if self.e.td.get_bit_size(&at) > self.e.td.get_bit_size(&rt) { at } else { rt })?;
                    self.b.build_store(tmp, a)?;
                    self.b.build_load(rt, tmp, "")?
                } else {
                    bail!("bitcast from {at} to {rt}");
                }
            }
            C::PtrToInt => {
                if !at.is_pointer_type() || !rt.is_int_type() {
                    bail!("ptrtoint from {at} to {rt}");
                }
                self.cast(O::PtrToInt, a, rt)?
            }
            C::IntToPtr => {
                if !at.is_int_type() || !rt.is_pointer_type() {
                    bail!("inttoptr from {at} to {rt}");
                }
                self.cast(O::IntToPtr, a, rt)?
            }
            C::PtrCast => {
                if at != rt {
                    bail!("address-space cast from {at} to {rt}");
                }
                a
            }
        })
    }

    /// `x` (already rounded to an integral value, or truncated by the conversion) converted to
    /// the integer type `rt`, saturating: NaN gives 0, values beyond the range its minimum or
    /// maximum. Not LLVM's `fptosi.sat` / `fptoui.sat`: the x86 back end converts those lane by
    /// lane with a compare and branch each (a float16 conversion at SIMD32 was 512 branches
    /// and two seconds of instruction selection). Lanes in range convert with a plain
    /// `fptosi` / `fptoui` (one vector instruction on AVX-512), the others are given their
    /// bound by a select.
    pub fn fp_to_int_sat(&self, x: Val<'ctx>, rt: BasicTypeEnum<'ctx>, signed: bool) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let at = x.get_type();
        let n = int_width(rt);
        let float_bits = int_width(at);
        let (lo, hi): (i128, i128) =
            if signed { (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1) } else { (0, (1i128 << n) - 1) };
        let lo_f = -float_at_most(-lo, float_bits);
        let hi_f = float_at_most(hi, float_bits);
        let (lo_c, hi_c) = (self.cfloat(at, lo_f)?, self.cfloat(at, hi_f)?);
        let below = self.fcmp(FloatPredicate::OLT, x, lo_c)?;
        let above = self.fcmp(FloatPredicate::OGT, x, hi_c)?;
        let ge_lo = self.fcmp(FloatPredicate::OGE, x, lo_c)?;
        let le_hi = self.fcmp(FloatPredicate::OLE, x, hi_c)?;
        // NaN is in neither bound's range: it converts 0.
        let in_range = self.binop(O::And, ge_lo, le_hi)?;
        let safe = self.select(in_range, x, self.cfloat(at, 0.0)?)?;
        let r = self.cast(if signed { O::FPToSI } else { O::FPToUI }, safe, rt)?;
        let r = self.select(above, self.cint(rt, hi as u64)?, r)?;
        self.select(below, self.cint(rt, lo as u64)?, r)
    }

    /// Moves `f` (rounded to nearest) one step toward the rounding direction `mode` where it
    /// overshot: `gt` = f is above the exact value, `lt` = below.
    pub fn round_adjust(&self, f: Val<'ctx>, gt: Val<'ctx>, lt: Val<'ctx>, mode: Rounding) -> R<Val<'ctx>> {
        use InstructionOpcode as O;
        let ty = f.get_type();
        let w = int_width(ty);
        let it = with_elem(ty, int_type(self.cx(), w)?.into())?;
        let bits = self.cast(O::BitCast, f, it)?;
        let zero = self.cint(it, 0)?;
        let one = self.cint(it, 1)?;
        let sign = self.cint(it, 1u64 << (w - 1))?;
        let neg = self.icmp(IntPredicate::SLT, bits, zero)?;
        let mag = self.binop(O::And, bits, self.cint(it, (1u64 << (w - 1)) - 1)?)?;
        let is_zero = self.icmp(IntPredicate::EQ, mag, zero)?;
        let plus1 = self.binop(O::Add, bits, one)?;
        let minus1 = self.binop(O::Sub, bits, one)?;
        // One step toward +inf and toward -inf.
        let up_nonzero = self.select(neg, minus1, plus1)?;
        let up = self.select(is_zero, one, up_nonzero)?;
        let down_nonzero = self.select(neg, plus1, minus1)?;
        let neg_tiny = self.binop(O::Or, sign, one)?;
        let down = self.select(is_zero, neg_tiny, down_nonzero)?;
        let r = match mode {
            Rounding::NearestEven => bits,
            Rounding::TowardPositive => self.select(lt, up, bits)?,
            Rounding::TowardNegative => self.select(gt, down, bits)?,
            Rounding::TowardZero => {
                let pos = self.binop(O::Xor, neg, self.cint(neg.get_type(), 1)?)?;
                let dn = self.binop(O::And, gt, pos)?;
                let upc = self.binop(O::And, lt, neg)?;
                let r1 = self.select(dn, down, bits)?;
                self.select(upc, up, r1)?
            }
        };
        self.cast(O::BitCast, r, ty)
    }

    fn lower_access_chain(
        &mut self,
        base: Value,
        element: Option<Value>,
        indices: &[Value],
        in_bounds: bool,
    ) -> R<PointerValue<'ctx>> {
        let types = &self.e.ir.types;
        let base_ty = self.f.value_type(base);
        let TypeData::Pointer { pointee, .. } = types.get(base_ty) else { bail!("access chain on a non-pointer") };
        let mut cur = *pointee;
        let p = as_ptr(self.get(base)?)?;
        let src_ty: BasicTypeEnum<'ctx> = match types.get(cur) {
            TypeData::Void | TypeData::Function { .. } | TypeData::Opaque { .. } => self.cx().i8_type().into(),
            _ => self.ty(cur)?,
        };
        let mut idx: Vec<IntValue<'ctx>> = Vec::with_capacity(indices.len() + 1);
        match element {
            Some(e) => idx.push(as_int(self.get(e)?)?),
            None => idx.push(self.i32().const_zero()),
        }
        for &ix in indices {
            match types.get(cur).clone() {
                TypeData::Struct { fields, .. } => {
                    let Some(n) = self.const_index(ix) else { bail!("struct member index is not a constant") };
                    if n >= fields.len() as u64 {
                        bail!("struct member index {n} out of range");
                    }
                    idx.push(self.i32().const_int(n, false));
                    cur = fields[n as usize];
                }
                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                    idx.push(as_int(self.get(ix)?)?);
                    cur = elem;
                }
                other => bail!("access chain index into {other:?}"),
            }
        }
        if idx.len() == 1 && element.is_none() {
            return Ok(p);
        }
        gep(&self.b, src_ty, p, &idx, in_bounds)
    }

    pub(crate) fn const_index(&self, v: Value) -> Option<u64> {
        match self.f.values.get(v)?.def {
            ValueDef::Const(c) => match self.e.ir.constants.get(c)? {
                ConstData::Int { bits, .. } => Some(*bits),
                ConstData::Null { .. } => Some(0),
                _ => None,
            },
            _ => None,
        }
    }

    fn lower_shuffle(&self, a: VectorValue<'ctx>, b: VectorValue<'ctx>, mask: &[Option<u32>]) -> R<Val<'ctx>> {
        let (na, nb) = (a.get_type().get_size(), b.get_type().get_size());
        if a.get_type().get_element_type() != b.get_type().get_element_type() {
            bail!("shuffle of vectors with different element types");
        }
        let n = na.max(nb);
        // Both operands must have the same length for LLVM: widen the shorter one.
        let widen = |v: VectorValue<'ctx>, len: u32| -> R<VectorValue<'ctx>> {
            if len == n {
                return Ok(v);
            }
            let m: Vec<IntValue<'ctx>> = (0..n)
                .map(|i| if i < len { self.i32().const_int(i as u64, false) } else { self.i32().get_undef() })
                .collect();
            let mv = inkwell::types::VectorType::const_vector(&m);
            Ok(self.b.build_shuffle_vector(v, v.get_type().get_undef(), mv, "")?)
        };
        let wa = widen(a, na)?;
        let wb = widen(b, nb)?;
        let mut m = Vec::with_capacity(mask.len());
        for c in mask {
            m.push(match c {
                Some(i) if *i < na => self.i32().const_int(*i as u64, false),
                Some(i) if *i < na + nb => self.i32().const_int((*i - na + n) as u64, false),
                Some(i) => bail!("shuffle component {i} out of range"),
                None => self.i32().get_undef(),
            });
        }
        if m.is_empty() {
            bail!("empty shuffle");
        }
        let mv = inkwell::types::VectorType::const_vector(&m);
        Ok(self.b.build_shuffle_vector(wa, wb, mv, "")?.into())
    }

    fn extract_path(&self, agg: Val<'ctx>, ty: ir::Type, indices: &[u32]) -> R<Val<'ctx>> {
        let mut cur = agg;
        let mut t = ty;
        for &ix in indices {
            let (next_t, v) = match self.e.ir.types.get(t).clone() {
                TypeData::Vector { elem, len } => {
                    if ix >= len {
                        bail!("component {ix} of a {len}-vector");
                    }
                    (elem, self.extract(cur, ix)?)
                }
                TypeData::Struct { fields, .. } => {
                    let Some(ft) = fields.get(ix as usize) else { bail!("member {ix} out of range") };
                    let BasicValueEnum::StructValue(sv) = cur else { bail!("extract from a non-struct") };
                    (*ft, self.b.build_extract_value(sv, ix, "")?)
                }
                TypeData::Array { elem, len } => {
                    if ix as u64 >= len {
                        bail!("element {ix} out of range");
                    }
                    let BasicValueEnum::ArrayValue(av) = cur else { bail!("extract from a non-array") };
                    (elem, self.b.build_extract_value(av, ix, "")?)
                }
                other => bail!("extract from {other:?}"),
            };
            cur = v;
            t = next_t;
        }
        Ok(cur)
    }

    fn insert_path(&self, agg: Val<'ctx>, ty: ir::Type, indices: &[u32], value: Val<'ctx>) -> R<Val<'ctx>> {
        let Some((&ix, rest)) = indices.split_first() else {
            return Ok(value);
        };
        let sub_ty = match self.e.ir.types.get(ty) {
            TypeData::Vector { elem, .. } | TypeData::Array { elem, .. } => *elem,
            TypeData::Struct { fields, .. } => *fields.get(ix as usize).ok_or("member index out of range")?,
            other => bail!("insert into {other:?}"),
        };
        let sub = if rest.is_empty() {
            value
        } else {
            let old = self.extract_path(agg, ty, &[ix])?;
            self.insert_path(old, sub_ty, rest, value)?
        };
        match agg {
            BasicValueEnum::VectorValue(v) => {
                if ix >= v.get_type().get_size() || sub.get_type() != v.get_type().get_element_type() {
                    bail!("bad vector insert");
                }
                Ok(self.b.build_insert_element(v, sub, self.i32().const_int(ix as u64, false), "")?.into())
            }
            BasicValueEnum::StructValue(s) => {
                if s.get_type().get_field_type_at_index(ix) != Some(sub.get_type()) {
                    bail!("bad struct insert");
                }
                Ok(self.b.build_insert_value(s, sub, ix, "")?.as_basic_value_enum())
            }
            BasicValueEnum::ArrayValue(a) => {
                if ix >= a.get_type().len() || a.get_type().get_element_type() != sub.get_type() {
                    bail!("bad array insert");
                }
                Ok(self.b.build_insert_value(a, sub, ix, "")?.as_basic_value_enum())
            }
            _ => bail!("insert into a scalar"),
        }
    }

    fn lower_construct(&self, rt: BasicTypeEnum<'ctx>, parts: &[Val<'ctx>]) -> R<Val<'ctx>> {
        match rt {
            BasicTypeEnum::VectorType(_) => {
                let mut lanes_v = Vec::new();
                for p in parts {
                    match p {
                        BasicValueEnum::VectorValue(v) => {
                            for l in 0..v.get_type().get_size() {
                                lanes_v.push(self.extract(*p, l)?);
                            }
                        }
                        other => lanes_v.push(*other),
                    }
                }
                self.gather(rt, &lanes_v)
            }
            BasicTypeEnum::StructType(st) => {
                if parts.len() != st.count_fields() as usize {
                    bail!("struct of {} members built from {} parts", st.count_fields(), parts.len());
                }
                let mut acc: Val<'ctx> = st.get_undef().into();
                for (i, p) in parts.iter().enumerate() {
                    if st.get_field_type_at_index(i as u32) != Some(p.get_type()) {
                        bail!("struct member {i} of the wrong type");
                    }
                    acc = self.b.build_insert_value(acc.into_struct_value(), *p, i as u32, "")?.as_basic_value_enum();
                }
                Ok(acc)
            }
            BasicTypeEnum::ArrayType(at) => {
                if parts.len() != at.len() as usize {
                    bail!("array of {} elements built from {} parts", at.len(), parts.len());
                }
                let mut acc: Val<'ctx> = at.get_undef().into();
                for (i, p) in parts.iter().enumerate() {
                    if at.get_element_type() != p.get_type() {
                        bail!("array element {i} of the wrong type");
                    }
                    acc = self.b.build_insert_value(acc.into_array_value(), *p, i as u32, "")?.as_basic_value_enum();
                }
                Ok(acc)
            }
            _ => bail!("construct of a scalar type {rt}"),
        }
    }

    fn lower_call(&mut self, i: Inst, callee: Func, args: &[Value]) -> R<Option<Val<'ctx>>> {
        let Some(cf) = self.e.ir.functions.get(callee) else { bail!("call of an unknown function") };
        if cf.kind == FuncKind::Import {
            bail!("call to `{}`, which is declared but never defined (unresolved import)", cf.name);
        }
        let key = self.e.instance_key(callee, self.kernel);
        let Some(&fv) = self.e.funcs.get(&key) else { bail!("function `{}` was not declared", cf.name) };
        let mut cargs: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(args.len() + 4);
        let ptys = fv.get_type().get_param_types();
        if ptys.len() != args.len() + 4 {
            bail!("call of `{}` with {} arguments", cf.name, args.len());
        }
        for (k, a) in args.iter().enumerate() {
            let v = self.get(*a)?;
            if BasicMetadataTypeEnum::from(v.get_type()) != ptys[k] {
                bail!("argument {k} of `{}` has type {}", cf.name, v.get_type());
            }
            cargs.push(v.into());
        }
        cargs.push(self.env.ctx.into());
        for l in self.env.lid {
            cargs.push(l.into());
        }
        let call = self.b.build_call(fv, &cargs, "")?;
        let _ = i;
        Ok(call.try_as_basic_value().basic())
    }

    fn lower_atomic(
        &mut self,
        op: ir::AtomicOp,
        ptr: Value,
        value: Option<Value>,
        comparator: Option<Value>,
        rt: Option<BasicTypeEnum<'ctx>>,
    ) -> R<Option<Val<'ctx>>> {
        let p = as_ptr(self.get(ptr)?)?;
        let val = match value {
            Some(v) => Some(self.get(v)?),
            None => None,
        };
        let cmp = match comparator {
            Some(c) => Some(self.get(c)?),
            None => None,
        };
        self.atomic_on(op, p, val, cmp, rt)
    }

    /// An atomic operation on LLVM values (one work-item's).
    pub(crate) fn atomic_on(
        &mut self,
        op: ir::AtomicOp,
        p: PointerValue<'ctx>,
        val: Option<Val<'ctx>>,
        cmp: Option<Val<'ctx>>,
        rt: Option<BasicTypeEnum<'ctx>>,
    ) -> R<Option<Val<'ctx>>> {
        use ir::AtomicOp as A;
        let sc = AtomicOrdering::SequentiallyConsistent;
        let need_val = || val.ok_or_else(|| Error("atomic operation without an operand".into()));
        let rmw = |s: &Self, op: AtomicRMWBinOp, v: Val<'ctx>| -> R<Val<'ctx>> {
            match v {
                BasicValueEnum::IntValue(iv) => Ok(s.b.build_atomicrmw(op, p, iv, sc)?.into()),
                _ => bail!("atomic {op:?} on {}", v.get_type()),
            }
        };
        Ok(match op {
            A::Load => {
                let t = rt.ok_or("atomic load without a result")?;
                let l = self.b.build_load(t, p, "")?;
                let inst = l.as_instruction_value().ok_or("atomic load folded")?;
                let align = self.e.td.get_store_size(&t).max(1) as u32;
                let _ = inst.set_alignment(align);
                inst.set_atomic_ordering(sc).map_err(|e| Error(format!("atomic load: {e}")))?;
                Some(l)
            }
            A::Store => {
                let v = need_val()?;
                let s = self.b.build_store(p, v)?;
                let align = self.e.td.get_store_size(&v.get_type()).max(1) as u32;
                let _ = s.set_alignment(align);
                s.set_atomic_ordering(sc).map_err(|e| Error(format!("atomic store: {e}")))?;
                None
            }
            A::Exchange => {
                let v = need_val()?;
                match v {
                    BasicValueEnum::FloatValue(fv) => {
                        let it = int_type(self.cx(), fv.get_type().get_bit_width())?;
                        let iv = self.b.build_bit_cast(fv, it, "")?.into_int_value();
                        let old = self.b.build_atomicrmw(AtomicRMWBinOp::Xchg, p, iv, sc)?;
                        Some(self.b.build_bit_cast(old, fv.get_type(), "")?)
                    }
                    _ => Some(rmw(self, AtomicRMWBinOp::Xchg, v)?),
                }
            }
            A::CompareExchange => {
                let v = need_val()?;
                let c = cmp.ok_or("compare-exchange without a comparator")?;
                if v.get_type() != c.get_type() {
                    bail!("compare-exchange operands of different types");
                }
                let pair = self.b.build_cmpxchg(p, c, v, sc, sc)?;
                Some(self.b.build_extract_value(pair, 0, "")?)
            }
            A::IIncrement | A::IDecrement => {
                let t = rt.ok_or("atomic increment without a result")?;
                let one = as_int(self.cint(t, 1)?)?;
                let o = if op == A::IIncrement { AtomicRMWBinOp::Add } else { AtomicRMWBinOp::Sub };
                Some(self.b.build_atomicrmw(o, p, one, sc)?.into())
            }
            A::IAdd => Some(rmw(self, AtomicRMWBinOp::Add, need_val()?)?),
            A::ISub => Some(rmw(self, AtomicRMWBinOp::Sub, need_val()?)?),
            A::SMin => Some(rmw(self, AtomicRMWBinOp::Min, need_val()?)?),
            A::UMin => Some(rmw(self, AtomicRMWBinOp::UMin, need_val()?)?),
            A::SMax => Some(rmw(self, AtomicRMWBinOp::Max, need_val()?)?),
            A::UMax => Some(rmw(self, AtomicRMWBinOp::UMax, need_val()?)?),
            A::And => Some(rmw(self, AtomicRMWBinOp::And, need_val()?)?),
            A::Or => Some(rmw(self, AtomicRMWBinOp::Or, need_val()?)?),
            A::Xor => Some(rmw(self, AtomicRMWBinOp::Xor, need_val()?)?),
            A::FAdd => {
                let v = need_val()?;
                let BasicValueEnum::FloatValue(fv) = v else { bail!("atomic fadd on {}", v.get_type()) };
                Some(self.atomic_fadd(p, fv)?.into())
            }
        })
    }

    /// Atomic float add as a compare-exchange loop on the bits (inkwell builds only integer
    /// read-modify-writes; LLVM expands `atomicrmw fadd` into the same loop on x86).
    fn atomic_fadd(&self, p: PointerValue<'ctx>, v: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let ft = v.get_type();
        let it = int_type(self.cx(), ft.get_bit_width())?;
        let pre = self.b.get_insert_block().ok_or("builder not positioned")?;
        let first = self.b.build_load(it, p, "")?;
        let inst = first.as_instruction_value().ok_or("atomic load folded")?;
        let _ = inst.set_alignment(ft.get_bit_width() / 8);
        inst.set_atomic_ordering(AtomicOrdering::Monotonic).map_err(|e| Error(format!("atomic load: {e}")))?;
        let lp = self.cx().insert_basic_block_after(pre, "fadd.loop");
        let done = self.cx().insert_basic_block_after(lp, "fadd.done");
        self.b.build_unconditional_branch(lp)?;
        self.b.position_at_end(lp);
        let cur = self.b.build_phi(it, "")?;
        let cur_i = cur.as_basic_value().into_int_value();
        let cur_f = self.b.build_bit_cast(cur_i, ft, "")?.into_float_value();
        let sum = self.b.build_float_add(cur_f, v, "")?;
        let sum_i = self.b.build_bit_cast(sum, it, "")?.into_int_value();
        let sc = AtomicOrdering::SequentiallyConsistent;
        let pair = self.b.build_cmpxchg(p, cur_i, sum_i, sc, sc)?;
        let seen = self.b.build_extract_value(pair, 0, "")?.into_int_value();
        let ok = self.b.build_extract_value(pair, 1, "")?.into_int_value();
        self.b.build_conditional_branch(ok, done, lp)?;
        cur.add_incoming(&[(&first, pre), (&seen, lp)]);
        self.b.position_at_end(done);
        Ok(self.b.build_bit_cast(cur_i, ft, "")?.into_float_value())
    }

    /// How a block parameter of LLVM type `ty` is carried between blocks: `Some((n, part))`
    /// for a varying IR vector of 2 to 4 components in vector mode (`<n*W x T>`), which is
    /// carried as n phis of `<W x T>`, one per component. LLVM's instruction selection copies a value of a vector
    /// type whose length is not a power of two between blocks one element at a time
    /// (`float3` at 16 lanes, `<48 x float>`: 48 scalar registers, rebuilt with insertps on
    /// every loop iteration; nbody's accumulator spent most of its time there), and
    /// InstCombine narrows a `float4` phi whose last component is never used (clang's form
    /// of a `float3`) to exactly that. Per-component phis are what the registers hold anyway,
    /// and a dead component's phi is simply deleted.
    fn phi_parts(&self, ty: BasicTypeEnum<'ctx>) -> Option<(u32, BasicTypeEnum<'ctx>)> {
        let w = self.vec.as_ref()?.width;
        let BasicTypeEnum::VectorType(vt) = ty else { return None };
        let n = vt.get_size();
        // Up to 4 components (where clang's float3-as-float4 lives); float8 / float16 stay
        // one phi, which LLVM splits into whole registers itself (their code is unchanged).
        if w < 2 || n <= w || n % w != 0 || (n / w > 4 && (n / w).is_power_of_two()) {
            return None;
        }
        let part: BasicTypeEnum<'ctx> = match vt.get_element_type() {
            BasicTypeEnum::FloatType(x) => x.vec_type(w).into(),
            BasicTypeEnum::IntType(x) => x.vec_type(w).into(),
            BasicTypeEnum::PointerType(x) => x.vec_type(w).into(),
            _ => return None,
        };
        Some((n / w, part))
    }

    /// The value of a block parameter carried by `parts` (one phi, or `<W x T>` parts
    /// concatenated).
    fn join_phi_parts(&mut self, parts: &[PhiValue<'ctx>]) -> R<Val<'ctx>> {
        match parts {
            [one] => Ok(one.as_basic_value()),
            _ => {
                let vs: Vec<VectorValue<'ctx>> = parts.iter().map(|p| p.as_basic_value().into_vector_value()).collect();
                Ok(self.concat(&vs)?.into())
            }
        }
    }

    /// Adds `v` arriving from `from` to the phi(s) of one block parameter.
    fn add_phi_incoming(&mut self, parts: &[PhiValue<'ctx>], v: Val<'ctx>, from: BasicBlock<'ctx>) -> R<()> {
        if let [phi] = parts {
            if phi.as_basic_value().get_type() != v.get_type() {
                bail!(
                    "block argument of type {} for a parameter of type {}",
                    v.get_type(),
                    phi.as_basic_value().get_type()
                );
            }
            phi.add_incoming(&[(&v as &dyn BasicValue<'ctx>, from)]);
            return Ok(());
        }
        let BasicValueEnum::VectorValue(vv) = v else {
            bail!("block argument {} for a split vector parameter", v.get_type())
        };
        let w = vv.get_type().get_size() / parts.len() as u32;
        // Split where `v` is computed: before the terminator of `from`, which is not built yet
        // when `from` is the current block, and exists already for an edge trampoline.
        let here = self.b.get_insert_block();
        match from.get_terminator() {
            Some(t) => self.b.position_before(&t),
            None => self.b.position_at_end(from),
        }
        for (k, phi) in parts.iter().enumerate() {
            let idx: Vec<IntValue<'ctx>> =
                (0..w).map(|j| self.i32().const_int((k as u32 * w + j) as u64, false)).collect();
            let part = self.b.build_shuffle_vector(
                vv,
                vv.get_type().get_undef(),
                inkwell::types::VectorType::const_vector(&idx),
                "",
            )?;
            if phi.as_basic_value().get_type() != part.get_type().as_basic_type_enum() {
                bail!("block argument of type {} for a split parameter", v.get_type());
            }
            phi.add_incoming(&[(&part as &dyn BasicValue<'ctx>, from)]);
        }
        if let Some(h) = here {
            self.b.position_at_end(h);
        }
        Ok(())
    }

    fn lower_branch(&mut self, data: &InstData) -> R<()> {
        let succs = data.successors();
        // Phi operands: collect argument values before the terminator.
        let mut edges: Vec<(Block, Vec<Val<'ctx>>)> = Vec::with_capacity(succs.len());
        for bc in &succs {
            let params = &self.f.blocks[bc.block].params;
            if bc.args.len() != params.len() {
                bail!("branch to {} with {} arguments", bc.block, bc.args.len());
            }
            let vals: Vec<Val<'ctx>> =
                bc.args.iter().zip(params).map(|(a, p)| self.get_edge_arg(*a, *p)).collect::<R<_>>()?;
            if vals.len() != self.f.blocks[bc.block].params.len() {
                bail!("branch to {} with {} arguments", bc.block, vals.len());
            }
            edges.push((bc.block, vals));
        }
        let cur = self.b.get_insert_block().ok_or("builder not positioned")?;
        // The LLVM block each edge leaves from: a trampoline when one terminator reaches the
        // same block with parameters more than once (phis take one value per predecessor).
        let mut targets: Vec<BasicBlock<'ctx>> = Vec::with_capacity(edges.len());
        let mut pending: Vec<(BasicBlock<'ctx>, Block, Vec<Val<'ctx>>)> = Vec::new();
        for (k, (blk, vals)) in edges.iter().enumerate() {
            let dest = self.blocks[*blk].ok_or("branch to an unreachable block")?;
            let dup = !vals.is_empty() && edges.iter().enumerate().any(|(j, (b2, _))| j != k && b2 == blk);
            if dup {
                let t = self.cx().insert_basic_block_after(cur, "edge");
                pending.push((t, *blk, vals.clone()));
                targets.push(t);
            } else {
                for (parts, v) in self.phis.get(blk).cloned().unwrap_or_default().iter().zip(vals) {
                    self.add_phi_incoming(parts, *v, cur)?;
                }
                targets.push(dest);
            }
        }
        match data {
            InstData::Jump { .. } => {
                self.b.build_unconditional_branch(targets[0])?;
            }
            InstData::Branch { cond, .. } => {
                let c = as_int(self.get(*cond)?)?;
                if c.get_type().get_bit_width() != 1 {
                    bail!("branch condition is not a bool");
                }
                self.b.build_conditional_branch(c, targets[0], targets[1])?;
            }
            InstData::Switch { selector, cases, .. } => {
                let s = as_int(self.get(*selector)?)?;
                let st = s.get_type();
                let cs: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> =
                    cases.iter().enumerate().map(|(k, (v, _))| (st.const_int(*v, false), targets[k + 1])).collect();
                self.b.build_switch(s, targets[0], &cs)?;
            }
            _ => bail!("not a branch"),
        }
        for (t, blk, vals) in pending {
            self.b.position_at_end(t);
            let dest = self.blocks[blk].ok_or("branch to an unreachable block")?;
            for (parts, v) in self.phis.get(&blk).cloned().unwrap_or_default().iter().zip(&vals) {
                self.add_phi_incoming(parts, *v, t)?;
            }
            self.b.build_unconditional_branch(dest)?;
        }
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
