//! Intel's sub-group instructions (`SPV_INTEL_subgroups`: OpenCL C's `cl_intel_subgroups`,
//! `_short` and `_char` functions) as the IR's sub-group shuffles and plain loads and
//! stores.
//!
//! - `OpSubgroupShuffleINTEL` / `ShuffleXorINTEL`: a sub-group shuffle / shuffle xor;
//! - `OpSubgroupShuffleDownINTEL (current, next, delta)`: the work-item `id + delta` along
//!   the two sources laid end to end: `current` shuffled down by `delta` where that lands
//!   inside the sub-group, else `next` shuffled up by `size - delta`;
//!   `OpSubgroupShuffleUpINTEL (previous, current, delta)` the mirror image (`size` is the
//!   maximum sub-group size, as the extension says);
//! - `OpSubgroupBlockReadINTEL p` / `BlockWriteINTEL p, data`: component `j` of work-item
//!   `i` is `p[j * size + i]`: one load or store per component at that index, each marked
//!   as a part of the block ([`ir::BlockPart`]) for the Gen model, which prices the parts
//!   together as the hardware's one block message. In vector code the parts are the
//!   packet's consecutive elements (masked: a lane that is off touches nothing);
//! - `OpSubgroupImageBlockReadINTEL image, coord` / `WriteINTEL image, coord, data`: the
//!   image's bytes without format conversion, `coord.x` a byte offset in row `coord.y`:
//!   component `j` of work-item `i` is the element at byte `x + i * bytes` of row `y + j`
//!   ([`ImageOp::BlockRead`] / [`ImageOp::BlockWrite`]).

use super::super::spirv::{malformed, unsupported, TResult};
use super::BodyTranslator;
use crate::ir::{
    self, BinaryOp, CmpOp, ConvertOp, GroupOp, ImageOp, InstData, Scope, Type, TypeData, Value, WorkItemQuery,
};
use crate::kernel_info::AddressSpace;
use rspirv::dr;
use rspirv::spirv::Op;

impl BodyTranslator<'_, '_, '_> {
    /// One of the `SPV_INTEL_subgroups` instructions.
    pub(super) fn translate_intel_sub_group(&mut self, inst: &dr::Instruction) -> TResult<()> {
        match inst.class.opcode {
            Op::SubgroupShuffleINTEL | Op::SubgroupShuffleXorINTEL => {
                let ty = self.result_ty(inst)?;
                let (x, by) = (self.operand_value(inst, 0)?, self.operand_value(inst, 1)?);
                let op =
                    if inst.class.opcode == Op::SubgroupShuffleINTEL { GroupOp::Shuffle } else { GroupOp::ShuffleXor };
                let v = self.shuffle(op, x, by, ty)?;
                self.set_result(inst, v)
            }
            Op::SubgroupShuffleDownINTEL | Op::SubgroupShuffleUpINTEL => {
                let ty = self.result_ty(inst)?;
                let (a, b) = (self.operand_value(inst, 0)?, self.operand_value(inst, 1)?);
                let delta = self.operand_value(inst, 2)?;
                let u32t = self.builder.module.types.int(32);
                let delta = self.convert_int(delta, u32t)?;
                let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
                let size = self.sub_group_query(WorkItemQuery::SubgroupMaxSize)?;
                let rest = self.emit_value(InstData::Binary { op: BinaryOp::ISub, lhs: size, rhs: delta }, u32t)?;
                let bool_t = self.builder.module.types.bool();
                let (near, far, inside) = if inst.class.opcode == Op::SubgroupShuffleDownINTEL {
                    // (current a, next b): a[lid + delta] while lid + delta < size.
                    let near = self.shuffle(GroupOp::ShuffleDown, a, delta, ty)?;
                    let far = self.shuffle(GroupOp::ShuffleUp, b, rest, ty)?;
                    let inside = self.emit_value(InstData::Compare { op: CmpOp::ULt, lhs: lid, rhs: rest }, bool_t)?;
                    (near, far, inside)
                } else {
                    // (previous a, current b): b[lid - delta] while lid >= delta.
                    let near = self.shuffle(GroupOp::ShuffleUp, b, delta, ty)?;
                    let far = self.shuffle(GroupOp::ShuffleDown, a, rest, ty)?;
                    let inside = self.emit_value(InstData::Compare { op: CmpOp::UGe, lhs: lid, rhs: delta }, bool_t)?;
                    (near, far, inside)
                };
                let v = self.emit_value(InstData::Select { cond: inside, if_true: near, if_false: far }, ty)?;
                self.set_result(inst, v)
            }
            Op::SubgroupBlockReadINTEL => {
                let ty = self.result_ty(inst)?;
                let p = self.operand_value(inst, 0)?;
                let (elem, n) = self.components(ty)?;
                let base = self.block_base(p, elem)?;
                let align = self.types().size_of(elem) as u32;
                let mut parts = Vec::with_capacity(n as usize);
                for j in 0..n {
                    let at = self.block_element(base, j)?;
                    let block = Some(ir::BlockPart { part: j as u8, parts: n as u8 });
                    parts.push(self.emit_value(InstData::Load { ptr: at, align, volatile: false, block }, elem)?);
                }
                let v = self.compose(parts, ty)?;
                self.set_result(inst, v)
            }
            Op::SubgroupBlockWriteINTEL => {
                let p = self.operand_value(inst, 0)?;
                let data = self.operand_value(inst, 1)?;
                let (elem, n) = self.components(self.value_ty(data))?;
                let base = self.block_base(p, elem)?;
                let align = self.types().size_of(elem) as u32;
                for j in 0..n {
                    let at = self.block_element(base, j)?;
                    let value = self.component(data, j, n, elem)?;
                    let block = Some(ir::BlockPart { part: j as u8, parts: n as u8 });
                    self.emit(InstData::Store { ptr: at, value, align, volatile: false, block }, None);
                }
                Ok(())
            }
            Op::SubgroupImageBlockReadINTEL => {
                let ty = self.result_ty(inst)?;
                let image = self.operand_value(inst, 0)?;
                let coord = self.operand_value(inst, 1)?;
                let (elem, n) = self.components(ty)?;
                let bytes = self.types().size_of(elem) as u8;
                let mut parts = Vec::with_capacity(n as usize);
                for j in 0..n {
                    let at = self.image_block_coord(coord, bytes, j)?;
                    let op = ImageOp::BlockRead { bytes };
                    let data = InstData::Image { op, image, sampler: None, coord: Some(at), texel: None };
                    parts.push(self.emit_value(data, elem)?);
                }
                let v = self.compose(parts, ty)?;
                self.set_result(inst, v)
            }
            Op::SubgroupImageBlockWriteINTEL => {
                let image = self.operand_value(inst, 0)?;
                let coord = self.operand_value(inst, 1)?;
                let data = self.operand_value(inst, 2)?;
                let (elem, n) = self.components(self.value_ty(data))?;
                let bytes = self.types().size_of(elem) as u8;
                for j in 0..n {
                    let at = self.image_block_coord(coord, bytes, j)?;
                    let texel = self.component(data, j, n, elem)?;
                    let op = ImageOp::BlockWrite { bytes };
                    self.emit(InstData::Image { op, image, sampler: None, coord: Some(at), texel: Some(texel) }, None);
                }
                Ok(())
            }
            _ => Err(unsupported(format!("Op{}", inst.class.opname))),
        }
    }

    /// A sub-group shuffle of `x` (a scalar or vector of type `ty`) by `by` (a `u32`).
    fn shuffle(&mut self, op: GroupOp, x: Value, by: Value, ty: Type) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        let by = self.convert_int(by, u32t)?;
        self.emit_value(InstData::Group { scope: Scope::SubGroup, op, args: vec![x, by] }, ty)
    }

    /// The element type and component count of a block's data: an 8-, 16-, 32- or 64-bit
    /// integer or a vector of 2 to 16 of them.
    fn components(&self, ty: Type) -> TResult<(Type, u32)> {
        let (elem, n) = match self.types().get(ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => (ty, 1),
        };
        match self.types().get(elem) {
            TypeData::Int { bits: 8 | 16 | 32 | 64 } if (1..=16).contains(&n) => Ok((elem, n)),
            _ => Err(malformed("a sub-group block read or write of a type other than integers")),
        }
    }

    /// `p` as a pointer to `elem` (SPIR-V may name the block's data through a pointer to
    /// another type), in a named address space.
    fn block_base(&mut self, p: Value, elem: Type) -> TResult<Value> {
        let space = match self.types().get(self.value_ty(p)) {
            TypeData::Pointer { space, .. } => *space,
            _ => return Err(malformed("a sub-group block read or write of a non-pointer")),
        };
        if space == AddressSpace::Generic {
            return Err(unsupported("a sub-group block read or write through a generic pointer"));
        }
        let ptr_t = self.builder.module.types.pointer(space, elem);
        if self.value_ty(p) == ptr_t {
            return Ok(p);
        }
        self.emit_value(InstData::Convert { op: ConvertOp::Bitcast, arg: p, saturate: false, rounding: None }, ptr_t)
    }

    /// `&base[part * size + lid]`: the element of component `part` of this work-item.
    fn block_element(&mut self, base: Value, part: u32) -> TResult<Value> {
        let u32t = self.builder.module.types.int(32);
        let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
        let index = if part == 0 {
            lid
        } else {
            let size = self.sub_group_query(WorkItemQuery::SubgroupMaxSize)?;
            let k = self.int_value(32, u64::from(part));
            let start = self.emit_value(InstData::Binary { op: BinaryOp::IMul, lhs: size, rhs: k }, u32t)?;
            self.emit_value(InstData::Binary { op: BinaryOp::IAdd, lhs: start, rhs: lid }, u32t)?
        };
        let i64t = self.builder.module.types.int(64);
        let index = self.convert_int(index, i64t)?;
        let ty = self.value_ty(base);
        self.emit_value(InstData::AccessChain { base, element: Some(index), indices: vec![], in_bounds: false }, ty)
    }

    /// The `int2` coordinate of component `part` of this work-item in an image block: byte
    /// `x + lid * bytes` of row `y + part`.
    fn image_block_coord(&mut self, coord: Value, bytes: u8, part: u32) -> TResult<Value> {
        let i32t = self.builder.module.types.int(32);
        let coord_t = self.value_ty(coord);
        let is_int2 = matches!(self.types().get(coord_t), TypeData::Vector { len: 2, elem }
            if matches!(self.types().get(*elem), TypeData::Int { bits: 32 }));
        if !is_int2 {
            return Err(malformed("an image block read or write's coordinate is not an int2"));
        }
        let lid = self.sub_group_query(WorkItemQuery::SubgroupLocalId)?;
        let step = self.int_value(32, u64::from(bytes));
        let dx = self.emit_value(InstData::Binary { op: BinaryOp::IMul, lhs: lid, rhs: step }, i32t)?;
        let dy = self.int_value(32, u64::from(part));
        let d = self.compose(vec![dx, dy], coord_t)?;
        self.emit_value(InstData::Binary { op: BinaryOp::IAdd, lhs: coord, rhs: d }, coord_t)
    }

    /// Component `j` of `v` (of `n` components of type `elem`; `v` itself when `n` is 1).
    fn component(&mut self, v: Value, j: u32, n: u32, elem: Type) -> TResult<Value> {
        if n == 1 {
            return Ok(v);
        }
        let index = self.int_value(32, u64::from(j));
        self.emit_value(InstData::ExtractElement { vector: v, index }, elem)
    }

    /// `parts` as a value of `ty` (the one part, or a vector of them).
    fn compose(&mut self, parts: Vec<Value>, ty: Type) -> TResult<Value> {
        match parts.as_slice() {
            [one] => Ok(*one),
            _ => self.emit_value(InstData::Construct { parts }, ty),
        }
    }
}
