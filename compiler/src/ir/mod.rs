//! SoftCL IR: arena-indexed, block-parameter SSA (see docs/ARCHITECTURE.md).
//!
//! A `Module` owns interned types, constants, module-scope variables and functions. A
//! `Function` owns its blocks, instructions and values in arenas; program order is its
//! `Layout`. There are no phi nodes: blocks take parameters and branches pass arguments.
//! `validate::validate` checks the invariants: after translation from SPIR-V and after every
//! pass of the middle end (`passes::run_pipeline`), in every build.
//! Passes edit through `Function`'s editing methods (insert, remove, replace uses, split
//! blocks and edges, add block parameters) and read `crate::analysis` (CFG, dominators,
//! loops, def-use), recomputed after edits.

pub mod entities;
pub mod function;
pub mod instructions;
pub mod print;
mod regions;
pub mod types;
pub mod validate;
mod validate_gen;

pub use entities::{Arena, Block, Const, EntityRef, Func, GlobalVar, Inst, SecondaryMap, Type, Value};
pub use function::{BlockData, FuncKind, Function, Layout, ValueData, ValueDef};
pub use instructions::*;
pub use types::{TypeData, TypeTable};

use crate::kernel_info::{AddressSpace, KernelInfo};

#[derive(Debug, Clone, PartialEq)]
pub enum ConstData {
    /// An integer or bool (0/1), zero-extended into 64 bits.
    Int {
        ty: Type,
        bits: u64,
    },
    /// A float by its IEEE bits (f16 / f32 / f64 in the low bits).
    Float {
        ty: Type,
        bits: u64,
    },
    /// All zero bits of any type (OpConstantNull, zeroinitializer).
    Null {
        ty: Type,
    },
    Undef {
        ty: Type,
    },
    /// A vector, array or struct of constants.
    Composite {
        ty: Type,
        parts: Vec<Const>,
    },
    /// The address `offset` bytes into module variable `var`, as a pointer of type `ty`: only
    /// in the initializer of a module variable (`global int *p = &x;`); a function reaches a
    /// variable's address through a `ValueDef::Global` value.
    Address {
        ty: Type,
        var: GlobalVar,
        offset: u64,
    },
}

impl ConstData {
    pub fn ty(&self) -> Type {
        match self {
            ConstData::Int { ty, .. }
            | ConstData::Float { ty, .. }
            | ConstData::Null { ty }
            | ConstData::Undef { ty }
            | ConstData::Composite { ty, .. }
            | ConstData::Address { ty, .. } => *ty,
        }
    }
}

/// Built-in input variables, replaced by `WorkItem` instructions when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinVar {
    WorkItem(WorkItemQuery),
}

#[derive(Debug, Clone)]
pub struct GlobalVarData {
    pub name: String,
    /// The type of the variable's contents.
    pub ty: Type,
    /// `Private`: a built-in variable, or private data at module scope (the constant parts
    /// of private initializers, which the work-items only read: `front::spirv`).
    pub space: AddressSpace,
    pub init: Option<Const>,
    pub builtin: Option<BuiltinVar>,
    pub align: u32,
}

/// A kernel entry point: its function and what the runtime must know about it.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub func: Func,
    pub info: KernelInfo,
}

#[derive(Debug, Clone, Default)]
pub struct Module {
    pub types: TypeTable,
    pub constants: Arena<Const, ConstData>,
    pub globals: Arena<GlobalVar, GlobalVarData>,
    pub functions: Arena<Func, Function>,
    pub kernels: Vec<Kernel>,
    /// Source file names that `SourceLoc::file` indexes (from SPIR-V OpString / OpLine):
    /// the program's own source, named `<source>`, first; headers by their paths.
    pub source_files: Vec<String>,
    /// The text of each of `source_files` where known (the program's source when built
    /// from source, headers read when it was built), for reports that show the source.
    pub source_texts: Vec<Option<std::sync::Arc<str>>>,
}

impl Module {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add_const(&mut self, c: ConstData) -> Const {
        self.constants.push(c)
    }
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
    /// Everything the module holds as text, the same for equal modules (for memoizing what
    /// is compiled from one).
    pub fn describe(&self) -> String {
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            self.types.describe(),
            self.constants,
            self.globals,
            self.functions,
            self.kernels,
            self.source_files,
            self.source_texts
        )
    }
}
