//! The IR validator: checks the structural invariants every pass must keep.
//!
//! - types refer to earlier, valid types (so no cycles); constants and module variables
//!   have well-formed types and initialisers;
//! - every block of the layout ends with exactly one terminator, and only there; every
//!   instruction is placed once;
//! - branch arguments match the target's parameters in number and type; the entry block's
//!   parameters are the function's;
//! - every operand is defined and its definition dominates the use (block parameters are
//!   defined at block entry, constants and module variables everywhere; uses in blocks
//!   unreachable from the entry are not checked for dominance);
//! - instructions have a result exactly when they produce a value, with the type the
//!   operation implies (binary operands alike, compares yield bool of the operand's lane
//!   count, loads/stores match the pointee, calls match the callee's signature, ...);
//! - a block's mask (`passes::linearize`) is a scalar `bool` defined in a block that
//!   strictly dominates it, a parameter of the block itself (a linearized loop's header),
//!   or a constant; the entry block has none, and a masked block
//!   holds no work-group barrier (every work-item must reach a barrier).
//!
//! - Gen instrumentation (`gen.block`, `gen.count`) matches its kernel's plan
//!   (`validate_gen`).
//!
//! - barrier regions and work-item state as `regions` says (`passes::barriers`).
//!
//! It never panics, whatever the IR holds: it reports every problem it finds.

use super::entities::{Block, Inst, Type, Value};
use super::function::{FuncKind, Function, ValueDef};
use super::instructions::{
    AtomicOp, BinaryOp, BlockCall, CmpOp, ConvertOp, GroupArith, GroupOp, ImageOp, InstData, Scope, UnaryOp,
};
use super::types::TypeData;
use super::{ConstData, Module};
use crate::analysis::{Cfg, DomTree};
use crate::kernel_info::AddressSpace;
use std::collections::HashMap;

/// A validation failure, naming the function and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub function: String,
    pub message: String,
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IR validation failed in {}: {}", self.function, self.message)
    }
}

/// Checks `module`; returns every problem found.
pub fn validate(module: &Module) -> Result<(), Vec<ValidationError>> {
    let mut errors = Vec::new();
    let module_errors = |message: String| ValidationError { function: "<module>".into(), message };
    let types_ok = validate_types(module, &mut |m| errors.push(module_errors(m)));
    if types_ok {
        validate_module_items(module, &mut |m| errors.push(module_errors(m)));
        for (_, function) in module.functions.iter() {
            FunctionValidator::new(module, function, &mut errors).run();
        }
        super::validate_gen::check(module, &mut errors);
    }
    for kernel in &module.kernels {
        match module.functions.get(kernel.func) {
            Some(f) if f.kind == FuncKind::Kernel => {}
            Some(f) => errors.push(module_errors(format!(
                "kernel {} refers to {}, which is not a kernel function",
                kernel.info.name, f.name
            ))),
            None => errors.push(module_errors(format!(
                "kernel {} refers to a missing function {}",
                kernel.info.name, kernel.func
            ))),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every type refers only to valid types defined before it. Returns false on a problem
/// (later checks compute sizes and would not terminate on a cyclic type).
fn validate_types(module: &Module, report: &mut dyn FnMut(String)) -> bool {
    let mut ok = true;
    for (t, data) in module.types.iter() {
        let mut check = |child: Type| {
            if child.0 >= t.0 {
                report(format!("type {t} refers to {child}, which is not defined before it"));
                ok = false;
            }
        };
        match data {
            TypeData::Vector { elem, len } => {
                check(*elem);
                if *len < 2 {
                    report(format!("type {t}: vector of {len} components"));
                    ok = false;
                }
            }
            TypeData::Pointer { pointee, .. } => check(*pointee),
            TypeData::Array { elem, .. } => check(*elem),
            TypeData::Struct { fields, .. } => fields.iter().copied().for_each(check),
            TypeData::Function { ret, params } => {
                check(*ret);
                params.iter().copied().for_each(check);
            }
            TypeData::Int { bits } if *bits == 0 || *bits > 128 => {
                report(format!("type {t}: {bits}-bit integer"));
                ok = false;
            }
            TypeData::Float { bits } if !matches!(bits, 16 | 32 | 64) => {
                report(format!("type {t}: {bits}-bit float"));
                ok = false;
            }
            _ => {}
        }
    }
    if !ok {
        return false;
    }
    for (t, data) in module.types.iter() {
        if let TypeData::Vector { elem, .. } = data {
            if !matches!(module.types.get(*elem), TypeData::Bool | TypeData::Int { .. } | TypeData::Float { .. }) {
                report(format!("type {t}: vector of a non-scalar type"));
                ok = false;
            }
        }
    }
    ok
}

fn validate_module_items(module: &Module, report: &mut dyn FnMut(String)) {
    let types = &module.types;
    for (c, data) in module.constants.iter() {
        let ty = data.ty();
        if !types.is_valid(ty) {
            report(format!("constant {c} has an invalid type {ty}"));
            continue;
        }
        match data {
            ConstData::Int { .. } => {
                // A `sampler_t` constant (OpConstantSampler) holds the sampler's bits.
                let sampler = matches!(types.get(ty), TypeData::Opaque { name } if name == "sampler_t");
                if !sampler && !matches!(types.get(ty), TypeData::Int { .. } | TypeData::Bool) {
                    report(format!("integer constant {c} of non-integer type {ty}"));
                }
            }
            ConstData::Float { .. } => {
                if !matches!(types.get(ty), TypeData::Float { .. }) {
                    report(format!("float constant {c} of non-float type {ty}"));
                }
            }
            ConstData::Null { .. } | ConstData::Undef { .. } => {}
            ConstData::Address { var, .. } => {
                if !matches!(types.get(ty), TypeData::Pointer { .. }) {
                    report(format!("address constant {c} of non-pointer type {ty}"));
                }
                match module.globals.get(*var) {
                    None => report(format!("address constant {c} of an unknown variable {var}")),
                    Some(g) if g.space == AddressSpace::Local || g.builtin.is_some() => {
                        report(format!("address constant {c} of a __local or built-in variable {var}"))
                    }
                    Some(_) => {}
                }
            }
            ConstData::Composite { parts, .. } => {
                let part_types: Option<Vec<Type>> =
                    parts.iter().map(|p| module.constants.get(*p).map(|d| d.ty())).collect();
                let Some(part_types) = part_types else {
                    report(format!("composite constant {c} has an invalid part"));
                    continue;
                };
                let expected: Vec<Type> = match types.get(ty) {
                    TypeData::Vector { elem, len } => vec![*elem; *len as usize],
                    TypeData::Array { elem, len } => {
                        if *len != part_types.len() as u64 {
                            report(format!("composite constant {c}: {} parts for {len} elements", part_types.len()));
                            continue;
                        }
                        vec![*elem; part_types.len()]
                    }
                    TypeData::Struct { fields, .. } => fields.clone(),
                    _ => {
                        report(format!("composite constant {c} of non-composite type {ty}"));
                        continue;
                    }
                };
                if expected != part_types {
                    report(format!("composite constant {c}: parts do not match type {ty}"));
                }
            }
        }
    }
    for (g, data) in module.globals.iter() {
        if !types.is_valid(data.ty) {
            report(format!("variable {g} ({}) has an invalid type", data.name));
            continue;
        }
        if let Some(init) = data.init {
            match module.constants.get(init) {
                Some(c) if c.ty() == data.ty => {}
                Some(_) => report(format!("variable {g} ({}): initializer of another type", data.name)),
                None => report(format!("variable {g} ({}): invalid initializer {init}", data.name)),
            }
        }
        if data.align == 0 || !data.align.is_power_of_two() {
            report(format!("variable {g} ({}): alignment {} is not a power of two", data.name, data.align));
        }
    }
}

/// Whether an instruction produces a value: `None` = it may or may not (extended
/// instructions, whose result type depends on the instruction).
fn produces_value(module: &Module, data: &InstData) -> Option<bool> {
    use InstData::*;
    Some(match data {
        Binary { .. }
        | Unary { .. }
        | Compare { .. }
        | Select { .. }
        | Convert { .. }
        | Variable { .. }
        | Load { .. }
        | AccessChain { .. }
        | ExtractElement { .. }
        | InsertElement { .. }
        | Shuffle { .. }
        | ExtractValue { .. }
        | InsertValue { .. }
        | Construct { .. }
        | AnyActive { .. }
        | GenericSpace { .. }
        | Group { .. }
        | WorkItem { .. } => true,
        Store { .. }
        | CopyMemory { .. }
        | Barrier { .. }
        | Fence { .. }
        | Jump { .. }
        | Branch { .. }
        | Switch { .. }
        | Return { .. }
        | Unreachable
        | GenBlock { .. }
        | GenCount { .. }
        | BarrierResume { .. } => false,
        Atomic { op, .. } => *op != AtomicOp::Store,
        Image { op, .. } => !matches!(op, ImageOp::Write | ImageOp::BlockWrite { .. }),
        Call { func, .. } => match module.functions.get(*func) {
            Some(f) if module.types.is_valid(f.ret) => !matches!(module.types.get(f.ret), TypeData::Void),
            _ => return None,
        },
        ExtInst { .. } => return None,
    })
}

struct FunctionValidator<'m> {
    module: &'m Module,
    function: &'m Function,
    errors: &'m mut Vec<ValidationError>,
    /// Block and position of every placed instruction.
    position: HashMap<Inst, (Block, usize)>,
    in_layout: HashMap<Block, usize>,
}

impl<'m> FunctionValidator<'m> {
    fn new(module: &'m Module, function: &'m Function, errors: &'m mut Vec<ValidationError>) -> Self {
        Self { module, function, errors, position: HashMap::new(), in_layout: HashMap::new() }
    }

    fn error(&mut self, message: String) {
        self.errors.push(ValidationError { function: self.function.name.clone(), message });
    }

    fn type_data(&self, t: Type) -> Option<&'m TypeData> {
        let types = &self.module.types;
        types.is_valid(t).then(|| types.get(t))
    }

    /// The type of a value, if the value and its type are valid.
    fn ty(&self, v: Value) -> Option<Type> {
        self.function.values.get(v).map(|d| d.ty).filter(|t| self.module.types.is_valid(*t))
    }

    fn run(&mut self) {
        let f = self.function;
        let types = &self.module.types;
        for (i, p) in f.params.iter().enumerate() {
            if !types.is_valid(*p) {
                self.error(format!("parameter {i} has an invalid type {p}"));
                return;
            }
        }
        if !types.is_valid(f.ret) {
            self.error(format!("invalid return type {}", f.ret));
            return;
        }
        if f.kind == FuncKind::Import {
            if !f.layout.blocks.is_empty() {
                self.error("an imported function has a body".into());
            }
            return;
        }
        let Some(entry) = f.layout.entry() else {
            self.error("a function with a body has no blocks".into());
            return;
        };
        for (v, data) in f.values.iter() {
            if !types.is_valid(data.ty) {
                self.error(format!("value {v} has an invalid type {}", data.ty));
            }
        }

        // Layout: blocks once each, instructions once each, terminators last.
        for (index, &b) in f.layout.blocks.iter().enumerate() {
            if !f.blocks.is_valid(b) {
                self.error(format!("layout holds invalid block {b}"));
                return;
            }
            if self.in_layout.insert(b, index).is_some() {
                self.error(format!("{b} appears twice in the layout"));
                return;
            }
        }
        for &b in &f.layout.blocks {
            let insts = &f.layout.insts[b];
            if insts.is_empty() {
                self.error(format!("{b} is empty"));
            }
            for (pos, &i) in insts.iter().enumerate() {
                if !f.insts.is_valid(i) {
                    self.error(format!("{b} holds invalid instruction {i}"));
                    return;
                }
                if self.position.insert(i, (b, pos)).is_some() {
                    self.error(format!("{i} is placed twice"));
                    return;
                }
                if f.layout.inst_block[i] != Some(b) {
                    self.error(format!("{i} is in {b} but its block is recorded as {:?}", f.layout.inst_block[i]));
                }
                let is_terminator = f.insts[i].is_terminator();
                let is_last = pos + 1 == insts.len();
                if is_terminator && !is_last {
                    self.error(format!("terminator {i} is not the last instruction of {b}"));
                }
                if !is_terminator && is_last {
                    self.error(format!("{b} does not end with a terminator"));
                }
            }
            for (index, &p) in f.blocks[b].params.iter().enumerate() {
                match f.values.get(p) {
                    Some(d) if d.def == ValueDef::Param(b, index as u32) => {}
                    _ => self.error(format!("parameter {index} of {b} ({p}) is not defined as that parameter")),
                }
            }
        }

        // The entry block's parameters are the function's.
        let entry_types: Vec<Option<Type>> = f.blocks[entry].params.iter().map(|p| self.ty(*p)).collect();
        let param_types: Vec<Option<Type>> = f.params.iter().map(|p| Some(*p)).collect();
        if entry_types != param_types {
            self.error(format!("the entry block's parameters do not match the function's parameters ({entry})"));
        }

        // CFG and dominators (branches out of the layout are left out of the CFG).
        for &b in &f.layout.blocks {
            let Some(last) = f.layout.last_inst(b) else { continue };
            for t in f.insts[last].successors().iter().map(|c| c.block) {
                if !self.in_layout.contains_key(&t) {
                    self.error(format!("{b} branches to {t}, which is not in the layout"));
                }
            }
        }
        let dominators = DomTree::new(&Cfg::new(f));
        for &b in &f.layout.blocks {
            self.check_mask(&dominators, entry, b);
        }
        for &b in &f.layout.blocks {
            let insts = f.layout.insts[b].clone();
            for (pos, i) in insts.into_iter().enumerate() {
                self.check_operands(&dominators, b, pos, i);
                self.check_result(i);
                self.check_types(i);
            }
        }
        for problem in super::regions::problems(f) {
            self.error(problem);
        }
    }

    /// The mask of block `b`, if it has one.
    fn check_mask(&mut self, dominators: &DomTree, entry: Block, b: Block) {
        let f = self.function;
        let Some(m) = f.blocks[b].mask else { return };
        if b == entry {
            self.error(format!("the entry block {b} has a mask"));
            return;
        }
        let Some(data) = f.values.get(m) else {
            self.error(format!("the mask {m} of {b} does not exist"));
            return;
        };
        if !self.is_bool_with_lanes(data.ty, 1) {
            self.error(format!("the mask {m} of {b} is not a bool"));
        }
        let def_block = match data.def {
            ValueDef::Result(_) | ValueDef::Param(..) => match self.definition_site(m, data.def) {
                // A loop mask: the header's own parameter.
                Ok((db, None)) if db == b => None,
                Ok((db, _)) => Some(db),
                Err(problem) => {
                    self.error(format!("the mask {m} of {b}, {problem}"));
                    return;
                }
            },
            ValueDef::Const(_) => None,
            ValueDef::Global(_) => {
                self.error(format!("the mask {m} of {b} is an address"));
                None
            }
        };
        if let Some(db) = def_block {
            if db == b || (dominators.is_reachable(b) && !dominators.dominates(db, b)) {
                self.error(format!("the mask {m} of {b} (defined in {db}) does not dominate the block"));
            }
        }
        if f.layout.insts[b].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i])) {
            self.error(format!("masked block {b} holds a work-group barrier"));
        }
    }

    /// Where `v`, an instruction's result or a block's parameter, is defined: its block and,
    /// for a result, its position there; or what is wrong (for "{use} uses {v}, ..."): not
    /// the result its instruction names, not a parameter its block still declares, not in
    /// the layout. Operands and block masks are checked alike.
    fn definition_site(&self, v: Value, def: ValueDef) -> Result<(Block, Option<usize>), String> {
        let f = self.function;
        match def {
            ValueDef::Result(i) => {
                if f.inst_result[i] != Some(v) {
                    return Err(format!("which is not the result of {i}"));
                }
                let &(b, pos) =
                    self.position.get(&i).ok_or_else(|| format!("defined by {i}, which is not in the layout"))?;
                Ok((b, Some(pos)))
            }
            ValueDef::Param(b, index) => {
                if f.blocks.get(b).and_then(|d| d.params.get(index as usize)) != Some(&v) {
                    return Err(format!("which is not parameter {index} of {b}"));
                }
                if !self.in_layout.contains_key(&b) {
                    return Err(format!("a parameter of {b}, which is not in the layout"));
                }
                Ok((b, None))
            }
            ValueDef::Const(_) | ValueDef::Global(_) => Err("which is not defined in a block".into()),
        }
    }

    fn check_operands(&mut self, dominators: &DomTree, block: Block, pos: usize, inst: Inst) {
        let f = self.function;
        let operands = f.insts[inst].operands();
        for v in operands {
            let Some(data) = f.values.get(v) else {
                self.error(format!("{inst} uses {v}, which does not exist"));
                continue;
            };
            let reachable = dominators.is_reachable(block);
            match data.def {
                ValueDef::Result(_) | ValueDef::Param(..) => match self.definition_site(v, data.def) {
                    Err(problem) => self.error(format!("{inst} uses {v}, {problem}")),
                    Ok((def_block, def_pos)) => {
                        let ok = match def_pos {
                            Some(def_pos) if def_block == block => def_pos < pos,
                            _ => !reachable || dominators.dominates(def_block, block),
                        };
                        if !ok {
                            let what = if def_pos.is_some() { "defined in" } else { "parameter of" };
                            self.error(format!(
                                "{v} ({what} {def_block}) does not dominate its use by {inst} in {block}"
                            ));
                        }
                    }
                },
                ValueDef::Const(c) => match self.module.constants.get(c) {
                    Some(ConstData::Address { .. }) => {
                        self.error(format!("{v} stands for address constant {c}, which only initializers may use"))
                    }
                    Some(konst) if konst.ty() == data.ty => {}
                    Some(_) => self.error(format!("{v} stands for constant {c} but has another type")),
                    None => self.error(format!("{v} stands for constant {c}, which does not exist")),
                },
                ValueDef::Global(g) => match self.module.globals.get(g) {
                    Some(var) => {
                        let matches = matches!(self.type_data(data.ty),
                            Some(TypeData::Pointer { space, pointee }) if *space == var.space && *pointee == var.ty);
                        if !matches {
                            self.error(format!("{v}, the address of {g}, does not have type pointer to its type"));
                        }
                    }
                    None => self.error(format!("{v} stands for variable {g}, which does not exist")),
                },
            }
        }
    }

    fn check_result(&mut self, inst: Inst) {
        let f = self.function;
        let result = f.inst_result[inst];
        if let Some(v) = result {
            match f.values.get(v) {
                Some(d) if d.def == ValueDef::Result(inst) => {}
                _ => self.error(format!("the result {v} of {inst} is not defined as its result")),
            }
        }
        match (produces_value(self.module, &f.insts[inst]), result) {
            (Some(true), None) => {
                self.error(format!("{inst} ({:?}) produces a value but has no result", f.insts[inst]))
            }
            (Some(false), Some(v)) => {
                self.error(format!("{inst} ({:?}) produces no value but has result {v}", f.insts[inst]))
            }
            _ => {}
        }
    }

    fn scalar(&self, t: Type) -> Option<&'m TypeData> {
        match self.type_data(t)? {
            TypeData::Vector { elem, .. } => self.type_data(*elem),
            other => Some(other),
        }
    }

    fn lanes(&self, t: Type) -> u32 {
        match self.type_data(t) {
            Some(TypeData::Vector { len, .. }) => *len,
            _ => 1,
        }
    }

    fn is_int(&self, t: Type) -> bool {
        matches!(self.scalar(t), Some(TypeData::Int { .. }))
    }
    fn is_float(&self, t: Type) -> bool {
        matches!(self.scalar(t), Some(TypeData::Float { .. }))
    }
    fn is_bool(&self, t: Type) -> bool {
        matches!(self.scalar(t), Some(TypeData::Bool))
    }
    fn is_pointer(&self, t: Type) -> bool {
        matches!(self.type_data(t), Some(TypeData::Pointer { .. }))
    }
    fn is_scalar_int(&self, t: Type) -> bool {
        matches!(self.type_data(t), Some(TypeData::Int { .. }))
    }
    fn pointee(&self, t: Type) -> Option<(AddressSpace, Type)> {
        match self.type_data(t)? {
            TypeData::Pointer { space, pointee } => Some((*space, *pointee)),
            _ => None,
        }
    }
    /// A bool, or a vector of bool, with `lanes` lanes.
    fn is_bool_with_lanes(&self, t: Type, lanes: u32) -> bool {
        self.is_bool(t)
            && self.lanes(t) == lanes
            && (lanes == 1) == !matches!(self.type_data(t), Some(TypeData::Vector { .. }))
    }

    fn const_int(&self, v: Value) -> Option<u64> {
        match self.function.values.get(v)?.def {
            ValueDef::Const(c) => match self.module.constants.get(c)? {
                ConstData::Int { bits, .. } => Some(*bits),
                ConstData::Null { .. } => Some(0),
                _ => None,
            },
            _ => None,
        }
    }

    /// The type reached from `ty` by constant member indices (struct, array, vector).
    fn walk_members(&self, ty: Type, indices: &[u32]) -> Option<Type> {
        let mut current = ty;
        for &index in indices {
            current = match self.type_data(current)? {
                TypeData::Struct { fields, .. } => *fields.get(index as usize)?,
                TypeData::Array { elem, len } => {
                    if u64::from(index) >= *len {
                        return None;
                    }
                    *elem
                }
                TypeData::Vector { elem, len } => {
                    if index >= *len {
                        return None;
                    }
                    *elem
                }
                _ => return None,
            };
        }
        Some(current)
    }

    fn check_block_call(&mut self, inst: Inst, call: &BlockCall) {
        let Some(target) = self.function.blocks.get(call.block) else {
            self.error(format!("{inst} branches to invalid block {}", call.block));
            return;
        };
        if target.params.len() != call.args.len() {
            self.error(format!(
                "{inst} passes {} arguments to {}, which takes {}",
                call.args.len(),
                call.block,
                target.params.len()
            ));
            return;
        }
        for (index, (arg, param)) in call.args.iter().zip(&target.params).enumerate() {
            if let (Some(a), Some(p)) = (self.ty(*arg), self.ty(*param)) {
                if a != p {
                    self.error(format!("{inst}: argument {index} to {} has type {a}, the parameter {p}", call.block));
                }
            }
        }
    }

    fn check_types(&mut self, inst: Inst) {
        let f = self.function;
        let data = &f.insts[inst];
        // Skip the type rules when an operand is broken (already reported).
        if data.operands().iter().any(|v| self.ty(*v).is_none()) {
            return;
        }
        let result = f.inst_result[inst].and_then(|v| self.ty(v));
        let ty = |v: &Value| self.ty(*v).unwrap_or(Type(u32::MAX));
        let mut problems: Vec<String> = Vec::new();
        let mut expect = |ok: bool, what: &str| {
            if !ok {
                problems.push(what.to_string());
            }
        };
        use InstData::*;
        match data {
            Binary { op, lhs, rhs } => {
                let t = ty(lhs);
                expect(ty(rhs) == t, "binary operands have different types");
                expect(result == Some(t), "binary result type differs from the operands'");
                let class_ok = match op {
                    BinaryOp::FAdd
                    | BinaryOp::FSub
                    | BinaryOp::FMul
                    | BinaryOp::FDiv
                    | BinaryOp::FRem
                    | BinaryOp::FMod => self.is_float(t),
                    BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalEq | BinaryOp::LogicalNe => {
                        self.is_bool(t)
                    }
                    _ => self.is_int(t),
                };
                expect(class_ok, "binary operand types do not suit the operation");
            }
            Unary { op, arg } => {
                let t = ty(arg);
                match op {
                    UnaryOp::INeg | UnaryOp::Not | UnaryOp::BitCount | UnaryOp::BitReverse => {
                        expect(self.is_int(t), "integer operand expected");
                        expect(result == Some(t), "result type differs from the operand's");
                    }
                    UnaryOp::FNeg => {
                        expect(self.is_float(t), "float operand expected");
                        expect(result == Some(t), "result type differs from the operand's");
                    }
                    UnaryOp::LogicalNot => {
                        expect(self.is_bool(t), "bool operand expected");
                        expect(result == Some(t), "result type differs from the operand's");
                    }
                    UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::IsNormal | UnaryOp::SignBitSet => {
                        expect(self.is_float(t), "float operand expected");
                        let lanes = self.lanes(t);
                        expect(
                            result.is_some_and(|r| self.is_bool_with_lanes(r, lanes)),
                            "bool result of the operand's lane count expected",
                        );
                    }
                    UnaryOp::Any | UnaryOp::All => {
                        expect(self.is_bool(t), "bool operand expected");
                        expect(result.is_some_and(|r| self.is_bool_with_lanes(r, 1)), "scalar bool result expected");
                    }
                }
            }
            Compare { op, lhs, rhs } => {
                let t = ty(lhs);
                expect(ty(rhs) == t, "compared operands have different types");
                let lanes = self.lanes(t);
                expect(
                    result.is_some_and(|r| self.is_bool_with_lanes(r, lanes)),
                    "compare result must be bool with the operands' lane count",
                );
                let class_ok = match op {
                    CmpOp::IEq | CmpOp::INe => self.is_int(t) || self.is_bool(t) || self.is_pointer(t),
                    CmpOp::ULt | CmpOp::ULe | CmpOp::UGt | CmpOp::UGe => self.is_int(t) || self.is_pointer(t),
                    CmpOp::SLt | CmpOp::SLe | CmpOp::SGt | CmpOp::SGe => self.is_int(t),
                    _ => self.is_float(t),
                };
                expect(class_ok, "compared operand types do not suit the comparison");
            }
            Select { cond, if_true, if_false } => {
                let t = ty(if_true);
                expect(ty(if_false) == t, "select operands have different types");
                expect(result == Some(t), "select result type differs from its operands'");
                let c = ty(cond);
                let cond_ok =
                    self.is_bool_with_lanes(c, 1) || (self.is_bool_with_lanes(c, self.lanes(t)) && self.lanes(t) > 1);
                expect(cond_ok, "select condition must be a bool or a bool vector of the operands' lane count");
            }
            Group { scope, op, args } => {
                expect(
                    matches!(scope, Scope::WorkGroup | Scope::SubGroup),
                    "a collective of neither a work-group nor a sub-group",
                );
                let t = args.first().map(&ty);
                match (op, &args[..]) {
                    (GroupOp::Reduce(a) | GroupOp::InclusiveScan(a) | GroupOp::ExclusiveScan(a), [x]) => {
                        let t = ty(x);
                        expect(result == Some(t), "a reduction's or scan's result type differs from its operand's");
                        expect(
                            self.lanes(t) == 1 && !self.is_pointer(t),
                            "a reduction or scan of a value that is not a scalar",
                        );
                        let class_ok = match a {
                            GroupArith::FAdd | GroupArith::FMul | GroupArith::FMin | GroupArith::FMax => {
                                self.is_float(t)
                            }
                            GroupArith::LogicalAnd | GroupArith::LogicalOr | GroupArith::LogicalXor => self.is_bool(t),
                            _ => self.is_int(t),
                        };
                        expect(class_ok, "the operand's type does not suit the reduction or scan");
                    }
                    (GroupOp::Broadcast, [_, id]) => {
                        expect(result == t, "a broadcast's result type differs from its operand's");
                        expect(
                            self.is_int(ty(id)) && self.lanes(ty(id)) <= 3,
                            "a broadcast's local id is not 1-3 integers",
                        );
                    }
                    (GroupOp::ClusteredReduce(_), [x, size]) => {
                        let t = ty(x);
                        expect(result == Some(t), "a clustered reduction's result type differs from its operand's");
                        expect(self.is_scalar_int(ty(size)), "a cluster size that is not an integer");
                    }
                    (GroupOp::Shuffle | GroupOp::ShuffleXor | GroupOp::ShuffleUp | GroupOp::ShuffleDown, [_, id]) => {
                        expect(result == t, "a shuffle's result type differs from its operand's");
                        expect(self.is_scalar_int(ty(id)), "a shuffle's index or delta is not an integer");
                    }
                    (GroupOp::BroadcastFirst, [_]) => {
                        expect(result == t, "a broadcast's result type differs from its operand's")
                    }
                    (GroupOp::AllEqual, [_]) => {
                        expect(result.is_some_and(|r| self.is_bool_with_lanes(r, 1)), "all_equal must give a bool")
                    }
                    (GroupOp::Elect, []) => {
                        expect(result.is_some_and(|r| self.is_bool_with_lanes(r, 1)), "elect must give a bool")
                    }
                    (GroupOp::Ballot, [x]) => {
                        expect(self.is_bool_with_lanes(ty(x), 1), "a ballot of a value that is not a bool");
                        expect(
                            result.is_some_and(|r| self.is_int(r) && self.lanes(r) == 4),
                            "a ballot must give four integers",
                        );
                    }
                    (GroupOp::Any | GroupOp::All, [x]) => {
                        expect(self.is_bool_with_lanes(ty(x), 1), "any / all of a value that is not a bool");
                        expect(result.is_some_and(|r| self.is_bool_with_lanes(r, 1)), "any / all must give a bool");
                    }
                    _ => expect(false, "a collective with the wrong number of operands"),
                }
                if *scope == Scope::WorkGroup {
                    let work_group_op = matches!(
                        op,
                        GroupOp::Reduce(_)
                            | GroupOp::InclusiveScan(_)
                            | GroupOp::ExclusiveScan(_)
                            | GroupOp::Broadcast
                            | GroupOp::Any
                            | GroupOp::All
                    );
                    expect(work_group_op, "a sub-group-only collective at work-group scope");
                }
            }
            GenericSpace { ptr } => {
                let generic =
                    matches!(self.type_data(ty(ptr)), Some(TypeData::Pointer { space: AddressSpace::Generic, .. }));
                expect(generic, "generic_space of a value that is not a generic pointer");
                let int32 = result.is_some_and(|r| matches!(self.type_data(r), Some(TypeData::Int { bits: 32 })));
                expect(int32, "generic_space's result must be a 32-bit integer");
            }
            AnyActive { cond } => {
                expect(self.is_bool_with_lanes(ty(cond), 1), "any_active of a value that is not a bool");
                expect(result.is_some_and(|r| self.is_bool_with_lanes(r, 1)), "any_active's result must be a bool");
            }
            Convert { op, arg, .. } => {
                let from = ty(arg);
                match result {
                    None => expect(false, "conversion without a result"),
                    Some(to) => {
                        // as_type reinterprets bits between any shapes of equal size.
                        expect(
                            *op == ConvertOp::Bitcast || self.lanes(from) == self.lanes(to),
                            "conversion changes the lane count",
                        );
                        let ok = match op {
                            ConvertOp::UConvert | ConvertOp::SConvert | ConvertOp::SatSToU | ConvertOp::SatUToS => {
                                self.is_int(from) && self.is_int(to)
                            }
                            ConvertOp::FConvert => self.is_float(from) && self.is_float(to),
                            ConvertOp::FToU | ConvertOp::FToS => self.is_float(from) && self.is_int(to),
                            ConvertOp::UToF | ConvertOp::SToF => self.is_int(from) && self.is_float(to),
                            ConvertOp::Bitcast => self.module.types.size_of(from) == self.module.types.size_of(to),
                            ConvertOp::PtrToInt => self.is_pointer(from) && self.is_scalar_int(to),
                            ConvertOp::IntToPtr => self.is_scalar_int(from) && self.is_pointer(to),
                            ConvertOp::PtrCast => self.is_pointer(from) && self.is_pointer(to),
                        };
                        expect(ok, "conversion between types it does not apply to");
                    }
                }
            }
            Variable { ty: var_ty, init, align } => {
                let expected =
                    self.module.types.lookup(&TypeData::Pointer { space: AddressSpace::Private, pointee: *var_ty });
                expect(
                    expected.is_some() && result == expected,
                    "a variable's result must be a private pointer to its type",
                );
                if let Some(init) = init {
                    expect(ty(init) == *var_ty, "a variable's initializer has another type");
                }
                expect(*align == 0 || align.is_power_of_two(), "a variable's alignment is not a power of two");
            }
            Load { ptr, align, .. } => {
                match self.pointee(ty(ptr)) {
                    Some((_, pointee)) => expect(result == Some(pointee), "load result type differs from the pointee"),
                    None => expect(false, "load from a non-pointer"),
                }
                expect(align.is_power_of_two(), "load alignment is not a power of two");
            }
            Store { ptr, value, align, .. } => {
                match self.pointee(ty(ptr)) {
                    Some((_, pointee)) => expect(ty(value) == pointee, "stored value type differs from the pointee"),
                    None => expect(false, "store to a non-pointer"),
                }
                expect(align.is_power_of_two(), "store alignment is not a power of two");
            }
            CopyMemory { dst, src, size, align } => {
                expect(self.is_pointer(ty(dst)) && self.is_pointer(ty(src)), "memory copy between non-pointers");
                expect(self.is_scalar_int(ty(size)), "memory copy size is not an integer");
                expect(align.is_power_of_two(), "memory copy alignment is not a power of two");
            }
            AccessChain { base, element, indices, .. } => {
                match self.pointee(ty(base)) {
                    None => expect(false, "access chain base is not a pointer"),
                    Some((space, pointee)) => {
                        if let Some(e) = element {
                            expect(self.is_scalar_int(ty(e)), "access chain element index is not an integer");
                        }
                        let mut current = Some(pointee);
                        for index in indices {
                            expect(self.is_scalar_int(ty(index)), "access chain index is not an integer");
                            current = current.and_then(|c| match self.type_data(c)? {
                                TypeData::Struct { fields, .. } => {
                                    let member = self.const_int(*index)?;
                                    fields.get(usize::try_from(member).ok()?).copied()
                                }
                                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => Some(*elem),
                                _ => None,
                            });
                        }
                        match current {
                        None => expect(false, "access chain indices do not fit the pointee type (struct members need constant indices)"),
                        Some(reached) => {
                            let expected = self.module.types.lookup(&TypeData::Pointer { space, pointee: reached });
                            expect(expected.is_some() && result == expected, "access chain result is not a pointer to the member reached");
                        }
                    }
                    }
                }
            }
            ExtractElement { vector, index } => {
                match self.type_data(ty(vector)) {
                    Some(TypeData::Vector { elem, .. }) => {
                        expect(result == Some(*elem), "extracted element type differs")
                    }
                    _ => expect(false, "extract element from a non-vector"),
                }
                expect(self.is_scalar_int(ty(index)), "element index is not an integer");
            }
            InsertElement { vector, value, index } => {
                let vt = ty(vector);
                match self.type_data(vt) {
                    Some(TypeData::Vector { elem, .. }) => expect(ty(value) == *elem, "inserted element type differs"),
                    _ => expect(false, "insert element into a non-vector"),
                }
                expect(result == Some(vt), "insert element result type differs from the vector's");
                expect(self.is_scalar_int(ty(index)), "element index is not an integer");
            }
            Shuffle { a, b, mask } => match (self.type_data(ty(a)), self.type_data(ty(b))) {
                (Some(TypeData::Vector { elem: ea, len: la }), Some(TypeData::Vector { elem: eb, len: lb })) => {
                    expect(ea == eb, "shuffled vectors have different element types");
                    let total = la + lb;
                    expect(mask.iter().flatten().all(|m| *m < total), "shuffle mask selects beyond its operands");
                    let expected = self.module.types.lookup(&TypeData::Vector { elem: *ea, len: mask.len() as u32 });
                    expect(
                        expected.is_some() && result == expected,
                        "shuffle result is not a vector of the mask's length",
                    );
                }
                _ => expect(false, "shuffle of non-vectors"),
            },
            ExtractValue { aggregate, indices } => {
                let reached = self.walk_members(ty(aggregate), indices);
                expect(
                    reached.is_some() && result == reached,
                    "extract value indices or result type do not fit the aggregate",
                );
            }
            InsertValue { aggregate, value, indices } => {
                let at = ty(aggregate);
                let reached = self.walk_members(at, indices);
                expect(reached == Some(ty(value)), "inserted value type differs from the member's");
                expect(result == Some(at), "insert value result type differs from the aggregate's");
            }
            Construct { parts } => match result.and_then(|r| self.type_data(r)) {
                Some(TypeData::Vector { elem, len }) => {
                    let mut lanes = 0u32;
                    let mut ok = true;
                    for p in parts {
                        let pt = ty(p);
                        match self.type_data(pt) {
                            Some(TypeData::Vector { elem: e, len: l }) if e == elem => lanes += l,
                            _ if pt == *elem => lanes += 1,
                            _ => ok = false,
                        }
                    }
                    expect(ok && lanes == *len, "vector construction parts do not fill the vector");
                }
                Some(TypeData::Array { elem, len }) => {
                    expect(
                        parts.len() as u64 == *len && parts.iter().all(|p| ty(p) == *elem),
                        "array construction parts do not match",
                    );
                }
                Some(TypeData::Struct { fields, .. }) => {
                    let part_types: Vec<Type> = parts.iter().map(ty).collect();
                    expect(&part_types == fields, "struct construction parts do not match its fields");
                }
                _ => expect(false, "construct of a non-composite type"),
            },
            Call { func, args } => match self.module.functions.get(*func) {
                None => expect(false, "call of a function that does not exist"),
                Some(callee) => {
                    let arg_types: Vec<Type> = args.iter().map(ty).collect();
                    expect(arg_types == callee.params, "call arguments do not match the callee's parameters");
                    let returns_void = matches!(self.type_data(callee.ret), Some(TypeData::Void));
                    expect(
                        returns_void || result == Some(callee.ret),
                        "call result type differs from the callee's return type",
                    );
                }
            },
            ExtInst { .. } => {}
            WorkItem { .. } => {
                expect(result.is_some_and(|r| self.is_int(r)), "work-item query result must be an integer (vector)");
            }
            Barrier { .. } | Fence { .. } | Unreachable => {}
            // Checked against the kernel's plan by `validate_gen`.
            GenBlock { .. } | GenCount { .. } => {}
            Atomic { op, ptr, value, comparator, .. } => match self.pointee(ty(ptr)) {
                None => expect(false, "atomic operation on a non-pointer"),
                Some((_, pointee)) => {
                    expect(
                        self.is_scalar_int(pointee) || matches!(self.type_data(pointee), Some(TypeData::Float { .. })),
                        "atomic operation on a non-scalar",
                    );
                    let needs_value = !matches!(op, AtomicOp::Load | AtomicOp::IIncrement | AtomicOp::IDecrement);
                    expect(value.is_some() == needs_value, "atomic operand present or missing wrongly");
                    expect(
                        comparator.is_some() == (*op == AtomicOp::CompareExchange),
                        "atomic comparator present or missing wrongly",
                    );
                    if let Some(v) = value {
                        expect(ty(v) == pointee, "atomic operand type differs from the pointee");
                    }
                    let float = matches!(self.type_data(pointee), Some(TypeData::Float { .. }));
                    if matches!(op, AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax) {
                        expect(float, "a float atomic on an integer");
                    }
                    if let Some(c) = comparator {
                        expect(ty(c) == pointee, "atomic comparator type differs from the pointee");
                    }
                    if *op != AtomicOp::Store {
                        expect(result == Some(pointee), "atomic result type differs from the pointee");
                    }
                }
            },
            Image { op, image, sampler, coord, texel } => {
                let is_image =
                    |t: Type| matches!(self.type_data(t), Some(TypeData::Opaque { name }) if name.starts_with("image"));
                let is_sampler =
                    |t: Type| matches!(self.type_data(t), Some(TypeData::Opaque { name }) if name == "sampler_t");
                expect(is_image(ty(image)), "image operand is not an image");
                let block = matches!(op, ImageOp::BlockRead { .. } | ImageOp::BlockWrite { .. });
                let needs_coord = block || matches!(op, ImageOp::Sample | ImageOp::Read | ImageOp::Write);
                let writes = matches!(op, ImageOp::Write | ImageOp::BlockWrite { .. });
                expect(sampler.is_some() == (*op == ImageOp::Sample), "image sampler present or missing wrongly");
                expect(coord.is_some() == needs_coord, "image coordinate present or missing wrongly");
                expect(texel.is_some() == writes, "image texel present or missing wrongly");
                if let Some(s) = sampler {
                    expect(is_sampler(ty(s)), "image sampler is not a sampler_t");
                }
                let int32 = |t: Type| matches!(self.scalar(t), Some(TypeData::Int { bits: 32 }));
                // A 4-vector of f32 or i32, or a depth image's f32.
                let texel_ty = |t: Type| {
                    matches!(self.type_data(t), Some(TypeData::Float { bits: 32 }))
                        || self.lanes(t) == 4
                            && matches!(self.type_data(t), Some(TypeData::Vector { .. }))
                            && (int32(t) || matches!(self.scalar(t), Some(TypeData::Float { bits: 32 })))
                };
                if let Some(c) = coord {
                    let ct = ty(c);
                    let float_ok =
                        *op == ImageOp::Sample && matches!(self.scalar(ct), Some(TypeData::Float { bits: 32 }));
                    expect(
                        int32(ct) || float_ok,
                        "image coordinate is not a 32-bit integer (or float) scalar or vector",
                    );
                    expect(self.lanes(ct) <= 4, "image coordinate has more than 4 components");
                }
                if let Some(t) = texel.as_ref().filter(|_| !block) {
                    expect(texel_ty(ty(t)), "image texel is not a 4-vector of f32 or i32 or an f32");
                }
                match op {
                    ImageOp::Sample | ImageOp::Read => expect(
                        result.is_some_and(texel_ty),
                        "image read result is not a 4-vector of f32 or i32 or an f32",
                    ),
                    ImageOp::Write => expect(result.is_none(), "image write with a result"),
                    ImageOp::BlockRead { bytes } | ImageOp::BlockWrite { bytes } => {
                        let int_of = |t: Type| matches!(self.type_data(t), Some(TypeData::Int { bits }) if u32::from(*bits) == u32::from(*bytes) * 8);
                        expect(matches!(bytes, 1 | 2 | 4 | 8), "image block access of other than 1, 2, 4 or 8 bytes");
                        let int2 = coord.as_ref().is_some_and(|c| int32(ty(c)) && self.lanes(ty(c)) == 2);
                        expect(int2, "image block access's coordinate is not an int2");
                        let data =
                            if matches!(op, ImageOp::BlockRead { .. }) { result } else { texel.as_ref().map(ty) };
                        expect(data.is_some_and(int_of), "image block access's data is not an integer of its bytes");
                    }
                    ImageOp::QuerySize => expect(
                        result.is_some_and(|r| self.is_int(r) && self.lanes(r) <= 4),
                        "image size query result is not an integer scalar or vector",
                    ),
                    ImageOp::QueryOrder | ImageOp::QueryFormat => expect(
                        result.is_some_and(|r| matches!(self.type_data(r), Some(TypeData::Int { bits: 32 }))),
                        "image order/format query result is not a 32-bit integer",
                    ),
                }
            }
            Jump { .. } | BarrierResume { .. } => {}
            Branch { cond, .. } => expect(self.is_bool_with_lanes(ty(cond), 1), "branch condition is not a bool"),
            Switch { selector, .. } => expect(self.is_scalar_int(ty(selector)), "switch selector is not an integer"),
            Return { value } => {
                let returns_void = matches!(self.type_data(f.ret), Some(TypeData::Void));
                match value {
                    None => expect(returns_void, "return without a value from a non-void function"),
                    Some(v) => {
                        expect(!returns_void && ty(v) == f.ret, "returned value type differs from the return type")
                    }
                }
            }
        }
        for problem in problems {
            self.error(format!("{inst} ({:?}): {problem}", f.insts[inst]));
        }
        for call in f.insts[inst].successors() {
            self.check_block_call(inst, call);
        }
    }
}
