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
                let base = i.data.as_ptr() as u64;
                for k in lanes(w, mask) {
                    let (pixels, count) = i.sampled_pixels(s, lane_coords(coords, ncomp, w, k));
                    for (c, p) in pixels[..count].iter().enumerate() {
                        if let Some(off) = i.offset(p.map(|c| c as usize)) {
                            lines.add(c, (base + off as u64) >> 6);
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
/// (per packet).
struct TexelGrid {
    base: u64,
    strides: [u64; 3],
    /// Pixels in each dimension, at least 1.
    sizes: [i64; 3],
    normalized: bool,
}

impl TexelGrid {
    fn new(arg: &ImageArg, format: Format, sampler: u32) -> Self {
        TexelGrid {
            base: arg.data as u64,
            strides: [format.pixel_size() as u64, arg.row_pitch, arg.slice_pitch],
            sizes: arg.size.map(|s| i64::from(s.max(1))),
            normalized: sampler != u32::MAX && sampler & crate::image::sample::CLK_NORMALIZED_COORDS_TRUE != 0,
        }
    }

    /// The address of the pixel an access at `at` reads or writes, as
    /// [`softcl_image_texel_address`] says.
    fn address(&self, at: [f32; 3]) -> u64 {
        let mut off = 0u64;
        for ((x, size), stride) in at.into_iter().zip(self.sizes).zip(self.strides) {
            let c = if self.normalized { x * size as f32 } else { x };
            // Saturating (NaN to 0); the clamp keeps the pixel inside the image.
            let i = floor_i64(c).clamp(0, size - 1) as u64;
            off += i * stride;
        }
        self.base + off
    }
}

// ------------------------------------------------------------------------------ lowering

use super::llvm::{bail, FnLower, Val, R};
use crate::ir::{ImageOp, Inst, InstData, Value};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue, VectorValue};

impl<'ctx> FnLower<'_, 'ctx, '_> {
    /// The scalar lowering of an image instruction: a call of the host function above (vector
    /// code runs it lane by lane, `crate::vectorize::per_lane`).
    pub(super) fn lower_image(
        &mut self,
        i: Inst,
        op: ImageOp,
        image: Value,
        sampler: Option<Value>,
        coord: Option<Value>,
        texel: Option<Value>,
    ) -> R<Option<Val<'ctx>>> {
        let cx = self.cx();
        let (i32t, f32t) = (cx.i32_type(), cx.f32_type());
        let BasicValueEnum::PointerValue(img) = self.get(image)? else { bail!("image operand is not a pointer") };
        let call = |s: &Self, name: &str, ret: Option<BasicTypeEnum<'ctx>>, args: &[BasicValueEnum<'ctx>]| -> R<_> {
            let params: Vec<BasicMetadataTypeEnum<'ctx>> = args.iter().map(|a| a.get_type().into()).collect();
            let fn_ty = match ret {
                Some(r) => r.fn_type(&params, false),
                None => cx.void_type().fn_type(&params, false),
            };
            let callee = super::host::declare(&s.e.m, name, fn_ty);
            let cargs: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
            Ok(s.b.build_call(callee, &cargs, "")?.try_as_basic_value().basic())
        };
        match op {
            ImageOp::QueryOrder | ImageOp::QueryFormat => {
                let what = i32t.const_int(if op == ImageOp::QueryOrder { 3 } else { 4 }, false);
                let r = call(self, "softcl_image_query", Some(i32t.into()), &[img.into(), what.into()])?;
                Ok(Some(r.ok_or("image query without a result")?))
            }
            ImageOp::QuerySize => {
                let (_, rt) = self.need_result(i)?;
                let (elem, n) = match rt {
                    BasicTypeEnum::VectorType(v) => (v.get_element_type(), v.get_size()),
                    other => (other, 1),
                };
                let BasicTypeEnum::IntType(et) = elem else { bail!("image size query of a non-integer type") };
                let mut parts = Vec::with_capacity(n as usize);
                for k in 0..n.min(3) {
                    let what = i32t.const_int(k as u64, false);
                    let r = call(self, "softcl_image_query", Some(i32t.into()), &[img.into(), what.into()])?;
                    let r = r.ok_or("image query without a result")?.into_int_value();
                    parts.push(if et.get_bit_width() > 32 { self.b.build_int_z_extend(r, et, "")? } else { r });
                }
                while parts.len() < n as usize {
                    parts.push(et.const_zero());
                }
                Ok(Some(match rt {
                    BasicTypeEnum::VectorType(v) => {
                        let mut acc = v.get_undef();
                        for (k, p) in parts.into_iter().enumerate() {
                            acc = self.b.build_insert_element(acc, p, i32t.const_int(k as u64, false), "")?;
                        }
                        acc.into()
                    }
                    _ => parts[0].into(),
                }))
            }
            ImageOp::Sample | ImageOp::Read | ImageOp::Write => {
                let coord = coord.ok_or("image access without coordinates")?;
                let c = self.get(coord)?;
                let comps = self.components(c)?;
                let float_coords = op == ImageOp::Sample;
                let mut xyz: Vec<BasicValueEnum<'ctx>> = Vec::with_capacity(3);
                for k in 0..3 {
                    let x = comps.get(k).copied();
                    xyz.push(match (x, float_coords) {
                        (None, true) => f32t.const_zero().into(),
                        (None, false) => i32t.const_zero().into(),
                        (Some(BasicValueEnum::FloatValue(f)), true) => f.into(),
                        (Some(BasicValueEnum::IntValue(v)), true) => {
                            self.b.build_signed_int_to_float(v, f32t, "")?.into()
                        }
                        (Some(BasicValueEnum::IntValue(v)), false) => v.into(),
                        _ => bail!("image coordinate of an unexpected type"),
                    });
                }
                if op == ImageOp::Write {
                    let t = self.get(texel.ok_or("image write without a texel")?)?;
                    let mut args: Vec<BasicValueEnum<'ctx>> = vec![img.into()];
                    args.extend(xyz);
                    if let BasicValueEnum::FloatValue(depth) = t {
                        // A depth image's one float: the first component, the others 0.
                        args.push(self.b.build_bit_cast(depth, i32t, "")?);
                        args.extend([BasicValueEnum::from(i32t.const_zero()); 3]);
                    } else {
                        let t = self.b.build_bit_cast(t, i32t.vec_type(4), "")?.into_vector_value();
                        for k in 0..4 {
                            args.push(self.b.build_extract_element(t, i32t.const_int(k, false), "")?);
                        }
                    }
                    call(self, "softcl_image_write", None, &args)?;
                    return Ok(None);
                }
                let out: PointerValue<'ctx> = self.scratch(i32t.vec_type(4).into())?;
                let mut args: Vec<BasicValueEnum<'ctx>> = vec![img.into()];
                let name = if op == ImageOp::Sample {
                    let s = self.get(sampler.ok_or("image sample without a sampler")?)?;
                    let bits: IntValue<'ctx> = match s {
                        BasicValueEnum::PointerValue(p) => self.b.build_ptr_to_int(p, i32t, "")?,
                        BasicValueEnum::IntValue(v) => self.b.build_int_truncate_or_bit_cast(v, i32t, "")?,
                        _ => bail!("sampler of an unexpected type"),
                    };
                    args.push(bits.into());
                    "softcl_image_sample"
                } else {
                    "softcl_image_read"
                };
                args.extend(xyz);
                args.push(out.into());
                call(self, name, None, &args)?;
                let v = self.b.build_load(i32t.vec_type(4), out, "")?.into_vector_value();
                let (_, rt) = self.need_result(i)?;
                if rt.is_float_type() {
                    // A depth image's read: the first component.
                    let first = self.b.build_extract_element(v, i32t.const_zero(), "")?;
                    return Ok(Some(self.b.build_bit_cast(first, rt, "")?));
                }
                Ok(Some(self.b.build_bit_cast(v, rt, "")?))
            }
        }
    }

    /// Vector code's image read or write (`InstData::Image` with coordinates) as one call
    /// of a `_lanes` host function for the packet's active lanes, when the image and sampler
    /// are the same in every lane: the lanes run in lane order, as the per-lane lowering runs
    /// them, with the same results. `false` (nothing emitted) when the instruction is not
    /// such an access, or has operands of a form the per-lane lowering handles instead.
    pub(super) fn lower_image_lanes(&mut self, i: Inst) -> R<bool> {
        let InstData::Image { op, image, sampler, coord: Some(coord), texel } = self.f.insts[i].clone() else {
            return Ok(false);
        };
        let Some(vs) = self.vec.as_ref() else { return Ok(false) };
        let (w, mask) = (vs.width, vs.mask);
        let uniform_handles = self.is_uniform(image) && sampler.is_none_or(|s| self.is_uniform(s));
        let res = self.f.inst_result[i].filter(|r| !self.e.is_void(self.f.value_type(*r)));
        let varying_result = res.is_none_or(|r| !self.is_uniform(r));
        if !matches!(op, ImageOp::Sample | ImageOp::Read | ImageOp::Write)
            || w > 64
            || !uniform_handles
            || !varying_result
        {
            return Ok(false);
        }
        let Some(coords) = self.packet_coords(coord, op == ImageOp::Sample)? else { return Ok(false) };
        let texel = match (op, texel) {
            (ImageOp::Write, Some(t)) => {
                let BasicValueEnum::VectorValue(v) = self.get_wide(t)? else { return Ok(false) };
                let n = v.get_type().get_size();
                let bits32 = match v.get_type().get_element_type() {
                    BasicTypeEnum::FloatType(f) => f == self.cx().f32_type(),
                    BasicTypeEnum::IntType(t) => t.get_bit_width() == 32,
                    _ => false,
                };
                if !bits32 || !(n == w || n == 4 * w) {
                    return Ok(false);
                }
                Some((self.b.build_bit_cast(v, self.i32().vec_type(n), "")?.into_vector_value(), n / w))
            }
            (ImageOp::Write, None) => bail!("image write without a texel"),
            _ => None,
        };
        let cx = self.cx();
        let i32t = cx.i32_type();
        let BasicValueEnum::PointerValue(img) = self.get(image)? else { bail!("image operand is not a pointer") };
        let (cv, ncomp) = coords;
        let cptr = self.scratch(cv.get_type().into())?;
        self.b.build_store(cptr, cv)?;
        let bits = self.mask_word(mask)?;
        let (wc, nc) = (i32t.const_int(u64::from(w), false), i32t.const_int(u64::from(ncomp), false));
        let call = |s: &Self, name: &str, args: &[BasicMetadataValueEnum<'ctx>]| -> R<()> {
            let params: Vec<BasicMetadataTypeEnum<'ctx>> = args
                .iter()
                .map(|a| match a {
                    BasicMetadataValueEnum::PointerValue(p) => p.get_type().into(),
                    BasicMetadataValueEnum::IntValue(v) => v.get_type().into(),
                    _ => i32t.into(),
                })
                .collect();
            let callee = super::host::declare(&s.e.m, name, cx.void_type().fn_type(&params, false));
            s.b.build_call(callee, args, "")?;
            Ok(())
        };
        if let Some((t, tcomp)) = texel {
            let tptr = self.scratch(t.get_type().into())?;
            self.b.build_store(tptr, t)?;
            let tc = i32t.const_int(u64::from(tcomp), false);
            call(
                self,
                "softcl_image_write_lanes",
                &[img.into(), cptr.into(), nc.into(), wc.into(), bits.into(), tptr.into(), tc.into()],
            )?;
            return Ok(true);
        }
        let out_ty = i32t.vec_type(4 * w);
        let out = self.scratch(out_ty.into())?;
        if op == ImageOp::Sample {
            let s = self.get(sampler.ok_or("image sample without a sampler")?)?;
            let sbits = self.sampler_bits(s)?;
            call(
                self,
                "softcl_image_sample_lanes",
                &[img.into(), sbits.into(), cptr.into(), nc.into(), wc.into(), bits.into(), out.into()],
            )?;
        } else {
            call(
                self,
                "softcl_image_read_lanes",
                &[img.into(), cptr.into(), nc.into(), wc.into(), bits.into(), out.into()],
            )?;
        }
        let v = self.b.build_load(out_ty, out, "")?.into_vector_value();
        let (r, rt) = self.need_result(i)?;
        let BasicTypeEnum::VectorType(rvt) = rt else { bail!("a packet's image result of type {rt}") };
        let v = if rvt.get_size() == w {
            // A depth image's read: each lane's first component.
            let first: Vec<IntValue<'ctx>> = (0..w).map(|k| i32t.const_int(u64::from(k), false)).collect();
            let idx = inkwell::types::VectorType::const_vector(&first);
            self.b.build_shuffle_vector(v, out_ty.get_undef(), idx, "")?
        } else {
            v
        };
        let x = self.b.build_bit_cast(v, rt, "")?;
        self.define(r, x)?;
        Ok(true)
    }

    /// The coordinates `coord` of a packet in structure-of-arrays form (floats for a sampled
    /// read, integers converted as the scalar lowering converts them; `i32`s otherwise) and
    /// their number of components; `None` for a form the per-lane lowering handles.
    fn packet_coords(&mut self, coord: Value, float_coords: bool) -> R<Option<(VectorValue<'ctx>, u32)>> {
        let w = self.vec.as_ref().ok_or("not in vector mode")?.width;
        let BasicValueEnum::VectorValue(c) = self.get_wide(coord)? else { return Ok(None) };
        let n = c.get_type().get_size();
        let f32t = self.cx().f32_type();
        let elem = c.get_type().get_element_type();
        let c = match elem {
            BasicTypeEnum::FloatType(t) if float_coords && t == f32t => c,
            BasicTypeEnum::IntType(t) if t.get_bit_width() == 32 && float_coords => {
                self.b.build_signed_int_to_float(c, f32t.vec_type(n), "")?
            }
            BasicTypeEnum::IntType(t) if t.get_bit_width() == 32 => c,
            _ => return Ok(None),
        };
        Ok((n % w == 0 && n > 0).then_some((c, n / w)))
    }

    /// A sampler operand's bits as an `i32`.
    fn sampler_bits(&self, s: Val<'ctx>) -> R<IntValue<'ctx>> {
        let i32t = self.cx().i32_type();
        Ok(match s {
            BasicValueEnum::PointerValue(p) => self.b.build_ptr_to_int(p, i32t, "")?,
            BasicValueEnum::IntValue(v) => self.b.build_int_truncate_or_bit_cast(v, i32t, "")?,
            _ => bail!("sampler of an unexpected type"),
        })
    }

    /// For the Gen model: the pixel addresses of a packet's image access (every lane's, into
    /// `<W x i64>`) and the image's pixel size in bytes (i64) by one call of
    /// `softcl_image_texel_addresses`, when the image and the sampler are the same in every
    /// lane; `None` otherwise (nothing emitted).
    pub(super) fn packet_texel_addresses(
        &mut self,
        image: Value,
        sampler: Option<Value>,
        coord: Value,
    ) -> R<Option<(VectorValue<'ctx>, IntValue<'ctx>)>> {
        let w = self.vec.as_ref().ok_or("not in vector mode")?.width;
        if !self.is_uniform(image) || sampler.is_some_and(|s| !self.is_uniform(s)) {
            return Ok(None);
        }
        let Some((cv, ncomp)) = self.packet_coords(coord, true)? else { return Ok(None) };
        let cx = self.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let BasicValueEnum::PointerValue(img) = self.get(image)? else { bail!("image operand is not a pointer") };
        let sbits = match sampler {
            Some(s) => {
                let s = self.get(s)?;
                self.sampler_bits(s)?
            }
            None => i32t.const_all_ones(),
        };
        let out_ty = i64t.vec_type(w);
        let out = self.scratch(out_ty.into())?;
        let pixel = self.call_packet_count("softcl_image_texel_addresses", img, sbits, cv, ncomp, out.into())?;
        Ok(Some((self.b.build_load(out_ty, out, "")?.into_vector_value(), pixel)))
    }

    /// Calls the Gen count's host function `name` of a packet's access (`u32 name(image,
    /// sampler bits, coordinates, components, width, last)`, the coordinates `cv` stored in
    /// a scratch slot), its result as an i64.
    fn call_packet_count(
        &mut self,
        name: &str,
        img: PointerValue<'ctx>,
        sbits: IntValue<'ctx>,
        cv: VectorValue<'ctx>,
        ncomp: u32,
        last: BasicValueEnum<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let w = self.vec.as_ref().ok_or("not in vector mode")?.width;
        let cx = self.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let cptr = self.scratch(cv.get_type().into())?;
        self.b.build_store(cptr, cv)?;
        let args: Vec<BasicMetadataValueEnum<'ctx>> = vec![
            img.into(),
            sbits.into(),
            cptr.into(),
            i32t.const_int(u64::from(ncomp), false).into(),
            i32t.const_int(u64::from(w), false).into(),
            last.into(),
        ];
        let params: Vec<BasicMetadataTypeEnum<'ctx>> = vec![
            img.get_type().into(),
            i32t.into(),
            cptr.get_type().into(),
            i32t.into(),
            i32t.into(),
            last.get_type().into(),
        ];
        let callee = super::host::declare(&self.e.m, name, i32t.fn_type(&params, false));
        let r = self.b.build_call(callee, &args, "")?.try_as_basic_value().basic();
        let r = r.ok_or_else(|| format!("{name} without a result"))?.into_int_value();
        Ok(self.b.build_int_z_extend(r, i64t, "")?)
    }

    /// For the Gen model: the distinct L3 lines a packet's sampled read loads (the pixels
    /// of its filter, `softcl_image_sampled_lines`) for the lanes of `mask`, an i64, when the
    /// image and the sampler are the same in every lane (and the packet is at most 64 wide);
    /// `None` otherwise (nothing emitted).
    pub(super) fn packet_sampled_lines(
        &mut self,
        image: Value,
        sampler: Value,
        coord: Value,
        mask: VectorValue<'ctx>,
    ) -> R<Option<IntValue<'ctx>>> {
        let w = self.vec.as_ref().ok_or("not in vector mode")?.width;
        if w > 64 || !self.is_uniform(image) || !self.is_uniform(sampler) {
            return Ok(None);
        }
        let Some((cv, ncomp)) = self.packet_coords(coord, true)? else { return Ok(None) };
        let BasicValueEnum::PointerValue(img) = self.get(image)? else { bail!("image operand is not a pointer") };
        let s = self.get(sampler)?;
        let sbits = self.sampler_bits(s)?;
        let bits = self.mask_word(mask)?;
        Ok(Some(self.call_packet_count("softcl_image_sampled_lines", img, sbits, cv, ncomp, bits.into())?))
    }

    /// A packet's lane mask (at most 64 lanes) as an i64, bit k for lane k.
    fn mask_word(&self, mask: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let cx = self.cx();
        let width = std::num::NonZeroU32::new(mask.get_type().get_size()).ok_or("an empty packet")?;
        let bits = self.b.build_bit_cast(mask, cx.custom_width_int_type(width).map_err(|e| e.to_string())?, "")?;
        Ok(self.b.build_int_z_extend_or_bit_cast(bits.into_int_value(), cx.i64_type(), "")?)
    }

    /// For the Gen model: the pixel size in bytes of (one lane's) image `img`
    /// (`softcl_image_pixel_bytes`), an i64.
    pub(super) fn image_pixel_bytes(&mut self, img: Val<'ctx>) -> R<IntValue<'ctx>> {
        let cx = self.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let params: Vec<BasicMetadataTypeEnum<'ctx>> = vec![img.get_type().into()];
        let callee = super::host::declare(&self.e.m, "softcl_image_pixel_bytes", i32t.fn_type(&params, false));
        let r = self.b.build_call(callee, &[img.into()], "")?.try_as_basic_value().basic();
        let r = r.ok_or("pixel bytes without a result")?.into_int_value();
        Ok(self.b.build_int_z_extend(r, i64t, "")?)
    }

    /// For the Gen model: the address of the pixel that an access with (one lane's) image,
    /// sampler and coordinates touches (`softcl_image_texel_address`), an i64.
    pub(super) fn image_texel_address(
        &mut self,
        img: Val<'ctx>,
        sampler: Option<Val<'ctx>>,
        coord: Val<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let cx = self.cx();
        let (i32t, f32t, i64t) = (cx.i32_type(), cx.f32_type(), cx.i64_type());
        let bits: IntValue<'ctx> = match sampler {
            Some(BasicValueEnum::PointerValue(p)) => self.b.build_ptr_to_int(p, i32t, "")?,
            Some(BasicValueEnum::IntValue(v)) => self.b.build_int_truncate_or_bit_cast(v, i32t, "")?,
            Some(_) => bail!("sampler of an unexpected type"),
            None => i32t.const_all_ones(),
        };
        let comps = self.components(coord)?;
        let mut args: Vec<BasicMetadataValueEnum<'ctx>> = vec![img.into(), bits.into()];
        for k in 0..3 {
            args.push(match comps.get(k) {
                None => f32t.const_zero().into(),
                Some(BasicValueEnum::FloatValue(f)) => (*f).into(),
                Some(BasicValueEnum::IntValue(v)) => self.b.build_signed_int_to_float(*v, f32t, "")?.into(),
                Some(_) => bail!("image coordinate of an unexpected type"),
            });
        }
        let params: Vec<BasicMetadataTypeEnum<'ctx>> =
            vec![img.get_type().into(), i32t.into(), f32t.into(), f32t.into(), f32t.into()];
        let callee = super::host::declare(&self.e.m, "softcl_image_texel_address", i64t.fn_type(&params, false));
        let r = self.b.build_call(callee, &args, "")?.try_as_basic_value().basic();
        Ok(r.ok_or("texel address without a result")?.into_int_value())
    }

    /// The components of a scalar or vector value.
    fn components(&self, v: Val<'ctx>) -> R<Vec<Val<'ctx>>> {
        Ok(match v {
            BasicValueEnum::VectorValue(vv) => (0..vv.get_type().get_size())
                .map(|k| self.b.build_extract_element(vv, self.i32().const_int(k as u64, false), ""))
                .collect::<Result<_, _>>()?,
            other => vec![other],
        })
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
