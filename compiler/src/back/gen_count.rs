//! Gen-instrumented builds: a kernel vectorized at the Gen SIMD width that counts its
//! messages and blocks in generated code (the contract is [`crate::gen_abi`]).
//!
//! - [`GenSource`]: what a Gen device's program build keeps to compile a kernel's
//!   instrumented variant lazily, per SIMD width and lane layout, at the first launch that
//!   needs it (the CTS builds thousands of programs that never run at every width).
//! - [`plan`]: the sites (every load, store and atomic that is a memory message: not the
//!   private scalars that live in registers, nor private arrays indexed by constants) and the
//!   blocks of the kernel, with the static estimates of [`GenBlock`].
//! - Counting (`FnLower::gen_block`, `FnLower::gen_access`, hooked into the lowering of each
//!   block and memory instruction): per message the active lanes of the current mask, the
//!   useful bytes, and by the rules of `gen_abi`: distinct 64-byte lines (global, constant,
//!   private scratch) or SLM cycles, conflict cycles and the worst bank ways (local). A
//!   uniform address is one line (or the lines its bytes span); a strided access with a
//!   scalar base and a contiguous mask has a closed form (the first and last line for strides
//!   up to 64 bytes; one line per lane for multiples of 64 whose lanes do not cross a line);
//!   anything else counts distinct lines among the lanes' addresses with AVX-512 `vpconflictd`
//!   when the host has it (up to 16 values), else comparing each lane with the earlier ones.
//!   Counters are added to the array at `ctx.gen_counters` (passed to the work-item function
//!   as a `noalias` parameter), so a device that gives all the
//!   hardware threads of a work-group the same zeroed array reads the work-group's sum
//!   (`worst_bank_ways` is a maximum, kept as one).
//! - [`build_linear_entry`]: the work-group entry of a variant whose lanes are consecutive
//!   linear local ids (a hardware thread spanning rows), and `FnLower::linear_work_item`, the
//!   ids of such lanes.

use super::gen_helpers::{self, Helper, Ops};
use super::llvm::{as_ptr, bail, gep, Emitter, FnLower, Val, R};
use super::target::HostTarget;
use crate::gen_abi::{self, site_word, AccessKind, GenBlock, GenKernelInfo, GenSite, SourceLoc};
use crate::ir::{self, Block, Inst, InstData, TypeData, Value, ValueDef, WorkItemQuery};
use crate::kernel_info::AddressSpace;
use crate::vectorize::analysis::{Shape, WorkItemAnalysis};
use crate::{GenBuild, NativeKernel, NativeProgram, Target, Vectorizer};
use inkwell::types::VectorType;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const SITE_WORDS: u32 = gen_abi::SITE_WORDS as u32;
const BLOCK_WORDS: u32 = gen_abi::BLOCK_WORDS as u32;
// A site's counters (`gen_abi::site_word`).
const LINES: usize = site_word::L3_LINES;
const SLM_CYCLES: usize = site_word::SLM_CYCLES;
const SLM_CONFLICTS: usize = site_word::SLM_CONFLICT_CYCLES;
const WORST_WAYS: usize = site_word::WORST_BANK_WAYS;
/// The most counters one vector addition of [`FnLower::gen_flush`] updates.
const ADDS_PER_VECTOR: usize = 8;

// ------------------------------------------------------------------------------------------
// Lazy variants

/// A compiled one-kernel program, or why the kernel cannot run so.
type Variant = Result<Arc<NativeProgram>, String>;

/// A Gen device's program: the module and target its kernels' instrumented variants are
/// compiled from, and the variants compiled so far.
pub struct GenSource {
    module: ir::Module,
    target: Target,
    /// (kernel name, build) -> the one-kernel program, or why the kernel cannot run so.
    variants: Mutex<HashMap<(String, GenBuild), Variant>>,
}

impl std::fmt::Debug for GenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenSource").finish_non_exhaustive()
    }
}

impl GenSource {
    /// The source of a Gen device's program build (`target.gen` with SIMD 0); `None` for
    /// other targets.
    pub fn for_target(module: &ir::Module, target: &Target) -> Option<Arc<GenSource>> {
        let g = target.gen?;
        (g.simd == 0)
            .then(|| Arc::new(GenSource { module: module.clone(), target: target.clone(), variants: Mutex::default() }))
    }

    pub(crate) fn variant(&self, kernel: &str, build: GenBuild) -> Result<(NativeKernel, Arc<NativeProgram>), String> {
        if ![8, 16, 32].contains(&build.simd) {
            return Err(format!("SIMD width {} is not 8, 16 or 32", build.simd));
        }
        let key = (kernel.to_string(), build);
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        let program = match variants.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = self.compile(kernel, build);
                variants.insert(key, p.clone());
                p
            }
        }?;
        let k = program.kernel(kernel).ok_or_else(|| format!("kernel `{kernel}` missing from its Gen build"))?;
        Ok((k.clone(), program))
    }

    fn compile(&self, kernel: &str, build: GenBuild) -> Variant {
        let mut m = self.module.clone();
        m.kernels.retain(|k| k.info.name == kernel);
        if m.kernels.is_empty() {
            return Err(format!("no kernel `{kernel}`"));
        }
        let target = Target {
            gen: Some(build),
            vectorizer: Vectorizer::Forced { width: build.simd, register_bytes: build.simd * 4 },
            ..self.target.clone()
        };
        let key = format!("{target:?}\n{}", m.describe());
        if let Some(v) = recent_variants::get(&key) {
            return v;
        }
        let v = super::codegen(&m, &target).map_err(|e| e.log);
        recent_variants::put(key, v.clone());
        v
    }
}

/// The variants this process compiled last, by the text of the one-kernel module and target
/// they were compiled from. Programs built again from the same source (the CTS's image
/// suites build one program per format and sampler from a few dozen sources, each then
/// launched at once) reuse the compiled variant instead of running LLVM again: an image
/// kernel's instrumented SIMD16 build takes about a second.
mod recent_variants {
    use super::Variant;
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// How many are kept (each holds its JIT's code).
    const KEPT: usize = 32;

    static RECENT: Mutex<VecDeque<(String, Variant)>> = Mutex::new(VecDeque::new());

    pub(super) fn get(key: &str) -> Option<Variant> {
        let recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
        recent.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    pub(super) fn put(key: String, v: Variant) {
        let mut recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
        if recent.iter().any(|(k, _)| *k == key) {
            return;
        }
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back((key, v));
    }
}

// ------------------------------------------------------------------------------------------
// Sites and blocks

/// The most sites an instrumented build is made for. Beyond it the kernel runs its scalar
/// build on the Gen device, uncounted: a kernel of about a thousand messages in one block
/// (the CTS's basic vector_creation builds dozens) took 11-32 s to compile instrumented,
/// against about 1 s for the CPU device's vectorized build, LLVM's instruction scheduling of
/// one long block growing quadratically with its memory operations.
pub const MAX_SITES: usize = 1024;

/// What the counting code needs to know about a kernel's sites and blocks.
#[derive(Debug, Clone)]
pub struct GenPlan {
    pub sites: Vec<GenSite>,
    pub blocks: Vec<GenBlock>,
    site_of: HashMap<Inst, u32>,
    block_of: HashMap<Block, u32>,
    /// The host has AVX-512 CD (`vpconflictd`).
    conflict: bool,
    /// The target the general counts' helpers are compiled for (`gen_helpers`).
    host: HostTarget,
}

impl GenPlan {
    /// The [`GenKernelInfo`] of a build at `simd` of a kernel of `module` (whose source files
    /// and texts the report shows).
    pub fn info(&self, simd: u32, module: &crate::ir::Module) -> GenKernelInfo {
        let mut info =
            GenKernelInfo { simd, sites: self.sites.clone(), blocks: self.blocks.clone(), ..GenKernelInfo::default() };
        info.set_sources(module);
        info
    }

    /// Words of the counter array (`sites` SiteCounters, `blocks` BlockCounters, then the
    /// image sites' useful bytes: `gen_abi::counter_words`).
    pub fn words(&self) -> usize {
        gen_abi::counter_words(&self.sites, self.blocks.len())
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

/// The sites and blocks of kernel function `f` (after inlining); the same for every lane
/// layout, so that variants of one kernel share the counter layout.
pub fn plan(m: &ir::Module, f: &ir::Function, wa: &WorkItemAnalysis, host: &HostTarget) -> GenPlan {
    let mut p = GenPlan {
        sites: Vec::new(),
        blocks: Vec::new(),
        site_of: HashMap::new(),
        block_of: HashMap::new(),
        conflict: host.features.split(',').any(|x| x == "+avx512cd"),
        host: host.clone(),
    };
    let types = &m.types;
    let loc = |i: Inst| -> Option<SourceLoc> { f.inst_locs[i] };
    for &b in &f.layout.blocks {
        let mut blk = GenBlock::default();
        for &i in &f.layout.insts[b] {
            let d = &f.insts[i];
            if blk.loc.is_none() {
                blk.loc = loc(i);
            }
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
            blk.instructions += match d {
                InstData::Store { value, .. } => lanes(Some(f.value_type(*value))),
                _ => lanes(res_ty),
            };
            // An image read or write: one message of the sampler / data port per execution,
            // counted as a global access of the pixel each lane reads or writes (its size
            // the bound image's, known at run time: `bytes_per_lane` 0, the useful bytes
            // counted); its lines are those of the lanes' pixels (`gen_image_access`).
            if let InstData::Image { op, .. } = d {
                let kind = match op {
                    ir::ImageOp::Sample | ir::ImageOp::Read => AccessKind::Load,
                    ir::ImageOp::Write => AccessKind::Store,
                    _ => continue,
                };
                p.site_of.insert(i, p.sites.len() as u32);
                let block = p.blocks.len() as u32;
                p.sites.push(GenSite { block, space: AddressSpace::Global, kind, bytes_per_lane: 0, loc: loc(i) });
                continue;
            }
            let (ptr, ty, kind) = match d {
                InstData::Load { ptr, .. } => match res_ty {
                    Some(t) => (*ptr, t, AccessKind::Load),
                    None => continue,
                },
                InstData::Store { ptr, value, .. } => (*ptr, f.value_type(*value), AccessKind::Store),
                InstData::Atomic { ptr, .. } => match types.get(f.value_type(*ptr)) {
                    TypeData::Pointer { pointee, .. } => (*ptr, *pointee, AccessKind::Atomic),
                    _ => continue,
                },
                _ => continue,
            };
            if wa.reg_candidates.contains(&ptr) {
                continue;
            }
            let space = match types.get(f.value_type(ptr)) {
                TypeData::Pointer { space, .. } => *space,
                _ => continue,
            };
            if space == AddressSpace::Private && !dynamic_private(m, f, ptr) {
                continue;
            }
            let space = if space == AddressSpace::Generic { AddressSpace::Global } else { space };
            p.site_of.insert(i, p.sites.len() as u32);
            let block = p.blocks.len() as u32;
            p.sites.push(GenSite {
                block,
                space,
                kind,
                bytes_per_lane: types.access_size(ty).max(1) as u32,
                loc: loc(i),
            });
        }
        if let Some(t) = f.layout.last_inst(b) {
            blk.divergent_branch = wa.divergent_branches.contains(&t);
        }
        p.block_of.insert(b, p.blocks.len() as u32);
        p.blocks.push(blk);
    }
    p
}

/// The counting state of a function being lowered: the counters are the array at
/// `ctx.gen_counters`, which the work-group entry passes as the work-item function's last
/// parameter, `noalias`: once inlined, the kernel's memory accesses are known not to touch
/// it (the array is the worker's own, zeroed per work-group by the device), so counting
/// does not keep LLVM from optimising them, and a counter is one add to memory, with no
/// copy per packet.
pub struct GenState<'a, 'ctx> {
    plan: &'a GenPlan,
    /// The counter array.
    counters: PointerValue<'ctx>,
    /// What the counting code knows about the current mask, computed once per block (and
    /// again after a barrier, whose resume point the earlier code does not dominate).
    mask: Option<MaskInfo<'ctx>>,
    /// L3-line counts of the block's strided messages whose closed forms wait for
    /// [`FnLower::gen_flush`].
    pending: Vec<PendingLines<'ctx>>,
    /// The block's additions to site counters (word, value), made together by
    /// [`FnLower::gen_flush`]: the sites of a block have consecutive counters of each kind,
    /// so that a run of them is one vector addition, not one addition to memory each.
    adds: Vec<(u32, IntValue<'ctx>)>,
    /// Where a general count's lanes and mask go for its helper (`gen_helpers::call`): per
    /// number of lanes, one `alloca` of `gen_helpers::slot_words` words in the prologue,
    /// made at the first such count.
    slots: Vec<(u32, PointerValue<'ctx>)>,
}

/// A strided message's L3-line count: its closed form, the condition under which that is
/// exact, and what the general count needs otherwise.
struct PendingLines<'ctx> {
    word: u32,
    ok: IntValue<'ctx>,
    closed: IntValue<'ctx>,
    a0: IntValue<'ctx>,
    stride: i64,
    bytes: u64,
    mask: VectorValue<'ctx>,
    conflict: bool,
}

/// In the entry block of a work-group entry (`b` there): the counter array at
/// `ctx.gen_counters`, which the entry passes to every call of the work-item function as
/// the last argument.
pub(super) fn entry_counter_array<'ctx>(
    e: &Emitter<'ctx, '_>,
    b: &inkwell::builder::Builder<'ctx>,
    ctx: PointerValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let (i8t, i64t) = (e.cx.i8_type(), e.cx.i64_type());
    let ptr = e.cx.ptr_type(inkwell::AddressSpace::default());
    let at_ctx = gep(b, i8t.into(), ctx, &[i64t.const_int(super::llvm::ctx_offsets::GEN_COUNTERS, false)], true)?;
    as_ptr(b.build_load(ptr, at_ctx, "gen.counters")?)
}

/// Facts about a lane mask, shared by the block's sites.
#[derive(Clone, Copy)]
struct MaskInfo<'ctx> {
    mask: VectorValue<'ctx>,
    /// Active lanes (i64) and whether there is any (i64 0 or 1).
    active: IntValue<'ctx>,
    any: IntValue<'ctx>,
    /// The active lanes are one run lo..=hi (i1), and its ends (i64).
    contiguous: IntValue<'ctx>,
    lo: IntValue<'ctx>,
    hi: IntValue<'ctx>,
}

// ------------------------------------------------------------------------------------------
// Counting code

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// Turns on counting (after [`FnLower::enable_vector`]): the counter array is loaded from
    /// the context in the prologue.
    pub fn enable_gen_count(&mut self, plan: &'a GenPlan) -> R<()> {
        if self.vec.is_none() {
            bail!("a Gen-instrumented build must be vectorized");
        }
        // The counter array is the work-item function's last parameter.
        let counters = self.llf.get_last_param().ok_or("no counter parameter")?.into_pointer_value();
        self.gen =
            Some(GenState { plan, counters, mask: None, pending: Vec::new(), adds: Vec::new(), slots: Vec::new() });
        Ok(())
    }

    fn gen_word(&self, word: u32) -> R<PointerValue<'ctx>> {
        let g = self.gen.as_ref().ok_or("not counting")?;
        gep(&self.b, self.i64().into(), g.counters, &[self.i64().const_int(word as u64, false)], true)
    }

    fn gen_add(&self, word: u32, v: IntValue<'ctx>) -> R<()> {
        let p = self.gen_word(word)?;
        let old = self.b.build_load(self.i64(), p, "")?.into_int_value();
        self.b.build_store(p, self.b.build_int_add(old, v, "")?)?;
        Ok(())
    }

    /// Adds `v` to counter `word` at the block's [`Self::gen_flush`].
    fn gen_add_later(&mut self, word: u32, v: IntValue<'ctx>) -> R<()> {
        self.gen.as_mut().ok_or("not counting")?.adds.push((word, v));
        Ok(())
    }

    /// The word of counter `field` (`gen_abi::site_word`) of site `s`.
    fn site_word(&self, s: u32, field: usize) -> R<u32> {
        let sites = self.gen.as_ref().ok_or("not counting")?.plan.sites.len();
        Ok(gen_abi::site_word_index(sites, s as usize, field) as u32)
    }

    fn gen_max(&self, word: u32, v: IntValue<'ctx>) -> R<()> {
        let p = self.gen_word(word)?;
        let old = self.b.build_load(self.i64(), p, "")?.into_int_value();
        self.b.build_store(p, self.umax(old, v)?)?;
        Ok(())
    }

    /// The mask and vector operations of `gen_helpers`, built here.
    fn ops(&self) -> Ops<'_, 'ctx> {
        Ops { b: &self.b, m: &self.e.m, f: self.llf }
    }

    fn umax(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        self.ops().umax(a, b)
    }

    fn mask_bits(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        self.ops().mask_bits(m)
    }

    fn popcount(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        self.ops().popcount(m)
    }

    /// The lanes' addresses of a strided access: lane k at `a0 + k * stride` (what the
    /// work-item analysis proved of the pointer), built from lane 0's scalar address so
    /// that the pointers themselves are never widened to `W x i64`.
    fn strided_addrs(&self, a0: IntValue<'ctx>, stride: i64, n: u32) -> R<VectorValue<'ctx>> {
        let steps: Vec<IntValue<'ctx>> =
            (0..n).map(|k| self.i64().const_int((k as i64).wrapping_mul(stride) as u64, true)).collect();
        let steps = VectorType::const_vector(&steps);
        Ok(self.b.build_int_add(self.splat64(a0, n)?, steps, "")?)
    }

    fn splat64(&self, x: IntValue<'ctx>, n: u32) -> R<VectorValue<'ctx>> {
        self.ops().splat64(x, n)
    }

    /// The facts about the current mask (computed here unless known).
    fn mask_info(&mut self) -> R<MaskInfo<'ctx>> {
        let mask = self.vec.as_ref().ok_or("not in vector mode")?.mask;
        if let Some(m) = self.gen.as_ref().and_then(|g| g.mask).filter(|m| m.mask == mask) {
            return Ok(m);
        }
        let w = mask.get_type().get_size() as u64;
        let i64t = self.i64();
        let active = self.popcount(mask)?;
        let any = self.b.build_int_compare(IntPredicate::NE, active, i64t.const_zero(), "")?;
        let any = self.b.build_int_z_extend(any, i64t, "")?;
        let bits = self.mask_bits(mask)?;
        let it = bits.get_type();
        let f = self.cx().bool_type().const_zero();
        let tz = self.intrinsic("llvm.cttz", &[it.into()], &[bits.into(), f.into()])?.into_int_value();
        let lz = self.intrinsic("llvm.ctlz", &[it.into()], &[bits.into(), f.into()])?.into_int_value();
        let lo = self.b.build_int_cast_sign_flag(tz, i64t, false, "")?;
        let lz = self.b.build_int_cast_sign_flag(lz, i64t, false, "")?;
        let hi = self.b.build_int_sub(i64t.const_int(w - 1, false), lz, "")?;
        // One run: hi - lo + 1 == active.
        let span = self.b.build_int_add(self.b.build_int_sub(hi, lo, "")?, i64t.const_int(1, false), "")?;
        let contiguous = self.b.build_int_compare(IntPredicate::EQ, span, active, "")?;
        let info = MaskInfo { mask, active, any, contiguous, lo, hi };
        if let Some(g) = self.gen.as_mut() {
            g.mask = Some(info);
        }
        Ok(info)
    }

    /// Counts one execution of block `b` under the current mask.
    pub fn gen_block(&mut self, b: Block) -> R<()> {
        let Some(g) = self.gen.as_mut() else { return Ok(()) };
        g.mask = None;
        let Some(&k) = g.plan.block_of.get(&b) else { return Ok(()) };
        let base = g.plan.sites.len() as u32 * SITE_WORDS + k * BLOCK_WORDS;
        let m = self.mask_info()?;
        self.gen_add_later(base, m.any)?;
        self.gen_add_later(base + 1, m.active)
    }

    /// Counts the message of memory instruction `i` (before it is lowered) under the current
    /// mask.
    pub fn gen_access(&mut self, i: Inst) -> R<()> {
        if self.gen.is_some() && crate::passes::inline::is_work_group_barrier(&self.f.insts[i]) {
            self.gen_flush()?;
            if let Some(g) = self.gen.as_mut() {
                g.mask = None;
            }
        }
        let Some(g) = self.gen.as_ref() else { return Ok(()) };
        let Some(&s) = g.plan.site_of.get(&i) else { return Ok(()) };
        let site = g.plan.sites[s as usize].clone();
        let conflict = g.plan.conflict;
        let ptr = match &self.f.insts[i] {
            InstData::Load { ptr, .. } | InstData::Store { ptr, .. } | InstData::Atomic { ptr, .. } => *ptr,
            InstData::Image { image, sampler, coord: Some(coord), .. } => {
                let (image, sampler, coord) = (*image, *sampler, *coord);
                return self.gen_image_access(s, image, sampler, coord, conflict);
            }
            _ => return Ok(()),
        };
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let (w, mask) = (vs.width, vs.mask);
        let shape = vs.wa.shape(self.f, ptr);
        let i64t = self.i64();
        let c64 = |x: u64| i64t.const_int(x, false);
        let bytes = site.bytes_per_lane as u64;

        // Messages, active lanes and useful bytes are the block's (`gen_abi`): only what
        // the addresses decide is counted here.
        let mi = self.mask_info()?;
        let (active, any) = (mi.active, mi.any);

        let uniform_addr = if shape == Shape::Uniform {
            let p = as_ptr(self.get(ptr)?)?;
            Some(self.b.build_ptr_to_int(p, i64t, "")?)
        } else {
            None
        };
        // The lanes' pointers. Their addresses as a vector are made where a count needs them,
        // on the general forms' own branches: the closed forms read lane 0 only, so the hot
        // path of a strided message never widens the pointers to W x i64.
        let pws = if uniform_addr.is_none() { Some(self.get_wide(ptr)?.into_vector_value()) } else { None };
        let addrs_of = |s: &Self, pw: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            Ok(s.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?)
        };

        if site.space != AddressSpace::Local {
            return match (uniform_addr, pws) {
                (Some(a), _) => {
                    let first = self.b.build_right_shift(a, c64(6), false, "")?;
                    let last =
                        self.b.build_right_shift(self.b.build_int_add(a, c64(bytes - 1), "")?, c64(6), false, "")?;
                    let n = self.b.build_int_add(self.b.build_int_sub(last, first, "")?, c64(1), "")?;
                    let lines = self.b.build_int_mul(n, any, "")?;
                    self.gen_add_later(self.site_word(s, LINES)?, lines)
                }
                (None, Some(pw)) => self.gen_lines(self.site_word(s, LINES)?, pw, mi, shape, bytes, conflict),
                _ => bail!("no address"),
            };
        }

        // SLM: 16 banks of 4 bytes. A lane of a wider access (int2, float4, ...) reads or
        // writes `dwords` consecutive dwords, each in its bank (`gen_abi`).
        let write = site.kind != AccessKind::Load;
        let dwords = bytes.div_ceil(4).max(1);
        let requests = self.b.build_int_mul(active, c64(dwords), "")?;
        let ceil16 = self.b.build_right_shift(self.b.build_int_add(requests, c64(15), "")?, c64(4), false, "")?;
        let ways = match pws {
            // One address: one dword per bank for a read; every lane on the same bank for a write.
            None => {
                if write {
                    active
                } else {
                    any
                }
            }
            Some(pw) if dwords > 1 => {
                // Lanes packed end to end (a float4 array indexed by the local id) fill the
                // banks in turn: ceil(requests / 16) ways under a contiguous mask. Otherwise
                // the histogram of every dword of every lane.
                let packed = matches!(shape, Shape::Strided(st) if st.unsigned_abs() == 4 * dwords);
                let distinct = write || matches!(shape, Shape::Strided(st) if st.unsigned_abs() >= 4 * dwords);
                let addrs = addrs_of(self, pw)?;
                let wide = |s: &mut Self| -> R<IntValue<'ctx>> {
                    let (mut all, mut all_mask) = (addrs, mask);
                    for j in 1..dwords {
                        let next = s.b.build_int_add(addrs, s.splat64(c64(4 * j), w)?, "")?;
                        all = s.ops().concat2(all, next)?;
                        all_mask = s.ops().concat2(all_mask, mask)?;
                    }
                    s.bank_ways(all, all_mask, distinct, conflict)
                };
                if packed {
                    self.closed_or(mi.contiguous, ceil16, wide)?
                } else {
                    wide(self)?
                }
            }
            Some(pw) => {
                // Lanes a multiple of 4 bytes apart under a contiguous mask visit the banks
                // in a cycle of 16 / gcd(dword stride, 16): the closed form. Otherwise the
                // bank histogram.
                let period = match shape {
                    Shape::Strided(st) if st != 0 && st % 4 == 0 => {
                        let d = (st / 4).unsigned_abs() % 16;
                        Some(16 / gcd(d, 16))
                    }
                    _ => None,
                };
                match period {
                    Some(p) => {
                        let closed =
                            self.b.build_int_unsigned_div(self.b.build_int_add(active, c64(p - 1), "")?, c64(p), "")?;
                        let ok = mi.contiguous;
                        let Shape::Strided(st) = shape else { bail!("a bank period without a stride") };
                        let p0 = self.packet_base(pw, st)?;
                        let a0 = self.b.build_ptr_to_int(p0, i64t, "")?;
                        self.closed_or(ok, closed, |s| {
                            let addrs = s.strided_addrs(a0, st, w)?;
                            s.bank_ways(addrs, mask, true, conflict)
                        })?
                    }
                    None => {
                        let distinct = write || matches!(shape, Shape::Strided(st) if st.unsigned_abs() >= 4);
                        let addrs = addrs_of(self, pw)?;
                        self.bank_ways(addrs, mask, distinct, conflict)?
                    }
                }
            }
        };
        let cycles = self.umax(ceil16, ways)?;
        self.gen_add_later(self.site_word(s, SLM_CYCLES)?, cycles)?;
        let conflicts = self.b.build_int_sub(cycles, ceil16, "")?;
        self.gen_add_later(self.site_word(s, SLM_CONFLICTS)?, conflicts)?;
        self.gen_max(self.site_word(s, WORST_WAYS)?, ways)
    }

    /// The most dwords (reads; all lanes' dwords are distinct when `distinct`) or lanes
    /// (`distinct` for writes) one of the 16 SLM banks gets from the lanes of `mask`.
    fn bank_ways(
        &mut self,
        addrs: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        distinct: bool,
        conflict: bool,
    ) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        self.call_helper(Helper::Banks { w, distinct, conflict }, addrs, mask)
    }

    /// Calls the shared `helper` with the lanes' addresses `addrs` and `mask`.
    fn call_helper(&mut self, helper: Helper, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let lanes = mask.get_type().get_size();
        let slot = match self.gen.as_ref().and_then(|g| g.slots.iter().find(|(n, _)| *n == lanes)) {
            Some(&(_, s)) => s,
            None => {
                let words = gen_helpers::slot_words(lanes);
                let s = self.pb.build_array_alloca(self.i64(), self.i32().const_int(words, false), "gen.lanes")?;
                self.gen.as_mut().ok_or("not counting")?.slots.push((lanes, s));
                s
            }
        };
        let host = &self.gen.as_ref().ok_or("not counting")?.plan.host;
        gen_helpers::call(&self.ops(), helper, host, slot, addrs, mask)
    }

    /// The L3 lines and useful bytes of image access site `s`: a sampled read of one image
    /// and sampler counts the lines of the pixels its filter loads
    /// (`imagelib::softcl_image_sampled_lines`: a linear filter's 2, 4 or 8 corners per
    /// lane); other accesses count each lane's pixel address
    /// (`imagelib::softcl_image_texel_address`, for every lane: inactive ones are masked
    /// off by the count) by the general form. The useful bytes are the active lanes' pixel
    /// sizes, which the image bound at run time decides (`gen_abi::useful_bytes_word`).
    fn gen_image_access(
        &mut self,
        s: u32,
        image: Value,
        sampler: Option<Value>,
        coord: Value,
        conflict: bool,
    ) -> R<()> {
        let vs = self.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let mi = self.mask_info()?;
        let i64t = self.i64();
        let word = {
            let plan = self.gen.as_ref().ok_or("not counting")?.plan;
            gen_abi::useful_bytes_word(&plan.sites, plan.blocks.len(), s as usize)
                .ok_or("an image site without a useful-bytes word")?
        };
        // Uniform operands in their scalar form, varying ones wide (lane k taken below).
        let mut form = |v: Value| if self.is_uniform(v) { self.get(v) } else { self.get_wide(v) };
        let (img, smp, crd) = (form(image)?, sampler.map(&mut form).transpose()?, form(coord)?);
        // A sampled read of one image and sampler: the lines of its filter's pixels, counted
        // by the host (a linear filter loads 2, 4 or 8 pixels per lane).
        if let Some(sampler) = sampler {
            if let Some(lines) = self.packet_sampled_lines(image, sampler, coord, mi.mask)? {
                let pixel = self.image_pixel_bytes(img)?;
                let useful = self.b.build_int_mul(mi.active, pixel, "")?;
                self.gen_add_later(self.site_word(s, LINES)?, lines)?;
                return self.gen_add_later(word as u32, useful);
            }
        }
        let (addrs, useful) = if let Some((addrs, pixel)) = self.packet_texel_addresses(image, sampler, coord)? {
            (addrs, self.b.build_int_mul(mi.active, pixel, "")?)
        } else {
            let uniform_pixel = if self.is_uniform(image) { Some(self.image_pixel_bytes(img)?) } else { None };
            let mut addrs = i64t.vec_type(w).get_undef();
            let mut useful = i64t.const_zero();
            for k in 0..w {
                let kc = self.i32().const_int(k as u64, false);
                let lane = |s: &Self, v: Value, x: Val<'ctx>| -> R<Val<'ctx>> {
                    if s.is_uniform(v) {
                        Ok(x)
                    } else {
                        s.lane_of(x, s.f.value_type(v), kc)
                    }
                };
                let li = lane(self, image, img)?;
                let ls = match (sampler, smp) {
                    (Some(v), Some(x)) => Some(lane(self, v, x)?),
                    _ => None,
                };
                let lc = lane(self, coord, crd)?;
                let a = self.image_texel_address(li, ls, lc)?;
                addrs = self.b.build_insert_element(addrs, a, kc, "")?;
                if uniform_pixel.is_none() {
                    // Images that differ between lanes: each active lane's own pixel size.
                    let on = self.b.build_extract_element(mi.mask, kc, "")?.into_int_value();
                    let on = self.b.build_int_z_extend(on, i64t, "")?;
                    let pixel = self.image_pixel_bytes(li)?;
                    useful = self.b.build_int_add(useful, self.b.build_int_mul(on, pixel, "")?, "")?;
                }
            }
            match uniform_pixel {
                Some(pixel) => (addrs, self.b.build_int_mul(mi.active, pixel, "")?),
                None => (addrs, useful),
            }
        };
        // A pixel (1-16 bytes, aligned to its size) lies in one line: its first byte decides.
        let lines = self.general_lines(addrs, mi.mask, 1, conflict)?;
        self.gen_add_later(self.site_word(s, LINES)?, lines)?;
        self.gen_add_later(word as u32, useful)
    }

    /// Distinct 64-byte lines touched by the lanes of `mask` accessing `bytes` bytes through
    /// the pointers `pw` (`<W x ptr>`) of shape `shape`, added to counter `word`. A strided
    /// access with a closed form is counted at the end of the block with the block's other
    /// ones ([`Self::gen_flush`]).
    fn gen_lines(
        &mut self,
        word: u32,
        pw: VectorValue<'ctx>,
        mi: MaskInfo<'ctx>,
        shape: Shape,
        bytes: u64,
        conflict: bool,
    ) -> R<()> {
        let mask = mi.mask;
        let i64t = self.i64();
        let c64 = |x: u64| i64t.const_int(x, false);
        let w = mask.get_type().get_size();
        let addrs_of = |s: &Self| -> R<VectorValue<'ctx>> { Ok(s.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?) };
        let Shape::Strided(s) = shape else {
            let addrs = addrs_of(self)?;
            let lines = self.general_lines(addrs, mask, bytes, conflict)?;
            return self.gen_add_later(word, lines);
        };
        let span = s != 0 && s.unsigned_abs() <= 64;
        let line_per_lane = s.unsigned_abs().is_multiple_of(64) && bytes <= 64;
        // Lane k's address is a0 + k * s (an inactive lane 0's own address may be anything).
        let p0 = self.packet_base(pw, s)?;
        let a0 = self.b.build_ptr_to_int(p0, i64t, "")?;
        if !(span || line_per_lane) {
            let addrs = self.strided_addrs(a0, s, w)?;
            let lines = self.general_lines(addrs, mask, bytes, conflict)?;
            return self.gen_add_later(word, lines);
        }
        // The condition for the closed form, and its value.
        let (ok, closed) = if span {
            // Contiguous mask: the first and last active lanes bound the lines.
            let sc = i64t.const_int(s as u64, true);
            let a_lo = self.b.build_int_add(a0, self.b.build_int_mul(mi.lo, sc, "")?, "")?;
            let a_hi = self.b.build_int_add(a0, self.b.build_int_mul(mi.hi, sc, "")?, "")?;
            let (amin, amax) = if s > 0 { (a_lo, a_hi) } else { (a_hi, a_lo) };
            let first = self.b.build_right_shift(amin, c64(6), false, "")?;
            let last = self.b.build_right_shift(self.b.build_int_add(amax, c64(bytes - 1), "")?, c64(6), false, "")?;
            let n = self.b.build_int_add(self.b.build_int_sub(last, first, "")?, c64(1), "")?;
            (mi.contiguous, self.b.build_int_mul(n, mi.any, "")?)
        } else {
            // Lanes a multiple of 64 bytes apart, none crossing a line: one line each.
            let off = self.b.build_and(a0, c64(63), "")?;
            let end = self.b.build_int_add(off, c64(bytes), "")?;
            (self.b.build_int_compare(IntPredicate::ULE, end, c64(64), "")?, mi.active)
        };
        let pending = PendingLines { word, ok, closed, a0, stride: s, bytes, mask, conflict };
        self.gen.as_mut().ok_or("not counting")?.pending.push(pending);
        Ok(())
    }

    /// Makes the block's additions to its sites' counters: the strided messages' line
    /// counts first, on one branch when every closed form holds (the usual case: a
    /// contiguous mask) rather than one per message; then every addition, runs of
    /// consecutive counters as one vector addition each. Called before the block's
    /// terminator and before a barrier (whose resume point the values do not dominate).
    pub fn gen_flush(&mut self) -> R<()> {
        let pending = match self.gen.as_mut() {
            Some(g) => std::mem::take(&mut g.pending),
            None => return Ok(()),
        };
        if !pending.is_empty() {
            let mut all_ok = pending[0].ok;
            for p in &pending[1..] {
                all_ok = self.b.build_and(all_ok, p.ok, "")?;
            }
            let from = self.b.get_insert_block().ok_or("builder not positioned")?;
            let slow = self.cx().append_basic_block(self.llf, "gen.general");
            let join = self.cx().append_basic_block(self.llf, "gen.counted");
            self.b.build_conditional_branch(all_ok, join, slow)?;
            self.b.position_at_end(slow);
            let mut general = Vec::with_capacity(pending.len());
            for p in &pending {
                let w = p.mask.get_type().get_size();
                general.push(self.closed_or(p.ok, p.closed, |sf| {
                    let addrs = sf.strided_addrs(p.a0, p.stride, w)?;
                    sf.general_lines(addrs, p.mask, p.bytes, p.conflict)
                })?);
            }
            let slow_end = self.b.get_insert_block().ok_or("builder not positioned")?;
            self.b.build_unconditional_branch(join)?;
            self.b.position_at_end(join);
            for (p, g) in pending.iter().zip(general) {
                let phi = self.b.build_phi(self.i64(), "")?;
                phi.add_incoming(&[(&p.closed, from), (&g, slow_end)]);
                self.gen_add_later(p.word, phi.as_basic_value().into_int_value())?;
            }
        }
        let mut adds = match self.gen.as_mut() {
            Some(g) => std::mem::take(&mut g.adds),
            None => return Ok(()),
        };
        adds.sort_by_key(|&(w, _)| w);
        // Runs of consecutive words (a word added twice is summed first).
        let mut k = 0;
        while k < adds.len() {
            let mut run: Vec<(u32, IntValue<'ctx>)> = vec![adds[k]];
            k += 1;
            while k < adds.len() {
                let (w, v) = adds[k];
                let last = run.len() - 1;
                if w == run[last].0 {
                    run[last].1 = self.b.build_int_add(run[last].1, v, "")?;
                } else if w == run[last].0 + 1 && run.len() < ADDS_PER_VECTOR {
                    run.push((w, v));
                } else {
                    break;
                }
                k += 1;
            }
            if let [(w, v)] = run[..] {
                self.gen_add(w, v)?;
                continue;
            }
            let vt = self.i64().vec_type(run.len() as u32);
            let mut sum = vt.get_undef();
            for (j, (_, v)) in run.iter().enumerate() {
                sum = self.b.build_insert_element(sum, *v, self.i32().const_int(j as u64, false), "")?;
            }
            let p = self.gen_word(run[0].0)?;
            let old = self.b.build_load(vt, p, "")?;
            super::builtins::set_align(old, 8);
            let new = self.b.build_int_add(old.into_vector_value(), sum, "")?;
            let st = self.b.build_store(p, new)?;
            st.set_alignment(8).map_err(|e| super::llvm::Error(e.to_string()))?;
        }
        Ok(())
    }

    /// `closed` when `ok`, else what `general` computes (on a branch of its own).
    fn closed_or(
        &mut self,
        ok: IntValue<'ctx>,
        closed: IntValue<'ctx>,
        general: impl FnOnce(&mut Self) -> R<IntValue<'ctx>>,
    ) -> R<IntValue<'ctx>> {
        let from = self.b.get_insert_block().ok_or("builder not positioned")?;
        let slow = self.cx().append_basic_block(self.llf, "gen.slow");
        let join = self.cx().append_basic_block(self.llf, "gen.join");
        self.b.build_conditional_branch(ok, join, slow)?;
        self.b.position_at_end(slow);
        let g = general(self)?;
        let slow_end = self.b.get_insert_block().ok_or("builder not positioned")?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = self.b.build_phi(closed.get_type(), "")?;
        phi.add_incoming(&[(&closed, from), (&g, slow_end)]);
        Ok(phi.as_basic_value().into_int_value())
    }

    /// Distinct lines among the lanes' byte ranges (the shared helper).
    fn general_lines(
        &mut self,
        addrs: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        bytes: u64,
        conflict: bool,
    ) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        self.call_helper(Helper::Lines { w, bytes, conflict }, addrs, mask)
    }

    /// Work-item ids of lanes that are consecutive linear local ids (`lid[0]` holds lane 0's
    /// linear id); `None` for the queries whose vector form the row layout already gives.
    pub fn linear_work_item(&mut self, q: WorkItemQuery, ir_ty: ir::Type) -> R<Option<Val<'ctx>>> {
        use WorkItemQuery as Q;
        if !matches!(q, Q::LocalId | Q::GlobalId | Q::LocalLinearId | Q::GlobalLinearId | Q::SubgroupId) {
            return Ok(None);
        }
        let w = self.vec.as_ref().ok_or("not in vector mode")?.width;
        let i64t = self.i64();
        let v3 = i64t.vec_type(3);
        let comps = |s: &mut Self, q: Q| -> R<[IntValue<'ctx>; 3]> {
            let v = s.work_item_value(q, v3.into())?.into_vector_value();
            let mut out = [i64t.const_zero(); 3];
            for (d, o) in out.iter_mut().enumerate() {
                *o = s.pb.build_extract_element(v, s.i32().const_int(d as u64, false), "")?.into_int_value();
            }
            Ok(out)
        };
        let ls = comps(self, Q::LocalSize)?;
        let global = matches!(q, Q::GlobalId | Q::GlobalLinearId);
        let (g, e, o, gs) = if global {
            (
                comps(self, Q::GroupId)?,
                comps(self, Q::EnqueuedLocalSize)?,
                comps(self, Q::GlobalOffset)?,
                comps(self, Q::GlobalSize)?,
            )
        } else {
            (ls, ls, ls, ls)
        };
        let pb = &self.pb;
        let splat = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let vt = i64t.vec_type(w);
            let v = pb.build_insert_element(vt.get_undef(), x, self.i32().const_zero(), "")?;
            Ok(pb.build_shuffle_vector(v, vt.get_undef(), self.i32().vec_type(w).const_zero(), "")?)
        };
        let iota: Vec<IntValue<'ctx>> = (0..w).map(|k| i64t.const_int(k as u64, false)).collect();
        let lin = pb.build_int_add(splat(self.env.lid[0])?, VectorType::const_vector(&iota), "lin")?;
        let sx = splat(ls[0])?;
        let sy = splat(ls[1])?;
        let t = pb.build_int_unsigned_div(lin, sx, "")?;
        let lid = [
            pb.build_int_unsigned_rem(lin, sx, "")?,
            pb.build_int_unsigned_rem(t, sy, "")?,
            pb.build_int_unsigned_div(t, sy, "")?,
        ];
        let dims: [VectorValue<'ctx>; 3] = match q {
            Q::LocalId => lid,
            Q::LocalLinearId | Q::SubgroupId => [lin, lin, lin],
            Q::GlobalId | Q::GlobalLinearId => {
                let mut gid = lid;
                for d in 0..3 {
                    let start = pb.build_int_add(pb.build_int_mul(g[d], e[d], "")?, o[d], "")?;
                    gid[d] = pb.build_int_add(lid[d], splat(start)?, "")?;
                }
                if q == Q::GlobalId {
                    gid
                } else {
                    // ((z - oz) * gy + (y - oy)) * gx + (x - ox)
                    let rel: Vec<VectorValue<'ctx>> =
                        (0..3).map(|d| Ok(pb.build_int_sub(gid[d], splat(o[d])?, "")?)).collect::<R<_>>()?;
                    let zy = pb.build_int_add(pb.build_int_mul(rel[2], splat(gs[1])?, "")?, rel[1], "")?;
                    let r = pb.build_int_add(pb.build_int_mul(zy, splat(gs[0])?, "")?, rel[0], "")?;
                    [r, r, r]
                }
            }
            _ => return Ok(None),
        };
        let t = self.ty(ir_ty)?;
        let (et, n) = match t {
            inkwell::types::BasicTypeEnum::VectorType(vt) => (vt.get_element_type().into_int_type(), vt.get_size()),
            inkwell::types::BasicTypeEnum::IntType(it) => (it, 1),
            other => bail!("work-item query of type {other}"),
        };
        let conv = |v: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            Ok(self.pb.build_int_cast_sign_flag(v, et.vec_type(w), false, "")?)
        };
        if n == 1 {
            return Ok(Some(conv(dims[0])?.into()));
        }
        // Structure of arrays: component c of lane k at c * W + k.
        let zero = et.vec_type(w).const_zero();
        let mut parts = Vec::with_capacity(n as usize);
        for c in 0..n {
            parts.push(if c < 3 { conv(dims[c as usize])? } else { zero });
        }
        let mut acc = parts[0];
        for p in &parts[1..] {
            acc = Ops { b: &self.pb, m: &self.e.m, f: self.llf }.concat2(acc, *p)?;
        }
        Ok(Some(acc.into()))
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The work-group entry of a variant whose lanes are consecutive linear local ids: the
/// linear ids `first..end` in packets of `width` (the Gen device calls it once per hardware
/// thread, so once per packet), each call `wi(args, ctx, lin, 0, 0, state, resume_at, 0, hi)`
/// with `lin` the linear id of lane 0 and lanes `0..hi` active. A packet's state (W x
/// `state_size` bytes, structure of arrays) is at `state + lin * state_size`, which the row
/// layout's size ([`crate::KernelInfo::work_item_state_bytes`]) always covers.
pub fn build_linear_entry<'ctx>(
    e: &Emitter<'ctx, '_>,
    name: &str,
    wi: FunctionValue<'ctx>,
    state_size: u64,
    width: u32,
    opts: &super::workgroup::EntryOptions<'_>,
) -> R<FunctionValue<'ctx>> {
    let (restrict_offsets, args_size) = (opts.restrict_offsets, opts.args_size);
    let cx = e.cx;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let i8t = cx.i8_type();
    let w = width.max(1) as u64;
    let super::workgroup::EntryStart { f, args, ctx, first, end, resume } =
        super::workgroup::declare_entry(e, name, args_size)?;

    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    let body = cx.append_basic_block(f, "packet");
    let full = cx.append_basic_block(f, "packet.full");
    let part = cx.append_basic_block(f, "packet.part");
    let latch = cx.append_basic_block(f, "packet.latch");
    let exit = cx.append_basic_block(f, "exit");

    b.position_at_end(entry);
    // The work-item function's last arguments: the `restrict` buffers, then (Gen builds)
    // the counter array.
    let (state_base, mut trailing_args) =
        super::workgroup::entry_pointers(e, &b, ctx, args, state_size, restrict_offsets)?;
    if opts.gen_counters {
        trailing_args.push(entry_counter_array(e, &b, ctx)?.into());
    }
    let first64 = b.build_int_z_extend(first, i64t, "")?;
    let end64 = b.build_int_z_extend(end, i64t, "")?;
    let any = b.build_int_compare(IntPredicate::ULT, first64, end64, "")?;
    b.build_conditional_branch(any, body, exit)?;

    b.position_at_end(body);
    let p_lin = b.build_phi(i64t, "lin")?;
    let lin = p_lin.as_basic_value().into_int_value();
    let left = b.build_int_sub(end64, lin, "")?;
    let wc = i64t.const_int(w, false);
    let hi = b.build_select(b.build_int_compare(IntPredicate::ULT, left, wc, "")?, left, wc, "")?.into_int_value();
    let hi32 = b.build_int_truncate(hi, i32t, "")?;
    let state: BasicMetadataValueEnum<'ctx> = match state_base {
        Some(base) => {
            let off = b.build_int_mul(lin, i64t.const_int(state_size, false), "")?;
            gep(&b, i8t.into(), base, &[off], true)?.into()
        }
        None => ptr.const_null().into(),
    };
    let zero = i64t.const_zero();
    let common: Vec<BasicMetadataValueEnum<'ctx>> =
        vec![args.into(), ctx.into(), lin.into(), zero.into(), zero.into(), state, resume.into()];
    let is_full = b.build_int_compare(IntPredicate::EQ, hi, wc, "")?;
    b.build_conditional_branch(is_full, full, part)?;
    let mut results = Vec::new();
    for (blk, hi_arg) in [(full, i32t.const_int(w, false)), (part, hi32)] {
        b.position_at_end(blk);
        let mut a = common.clone();
        a.push(i32t.const_zero().into());
        a.push(hi_arg.into());
        a.extend(trailing_args.iter().copied());
        let r = b.build_call(wi, &a, "")?.try_as_basic_value().basic().ok_or("work-item function has no result")?;
        b.build_unconditional_branch(latch)?;
        results.push((r, blk));
    }
    b.position_at_end(latch);
    let rp = b.build_phi(i32t, "r")?;
    for (r, blk) in &results {
        rp.add_incoming(&[(r, *blk)]);
    }
    let next = b.build_int_add(lin, wc, "")?;
    let more = b.build_int_compare(IntPredicate::ULT, next, end64, "")?;
    b.build_conditional_branch(more, body, exit)?;
    p_lin.add_incoming(&[(&first64, entry), (&next, latch)]);

    b.position_at_end(exit);
    let res = b.build_phi(i32t, "res")?;
    res.add_incoming(&[(&i32t.const_zero(), entry), (&rp.as_basic_value(), latch)]);
    b.build_return(Some(&res.as_basic_value()))?;
    Ok(f)
}
