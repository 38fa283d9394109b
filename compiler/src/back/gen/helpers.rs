//! The general forms of the Gen counts, compiled once per process and shared by every
//! instrumented variant.
//!
//! A message whose lanes' addresses have no closed form (a gather, a scatter, a strided
//! access under a broken mask, most SLM accesses) is counted by comparing lanes: distinct
//! 64-byte lines among the lanes' byte ranges ([`Helper::Lines`]), or the worst number of
//! ways one of the 16 SLM banks is hit ([`Helper::Banks`]). At SIMD32 that is a W^2 lane
//! comparison, about half of the code LLVM optimises and emits for a small kernel. Compiled
//! into every variant it doubled the compile time of each (the CTS builds thousands of
//! programs), so each helper is its own LLVM module, compiled on first use for the host
//! target and kept for the life of the process; a variant calls it through its address
//! (`i64 helper(ptr lanes)`: the lanes' addresses then the mask's bits in memory
//! ([`slot_words`]), so that no vector crosses the call and the calling convention cannot
//! differ between the modules, whatever the number of lanes).
//!
//! The helpers and the inline counting code (`hooks`) build with [`Ops`], the lowering
//! core's mask and vector operations; the lane comparisons are here.

use crate::back::jit::Jit;
use crate::back::llvm::{call_intrinsic, Error, Ops, R};
use crate::back::target::HostTarget;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::FileType;
use inkwell::types::VectorType;
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};
use inkwell::IntPredicate;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A general count, for lanes of width `w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Helper {
    /// Distinct 64-byte lines touched by the active lanes, each accessing `bytes` bytes.
    Lines { w: u32, bytes: u64, conflict: bool },
    /// The most dwords (reads; every lane's dword is distinct when `distinct`) or lanes
    /// (writes, `distinct`) one SLM bank gets from the active lanes.
    Banks { w: u32, distinct: bool, conflict: bool },
    /// The most active lanes on one address (an atomic's lanes there wait for each other).
    Same { w: u32 },
}

impl Helper {
    fn width(self) -> u32 {
        match self {
            Helper::Lines { w, .. } | Helper::Banks { w, .. } | Helper::Same { w } => w,
        }
    }

    fn symbol(self) -> String {
        match self {
            Helper::Lines { w, bytes, conflict } => format!("softcl_gen_lines_w{w}_b{bytes}_c{}", conflict as u8),
            Helper::Banks { w, distinct, conflict } => {
                format!("softcl_gen_banks_w{w}_d{}_c{}", distinct as u8, conflict as u8)
            }
            Helper::Same { w } => format!("softcl_gen_same_w{w}"),
        }
    }
}

/// (helper, host target) -> its address, or why it cannot be built.
type Table = HashMap<(Helper, String), Result<usize, String>>;
static ADDRESSES: LazyLock<Mutex<Table>> = LazyLock::new(Mutex::default);
/// The helpers' code, which lives as long as the process: any variant may call it.
static CODE: LazyLock<Mutex<Vec<Jit>>> = LazyLock::new(Mutex::default);

/// The address of `helper` compiled for `host` (compiled on the first call).
pub fn address(helper: Helper, host: &HostTarget) -> Result<usize, String> {
    let key = (helper, format!("{}|{}|{}", host.triple, host.cpu, host.features));
    // Held while compiling: two variants needing the same helper compile it once.
    let mut table = ADDRESSES.lock();
    if let Some(a) = table.get(&key) {
        return a.clone();
    }
    let built = compile(helper, host);
    table.insert(key, built.clone());
    built
}

fn compile(helper: Helper, host: &HostTarget) -> Result<usize, String> {
    let tm = host.machine()?;
    let cx = Context::create();
    let m = cx.create_module("softcl.gen.helper");
    m.set_triple(&tm.get_triple());
    m.set_data_layout(&tm.get_target_data().get_data_layout());
    let name = helper.symbol();
    let (i64t, ptr) = (cx.i64_type(), cx.ptr_type(inkwell::AddressSpace::default()));
    let f = m.add_function(&name, i64t.fn_type(&[ptr.into(), ptr.into()], false), None);
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(f, "entry"));
    let w = helper.width();
    let body = || -> R<()> {
        let lanes_ptr = f.get_nth_param(0).ok_or("helper without parameters")?.into_pointer_value();
        let memo = f.get_nth_param(1).ok_or("helper without its memo parameter")?.into_pointer_value();
        let load = b.build_load(i64t.vec_type(w), lanes_ptr, "")?;
        crate::back::builtins::set_align(load, 8);
        let addrs = load.into_vector_value();
        let it = cx.custom_width_int_type(std::num::NonZeroU32::new(w).ok_or("an empty mask")?).map_err(err)?;
        // The mask follows the lanes ([`slot_words`]).
        let mask_ptr = mask_bits_at(&b, lanes_ptr, w)?;
        let bits = b.build_load(it, mask_ptr, "")?;
        crate::back::builtins::set_align(bits, 8);
        let mask = b.build_bit_cast(bits, cx.bool_type().vec_type(w), "")?.into_vector_value();
        let ops = Ops { b: &b, m: &m, f };
        let memo = (w <= MEMO_LANES).then(|| Memo::read(&ops, memo, helper, addrs, bits)).transpose()?;
        let count = match helper {
            Helper::Lines { bytes, conflict, .. } => ops.lines(addrs, mask, bytes, conflict)?,
            Helper::Banks { distinct, conflict, .. } => ops.bank_ways(addrs, mask, distinct, conflict)?,
            Helper::Same { .. } => ops.same_ways(addrs, mask)?,
        };
        if let Some(memo) = memo {
            memo.write(&ops, count)?;
        }
        b.build_return(Some(&count))?;
        Ok(())
    };
    body().map_err(|e| format!("Gen counting helper {name}: {}", e.0))?;
    m.verify().map_err(|e| format!("Gen counting helper {name}: {}", e.to_string()))?;
    m.run_passes("default<O2>", &tm, PassBuilderOptions::create())
        .map_err(|e| format!("Gen counting helper {name}: {e}"))?;
    let object = tm.write_to_memory_buffer(&m, FileType::Object).map_err(|e| e.to_string())?;
    let (jit, addrs) = Jit::load(object.as_slice(), std::slice::from_ref(&name), &[])?;
    CODE.lock().push(jit);
    addrs.first().copied().ok_or_else(|| format!("Gen counting helper {name} not found after linking"))
}

fn err(e: impl ToString) -> Error {
    Error(e.to_string())
}

/// The most lanes a memoised count has ([`MEMO_WORDS`] per memo).
const MEMO_LANES: u32 = crate::gen_abi::MEMO_LANES;

/// A general count's memo of its last call (`gen_abi::MEMO_SLOTS`, in the words after the
/// counters; a null pointer: none): the lanes' offsets from lane 0, lane 0's address, the
/// mask's bits, the count and a tag naming the helper (0: empty). The same helper, offsets
/// and mask with lane 0 moved by a multiple of 64 bytes (lines) or 4 bytes (banks) move
/// every lane's line or bank alike and so give the same count: a loop walking a tile costs
/// a comparison per message instead of a lane-by-lane count.
struct Memo<'ctx> {
    at: inkwell::values::PointerValue<'ctx>,
    offsets: VectorValue<'ctx>,
    a0: IntValue<'ctx>,
    bits: IntValue<'ctx>,
    tag: IntValue<'ctx>,
    lanes: u64,
}

impl<'ctx> Memo<'ctx> {
    /// Returns the memo's count when it answers this call (the helper returns there), else
    /// leaves the builder on the path that counts, with what [`Memo::write`] keeps.
    fn read(
        ops: &Ops<'_, 'ctx>,
        at: inkwell::values::PointerValue<'ctx>,
        helper: Helper,
        addrs: VectorValue<'ctx>,
        bits: BasicValueEnum<'ctx>,
    ) -> R<Memo<'ctx>> {
        let (b, cx) = (ops.b, ops.cx());
        let i64t = cx.i64_type();
        let c64 = |x: u64| i64t.const_int(x, false);
        let lanes = addrs.get_type().get_size();
        let n = u64::from(lanes);
        let (period, tag) = match helper {
            Helper::Lines { w, bytes, conflict } => {
                (64, 1 | u64::from(conflict) << 1 | u64::from(w) << 8 | bytes << 16)
            }
            Helper::Banks { w, distinct, conflict } => {
                (4, 2 | u64::from(conflict) << 1 | u64::from(distinct) << 2 | u64::from(w) << 8)
            }
            // Equal addresses stay equal wherever lane 0 moves.
            Helper::Same { w } => (1, 3 | u64::from(w) << 8),
        };
        let word = |k: u64| crate::back::llvm::gep(b, i64t.into(), at, &[c64(k)], true);
        let a0 = b.build_extract_element(addrs, cx.i32_type().const_zero(), "")?.into_int_value();
        let offsets = b.build_int_sub(addrs, ops.splat64(a0, lanes)?, "")?;
        let bits = b.build_int_z_extend(bits.into_int_value(), i64t, "")?;
        let count_here = cx.append_basic_block(ops.f, "memo.count");
        let answer = cx.append_basic_block(ops.f, "memo.answer");
        let check = cx.append_basic_block(ops.f, "memo.check");
        let none = b.build_is_null(at, "")?;
        b.build_conditional_branch(none, count_here, check)?;
        b.position_at_end(check);
        let before = b.build_load(i64t.vec_type(lanes), at, "")?;
        crate::back::builtins::set_align(before, 8);
        let same = b.build_int_compare(IntPredicate::EQ, offsets, before.into_vector_value(), "")?;
        let same = ops.mask_bits(same)?;
        let all_same = b.build_int_compare(IntPredicate::EQ, same, same.get_type().const_all_ones(), "")?;
        let load = |k: u64| -> R<IntValue<'ctx>> { Ok(b.build_load(i64t, word(k)?, "")?.into_int_value()) };
        let same_mask = b.build_int_compare(IntPredicate::EQ, bits, load(n + 1)?, "")?;
        let same_tag = b.build_int_compare(IntPredicate::EQ, c64(tag), load(n + 3)?, "")?;
        let moved = b.build_int_sub(a0, load(n)?, "")?;
        let aligned = b.build_int_compare(IntPredicate::EQ, b.build_and(moved, c64(period - 1), "")?, c64(0), "")?;
        let hit = b.build_and(b.build_and(all_same, same_mask, "")?, b.build_and(same_tag, aligned, "")?, "")?;
        b.build_conditional_branch(hit, answer, count_here)?;
        b.position_at_end(answer);
        b.build_return(Some(&load(n + 2)?))?;
        b.position_at_end(count_here);
        Ok(Memo { at, offsets, a0, bits, tag: c64(tag), lanes: n })
    }

    /// Keeps this call's pattern and `count` (nothing without a memo).
    fn write(&self, ops: &Ops<'_, 'ctx>, count: IntValue<'ctx>) -> R<()> {
        let (b, cx) = (ops.b, ops.cx());
        let i64t = cx.i64_type();
        let keep = cx.append_basic_block(ops.f, "memo.keep");
        let done = cx.append_basic_block(ops.f, "memo.done");
        b.build_conditional_branch(b.build_is_null(self.at, "")?, done, keep)?;
        b.position_at_end(keep);
        b.build_store(self.at, self.offsets)?.set_alignment(8).map_err(err)?;
        let n = self.lanes;
        for (k, v) in [(n, self.a0), (n + 1, self.bits), (n + 2, count), (n + 3, self.tag)] {
            b.build_store(crate::back::llvm::gep(b, i64t.into(), self.at, &[i64t.const_int(k, false)], true)?, v)?;
        }
        b.build_unconditional_branch(done)?;
        b.position_at_end(done);
        Ok(())
    }
}

impl<'ctx> Ops<'_, 'ctx> {
    /// The lanes of `mask` whose value in `v` (`<N x i64>`) no earlier lane of `mask` has.
    pub fn first_of(&self, v: VectorValue<'ctx>, mask: VectorValue<'ctx>, conflict: bool) -> R<VectorValue<'ctx>> {
        let n = v.get_type().get_size();
        if conflict && n <= 16 {
            // vpconflictd: for each lane, the bits of the earlier lanes holding the same
            // value. Values are compared on their low 32 bits (line or dword numbers that far
            // apart are never in one message).
            let i32t = self.cx().i32_type();
            let v16 = self.const_shuffle(v, v.get_type().get_undef(), (0..16).map(|j| (j < n).then_some(j)))?;
            let m16 = self.const_shuffle(
                mask,
                mask.get_type().const_zero(),
                (0..16).map(|j| Some(if j < n { j } else { n })),
            )?;
            let t = self.b.build_int_truncate(v16, i32t.vec_type(16), "")?;
            let conf =
                call_intrinsic(self.b, self.m, "llvm.x86.avx512.conflict.d.512", &[], &[t.into()])?.into_vector_value();
            let bits = self.b.build_int_z_extend(self.mask_bits(m16)?, i32t, "")?;
            let splat = {
                let vt = i32t.vec_type(16);
                let x = self.b.build_insert_element(vt.get_undef(), bits, i32t.const_zero(), "")?;
                self.b.build_shuffle_vector(x, vt.get_undef(), vt.const_zero(), "")?
            };
            let dup = self.b.build_int_compare(
                IntPredicate::NE,
                self.b.build_and(conf, splat, "")?,
                i32t.vec_type(16).const_zero(),
                "",
            )?;
            let first = self.b.build_and(m16, self.b.build_not(dup, "")?, "")?;
            return self.const_shuffle(first, first, (0..n).map(Some));
        }
        self.first_of_by_loop(v, mask)
    }

    /// [`Ops::first_of`] without a conflict-detection instruction: a loop whose every turn
    /// takes the first active lane not yet matched, keeps it, and drops every lane holding
    /// its value. It turns once per distinct value (a coalesced message's one or two lines),
    /// and its code is one vector comparison whatever the lanes: the unrolled comparison of
    /// every lane with every earlier one was W - 1 shuffles of W-lane vectors, which LLVM
    /// took 150 ms to compile at SIMD32 on a host with 256-bit registers.
    fn first_of_by_loop(&self, v: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let (b, cx) = (self.b, self.cx());
        let n = v.get_type().get_size();
        let i64t = cx.i64_type();
        let bits = self.mask_bits(mask)?;
        let it = bits.get_type();
        // The values in memory, for the scalar load of the lane each turn takes (a variable
        // extract would store the whole vector every turn).
        let entry = self.f.get_first_basic_block().ok_or("a function without blocks")?;
        let eb = cx.create_builder();
        match entry.get_first_instruction() {
            Some(i) => eb.position_before(&i),
            None => eb.position_at_end(entry),
        }
        let slot = eb.build_alloca(v.get_type(), "first.values")?;
        b.build_store(slot, v)?.set_alignment(8).map_err(err)?;
        let from = b.get_insert_block().ok_or("builder not positioned")?;
        let turn = cx.append_basic_block(self.f, "first.turn");
        let done = cx.append_basic_block(self.f, "first.done");
        let none = b.build_int_compare(IntPredicate::EQ, bits, it.const_zero(), "")?;
        b.build_conditional_branch(none, done, turn)?;

        b.position_at_end(turn);
        let left = b.build_phi(it, "left")?;
        let kept = b.build_phi(it, "kept")?;
        let (left_v, kept_v) = (left.as_basic_value().into_int_value(), kept.as_basic_value().into_int_value());
        let j = call_intrinsic(
            b,
            self.m,
            "llvm.cttz",
            &[it.into()],
            &[left_v.into(), cx.bool_type().const_all_ones().into()],
        )?
        .into_int_value();
        let j64 = b.build_int_cast_sign_flag(j, i64t, false, "")?;
        let at = crate::back::llvm::gep(b, i64t.into(), slot, &[j64], true)?;
        let vj = b.build_load(i64t, at, "")?.into_int_value();
        let same = b.build_int_compare(IntPredicate::EQ, v, self.splat64(vj, n)?, "")?;
        let left_next = b.build_and(left_v, b.build_not(self.mask_bits(same)?, "")?, "")?;
        let kept_next = b.build_or(kept_v, b.build_left_shift(it.const_int(1, false), j, "")?, "")?;
        let more = b.build_int_compare(IntPredicate::NE, left_next, it.const_zero(), "")?;
        b.build_conditional_branch(more, turn, done)?;
        left.add_incoming(&[(&bits, from), (&left_next, turn)]);
        kept.add_incoming(&[(&it.const_zero(), from), (&kept_next, turn)]);

        b.position_at_end(done);
        let firsts = b.build_phi(it, "firsts")?;
        firsts.add_incoming(&[(&it.const_zero(), from), (&kept_next, turn)]);
        Ok(b.build_bit_cast(firsts.as_basic_value(), cx.bool_type().vec_type(n), "")?.into_vector_value())
    }

    /// [`Helper::Banks`]: the most dwords (reads) or lanes (writes, `distinct`) one of the
    /// 16 banks gets.
    fn bank_ways(
        &self,
        addrs: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        distinct: bool,
        conflict: bool,
    ) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        let i64t = self.cx().i64_type();
        let c64 = |x: u64| i64t.const_int(x, false);
        let dwords = self.b.build_right_shift(addrs, self.splat64(c64(2), w)?, false, "")?;
        let counted = if distinct { mask } else { self.first_of(dwords, mask, conflict)? };
        let bank = self.b.build_and(dwords, self.splat64(c64(15), w)?, "")?;
        let mut worst = c64(0);
        for b in 0..16 {
            let on = self.b.build_int_compare(IntPredicate::EQ, bank, self.splat64(c64(b), w)?, "")?;
            let n = self.popcount(self.b.build_and(on, counted, "")?)?;
            worst = self.umax(worst, n)?;
        }
        Ok(worst)
    }

    /// [`Helper::Same`]: for each active lane the active lanes with its address (itself
    /// included), the most of them. One comparison of all lanes per rotation.
    fn same_ways(&self, addrs: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        let i64t = self.cx().i64_type();
        let mut count = i64t.vec_type(w).const_zero();
        for s in 0..w {
            let rotate = |v: VectorValue<'ctx>| self.const_shuffle(v, v, (0..w).map(|k| Some((k + s) % w)));
            let same = self.b.build_and(
                self.b.build_int_compare(IntPredicate::EQ, addrs, rotate(addrs)?, "")?,
                rotate(mask)?,
                "",
            )?;
            count = self.b.build_int_add(count, self.b.build_int_z_extend(same, i64t.vec_type(w), "")?, "")?;
        }
        let counted = self.b.build_select(mask, count, i64t.vec_type(w).const_zero(), "")?.into_vector_value();
        let mut worst = i64t.const_zero();
        for k in 0..w {
            let x = self.b.build_extract_element(counted, self.cx().i32_type().const_int(u64::from(k), false), "")?;
            worst = self.umax(worst, x.into_int_value())?;
        }
        Ok(worst)
    }

    /// [`Helper::Lines`]. The points a, a + 64, ..., a + bytes - 1 of each lane are at most
    /// 64 bytes apart, so their lines are exactly the lines touched. When no active lane
    /// crosses a line (bytes <= 64), its first line is enough.
    fn lines(
        &self,
        addrs: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        bytes: u64,
        conflict: bool,
    ) -> R<IntValue<'ctx>> {
        let w = mask.get_type().get_size();
        let i64t = self.cx().i64_type();
        let six = self.splat64(i64t.const_int(6, false), w)?;
        let first = self.b.build_right_shift(addrs, six, false, "")?;
        let mut offsets: Vec<u64> = (1..).map(|j| 64 * j).take_while(|&o| o < bytes - 1).collect();
        offsets.push(bytes - 1);
        let mut points = vec![first];
        for o in offsets {
            let a = self.b.build_int_add(addrs, self.splat64(i64t.const_int(o, false), w)?, "")?;
            points.push(self.b.build_right_shift(a, six, false, "")?);
        }
        let all_points = || -> R<IntValue<'ctx>> {
            let mut l = points[0];
            let mut m = mask;
            for p in &points[1..] {
                l = self.concat2(l, *p)?;
                m = self.concat2(m, mask)?;
            }
            self.popcount(self.first_of(l, m, conflict)?)
        };
        if bytes > 64 {
            // Every lane spans lines: compared line by line in a loop (code of one lane
            // comparison; all points at once grow as (lanes x lines)^2).
            return self.lines_by_loop(first, points[points.len() - 1], mask);
        }
        // Does an active lane cross a line?
        let last = points[points.len() - 1];
        let cross = self.b.build_and(self.b.build_int_compare(IntPredicate::NE, first, last, "")?, mask, "")?;
        let cross_bits = self.mask_bits(cross)?;
        let crossing =
            self.b.build_int_compare(IntPredicate::NE, cross_bits, cross_bits.get_type().const_zero(), "")?;
        let cx = self.cx();
        let both = cx.append_basic_block(self.f, "gen.cross");
        let join = cx.append_basic_block(self.f, "gen.distinct");
        let simple = self.popcount(self.first_of(first, mask, conflict)?)?;
        let from = self.b.get_insert_block().ok_or("builder not positioned")?;
        self.b.build_conditional_branch(crossing, both, join)?;
        self.b.position_at_end(both);
        let full = all_points()?;
        let both_end = self.b.get_insert_block().ok_or("builder not positioned")?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = self.b.build_phi(i64t, "")?;
        phi.add_incoming(&[(&simple, from), (&full, both_end)]);
        Ok(phi.as_basic_value().into_int_value())
    }
}

impl<'ctx> Ops<'_, 'ctx> {
    /// Distinct lines in the union of the active lanes' line ranges `first[k]..=last[k]`:
    /// for each active lane in turn, each of its lines that no earlier active lane's range
    /// holds (one vector comparison of all lanes per line).
    fn lines_by_loop(
        &self,
        first: VectorValue<'ctx>,
        last: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let (b, cx) = (self.b, self.cx());
        let w = mask.get_type().get_size();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let idx = VectorType::const_vector(&(0..w).map(|k| i32t.const_int(u64::from(k), false)).collect::<Vec<_>>());
        let block = |name: &str| cx.append_basic_block(self.f, name);
        let (lane, take, line, next, done) =
            (block("lines.lane"), block("lines.take"), block("lines.line"), block("lines.next"), block("lines.done"));
        let entry = b.get_insert_block().ok_or("builder not positioned")?;
        b.build_unconditional_branch(lane)?;

        b.position_at_end(lane);
        let k = b.build_phi(i32t, "k")?;
        let count = b.build_phi(i64t, "count")?;
        let k_v = k.as_basic_value().into_int_value();
        let count_v = count.as_basic_value().into_int_value();
        let active = b.build_extract_element(mask, k_v, "")?.into_int_value();
        b.build_conditional_branch(active, take, next)?;

        b.position_at_end(take);
        let lo = b.build_extract_element(first, k_v, "")?.into_int_value();
        let hi = b.build_extract_element(last, k_v, "")?.into_int_value();
        let splat32 = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let vt = i32t.vec_type(w);
            let one = b.build_insert_element(vt.get_undef(), x, i32t.const_zero(), "")?;
            Ok(b.build_shuffle_vector(one, vt.get_undef(), vt.const_zero(), "")?)
        };
        let before = b.build_int_compare(IntPredicate::ULT, idx, splat32(k_v)?, "")?;
        let earlier = b.build_and(mask, before, "")?;
        b.build_unconditional_branch(line)?;

        b.position_at_end(line);
        let at = b.build_phi(i64t, "line")?;
        let c = b.build_phi(i64t, "c")?;
        let at_v = at.as_basic_value().into_int_value();
        let c_v = c.as_basic_value().into_int_value();
        let l = self.splat64(at_v, w)?;
        let from = b.build_int_compare(IntPredicate::ULE, first, l, "")?;
        let to = b.build_int_compare(IntPredicate::UGE, last, l, "")?;
        let held = b.build_and(earlier, b.build_and(from, to, "")?, "")?;
        let held_bits = self.mask_bits(held)?;
        let new = b.build_int_compare(IntPredicate::EQ, held_bits, held_bits.get_type().const_zero(), "")?;
        let c_next = b.build_int_add(c_v, b.build_int_z_extend(new, i64t, "")?, "")?;
        let at_next = b.build_int_add(at_v, i64t.const_int(1, false), "")?;
        let more = b.build_int_compare(IntPredicate::ULE, at_next, hi, "")?;
        b.build_conditional_branch(more, line, next)?;
        at.add_incoming(&[(&lo, take), (&at_next, line)]);
        c.add_incoming(&[(&count_v, take), (&c_next, line)]);

        b.position_at_end(next);
        let total = b.build_phi(i64t, "total")?;
        total.add_incoming(&[(&count_v, lane), (&c_next, line)]);
        let total_v = total.as_basic_value().into_int_value();
        let k_next = b.build_int_add(k_v, i32t.const_int(1, false), "")?;
        let end = b.build_int_compare(IntPredicate::EQ, k_next, i32t.const_int(u64::from(w), false), "")?;
        b.build_conditional_branch(end, done, lane)?;
        k.add_incoming(&[(&i32t.const_zero(), entry), (&k_next, next)]);
        count.add_incoming(&[(&i64t.const_zero(), entry), (&total_v, next)]);

        b.position_at_end(done);
        Ok(total_v)
    }
}

/// u64 words of the memory a helper of `lanes` lanes reads: their addresses, then the mask's
/// bits (`lanes` bits, in whole words).
pub fn slot_words(lanes: u32) -> u64 {
    u64::from(lanes) + u64::from(lanes).div_ceil(64)
}

/// Where the mask's bits are in a slot of `lanes` lanes (after the addresses).
fn mask_bits_at<'ctx>(
    b: &Builder<'ctx>,
    slot: inkwell::values::PointerValue<'ctx>,
    lanes: u32,
) -> R<inkwell::values::PointerValue<'ctx>> {
    let i64t = slot.get_type().get_context().i64_type();
    crate::back::llvm::gep(b, i64t.into(), slot, &[i64t.const_int(u64::from(lanes), false)], true)
}

/// Calls `helper` (compiled for `host`) with the lanes' addresses `addrs` and `mask`,
/// stored to `slot` (an `alloca` of [`slot_words`] words).
pub fn call<'ctx>(
    ops: &Ops<'_, 'ctx>,
    helper: Helper,
    host: &HostTarget,
    slot: inkwell::values::PointerValue<'ctx>,
    memo: Option<inkwell::values::PointerValue<'ctx>>,
    addrs: VectorValue<'ctx>,
    mask: VectorValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let addr = address(helper, host).map_err(Error)?;
    let cx = ops.cx();
    let (i64t, ptr) = (cx.i64_type(), cx.ptr_type(inkwell::AddressSpace::default()));
    ops.b.build_store(slot, addrs)?.set_alignment(8).map_err(err)?;
    let lanes = mask.get_type().get_size();
    ops.b.build_store(mask_bits_at(ops.b, slot, lanes)?, ops.mask_bits(mask)?)?.set_alignment(8).map_err(err)?;
    let fn_ty = i64t.fn_type(&[ptr.into(), ptr.into()], false);
    let callee = i64t.const_int(addr as u64, false).const_to_pointer(ptr);
    let memo = memo.unwrap_or(ptr.const_null());
    let call = ops.b.build_indirect_call(fn_ty, callee, &[slot.into(), memo.into()], "")?;
    // The helper only reads the lanes and reads and writes its memo (LLVM's MemoryEffects:
    // `argmem: readwrite` is 3), so the kernel's own memory accesses and the counters move
    // freely around the call.
    for (name, value) in [("nounwind", 0), ("willreturn", 0), ("memory", 3)] {
        let kind = inkwell::attributes::Attribute::get_named_enum_kind_id(name);
        if kind != 0 {
            call.add_attribute(inkwell::attributes::AttributeLoc::Function, cx.create_enum_attribute(kind, value));
        }
    }
    match call.try_as_basic_value().basic() {
        Some(BasicValueEnum::IntValue(v)) => Ok(v),
        _ => Err(Error("a counting helper without a result".into())),
    }
}
