//! The lowering of masked blocks (`passes::linearize`): a masked block's code runs under
//! the block's lane mask (the packet's lanes whose mask value is true, and that exist), and
//! a block no lane is in is skipped, unless it is [`effect_free`] arithmetic, cheaper to run
//! for every lane than to test. Memory operations, atomics, image accesses, printf and calls
//! read the mask (`back::vector`), so an inactive lane never touches memory. In scalar code
//! (a kernel that runs scalar after linearization) a block's mask is one work-item's `bool`.

use super::{FnLower, R};
use crate::ir::{Block, InstData, Value, ValueDef};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{IntValue, VectorValue};
use inkwell::IntPredicate;
use std::collections::HashSet;

/// Where a masked block that no lane enters is skipped to: (the guard's block, the block
/// skipped to).
pub type BlockSkip<'ctx> = (BasicBlock<'ctx>, BasicBlock<'ctx>);

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// The last active lane of `mask` (i32).
    fn last_lane(&self, mask: VectorValue<'ctx>, w: u32) -> R<IntValue<'ctx>> {
        let iw = super::int_type(self.cx(), w)?;
        let bits = self.b.build_bit_cast(mask, iw, "")?.into_int_value();
        let ctlz = inkwell::intrinsics::Intrinsic::find("llvm.ctlz")
            .and_then(|i| i.get_declaration(&self.e.m, &[iw.into()]))
            .ok_or("cannot declare llvm.ctlz")?;
        let lz = self
            .b
            .build_call(ctlz, &[bits.into(), self.cx().bool_type().const_zero().into()], "")?
            .try_as_basic_value()
            .basic()
            .ok_or("ctlz without result")?
            .into_int_value();
        let lz = self.b.build_int_cast_sign_flag(lz, self.i32(), false, "")?;
        Ok(self.b.build_int_sub(self.i32().const_int(w as u64 - 1, false), lz, "")?)
    }
}

/// OpenCL.std instructions that touch memory or have effects: the pointer-result math
/// functions (fract, frexp, lgamma_r, modf, remquo, sincos), vload / vstore, printf and
/// prefetch. The others compute a value from their operands and trap on nothing.
const EXT_WITH_EFFECTS: &[u32] =
    &[30, 31, 36, 45, 52, 58, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 184, 185];

/// A short block of arithmetic only (no memory, call, barrier or effect; OpenCL.std math
/// counts four instructions, some of it being calls): a masked one runs for every lane
/// without a test (its values are only read under its mask).
fn effect_free(f: &crate::ir::Function, b: Block) -> bool {
    let mut cost = 0;
    f.layout.insts[b].iter().all(|&i| {
        cost += match &f.insts[i] {
            InstData::Binary { .. }
            | InstData::Unary { .. }
            | InstData::Compare { .. }
            | InstData::Select { .. }
            | InstData::Convert { .. }
            | InstData::ExtractElement { .. }
            | InstData::InsertElement { .. }
            | InstData::Shuffle { .. }
            | InstData::ExtractValue { .. }
            | InstData::InsertValue { .. }
            | InstData::Construct { .. }
            | InstData::AccessChain { .. }
            | InstData::Jump { .. } => 1,
            InstData::ExtInst { opcode, .. } if !EXT_WITH_EFFECTS.contains(opcode) => 4,
            _ => return false,
        };
        cost <= 32
    })
}

/// Masked blocks (`passes::linearize`): the block's mask is the packet's lanes whose mask
/// value is true; a block no lane is in is skipped (unless it is [`effect_free`]).
impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// At the start of block `b` (the builder positioned there): sets the vector mask to the
    /// block's (the packet's lanes for a block without a mask) and, for a masked block that
    /// ends in a jump to a block only it reaches, branches past it when no lane is in it.
    /// Returns (the guard's block, the block skipped to) for [`Self::leave_block_mask`].
    pub fn enter_block_mask(&mut self, b: Block) -> R<Option<BlockSkip<'ctx>>> {
        let f = self.f;
        let Some(m) = f.blocks[b].mask else {
            if let Some(vs) = self.vec.as_mut() {
                vs.mask = vs.static_mask;
                vs.last = vs.static_last;
            }
            return Ok(None);
        };
        let any = match self.vec.as_ref().map(|vs| (vs.width, vs.static_mask)) {
            Some((w, st)) => {
                let mv = self.get_wide(m)?.into_vector_value();
                let mask = self.b.build_and(mv, st, "bmask")?;
                let last = self.last_lane(mask, w)?;
                if let Some(vs) = self.vec.as_mut() {
                    vs.mask = mask;
                    vs.last = last;
                }
                let iw = super::int_type(self.cx(), w)?;
                let bits = self.b.build_bit_cast(mask, iw, "")?.into_int_value();
                self.b.build_int_compare(IntPredicate::NE, bits, iw.const_zero(), "")?
            }
            None => self.get(m)?.into_int_value(),
        };
        // A linearized loop's header (masked by its own parameter, the loop mask) is entered
        // only when `any_active` of that mask holds, from the loop's entry or its latch: a
        // lane is always in it.
        let loop_header = matches!(f.values[m].def, ValueDef::Param(pb, _) if pb == b);
        if effect_free(f, b) || loop_header {
            return Ok(None); // cheaper to run for every lane than to test
        }
        let target = match f.terminator(b).map(|t| &f.insts[t]) {
            Some(InstData::Jump { dest })
                if dest.args.is_empty()
                    && f.blocks[dest.block].params.is_empty()
                    && f.branches_to(dest.block).len() == 1 =>
            {
                dest.block
            }
            _ if self.vec.is_none() => {
                bail!("a masked block {b} that does not end in a jump to a block only it reaches")
            }
            _ => return Ok(None),
        };
        let skip_to = self.blocks_of(target).ok_or("a jump to a block without code")?;
        let guard = self.b.get_insert_block().ok_or("builder not positioned")?;
        let body = self.cx().append_basic_block(self.llf, "masked");
        self.b.build_conditional_branch(any, body, skip_to)?;
        self.b.position_at_end(body);
        Ok(Some((guard, skip_to)))
    }

    /// After masked block `b` was lowered behind the guard `skip` of
    /// [`Self::enter_block_mask`]: its values used by other blocks become phis there (zero
    /// when the block was skipped: its values are defined only for its lanes, and no lane
    /// ran it).
    pub fn leave_block_mask(&mut self, b: Block, skip: BlockSkip<'ctx>) -> R<()> {
        let f = self.f;
        let (guard, to) = skip;
        let end = self.b.get_insert_block().ok_or("builder not positioned")?;
        let mut defined = HashSet::new();
        for &i in &f.layout.insts[b] {
            if let (Some(r), false) = (f.inst_result[i], matches!(f.insts[i], InstData::Variable { .. })) {
                defined.insert(r);
            }
        }
        let mut used: Vec<Value> = Vec::new();
        let mut seen = HashSet::new();
        for &ob in &f.layout.blocks {
            if ob == b {
                continue;
            }
            let mut note = |v: Value| {
                if defined.contains(&v) && seen.insert(v) {
                    used.push(v);
                }
            };
            if let Some(mv) = f.blocks[ob].mask {
                note(mv);
            }
            for &i in &f.layout.insts[ob] {
                f.insts[i].for_each_operand(&mut note);
            }
        }
        let pb = self.cx().create_builder();
        match to.get_first_instruction() {
            Some(first) => pb.position_before(&first),
            None => pb.position_at_end(to),
        }
        for v in used {
            let Some(val) = self.val_of(v) else { continue };
            if inkwell::values::BasicValue::as_instruction_value(&val).is_none() {
                continue; // a constant (a printf format's address, which must stay one)
            }
            let phi = pb.build_phi(val.get_type(), "")?;
            let zero = val.get_type().const_zero();
            phi.add_incoming(&[(&val, end), (&zero, guard)]);
            self.set_val(v, phi.as_basic_value());
        }
        Ok(())
    }
}
