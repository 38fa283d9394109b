//! Helpers shared by the front-end integration tests.
#![allow(dead_code)]

use softcl_compiler::ir::{self, ConstData, Function, InstData, Module, Type, TypeData, Value, ValueDef};
use softcl_compiler::{compile_source, Program, Target};

/// Builds `source` with `options` or fails the test with the build log.
pub fn build_with(source: &str, options: &str) -> Program {
    match compile_source(source, options, &Target::default()) {
        Ok(program) => {
            assert_valid(&program.module);
            program
        }
        Err(e) => panic!("build failed ({:?}):\n{}", e.kind, e.log),
    }
}

pub fn build(source: &str) -> Program {
    build_with(source, "")
}

pub fn assert_valid(module: &Module) {
    if let Err(errors) = ir::validate::validate(module) {
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        panic!("invalid IR:\n{}\n{module}", text.join("\n"));
    }
}

/// The function doing the work of kernel `name`: the kernel itself, or the function its
/// entry stub calls.
pub fn kernel_body<'m>(module: &'m Module, name: &str) -> &'m Function {
    let kernel = module.kernel(name).unwrap_or_else(|| panic!("no kernel {name}"));
    let entry = &module.functions[kernel.func];
    let calls: Vec<ir::Func> = insts(entry)
        .into_iter()
        .filter_map(|(data, _)| match data {
            InstData::Call { func, .. } => Some(*func),
            _ => None,
        })
        .collect();
    match calls.as_slice() {
        [callee] => &module.functions[*callee],
        _ => entry,
    }
}

/// Instructions of `f` in layout order with their result values.
pub fn insts(f: &Function) -> Vec<(&InstData, Option<Value>)> {
    let mut out = Vec::new();
    for &block in &f.layout.blocks {
        for &inst in &f.layout.insts[block] {
            out.push((&f.insts[inst], f.inst_result[inst]));
        }
    }
    out
}

/// Instructions of every function of the module.
pub fn all_insts(module: &Module) -> Vec<(&Function, &InstData, Option<Value>)> {
    let mut out = Vec::new();
    for (_, f) in module.functions.iter() {
        for (data, result) in insts(f) {
            out.push((f, data, result));
        }
    }
    out
}

pub fn type_name(module: &Module, t: Type) -> String {
    ir::print::type_name(&module.types, t)
}

pub fn value_type_name(module: &Module, f: &Function, v: Value) -> String {
    type_name(module, f.value_type(v))
}

/// The integer value of a constant operand.
pub fn const_int(module: &Module, f: &Function, v: Value) -> Option<u64> {
    match f.values[v].def {
        ValueDef::Const(c) => match &module.constants[c] {
            ConstData::Int { bits, .. } => Some(*bits),
            ConstData::Null { .. } => Some(0),
            _ => None,
        },
        _ => None,
    }
}

/// The OpenCL.std names of the extended instructions used anywhere in the module.
pub fn ext_inst_names(module: &Module) -> Vec<String> {
    all_insts(module)
        .into_iter()
        .filter_map(|(_, data, _)| match data {
            InstData::ExtInst { opcode, .. } => Some(ext_name(*opcode)),
            _ => None,
        })
        .collect()
}

pub fn ext_name(opcode: u32) -> String {
    rspirv::grammar::ext_inst_table("OpenCL.std")
        .and_then(|t| t.lookup_opcode(opcode))
        .map(|g| g.opname.to_string())
        .unwrap_or_else(|| format!("#{opcode}"))
}

pub fn is_vector_of(module: &Module, t: Type, elem: &TypeData, len: u32) -> bool {
    match module.types.get(t) {
        TypeData::Vector { elem: e, len: l } => module.types.get(*e) == elem && *l == len,
        _ => false,
    }
}
