//! Vector code's image accesses: a read or write whose image and sampler are the same in
//! every lane is one call of a `_lanes` host function for the packet's active lanes
//! (`imagelib`), and the texel addresses and sampled lines of a packet that the Gen
//! counting asks for.

use super::VecLower;
use crate::back::llvm::{bail, Val, R};
use crate::ir::{ImageOp, Inst, InstData, Value};
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue, VectorValue};

impl<'a, 'ctx, 'ir> VecLower<'_, 'a, 'ctx, 'ir> {
    /// Vector code's image read or write (`InstData::Image` with coordinates) as one call
    /// of a `_lanes` host function for the packet's active lanes, when the image and sampler
    /// are the same in every lane: the lanes run in lane order, as the per-lane lowering runs
    /// them, with the same results. `false` (nothing emitted) when the instruction is not
    /// such an access, or has operands of a form the per-lane lowering handles instead.
    pub(super) fn lower_image_lanes(&mut self, i: Inst) -> R<bool> {
        let InstData::Image { op, image, sampler, coord: Some(coord), texel } = self.l.f.insts[i].clone() else {
            return Ok(false);
        };
        let Some(vs) = self.l.vec.as_ref() else { return Ok(false) };
        let (w, mask) = (vs.width, vs.mask);
        let uniform_handles = self.l.is_uniform(image) && sampler.is_none_or(|s| self.l.is_uniform(s));
        let res = self.l.f.inst_result[i].filter(|r| !self.l.e.is_void(self.l.f.value_type(*r)));
        let varying_result = res.is_none_or(|r| !self.l.is_uniform(r));
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
                let BasicValueEnum::VectorValue(v) = self.l.get_wide(t)? else { return Ok(false) };
                let n = v.get_type().get_size();
                let bits32 = match v.get_type().get_element_type() {
                    BasicTypeEnum::FloatType(f) => f == self.l.cx().f32_type(),
                    BasicTypeEnum::IntType(t) => t.get_bit_width() == 32,
                    _ => false,
                };
                if !bits32 || !(n == w || n == 4 * w) {
                    return Ok(false);
                }
                Some((self.l.b.build_bit_cast(v, self.l.i32().vec_type(n), "")?.into_vector_value(), n / w))
            }
            (ImageOp::Write, None) => bail!("image write without a texel"),
            _ => None,
        };
        let cx = self.l.cx();
        let i32t = cx.i32_type();
        let BasicValueEnum::PointerValue(img) = self.l.get(image)? else { bail!("image operand is not a pointer") };
        let (cv, ncomp) = coords;
        let cptr = self.l.scratch(cv.get_type().into())?;
        self.l.b.build_store(cptr, cv)?;
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
            let callee = crate::back::host::declare(&s.l.e.m, name, cx.void_type().fn_type(&params, false));
            s.l.b.build_call(callee, args, "")?;
            Ok(())
        };
        if let Some((t, tcomp)) = texel {
            let tptr = self.l.scratch(t.get_type().into())?;
            self.l.b.build_store(tptr, t)?;
            let tc = i32t.const_int(u64::from(tcomp), false);
            call(
                self,
                "softcl_image_write_lanes",
                &[img.into(), cptr.into(), nc.into(), wc.into(), bits.into(), tptr.into(), tc.into()],
            )?;
            return Ok(true);
        }
        let out_ty = i32t.vec_type(4 * w);
        let out = self.l.scratch(out_ty.into())?;
        if op == ImageOp::Sample {
            let s = self.l.get(sampler.ok_or("image sample without a sampler")?)?;
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
        let v = self.l.b.build_load(out_ty, out, "")?.into_vector_value();
        let (r, rt) = self.l.need_result(i)?;
        let BasicTypeEnum::VectorType(rvt) = rt else { bail!("a packet's image result of type {rt}") };
        let v = if rvt.get_size() == w {
            // A depth image's read: each lane's first component.
            let first: Vec<IntValue<'ctx>> = (0..w).map(|k| i32t.const_int(u64::from(k), false)).collect();
            let idx = inkwell::types::VectorType::const_vector(&first);
            self.l.b.build_shuffle_vector(v, out_ty.get_undef(), idx, "")?
        } else {
            v
        };
        let x = self.l.b.build_bit_cast(v, rt, "")?;
        self.l.define(r, x)?;
        Ok(true)
    }

    /// The coordinates `coord` of a packet in structure-of-arrays form (floats for a sampled
    /// read, integers converted as the scalar lowering converts them; `i32`s otherwise) and
    /// their number of components; `None` for a form the per-lane lowering handles.
    fn packet_coords(&mut self, coord: Value, float_coords: bool) -> R<Option<(VectorValue<'ctx>, u32)>> {
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        let BasicValueEnum::VectorValue(c) = self.l.get_wide(coord)? else { return Ok(None) };
        let n = c.get_type().get_size();
        let f32t = self.l.cx().f32_type();
        let elem = c.get_type().get_element_type();
        let c = match elem {
            BasicTypeEnum::FloatType(t) if float_coords && t == f32t => c,
            BasicTypeEnum::IntType(t) if t.get_bit_width() == 32 && float_coords => {
                self.l.b.build_signed_int_to_float(c, f32t.vec_type(n), "")?
            }
            BasicTypeEnum::IntType(t) if t.get_bit_width() == 32 => c,
            _ => return Ok(None),
        };
        Ok((n % w == 0 && n > 0).then_some((c, n / w)))
    }

    /// A sampler operand's bits as an `i32`.
    fn sampler_bits(&self, s: Val<'ctx>) -> R<IntValue<'ctx>> {
        let i32t = self.l.cx().i32_type();
        Ok(match s {
            BasicValueEnum::PointerValue(p) => self.l.b.build_ptr_to_int(p, i32t, "")?,
            BasicValueEnum::IntValue(v) => self.l.b.build_int_truncate_or_bit_cast(v, i32t, "")?,
            _ => bail!("sampler of an unexpected type"),
        })
    }

    /// For the Gen model: the pixel addresses of a packet's image access (every lane's, into
    /// `<W x i64>`) and the image's pixel size in bytes (i64) by one call of
    /// `softcl_image_texel_addresses`, when the image and the sampler are the same in every
    /// lane; `None` otherwise (nothing emitted).
    pub(crate) fn packet_texel_addresses(
        &mut self,
        image: Value,
        sampler: Option<Value>,
        coord: Value,
    ) -> R<Option<(VectorValue<'ctx>, IntValue<'ctx>)>> {
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        if !self.l.is_uniform(image) || sampler.is_some_and(|s| !self.l.is_uniform(s)) {
            return Ok(None);
        }
        let Some((cv, ncomp)) = self.packet_coords(coord, true)? else { return Ok(None) };
        let cx = self.l.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let BasicValueEnum::PointerValue(img) = self.l.get(image)? else { bail!("image operand is not a pointer") };
        let sbits = match sampler {
            Some(s) => {
                let s = self.l.get(s)?;
                self.sampler_bits(s)?
            }
            None => i32t.const_all_ones(),
        };
        let out_ty = i64t.vec_type(w);
        let out = self.l.scratch(out_ty.into())?;
        let pixel = self.call_packet_count("softcl_image_texel_addresses", img, sbits, cv, ncomp, out.into())?;
        Ok(Some((self.l.b.build_load(out_ty, out, "")?.into_vector_value(), pixel)))
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
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        let cx = self.l.cx();
        let (i32t, i64t) = (cx.i32_type(), cx.i64_type());
        let cptr = self.l.scratch(cv.get_type().into())?;
        self.l.b.build_store(cptr, cv)?;
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
        let callee = crate::back::host::declare(&self.l.e.m, name, i32t.fn_type(&params, false));
        let r = self.l.b.build_call(callee, &args, "")?.try_as_basic_value().basic();
        let r = r.ok_or_else(|| format!("{name} without a result"))?.into_int_value();
        Ok(self.l.b.build_int_z_extend(r, i64t, "")?)
    }

    /// For the Gen model: the distinct L3 lines a packet's sampled read loads (the pixels
    /// of its filter, `softcl_image_sampled_lines`) for the lanes of `mask`, an i64, when the
    /// image and the sampler are the same in every lane (and the packet is at most 64 wide);
    /// `None` otherwise (nothing emitted).
    pub(crate) fn packet_sampled_lines(
        &mut self,
        image: Value,
        sampler: Value,
        coord: Value,
        mask: VectorValue<'ctx>,
    ) -> R<Option<IntValue<'ctx>>> {
        let w = self.l.vec.as_ref().ok_or("not in vector mode")?.width;
        if w > 64 || !self.l.is_uniform(image) || !self.l.is_uniform(sampler) {
            return Ok(None);
        }
        let Some((cv, ncomp)) = self.packet_coords(coord, true)? else { return Ok(None) };
        let BasicValueEnum::PointerValue(img) = self.l.get(image)? else { bail!("image operand is not a pointer") };
        let s = self.l.get(sampler)?;
        let sbits = self.sampler_bits(s)?;
        let bits = self.mask_word(mask)?;
        Ok(Some(self.call_packet_count("softcl_image_sampled_lines", img, sbits, cv, ncomp, bits.into())?))
    }

    /// A packet's lane mask (at most 64 lanes) as an i64, bit k for lane k.
    fn mask_word(&self, mask: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        let cx = self.l.cx();
        let width = std::num::NonZeroU32::new(mask.get_type().get_size()).ok_or("an empty packet")?;
        let bits = self.l.b.build_bit_cast(mask, cx.custom_width_int_type(width).map_err(|e| e.to_string())?, "")?;
        Ok(self.l.b.build_int_z_extend_or_bit_cast(bits.into_int_value(), cx.i64_type(), "")?)
    }
}
