//! The work-group size a device picks when the application passes a NULL local size.
//!
//! The rule (shared by the CPU and Gen devices, which differ only in [`PickParams`]):
//! 1. A kernel's `reqd_work_group_size` is returned as is.
//! 2. Otherwise dimensions are chosen in order 0, 1, 2, each size a divisor of that global
//!    size (so the NDRange is uniform), at most `max_work_item_sizes[d]`, with the product at
//!    most `max_work_group_size`. Dimensions beyond `work_dim` get 1.
//! 3. A size is *enough* if the NDRange still has at least `target_groups` work-groups (one
//!    per core on the CPU, one per sub-slice on the Gen model), counting undecided dimensions
//!    as size 1.
//! 4. Dimension 0 takes the largest enough divisor that is a multiple of `multiple` (the
//!    SIMD width: work-items are packed along dimension 0); failing that, the largest enough
//!    divisor; failing that (fewer work-items than targets), 1.
//! 5. Dimensions 1 and 2 take the largest enough divisor within the remaining budget, else 1.
//!
//! A global size with no suitable divisor (a large prime) therefore gets work-groups of 1;
//! the devices could use non-uniform groups there, but only kernels built for OpenCL C 2.0+
//! without `-cl-uniform-work-group-size` may be given them, which the device does not know.

use softcl_compiler::KernelInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickParams {
    pub max_work_group_size: usize,
    pub max_work_item_sizes: [usize; 3],
    /// Preferred multiple for dimension 0 (the SIMD width).
    pub multiple: usize,
    /// Work-groups wanted at least (cores / sub-slices).
    pub target_groups: usize,
}

/// Picks a local size for `global` (see the module documentation for the rule).
pub fn pick_local_size(p: &PickParams, kernel: &KernelInfo, work_dim: u32, global: [usize; 3]) -> [usize; 3] {
    if let Some(reqd) = kernel.reqd_work_group_size {
        return reqd;
    }
    if !(1..=3).contains(&work_dim) {
        return [1; 3];
    }
    let dims = work_dim as usize;
    let g: [usize; 3] = std::array::from_fn(|d| if d < dims { global[d].max(1) } else { 1 });
    let target = p.target_groups.max(1) as u128;
    let multiple = p.multiple.max(1);
    // Work-groups so far, with undecided dimensions counted at size 1.
    let mut groups: u128 = g.iter().map(|&x| x as u128).product();
    let mut budget = p.max_work_group_size.max(1);
    let mut local = [1; 3];
    for d in 0..dims {
        let limit = budget.min(p.max_work_item_sizes[d].max(1)).min(g[d]);
        let enough = |l: usize| groups / l as u128 >= target;
        let divisors = || (1..=limit).rev().filter(|&l| g[d].is_multiple_of(l));
        let mut pick = None;
        if d == 0 {
            pick = divisors().find(|&l| l.is_multiple_of(multiple) && enough(l));
        }
        let l = pick.or_else(|| divisors().find(|&l| enough(l))).unwrap_or(1);
        local[d] = l;
        budget /= l;
        groups /= l as u128;
    }
    local
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: PickParams =
        PickParams { max_work_group_size: 4096, max_work_item_sizes: [4096; 3], multiple: 16, target_groups: 2 };
    const GEN: PickParams =
        PickParams { max_work_group_size: 256, max_work_item_sizes: [256; 3], multiple: 32, target_groups: 3 };

    fn check(p: &PickParams, dim: u32, global: [usize; 3]) -> [usize; 3] {
        let l = pick_local_size(p, &KernelInfo::default(), dim, global);
        let product: usize = l.iter().product();
        assert!(product >= 1 && product <= p.max_work_group_size, "{global:?} -> {l:?}");
        for d in 0..3 {
            assert!(l[d] >= 1 && l[d] <= p.max_work_item_sizes[d]);
            if d < dim as usize {
                assert_eq!(global[d].max(1) % l[d], 0, "{global:?} -> {l:?} not uniform");
            } else {
                assert_eq!(l[d], 1);
            }
        }
        l
    }

    #[test]
    fn divides_global_and_respects_limits() {
        for p in [CPU, GEN] {
            for dim in 1..=3u32 {
                for g in [1usize, 2, 3, 7, 16, 31, 64, 96, 100, 1000, 1024, 4097, 65536, 1 << 20, 1_000_003] {
                    check(&p, dim, [g, g.min(300), 5]);
                    check(&p, dim, [g, 1, 1]);
                    check(&p, dim, [3, g, 7]);
                }
            }
        }
    }

    #[test]
    fn prefers_simd_multiples_and_enough_groups() {
        assert_eq!(check(&CPU, 1, [1 << 20, 1, 1]), [4096, 1, 1]);
        assert_eq!(check(&CPU, 1, [4096, 1, 1]), [2048, 1, 1]); // two groups for two cores
        assert_eq!(check(&CPU, 1, [1000, 1, 1]), [500, 1, 1]); // no multiple of 16 divides 1000
        assert_eq!(check(&CPU, 1, [16, 1, 1]), [8, 1, 1]);
        assert_eq!(check(&CPU, 1, [1, 1, 1]), [1, 1, 1]);
        assert_eq!(check(&CPU, 2, [16, 1024, 1]), [16, 256, 1]);
        assert_eq!(check(&GEN, 1, [1 << 20, 1, 1]), [256, 1, 1]);
        assert_eq!(check(&GEN, 1, [96, 1, 1]), [32, 1, 1]);
        assert_eq!(check(&GEN, 2, [1024, 1024, 1]), [256, 1, 1]);
        assert_eq!(check(&GEN, 2, [64, 64, 1]), [64, 4, 1]);
        assert_eq!(check(&GEN, 1, [1_000_003, 1, 1]), [1, 1, 1]); // prime
        assert_eq!(check(&GEN, 3, [0, 5, 5]), [1, 5, 1]); // zero global: no division by zero
    }

    #[test]
    fn honours_reqd_work_group_size() {
        let k = KernelInfo { reqd_work_group_size: Some([8, 2, 1]), ..KernelInfo::default() };
        assert_eq!(pick_local_size(&GEN, &k, 2, [1024, 1024, 1]), [8, 2, 1]);
        assert_eq!(pick_local_size(&CPU, &k, 2, [1000, 10, 1]), [8, 2, 1]);
    }

    #[test]
    fn bad_work_dim() {
        assert_eq!(pick_local_size(&CPU, &KernelInfo::default(), 0, [8; 3]), [1; 3]);
        assert_eq!(pick_local_size(&CPU, &KernelInfo::default(), 7, [8; 3]), [1; 3]);
    }
}
