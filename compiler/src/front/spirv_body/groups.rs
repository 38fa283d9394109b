//! Collective functions: SPIR-V's `OpGroup*` instructions as `InstData::Group`.
//!
//! OpenCL C's work-group functions (`work_group_reduce_add`, `work_group_scan_inclusive_max`,
//! `work_group_broadcast`, `work_group_any`, ...) reach SPIR-V as `OpGroupIAdd`,
//! `OpGroupFMax`, `OpGroupBroadcast`, `OpGroupAny` ... with `Workgroup` execution scope and a
//! group operation (`Reduce`, `InclusiveScan`, `ExclusiveScan`). Sub-group scope is not
//! translated yet: the build says so.

use super::super::spirv::{id_operand, operand, unsupported, TResult};
use super::BodyTranslator;
use crate::ir::{GroupArith, GroupOp, InstData, Scope};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op};

impl BodyTranslator<'_, '_, '_> {
    /// `OpGroupIAdd` ... `OpGroupSMax`, `OpGroupBroadcast`, `OpGroupAll`, `OpGroupAny`.
    pub(super) fn translate_group(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let scope = self.scope(id_operand(inst, 0)?)?;
        if scope != Scope::WorkGroup {
            return Err(unsupported(format!(
                "Op{} with {scope:?} scope: sub-group functions are not implemented yet",
                inst.class.opname
            )));
        }
        let ty = self.result_ty(inst)?;
        let (op, args) = match inst.class.opcode {
            Op::GroupBroadcast => {
                (GroupOp::Broadcast, vec![self.operand_value(inst, 1)?, self.operand_value(inst, 2)?])
            }
            Op::GroupAll => (GroupOp::All, vec![self.operand_value(inst, 1)?]),
            Op::GroupAny => (GroupOp::Any, vec![self.operand_value(inst, 1)?]),
            opcode => {
                let arith = match opcode {
                    Op::GroupIAdd => GroupArith::IAdd,
                    Op::GroupFAdd => GroupArith::FAdd,
                    Op::GroupSMin => GroupArith::SMin,
                    Op::GroupUMin => GroupArith::UMin,
                    Op::GroupFMin => GroupArith::FMin,
                    Op::GroupSMax => GroupArith::SMax,
                    Op::GroupUMax => GroupArith::UMax,
                    Op::GroupFMax => GroupArith::FMax,
                    _ => return Err(unsupported(format!("Op{} is not a group instruction", inst.class.opname))),
                };
                let op = match operand(inst, 1)? {
                    Operand::GroupOperation(spirv::GroupOperation::Reduce) => GroupOp::Reduce(arith),
                    Operand::GroupOperation(spirv::GroupOperation::InclusiveScan) => GroupOp::InclusiveScan(arith),
                    Operand::GroupOperation(spirv::GroupOperation::ExclusiveScan) => GroupOp::ExclusiveScan(arith),
                    other => {
                        return Err(unsupported(format!("Op{} with group operation {other:?}", inst.class.opname)))
                    }
                };
                (op, vec![self.operand_value(inst, 2)?])
            }
        };
        let v = self.emit_value(InstData::Group { scope, op, args }, ty)?;
        self.set_result(inst, v)
    }
}
