//! Def-use chains: where each value is defined and every place it is used.

use crate::ir::{Block, Function, Inst, InstData, SecondaryMap, Value, ValueDef};

/// How an instruction uses a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UseKind {
    /// An ordinary operand (branch conditions, switch selectors and returned values included).
    Operand,
    /// An argument a terminator passes to parameter `param` of `target` along its
    /// successor number `edge` (the position in `InstData::successors`).
    BlockArg { edge: u32, target: Block, param: u32 },
}

/// One use of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Use {
    pub inst: Inst,
    pub kind: UseKind,
}

/// The uses of every value by the instructions placed in the layout (in layout order) and
/// the block defining each value.
#[derive(Debug, Clone)]
pub struct DefUse {
    uses: SecondaryMap<Value, Vec<Use>>,
    def_block: SecondaryMap<Value, Option<Block>>,
}

impl DefUse {
    pub fn new(f: &Function) -> DefUse {
        let mut uses: SecondaryMap<Value, Vec<Use>> = SecondaryMap::default();
        let mut def_block: SecondaryMap<Value, Option<Block>> = SecondaryMap::default();
        for (v, data) in f.values.iter() {
            def_block[v] = match data.def {
                ValueDef::Result(i) if f.insts.is_valid(i) => f.layout.inst_block[i],
                ValueDef::Param(b, _) => Some(b),
                _ => None,
            };
        }
        for &b in &f.layout.blocks {
            if !f.blocks.is_valid(b) {
                continue;
            }
            for &inst in &f.layout.insts[b] {
                let Some(data) = f.insts.get(inst) else { continue };
                let mut add = |v: Value, kind: UseKind| uses[v].push(Use { inst, kind });
                match data {
                    InstData::Jump { .. } | InstData::Branch { .. } | InstData::Switch { .. } => {
                        match data {
                            InstData::Branch { cond, .. } => add(*cond, UseKind::Operand),
                            InstData::Switch { selector, .. } => add(*selector, UseKind::Operand),
                            _ => {}
                        }
                        for (edge, call) in data.successors().into_iter().enumerate() {
                            for (param, &arg) in call.args.iter().enumerate() {
                                let kind =
                                    UseKind::BlockArg { edge: edge as u32, target: call.block, param: param as u32 };
                                add(arg, kind);
                            }
                        }
                    }
                    _ => data.for_each_operand(|v| add(v, UseKind::Operand)),
                }
            }
        }
        DefUse { uses, def_block }
    }

    /// Every use of `v`, in layout order.
    pub fn uses(&self, v: Value) -> &[Use] {
        &self.uses[v]
    }

    pub fn is_used(&self, v: Value) -> bool {
        !self.uses[v].is_empty()
    }

    /// The instructions using `v` (an instruction using it twice appears twice).
    pub fn users(&self, v: Value) -> impl Iterator<Item = Inst> + '_ {
        self.uses[v].iter().map(|u| u.inst)
    }

    /// The block defining `v`: the block of the instruction whose result it is, or whose
    /// parameter it is; `None` for constants, module variables' addresses and results of
    /// instructions not in the layout.
    pub fn def_block(&self, v: Value) -> Option<Block> {
        self.def_block[v]
    }
}
