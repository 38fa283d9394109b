//! The general forms of the Gen counts: host functions that generated code calls.
//!
//! A message whose lanes' addresses have no closed form (a gather, a scatter, a strided
//! access under a broken mask, most SLM accesses) is counted by comparing lanes: distinct
//! 64-byte lines among the lanes' byte ranges ([`Helper::Lines`]), the worst number of ways
//! one of the 16 SLM banks is hit ([`Helper::Banks`]), or the most lanes on one address
//! ([`Helper::Same`]). These were once LLVM modules compiled per process and host: at SIMD32
//! on a host with 256-bit registers each took 25-50 ms to compile, four of them a tenth of a
//! variant's first launch, paid again by every process (each CTS binary, each fuzz run).
//! They are now one function of this library, [`softcl_gen_count`], which a variant calls
//! by name (`host`, resolved when its object is loaded): `i64 softcl_gen_count(ptr lanes,
//! ptr memo, i64 what)`, the lanes' addresses then the mask's bits in memory
//! ([`slot_words`]), so that no vector crosses the call, and `what` naming the count
//! ([`Helper::code`]).

use crate::back::llvm::{Error, Ops, R};
use crate::gen_abi::{MEMO_LANES, MEMO_SLOT_WORDS};
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};

/// A general count, for `w` lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Helper {
    /// Distinct 64-byte lines touched by the active lanes, each accessing `bytes` bytes.
    Lines { w: u32, bytes: u64 },
    /// The most dwords (reads; every lane's dword is distinct when `distinct`) or lanes
    /// (writes, `distinct`) one SLM bank gets from the active lanes.
    Banks { w: u32, distinct: bool },
    /// The most active lanes on one address (an atomic's lanes there wait for each other).
    Same { w: u32 },
}

/// The host function's name, which generated code calls.
pub const SYMBOL: &str = "softcl_gen_count";

impl Helper {
    fn width(self) -> u32 {
        match self {
            Helper::Lines { w, .. } | Helper::Banks { w, .. } | Helper::Same { w } => w,
        }
    }

    /// The count as one word: the kind in bits 0-1, `distinct` in bit 2, the lanes in bits
    /// 8-23, the bytes from bit 24. Never 0 (a memo's tag of 0 is an empty memo).
    pub fn code(self) -> u64 {
        match self {
            Helper::Lines { w, bytes } => 1 | u64::from(w) << 8 | bytes << 24,
            Helper::Banks { w, distinct } => 2 | u64::from(distinct) << 2 | u64::from(w) << 8,
            Helper::Same { w } => 3 | u64::from(w) << 8,
        }
    }

    /// The count [`Helper::code`] names, if it names one.
    pub fn from_code(c: u64) -> Option<Helper> {
        let w = (c >> 8 & 0xffff) as u32;
        if w == 0 {
            return None;
        }
        match c & 3 {
            1 => (c >> 24 > 0).then_some(Helper::Lines { w, bytes: c >> 24 }),
            2 => Some(Helper::Banks { w, distinct: c >> 2 & 1 == 1 }),
            3 => Some(Helper::Same { w }),
            _ => None,
        }
    }

    /// How far lane 0 may move with every lane's count unchanged, the others keeping their
    /// offsets from it: a line (lines), a dword (banks), anywhere (equal addresses).
    fn period(self) -> u64 {
        match self {
            Helper::Lines { .. } => 64,
            Helper::Banks { .. } => 4,
            Helper::Same { .. } => 1,
        }
    }

    /// The count of the lanes `addrs` whose bit is set in `bits` (bit k of word k / 64).
    pub fn count(self, addrs: &[u64], bits: &[u64]) -> u64 {
        match self {
            Helper::Lines { bytes, .. } => {
                // Each active lane's lines first..=last; the union's size.
                let last_byte = bytes.max(1) - 1;
                with_active(addrs, bits, |a| a, |firsts| lines_in_union(firsts, last_byte))
            }
            Helper::Banks { distinct: true, .. } => {
                let mut banks = [0u64; 16];
                for_active(addrs, bits, |a| banks[(a >> 2 & 15) as usize] += 1);
                banks.into_iter().max().unwrap_or(0)
            }
            Helper::Banks { distinct: false, .. } => with_active(
                addrs,
                bits,
                |a| a >> 2,
                |dwords| {
                    // Each distinct dword once: the runs of equal ones, sorted.
                    dwords.sort_unstable();
                    let mut banks = [0u64; 16];
                    for run in dwords.chunk_by(|a, b| a == b) {
                        banks[(run[0] & 15) as usize] += 1;
                    }
                    banks.into_iter().max().unwrap_or(0)
                },
            ),
            Helper::Same { .. } => with_active(
                addrs,
                bits,
                |a| a,
                |values| {
                    values.sort_unstable();
                    values.chunk_by(|a, b| a == b).map(|run| run.len() as u64).max().unwrap_or(0)
                },
            ),
        }
    }
}

/// Calls `f` with the address of each lane of `addrs` whose bit is set in `bits`.
fn for_active(addrs: &[u64], bits: &[u64], mut f: impl FnMut(u64)) {
    for (i, &word) in bits.iter().enumerate() {
        let base = i * 64;
        let lanes = addrs.len().saturating_sub(base).min(64);
        let mut b = if lanes == 64 { word } else { word & ((1u64 << lanes) - 1) };
        while b != 0 {
            f(addrs[base + b.trailing_zeros() as usize]);
            b &= b - 1;
        }
    }
}

/// `then` of `of` of each active lane's address (as [`for_active`] finds them), gathered on
/// the stack for up to 128 lanes.
fn with_active<T>(addrs: &[u64], bits: &[u64], of: impl Fn(u64) -> u64, then: impl FnOnce(&mut [u64]) -> T) -> T {
    let mut stack = [0u64; 128];
    let mut heap = Vec::new();
    let mut n = 0;
    if addrs.len() <= stack.len() {
        for_active(addrs, bits, |a| {
            stack[n] = of(a);
            n += 1;
        });
        then(&mut stack[..n])
    } else {
        for_active(addrs, bits, |a| heap.push(of(a)));
        then(&mut heap)
    }
}

/// The number of 64-byte lines in the union of the ranges `a..=a + last_byte` of the
/// addresses `addrs` (reordered). Ranges within 64 lines of the lowest are counted in a
/// bitmap of 64 lines (a coalesced message's one or two lines, a gather over a tile),
/// others by sorting and merging.
fn lines_in_union(addrs: &mut [u64], last_byte: u64) -> u64 {
    let range = |a: u64| (a >> 6, a.wrapping_add(last_byte) >> 6);
    let Some(lo) = addrs.iter().map(|&a| a >> 6).min() else {
        return 0;
    };
    if addrs.iter().all(|&a| matches!(range(a), (first, last) if last >= first && last - lo < 64)) {
        let mut map = 0u64;
        for &a in addrs.iter() {
            let (first, last) = range(a);
            map |= (u64::MAX >> (63 - (last - first))) << (first - lo);
        }
        return u64::from(map.count_ones());
    }
    addrs.sort_unstable();
    let mut count = 0u64;
    let mut end: Option<u64> = None;
    for &a in addrs.iter() {
        // A range that wrapped the address space (last < first) counts as its first line.
        let (first, last) = range(a);
        let last = last.max(first);
        match end {
            Some(e) if first <= e => {
                count += last.saturating_sub(e);
                end = Some(e.max(last));
            }
            _ => {
                count += last - first + 1;
                end = Some(last);
            }
        }
    }
    count
}

/// The general count named by `what` ([`Helper::code`]) of the lanes at `lanes`: their
/// addresses, then the mask's bits ([`slot_words`]). `memo` (or null) is the call site's
/// memo of its last call, `MEMO_SLOT_WORDS` words: the lanes' offsets from lane 0, lane 0's
/// address, the mask's bits, the count and `what` (0: empty). The same count, offsets and
/// mask with lane 0 moved by a multiple of [`Helper::period`] give the same count, so a
/// loop walking a tile costs a comparison per message instead of a count. A `what` that
/// names no count counts 0.
///
/// # Safety
/// `lanes` is valid for reading `slot_words(w)` u64 words, `w` the lanes `what` names, and
/// `memo`, unless null, for reading and writing `MEMO_SLOT_WORDS` words that no one else
/// uses while the call runs (the worker's own words after its counters: the Gen counting's
/// contract).
pub unsafe extern "C" fn softcl_gen_count(lanes: *const u64, memo: *mut u64, what: u64) -> u64 {
    let Some(helper) = Helper::from_code(what) else {
        return 0;
    };
    if lanes.is_null() {
        return 0;
    }
    let n = helper.width();
    // SAFETY: the caller's contract above.
    let slot = unsafe { std::slice::from_raw_parts(lanes, slot_words(n) as usize) };
    let (addrs, bits) = slot.split_at(n as usize);
    let memo = if memo.is_null() || n > MEMO_LANES {
        None
    } else {
        // SAFETY: the caller's contract above.
        Some(unsafe { std::slice::from_raw_parts_mut(memo, MEMO_SLOT_WORDS) })
    };
    let (a0, n) = (addrs[0], n as usize);
    let mask = bits[0];
    if let Some(m) = &memo {
        let same = m[n + 3] == what
            && m[n + 1] == mask
            && a0.wrapping_sub(m[n]) % helper.period() == 0
            && addrs.iter().zip(&m[..n]).all(|(&a, &o)| a.wrapping_sub(a0) == o);
        if same {
            return m[n + 2];
        }
    }
    let count = helper.count(addrs, bits);
    if let Some(m) = memo {
        for (o, &a) in m[..n].iter_mut().zip(addrs) {
            *o = a.wrapping_sub(a0);
        }
        m[n..n + 4].copy_from_slice(&[a0, mask, count, what]);
    }
    count
}

/// u64 words of the memory a count of `lanes` lanes reads: their addresses, then the mask's
/// bits (`lanes` bits, in whole words).
pub fn slot_words(lanes: u32) -> u64 {
    u64::from(lanes) + u64::from(lanes).div_ceil(64)
}

/// Calls [`softcl_gen_count`] for `helper` with the lanes' addresses `addrs` and `mask`,
/// stored to `slot` (an `alloca` of [`slot_words`] words), with the call site's `memo`.
pub fn call<'ctx>(
    ops: &Ops<'_, 'ctx>,
    helper: Helper,
    slot: inkwell::values::PointerValue<'ctx>,
    memo: Option<inkwell::values::PointerValue<'ctx>>,
    addrs: VectorValue<'ctx>,
    mask: VectorValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let cx = ops.cx();
    let (i64t, ptr) = (cx.i64_type(), cx.ptr_type(inkwell::AddressSpace::default()));
    ops.b.build_store(slot, addrs)?.set_alignment(8).map_err(err)?;
    let lanes = mask.get_type().get_size();
    let bits_at = crate::back::llvm::gep(ops.b, i64t.into(), slot, &[i64t.const_int(u64::from(lanes), false)], true)?;
    // The bits in whole words (`slot_words`).
    let word_bits = u32::try_from(slot_words(lanes) - u64::from(lanes)).map_err(err)? * 64;
    let bits = ops.b.build_int_z_extend_or_bit_cast(
        ops.mask_bits(mask)?,
        cx.custom_width_int_type(std::num::NonZeroU32::new(word_bits).ok_or("a count of no lanes")?).map_err(err)?,
        "",
    )?;
    ops.b.build_store(bits_at, bits)?.set_alignment(8).map_err(err)?;
    let fn_ty = i64t.fn_type(&[ptr.into(), ptr.into(), i64t.into()], false);
    let callee = crate::back::host::declare(ops.m, SYMBOL, fn_ty);
    let memo = memo.unwrap_or(ptr.const_null());
    let what = i64t.const_int(helper.code(), false);
    let call = ops.b.build_call(callee, &[slot.into(), memo.into(), what.into()], "")?;
    // The count only reads the lanes and reads and writes its memo (LLVM's MemoryEffects:
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
        _ => Err(Error("a general count without a result".into())),
    }
}

fn err(e: impl ToString) -> Error {
    Error(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls the host function as generated code does.
    fn run(h: Helper, addrs: &[u64], bits: u64, memo: Option<&mut [u64]>) -> u64 {
        let mut slot = addrs.to_vec();
        slot.resize(slot_words(h.width()) as usize, 0);
        slot[addrs.len()] = bits;
        let memo = memo.map_or(std::ptr::null_mut(), |m| m.as_mut_ptr());
        // SAFETY: `slot` holds slot_words(w) words and `memo` MEMO_SLOT_WORDS or is null.
        unsafe { softcl_gen_count(slot.as_ptr(), memo, h.code()) }
    }

    #[test]
    fn codes_name_their_counts() {
        for h in [
            Helper::Lines { w: 32, bytes: 4 },
            Helper::Lines { w: 8, bytes: 256 },
            Helper::Banks { w: 128, distinct: true },
            Helper::Banks { w: 16, distinct: false },
            Helper::Same { w: 8 },
        ] {
            assert_eq!(Helper::from_code(h.code()), Some(h));
        }
        assert_eq!(Helper::from_code(0), None);
        assert_eq!(Helper::from_code(1 | 8 << 8), None, "lines of 0 bytes");
    }

    #[test]
    fn lines_of_coalesced_strided_and_scattered_lanes() {
        let lines4 = Helper::Lines { w: 8, bytes: 4 };
        let consecutive: Vec<u64> = (0..8).map(|k| 0x1000 + 4 * k).collect();
        assert_eq!(run(lines4, &consecutive, 0xff, None), 1);
        let across: Vec<u64> = (0..8).map(|k| 0x1030 + 4 * k).collect();
        assert_eq!(run(lines4, &across, 0xff, None), 2);
        assert_eq!(run(lines4, &across, 0x0f, None), 1, "the inactive lanes' line is not counted");
        let strided: Vec<u64> = (0..8).map(|k| 0x1000 + 64 * k).collect();
        assert_eq!(run(lines4, &strided, 0xff, None), 8);
        let far: Vec<u64> = (0..8).map(|k| 0x1000 + (k % 2) * (1 << 40)).collect();
        assert_eq!(run(lines4, &far, 0xff, None), 2);
        // An 8-byte access at 60 bytes into a line crosses into the next.
        assert_eq!(run(Helper::Lines { w: 8, bytes: 8 }, &[60; 8], 1, None), 2);
        // 256-byte ranges 128 bytes apart: lines 0-3, 2-5, 4-7 ... 14-17.
        let wide: Vec<u64> = (0..8).map(|k| 128 * k).collect();
        assert_eq!(run(Helper::Lines { w: 8, bytes: 256 }, &wide, 0xff, None), 18);
        let wide_far: Vec<u64> = (0..8).map(|k| 128 * k * 1000).collect();
        assert_eq!(run(Helper::Lines { w: 8, bytes: 256 }, &wide_far, 0xff, None), 32);
        assert_eq!(run(lines4, &consecutive, 0, None), 0);
    }

    #[test]
    fn banks_and_same_addresses() {
        // Stride 16 dwords: every lane on bank 0.
        let column: Vec<u64> = (0..16).map(|k| 64 * k).collect();
        assert_eq!(run(Helper::Banks { w: 16, distinct: true }, &column, 0xffff, None), 16);
        // A read of one dword by every lane is one way; a write by every lane, 16.
        assert_eq!(run(Helper::Banks { w: 16, distinct: false }, &[8; 16], 0xffff, None), 1);
        assert_eq!(run(Helper::Banks { w: 16, distinct: true }, &[8; 16], 0xffff, None), 16);
        let row: Vec<u64> = (0..16).map(|k| 4 * k).collect();
        assert_eq!(run(Helper::Banks { w: 16, distinct: false }, &row, 0xffff, None), 1);
        // A read counts each distinct dword once: dwords 0, 16 and 32 (bank 0, each read by
        // two lanes) and 1 (bank 1) are three ways of bank 0.
        let pairs = [0u64, 64, 128, 0, 64, 128, 4, 4];
        assert_eq!(run(Helper::Banks { w: 8, distinct: false }, &pairs, 0xff, None), 3);
        assert_eq!(run(Helper::Banks { w: 8, distinct: true }, &pairs, 0xff, None), 6);
        let bins = [0u64, 4, 0, 0, 8, 4, 0, 12];
        assert_eq!(run(Helper::Same { w: 8 }, &bins, 0xff, None), 4);
        assert_eq!(run(Helper::Same { w: 8 }, &bins, 0xf2, None), 2);
    }

    #[test]
    fn a_memo_answers_the_same_pattern_moved_by_its_period() {
        let h = Helper::Lines { w: 8, bytes: 4 };
        let mut memo = vec![0u64; MEMO_SLOT_WORDS];
        let at = |base: u64| -> Vec<u64> { (0..8).map(|k| base + 4 * k).collect() };
        assert_eq!(run(h, &at(0x1030), 0xff, Some(&mut memo)), 2);
        assert_eq!(memo[8 + 2], 2);
        // Moved by a line: answered by the memo, the same count.
        memo[8 + 2] = 99;
        assert_eq!(run(h, &at(0x1070), 0xff, Some(&mut memo)), 99);
        // Moved by 16 bytes: counted again (one line now).
        assert_eq!(run(h, &at(0x1080), 0xff, Some(&mut memo)), 1);
        // Another mask or another count: counted again.
        assert_eq!(run(h, &at(0x1080), 0x0f, Some(&mut memo)), 1);
        assert_eq!(run(Helper::Same { w: 8 }, &at(0x1080), 0x0f, Some(&mut memo)), 1);
        assert_eq!(memo[8 + 3], Helper::Same { w: 8 }.code());
    }
}
