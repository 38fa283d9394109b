//! SPIR-V (the OpenCL "Kernel" flavour llvm-spirv writes) -> SoftCL IR, module level:
//! header checks, decorations, names, types, constants, module-scope variables, function
//! declarations and kernels. Function bodies are translated by [`super::spirv_body`],
//! kernel metadata is gathered by [`super::kernel_args`].
//!
//! Module-scope variables of Function storage, which llvm-spirv writes for the constant
//! parts of a private aggregate's initializer (a struct holding `&x` and a constant array),
//! become private data of the program that the kernels copy from. Conversion decorations
//! that llvm-spirv-15 leaves on an undefined id are moved back first
//! ([`super::spirv_repair`]).
//!
//! Nothing read from the module is trusted: every operand access is checked and every
//! problem becomes a [`TranslateError`], never a panic.

use super::{kernel_args, spirv_body, spirv_repair};
use crate::ir::{self, BuiltinVar, ConstData, FuncKind, GlobalVarData, Kernel, Type, TypeData, WorkItemQuery};
use crate::kernel_info::AddressSpace;
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op, Word};
use std::collections::{HashMap, HashSet};

/// What kind of problem a translation failure is (the caller picks the OpenCL error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Not valid SPIR-V (bad header, truncated, ids out of range, wrong operands).
    Malformed,
    /// Valid SPIR-V using something SoftCL does not implement.
    Unsupported,
    /// A function or variable imported from outside the module: nobody defined it.
    Undefined,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslateError {
    pub class: ErrorClass,
    pub message: String,
}

pub type TResult<T> = Result<T, TranslateError>;

pub fn malformed(message: impl Into<String>) -> TranslateError {
    TranslateError { class: ErrorClass::Malformed, message: message.into() }
}
pub fn unsupported(message: impl Into<String>) -> TranslateError {
    TranslateError { class: ErrorClass::Unsupported, message: message.into() }
}
pub fn undefined(message: impl Into<String>) -> TranslateError {
    TranslateError { class: ErrorClass::Undefined, message: message.into() }
}

/// Largest size in bytes accepted for one type (arrays of absurd length are rejected rather
/// than allowed to overflow size computations).
const MAX_TYPE_SIZE: u64 = 1 << 40;
/// Deepest accepted nesting of composite types (bounds recursion in later stages).
const MAX_TYPE_DEPTH: u32 = 64;

/// The module as 32-bit words in host order, from bytes in either byte order.
pub fn words_from_bytes(bytes: &[u8]) -> TResult<Vec<u32>> {
    if bytes.len() < 20 {
        return Err(malformed(format!(
            "not a SPIR-V module: {} bytes is shorter than the 20-byte header",
            bytes.len()
        )));
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(malformed(format!("not a SPIR-V module: its size ({} bytes) is not a multiple of 4", bytes.len())));
    }
    let chunks = bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    let first = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if u32::from_le_bytes(first) == spirv::MAGIC_NUMBER {
        Ok(chunks.map(u32::from_le_bytes).collect())
    } else if u32::from_be_bytes(first) == spirv::MAGIC_NUMBER {
        Ok(chunks.map(u32::from_be_bytes).collect())
    } else {
        Err(malformed(format!(
            "not a SPIR-V module: bad magic number 0x{:08x} (expected 0x{:08x})",
            u32::from_le_bytes(first),
            spirv::MAGIC_NUMBER
        )))
    }
}

/// The access chains of OpSpecConstantOp instructions by result id: the operation and its
/// operand ids.
type SpecAccessChains = HashMap<Word, (Op, Vec<Word>)>;

/// Checks the instruction stream's framing (every word count non-zero and within the
/// module) and drops extended instructions placed between functions (non-semantic debug
/// information such as OpenCL.DebugInfo.100 puts them there) and debug-information ones
/// between the blocks of a function (spirv-link puts them there when it links modules
/// built with line tables), which the rspirv loader refuses. The framing check also keeps malformed counts away from the rspirv decoder,
/// which can index past the end of the stream on them.
///
/// rspirv reads exactly one operand for each operand of an OpSpecConstantOp's operation, so
/// an access chain with no index or with several (`&table[1].y` in an initializer) is
/// "malformed" to it: every access chain there is handed to rspirv as a Bitcast of its base,
/// and its operation and operand ids are returned by result id for
/// `translate_address_constant`.
fn frame_instructions(words: &[u32]) -> TResult<(Vec<u32>, SpecAccessChains)> {
    if words.len() < 5 {
        return Err(malformed("not a SPIR-V module: truncated header"));
    }
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut index = 5;
    let mut in_function = false;
    let mut in_block = false;
    // Result ids of the debug-information and non-semantic instruction sets.
    let mut debug_sets: Vec<u32> = Vec::new();
    let mut spec_operands = SpecAccessChains::new();
    while index < words.len() {
        let count = (words[index] >> 16) as usize;
        let opcode = words[index] & 0xffff;
        if count == 0 {
            return Err(malformed(format!("malformed SPIR-V: word {index} has a word count of 0")));
        }
        if index + count > words.len() {
            return Err(malformed(format!(
                "malformed SPIR-V: the instruction at word {index} ({count} words) runs past the end of the module"
            )));
        }
        let was_in_block = in_block;
        match opcode {
            o if o == Op::Function as u32 => in_function = true,
            o if o == Op::FunctionEnd as u32 => in_function = false,
            o if o == Op::Label as u32 => in_block = in_function,
            o if is_terminator(o) => in_block = false,
            _ => {}
        }
        // Outside functions, and (after spirv-link of modules with line tables) inside a
        // function but between its blocks.
        let debug_set = count > 3 && debug_sets.contains(&words[index + 3]);
        let dropped = opcode == Op::ExtInst as u32 && (!in_function || !was_in_block && debug_set);
        // OpSpecConstantOp type id op base [element] index...
        let chain = (opcode == Op::SpecConstantOp as u32 && count > 4)
            .then(|| Op::from_u32(words[index + 3]))
            .flatten()
            .filter(|op| {
                matches!(
                    op,
                    Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain
                )
            });
        match (dropped, chain) {
            (true, _) => {}
            (false, Some(op)) => {
                spec_operands.insert(words[index + 2], (op, words[index + 4..index + count].to_vec()));
                let (ty, id, base) = (words[index + 1], words[index + 2], words[index + 4]);
                out.extend_from_slice(&[(5 << 16) | opcode, ty, id, Op::Bitcast as u32, base]);
            }
            (false, None) => out.extend_from_slice(&words[index..index + count]),
        }
        if opcode == Op::ExtInstImport as u32 && count >= 3 {
            let name = string_from_words(&words[index + 2..index + count]);
            if name.starts_with("NonSemantic.") || name.contains("DebugInfo") {
                debug_sets.push(words[index + 1]);
            }
        }
        index += count;
    }
    Ok((out, spec_operands))
}

/// Whether `opcode` ends a block.
fn is_terminator(opcode: u32) -> bool {
    [Op::Branch, Op::BranchConditional, Op::Switch, Op::Return, Op::ReturnValue, Op::Kill, Op::Unreachable]
        .iter()
        .any(|&op| op as u32 == opcode)
}

/// A literal string operand (nul-terminated UTF-8 in little-endian words).
fn string_from_words(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parses the words with rspirv. A panic inside the parser (a bug it has on some malformed
/// input) becomes an error rather than unwinding into the caller.
fn parse_module(words: &[u32]) -> TResult<dr::Module> {
    match std::panic::catch_unwind(|| dr::load_words(words)) {
        Ok(Ok(module)) => Ok(module),
        Ok(Err(e)) => Err(malformed(format!("malformed SPIR-V: {e}"))),
        Err(_) => Err(malformed("malformed SPIR-V: the SPIR-V parser failed on this module")),
    }
}

// ---------------------------------------------------------------------------------------
// Operand access helpers (never panic).

pub fn opname(inst: &dr::Instruction) -> String {
    format!("Op{}", inst.class.opname)
}

/// For an instruction SoftCL does not translate yet, the OpenCL feature it belongs to, so that
/// the build log says what the program asked for rather than only the SPIR-V opcode.
pub fn missing_feature(opname: &str) -> Option<&'static str> {
    let name = opname.strip_prefix("Op")?;
    const DEVICE_ENQUEUE: &[&str] = &[
        "EnqueueMarker",
        "EnqueueKernel",
        "GetKernelNDrangeSubGroupCount",
        "GetKernelNDrangeMaxSubGroupSize",
        "GetKernelWorkGroupSize",
        "GetKernelPreferredWorkGroupSizeMultiple",
        "RetainEvent",
        "ReleaseEvent",
        "CreateUserEvent",
        "IsValidEvent",
        "SetUserEventStatus",
        "CaptureEventProfilingInfo",
        "GetDefaultQueue",
        "BuildNDRange",
    ];
    Some(if name.starts_with("GroupNonUniform") || name.starts_with("Subgroup") {
        "sub-group functions are not implemented yet"
    } else if name.starts_with("Image") || name.contains("SampledImage") {
        "this image function is not supported (supported: read_image{f,i,ui} with and without a \
         sampler, write_image{f,i,ui} and the get_image_* size, order and format queries; not \
         mipmaps, multisample images, image gathers or image atomics)"
    } else if name.contains("Pipe") {
        "pipes are not implemented yet"
    } else if DEVICE_ENQUEUE.contains(&name) {
        "device-side enqueue is not implemented yet"
    } else {
        return None;
    })
}

/// "SPIR-V instruction OpX is not supported", with the OpenCL feature when it is known.
pub fn unsupported_instruction(inst: &dr::Instruction) -> TranslateError {
    let name = opname(inst);
    match missing_feature(&name) {
        Some(feature) => unsupported(format!("SPIR-V instruction {name} is not supported: {feature}")),
        None => unsupported(format!("SPIR-V instruction {name} is not supported")),
    }
}

pub fn operand(inst: &dr::Instruction, index: usize) -> TResult<&Operand> {
    inst.operands.get(index).ok_or_else(|| malformed(format!("{} is missing operand {}", opname(inst), index + 1)))
}

/// An id operand (IdRef, IdScope or IdMemorySemantics).
pub fn id_operand(inst: &dr::Instruction, index: usize) -> TResult<Word> {
    match operand(inst, index)? {
        Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id) => Ok(*id),
        other => Err(malformed(format!("{} operand {} should be an id, found {other:?}", opname(inst), index + 1))),
    }
}

pub fn literal_operand(inst: &dr::Instruction, index: usize) -> TResult<u32> {
    match operand(inst, index)? {
        Operand::LiteralBit32(v) => Ok(*v),
        other => Err(malformed(format!(
            "{} operand {} should be a literal number, found {other:?}",
            opname(inst),
            index + 1
        ))),
    }
}

pub fn string_operand(inst: &dr::Instruction, index: usize) -> TResult<&str> {
    match operand(inst, index)? {
        Operand::LiteralString(s) => Ok(s),
        other => Err(malformed(format!("{} operand {} should be a string, found {other:?}", opname(inst), index + 1))),
    }
}

pub fn result_id(inst: &dr::Instruction) -> TResult<Word> {
    inst.result_id.ok_or_else(|| malformed(format!("{} has no result id", opname(inst))))
}

pub fn result_type_id(inst: &dr::Instruction) -> TResult<Word> {
    inst.result_type.ok_or_else(|| malformed(format!("{} has no result type", opname(inst))))
}

// ---------------------------------------------------------------------------------------
// Module-level information.

/// The decorations SoftCL reads, merged over OpDecorate and decoration groups.
#[derive(Debug, Clone, Default)]
pub struct Decorations {
    pub builtin: Option<spirv::BuiltIn>,
    pub linkage: Option<(String, spirv::LinkageType)>,
    pub param_attrs: Vec<spirv::FunctionParameterAttribute>,
    pub saturated: bool,
    pub rounding: Option<spirv::FPRoundingMode>,
    pub alignment: Option<u32>,
    pub volatile: bool,
    pub packed: bool,
}

impl Decorations {
    fn apply(&mut self, decoration: spirv::Decoration, args: &[Operand]) {
        use spirv::Decoration as D;
        match (decoration, args) {
            (D::BuiltIn, [Operand::BuiltIn(b), ..]) => self.builtin = Some(*b),
            (D::LinkageAttributes, [Operand::LiteralString(name), Operand::LinkageType(kind), ..]) => {
                self.linkage = Some((name.clone(), *kind))
            }
            (D::FuncParamAttr, [Operand::FunctionParameterAttribute(a), ..]) => self.param_attrs.push(*a),
            (D::SaturatedConversion, _) => self.saturated = true,
            (D::FPRoundingMode, [Operand::FPRoundingMode(m), ..]) => self.rounding = Some(*m),
            (D::Alignment, [Operand::LiteralBit32(a), ..]) => self.alignment = Some(*a),
            (D::Volatile, _) => self.volatile = true,
            (D::CPacked, _) => self.packed = true,
            _ => {}
        }
    }
    pub fn has_param_attr(&self, attr: spirv::FunctionParameterAttribute) -> bool {
        self.param_attrs.contains(&attr)
    }
}

/// Which extended instruction set an OpExtInstImport names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtSet {
    OpenClStd,
    /// Debug information and non-semantic sets: their instructions are dropped.
    Ignored,
}

/// What a module-level id stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum ModuleDef {
    Type(Type),
    Const {
        konst: ir::Const,
        ty: Type,
    },
    Global {
        var: ir::GlobalVar,
        ptr_ty: Type,
    },
    /// An address `offset` bytes into a module variable, as a pointer of type `ptr_ty`: an
    /// OpSpecConstantOp of an access chain or pointer cast of a variable (`&table[2]` in the
    /// initializer of a program-scope pointer).
    Address {
        var: ir::GlobalVar,
        offset: u64,
        ptr_ty: Type,
    },
    /// An Input variable decorated BuiltIn: `ty` is the type a load of it yields.
    Builtin {
        query: WorkItemQuery,
        ty: Type,
    },
    /// A ballot mask built-in (SubgroupEqMask ... SubgroupLtMask), computed from the sub-group
    /// local id and size when loaded.
    SubgroupMask {
        builtin: spirv::BuiltIn,
        ty: Type,
    },
    /// The NumEnqueuedSubgroups built-in, computed from other queries when loaded.
    NumEnqueuedSubgroups {
        ty: Type,
    },
    Function(ir::Func),
    ExtSet(ExtSet),
    /// OpString, OpDecorationGroup and other ids that are not values.
    Other,
}

/// A kernel entry point.
#[derive(Debug, Clone)]
pub struct EntryPoint {
    pub func_id: Word,
    pub name: String,
    pub func: ir::Func,
}

/// Everything read from the module that function bodies and kernel metadata need.
pub struct SpirvInfo<'a> {
    pub spv: &'a dr::Module,
    pub names: HashMap<Word, &'a str>,
    pub decorations: HashMap<Word, Decorations>,
    pub defs: HashMap<Word, ModuleDef>,
    /// The defining instruction of every type id.
    pub type_insts: HashMap<Word, &'a dr::Instruction>,
    pub strings: Vec<&'a str>,
    /// OpString id -> its text.
    pub string_ids: HashMap<Word, &'a str>,
    /// (input, OpString id) named as a file by an OpLine -> its index in
    /// `Module::source_files` (input 0 unless the module was linked: [`LinkedLines`]).
    pub source_file_index: HashMap<(usize, Word), u32>,
    /// Function id -> the linked input it came from ([`LinkedLines`]; absent: input 0).
    pub function_input: HashMap<Word, usize>,
    pub entry_points: Vec<EntryPoint>,
    /// Nesting depth of each composite IR type created (see `MAX_TYPE_DEPTH`).
    type_depth: HashMap<Type, u32>,
    /// The module declares a pointer with OpTypeForwardPointer (a recursive type: see
    /// `translate_globals`).
    pub has_forward_pointers: bool,
    /// The OpSpecConstantOp access chains, which rspirv reads as bitcasts (`frame_instructions`).
    spec_operands: SpecAccessChains,
}

impl<'a> SpirvInfo<'a> {
    pub fn decorations(&self, id: Word) -> Option<&Decorations> {
        self.decorations.get(&id)
    }

    pub fn type_of(&self, id: Word) -> TResult<Type> {
        match self.defs.get(&id) {
            Some(ModuleDef::Type(t)) => Ok(*t),
            Some(_) => Err(malformed(format!("id %{id} is used as a type but is not one"))),
            None => Err(malformed(format!("type %{id} is not defined (or defined after its use)"))),
        }
    }

    /// The name of an id for messages and IR names.
    pub fn name_of(&self, id: Word) -> Option<&'a str> {
        self.names.get(&id).copied()
    }

    pub fn function_def(&self, id: Word) -> Option<&'a dr::Function> {
        self.spv.functions.iter().find(|f| f.def_id() == Some(id))
    }
}

/// The IR module under construction, with constant interning for the constants the
/// translation itself creates.
#[derive(Default)]
pub struct ModuleBuilder {
    pub module: ir::Module,
    int_consts: HashMap<(Type, u64), ir::Const>,
    null_consts: HashMap<Type, ir::Const>,
    undef_consts: HashMap<Type, ir::Const>,
}

impl ModuleBuilder {
    /// An integer (or bool) constant; `bits` is masked to the type's width.
    pub fn int_const(&mut self, ty: Type, bits: u64) -> ir::Const {
        let width = match self.module.types.get(ty) {
            TypeData::Int { bits } => u32::from(*bits),
            TypeData::Bool => 1,
            _ => 64,
        };
        let bits = if width >= 64 { bits } else { bits & ((1u64 << width) - 1) };
        if let Some(&c) = self.int_consts.get(&(ty, bits)) {
            return c;
        }
        let c = self.module.add_const(ConstData::Int { ty, bits });
        self.int_consts.insert((ty, bits), c);
        c
    }
    pub fn null_const(&mut self, ty: Type) -> ir::Const {
        if let Some(&c) = self.null_consts.get(&ty) {
            return c;
        }
        let c = self.module.add_const(ConstData::Null { ty });
        self.null_consts.insert(ty, c);
        c
    }
    pub fn undef_const(&mut self, ty: Type) -> ir::Const {
        if let Some(&c) = self.undef_consts.get(&ty) {
            return c;
        }
        let c = self.module.add_const(ConstData::Undef { ty });
        self.undef_consts.insert(ty, c);
        c
    }
}

// ---------------------------------------------------------------------------------------
// Entry.

/// Translates a SPIR-V module (host-order words) into an IR module with its kernels.
/// What the line tables of a module linked by spirv-link need from its inputs. spirv-link
/// (SPIRV-Tools 2023.1) keeps the inputs' functions and their OpLines in order, but the
/// OpLine file operands of every input but the first no longer name that input's file
/// strings (they name some other id, or none). Such an input's lines are matched, in order,
/// with the OpLines of the input itself, whose file operands name its own strings.
#[derive(Debug, Clone, Default)]
pub struct LinkedLines {
    /// Per input in link order: its function definitions (with a body) and its OpStrings.
    pub inputs: Vec<InputLines>,
}

#[derive(Debug, Clone, Default)]
pub struct InputLines {
    pub functions: usize,
    pub strings: HashMap<Word, String>,
    /// The file operand of each OpLine in its function definitions, in order.
    pub line_files: Vec<Word>,
}

impl InputLines {
    /// Reads an input module (words of a valid SPIR-V module).
    pub fn of(words: &[u32]) -> Self {
        let mut me = InputLines::default();
        let mut in_function = false;
        let mut has_body = false;
        for (at, opcode, count) in super::link::instructions(words) {
            let operands = &words[at + 1..at + count];
            match Op::from_u32(opcode) {
                Some(Op::String) if operands.len() >= 2 => {
                    if let Some((text, _)) = super::link::literal_string(&operands[1..]) {
                        me.strings.insert(operands[0], text);
                    }
                }
                Some(Op::Line) if in_function && !operands.is_empty() => me.line_files.push(operands[0]),
                Some(Op::Function) => (in_function, has_body) = (true, false),
                Some(Op::Label) if in_function => has_body = true,
                Some(Op::FunctionEnd) => {
                    me.functions += usize::from(has_body);
                    in_function = false;
                }
                _ => {}
            }
        }
        me
    }
}

/// Translates a SPIR-V module into IR; `lines` describes the inputs it was linked from
/// (empty for a module that was not linked).
pub fn translate_linked(words: &[u32], lines: &LinkedLines) -> TResult<ir::Module> {
    let (words, spec_operands) = frame_instructions(words)?;
    let spv = parse_module(&words)?;
    check_header(&spv, &words)?;
    check_ids_in_bound(&spv)?;
    check_capabilities(&spv)?;

    let mut info = SpirvInfo {
        spv: &spv,
        names: HashMap::new(),
        decorations: HashMap::new(),
        defs: HashMap::new(),
        type_insts: HashMap::new(),
        strings: Vec::new(),
        string_ids: HashMap::new(),
        source_file_index: HashMap::new(),
        function_input: HashMap::new(),
        entry_points: Vec::new(),
        type_depth: HashMap::new(),
        has_forward_pointers: false,
        spec_operands,
    };
    let mut builder = ModuleBuilder::default();
    collect_debug_info(&mut info)?;
    collect_decorations(&mut info)?;
    spirv_repair::move_orphan_conversion_decorations(&spv, &mut info.decorations);
    collect_ext_sets(&mut info)?;
    collect_source_files(&mut info, &mut builder, lines)?;
    translate_globals(&mut info, &mut builder)?;
    let bodies = declare_functions(&mut info, &mut builder)?;
    for (func, spv_fn) in bodies {
        spirv_body::translate_function(&info, &mut builder, func, spv_fn)?;
    }
    for entry in &info.entry_points {
        let kernel_info = kernel_args::kernel_info(&info, &builder.module, entry)?;
        builder.module.kernels.push(Kernel { func: entry.func, info: kernel_info });
    }
    Ok(builder.module)
}

fn check_header(spv: &dr::Module, words: &[u32]) -> TResult<()> {
    if spv.header.is_none() {
        return Err(malformed("SPIR-V module without a header"));
    }
    let version = words.get(1).copied().unwrap_or(0);
    let (major, minor) = ((version >> 16) & 0xff, (version >> 8) & 0xff);
    if major != 1 || minor > 6 || version & 0xff00_00ff != 0 {
        return Err(malformed(format!("unsupported SPIR-V version word 0x{version:08x}")));
    }
    Ok(())
}

fn check_ids_in_bound(spv: &dr::Module) -> TResult<()> {
    let bound = spv.header.as_ref().map_or(0, |h| h.bound);
    let check = |id: Word| -> TResult<()> {
        if id == 0 || id >= bound {
            Err(malformed(format!("id %{id} is out of range (the module's id bound is {bound})")))
        } else {
            Ok(())
        }
    };
    let mut defined = HashSet::new();
    for inst in spv.all_inst_iter() {
        if let Some(id) = inst.result_id {
            check(id)?;
            if !defined.insert(id) {
                return Err(malformed(format!("id %{id} is defined twice")));
            }
        }
        if let Some(id) = inst.result_type {
            check(id)?;
        }
        for op in &inst.operands {
            if let Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id) = op {
                // ExtInst operands are ids or literals, depending on the instruction.
                if inst.class.opcode == Op::ExtInst {
                    continue;
                }
                check(*id)?;
            }
        }
    }
    Ok(())
}

fn check_capabilities(spv: &dr::Module) -> TResult<()> {
    let has_kernel = spv
        .capabilities
        .iter()
        .any(|c| matches!(c.operands.first(), Some(Operand::Capability(spirv::Capability::Kernel))));
    if !has_kernel {
        return Err(malformed("not an OpenCL module: the Kernel capability is not declared"));
    }
    let Some(model) = &spv.memory_model else {
        return Err(malformed("not an OpenCL module: OpMemoryModel is missing"));
    };
    match (model.operands.first(), model.operands.get(1)) {
        (Some(Operand::AddressingModel(addressing)), Some(Operand::MemoryModel(memory))) => {
            if *memory != spirv::MemoryModel::OpenCL {
                return Err(malformed(format!("not an OpenCL module: memory model {memory:?}")));
            }
            if *addressing != spirv::AddressingModel::Physical64 {
                // Not for this deployment environment (64-bit devices): as malformed input.
                return Err(malformed(format!("addressing model {addressing:?} is not supported (only Physical64)")));
            }
            Ok(())
        }
        _ => Err(malformed("OpMemoryModel has malformed operands")),
    }
}

fn collect_debug_info(info: &mut SpirvInfo<'_>) -> TResult<()> {
    let spv = info.spv;
    for inst in &spv.debug_names {
        if inst.class.opcode == Op::Name {
            let target = id_operand(inst, 0)?;
            let name = string_operand(inst, 1)?;
            info.names.insert(target, name);
        }
    }
    for inst in &spv.debug_string_source {
        if inst.class.opcode == Op::String {
            let id = result_id(inst)?;
            let text = string_operand(inst, 0)?;
            info.strings.push(text);
            info.string_ids.insert(id, text);
            info.defs.insert(id, ModuleDef::Other);
        }
    }
    Ok(())
}

/// The name of the program's own source in `Module::source_files`: clang reads it from
/// standard input and calls it `<stdin>`, which the build log shows as `<source>`. In a
/// program linked from several compiled sources, the second is `<source 2>`, and so on.
pub const PROGRAM_SOURCE_NAME: &str = "<source>";

/// The name of the `k`-th (from 0) program source of a module.
pub fn program_source_name(k: usize) -> String {
    if k == 0 {
        PROGRAM_SOURCE_NAME.to_string()
    } else {
        format!("<source {}>", k + 1)
    }
}

/// Which program source `name` is ([`program_source_name`]), if it is one.
pub fn program_source_index(name: &str) -> Option<usize> {
    if name == PROGRAM_SOURCE_NAME {
        return Some(0);
    }
    let k: usize = name.strip_prefix("<source ")?.strip_suffix('>')?.parse().ok()?;
    (k >= 2).then(|| k - 1)
}

/// A source file name as the report shows it: clang's `<cwd>/<stdin>` is the program's
/// source ([`PROGRAM_SOURCE_NAME`]); `/./` steps of headers found relative to the working
/// directory are dropped.
pub fn source_file_name(raw: &str) -> String {
    if raw == "<stdin>" || raw.ends_with("/<stdin>") {
        return PROGRAM_SOURCE_NAME.to_string();
    }
    let mut name = raw.to_string();
    while name.contains("/./") {
        name = name.replace("/./", "/");
    }
    name
}

/// Numbers the files OpLine instructions in functions name (`Module::source_files`): the
/// program sources first (one per linked input compiled from source, in link order), then
/// the others in order of first appearance. Files with the same name share an index.
fn collect_source_files(info: &mut SpirvInfo<'_>, builder: &mut ModuleBuilder, lines: &LinkedLines) -> TResult<()> {
    // The input each function came from: the inputs' function definitions in link order.
    let mut bounds = Vec::new();
    let mut end = 0;
    for input in &lines.inputs {
        end += input.functions;
        bounds.push(end);
    }
    let mut defined = 0;
    // (input, file id), its name, and for a program source the input it is.
    let mut named: Vec<((usize, Word), String, Option<usize>)> = Vec::new();
    let mut source_inputs: Vec<usize> = Vec::new();
    // Per input after the first: the linked module's file operand -> the input's own, from
    // the OpLines in order (`None` once they disagree: that input's lines get no location).
    let mut operand_maps: Vec<Option<HashMap<Word, Word>>> = vec![Some(HashMap::new()); lines.inputs.len()];
    let mut lines_seen = vec![0usize; lines.inputs.len()];
    for function in &info.spv.functions {
        let input = if function.blocks.is_empty() || lines.inputs.len() < 2 {
            0
        } else {
            defined += 1;
            bounds.iter().position(|&b| defined <= b).unwrap_or(0)
        };
        if input > 0 {
            if let Some(id) = function.def.as_ref().and_then(|d| d.result_id) {
                info.function_input.insert(id, input);
            }
        }
        for inst in function.all_inst_iter() {
            if inst.class.opcode != Op::Line {
                continue;
            }
            let file = id_operand(inst, 0)?;
            let own = if input == 0 {
                Some(file)
            } else {
                let j = lines_seen[input];
                lines_seen[input] += 1;
                let original = lines.inputs[input].line_files.get(j).copied();
                let map = &mut operand_maps[input];
                let agreed = match (map.as_mut(), original) {
                    (Some(m), Some(o)) => *m.entry(file).or_insert(o) == o,
                    _ => false,
                };
                if !agreed {
                    *map = None;
                }
                original.filter(|_| agreed)
            };
            if named.iter().any(|(key, _, _)| *key == (input, file)) {
                continue;
            }
            // OpLine has no semantic impact: one naming no OpString is ignored.
            let text = match (input, own) {
                (0, Some(f)) => info.string_ids.get(&f).map(|t| t.to_string()),
                (k, Some(f)) => lines.inputs[k].strings.get(&f).cloned(),
                (_, None) => None,
            };
            let Some(text) = text else { continue };
            let name = source_file_name(&text);
            let source = (name == PROGRAM_SOURCE_NAME).then_some(input);
            if source.is_some() && !source_inputs.contains(&input) {
                source_inputs.push(input);
            }
            named.push(((input, file), name, source));
        }
    }
    // An input whose lines did not match its own has none.
    let matched = |input: usize| input == 0 || operand_maps.get(input).is_some_and(|m| m.is_some());
    named.retain(|((input, _), _, _)| matched(*input));
    source_inputs.retain(|&input| matched(input));
    // Each input's program source, numbered in link order.
    source_inputs.sort_unstable();
    for (_, name, source) in named.iter_mut() {
        if let Some(input) = source {
            *name = program_source_name(source_inputs.iter().position(|i| i == input).unwrap_or(0));
        }
    }
    // Stable: the program sources move to the front in their order, the rest keep theirs.
    named.sort_by_key(|(_, name, _)| program_source_index(name).unwrap_or(usize::MAX));
    let files = &mut builder.module.source_files;
    for (key, name, _) in named {
        let index = match files.iter().position(|f| *f == name) {
            Some(index) => index,
            None => {
                files.push(name);
                files.len() - 1
            }
        };
        info.source_file_index.insert(key, index as u32);
    }
    Ok(())
}

fn collect_decorations(info: &mut SpirvInfo<'_>) -> TResult<()> {
    let spv = info.spv;
    let mut raw: HashMap<Word, Vec<(spirv::Decoration, &[Operand])>> = HashMap::new();
    for inst in &spv.annotations {
        match inst.class.opcode {
            Op::Decorate => {
                let target = id_operand(inst, 0)?;
                let Operand::Decoration(decoration) = operand(inst, 1)? else {
                    return Err(malformed("OpDecorate without a decoration"));
                };
                raw.entry(target).or_default().push((*decoration, &inst.operands[2..]));
            }
            Op::DecorationGroup => {
                info.defs.insert(result_id(inst)?, ModuleDef::Other);
            }
            _ => {}
        }
    }
    for inst in &spv.annotations {
        if inst.class.opcode == Op::GroupDecorate {
            let group = id_operand(inst, 0)?;
            let entries = raw.get(&group).cloned().unwrap_or_default();
            for index in 1..inst.operands.len() {
                let target = id_operand(inst, index)?;
                raw.entry(target).or_default().extend(entries.iter().cloned());
            }
        }
    }
    for (id, entries) in raw {
        let mut decorations = Decorations::default();
        for (decoration, args) in entries {
            decorations.apply(decoration, args);
        }
        info.decorations.insert(id, decorations);
    }
    Ok(())
}

fn collect_ext_sets(info: &mut SpirvInfo<'_>) -> TResult<()> {
    let spv = info.spv;
    for inst in &spv.ext_inst_imports {
        let id = result_id(inst)?;
        let name = string_operand(inst, 0)?;
        let set = if name == "OpenCL.std" {
            ExtSet::OpenClStd
        } else if name.starts_with("NonSemantic.") || name.contains("DebugInfo") {
            ExtSet::Ignored
        } else {
            return Err(unsupported(format!("extended instruction set \"{name}\" is not supported")));
        };
        info.defs.insert(id, ModuleDef::ExtSet(set));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Types, constants and module-scope variables.

pub fn address_space(class: spirv::StorageClass) -> TResult<AddressSpace> {
    use spirv::StorageClass as S;
    Ok(match class {
        S::Function => AddressSpace::Private,
        S::CrossWorkgroup => AddressSpace::Global,
        S::UniformConstant => AddressSpace::Constant,
        S::Workgroup => AddressSpace::Local,
        S::Generic => AddressSpace::Generic,
        // Only built-in variables live there; their pointers are never values.
        S::Input => AddressSpace::Private,
        other => return Err(unsupported(format!("storage class {other:?} is not supported"))),
    })
}

fn storage_class_operand(inst: &dr::Instruction, index: usize) -> TResult<spirv::StorageClass> {
    match operand(inst, index)? {
        Operand::StorageClass(class) => Ok(*class),
        other => {
            Err(malformed(format!("{} operand {} should be a storage class, found {other:?}", opname(inst), index + 1)))
        }
    }
}

fn builtin_query(builtin: spirv::BuiltIn) -> TResult<WorkItemQuery> {
    use spirv::BuiltIn as B;
    Ok(match builtin {
        B::GlobalInvocationId => WorkItemQuery::GlobalId,
        B::LocalInvocationId => WorkItemQuery::LocalId,
        B::WorkgroupId => WorkItemQuery::GroupId,
        B::WorkgroupSize => WorkItemQuery::LocalSize,
        B::EnqueuedWorkgroupSize => WorkItemQuery::EnqueuedLocalSize,
        B::NumWorkgroups => WorkItemQuery::NumGroups,
        B::GlobalSize => WorkItemQuery::GlobalSize,
        B::GlobalOffset => WorkItemQuery::GlobalOffset,
        B::WorkDim => WorkItemQuery::WorkDim,
        B::GlobalLinearId => WorkItemQuery::GlobalLinearId,
        B::LocalInvocationIndex => WorkItemQuery::LocalLinearId,
        B::SubgroupSize => WorkItemQuery::SubgroupSize,
        B::SubgroupMaxSize => WorkItemQuery::SubgroupMaxSize,
        B::NumSubgroups => WorkItemQuery::NumSubgroups,
        B::SubgroupId => WorkItemQuery::SubgroupId,
        B::SubgroupLocalInvocationId => WorkItemQuery::SubgroupLocalId,
        other => return Err(unsupported(format!("built-in variable {other:?} is not supported"))),
    })
}

/// Whether constant `konst` is undef or zero in every part (an initializer that says nothing).
fn is_undef_or_null(constants: &ir::Arena<ir::Const, ConstData>, konst: ir::Const) -> bool {
    match &constants[konst] {
        ConstData::Undef { .. } | ConstData::Null { .. } => true,
        ConstData::Composite { parts, .. } => parts.iter().all(|&p| is_undef_or_null(constants, p)),
        ConstData::Int { .. } | ConstData::Float { .. } | ConstData::Address { .. } => false,
    }
}

/// Whether `query` has a value per dimension (a 3-component built-in vector).
pub(crate) fn is_vector_query(query: WorkItemQuery) -> bool {
    use WorkItemQuery as Q;
    matches!(
        query,
        Q::GlobalId
            | Q::LocalId
            | Q::GroupId
            | Q::LocalSize
            | Q::EnqueuedLocalSize
            | Q::GlobalSize
            | Q::GlobalOffset
            | Q::NumGroups
    )
}

/// A built-in variable's type: a 3-component integer vector for the per-dimension
/// built-ins, an integer scalar for the others. Any other declaration would be read wrongly.
fn check_builtin_type(types: &ir::TypeTable, builtin: spirv::BuiltIn, query: WorkItemQuery, ty: Type) -> TResult<()> {
    let int_elem = matches!(types.get(types.scalar_of(ty)), TypeData::Int { .. });
    let ok = match types.get(ty) {
        TypeData::Vector { len: 3, .. } => int_elem && is_vector_query(query),
        TypeData::Int { .. } => !is_vector_query(query),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        let expected = if is_vector_query(query) { "a 3-component integer vector" } else { "an integer scalar" };
        Err(unsupported(format!("built-in variable {builtin:?} is declared with a type other than {expected}")))
    }
}

impl SpirvInfo<'_> {
    fn depth_of(&self, t: Type) -> u32 {
        self.type_depth.get(&t).copied().unwrap_or(0)
    }

    /// Interns a composite type after checking its size and nesting depth.
    fn intern_composite(&mut self, types: &mut ir::TypeTable, data: TypeData, children: &[Type]) -> TResult<Type> {
        let depth = 1 + children.iter().map(|c| self.depth_of(*c)).max().unwrap_or(0);
        if depth > MAX_TYPE_DEPTH {
            return Err(unsupported(format!("types nested deeper than {MAX_TYPE_DEPTH} levels")));
        }
        let t = types.intern(data);
        if types.size_of(t) > MAX_TYPE_SIZE {
            return Err(unsupported(format!("a type of {} bytes is too large", types.size_of(t))));
        }
        self.type_depth.insert(t, depth);
        Ok(t)
    }
}

fn translate_type(info: &mut SpirvInfo<'_>, builder: &mut ModuleBuilder, inst: &dr::Instruction) -> TResult<Type> {
    let types = &mut builder.module.types;
    Ok(match inst.class.opcode {
        Op::TypeVoid => types.void(),
        Op::TypeBool => types.bool(),
        Op::TypeInt => {
            let width = literal_operand(inst, 0)?;
            if !matches!(width, 8 | 16 | 32 | 64) {
                return Err(unsupported(format!("{width}-bit integers are not supported")));
            }
            types.int(width as u16)
        }
        Op::TypeFloat => {
            let width = literal_operand(inst, 0)?;
            if !matches!(width, 16 | 32 | 64) {
                return Err(unsupported(format!("{width}-bit floats are not supported")));
            }
            types.float(width as u16)
        }
        Op::TypeVector => {
            let elem = info.type_of(id_operand(inst, 0)?)?;
            let len = literal_operand(inst, 1)?;
            if !matches!(len, 2 | 3 | 4 | 8 | 16) {
                return Err(malformed(format!("vectors of {len} components are not allowed")));
            }
            if !matches!(types.get(elem), TypeData::Bool | TypeData::Int { .. } | TypeData::Float { .. }) {
                return Err(malformed("vector of a non-scalar type"));
            }
            info.intern_composite(types, TypeData::Vector { elem, len }, &[elem])?
        }
        Op::TypeArray => {
            let elem = info.type_of(id_operand(inst, 0)?)?;
            let length_id = id_operand(inst, 1)?;
            let len = match info.defs.get(&length_id) {
                Some(ModuleDef::Const { konst, .. }) => match &builder.module.constants[*konst] {
                    ConstData::Int { bits, .. } => *bits,
                    _ => return Err(malformed("array length is not an integer constant")),
                },
                _ => return Err(malformed("array length is not a constant")),
            };
            if len == 0 {
                return Err(malformed("array of length 0"));
            }
            check_sized(types, elem)?;
            let elem_size = types.size_of(elem);
            if elem_size.checked_mul(len).is_none_or(|size| size > MAX_TYPE_SIZE) {
                return Err(unsupported(format!("an array of {len} elements is too large")));
            }
            info.intern_composite(types, TypeData::Array { elem, len }, &[elem])?
        }
        Op::TypeStruct => {
            let mut fields = Vec::with_capacity(inst.operands.len());
            for index in 0..inst.operands.len() {
                let field = info.type_of(id_operand(inst, index)?)?;
                check_sized(types, field)?;
                fields.push(field);
            }
            let packed = inst.result_id.and_then(|id| info.decorations(id)).is_some_and(|d| d.packed);
            let children = fields.clone();
            info.intern_composite(types, TypeData::Struct { fields, packed }, &children)?
        }
        Op::TypePointer => {
            let space = address_space(storage_class_operand(inst, 0)?)?;
            let pointee = info.type_of(id_operand(inst, 1)?)?;
            info.intern_composite(types, TypeData::Pointer { space, pointee }, &[pointee])?
        }
        Op::TypeFunction => {
            let ret = info.type_of(id_operand(inst, 0)?)?;
            let mut params = Vec::new();
            for index in 1..inst.operands.len() {
                params.push(info.type_of(id_operand(inst, index)?)?);
            }
            let mut children = params.clone();
            children.push(ret);
            info.intern_composite(types, TypeData::Function { ret, params }, &children)?
        }
        Op::TypeOpaque => types.intern(TypeData::Opaque { name: string_operand(inst, 0)?.to_string() }),
        Op::TypeEvent => types.intern(TypeData::Opaque { name: "event_t".into() }),
        Op::TypeDeviceEvent => types.intern(TypeData::Opaque { name: "clk_event_t".into() }),
        Op::TypeReserveId => types.intern(TypeData::Opaque { name: "reserve_id_t".into() }),
        Op::TypeQueue => types.intern(TypeData::Opaque { name: "queue_t".into() }),
        Op::TypePipe => types.intern(TypeData::Opaque { name: "pipe".into() }),
        Op::TypeSampler => types.intern(TypeData::Opaque { name: "sampler_t".into() }),
        Op::TypeImage | Op::TypeSampledImage => {
            types.intern(TypeData::Opaque { name: kernel_args::image_type_name(inst) })
        }
        _ => return Err(unsupported(format!("type instruction {} is not supported", opname(inst)))),
    })
}

/// Rejects types without a size where a member or element is needed.
fn check_sized(types: &ir::TypeTable, t: Type) -> TResult<()> {
    match types.get(t) {
        TypeData::Void | TypeData::Function { .. } => Err(malformed("a void or function type used as a member")),
        _ => Ok(()),
    }
}

fn constant_bits(inst: &dr::Instruction, index: usize) -> TResult<u64> {
    match operand(inst, index)? {
        Operand::LiteralBit32(v) => Ok(u64::from(*v)),
        Operand::LiteralBit64(v) => Ok(*v),
        other => Err(malformed(format!("{} value should be a number, found {other:?}", opname(inst)))),
    }
}

fn translate_constant(
    info: &SpirvInfo<'_>,
    builder: &mut ModuleBuilder,
    inst: &dr::Instruction,
    ty: Type,
) -> TResult<ir::Const> {
    let type_data = builder.module.types.get(ty).clone();
    Ok(match inst.class.opcode {
        Op::Constant | Op::SpecConstant => match type_data {
            TypeData::Int { .. } => builder.int_const(ty, constant_bits(inst, 0)?),
            TypeData::Float { bits } => {
                let value = constant_bits(inst, 0)?;
                let value = if bits >= 64 { value } else { value & ((1u64 << bits) - 1) };
                builder.module.add_const(ConstData::Float { ty, bits: value })
            }
            _ => return Err(malformed(format!("{} of a non-numeric type", opname(inst)))),
        },
        Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
            if type_data != TypeData::Bool {
                return Err(malformed(format!("{} of a non-bool type", opname(inst))));
            }
            let value = matches!(inst.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue);
            builder.int_const(ty, u64::from(value))
        }
        Op::ConstantNull => builder.null_const(ty),
        Op::Undef => builder.undef_const(ty),
        Op::ConstantComposite | Op::SpecConstantComposite => {
            let mut parts = Vec::with_capacity(inst.operands.len());
            for index in 0..inst.operands.len() {
                let id = id_operand(inst, index)?;
                let part_ty = match &type_data {
                    TypeData::Vector { elem, .. } | TypeData::Array { elem, .. } => Some(*elem),
                    TypeData::Struct { fields, .. } => fields.get(index).copied(),
                    _ => None,
                };
                match (info.defs.get(&id), part_ty) {
                    (Some(ModuleDef::Const { konst, .. }), _) => parts.push(*konst),
                    (Some(def), Some(part_ty)) if address_of(def).is_some() => {
                        parts.push(address_const(builder, def, part_ty)?)
                    }
                    _ => return Err(malformed(format!("constituent %{id} of a constant composite is not a constant"))),
                }
            }
            let expected = match &type_data {
                TypeData::Vector { len, .. } => *len as usize,
                TypeData::Array { len, .. } => usize::try_from(*len).unwrap_or(usize::MAX),
                TypeData::Struct { fields, .. } => fields.len(),
                _ => return Err(malformed("OpConstantComposite of a non-composite type")),
            };
            if parts.len() != expected {
                return Err(malformed(format!(
                    "OpConstantComposite has {} constituents, its type needs {expected}",
                    parts.len()
                )));
            }
            builder.module.add_const(ConstData::Composite { ty, parts })
        }
        Op::ConstantSampler => {
            // The `sampler_t` bits of opencl-c-base.h (`crate::image::Sampler::bits`).
            let addressing = match inst.operands.first() {
                Some(dr::Operand::SamplerAddressingMode(m)) => match m {
                    spirv::SamplerAddressingMode::None => crate::image::sample::CLK_ADDRESS_NONE,
                    spirv::SamplerAddressingMode::ClampToEdge => crate::image::sample::CLK_ADDRESS_CLAMP_TO_EDGE,
                    spirv::SamplerAddressingMode::Clamp => crate::image::sample::CLK_ADDRESS_CLAMP,
                    spirv::SamplerAddressingMode::Repeat => crate::image::sample::CLK_ADDRESS_REPEAT,
                    spirv::SamplerAddressingMode::RepeatMirrored => crate::image::sample::CLK_ADDRESS_MIRRORED_REPEAT,
                },
                _ => return Err(malformed("OpConstantSampler without an addressing mode")),
            };
            let normalized = match inst.operands.get(1) {
                Some(dr::Operand::LiteralBit32(n)) => *n != 0,
                _ => return Err(malformed("OpConstantSampler without its normalized-coordinates flag")),
            };
            let filter = match inst.operands.get(2) {
                Some(dr::Operand::SamplerFilterMode(spirv::SamplerFilterMode::Nearest)) => {
                    crate::image::sample::CLK_FILTER_NEAREST
                }
                Some(dr::Operand::SamplerFilterMode(spirv::SamplerFilterMode::Linear)) => {
                    crate::image::sample::CLK_FILTER_LINEAR
                }
                _ => return Err(malformed("OpConstantSampler without a filter mode")),
            };
            if !matches!(&type_data, TypeData::Opaque { name } if name == "sampler_t") {
                return Err(malformed("OpConstantSampler of a type that is not OpTypeSampler"));
            }
            builder.int_const(ty, u64::from(addressing | filter | u32::from(normalized)))
        }
        _ => return Err(unsupported(format!("constant instruction {} is not supported", opname(inst)))),
    })
}

fn translate_globals(info: &mut SpirvInfo<'_>, builder: &mut ModuleBuilder) -> TResult<()> {
    let spv = info.spv;
    for inst in &spv.types_global_values {
        let opcode = inst.class.opcode;
        if matches!(opcode, Op::Line | Op::NoLine | Op::Nop) {
            continue;
        }
        if opcode == Op::TypeForwardPointer {
            // A pointer to a struct defined later: the member of a recursive type (a linked
            // list's `struct Node *next`). IR types are interned by structure and cannot form a
            // cycle, so until its OpTypePointer the id stands for a pointer to bytes of the same
            // address space (the same size and alignment); the OpTypePointer then redefines it
            // as the real pointer type for every later use. An access chain that reaches such a
            // member casts the member's address to the type SPIR-V gives it
            // (`spirv_body.rs`, `translate_access_chain`).
            let id = id_operand(inst, 0)?;
            let space = address_space(storage_class_operand(inst, 1)?)?;
            let types = &mut builder.module.types;
            let bytes = types.int(8);
            let t = info.intern_composite(types, TypeData::Pointer { space, pointee: bytes }, &[bytes])?;
            info.defs.insert(id, ModuleDef::Type(t));
            info.has_forward_pointers = true;
            continue;
        }
        let id = result_id(inst)?;
        if opcode.is_type() {
            let t = translate_type(info, builder, inst)?;
            info.type_insts.insert(id, inst);
            info.defs.insert(id, ModuleDef::Type(t));
        } else if opcode == Op::Variable {
            let def = translate_global_variable(info, builder, inst, id)?;
            info.defs.insert(id, def);
        } else if opcode == Op::SpecConstantOp {
            let def = translate_address_constant(info, builder, inst)?;
            info.defs.insert(id, def);
        } else if opcode.is_constant() || opcode == Op::Undef {
            let ty = info.type_of(result_type_id(inst)?)?;
            let konst = translate_constant(info, builder, inst, ty)?;
            info.defs.insert(id, ModuleDef::Const { konst, ty });
        } else {
            return Err(unsupported(format!("module-scope instruction {} is not supported", opname(inst))));
        }
    }
    Ok(())
}

/// The variable and byte offset an address definition stands for.
fn address_of(def: &ModuleDef) -> Option<(ir::GlobalVar, u64)> {
    match def {
        ModuleDef::Global { var, .. } => Some((*var, 0)),
        ModuleDef::Address { var, offset, .. } => Some((*var, *offset)),
        _ => None,
    }
}

/// The constant of type `ty` (a pointer) holding the address `def` stands for.
fn address_const(builder: &mut ModuleBuilder, def: &ModuleDef, ty: Type) -> TResult<ir::Const> {
    let (var, offset) = address_of(def).ok_or_else(|| malformed("an address constant of a non-address"))?;
    if !matches!(builder.module.types.get(ty), TypeData::Pointer { .. }) {
        return Err(malformed("the address of a variable where the type is not a pointer"));
    }
    if builder.module.globals[var].space == AddressSpace::Local {
        return Err(unsupported("the address of a __local variable in an initializer"));
    }
    Ok(builder.module.add_const(ConstData::Address { ty, var, offset }))
}

/// An OpSpecConstantOp at module scope: the address of (a part of) a module variable, from a
/// constant access chain or pointer cast (what llvm-spirv writes for `&table[2]` and
/// `(int *)&x` in initializers). Other operations are not supported.
fn translate_address_constant(
    info: &SpirvInfo<'_>,
    builder: &mut ModuleBuilder,
    inst: &dr::Instruction,
) -> TResult<ModuleDef> {
    let ptr_ty = info.type_of(result_type_id(inst)?)?;
    // The operation and its operand ids.
    let (op, ids): (Op, Vec<Word>) = match info.spec_operands.get(&result_id(inst)?) {
        Some(chain) => chain.clone(),
        None => match inst.operands.first() {
            Some(Operand::LiteralSpecConstantOpInteger(op)) => {
                (*op, (1..inst.operands.len()).map(|i| id_operand(inst, i)).collect::<TResult<_>>()?)
            }
            _ => return Err(malformed("OpSpecConstantOp without its operation")),
        },
    };
    let unsupported_op = || unsupported(format!("OpSpecConstantOp {op:?} is not supported"));
    let base_id = *ids.first().ok_or_else(unsupported_op)?;
    let Some((var, base_offset)) = info.defs.get(&base_id).and_then(address_of) else {
        return Err(unsupported_op());
    };
    let base_ty = match info.defs.get(&base_id) {
        Some(ModuleDef::Global { ptr_ty, .. } | ModuleDef::Address { ptr_ty, .. }) => *ptr_ty,
        _ => return Err(unsupported_op()),
    };
    let offset = match op {
        Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::Bitcast => 0,
        Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
            let types = &builder.module.types;
            let pointee_of = |t: Type| match types.get(t) {
                TypeData::Pointer { pointee, .. } => Ok(*pointee),
                _ => Err(malformed("OpSpecConstantOp access chain of a non-pointer")),
            };
            let (base_pointee, result_pointee) = (pointee_of(base_ty)?, pointee_of(ptr_ty)?);
            let index = |i: usize| -> TResult<u64> {
                match info.defs.get(&ids[i]) {
                    Some(ModuleDef::Const { konst, .. }) => match &builder.module.constants[*konst] {
                        ConstData::Int { bits, .. } => Ok(*bits),
                        ConstData::Null { .. } => Ok(0),
                        _ => Err(unsupported("an access chain constant with a non-integer index")),
                    },
                    _ => Err(unsupported("an access chain constant with a non-constant index")),
                }
            };
            let mut next = 1;
            let mut offset = 0i64;
            let mut at = base_pointee;
            if matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) {
                // llvm-spirv writes a byte offset (`getelementptr i8`) on a pointer of another
                // type as an element step over the result's pointee: the base's would give
                // a different address than the one the source meant.
                let step = if ids.len() == 2 && result_pointee != base_pointee {
                    types.size_of(result_pointee)
                } else {
                    types.size_of(base_pointee)
                };
                if ids.len() < 2 {
                    return Err(malformed("OpSpecConstantOp access chain without an element"));
                }
                offset = offset.wrapping_add((index(1)? as i64).wrapping_mul(step as i64));
                next = 2;
            }
            for i in next..ids.len() {
                let k = index(i)?;
                at = match types.get(at).clone() {
                    TypeData::Struct { fields, .. } => {
                        let f = *fields.get(k as usize).ok_or_else(|| malformed("access chain past a struct"))?;
                        offset = offset.wrapping_add(types.field_offset(at, k as usize) as i64);
                        f
                    }
                    TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                        offset = offset.wrapping_add((k as i64).wrapping_mul(types.size_of(elem) as i64));
                        elem
                    }
                    _ => return Err(malformed("access chain into a scalar")),
                };
            }
            offset as u64
        }
        _ => return Err(unsupported_op()),
    };
    Ok(ModuleDef::Address { var, offset: base_offset.wrapping_add(offset), ptr_ty })
}

fn translate_global_variable(
    info: &mut SpirvInfo<'_>,
    builder: &mut ModuleBuilder,
    inst: &dr::Instruction,
    id: Word,
) -> TResult<ModuleDef> {
    let ptr_ty = info.type_of(result_type_id(inst)?)?;
    let TypeData::Pointer { pointee, .. } = builder.module.types.get(ptr_ty).clone() else {
        return Err(malformed(format!("variable %{id} does not have a pointer type")));
    };
    let class = storage_class_operand(inst, 0)?;
    let decorations = info.decorations(id).cloned().unwrap_or_default();
    let name = info
        .name_of(id)
        .map(str::to_string)
        .or_else(|| decorations.linkage.as_ref().map(|(n, _)| n.clone()))
        .unwrap_or_else(|| format!("g{id}"));
    // Built-in variables are imports by nature; any other import has no definition.
    if let (Some((link_name, spirv::LinkageType::Import)), None) = (&decorations.linkage, decorations.builtin) {
        return Err(undefined(format!("undefined variable {link_name}")));
    }
    let align = decorations.alignment.unwrap_or_else(|| builder.module.types.align_of(pointee) as u32).max(1);
    let initializer = match inst.operands.get(1) {
        Some(_) => {
            let init_id = id_operand(inst, 1)?;
            match info.defs.get(&init_id) {
                Some(ModuleDef::Const { konst, ty }) if *ty == pointee => Some(*konst),
                // `global int *p = &x;` (llvm-spirv gives the initializer the type of `&x`,
                // which may differ from the variable's pointer type: the address is the same).
                Some(def) if address_of(def).is_some() => Some(address_const(builder, def, pointee)?),
                Some(ModuleDef::Const { .. }) => {
                    return Err(malformed(format!("the initializer of variable {name} has the wrong type")))
                }
                _ => return Err(unsupported(format!("the initializer of variable {name} is not a constant"))),
            }
        }
        None => None,
    };
    use spirv::StorageClass as S;
    // A built-in is read from the work-item's state whatever its storage class: Input, or
    // UniformConstant as older translators declare them (reading that as a zeroed constant
    // would give every work-item the values of work-item 0).
    if let Some(builtin) = decorations.builtin {
        if !matches!(class, S::Input | S::UniformConstant) {
            return Err(unsupported(format!("built-in variable {name} ({builtin:?}) in storage class {class:?}")));
        }
        if initializer.is_some() {
            return Err(malformed(format!("built-in variable {name} ({builtin:?}) has an initializer")));
        }
        if builtin == spirv::BuiltIn::NumEnqueuedSubgroups {
            return Ok(ModuleDef::NumEnqueuedSubgroups { ty: pointee });
        }
        if matches!(
            builtin,
            spirv::BuiltIn::SubgroupEqMask
                | spirv::BuiltIn::SubgroupGeMask
                | spirv::BuiltIn::SubgroupGtMask
                | spirv::BuiltIn::SubgroupLeMask
                | spirv::BuiltIn::SubgroupLtMask
        ) {
            return Ok(ModuleDef::SubgroupMask { builtin, ty: pointee });
        }
        let query = builtin_query(builtin)?;
        check_builtin_type(&builder.module.types, builtin, query, pointee)?;
        builder.module.globals.push(GlobalVarData {
            name,
            ty: pointee,
            space: AddressSpace::Private,
            init: None,
            builtin: Some(BuiltinVar::WorkItem(query)),
            align,
        });
        return Ok(ModuleDef::Builtin { query, ty: pointee });
    }
    match class {
        S::Input => Err(unsupported(format!("Input variable {name} is not a built-in"))),
        S::Workgroup | S::UniformConstant | S::CrossWorkgroup => {
            let space = address_space(class)?;
            let init = match (space, initializer) {
                // Local memory is not initialised: clang gives a `__local struct S s;` an
                // undef (or null) initializer, which means nothing. A real value would be
                // silently lost, so it is refused.
                (AddressSpace::Local, Some(konst)) if !is_undef_or_null(&builder.module.constants, konst) => {
                    return Err(malformed(format!("__local variable {name} has an initializer")))
                }
                (AddressSpace::Local, _) => None,
                // Program-scope variables without an initializer start zeroed.
                (_, Some(konst)) => Some(konst),
                (_, None) => Some(builder.null_const(pointee)),
            };
            let var =
                builder.module.globals.push(GlobalVarData { name, ty: pointee, space, init, builtin: None, align });
            Ok(ModuleDef::Global { var, ptr_ty })
        }
        // Private data at module scope: llvm-spirv writes the constant parts of a private
        // aggregate's initializer this way (`struct S d = {{1, 2, 3}, &x}` keeps its array in
        // a `constinit` variable, copied into `d` when `d` is initialised). Each is one copy of
        // its initializer in the program's data, shared by the work-items, which only read it:
        // a writable global (LLVM finds it constant when nothing writes it), so that a module
        // that writes it anyway cannot fault.
        S::Function => {
            let init = Some(initializer.unwrap_or_else(|| builder.null_const(pointee)));
            let var = builder.module.globals.push(GlobalVarData {
                name,
                ty: pointee,
                space: AddressSpace::Private,
                init,
                builtin: None,
                align,
            });
            Ok(ModuleDef::Global { var, ptr_ty })
        }
        other => Err(unsupported(format!("variable {name} has unsupported storage class {other:?}"))),
    }
}

// ---------------------------------------------------------------------------------------
// Functions.

/// Declares every function (so that calls can refer to any of them) and returns the ones
/// with bodies to translate.
fn declare_functions<'a>(
    info: &mut SpirvInfo<'a>,
    builder: &mut ModuleBuilder,
) -> TResult<Vec<(ir::Func, &'a dr::Function)>> {
    let spv = info.spv;
    // Entry points: which function ids are kernels, under which names.
    let mut kernel_names: Vec<(Word, String)> = Vec::new();
    for inst in &spv.entry_points {
        match operand(inst, 0)? {
            Operand::ExecutionModel(spirv::ExecutionModel::Kernel) => {}
            Operand::ExecutionModel(other) => {
                return Err(unsupported(format!("entry point with execution model {other:?}")))
            }
            _ => return Err(malformed("OpEntryPoint without an execution model")),
        }
        kernel_names.push((id_operand(inst, 1)?, string_operand(inst, 2)?.to_string()));
    }

    // Names of defined functions, to resolve imports that are defined after all.
    let mut defined_by_name: HashMap<String, Word> = HashMap::new();
    for f in &spv.functions {
        let id = f.def_id().ok_or_else(|| malformed("OpFunction without a result id"))?;
        if f.blocks.is_empty() {
            continue;
        }
        if let Some((name, _)) = info.decorations(id).and_then(|d| d.linkage.as_ref()) {
            defined_by_name.insert(name.clone(), id);
        }
        if let Some(name) = info.name_of(id) {
            defined_by_name.entry(name.to_string()).or_insert(id);
        }
    }

    let mut used_names: HashSet<String> = kernel_names.iter().map(|(_, n)| n.clone()).collect();
    let mut bodies = Vec::new();
    let mut imports: Vec<(Word, Word)> = Vec::new();
    for f in &spv.functions {
        let def = f.def.as_ref().ok_or_else(|| malformed("function without OpFunction"))?;
        let id = result_id(def)?;
        let fn_type = info.type_of(id_operand(def, 1)?)?;
        let TypeData::Function { ret, params } = builder.module.types.get(fn_type).clone() else {
            return Err(malformed(format!("function %{id} does not have a function type")));
        };
        if info.type_of(result_type_id(def)?)? != ret {
            return Err(malformed(format!("function %{id}: return type differs from its function type")));
        }
        let link_name = info.decorations(id).and_then(|d| d.linkage.clone());
        if f.blocks.is_empty() {
            let name = link_name
                .map(|(n, _)| n)
                .or_else(|| info.name_of(id).map(str::to_string))
                .unwrap_or_else(|| format!("%{id}"));
            match defined_by_name.get(&name) {
                Some(&target) => imports.push((id, target)),
                None => return Err(undefined(format!("undefined function {name}"))),
            }
            continue;
        }
        if f.parameters.len() != params.len() {
            return Err(malformed(format!(
                "function %{id} has {} parameters, its type {}",
                f.parameters.len(),
                params.len()
            )));
        }
        let kernel_name = kernel_names.iter().find(|(k, _)| *k == id).map(|(_, n)| n.clone());
        let (name, kind) = match &kernel_name {
            Some(n) => (n.clone(), FuncKind::Kernel),
            None => {
                let base = info
                    .name_of(id)
                    .map(str::to_string)
                    .or_else(|| link_name.map(|(n, _)| n))
                    .unwrap_or_else(|| format!("f{id}"));
                let mut name = base.clone();
                let mut suffix = 1;
                while used_names.contains(&name) {
                    name = format!("{base}.{suffix}");
                    suffix += 1;
                }
                used_names.insert(name.clone());
                (name, FuncKind::Function)
            }
        };
        let func = builder.module.functions.push(ir::Function::new(name, kind, params, ret));
        info.defs.insert(id, ModuleDef::Function(func));
        bodies.push((func, f));
    }
    for (import, target) in imports {
        if let Some(def) = info.defs.get(&target).cloned() {
            info.defs.insert(import, def);
        }
    }
    for (func_id, name) in kernel_names {
        match info.defs.get(&func_id) {
            Some(ModuleDef::Function(func)) => {
                let func = *func;
                if !info.entry_points.iter().any(|e| e.name == name) {
                    info.entry_points.push(EntryPoint { func_id, name, func });
                }
            }
            _ => return Err(malformed(format!("entry point {name} does not name a function with a body"))),
        }
    }
    Ok(bodies)
}
