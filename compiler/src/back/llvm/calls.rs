//! Calls of IR functions and atomic operations.

use super::*;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    pub(super) fn lower_call(&mut self, i: Inst, callee: Func, args: &[Value]) -> R<Option<Val<'ctx>>> {
        let Some(cf) = self.e.ir.functions.get(callee) else { bail!("call of an unknown function") };
        if cf.kind == FuncKind::Import {
            bail!("call to `{}`, which is declared but never defined (unresolved import)", cf.name);
        }
        let key = self.e.instance_key(callee, self.kernel);
        let Some(&fv) = self.e.funcs.get(&key) else { bail!("function `{}` was not declared", cf.name) };
        let mut cargs: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(args.len() + 4);
        let ptys = fv.get_type().get_param_types();
        if ptys.len() != args.len() + 4 {
            bail!("call of `{}` with {} arguments", cf.name, args.len());
        }
        for (k, a) in args.iter().enumerate() {
            let v = self.get(*a)?;
            if BasicMetadataTypeEnum::from(v.get_type()) != ptys[k] {
                bail!("argument {k} of `{}` has type {}", cf.name, v.get_type());
            }
            cargs.push(v.into());
        }
        cargs.push(self.env.ctx.into());
        for l in self.env.lid {
            cargs.push(l.into());
        }
        let call = self.b.build_call(fv, &cargs, "")?;
        let _ = i;
        Ok(call.try_as_basic_value().basic())
    }

    pub(super) fn lower_atomic(
        &mut self,
        op: ir::AtomicOp,
        ptr: Value,
        value: Option<Value>,
        comparator: Option<Value>,
        semantics: u32,
        rt: Option<BasicTypeEnum<'ctx>>,
    ) -> R<Option<Val<'ctx>>> {
        let p = as_ptr(self.get(ptr)?)?;
        let val = match value {
            Some(v) => Some(self.get(v)?),
            None => None,
        };
        let cmp = match comparator {
            Some(c) => Some(self.get(c)?),
            None => None,
        };
        if self.in_local_memory(ptr) {
            return self.local_atomic_on(op, p, val, cmp, rt);
        }
        self.atomic_on(op, p, val, cmp, ordering(semantics), rt)
    }

    /// Whether `ptr` points into `__local` memory: a work-group's, which only the host thread
    /// running that work-group ever touches (each worker has its own; every work-item of a
    /// work-group runs on that one thread, barriers included).
    pub(crate) fn in_local_memory(&self, ptr: Value) -> bool {
        matches!(
            self.e.ir.types.get(self.f.value_type(ptr)),
            ir::TypeData::Pointer { space: crate::kernel_info::AddressSpace::Local, .. }
        )
    }

    /// [`Self::atomic_on`] on `__local` memory ([`Self::in_local_memory`]): no other thread
    /// can see the location, so the read-modify-write is a plain load, operation and store,
    /// in program (and lane) order, which gives every result an atomic would. A `lock`ed
    /// instruction per lane made a `__local` histogram 8x slower than Intel's CPU runtime.
    pub(crate) fn local_atomic_on(
        &mut self,
        op: ir::AtomicOp,
        p: PointerValue<'ctx>,
        val: Option<Val<'ctx>>,
        cmp: Option<Val<'ctx>>,
        rt: Option<BasicTypeEnum<'ctx>>,
    ) -> R<Option<Val<'ctx>>> {
        use ir::AtomicOp as A;
        let need_val = || val.ok_or_else(|| Error("atomic operation without an operand".into()));
        let load = |s: &Self, t: BasicTypeEnum<'ctx>| -> R<Val<'ctx>> {
            let l = s.b.build_load(t, p, "")?;
            crate::back::builtins::set_align(l, s.e.td.get_store_size(&t).max(1) as u32);
            Ok(l)
        };
        let store = |s: &Self, v: Val<'ctx>| -> R<()> {
            let st = s.b.build_store(p, v)?;
            let _ = st.set_alignment(s.e.td.get_store_size(&v.get_type()).max(1) as u32);
            Ok(())
        };
        let int = |v: Val<'ctx>| -> R<IntValue<'ctx>> {
            match v {
                BasicValueEnum::IntValue(iv) => Ok(iv),
                _ => bail!("atomic {op:?} on {}", v.get_type()),
            }
        };
        Ok(match op {
            A::Load => Some(load(self, rt.ok_or("atomic load without a result")?)?),
            A::Store => {
                store(self, need_val()?)?;
                None
            }
            A::Exchange => {
                let v = need_val()?;
                let old = load(self, v.get_type())?;
                store(self, v)?;
                Some(old)
            }
            A::CompareExchange => {
                let (v, c) = (need_val()?, cmp.ok_or("compare-exchange without a comparator")?);
                let (vi, ci) = (int(v)?, int(c)?);
                if vi.get_type() != ci.get_type() {
                    bail!("compare-exchange operands of different types");
                }
                let old = load(self, c.get_type())?.into_int_value();
                let same = self.b.build_int_compare(IntPredicate::EQ, old, ci, "")?;
                store(self, self.b.build_select(same, vi, old, "")?)?;
                Some(old.into())
            }
            A::FAdd | A::FMin | A::FMax => {
                let v = need_val()?;
                let BasicValueEnum::FloatValue(fv) = v else { bail!("atomic {op:?} on {}", v.get_type()) };
                let old = load(self, v.get_type())?.into_float_value();
                store(self, self.float_combine(op, old, fv)?.into())?;
                Some(old.into())
            }
            _ => {
                let operand = match op {
                    A::IIncrement | A::IDecrement => {
                        let t = rt.ok_or("atomic increment without a result")?;
                        as_int(self.cint(t, 1)?)?
                    }
                    _ => int(need_val()?)?,
                };
                let old = load(self, operand.get_type().into())?.into_int_value();
                let b = &self.b;
                let pick = |pred: IntPredicate| -> R<IntValue<'ctx>> {
                    let keep = b.build_int_compare(pred, old, operand, "")?;
                    Ok(b.build_select(keep, old, operand, "")?.into_int_value())
                };
                let new = match op {
                    A::IIncrement | A::IAdd => b.build_int_add(old, operand, "")?,
                    A::IDecrement | A::ISub => b.build_int_sub(old, operand, "")?,
                    A::And => b.build_and(old, operand, "")?,
                    A::Or => b.build_or(old, operand, "")?,
                    A::Xor => b.build_xor(old, operand, "")?,
                    A::SMin => pick(IntPredicate::SLE)?,
                    A::UMin => pick(IntPredicate::ULE)?,
                    A::SMax => pick(IntPredicate::SGE)?,
                    A::UMax => pick(IntPredicate::UGE)?,
                    _ => bail!("atomic {op:?} on __local memory"),
                };
                store(self, new.into())?;
                Some(old.into())
            }
        })
    }

    /// An atomic operation on LLVM values (one work-item's), of memory order `order`
    /// ([`ordering`]; a load's release part and a store's acquire part dropped, as the C11
    /// orders allow none).
    pub(crate) fn atomic_on(
        &mut self,
        op: ir::AtomicOp,
        p: PointerValue<'ctx>,
        val: Option<Val<'ctx>>,
        cmp: Option<Val<'ctx>>,
        order: AtomicOrdering,
        rt: Option<BasicTypeEnum<'ctx>>,
    ) -> R<Option<Val<'ctx>>> {
        use ir::AtomicOp as A;
        let sc = order;
        let need_val = || val.ok_or_else(|| Error("atomic operation without an operand".into()));
        let rmw = |s: &Self, op: AtomicRMWBinOp, v: Val<'ctx>| -> R<Val<'ctx>> {
            match v {
                BasicValueEnum::IntValue(iv) => Ok(s.b.build_atomicrmw(op, p, iv, sc)?.into()),
                _ => bail!("atomic {op:?} on {}", v.get_type()),
            }
        };
        Ok(match op {
            A::Load => {
                let t = rt.ok_or("atomic load without a result")?;
                let l = self.b.build_load(t, p, "")?;
                let inst = l.as_instruction_value().ok_or("atomic load folded")?;
                let align = self.e.td.get_store_size(&t).max(1) as u32;
                let _ = inst.set_alignment(align);
                inst.set_atomic_ordering(for_load(sc)).map_err(|e| Error(format!("atomic load: {e}")))?;
                Some(l)
            }
            A::Store => {
                let v = need_val()?;
                let s = self.b.build_store(p, v)?;
                let align = self.e.td.get_store_size(&v.get_type()).max(1) as u32;
                let _ = s.set_alignment(align);
                s.set_atomic_ordering(for_store(sc)).map_err(|e| Error(format!("atomic store: {e}")))?;
                None
            }
            A::Exchange => {
                let v = need_val()?;
                match v {
                    BasicValueEnum::FloatValue(fv) => {
                        let it = int_type(self.cx(), fv.get_type().get_bit_width())?;
                        let iv = self.b.build_bit_cast(fv, it, "")?.into_int_value();
                        let old = self.b.build_atomicrmw(AtomicRMWBinOp::Xchg, p, iv, sc)?;
                        Some(self.b.build_bit_cast(old, fv.get_type(), "")?)
                    }
                    _ => Some(rmw(self, AtomicRMWBinOp::Xchg, v)?),
                }
            }
            A::CompareExchange => {
                let v = need_val()?;
                let c = cmp.ok_or("compare-exchange without a comparator")?;
                if v.get_type() != c.get_type() {
                    bail!("compare-exchange operands of different types");
                }
                let pair = self.b.build_cmpxchg(p, c, v, sc, for_load(sc))?;
                Some(self.b.build_extract_value(pair, 0, "")?)
            }
            A::IIncrement | A::IDecrement => {
                let t = rt.ok_or("atomic increment without a result")?;
                let one = as_int(self.cint(t, 1)?)?;
                let o = if op == A::IIncrement { AtomicRMWBinOp::Add } else { AtomicRMWBinOp::Sub };
                Some(self.b.build_atomicrmw(o, p, one, sc)?.into())
            }
            A::IAdd => Some(rmw(self, AtomicRMWBinOp::Add, need_val()?)?),
            A::ISub => Some(rmw(self, AtomicRMWBinOp::Sub, need_val()?)?),
            A::SMin => Some(rmw(self, AtomicRMWBinOp::Min, need_val()?)?),
            A::UMin => Some(rmw(self, AtomicRMWBinOp::UMin, need_val()?)?),
            A::SMax => Some(rmw(self, AtomicRMWBinOp::Max, need_val()?)?),
            A::UMax => Some(rmw(self, AtomicRMWBinOp::UMax, need_val()?)?),
            A::And => Some(rmw(self, AtomicRMWBinOp::And, need_val()?)?),
            A::Or => Some(rmw(self, AtomicRMWBinOp::Or, need_val()?)?),
            A::Xor => Some(rmw(self, AtomicRMWBinOp::Xor, need_val()?)?),
            A::FAdd | A::FMin | A::FMax => {
                let v = need_val()?;
                let BasicValueEnum::FloatValue(fv) = v else { bail!("atomic {op:?} on {}", v.get_type()) };
                Some(self.atomic_float(op, p, fv, sc)?.into())
            }
        })
    }

    /// A float atomic (`FAdd`, `FMin`, `FMax`) as a compare-exchange loop on the bits
    /// (inkwell builds only integer read-modify-writes; LLVM expands `atomicrmw fadd` /
    /// `fmin` / `fmax` into the same loop on x86).
    pub(super) fn atomic_float(
        &self,
        op: ir::AtomicOp,
        p: PointerValue<'ctx>,
        v: FloatValue<'ctx>,
        order: AtomicOrdering,
    ) -> R<FloatValue<'ctx>> {
        let ft = v.get_type();
        let it = int_type(self.cx(), ft.get_bit_width())?;
        let pre = self.b.get_insert_block().ok_or("builder not positioned")?;
        let first = self.b.build_load(it, p, "")?;
        let inst = first.as_instruction_value().ok_or("atomic load folded")?;
        let _ = inst.set_alignment(ft.get_bit_width() / 8);
        inst.set_atomic_ordering(AtomicOrdering::Monotonic).map_err(|e| Error(format!("atomic load: {e}")))?;
        let lp = self.cx().insert_basic_block_after(pre, "float_atomic.loop");
        let done = self.cx().insert_basic_block_after(lp, "float_atomic.done");
        self.b.build_unconditional_branch(lp)?;
        self.b.position_at_end(lp);
        let cur = self.b.build_phi(it, "")?;
        let cur_i = cur.as_basic_value().into_int_value();
        let cur_f = self.b.build_bit_cast(cur_i, ft, "")?.into_float_value();
        let new = self.float_combine(op, cur_f, v)?;
        let sum_i = self.b.build_bit_cast(new, it, "")?.into_int_value();
        let pair = self.b.build_cmpxchg(p, cur_i, sum_i, order, for_load(order))?;
        let seen = self.b.build_extract_value(pair, 0, "")?.into_int_value();
        let ok = self.b.build_extract_value(pair, 1, "")?.into_int_value();
        self.b.build_conditional_branch(ok, done, lp)?;
        cur.add_incoming(&[(&first, pre), (&seen, lp)]);
        self.b.position_at_end(done);
        Ok(self.b.build_bit_cast(cur_i, ft, "")?.into_float_value())
    }

    /// `old op v` of a float atomic: the sum, or OpenCL's `fmin` / `fmax` (a NaN loses to a
    /// number).
    fn float_combine(&self, op: ir::AtomicOp, old: FloatValue<'ctx>, v: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(match op {
            ir::AtomicOp::FAdd => self.b.build_float_add(old, v, "")?,
            ir::AtomicOp::FMin => self.intr("llvm.minnum", &[old.into(), v.into()])?.into_float_value(),
            ir::AtomicOp::FMax => self.intr("llvm.maxnum", &[old.into(), v.into()])?.into_float_value(),
            _ => bail!("{op:?} is not a float atomic"),
        })
    }
}

/// The LLVM ordering of SPIR-V memory semantics `semantics` (its order bits: Acquire 0x2,
/// Release 0x4, AcquireRelease 0x8, SequentiallyConsistent 0x10; none: relaxed), as OpenCL
/// C's `memory_order` maps to them.
pub(crate) fn ordering(semantics: u32) -> AtomicOrdering {
    match (semantics & 0x10 != 0, semantics & 0x8 != 0, semantics & 0x2 != 0, semantics & 0x4 != 0) {
        (true, ..) => AtomicOrdering::SequentiallyConsistent,
        (_, true, ..) | (_, _, true, true) => AtomicOrdering::AcquireRelease,
        (_, _, true, false) => AtomicOrdering::Acquire,
        (_, _, false, true) => AtomicOrdering::Release,
        _ => AtomicOrdering::Monotonic,
    }
}

/// `order` for a load (a compare-exchange's failure): without its release part.
pub(crate) fn for_load(order: AtomicOrdering) -> AtomicOrdering {
    match order {
        AtomicOrdering::Release => AtomicOrdering::Monotonic,
        AtomicOrdering::AcquireRelease => AtomicOrdering::Acquire,
        o => o,
    }
}

/// `order` for a store: without its acquire part.
pub(crate) fn for_store(order: AtomicOrdering) -> AtomicOrdering {
    match order {
        AtomicOrdering::Acquire => AtomicOrdering::Monotonic,
        AtomicOrdering::AcquireRelease => AtomicOrdering::Release,
        o => o,
    }
}
