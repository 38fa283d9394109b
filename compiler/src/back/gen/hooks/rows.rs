//! Closed forms of the Gen counts for hardware threads of whole rows (the rows variant,
//! `GenBuild::row_width`): lane k's address is `a0 + (k mod wx) * sx + (k div wx) * sy`
//! (`Shape::Rows`). Under a full mask:
//!
//! - SLM banks: moving every lane by the same multiple of 4 bytes turns the banks alike, so
//!   when `sx` and `sy` are known multiples of 4 the worst ways are a constant of the
//!   variant ([`bank_ways`]), whatever `a0`;
//! - L3 lines: each row is one run of lines (its lanes at most 64 bytes apart), the rows'
//!   runs follow each other in address order (`|sy|` apart), so the distinct lines are the
//!   sum over the rows, in address order, of the lines past the previous row's last
//!   ([`GenLower::rows_lines`]; `sy` read from the lanes when not known).
//!
//! Otherwise (a partial mask, other steps) the general counts do it, as for any gather.

use super::GenLower;
use crate::back::llvm::R;
use inkwell::values::{IntValue, VectorValue};
use inkwell::IntPredicate;

/// The most rows a thread may have for [`GenLower::rows_lines`] (its code grows with them).
pub(super) const MAX_ROWS: u32 = 8;

/// The worst ways one of the 16 SLM banks gets from a full thread of `w` lanes in rows of
/// `wx` (steps `sx`, `sy` in bytes), counting every lane (`distinct`: a write) or each dword
/// once (a read: lanes on one dword are one request). `None` unless both steps are
/// multiples of 4 (only then is the count the same wherever lane 0 is).
pub(super) fn bank_ways(sx: i64, sy: i64, wx: u32, w: u32, distinct: bool) -> Option<u64> {
    if sx % 4 != 0 || sy % 4 != 0 || wx == 0 {
        return None;
    }
    let mut dwords: Vec<i64> = (0..w)
        .map(|k| (i64::from(k % wx).wrapping_mul(sx)).wrapping_add(i64::from(k / wx).wrapping_mul(sy)) / 4)
        .collect();
    if !distinct {
        dwords.sort_unstable();
        dwords.dedup();
    }
    let mut per_bank = [0u64; 16];
    for d in dwords {
        per_bank[d.rem_euclid(16) as usize] += 1;
    }
    per_bank.into_iter().max()
}

impl<'ctx> GenLower<'_, '_, 'ctx, '_> {
    /// The distinct 64-byte lines of a full thread of rows (`rows` of `wx` lanes, steps `sx`
    /// with `|sx| <= 64` and `sy`, `None`: read from the lanes' addresses `addrs`), each lane
    /// accessing `bytes` bytes.
    pub(super) fn rows_lines(
        &mut self,
        addrs: VectorValue<'ctx>,
        (sx, sy): (i64, Option<i64>),
        wx: u32,
        rows: u32,
        bytes: u64,
    ) -> R<IntValue<'ctx>> {
        let b = &self.l.b;
        let i64t = self.l.i64();
        let c = |x: i64| i64t.const_int(x as u64, true);
        let lane = |k: u32| -> R<IntValue<'ctx>> {
            Ok(b.build_extract_element(addrs, self.l.i32().const_int(u64::from(k), false), "")?.into_int_value())
        };
        let a0 = lane(0)?;
        let sy = match sy {
            Some(y) => c(y),
            None => b.build_int_sub(lane(wx)?, a0, "")?,
        };
        // The rows in address order: from the lowest row's first lane, |sy| apart.
        let neg = b.build_int_compare(IntPredicate::SLT, sy, c(0), "")?;
        let back = b.build_int_mul(sy, c(i64::from(rows) - 1), "")?;
        let start = b.build_int_add(a0, b.build_select(neg, back, c(0), "")?.into_int_value(), "")?;
        let step = b.build_select(neg, b.build_int_neg(sy, "")?, sy, "")?.into_int_value();
        // A row's bytes, from its first lane: [lo, hi].
        let span = i64::from(wx - 1).wrapping_mul(sx);
        let (lo, hi) = (span.min(0), span.max(0) + bytes as i64 - 1);
        let mut total = c(0);
        let mut prev_last: Option<IntValue<'ctx>> = None;
        for r in 0..rows {
            let base = b.build_int_add(start, b.build_int_mul(step, c(i64::from(r)), "")?, "")?;
            let first = b.build_right_shift(b.build_int_add(base, c(lo), "")?, c(6), false, "")?;
            let last = b.build_right_shift(b.build_int_add(base, c(hi), "")?, c(6), false, "")?;
            let from = match prev_last {
                Some(p) => self.l.ops().smax(first, b.build_int_add(p, c(1), "")?)?,
                None => first,
            };
            let n = b.build_int_add(b.build_int_sub(last, from, "")?, c(1), "")?;
            total = b.build_int_add(total, self.l.ops().smax(n, c(0))?, "")?;
            prev_last = Some(last);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ways by brute force, lane 0 at `a0`.
    fn brute(a0: i64, sx: i64, sy: i64, wx: u32, w: u32, distinct: bool) -> u64 {
        let mut seen: Vec<i64> = Vec::new();
        let mut per_bank = [0u64; 16];
        for k in 0..w {
            let a = a0 + i64::from(k % wx) * sx + i64::from(k / wx) * sy;
            let d = a.div_euclid(4);
            if !distinct && seen.contains(&d) {
                continue;
            }
            seen.push(d);
            per_bank[d.rem_euclid(16) as usize] += 1;
        }
        per_bank.into_iter().max().unwrap()
    }

    #[test]
    fn bank_ways_are_those_of_every_lane_0() {
        for (sx, sy, wx, w) in [
            (0, 64, 16, 32),
            (4, 0, 16, 32),
            (4, 64, 8, 32),
            (4, 36, 8, 16),
            (8, 4, 4, 16),
            (-4, 128, 8, 32),
            (0, 4, 4, 8),
        ] {
            for distinct in [false, true] {
                let closed = bank_ways(sx, sy, wx, w, distinct).unwrap();
                for a0 in [0, 4, 60, 1024 + 8, 3, 65] {
                    assert_eq!(closed, brute(a0, sx, sy, wx, w, distinct), "{sx} {sy} {wx} {w} {distinct} at {a0}");
                }
            }
        }
        // A 16 x 16 float tile at SIMD32: ta[ly][k] is 2 dwords of one bank; tb[k][lx] 16
        // dwords, each read by two lanes, one per bank.
        assert_eq!(bank_ways(0, 64, 16, 32, false), Some(2));
        assert_eq!(bank_ways(4, 0, 16, 32, false), Some(1));
        assert_eq!(bank_ways(2, 64, 16, 32, false), None);
    }
}
