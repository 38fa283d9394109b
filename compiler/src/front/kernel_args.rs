//! Kernel metadata from SPIR-V: arguments (names, source type names, qualifiers, address
//! spaces, how they are passed, their layout in the argument block) and attributes
//! (execution modes).

use super::spirv::{
    id_operand, literal_operand, malformed, operand, string_operand, unsupported, EntryPoint, SpirvInfo, TResult,
};
use crate::ir::{self, TypeData};
use crate::kernel_info::{AccessQualifier, AddressSpace, ArgKind, KernelArg, KernelInfo, TypeQualifiers};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op, Word};

/// The OpenCL C name of an image type ("image2d_t", "image1d_buffer_t", ...).
pub fn image_type_name(inst: &dr::Instruction) -> String {
    // OpTypeSampledImage refers to an image type; OpTypeImage: sampled type, Dim, depth,
    // arrayed, multisampled, sampled, format, access qualifier.
    if inst.class.opcode == Op::TypeSampledImage {
        return "sampled_image_t".to_string();
    }
    let dim = match inst.operands.get(1) {
        Some(Operand::Dim(dim)) => *dim,
        _ => return "image_t".to_string(),
    };
    let arrayed = matches!(inst.operands.get(3), Some(Operand::LiteralBit32(1)));
    let depth = matches!(inst.operands.get(2), Some(Operand::LiteralBit32(1)));
    let base = match dim {
        spirv::Dim::Dim1D => "image1d",
        spirv::Dim::Dim2D => "image2d",
        spirv::Dim::Dim3D => "image3d",
        spirv::Dim::DimBuffer => "image1d_buffer",
        _ => "image",
    };
    format!("{base}{}{}_t", if arrayed { "_array" } else { "" }, if depth { "_depth" } else { "" })
}

fn image_access(inst: &dr::Instruction) -> AccessQualifier {
    match inst.operands.get(7) {
        Some(Operand::AccessQualifier(spirv::AccessQualifier::WriteOnly)) => AccessQualifier::WriteOnly,
        Some(Operand::AccessQualifier(spirv::AccessQualifier::ReadWrite)) => AccessQualifier::ReadWrite,
        _ => AccessQualifier::ReadOnly,
    }
}

/// The OpenCL C spelling of a SPIR-V type, for modules without kernel_arg_type strings.
/// SPIR-V for OpenCL does not keep signedness: integers read as the unsigned types.
pub fn spirv_type_name(info: &SpirvInfo<'_>, id: Word, depth: u32) -> String {
    if depth > 16 {
        return "?".to_string();
    }
    let Some(inst) = info.type_insts.get(&id) else {
        return "?".to_string();
    };
    match inst.class.opcode {
        Op::TypeVoid => "void".into(),
        Op::TypeBool => "bool".into(),
        Op::TypeInt => {
            let signed = matches!(inst.operands.get(1), Some(Operand::LiteralBit32(1)));
            let base = match inst.operands.first() {
                Some(Operand::LiteralBit32(8)) => "char",
                Some(Operand::LiteralBit32(16)) => "short",
                Some(Operand::LiteralBit32(32)) => "int",
                _ => "long",
            };
            if signed {
                base.into()
            } else {
                format!("u{base}")
            }
        }
        Op::TypeFloat => match inst.operands.first() {
            Some(Operand::LiteralBit32(16)) => "half".into(),
            Some(Operand::LiteralBit32(64)) => "double".into(),
            _ => "float".into(),
        },
        Op::TypeVector => {
            let elem = id_operand(inst, 0).map(|e| spirv_type_name(info, e, depth + 1)).unwrap_or_default();
            let len = literal_operand(inst, 1).unwrap_or(0);
            format!("{elem}{len}")
        }
        Op::TypePointer => {
            let pointee = id_operand(inst, 1).map(|p| spirv_type_name(info, p, depth + 1)).unwrap_or_default();
            format!("{pointee}*")
        }
        Op::TypeArray => {
            let elem = id_operand(inst, 0).map(|e| spirv_type_name(info, e, depth + 1)).unwrap_or_default();
            format!("{elem}[]")
        }
        Op::TypeStruct => match inst.result_id.and_then(|r| info.name_of(r)) {
            Some(name) => {
                if let Some(rest) = name.strip_prefix("struct.") {
                    format!("struct {rest}")
                } else if let Some(rest) = name.strip_prefix("union.") {
                    format!("union {rest}")
                } else {
                    name.to_string()
                }
            }
            None => "struct".into(),
        },
        Op::TypeOpaque => {
            let name = string_operand(inst, 0).unwrap_or("opaque");
            let name = name.strip_prefix("opencl.").unwrap_or(name);
            format!("struct {name}")
        }
        Op::TypeImage | Op::TypeSampledImage => image_type_name(inst),
        Op::TypeSampler => "sampler_t".into(),
        Op::TypeEvent => "event_t".into(),
        Op::TypeQueue => "queue_t".into(),
        Op::TypeDeviceEvent => "clk_event_t".into(),
        Op::TypeReserveId => "reserve_id_t".into(),
        Op::TypePipe => "pipe".into(),
        _ => "?".into(),
    }
}

/// The comma-separated list of the OpString "<prefix>.<kernel>.a,b,c," (llvm-spirv's
/// `--preserve-ocl-kernel-arg-type-metadata-through-string`).
fn arg_metadata<'s>(info: &SpirvInfo<'s>, prefix: &str, kernel: &str) -> Option<Vec<&'s str>> {
    let key = format!("{prefix}.{kernel}.");
    info.strings.iter().find_map(|s| s.strip_prefix(key.as_str())).map(|list| list.split(',').collect())
}

fn parse_qualifiers(text: &str) -> TypeQualifiers {
    let mut q = TypeQualifiers::default();
    for word in text.split_whitespace() {
        match word {
            "const" => q.is_const = true,
            "restrict" => q.is_restrict = true,
            "volatile" => q.is_volatile = true,
            "pipe" => q.is_pipe = true,
            _ => {}
        }
    }
    q
}

/// Decodes the VecTypeHint operand: the low 16 bits name the component type, the high 16
/// bits the number of components.
pub fn vec_type_hint_name(encoded: u32) -> Option<String> {
    let scalar = match encoded & 0xffff {
        0 => "char",
        1 => "short",
        2 => "int",
        3 => "long",
        4 => "half",
        5 => "float",
        6 => "double",
        _ => return None,
    };
    match encoded >> 16 {
        0 | 1 => Some(scalar.to_string()),
        n @ (2 | 3 | 4 | 8 | 16) => Some(format!("{scalar}{n}")),
        _ => None,
    }
}

fn three_literals(inst: &dr::Instruction) -> TResult<[usize; 3]> {
    Ok([literal_operand(inst, 2)? as usize, literal_operand(inst, 3)? as usize, literal_operand(inst, 4)? as usize])
}

/// The metadata of kernel `entry`.
pub fn kernel_info(info: &SpirvInfo<'_>, module: &ir::Module, entry: &EntryPoint) -> TResult<KernelInfo> {
    let spv_fn =
        info.function_def(entry.func_id).ok_or_else(|| malformed(format!("kernel {} has no function", entry.name)))?;
    let type_names = arg_metadata(info, "kernel_arg_type", &entry.name);
    let type_quals = arg_metadata(info, "kernel_arg_type_qual", &entry.name);
    let types = &module.types;

    let mut args = Vec::with_capacity(spv_fn.parameters.len());
    let mut cursor = 0usize;
    for (index, param) in spv_fn.parameters.iter().enumerate() {
        let param_id = param.result_id.ok_or_else(|| malformed("OpFunctionParameter without a result id"))?;
        let type_id = param.result_type.ok_or_else(|| malformed("OpFunctionParameter without a type"))?;
        let ty = info.type_of(type_id)?;
        let decorations = info.decorations(param_id).cloned().unwrap_or_default();
        let type_inst = info.type_insts.get(&type_id).copied();
        let mut access = AccessQualifier::None;
        let (kind, address_space, size, align) = match types.get(ty) {
            TypeData::Pointer { space, pointee } => match space {
                AddressSpace::Global | AddressSpace::Constant => {
                    (ArgKind::Buffer { address_space: *space }, *space, 8, 8)
                }
                AddressSpace::Local => (ArgKind::Local, AddressSpace::Local, 8, 8),
                AddressSpace::Private if decorations.has_param_attr(spirv::FunctionParameterAttribute::ByVal) => {
                    let size = types.size_of(*pointee) as usize;
                    let align = types.align_of(*pointee) as usize;
                    (ArgKind::Value, AddressSpace::Private, size, align)
                }
                other => {
                    return Err(unsupported(format!(
                        "argument {index} of kernel {} is a pointer to the {other:?} address space",
                        entry.name
                    )))
                }
            },
            TypeData::Opaque { .. } => match type_inst.map(|i| i.class.opcode) {
                Some(Op::TypeSampler) => (ArgKind::Sampler, AddressSpace::Private, 8, 8),
                Some(Op::TypeImage) => {
                    access = type_inst.map_or(AccessQualifier::ReadOnly, image_access);
                    (ArgKind::Image, AddressSpace::Global, 8, 8)
                }
                _ => {
                    return Err(unsupported(format!(
                        "argument {index} of kernel {} has an unsupported type {}",
                        entry.name,
                        spirv_type_name(info, type_id, 0)
                    )))
                }
            },
            TypeData::Void | TypeData::Function { .. } => {
                return Err(malformed(format!("argument {index} of kernel {} has no size", entry.name)))
            }
            _ => (ArgKind::Value, AddressSpace::Private, types.size_of(ty) as usize, types.align_of(ty) as usize),
        };
        let align = align.max(1);
        let offset = cursor.next_multiple_of(align);
        cursor = offset + size;

        let type_name = match type_names.as_ref().and_then(|names| names.get(index)) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => spirv_type_name(info, type_id, 0),
        };
        let qualifiers = match type_quals.as_ref().and_then(|q| q.get(index)) {
            Some(text) => parse_qualifiers(text),
            None => TypeQualifiers {
                is_const: false,
                is_restrict: decorations.has_param_attr(spirv::FunctionParameterAttribute::NoAlias),
                is_volatile: decorations.volatile,
                is_pipe: false,
            },
        };
        args.push(KernelArg {
            name: info.name_of(param_id).unwrap_or("").to_string(),
            type_name,
            address_space,
            access,
            qualifiers,
            kind,
            offset,
            size,
            align,
        });
    }

    let mut kernel = KernelInfo {
        name: entry.name.clone(),
        args,
        arg_block_size: cursor.next_multiple_of(8),
        ..KernelInfo::default()
    };
    let mut attributes = Vec::new();
    for inst in &info.spv.execution_modes {
        if id_operand(inst, 0)? != entry.func_id {
            continue;
        }
        let Operand::ExecutionMode(mode) = operand(inst, 1)? else {
            return Err(malformed("OpExecutionMode without an execution mode"));
        };
        match mode {
            spirv::ExecutionMode::LocalSize => {
                let [x, y, z] = three_literals(inst)?;
                kernel.reqd_work_group_size = Some([x, y, z]);
                attributes.push(format!("reqd_work_group_size({x},{y},{z})"));
            }
            spirv::ExecutionMode::LocalSizeHint => {
                let [x, y, z] = three_literals(inst)?;
                kernel.work_group_size_hint = Some([x, y, z]);
                attributes.push(format!("work_group_size_hint({x},{y},{z})"));
            }
            spirv::ExecutionMode::VecTypeHint => {
                if let Some(name) = vec_type_hint_name(literal_operand(inst, 2)?) {
                    attributes.push(format!("vec_type_hint({name})"));
                    kernel.vec_type_hint = Some(name);
                }
            }
            spirv::ExecutionMode::SubgroupSize => {
                let size = literal_operand(inst, 2)?;
                kernel.reqd_sub_group_size = Some(size);
                attributes.push(format!("intel_reqd_sub_group_size({size})"));
            }
            _ => {}
        }
    }
    kernel.attributes = attributes.join(" ");
    Ok(kernel)
}

/// The `vec_type_hint(T)` attributes of the source with the name of the function each one
/// qualifies: SPIR-V keeps the hint without its signedness ("uint4" comes back as "int4"),
/// the source has the spelling CL_KERNEL_ATTRIBUTES must report.
fn source_vec_type_hints(source: &str) -> Vec<(String, String)> {
    const KEY: &str = "vec_type_hint";
    let mut hints = Vec::new();
    let mut from = 0;
    while let Some(found) = source[from..].find(KEY) {
        let after_key = from + found + KEY.len();
        from = after_key;
        let rest = source[after_key..].trim_start();
        let Some(inner) = rest.strip_prefix('(') else { continue };
        let Some(close) = inner.find(')') else { continue };
        let type_name = inner[..close].trim();
        if type_name.is_empty() || !type_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(function) = qualified_function_name(&inner[close + 1..]) {
            hints.push((function, type_name.to_string()));
        }
    }
    hints
}

/// The name of the function declared after an attribute, from just after the attribute's
/// argument list (still inside `__attribute__((`): the identifier before the first `(` at
/// nesting depth 0 that does not open another `__attribute__`.
fn qualified_function_name(text: &str) -> Option<String> {
    let mut depth: i32 = 2;
    let mut identifier = String::new();
    let mut last_identifier = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            identifier.push(c);
            continue;
        }
        if !identifier.is_empty() {
            last_identifier = std::mem::take(&mut identifier);
        }
        match c {
            '(' => {
                if depth == 0 && last_identifier != "__attribute__" {
                    return (!last_identifier.is_empty()).then_some(last_identifier);
                }
                depth += 1;
            }
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            ';' | '{' | '}' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Gives vec_type_hint back the signedness the source spelled (see
/// [`source_vec_type_hints`]); only a hint differing by a leading `u` is replaced.
pub fn apply_source_vec_type_hints(module: &mut ir::Module, source: &str) {
    if !module.kernels.iter().any(|k| k.info.vec_type_hint.is_some()) {
        return;
    }
    let hints = source_vec_type_hints(source);
    for kernel in &mut module.kernels {
        let info = &mut kernel.info;
        let Some(decoded) = info.vec_type_hint.clone() else { continue };
        let spelled =
            hints.iter().find(|(function, t)| *function == info.name && t.strip_prefix('u') == Some(decoded.as_str()));
        if let Some((_, spelled)) = spelled {
            info.attributes =
                info.attributes.replace(&format!("vec_type_hint({decoded})"), &format!("vec_type_hint({spelled})"));
            info.vec_type_hint = Some(spelled.clone());
        }
    }
}
