//! The image functions of compiled kernels (`read_image*`, `write_image*`, `get_image_*`):
//! generated code calls these by name with the kernel argument's [`ImageArg`] pointer
//! (`back/host.rs` defines the names in the JIT), and they read and write pixels through
//! [`crate::image`]. The scalar functions handle one work-item; the `_lanes` ones a packet
//! of vector code (its lanes' coordinates and results in structure-of-arrays form,
//! component c of lane k at `c * w + k`), the image's layout worked out once per packet
//! instead of once per lane.

use crate::abi::ImageArg;
use crate::image::sample::floor_i64;
use crate::image::{Components, Dim, Format, Image, Kind, Sampler};

/// The [`Dim`] of an [`ImageArg::dim_code`].
fn dim_of(code: u32) -> Option<Dim> {
    use Dim::*;
    [D1, D1Buffer, D1Array, D2, D2Array, D3].into_iter().find(|d| ImageArg::dim_code(*d) == code)
}

/// The bytes an image spans from its first pixel: up to the end of its last pixel.
fn byte_len(arg: &ImageArg, format: Format) -> Option<usize> {
    let [w, h, d] = arg.size.map(|s| s as usize);
    if w == 0 || h == 0 || d == 0 {
        return None;
    }
    let row = usize::try_from(arg.row_pitch).ok()?;
    let slice = usize::try_from(arg.slice_pitch).ok()?;
    (d - 1).checked_mul(slice)?.checked_add((h - 1).checked_mul(row)?)?.checked_add(w.checked_mul(format.pixel_size())?)
}

/// The format and dimension of `arg`; `None` for values no image has.
fn layout(arg: &ImageArg) -> Option<(Format, Dim, usize)> {
    let format = Format::from_cl(arg.channel_order, arg.channel_type)?;
    let dim = dim_of(arg.dim)?;
    if arg.data.is_null() {
        return None;
    }
    Some((format, dim, byte_len(arg, format)?))
}

/// Runs `f` on a read-only view of the image at `img`.
///
/// # Safety
/// `img` points at an [`ImageArg`] whose `data` spans the image's pixels (the kernel ABI,
/// `crate::abi`), valid for the call.
unsafe fn with_image<T>(img: *const ImageArg, f: impl FnOnce(&Image<&[u8]>) -> T) -> Option<T> {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg, valid and unchanged
    // while the launch runs.
    let arg = unsafe { img.as_ref()? };
    let (format, dim, len) = layout(arg)?;
    // SAFETY: `data` spans `len` bytes (pitches and size as the image object has them) and
    // no one writes them during this read (a kernel writes an image it reads only as a
    // read_write image, whose reads after writes need a fence: the specification leaves
    // concurrent reads and writes undefined).
    let data = unsafe { std::slice::from_raw_parts(arg.data as *const u8, len) };
    let image = Image {
        data,
        format,
        dim,
        size: arg.size.map(|s| s as usize),
        row_pitch: arg.row_pitch as usize,
        slice_pitch: arg.slice_pitch as usize,
    };
    Some(f(&image))
}

/// Writes `c` to `out[0..4]`.
///
/// # Safety
/// `out` is valid for writing 4 `u32`s.
unsafe fn put(out: *mut u32, c: Components) {
    for (k, v) in c.into_iter().enumerate() {
        // SAFETY: the caller's scratch of 4 u32s.
        unsafe { out.add(k).write_unaligned(v) };
    }
}

/// `read_image*(image, sampler, coord)`: the 4 components (float bits or integers by the
/// image's format) at float coordinates (x, y, z or layer) into `out`. Zeros for an image
/// or sampler that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI); `out` is valid for 4 `u32`s.
pub unsafe extern "C" fn softcl_image_sample(
    img: *const ImageArg,
    sampler: u32,
    x: f32,
    y: f32,
    z: f32,
    out: *mut u32,
) {
    let c = Sampler::from_bits(sampler)
        // SAFETY: the caller's contract.
        .and_then(|s| unsafe { with_image(img, |i| i.sample(s, [x, y, z])) })
        .unwrap_or([0; 4]);
    // SAFETY: the caller's contract.
    unsafe { put(out, c) }
}

/// `read_image*(image, coord)` without a sampler: the pixel at integer coordinates into
/// `out` (the border colour outside the image).
///
/// # Safety
/// As [`softcl_image_sample`].
pub unsafe extern "C" fn softcl_image_read(img: *const ImageArg, x: i32, y: i32, z: i32, out: *mut u32) {
    let at = [i64::from(x), i64::from(y), i64::from(z)];
    // SAFETY: the caller's contract.
    let c = unsafe { with_image(img, |i| i.read_int_coords(at)) }.unwrap_or([0; 4]);
    // SAFETY: the caller's contract.
    unsafe { put(out, c) }
}

/// `write_image*(image, coord, texel)`: encodes the components (float bits or integers)
/// into the pixel at integer coordinates. Outside the image nothing is written.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI) whose pixels the kernel may write.
pub unsafe extern "C" fn softcl_image_write(
    img: *const ImageArg,
    x: i32,
    y: i32,
    z: i32,
    a: u32,
    b: u32,
    c: u32,
    d: u32,
) {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return };
    let Some((format, _, len)) = layout(arg) else { return };
    // SAFETY: the caller's contract.
    unsafe { write_pixel(arg, format, len, [x, y, z], [a, b, c, d]) }
}

/// Encodes `texel` into the pixel at `at` of the image `arg` (of `format`, spanning `len`
/// bytes); nothing outside the image.
///
/// # Safety
/// `arg` is a valid [`ImageArg`] whose pixels the kernel may write.
unsafe fn write_pixel(arg: &ImageArg, format: Format, len: usize, at: [i32; 3], texel: Components) {
    if (0..3).any(|k| at[k] < 0 || at[k] as u32 >= arg.size[k]) {
        return;
    }
    let ps = format.pixel_size();
    // In range in every dimension, so at most (w-1)*ps + (h-1)*row + (d-1)*slice, which
    // `byte_len` computed without overflow.
    let off = at[0] as usize * ps + at[1] as usize * arg.row_pitch as usize + at[2] as usize * arg.slice_pitch as usize;
    if off + ps > len {
        return;
    }
    // SAFETY: the pixel lies inside the image's `len` bytes (checked above); only this
    // pixel's bytes are borrowed, so work-items writing other pixels do not overlap (two
    // writing the same pixel race as the specification allows: undefined result).
    let px = unsafe { std::slice::from_raw_parts_mut(arg.data.add(off), ps) };
    format.encode(texel, px);
}

/// Where the `bytes` (1, 2, 4 or 8) of a sub-group image block access at byte `x` of row
/// `y` lie in the image `arg` (of `format`, spanning `len` bytes): the byte offset. A read
/// is clamped to the image as the hardware's bounds check clamps it (the row's edge
/// element, the first or last row); a write outside the image (or an image of no such
/// bytes) has none.
fn block_offset(arg: &ImageArg, format: Format, len: usize, x: i32, y: i32, bytes: u32, read: bool) -> Option<usize> {
    let row_bytes = arg.size[0] as usize * format.pixel_size();
    let (n, rows) = (bytes as usize, arg.size[1].max(1) as usize);
    if !matches!(n, 1 | 2 | 4 | 8) || row_bytes < n {
        return None;
    }
    let (x, y) = if read {
        (i64::from(x).clamp(0, (row_bytes - n) as i64) as usize, i64::from(y).clamp(0, rows as i64 - 1) as usize)
    } else {
        let inside = x >= 0 && (x as usize) + n <= row_bytes && y >= 0 && (y as usize) < rows;
        if !inside {
            return None;
        }
        (x as usize, y as usize)
    };
    let off = y.checked_mul(arg.row_pitch as usize)?.checked_add(x)?;
    (off + n <= len).then_some(off)
}

/// `intel_sub_group_block_read*` of an image, one work-item's element: the `bytes` (1, 2,
/// 4 or 8) at byte `x` of row `y`, as stored (no format conversion), zero-extended; clamped
/// to the image (`block_offset`). 0 for an image that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI).
pub unsafe extern "C" fn softcl_image_block_read(img: *const ImageArg, x: i32, y: i32, bytes: u32) -> u64 {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return 0 };
    let Some((format, _, len)) = layout(arg) else { return 0 };
    let Some(off) = block_offset(arg, format, len, x, y, bytes, true) else { return 0 };
    let mut v = [0u8; 8];
    // SAFETY: `off + bytes` lies inside the image's `len` bytes (`block_offset`).
    let src = unsafe { std::slice::from_raw_parts(arg.data.add(off) as *const u8, bytes as usize) };
    v[..bytes as usize].copy_from_slice(src);
    u64::from_le_bytes(v)
}

/// `intel_sub_group_block_write*` of an image, one work-item's element: the low `bytes`
/// (1, 2, 4 or 8) of `value` to byte `x` of row `y`, as stored (no format conversion);
/// nothing outside the image.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI) whose pixels the kernel may write.
pub unsafe extern "C" fn softcl_image_block_write(img: *const ImageArg, x: i32, y: i32, bytes: u32, value: u64) {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return };
    let Some((format, _, len)) = layout(arg) else { return };
    let Some(off) = block_offset(arg, format, len, x, y, bytes, false) else { return };
    // SAFETY: `off + bytes` lies inside the image's `len` bytes (`block_offset`); only these
    // bytes are borrowed (work-items writing the same bytes race as the extension allows).
    let dst = unsafe { std::slice::from_raw_parts_mut(arg.data.add(off), bytes as usize) };
    dst.copy_from_slice(&value.to_le_bytes()[..bytes as usize]);
}

/// Lane `k`'s first three coordinates (0 beyond `ncomp`) of a packet's `w` lanes in
/// structure-of-arrays form.
///
/// # Safety
/// `coords` is valid for reading `ncomp * w` values.
unsafe fn lane_coords<T: Copy + Default>(coords: *const T, ncomp: u32, w: u32, k: u32) -> [T; 3] {
    let mut at = [T::default(); 3];
    for (c, v) in at.iter_mut().enumerate().take(ncomp.min(3) as usize) {
        // SAFETY: c < ncomp and k < w: inside the caller's `ncomp * w` values.
        *v = unsafe { coords.add(c * w as usize + k as usize).read_unaligned() };
    }
    at
}

/// Writes lane `k`'s components `c` into `out` of a packet of `w` lanes (component i at
/// `i * w + k`).
///
/// # Safety
/// `out` is valid for writing `4 * w` `u32`s.
unsafe fn put_lane(out: *mut u32, w: u32, k: u32, c: Components) {
    for (i, v) in c.into_iter().enumerate() {
        // SAFETY: i < 4 and k < w: inside the caller's `4 * w` values.
        unsafe { out.add(i * w as usize + k as usize).write_unaligned(v) };
    }
}

/// The lanes of `mask` among `w` (at most 64), in lane order.
fn lanes(w: u32, mask: u64) -> impl Iterator<Item = u32> {
    (0..w.min(64)).filter(move |k| mask >> k & 1 != 0)
}

/// [`softcl_image_sample`] for the active lanes (`mask` bit k for lane k) of a packet of `w`
/// lanes: coordinates `coords` (`ncomp` components), results into `out` (4 components).
/// Inactive lanes' results are left as they are.
///
/// # Safety
/// `img` points at a valid [`ImageArg`]; `coords` is valid for reading `ncomp * w` floats
/// and `out` for writing `4 * w` `u32`s.
pub unsafe extern "C" fn softcl_image_sample_lanes(
    img: *const ImageArg,
    sampler: u32,
    coords: *const f32,
    ncomp: u32,
    w: u32,
    mask: u64,
    out: *mut u32,
) {
    let sampler = Sampler::from_bits(sampler);
    // SAFETY: the caller's contract: `coords` holds `ncomp * w` floats (lanes k < w).
    let at = |k| unsafe { lane_coords(coords, ncomp, w, k) };
    // SAFETY: the caller's contract.
    unsafe { each_lane(img, w, mask, out, |i, k| sampler.map_or([0; 4], |s| i.sample(s, at(k)))) }
}

/// Puts `f(image, k)` for each active lane k of a packet of `w` into `out` (4 components),
/// zeros for an image that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`]; `out` is valid for writing `4 * w` `u32`s.
unsafe fn each_lane(
    img: *const ImageArg,
    w: u32,
    mask: u64,
    out: *mut u32,
    f: impl Fn(&Image<&[u8]>, u32) -> Components,
) {
    // SAFETY: the caller's contract: `img` is valid and `out` holds `4 * w` values (k < w).
    let done = unsafe { with_image(img, |i| lanes(w, mask).for_each(|k| put_lane(out, w, k, f(i, k)))) };
    if done.is_none() {
        // SAFETY: as above.
        lanes(w, mask).for_each(|k| unsafe { put_lane(out, w, k, [0; 4]) });
    }
}

/// [`softcl_image_read`] for the active lanes of a packet, as [`softcl_image_sample_lanes`].
///
/// # Safety
/// As [`softcl_image_sample_lanes`], `coords` holding `i32`s.
pub unsafe extern "C" fn softcl_image_read_lanes(
    img: *const ImageArg,
    coords: *const i32,
    ncomp: u32,
    w: u32,
    mask: u64,
    out: *mut u32,
) {
    // SAFETY: the caller's contract: `coords` holds `ncomp * w` values (lanes k < w).
    let at = |k| unsafe { lane_coords(coords, ncomp, w, k) }.map(i64::from);
    // SAFETY: the caller's contract.
    unsafe { each_lane(img, w, mask, out, |i, k| i.read_int_coords(at(k))) }
}

/// [`softcl_image_write`] for the active lanes of a packet, in lane order: coordinates
/// `coords` (`ncomp` components), texels `texel` (`tcomp` components: 4, or 1 for a depth
/// image, the others 0).
///
/// # Safety
/// `img` points at a valid [`ImageArg`] whose pixels the kernel may write; `coords` is valid
/// for reading `ncomp * w` `i32`s and `texel` for `tcomp * w` `u32`s.
pub unsafe extern "C" fn softcl_image_write_lanes(
    img: *const ImageArg,
    coords: *const i32,
    ncomp: u32,
    w: u32,
    mask: u64,
    texel: *const u32,
    tcomp: u32,
) {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return };
    let Some((format, _, len)) = layout(arg) else { return };
    for k in lanes(w, mask) {
        let mut t = [0u32; 4];
        for (c, v) in t.iter_mut().enumerate().take(tcomp.min(4) as usize) {
            // SAFETY: c < tcomp and k < w: inside the caller's `tcomp * w` values.
            *v = unsafe { texel.add(c * w as usize + k as usize).read_unaligned() };
        }
        // SAFETY: the caller's contract.
        unsafe { write_pixel(arg, format, len, lane_coords(coords, ncomp, w, k), t) };
    }
}

/// `get_image_*`: `what` 0-2 the size in dimension `what` (width, height, depth or layers
/// as [`ImageArg::size`] has them), 3 the channel order, 4 the channel data type, these two
/// as SPIR-V's OpImageQueryOrder / OpImageQueryFormat return them: SPIR-V's enumerants,
/// the CL header's value less `CL_R` (0x10B0) / `CL_SNORM_INT8` (0x10D0) (OpenCL C adds
/// them back).
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI).
pub unsafe extern "C" fn softcl_image_query(img: *const ImageArg, what: u32) -> u32 {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return 0 };
    match what {
        0..=2 => arg.size[what as usize],
        3 => arg.channel_order.wrapping_sub(0x10B0),
        4 => arg.channel_type.wrapping_sub(0x10D0),
        _ => 0,
    }
}

/// For the Gen model's line counts: the address of the pixel an access at (x, y, z)
/// reads or writes (with a sampler, `sampler` its bits: normalized coordinates scaled, the
/// pixel the coordinates fall in; without, `u32::MAX` and integer coordinates as floats),
/// clamped into the image. 0 for an image that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI).
pub unsafe extern "C" fn softcl_image_texel_address(img: *const ImageArg, sampler: u32, x: f32, y: f32, z: f32) -> u64 {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return 0 };
    let Some((format, _, _)) = layout(arg) else { return 0 };
    TexelGrid::new(arg, format, sampler).address([x, y, z])
}

/// For the Gen model's useful bytes: the size in bytes of a pixel of the image (1 to 16,
/// by its format); 0 for an image that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`] (the kernel ABI).
pub unsafe extern "C" fn softcl_image_pixel_bytes(img: *const ImageArg) -> u32 {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return 0 };
    layout(arg).map_or(0, |(format, _, _)| format.pixel_size() as u32)
}

/// [`softcl_image_texel_address`] of every lane of a packet of `w` (coordinates `coords`,
/// `ncomp` components in structure-of-arrays form) into `out[0..w]`; returns
/// [`softcl_image_pixel_bytes`] of the image.
///
/// # Safety
/// `img` points at a valid [`ImageArg`]; `coords` is valid for reading `ncomp * w` floats,
/// `out` for writing `w` `u64`s.
pub unsafe extern "C" fn softcl_image_texel_addresses(
    img: *const ImageArg,
    sampler: u32,
    coords: *const f32,
    ncomp: u32,
    w: u32,
    out: *mut u64,
) -> u32 {
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let format = unsafe { img.as_ref() }.and_then(|arg| Some((arg, layout(arg)?.0)));
    let grid = format.map(|(arg, format)| TexelGrid::new(arg, format, sampler));
    for k in 0..w {
        let a = match &grid {
            // SAFETY: the caller's contract.
            Some(g) => g.address(unsafe { lane_coords(coords, ncomp, w, k) }),
            None => 0,
        };
        // SAFETY: k < w: inside the caller's `w` values.
        unsafe { out.add(k as usize).write_unaligned(a) };
    }
    format.map_or(0, |(_, f)| f.pixel_size() as u32)
}

/// For the Gen model: the distinct 64-byte lines of the pixels that the sampled reads of
/// the active lanes (`mask` bit k for lane k, `w` at most 64) load. A linear filter (of a
/// float format) loads its 2, 4 or 8 corners, as [`Image::sampled_pixels`] says (none for
/// the border colour); a nearest one the pixel the coordinates fall in, clamped into the
/// image ([`softcl_image_texel_addresses`]' pixel). 0 for an image that does not exist.
///
/// # Safety
/// `img` points at a valid [`ImageArg`]; `coords` is valid for reading `ncomp * w` floats.
pub unsafe extern "C" fn softcl_image_sampled_lines(
    img: *const ImageArg,
    sampler: u32,
    coords: *const f32,
    ncomp: u32,
    w: u32,
    mask: u64,
) -> u32 {
    let Some(s) = Sampler::from_bits(sampler) else { return 0 };
    // SAFETY: the kernel ABI: `img` is the kernel argument's ImageArg.
    let Some(arg) = (unsafe { img.as_ref() }) else { return 0 };
    let mut lines = DistinctLines::default();
    // SAFETY: the caller's contract: `img` is valid and `coords` holds `ncomp * w` floats
    // (lanes k < w).
    let _ = unsafe {
        with_image(img, |i| {
            if s.linear && i.format.kind() == Kind::Float {
                let grid = TexelGrid::new(arg, i.format, sampler);
                for k in lanes(w, mask) {
                    let (pixels, count) = i.sampled_pixels(s, lane_coords(coords, ncomp, w, k));
                    for (c, p) in pixels[..count].iter().enumerate() {
                        if i.offset(p.map(|c| c as usize)).is_some() {
                            lines.add(c, grid.pixel_address(p.map(|c| c as u64)) >> 6);
                        }
                    }
                }
            } else {
                // Nearest: the pixel the coordinates fall in, as for the other accesses (the
                // cheap form: the model asks it of every lane of every read).
                let grid = TexelGrid::new(arg, i.format, sampler);
                for k in lanes(w, mask) {
                    lines.add(0, grid.address(lane_coords(coords, ncomp, w, k)) >> 6);
                }
            }
        })
    };
    lines.count() as u32
}

/// A count of distinct lines, added per corner of a filter (0 to 7). Neighbouring lanes mostly
/// share the line of each corner, so a look at the corner's last line and then at the few
/// others is cheaper than sorting them all; the first 32 are kept on the stack, any more
/// (scattered lanes) on the heap.
struct DistinctLines {
    last: [u64; 8],
    near: [u64; 32],
    n: usize,
    more: Vec<u64>,
}

impl Default for DistinctLines {
    fn default() -> Self {
        DistinctLines { last: [u64::MAX; 8], near: [0; 32], n: 0, more: Vec::new() }
    }
}

impl DistinctLines {
    fn add(&mut self, corner: usize, line: u64) {
        let last = &mut self.last[corner % 8];
        if line == *last {
            return;
        }
        *last = line;
        if !self.near[..self.n].contains(&line) && !self.more.contains(&line) {
            if self.n < self.near.len() {
                self.near[self.n] = line;
                self.n += 1;
            } else {
                self.more.push(line);
            }
        }
    }

    fn count(&self) -> usize {
        self.n + self.more.len()
    }
}

/// What the pixel addresses of accesses to one image with one sampler need, worked out once
/// (per packet). The addresses are the Gen surface's, for the model's line counts: a 2-D
/// image, 2-D array or 3-D image is laid out in Tile-Y ([`TileY`]), a 1-D image, 1-D array
/// or image buffer linearly (rows at the image's pitches).
struct TexelGrid {
    base: u64,
    strides: [u64; 3],
    /// Pixels in each dimension, at least 1.
    sizes: [i64; 3],
    normalized: bool,
    tiled: Option<TileY>,
}

/// Intel's Y-major tiling of a Gen surface, as the hardware lays out a 2-D or 3-D image:
/// 4 KB tiles of 128 bytes x 32 rows in row-major order, each tile 8 columns of 16 bytes x
/// 32 rows, one after the other, so that a 64-byte line holds 16 bytes of 4 rows (the
/// Intel Graphics PRM, Memory Views, "Tile-Y"; Linux's i915 `I915_FORMAT_MOD_Y_TILED`).
/// Each slice or layer starts a new row of tiles.
#[derive(Debug, Clone, Copy)]
struct TileY {
    pixel: u64,
    tiles_per_row: u64,
    tile_rows_per_slice: u64,
}

impl TileY {
    /// The byte offset of pixel (x, y, z) from the surface's start.
    fn offset(&self, [x, y, z]: [u64; 3]) -> u64 {
        let bx = x * self.pixel;
        let tile = (z * self.tile_rows_per_slice + (y >> 5)) * self.tiles_per_row + (bx >> 7);
        (tile << 12) + (((bx >> 4) & 7) << 9) + ((y & 31) << 4) + (bx & 15)
    }
}

/// Where the model places the Tile-Y surface of an image whose pixels are at `data`: at a
/// tile (4 KB) boundary of its own, above every host address (bit 63 set), `data` * 4096.
/// A surface's tiles span at most 4096 times its pixels' bytes (a 1 x 1 image of one byte
/// fills a 4 KB tile), and two images' pixels never overlap, so no two surfaces share a
/// line, nor a surface and a buffer; rounding `data` down to its page instead made small
/// images of one page count each other's lines as theirs.
fn tiled_surface_base(data: u64) -> u64 {
    1 << 63 | data << 12
}

impl TexelGrid {
    fn new(arg: &ImageArg, format: Format, sampler: u32) -> Self {
        let pixel = format.pixel_size() as u64;
        let tiled = matches!(dim_of(arg.dim), Some(Dim::D2 | Dim::D2Array | Dim::D3)).then(|| TileY {
            pixel,
            tiles_per_row: (u64::from(arg.size[0].max(1)) * pixel).div_ceil(128),
            tile_rows_per_slice: u64::from(arg.size[1].max(1)).div_ceil(32),
        });
        TexelGrid {
            base: if tiled.is_some() { tiled_surface_base(arg.data as u64) } else { arg.data as u64 },
            strides: [pixel, arg.row_pitch, arg.slice_pitch],
            sizes: arg.size.map(|s| i64::from(s.max(1))),
            normalized: sampler != u32::MAX && sampler & crate::image::sample::CLK_NORMALIZED_COORDS_TRUE != 0,
            tiled,
        }
    }

    /// The surface address of pixel `p` (inside the image).
    fn pixel_address(&self, p: [u64; 3]) -> u64 {
        match self.tiled {
            Some(t) => self.base + t.offset(p),
            None => self.base + p.iter().zip(self.strides).map(|(i, s)| i * s).sum::<u64>(),
        }
    }

    /// The address of the pixel an access at `at` reads or writes, as
    /// [`softcl_image_texel_address`] says.
    fn address(&self, at: [f32; 3]) -> u64 {
        let mut p = [0u64; 3];
        for ((x, size), i) in at.into_iter().zip(self.sizes).zip(&mut p) {
            let c = if self.normalized { x * size as f32 } else { x };
            // Saturating (NaN to 0); the clamp keeps the pixel inside the image.
            *i = floor_i64(c).clamp(0, size - 1) as u64;
        }
        self.pixel_address(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Dim;

    const CL_RGBA: u32 = 0x10B5;
    const CL_UNORM_INT16: u32 = 0x10D3;
    /// CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR.
    const REPEAT_LINEAR: u32 = 0x1 | 0x6 | 0x20;
    /// CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST, unnormalized.
    const CLAMP_NEAREST: u32 = 0x4 | 0x10;

    /// A 5 x 3 x 2 RGBA UNORM_INT16 3D image over `px`.
    fn image(px: &mut [u8]) -> ImageArg {
        ImageArg {
            data: px.as_mut_ptr(),
            row_pitch: 5 * 8,
            slice_pitch: 5 * 8 * 3,
            size: [5, 3, 2],
            dim: ImageArg::dim_code(Dim::D3),
            channel_order: CL_RGBA,
            channel_type: CL_UNORM_INT16,
        }
    }

    /// Coordinates of 16 lanes in structure-of-arrays form: inside, outside, negative,
    /// halves, NaN and huge.
    fn coords() -> Vec<f32> {
        let special = [f32::NAN, -1e30, 1e30, -0.5, -1.0, 4.999, 5.0, 0.5, -0.0, 2.25, 7.5, -3.75, 1.5, 0.0, 3.0, 1e-3];
        (0..3).flat_map(|c| special.iter().map(move |v| if c == 0 { *v } else { v * 0.5 - c as f32 })).collect()
    }

    /// Lines added per corner are counted once each, past the 32 kept on the stack too.
    #[test]
    fn distinct_lines_count_each_line_once() {
        let mut d = DistinctLines::default();
        for round in 0..3 {
            for line in 0..100u64 {
                d.add((line % 8) as usize, line * 7 + 1);
                d.add(round, line * 7 + 1);
            }
        }
        assert_eq!(d.count(), 100);
    }

    #[test]
    fn floor_without_libm_is_floor() {
        let mut xs = coords();
        xs.extend([f32::INFINITY, f32::NEG_INFINITY, 9.3e18, -9.3e18, 16777217.0, -0.0001, 0.9999999]);
        for x in xs {
            assert_eq!(floor_i64(x), x.floor() as i64, "{x}");
        }
    }

    /// Two small 2-D images whose pixels share a page have surfaces of their own: no line
    /// of one is a line of the other.
    #[test]
    fn images_of_one_page_share_no_line() {
        let mut px = vec![0u8; 4096 + 2 * 256];
        let lines = |at: usize, px: &mut [u8]| -> std::collections::BTreeSet<u64> {
            let arg = ImageArg {
                data: px[at..].as_mut_ptr(),
                row_pitch: 64,
                slice_pitch: 0,
                size: [64, 4, 1],
                dim: ImageArg::dim_code(Dim::D2),
                channel_order: 0x10B0, // CL_R
                channel_type: 0x10D2,  // CL_UNORM_INT8
            };
            let grid = TexelGrid::new(&arg, layout(&arg).unwrap().0, CLAMP_NEAREST);
            (0..64)
                .flat_map(|x| (0..4).map(move |y| [x as f32, y as f32, 0.0]))
                .map(|at| grid.address(at) >> 6)
                .collect()
        };
        // Two 256-byte images 256 bytes apart in one 4 KB page.
        let page = (4096 - px.as_ptr() as usize % 4096) % 4096;
        let (a, b) = (lines(page, &mut px), lines(page + 256, &mut px));
        assert_eq!((a.len(), b.len()), (4, 4), "16 bytes of 4 rows to a line");
        assert!(a.is_disjoint(&b), "{a:?} {b:?}");
    }

    /// The packet functions give each lane what the one-lane functions give it, and leave
    /// inactive lanes alone.
    #[test]
    fn packet_functions_match_the_one_lane_functions() {
        let mut px: Vec<u8> = (0..5 * 3 * 2 * 8).map(|i| (i * 37 % 251) as u8).collect();
        let img = image(&mut px);
        let (w, xyz) = (16u32, coords());
        let mask: u64 = 0b1011_0111_1110_1101;
        for sampler in [REPEAT_LINEAR, CLAMP_NEAREST, u32::MAX] {
            let mut addrs = vec![0u64; 16];
            // SAFETY: a valid image; 3 * 16 coordinates, 16 addresses.
            let pixel = unsafe { softcl_image_texel_addresses(&img, sampler, xyz.as_ptr(), 3, w, addrs.as_mut_ptr()) };
            // SAFETY: a valid image.
            assert_eq!((pixel, unsafe { softcl_image_pixel_bytes(&img) }), (8, 8), "RGBA of 16-bit channels");
            let mut out = vec![7u32; 64];
            // SAFETY: as above, 4 * 16 results.
            unsafe { softcl_image_sample_lanes(&img, sampler, xyz.as_ptr(), 3, w, mask, out.as_mut_ptr()) };
            for k in 0..16 {
                let [x, y, z] = [xyz[k], xyz[16 + k], xyz[32 + k]];
                // SAFETY: a valid image.
                let one = unsafe { softcl_image_texel_address(&img, sampler, x, y, z) };
                assert_eq!(addrs[k], one, "sampler {sampler:#x} lane {k}");
                let mut want = [7u32; 4];
                if mask >> k & 1 == 1 {
                    // SAFETY: a valid image, 4 results.
                    unsafe { softcl_image_sample(&img, sampler, x, y, z, want.as_mut_ptr()) };
                }
                let got: Vec<u32> = (0..4).map(|c| out[c * 16 + k]).collect();
                assert_eq!(got, want, "sampler {sampler:#x} lane {k}");
            }
        }
        let ixyz: Vec<i32> = xyz.iter().map(|v| *v as i32).collect();
        let mut out = vec![7u32; 64];
        // SAFETY: a valid image; 3 * 16 coordinates, 4 * 16 results.
        unsafe { softcl_image_read_lanes(&img, ixyz.as_ptr(), 3, w, mask, out.as_mut_ptr()) };
        for k in 0..16 {
            let mut want = [7u32; 4];
            if mask >> k & 1 == 1 {
                // SAFETY: a valid image, 4 results.
                unsafe { softcl_image_read(&img, ixyz[k], ixyz[16 + k], ixyz[32 + k], want.as_mut_ptr()) };
            }
            assert_eq!((0..4).map(|c| out[c * 16 + k]).collect::<Vec<_>>(), want, "read lane {k}");
        }
    }

    /// Writes of a packet land as the one-lane writes in lane order (the last active lane
    /// writing a pixel wins), and a depth texel's one component is the first.
    #[test]
    fn packet_writes_match_the_one_lane_writes() {
        let mut a = vec![0u8; 5 * 3 * 2 * 8];
        let mut b = a.clone();
        let (ia, ib) = (image(&mut a), image(&mut b));
        let w = 8u32;
        // Lanes 1 and 5 write pixel (1, 1, 1); lane 6 outside; lane 3 inactive.
        let xyz: Vec<i32> = [[0, 1, 2, 3, 4, 1, 9, 2], [0, 1, 2, 0, 1, 1, 0, 2], [0, 1, 0, 1, 0, 1, 0, 1]].concat();
        let texel: Vec<u32> = (0..4 * 8).map(|i| (i as f32 / 32.0).to_bits()).collect();
        let mask = 0b1111_0111;
        for tcomp in [4u32, 1] {
            // SAFETY: valid images; 3 * 8 coordinates, tcomp * 8 texel components.
            unsafe { softcl_image_write_lanes(&ia, xyz.as_ptr(), 3, w, mask, texel.as_ptr(), tcomp) };
            for k in 0..8 {
                if mask >> k & 1 == 1 {
                    let t: Vec<u32> = (0..4).map(|c| if c < tcomp { texel[(c * 8 + k) as usize] } else { 0 }).collect();
                    let [x, y, z] = [xyz[k as usize], xyz[8 + k as usize], xyz[16 + k as usize]];
                    // SAFETY: a valid image.
                    unsafe { softcl_image_write(&ib, x, y, z, t[0], t[1], t[2], t[3]) };
                }
            }
            assert_eq!(a, b, "{tcomp} texel components");
        }
    }
}
