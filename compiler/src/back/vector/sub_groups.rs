//! Sub-group functions in vector code: the sub-group is the packet, its work-items the
//! lanes, and those that run the function the active lanes (the block's mask: the uniform
//! and the non-uniform forms are the same).
//!
//! - reductions: the inactive lanes take the operation's identity, then one
//!   `llvm.vector.reduce.*` (float addition and multiplication ordered, lane 0 first);
//! - scans and clustered reductions: lane by lane, in lane order, the inactive lanes
//!   passing the running value on;
//! - broadcasts and shuffles: the element of the lane asked for (a lane outside the packet
//!   reads the work-item's own value); the first active lane from the mask's bits;
//! - `any`, `all`, `all_equal` and `ballot` from the active lanes' bits.
//!
//! Operands of a vector type per work-item (`sub_group_broadcast(float4, ...)`, shuffles of
//! vectors) are taken one component (W lanes) at a time.

use super::{bail, Val, VecLower, R};
use crate::back::llvm::Ops;
use crate::ir::{GroupArith, GroupOp, Inst, InstData};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};
use inkwell::IntPredicate;

impl<'ctx> VecLower<'_, '_, 'ctx, '_> {
    /// Lowers sub-group instruction `i` for the packet's active lanes.
    pub(super) fn lower_sub_group(&mut self, i: Inst) -> R<()> {
        let f = self.l.f;
        let InstData::Group { op, args, .. } = &f.insts[i] else { bail!("{i} is not a group instruction") };
        let r = f.inst_result[i].ok_or("a collective without a result")?;
        let (w, mask) = {
            let vs = self.l.vec.as_ref().ok_or("not in vector mode")?;
            (vs.width, vs.mask)
        };
        let operand = |s: &mut Self, k: usize| -> R<Val<'ctx>> {
            let v = *args.get(k).ok_or("a collective without its operand")?;
            s.l.get_wide(v)
        };
        // The value's components as <W x T> each (one for a scalar per work-item).
        let components = |s: &Self, x: Val<'ctx>| -> R<Vec<VectorValue<'ctx>>> {
            let x = x.into_vector_value();
            let n = x.get_type().get_size() / w;
            let ops = Ops { b: &s.l.b, m: &s.l.e.m, f: s.l.llf };
            if n == 1 {
                return Ok(vec![x]);
            }
            (0..n).map(|c| ops.const_shuffle(x, x, (c * w..(c + 1) * w).map(Some))).collect()
        };
        let value: Val<'ctx> = match *op {
            GroupOp::Reduce(a) => {
                let x = operand(self, 0)?.into_vector_value();
                self.reduce(a, x, mask)?
            }
            GroupOp::InclusiveScan(a) | GroupOp::ExclusiveScan(a) => {
                let x = operand(self, 0)?.into_vector_value();
                let inclusive = matches!(op, GroupOp::InclusiveScan(_));
                self.scan(a, x, mask, inclusive, w)?.into()
            }
            GroupOp::ClusteredReduce(a) => {
                let x = operand(self, 0)?.into_vector_value();
                let size = match self.l.get(args[1])? {
                    BasicValueEnum::IntValue(c) => c.get_zero_extended_constant(),
                    _ => None,
                };
                let size =
                    size.filter(|c| c.is_power_of_two()).ok_or("a cluster size that is not a constant power of two")?;
                self.clustered(a, x, mask, size.min(u64::from(w)) as u32, w)?.into()
            }
            GroupOp::Broadcast | GroupOp::BroadcastFirst => {
                let x = operand(self, 0)?;
                let lane = if *op == GroupOp::Broadcast {
                    let id = args[1];
                    let id = if self.l.is_uniform(id) {
                        self.l.get(id)?.into_int_value()
                    } else {
                        // Dynamically uniform: the first active lane's.
                        let first = self.first_lane(mask, w)?;
                        let v = self.l.get(id)?.into_vector_value();
                        self.l.b.build_extract_element(v, first, "")?.into_int_value()
                    };
                    self.l.b.build_int_cast_sign_flag(id, self.l.i32(), false, "")?
                } else {
                    self.first_lane(mask, w)?
                };
                let parts = components(self, x)?;
                let mut out = Vec::with_capacity(parts.len());
                for p in parts {
                    out.push(self.l.b.build_extract_element(p, lane, "")?);
                }
                match out.as_slice() {
                    [one] => *one,
                    _ => {
                        let rt = self.l.ty(f.value_type(r))?;
                        self.l.gather(rt, &out)?
                    }
                }
            }
            GroupOp::Shuffle | GroupOp::ShuffleXor | GroupOp::ShuffleUp | GroupOp::ShuffleDown => {
                let x = operand(self, 0)?;
                let by = operand(self, 1)?.into_vector_value();
                let i32t = self.l.i32();
                let by = self.l.b.build_int_cast_sign_flag(by, i32t.vec_type(w), false, "")?;
                let iota = iota(i32t, w);
                let b = &self.l.b;
                let source = match op {
                    GroupOp::Shuffle => by,
                    GroupOp::ShuffleXor => b.build_xor(iota, by, "")?,
                    GroupOp::ShuffleUp => b.build_int_sub(iota, by, "")?,
                    _ => b.build_int_add(iota, by, "")?,
                };
                // Outside the packet (ShuffleUp wraps below 0): the lane's own value.
                let inside = b.build_int_compare(IntPredicate::ULT, source, splat_i32(i32t, w, w), "")?;
                let source = b.build_select(inside, source, iota, "")?.into_vector_value();
                let mut parts = Vec::new();
                for p in components(self, x)? {
                    parts.push(self.permute(p, source, w)?);
                }
                Ops { b: &self.l.b, m: &self.l.e.m, f: self.l.llf }.concat_all(&parts)?.into()
            }
            GroupOp::Any | GroupOp::All => {
                let x = operand(self, 0)?.into_vector_value();
                let b = &self.l.b;
                let on = if *op == GroupOp::Any {
                    b.build_and(x, mask, "")?
                } else {
                    let off = b.build_not(mask, "")?;
                    b.build_or(x, off, "")?
                };
                let name = if *op == GroupOp::Any { "llvm.vector.reduce.or" } else { "llvm.vector.reduce.and" };
                self.l.intr(name, &[on.into()])?
            }
            GroupOp::AllEqual => {
                let x = operand(self, 0)?.into_vector_value();
                let first = self.first_lane(mask, w)?;
                let b = &self.l.b;
                let v0 = b.build_extract_element(x, first, "")?;
                let same = match v0 {
                    BasicValueEnum::FloatValue(_) => {
                        let s = self.l.broadcast(v0)?.into_vector_value();
                        b.build_float_compare(inkwell::FloatPredicate::OEQ, x, s, "")?
                    }
                    _ => {
                        let s = self.l.broadcast(v0)?.into_vector_value();
                        b.build_int_compare(IntPredicate::EQ, x, s, "")?
                    }
                };
                let off = b.build_not(mask, "")?;
                let ok = b.build_or(same, off, "")?;
                self.l.intr("llvm.vector.reduce.and", &[ok.into()])?
            }
            GroupOp::Elect => {
                let first = self.first_lane(mask, w)?;
                let i32t = self.l.i32();
                let at = self.l.broadcast(first.into())?.into_vector_value();
                self.l.b.build_int_compare(IntPredicate::EQ, iota(i32t, w), at, "")?.into()
            }
            GroupOp::Ballot => {
                let x = operand(self, 0)?.into_vector_value();
                let b = &self.l.b;
                let on = b.build_and(x, mask, "")?;
                let ops = Ops { b, m: &self.l.e.m, f: self.l.llf };
                let bits = ops.mask_bits(on)?;
                let wide = b.build_int_z_extend(bits, self.l.cx().i128_type(), "")?;
                b.build_bit_cast(wide, self.l.i32().vec_type(4), "")?
            }
        };
        // One value for the packet (`vectorize::analysis` finds these uniform): its lanes'
        // when the result varies after all.
        let value = if op.gives_one_value() && !self.l.is_uniform(r) { self.l.broadcast(value)? } else { value };
        self.l.define(r, value)
    }

    /// The active lanes of `x` combined by `a` (a scalar).
    fn reduce(&mut self, a: GroupArith, x: VectorValue<'ctx>, mask: VectorValue<'ctx>) -> R<Val<'ctx>> {
        use GroupArith as A;
        let ty: BasicTypeEnum<'ctx> = x.get_type().into();
        let id = self.l.group_identity(a, ty)?;
        let xs = self.l.b.build_select(mask, x, id.into_vector_value(), "")?;
        let name = match a {
            A::FAdd | A::FMul => {
                // Ordered (no reassociation): lane 0 first.
                let start = self.l.group_identity(a, x.get_type().get_element_type())?;
                let name = if a == A::FAdd { "llvm.vector.reduce.fadd" } else { "llvm.vector.reduce.fmul" };
                return self.l.intrinsic(name, &[ty], &[start, xs]);
            }
            A::IAdd => "llvm.vector.reduce.add",
            A::IMul => "llvm.vector.reduce.mul",
            A::And | A::LogicalAnd => "llvm.vector.reduce.and",
            A::Or | A::LogicalOr => "llvm.vector.reduce.or",
            A::Xor | A::LogicalXor => "llvm.vector.reduce.xor",
            A::SMin => "llvm.vector.reduce.smin",
            A::UMin => "llvm.vector.reduce.umin",
            A::SMax => "llvm.vector.reduce.smax",
            A::UMax => "llvm.vector.reduce.umax",
            A::FMin => "llvm.vector.reduce.fmin",
            A::FMax => "llvm.vector.reduce.fmax",
        };
        self.l.intr(name, &[xs])
    }

    /// The scan of the active lanes of `x`, lane by lane.
    fn scan(
        &mut self,
        a: GroupArith,
        x: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        inclusive: bool,
        w: u32,
    ) -> R<VectorValue<'ctx>> {
        let mut out = x.get_type().get_undef();
        self.fold_lanes(a, x, mask, 0..w, |s, lane, before, after| {
            let shown = if inclusive { after } else { before };
            out = s.l.b.build_insert_element(out, shown, s.l.i32().const_int(u64::from(lane), false), "")?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Each lane's cluster of `size` lanes (from a multiple of `size`) reduced over its active
    /// lanes.
    fn clustered(
        &mut self,
        a: GroupArith,
        x: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        size: u32,
        w: u32,
    ) -> R<VectorValue<'ctx>> {
        let mut out = x.get_type().get_undef();
        let size = size.max(1);
        for c in 0..w / size {
            let lanes = c * size..(c + 1) * size;
            let total = self.fold_lanes(a, x, mask, lanes.clone(), |_, _, _, _| Ok(()))?;
            for k in lanes {
                out = self.l.b.build_insert_element(out, total, self.l.i32().const_int(u64::from(k), false), "")?;
            }
        }
        Ok(out)
    }

    /// Combines lanes `lanes` of `x` in order, each active one into the running value (the
    /// inactive ones pass it on); `each(lane, before, after)` sees the value around every
    /// lane. Returns the last value.
    fn fold_lanes(
        &mut self,
        a: GroupArith,
        x: VectorValue<'ctx>,
        mask: VectorValue<'ctx>,
        lanes: std::ops::Range<u32>,
        mut each: impl FnMut(&mut Self, u32, Val<'ctx>, Val<'ctx>) -> R<()>,
    ) -> R<Val<'ctx>> {
        let mut acc = self.l.group_identity(a, x.get_type().get_element_type())?;
        for k in lanes {
            let lane = self.l.i32().const_int(u64::from(k), false);
            let xk = self.l.b.build_extract_element(x, lane, "")?;
            let on = self.l.b.build_extract_element(mask, lane, "")?.into_int_value();
            let next = self.l.group_combine(a, acc, xk)?;
            let next = self.l.b.build_select(on, next, acc, "")?;
            each(self, k, acc, next)?;
            acc = next;
        }
        Ok(acc)
    }

    /// Lane k of the result is lane `source[k]` of `x` (each below W).
    fn permute(&mut self, x: VectorValue<'ctx>, source: VectorValue<'ctx>, w: u32) -> R<VectorValue<'ctx>> {
        let mut out = x.get_type().get_undef();
        for k in 0..w {
            let lane = self.l.i32().const_int(u64::from(k), false);
            let b = &self.l.b;
            let from = b.build_extract_element(source, lane, "")?.into_int_value();
            let v = b.build_extract_element(x, from, "")?;
            out = b.build_insert_element(out, v, lane, "")?;
        }
        Ok(out)
    }

    /// The lowest active lane (i32; W when none is).
    fn first_lane(&mut self, mask: VectorValue<'ctx>, w: u32) -> R<IntValue<'ctx>> {
        let ops = Ops { b: &self.l.b, m: &self.l.e.m, f: self.l.llf };
        let bits = ops.mask_bits(mask)?;
        let tz = self.l.intrinsic(
            "llvm.cttz",
            &[bits.get_type().into()],
            &[bits.into(), self.l.cx().bool_type().const_zero().into()],
        )?;
        let tz = self.l.b.build_int_cast_sign_flag(tz.into_int_value(), self.l.i32(), false, "")?;
        // No active lane (a block no lane runs, lowered anyway): lane 0, inside the packet.
        let inside =
            self.l.b.build_int_compare(IntPredicate::ULT, tz, self.l.i32().const_int(u64::from(w), false), "")?;
        Ok(self.l.b.build_select(inside, tz, self.l.i32().const_zero(), "")?.into_int_value())
    }
}

fn iota<'ctx>(i32t: inkwell::types::IntType<'ctx>, w: u32) -> VectorValue<'ctx> {
    VectorType::const_vector(&(0..w).map(|k| i32t.const_int(u64::from(k), false)).collect::<Vec<_>>())
}

fn splat_i32<'ctx>(i32t: inkwell::types::IntType<'ctx>, w: u32, v: u32) -> VectorValue<'ctx> {
    VectorType::const_vector(&(0..w).map(|_| i32t.const_int(u64::from(v), false)).collect::<Vec<_>>())
}
