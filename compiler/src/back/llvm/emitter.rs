//! The module-level state of the translation ([`Emitter`]): LLVM types of the IR's types,
//! constants, module variables, the call graph, `__local` layouts and function declarations;
//! and the free helpers on LLVM types and values the lowering shares.

use super::*;

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
    /// The program-scope variables' storage block and its layout (`crate::program_globals`).
    pub program_storage: Option<(PointerValue<'ctx>, program_globals::Layout)>,
    /// LLVM functions by (IR function, kernel whose local layout it uses).
    pub funcs: HashMap<(Func, Option<usize>), FunctionValue<'ctx>>,
    pub layouts: Vec<LocalLayout>,
    pub uses_local: Vec<bool>,
    /// Widest SIMD register (bits) math built-ins may pass vectors in (`vecmath`); 0 = none.
    pub math_vector_bits: u32,
    /// `rsqrt` on float vectors by `vrsqrt14ps` and a Newton step (`vecmath::rsqrt`).
    pub rsqrt14: bool,
    /// The target's masked memory instructions: `vector::memory` keeps those it has as they
    /// are and loops over the active elements for the others (`vector::masked_loop`).
    pub masked: crate::back::vector::MaskedSupport,
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
            program_storage: None,
            funcs: HashMap::new(),
            layouts: Vec::new(),
            uses_local: Vec::new(),
            math_vector_bits: 0,
            rsqrt14: false,
            masked: Default::default(),
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
            ConstData::Address { var, offset, .. } => {
                let stored = self.program_storage.as_ref().and_then(|(p, l)| Some((*p, l.offset_of(*var)?)));
                let (base, start) = match stored {
                    Some(at) => at,
                    None => (self.global_ptr(*var).ok_or("the address of a variable without storage")?, 0),
                };
                let bytes = self.cx.i8_type();
                let index = self.cx.i64_type().const_int(start + offset, false);
                // SAFETY: a constant GEP over bytes (no type description is walked); the
                // address is only dereferenced by the kernel code under its own contract.
                unsafe { base.const_gep(bytes, &[index]) }.into()
            }
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

    /// Creates the LLVM globals of `__constant` and private module variables and the storage
    /// block of the program-scope `__global` ones; then their initializers, which may hold
    /// each other's addresses.
    pub fn declare_globals(&mut self) -> R<()> {
        let mut made = Vec::new();
        for (g, data) in self.ir.globals.iter() {
            if data.builtin.is_some() || is_local_var(data) || program_globals::is_program_global(data) {
                continue;
            }
            let ty = self.ty(data.ty).map_err(|e| Error(format!("module variable `{}`: {}", data.name, e.0)))?;
            let gv = self.m.add_global(ty, None, &format!("g{}.{}", g.index(), sanitize(&data.name)));
            gv.set_linkage(Linkage::Internal);
            gv.set_constant(data.space == ClSpace::Constant);
            let align = self.abi_align(ty).max(align::global_align(&self.ir.types, data));
            if align.is_power_of_two() {
                gv.set_alignment(align as u32);
            }
            self.globals.insert(g, gv.as_pointer_value());
            made.push((gv, ty, data));
        }
        let storage = self.declare_program_storage()?;
        for (gv, ty, data) in made {
            let init = match data.init {
                Some(c) => self.constant(c)?,
                None => ty.const_zero(),
            };
            if init.get_type() != ty {
                bail!("module variable `{}`: initializer of the wrong type", data.name);
            }
            gv.set_initializer(&init);
        }
        if let Some((gv, st)) = storage {
            let init = self.program_storage_init(st)?;
            gv.set_initializer(&init);
        }
        Ok(())
    }

    /// The storage block of the program-scope variables (`crate::program_globals`), without
    /// its initializer: a packed struct of each variable at its offset, byte arrays between.
    fn declare_program_storage(&mut self) -> R<Option<(GlobalValue<'ctx>, StructType<'ctx>)>> {
        let layout = program_globals::layout(self.ir);
        if layout.vars.is_empty() {
            return Ok(None);
        }
        let mut fields: Vec<BasicTypeEnum<'ctx>> = Vec::new();
        let mut at = 0u64;
        for &(g, offset) in &layout.vars {
            let data = &self.ir.globals[g];
            if offset > at {
                fields.push(self.cx.i8_type().array_type((offset - at) as u32).into());
            }
            let ty = self.ty(data.ty).map_err(|e| Error(format!("variable `{}`: {}", data.name, e.0)))?;
            let size = self.ir.types.size_of(data.ty);
            if self.alloc_size(ty) != size {
                bail!("variable `{}`: {} bytes in LLVM, {size} in OpenCL C", data.name, self.alloc_size(ty));
            }
            fields.push(ty);
            at = offset + size;
        }
        let st = self.cx.struct_type(&fields, true);
        let gv = self.m.add_global(st, None, program_globals::STORAGE_SYMBOL);
        gv.set_linkage(Linkage::External);
        if layout.align.is_power_of_two() {
            gv.set_alignment(layout.align as u32);
        }
        self.program_storage = Some((gv.as_pointer_value(), layout));
        Ok(Some((gv, st)))
    }

    /// The initial contents of the storage block `st` (zeros where a variable has none).
    fn program_storage_init(&self, st: StructType<'ctx>) -> R<Val<'ctx>> {
        let Some((_, layout)) = &self.program_storage else { bail!("no program storage") };
        let mut vals: Vec<Val<'ctx>> = Vec::new();
        let mut at = 0u64;
        for &(g, offset) in &layout.vars {
            let data = &self.ir.globals[g];
            if offset > at {
                vals.push(self.cx.i8_type().array_type((offset - at) as u32).const_zero().into());
            }
            let ty = self.ty(data.ty)?;
            let init = match data.init {
                Some(c) => self.constant(c)?,
                None => ty.const_zero(),
            };
            if init.get_type() != ty {
                bail!("variable `{}`: initializer of the wrong type", data.name);
            }
            vals.push(init);
            at = offset + self.ir.types.size_of(data.ty);
        }
        if vals.len() != st.count_fields() as usize {
            bail!("program storage initializer with the wrong number of fields");
        }
        Ok(st.const_named_struct(&vals).into())
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
