//! Sub-group functions (`InstData::Group` of sub-group scope) in scalar code, and what their
//! vector form (`back::vector::sub_groups`) shares: the combining operations and their
//! identities.
//!
//! A sub-group is the packet: in scalar code one work-item, so a reduction, an inclusive
//! scan, a broadcast or a shuffle is the work-item's own operand, an exclusive scan the
//! operation's identity, `elect` and `all_equal` are true and a ballot has bit 0 only.

use super::*;
use crate::ir::{GroupArith, GroupOp};
use inkwell::types::BasicTypeEnum;

impl<'ctx> FnLower<'_, 'ctx, '_> {
    /// Sub-group instruction `i` in scalar code: a sub-group of one work-item.
    pub(super) fn sub_group_scalar(&mut self, i: Inst) -> R<Val<'ctx>> {
        let InstData::Group { op, args, .. } = &self.f.insts[i] else { bail!("{i} is not a group instruction") };
        let (_, rt) = self.need_result(i)?;
        let own = |s: &mut Self| -> R<Val<'ctx>> { s.get(*args.first().ok_or("a collective without operand")?) };
        Ok(match op {
            GroupOp::Reduce(_)
            | GroupOp::InclusiveScan(_)
            | GroupOp::ClusteredReduce(_)
            | GroupOp::Broadcast
            | GroupOp::BroadcastFirst
            | GroupOp::Shuffle
            | GroupOp::ShuffleXor
            | GroupOp::ShuffleUp
            | GroupOp::ShuffleDown
            | GroupOp::Any
            | GroupOp::All => own(self)?,
            GroupOp::ExclusiveScan(a) => self.group_identity(*a, rt)?,
            GroupOp::AllEqual | GroupOp::Elect => self.cx().bool_type().const_int(1, false).into(),
            GroupOp::Ballot => {
                let x = own(self)?.into_int_value();
                let word = self.b.build_int_z_extend(x, self.i32(), "")?;
                let zero = self.i32().const_zero();
                self.gather(rt, &[word.into(), zero.into(), zero.into(), zero.into()])?
            }
        })
    }

    /// The identity of `a` for values of `ty` (a scalar or vector type): what a lane that
    /// is off contributes, and an exclusive scan's first value. Float addition's is -0.0
    /// (x + -0.0 is x for every x, +0.0 included).
    pub(crate) fn group_identity(&self, a: GroupArith, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        use GroupArith as A;
        Ok(match a {
            A::FAdd => const_float_like(ty, -0.0)?,
            A::FMul => const_float_like(ty, 1.0)?,
            A::FMin => const_float_like(ty, f64::INFINITY)?,
            A::FMax => const_float_like(ty, f64::NEG_INFINITY)?,
            _ => {
                let BasicTypeEnum::IntType(it) = elem_type(ty) else { bail!("{a:?} of {ty}") };
                let bits = it.get_bit_width();
                let all = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let sign = 1u64 << (bits - 1);
                let v = match a {
                    A::IAdd | A::Or | A::Xor | A::UMax | A::LogicalOr | A::LogicalXor => 0,
                    A::IMul => 1,
                    A::And | A::UMin | A::LogicalAnd => all,
                    A::SMin => sign - 1,
                    _ => sign,
                };
                const_int_like(ty, v)?
            }
        })
    }

    /// `x op y`, element-wise on vectors.
    pub(crate) fn group_combine(&self, a: GroupArith, x: Val<'ctx>, y: Val<'ctx>) -> R<Val<'ctx>> {
        use crate::ir::BinaryOp as B;
        use GroupArith as A;
        let op = match a {
            A::FMin => return self.intr("llvm.minnum", &[x, y]),
            A::FMax => return self.intr("llvm.maxnum", &[x, y]),
            A::SMin => return self.intr("llvm.smin", &[x, y]),
            A::UMin => return self.intr("llvm.umin", &[x, y]),
            A::SMax => return self.intr("llvm.smax", &[x, y]),
            A::UMax => return self.intr("llvm.umax", &[x, y]),
            A::IAdd => B::IAdd,
            A::FAdd => B::FAdd,
            A::IMul => B::IMul,
            A::FMul => B::FMul,
            A::And => B::And,
            A::Or => B::Or,
            A::Xor => B::Xor,
            A::LogicalAnd => B::LogicalAnd,
            A::LogicalOr => B::LogicalOr,
            A::LogicalXor => B::LogicalNe,
        };
        self.lower_binary(op, x, y)
    }
}
