//! Functions: arenas of blocks, instructions and values, plus a separate layout that gives
//! program order (so that edits never renumber).

use super::entities::{Arena, Block, Const, GlobalVar, Inst, SecondaryMap, Type, Value};
use super::instructions::InstData;

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
        let i = self.insts.push(data);
        let r = result_ty.map(|ty| self.values.push(ValueData { ty, def: ValueDef::Result(i) }));
        self.inst_result[i] = r;
        self.layout.append_inst(b, i);
        (i, r)
    }

    /// A value standing for a module constant.
    pub fn const_value(&mut self, c: Const, ty: Type) -> Value {
        self.values.push(ValueData { ty, def: ValueDef::Const(c) })
    }

    /// A value standing for the address of a module variable (`ty` is its pointer type).
    pub fn global_value(&mut self, g: GlobalVar, ty: Type) -> Value {
        self.values.push(ValueData { ty, def: ValueDef::Global(g) })
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
