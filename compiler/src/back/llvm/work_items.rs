//! Work-item values: the work-item and work-group queries, read from the
//! `WorkGroupContext` and the hidden local-id parameters, once per function (in the
//! prologue, cached per query).

use super::*;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    pub(super) fn ctx_field_ptr(&self, off: u64) -> R<PointerValue<'ctx>> {
        gep(&self.pb, self.cx().i8_type().into(), self.env.ctx, &[self.i64().const_int(off, false)], true)
    }

    pub(crate) fn ctx_u64x3(&self, off: u64) -> R<[IntValue<'ctx>; 3]> {
        let mut out = [self.i64().const_zero(); 3];
        for (d, o) in out.iter_mut().enumerate() {
            let p = self.ctx_field_ptr(off + 8 * d as u64)?;
            let l = self.pb.build_load(self.i64(), p, "")?;
            set_align(l, 8);
            set_invariant(self.cx(), l);
            *o = as_int(l)?;
        }
        Ok(out)
    }

    /// A `u64` field of the context, read in the prologue.
    fn ctx_u64(&self, off: u64) -> R<IntValue<'ctx>> {
        let l = self.pb.build_load(self.i64(), self.ctx_field_ptr(off)?, "")?;
        set_align(l, 8);
        set_invariant(self.cx(), l);
        as_int(l)
    }

    /// `generic_space` of the pointer (or vector of pointers) `p`: `__local` when it lies in
    /// the work-group's local memory, private in the work-item state or on the running
    /// thread's stack (where the kernel's private variables are), `__global` otherwise.
    pub(crate) fn generic_space(&mut self, p: Val<'ctx>) -> R<Val<'ctx>> {
        let i64t = self.i64();
        let addr: Val<'ctx> = match p {
            BasicValueEnum::PointerValue(p) => self.b.build_ptr_to_int(p, i64t, "")?.into(),
            BasicValueEnum::VectorValue(v) if v.get_type().get_element_type().is_pointer_type() => {
                self.b.build_ptr_to_int(v, i64t.vec_type(v.get_type().get_size()), "")?.into()
            }
            other => other,
        };
        let ty = addr.get_type();
        let local = self.ctx_u64(ctx_offsets::LOCAL_MEMORY)?;
        let local_bytes = self.ctx_u64(ctx_offsets::LOCAL_MEMORY_BYTES)?;
        let state = self.ctx_u64(ctx_offsets::WORK_ITEM_STATE)?;
        let state_bytes = self.ctx_u64(ctx_offsets::WORK_ITEM_STATE_BYTES)?;
        let stack_low = self.ctx_u64(ctx_offsets::STACK)?;
        let stack_high = self.ctx_u64(ctx_offsets::STACK + 8)?;
        let stack_bytes = self.pb.build_int_sub(stack_high, stack_low, "")?;
        let within = |this: &Self, base: IntValue<'ctx>, len: IntValue<'ctx>| -> R<Val<'ctx>> {
            let (base, len) = (this.splat_to(base.into(), ty)?, this.splat_to(len.into(), ty)?);
            let off = this.binop(InstructionOpcode::Sub, addr, base)?;
            this.icmp(IntPredicate::ULT, off, len)
        };
        let in_local = within(self, local, local_bytes)?;
        let in_state = within(self, state, state_bytes)?;
        let on_stack = within(self, stack_low, stack_bytes)?;
        let private = self.binop(InstructionOpcode::Or, in_state, on_stack)?;
        let i32t = self.i32();
        let rty = match ty {
            BasicTypeEnum::VectorType(vt) => i32t.vec_type(vt.get_size()).into(),
            _ => i32t.into(),
        };
        let c = |v: u32| self.splat_to(i32t.const_int(u64::from(v), false).into(), rty);
        let (global, local_space, none) = (c(ir::GENERIC_GLOBAL)?, c(ir::GENERIC_LOCAL)?, c(0)?);
        let named = self.select(private, none, global)?;
        self.select(in_local, local_space, named)
    }

    /// The three components (or the scalar in [0]) of a work-item query, in the prologue.
    pub(super) fn work_item_raw(&mut self, q: WorkItemQuery) -> R<[IntValue<'ctx>; 3]> {
        if let Some(v) = self.wi_cache.get(&q) {
            return Ok(*v);
        }
        use WorkItemQuery as Q;
        let pb = &self.pb;
        let zero = self.i64().const_zero();
        let v = match q {
            Q::LocalId => self.env.lid,
            Q::GroupId => self.ctx_u64x3(ctx_offsets::GROUP_ID)?,
            Q::LocalSize => self.ctx_u64x3(ctx_offsets::LOCAL_SIZE)?,
            Q::EnqueuedLocalSize => self.ctx_u64x3(ctx_offsets::ENQUEUED_LOCAL_SIZE)?,
            Q::GlobalSize => self.ctx_u64x3(ctx_offsets::GLOBAL_SIZE)?,
            Q::GlobalOffset => self.ctx_u64x3(ctx_offsets::GLOBAL_OFFSET)?,
            Q::NumGroups => self.ctx_u64x3(ctx_offsets::NUM_GROUPS)?,
            Q::GlobalId => {
                let g = self.work_item_raw(Q::GroupId)?;
                let e = self.work_item_raw(Q::EnqueuedLocalSize)?;
                let o = self.work_item_raw(Q::GlobalOffset)?;
                let l = self.env.lid;
                let pb = &self.pb;
                let mut out = [zero; 3];
                for d in 0..3 {
                    let m = pb.build_int_mul(g[d], e[d], "")?;
                    let a = pb.build_int_add(m, l[d], "")?;
                    out[d] = pb.build_int_add(a, o[d], "")?;
                }
                out
            }
            Q::WorkDim => {
                let p = self.ctx_field_ptr(ctx_offsets::WORK_DIM)?;
                let l = as_int(pb.build_load(self.i32(), p, "")?)?;
                [l, zero, zero]
            }
            Q::GlobalLinearId => {
                let g = self.work_item_raw(Q::GlobalId)?;
                let o = self.work_item_raw(Q::GlobalOffset)?;
                let s = self.work_item_raw(Q::GlobalSize)?;
                let pb = &self.pb;
                let x = pb.build_int_sub(g[0], o[0], "")?;
                let y = pb.build_int_sub(g[1], o[1], "")?;
                let z = pb.build_int_sub(g[2], o[2], "")?;
                let zy = pb.build_int_add(pb.build_int_mul(z, s[1], "")?, y, "")?;
                let r = pb.build_int_add(pb.build_int_mul(zy, s[0], "")?, x, "")?;
                [r, zero, zero]
            }
            Q::SubgroupSize
            | Q::SubgroupMaxSize
            | Q::SubgroupLocalId
            | Q::NumSubgroups
            | Q::SubgroupId
            | Q::EnqueuedNumSubgroups => self.sub_group_raw(q)?,
            Q::LocalLinearId => {
                let s = self.work_item_raw(Q::LocalSize)?;
                let l = self.env.lid;
                let pb = &self.pb;
                let zy = pb.build_int_add(pb.build_int_mul(l[2], s[1], "")?, l[1], "")?;
                let r = pb.build_int_add(pb.build_int_mul(zy, s[0], "")?, l[0], "")?;
                [r, zero, zero]
            }
        };
        self.wi_cache.insert(q, v);
        Ok(v)
    }

    /// A work-item query as a value of `ty` (a vector takes the dimensions, a scalar the
    /// first component), computed in the prologue.
    pub(crate) fn work_item_value(&mut self, q: WorkItemQuery, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        let raw = self.work_item_raw(q)?;
        let BasicTypeEnum::IntType(et) = elem_type(ty) else { bail!("work-item query of a non-integer type {ty}") };
        let pb = &self.pb;
        let conv = |v: IntValue<'ctx>| -> R<IntValue<'ctx>> { Ok(pb.build_int_cast_sign_flag(v, et, false, "")?) };
        match ty {
            BasicTypeEnum::VectorType(vt) => {
                let mut acc = vt.get_undef();
                for lane in 0..vt.get_size() {
                    let c = if lane < 3 { conv(raw[lane as usize])? } else { et.const_zero() };
                    acc = pb.build_insert_element(acc, c, self.i32().const_int(lane as u64, false), "")?;
                }
                Ok(acc.into())
            }
            _ => Ok(conv(raw[0])?.into()),
        }
    }
}

impl<'ctx> FnLower<'_, 'ctx, '_> {
    /// The sub-group queries (the packet's, for its lane 0: `SubgroupLocalId` is 0 here, the
    /// vector form adds the lane). A sub-group is the packet: in scalar code one work-item;
    /// in the row layout the W work-items of one row from a multiple of W (rows padded to
    /// whole packets); with linear lanes the W linear local ids from a multiple of W.
    fn sub_group_raw(&mut self, q: WorkItemQuery) -> R<[IntValue<'ctx>; 3]> {
        use WorkItemQuery as Q;
        let zero = self.i64().const_zero();
        let one = self.i64().const_int(1, false);
        let ls = self.work_item_raw(Q::LocalSize)?;
        let enq = self.work_item_raw(Q::EnqueuedLocalSize)?;
        let layout = self.vec.as_ref().map(|v| (u64::from(v.width), v.wa.linear_lanes));
        let lid = self.env.lid;
        let pb = &self.pb;
        let product = |s: &[IntValue<'ctx>; 3]| -> R<IntValue<'ctx>> {
            Ok(pb.build_int_mul(pb.build_int_mul(s[0], s[1], "")?, s[2], "")?)
        };
        let min = |a: IntValue<'ctx>, b: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            let lt = pb.build_int_compare(inkwell::IntPredicate::ULT, a, b, "")?;
            Ok(pb.build_select(lt, a, b, "")?.into_int_value())
        };
        let ceil_div = |a: IntValue<'ctx>, w: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            let up = pb.build_int_sub(pb.build_int_add(a, w, "")?, one, "")?;
            Ok(pb.build_int_unsigned_div(up, w, "")?)
        };
        let r = match layout {
            // One work-item per sub-group.
            None | Some((1, _)) => match q {
                Q::SubgroupSize | Q::SubgroupMaxSize => one,
                Q::SubgroupLocalId => zero,
                Q::NumSubgroups => product(&ls)?,
                Q::EnqueuedNumSubgroups => product(&enq)?,
                _ => {
                    let zy = pb.build_int_add(pb.build_int_mul(lid[2], ls[1], "")?, lid[1], "")?;
                    pb.build_int_add(pb.build_int_mul(zy, ls[0], "")?, lid[0], "")?
                }
            },
            Some((w, linear)) => {
                let w = self.i64().const_int(w, false);
                // The packet's first work-item: its linear id (linear lanes) or its x.
                let first = lid[0];
                let (span, enq_span) = if linear { (product(&ls)?, product(&enq)?) } else { (ls[0], enq[0]) };
                match q {
                    Q::SubgroupSize => min(w, pb.build_int_sub(span, first, "")?)?,
                    Q::SubgroupMaxSize => min(w, enq_span)?,
                    Q::SubgroupLocalId => zero,
                    Q::NumSubgroups if linear => ceil_div(span, w)?,
                    Q::EnqueuedNumSubgroups if linear => ceil_div(enq_span, w)?,
                    Q::NumSubgroups => {
                        pb.build_int_mul(ceil_div(ls[0], w)?, pb.build_int_mul(ls[1], ls[2], "")?, "")?
                    }
                    Q::EnqueuedNumSubgroups => {
                        pb.build_int_mul(ceil_div(enq[0], w)?, pb.build_int_mul(enq[1], enq[2], "")?, "")?
                    }
                    _ if linear => pb.build_int_unsigned_div(first, w, "")?,
                    _ => {
                        // (z * ly + y) * packets per row + x / W.
                        let row = pb.build_int_add(pb.build_int_mul(lid[2], ls[1], "")?, lid[1], "")?;
                        let per_row = ceil_div(ls[0], w)?;
                        pb.build_int_add(
                            pb.build_int_mul(row, per_row, "")?,
                            pb.build_int_unsigned_div(first, w, "")?,
                            "",
                        )?
                    }
                }
            }
        };
        Ok([r, zero, zero])
    }
}
