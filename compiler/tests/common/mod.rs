//! Test helpers: aligned buffers, argument blocks, an NDRange runner and a small IR builder.
#![allow(dead_code)]

use softcl_compiler::abi::BLOCK_ALIGN;
use softcl_compiler::ir::{
    self, Block, BlockCall, ConstData, FuncKind, Function, InstData, Kernel, Module, Type, TypeData, Value,
    WorkItemQuery,
};
use softcl_compiler::{
    AccessQualifier, AddressSpace, ArgKind, KernelArg, KernelInfo, NativeKernel, TypeQualifiers, WorkGroupContext,
    FINISHED,
};

#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct Chunk([u8; 128]);

/// A zeroed buffer aligned to 128 bytes.
pub struct AlignedBuf {
    chunks: Vec<Chunk>,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        AlignedBuf { chunks: vec![Chunk([0; 128]); len.div_ceil(128).max(1)], len }
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.chunks.as_mut_ptr() as *mut u8
    }
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the chunks are plain bytes, at least `len` of them, contiguous.
        unsafe { std::slice::from_raw_parts(self.chunks.as_ptr() as *const u8, self.len) }
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.chunks.as_mut_ptr() as *mut u8, self.len) }
    }
}

/// An argument block laid out as a kernel's `KernelInfo::args` say.
pub struct ArgBlock {
    pub buf: AlignedBuf,
}

impl ArgBlock {
    pub fn new(info: &KernelInfo) -> Self {
        ArgBlock { buf: AlignedBuf::new(info.arg_block_size.max(8)) }
    }
    pub fn set_bytes(&mut self, offset: usize, bytes: &[u8]) {
        self.buf.bytes_mut()[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
    pub fn set_ptr<T>(&mut self, info: &KernelInfo, arg: usize, p: *const T) {
        let off = info.args[arg].offset;
        self.set_bytes(off, &(p as usize as u64).to_le_bytes());
    }
    pub fn set<T: Copy>(&mut self, info: &KernelInfo, arg: usize, v: T) {
        let off = info.args[arg].offset;
        let size = std::mem::size_of::<T>();
        // SAFETY: reading the bytes of a Copy value.
        let bytes = unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, size) };
        self.set_bytes(off, bytes);
    }
    pub fn bytes(&self) -> &[u8] {
        self.buf.bytes()
    }
}

/// How a work-group is run: the CPU device's one call per region, or the Gen device's
/// calls of `width` work-items at a time, region by region.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    Whole,
    Chunks(u32),
}

/// Runs an NDRange over all work-groups on this thread. `local_args` are `(arg index,
/// bytes)` of `__local` pointer arguments to allocate per work-group.
#[allow(clippy::too_many_arguments)]
pub fn run_ndrange(
    k: &NativeKernel,
    args: &mut ArgBlock,
    work_dim: u32,
    global: [u64; 3],
    local: [u64; 3],
    offset: [u64; 3],
    pattern: Pattern,
    local_args: &[(usize, usize)],
) {
    let info = &k.info;
    let groups: Vec<u64> = (0..3).map(|d| global[d].div_ceil(local[d])).collect();
    let mut local_mem = AlignedBuf::new(info.static_local_mem_size as usize);
    let mut local_bufs: Vec<AlignedBuf> = local_args.iter().map(|(_, n)| AlignedBuf::new(*n)).collect();
    for ((arg, _), buf) in local_args.iter().zip(local_bufs.iter_mut()) {
        let p = buf.as_mut_ptr();
        args.set_ptr(info, *arg, p);
    }
    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let gid = [gx, gy, gz];
                let size: [u64; 3] = std::array::from_fn(|d| local[d].min(global[d] - gid[d] * local[d]));
                let n = (size[0] * size[1] * size[2]) as u32;
                let lsize = [size[0] as usize, size[1] as usize, size[2] as usize];
                let mut state = AlignedBuf::new(info.work_item_state_bytes(lsize).expect("state size"));
                let ctx = WorkGroupContext {
                    group_id: gid,
                    local_size: size,
                    enqueued_local_size: local,
                    global_size: global,
                    global_offset: offset,
                    num_groups: [groups[0], groups[1], groups[2]],
                    work_dim,
                    _reserved: 0,
                    local_memory: local_mem.as_mut_ptr(),
                    work_item_state: state.as_mut_ptr(),
                    printf: std::ptr::null(),
                    gen_counters: std::ptr::null_mut(),
                    program_globals: k.program_globals(),
                    local_memory_bytes: info.static_local_mem_size,
                    ..WorkGroupContext::default()
                };
                let mut resume = 0;
                let mut regions = 0;
                loop {
                    let r = match pattern {
                        // SAFETY: the block was laid out for this kernel's arguments, its buffers
                        // and the group's local memory and state (sized by its info) outlive
                        // the call.
                        Pattern::Whole => unsafe { k.run(args.bytes(), &ctx, 0, n, resume) },
                        Pattern::Chunks(w) => {
                            let mut r = FINISHED;
                            let mut first = 0;
                            while first < n {
                                let end = (first + w).min(n);
                                // SAFETY: as above.
                                let rr = unsafe { k.run(args.bytes(), &ctx, first, end, resume) };
                                if first > 0 {
                                    assert_eq!(rr, r, "work-items of one group reached different barriers");
                                }
                                r = rr;
                                first = end;
                            }
                            r
                        }
                    };
                    regions += 1;
                    assert!(regions < 100_000, "runaway barrier loop");
                    if r == FINISHED {
                        break;
                    }
                    assert!(r <= info.barrier_count, "barrier id {r} out of range");
                    resume = r;
                }
            }
        }
    }
    let _ = BLOCK_ALIGN;
}

/// 1D convenience wrapper.
pub fn run_1d(k: &NativeKernel, args: &mut ArgBlock, global: u64, local: u64) {
    run_ndrange(k, args, 1, [global, 1, 1], [local, 1, 1], [0; 3], Pattern::Whole, &[]);
}

// ------------------------------------------------------------------ IR building

/// Kernel argument descriptions: computes offsets like the front end does.
pub fn args_info(name: &str, kinds: &[(ArgKind, usize, usize)]) -> KernelInfo {
    let mut off = 0usize;
    let mut args = Vec::new();
    for (i, (kind, size, align)) in kinds.iter().enumerate() {
        off = off.next_multiple_of(*align);
        args.push(KernelArg {
            name: format!("a{i}"),
            type_name: String::new(),
            address_space: match kind {
                ArgKind::Buffer { address_space } => *address_space,
                ArgKind::Local => AddressSpace::Local,
                _ => AddressSpace::Private,
            },
            access: AccessQualifier::None,
            qualifiers: TypeQualifiers::default(),
            kind: kind.clone(),
            offset: off,
            size: *size,
            align: *align,
        });
        off += size;
    }
    KernelInfo { name: name.into(), args, arg_block_size: off.next_multiple_of(8), ..Default::default() }
}

pub fn buffer_arg() -> (ArgKind, usize, usize) {
    (ArgKind::Buffer { address_space: AddressSpace::Global }, 8, 8)
}
pub fn value_arg(size: usize, align: usize) -> (ArgKind, usize, usize) {
    (ArgKind::Value, size, align)
}

/// A function under construction.
pub struct Fb<'m> {
    pub m: &'m mut Module,
    pub f: Function,
    pub cur: Block,
}

impl<'m> Fb<'m> {
    pub fn new(m: &'m mut Module, name: &str, kind: FuncKind, params: &[Type], ret: Type) -> (Self, Vec<Value>) {
        let mut f = Function::new(name, kind, params.to_vec(), ret);
        let entry = f.create_block();
        let ps = params.iter().map(|&t| f.append_block_param(entry, t)).collect();
        (Fb { m, f, cur: entry }, ps)
    }
    pub fn block(&mut self, params: &[Type]) -> (Block, Vec<Value>) {
        let b = self.f.create_block();
        let ps = params.iter().map(|&t| self.f.append_block_param(b, t)).collect();
        (b, ps)
    }
    pub fn switch_to(&mut self, b: Block) {
        self.cur = b;
    }
    pub fn ty(&mut self, d: TypeData) -> Type {
        self.m.types.intern(d)
    }
    pub fn int(&mut self, bits: u16) -> Type {
        self.m.types.int(bits)
    }
    pub fn float(&mut self, bits: u16) -> Type {
        self.m.types.float(bits)
    }
    pub fn bool(&mut self) -> Type {
        self.m.types.bool()
    }
    pub fn vec(&mut self, elem: Type, n: u32) -> Type {
        self.m.types.vector(elem, n)
    }
    pub fn ptr(&mut self, space: AddressSpace, pointee: Type) -> Type {
        self.m.types.pointer(space, pointee)
    }
    pub fn cint(&mut self, ty: Type, v: u64) -> Value {
        let c = self.m.add_const(ConstData::Int { ty, bits: v });
        self.f.const_value(c, ty)
    }
    pub fn cf32(&mut self, v: f32) -> Value {
        let ty = self.m.types.float(32);
        let c = self.m.add_const(ConstData::Float { ty, bits: v.to_bits() as u64 });
        self.f.const_value(c, ty)
    }
    pub fn global(&mut self, g: ir::GlobalVar) -> Value {
        let d = &self.m.globals[g];
        let (space, ty) = (d.space, d.ty);
        let pt = self.m.types.pointer(space, ty);
        self.f.global_value(g, pt)
    }
    pub fn inst(&mut self, d: InstData, ty: Type) -> Value {
        self.f.append_inst(self.cur, d, Some(ty)).1.expect("result")
    }
    pub fn effect(&mut self, d: InstData) {
        self.f.append_inst(self.cur, d, None);
    }
    pub fn bin(&mut self, op: ir::BinaryOp, lhs: Value, rhs: Value) -> Value {
        let ty = self.f.value_type(lhs);
        self.inst(InstData::Binary { op, lhs, rhs }, ty)
    }
    pub fn cmp(&mut self, op: ir::CmpOp, lhs: Value, rhs: Value) -> Value {
        let n = self.m.types.lanes(self.f.value_type(lhs));
        let b = self.m.types.bool();
        let ty = if n > 1 { self.m.types.vector(b, n) } else { b };
        self.inst(InstData::Compare { op, lhs, rhs }, ty)
    }
    /// Component `d` of a work-item query, as u64.
    pub fn wi(&mut self, q: WorkItemQuery, d: u32) -> Value {
        let u64t = self.m.types.int(64);
        let v3 = self.m.types.vector(u64t, 3);
        let v = self.inst(InstData::WorkItem { query: q }, v3);
        self.inst(InstData::ExtractValue { aggregate: v, indices: vec![d] }, u64t)
    }
    /// `&base[index]`
    pub fn index(&mut self, base: Value, index: Value) -> Value {
        let ty = self.f.value_type(base);
        self.inst(InstData::AccessChain { base, element: Some(index), indices: vec![], in_bounds: true }, ty)
    }
    /// `&(*base)[index]` for a pointer to an array.
    pub fn elem(&mut self, base: Value, index: Value) -> Value {
        let ty = self.f.value_type(base);
        let TypeData::Pointer { space, pointee } = self.m.types.get(ty).clone() else { panic!("not a pointer") };
        let elem = match self.m.types.get(pointee) {
            TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => *elem,
            _ => panic!("not an array"),
        };
        let pt = self.m.types.pointer(space, elem);
        self.inst(InstData::AccessChain { base, element: None, indices: vec![index], in_bounds: true }, pt)
    }
    pub fn load(&mut self, ptr: Value) -> Value {
        let ty = self.f.value_type(ptr);
        let TypeData::Pointer { pointee, .. } = self.m.types.get(ty).clone() else { panic!("not a pointer") };
        let align = self.m.types.align_of(pointee) as u32;
        self.inst(InstData::Load { ptr, align, volatile: false, block: None }, pointee)
    }
    pub fn store(&mut self, ptr: Value, value: Value) {
        let ty = self.f.value_type(value);
        let align = self.m.types.align_of(ty) as u32;
        self.effect(InstData::Store { ptr, value, align, volatile: false, block: None });
    }
    pub fn barrier(&mut self) {
        self.effect(InstData::Barrier {
            exec_scope: ir::Scope::WorkGroup,
            mem_scope: ir::Scope::WorkGroup,
            semantics: 0x110,
        });
    }
    pub fn jump(&mut self, block: Block, args: Vec<Value>) {
        self.effect(InstData::Jump { dest: BlockCall { block, args } });
    }
    pub fn branch(&mut self, cond: Value, t: Block, targs: Vec<Value>, e: Block, eargs: Vec<Value>) {
        self.effect(InstData::Branch {
            cond,
            then_dest: BlockCall { block: t, args: targs },
            else_dest: BlockCall { block: e, args: eargs },
        });
    }
    pub fn ret(&mut self, value: Option<Value>) {
        self.effect(InstData::Return { value });
    }
    pub fn ext(&mut self, op: spirv::OpenclStd100Op, args: Vec<Value>, ty: Type) -> Value {
        self.inst(InstData::ExtInst { opcode: op as u32, args }, ty)
    }
    /// Adds the function to the module; returns its id.
    pub fn finish(self) -> ir::Func {
        self.m.functions.push(self.f)
    }
    pub fn finish_kernel(self, info: KernelInfo) -> ir::Func {
        let m = self.m;
        let func = m.functions.push(self.f);
        m.kernels.push(Kernel { func, info });
        func
    }
}
