//! Lane-by-lane execution inside the vector body: an operation without a vector form runs
//! once per active lane, in lane order, through the scalar lowering, so that nothing keeps a
//! kernel scalar wholesale ([`crate::vectorize::per_lane`] says which operations).
//!
//! - Calls left after inlining (over the limit): the scalar function is called per lane with
//!   that lane's arguments and local id.
//! - Struct and array values that differ between work-items live as W scalar aggregates (an
//!   LLVM `[W x T]`, lane k's at index k); their loads, stores, members (extract / insert),
//!   constructions and selects run per lane; a blend under a mask selects per lane.
//! - Memory copies with varying operands: one copy per lane.
//! - Private arrays with an initializer: each lane's copy is initialised from the constant.

use super::VecLower;
use crate::back::llvm::wide_ty;
use crate::back::llvm::{bail, undef_of as undef, Val, R};
use crate::ir::{Inst, InstData, Value};
use inkwell::values::{BasicValue, BasicValueEnum};

impl<'a, 'ctx, 'ir> VecLower<'_, 'a, 'ctx, 'ir> {
    /// Whether instruction `i` runs lane by lane ([`crate::vectorize::per_lane`]).
    pub fn runs_per_lane(&self, i: Inst) -> bool {
        self.l.vec.as_ref().is_some_and(|vs| crate::vectorize::per_lane(self.l.e.ir, self.l.f, vs.wa, i).is_some())
    }

    /// Lane `k` of the vector-mode value `x` of IR value `v` (the value itself if uniform).
    fn lane_value(&self, v: Value, x: Val<'ctx>, k: u32) -> R<Val<'ctx>> {
        if self.l.is_uniform(v) {
            return Ok(x);
        }
        match x {
            BasicValueEnum::ArrayValue(a) => Ok(self.l.b.build_extract_value(a, k, "")?),
            _ => self.l.lane_of(x, self.l.f.value_type(v), self.l.i32().const_int(k as u64, false)),
        }
    }

    /// Runs `body(self, k)` for each lane k whose mask bit is set, in lane order, each under
    /// a branch on its bit; `acc` flows through the lanes (a lane that did not run keeps it).
    pub(super) fn each_active_lane(
        &mut self,
        mut acc: Option<Val<'ctx>>,
        mut body: impl FnMut(&mut Self, u32, Option<Val<'ctx>>) -> R<Option<Val<'ctx>>>,
    ) -> R<Option<Val<'ctx>>> {
        let w = self.l.width()?;
        let mask = self.l.vec.as_ref().ok_or("not in vector mode")?.mask;
        for k in 0..w {
            let kc = self.l.i32().const_int(k as u64, false);
            let on = self.l.b.build_extract_element(mask, kc, "")?.into_int_value();
            let from = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            let run = self.l.cx().append_basic_block(self.l.llf, "lane");
            let join = self.l.cx().append_basic_block(self.l.llf, "lane.next");
            self.l.b.build_conditional_branch(on, run, join)?;
            self.l.b.position_at_end(run);
            let with = body(self, k, acc)?;
            let ran = self.l.b.get_insert_block().ok_or("builder not positioned")?;
            self.l.b.build_unconditional_branch(join)?;
            self.l.b.position_at_end(join);
            if let (Some(a), Some(with)) = (acc, with) {
                let phi = self.l.b.build_phi(a.get_type(), "")?;
                phi.add_incoming(&[(&a as &dyn BasicValue<'ctx>, from), (&with as &dyn BasicValue<'ctx>, ran)]);
                acc = Some(phi.as_basic_value());
            }
        }
        Ok(acc)
    }

    /// Lowers instruction `i` once per active lane through the scalar lowering, each lane
    /// with its own operands (and, for calls, its own local id). A varying result is
    /// gathered lane by lane; a uniform one is the last active lane's.
    pub fn lower_lanes(&mut self, i: Inst) -> R<()> {
        // Image reads and writes of one image: one host call for the packet's lanes.
        if self.lower_image_lanes(i)? {
            return Ok(());
        }
        let f = self.l.f;
        let w = self.l.width()?;
        let mut ops = f.insts[i].operands();
        ops.sort();
        ops.dedup();
        let mut pre = Vec::with_capacity(ops.len());
        for o in ops {
            pre.push((o, self.l.get(o)?));
        }
        let res = f.inst_result[i].filter(|r| !self.l.e.is_void(f.value_type(*r)));
        let acc: Option<Val<'ctx>> = match res {
            Some(r) => {
                let t = self.l.ty(f.value_type(r))?;
                Some(if self.l.is_uniform(r) { undef(t) } else { undef(wide_ty(t, w)?) })
            }
            None => None,
        };
        let res_uniform = res.is_none_or(|r| self.l.is_uniform(r));
        let is_call = matches!(f.insts[i], InstData::Call { .. });
        let lid0 = self.l.env.lid[0];
        let acc = self.each_active_lane(acc, |s, k, acc| {
            let mut lane = std::collections::HashMap::with_capacity(pre.len());
            for &(o, x) in &pre {
                lane.insert(o, s.lane_value(o, x, k)?);
            }
            if is_call {
                let kk = lid0.get_type().const_int(k as u64, false);
                s.l.env.lid[0] = s.l.b.build_int_add(lid0, kk, "")?;
            }
            s.l.lane_vals = lane;
            let vec = s.l.vec.take();
            let r = s.l.lower_scalar(i);
            s.l.vec = vec;
            s.l.lane_vals.clear();
            s.l.env.lid[0] = lid0;
            let r = r?;
            Ok(match (acc, r) {
                (Some(_), Some(r)) if res_uniform => Some(r),
                (Some(a), Some(r)) => Some(s.l.set_lane(a, r, k)?),
                _ => acc,
            })
        })?;
        if let (Some(r), Some(a)) = (res, acc) {
            self.l.define(r, a)?;
        }
        Ok(())
    }

    /// A varying private array with an initializer: each active lane's copy (the `<W x ptr>`
    /// of its lane copies) gets the constant.
    pub fn init_lane_copies(&mut self, var: Value, init: Value) -> R<()> {
        let ptrs = self.l.get(var)?;
        let BasicValueEnum::VectorValue(ptrs) = ptrs else { bail!("lane copies of {var} are not a vector") };
        let x = self.l.get(init)?;
        // Each copy is aligned like the variable (`passes::align`).
        let align = match self.l.f.values[var].def {
            crate::ir::ValueDef::Result(i) => match &self.l.f.insts[i] {
                crate::ir::InstData::Variable { ty, align, .. } => {
                    crate::passes::align::variable_align(&self.l.e.ir.types, *ty, *align)
                }
                _ => 1,
            },
            _ => 1,
        } as u32;
        self.each_active_lane(None, |s, k, _| {
            let p = s.l.b.build_extract_element(ptrs, s.l.i32().const_int(k as u64, false), "")?.into_pointer_value();
            let st = s.l.b.build_store(p, x)?;
            let _ = st.set_alignment(align);
            Ok(None)
        })?;
        Ok(())
    }
}
