//! Generic helpers of the lowering: typed binary operations, compares, selects, casts,
//! constants like a type, intrinsics, lane extraction and gathering, libm calls.

use super::*;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    pub fn binop(&self, op: InstructionOpcode, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        if a.get_type() != b.get_type() {
            bail!("operands of different types {} and {}", a.get_type(), b.get_type());
        }
        Ok(self.b.build_binop(op, a, b, "")?)
    }

    pub fn icmp(&self, p: IntPredicate, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        Ok(match (a, b) {
            (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) if x.get_type() == y.get_type() => {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y))
                if x.get_type() == y.get_type() && is_int_like(x.get_type().into()) =>
            {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::PointerValue(x), BasicValueEnum::PointerValue(y)) => {
                self.b.build_int_compare(p, x, y, "")?.into()
            }
            _ => bail!("integer comparison of {} and {}", a.get_type(), b.get_type()),
        })
    }

    pub fn fcmp(&self, p: FloatPredicate, a: Val<'ctx>, b: Val<'ctx>) -> R<Val<'ctx>> {
        Ok(match (a, b) {
            (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y)) if x.get_type() == y.get_type() => {
                self.b.build_float_compare(p, x, y, "")?.into()
            }
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y))
                if x.get_type() == y.get_type() && is_float_like(x.get_type().into()) =>
            {
                self.b.build_float_compare(p, x, y, "")?.into()
            }
            _ => bail!("float comparison of {} and {}", a.get_type(), b.get_type()),
        })
    }

    /// `fast` when `ok`, else what `slow` computes, on a branch of its own: code only the
    /// slow value needs is built there, and LLVM keeps it off the fast path.
    pub fn unless_slow(
        &mut self,
        ok: IntValue<'ctx>,
        fast: Val<'ctx>,
        slow: impl FnOnce(&mut Self) -> R<Val<'ctx>>,
    ) -> R<Val<'ctx>> {
        let (from, join) = self.branch_to_slow(ok, false, ("slow", "join"))?;
        let v = slow(self)?;
        self.join_slow(from, join, fast, v)
    }

    /// [`Self::unless_slow`] for code that holds the lowering shared: `fast` unless `slow_if`,
    /// else what `slow` computes; `names`: the slow block's and the join's.
    pub fn unless_slow_shared(
        &self,
        slow_if: IntValue<'ctx>,
        fast: Val<'ctx>,
        names: (&str, &str),
        slow: impl FnOnce() -> R<Val<'ctx>>,
    ) -> R<Val<'ctx>> {
        let (from, join) = self.branch_to_slow(slow_if, true, names)?;
        let v = slow()?;
        self.join_slow(from, join, fast, v)
    }

    /// Ends the current block with a branch on `c` to a new slow block (where the builder
    /// is left) when `c` is `slow_when`, else to the join; returns (the block branched
    /// from, the join).
    fn branch_to_slow(
        &self,
        c: IntValue<'ctx>,
        slow_when: bool,
        (slow_name, join_name): (&str, &str),
    ) -> R<(BasicBlock<'ctx>, BasicBlock<'ctx>)> {
        let from = self.b.get_insert_block().ok_or("builder not positioned")?;
        let slow_bb = self.cx().append_basic_block(self.llf, slow_name);
        let join = self.cx().append_basic_block(self.llf, join_name);
        let br = if slow_when {
            self.b.build_conditional_branch(c, slow_bb, join)?
        } else {
            self.b.build_conditional_branch(c, join, slow_bb)?
        };
        // The slow block is rare: weights that say so keep LLVM from speculating it onto the
        // fast path as selects (a variable lane extract per packet, through the stack).
        let i32t = self.cx().i32_type();
        let (rare, usual) = (i32t.const_int(1, false).into(), i32t.const_int(1 << 10, false).into());
        let weights = if slow_when { [rare, usual] } else { [usual, rare] };
        let prof =
            self.cx().metadata_node(&[self.cx().metadata_string("branch_weights").into(), weights[0], weights[1]]);
        br.set_metadata(prof, self.cx().get_kind_id("prof")).map_err(|e| Error(format!("branch weights: {e}")))?;
        self.b.position_at_end(slow_bb);
        Ok((from, join))
    }

    /// Closes the slow block of [`Self::branch_to_slow`] at the join: `fast` from `from`,
    /// `slow` from where the slow code ended.
    fn join_slow(
        &self,
        from: BasicBlock<'ctx>,
        join: BasicBlock<'ctx>,
        fast: Val<'ctx>,
        slow: Val<'ctx>,
    ) -> R<Val<'ctx>> {
        let slow_end = self.b.get_insert_block().ok_or("builder not positioned")?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = self.b.build_phi(fast.get_type(), "")?;
        phi.add_incoming(&[(&fast, from), (&slow, slow_end)]);
        Ok(phi.as_basic_value())
    }

    pub fn select(&self, c: Val<'ctx>, t: Val<'ctx>, f: Val<'ctx>) -> R<Val<'ctx>> {
        if t.get_type() != f.get_type() {
            bail!("select between {} and {}", t.get_type(), f.get_type());
        }
        Ok(match c {
            BasicValueEnum::IntValue(x) if x.get_type().get_bit_width() == 1 => self.b.build_select(x, t, f, "")?,
            BasicValueEnum::VectorValue(x)
                if lanes(x.get_type().into()) == lanes(t.get_type()) && t.is_vector_value() =>
            {
                self.b.build_select(x, t, f, "")?
            }
            _ => bail!("select condition of type {}", c.get_type()),
        })
    }

    pub fn cast(&self, op: InstructionOpcode, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        if lanes(v.get_type()) != lanes(ty) || v.get_type().is_vector_type() != ty.is_vector_type() {
            bail!("conversion from {} to {} changes the number of components", v.get_type(), ty);
        }
        Ok(self.b.build_cast(op, v, ty, "")?)
    }

    /// Integer width change (zero- or sign-extending), or nothing.
    pub fn int_resize(&self, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>, signed: bool) -> R<Val<'ctx>> {
        let (from, to) = (int_width(v.get_type()), int_width(ty));
        if !is_int_like(v.get_type()) || !is_int_like(ty) {
            bail!("integer conversion from {} to {}", v.get_type(), ty);
        }
        if from == to {
            return Ok(v);
        }
        let op = if from > to {
            InstructionOpcode::Trunc
        } else if signed {
            InstructionOpcode::SExt
        } else {
            InstructionOpcode::ZExt
        };
        self.cast(op, v, ty)
    }

    /// A constant of the same type as `like` with every lane `bits`.
    pub fn cint(&self, like: BasicTypeEnum<'ctx>, bits: u64) -> R<Val<'ctx>> {
        const_int_like(like, bits)
    }
    pub fn cfloat(&self, like: BasicTypeEnum<'ctx>, v: f64) -> R<Val<'ctx>> {
        const_float_like(like, v)
    }

    /// Calls an LLVM intrinsic, overloaded on `tys`.
    pub fn intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>], args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        call_intrinsic(&self.b, &self.e.m, name, tys, args)
    }

    /// Calls an intrinsic returning nothing.
    pub fn intrinsic_void(&self, name: &str, tys: &[BasicTypeEnum<'ctx>], args: &[Val<'ctx>]) -> R<()> {
        let Some(i) = Intrinsic::find(name) else { bail!("LLVM has no intrinsic {name}") };
        let Some(decl) = i.get_declaration(&self.e.m, tys) else { bail!("cannot declare {name}") };
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        self.b.build_call(decl, &args, "")?;
        Ok(())
    }

    /// Calls a unary/binary intrinsic overloaded on its first argument's type.
    pub fn intr(&self, name: &str, args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        let t = args.first().ok_or("intrinsic without arguments")?.get_type();
        self.intrinsic(name, &[t], args)
    }

    pub fn extract(&self, v: Val<'ctx>, lane: u32) -> R<Val<'ctx>> {
        match v {
            BasicValueEnum::VectorValue(vv) => {
                Ok(self.b.build_extract_element(vv, self.i32().const_int(lane as u64, false), "")?)
            }
            _ if lane == 0 => Ok(v),
            _ => bail!("lane {lane} of a scalar"),
        }
    }

    /// A vector of `ty` from its lanes (or the scalar itself).
    pub fn gather(&self, ty: BasicTypeEnum<'ctx>, parts: &[Val<'ctx>]) -> R<Val<'ctx>> {
        match ty {
            BasicTypeEnum::VectorType(vt) => {
                if parts.len() != vt.get_size() as usize {
                    bail!("{} components for {}", parts.len(), ty);
                }
                let mut acc = vt.get_undef();
                for (i, p) in parts.iter().enumerate() {
                    if p.get_type() != vt.get_element_type() {
                        bail!("component of type {} for {}", p.get_type(), ty);
                    }
                    acc = self.b.build_insert_element(acc, *p, self.i32().const_int(i as u64, false), "")?;
                }
                Ok(acc.into())
            }
            _ => parts.first().copied().ok_or_else(|| Error("no components".into())),
        }
    }

    /// `v` (a scalar) broadcast to `ty` if `ty` is a vector; vectors pass through.
    pub fn splat_to(&self, v: Val<'ctx>, ty: BasicTypeEnum<'ctx>) -> R<Val<'ctx>> {
        match ty {
            BasicTypeEnum::VectorType(vt) if !v.is_vector_value() => {
                let n = vt.get_size() as usize;
                self.gather(ty, &vec![v; n])
            }
            _ => Ok(v),
        }
    }

    /// Applies `f` to each lane (scalars: once) and gathers a result of `ret_ty`.
    pub fn per_lane(
        &self,
        ret_ty: BasicTypeEnum<'ctx>,
        args: &[Val<'ctx>],
        mut f: impl FnMut(&Self, &[Val<'ctx>]) -> R<Val<'ctx>>,
    ) -> R<Val<'ctx>> {
        let n = lanes(ret_ty);
        if !ret_ty.is_vector_type() {
            return f(self, args);
        }
        let mut out = Vec::with_capacity(n as usize);
        for lane in 0..n {
            let la: Vec<Val<'ctx>> = args
                .iter()
                .map(|a| if a.is_vector_value() { self.extract(*a, lane) } else { Ok(*a) })
                .collect::<R<_>>()?;
            out.push(f(self, &la)?);
        }
        self.gather(ret_ty, &out)
    }

    /// Calls a C function per lane: `name32` for f32 lanes, `name64` for f64 lanes (f16
    /// lanes go through f32).
    pub fn libm(&self, name32: &str, name64: &str, ret_ty: BasicTypeEnum<'ctx>, args: &[Val<'ctx>]) -> R<Val<'ctx>> {
        self.per_lane(ret_ty, args, |s, la| {
            let BasicTypeEnum::FloatType(ft) = elem_type(ret_ty) else { bail!("{name32} of a non-float type") };
            let wide = ft.get_bit_width() == 64;
            let ct: FloatType<'ctx> = if wide { s.cx().f64_type() } else { s.cx().f32_type() };
            let mut cargs = Vec::new();
            let mut ptys = Vec::new();
            for a in la {
                let a = match a {
                    BasicValueEnum::FloatValue(fv) if fv.get_type() != ct => s.b.build_float_cast(*fv, ct, "")?.into(),
                    other => *other,
                };
                ptys.push(a.get_type());
                cargs.push(a.into());
            }
            let f = s.e.extern_fn(if wide { name64 } else { name32 }, ct.into(), &ptys, true);
            let r = s.b.build_call(f, &cargs, "")?.try_as_basic_value().basic().ok_or("libm call without result")?;
            let r = r.into_float_value();
            Ok(if ct != ft { s.b.build_float_cast(r, ft, "")?.into() } else { r.into() })
        })
    }

    /// An alloca in the prologue (scratch for out-parameters).
    pub fn scratch(&self, ty: BasicTypeEnum<'ctx>) -> R<PointerValue<'ctx>> {
        Ok(self.pb.build_alloca(ty, "")?)
    }
}
