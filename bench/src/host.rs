//! The host side of the benchmark: its roofs (copy bandwidth and FP32 FMA peak, measured
//! here at start), the seeded input generator, a parallel helper for the host references,
//! the load average, and the ICD vendors directory used when `OCL_ICD_VENDORS` is not set.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// The number of hardware threads the host offers.
pub fn threads() -> usize {
    softcl_conformance::host_threads()
}

// ---------------------------------------------------------------------------------------
// Seeded inputs
// ---------------------------------------------------------------------------------------

/// SplitMix64: a small, fast, seeded generator; every kernel's inputs come from one of these
/// with a fixed seed, so every run (and every platform) sees the same data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// `n` values uniform in [lo, hi).
    pub fn f32_vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(lo, hi)).collect()
    }
}

/// Fills `out` in parallel: `f(start, chunk)` computes the elements `start..start+chunk.len()`.
pub fn par_fill<T: Send>(out: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let n = out.len();
    if n == 0 {
        return;
    }
    let per = n.div_ceil(threads());
    std::thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(i * per, chunk));
        }
    });
}

// ---------------------------------------------------------------------------------------
// Roofs
// ---------------------------------------------------------------------------------------

/// The host's measured roofs.
#[derive(Clone, Copy, Debug)]
pub struct Roofs {
    /// Copy bandwidth of all threads, GB/s counted as bytes read + bytes written.
    pub copy_gbs: f64,
    /// FP32 FMA peak of all threads, GFLOP/s (an FMA is two flops).
    pub fma_gflops: f64,
    /// The vector width (bits) the FMA peak was measured with.
    pub fma_bits: u32,
}

impl Roofs {
    /// The better of two measurements of each roof (the machine may have been busy during one).
    pub fn best(self, other: Roofs) -> Roofs {
        Roofs {
            copy_gbs: self.copy_gbs.max(other.copy_gbs),
            fma_gflops: self.fma_gflops.max(other.fma_gflops),
            fma_bits: self.fma_bits.max(other.fma_bits),
        }
    }
}

/// Measures both roofs. `bytes` is the size of each of the two copy arrays (make it several
/// times the last-level cache); `fma_iters` the FMA loop trip count per thread.
pub fn measure_roofs(bytes: usize, copy_reps: usize, fma_iters: u64, fma_reps: usize) -> Roofs {
    let copy_gbs = copy_bandwidth(bytes, copy_reps);
    let (fma_gflops, fma_bits) = fma_peak(fma_iters, fma_reps);
    Roofs { copy_gbs, fma_gflops, fma_bits }
}

/// Best-of-`reps` copy bandwidth of all threads copying disjoint parts of one array into
/// another, each `bytes` long (GB/s as read + write bytes). Two ways of copying are timed,
/// and the faster counts: `memcpy` (which may use non-temporal stores) and a vectorised
/// `dst[i] = src[i] * s` loop with ordinary stores, as kernels write. The arrays are backed
/// by transparent huge pages where the kernel allows it (see [`huge_page_array`]).
pub fn copy_bandwidth(bytes: usize, reps: usize) -> f64 {
    let n = bytes / 4;
    let (mut src_store, src_at) = huge_page_array(n, 1.0);
    let (mut dst_store, dst_at) = huge_page_array(n, 2.0); // written, so every page is mapped
    let src = &mut src_store[src_at..src_at + n];
    let dst = &mut dst_store[dst_at..dst_at + n];
    let per = n.div_ceil(threads());
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        for scale in [false, true] {
            let start = Instant::now();
            std::thread::scope(|s| {
                for (d, sc) in dst.chunks_mut(per).zip(src.chunks(per)) {
                    s.spawn(move || {
                        if scale {
                            for (d, x) in d.iter_mut().zip(sc) {
                                *d = *x * 1.5;
                            }
                        } else {
                            d.copy_from_slice(sc);
                        }
                    });
                }
            });
            best = best.min(start.elapsed().as_secs_f64());
        }
    }
    assert!(dst[n / 2] == 1.5, "the copy did not happen");
    2.0 * (n * 4) as f64 / best / 1e9
}

/// An array of `n` floats set to `value`, starting at index `start` of the returned vector,
/// aligned to 2 MiB and advised as huge-page memory before its first touch. Where
/// transparent huge pages are only enabled on request (`madvise`, the default of many
/// distributions and of the development VM), 4 KiB pages cost the copy about half of the
/// memory bandwidth in TLB misses, so the roof would be the host's TLB reach rather than its
/// memory bandwidth.
fn huge_page_array(n: usize, value: f32) -> (Vec<f32>, usize) {
    const HUGE: usize = 2 << 20;
    let mut v: Vec<f32> = Vec::with_capacity(n + HUGE / 4);
    let addr = v.as_ptr() as usize;
    let start = (addr.next_multiple_of(HUGE) - addr) / 4;
    advise_huge_pages(addr + start * 4, n * 4);
    v.resize(start + n, value);
    (v, start)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(addr: usize, len: usize) {
    // SAFETY: madvise only advises the kernel about a range of this process's own memory
    // (inside the capacity of a live Vec); MADV_HUGEPAGE changes neither the contents nor the
    // validity of that memory. A failure (no THP support) leaves ordinary pages: ignored.
    unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_addr: usize, _len: usize) {}

/// Best-of-`reps` FP32 FMA throughput of all threads, each running [`FMA_CHAINS`]
/// independent FMA chains on the widest vectors the host has. Returns (GFLOP/s, bits).
fn fma_peak(iters: u64, reps: usize) -> (f64, u32) {
    let n = threads();
    let mut best = f64::INFINITY;
    let mut bits = 0;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        let results: Vec<(f32, u32)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n).map(|_| s.spawn(move || fma_chains(iters))).collect();
            handles.into_iter().map(|h| h.join().expect("FMA thread panicked")).collect()
        });
        best = best.min(start.elapsed().as_secs_f64());
        bits = results[0].1;
        // Use the sums so that the loops cannot be removed.
        assert!(results.iter().all(|r| r.0.is_finite()), "FMA chains diverged");
    }
    let lanes = f64::from(bits / 32);
    (n as f64 * iters as f64 * FMA_CHAINS as f64 * lanes * 2.0 / best / 1e9, bits)
}

/// Independent FMA chains per thread: more than latency x throughput on current cores.
const FMA_CHAINS: usize = 12;

/// Runs `iters` rounds of [`FMA_CHAINS`] independent FMAs on the widest vectors the host
/// has; returns the sum of the chains (to keep the work alive) and the vector width in bits.
fn fma_chains(iters: u64) -> (f32, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the function only needs AVX-512F, which the host has (checked above).
            return (unsafe { x86::fma_avx512(iters) }, 512);
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the function only needs AVX2 and FMA, which the host has (checked above).
            return (unsafe { x86::fma_avx2(iters) }, 256);
        }
    }
    (fma_scalar(iters), 32)
}

/// The portable fallback: scalar chains through `f32::mul_add`.
fn fma_scalar(iters: u64) -> f32 {
    let mut acc = [1.0f32; FMA_CHAINS];
    for _ in 0..iters {
        for a in &mut acc {
            *a = a.mul_add(0.999_999, 1e-7);
        }
        acc = std::hint::black_box(acc);
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::FMA_CHAINS;
    use std::arch::x86_64::*;

    /// FMA chains on 512-bit vectors (16 lanes).
    #[target_feature(enable = "avx512f")]
    pub fn fma_avx512(iters: u64) -> f32 {
        let a = _mm512_set1_ps(0.999_999);
        let b = _mm512_set1_ps(1e-7);
        let mut acc = [_mm512_set1_ps(1.0); FMA_CHAINS];
        for _ in 0..iters {
            for r in &mut acc {
                *r = _mm512_fmadd_ps(*r, a, b);
            }
        }
        let mut sum = _mm512_setzero_ps();
        for r in acc {
            sum = _mm512_add_ps(sum, r);
        }
        _mm512_reduce_add_ps(sum)
    }

    /// FMA chains on 256-bit vectors (8 lanes).
    #[target_feature(enable = "avx2,fma")]
    pub fn fma_avx2(iters: u64) -> f32 {
        let a = _mm256_set1_ps(0.999_999);
        let b = _mm256_set1_ps(1e-7);
        let mut acc = [_mm256_set1_ps(1.0); FMA_CHAINS];
        for _ in 0..iters {
            for r in &mut acc {
                *r = _mm256_fmadd_ps(*r, a, b);
            }
        }
        let mut sum = _mm256_setzero_ps();
        for r in acc {
            sum = _mm256_add_ps(sum, r);
        }
        let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
        let pair = _mm_hadd_ps(half, half);
        _mm_cvtss_f32(_mm_hadd_ps(pair, pair))
    }
}

// ---------------------------------------------------------------------------------------
// Machine state and loader setup
// ---------------------------------------------------------------------------------------

/// The 1-, 5- and 15-minute load averages ("?" where /proc/loadavg is missing).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

/// The host CPU's model name.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// When `OCL_ICD_VENDORS` is not set: points it at a directory holding the system's
/// registered vendors (`/etc/OpenCL/vendors/*.icd`) and SoftCL's `.icd` (the library named by
/// `SOFTCL_ICD_LIB`, else the one of this build, when it exists), so that one run sees every
/// platform. Must run before the first OpenCL call. Returns what the loader will read.
pub fn setup_vendors() -> Result<String, String> {
    if let Some(v) = std::env::var_os("OCL_ICD_VENDORS") {
        return Ok(v.to_string_lossy().into_owned());
    }
    let mut icds: Vec<(String, String)> = Vec::new(); // (file name, content)
    if let Ok(entries) = std::fs::read_dir("/etc/OpenCL/vendors") {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".icd") {
                if let Ok(content) = std::fs::read_to_string(e.path()) {
                    icds.push((name, content));
                }
            }
        }
    }
    let lib = softcl_conformance::driver_library();
    let lib = std::path::absolute(&lib).unwrap_or(lib);
    if lib.is_file() {
        icds.retain(|(name, _)| name != "softcl.icd");
        icds.push(("softcl.icd".to_string(), format!("{}\n", lib.display())));
    }
    icds.sort();
    let dir = write_vendors_dir(&icds).map_err(|e| format!("cannot write an ICD vendors directory: {e}"))?;
    // Runs in main before any thread starts and before the first OpenCL call.
    std::env::set_var("OCL_ICD_VENDORS", &dir);
    Ok(dir.display().to_string())
}

/// Writes the `.icd` files into a directory named after their contents (so concurrent runs
/// agree on it) under the temporary directory; each file is written atomically.
fn write_vendors_dir(icds: &[(String, String)]) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    icds.hash(&mut h);
    let dir = std::env::temp_dir().join(format!("softcl-bench-vendors-{:016x}", h.finish()));
    std::fs::create_dir_all(&dir)?;
    for (name, content) in icds {
        write_atomically(&dir.join(name), content)?;
    }
    Ok(dir)
}

fn write_atomically(file: &Path, content: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(file).ok().as_deref() == Some(content) {
        return Ok(());
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, file)
}
