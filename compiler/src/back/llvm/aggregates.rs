//! Pointer arithmetic (access chains), shuffles, and the extraction, insertion and
//! construction of vectors, arrays and structs.

use super::*;

impl<'a, 'ctx, 'ir> FnLower<'a, 'ctx, 'ir> {
    pub(super) fn lower_access_chain(
        &mut self,
        base: Value,
        element: Option<Value>,
        indices: &[Value],
        in_bounds: bool,
    ) -> R<PointerValue<'ctx>> {
        let types = &self.e.ir.types;
        let base_ty = self.f.value_type(base);
        let TypeData::Pointer { pointee, .. } = types.get(base_ty) else { bail!("access chain on a non-pointer") };
        let mut cur = *pointee;
        let p = as_ptr(self.get(base)?)?;
        let src_ty: BasicTypeEnum<'ctx> = match types.get(cur) {
            TypeData::Void | TypeData::Function { .. } | TypeData::Opaque { .. } => self.cx().i8_type().into(),
            _ => self.ty(cur)?,
        };
        let mut idx: Vec<IntValue<'ctx>> = Vec::with_capacity(indices.len() + 1);
        match element {
            Some(e) => idx.push(as_int(self.get(e)?)?),
            None => idx.push(self.i32().const_zero()),
        }
        for &ix in indices {
            match types.get(cur).clone() {
                TypeData::Struct { fields, .. } => {
                    let Some(n) = self.const_index(ix) else { bail!("struct member index is not a constant") };
                    if n >= fields.len() as u64 {
                        bail!("struct member index {n} out of range");
                    }
                    idx.push(self.i32().const_int(n, false));
                    cur = fields[n as usize];
                }
                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                    idx.push(as_int(self.get(ix)?)?);
                    cur = elem;
                }
                other => bail!("access chain index into {other:?}"),
            }
        }
        if idx.len() == 1 && element.is_none() {
            return Ok(p);
        }
        gep(&self.b, src_ty, p, &idx, in_bounds)
    }

    pub(crate) fn const_index(&self, v: Value) -> Option<u64> {
        match self.f.values.get(v)?.def {
            ValueDef::Const(c) => match self.e.ir.constants.get(c)? {
                ConstData::Int { bits, .. } => Some(*bits),
                ConstData::Null { .. } => Some(0),
                _ => None,
            },
            _ => None,
        }
    }

    pub(super) fn lower_shuffle(
        &self,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
        mask: &[Option<u32>],
    ) -> R<Val<'ctx>> {
        let (na, nb) = (a.get_type().get_size(), b.get_type().get_size());
        if a.get_type().get_element_type() != b.get_type().get_element_type() {
            bail!("shuffle of vectors with different element types");
        }
        let n = na.max(nb);
        // Both operands must have the same length for LLVM: widen the shorter one.
        let widen = |v: VectorValue<'ctx>, len: u32| -> R<VectorValue<'ctx>> {
            if len == n {
                return Ok(v);
            }
            let m: Vec<IntValue<'ctx>> = (0..n)
                .map(|i| if i < len { self.i32().const_int(i as u64, false) } else { self.i32().get_undef() })
                .collect();
            let mv = inkwell::types::VectorType::const_vector(&m);
            Ok(self.b.build_shuffle_vector(v, v.get_type().get_undef(), mv, "")?)
        };
        let wa = widen(a, na)?;
        let wb = widen(b, nb)?;
        let mut m = Vec::with_capacity(mask.len());
        for c in mask {
            m.push(match c {
                Some(i) if *i < na => self.i32().const_int(*i as u64, false),
                Some(i) if *i < na + nb => self.i32().const_int((*i - na + n) as u64, false),
                Some(i) => bail!("shuffle component {i} out of range"),
                None => self.i32().get_undef(),
            });
        }
        if m.is_empty() {
            bail!("empty shuffle");
        }
        let mv = inkwell::types::VectorType::const_vector(&m);
        Ok(self.b.build_shuffle_vector(wa, wb, mv, "")?.into())
    }

    pub(super) fn extract_path(&self, agg: Val<'ctx>, ty: ir::Type, indices: &[u32]) -> R<Val<'ctx>> {
        let mut cur = agg;
        let mut t = ty;
        for &ix in indices {
            let (next_t, v) = match self.e.ir.types.get(t).clone() {
                TypeData::Vector { elem, len } => {
                    if ix >= len {
                        bail!("component {ix} of a {len}-vector");
                    }
                    (elem, self.extract(cur, ix)?)
                }
                TypeData::Struct { fields, .. } => {
                    let Some(ft) = fields.get(ix as usize) else { bail!("member {ix} out of range") };
                    let BasicValueEnum::StructValue(sv) = cur else { bail!("extract from a non-struct") };
                    (*ft, self.b.build_extract_value(sv, ix, "")?)
                }
                TypeData::Array { elem, len } => {
                    if ix as u64 >= len {
                        bail!("element {ix} out of range");
                    }
                    let BasicValueEnum::ArrayValue(av) = cur else { bail!("extract from a non-array") };
                    (elem, self.b.build_extract_value(av, ix, "")?)
                }
                other => bail!("extract from {other:?}"),
            };
            cur = v;
            t = next_t;
        }
        Ok(cur)
    }

    pub(super) fn insert_path(&self, agg: Val<'ctx>, ty: ir::Type, indices: &[u32], value: Val<'ctx>) -> R<Val<'ctx>> {
        let Some((&ix, rest)) = indices.split_first() else {
            return Ok(value);
        };
        let sub_ty = match self.e.ir.types.get(ty) {
            TypeData::Vector { elem, .. } | TypeData::Array { elem, .. } => *elem,
            TypeData::Struct { fields, .. } => *fields.get(ix as usize).ok_or("member index out of range")?,
            other => bail!("insert into {other:?}"),
        };
        let sub = if rest.is_empty() {
            value
        } else {
            let old = self.extract_path(agg, ty, &[ix])?;
            self.insert_path(old, sub_ty, rest, value)?
        };
        match agg {
            BasicValueEnum::VectorValue(v) => {
                if ix >= v.get_type().get_size() || sub.get_type() != v.get_type().get_element_type() {
                    bail!("bad vector insert");
                }
                Ok(self.b.build_insert_element(v, sub, self.i32().const_int(ix as u64, false), "")?.into())
            }
            BasicValueEnum::StructValue(s) => {
                if s.get_type().get_field_type_at_index(ix) != Some(sub.get_type()) {
                    bail!("bad struct insert");
                }
                Ok(self.b.build_insert_value(s, sub, ix, "")?.as_basic_value_enum())
            }
            BasicValueEnum::ArrayValue(a) => {
                if ix >= a.get_type().len() || a.get_type().get_element_type() != sub.get_type() {
                    bail!("bad array insert");
                }
                Ok(self.b.build_insert_value(a, sub, ix, "")?.as_basic_value_enum())
            }
            _ => bail!("insert into a scalar"),
        }
    }

    pub(super) fn lower_construct(&self, rt: BasicTypeEnum<'ctx>, parts: &[Val<'ctx>]) -> R<Val<'ctx>> {
        match rt {
            BasicTypeEnum::VectorType(_) => {
                let mut lanes_v = Vec::new();
                for p in parts {
                    match p {
                        BasicValueEnum::VectorValue(v) => {
                            for l in 0..v.get_type().get_size() {
                                lanes_v.push(self.extract(*p, l)?);
                            }
                        }
                        other => lanes_v.push(*other),
                    }
                }
                self.gather(rt, &lanes_v)
            }
            BasicTypeEnum::StructType(st) => {
                if parts.len() != st.count_fields() as usize {
                    bail!("struct of {} members built from {} parts", st.count_fields(), parts.len());
                }
                let mut acc: Val<'ctx> = st.get_undef().into();
                for (i, p) in parts.iter().enumerate() {
                    if st.get_field_type_at_index(i as u32) != Some(p.get_type()) {
                        bail!("struct member {i} of the wrong type");
                    }
                    acc = self.b.build_insert_value(acc.into_struct_value(), *p, i as u32, "")?.as_basic_value_enum();
                }
                Ok(acc)
            }
            BasicTypeEnum::ArrayType(at) => {
                if parts.len() != at.len() as usize {
                    bail!("array of {} elements built from {} parts", at.len(), parts.len());
                }
                let mut acc: Val<'ctx> = at.get_undef().into();
                for (i, p) in parts.iter().enumerate() {
                    if at.get_element_type() != p.get_type() {
                        bail!("array element {i} of the wrong type");
                    }
                    acc = self.b.build_insert_value(acc.into_array_value(), *p, i as u32, "")?.as_basic_value_enum();
                }
                Ok(acc)
            }
            _ => bail!("construct of a scalar type {rt}"),
        }
    }
}
