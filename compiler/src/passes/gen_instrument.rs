//! Gen instrumentation as an IR pass: the last pass of a Gen-instrumented build's module
//! (`Target::gen` with a SIMD width; never the program's own build), which the lowering's
//! hooks (`back::gen::hooks`) turn into counting code.
//!
//! For each kernel it plans the *sites* (every load, store and atomic that is a memory
//! message: not the private scalars that live in registers, nor private arrays indexed only
//! by constants; and every image read or write) and the *blocks*, with the static estimates
//! of [`GenBlock`] (instructions, flops, a divergent branch, a source line), and leaves the
//! plan on the kernel (`KernelInfo::gen`, the [`GenKernelInfo`] the lowering completes). Then
//! it makes the counting
//! explicit in the IR:
//! - `gen.block <id>`, the first instruction of each block: one execution of the block under
//!   the current mask (the block's messages, active lanes and useful bytes follow from it);
//! - `gen.count <site>, <ptr>` (or `image`, `sampler`, `coord` for an image access) right
//!   before each site's access: what the lanes' addresses decide (L3 lines, SLM cycles).
//!
//! The plan is made from the kernel function as the lowering sees it (after inlining) and is
//! the same for every lane layout but the divergence it records, so the variants of one
//! width share the counter layout (a width whose registers hold the kernel's private arrays
//! indexed at run time has no sites for them: `gen_abi::private_arrays_in_registers`). The validator checks the instructions against the plan (`ir::validate`:
//! a site without its `gen.count` is an error).
//!
//! The pass runs last. A later pass that splits blocks (at barriers, say) leaves the new
//! blocks without a `gen.block`: they count as part of the block they came from, as the
//! lowering's resume points after a barrier do. The instructions count under the lowering's
//! current lane mask; IR with explicit masks would give `gen.block` and `gen.count` the
//! mask of their block as an operand.

use crate::gen_abi::{AccessKind, GenBlock, GenKernelInfo, GenSite, SameAddress, SourceLoc};
use crate::ir::{self, GenAccess, Inst, InstData, TypeData, Value, ValueDef};
use crate::kernel_info::AddressSpace;
use crate::vectorize::analysis::WorkItemAnalysis;
use std::collections::HashMap;

/// The most sites an instrumented build is made for. Beyond it the kernel runs its scalar
/// build on the Gen device, uncounted (and not modelled: the report says so). A variant of
/// more than [`FAST_CODEGEN_SITES`] is compiled with LLVM's fast instruction selection
/// (`back::codegen_level`): LLVM's code generation of one long block of messages grows
/// quadratically (1,200 strided loads at SIMD16: 30 s of code generation at the default
/// level, 0.7 s fast, the code about 15% slower); what is left grows with LLVM's IR
/// optimisation (3,000 loads at SIMD32: 14 s of it, 18 s in all).
pub const MAX_SITES: usize = 4096;

/// The sites beyond which a variant is compiled with LLVM's fast instruction selection.
pub const FAST_CODEGEN_SITES: usize = 256;

/// The pass: plans and instruments every kernel of `m` for packets of consecutive ids of
/// dimension 0 (`linear_lanes` false) or of consecutive linear local ids (true).
pub fn run(m: &mut ir::Module, linear_lanes: bool, simd: u32) -> Result<(), String> {
    for k in 0..m.kernels.len() {
        let func = m.kernels[k].func;
        if !m.functions.is_valid(func) || m.functions[func].kind == ir::FuncKind::Import {
            continue;
        }
        let f = &m.functions[func];
        let wa = crate::vectorize::analysis::analyze_lanes(m, f, linear_lanes);
        let (mut plan, mut counts) = plan(m, f, &wa, simd);
        // Private arrays indexed at run time that fit the registers at this width are
        // register moves, not scratch messages (`gen_abi::private_arrays_in_registers`).
        let (arrays, bytes) = dynamic_private_arrays(m, f);
        if crate::gen_abi::private_arrays_in_registers(bytes, simd) {
            let mut dropped = std::collections::HashSet::new();
            counts.retain(|(_, site, access)| {
                let GenAccess::Memory { ptr } = access else { return true };
                let in_registers = private_root(f, *ptr).is_some_and(|r| arrays.contains(&r));
                if in_registers {
                    dropped.insert(*site);
                }
                !in_registers
            });
            drop_sites(&mut plan, &mut counts, &dropped);
        }
        let dims = [0, 1, 2].map(|d| crate::vectorize::analysis::analyze_dimension(m, f, d));
        for (_, site, access) in &counts {
            let (GenAccess::Memory { ptr }, Some(s)) = (access, plan.sites.get_mut(*site as usize)) else { continue };
            // A block's lines are the block's, whatever the work-group's shape.
            if matches!(s.space, AddressSpace::Global | AddressSpace::Constant) && !s.sub_group_block {
                s.lane_strides = super::gen_strides::lane_strides(m, f, &dims, *ptr);
            }
        }
        plan.shape_free = shape_free(f, &plan);
        if plan.sites.len() > MAX_SITES {
            return Err(format!(
                "kernel `{}` has {} memory messages after inlining; an instrumented build of more than {} \
                 is not made (LLVM's instruction scheduling of such long blocks takes tens of seconds)",
                m.kernels[k].info.name,
                plan.sites.len(),
                MAX_SITES
            ));
        }
        let f = &mut m.functions[func];
        for (id, &b) in f.layout.blocks.clone().iter().enumerate() {
            let first = *f.layout.insts[b].first().ok_or_else(|| format!("{b} is empty"))?;
            f.insert_inst_before(first, InstData::GenBlock { id: id as u32 }, None);
        }
        for (i, site, access) in counts {
            f.insert_inst_before(i, InstData::GenCount { site, access }, None);
        }
        m.kernels[k].info.gen = Some(plan);
    }
    Ok(())
}

/// Whether kernel function `f` (planned as `plan`) computes the same whatever the
/// work-group shape: it asks for no id or size of the work-group or sub-group but the global
/// ones, and has no barrier and no SLM message.
fn shape_free(f: &ir::Function, plan: &GenKernelInfo) -> bool {
    use ir::WorkItemQuery as Q;
    let shape_query = f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter()).any(|&i| match &f.insts[i] {
        InstData::WorkItem { query } => !matches!(query, Q::GlobalId | Q::GlobalSize | Q::GlobalOffset | Q::WorkDim),
        // A call left out of line may ask (the kernel's body is inlined as a rule).
        InstData::Barrier { .. } | InstData::Call { .. } => true,
        _ => false,
    });
    !shape_query && !plan.sites.iter().any(|s| s.space == AddressSpace::Local)
}

/// The private arrays of kernel function `f` that some access indexes at run time (their
/// variables) and their bytes per work-item.
pub(crate) fn dynamic_private_arrays(m: &ir::Module, f: &ir::Function) -> (std::collections::HashSet<Value>, u64) {
    let mut arrays = std::collections::HashSet::new();
    let mut bytes = 0;
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let ptrs: Vec<Value> = match &f.insts[i] {
                InstData::Load { ptr, .. } | InstData::Store { ptr, .. } | InstData::Atomic { ptr, .. } => vec![*ptr],
                InstData::CopyMemory { dst, src, .. } => vec![*dst, *src],
                _ => continue,
            };
            for p in ptrs {
                let private =
                    matches!(m.types.get(f.value_type(p)), TypeData::Pointer { space: AddressSpace::Private, .. });
                if !private || f.is_state_value_address(p) || !dynamic_private(m, f, p) {
                    continue;
                }
                let Some(root) = private_root(f, p) else { continue };
                let Some(ValueDef::Result(v)) = f.values.get(root).map(|d| d.def) else { continue };
                if let InstData::Variable { ty, .. } = &f.insts[v] {
                    if arrays.insert(root) {
                        bytes += m.types.size_of(*ty);
                    }
                }
            }
        }
    }
    (arrays, bytes)
}

/// The private variable pointer `p` points into (through access chains and casts).
fn private_root(f: &ir::Function, p: Value) -> Option<Value> {
    let v = f.address_root(p);
    match f.values.get(v)?.def {
        ValueDef::Result(i) if matches!(f.insts[i], InstData::Variable { .. }) => Some(v),
        _ => None,
    }
}

/// Drops sites `dropped` from the plan and renumbers the rest (and the counts and waits
/// that name them).
fn drop_sites(plan: &mut GenKernelInfo, counts: &mut [Count], dropped: &std::collections::HashSet<u32>) {
    let mut next = 0u32;
    let new_index: Vec<Option<u32>> = (0..plan.sites.len() as u32)
        .map(|k| {
            (!dropped.contains(&k)).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    let mut k = 0;
    plan.sites.retain(|_| {
        k += 1;
        new_index[k - 1].is_some()
    });
    for s in &mut plan.sites {
        s.waits_for = s.waits_for.iter().filter_map(|&w| new_index.get(w as usize).copied().flatten()).collect();
    }
    for (_, site, _) in counts.iter_mut() {
        *site = new_index[*site as usize].unwrap_or(*site);
    }
}

/// Whether private pointer `p` indexes its variable with a value known only at run time (a
/// private array that lives in memory, scratch on Gen); constant indices become registers.
fn dynamic_private(m: &ir::Module, f: &ir::Function, p: Value) -> bool {
    let mut v = p;
    for _ in 0..64 {
        let Some(ValueDef::Result(i)) = f.values.get(v).map(|d| d.def) else { return false };
        match &f.insts[i] {
            InstData::AccessChain { base, element, indices, .. } => {
                let is_const = |x: &Value| matches!(f.values.get(*x).map(|d| d.def), Some(ValueDef::Const(_)));
                if element.iter().chain(indices.iter()).any(|x| !is_const(x)) {
                    return true;
                }
                v = *base;
            }
            InstData::Convert { arg, .. } => v = *arg,
            InstData::Variable { .. } => return false,
            // A pointer chosen at run time (select, block parameter, load): memory.
            _ => return !matches!(m.types.get(f.value_type(v)), TypeData::Void),
        }
    }
    true
}

/// What an extended-math instruction costs in ALU instruction issues: one of the EU's two
/// FPUs does extended math (the Gen9 whitepaper), which the model takes to run at a quarter
/// of the ALU rate (an estimate, as the costs below are).
const EXTENDED_MATH: u32 = 4;
/// A precise (IEEE) division: the extended-math reciprocal and a refinement.
const PRECISE_DIVIDE: u32 = EXTENDED_MATH + 4;
/// Precise exponentials and logarithms (and `fmod`): range reduction, the extended-math
/// instruction and a polynomial correction.
const PRECISE_EXP_LOG: u32 = 16;

/// ALU instruction issues per lane-operation of OpenCL.std built-in `opcode` in the model.
/// The guide ("Considering native_ and half_ Versions of Math Built-Ins"): the native
/// versions "are generally supported in hardware and run substantially faster" than the
/// precise ones. So `native_*` and `half_*` are one extended-math instruction; the precise
/// transcendental built-ins add the range reduction and correction their accuracy needs
/// (estimates: square roots 8, exponentials and logarithms 16, trigonometry 24, powers,
/// inverse and hyperbolic functions 32); every other built-in is one instruction.
pub fn builtin_cost(opcode: u32) -> u32 {
    let Some(op) = spirv::OpenclStd100Op::from_u32(opcode) else { return 1 };
    let name = format!("{op:?}");
    if name.starts_with("native_") || name.starts_with("half_") {
        return EXTENDED_MATH;
    }
    match name.as_str() {
        "sqrt" | "rsqrt" => PRECISE_DIVIDE,
        "exp" | "exp2" | "exp10" | "expm1" | "log" | "log2" | "log10" | "log1p" | "logb" | "fmod" | "remainder"
        | "remquo" => PRECISE_EXP_LOG,
        "sin" | "cos" | "tan" | "sincos" | "sinpi" | "cospi" | "tanpi" => 24,
        "pow" | "powr" | "pown" | "rootn" | "hypot" | "cbrt" | "atan2" | "atan2pi" | "asin" | "acos" | "atan"
        | "asinpi" | "acospi" | "atanpi" | "sinh" | "cosh" | "tanh" | "asinh" | "acosh" | "atanh" | "erf" | "erfc"
        | "lgamma" | "lgamma_r" | "tgamma" => 32,
        _ => 1,
    }
}

/// The most sites one site waits for; beyond it the nearest are kept (sites are numbered in
/// program order).
const MAX_WAITS: usize = 16;

/// The dependency chains of one block's messages (`GenSite::waits_for`): for each value
/// computed in the block so far, the sites whose results it is computed from.
#[derive(Default)]
struct Chains {
    from: HashMap<Value, Vec<u32>>,
    /// A private variable kept in registers: the sites of the value last stored to it.
    through: HashMap<Value, Vec<u32>>,
    /// The sites the current instruction's operands come from.
    operands: Vec<u32>,
}

impl Chains {
    /// Instruction `i` of the block: its operands' sites, which its result (if it is no
    /// message) comes from too.
    fn start(&mut self, f: &ir::Function, wa: &WorkItemAnalysis, i: Inst) {
        let mut ops = Vec::new();
        let d = &f.insts[i];
        d.for_each_operand(|v| ops.extend(self.from.get(&v).into_iter().flatten()));
        match d {
            InstData::Load { ptr, .. } if wa.reg_candidates.contains(ptr) => {
                ops.extend(self.through.get(ptr).into_iter().flatten())
            }
            InstData::Store { ptr, value, .. } if wa.reg_candidates.contains(ptr) => {
                let sites = self.from.get(value).cloned().unwrap_or_default();
                self.through.insert(*ptr, sites);
            }
            _ => {}
        }
        ops.sort_unstable();
        ops.dedup();
        if ops.len() > MAX_WAITS {
            ops.drain(..ops.len() - MAX_WAITS);
        }
        if let Some(r) = f.inst_result[i] {
            self.from.insert(r, ops.clone());
        }
        self.operands = ops;
    }

    /// Instruction `i` is message `site`: a load's, an atomic's or an image read's result
    /// comes from it alone.
    fn site(&mut self, f: &ir::Function, i: Inst, site: u32, kind: AccessKind) {
        if let (Some(r), true) = (f.inst_result[i], kind != AccessKind::Store) {
            self.from.insert(r, vec![site]);
        }
    }
}

/// Whether `v` is the same for every work-item of a launch: computed only from the
/// kernel's arguments, constants and module-scope variables' addresses, through block
/// parameters (no work-item id, no loaded value).
fn launch_invariant(f: &ir::Function, v: Value) -> bool {
    let entry = f.layout.blocks.first().copied();
    let mut todo = vec![v];
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = todo.pop() {
        if !seen.insert(v) {
            continue;
        }
        if seen.len() > 64 {
            return false;
        }
        match f.values.get(v).map(|d| d.def) {
            Some(ValueDef::Const(_) | ValueDef::Global(_)) => {}
            Some(ValueDef::Param(b, _)) if Some(b) == entry => {}
            // A block parameter: what every branch to the block passes (the inlined body's
            // parameters are the kernel's arguments passed on).
            Some(ValueDef::Param(b, k)) => {
                for &pb in &f.layout.blocks {
                    let Some(t) = f.layout.last_inst(pb) else { continue };
                    for call in f.insts[t].successors().into_iter().filter(|c| c.block == b) {
                        match call.args.get(k as usize) {
                            Some(&a) => todo.push(a),
                            None => return false,
                        }
                    }
                }
            }
            Some(ValueDef::Result(i)) => match &f.insts[i] {
                d @ (InstData::AccessChain { .. }
                | InstData::Convert { .. }
                | InstData::Binary { .. }
                | InstData::Unary { .. }
                | InstData::Compare { .. }
                | InstData::Select { .. }
                | InstData::ExtInst { .. }) => d.for_each_operand(|x| todo.push(x)),
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

/// The value of integer constant `v`, if it is one.
fn const_int(m: &ir::Module, f: &ir::Function, v: Value) -> Option<u64> {
    match f.values.get(v)?.def {
        ValueDef::Const(c) => match m.constants.get(c)? {
            ir::ConstData::Int { bits, .. } => Some(*bits),
            _ => None,
        },
        _ => None,
    }
}

/// A site's access and what its `gen.count` counts.
type Count = (Inst, u32, GenAccess);

/// The sites and blocks of kernel function `f` (blocks in layout order, sites in program
/// order), and the `gen.count` each site's access gets.
pub fn plan(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis, simd: u32) -> (GenKernelInfo, Vec<Count>) {
    let mut p = GenKernelInfo::default();
    let mut counts = Vec::new();
    let types = &m.types;
    let loc = |i: Inst| -> Option<SourceLoc> { f.inst_locs[i] };
    let mut chain = Chains::default();
    let addressing = block_addressing(f);
    for &b in &f.layout.blocks {
        let mut blk = GenBlock::default();
        chain.from.clear();
        chain.through.clear();
        // The site of each sub-group block access of the block, by its base pointer.
        let mut block_sites: HashMap<Value, u32> = HashMap::new();
        for &i in &f.layout.insts[b] {
            let d = &f.insts[i];
            if blk.loc.is_none() {
                blk.loc = loc(i);
            }
            if d.is_instrumentation() {
                continue;
            }
            chain.start(f, wa, i);
            let res_ty = f.inst_result[i].map(|r| f.value_type(r));
            let lanes = |t: Option<ir::Type>| t.map_or(1, |t| types.lanes(t).max(1));
            let float_bits = |t: Option<ir::Type>| -> Option<u16> {
                let t = t?;
                let e = match types.get(t) {
                    TypeData::Vector { elem, .. } => *elem,
                    _ => t,
                };
                match types.get(e) {
                    TypeData::Float { bits } => Some(*bits),
                    _ => None,
                }
            };
            let mut add_flops = |n: u32| match float_bits(res_ty) {
                Some(64) => blk.flops_f64 += n,
                Some(_) => blk.flops += n,
                None => {}
            };
            match d {
                InstData::Variable { .. } => continue,
                // Work-item state (`passes::barriers`): a Gen thread keeps these values in
                // registers across a barrier; the resume point is no instruction there.
                InstData::Load { ptr, .. } | InstData::Store { ptr, .. } if f.is_state_value_address(*ptr) => continue,
                InstData::BarrierResume { .. } => continue,
                InstData::Binary { op, .. } => {
                    use ir::BinaryOp::*;
                    if matches!(op, FAdd | FSub | FMul | FDiv | FRem | FMod) {
                        add_flops(lanes(res_ty));
                    }
                }
                InstData::ExtInst { opcode, .. } => {
                    use spirv::OpenclStd100Op as Op;
                    let per = if matches!(Op::from_u32(*opcode), Some(Op::fma | Op::mad)) { 2 } else { 1 };
                    add_flops(per * lanes(res_ty));
                }
                _ => {}
            }
            if let InstData::Group { scope: ir::Scope::SubGroup, op, .. } = d {
                if op.is_shuffle() {
                    blk.shuffles += 1;
                }
            }
            blk.instructions += match d {
                // A sub-group block access is one message of the block (a header and a send,
                // `GenSite::messages_per_execution` of them), its lanes' addresses none.
                _ if addressing.contains(&i) => 0,
                InstData::Load { block: Some(part), .. } | InstData::Store { block: Some(part), .. } => {
                    if part.part == 0 {
                        2
                    } else {
                        0
                    }
                }
                InstData::Store { value, .. } => lanes(Some(f.value_type(*value))),
                // A shuffle: the lanes' source registers as addresses, then one indirect
                // move per 32 bits of each component (register traffic, no message).
                InstData::Group { scope: ir::Scope::SubGroup, op, .. } => {
                    let words = res_ty.map_or(1, |t| types.size_of(types.scalar_of(t)).div_ceil(4) as u32);
                    lanes(res_ty) * words * sub_group_cost(*op, simd)
                }
                InstData::ExtInst { opcode, .. } => lanes(res_ty) * builtin_cost(*opcode),
                InstData::Binary { op: ir::BinaryOp::FDiv, .. } => lanes(res_ty) * PRECISE_DIVIDE,
                InstData::Binary { op: ir::BinaryOp::FRem | ir::BinaryOp::FMod, .. } => lanes(res_ty) * PRECISE_EXP_LOG,
                _ => lanes(res_ty),
            };
            let block = p.blocks.len() as u32;
            // An image read or write: one message of the sampler / data port per execution,
            // counted as a global access of the pixel each lane reads or writes (its size
            // the bound image's, known at run time: `bytes_per_lane` 0, the useful bytes
            // counted); its lines are those of the lanes' pixels.
            if let InstData::Image { op, image, sampler, coord, .. } = d {
                let kind = match op {
                    ir::ImageOp::Sample | ir::ImageOp::Read => AccessKind::Load,
                    ir::ImageOp::Write => AccessKind::Store,
                    _ => continue,
                };
                let Some(coord) = *coord else { continue };
                let access = GenAccess::Image { image: *image, sampler: *sampler, coord };
                counts.push((i, p.sites.len() as u32, access));
                chain.site(f, i, p.sites.len() as u32, kind);
                p.sites.push(GenSite {
                    block,
                    space: AddressSpace::Global,
                    kind,
                    bytes_per_lane: 0,
                    loc: loc(i),
                    waits_for: chain.operands.clone(),
                    same_address: SameAddress::Unknown,
                    lane_strides: None,
                    sub_group_block: false,
                });
                continue;
            }
            // The messages of the instruction: (pointer, bytes per lane, kind). A memory copy
            // of a constant size (a struct assignment, or what LLVM made a memcpy) is a load
            // of its bytes and a store of them that waits for it.
            let size = |t: ir::Type| types.access_size(t).max(1) as u32;
            // A part of a sub-group block read or write: the block's one site (at its first
            // part; the others wait and count with it).
            if let InstData::Load { ptr, block: Some(part), .. } | InstData::Store { ptr, block: Some(part), .. } = d {
                let kind = if matches!(d, InstData::Load { .. }) { AccessKind::Load } else { AccessKind::Store };
                let value_ty = match d {
                    InstData::Store { value, .. } => Some(f.value_type(*value)),
                    _ => res_ty,
                };
                if let Some(base) = block_base(types, f, *ptr) {
                    if part.part > 0 {
                        if let Some(&site) = block_sites.get(&base) {
                            chain.site(f, i, site, kind);
                        }
                        continue;
                    }
                    let site = p.sites.len() as u32;
                    block_sites.insert(base, site);
                    counts.push((i, site, GenAccess::Memory { ptr: base }));
                    chain.site(f, i, site, kind);
                    let space = match types.get(f.value_type(base)) {
                        TypeData::Pointer { space, .. } => *space,
                        _ => AddressSpace::Global,
                    };
                    p.sites.push(GenSite {
                        block,
                        space,
                        kind,
                        bytes_per_lane: value_ty.map_or(1, size) * u32::from(part.parts),
                        loc: loc(i),
                        waits_for: chain.operands.clone(),
                        same_address: SameAddress::Unknown,
                        lane_strides: None,
                        sub_group_block: true,
                    });
                    continue;
                }
            }
            let messages = match d {
                InstData::Load { ptr, .. } => match res_ty {
                    Some(t) => vec![(*ptr, size(t), AccessKind::Load)],
                    None => continue,
                },
                InstData::Store { ptr, value, .. } => vec![(*ptr, size(f.value_type(*value)), AccessKind::Store)],
                InstData::Atomic { ptr, .. } => match types.get(f.value_type(*ptr)) {
                    TypeData::Pointer { pointee, .. } => vec![(*ptr, size(*pointee), AccessKind::Atomic)],
                    _ => continue,
                },
                InstData::CopyMemory { dst, src, size, .. } => match const_int(m, f, *size) {
                    Some(n @ 1..=0xffff_ffff) => {
                        vec![(*src, n as u32, AccessKind::Load), (*dst, n as u32, AccessKind::Store)]
                    }
                    _ => continue,
                },
                _ => continue,
            };
            let mut waits_for = chain.operands.clone();
            for (ptr, bytes_per_lane, kind) in messages {
                if wa.reg_candidates.contains(&ptr) {
                    continue;
                }
                // A generic pointer of known origin is an access to that space (the hardware's
                // compiler resolves it the same way); one of unknown origin is priced as global.
                let (space, generic) = match types.get(f.value_type(ptr)) {
                    TypeData::Pointer { space: AddressSpace::Generic, .. } => {
                        let origin = crate::passes::generic_spaces::origin_space(types, f, ptr);
                        (origin.unwrap_or(AddressSpace::Global), origin.is_none())
                    }
                    TypeData::Pointer { space, .. } => (*space, false),
                    _ => continue,
                };
                if space == AddressSpace::Private && !dynamic_private(m, f, ptr) {
                    continue;
                }
                // One address for the launch only in memory the launch shares: a `__local`
                // pointer argument (or a generic one of unknown origin) is a different block
                // per work-group.
                let shared = !generic && matches!(space, AddressSpace::Global | AddressSpace::Constant);
                let site = p.sites.len() as u32;
                counts.push((i, site, GenAccess::Memory { ptr }));
                chain.site(f, i, site, kind);
                let same_address = if shared && launch_invariant(f, ptr) {
                    SameAddress::Launch
                } else if wa.shape(f, ptr).is_uniform() {
                    SameAddress::Message
                } else {
                    SameAddress::Unknown
                };
                p.sites.push(GenSite {
                    block,
                    space,
                    kind,
                    bytes_per_lane,
                    loc: loc(i),
                    waits_for: waits_for.clone(),
                    same_address,
                    lane_strides: None,
                    sub_group_block: false,
                });
                waits_for.push(site);
            }
        }
        if let Some(t) = f.layout.last_inst(b) {
            blk.divergent_branch = wa.divergent_branches.contains(&t);
        }
        p.blocks.push(blk);
    }
    (p, counts)
}

/// Gen instructions per 32 bits of each component of a sub-group function at SIMD `simd`:
/// a shuffle is an indirect register move, once the lanes' source registers are formed; a
/// reduction or scan takes log2(simd) steps of a shuffle and the operation (the tree the
/// hardware's compiler emits), a clustered reduction as many steps as its cluster has
/// levels at most; a broadcast or `elect` a register region move; a vote or ballot a compare
/// into the flag register and a move out of it.
fn sub_group_cost(op: ir::GroupOp, simd: u32) -> u32 {
    use ir::GroupOp as G;
    let steps = simd.max(2).ilog2();
    match op {
        G::Shuffle | G::ShuffleXor | G::ShuffleUp | G::ShuffleDown => 2,
        G::Reduce(_) | G::InclusiveScan(_) | G::ExclusiveScan(_) | G::ClusteredReduce(_) => 2 * steps,
        G::Broadcast | G::BroadcastFirst | G::Elect => 1,
        G::Any | G::All | G::AllEqual | G::Ballot => 2,
    }
}

/// The instructions of `f` that only serve the parts of sub-group block accesses: their
/// addresses (the front end's `&base[part * size + lid]` of each part), a block read's
/// parts put together as its vector, a block write's data taken apart. The hardware's block
/// message computes no per-lane address and reads or writes the registers of the vector.
fn block_addressing(f: &ir::Function) -> std::collections::HashSet<Inst> {
    let insts: Vec<Inst> = f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter().copied()).collect();
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    for &i in &insts {
        f.insts[i].for_each_operand(|v| users.entry(v).or_default().push(i));
    }
    let addresses_part = |u: Inst, r: Value| match &f.insts[u] {
        InstData::Load { ptr, block: Some(_), .. } => *ptr == r,
        InstData::Store { ptr, value, block: Some(_), .. } => *ptr == r && *value != r,
        _ => false,
    };
    let stores_part =
        |u: Inst, r: Value| matches!(&f.insts[u], InstData::Store { value, block: Some(_), .. } if *value == r);
    let is_part_load = |v: &Value| match f.values.get(*v).map(|d| d.def) {
        Some(ValueDef::Result(d)) => matches!(f.insts[d], InstData::Load { block: Some(_), .. }),
        _ => false,
    };
    let mut only = std::collections::HashSet::new();
    loop {
        let before = only.len();
        for &i in insts.iter().rev() {
            let pure = matches!(
                f.insts[i],
                InstData::WorkItem { .. }
                    | InstData::Binary { .. }
                    | InstData::Convert { .. }
                    | InstData::AccessChain { .. }
            );
            let Some(r) = f.inst_result[i].filter(|_| !only.contains(&i)) else { continue };
            let uses = users.get(&r).map_or(&[][..], Vec::as_slice);
            let plumbing = match &f.insts[i] {
                // The components of the data of a block write, and a block read's parts as
                // its vector: the registers the block message reads or writes.
                InstData::ExtractElement { .. } => !uses.is_empty() && uses.iter().all(|&u| stores_part(u, r)),
                InstData::Construct { parts } => !parts.is_empty() && parts.iter().all(is_part_load),
                _ => pure && !uses.is_empty() && uses.iter().all(|&u| addresses_part(u, r) || only.contains(&u)),
            };
            if plumbing {
                only.insert(i);
            }
        }
        if only.len() == before {
            return only;
        }
    }
}

/// The base of a part of a sub-group block access through `ptr`: the pointer the front end
/// indexed (`&base[part * size + lid]`, an access chain of one element index) when it is a
/// `__global` or `__constant` one (SLM and private blocks are counted as their parts).
fn block_base(types: &ir::TypeTable, f: &ir::Function, ptr: Value) -> Option<Value> {
    let ValueDef::Result(def) = f.values.get(ptr)?.def else { return None };
    let InstData::AccessChain { base, element: Some(_), indices, .. } = &f.insts[def] else { return None };
    let global = matches!(
        types.get(f.value_type(*base)),
        TypeData::Pointer { space: AddressSpace::Global | AddressSpace::Constant, .. }
    );
    (indices.is_empty() && global).then_some(*base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{run_pipeline, Pass};

    const SOURCE: &str = "__kernel void k(__global const int *a, __global int *out, __local int *l) {\n\
                          int g = get_global_id(0);\n\
                          l[get_local_id(0)] = a[g];\n\
                          barrier(CLK_LOCAL_MEM_FENCE);\n\
                          if (g & 1)\n\
                              out[g] = l[0] + a[g + 1];\n\
                          }";

    /// The kernel of `SOURCE` inlined and instrumented as a Gen variant's last passes do.
    fn instrumented() -> ir::Module {
        instrumented_source(SOURCE).0
    }

    /// The kernel of `src` inlined and instrumented, and the module as it prints.
    fn instrumented_source(src: &str) -> (ir::Module, String) {
        let mut m = crate::compile_source(src, "", &crate::Target::default()).expect("the test kernel builds").module;
        let passes = [
            Pass { name: "inline_kernel_calls", run: |m| crate::vectorize::inline_kernel_calls(m, 256) },
            Pass { name: "gen_instrument", run: |m| run(m, false, 16) },
        ];
        run_pipeline(&mut m, &passes).expect("instrumented and valid");
        let text = m.to_string();
        (m, text)
    }

    fn kernel_text(m: &ir::Module) -> String {
        m.display_function(m.kernels[0].func).to_string()
    }

    /// Accesses through generic pointers are priced as the space the pointer comes from;
    /// one of unknown origin (loaded from a program-scope variable) as `__global`.
    #[test]
    fn generic_accesses_take_the_space_of_their_origin() {
        let src = "int *kept;\n\
                   int get(int *p) { return *p; }\n\
                   kernel void k(global int *out, local int *l) {\n\
                   size_t i = get_local_id(0);\n\
                   l[i] = (int)i;\n\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   out[i] = get(l + (i ^ 1)) + get(out + i + 1) + get(kept); }";
        let mut m = crate::compile_source(src, "-cl-std=CL3.0", &crate::Target::default()).expect("builds").module;
        let passes = [
            Pass { name: "inline_kernel_calls", run: |m| crate::vectorize::inline_kernel_calls(m, 256) },
            Pass { name: "gen_instrument", run: |m| run(m, false, 16) },
        ];
        run_pipeline(&mut m, &passes).expect("instrumented and valid");
        let k = m.kernels.iter().find(|k| k.info.name == "k").expect("kernel k");
        let plan = k.info.gen.as_ref().expect("a plan");
        let spaces: Vec<AddressSpace> = plan.sites.iter().map(|s| s.space).collect();
        let locals = spaces.iter().filter(|s| **s == AddressSpace::Local).count();
        // l's store and the load through `l + (i ^ 1)`; the loads through `out + i + 1`, the
        // load of `kept` and through it, and out's store are global.
        assert_eq!(locals, 2, "{spaces:?}");
        assert!(spaces.iter().all(|s| matches!(s, AddressSpace::Local | AddressSpace::Global)), "{spaces:?}");
    }

    #[test]
    fn every_block_and_message_is_instrumented() {
        let m = instrumented();
        let text = kernel_text(&m);
        let plan = m.kernels[0].info.gen.as_ref().expect("a plan");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        // Every block starts with its gen.block, numbered in layout order.
        let blocks: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].starts_with("block")).collect();
        assert_eq!(blocks.len(), plan.blocks.len(), "{text}");
        for (id, &k) in blocks.iter().enumerate() {
            assert_eq!(lines[k + 1], format!("gen.block {id}"), "{text}");
        }
        // Every global and local load and store follows the gen.count of its site, whose
        // operand is its pointer; sites in program order.
        let mut site = 0;
        for (k, line) in lines.iter().enumerate() {
            let ptr = match line.split_once(" = load ").or_else(|| line.split_once("store ")) {
                Some((_, rest)) if line.contains(" = load ") => rest.split(',').next().unwrap(),
                Some((_, rest)) => rest.split(", ").nth(1).unwrap(),
                None => continue,
            };
            assert_eq!(lines[k - 1], format!("gen.count {site}, {ptr}"), "{text}");
            site += 1;
        }
        assert_eq!(site, plan.sites.len(), "{text}");
        assert_eq!(text.matches("gen.count").count(), plan.sites.len(), "{text}");
        // The plan as the module prints it: the entry (the inlined call), then a's load and
        // l's store (of the loaded value: it waits for the load), then in the branch l's
        // load (of l[0]: one address for every lane), a's second load (independent: both in
        // flight together) and out's store of their sum.
        let module = m.to_string();
        let printed: Vec<&str> = module.lines().filter(|l| l.starts_with("  gen.")).collect();
        assert_eq!(
            printed,
            [
                "  gen.blocks 5",
                "  gen.site 0: block 1, global load, 4 bytes, steps 4, 0, 0 bytes per local id",
                "  gen.site 1: block 1, local store, 4 bytes, waits for 0",
                "  gen.site 2: block 2, local load, 4 bytes, one address per message",
                "  gen.site 3: block 2, global load, 4 bytes, steps 4, 0, 0 bytes per local id",
                "  gen.site 4: block 2, global store, 4 bytes, waits for 2 3, steps 4, 0, 0 bytes per local id",
            ],
            "{module}"
        );
        assert!(plan.blocks.iter().any(|blk| blk.divergent_branch), "the branch on g & 1 diverges");
    }

    /// A struct assignment is a memory copy: a load of its bytes and a store of them that
    /// waits for the load, both counted before the copy (the validator accepts the two counts
    /// of one access in a row).
    #[test]
    fn a_memory_copy_is_a_load_and_a_store() {
        let src = "typedef struct { float v[16]; } S;\n\
                   __kernel void k(__global S *d, __global const S *s) { d[get_global_id(0)] = s[get_global_id(0)]; }";
        let (m, module) = instrumented_source(src);
        let printed: Vec<&str> = module.lines().filter(|l| l.starts_with("  gen.site")).collect();
        assert_eq!(
            printed,
            [
                "  gen.site 0: block 1, global load, 64 bytes, steps 64, 0, 0 bytes per local id",
                "  gen.site 1: block 1, global store, 64 bytes, waits for 0, steps 64, 0, 0 bytes per local id"
            ],
            "{module}"
        );
        let text = kernel_text(&m);
        assert!(text.contains("copy_memory"), "{text}");
    }

    /// What the compiler can tell of the lanes sharing an atomic's address: one counter of
    /// the launch, one per work-group (uniform in the thread), or nothing (a histogram).
    #[test]
    fn atomics_know_which_lanes_share_their_address() {
        let src = "__kernel void k(__global int *c, __global const int *in) {\n\
                   atomic_inc(&c[0]);\n\
                   atomic_inc(&c[get_group_id(0) + 1]);\n\
                   atomic_inc(&c[in[get_global_id(0)] & 15]); }";
        let (_, module) = instrumented_source(src);
        let printed: Vec<&str> = module.lines().filter(|l| l.starts_with("  gen.site")).collect();
        assert_eq!(
            printed,
            [
                "  gen.site 0: block 1, global atomic, 4 bytes, one address per launch, steps 0, 0, 0 bytes per local id",
                "  gen.site 1: block 1, global atomic, 4 bytes, one address per message, steps 0, 0, 0 bytes per local id",
                "  gen.site 2: block 1, global load, 4 bytes, steps 4, 0, 0 bytes per local id",
                "  gen.site 3: block 1, global atomic, 4 bytes, waits for 2",
            ],
            "{module}"
        );
    }

    /// The `gen.count` of plan site `site` in `f`.
    fn count_of_site(f: &ir::Function, site: u32) -> Inst {
        f.layout
            .blocks
            .iter()
            .flat_map(|&b| f.layout.insts[b].iter().copied())
            .find(|&i| matches!(f.insts[i], InstData::GenCount { site: s, .. } if s == site))
            .unwrap_or_else(|| panic!("site {site} is counted"))
    }

    #[test]
    fn a_site_without_its_count_is_invalid() {
        let mut m = instrumented();
        let kf = m.kernels[0].func;
        let f = &mut m.functions[kf];
        let count = count_of_site(f, 3);
        f.remove_inst(count);
        let errors = ir::validate::validate(&m).expect_err("a site without its gen.count");
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(text.iter().any(|e| e.contains("site 3 of the Gen plan has 0 gen.count instructions")), "{text:?}");
    }

    #[test]
    fn counts_must_precede_their_access_and_belong_to_a_plan() {
        // A gen.count moved away from its access.
        let mut m = instrumented();
        let kf = m.kernels[0].func;
        let f = &mut m.functions[kf];
        let count = count_of_site(f, 0);
        let b = f.layout.inst_block[count].unwrap();
        f.remove_inst(count);
        let t = f.terminator(b).unwrap();
        f.layout.insert_inst_before(t, count);
        let errors = ir::validate::validate(&m).expect_err("misplaced");
        assert!(errors.iter().any(|e| e.message.contains("gen.count 0 is not followed by the access it counts")));
        // Instrumentation left in a kernel without a plan.
        let mut m = instrumented();
        m.kernels[0].info.gen = None;
        let errors = ir::validate::validate(&m).expect_err("no plan");
        assert!(errors.iter().any(|e| e.message.contains("no instrumented kernel")), "{errors:?}");
    }

    #[test]
    fn too_many_messages_are_refused() {
        let body: String = (0..MAX_SITES + 1).map(|j| format!("s += a[{j} * 3 + g];\n")).collect();
        let src = format!(
            "__kernel void k(__global const int *a, __global int *out) {{ int g = get_global_id(0); int s = 0;\n\
             {body} out[g] = s; }}"
        );
        let mut m = crate::compile_source(&src, "", &crate::Target::default()).expect("builds").module;
        crate::vectorize::inline_kernel_calls(&mut m, 256).unwrap();
        let err = run(&mut m, false, 16).expect_err("refused");
        assert!(err.contains(&format!("{} memory messages after inlining", MAX_SITES + 2)), "{err}");
    }

    /// A site's address as steps per local id of each dimension, a kernel argument read at
    /// launch where the row length is one (`gen_strides`); none for a product of two ids or
    /// a loaded index. The kernel asks only for global ids: any shape computes the same.
    #[test]
    fn two_dimensional_addresses_have_steps_per_local_id() {
        let src = "__kernel void k(__global float *out, __global const int *idx, int n) {\n\
                   int x = get_global_id(0), y = get_global_id(1);\n\
                   out[y * n + x] = 1.0f;\n\
                   out[x * 3 + y * 64] = 2.0f;\n\
                   out[x * y] = 3.0f;\n\
                   out[idx[x]] = 4.0f; }";
        let (_, module) = instrumented_source(src);
        let printed: Vec<&str> = module.lines().filter(|l| l.starts_with("  gen.")).collect();
        assert_eq!(
            printed,
            [
                "  gen.blocks 3",
                "  gen.site 0: block 1, global store, 4 bytes, steps 4, 4*Arg(2), 0 bytes per local id",
                "  gen.site 1: block 1, global store, 4 bytes, steps 12, 256, 0 bytes per local id",
                "  gen.site 2: block 1, global store, 4 bytes",
                "  gen.site 3: block 1, global load, 4 bytes, steps 4, 0, 0 bytes per local id",
                "  gen.site 4: block 1, global store, 4 bytes, waits for 3",
                "  gen.shape_free",
            ],
            "{module}"
        );
    }

    /// A register tile indexed by loop counters (`acc[i][j]` in loops clang keeps, 256
    /// bytes per work-item with `a` and `b`): in registers at SIMD8, where the lanes' copies
    /// fit three quarters of the GRF, so its accesses are no messages; scratch at SIMD16.
    #[test]
    fn a_register_tile_is_registers_where_it_fits_and_scratch_where_not() {
        let src = "#define T 8\n\
                   __kernel void k(__global const float *A, __global float *C, int n) {\n\
                   float acc[T][T]; int g = get_global_id(0);\n\
                   for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) acc[i][j] = 0.0f;\n\
                   for (int k = 0; k < n; k++) for (int i = 0; i < T; i++) for (int j = 0; j < T; j++)\n\
                   acc[i][j] += A[k * T + i] * A[g + j];\n\
                   for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) C[(g * T + i) * T + j] = acc[i][j]; }";
        let mut module = crate::compile_source(src, "", &crate::Target::default()).expect("builds").module;
        let inline = [Pass { name: "inline_kernel_calls", run: |m| crate::vectorize::inline_kernel_calls(m, 256) }];
        run_pipeline(&mut module, &inline).expect("inlined");
        let f = &module.functions[module.kernels[0].func];
        let (arrays, bytes) = dynamic_private_arrays(&module, f);
        assert!(!arrays.is_empty() && bytes >= 256, "{bytes} bytes of {arrays:?}");
        let private_sites = |simd: u32| {
            let mut m = module.clone();
            let passes = [Pass {
                name: "gen_instrument",
                run: if simd == 8 { |m| run(m, false, 8) } else { |m| run(m, false, 16) },
            }];
            run_pipeline(&mut m, &passes).expect("instrumented and valid");
            let plan = m.kernels[0].info.gen.clone().expect("a plan");
            plan.sites.iter().filter(|s| s.space == AddressSpace::Private).count()
        };
        assert!(crate::gen_abi::private_arrays_in_registers(bytes, 8), "{bytes} B at SIMD8");
        assert_eq!(private_sites(8), 0, "in registers at SIMD8");
        assert!(!crate::gen_abi::private_arrays_in_registers(bytes, 16));
        assert!(private_sites(16) > 0, "scratch at SIMD16");
    }
}
