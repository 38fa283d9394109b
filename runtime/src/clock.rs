//! The host timer behind profiling timestamps and clGetHostTimer: nanoseconds of a monotonic
//! clock since the process first asked.

use std::sync::OnceLock;
use std::time::Instant;

pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // Start at 1 s so that no real timestamp is ever 0 (0 reads as "not set").
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1_000_000_000
}
