//! The per-message rules of the Gen model (shared/reference/gen-model.md, "Memory rules"),
//! as plain functions on the lane addresses of one message. These are the reference the
//! Gen-instrumented build's generated code must agree with (`softcl_compiler::gen_abi`).
//!
//! A *message* is one load, store or atomic executed by one SIMD-N hardware thread: lane `k`
//! is active when bit `k` of `active` is set and then accesses `bytes_per_lane` bytes at
//! `addrs[k]`. At most 32 lanes (SIMD32).

use softcl_compiler::gen_abi::AccessKind;

/// Bytes of an L3 cache line.
pub const LINE_BYTES: u64 = 64;
/// Banks of shared local memory and bytes per bank.
pub const SLM_BANKS: u64 = 16;
pub const SLM_BANK_BYTES: u64 = 4;

/// A global, constant or private (scratch) message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L3Message {
    pub active: u32,
    /// Distinct 64-byte lines the active lanes touch (requests of one thread to one line
    /// collapse into one): the data port moves one line per clock.
    pub lines: u32,
    /// Bytes the active lanes asked for.
    pub useful_bytes: u64,
}

impl L3Message {
    /// Useful bytes / bytes moved (64 per line); 1.0 for a message with no active lane.
    pub fn efficiency(&self) -> f64 {
        if self.lines == 0 {
            1.0
        } else {
            self.useful_bytes as f64 / (LINE_BYTES * u64::from(self.lines)) as f64
        }
    }
}

/// The active lanes of a message, in lane order.
fn active_lanes(addrs: &[u64], active: u32) -> impl Iterator<Item = u64> + '_ {
    addrs.iter().enumerate().filter(move |(k, _)| *k < 32 && active >> k & 1 == 1).map(|(_, &a)| a)
}

/// `lines = |{ floor(a/64) .. floor((a+size-1)/64) : a = address of each active lane }|`.
pub fn l3_message(addrs: &[u64], active: u32, bytes_per_lane: u32) -> L3Message {
    let size = u64::from(bytes_per_lane.max(1));
    let mut lines: Vec<u64> = Vec::with_capacity(addrs.len());
    let mut n = 0u32;
    for a in active_lanes(addrs, active) {
        n += 1;
        let first = a / LINE_BYTES;
        let last = a.saturating_add(size - 1) / LINE_BYTES;
        lines.extend(first..=last);
    }
    lines.sort_unstable();
    lines.dedup();
    L3Message { active: n, lines: lines.len() as u32, useful_bytes: u64::from(n) * u64::from(bytes_per_lane) }
}

/// A shared local memory message by the bank rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlmMessage {
    pub active: u32,
    /// Clocks the message takes: at least one per 16 dwords asked for, else the most ways
    /// one bank sees.
    pub cycles: u32,
    /// Clocks beyond the conflict-free minimum.
    pub conflict_cycles: u32,
    /// The most ways (distinct dwords for reads, lane dwords for writes and atomics) one
    /// bank saw.
    pub worst_ways: u32,
}

impl SlmMessage {
    /// The fraction of full SLM speed: minimum cycles / cycles.
    pub fn speed(&self) -> f64 {
        if self.cycles == 0 {
            1.0
        } else {
            f64::from(self.cycles - self.conflict_cycles) / f64::from(self.cycles)
        }
    }
}

/// `bank(a) = (a / 4) mod 16`; reads cost `max(ceil(dwords/16), most distinct dword
/// addresses in one bank)`, writes and atomics `max(ceil(dwords/16), most lane dwords in one
/// bank)` (the guide: writes to one bank always conflict, even to the same address).
/// `dwords` is the lane dwords asked for: `active` for 4-byte accesses (gen-model.md's
/// `ceil(active/16)`), more for wider ones; a lane's access covers every dword of its bytes
/// (a char or short lane touches one dword, so lanes reading one dword collapse).
pub fn slm_message(addrs: &[u64], active: u32, bytes_per_lane: u32, kind: AccessKind) -> SlmMessage {
    let size = u64::from(bytes_per_lane.max(1));
    // Per bank: the dword addresses each (lane, dword) pair touches.
    let mut per_bank: [Vec<u64>; SLM_BANKS as usize] = Default::default();
    let mut lanes = 0u32;
    let mut lane_dwords = 0u64;
    for a in active_lanes(addrs, active) {
        lanes += 1;
        let first = a / SLM_BANK_BYTES;
        let last = a.saturating_add(size - 1) / SLM_BANK_BYTES;
        for d in first..=last {
            per_bank[(d % SLM_BANKS) as usize].push(d);
            lane_dwords += 1;
        }
    }
    if lanes == 0 {
        return SlmMessage { active: 0, cycles: 0, conflict_cycles: 0, worst_ways: 0 };
    }
    let worst = per_bank
        .iter_mut()
        .map(|b| {
            if kind == AccessKind::Load {
                b.sort_unstable();
                b.dedup();
            }
            b.len() as u32
        })
        .max()
        .unwrap_or(0);
    let minimum = lane_dwords.div_ceil(SLM_BANKS) as u32;
    let cycles = minimum.max(worst);
    SlmMessage { active: lanes, cycles, conflict_cycles: cycles - minimum, worst_ways: worst }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_masks_and_wide_lanes() {
        // 16 lanes of float4 consecutive: 256 bytes = 4 lines, efficiency 1.
        let a: Vec<u64> = (0..16).map(|k| k * 16).collect();
        let m = l3_message(&a, 0xffff, 16);
        assert_eq!((m.lines, m.useful_bytes), (4, 256));
        assert_eq!(m.efficiency(), 1.0);
        // Only lane 3 active: one line, 4 of 64 bytes useful.
        let m = l3_message(&a, 1 << 3, 4);
        assert_eq!((m.active, m.lines), (1, 1));
        assert_eq!(m.efficiency(), 4.0 / 64.0);
        // An access straddling a line boundary touches two lines.
        assert_eq!(l3_message(&[62], 1, 4).lines, 2);
        // No active lane: nothing moves.
        assert_eq!(l3_message(&a, 0, 4).lines, 0);
        assert_eq!(slm_message(&a, 0, 4, AccessKind::Load).cycles, 0);
        // SIMD32 consecutive ints in SLM: two clocks, no conflict.
        let a: Vec<u64> = (0..32).map(|k| k * 4).collect();
        let s = slm_message(&a, u32::MAX, 4, AccessKind::Load);
        assert_eq!((s.cycles, s.conflict_cycles, s.worst_ways), (2, 0, 2));
    }

    #[test]
    fn slm_writes_to_one_address_conflict_reads_do_not() {
        let a = [0u64; 16];
        let r = slm_message(&a, 0xffff, 4, AccessKind::Load);
        assert_eq!((r.cycles, r.conflict_cycles, r.worst_ways), (1, 0, 1));
        let w = slm_message(&a, 0xffff, 4, AccessKind::Store);
        assert_eq!((w.cycles, w.conflict_cycles, w.worst_ways), (16, 15, 16));
        let at = slm_message(&a, 0xffff, 4, AccessKind::Atomic);
        assert_eq!(at.cycles, 16);
    }
}
