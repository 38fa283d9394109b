//! The host side of the hot-address summary (`gen_abi::HOT_ENTRIES`): generated code hands
//! it a message's lanes and mask, this adds the active lanes' addresses.

use crate::gen_abi;

/// Adds the addresses of the active lanes (`bits`: bit k for lane k) among the `w` at
/// `lanes` to the worker's hot-address summary at `summary` (`gen_abi::HOT_WORDS` words).
///
/// # Safety
/// `lanes` is valid for reading `w` u64 words (w at most 64) and `summary` for reading and
/// writing `gen_abi::HOT_WORDS`, no one else's while the call runs (the worker's own scratch
/// words, the Gen counting's contract).
pub unsafe extern "C" fn softcl_gen_hot_addresses(lanes: *const u64, bits: u64, w: u32, summary: *mut u64) {
    if lanes.is_null() || summary.is_null() {
        return;
    }
    // SAFETY: the caller's contract above.
    let (lanes, summary) = unsafe {
        (
            std::slice::from_raw_parts(lanes, w.min(64) as usize),
            std::slice::from_raw_parts_mut(summary, gen_abi::HOT_WORDS),
        )
    };
    for (k, &addr) in lanes.iter().enumerate() {
        if bits >> k & 1 == 1 {
            gen_abi::hot_add(summary, addr);
        }
    }
}
