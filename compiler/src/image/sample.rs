//! Reading and writing pixels the way the OpenCL C image functions do: samplers
//! (normalized or unnormalized coordinates; addressing none, clamp-to-edge, clamp, repeat,
//! mirrored repeat; nearest or linear filtering), sampler-less reads with integer
//! coordinates, and writes, over 1D, 1D-buffer, 1D-array, 2D, 2D-array and 3D images.
//! The formulas are those of the OpenCL C specification's "Image Addressing and Filtering".

use super::format::{Components, Format, Kind};

/// The sampler bits of OpenCL C's `sampler_t` (opencl-c-base.h): normalized coordinates in
/// bit 0, the addressing mode in bits 1-3, the filter in bits 4-5.
pub const CLK_NORMALIZED_COORDS_TRUE: u32 = 0x1;
pub const CLK_ADDRESS_NONE: u32 = 0x0;
pub const CLK_ADDRESS_CLAMP_TO_EDGE: u32 = 0x2;
pub const CLK_ADDRESS_CLAMP: u32 = 0x4;
pub const CLK_ADDRESS_REPEAT: u32 = 0x6;
pub const CLK_ADDRESS_MIRRORED_REPEAT: u32 = 0x8;
pub const CLK_FILTER_NEAREST: u32 = 0x10;
pub const CLK_FILTER_LINEAR: u32 = 0x20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    None,
    ClampToEdge,
    Clamp,
    Repeat,
    MirroredRepeat,
}

/// A sampler's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub normalized: bool,
    pub addressing: Addressing,
    pub linear: bool,
}

impl Sampler {
    /// The sampler of `sampler_t` bits; `None` for an addressing mode that does not exist.
    pub fn from_bits(bits: u32) -> Option<Self> {
        let addressing = match bits & 0xE {
            CLK_ADDRESS_NONE => Addressing::None,
            CLK_ADDRESS_CLAMP_TO_EDGE => Addressing::ClampToEdge,
            CLK_ADDRESS_CLAMP => Addressing::Clamp,
            CLK_ADDRESS_REPEAT => Addressing::Repeat,
            CLK_ADDRESS_MIRRORED_REPEAT => Addressing::MirroredRepeat,
            _ => return None,
        };
        Some(Sampler { normalized: bits & 1 != 0, addressing, linear: bits & CLK_FILTER_LINEAR != 0 })
    }

    pub fn bits(self) -> u32 {
        let a = match self.addressing {
            Addressing::None => CLK_ADDRESS_NONE,
            Addressing::ClampToEdge => CLK_ADDRESS_CLAMP_TO_EDGE,
            Addressing::Clamp => CLK_ADDRESS_CLAMP,
            Addressing::Repeat => CLK_ADDRESS_REPEAT,
            Addressing::MirroredRepeat => CLK_ADDRESS_MIRRORED_REPEAT,
        };
        a | self.normalized as u32 | if self.linear { CLK_FILTER_LINEAR } else { CLK_FILTER_NEAREST }
    }
}

/// How an image's coordinates are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    D1,
    D1Buffer,
    D1Array,
    D2,
    D2Array,
    D3,
}

impl Dim {
    /// Spatial coordinates (the others, if any, select the layer).
    pub fn spatial(self) -> usize {
        match self {
            Dim::D1 | Dim::D1Buffer | Dim::D1Array => 1,
            Dim::D2 | Dim::D2Array => 2,
            Dim::D3 => 3,
        }
    }

    fn arrayed(self) -> bool {
        matches!(self, Dim::D1Array | Dim::D2Array)
    }
}

/// An image's pixels: `size` is (width, height, depth) with the layers of an array in the
/// dimension after its spatial ones (height of a 1D array, depth of a 2D array) and 1 for
/// the others; pixel (x, y, z) starts at byte `x * pixel_size + y * row_pitch + z *
/// slice_pitch` of `data`: any byte storage, `&mut [u8]` to write (`store`), a shared
/// `&[u8]` suffices to read (compiled kernels read images that other work-items read at the
/// same time).
pub struct Image<D> {
    pub data: D,
    pub format: Format,
    pub dim: Dim,
    pub size: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl<D: AsRef<[u8]> + AsMut<[u8]>> Image<D> {
    /// `write_image*`: stores `value` at `at`; a write outside the image is dropped (the
    /// specification leaves it undefined; memory outside the image is never touched).
    pub fn store(&mut self, at: [i64; 3], value: Components) {
        let Some(at) =
            (|| Some([usize::try_from(at[0]).ok()?, usize::try_from(at[1]).ok()?, usize::try_from(at[2]).ok()?]))()
        else {
            return;
        };
        if let Some(off) = self.offset(at) {
            let ps = self.format.pixel_size();
            self.format.encode(value, &mut self.data.as_mut()[off..off + ps]);
        }
    }
}

impl<D: AsRef<[u8]>> Image<D> {
    pub(crate) fn offset(&self, at: [usize; 3]) -> Option<usize> {
        if (0..3).any(|d| at[d] >= self.size[d]) {
            return None;
        }
        let ps = self.format.pixel_size();
        let off = at[0] * ps + at[1] * self.row_pitch + at[2] * self.slice_pitch;
        (off + ps <= self.data.as_ref().len()).then_some(off)
    }

    /// The pixel at integer coordinates `at` (x, y, z or layer), `None` outside the image.
    pub fn load(&self, at: [i64; 3]) -> Option<Components> {
        let at = [usize::try_from(at[0]).ok()?, usize::try_from(at[1]).ok()?, usize::try_from(at[2]).ok()?];
        let off = self.offset(at)?;
        Some(self.format.decode(&self.data.as_ref()[off..off + self.format.pixel_size()]))
    }

    /// A sampler-less read (`read_image*(image, int coords)`) or a read with a nearest
    /// sampler of unnormalized coordinates given as integers: outside the image, the
    /// border colour.
    pub fn read_int_coords(&self, at: [i64; 3]) -> Components {
        self.load(at).unwrap_or_else(|| self.border())
    }

    /// The border colour of the image's order, in its kind.
    pub fn border(&self) -> Components {
        let one = if self.format.kind() == Kind::Float { 1.0f32.to_bits() } else { 1 };
        [0, 0, 0, if self.format.order.border_alpha_one() { one } else { 0 }]
    }

    /// `read_image*(image, sampler, float coords)`: coordinates in `coord` (x, y, z or
    /// layer as the dimension has them; unused ones ignored).
    pub fn sample(&self, sampler: Sampler, coord: [f32; 3]) -> Components {
        if sampler.linear && self.dim == Dim::D2 && self.format.kind() == Kind::Float {
            // [`Self::corners`] of a 2D image, without its loop over the dimensions.
            let (x0, x1, fx) = linear_index(sampler, coord[0], self.size[0] as i64);
            let (y0, y1, fy) = linear_index(sampler, coord[1], self.size[1] as i64);
            let c = Corners { lo: [x0, y0, 0], hi: [x1, y1, 0], frac: [fx, fy, 0.0], n: 2, linear: true };
            return self.bilinear(sampler, &c);
        }
        let c = self.corners(sampler, coord);
        let texel = |at: [i64; 3]| self.load(self.pixel_of(sampler, at)).unwrap_or_else(|| self.border());
        if !c.linear {
            return texel(c.lo);
        }
        // Weighted sum over the 2^n corners: weight of `hi` in dimension d is frac[d].
        let mut acc = [0f32; 4];
        for corner in 0..(1usize << c.n) {
            let (at, w) = c.corner(corner);
            let t = texel(at);
            for k in 0..4 {
                acc[k] += w * f32::from_bits(t[k]);
            }
        }
        acc.map(f32::to_bits)
    }

    /// Linear filtering of a 2D image: [`Self::sample`]'s weighted sum over the four corners,
    /// in the same order and with the same weights (so the same result), each corner's
    /// pixel found once.
    fn bilinear(&self, sampler: Sampler, c: &Corners) -> Components {
        use super::format::Common;
        // The decoding picked once, so that each instance has it inline.
        match self.format.common() {
            Some(Common::RUnorm8) => self.bilinear_with(sampler, c, |px| Common::RUnorm8.decode(px)),
            Some(Common::RgbaUnorm8) => self.bilinear_with(sampler, c, |px| Common::RgbaUnorm8.decode(px)),
            Some(Common::BgraUnorm8) => self.bilinear_with(sampler, c, |px| Common::BgraUnorm8.decode(px)),
            Some(Common::RFloat) => self.bilinear_with(sampler, c, |px| Common::RFloat.decode(px)),
            Some(Common::RgbaFloat) => self.bilinear_with(sampler, c, |px| Common::RgbaFloat.decode(px)),
            None => self.bilinear_with(sampler, c, |px| self.format.decode(px)),
        }
    }

    /// [`Self::bilinear`] with the format's decoding `decode`.
    #[inline(always)]
    fn bilinear_with(&self, sampler: Sampler, c: &Corners, decode: impl Fn(&[u8]) -> Components) -> Components {
        let data = self.data.as_ref();
        let ps = self.format.pixel_size();
        // [`Self::pixel_of`] per axis: the byte offset of column x and of row y after the
        // addressing mode, None outside the image (the border colour).
        let edge = sampler.addressing != Addressing::Clamp;
        let axis = |v: i64, size: usize, step: usize| -> Option<usize> {
            let v = if edge { v.clamp(0, (size as i64 - 1).max(0)) } else { v };
            let v = usize::try_from(v).ok()?;
            (v < size).then_some(v * step)
        };
        let cols = [axis(c.lo[0], self.size[0], ps), axis(c.hi[0], self.size[0], ps)];
        let rows = [axis(c.lo[1], self.size[1], self.row_pitch), axis(c.hi[1], self.size[1], self.row_pitch)];
        let at = |x: usize, y: usize| -> Option<usize> {
            let off = cols[x]? + rows[y]?;
            (self.size[2] != 0 && off + ps <= data.len()).then_some(off)
        };
        let (fx, fy) = (c.frac[0], c.frac[1]);
        let corners = [
            (at(0, 0), (1.0 - fx) * (1.0 - fy)),
            (at(1, 0), fx * (1.0 - fy)),
            (at(0, 1), (1.0 - fx) * fy),
            (at(1, 1), fx * fy),
        ];
        let mut acc = [0f32; 4];
        for (off, w) in corners {
            let t = match off {
                Some(off) => decode(&data[off..off + ps]),
                None => self.border(),
            };
            for k in 0..4 {
                acc[k] += w * f32::from_bits(t[k]);
            }
        }
        acc.map(f32::to_bits)
    }

    /// The pixels a `read_image*(image, sampler, float coords)` loads (what [`Self::sample`]
    /// reads): one for nearest filtering, the 2, 4 or 8 corners of linear filtering (some
    /// may repeat at an edge), none where the border colour stands in (CLAMP outside the
    /// image). Returns the pixels' indices and their number.
    pub fn sampled_pixels(&self, sampler: Sampler, coord: [f32; 3]) -> ([[i64; 3]; 8], usize) {
        let c = self.corners(sampler, coord);
        let mut out = [[0i64; 3]; 8];
        let mut n = 0;
        let inside = |p: [i64; 3]| (0..3).all(|d| p[d] >= 0 && (p[d] as u64) < self.size[d] as u64);
        for corner in 0..if c.linear { 1usize << c.n } else { 1 } {
            let p = self.pixel_of(sampler, c.corner(corner).0);
            if inside(p) {
                out[n] = p;
                n += 1;
            }
        }
        (out, n)
    }

    /// The filter's corners of a sampled read at `coord`.
    fn corners(&self, sampler: Sampler, coord: [f32; 3]) -> Corners {
        let n = self.dim.spatial();
        let linear = sampler.linear && self.format.kind() == Kind::Float;
        let mut c = Corners { lo: [0; 3], hi: [0; 3], frac: [0.0; 3], n, linear };
        for (d, (&x, &size)) in coord.iter().zip(&self.size).enumerate().take(n) {
            if linear {
                (c.lo[d], c.hi[d], c.frac[d]) = linear_index(sampler, x, size as i64);
            } else {
                c.lo[d] = nearest_index(sampler, x, size as i64);
                c.hi[d] = c.lo[d];
            }
        }
        if self.dim.arrayed() {
            let layers = self.size[n] as i64;
            let layer = (coord[n].round_ties_even() as i64).clamp(0, (layers - 1).max(0));
            (c.lo[n], c.hi[n]) = (layer, layer);
        }
        c
    }

    /// The pixel a filter corner at `at` loads; outside the image (CLAMP's border, or an
    /// empty image) the border colour stands in for it.
    fn pixel_of(&self, sampler: Sampler, at: [i64; 3]) -> [i64; 3] {
        match sampler.addressing {
            // Outside under CLAMP: the border colour. Elsewhere the index is in range
            // (NONE promises it; out of range it reads as CLAMP_TO_EDGE would).
            Addressing::Clamp => at,
            _ => [0, 1, 2].map(|d| at[d].clamp(0, (self.size[d] as i64 - 1).max(0))),
        }
    }
}

/// The corners of a sampled read: indices `lo` and `hi` and the weight `frac` of `hi` in
/// each of the `n` spatial dimensions (the layer of an array in `lo` and `hi` after them);
/// `linear` when the read filters linearly (2^n corners), else `lo` is the one pixel.
struct Corners {
    lo: [i64; 3],
    hi: [i64; 3],
    frac: [f32; 3],
    n: usize,
    linear: bool,
}

impl Corners {
    /// Corner `k` (bit d set: `hi` in dimension d) and its weight.
    fn corner(&self, k: usize) -> ([i64; 3], f32) {
        let mut at = self.lo;
        let mut w = 1f32;
        for (d, (a, (&hi, &frac))) in at.iter_mut().zip(self.hi.iter().zip(&self.frac)).enumerate().take(self.n) {
            if k >> d & 1 == 1 {
                *a = hi;
                w *= frac;
            } else {
                w *= 1.0 - frac;
            }
        }
        (at, w)
    }
}

/// `x.floor() as i64` (saturating, NaN to 0) without a call of libm's `floorf`: the crate's
/// baseline x86-64 has no rounding instruction, and every sampled read asks this of each
/// coordinate (the Gen model too, of every lane).
pub(crate) fn floor_i64(x: f32) -> i64 {
    let t = x as i64;
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// `x.floor()` without a call of libm's `floorf` (see [`floor_i64`]): an integer (from 2^23
/// on every float is one), -0.0 and NaN are their own floor.
fn floor_f32(x: f32) -> f32 {
    let f = if x.abs() < 8_388_608.0 { floor_i64(x) as f32 } else { x };
    if f == x {
        x
    } else {
        f
    }
}

/// The texel index of nearest filtering along one dimension of `size` texels (before
/// the out-of-range handling of CLAMP).
fn nearest_index(s: Sampler, x: f32, size: i64) -> i64 {
    let w = size as f32;
    let u = if s.normalized { x * w } else { x };
    match (s.addressing, s.normalized) {
        (Addressing::Repeat, true) => {
            let i = floor_i64((x - floor_f32(x)) * w);
            if i > size - 1 {
                i - size
            } else {
                i
            }
        }
        (Addressing::MirroredRepeat, true) => {
            let sp = (x - 2.0 * (0.5 * x).round_ties_even()).abs();
            floor_i64(sp * w).min(size - 1)
        }
        (Addressing::Clamp, _) => floor_i64(u).clamp(-1, size),
        _ => floor_i64(u).clamp(0, size - 1),
    }
}

/// The two texel indices and the weight of the second of linear filtering along one
/// dimension of `size` texels.
#[inline]
fn linear_index(s: Sampler, x: f32, size: i64) -> (i64, i64, f32) {
    let w = size as f32;
    let frac = |v: f32| v - floor_f32(v);
    match (s.addressing, s.normalized) {
        (Addressing::Repeat, true) => {
            let u = (x - floor_f32(x)) * w;
            let i0 = floor_i64(u - 0.5);
            let i1 = i0 + 1;
            let i0 = if i0 < 0 { size + i0 } else { i0 };
            let i1 = if i1 > size - 1 { i1 - size } else { i1 };
            (i0, i1, frac(u - 0.5))
        }
        (Addressing::MirroredRepeat, true) => {
            let sp = (x - 2.0 * (0.5 * x).round_ties_even()).abs();
            let u = sp * w;
            let i0 = floor_i64(u - 0.5);
            ((i0).max(0), (i0 + 1).min(size - 1), frac(u - 0.5))
        }
        (addressing, _) => {
            let u = if s.normalized { x * w } else { x };
            let i0 = floor_i64(u - 0.5);
            let (lo, hi) = if addressing == Addressing::Clamp { (-1, size) } else { (0, size - 1) };
            (i0.clamp(lo, hi), (i0 + 1).clamp(lo, hi), frac(u - 0.5))
        }
    }
}
