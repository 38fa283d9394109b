//! Gen counting, a hook of the lowering core ([`enable`], [`GenLower`]): the counting code
//! of a Gen-instrumented build (the contract is [`crate::gen_abi`]), the only place that
//! lowers the IR's `gen.block` and `gen.count` (which `passes::gen_instrument` inserts, with
//! the kernel's plan of sites and blocks). The core asks it first for every instruction: it
//! lowers those two, and makes the block's pending additions before a terminator or a
//! barrier. It uses vector mode's packet forms (`back::vector`) for spans and texels.
//!
//! - `gen.block k`: the block's execution and active lanes under the current mask.
//! - `gen.count s, ...`: by the rules of `gen_abi`, from the current mask and the lanes'
//!   addresses of the access that follows: distinct 64-byte lines (global, constant,
//!   private scratch) or SLM cycles, conflict cycles and the worst bank ways (local). A
//!   uniform address is one line (or the lines its bytes span); a strided access with a
//!   scalar base and a contiguous mask has a closed form (the first and last line for strides
//!   up to 64 bytes; one line per lane for multiples of 64 whose lanes do not cross a line);
//!   anything else counts distinct lines among the lanes' addresses (`helpers`: a host
//!   function the generated code calls).
//!
//! Counters are added to the array at `ctx.gen_counters` (passed to the work-item function
//! as a `noalias` parameter), so a device that gives all the hardware threads of a
//! work-group the same zeroed array reads the work-group's sum (`worst_bank_ways` is a
//! maximum, kept as one).

mod rows;

use super::helpers::{self as gen_helpers, Helper};
use crate::back::llvm::{as_ptr, bail, gep, FnLower, LowerHook, Val, R};
use crate::back::vector::VecLower;
use crate::gen_abi::{self, site_word, AccessKind, GenKernelInfo};
use crate::ir::{GenAccess, Inst, InstData, Value};
use crate::kernel_info::AddressSpace;
use crate::vectorize::analysis::Shape;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::types::VectorType;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum};
use inkwell::values::{IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

const SITE_WORDS: u32 = gen_abi::SITE_WORDS as u32;
const BLOCK_WORDS: u32 = gen_abi::BLOCK_WORDS as u32;
// A site's counters (`gen_abi::site_word`).
const LINES: usize = site_word::L3_LINES;
const SLM_CYCLES: usize = site_word::SLM_CYCLES;
const ATOMIC_WAYS: usize = site_word::ATOMIC_WAYS;
const SLM_CONFLICTS: usize = site_word::SLM_CONFLICT_CYCLES;
const WORST_WAYS: usize = site_word::WORST_BANK_WAYS;
/// The most counters one vector addition of [`GenLower::gen_flush`] updates.
const ADDS_PER_VECTOR: usize = 8;
/// The most messages whose counts wait for the end of their block: a block of a thousand
/// messages kept every count (and the addresses of its closed forms) live to its end, and
/// LLVM's optimisation of such a variant took 5.8 s (2.3 s flushed every 32 messages; the
/// whole build 31 s, now 25 s, most of the rest in CodeGenPrepare). Beyond this many, the
/// counts are made where they are.
const PENDING_MESSAGES: usize = 32;

/// The counting state of a function being lowered: the counters are the array at
/// `ctx.gen_counters`, which the work-group entry passes as the work-item function's last
/// parameter, `noalias`: once inlined, the kernel's memory accesses are known not to touch
/// it (the array is the worker's own, zeroed per work-group by the device), so counting
/// does not keep LLVM from optimising them, and a counter is one add to memory, with no
/// copy per packet.
pub struct GenState<'a, 'ctx> {
    /// The kernel's sites and blocks (`KernelInfo::gen`).
    plan: &'a GenKernelInfo,
    /// The counter array.
    counters: PointerValue<'ctx>,
    /// What the counting code knows about the current mask, computed once per block (and
    /// again after a barrier, whose resume point the earlier code does not dominate).
    mask: Option<MaskInfo<'ctx>>,
    /// L3-line counts of the block's strided messages whose closed forms wait for
    /// [`GenLower::gen_flush`].
    pending: Vec<PendingLines<'ctx>>,
    /// The block's additions to site counters (word, value), made together by
    /// [`GenLower::gen_flush`]: the sites of a block have consecutive counters of each kind,
    /// so that a run of them is one vector addition, not one addition to memory each.
    adds: Vec<(u32, IntValue<'ctx>)>,
    /// Where a general count's lanes and mask go for its helper (`helpers::call`): per
    /// number of lanes, one `alloca` of `helpers::slot_words` words in the prologue,
    /// made at the first such count.
    slots: Vec<(u32, PointerValue<'ctx>)>,
    /// General counts given a memo so far (at most `gen_abi::MEMO_SLOTS`).
    memos: u32,
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

/// The Gen counting's lowering of one function, over the lowering core ([`FnLower`]) it
/// uses, with the counting state.
pub struct GenLower<'l, 'a, 'ctx, 'ir> {
    pub l: &'l mut FnLower<'a, 'ctx, 'ir>,
    g: &'l mut GenState<'a, 'ctx>,
}

/// Turns on counting for the function `l` lowers (vectorized first: `back::vector::enable`)
/// for the kernel's `plan`. Its hook is asked before any other: it must see every
/// instruction.
pub fn enable<'a, 'ctx, 'ir>(l: &mut FnLower<'a, 'ctx, 'ir>, plan: &'a GenKernelInfo) -> R<()> {
    if l.vec.is_none() {
        bail!("a Gen-instrumented build must be vectorized");
    }
    // The counter array is the work-item function's last parameter.
    let counters = l.llf.get_last_param().ok_or("no counter parameter")?.into_pointer_value();
    let state =
        GenState { plan, counters, mask: None, pending: Vec::new(), adds: Vec::new(), slots: Vec::new(), memos: 0 };
    l.add_first_hook(Box::new(CountingHook(state)));
    Ok(())
}

/// The Gen counting as a hook of the lowering core.
struct CountingHook<'a, 'ctx>(GenState<'a, 'ctx>);

impl<'a, 'ctx, 'ir> LowerHook<'a, 'ctx, 'ir> for CountingHook<'a, 'ctx> {
    fn inst(&mut self, l: &mut FnLower<'a, 'ctx, 'ir>, i: Inst) -> R<bool> {
        GenLower { l, g: &mut self.0 }.gen_hook(i)
    }
}

// ------------------------------------------------------------------------------------------
// Counting code

impl<'a, 'ctx, 'ir> GenLower<'_, 'a, 'ctx, 'ir> {
    /// Vector mode's lowering, for the packet forms counting needs (spans, texels).
    fn vec(&mut self) -> VecLower<'_, 'a, 'ctx, 'ir> {
        VecLower { l: &mut *self.l }
    }

    /// The hook the lowering calls before instruction `i`: lowers `gen.block` and `gen.count`
    /// (true: nothing else to lower), and makes the block's pending additions before a
    /// terminator or a work-group barrier (whose resume point the values do not dominate).
    pub fn gen_hook(&mut self, i: Inst) -> R<bool> {
        let d = &self.l.f.insts[i];
        match d {
            InstData::GenBlock { id } => {
                self.gen_block(*id)?;
                Ok(true)
            }
            InstData::GenCount { site, access } => {
                let (site, access) = (*site, access.clone());
                self.gen_count(site, access)?;
                if self.g.pending.len() + self.g.adds.len() / 2 >= PENDING_MESSAGES {
                    self.gen_flush()?;
                }
                Ok(true)
            }
            d if d.is_terminator() => {
                self.gen_flush()?;
                Ok(false)
            }
            d if crate::passes::inline::is_work_group_barrier(d) => {
                self.gen_flush()?;
                self.g.mask = None;
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    fn gen_word(&self, word: u32) -> R<PointerValue<'ctx>> {
        let g = &*self.g;
        gep(&self.l.b, self.l.i64().into(), g.counters, &[self.l.i64().const_int(word as u64, false)], true)
    }

    fn gen_add(&self, word: u32, v: IntValue<'ctx>) -> R<()> {
        let p = self.gen_word(word)?;
        let old = self.l.b.build_load(self.l.i64(), p, "")?.into_int_value();
        self.l.b.build_store(p, self.l.b.build_int_add(old, v, "")?)?;
        Ok(())
    }

    /// Adds `v` to counter `word` at the block's [`Self::gen_flush`].
    fn gen_add_later(&mut self, word: u32, v: IntValue<'ctx>) -> R<()> {
        self.g.adds.push((word, v));
        Ok(())
    }

    /// The word of counter `field` (`gen_abi::site_word`) of site `s`.
    fn site_word(&self, s: u32, field: usize) -> R<u32> {
        let sites = self.g.plan.sites.len();
        Ok(gen_abi::site_word_index(sites, s as usize, field) as u32)
    }

    fn gen_max(&self, word: u32, v: IntValue<'ctx>) -> R<()> {
        let p = self.gen_word(word)?;
        let old = self.l.b.build_load(self.l.i64(), p, "")?.into_int_value();
        self.l.b.build_store(p, self.umax(old, v)?)?;
        Ok(())
    }

    fn umax(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        self.l.ops().umax(a, b)
    }

    fn mask_bits(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        self.l.ops().mask_bits(m)
    }

    fn popcount(&self, m: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        self.l.ops().popcount(m)
    }

    /// The lanes' addresses of a strided access: lane k at `a0 + k * stride` (what the
    /// work-item analysis proved of the pointer), built from lane 0's scalar address so
    /// that the pointers themselves are never widened to `W x i64`.
    fn strided_addrs(&self, a0: IntValue<'ctx>, stride: i64, n: u32) -> R<VectorValue<'ctx>> {
        let steps: Vec<IntValue<'ctx>> =
            (0..n).map(|k| self.l.i64().const_int((k as i64).wrapping_mul(stride) as u64, true)).collect();
        let steps = VectorType::const_vector(&steps);
        Ok(self.l.b.build_int_add(self.splat64(a0, n)?, steps, "")?)
    }

    fn splat64(&self, x: IntValue<'ctx>, n: u32) -> R<VectorValue<'ctx>> {
        self.l.ops().splat64(x, n)
    }

    /// The facts about the current mask (computed here unless known).
    fn mask_info(&mut self) -> R<MaskInfo<'ctx>> {
        let mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
        if let Some(m) = self.g.mask.filter(|m| m.mask == mask) {
            return Ok(m);
        }
        let w = mask.get_type().get_size() as u64;
        let i64t = self.l.i64();
        let active = self.popcount(mask)?;
        let any = self.l.b.build_int_compare(IntPredicate::NE, active, i64t.const_zero(), "")?;
        let any = self.l.b.build_int_z_extend(any, i64t, "")?;
        let bits = self.mask_bits(mask)?;
        let it = bits.get_type();
        let f = self.l.cx().bool_type().const_zero();
        let tz = self.l.intrinsic("llvm.cttz", &[it.into()], &[bits.into(), f.into()])?.into_int_value();
        let lz = self.l.intrinsic("llvm.ctlz", &[it.into()], &[bits.into(), f.into()])?.into_int_value();
        let lo = self.l.b.build_int_cast_sign_flag(tz, i64t, false, "")?;
        let lz = self.l.b.build_int_cast_sign_flag(lz, i64t, false, "")?;
        let hi = self.l.b.build_int_sub(i64t.const_int(w - 1, false), lz, "")?;
        // One run: hi - lo + 1 == active.
        let span = self.l.b.build_int_add(self.l.b.build_int_sub(hi, lo, "")?, i64t.const_int(1, false), "")?;
        let contiguous = self.l.b.build_int_compare(IntPredicate::EQ, span, active, "")?;
        let info = MaskInfo { mask, active, any, contiguous, lo, hi };
        self.g.mask = Some(info);
        Ok(info)
    }

    /// `gen.block k`: one execution of block `k` of the plan under the current mask.
    fn gen_block(&mut self, k: u32) -> R<()> {
        let g = &mut *self.g;
        g.mask = None;
        if k as usize >= g.plan.blocks.len() {
            bail!("gen.block {k} is not a block of the plan");
        }
        let base = g.plan.sites.len() as u32 * SITE_WORDS + k * BLOCK_WORDS;
        let m = self.mask_info()?;
        self.gen_add_later(base, m.any)?;
        self.gen_add_later(base + 1, m.active)
    }

    /// `gen.count s, access`: the message of site `s` of the plan (the access that follows,
    /// not yet lowered) under the current mask.
    fn gen_count(&mut self, s: u32, access: GenAccess) -> R<()> {
        let g = &*self.g;
        let site = g.plan.sites.get(s as usize).ok_or_else(|| format!("gen.count {s} is not a site of the plan"))?;
        let site = site.clone();
        let ptr = match access {
            GenAccess::Memory { ptr } => ptr,
            GenAccess::Image { image, sampler, coord } => {
                return self.gen_image_access(s, image, sampler, coord);
            }
        };
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        let shape = vs.wa.shape(self.l.f, ptr);
        let i64t = self.l.i64();
        let c64 = |x: u64| i64t.const_int(x, false);
        // A sub-group block access moves the whole block from its base (`ptr` here): the
        // bytes of every lane of the hardware thread.
        let bytes = if site.sub_group_block {
            u64::from(site.bytes_per_lane) * u64::from(vs.width)
        } else {
            u64::from(site.bytes_per_lane)
        };

        // Messages, active lanes and useful bytes are the block's (`gen_abi`): only what
        // the addresses decide is counted here.
        let mi = self.mask_info()?;
        let any = mi.any;

        let uniform_addr = if shape == Shape::Uniform {
            let p = as_ptr(self.l.get(ptr)?)?;
            Some(self.l.b.build_ptr_to_int(p, i64t, "")?)
        } else {
            None
        };
        // The lanes' pointers. Their addresses as a vector are made where a count needs them,
        // on the general forms' own branches: the closed forms read lane 0 only, so the hot
        // path of a strided message never widens the pointers to W x i64.
        let pws = if uniform_addr.is_none() { Some(self.l.get_wide(ptr)?.into_vector_value()) } else { None };

        if site.space != AddressSpace::Local {
            // An atomic whose lanes' addresses are not known to be one (a histogram's bins):
            // the most lanes on one address, which wait for each other at the L3.
            if site.kind == AccessKind::Atomic && site.same_address == gen_abi::SameAddress::Unknown {
                let w = mi.mask.get_type().get_size();
                let ways = match (uniform_addr, pws, shape) {
                    (Some(a), _, _) => {
                        let addrs = self.splat64(a, w)?;
                        self.add_hot_addresses(addrs, mi.mask)?;
                        mi.active
                    }
                    (None, Some(_), Shape::Strided(st)) if st != 0 => any,
                    (None, Some(pw), _) => {
                        let addrs = self.l.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?;
                        self.add_hot_addresses(addrs, mi.mask)?;
                        self.call_helper(Helper::Same { w }, addrs, mi.mask)?
                    }
                    _ => bail!("no address"),
                };
                self.gen_add_later(self.site_word(s, ATOMIC_WAYS)?, ways)?;
            }
            return match (uniform_addr, pws) {
                (Some(a), _) => {
                    let first = self.l.b.build_right_shift(a, c64(6), false, "")?;
                    let last = self.l.b.build_right_shift(
                        self.l.b.build_int_add(a, c64(bytes - 1), "")?,
                        c64(6),
                        false,
                        "",
                    )?;
                    let n = self.l.b.build_int_add(self.l.b.build_int_sub(last, first, "")?, c64(1), "")?;
                    let lines = self.l.b.build_int_mul(n, any, "")?;
                    self.gen_add_later(self.site_word(s, LINES)?, lines)
                }
                (None, Some(pw)) => self.gen_lines(self.site_word(s, LINES)?, pw, mi, shape, bytes),
                _ => bail!("no address"),
            };
        }

        // SLM: 16 banks of 4 bytes. A lane of a wider access (int2, float4, ...) reads or
        // writes its consecutive dwords, each in its bank (`gen_abi`), at most 4 per message
        // (the untyped read and write messages' four channels): a wider lane (a long4, a
        // struct copied whole) is several messages, each the lanes' next 16 bytes. Moving
        // every lane by 16 bytes turns the banks alike, so messages of one size cost alike.
        let write = site.kind != AccessKind::Load;
        let dwords = bytes.div_ceil(4).max(1);
        let parts: Vec<(u64, u64)> = if dwords <= 4 {
            vec![(dwords, 1)]
        } else {
            [(4, dwords / 4), (dwords % 4, 1)].into_iter().filter(|&(d, _)| d > 0).collect()
        };
        let (mut cycles, mut base, mut worst) = (c64(0), c64(0), c64(0));
        for (d, n) in parts {
            let (ceil16, ways) = self.slm_message(d, dwords, write, shape, pws, &mi)?;
            let one = self.umax(ceil16, ways)?;
            cycles = self.l.b.build_int_add(cycles, self.l.b.build_int_mul(one, c64(n), "")?, "")?;
            base = self.l.b.build_int_add(base, self.l.b.build_int_mul(ceil16, c64(n), "")?, "")?;
            worst = self.umax(worst, ways)?;
        }
        self.gen_add_later(self.site_word(s, SLM_CYCLES)?, cycles)?;
        let conflicts = self.l.b.build_int_sub(cycles, base, "")?;
        self.gen_add_later(self.site_word(s, SLM_CONFLICTS)?, conflicts)?;
        self.gen_max(self.site_word(s, WORST_WAYS)?, worst)
    }

    /// One SLM message of `d` dwords per lane (of a lane access of `dwords`) under the
    /// current mask: the bank cycles without conflicts (ceil(requests / 16)) and the most
    /// ways one bank gets. `pws`: the lanes' pointers (None: one address for all).
    #[allow(clippy::too_many_arguments)]
    fn slm_message(
        &mut self,
        d: u64,
        dwords: u64,
        write: bool,
        shape: Shape,
        pws: Option<VectorValue<'ctx>>,
        mi: &MaskInfo<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let i64t = self.l.i64();
        let c64 = |x: u64| i64t.const_int(x, false);
        let (mask, active, any) = (mi.mask, mi.active, mi.any);
        let w = mask.get_type().get_size();
        let addrs_of = |s: &Self, pw: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            Ok(s.l.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?)
        };
        let requests = self.l.b.build_int_mul(active, c64(d), "")?;
        let ceil16 = self.l.b.build_right_shift(self.l.b.build_int_add(requests, c64(15), "")?, c64(4), false, "")?;
        let rows_ways = self.rows_bank_ways(shape, w, write);
        let ways = match pws {
            // One address: one dword per bank for a read; every lane on the same bank for a write.
            None => {
                if write {
                    active
                } else {
                    any
                }
            }
            Some(pw) if d > 1 => {
                // Lanes packed end to end (a float4 array indexed by the local id) fill the
                // banks in turn: ceil(requests / 16) ways under a contiguous mask. Otherwise
                // the histogram of every dword of every lane.
                let packed = d == dwords && matches!(shape, Shape::Strided(st) if st.unsigned_abs() == 4 * d);
                let distinct = write || matches!(shape, Shape::Strided(st) if st.unsigned_abs() >= 4 * d);
                let addrs = addrs_of(self, pw)?;
                let wide = |s: &mut GenLower<'_, 'a, 'ctx, 'ir>| -> R<IntValue<'ctx>> {
                    let (mut all, mut all_mask) = (addrs, mask);
                    for j in 1..d {
                        let next = s.l.b.build_int_add(addrs, s.splat64(c64(4 * j), w)?, "")?;
                        all = s.l.ops().concat2(all, next)?;
                        all_mask = s.l.ops().concat2(all_mask, mask)?;
                    }
                    s.bank_ways(all, all_mask, distinct)
                };
                if packed {
                    self.closed_or(mi.contiguous, ceil16, wide)?
                } else {
                    wide(self)?
                }
            }
            Some(pw) if rows_ways.is_some() => {
                // Whole rows of known steps: a constant under a full mask.
                let closed = c64(rows_ways.unwrap_or(0));
                let full = self.l.b.build_int_compare(IntPredicate::EQ, active, c64(u64::from(w)), "")?;
                let addrs = addrs_of(self, pw)?;
                self.closed_or(full, closed, |s| s.bank_ways(addrs, mask, write))?
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
                        let closed = self.l.b.build_int_unsigned_div(
                            self.l.b.build_int_add(active, c64(p - 1), "")?,
                            c64(p),
                            "",
                        )?;
                        let ok = mi.contiguous;
                        let Shape::Strided(st) = shape else { bail!("a bank period without a stride") };
                        let p0 = self.vec().packet_base(pw, st)?;
                        let a0 = self.l.b.build_ptr_to_int(p0, i64t, "")?;
                        self.closed_or(ok, closed, |s| {
                            let addrs = s.strided_addrs(a0, st, w)?;
                            s.bank_ways(addrs, mask, true)
                        })?
                    }
                    None => {
                        let distinct = write || matches!(shape, Shape::Strided(st) if st.unsigned_abs() >= 4);
                        let addrs = addrs_of(self, pw)?;
                        self.bank_ways(addrs, mask, distinct)?
                    }
                }
            }
        };
        Ok((ceil16, ways))
    }

    /// The most dwords (reads; all lanes' dwords are distinct when `distinct`) or lanes
    /// (`distinct` for writes) one of the 16 SLM banks gets from the lanes of `mask`.
    fn bank_ways(&mut self, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>, distinct: bool) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        self.call_helper(Helper::Banks { w, distinct }, addrs, mask)
    }

    /// Adds the active lanes' addresses of an atomic message to the worker's hot-address
    /// summary (`gen_abi::HOT_ENTRIES`, after the memos; `hot::softcl_gen_hot_addresses`).
    /// Lanes on distinct addresses (a strided atomic) are left out: they make no address hot.
    fn add_hot_addresses(&mut self, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<()> {
        let w = mask.get_type().get_size();
        let cx = self.l.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let lanes = self.l.scratch(addrs.get_type().into())?;
        self.l.b.build_store(lanes, addrs)?;
        let bits = self.l.b.build_int_z_extend(self.mask_bits(mask)?, i64t, "")?;
        let summary = self.gen_word(self.g.plan.hot_word() as u32)?;
        let ptr = lanes.get_type();
        let params: Vec<BasicMetadataTypeEnum<'ctx>> = vec![ptr.into(), i64t.into(), i32t.into(), ptr.into()];
        let callee =
            crate::back::host::declare(&self.l.e.m, "softcl_gen_hot_addresses", cx.void_type().fn_type(&params, false));
        let args: Vec<BasicMetadataValueEnum<'ctx>> =
            vec![lanes.into(), bits.into(), i32t.const_int(u64::from(w), false).into(), summary.into()];
        self.l.b.build_call(callee, &args, "")?;
        Ok(())
    }

    /// The row width of a variant for threads of whole rows (`GenBuild::row_width`; 0:
    /// another variant).
    fn row_width(&self) -> u32 {
        self.l.vec.as_ref().map_or(0, |v| v.wa.row_width) as u32
    }

    /// The constant SLM bank ways of a full thread of whole rows of known steps
    /// (`rows::bank_ways`), if `shape` is such rows.
    fn rows_bank_ways(&self, shape: Shape, w: u32, write: bool) -> Option<u64> {
        let wx = self.row_width();
        match shape {
            Shape::Rows { sx, sy: Some(sy) } if wx > 1 => rows::bank_ways(sx, sy, wx, w, write),
            _ => None,
        }
    }

    /// Calls the shared `helper` with the lanes' addresses `addrs` and `mask`, with a memo
    /// of its last call (`helpers::Memo`, in the words after the counters, per worker
    /// thread and across work-groups) while this variant has memo slots left.
    fn call_helper(&mut self, helper: Helper, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let lanes = mask.get_type().get_size();
        let slot = self.g.memos as usize;
        let memo = if lanes <= gen_abi::MEMO_LANES && slot < gen_abi::MEMO_SLOTS {
            self.g.memos += 1;
            let first = self.l.i64().const_int(self.g.plan.memo_word(slot) as u64, false);
            Some(gep(&self.l.b, self.l.i64().into(), self.g.counters, &[first], true)?)
        } else {
            None
        };
        self.call_helper_now(helper, addrs, mask, memo)
    }

    /// Calls the shared `helper` with the lanes' addresses `addrs` and `mask`.
    fn call_helper_now(
        &mut self,
        helper: Helper,
        addrs: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        memo: Option<PointerValue<'ctx>>,
    ) -> R<IntValue<'ctx>> {
        let lanes = mask.get_type().get_size();
        let slot = match self.g.slots.iter().find(|(n, _)| *n == lanes) {
            Some(&(_, s)) => s,
            None => {
                let words = gen_helpers::slot_words(lanes);
                let s =
                    self.l.pb.build_array_alloca(self.l.i64(), self.l.i32().const_int(words, false), "gen.lanes")?;
                self.g.slots.push((lanes, s));
                s
            }
        };
        gen_helpers::call(&self.l.ops(), helper, slot, memo, addrs, mask)
    }

    /// The L3 lines and useful bytes of image access site `s`: a sampled read of one image
    /// and sampler counts the lines of the pixels its filter loads
    /// (`imagelib::softcl_image_sampled_lines`: a linear filter's 2, 4 or 8 corners per
    /// lane); other accesses count each lane's pixel address
    /// (`imagelib::softcl_image_texel_address`, for every lane: inactive ones are masked
    /// off by the count) by the general form. The useful bytes are the active lanes' pixel
    /// sizes, which the image bound at run time decides (`gen_abi::useful_bytes_word`).
    fn gen_image_access(&mut self, s: u32, image: Value, sampler: Option<Value>, coord: Value) -> R<()> {
        let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
        let w = vs.width;
        let mi = self.mask_info()?;
        let i64t = self.l.i64();
        let word = {
            let plan = self.g.plan;
            gen_abi::useful_bytes_word(&plan.sites, plan.blocks.len(), s as usize)
                .ok_or("an image site without a useful-bytes word")?
        };
        // Uniform operands in their scalar form, varying ones wide (lane k taken below).
        let mut form = |v: Value| if self.l.is_uniform(v) { self.l.get(v) } else { self.l.get_wide(v) };
        let (img, smp, crd) = (form(image)?, sampler.map(&mut form).transpose()?, form(coord)?);
        // A sampled read of one image and sampler: the lines of its filter's pixels, counted
        // by the host (a linear filter loads 2, 4 or 8 pixels per lane).
        if let Some(sampler) = sampler {
            if let Some(lines) = self.vec().packet_sampled_lines(image, sampler, coord, mi.mask)? {
                let pixel = self.image_pixel_bytes(img)?;
                let useful = self.l.b.build_int_mul(mi.active, pixel, "")?;
                self.gen_add_later(self.site_word(s, LINES)?, lines)?;
                return self.gen_add_later(word as u32, useful);
            }
        }
        let (addrs, useful) = if let Some((addrs, pixel)) = self.vec().packet_texel_addresses(image, sampler, coord)? {
            (addrs, self.l.b.build_int_mul(mi.active, pixel, "")?)
        } else {
            let uniform_pixel = if self.l.is_uniform(image) { Some(self.image_pixel_bytes(img)?) } else { None };
            let mut addrs = i64t.vec_type(w).get_undef();
            let mut useful = i64t.const_zero();
            for k in 0..w {
                let kc = self.l.i32().const_int(k as u64, false);
                let lane = |s: &Self, v: Value, x: Val<'ctx>| -> R<Val<'ctx>> {
                    if s.l.is_uniform(v) {
                        Ok(x)
                    } else {
                        s.l.lane_of(x, s.l.f.value_type(v), kc)
                    }
                };
                let li = lane(self, image, img)?;
                let ls = match (sampler, smp) {
                    (Some(v), Some(x)) => Some(lane(self, v, x)?),
                    _ => None,
                };
                let lc = lane(self, coord, crd)?;
                let a = self.image_texel_address(li, ls, lc)?;
                addrs = self.l.b.build_insert_element(addrs, a, kc, "")?;
                if uniform_pixel.is_none() {
                    // Images that differ between lanes: each active lane's own pixel size.
                    let on = self.l.b.build_extract_element(mi.mask, kc, "")?.into_int_value();
                    let on = self.l.b.build_int_z_extend(on, i64t, "")?;
                    let pixel = self.image_pixel_bytes(li)?;
                    useful = self.l.b.build_int_add(useful, self.l.b.build_int_mul(on, pixel, "")?, "")?;
                }
            }
            match uniform_pixel {
                Some(pixel) => (addrs, self.l.b.build_int_mul(mi.active, pixel, "")?),
                None => (addrs, useful),
            }
        };
        // A pixel (1-16 bytes, aligned to its size) lies in one line: its first byte decides.
        let lines = self.general_lines(addrs, mi.mask, 1)?;
        self.gen_add_later(self.site_word(s, LINES)?, lines)?;
        self.gen_add_later(word as u32, useful)
    }

    /// Distinct 64-byte lines touched by the lanes of `mask` accessing `bytes` bytes through
    /// the pointers `pw` (`<W x ptr>`) of shape `shape`, added to counter `word`. A strided
    /// access with a closed form is counted at the end of the block with the block's other
    /// ones ([`Self::gen_flush`]).
    fn gen_lines(&mut self, word: u32, pw: VectorValue<'ctx>, mi: MaskInfo<'ctx>, shape: Shape, bytes: u64) -> R<()> {
        let mask = mi.mask;
        let i64t = self.l.i64();
        let c64 = |x: u64| i64t.const_int(x, false);
        let w = mask.get_type().get_size();
        let addrs_of = |s: &Self| -> R<VectorValue<'ctx>> { Ok(s.l.b.build_ptr_to_int(pw, i64t.vec_type(w), "")?) };
        if let Shape::Rows { sx, sy } = shape {
            let wx = self.row_width();
            let rows = if wx > 1 { w / wx } else { 0 };
            if sx.unsigned_abs() <= 64 && (2..=rows::MAX_ROWS).contains(&rows) {
                // Whole rows under a full mask: their runs of lines.
                let addrs = addrs_of(self)?;
                let full = self.l.b.build_int_compare(IntPredicate::EQ, mi.active, c64(u64::from(w)), "")?;
                let closed = self.rows_lines(addrs, (sx, sy), wx, rows, bytes)?;
                let lines = self.closed_or(full, closed, |s| s.general_lines(addrs, mask, bytes))?;
                return self.gen_add_later(word, lines);
            }
        }
        let Shape::Strided(s) = shape else {
            let addrs = addrs_of(self)?;
            let lines = self.general_lines(addrs, mask, bytes)?;
            return self.gen_add_later(word, lines);
        };
        let span = s != 0 && s.unsigned_abs() <= 64;
        let line_per_lane = s.unsigned_abs().is_multiple_of(64) && bytes <= 64;
        // Lane k's address is a0 + k * s (an inactive lane 0's own address may be anything).
        let p0 = self.vec().packet_base(pw, s)?;
        let a0 = self.l.b.build_ptr_to_int(p0, i64t, "")?;
        if !(span || line_per_lane) {
            let addrs = self.strided_addrs(a0, s, w)?;
            let lines = self.general_lines(addrs, mask, bytes)?;
            return self.gen_add_later(word, lines);
        }
        // The condition for the closed form, and its value.
        let (ok, closed) = if span {
            // Contiguous mask: the first and last active lanes bound the lines.
            let sc = i64t.const_int(s as u64, true);
            let a_lo = self.l.b.build_int_add(a0, self.l.b.build_int_mul(mi.lo, sc, "")?, "")?;
            let a_hi = self.l.b.build_int_add(a0, self.l.b.build_int_mul(mi.hi, sc, "")?, "")?;
            let (amin, amax) = if s > 0 { (a_lo, a_hi) } else { (a_hi, a_lo) };
            let first = self.l.b.build_right_shift(amin, c64(6), false, "")?;
            let last =
                self.l.b.build_right_shift(self.l.b.build_int_add(amax, c64(bytes - 1), "")?, c64(6), false, "")?;
            let n = self.l.b.build_int_add(self.l.b.build_int_sub(last, first, "")?, c64(1), "")?;
            (mi.contiguous, self.l.b.build_int_mul(n, mi.any, "")?)
        } else {
            // Lanes a multiple of 64 bytes apart, none crossing a line: one line each.
            let off = self.l.b.build_and(a0, c64(63), "")?;
            let end = self.l.b.build_int_add(off, c64(bytes), "")?;
            (self.l.b.build_int_compare(IntPredicate::ULE, end, c64(64), "")?, mi.active)
        };
        let pending = PendingLines { word, ok, closed, a0, stride: s, bytes, mask };
        self.g.pending.push(pending);
        Ok(())
    }

    /// Makes the block's additions to its sites' counters: the strided messages' line
    /// counts first, on one branch when every closed form holds (the usual case: a
    /// contiguous mask) rather than one per message; then every addition, runs of
    /// consecutive counters as one vector addition each. Called before the block's
    /// terminator and before a barrier (whose resume point the values do not dominate).
    pub fn gen_flush(&mut self) -> R<()> {
        let pending = std::mem::take(&mut self.g.pending);
        if !pending.is_empty() {
            let mut all_ok = pending[0].ok;
            for p in &pending[1..] {
                all_ok = self.l.b.build_and(all_ok, p.ok, "")?;
            }
            let from = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            let slow = self.l.cx().append_basic_block(self.l.llf, "gen.general");
            let join = self.l.cx().append_basic_block(self.l.llf, "gen.counted");
            self.l.b.build_conditional_branch(all_ok, join, slow)?;
            self.l.b.position_at_end(slow);
            let mut general = Vec::with_capacity(pending.len());
            for p in &pending {
                let w = p.mask.get_type().get_size();
                general.push(self.closed_or(p.ok, p.closed, |sf| {
                    let addrs = sf.strided_addrs(p.a0, p.stride, w)?;
                    sf.general_lines(addrs, p.mask, p.bytes)
                })?);
            }
            let slow_end = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            self.l.b.build_unconditional_branch(join)?;
            self.l.b.position_at_end(join);
            for (p, g) in pending.iter().zip(general) {
                let phi = self.l.b.build_phi(self.l.i64(), "")?;
                phi.add_incoming(&[(&p.closed, from), (&g, slow_end)]);
                self.gen_add_later(p.word, phi.as_basic_value().into_int_value())?;
            }
        }
        let mut adds = std::mem::take(&mut self.g.adds);
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
                    run[last].1 = self.l.b.build_int_add(run[last].1, v, "")?;
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
            let vt = self.l.i64().vec_type(run.len() as u32);
            let mut sum = vt.get_undef();
            for (j, (_, v)) in run.iter().enumerate() {
                sum = self.l.b.build_insert_element(sum, *v, self.l.i32().const_int(j as u64, false), "")?;
            }
            let p = self.gen_word(run[0].0)?;
            let old = self.l.b.build_load(vt, p, "")?;
            crate::back::builtins::set_align(old, 8);
            let new = self.l.b.build_int_add(old.into_vector_value(), sum, "")?;
            let st = self.l.b.build_store(p, new)?;
            st.set_alignment(8).map_err(|e| crate::back::llvm::Error(e.to_string()))?;
        }
        Ok(())
    }

    /// `closed` when `ok`, else what `general` computes (on a branch of its own).
    fn closed_or(
        &mut self,
        ok: IntValue<'ctx>,
        closed: IntValue<'ctx>,
        general: impl FnOnce(&mut GenLower<'_, 'a, 'ctx, 'ir>) -> R<IntValue<'ctx>>,
    ) -> R<IntValue<'ctx>> {
        let g = &mut *self.g;
        Ok(self.l.unless_slow(ok, closed.into(), |l| general(&mut GenLower { l, g }).map(Into::into))?.into_int_value())
    }

    /// Distinct lines among the lanes' byte ranges (the shared helper).
    fn general_lines(&mut self, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>, bytes: u64) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        self.call_helper(Helper::Lines { w, bytes }, addrs, mask)
    }

    /// For the Gen model: the pixel size in bytes of (one lane's) image `img`
    /// (`softcl_image_pixel_bytes`), an i64.
    fn image_pixel_bytes(&mut self, img: Val<'ctx>) -> R<IntValue<'ctx>> {
        let cx = self.l.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let params: Vec<BasicMetadataTypeEnum<'ctx>> = vec![img.get_type().into()];
        let callee = crate::back::host::declare(&self.l.e.m, "softcl_image_pixel_bytes", i32t.fn_type(&params, false));
        let r = self.l.b.build_call(callee, &[img.into()], "")?.try_as_basic_value().basic();
        let r = r.ok_or("pixel bytes without a result")?.into_int_value();
        Ok(self.l.b.build_int_z_extend(r, i64t, "")?)
    }

    /// For the Gen model: the address of the pixel that an access with (one lane's) image,
    /// sampler and coordinates touches (`softcl_image_texel_address`), an i64.
    fn image_texel_address(
        &mut self,
        img: Val<'ctx>,
        sampler: Option<Val<'ctx>>,
        coord: Val<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let cx = self.l.cx();
        let (i32t, f32t, i64t) = (cx.i32_type(), cx.f32_type(), cx.i64_type());
        let bits: IntValue<'ctx> = match sampler {
            Some(BasicValueEnum::PointerValue(p)) => self.l.b.build_ptr_to_int(p, i32t, "")?,
            Some(BasicValueEnum::IntValue(v)) => self.l.b.build_int_truncate_or_bit_cast(v, i32t, "")?,
            Some(_) => bail!("sampler of an unexpected type"),
            None => i32t.const_all_ones(),
        };
        let comps = self.l.components(coord)?;
        let mut args: Vec<BasicMetadataValueEnum<'ctx>> = vec![img.into(), bits.into()];
        for k in 0..3 {
            args.push(match comps.get(k) {
                None => f32t.const_zero().into(),
                Some(BasicValueEnum::FloatValue(f)) => (*f).into(),
                Some(BasicValueEnum::IntValue(v)) => self.l.b.build_signed_int_to_float(*v, f32t, "")?.into(),
                Some(_) => bail!("image coordinate of an unexpected type"),
            });
        }
        let params: Vec<BasicMetadataTypeEnum<'ctx>> =
            vec![img.get_type().into(), i32t.into(), f32t.into(), f32t.into(), f32t.into()];
        let callee =
            crate::back::host::declare(&self.l.e.m, "softcl_image_texel_address", i64t.fn_type(&params, false));
        let r = self.l.b.build_call(callee, &args, "")?.try_as_basic_value().basic();
        Ok(r.ok_or("texel address without a result")?.into_int_value())
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
