//! The scalar lowering of image instructions: a call of the image library's host function
//! for the access (`back::imagelib`); vector code runs it lane by lane, or calls the
//! packet form (`back::vector`).

use super::{FnLower, Val, R};
use crate::ir::{ImageOp, Inst, Value};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};

impl<'ctx> FnLower<'_, 'ctx, '_> {
    /// The scalar lowering of an image instruction: a call of the image library's host function (vector
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
            let callee = crate::back::host::declare(&s.e.m, name, fn_ty);
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
            ImageOp::BlockRead { bytes } | ImageOp::BlockWrite { bytes } => {
                let c = self.get(coord.ok_or("image block access without coordinates")?)?;
                let xy = self.components(c)?;
                let [x, y] = xy.as_slice() else { bail!("image block coordinate is not an int2") };
                let (i64t, n) = (cx.i64_type(), i32t.const_int(u64::from(bytes), false));
                if let ImageOp::BlockWrite { .. } = op {
                    let t = self.get(texel.ok_or("image block write without data")?)?.into_int_value();
                    let t = self.b.build_int_z_extend_or_bit_cast(t, i64t, "")?;
                    call(self, "softcl_image_block_write", None, &[img.into(), *x, *y, n.into(), t.into()])?;
                    return Ok(None);
                }
                let r = call(self, "softcl_image_block_read", Some(i64t.into()), &[img.into(), *x, *y, n.into()])?;
                let r = r.ok_or("image block read without a result")?.into_int_value();
                let (_, rt) = self.need_result(i)?;
                Ok(Some(self.b.build_int_truncate_or_bit_cast(r, rt.into_int_type(), "")?.into()))
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

    /// The components of a scalar or vector value.
    pub(crate) fn components(&self, v: Val<'ctx>) -> R<Vec<Val<'ctx>>> {
        Ok(match v {
            BasicValueEnum::VectorValue(vv) => (0..vv.get_type().get_size())
                .map(|k| self.b.build_extract_element(vv, self.i32().const_int(k as u64, false), ""))
                .collect::<Result<_, _>>()?,
            other => vec![other],
        })
    }
}
