//! SPIR-V function bodies -> IR functions.
//!
//! Blocks are translated in reverse post-order of the CFG (so every definition is seen
//! before its uses, whatever the layout), unreachable blocks are dropped, OpPhi becomes
//! block parameters and each branch passes the incoming values for its edge.
//!
//! Conventions the back end can rely on:
//! - `ExtractValue` / `InsertValue` only step through structs and arrays; a vector
//!   component is always reached with `ExtractElement` / `InsertElement` (constant `i32`
//!   index for OpCompositeExtract/Insert).
//! - Shift amounts have the type of the shifted value (converted if SPIR-V had another width).
//! - OpSatConvertSToU / OpSatConvertUToS become `ConvertOp::SatSToU` / `SatUToS` (with
//!   `saturate` set); the SaturatedConversion decoration sets `saturate` on other converts.
//! - OpenCL.std literal operands (vloadn's n, the rounding mode of vstore_half_r ...) are
//!   `i32` constants among the `ExtInst` arguments, in grammar order.

use super::spirv::{
    id_operand, is_vector_query, literal_operand, malformed, operand, result_id, result_type_id, unsupported,
    unsupported_instruction, ExtSet, ModuleBuilder, ModuleDef, SpirvInfo, TResult,
};
use crate::gen_abi::SourceLoc;
use crate::ir::{
    AtomicOp, BinaryOp, Block, BlockCall, CmpOp, ConvertOp, Function, ImageOp, InstData, Rounding, Scope, Type,
    TypeData, UnaryOp, Value, ValueDef, WorkItemQuery,
};
use crate::kernel_info::AddressSpace;
use rspirv::dr::{self, Operand};
use rspirv::grammar::{OperandKind, OperandQuantifier};
use rspirv::spirv::{self, Op, Word};
use std::collections::{HashMap, HashSet};

mod groups;
mod intel_sub_groups;

/// Memory semantics of the barrier wait_group_events becomes: SequentiallyConsistent,
/// WorkgroupMemory and CrossWorkgroupMemory (as barrier(CLK_LOCAL_MEM_FENCE |
/// CLK_GLOBAL_MEM_FENCE)).
const WAIT_EVENTS_SEMANTICS: u32 = 0x10 | 0x100 | 0x200;

/// What a function-local id stands for.
#[derive(Debug, Clone, Copy)]
enum Local {
    Value(Value),
    /// A pointer to one component of a built-in vector variable (an access chain into it).
    BuiltinElement {
        query: WorkItemQuery,
        vector_ty: Type,
        index: Value,
    },
    /// The result of a dropped instruction (debug information); using it is an error.
    Ignored,
    /// An OpSampledImage: its image and sampler, folded into the sampling instruction.
    SampledImage {
        image: Value,
        sampler: Value,
    },
}

struct BodyTranslator<'i, 'a, 'b> {
    info: &'i SpirvInfo<'a>,
    builder: &'b mut ModuleBuilder,
    spv_fn: &'a dr::Function,
    function: Function,
    /// Label id -> index in `spv_fn.blocks`.
    block_index: HashMap<Word, usize>,
    /// Label id -> IR block (reachable blocks only).
    blocks: HashMap<Word, Block>,
    /// Label id -> the OpPhi instructions of that block, in order.
    phis: HashMap<Word, Vec<&'a dr::Instruction>>,
    locals: HashMap<Word, Local>,
    /// Every result id of the function, to tell "used before defined" from "undefined".
    function_ids: HashSet<Word>,
    const_values: HashMap<crate::ir::Const, Value>,
    global_values: HashMap<crate::ir::GlobalVar, Value>,
    current: Option<Block>,
    current_label: Word,
    /// The source location of the last OpLine in the current block (`None` after OpNoLine
    /// and at the start of each block), given to every instruction emitted.
    current_loc: Option<SourceLoc>,
}

/// Translates the body of `spv_fn` into the declared function `func`.
pub fn translate_function(
    info: &SpirvInfo<'_>,
    builder: &mut ModuleBuilder,
    func: crate::ir::Func,
    spv_fn: &dr::Function,
) -> TResult<()> {
    let declared = &builder.module.functions[func];
    let function = Function::new(declared.name.clone(), declared.kind, declared.params.clone(), declared.ret);
    let mut translator = BodyTranslator {
        info,
        builder,
        spv_fn,
        function,
        block_index: HashMap::new(),
        blocks: HashMap::new(),
        phis: HashMap::new(),
        locals: HashMap::new(),
        function_ids: HashSet::new(),
        const_values: HashMap::new(),
        global_values: HashMap::new(),
        current: None,
        current_label: 0,
        current_loc: None,
    };
    translator.run().map_err(|mut e| {
        e.message = format!("in function {}: {}", translator.function.name, e.message);
        e
    })?;
    let function = translator.function;
    builder.module.functions[func] = function;
    Ok(())
}

fn binary_op(op: Op) -> Option<BinaryOp> {
    Some(match op {
        Op::IAdd => BinaryOp::IAdd,
        Op::ISub => BinaryOp::ISub,
        Op::IMul => BinaryOp::IMul,
        Op::UDiv => BinaryOp::UDiv,
        Op::SDiv => BinaryOp::SDiv,
        Op::UMod => BinaryOp::URem,
        Op::SRem => BinaryOp::SRem,
        Op::SMod => BinaryOp::SMod,
        Op::FAdd => BinaryOp::FAdd,
        Op::FSub => BinaryOp::FSub,
        Op::FMul => BinaryOp::FMul,
        Op::FDiv => BinaryOp::FDiv,
        Op::FRem => BinaryOp::FRem,
        Op::FMod => BinaryOp::FMod,
        Op::ShiftLeftLogical => BinaryOp::Shl,
        Op::ShiftRightLogical => BinaryOp::LShr,
        Op::ShiftRightArithmetic => BinaryOp::AShr,
        Op::BitwiseAnd => BinaryOp::And,
        Op::BitwiseOr => BinaryOp::Or,
        Op::BitwiseXor => BinaryOp::Xor,
        Op::LogicalAnd => BinaryOp::LogicalAnd,
        Op::LogicalOr => BinaryOp::LogicalOr,
        Op::LogicalEqual => BinaryOp::LogicalEq,
        Op::LogicalNotEqual => BinaryOp::LogicalNe,
        _ => return None,
    })
}

fn unary_op(op: Op) -> Option<UnaryOp> {
    Some(match op {
        Op::SNegate => UnaryOp::INeg,
        Op::FNegate => UnaryOp::FNeg,
        Op::Not => UnaryOp::Not,
        Op::LogicalNot => UnaryOp::LogicalNot,
        Op::BitCount => UnaryOp::BitCount,
        Op::BitReverse => UnaryOp::BitReverse,
        Op::IsNan => UnaryOp::IsNan,
        Op::IsInf => UnaryOp::IsInf,
        Op::IsFinite => UnaryOp::IsFinite,
        Op::IsNormal => UnaryOp::IsNormal,
        Op::SignBitSet => UnaryOp::SignBitSet,
        Op::Any => UnaryOp::Any,
        Op::All => UnaryOp::All,
        _ => return None,
    })
}

fn compare_op(op: Op) -> Option<CmpOp> {
    Some(match op {
        Op::IEqual | Op::PtrEqual => CmpOp::IEq,
        Op::INotEqual | Op::PtrNotEqual => CmpOp::INe,
        Op::UGreaterThan => CmpOp::UGt,
        Op::UGreaterThanEqual => CmpOp::UGe,
        Op::ULessThan => CmpOp::ULt,
        Op::ULessThanEqual => CmpOp::ULe,
        Op::SGreaterThan => CmpOp::SGt,
        Op::SGreaterThanEqual => CmpOp::SGe,
        Op::SLessThan => CmpOp::SLt,
        Op::SLessThanEqual => CmpOp::SLe,
        Op::FOrdEqual => CmpOp::FOrdEq,
        Op::FOrdNotEqual | Op::LessOrGreater => CmpOp::FOrdNe,
        Op::FOrdLessThan => CmpOp::FOrdLt,
        Op::FOrdLessThanEqual => CmpOp::FOrdLe,
        Op::FOrdGreaterThan => CmpOp::FOrdGt,
        Op::FOrdGreaterThanEqual => CmpOp::FOrdGe,
        Op::FUnordEqual => CmpOp::FUnordEq,
        Op::FUnordNotEqual => CmpOp::FUnordNe,
        Op::FUnordLessThan => CmpOp::FUnordLt,
        Op::FUnordLessThanEqual => CmpOp::FUnordLe,
        Op::FUnordGreaterThan => CmpOp::FUnordGt,
        Op::FUnordGreaterThanEqual => CmpOp::FUnordGe,
        Op::Ordered => CmpOp::FOrdered,
        Op::Unordered => CmpOp::FUnordered,
        _ => return None,
    })
}

fn convert_op(op: Op) -> Option<ConvertOp> {
    Some(match op {
        Op::UConvert => ConvertOp::UConvert,
        Op::SConvert => ConvertOp::SConvert,
        Op::FConvert => ConvertOp::FConvert,
        Op::ConvertFToU => ConvertOp::FToU,
        Op::ConvertFToS => ConvertOp::FToS,
        Op::ConvertUToF => ConvertOp::UToF,
        Op::ConvertSToF => ConvertOp::SToF,
        Op::ConvertPtrToU => ConvertOp::PtrToInt,
        Op::ConvertUToPtr => ConvertOp::IntToPtr,
        Op::PtrCastToGeneric | Op::GenericCastToPtr => ConvertOp::PtrCast,
        Op::SatConvertSToU => ConvertOp::SatSToU,
        Op::SatConvertUToS => ConvertOp::SatUToS,
        _ => return None,
    })
}

/// Atomic read-modify-write instructions with operands (pointer, scope, semantics, value).
fn atomic_rmw_op(op: Op) -> Option<AtomicOp> {
    Some(match op {
        Op::AtomicExchange => AtomicOp::Exchange,
        Op::AtomicIAdd => AtomicOp::IAdd,
        Op::AtomicISub => AtomicOp::ISub,
        Op::AtomicSMin => AtomicOp::SMin,
        Op::AtomicUMin => AtomicOp::UMin,
        Op::AtomicSMax => AtomicOp::SMax,
        Op::AtomicUMax => AtomicOp::UMax,
        Op::AtomicAnd => AtomicOp::And,
        Op::AtomicOr => AtomicOp::Or,
        Op::AtomicXor => AtomicOp::Xor,
        Op::AtomicFAddEXT => AtomicOp::FAdd,
        Op::AtomicFMinEXT => AtomicOp::FMin,
        Op::AtomicFMaxEXT => AtomicOp::FMax,
        _ => return None,
    })
}

fn rounding(mode: spirv::FPRoundingMode) -> Rounding {
    match mode {
        spirv::FPRoundingMode::RTE => Rounding::NearestEven,
        spirv::FPRoundingMode::RTZ => Rounding::TowardZero,
        spirv::FPRoundingMode::RTP => Rounding::TowardPositive,
        spirv::FPRoundingMode::RTN => Rounding::TowardNegative,
    }
}

/// The branch targets of a terminator.
fn terminator_targets(inst: &dr::Instruction) -> TResult<Vec<Word>> {
    Ok(match inst.class.opcode {
        Op::Branch => vec![id_operand(inst, 0)?],
        Op::BranchConditional => vec![id_operand(inst, 1)?, id_operand(inst, 2)?],
        Op::Switch => {
            let mut targets = vec![id_operand(inst, 1)?];
            let mut index = 3;
            while index < inst.operands.len() {
                targets.push(id_operand(inst, index)?);
                index += 2;
            }
            targets
        }
        _ => Vec::new(),
    })
}

/// Memory operands (alignment, volatile) of OpLoad / OpStore / OpCopyMemory*, from operand
/// `start` on. With two memory operand sets (target and source), the smaller alignment wins.
fn memory_access(inst: &dr::Instruction, start: usize) -> (Option<u32>, bool) {
    let mut align: Option<u32> = None;
    let mut volatile = false;
    let mut index = start;
    while index < inst.operands.len() {
        if let Operand::MemoryAccess(flags) = &inst.operands[index] {
            volatile |= flags.contains(spirv::MemoryAccess::VOLATILE);
            if flags.contains(spirv::MemoryAccess::ALIGNED) {
                if let Some(Operand::LiteralBit32(a)) = inst.operands.get(index + 1) {
                    align = Some(align.map_or(*a, |prev| prev.min(*a)));
                }
            }
        }
        index += 1;
    }
    (align.filter(|a| *a > 0), volatile)
}

impl<'a> BodyTranslator<'_, 'a, '_> {
    fn types(&self) -> &crate::ir::TypeTable {
        &self.builder.module.types
    }

    fn ty(&self, id: Word) -> TResult<Type> {
        self.info.type_of(id)
    }

    fn result_ty(&self, inst: &dr::Instruction) -> TResult<Type> {
        self.ty(result_type_id(inst)?)
    }

    fn is_void(&self, ty: Type) -> bool {
        matches!(self.types().get(ty), TypeData::Void)
    }

    fn run(&mut self) -> TResult<()> {
        let spv_fn = self.spv_fn;
        if spv_fn.blocks.is_empty() {
            return Err(malformed("function without blocks"));
        }
        for (index, block) in spv_fn.blocks.iter().enumerate() {
            let label = block.label_id().ok_or_else(|| malformed("block without a label"))?;
            if self.block_index.insert(label, index).is_some() {
                return Err(malformed(format!("label %{label} defined twice")));
            }
        }
        for inst in spv_fn.all_inst_iter() {
            if let Some(id) = inst.result_id {
                self.function_ids.insert(id);
            }
        }

        // Reachability and reverse post-order from the entry block.
        let successors: Vec<Vec<usize>> = spv_fn
            .blocks
            .iter()
            .map(|block| {
                let terminator = block.instructions.last().ok_or_else(|| malformed("empty block"))?;
                terminator_targets(terminator)?
                    .into_iter()
                    .map(|label| {
                        self.block_index.get(&label).copied().ok_or_else(|| {
                            malformed(format!("branch to %{label}, which is not a block of this function"))
                        })
                    })
                    .collect::<TResult<Vec<usize>>>()
            })
            .collect::<TResult<_>>()?;
        let order = crate::analysis::reverse_post_order(&successors, 0);
        let mut reachable = vec![false; spv_fn.blocks.len()];
        for &b in &order {
            reachable[b] = true;
        }

        // IR blocks in the original layout order (the entry stays first).
        for (index, block) in spv_fn.blocks.iter().enumerate() {
            if !reachable[index] {
                continue;
            }
            let label = block.label_id().unwrap_or(0);
            let ir_block = self.function.create_block();
            self.blocks.insert(label, ir_block);
        }

        // Function parameters are the entry block's parameters.
        let entry_label = spv_fn.blocks[0].label_id().unwrap_or(0);
        let entry = self.blocks[&entry_label];
        for (index, param) in spv_fn.parameters.iter().enumerate() {
            let id = result_id(param)?;
            let ty = self.ty(result_type_id(param)?)?;
            if self.function.params.get(index) != Some(&ty) {
                return Err(malformed(format!("parameter %{id} does not match the function type")));
            }
            let value = self.function.append_block_param(entry, ty);
            // A struct passed by value (FuncParamAttr ByVal) is the callee's own copy: it may
            // write to it, and the caller, relying on that, may pass the address of its own
            // object (clang forwards `S t = s; f(t)` to `f(&s)`). The copy is made here.
            let byval =
                self.info.decorations(id).is_some_and(|d| d.has_param_attr(spirv::FunctionParameterAttribute::ByVal));
            let pointee = match self.types().get(ty) {
                TypeData::Pointer { space: AddressSpace::Private, pointee } if byval => Some(*pointee),
                _ => None,
            };
            match pointee {
                Some(pointee) => {
                    self.current = Some(entry);
                    let copy = self.emit_value(InstData::Variable { ty: pointee, init: None, align: 0 }, ty)?;
                    let size = self.int_value(64, self.types().size_of(pointee));
                    let align = self.types().align_of(pointee) as u32;
                    self.emit(InstData::CopyMemory { dst: copy, src: value, size, align }, None);
                    self.define(id, copy);
                }
                None => self.define(id, value),
            }
        }

        // OpPhi -> block parameters.
        for &index in &order {
            let block = &spv_fn.blocks[index];
            let label = block.label_id().unwrap_or(0);
            let phis: Vec<&'a dr::Instruction> =
                block.instructions.iter().filter(|i| i.class.opcode == Op::Phi).collect();
            if phis.is_empty() {
                continue;
            }
            if index == 0 {
                return Err(malformed("OpPhi in the entry block"));
            }
            let ir_block = self.blocks[&label];
            for phi in &phis {
                let ty = self.result_ty(phi)?;
                let value = self.function.append_block_param(ir_block, ty);
                self.define(result_id(phi)?, value);
            }
            self.phis.insert(label, phis);
        }

        for &index in &order {
            let block = &spv_fn.blocks[index];
            let label = block.label_id().unwrap_or(0);
            self.current = Some(self.blocks[&label]);
            self.current_label = label;
            self.current_loc = None;
            for inst in &block.instructions {
                self.translate_inst(inst)?;
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------
    // Values.

    fn define(&mut self, id: Word, value: Value) {
        if let Some(name) = self.info.name_of(id) {
            self.function.value_names[value] = Some(name.to_string());
        }
        self.locals.insert(id, Local::Value(value));
    }

    fn const_value(&mut self, konst: crate::ir::Const) -> Value {
        if let Some(&v) = self.const_values.get(&konst) {
            return v;
        }
        let ty = self.builder.module.constants[konst].ty();
        let v = self.function.const_value(konst, ty);
        self.const_values.insert(konst, v);
        v
    }

    fn int_value(&mut self, bits: u16, value: u64) -> Value {
        let ty = self.builder.module.types.int(bits);
        let konst = self.builder.int_const(ty, value);
        self.const_value(konst)
    }

    fn value(&mut self, id: Word) -> TResult<Value> {
        match self.locals.get(&id) {
            Some(Local::Value(v)) => return Ok(*v),
            Some(Local::BuiltinElement { .. }) => {
                return Err(unsupported(format!("pointer %{id} into a built-in variable is used other than by OpLoad")))
            }
            Some(Local::Ignored) => {
                return Err(malformed(format!("%{id}, the result of a debug instruction, is used as a value")))
            }
            Some(Local::SampledImage { .. }) => {
                return Err(unsupported(format!(
                    "sampled image %{id} is used other than by an image sampling instruction"
                )))
            }
            None => {}
        }
        match self.info.defs.get(&id) {
            Some(ModuleDef::Const { konst, .. }) => Ok(self.const_value(*konst)),
            Some(ModuleDef::Global { var, ptr_ty }) => {
                let (var, ptr_ty) = (*var, *ptr_ty);
                if let Some(&v) = self.global_values.get(&var) {
                    return Ok(v);
                }
                let v = self.function.global_value(var, ptr_ty);
                if let Some(name) = self.info.name_of(id) {
                    self.function.value_names[v] = Some(name.to_string());
                }
                self.global_values.insert(var, v);
                Ok(v)
            }
            Some(ModuleDef::Address { var, offset, ptr_ty }) => {
                let (var, offset, ptr_ty) = (*var, *offset, *ptr_ty);
                self.address_value(var, offset, ptr_ty)
            }
            Some(
                ModuleDef::Builtin { .. } | ModuleDef::NumEnqueuedSubgroups { .. } | ModuleDef::SubgroupMask { .. },
            ) => Err(unsupported(format!("built-in variable %{id} is used other than by OpLoad"))),
            Some(_) => Err(malformed(format!("%{id} is used as a value but is not one"))),
            None if self.function_ids.contains(&id) => {
                Err(malformed(format!("%{id} is used where its definition does not dominate the use")))
            }
            None => Err(malformed(format!("%{id} is not defined"))),
        }
    }

    /// The address `offset` bytes into module variable `var` as a `ptr_ty` (a module-scope
    /// address constant used by a function): the variable's address moved by bytes and cast.
    fn address_value(&mut self, var: crate::ir::GlobalVar, offset: u64, ptr_ty: Type) -> TResult<Value> {
        let data = &self.builder.module.globals[var];
        let (space, pointee) = (data.space, data.ty);
        let types = &mut self.builder.module.types;
        let var_ty = types.pointer(space, pointee);
        let i8t = types.int(8);
        let bytes_ty = types.pointer(space, i8t);
        let i64t = types.int(64);
        let base = self.function.global_value(var, var_ty);
        let cast = |op, arg| InstData::Convert { op, arg, saturate: false, rounding: None };
        let bytes = self.emit_value(cast(ConvertOp::Bitcast, base), bytes_ty)?;
        let offset = self.builder.int_const(i64t, offset);
        let element = self.const_value(offset);
        let chain = InstData::AccessChain { base: bytes, element: Some(element), indices: vec![], in_bounds: true };
        let moved = self.emit_value(chain, bytes_ty)?;
        let op = match self.builder.module.types.get(ptr_ty) {
            TypeData::Pointer { space: to, .. } if *to == space => ConvertOp::Bitcast,
            TypeData::Pointer { .. } => ConvertOp::PtrCast,
            _ => return Err(malformed("an address constant of a non-pointer type")),
        };
        self.emit_value(cast(op, moved), ptr_ty)
    }

    fn operand_value(&mut self, inst: &dr::Instruction, index: usize) -> TResult<Value> {
        let id = id_operand(inst, index)?;
        self.value(id)
    }

    fn value_ty(&self, v: Value) -> Type {
        self.function.value_type(v)
    }

    fn const_u64(&self, id: Word) -> TResult<u64> {
        match self.info.defs.get(&id) {
            Some(ModuleDef::Const { konst, .. }) => match &self.builder.module.constants[*konst] {
                crate::ir::ConstData::Int { bits, .. } => Ok(*bits),
                crate::ir::ConstData::Null { .. } => Ok(0),
                _ => Err(malformed(format!("%{id} must be an integer constant"))),
            },
            _ => Err(unsupported(format!("%{id} must be a constant (scope or memory semantics)"))),
        }
    }

    fn scope(&self, id: Word) -> TResult<Scope> {
        Ok(match self.const_u64(id)? {
            0 => Scope::CrossDevice,
            1 => Scope::Device,
            2 => Scope::WorkGroup,
            3 => Scope::SubGroup,
            4 => Scope::WorkItem,
            other => return Err(malformed(format!("invalid scope {other}"))),
        })
    }

    fn semantics(&self, id: Word) -> TResult<u32> {
        Ok(self.const_u64(id)? as u32)
    }

    // -----------------------------------------------------------------------------------
    // Emission.

    fn emit(&mut self, data: InstData, result_ty: Option<Type>) -> Option<Value> {
        let block = self.current.unwrap_or(Block(0));
        let (inst, result) = self.function.append_inst(block, data, result_ty);
        self.function.inst_locs[inst] = self.current_loc;
        result
    }

    /// OpLine: the location of the instructions that follow, up to the next OpLine, OpNoLine
    /// or the end of the block. A file that is not an OpString gives no location.
    fn set_line(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let file = id_operand(inst, 0)?;
        let line = literal_operand(inst, 1)?;
        let column = literal_operand(inst, 2)?;
        let input = self.spv_fn.def.as_ref().and_then(|d| d.result_id).and_then(|id| self.info.function_input.get(&id));
        let key = (input.copied().unwrap_or(0), file);
        self.current_loc = self.info.source_file_index.get(&key).map(|&file| SourceLoc { file, line, column });
        Ok(())
    }

    fn emit_value(&mut self, data: InstData, ty: Type) -> TResult<Value> {
        self.emit(data, Some(ty)).ok_or_else(|| malformed("internal: instruction without a result"))
    }

    /// Records the result of `inst`.
    fn set_result(&mut self, inst: &dr::Instruction, value: Value) -> TResult<()> {
        let id = result_id(inst)?;
        self.define(id, value);
        Ok(())
    }

    fn block_call(&mut self, target: Word) -> TResult<BlockCall> {
        let block = *self.blocks.get(&target).ok_or_else(|| malformed(format!("branch to unknown block %{target}")))?;
        let mut args = Vec::new();
        if let Some(phis) = self.phis.get(&target).cloned() {
            for phi in phis {
                let mut incoming = None;
                let mut index = 0;
                while index + 1 < phi.operands.len() {
                    if id_operand(phi, index + 1)? == self.current_label {
                        incoming = Some(id_operand(phi, index)?);
                        break;
                    }
                    index += 2;
                }
                let Some(incoming) = incoming else {
                    return Err(malformed(format!(
                        "OpPhi %{} has no value for predecessor %{}",
                        phi.result_id.unwrap_or(0),
                        self.current_label
                    )));
                };
                args.push(self.value(incoming)?);
            }
        }
        Ok(BlockCall { block, args })
    }

    // -----------------------------------------------------------------------------------
    // Instructions.

    fn translate_inst(&mut self, inst: &'a dr::Instruction) -> TResult<()> {
        let opcode = inst.class.opcode;
        if let Some(op) = binary_op(opcode) {
            return self.translate_binary(inst, op);
        }
        if let Some(op) = unary_op(opcode) {
            let ty = self.result_ty(inst)?;
            let arg = self.operand_value(inst, 0)?;
            // llvm-spirv-15 writes LLVM's `bitreverse` of an `i1` (a folded bool) as an
            // OpBitReverse of a bool: reversing one bit is the identity.
            let types = &self.builder.module.types;
            if op == UnaryOp::BitReverse && matches!(types.get(types.scalar_of(self.value_ty(arg))), TypeData::Bool) {
                return self.set_result(inst, arg);
            }
            let v = self.emit_value(InstData::Unary { op, arg }, ty)?;
            return self.set_result(inst, v);
        }
        if let Some(op) = compare_op(opcode) {
            let ty = self.result_ty(inst)?;
            let lhs = self.operand_value(inst, 0)?;
            let rhs = self.operand_value(inst, 1)?;
            let v = self.emit_value(InstData::Compare { op, lhs, rhs }, ty)?;
            return self.set_result(inst, v);
        }
        if let Some(op) = convert_op(opcode) {
            let ty = self.result_ty(inst)?;
            let arg = self.operand_value(inst, 0)?;
            let decorations = inst.result_id.and_then(|id| self.info.decorations(id));
            let saturate =
                decorations.is_some_and(|d| d.saturated) || matches!(op, ConvertOp::SatSToU | ConvertOp::SatUToS);
            let rounding = decorations.and_then(|d| d.rounding).map(rounding);
            let v = self.emit_value(InstData::Convert { op, arg, saturate, rounding }, ty)?;
            return self.set_result(inst, v);
        }
        if let Some(op) = atomic_rmw_op(opcode) {
            let ty = self.result_ty(inst)?;
            let ptr = self.operand_value(inst, 0)?;
            let scope = self.atomic_scope(ptr, id_operand(inst, 1)?)?;
            let semantics = self.semantics(id_operand(inst, 2)?)?;
            let value = Some(self.operand_value(inst, 3)?);
            let v = self.emit_value(InstData::Atomic { op, ptr, value, comparator: None, scope, semantics }, ty)?;
            return self.set_result(inst, v);
        }
        match opcode {
            // Nothing to do.
            Op::Line => self.set_line(inst),
            Op::NoLine => {
                self.current_loc = None;
                Ok(())
            }
            Op::Nop
            | Op::LifetimeStart
            | Op::LifetimeStop
            | Op::SelectionMerge
            | Op::LoopMerge
            | Op::AssumeTrueKHR
            | Op::Phi => Ok(()),

            Op::Undef => {
                let ty = self.result_ty(inst)?;
                let konst = self.builder.undef_const(ty);
                let v = self.const_value(konst);
                self.set_result(inst, v)
            }
            Op::CopyObject | Op::CopyLogical | Op::ExpectKHR => {
                let v = self.operand_value(inst, 0)?;
                self.set_result(inst, v)
            }
            Op::Select => {
                let ty = self.result_ty(inst)?;
                let cond = self.operand_value(inst, 0)?;
                let if_true = self.operand_value(inst, 1)?;
                let if_false = self.operand_value(inst, 2)?;
                let v = self.emit_value(InstData::Select { cond, if_true, if_false }, ty)?;
                self.set_result(inst, v)
            }
            Op::Bitcast => {
                let ty = self.result_ty(inst)?;
                if let Some(ModuleDef::Builtin { query, ty: vector_ty }) =
                    self.info.defs.get(&id_operand(inst, 0)?).cloned()
                {
                    // `(ulong *)&builtin`: a pointer to its first component.
                    let component_ty = self.types().scalar_of(vector_ty);
                    let to_component =
                        matches!(self.types().get(ty), TypeData::Pointer { pointee, .. } if *pointee == component_ty);
                    if !is_vector_query(query) || !to_component {
                        return Err(unsupported("a built-in variable's address cast to another type"));
                    }
                    let index = self.int_value(32, 0);
                    self.locals.insert(result_id(inst)?, Local::BuiltinElement { query, vector_ty, index });
                    return Ok(());
                }
                let arg = self.operand_value(inst, 0)?;
                if self.value_ty(arg) == ty {
                    // A no-op (left by the freeze workaround, see opencl_c.rs).
                    return self.set_result(inst, arg);
                }
                let from_ptr = matches!(self.types().get(self.value_ty(arg)), TypeData::Pointer { .. });
                let to_ptr = matches!(self.types().get(ty), TypeData::Pointer { .. });
                let op = match (from_ptr, to_ptr) {
                    (true, false) => ConvertOp::PtrToInt,
                    (false, true) => ConvertOp::IntToPtr,
                    _ => ConvertOp::Bitcast,
                };
                let v = self.emit_value(InstData::Convert { op, arg, saturate: false, rounding: None }, ty)?;
                self.set_result(inst, v)
            }
            Op::GroupAsyncCopy => self.translate_async_copy(inst),
            Op::GroupIAdd
            | Op::GroupFAdd
            | Op::GroupSMin
            | Op::GroupUMin
            | Op::GroupFMin
            | Op::GroupSMax
            | Op::GroupUMax
            | Op::GroupFMax
            | Op::GroupBroadcast
            | Op::GroupAll
            | Op::GroupAny => self.translate_group(inst),
            Op::SubgroupShuffleINTEL
            | Op::SubgroupShuffleDownINTEL
            | Op::SubgroupShuffleUpINTEL
            | Op::SubgroupShuffleXorINTEL
            | Op::SubgroupBlockReadINTEL
            | Op::SubgroupBlockWriteINTEL
            | Op::SubgroupImageBlockReadINTEL
            | Op::SubgroupImageBlockWriteINTEL => self.translate_intel_sub_group(inst),
            Op::GroupNonUniformElect
            | Op::GroupNonUniformAll
            | Op::GroupNonUniformAny
            | Op::GroupNonUniformAllEqual
            | Op::GroupNonUniformBroadcast
            | Op::GroupNonUniformBroadcastFirst
            | Op::GroupNonUniformBallot
            | Op::GroupNonUniformInverseBallot
            | Op::GroupNonUniformBallotBitExtract
            | Op::GroupNonUniformBallotBitCount
            | Op::GroupNonUniformBallotFindLSB
            | Op::GroupNonUniformBallotFindMSB
            | Op::GroupNonUniformShuffle
            | Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown
            | Op::GroupNonUniformRotateKHR
            | Op::GroupNonUniformIAdd
            | Op::GroupNonUniformFAdd
            | Op::GroupNonUniformIMul
            | Op::GroupNonUniformFMul
            | Op::GroupNonUniformSMin
            | Op::GroupNonUniformUMin
            | Op::GroupNonUniformFMin
            | Op::GroupNonUniformSMax
            | Op::GroupNonUniformUMax
            | Op::GroupNonUniformFMax
            | Op::GroupNonUniformBitwiseAnd
            | Op::GroupNonUniformBitwiseOr
            | Op::GroupNonUniformBitwiseXor
            | Op::GroupNonUniformLogicalAnd
            | Op::GroupNonUniformLogicalOr
            | Op::GroupNonUniformLogicalXor => self.translate_non_uniform(inst),
            Op::GroupWaitEvents => {
                if self.scope(id_operand(inst, 0)?)? != Scope::WorkGroup {
                    return Err(unsupported("wait_group_events outside work-group scope"));
                }
                // The copies were made when the async copy ran; waiting makes every work-item's
                // share visible to the whole work-group: a barrier on local and global memory.
                self.emit(
                    InstData::Barrier {
                        exec_scope: Scope::WorkGroup,
                        mem_scope: Scope::WorkGroup,
                        semantics: WAIT_EVENTS_SEMANTICS,
                    },
                    None,
                );
                Ok(())
            }
            Op::GenericPtrMemSemantics => {
                let ty = self.result_ty(inst)?;
                let ptr = self.operand_value(inst, 0)?;
                let v = self.emit_value(InstData::GenericSpace { ptr }, ty)?;
                self.set_result(inst, v)
            }
            // to_global / to_local / to_private: the pointer where it points into the space
            // named, NULL otherwise.
            Op::GenericCastToPtrExplicit => {
                let ty = self.result_ty(inst)?;
                let ptr = self.operand_value(inst, 0)?;
                let wanted = match self.types().get(ty) {
                    TypeData::Pointer { space: AddressSpace::Global, .. } => crate::ir::GENERIC_GLOBAL,
                    TypeData::Pointer { space: AddressSpace::Local, .. } => crate::ir::GENERIC_LOCAL,
                    TypeData::Pointer { space: AddressSpace::Private, .. } => 0,
                    _ => return Err(malformed("OpGenericCastToPtrExplicit to a type that is not a named pointer")),
                };
                let types = &mut self.builder.module.types;
                let (i32t, bool_t) = (types.int(32), types.bool());
                let space = self.emit_value(InstData::GenericSpace { ptr }, i32t)?;
                let wanted = self.builder.int_const(i32t, u64::from(wanted));
                let wanted = self.const_value(wanted);
                let cond = self.emit_value(InstData::Compare { op: CmpOp::IEq, lhs: space, rhs: wanted }, bool_t)?;
                let cast = InstData::Convert { op: ConvertOp::PtrCast, arg: ptr, saturate: false, rounding: None };
                let cast = self.emit_value(cast, ty)?;
                let null = self.builder.null_const(ty);
                let null = self.const_value(null);
                let v = self.emit_value(InstData::Select { cond, if_true: cast, if_false: null }, ty)?;
                self.set_result(inst, v)
            }
            Op::VectorTimesScalar => {
                let ty = self.result_ty(inst)?;
                let vector = self.operand_value(inst, 0)?;
                let scalar = self.operand_value(inst, 1)?;
                let lanes = self.types().lanes(ty);
                let splat = self.emit_value(InstData::Construct { parts: vec![scalar; lanes as usize] }, ty)?;
                let v = self.emit_value(InstData::Binary { op: BinaryOp::FMul, lhs: vector, rhs: splat }, ty)?;
                self.set_result(inst, v)
            }
            Op::Dot => {
                let ty = self.result_ty(inst)?;
                let a = self.operand_value(inst, 0)?;
                let b = self.operand_value(inst, 1)?;
                let vector_ty = self.value_ty(a);
                let lanes = self.types().lanes(vector_ty);
                let product = self.emit_value(InstData::Binary { op: BinaryOp::FMul, lhs: a, rhs: b }, vector_ty)?;
                let mut sum: Option<Value> = None;
                for lane in 0..lanes {
                    let index = self.int_value(32, u64::from(lane));
                    let component = self.emit_value(InstData::ExtractElement { vector: product, index }, ty)?;
                    sum = Some(match sum {
                        None => component,
                        Some(acc) => {
                            self.emit_value(InstData::Binary { op: BinaryOp::FAdd, lhs: acc, rhs: component }, ty)?
                        }
                    });
                }
                let v = sum.ok_or_else(|| malformed("OpDot of an empty vector"))?;
                self.set_result(inst, v)
            }
            Op::PtrDiff => {
                let ty = self.result_ty(inst)?;
                let a = self.operand_value(inst, 0)?;
                let b = self.operand_value(inst, 1)?;
                let elem_size = match self.types().get(self.value_ty(a)) {
                    TypeData::Pointer { pointee, .. } => self.types().size_of(*pointee).max(1),
                    _ => return Err(malformed("OpPtrDiff of non-pointers")),
                };
                let convert = |arg| InstData::Convert { op: ConvertOp::PtrToInt, arg, saturate: false, rounding: None };
                let a_int = self.emit_value(convert(a), ty)?;
                let b_int = self.emit_value(convert(b), ty)?;
                let bytes = self.emit_value(InstData::Binary { op: BinaryOp::ISub, lhs: a_int, rhs: b_int }, ty)?;
                let bits = match self.types().get(ty) {
                    TypeData::Int { bits } => *bits,
                    _ => return Err(malformed("OpPtrDiff result is not an integer")),
                };
                let size = self.int_value(bits, elem_size);
                let v = self.emit_value(InstData::Binary { op: BinaryOp::SDiv, lhs: bytes, rhs: size }, ty)?;
                self.set_result(inst, v)
            }

            // Composites.
            Op::CompositeExtract => {
                let ty = self.result_ty(inst)?;
                let aggregate = self.operand_value(inst, 0)?;
                let indices =
                    (1..inst.operands.len()).map(|i| literal_operand(inst, i)).collect::<TResult<Vec<u32>>>()?;
                let v = match (self.builtin_vector_query(aggregate), indices.as_slice()) {
                    // get_global_size(3) and the like: clang emits an out-of-range component.
                    (Some(query), &[index]) => {
                        let index = self.int_value(32, u64::from(index));
                        self.builtin_component(query, aggregate, index, ty)?
                    }
                    _ => self.composite_extract(aggregate, &indices, ty)?,
                };
                self.set_result(inst, v)
            }
            Op::CompositeInsert => {
                let ty = self.result_ty(inst)?;
                let object = self.operand_value(inst, 0)?;
                let aggregate = self.operand_value(inst, 1)?;
                let indices =
                    (2..inst.operands.len()).map(|i| literal_operand(inst, i)).collect::<TResult<Vec<u32>>>()?;
                let v = self.composite_insert(aggregate, object, &indices, ty)?;
                self.set_result(inst, v)
            }
            Op::CompositeConstruct => {
                let ty = self.result_ty(inst)?;
                let mut parts =
                    (0..inst.operands.len()).map(|i| self.operand_value(inst, i)).collect::<TResult<Vec<Value>>>()?;
                if let TypeData::Struct { fields, .. } = self.types().get(ty).clone() {
                    // Members declared with a forward pointer's stand-in take the part cast.
                    for (part, field) in parts.iter_mut().zip(fields) {
                        let part_ty = self.value_ty(*part);
                        if part_ty != field && self.forward_pointer_pair(field, part_ty) {
                            *part = self.pointer_cast(*part, field)?;
                        }
                    }
                }
                let v = self.emit_value(InstData::Construct { parts }, ty)?;
                self.set_result(inst, v)
            }
            Op::VectorExtractDynamic => {
                let ty = self.result_ty(inst)?;
                let vector = self.operand_value(inst, 0)?;
                let index = self.operand_value(inst, 1)?;
                let v = match self.builtin_vector_query(vector) {
                    Some(query) => self.builtin_component(query, vector, index, ty)?,
                    None => self.emit_value(InstData::ExtractElement { vector, index }, ty)?,
                };
                self.set_result(inst, v)
            }
            Op::VectorInsertDynamic => {
                let ty = self.result_ty(inst)?;
                let vector = self.operand_value(inst, 0)?;
                let value = self.operand_value(inst, 1)?;
                let index = self.operand_value(inst, 2)?;
                let v = self.emit_value(InstData::InsertElement { vector, value, index }, ty)?;
                self.set_result(inst, v)
            }
            Op::VectorShuffle => {
                let ty = self.result_ty(inst)?;
                let a = self.operand_value(inst, 0)?;
                let b = self.operand_value(inst, 1)?;
                let mask = (2..inst.operands.len())
                    .map(|i| literal_operand(inst, i).map(|m| (m != u32::MAX).then_some(m)))
                    .collect::<TResult<Vec<Option<u32>>>>()?;
                let v = self.emit_value(InstData::Shuffle { a, b, mask }, ty)?;
                self.set_result(inst, v)
            }

            // Memory.
            Op::Variable => {
                let ptr_ty = self.result_ty(inst)?;
                let pointee = match self.types().get(ptr_ty) {
                    TypeData::Pointer { space: AddressSpace::Private, pointee } => *pointee,
                    _ => return Err(unsupported("a variable inside a function must have Function storage")),
                };
                match operand(inst, 0)? {
                    Operand::StorageClass(spirv::StorageClass::Function) => {}
                    other => return Err(unsupported(format!("a variable inside a function has storage {other:?}"))),
                }
                let init = match inst.operands.get(1) {
                    Some(_) => Some(self.operand_value(inst, 1)?),
                    None => None,
                };
                // What the producer's accesses may count on (clang aligns a private array of
                // structs to 16 and loads it as `<4 x i32>`).
                let align = self.info.decorations(result_id(inst)?).and_then(|d| d.alignment).unwrap_or(0);
                let v = self.emit_value(InstData::Variable { ty: pointee, init, align }, ptr_ty)?;
                self.set_result(inst, v)
            }
            Op::Load => self.translate_load(inst),
            Op::Store => {
                let ptr_id = id_operand(inst, 0)?;
                if self.is_builtin_pointer(ptr_id) {
                    return Err(malformed("store to a built-in variable"));
                }
                let ptr = self.value(ptr_id)?;
                let value = self.operand_value(inst, 1)?;
                let (align, volatile) = memory_access(inst, 2);
                let align = self.alignment(ptr, align);
                let volatile = volatile || self.info.decorations(ptr_id).is_some_and(|d| d.volatile);
                self.emit(InstData::Store { ptr, value, align, volatile, block: None }, None);
                Ok(())
            }
            Op::CopyMemory | Op::CopyMemorySized => {
                let dst = self.operand_value(inst, 0)?;
                let src = self.operand_value(inst, 1)?;
                let (size, first_memory_operand) = if opcode == Op::CopyMemorySized {
                    (self.operand_value(inst, 2)?, 3)
                } else {
                    let pointee = match self.types().get(self.value_ty(dst)) {
                        TypeData::Pointer { pointee, .. } => *pointee,
                        _ => return Err(malformed("OpCopyMemory to a non-pointer")),
                    };
                    let bytes = self.types().size_of(pointee);
                    (self.int_value(64, bytes), 2)
                };
                let (align, _) = memory_access(inst, first_memory_operand);
                let align = self.alignment(dst, align);
                self.emit(InstData::CopyMemory { dst, src, size, align }, None);
                Ok(())
            }
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                self.translate_access_chain(inst)
            }

            Op::FunctionCall => {
                let ty = self.result_ty(inst)?;
                let callee = id_operand(inst, 0)?;
                let func = match self.info.defs.get(&callee) {
                    Some(ModuleDef::Function(f)) => *f,
                    _ => return Err(malformed(format!("OpFunctionCall of %{callee}, which is not a function"))),
                };
                let args =
                    (1..inst.operands.len()).map(|i| self.operand_value(inst, i)).collect::<TResult<Vec<Value>>>()?;
                let result_ty = (!self.is_void(ty)).then_some(ty);
                if let Some(v) = self.emit(InstData::Call { func, args }, result_ty) {
                    self.set_result(inst, v)?;
                }
                Ok(())
            }
            Op::ExtInst => self.translate_ext_inst(inst),

            // Images.
            Op::SampledImage => {
                let image = self.operand_value(inst, 0)?;
                let sampler = self.operand_value(inst, 1)?;
                self.locals.insert(result_id(inst)?, Local::SampledImage { image, sampler });
                Ok(())
            }
            Op::ImageSampleExplicitLod | Op::ImageRead | Op::ImageWrite => self.translate_image_access(inst),
            Op::ImageQuerySizeLod | Op::ImageQuerySize | Op::ImageQueryOrder | Op::ImageQueryFormat => {
                let ty = self.result_ty(inst)?;
                let image = self.operand_value(inst, 0)?;
                if opcode == Op::ImageQuerySizeLod {
                    let lod = self.operand_value(inst, 1)?;
                    if self.int_constant(lod) != Some(0) {
                        return Err(unsupported(
                            "image queries of a mipmap level other than 0 (mipmaps) are not supported",
                        ));
                    }
                }
                let op = match opcode {
                    Op::ImageQueryOrder => ImageOp::QueryOrder,
                    Op::ImageQueryFormat => ImageOp::QueryFormat,
                    _ => ImageOp::QuerySize,
                };
                let data = InstData::Image { op, image, sampler: None, coord: None, texel: None };
                let v = self.emit_value(data, ty)?;
                self.set_result(inst, v)
            }

            // Synchronisation.
            Op::ControlBarrier => {
                let exec_scope = self.scope(id_operand(inst, 0)?)?;
                let mem_scope = self.scope(id_operand(inst, 1)?)?;
                let semantics = self.semantics(id_operand(inst, 2)?)?;
                self.emit(InstData::Barrier { exec_scope, mem_scope, semantics }, None);
                Ok(())
            }
            Op::MemoryBarrier => {
                let scope = self.scope(id_operand(inst, 0)?)?;
                let semantics = self.semantics(id_operand(inst, 1)?)?;
                self.emit(InstData::Fence { scope, semantics }, None);
                Ok(())
            }
            Op::AtomicLoad | Op::AtomicIIncrement | Op::AtomicIDecrement => {
                let op = match opcode {
                    Op::AtomicLoad => AtomicOp::Load,
                    Op::AtomicIIncrement => AtomicOp::IIncrement,
                    _ => AtomicOp::IDecrement,
                };
                let ty = self.result_ty(inst)?;
                let ptr = self.operand_value(inst, 0)?;
                let scope = self.atomic_scope(ptr, id_operand(inst, 1)?)?;
                let semantics = self.semantics(id_operand(inst, 2)?)?;
                let v =
                    self.emit_value(InstData::Atomic { op, ptr, value: None, comparator: None, scope, semantics }, ty)?;
                self.set_result(inst, v)
            }
            Op::AtomicStore => {
                let ptr = self.operand_value(inst, 0)?;
                let scope = self.atomic_scope(ptr, id_operand(inst, 1)?)?;
                let semantics = self.semantics(id_operand(inst, 2)?)?;
                let value = Some(self.operand_value(inst, 3)?);
                self.emit(
                    InstData::Atomic { op: AtomicOp::Store, ptr, value, comparator: None, scope, semantics },
                    None,
                );
                Ok(())
            }
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                let ty = self.result_ty(inst)?;
                let ptr = self.operand_value(inst, 0)?;
                let scope = self.atomic_scope(ptr, id_operand(inst, 1)?)?;
                let semantics = self.semantics(id_operand(inst, 2)?)?;
                let value = Some(self.operand_value(inst, 4)?);
                let comparator = Some(self.operand_value(inst, 5)?);
                let v = self.emit_value(
                    InstData::Atomic { op: AtomicOp::CompareExchange, ptr, value, comparator, scope, semantics },
                    ty,
                )?;
                self.set_result(inst, v)
            }
            Op::AtomicFlagTestAndSet | Op::AtomicFlagClear => {
                let ptr = self.operand_value(inst, 0)?;
                let scope = self.atomic_scope(ptr, id_operand(inst, 1)?)?;
                let semantics = self.semantics(id_operand(inst, 2)?)?;
                let (flag_ty, bits) = match self.types().get(self.value_ty(ptr)) {
                    TypeData::Pointer { pointee, .. } => match self.types().get(*pointee) {
                        TypeData::Int { bits } => (*pointee, *bits),
                        _ => return Err(malformed("atomic flag is not an integer")),
                    },
                    _ => return Err(malformed("atomic flag operand is not a pointer")),
                };
                if opcode == Op::AtomicFlagClear {
                    let zero = self.int_value(bits, 0);
                    self.emit(
                        InstData::Atomic {
                            op: AtomicOp::Store,
                            ptr,
                            value: Some(zero),
                            comparator: None,
                            scope,
                            semantics,
                        },
                        None,
                    );
                    return Ok(());
                }
                let ty = self.result_ty(inst)?;
                let one = self.int_value(bits, 1);
                let zero = self.int_value(bits, 0);
                let old = self.emit_value(
                    InstData::Atomic {
                        op: AtomicOp::Exchange,
                        ptr,
                        value: Some(one),
                        comparator: None,
                        scope,
                        semantics,
                    },
                    flag_ty,
                )?;
                let v = self.emit_value(InstData::Compare { op: CmpOp::INe, lhs: old, rhs: zero }, ty)?;
                self.set_result(inst, v)
            }

            // Terminators.
            Op::Branch => {
                let dest = self.block_call(id_operand(inst, 0)?)?;
                self.emit(InstData::Jump { dest }, None);
                Ok(())
            }
            Op::BranchConditional => {
                let cond = self.operand_value(inst, 0)?;
                let then_dest = self.block_call(id_operand(inst, 1)?)?;
                let else_dest = self.block_call(id_operand(inst, 2)?)?;
                self.emit(InstData::Branch { cond, then_dest, else_dest }, None);
                Ok(())
            }
            Op::Switch => {
                let selector = self.operand_value(inst, 0)?;
                let default = self.block_call(id_operand(inst, 1)?)?;
                let mut cases = Vec::new();
                let mut index = 2;
                while index < inst.operands.len() {
                    let literal = match operand(inst, index)? {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        other => return Err(malformed(format!("OpSwitch case literal expected, found {other:?}"))),
                    };
                    let target = self.block_call(id_operand(inst, index + 1)?)?;
                    cases.push((literal, target));
                    index += 2;
                }
                self.emit(InstData::Switch { selector, default, cases }, None);
                Ok(())
            }
            Op::Return => {
                self.emit(InstData::Return { value: None }, None);
                Ok(())
            }
            Op::ReturnValue => {
                let value = self.operand_value(inst, 0)?;
                self.emit(InstData::Return { value: Some(value) }, None);
                Ok(())
            }
            Op::Unreachable => {
                self.emit(InstData::Unreachable, None);
                Ok(())
            }
            _ => Err(unsupported_instruction(inst)),
        }
    }

    fn translate_binary(&mut self, inst: &dr::Instruction, op: BinaryOp) -> TResult<()> {
        let ty = self.result_ty(inst)?;
        let lhs = self.operand_value(inst, 0)?;
        let mut rhs = self.operand_value(inst, 1)?;
        if matches!(op, BinaryOp::Shl | BinaryOp::LShr | BinaryOp::AShr) && self.value_ty(rhs) != ty {
            // SPIR-V lets the shift amount have another width; the IR does not.
            rhs = self.emit_value(
                InstData::Convert { op: ConvertOp::UConvert, arg: rhs, saturate: false, rounding: None },
                ty,
            )?;
        }
        let v = self.emit_value(InstData::Binary { op, lhs, rhs }, ty)?;
        self.set_result(inst, v)
    }

    /// OpenCL 1.x atomics come out with Workgroup scope even on global memory: widen the
    /// scope to the device for global and generic pointers.
    fn atomic_scope(&self, ptr: Value, scope_id: Word) -> TResult<Scope> {
        let scope = self.scope(scope_id)?;
        let space = match self.types().get(self.value_ty(ptr)) {
            TypeData::Pointer { space, .. } => *space,
            _ => return Err(malformed("atomic operation on a non-pointer")),
        };
        Ok(match (scope, space) {
            (Scope::WorkGroup, AddressSpace::Global | AddressSpace::Generic) => Scope::Device,
            _ => scope,
        })
    }

    fn alignment(&self, ptr: Value, explicit: Option<u32>) -> u32 {
        explicit.unwrap_or_else(|| match self.types().get(self.value_ty(ptr)) {
            TypeData::Pointer { pointee, .. } => self.types().align_of(*pointee).min(u64::from(u32::MAX)) as u32,
            _ => 1,
        })
    }

    fn is_builtin_pointer(&self, id: Word) -> bool {
        matches!(
            self.info.defs.get(&id),
            Some(ModuleDef::Builtin { .. } | ModuleDef::NumEnqueuedSubgroups { .. } | ModuleDef::SubgroupMask { .. })
        ) || matches!(self.locals.get(&id), Some(Local::BuiltinElement { .. }))
    }

    /// get_enqueued_num_sub_groups(): the sub-groups of a work-group of the enqueued size.
    fn num_enqueued_subgroups(&mut self, ty: Type) -> TResult<Value> {
        let i32t = self.builder.module.types.int(32);
        let count = self.emit_value(InstData::WorkItem { query: WorkItemQuery::EnqueuedNumSubgroups }, i32t)?;
        self.convert_int(count, ty)
    }

    /// The product of the three components of a work-group size query, as an i64.
    fn work_group_size(&mut self, query: WorkItemQuery) -> TResult<Value> {
        let i64t = self.builder.module.types.int(64);
        let v3 = self.builder.module.types.vector(i64t, 3);
        let sizes = self.emit_value(InstData::WorkItem { query }, v3)?;
        let mut product: Option<Value> = None;
        for lane in 0..3 {
            let index = self.int_value(32, lane);
            let size = self.emit_value(InstData::ExtractElement { vector: sizes, index }, i64t)?;
            product = Some(match product {
                None => size,
                Some(acc) => self.emit_value(InstData::Binary { op: BinaryOp::IMul, lhs: acc, rhs: size }, i64t)?,
            });
        }
        product.ok_or_else(|| malformed("internal: empty work-group size"))
    }

    /// `value` (an integer) converted to the integer type `ty`, reading it as unsigned.
    fn convert_int(&mut self, value: Value, ty: Type) -> TResult<Value> {
        if self.value_ty(value) == ty {
            return Ok(value);
        }
        if !matches!(self.types().get(ty), TypeData::Int { .. })
            || !matches!(self.types().get(self.value_ty(value)), TypeData::Int { .. })
        {
            return Err(malformed("integer operand expected"));
        }
        self.emit_value(InstData::Convert { op: ConvertOp::UConvert, arg: value, saturate: false, rounding: None }, ty)
    }

    /// OpGroupAsyncCopy (async_work_group_copy / async_work_group_strided_copy): the copy is
    /// shared out over the work-group as libclc does it, each work-item copying elements
    /// `lid, lid + size, ...`; OpGroupWaitEvents is the barrier that completes it. The
    /// result is the event operand (the spec returns the event passed in when non-zero).
    ///
    /// ```text
    ///   jump header(lid)
    /// header(i): brif i < n, body, exit
    /// body:      dst[i * dst_stride] = src[i * src_stride]; jump header(i + size)
    /// exit:      the rest of the SPIR-V block
    /// ```
    fn translate_async_copy(&mut self, inst: &dr::Instruction) -> TResult<()> {
        if self.scope(id_operand(inst, 0)?)? != Scope::WorkGroup {
            return Err(unsupported("asynchronous copies outside work-group scope"));
        }
        let dst = self.operand_value(inst, 1)?;
        let src = self.operand_value(inst, 2)?;
        let count = self.operand_value(inst, 3)?;
        let stride = self.operand_value(inst, 4)?;
        let event = self.operand_value(inst, 5)?;
        let (dst_space, elem) = match self.types().get(self.value_ty(dst)) {
            TypeData::Pointer { space, pointee } => (*space, *pointee),
            _ => return Err(malformed("OpGroupAsyncCopy destination is not a pointer")),
        };
        if !matches!(self.types().get(self.value_ty(src)), TypeData::Pointer { pointee, .. } if *pointee == elem) {
            return Err(malformed("OpGroupAsyncCopy source and destination element types differ"));
        }
        let i64t = self.builder.module.types.int(64);
        let count = self.convert_int(count, i64t)?;
        let stride = self.convert_int(stride, i64t)?;
        let first = self.emit_value(InstData::WorkItem { query: WorkItemQuery::LocalLinearId }, i64t)?;
        let step = self.work_group_size(WorkItemQuery::LocalSize)?;

        let header = self.function.create_block();
        let body = self.function.create_block();
        let exit = self.function.create_block();
        let index = self.function.append_block_param(header, i64t);
        self.emit(InstData::Jump { dest: BlockCall { block: header, args: vec![first] } }, None);

        self.current = Some(header);
        let bool_ty = self.builder.module.types.bool();
        let more = self.emit_value(InstData::Compare { op: CmpOp::ULt, lhs: index, rhs: count }, bool_ty)?;
        let then_dest = BlockCall { block: body, args: vec![] };
        let else_dest = BlockCall { block: exit, args: vec![] };
        self.emit(InstData::Branch { cond: more, then_dest, else_dest }, None);

        self.current = Some(body);
        // The stride applies to the global side: the source when copying into local memory.
        let strided = self.emit_value(InstData::Binary { op: BinaryOp::IMul, lhs: index, rhs: stride }, i64t)?;
        let (src_index, dst_index) = if dst_space == AddressSpace::Local { (strided, index) } else { (index, strided) };
        let (src_ty, dst_ty) = (self.value_ty(src), self.value_ty(dst));
        let element = |base, at| InstData::AccessChain { base, element: Some(at), indices: vec![], in_bounds: true };
        let from = self.emit_value(element(src, src_index), src_ty)?;
        let to = self.emit_value(element(dst, dst_index), dst_ty)?;
        let align = self.alignment(src, None);
        let value = self.emit_value(InstData::Load { ptr: from, align, volatile: false, block: None }, elem)?;
        self.emit(InstData::Store { ptr: to, value, align, volatile: false, block: None }, None);
        let next = self.emit_value(InstData::Binary { op: BinaryOp::IAdd, lhs: index, rhs: step }, i64t)?;
        self.emit(InstData::Jump { dest: BlockCall { block: header, args: vec![next] } }, None);

        self.current = Some(exit);
        self.set_result(inst, event)
    }

    fn translate_load(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let ty = self.result_ty(inst)?;
        let ptr_id = id_operand(inst, 0)?;
        if let Some(ModuleDef::Builtin { query, ty: var_ty }) = self.info.defs.get(&ptr_id) {
            if *var_ty != ty {
                return Err(malformed(format!("OpLoad of built-in variable %{ptr_id} with a type other than its own")));
            }
            let v = self.emit_value(InstData::WorkItem { query: *query }, ty)?;
            return self.set_result(inst, v);
        }
        if let Some(ModuleDef::NumEnqueuedSubgroups { .. }) = self.info.defs.get(&ptr_id) {
            let v = self.num_enqueued_subgroups(ty)?;
            return self.set_result(inst, v);
        }
        if let Some(ModuleDef::SubgroupMask { builtin, .. }) = self.info.defs.get(&ptr_id).cloned() {
            let v = self.sub_group_mask(builtin, ty)?;
            return self.set_result(inst, v);
        }
        if let Some(Local::BuiltinElement { query, vector_ty, index }) = self.locals.get(&ptr_id).copied() {
            if self.types().scalar_of(vector_ty) != ty {
                return Err(malformed(format!("OpLoad through %{ptr_id} with a type other than the built-in's")));
            }
            let vector = self.emit_value(InstData::WorkItem { query }, vector_ty)?;
            let v = self.builtin_component(query, vector, index, ty)?;
            return self.set_result(inst, v);
        }
        let ptr = self.value(ptr_id)?;
        let (align, volatile) = memory_access(inst, 1);
        let align = self.alignment(ptr, align);
        let volatile = volatile || self.info.decorations(ptr_id).is_some_and(|d| d.volatile);
        let v = self.emit_value(InstData::Load { ptr, align, volatile, block: None }, ty)?;
        self.set_result(inst, v)
    }

    /// The query of a whole built-in vector `v` (the result of loading a per-dimension
    /// built-in variable), if it is one.
    fn builtin_vector_query(&self, v: Value) -> Option<WorkItemQuery> {
        match self.function.values[v].def {
            ValueDef::Result(i) => match self.function.insts[i] {
                InstData::WorkItem { query } if is_vector_query(query) => Some(query),
                _ => None,
            },
            _ => None,
        }
    }

    /// Component `index` of the built-in vector `vector`. A dimension beyond the three gives
    /// what the work-item functions give for a dimension >= get_work_dim(): 1 for the sizes
    /// and group counts, 0 for the ids and offsets (dimensions 1 and 2 of a smaller NDRange
    /// hold those values already).
    fn builtin_component(&mut self, query: WorkItemQuery, vector: Value, index: Value, ty: Type) -> TResult<Value> {
        let TypeData::Int { bits } = *self.types().get(ty) else {
            return Err(malformed("a component of a built-in vector must be an integer"));
        };
        use WorkItemQuery as Q;
        let beyond = match query {
            Q::LocalSize | Q::EnqueuedLocalSize | Q::GlobalSize | Q::NumGroups => 1,
            _ => 0,
        };
        let index_ty = self.value_ty(index);
        let TypeData::Int { bits: index_bits } = *self.types().get(index_ty) else {
            return Err(malformed("the index of a built-in vector component must be an integer"));
        };
        if let Some(constant) = self.int_constant(index) {
            if constant >= 3 {
                return Ok(self.int_value(bits, beyond));
            }
            return self.emit_value(InstData::ExtractElement { vector, index }, ty);
        }
        let bool_ty = self.builder.module.types.bool();
        let three = self.int_value(index_bits, 3);
        let zero = self.int_value(index_bits, 0);
        let in_range = self.emit_value(InstData::Compare { op: CmpOp::ULt, lhs: index, rhs: three }, bool_ty)?;
        let safe = self.emit_value(InstData::Select { cond: in_range, if_true: index, if_false: zero }, index_ty)?;
        let component = self.emit_value(InstData::ExtractElement { vector, index: safe }, ty)?;
        let fallback = self.int_value(bits, beyond);
        self.emit_value(InstData::Select { cond: in_range, if_true: component, if_false: fallback }, ty)
    }

    /// OpImageSampleExplicitLod, OpImageRead, OpImageWrite. Image operands: a Lod of
    /// constant 0 (what OpenCL C emits without mipmaps) and SignExtend / ZeroExtend (the
    /// image's format decides the values anyway); others (gradients, offsets, samples,
    /// other levels) are refused.
    fn translate_image_access(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let opcode = inst.class.opcode;
        let (image, sampler) = if opcode == Op::ImageSampleExplicitLod {
            let id = id_operand(inst, 0)?;
            match self.locals.get(&id) {
                Some(Local::SampledImage { image, sampler }) => (*image, Some(*sampler)),
                _ => return Err(unsupported(format!("image sampling of %{id}, which is not an OpSampledImage"))),
            }
        } else {
            (self.operand_value(inst, 0)?, None)
        };
        let coord = Some(self.operand_value(inst, 1)?);
        let (texel, operands_at) =
            if opcode == Op::ImageWrite { (Some(self.operand_value(inst, 2)?), 3) } else { (None, 2) };
        if let Some(op) = inst.operands.get(operands_at) {
            let Operand::ImageOperands(bits) = op else {
                return Err(malformed(format!("{}: expected image operands", super::spirv::opname(inst))));
            };
            use spirv::ImageOperands as IO;
            let allowed = IO::LOD | IO::SIGN_EXTEND | IO::ZERO_EXTEND | IO::NONTEMPORAL;
            if !(*bits - allowed).is_empty() {
                return Err(unsupported(format!(
                    "image operands {:?} (mipmap gradients, offsets, multisample images) are not supported",
                    *bits - allowed
                )));
            }
            if bits.contains(IO::LOD) {
                // The Lod is the first operand id after the mask.
                let lod = self.operand_value(inst, operands_at + 1)?;
                let zero = match self.function.values[lod].def {
                    ValueDef::Const(c) => match &self.builder.module.constants[c] {
                        crate::ir::ConstData::Int { bits, .. } | crate::ir::ConstData::Float { bits, .. } => *bits == 0,
                        crate::ir::ConstData::Null { .. } => true,
                        _ => false,
                    },
                    _ => false,
                };
                if !zero {
                    return Err(unsupported(
                        "image reads and writes of a mipmap level other than 0 (mipmaps) are not supported",
                    ));
                }
            }
        }
        // 4-component texels, or the one float of a depth image (cl_khr_depth_images:
        // OpImageRead returns and OpImageWrite takes a scalar float there; a sampled read
        // still returns a vector whose first component OpenCL C keeps).
        let texel_ok = |t: Type, types: &crate::ir::TypeTable| match types.get(t) {
            TypeData::Vector { elem, len: 4 } => {
                matches!(types.get(*elem), TypeData::Float { bits: 32 } | TypeData::Int { bits: 32 })
            }
            TypeData::Float { bits: 32 } => true,
            _ => false,
        };
        let what = "image functions other than on 4-component float or 32-bit integer texels \
                    or a depth image's float (read_imageh / write_imageh) are not supported";
        if let Some(t) = texel {
            if !texel_ok(self.value_ty(t), self.types()) {
                return Err(unsupported(what));
            }
        }
        let op = match opcode {
            Op::ImageSampleExplicitLod => ImageOp::Sample,
            Op::ImageRead => ImageOp::Read,
            _ => ImageOp::Write,
        };
        let data = InstData::Image { op, image, sampler, coord, texel };
        if op == ImageOp::Write {
            self.emit(data, None);
            return Ok(());
        }
        let ty = self.result_ty(inst)?;
        if !texel_ok(ty, self.types()) {
            return Err(unsupported(what));
        }
        let v = self.emit_value(data, ty)?;
        self.set_result(inst, v)
    }

    /// The value of an integer constant `v`, if it is one.
    fn int_constant(&self, v: Value) -> Option<u64> {
        match self.function.values[v].def {
            ValueDef::Const(c) => match &self.builder.module.constants[c] {
                crate::ir::ConstData::Int { bits, .. } => Some(*bits),
                _ => None,
            },
            _ => None,
        }
    }

    fn translate_access_chain(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let opcode = inst.class.opcode;
        let ty = self.result_ty(inst)?;
        let base_id = id_operand(inst, 0)?;
        let has_element = matches!(opcode, Op::PtrAccessChain | Op::InBoundsPtrAccessChain);
        let in_bounds = matches!(opcode, Op::InBoundsAccessChain | Op::InBoundsPtrAccessChain);

        if let Some(ModuleDef::Builtin { query, ty: vector_ty }) = self.info.defs.get(&base_id).cloned() {
            // A pointer to one component of a built-in vector: `&builtin[0][i]` or `&builtin[i]`.
            let component_index = if has_element {
                let element = id_operand(inst, 1)?;
                if inst.operands.len() != 3 || self.const_u64(element).ok() != Some(0) {
                    return Err(unsupported("unsupported access chain into a built-in variable"));
                }
                2
            } else {
                if inst.operands.len() != 2 {
                    return Err(unsupported("unsupported access chain into a built-in variable"));
                }
                1
            };
            let index = self.operand_value(inst, component_index)?;
            self.locals.insert(result_id(inst)?, Local::BuiltinElement { query, vector_ty, index });
            return Ok(());
        }

        if let Some(Local::BuiltinElement { query, vector_ty, index }) = self.locals.get(&base_id).copied() {
            // `((ulong *)&builtin)[i]`: moves along the components.
            if !has_element || inst.operands.len() != 2 {
                return Err(unsupported("unsupported access chain into a built-in variable"));
            }
            let element = self.operand_value(inst, 1)?;
            let i64t = self.builder.module.types.int(64);
            let widen = |this: &mut Self, v: Value| -> TResult<Value> {
                if this.value_ty(v) == i64t {
                    return Ok(v);
                }
                this.emit_value(
                    InstData::Convert { op: ConvertOp::SConvert, arg: v, saturate: false, rounding: None },
                    i64t,
                )
            };
            let (index, element) = (widen(self, index)?, widen(self, element)?);
            let index = self.emit_value(InstData::Binary { op: BinaryOp::IAdd, lhs: index, rhs: element }, i64t)?;
            self.locals.insert(result_id(inst)?, Local::BuiltinElement { query, vector_ty, index });
            return Ok(());
        }

        let base = self.value(base_id)?;
        let mut next = 1;
        let element = if has_element {
            next = 2;
            Some(self.operand_value(inst, 1)?)
        } else {
            None
        };
        let indices =
            (next..inst.operands.len()).map(|i| self.operand_value(inst, i)).collect::<TResult<Vec<Value>>>()?;
        if self.info.has_forward_pointers {
            if let Some(member_ptr) = self.forward_member_pointer(base, &indices, ty) {
                // The member is a forward pointer's stand-in (a pointer to bytes): address it
                // as the struct declares it, then cast to the pointer-to-pointer SPIR-V names.
                let v = self.emit_value(InstData::AccessChain { base, element, indices, in_bounds }, member_ptr)?;
                let cast = InstData::Convert { op: ConvertOp::Bitcast, arg: v, saturate: false, rounding: None };
                let v = self.emit_value(cast, ty)?;
                return self.set_result(inst, v);
            }
        }
        let v = self.emit_value(InstData::AccessChain { base, element, indices, in_bounds }, ty)?;
        self.set_result(inst, v)
    }

    /// Whether `a` and `b` are two pointer types in a module with forward pointers (a member
    /// declared with a forward pointer's stand-in and the real pointer type SPIR-V uses).
    fn forward_pointer_pair(&self, a: Type, b: Type) -> bool {
        let is_ptr = |t| matches!(self.types().get(t), TypeData::Pointer { .. });
        self.info.has_forward_pointers && is_ptr(a) && is_ptr(b)
    }

    fn pointer_cast(&mut self, arg: Value, to: Type) -> TResult<Value> {
        self.emit_value(InstData::Convert { op: ConvertOp::Bitcast, arg, saturate: false, rounding: None }, to)
    }

    /// For an access chain from `base` by `indices` whose SPIR-V result type `ty` is a pointer
    /// to a pointer but whose member, as the struct declares it, is another pointer type (the
    /// stand-in of an OpTypeForwardPointer, see `translate_globals`): the pointer to the
    /// declared member type. None when the types agree or the member is not reached by
    /// constant struct indices.
    fn forward_member_pointer(&mut self, base: Value, indices: &[Value], ty: Type) -> Option<Type> {
        let types = self.types();
        let TypeData::Pointer { space, pointee } = types.get(self.value_ty(base)).clone() else { return None };
        let mut current = pointee;
        for &index in indices {
            current = match types.get(current) {
                TypeData::Struct { fields, .. } => {
                    let member = self.int_constant(index)?;
                    *fields.get(usize::try_from(member).ok()?)?
                }
                TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => *elem,
                _ => return None,
            };
        }
        let TypeData::Pointer { pointee: wanted, .. } = types.get(ty).clone() else { return None };
        let both_pointers = matches!(types.get(current), TypeData::Pointer { .. })
            && matches!(types.get(wanted), TypeData::Pointer { .. });
        if current == wanted || !both_pointers {
            return None;
        }
        Some(self.builder.module.types.pointer(space, current))
    }

    /// Walks `indices` from `ty`: the types reached through structs and arrays, and whether
    /// the last index selects a vector component.
    fn walk_composite(&self, ty: Type, indices: &[u32]) -> TResult<(Type, bool)> {
        let mut current = ty;
        for (position, &index) in indices.iter().enumerate() {
            current = match self.types().get(current) {
                TypeData::Struct { fields, .. } => *fields
                    .get(index as usize)
                    .ok_or_else(|| malformed(format!("struct member {index} out of range")))?,
                TypeData::Array { elem, len } => {
                    if u64::from(index) >= *len {
                        return Err(malformed(format!("array index {index} out of range")));
                    }
                    *elem
                }
                TypeData::Vector { elem, len } => {
                    if index >= *len || position + 1 != indices.len() {
                        return Err(malformed(format!("vector component {index} out of range")));
                    }
                    return Ok((*elem, true));
                }
                _ => return Err(malformed("composite index into a non-composite type")),
            };
        }
        Ok((current, false))
    }

    fn composite_extract(&mut self, aggregate: Value, indices: &[u32], ty: Type) -> TResult<Value> {
        if indices.is_empty() {
            return Ok(aggregate);
        }
        let (reached, ends_in_vector) = self.walk_composite(self.value_ty(aggregate), indices)?;
        if reached != ty && self.forward_pointer_pair(reached, ty) {
            // A member declared with a forward pointer's stand-in: extract it as declared and
            // cast to the pointer type SPIR-V names.
            let v = self.emit_value(InstData::ExtractValue { aggregate, indices: indices.to_vec() }, reached)?;
            return self.pointer_cast(v, ty);
        }
        if reached != ty {
            return Err(malformed("OpCompositeExtract result type does not match the member type"));
        }
        if !ends_in_vector {
            return self.emit_value(InstData::ExtractValue { aggregate, indices: indices.to_vec() }, ty);
        }
        let (prefix, last) = indices.split_at(indices.len() - 1);
        let vector = if prefix.is_empty() {
            aggregate
        } else {
            let (vector_ty, _) = self.walk_composite(self.value_ty(aggregate), prefix)?;
            self.emit_value(InstData::ExtractValue { aggregate, indices: prefix.to_vec() }, vector_ty)?
        };
        let index = self.int_value(32, u64::from(last[0]));
        self.emit_value(InstData::ExtractElement { vector, index }, ty)
    }

    fn composite_insert(&mut self, aggregate: Value, object: Value, indices: &[u32], ty: Type) -> TResult<Value> {
        if self.value_ty(aggregate) != ty {
            return Err(malformed("OpCompositeInsert result type differs from the composite's"));
        }
        if indices.is_empty() {
            return Ok(object);
        }
        let (member, ends_in_vector) = self.walk_composite(ty, indices)?;
        let object_ty = self.value_ty(object);
        let object = if member != object_ty && self.forward_pointer_pair(member, object_ty) {
            self.pointer_cast(object, member)?
        } else {
            object
        };
        if !ends_in_vector {
            return self.emit_value(InstData::InsertValue { aggregate, value: object, indices: indices.to_vec() }, ty);
        }
        let (prefix, last) = indices.split_at(indices.len() - 1);
        let index = self.int_value(32, u64::from(last[0]));
        if prefix.is_empty() {
            return self.emit_value(InstData::InsertElement { vector: aggregate, value: object, index }, ty);
        }
        let (vector_ty, _) = self.walk_composite(ty, prefix)?;
        let vector = self.emit_value(InstData::ExtractValue { aggregate, indices: prefix.to_vec() }, vector_ty)?;
        let updated = self.emit_value(InstData::InsertElement { vector, value: object, index }, vector_ty)?;
        self.emit_value(InstData::InsertValue { aggregate, value: updated, indices: prefix.to_vec() }, ty)
    }

    fn translate_ext_inst(&mut self, inst: &dr::Instruction) -> TResult<()> {
        let set = id_operand(inst, 0)?;
        let number = match operand(inst, 1)? {
            Operand::LiteralExtInstInteger(n) => *n,
            other => return Err(malformed(format!("OpExtInst instruction number expected, found {other:?}"))),
        };
        match self.info.defs.get(&set) {
            Some(ModuleDef::ExtSet(ExtSet::OpenClStd)) => {}
            Some(ModuleDef::ExtSet(ExtSet::Ignored)) => {
                self.locals.insert(result_id(inst)?, Local::Ignored);
                return Ok(());
            }
            _ => return Err(malformed(format!("OpExtInst of %{set}, which is not an extended instruction set"))),
        }
        let grammar = rspirv::grammar::ext_inst_table("OpenCL.std")
            .and_then(|table| table.lookup_opcode(number))
            .ok_or_else(|| unsupported(format!("unknown OpenCL.std instruction {number}")))?;
        let ty = self.result_ty(inst)?;
        let raw_operands = &inst.operands[2..];
        let mut args = Vec::with_capacity(raw_operands.len());
        for (position, raw) in raw_operands.iter().enumerate() {
            let logical = grammar
                .operands
                .get(position)
                .or_else(|| grammar.operands.last().filter(|last| last.quantifier == OperandQuantifier::ZeroOrMore));
            let Some(logical) = logical else {
                return Err(malformed(format!("too many operands for OpenCL.std {}", grammar.opname)));
            };
            let word = match raw {
                Operand::IdRef(w) | Operand::LiteralBit32(w) => *w,
                other => return Err(malformed(format!("OpExtInst operand expected, found {other:?}"))),
            };
            match logical.kind {
                OperandKind::IdRef => args.push(self.value(word)?),
                OperandKind::LiteralInteger | OperandKind::FPRoundingMode => {
                    args.push(self.int_value(32, u64::from(word)))
                }
                other => {
                    return Err(unsupported(format!(
                        "OpenCL.std {} operand kind {other:?} is not supported",
                        grammar.opname
                    )))
                }
            }
        }
        let required = grammar.operands.iter().filter(|o| o.quantifier == OperandQuantifier::One).count();
        if args.len() < required {
            return Err(malformed(format!(
                "OpenCL.std {} needs {required} operands, has {}",
                grammar.opname,
                args.len()
            )));
        }
        let result_ty = (!self.is_void(ty)).then_some(ty);
        if let Some(v) = self.emit(InstData::ExtInst { opcode: number, args }, result_ty) {
            self.set_result(inst, v)?;
        }
        Ok(())
    }
}
