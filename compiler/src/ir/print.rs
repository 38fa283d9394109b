//! A textual form of the IR for tests and debugging.
//!
//! `Module` prints its constants, variables, functions and kernels with types spelled out
//! (`i32`, `<4 x f32>`, `ptr<global> f32`, `[16 x f32]`, `{f32, i32}`);
//! `Function` alone prints types by reference (`t3`); [`Module::display_function`] prints
//! one function with types spelled out. Instructions read as
//! `v5: i32 = iadd v1, v2` and branches as `brif v3, block1(v4), block2`; a barrier's
//! resume point as `barrier_resume 1, block4`, a variable in work-item state as
//! `v7: ptr<private> f32 = state_variable f32`.

use super::entities::{Func, Type, Value};
use super::function::{FuncKind, Function, ValueDef};
use super::instructions::{BlockCall, GenAccess, InstData};
use super::types::{TypeData, TypeTable};
use super::{BuiltinVar, ConstData, Module};
use crate::kernel_info::AddressSpace;
use std::fmt::{self, Display, Formatter, Write};

fn space_name(space: AddressSpace) -> &'static str {
    match space {
        AddressSpace::Private => "private",
        AddressSpace::Global => "global",
        AddressSpace::Constant => "constant",
        AddressSpace::Local => "local",
        AddressSpace::Generic => "generic",
    }
}

/// The spelling of type `t` in `types` (never panics on invalid references).
pub fn type_name(types: &TypeTable, t: Type) -> String {
    let mut out = String::new();
    write_type(&mut out, types, t, 0);
    out
}

fn write_type(out: &mut String, types: &TypeTable, t: Type, depth: u32) {
    if !types.is_valid(t) || depth > 32 {
        let _ = write!(out, "{t}?");
        return;
    }
    let _ = match types.get(t) {
        TypeData::Void => write!(out, "void"),
        TypeData::Bool => write!(out, "bool"),
        TypeData::Int { bits } => write!(out, "i{bits}"),
        TypeData::Float { bits } => write!(out, "f{bits}"),
        TypeData::Vector { elem, len } => {
            let _ = write!(out, "<{len} x ");
            write_type(out, types, *elem, depth + 1);
            write!(out, ">")
        }
        TypeData::Pointer { space, pointee } => {
            let _ = write!(out, "ptr<{}> ", space_name(*space));
            write_type(out, types, *pointee, depth + 1);
            Ok(())
        }
        TypeData::Array { elem, len } => {
            let _ = write!(out, "[{len} x ");
            write_type(out, types, *elem, depth + 1);
            write!(out, "]")
        }
        TypeData::Struct { fields, packed } => {
            let _ = write!(out, "{}{{", if *packed { "packed " } else { "" });
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(out, types, *f, depth + 1);
            }
            write!(out, "}}")
        }
        TypeData::Function { ret, params } => {
            out.push_str("fn(");
            for (i, p) in params.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(out, types, *p, depth + 1);
            }
            out.push_str(") -> ");
            write_type(out, types, *ret, depth + 1);
            Ok(())
        }
        TypeData::Opaque { name } => write!(out, "opaque \"{name}\""),
    };
}

/// Prints one function; with a module, types are spelled out and constants shown.
pub struct FunctionDisplay<'a> {
    pub module: Option<&'a Module>,
    pub function: &'a Function,
}

impl Module {
    /// Function `func` of this module as text (types spelled out).
    pub fn display_function(&self, func: Func) -> FunctionDisplay<'_> {
        FunctionDisplay { module: Some(self), function: &self.functions[func] }
    }
}

impl FunctionDisplay<'_> {
    fn ty(&self, t: Type) -> String {
        match self.module {
            Some(m) => type_name(&m.types, t),
            None => t.to_string(),
        }
    }

    fn value_ty(&self, v: Value) -> String {
        match self.function.values.get(v) {
            Some(d) => self.ty(d.ty),
            None => "?".into(),
        }
    }

    fn call(&self, c: &BlockCall) -> String {
        if c.args.is_empty() {
            c.block.to_string()
        } else {
            format!("{}({})", c.block, list(&c.args))
        }
    }

    fn const_text(&self, c: super::entities::Const) -> String {
        let Some(module) = self.module else {
            return c.to_string();
        };
        match module.constants.get(c) {
            Some(data) => format!("{c} ({})", const_data_text(module, data)),
            None => format!("{c}?"),
        }
    }

    fn inst_text(&self, data: &InstData) -> String {
        use InstData::*;
        let lower = |x: &dyn fmt::Debug| format!("{x:?}").to_lowercase();
        match data {
            Binary { op, lhs, rhs } => format!("{} {lhs}, {rhs}", lower(op)),
            Unary { op, arg } => format!("{} {arg}", lower(op)),
            Compare { op, lhs, rhs } => format!("cmp.{} {lhs}, {rhs}", lower(op)),
            Select { cond, if_true, if_false } => format!("select {cond}, {if_true}, {if_false}"),
            AnyActive { cond } => format!("any_active {cond}"),
            GenericSpace { ptr } => format!("generic_space {ptr}"),
            Group { scope, op, args } => {
                let scope = if *scope == super::Scope::SubGroup { "sub_group" } else { "work_group" };
                let op = match op {
                    super::GroupOp::Reduce(a) => format!("reduce.{}", lower(a)),
                    super::GroupOp::InclusiveScan(a) => format!("scan_inclusive.{}", lower(a)),
                    super::GroupOp::ExclusiveScan(a) => format!("scan_exclusive.{}", lower(a)),
                    super::GroupOp::ClusteredReduce(a) => format!("clustered_reduce.{}", lower(a)),
                    other => lower(other),
                };
                format!("{scope}.{op} {}", list(args))
            }
            Convert { op, arg, saturate, rounding } => {
                let mut s = lower(op);
                if *saturate {
                    s.push_str(".sat");
                }
                if let Some(r) = rounding {
                    let _ = write!(s, ".{}", lower(r));
                }
                format!("{s} {arg}")
            }
            Variable { ty, init, align } => {
                let mut s = format!("variable {}", self.ty(*ty));
                if let Some(i) = init {
                    let _ = write!(s, ", init {i}");
                }
                if *align != 0 {
                    let _ = write!(s, ", align {align}");
                }
                s
            }
            Load { ptr, align, volatile, block } => {
                format!("load{}{} {ptr}, align {align}", if *volatile { ".volatile" } else { "" }, block_suffix(*block))
            }
            Store { ptr, value, align, volatile, block } => {
                let v = if *volatile { ".volatile" } else { "" };
                format!("store{v}{} {value}, {ptr}, align {align}", block_suffix(*block))
            }
            CopyMemory { dst, src, size, align } => format!("copy_memory {dst}, {src}, {size}, align {align}"),
            AccessChain { base, element, indices, in_bounds } => {
                let mut s = format!("access_chain{} {base}", if *in_bounds { ".inbounds" } else { "" });
                if let Some(e) = element {
                    let _ = write!(s, " [{e}]");
                }
                for i in indices {
                    let _ = write!(s, ", {i}");
                }
                s
            }
            ExtractElement { vector, index } => format!("extract_element {vector}, {index}"),
            InsertElement { vector, value, index } => format!("insert_element {vector}, {value}, {index}"),
            Shuffle { a, b, mask } => {
                let mask: Vec<String> =
                    mask.iter().map(|m| m.map_or_else(|| "undef".to_string(), |m| m.to_string())).collect();
                format!("shuffle {a}, {b}, [{}]", mask.join(", "))
            }
            ExtractValue { aggregate, indices } => format!("extract_value {aggregate}, {indices:?}"),
            InsertValue { aggregate, value, indices } => format!("insert_value {aggregate}, {value}, {indices:?}"),
            Construct { parts } => format!("construct {}", list(parts)),
            Call { func, args } => {
                let name = self
                    .module
                    .and_then(|m| m.functions.get(*func))
                    .map_or_else(|| func.to_string(), |f| format!("@{}", f.name));
                format!("call {name}({})", list(args))
            }
            ExtInst { opcode, args } => {
                let name = rspirv::grammar::ext_inst_table("OpenCL.std")
                    .and_then(|t| t.lookup_opcode(*opcode))
                    .map_or_else(|| format!("#{opcode}"), |g| g.opname.to_string());
                format!("opencl.{name} {}", list(args))
            }
            WorkItem { query } => format!("work_item.{query:?}"),
            Barrier { exec_scope, mem_scope, semantics } => {
                format!("barrier {exec_scope:?}, {mem_scope:?}, 0x{semantics:x}")
            }
            Fence { scope, semantics } => format!("fence {scope:?}, 0x{semantics:x}"),
            Atomic { op, ptr, value, comparator, scope, semantics } => {
                let mut s = format!("atomic.{} {ptr}", lower(op));
                if let Some(v) = value {
                    let _ = write!(s, ", {v}");
                }
                if let Some(c) = comparator {
                    let _ = write!(s, ", expected {c}");
                }
                let _ = write!(s, ", {scope:?}, 0x{semantics:x}");
                s
            }
            Image { op, image, sampler, coord, texel } => {
                let mut s = format!("image.{} {image}", lower(op));
                for v in [sampler, coord, texel].into_iter().flatten() {
                    let _ = write!(s, ", {v}");
                }
                s
            }
            Jump { dest } => format!("jump {}", self.call(dest)),
            Branch { cond, then_dest, else_dest } => {
                format!("brif {cond}, {}, {}", self.call(then_dest), self.call(else_dest))
            }
            Switch { selector, default, cases } => {
                let mut s = format!("switch {selector}, default {}", self.call(default));
                for (value, target) in cases {
                    let _ = write!(s, ", {value} => {}", self.call(target));
                }
                s
            }
            Return { value: Some(v) } => format!("return {v}"),
            Return { value: None } => "return".to_string(),
            Unreachable => "unreachable".to_string(),
            GenBlock { id } => format!("gen.block {id}"),
            GenCount { site, access: GenAccess::Memory { ptr } } => format!("gen.count {site}, {ptr}"),
            GenCount { site, access: GenAccess::Image { image, sampler, coord } } => {
                let mut s = format!("gen.count {site}, image {image}");
                if let Some(smp) = sampler {
                    let _ = write!(s, ", sampler {smp}");
                }
                let _ = write!(s, ", coord {coord}");
                s
            }
            BarrierResume { id, dest } => format!("barrier_resume {id}, {}", self.call(dest)),
        }
    }
}

fn list(values: &[Value]) -> String {
    values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

fn const_data_text(module: &Module, data: &ConstData) -> String {
    let ty = type_name(&module.types, data.ty());
    match data {
        ConstData::Int { bits, .. } => format!("{ty} {bits}"),
        ConstData::Float { bits, .. } => {
            let value = match module.types.get(data.ty()) {
                TypeData::Float { bits: 32 } => f64::from(f32::from_bits(*bits as u32)),
                TypeData::Float { bits: 64 } => f64::from_bits(*bits),
                _ => f64::NAN,
            };
            if value.is_nan() {
                format!("{ty} 0x{bits:x}")
            } else {
                format!("{ty} {value:?}")
            }
        }
        ConstData::Null { .. } => format!("{ty} null"),
        ConstData::Undef { .. } => format!("{ty} undef"),
        ConstData::Composite { parts, .. } => {
            let parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
            format!("{ty} {{{}}}", parts.join(", "))
        }
        ConstData::Address { var, offset, .. } => format!("{ty} &{var} + {offset}"),
    }
}

impl Display for FunctionDisplay<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let func = self.function;
        let kind = match func.kind {
            FuncKind::Kernel => "kernel",
            FuncKind::Function => "function",
            FuncKind::Import => "import",
        };
        let params: Vec<String> = func.params.iter().map(|p| self.ty(*p)).collect();
        write!(f, "{kind} @{}({}) -> {}", func.name, params.join(", "), self.ty(func.ret))?;
        if func.kind == FuncKind::Import {
            return writeln!(f);
        }
        writeln!(f, " {{")?;
        for (v, data) in func.values.iter() {
            match data.def {
                ValueDef::Const(c) => writeln!(f, "    {v}: {} = const {}", self.ty(data.ty), self.const_text(c))?,
                ValueDef::Global(g) => {
                    let name = self
                        .module
                        .and_then(|m| m.globals.get(g))
                        .map_or_else(String::new, |d| format!(" @{}", d.name));
                    writeln!(f, "    {v}: {} = global {g}{name}", self.ty(data.ty))?
                }
                _ => {}
            }
        }
        for &block in &func.layout.blocks {
            let params = func.blocks.get(block).map(|b| b.params.clone()).unwrap_or_default();
            // A masked block (`passes::linearize`): `block3 mask(v12):`.
            let mask = func.blocks.get(block).and_then(|b| b.mask).map_or_else(String::new, |m| format!(" mask({m})"));
            if params.is_empty() {
                writeln!(f, "{block}{mask}:")?;
            } else {
                let params: Vec<String> = params.iter().map(|p| format!("{p}: {}", self.value_ty(*p))).collect();
                writeln!(f, "{block}({}){mask}:", params.join(", "))?;
            }
            for &inst in &func.layout.insts[block] {
                let Some(data) = func.insts.get(inst) else {
                    writeln!(f, "    <invalid {inst}>")?;
                    continue;
                };
                let mut text = self.inst_text(data);
                if func.is_state_var(inst) {
                    // Work-item state (`passes::barriers`).
                    text = format!("state_{text}");
                }
                match func.inst_result[inst] {
                    Some(v) => {
                        let name = func.value_names[v].as_ref().map_or_else(String::new, |n| format!("    ; {n}"));
                        writeln!(f, "    {v}: {} = {text}{name}", self.value_ty(v))?
                    }
                    None => writeln!(f, "    {text}")?,
                }
            }
        }
        writeln!(f, "}}")
    }
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        FunctionDisplay { module: None, function: self }.fmt(f)
    }
}

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (c, data) in self.constants.iter() {
            writeln!(f, "{c} = {}", const_data_text(self, data))?;
        }
        for (g, data) in self.globals.iter() {
            let ty = type_name(&self.types, data.ty);
            match data.builtin {
                Some(BuiltinVar::WorkItem(query)) => writeln!(f, "{g} @{}: builtin {query:?} {ty}", data.name)?,
                None => {
                    write!(f, "{g} @{}: {} {ty} align {}", data.name, space_name(data.space), data.align)?;
                    match data.init {
                        Some(init) => writeln!(f, " = {init}")?,
                        None => writeln!(f)?,
                    }
                }
            }
        }
        for (func, _) in self.functions.iter() {
            writeln!(f)?;
            self.display_function(func).fmt(f)?;
        }
        for kernel in &self.kernels {
            let info = &kernel.info;
            writeln!(f)?;
            write!(f, "kernel {} = {} args [", info.name, kernel.func)?;
            for (i, arg) in info.args.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{} {}: {:?} @{} size {}", arg.type_name, arg.name, arg.kind, arg.offset, arg.size)?;
            }
            write!(f, "] block {}", info.arg_block_size)?;
            if !info.attributes.is_empty() {
                write!(f, " attributes \"{}\"", info.attributes)?;
            }
            writeln!(f)?;
            if let Some(plan) = &info.gen {
                // The Gen plan the function's `gen.block` / `gen.count` instructions number.
                writeln!(f, "  gen.blocks {}", plan.blocks.len())?;
                for (k, site) in plan.sites.iter().enumerate() {
                    let what = format!("{:?} {:?}", site.space, site.kind).to_lowercase();
                    write!(f, "  gen.site {k}: block {}, {what}, {} bytes", site.block, site.bytes_per_lane)?;
                    if !site.waits_for.is_empty() {
                        let sites: Vec<String> = site.waits_for.iter().map(u32::to_string).collect();
                        write!(f, ", waits for {}", sites.join(" "))?;
                    }
                    match site.same_address {
                        crate::gen_abi::SameAddress::Unknown => {}
                        crate::gen_abi::SameAddress::Message => write!(f, ", one address per message")?,
                        crate::gen_abi::SameAddress::Launch => write!(f, ", one address per launch")?,
                    }
                    if let Some(steps) = &site.lane_strides {
                        let sum = |terms: &Vec<crate::gen_abi::StrideTerm>| -> String {
                            let t: Vec<String> = terms
                                .iter()
                                .map(|(c, v)| match v {
                                    None => c.to_string(),
                                    Some(v) => format!("{c}*{v:?}"),
                                })
                                .collect();
                            if t.is_empty() {
                                "0".into()
                            } else {
                                t.join("+")
                            }
                        };
                        let s: Vec<String> = steps.iter().map(sum).collect();
                        write!(f, ", steps {} bytes per local id", s.join(", "))?;
                    }
                    writeln!(f)?;
                }
                if plan.shape_free {
                    writeln!(f, "  gen.shape_free")?;
                }
            }
        }
        Ok(())
    }
}

/// `.block(part/parts)` for a part of a sub-group block access, else nothing.
fn block_suffix(block: Option<super::instructions::BlockPart>) -> String {
    block.map_or_else(String::new, |b| format!(".block({}/{})", b.part, b.parts))
}
