//! The image functions of compiled kernels (`read_image*`, `write_image*`, `get_image_*`):
//! generated code calls these by name with the kernel argument's [`ImageArg`] pointer
//! (`back/host.rs` defines the names in the JIT), and they read and write pixels through
//! [`crate::image`]. Each call handles one work-item (vector code calls them lane by lane).

use crate::abi::ImageArg;
use crate::image::{Components, Dim, Format, Image, Sampler};

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
    let at = [x, y, z];
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
    format.encode([a, b, c, d], px);
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
    let normalized = sampler != u32::MAX && sampler & crate::image::sample::CLK_NORMALIZED_COORDS_TRUE != 0;
    let at = [x, y, z];
    let mut off = 0u64;
    let strides = [format.pixel_size() as u64, arg.row_pitch, arg.slice_pitch];
    for d in 0..3 {
        let size = arg.size[d].max(1);
        let c = if normalized { at[d] * size as f32 } else { at[d] };
        // `as` saturates (NaN to 0); the clamp keeps the pixel inside the image.
        let i = (c.floor() as i64).clamp(0, i64::from(size) - 1) as u64;
        off += i * strides[d];
    }
    arg.data as u64 + off
}

// ------------------------------------------------------------------------------ lowering

use super::llvm::{bail, FnLower, Val, R};
use crate::ir::{ImageOp, Inst, Value};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};

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
