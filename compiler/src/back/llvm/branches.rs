//! Control flow: block parameters as phis (a varying IR vector of 2 to 4 components in
//! vector mode as one phi per component) and branches, jumps, switches and returns.

use super::*;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    /// How a block parameter of LLVM type `ty` is carried between blocks: `Some((n, part))`
    /// for a varying IR vector of 2 to 4 components in vector mode (`<n*W x T>`), which is
    /// carried as n phis of `<W x T>`, one per component. LLVM's instruction selection copies a value of a vector
    /// type whose length is not a power of two between blocks one element at a time
    /// (`float3` at 16 lanes, `<48 x float>`: 48 scalar registers, rebuilt with insertps on
    /// every loop iteration; nbody's accumulator spent most of its time there), and
    /// InstCombine narrows a `float4` phi whose last component is never used (clang's form
    /// of a `float3`) to exactly that. Per-component phis are what the registers hold anyway,
    /// and a dead component's phi is simply deleted.
    pub(super) fn phi_parts(&self, ty: BasicTypeEnum<'ctx>) -> Option<(u32, BasicTypeEnum<'ctx>)> {
        let w = self.vec.as_ref()?.width;
        let BasicTypeEnum::VectorType(vt) = ty else { return None };
        let n = vt.get_size();
        // Up to 4 components (where clang's float3-as-float4 lives); float8 / float16 stay
        // one phi, which LLVM splits into whole registers itself (their code is unchanged).
        if w < 2 || n <= w || n % w != 0 || (n / w > 4 && (n / w).is_power_of_two()) {
            return None;
        }
        let part: BasicTypeEnum<'ctx> = match vt.get_element_type() {
            BasicTypeEnum::FloatType(x) => x.vec_type(w).into(),
            BasicTypeEnum::IntType(x) => x.vec_type(w).into(),
            BasicTypeEnum::PointerType(x) => x.vec_type(w).into(),
            _ => return None,
        };
        Some((n / w, part))
    }

    /// The value of a block parameter carried by `parts` (one phi, or `<W x T>` parts
    /// concatenated).
    pub(super) fn join_phi_parts(&mut self, parts: &[PhiValue<'ctx>]) -> R<Val<'ctx>> {
        match parts {
            [one] => Ok(one.as_basic_value()),
            _ => {
                let vs: Vec<VectorValue<'ctx>> = parts.iter().map(|p| p.as_basic_value().into_vector_value()).collect();
                Ok(self.concat(&vs)?.into())
            }
        }
    }

    /// Adds `v` arriving from `from` to the phi(s) of one block parameter.
    pub(super) fn add_phi_incoming(&mut self, parts: &[PhiValue<'ctx>], v: Val<'ctx>, from: BasicBlock<'ctx>) -> R<()> {
        if let [phi] = parts {
            if phi.as_basic_value().get_type() != v.get_type() {
                bail!(
                    "block argument of type {} for a parameter of type {}",
                    v.get_type(),
                    phi.as_basic_value().get_type()
                );
            }
            phi.add_incoming(&[(&v as &dyn BasicValue<'ctx>, from)]);
            return Ok(());
        }
        let BasicValueEnum::VectorValue(vv) = v else {
            bail!("block argument {} for a split vector parameter", v.get_type())
        };
        let w = vv.get_type().get_size() / parts.len() as u32;
        // Split where `v` is computed: before the terminator of `from`, which is not built yet
        // when `from` is the current block, and exists already for an edge trampoline.
        let here = self.b.get_insert_block();
        match from.get_terminator() {
            Some(t) => self.b.position_before(&t),
            None => self.b.position_at_end(from),
        }
        for (k, phi) in parts.iter().enumerate() {
            let idx: Vec<IntValue<'ctx>> =
                (0..w).map(|j| self.i32().const_int((k as u32 * w + j) as u64, false)).collect();
            let part = self.b.build_shuffle_vector(
                vv,
                vv.get_type().get_undef(),
                inkwell::types::VectorType::const_vector(&idx),
                "",
            )?;
            if phi.as_basic_value().get_type() != part.get_type().as_basic_type_enum() {
                bail!("block argument of type {} for a split parameter", v.get_type());
            }
            phi.add_incoming(&[(&part as &dyn BasicValue<'ctx>, from)]);
        }
        if let Some(h) = here {
            self.b.position_at_end(h);
        }
        Ok(())
    }

    pub(super) fn lower_branch(&mut self, data: &InstData) -> R<()> {
        let succs = data.successors();
        // Phi operands: collect argument values before the terminator.
        let mut edges: Vec<(Block, Vec<Val<'ctx>>)> = Vec::with_capacity(succs.len());
        for bc in &succs {
            let params = &self.f.blocks[bc.block].params;
            if bc.args.len() != params.len() {
                bail!("branch to {} with {} arguments", bc.block, bc.args.len());
            }
            let vals: Vec<Val<'ctx>> =
                bc.args.iter().zip(params).map(|(a, p)| self.get_edge_arg(*a, *p)).collect::<R<_>>()?;
            if vals.len() != self.f.blocks[bc.block].params.len() {
                bail!("branch to {} with {} arguments", bc.block, vals.len());
            }
            edges.push((bc.block, vals));
        }
        let cur = self.b.get_insert_block().ok_or("builder not positioned")?;
        // The LLVM block each edge leaves from: a trampoline when one terminator reaches the
        // same block with parameters more than once (phis take one value per predecessor).
        let mut targets: Vec<BasicBlock<'ctx>> = Vec::with_capacity(edges.len());
        let mut pending: Vec<(BasicBlock<'ctx>, Block, Vec<Val<'ctx>>)> = Vec::new();
        for (k, (blk, vals)) in edges.iter().enumerate() {
            let dest = self.blocks[*blk].ok_or("branch to an unreachable block")?;
            let dup = !vals.is_empty() && edges.iter().enumerate().any(|(j, (b2, _))| j != k && b2 == blk);
            if dup {
                let t = self.cx().insert_basic_block_after(cur, "edge");
                pending.push((t, *blk, vals.clone()));
                targets.push(t);
            } else {
                for (parts, v) in self.phis.get(blk).cloned().unwrap_or_default().iter().zip(vals) {
                    self.add_phi_incoming(parts, *v, cur)?;
                }
                targets.push(dest);
            }
        }
        match data {
            InstData::Jump { .. } => {
                self.b.build_unconditional_branch(targets[0])?;
            }
            InstData::Branch { cond, .. } => {
                let c = as_int(self.get(*cond)?)?;
                if c.get_type().get_bit_width() != 1 {
                    bail!("branch condition is not a bool");
                }
                self.b.build_conditional_branch(c, targets[0], targets[1])?;
            }
            InstData::Switch { selector, cases, .. } => {
                let s = as_int(self.get(*selector)?)?;
                let st = s.get_type();
                let cs: Vec<(IntValue<'ctx>, BasicBlock<'ctx>)> =
                    cases.iter().enumerate().map(|(k, (v, _))| (st.const_int(*v, false), targets[k + 1])).collect();
                self.b.build_switch(s, targets[0], &cs)?;
            }
            _ => bail!("not a branch"),
        }
        for (t, blk, vals) in pending {
            self.b.position_at_end(t);
            let dest = self.blocks[blk].ok_or("branch to an unreachable block")?;
            for (parts, v) in self.phis.get(&blk).cloned().unwrap_or_default().iter().zip(&vals) {
                self.add_phi_incoming(parts, *v, t)?;
            }
            self.b.build_unconditional_branch(dest)?;
        }
        Ok(())
    }
}
