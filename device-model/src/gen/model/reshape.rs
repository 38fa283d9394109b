//! Other work-group shapes of the same size, priced by the model: the shape advice.
//!
//! The L3 lines of a message follow from which work-items its lanes are: a hardware thread
//! takes consecutive linear local ids (x fastest), so in <16,16,1> work-groups at SIMD16 a
//! thread is one row, at SIMD32 two. Where the compiler saw a global or constant site's
//! address step by a constant per local id of each dimension (`GenSite::lane_strides`), the
//! lines of its messages in another shape follow: the site's observed lines are scaled by
//! the ratio of the lines its lanes touch in each shape (base address line-aligned; its
//! real alignment is in the observed lines, and the ratio keeps it). Every work-group's
//! counters are priced again with the scaled lines, in the same waves, and the launch time
//! compared.
//!
//! Only kernels whose work-items do not depend on the shape (`GenKernelInfo::shape_free`:
//! no local or group id, no barrier, no SLM) get a suggestion, only when every site that
//! moved lines has strides (a gather's lines in another shape are unknown), only for shapes
//! of the same number of work-items that divide the NDRange, and only when the model
//! predicts the whole launch faster. Occupancy, instructions and lane utilisation are taken
//! as they are (a shape of the same size has the same threads).

use super::GenShape;
use softcl_compiler::gen_abi::{self, AccessKind, GenKernelInfo, SameAddress};
use softcl_compiler::AddressSpace;

/// At most this many other shapes are priced per launch.
const MAX_SHAPES: usize = 10;

/// Another work-group shape and how the lines of each site scale in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reshape {
    pub local_size: [usize; 3],
    /// Per site: the factor of its L3 lines; `None` for a site whose lines in this shape are
    /// unknown (no strides), which keeps its own.
    pub scale: Vec<Option<f64>>,
}

impl Reshape {
    /// `counters` (one work-group's, `gen_abi`'s layout) with each site's lines scaled.
    pub fn apply(&self, counters: &[u64], out: &mut Vec<u64>) {
        out.clear();
        out.extend_from_slice(counters);
        let sites = self.scale.len();
        for (k, s) in self.scale.iter().enumerate() {
            if let (Some(s), Some(w)) =
                (s, out.get_mut(gen_abi::site_word_index(sites, k, gen_abi::site_word::L3_LINES)))
            {
                *w = (*w as f64 * s).round() as u64;
            }
        }
    }

    /// Whether the lines of the sites without strides (which this shape cannot re-count)
    /// are a negligible share, under 1%, of the launch's lines `lines` (per site, summed).
    pub fn known(&self, lines: &[u64]) -> bool {
        let total: u64 = lines.iter().sum();
        let unknown: u64 = self.scale.iter().zip(lines).filter(|(s, _)| s.is_none()).map(|(_, &l)| l).sum();
        unknown * 100 <= total
    }
}

/// The shapes worth pricing for a launch of `kernel` over `global` in work-groups of
/// `local` at `simd`: none unless the kernel is shape-free; otherwise the two-dimensional
/// shapes of the same size with rows of a power of two work-items (or the whole work-group
/// in one row), dividing the NDRange.
pub fn candidates(kernel: &GenKernelInfo, shape: &GenShape) -> Vec<Reshape> {
    let (global, local) = (shape.global_size, shape.local_size);
    if !kernel.shape_free || local[2] > 1 || global[2] > 1 {
        return Vec::new();
    }
    let size = local[0] * local[1];
    let mut widths: Vec<usize> =
        (0..usize::BITS).map(|k| 1usize << k).take_while(|&w| w <= size).filter(|&w| size.is_multiple_of(w)).collect();
    if !widths.contains(&size) {
        widths.push(size);
    }
    let mut shapes: Vec<[usize; 3]> = widths
        .into_iter()
        .map(|w| [w, size / w, 1])
        .filter(|s| *s != local && global[0].is_multiple_of(s[0]) && global[1].is_multiple_of(s[1]))
        .collect();
    // The shapes nearest the current one first.
    shapes.sort_by_key(|s| s[0].max(local[0]) / s[0].min(local[0]).max(1));
    shapes.truncate(MAX_SHAPES);
    shapes
        .into_iter()
        .map(|s| Reshape { local_size: s, scale: kernel.sites.iter().map(|site| site_scale(site, shape, s)).collect() })
        .collect()
}

/// How site `site`'s lines scale from work-groups `from` to `to` at `simd`.
fn site_scale(site: &gen_abi::GenSite, shape: &GenShape, to: [usize; 3]) -> Option<f64> {
    let (from, simd) = (shape.local_size, shape.simd.max(1) as usize);
    let counted = matches!(site.space, AddressSpace::Global | AddressSpace::Constant)
        && !(site.kind == AccessKind::Atomic && site.same_address != SameAddress::Unknown)
        && !site.sub_group_block;
    if !counted {
        // SLM and private sites' lines do not depend on the shape (the kernel has no SLM);
        // atomics on one address cost their lanes; a sub-group block moves its block.
        return Some(1.0);
    }
    let terms = site.lane_strides.as_ref()?;
    let mut strides = [0i64; 3];
    for (d, sum) in terms.iter().enumerate() {
        for &(c, v) in sum {
            let x = match v {
                None => 1,
                Some(v) => shape.launch_value(v)?,
            };
            strides[d] = strides[d].wrapping_add(c.wrapping_mul(x));
        }
    }
    let bytes = u64::from(site.bytes_per_lane.max(1));
    let before = mean_lines(strides, bytes, from, simd);
    let after = mean_lines(strides, bytes, to, simd);
    (before > 0.0).then(|| after / before)
}

/// The mean lines per message of a site whose lanes move `bytes` at `strides` bytes per
/// local id of each dimension, over the hardware threads of one work-group `local` at
/// `simd` (lanes: consecutive linear local ids), the work-group's base address line-aligned.
pub fn mean_lines(strides: [i64; 3], bytes: u64, local: [usize; 3], simd: usize) -> f64 {
    let size = local.iter().product::<usize>().max(1);
    let threads = size.div_ceil(simd.max(1));
    let mut total = 0u64;
    let mut lines: Vec<(i64, i64)> = Vec::with_capacity(simd);
    for t in 0..threads {
        lines.clear();
        for lin in t * simd..((t + 1) * simd).min(size) {
            let id = [lin % local[0], (lin / local[0]) % local[1], lin / (local[0] * local[1])];
            let at: i64 = (0..3).map(|d| strides[d].wrapping_mul(id[d] as i64)).sum();
            lines.push((at.div_euclid(64), (at + bytes as i64 - 1).div_euclid(64)));
        }
        total += distinct_lines(&mut lines);
    }
    total as f64 / threads as f64
}

/// Distinct lines in the union of ranges `first..=last`.
fn distinct_lines(ranges: &mut [(i64, i64)]) -> u64 {
    ranges.sort_unstable();
    let mut count = 0u64;
    let mut covered = i64::MIN;
    for &(a, b) in ranges.iter() {
        let from = a.max(covered.saturating_add(1));
        if b >= from {
            count += (b - from + 1) as u64;
            covered = b;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_rows_and_columns() {
        // a[y * 256 + x] of ints: rows of 16 lanes read one line; <16,16> at SIMD32 two.
        let row = [4, 1024, 0];
        assert_eq!(mean_lines(row, 4, [16, 16, 1], 16), 1.0);
        assert_eq!(mean_lines(row, 4, [16, 16, 1], 32), 2.0);
        assert_eq!(mean_lines(row, 4, [256, 1, 1], 32), 2.0);
        // out[x * 256 + y]: a column per row of lanes.
        let column = [1024, 4, 0];
        assert_eq!(mean_lines(column, 4, [16, 16, 1], 16), 16.0);
        assert_eq!(mean_lines(column, 4, [256, 1, 1], 16), 16.0);
        assert_eq!(mean_lines(column, 4, [1, 256, 1], 16), 1.0);
        // Overlapping lanes (a stencil's neighbours) count each line once.
        assert_eq!(mean_lines([4, 0, 0], 8, [16, 1, 1], 16), 2.0);
    }

    #[test]
    fn only_shape_free_kernels_of_known_strides_are_reshaped() {
        let site = |strides: Option<[i64; 3]>| gen_abi::GenSite {
            block: 0,
            space: AddressSpace::Global,
            kind: AccessKind::Load,
            bytes_per_lane: 4,
            loc: None,
            waits_for: vec![],
            same_address: SameAddress::Unknown,
            lane_strides: strides.map(|s| s.map(|c| vec![(c, None)])),
            sub_group_block: false,
        };
        let shape = |global: [usize; 3]| GenShape {
            global_size: global,
            local_size: [16, 16, 1],
            groups: [1, 1, 1],
            simd: 16,
            barriers: 0,
            slm_bytes: 0,
            footprint_bytes: None,
            int_args: vec![],
        };
        let mut k = GenKernelInfo { simd: 16, sites: vec![site(Some([1024, 4, 0])), site(None)], ..Default::default() };
        assert!(candidates(&k, &shape([256, 256, 1])).is_empty(), "not shape-free");
        k.shape_free = true;
        let c = candidates(&k, &shape([256, 256, 1]));
        let shapes: Vec<[usize; 3]> = c.iter().map(|r| r.local_size).collect();
        assert_eq!(
            shapes,
            vec![[8, 32, 1], [32, 8, 1], [4, 64, 1], [64, 4, 1], [2, 128, 1], [128, 2, 1], [1, 256, 1], [256, 1, 1]]
        );
        // <8,32>: the column site's 16 lines per message become 8 (two rows share each line).
        assert_eq!(c[0].scale, vec![Some(0.5), None]);
        assert!(c[0].known(&[100, 1]) && !c[0].known(&[100, 2]));
        let mut out = Vec::new();
        c[0].apply(&[10, 7, 0, 0, 0, 0, 0, 0], &mut out);
        assert_eq!(out[..2], [5, 7], "the first site's lines halved, the unknown one kept");
        // A shape that does not divide the NDRange is not priced.
        assert!(candidates(&k, &shape([48, 48, 1])).iter().all(|r| r.local_size[0] <= 48));
    }
}
