//! Collective functions: SPIR-V's `OpGroup*`, `OpGroupNonUniform*` instructions as
//! `InstData::Group`.
//!
//! OpenCL C's work-group functions (`work_group_reduce_add`, `work_group_scan_inclusive_max`,
//! `work_group_broadcast`, `work_group_any`, ...) reach SPIR-V as `OpGroupIAdd`,
//! `OpGroupFMax`, `OpGroupBroadcast`, `OpGroupAny` ... with `Workgroup` execution scope and a
//! group operation (`Reduce`, `InclusiveScan`, `ExclusiveScan`); the sub-group ones
//! (`sub_group_reduce_add`, ...) as the same with `Subgroup` scope, and those of the
//! `cl_khr_subgroup_*` extensions as `OpGroupNonUniform*`. The uniform and the non-uniform
//! forms are the same instruction here: each combines the operands of the work-items that
//! run it together (every work-item of the sub-group where the uniform form is allowed).
//! Ballot's bit operations (`sub_group_inverse_ballot`, `_ballot_bit_extract`,
//! `_ballot_bit_count`, `_inclusive_scan`, `_find_lsb` / `_msb`) become arithmetic on the
//! ballot's `uint4` with the work-item's sub-group local id and the sub-group's size.

use super::super::spirv::{id_operand, operand, unsupported, TResult};
use super::BodyTranslator;
use crate::ir::{BinaryOp, CmpOp, GroupArith, GroupOp, InstData, Scope, Type, UnaryOp, Value, WorkItemQuery};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op};

impl BodyTranslator<'_, '_, '_> {
    /// `OpGroupIAdd` ... `OpGroupSMax`, `OpGroupBroadcast`, `OpGroupAll`, `OpGroupAny`.
    pub(super) fn translate_group(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let scope = self.group_scope(inst)?;
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
                let op = group_operation(inst, arith)?;
                if matches!(op, GroupOp::ClusteredReduce(_)) {
                    return Err(unsupported(format!("Op{} with ClusteredReduce", inst.class.opname)));
                }
                (op, vec![self.operand_value(inst, 2)?])
            }
        };
        let v = self.emit_value(InstData::Group { scope, op, args }, ty)?;
        self.set_result(inst, v)
    }

    /// `OpGroupNonUniform*` (sub-group scope only).
    pub(super) fn translate_non_uniform(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let scope = self.group_scope(inst)?;
        if scope != Scope::SubGroup {
            return Err(unsupported(format!("Op{} outside sub-group scope", inst.class.opname)));
        }
        let ty = self.result_ty(inst)?;
        let operand = |s: &mut Self, i: usize| s.operand_value(inst, i);
        let group = |s: &mut Self, op: GroupOp, args: Vec<Value>| {
            s.emit_value(InstData::Group { scope: Scope::SubGroup, op, args }, ty)
        };
        let v = match inst.class.opcode {
            Op::GroupNonUniformElect => group(self, GroupOp::Elect, vec![])?,
            Op::GroupNonUniformAll => {
                let x = operand(self, 1)?;
                group(self, GroupOp::All, vec![x])?
            }
            Op::GroupNonUniformAny => {
                let x = operand(self, 1)?;
                group(self, GroupOp::Any, vec![x])?
            }
            Op::GroupNonUniformAllEqual => {
                let x = operand(self, 1)?;
                group(self, GroupOp::AllEqual, vec![x])?
            }
            Op::GroupNonUniformBroadcastFirst => {
                let x = operand(self, 1)?;
                group(self, GroupOp::BroadcastFirst, vec![x])?
            }
            Op::GroupNonUniformBallot => {
                let x = operand(self, 1)?;
                group(self, GroupOp::Ballot, vec![x])?
            }
            Op::GroupNonUniformBroadcast
            | Op::GroupNonUniformShuffle
            | Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown => {
                let op = match inst.class.opcode {
                    Op::GroupNonUniformBroadcast => GroupOp::Broadcast,
                    Op::GroupNonUniformShuffle => GroupOp::Shuffle,
                    Op::GroupNonUniformShuffleXor => GroupOp::ShuffleXor,
                    Op::GroupNonUniformShuffleUp => GroupOp::ShuffleUp,
                    _ => GroupOp::ShuffleDown,
                };
                let (x, id) = (operand(self, 1)?, operand(self, 2)?);
                group(self, op, vec![x, id])?
            }
            Op::GroupNonUniformRotateKHR => {
                // cl_khr_subgroup_rotate: the operand of the work-item `delta` after this one
                // in the sub-group, wrapping around (`(lid + delta) % size`), or in its
                // cluster of `ClusterSize` (`lid & ~(c - 1) | (lid + delta) & (c - 1)`).
                let u32t = self.builder.module.types.int(32);
                let x = operand(self, 1)?;
                let delta = operand(self, 2)?;
                let delta = self.convert_int(delta, u32t)?;
                let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
                let ahead = self.binary(BinaryOp::IAdd, lid, delta)?;
                let source = if inst.operands.len() > 3 {
                    let cluster = operand(self, 3)?;
                    let cluster = self.convert_int(cluster, u32t)?;
                    let one = self.int_value(32, 1);
                    let low = self.binary(BinaryOp::ISub, cluster, one)?;
                    let high = self.emit_value(InstData::Unary { op: UnaryOp::Not, arg: low }, u32t)?;
                    let start = self.binary(BinaryOp::And, lid, high)?;
                    let within = self.binary(BinaryOp::And, ahead, low)?;
                    self.binary(BinaryOp::Or, start, within)?
                } else {
                    let size = self.sub_group_query(WorkItemQuery::SubgroupSize)?;
                    self.binary(BinaryOp::URem, ahead, size)?
                };
                group(self, GroupOp::Shuffle, vec![x, source])?
            }
            Op::GroupNonUniformInverseBallot => {
                let ballot = operand(self, 1)?;
                let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
                self.ballot_bit(ballot, lid)?
            }
            Op::GroupNonUniformBallotBitExtract => {
                let ballot = operand(self, 1)?;
                let index = operand(self, 2)?;
                let u32t = self.builder.module.types.int(32);
                let index = self.convert_int(index, u32t)?;
                self.ballot_bit(ballot, index)?
            }
            Op::GroupNonUniformBallotBitCount => {
                let ballot = operand(self, 2)?;
                let below = match operand_group_operation(inst)? {
                    // Bits of the sub-group's ids: below the sub-group size, which the
                    // Khronos CTS reads as the largest sub-group's (a partial last
                    // sub-group's bits above its own size count).
                    spirv::GroupOperation::Reduce => self.sub_group_query(WorkItemQuery::SubgroupMaxSize)?,
                    spirv::GroupOperation::InclusiveScan => {
                        let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
                        let one = self.int_value(32, 1);
                        self.binary(BinaryOp::IAdd, lid, one)?
                    }
                    spirv::GroupOperation::ExclusiveScan => self.sub_group_query(WorkItemQuery::SubgroupLocalId)?,
                    other => return Err(unsupported(format!("OpGroupNonUniformBallotBitCount with {other:?}"))),
                };
                self.ballot_bits_below(ballot, below)?
            }
            Op::GroupNonUniformBallotFindLSB | Op::GroupNonUniformBallotFindMSB => {
                let ballot = operand(self, 1)?;
                self.ballot_find(ballot, inst.class.opcode == Op::GroupNonUniformBallotFindLSB)?
            }
            opcode => {
                let arith = match opcode {
                    Op::GroupNonUniformIAdd => GroupArith::IAdd,
                    Op::GroupNonUniformFAdd => GroupArith::FAdd,
                    Op::GroupNonUniformIMul => GroupArith::IMul,
                    Op::GroupNonUniformFMul => GroupArith::FMul,
                    Op::GroupNonUniformSMin => GroupArith::SMin,
                    Op::GroupNonUniformUMin => GroupArith::UMin,
                    Op::GroupNonUniformFMin => GroupArith::FMin,
                    Op::GroupNonUniformSMax => GroupArith::SMax,
                    Op::GroupNonUniformUMax => GroupArith::UMax,
                    Op::GroupNonUniformFMax => GroupArith::FMax,
                    Op::GroupNonUniformBitwiseAnd => GroupArith::And,
                    Op::GroupNonUniformBitwiseOr => GroupArith::Or,
                    Op::GroupNonUniformBitwiseXor => GroupArith::Xor,
                    Op::GroupNonUniformLogicalAnd => GroupArith::LogicalAnd,
                    Op::GroupNonUniformLogicalOr => GroupArith::LogicalOr,
                    Op::GroupNonUniformLogicalXor => GroupArith::LogicalXor,
                    _ => return Err(unsupported(format!("Op{} is not supported", inst.class.opname))),
                };
                let op = group_operation(inst, arith)?;
                let x = operand(self, 2)?;
                let mut args = vec![x];
                if let GroupOp::ClusteredReduce(_) = op {
                    args.push(operand(self, 3)?);
                }
                group(self, op, args)?
            }
        };
        self.set_result(inst, v)
    }

    /// The execution scope of a group instruction: work-group or sub-group.
    fn group_scope(&self, inst: &dr::Instruction) -> TResult<Scope> {
        match self.scope(id_operand(inst, 0)?)? {
            s @ (Scope::WorkGroup | Scope::SubGroup) => Ok(s),
            other => Err(unsupported(format!("Op{} with {other:?} scope", inst.class.opname))),
        }
    }

    /// A sub-group query as a `u32`.
    pub(super) fn sub_group_query(&mut self, query: WorkItemQuery) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        self.emit_value(InstData::WorkItem { query }, u32t)
    }

    fn binary(&mut self, op: BinaryOp, lhs: Value, rhs: Value) -> TResult<Value> {
        let ty = self.value_ty(lhs);
        self.emit_value(InstData::Binary { op, lhs, rhs }, ty)
    }

    /// Component `index / 32` of `ballot` (a `uint4`), for a `u32` `index` below 128.
    fn ballot_word(&mut self, ballot: Value, index: Value) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        let five = self.int_value(32, 5);
        let three = self.int_value(32, 3);
        let word = self.binary(BinaryOp::LShr, index, five)?;
        let word = self.binary(BinaryOp::And, word, three)?;
        self.emit_value(InstData::ExtractElement { vector: ballot, index: word }, u32t)
    }

    /// Whether bit `index` of `ballot` is set.
    fn ballot_bit(&mut self, ballot: Value, index: Value) -> TResult<Value> {
        let word = self.ballot_word(ballot, index)?;
        let thirty_one = self.int_value(32, 31);
        let one = self.int_value(32, 1);
        let shift = self.binary(BinaryOp::And, index, thirty_one)?;
        let bit = self.binary(BinaryOp::LShr, word, shift)?;
        let bit = self.binary(BinaryOp::And, bit, one)?;
        let zero = self.int_value(32, 0);
        self.compare(CmpOp::INe, bit, zero)
    }

    /// Word `k` of a ballot's mask of the bits below bit `below` (a `u32`).
    fn low_bits_word(&mut self, k: u64, below: Value) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        // Bits of word k below `below`: below - 32 k clamped to 0..=32.
        let base = self.int_value(32, 32 * k);
        let thirty_two = self.int_value(32, 32);
        let over = self.compare(CmpOp::UGt, below, base)?;
        let n = self.binary(BinaryOp::ISub, below, base)?;
        let zero = self.int_value(32, 0);
        let n = self.emit_value(InstData::Select { cond: over, if_true: n, if_false: zero }, u32t)?;
        let full = self.compare(CmpOp::UGe, n, thirty_two)?;
        // (1 << n) - 1 for n < 32, all ones otherwise.
        let one = self.int_value(32, 1);
        let thirty_one = self.int_value(32, 31);
        let shift = self.binary(BinaryOp::And, n, thirty_one)?;
        let bit = self.binary(BinaryOp::Shl, one, shift)?;
        let low = self.binary(BinaryOp::ISub, bit, one)?;
        let all = self.int_value(32, u64::from(u32::MAX));
        self.emit_value(InstData::Select { cond: full, if_true: all, if_false: low }, u32t)
    }

    /// Word `k` of `ballot` with only its bits below bit `below` (a `u32`) of the ballot.
    fn ballot_word_below(&mut self, ballot: Value, k: u64, below: Value) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        let index = self.int_value(32, k);
        let word = self.emit_value(InstData::ExtractElement { vector: ballot, index }, u32t)?;
        let mask = self.low_bits_word(k, below)?;
        self.binary(BinaryOp::And, word, mask)
    }

    /// The ballot built-in variables (`get_sub_group_eq_mask()` ... `_lt_mask()`): a `uint4`
    /// with the bits of the sub-group local ids equal to / at least / above / at most /
    /// below this work-item's, among the sub-group's.
    pub(super) fn sub_group_mask(&mut self, builtin: spirv::BuiltIn, ty: Type) -> TResult<Value> {
        use spirv::BuiltIn as B;
        let u32t = self.builder.module.types.int(32);
        if self.builder.module.types.lookup(&crate::ir::TypeData::Vector { elem: u32t, len: 4 }) != Some(ty) {
            return Err(unsupported(format!("built-in variable {builtin:?} of a type other than uint4")));
        }
        let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
        let size = self.sub_group_query(WorkItemQuery::SubgroupSize)?;
        let one = self.int_value(32, 1);
        let next = self.binary(BinaryOp::IAdd, lid, one)?;
        // Each mask is the bits below `upto` less the bits below `from`.
        let (upto, from) = match builtin {
            B::SubgroupEqMask => (next, Some(lid)),
            B::SubgroupGeMask => (size, Some(lid)),
            B::SubgroupGtMask => (size, Some(next)),
            B::SubgroupLeMask => (next, None),
            _ => (lid, None),
        };
        let mut words = Vec::with_capacity(4);
        for k in 0..4 {
            let mut w = self.low_bits_word(k, upto)?;
            if let Some(from) = from {
                let below = self.low_bits_word(k, from)?;
                let u32t = self.builder.module.types.int(32);
                let not_below = self.emit_value(InstData::Unary { op: UnaryOp::Not, arg: below }, u32t)?;
                w = self.binary(BinaryOp::And, w, not_below)?;
            }
            words.push(w);
        }
        self.emit_value(InstData::Construct { parts: words }, ty)
    }

    /// The number of bits of `ballot` below bit `below` (a `u32` up to 128).
    fn ballot_bits_below(&mut self, ballot: Value, below: Value) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        let mut total: Option<Value> = None;
        for k in 0..4u64 {
            let bits = self.ballot_word_below(ballot, k, below)?;
            let count = self.emit_value(InstData::Unary { op: UnaryOp::BitCount, arg: bits }, u32t)?;
            total = Some(match total {
                None => count,
                Some(t) => self.binary(BinaryOp::IAdd, t, count)?,
            });
        }
        total.ok_or_else(|| unsupported("an empty ballot"))
    }

    /// The lowest (`lsb`) or highest set bit of `ballot` among the sub-group's (undefined,
    /// here all ones, when none is).
    fn ballot_find(&mut self, ballot: Value, lsb: bool) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        // As the bit count: bits below the largest sub-group's size.
        let size = self.sub_group_query(WorkItemQuery::SubgroupMaxSize)?;
        let mut found = self.int_value(32, u64::from(u32::MAX));
        let order: Vec<u64> = if lsb { (0..4).rev().collect() } else { (0..4).collect() };
        for k in order {
            let word = self.ballot_word_below(ballot, k, size)?;
            let opcode = if lsb { spirv::OpenclStd100Op::ctz } else { spirv::OpenclStd100Op::clz };
            let count = self.emit_value(InstData::ExtInst { opcode: opcode as u32, args: vec![word] }, u32t)?;
            let at = if lsb {
                let base = self.int_value(32, 32 * k);
                self.binary(BinaryOp::IAdd, base, count)?
            } else {
                let top = self.int_value(32, 32 * k + 31);
                self.binary(BinaryOp::ISub, top, count)?
            };
            let zero = self.int_value(32, 0);
            let some = self.compare(CmpOp::INe, word, zero)?;
            // Words are visited so that the last one with a bit wins.
            found = self.emit_value(InstData::Select { cond: some, if_true: at, if_false: found }, u32t)?;
        }
        Ok(found)
    }

    fn compare(&mut self, op: CmpOp, lhs: Value, rhs: Value) -> TResult<Value> {
        let bool_t: Type = self.builder.module.types.bool();
        self.emit_value(InstData::Compare { op, lhs, rhs }, bool_t)
    }
}

/// The group operation operand (index 1) of a reduction or scan.
fn operand_group_operation(inst: &dr::Instruction) -> TResult<spirv::GroupOperation> {
    match operand(inst, 1)? {
        Operand::GroupOperation(g) => Ok(*g),
        other => Err(unsupported(format!("Op{} with group operation {other:?}", inst.class.opname))),
    }
}

/// The `GroupOp` of a reduction, scan or clustered reduction by `arith`.
fn group_operation(inst: &dr::Instruction, arith: GroupArith) -> TResult<GroupOp> {
    Ok(match operand_group_operation(inst)? {
        spirv::GroupOperation::Reduce => GroupOp::Reduce(arith),
        spirv::GroupOperation::InclusiveScan => GroupOp::InclusiveScan(arith),
        spirv::GroupOperation::ExclusiveScan => GroupOp::ExclusiveScan(arith),
        spirv::GroupOperation::ClusteredReduce => GroupOp::ClusteredReduce(arith),
        other => return Err(unsupported(format!("Op{} with group operation {other:?}", inst.class.opname))),
    })
}
