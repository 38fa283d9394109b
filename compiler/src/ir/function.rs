//! Functions: arenas of blocks, instructions and values, plus a separate layout that gives
//! program order (so that edits never renumber).

use super::entities::{Arena, Block, Const, GlobalVar, Inst, SecondaryMap, Type, Value};
use super::instructions::{BlockCall, InstData};

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueDef {
    /// The result of an instruction.
    Result(Inst),
    /// Parameter `index` of a block. The entry block's parameters are the function's.
    Param(Block, u32),
    /// A module constant (dominates everything).
    Const(Const),
    /// The address of a module-scope variable (a pointer value).
    Global(GlobalVar),
}

#[derive(Debug, Clone)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Debug, Clone, Default)]
pub struct BlockData {
    pub params: Vec<Value>,
    /// A *masked* block (made by `passes::linearize` for vector code): a per-work-item
    /// `bool` defined in a block that dominates this one. Only the work-items whose mask is
    /// true run the block's instructions with effects (loads, stores, atomics, images,
    /// printf, calls); what its other instructions compute is defined only for them. A
    /// block whose mask is false for every work-item of a packet may be skipped whole.
    pub mask: Option<Value>,
}

/// Program order: the blocks in order (the first is the entry), and each block's instructions.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub blocks: Vec<Block>,
    pub insts: SecondaryMap<Block, Vec<Inst>>,
    pub inst_block: SecondaryMap<Inst, Option<Block>>,
}

impl Layout {
    pub fn entry(&self) -> Option<Block> {
        self.blocks.first().copied()
    }
    pub fn append_block(&mut self, b: Block) {
        self.blocks.push(b);
    }
    pub fn append_inst(&mut self, b: Block, i: Inst) {
        self.insts[b].push(i);
        self.inst_block[i] = Some(b);
    }
    /// The terminator (last instruction) of a block.
    pub fn last_inst(&self, b: Block) -> Option<Inst> {
        self.insts[b].last().copied()
    }

    /// The block holding `i` and its position there (`None` if `i` is not placed).
    pub fn position(&self, i: Inst) -> Option<(Block, usize)> {
        let b = self.inst_block[i]?;
        Some((b, self.insts[b].iter().position(|&x| x == i)?))
    }

    /// Places `i` right before `before`; false (and nothing placed) if `before` is not placed.
    pub fn insert_inst_before(&mut self, before: Inst, i: Inst) -> bool {
        let Some((b, pos)) = self.position(before) else { return false };
        self.insts[b].insert(pos, i);
        self.inst_block[i] = Some(b);
        true
    }

    /// Places `i` right after `after`; false (and nothing placed) if `after` is not placed.
    pub fn insert_inst_after(&mut self, after: Inst, i: Inst) -> bool {
        let Some((b, pos)) = self.position(after) else { return false };
        self.insts[b].insert(pos + 1, i);
        self.inst_block[i] = Some(b);
        true
    }

    /// Takes `i` out of the program (its data stays in the arena); false if it was not placed.
    pub fn remove_inst(&mut self, i: Inst) -> bool {
        let Some((b, pos)) = self.position(i) else { return false };
        self.insts[b].remove(pos);
        self.inst_block[i] = None;
        true
    }

    /// Places block `b` right after `after` (at the end if `after` is not in the layout).
    pub fn insert_block_after(&mut self, after: Block, b: Block) {
        match self.blocks.iter().position(|&x| x == after) {
            Some(pos) => self.blocks.insert(pos + 1, b),
            None => self.blocks.push(b),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuncKind {
    /// A `__kernel` function.
    Kernel,
    /// An ordinary function with a body.
    Function,
    /// A declaration without a body (must be resolved before code generation).
    Import,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    pub params: Vec<Type>,
    pub ret: Type,
    pub blocks: Arena<Block, BlockData>,
    pub insts: Arena<Inst, InstData>,
    pub inst_result: SecondaryMap<Inst, Option<Value>>,
    pub values: Arena<Value, ValueData>,
    pub layout: Layout,
    /// Optional debug names of values (from OpName).
    pub value_names: SecondaryMap<Value, Option<String>>,
    /// Source location of instructions (from SPIR-V OpLine, when the program was built with
    /// line information); `file` indexes `Module::source_files`.
    pub inst_locs: SecondaryMap<Inst, Option<crate::gen_abi::SourceLoc>>,
    /// `Variable` instructions that are *work-item state* (`passes::barriers`): they live
    /// in the per-work-item state the work-group loop keeps, so that they survive the
    /// return at a barrier. Kernels with `BarrierResume` only.
    pub state_vars: SecondaryMap<Inst, bool>,
    /// The state variables `passes::barriers` made to keep an SSA value live across a
    /// barrier (not the program's own variables): bookkeeping, not data the kernel moves.
    pub state_values: SecondaryMap<Inst, bool>,
}

impl Function {
    pub fn new(name: impl Into<String>, kind: FuncKind, params: Vec<Type>, ret: Type) -> Self {
        Self {
            name: name.into(),
            kind,
            params,
            ret,
            blocks: Arena::new(),
            insts: Arena::new(),
            inst_result: SecondaryMap::default(),
            values: Arena::new(),
            layout: Layout::default(),
            value_names: SecondaryMap::default(),
            inst_locs: SecondaryMap::default(),
            state_vars: SecondaryMap::default(),
            state_values: SecondaryMap::default(),
        }
    }

    /// A new block, appended to the layout.
    pub fn create_block(&mut self) -> Block {
        let b = self.blocks.push(BlockData::default());
        self.layout.append_block(b);
        b
    }

    pub fn append_block_param(&mut self, b: Block, ty: Type) -> Value {
        let index = self.blocks[b].params.len() as u32;
        let v = self.values.push(ValueData { ty, def: ValueDef::Param(b, index) });
        self.blocks[b].params.push(v);
        v
    }

    /// Appends an instruction to `b`; `result_ty` is `Some` for instructions with a result.
    pub fn append_inst(&mut self, b: Block, data: InstData, result_ty: Option<Type>) -> (Inst, Option<Value>) {
        let (i, r) = self.make_inst(data, result_ty);
        self.layout.append_inst(b, i);
        (i, r)
    }

    /// A new instruction (and its result value), not placed in the layout yet.
    pub fn make_inst(&mut self, data: InstData, result_ty: Option<Type>) -> (Inst, Option<Value>) {
        let i = self.insts.push(data);
        let r = result_ty.map(|ty| self.values.push(ValueData { ty, def: ValueDef::Result(i) }));
        self.inst_result[i] = r;
        (i, r)
    }

    // ---------------------------------------------------------------------------------
    // Editing. Analyses (`crate::analysis`) are not updated: recompute them after edits that
    // change the CFG. An anchor instruction or block that is not in the layout leaves the new
    // instruction unplaced (the validator then reports any use of its result). A new
    // instruction placed next to an anchor takes the anchor's source location (`inst_locs`),
    // as do the jumps that splitting blocks and edges adds.

    /// Inserts a new instruction right before `before` (several inserted before the same
    /// instruction keep their order).
    pub fn insert_inst_before(
        &mut self,
        before: Inst,
        data: InstData,
        result_ty: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let (i, r) = self.make_inst(data, result_ty);
        self.layout.insert_inst_before(before, i);
        self.inst_locs[i] = self.inst_locs[before];
        (i, r)
    }

    /// Inserts a new instruction right after `after` (which must not be a terminator).
    pub fn insert_inst_after(&mut self, after: Inst, data: InstData, result_ty: Option<Type>) -> (Inst, Option<Value>) {
        let (i, r) = self.make_inst(data, result_ty);
        self.layout.insert_inst_after(after, i);
        self.inst_locs[i] = self.inst_locs[after];
        (i, r)
    }

    /// Inserts a new instruction at the end of `b`: before its terminator, or last if the
    /// block has none yet.
    pub fn insert_inst_at_end(&mut self, b: Block, data: InstData, result_ty: Option<Type>) -> (Inst, Option<Value>) {
        match self.terminator(b) {
            Some(t) => self.insert_inst_before(t, data, result_ty),
            None => self.append_inst(b, data, result_ty),
        }
    }

    /// Takes `i` out of the program (its data stays in the arena; its result, if any, must
    /// have no uses left). False if it was not placed.
    pub fn remove_inst(&mut self, i: Inst) -> bool {
        self.layout.remove_inst(i)
    }

    /// The terminator of `b` (`None` if its last instruction is not one).
    pub fn terminator(&self, b: Block) -> Option<Inst> {
        self.layout.last_inst(b).filter(|&i| self.insts.get(i).is_some_and(InstData::is_terminator))
    }

    /// Replaces `old` by `new` in every placed instruction, branch arguments included, and
    /// in every placed block's mask; returns how many uses changed.
    pub fn replace_all_uses(&mut self, old: Value, new: Value) -> usize {
        let mut count = 0;
        for &b in &self.layout.blocks {
            if self.blocks[b].mask == Some(old) {
                self.blocks[b].mask = Some(new);
                count += 1;
            }
            for &i in &self.layout.insts[b] {
                if self.insts.is_valid(i) {
                    count += replace_in(&mut self.insts[i], old, new);
                }
            }
        }
        count
    }

    /// Replaces `old` by `new` among the operands of `inst`; returns how many changed.
    pub fn replace_uses_in(&mut self, inst: Inst, old: Value, new: Value) -> usize {
        if !self.insts.is_valid(inst) {
            return 0;
        }
        replace_in(&mut self.insts[inst], old, new)
    }

    /// A new block placed right after `after` in the layout.
    pub fn create_block_after(&mut self, after: Block) -> Block {
        let b = self.blocks.push(BlockData::default());
        self.layout.insert_block_after(after, b);
        b
    }

    /// Splits the block holding `at`: `at` and the instructions after it move to a new block
    /// placed right after, and the original block ends with a jump to it. The new block has
    /// no parameters; the moved terminator keeps its targets and arguments, which stay valid
    /// (the original block dominates the new one). Returns the new block, `None` if `at` is
    /// not placed.
    pub fn split_block(&mut self, at: Inst) -> Option<Block> {
        let (b, pos) = self.layout.position(at)?;
        let tail = self.layout.insts[b].split_off(pos);
        let new = self.create_block_after(b);
        // Both halves run under the block's mask.
        self.blocks[new].mask = self.blocks[b].mask;
        for &i in &tail {
            self.layout.inst_block[i] = Some(new);
        }
        self.layout.insts[new] = tail;
        let (jump, _) = self.append_inst(b, InstData::Jump { dest: BlockCall { block: new, args: Vec::new() } }, None);
        self.inst_locs[jump] = self.inst_locs[at];
        Some(new)
    }

    /// Puts a new block on edge number `edge` (the position in `InstData::successors`) of
    /// the terminator `term`: the edge now leads to the new block, which jumps to the old
    /// target passing the edge's arguments (they are defined in or above the branching
    /// block, which dominates the new one). The new block is placed right after the
    /// branching block and has no parameters. Other edges of `term` to the same target are
    /// left alone. Returns the new block, `None` if `term` is not a placed terminator with
    /// that edge.
    pub fn split_edge(&mut self, term: Inst, edge: usize) -> Option<Block> {
        let (from, _) = self.layout.position(term)?;
        if edge >= self.insts[term].successors().len() {
            return None;
        }
        let new = self.blocks.push(BlockData::default());
        let mut calls = self.insts[term].successors_mut();
        let old = std::mem::replace(&mut *calls[edge], BlockCall { block: new, args: Vec::new() });
        self.layout.insert_block_after(from, new);
        let (jump, _) = self.append_inst(new, InstData::Jump { dest: old }, None);
        self.inst_locs[jump] = self.inst_locs[term];
        Some(new)
    }

    /// The placed terminators that branch to `b` (each once), in layout order.
    pub fn branches_to(&self, b: Block) -> Vec<Inst> {
        let mut out = Vec::new();
        for &from in &self.layout.blocks {
            if let Some(t) = self.terminator(from) {
                if self.insts[t].successors().iter().any(|c| c.block == b) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// Adds a parameter of type `ty` to `b` and passes it an argument from every placed
    /// branch to `b`: `incoming(terminator)` gives the value each branch passes (once per
    /// terminator, for all its edges to `b`). Returns the parameter.
    pub fn add_block_param(&mut self, b: Block, ty: Type, mut incoming: impl FnMut(Inst) -> Value) -> Value {
        for t in self.branches_to(b) {
            let arg = incoming(t);
            for call in self.insts[t].successors_mut() {
                if call.block == b {
                    call.args.push(arg);
                }
            }
        }
        self.append_block_param(b, ty)
    }

    /// A value standing for a module constant.
    pub fn const_value(&mut self, c: Const, ty: Type) -> Value {
        self.values.push(ValueData { ty, def: ValueDef::Const(c) })
    }

    /// A value standing for the address of a module variable (`ty` is its pointer type).
    pub fn global_value(&mut self, g: GlobalVar, ty: Type) -> Value {
        self.values.push(ValueData { ty, def: ValueDef::Global(g) })
    }

    /// The value address `p` is derived from: `p` with access chains and conversions peeled
    /// off (a variable, a kernel argument, a loaded pointer, ...).
    pub fn address_root(&self, p: Value) -> Value {
        let mut v = p;
        // Definitions come before their uses: a chain ends; the bound guards malformed IR.
        for _ in 0..64 {
            let Some(ValueDef::Result(i)) = self.values.get(v).map(|d| d.def) else { break };
            match &self.insts[i] {
                InstData::AccessChain { base, .. } => v = *base,
                InstData::Convert { arg, .. } => v = *arg,
                _ => break,
            }
        }
        v
    }

    /// Whether `i` is a `Variable` kept in work-item state.
    pub fn is_state_var(&self, i: Inst) -> bool {
        self.state_vars[i]
    }

    /// Whether `ptr` is the address of a work-item state variable.
    pub fn is_state_address(&self, ptr: Value) -> bool {
        matches!(self.values.get(ptr).map(|d| d.def), Some(ValueDef::Result(i)) if self.state_vars[i])
    }

    /// Whether `ptr` is the address of a state variable holding a demoted SSA value.
    pub fn is_state_value_address(&self, ptr: Value) -> bool {
        matches!(self.values.get(ptr).map(|d| d.def), Some(ValueDef::Result(i)) if self.state_values[i])
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.layout.entry()
    }

    /// Successor blocks of `b` (from its terminator).
    pub fn successors(&self, b: Block) -> Vec<Block> {
        match self.layout.last_inst(b) {
            Some(i) => self.insts[i].successors().iter().map(|c| c.block).collect(),
            None => Vec::new(),
        }
    }
}

/// Replaces `old` by `new` among the operands of `data`; returns how many changed.
fn replace_in(data: &mut InstData, old: Value, new: Value) -> usize {
    let mut count = 0;
    data.for_each_operand_mut(|v| {
        if *v == old {
            *v = new;
            count += 1;
        }
    });
    count
}
