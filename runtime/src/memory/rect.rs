//! The 2D/3D rectangles of clEnqueue{Read,Write,Copy}BufferRect: a layout (origin, row and
//! slice pitch) on each side, walked row by row.

use crate::cl::*;

/// One side of a rect command: where the rectangle starts and how rows and slices are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RectLayout {
    pub origin: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl RectLayout {
    /// A layout with the specification's defaults applied: "If row_pitch is 0, row_pitch is
    /// computed as region[0]. If slice_pitch is 0, slice_pitch is computed as region[1] ×
    /// row_pitch." `region` has no 0 element (checked by the caller).
    pub fn new(origin: [usize; 3], region: [usize; 3], row_pitch: usize, slice_pitch: usize) -> Result<Self, cl_int> {
        // "CL_INVALID_VALUE if buffer_row_pitch is not 0 and is less than region[0]." (and
        // likewise for host_row_pitch)
        let row_pitch = match row_pitch {
            0 => region[0],
            p if p < region[0] => return Err(CL_INVALID_VALUE),
            p => p,
        };
        let min_slice = region[1].checked_mul(row_pitch).ok_or(CL_INVALID_VALUE)?;
        // "CL_INVALID_VALUE if buffer_slice_pitch is not 0 and is less than region[1] ×
        // buffer_row_pitch and not a multiple of buffer_row_pitch." (read, like other
        // implementations and the CTS, as either condition)
        let slice_pitch = match slice_pitch {
            0 => min_slice,
            p if p < min_slice || !p.is_multiple_of(row_pitch) => return Err(CL_INVALID_VALUE),
            p => p,
        };
        Ok(Self { origin, row_pitch, slice_pitch })
    }

    /// Byte offset of the start of row `y` of slice `z` of the rectangle.
    pub fn row_offset(&self, y: usize, z: usize) -> Option<usize> {
        let z = self.origin[2].checked_add(z)?.checked_mul(self.slice_pitch)?;
        let y = self.origin[1].checked_add(y)?.checked_mul(self.row_pitch)?;
        z.checked_add(y)?.checked_add(self.origin[0])
    }

    /// One past the last byte the rectangle touches (CL_INVALID_VALUE on overflow).
    pub fn end(&self, region: [usize; 3]) -> Result<usize, cl_int> {
        self.row_offset(region[1] - 1, region[2] - 1).and_then(|o| o.checked_add(region[0])).ok_or(CL_INVALID_VALUE)
    }

    /// The start of every row of the rectangle.
    fn rows(&self, region: [usize; 3]) -> impl Iterator<Item = Option<usize>> + '_ {
        (0..region[2]).flat_map(move |z| (0..region[1]).map(move |y| self.row_offset(y, z)))
    }
}

/// Calls `f(a_offset, b_offset, len)` for every row of `region` in the two layouts.
pub fn for_each_row(
    a: &RectLayout,
    b: &RectLayout,
    region: [usize; 3],
    mut f: impl FnMut(usize, usize, usize) -> Result<(), cl_int>,
) -> Result<(), cl_int> {
    for (ra, rb) in a.rows(region).zip(b.rows(region)) {
        f(ra.ok_or(CL_INVALID_VALUE)?, rb.ok_or(CL_INVALID_VALUE)?, region[0])?;
    }
    Ok(())
}

/// Whether any row of `a` (shifted by `a_base`) intersects any row of `b` (shifted by
/// `b_base`): the exact test behind CL_MEM_COPY_OVERLAP for copies within one storage.
pub fn overlaps(a: &RectLayout, a_base: usize, b: &RectLayout, b_base: usize, region: [usize; 3]) -> bool {
    let mut rows: Vec<(usize, bool)> = a
        .rows(region)
        .map(|r| (r.unwrap_or(usize::MAX).saturating_add(a_base), false))
        .chain(b.rows(region).map(|r| (r.unwrap_or(usize::MAX).saturating_add(b_base), true)))
        .collect();
    rows.sort_unstable();
    // Rows of one side never overlap each other (row pitch >= width), so after sorting by
    // start, an overlap between the sides shows up between neighbours.
    let mut last_end: [Option<usize>; 2] = [None, None];
    for (start, side) in rows {
        let other = usize::from(!side);
        if last_end[other].is_some_and(|end| end > start) {
            return true;
        }
        let end = start.saturating_add(region[0]);
        let mine = &mut last_end[usize::from(side)];
        *mine = Some(mine.map_or(end, |e| e.max(end)));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_pitch_errors() {
        let l = RectLayout::new([1, 2, 3], [4, 5, 6], 0, 0).unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch), (4, 20));
        assert_eq!(l.row_offset(0, 0), Some(3 * 20 + 2 * 4 + 1));
        assert_eq!(RectLayout::new([0; 3], [4, 5, 6], 3, 0), Err(CL_INVALID_VALUE));
        assert_eq!(RectLayout::new([0; 3], [4, 5, 6], 8, 39), Err(CL_INVALID_VALUE));
        assert_eq!(RectLayout::new([0; 3], [4, 5, 6], 8, 44), Err(CL_INVALID_VALUE));
        assert!(RectLayout::new([0; 3], [4, 5, 6], 8, 48).is_ok());
        let l = RectLayout::new([0; 3], [4, 2, 2], 10, 30).unwrap();
        assert_eq!(l.end([4, 2, 2]), Ok(30 + 10 + 4));
    }

    #[test]
    fn overlap_is_exact() {
        let region = [4, 4, 1];
        let l = RectLayout::new([0; 3], region, 16, 0).unwrap();
        let shifted = RectLayout::new([8, 0, 0], region, 16, 0).unwrap();
        // Interleaved columns: no byte in common.
        assert!(!overlaps(&l, 0, &shifted, 0, region));
        let shifted = RectLayout::new([3, 0, 0], region, 16, 0).unwrap();
        assert!(overlaps(&l, 0, &shifted, 0, region));
        let below = RectLayout::new([0, 4, 0], region, 16, 0).unwrap();
        assert!(!overlaps(&l, 0, &below, 0, region));
        assert!(overlaps(&l, 0, &below, 0, [4, 5, 1]));
        assert!(overlaps(&l, 16, &l, 0, region));
    }
}
