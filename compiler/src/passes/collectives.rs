//! Work-group collective functions as `__local` memory and barriers.
//!
//! OpenCL C's `work_group_reduce_*`, `work_group_scan_inclusive_*` / `_exclusive_*`,
//! `work_group_broadcast`, `work_group_any` and `work_group_all` (`InstData::Group` with
//! `WorkGroup` scope) become ordinary IR before any other pass, so that the barrier regions,
//! the vectorizer, both devices and the Gen model see nothing new. Every work-item of the
//! work-group reaches a collective (the specification requires it), which is what a barrier
//! needs. Each work-item writes its operand, as 64 bits, to its slot of one module-scope
//! `__local` array of `slots + 1` words (`slots`: the device's largest work-group), in
//! linear local id order; then:
//!
//! ```text
//! reduce, scan:  slot[lid] = x; barrier
//!                if lid == 0: acc = slot[0]; for j in 1..n { acc = acc op slot[j]; (scan: slot[j] = acc) }
//!                             (reduce: slot[N] = acc; exclusive scan: slot[N] = identity)
//!                barrier; r = slot[N] | slot[lid] | slot[lid == 0 ? N : lid - 1]; barrier
//! broadcast:     slot[lid] = x; barrier; r = slot[linear(id)]; barrier
//! any, all:      a reduction of (x ? 1 : 0) with `or` / `and`, then r != 0
//! ```
//!
//! The combining runs in one work-item, in order, so a float reduction or scan gives every
//! work-item the same result, the same at every vector width and on both devices. The last
//! barrier keeps the array's words until every work-item read its result (the next
//! collective writes them again). A broadcast from a local id outside the work-group
//! (undefined behaviour) reads the first work-item's value rather than memory outside the
//! array.

use crate::ir::{
    self, BinaryOp, Block, BlockCall, CmpOp, ConstData, ConvertOp, GroupArith, GroupOp, Inst, InstData, Scope, Type,
    TypeData, Value, WorkItemQuery,
};
use crate::kernel_info::AddressSpace;

/// The scratch array's name in the module (and in IR dumps).
pub const SCRATCH_NAME: &str = "softcl.work_group_collectives";

/// Memory semantics of the barriers: SequentiallyConsistent | WorkgroupMemory, as
/// `barrier(CLK_LOCAL_MEM_FENCE)`.
const LOCAL_BARRIER_SEMANTICS: u32 = 0x10 | 0x100;

/// Expands every work-group collective of `m`; `slots` is the largest work-group the device
/// runs. Returns how many were expanded.
pub fn expand_module(m: &mut ir::Module, slots: u64) -> Result<usize, String> {
    let found: Vec<(ir::Func, Vec<Inst>)> = m
        .functions
        .iter()
        .map(|(func, f)| {
            let insts = f
                .layout
                .blocks
                .iter()
                .flat_map(|&b| f.layout.insts[b].iter().copied())
                .filter(|&i| matches!(f.insts[i], InstData::Group { scope: Scope::WorkGroup, .. }))
                .collect();
            (func, insts)
        })
        .filter(|(_, insts): &(ir::Func, Vec<Inst>)| !insts.is_empty())
        .collect();
    if found.is_empty() {
        return Ok(0);
    }
    let word = m.types.int(64);
    let array = m.types.intern(TypeData::Array { elem: word, len: slots + 1 });
    let scratch = m.globals.push(ir::GlobalVarData {
        name: SCRATCH_NAME.into(),
        ty: array,
        space: AddressSpace::Local,
        init: None,
        builtin: None,
        align: 8,
    });
    let mut done = 0;
    for (func, insts) in found {
        let f = &mut m.functions[func];
        let array_ptr = m.types.pointer(AddressSpace::Local, array);
        let base = f.global_value(scratch, array_ptr);
        let mut x = Expander { m_types: &mut m.types, m_consts: &mut m.constants, f, base, slots };
        for i in insts {
            x.expand(i)?;
            done += 1;
        }
    }
    Ok(done)
}

struct Expander<'a> {
    m_types: &'a mut ir::TypeTable,
    m_consts: &'a mut ir::Arena<ir::Const, ConstData>,
    f: &'a mut ir::Function,
    /// The scratch array's address.
    base: Value,
    slots: u64,
}

impl Expander<'_> {
    fn expand(&mut self, i: Inst) -> Result<(), String> {
        let InstData::Group { op, args, .. } = self.f.insts[i].clone() else { return Ok(()) };
        let result = self.f.inst_result[i].ok_or("a collective without a result")?;
        let ty = self.f.value_type(result);
        let loc = self.f.inst_locs[i];
        let (start, _) = self.f.layout.position(i).ok_or("a collective outside the layout")?;
        let rest = self.f.split_block(i).ok_or("a collective outside the layout")?;
        // `start` now ends with a jump to `rest`; the expansion replaces that jump.
        if let Some(jump) = self.f.terminator(start) {
            self.f.remove_inst(jump);
        }
        let mut at = Cursor { block: start, loc };
        let value = match (op, &args[..]) {
            (GroupOp::Broadcast, &[x, id]) => self.broadcast(&mut at, x, id)?,
            (GroupOp::Any | GroupOp::All, &[x]) => {
                let i32t = self.m_types.int(32);
                let (one, zero) = (self.int(i32t, 1), self.int(i32t, 0));
                let as_int = self.emit(&at, InstData::Select { cond: x, if_true: one, if_false: zero }, i32t);
                let arith = if op == GroupOp::Any { GroupArith::Or } else { GroupArith::And };
                let combined = self.fold(&mut at, GroupOp::Reduce(arith), as_int)?;
                let bool_t = self.m_types.bool();
                self.emit(&at, InstData::Compare { op: CmpOp::INe, lhs: combined, rhs: zero }, bool_t)
            }
            (GroupOp::Reduce(_) | GroupOp::InclusiveScan(_) | GroupOp::ExclusiveScan(_), &[x]) => {
                self.fold(&mut at, op, x)?
            }
            _ => return Err("a work-group collective with the wrong operands".into()),
        };
        debug_assert_eq!(self.f.value_type(value), ty);
        self.emit_void(&at, InstData::Jump { dest: BlockCall { block: rest, args: Vec::new() } });
        self.f.replace_all_uses(result, value);
        self.f.remove_inst(i);
        Ok(())
    }

    /// slot[lid] = x; barrier; r = slot[linear(id)]; barrier.
    fn broadcast(&mut self, at: &mut Cursor, x: Value, id: Value) -> Result<Value, String> {
        let lid = self.local_linear_id(at);
        self.store_slot(at, lid, x);
        self.barrier(at);
        let u64t = self.m_types.int(64);
        let sizes = self.local_sizes(at);
        let id_ty = self.f.value_type(id);
        let dims = self.m_types.lanes(id_ty);
        let mut linear: Option<Value> = None;
        let mut stride: Option<Value> = None;
        for d in 0..dims {
            let component = if dims == 1 { id } else { self.extract(at, id, d) };
            let component = self.widened_to_u64(at, component);
            let term = match stride {
                None => component,
                Some(s) => self.binary(at, BinaryOp::IMul, component, s, u64t),
            };
            linear = Some(match linear {
                None => term,
                Some(l) => self.binary(at, BinaryOp::IAdd, l, term, u64t),
            });
            stride = Some(match stride {
                None => sizes[d as usize],
                Some(s) => self.binary(at, BinaryOp::IMul, s, sizes[d as usize], u64t),
            });
        }
        let linear = linear.ok_or("a broadcast without a local id")?;
        let n = self.group_size(at, &sizes);
        let inside = self.compare(at, CmpOp::ULt, linear, n);
        let zero = self.int(u64t, 0);
        let index = self.emit(at, InstData::Select { cond: inside, if_true: linear, if_false: zero }, u64t);
        let ty = self.f.value_type(x);
        let r = self.load_slot(at, index, ty);
        self.barrier(at);
        Ok(r)
    }

    /// A reduction or scan of `x` (see the module header).
    fn fold(&mut self, at: &mut Cursor, op: GroupOp, x: Value) -> Result<Value, String> {
        let (GroupOp::Reduce(arith) | GroupOp::InclusiveScan(arith) | GroupOp::ExclusiveScan(arith)) = op else {
            return Err("not a reduction or scan".into());
        };
        let ty = self.f.value_type(x);
        let u64t = self.m_types.int(64);
        let lid = self.local_linear_id(at);
        self.store_slot(at, lid, x);
        self.barrier(at);
        let zero = self.int(u64t, 0);
        let one = self.int(u64t, 1);
        let result_slot = self.int(u64t, self.slots);
        let first = self.compare(at, CmpOp::IEq, lid, zero);
        let sizes = self.local_sizes(at);
        let n = self.group_size(at, &sizes);

        // Placed in order between the block of the collective and the rest of it.
        let head = self.f.create_block_after(at.block);
        let header = self.f.create_block_after(head);
        let body = self.f.create_block_after(header);
        let done = self.f.create_block_after(body);
        let join = self.f.create_block_after(done);
        self.emit_void(
            at,
            InstData::Branch {
                cond: first,
                then_dest: BlockCall { block: head, args: Vec::new() },
                else_dest: BlockCall { block: join, args: Vec::new() },
            },
        );
        // head: acc = slot[0] (exclusive: slot[N] = identity).
        let mut c = Cursor { block: head, loc: at.loc };
        let acc0 = self.load_slot(&c, zero, ty);
        if let GroupOp::ExclusiveScan(_) = op {
            let identity = self.identity(arith, ty)?;
            self.store_slot(&c, result_slot, identity);
        }
        self.emit_void(&c, InstData::Jump { dest: BlockCall { block: header, args: vec![one, acc0] } });
        // header(j, acc): j < n ? body : done.
        let j = self.f.append_block_param(header, u64t);
        let acc = self.f.append_block_param(header, ty);
        c.block = header;
        let more = self.compare(&c, CmpOp::ULt, j, n);
        self.emit_void(
            &c,
            InstData::Branch {
                cond: more,
                then_dest: BlockCall { block: body, args: Vec::new() },
                else_dest: BlockCall { block: done, args: Vec::new() },
            },
        );
        // body: acc = acc op slot[j] (scan: slot[j] = acc); j + 1.
        c.block = body;
        let xj = self.load_slot(&c, j, ty);
        let next = self.combine(&c, arith, acc, xj)?;
        if !matches!(op, GroupOp::Reduce(_)) {
            self.store_slot(&c, j, next);
        }
        let j1 = self.binary(&c, BinaryOp::IAdd, j, one, u64t);
        self.emit_void(&c, InstData::Jump { dest: BlockCall { block: header, args: vec![j1, next] } });
        // done: reduce: slot[N] = acc.
        c.block = done;
        if let GroupOp::Reduce(_) = op {
            self.store_slot(&c, result_slot, acc);
        }
        self.emit_void(&c, InstData::Jump { dest: BlockCall { block: join, args: Vec::new() } });
        // join: barrier; the result; barrier.
        at.block = join;
        self.barrier(at);
        let lid = self.local_linear_id(at);
        let index = match op {
            GroupOp::Reduce(_) => result_slot,
            GroupOp::InclusiveScan(_) => lid,
            _ => {
                let first = self.compare(at, CmpOp::IEq, lid, zero);
                let before = self.binary(at, BinaryOp::ISub, lid, one, u64t);
                self.emit(at, InstData::Select { cond: first, if_true: result_slot, if_false: before }, u64t)
            }
        };
        let r = self.load_slot(at, index, ty);
        self.barrier(at);
        Ok(r)
    }

    /// `a op b`.
    fn combine(&mut self, at: &Cursor, arith: GroupArith, a: Value, b: Value) -> Result<Value, String> {
        use GroupArith as A;
        let ty = self.f.value_type(a);
        let binary = |op| InstData::Binary { op, lhs: a, rhs: b };
        let data = match arith {
            A::IAdd => binary(BinaryOp::IAdd),
            A::FAdd => binary(BinaryOp::FAdd),
            A::IMul => binary(BinaryOp::IMul),
            A::FMul => binary(BinaryOp::FMul),
            A::And => binary(BinaryOp::And),
            A::Or => binary(BinaryOp::Or),
            A::Xor => binary(BinaryOp::Xor),
            A::LogicalAnd => binary(BinaryOp::LogicalAnd),
            A::LogicalOr => binary(BinaryOp::LogicalOr),
            A::LogicalXor => binary(BinaryOp::LogicalNe),
            A::FMin | A::FMax => {
                let opcode = if arith == A::FMin { spirv::OpenclStd100Op::fmin } else { spirv::OpenclStd100Op::fmax };
                InstData::ExtInst { opcode: opcode as u32, args: vec![a, b] }
            }
            A::SMin | A::UMin | A::SMax | A::UMax => {
                let cmp = match arith {
                    A::SMin => CmpOp::SLt,
                    A::UMin => CmpOp::ULt,
                    A::SMax => CmpOp::SGt,
                    _ => CmpOp::UGt,
                };
                let pick_a = self.compare(at, cmp, a, b);
                InstData::Select { cond: pick_a, if_true: a, if_false: b }
            }
        };
        Ok(self.emit(at, data, ty))
    }

    /// The value an exclusive scan gives the first work-item: `op`'s identity.
    fn identity(&mut self, arith: GroupArith, ty: Type) -> Result<Value, String> {
        use GroupArith as A;
        let data = match self.m_types.get(ty).clone() {
            TypeData::Int { bits } => {
                let all = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let sign = 1u64 << (bits - 1);
                let v = match arith {
                    A::IAdd | A::Or | A::Xor | A::UMax => 0,
                    A::IMul => 1,
                    A::And | A::UMin => all,
                    A::SMin => sign - 1,
                    A::SMax => sign,
                    _ => return Err(format!("{arith:?} of integers")),
                };
                ConstData::Int { ty, bits: v }
            }
            TypeData::Float { bits } => {
                let (zero, one, inf, neg_inf) = match bits {
                    16 => (0u64, 0x3c00, 0x7c00, 0xfc00),
                    32 => (0, 0x3f80_0000, 0x7f80_0000, 0xff80_0000),
                    _ => (0, 0x3ff0_0000_0000_0000, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000),
                };
                let v = match arith {
                    A::FAdd => zero,
                    A::FMul => one,
                    A::FMin => inf,
                    A::FMax => neg_inf,
                    _ => return Err(format!("{arith:?} of floats")),
                };
                ConstData::Float { ty, bits: v }
            }
            TypeData::Bool => ConstData::Int { ty, bits: u64::from(arith == A::LogicalAnd) },
            other => return Err(format!("a scan of {other:?}")),
        };
        let c = self.m_consts.push(data);
        Ok(self.f.const_value(c, ty))
    }

    // ------------------------------------------------------------------ the scratch array

    /// The 64-bit word of slot `index`.
    fn slot(&mut self, at: &Cursor, index: Value) -> Value {
        let word = self.m_types.int(64);
        let ptr = self.m_types.pointer(AddressSpace::Local, word);
        self.emit(
            at,
            InstData::AccessChain { base: self.base, element: None, indices: vec![index], in_bounds: true },
            ptr,
        )
    }

    fn store_slot(&mut self, at: &Cursor, index: Value, value: Value) {
        let bits = self.bits_as_word(at, value);
        let ptr = self.slot(at, index);
        self.emit_void(at, InstData::Store { ptr, value: bits, align: 8, volatile: false, block: None });
    }

    fn load_slot(&mut self, at: &Cursor, index: Value, ty: Type) -> Value {
        let word = self.m_types.int(64);
        let ptr = self.slot(at, index);
        let bits = self.emit(at, InstData::Load { ptr, align: 8, volatile: false, block: None }, word);
        self.word_as_value(at, bits, ty)
    }

    /// `value`'s bits in the low bits of a 64-bit word.
    fn bits_as_word(&mut self, at: &Cursor, value: Value) -> Value {
        let ty = self.f.value_type(value);
        let word = self.m_types.int(64);
        let int = match self.m_types.get(ty).clone() {
            TypeData::Float { bits } => {
                let it = self.m_types.int(bits);
                self.convert(at, ConvertOp::Bitcast, value, it)
            }
            _ => value,
        };
        if self.f.value_type(int) == word {
            int
        } else {
            self.convert(at, ConvertOp::UConvert, int, word)
        }
    }

    fn word_as_value(&mut self, at: &Cursor, word: Value, ty: Type) -> Value {
        let bits = match self.m_types.get(ty) {
            TypeData::Float { bits } | TypeData::Int { bits } => *bits,
            _ => 64,
        };
        let it = self.m_types.int(bits);
        let int = if bits == 64 { word } else { self.convert(at, ConvertOp::UConvert, word, it) };
        if it == ty {
            int
        } else {
            self.convert(at, ConvertOp::Bitcast, int, ty)
        }
    }

    // ------------------------------------------------------------------ building blocks

    fn local_linear_id(&mut self, at: &Cursor) -> Value {
        let u64t = self.m_types.int(64);
        self.emit(at, InstData::WorkItem { query: WorkItemQuery::LocalLinearId }, u64t)
    }

    /// The work-group's size in each dimension (this work-group's: the last ones of a
    /// non-uniform ND-range are smaller).
    fn local_sizes(&mut self, at: &Cursor) -> [Value; 3] {
        let u64t = self.m_types.int(64);
        let v3 = self.m_types.vector(u64t, 3);
        let sizes = self.emit(at, InstData::WorkItem { query: WorkItemQuery::LocalSize }, v3);
        [0, 1, 2].map(|d| self.extract(at, sizes, d))
    }

    fn group_size(&mut self, at: &Cursor, sizes: &[Value; 3]) -> Value {
        let u64t = self.m_types.int(64);
        let xy = self.binary(at, BinaryOp::IMul, sizes[0], sizes[1], u64t);
        self.binary(at, BinaryOp::IMul, xy, sizes[2], u64t)
    }

    fn extract(&mut self, at: &Cursor, vector: Value, lane: u32) -> Value {
        let ty = self.m_types.scalar_of(self.f.value_type(vector));
        let i32t = self.m_types.int(32);
        let index = self.int(i32t, u64::from(lane));
        self.emit(at, InstData::ExtractElement { vector, index }, ty)
    }

    fn widened_to_u64(&mut self, at: &Cursor, v: Value) -> Value {
        let u64t = self.m_types.int(64);
        if self.f.value_type(v) == u64t {
            v
        } else {
            self.convert(at, ConvertOp::UConvert, v, u64t)
        }
    }

    fn barrier(&mut self, at: &Cursor) {
        self.emit_void(
            at,
            InstData::Barrier {
                exec_scope: Scope::WorkGroup,
                mem_scope: Scope::WorkGroup,
                semantics: LOCAL_BARRIER_SEMANTICS,
            },
        );
    }

    fn int(&mut self, ty: Type, bits: u64) -> Value {
        let c = self.m_consts.push(ConstData::Int { ty, bits });
        self.f.const_value(c, ty)
    }

    fn binary(&mut self, at: &Cursor, op: BinaryOp, lhs: Value, rhs: Value, ty: Type) -> Value {
        self.emit(at, InstData::Binary { op, lhs, rhs }, ty)
    }

    fn compare(&mut self, at: &Cursor, op: CmpOp, lhs: Value, rhs: Value) -> Value {
        let b = self.m_types.bool();
        self.emit(at, InstData::Compare { op, lhs, rhs }, b)
    }

    fn convert(&mut self, at: &Cursor, op: ConvertOp, arg: Value, ty: Type) -> Value {
        self.emit(at, InstData::Convert { op, arg, saturate: false, rounding: None }, ty)
    }

    fn emit(&mut self, at: &Cursor, data: InstData, ty: Type) -> Value {
        let (i, r) = self.f.append_inst(at.block, data, Some(ty));
        self.f.inst_locs[i] = at.loc;
        r.expect("an instruction made with a result type has a result")
    }

    fn emit_void(&mut self, at: &Cursor, data: InstData) {
        let (i, _) = self.f.append_inst(at.block, data, None);
        self.f.inst_locs[i] = at.loc;
    }
}

/// Where the expansion appends: a block without its terminator yet, and the collective's
/// source location for every instruction it makes.
struct Cursor {
    block: Block,
    loc: Option<crate::gen_abi::SourceLoc>,
}

#[cfg(test)]
mod tests {
    use crate::ir::{InstData, Scope};

    fn count(m: &crate::ir::Module, pred: impl Fn(&InstData) -> bool) -> usize {
        m.functions
            .iter()
            .flat_map(|(_, f)| {
                f.layout.blocks.iter().flat_map(move |&b| f.layout.insts[b].iter().map(move |&i| &f.insts[i]))
            })
            .filter(|d| pred(d))
            .count()
    }

    /// Every work-group collective becomes barriers around the scratch array (three for a
    /// reduction or scan, two for a broadcast), in a helper function too; the module stays
    /// valid and the array has a word per work-item of the largest work-group and one more.
    #[test]
    fn collectives_become_barriers_around_one_local_array() {
        let src = "int helper(int v) { return work_group_scan_exclusive_max(v); }\n\
                   __kernel void k(__global int *a, __global float *b) {\n\
                   size_t i = get_global_id(0);\n\
                   a[i] = work_group_reduce_add(a[i]) + helper(a[i]) + work_group_any(a[i] > 2);\n\
                   b[i] = work_group_broadcast(b[i], 1, 0) + work_group_scan_inclusive_min(b[i]);\n\
                   }";
        let mut m = crate::compile_source(src, "-cl-std=CL2.0", &crate::Target::default()).expect("builds").module;
        let is_collective = |d: &InstData| matches!(d, InstData::Group { scope: Scope::WorkGroup, .. });
        // clang inlines the helper and keeps it: its collective is there twice.
        assert_eq!(count(&m, is_collective), 6);
        let mut n = 0;
        crate::passes::run_pass(&mut m, "collectives", |m| {
            n = super::expand_module(m, 256)?;
            Ok(())
        })
        .expect("the pass leaves valid IR");
        assert_eq!(n, 6);
        assert_eq!(count(&m, is_collective), 0);
        assert_eq!(count(&m, crate::passes::inline::is_work_group_barrier), 5 * 3 + 2);
        let scratch: Vec<_> = m.globals.iter().filter(|(_, g)| g.name == super::SCRATCH_NAME).collect();
        assert_eq!(scratch.len(), 1);
        assert_eq!(m.types.size_of(scratch[0].1.ty), 257 * 8);
    }

    /// A module without collectives is left as it is: no scratch array.
    #[test]
    fn no_collective_no_array() {
        let src = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }";
        let mut m = crate::compile_source(src, "", &crate::Target::default()).expect("builds").module;
        let globals = m.globals.len();
        assert_eq!(super::expand_module(&mut m, 256), Ok(0));
        assert_eq!(m.globals.len(), globals);
    }
}
