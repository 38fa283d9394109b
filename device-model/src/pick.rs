//! The work-group size a device picks when the application passes a NULL local size.
//!
//! The rule (shared by the CPU and Gen devices, which differ only in [`PickParams`]):
//! 1. A kernel's `reqd_work_group_size` is returned as is.
//! 2. Dimensions are chosen in order 0, 1, 2, each at most `max_work_item_sizes[d]`, with the
//!    product at most `max_work_group_size`. Dimensions beyond `work_dim` get 1.
//! 3. A size is *enough* if the NDRange still has at least `target_groups` work-groups (one
//!    per core on the CPU, one per sub-slice on the Gen model), counting undecided dimensions
//!    as size 1.
//! 4. Dimension 0 packs work-items into SIMD packets of W (the kernel's
//!    [`KernelInfo::simd_width`] when it is above 1, else the device's `multiple`), so it wants
//!    a multiple of W, as large as leaves enough work-groups, which amortises the cost of
//!    scheduling a work-group. The *ideal* size is the smallest multiple of W that splits the
//!    dimension into the wanted number of groups (enough of them, none above the limits), so
//!    the groups are balanced across threads.
//!    - When the program allows non-uniform work-groups (OpenCL C 2.0 or newer, or SPIR-V,
//!      without `-cl-uniform-work-group-size`, on a device that supports them): the largest
//!      enough divisor of the global size that is a multiple of W, else the largest enough
//!      divisor, if it is at least half the ideal size (a uniform NDRange); else the ideal
//!      size itself, the last group being smaller. A prime global size thus gets work-groups of
//!      the ideal size.
//!    - Otherwise every group must have the same size, which must divide the global size: the
//!      largest enough divisor that is a multiple of W, else the largest enough divisor if it
//!      holds at least W work-items, else the largest divisor within the limits (fewer groups
//!      than wanted, rather than groups of a few work-items each). So a global size that is a
//!      prime above the maximum work-group size gets work-groups of 1: the only divisor there
//!      is, and the only uniform choice the specification leaves; a prime within the maximum
//!      gets one work-group of all its work-items.
//! 5. Dimensions 1 and 2 take the largest enough divisor within the remaining budget, else 1.

use softcl_compiler::KernelInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickParams {
    pub max_work_group_size: usize,
    pub max_work_item_sizes: [usize; 3],
    /// Preferred multiple for dimension 0 (the SIMD width) when the kernel does not say.
    pub multiple: usize,
    /// Work-groups wanted at least (cores / sub-slices).
    pub target_groups: usize,
}

/// Picks a local size for `global` (see the module documentation for the rule);
/// `non_uniform`: the program and the device allow non-uniform work-groups.
pub fn pick_local_size(
    p: &PickParams,
    kernel: &KernelInfo,
    work_dim: u32,
    global: [usize; 3],
    non_uniform: bool,
) -> [usize; 3] {
    if let Some(reqd) = kernel.reqd_work_group_size {
        return reqd;
    }
    if !(1..=3).contains(&work_dim) {
        return [1; 3];
    }
    let dims = work_dim as usize;
    let g: [usize; 3] = std::array::from_fn(|d| if d < dims { global[d].max(1) } else { 1 });
    let target = p.target_groups.max(1) as u128;
    let simd = if kernel.simd_width > 1 { kernel.simd_width as usize } else { p.multiple.max(1) };
    // Work-groups so far, with undecided dimensions counted at size 1.
    let mut groups: u128 = g.iter().map(|&x| x as u128).product();
    let mut budget = p.max_work_group_size.max(1);
    let mut local = [1; 3];
    for d in 0..dims {
        let limit = budget.min(p.max_work_item_sizes[d].max(1)).min(g[d]);
        let others = groups / g[d] as u128;
        let enough = |l: usize| others * g[d].div_ceil(l) as u128 >= target;
        let all_divisors = divisors_up_to(g[d], limit);
        let divisors = || all_divisors.iter().rev().copied();
        let l = if d == 0 {
            let ideal = ideal_size(g[0], limit, simd, others, target);
            let good = |l: &usize| l * 2 >= ideal;
            let whole_packets = divisors().find(|&l| l.is_multiple_of(simd) && enough(l));
            let any = divisors().find(|&l| enough(l));
            if non_uniform {
                whole_packets.filter(good).or(any.filter(good)).unwrap_or(ideal)
            } else {
                whole_packets.or(any.filter(|&l| l >= simd)).unwrap_or_else(|| divisors().next().unwrap_or(1))
            }
        } else {
            divisors().find(|&l| enough(l)).unwrap_or(1)
        };
        local[d] = l;
        budget /= l;
        groups = others * g[d].div_ceil(l) as u128;
    }
    local
}

/// The divisors of `g` that are at most `limit`, ascending. From the prime factors of `g`
/// up to `limit`, found by trial division (at most `min(limit, sqrt(g))` divisions: this runs
/// on every enqueue with a NULL local size).
fn divisors_up_to(g: usize, limit: usize) -> Vec<usize> {
    let mut factors: Vec<(usize, u32)> = Vec::new();
    let mut rest = g.max(1);
    let mut p = 2usize;
    while p <= limit && p.saturating_mul(p) <= rest {
        if rest.is_multiple_of(p) {
            let mut e = 0;
            while rest.is_multiple_of(p) {
                rest /= p;
                e += 1;
            }
            factors.push((p, e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    // What is left is 1, a prime, or (when trial division stopped at `limit`) a product of
    // primes above `limit`; only a prime within `limit` divides into the list.
    if rest > 1 && rest <= limit {
        factors.push((rest, 1));
    }
    let mut divisors = vec![1usize];
    for (p, e) in factors {
        let known = divisors.len();
        for i in 0..known {
            let mut d = divisors[i];
            for _ in 0..e {
                match d.checked_mul(p).filter(|&n| n <= limit) {
                    Some(n) => {
                        d = n;
                        divisors.push(n);
                    }
                    None => break,
                }
            }
        }
    }
    divisors.sort_unstable();
    divisors
}

/// The smallest multiple of `simd` (when `limit` holds one; else `limit`) that splits `g` work-items into
/// about as many groups as wanted: `target` in all with `others` groups in the other
/// dimensions, and at least as many as `limit` requires.
fn ideal_size(g: usize, limit: usize, simd: usize, others: u128, target: u128) -> usize {
    let wanted = target.div_ceil(others.max(1)).max(g.div_ceil(limit) as u128).max(1);
    let even = usize::try_from((g as u128).div_ceil(wanted)).unwrap_or(limit).max(1);
    let top = limit / simd * simd;
    if top == 0 {
        // Not even one packet: splitting it further gains nothing.
        limit
    } else {
        even.next_multiple_of(simd).min(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: PickParams =
        PickParams { max_work_group_size: 4096, max_work_item_sizes: [4096; 3], multiple: 16, target_groups: 2 };
    const GEN: PickParams =
        PickParams { max_work_group_size: 256, max_work_item_sizes: [256; 3], multiple: 32, target_groups: 3 };

    const SIZES: [usize; 17] =
        [1, 2, 3, 7, 16, 31, 64, 96, 100, 1000, 1021, 1024, 4097, 65536, 65584, 1 << 20, 1_000_003];

    /// Picks for a kernel of SIMD width `simd` and checks the limits (and uniformity unless
    /// `non_uniform`).
    fn pick(p: &PickParams, simd: u32, dim: u32, global: [usize; 3], non_uniform: bool) -> [usize; 3] {
        let k = KernelInfo { simd_width: simd, ..KernelInfo::default() };
        let l = pick_local_size(p, &k, dim, global, non_uniform);
        let product: usize = l.iter().product();
        assert!(product >= 1 && product <= p.max_work_group_size, "{global:?} -> {l:?}");
        for d in 0..3 {
            assert!(l[d] >= 1 && l[d] <= p.max_work_item_sizes[d]);
            if d < dim as usize {
                assert!(l[d] <= global[d].max(1), "{global:?} -> {l:?} larger than the NDRange");
                if !non_uniform {
                    assert_eq!(global[d].max(1) % l[d], 0, "{global:?} -> {l:?} not uniform");
                }
            } else {
                assert_eq!(l[d], 1);
            }
        }
        l
    }

    fn check(p: &PickParams, dim: u32, global: [usize; 3]) -> [usize; 3] {
        pick(p, 0, dim, global, false)
    }

    #[test]
    fn divides_global_and_respects_limits() {
        for p in [CPU, GEN] {
            for dim in 1..=3u32 {
                for g in SIZES {
                    for non_uniform in [false, true] {
                        pick(&p, 0, dim, [g, g.min(300), 5], non_uniform);
                        pick(&p, 0, dim, [g, 1, 1], non_uniform);
                        pick(&p, 0, dim, [3, g, 7], non_uniform);
                    }
                }
            }
        }
    }

    #[test]
    fn prefers_simd_multiples_and_enough_groups() {
        assert_eq!(check(&CPU, 1, [1 << 20, 1, 1]), [4096, 1, 1]);
        assert_eq!(check(&CPU, 1, [4096, 1, 1]), [2048, 1, 1]); // two groups for two cores
        assert_eq!(check(&CPU, 1, [1000, 1, 1]), [500, 1, 1]); // no multiple of 16 divides 1000
        assert_eq!(check(&CPU, 1, [16, 1, 1]), [16, 1, 1]); // one packet, not two half ones
        assert_eq!(check(&CPU, 1, [24, 1, 1]), [24, 1, 1]); // 12 is less than a packet
        assert_eq!(check(&CPU, 1, [1, 1, 1]), [1, 1, 1]);
        assert_eq!(check(&CPU, 2, [16, 1024, 1]), [16, 256, 1]);
        assert_eq!(check(&GEN, 1, [1 << 20, 1, 1]), [256, 1, 1]);
        assert_eq!(check(&GEN, 1, [96, 1, 1]), [32, 1, 1]);
        assert_eq!(check(&GEN, 2, [1024, 1024, 1]), [256, 1, 1]);
        assert_eq!(check(&GEN, 2, [64, 64, 1]), [64, 4, 1]);
        assert_eq!(check(&GEN, 3, [0, 5, 5]), [1, 5, 1]); // zero global: no division by zero
    }

    #[test]
    fn uses_the_kernels_simd_width() {
        // 8 lanes: multiples of 8 divide 1000 (125 x 8).
        assert_eq!(pick(&CPU, 8, 1, [1000, 1, 1], false), [200, 1, 1]);
        assert_eq!(pick(&CPU, 0, 1, [1000, 1, 1], false), [500, 1, 1]);
        assert_eq!(pick(&CPU, 1, 1, [1000, 1, 1], false), [500, 1, 1]); // 1: scalar, device's 16
        assert_eq!(pick(&CPU, 4, 1, [12, 1, 1], false), [4, 1, 1]); // three packets, three groups
        assert_eq!(pick(&CPU, 4, 1, [24, 1, 1], false), [12, 1, 1]);
        for g in SIZES {
            for simd in [4u32, 8, 16] {
                let l = pick(&CPU, simd, 1, [g, 1, 1], true)[0];
                // Whole packets, unless the NDRange is smaller than a packet or a divisor
                // at least half the ideal size keeps it uniform.
                assert!(l.is_multiple_of(simd as usize) || g.is_multiple_of(l), "global {g}, simd {simd} -> {l}");
            }
        }
    }

    #[test]
    fn prime_global_sizes() {
        // Non-uniform groups allowed: whole packets, balanced over the cores, never 1.
        assert_eq!(pick(&CPU, 0, 1, [1_000_003, 1, 1], true), [4096, 1, 1]); // 245 groups
        assert_eq!(pick(&CPU, 0, 1, [1021, 1, 1], true), [512, 1, 1]); // 512 + 509
        assert_eq!(pick(&CPU, 8, 1, [1021, 1, 1], true), [512, 1, 1]);
        assert_eq!(pick(&CPU, 0, 1, [4099, 1, 1], true), [2064, 1, 1]); // 2064 + 2035
        assert_eq!(pick(&GEN, 0, 1, [1_000_003, 1, 1], true), [256, 1, 1]);
        assert_eq!(pick(&GEN, 0, 1, [31, 1, 1], true), [31, 1, 1]); // less than a packet
                                                                    // 65584 = 16 x 4099: a uniform choice of 16 exists, but 17 balanced groups of 3872
                                                                    // (the last one 3632) amortise better.
        assert_eq!(pick(&CPU, 0, 1, [65584, 1, 1], true), [3872, 1, 1]);
        assert_eq!(pick(&CPU, 0, 1, [65584, 1, 1], false), [16, 1, 1]);
        // Uniform only: a prime within the maximum is one group; above it, 1 is the only divisor.
        assert_eq!(pick(&CPU, 0, 1, [1021, 1, 1], false), [1021, 1, 1]);
        assert_eq!(pick(&CPU, 0, 1, [1_000_003, 1, 1], false), [1, 1, 1]);
        assert_eq!(pick(&GEN, 0, 1, [1_000_003, 1, 1], false), [1, 1, 1]);
        // A uniform split at least half the ideal size is kept.
        assert_eq!(pick(&CPU, 0, 1, [1000, 1, 1], true), [500, 1, 1]);
        assert_eq!(pick(&CPU, 0, 1, [1 << 20, 1, 1], true), [4096, 1, 1]);
    }

    #[test]
    fn divisors_within_a_limit() {
        for g in (1..3000).chain(SIZES).chain([1 << 40, (1 << 31) - 1, 4099 * 4111, 2 * 3 * 5 * 7 * 11 * 13 * 17]) {
            for limit in [1usize, 2, 16, 256, 4096] {
                let expected: Vec<usize> = (1..=limit.min(g)).filter(|&l| g.is_multiple_of(l)).collect();
                assert_eq!(divisors_up_to(g, limit), expected, "divisors of {g} up to {limit}");
            }
        }
    }

    #[test]
    fn honours_reqd_work_group_size() {
        let k = KernelInfo { reqd_work_group_size: Some([8, 2, 1]), ..KernelInfo::default() };
        assert_eq!(pick_local_size(&GEN, &k, 2, [1024, 1024, 1], false), [8, 2, 1]);
        assert_eq!(pick_local_size(&CPU, &k, 2, [1000, 10, 1], true), [8, 2, 1]);
    }

    #[test]
    fn bad_work_dim() {
        assert_eq!(pick_local_size(&CPU, &KernelInfo::default(), 0, [8; 3], false), [1; 3]);
        assert_eq!(pick_local_size(&CPU, &KernelInfo::default(), 7, [8; 3], true), [1; 3]);
    }
}
