//! Generic pointers whose named address space is known where they are used.
//!
//! A generic pointer is made from a named one (`OpPtrCastToGeneric`); once calls are inlined,
//! most generic pointers a kernel uses can be followed back through access chains, casts,
//! selects and block parameters to pointers of one named space (a `__global` argument, a
//! `__local` array, a private variable). [`origin_space`] follows them; the pass folds every
//! `generic_space` (what `get_fence`, `to_global`, `to_local` and `to_private` ask) of such a
//! pointer into its constant, so that only pointers of unknown origin (a function's generic
//! parameter in a call left standing, a generic pointer loaded from memory) are tested at
//! run time. The Gen instrumentation prices a generic access by the same origin.

use crate::ir::{self, Function, InstData, TypeData, Value, ValueDef};
use crate::kernel_info::AddressSpace;

/// How far back [`origin_space`] follows a pointer (definitions and block parameters).
const MAX_STEPS: usize = 256;

/// The named address space every possible value of pointer `p` points into, if one is
/// known: `p`'s own when it is not generic, otherwise the one shared by everything it is
/// derived from.
pub fn origin_space(types: &ir::TypeTable, f: &Function, p: Value) -> Option<AddressSpace> {
    let mut found: Option<AddressSpace> = None;
    let mut seen: Vec<Value> = Vec::new();
    let mut work = vec![p];
    while let Some(v) = work.pop() {
        if seen.contains(&v) {
            continue;
        }
        if seen.len() == MAX_STEPS {
            return None;
        }
        seen.push(v);
        let data = f.values.get(v)?;
        let named = match types.get(data.ty) {
            TypeData::Pointer { space: AddressSpace::Generic, .. } => None,
            TypeData::Pointer { space, .. } => Some(*space),
            _ => return None,
        };
        if let Some(space) = named {
            if found.is_some_and(|s| s != space) {
                return None;
            }
            found = Some(space);
            continue;
        }
        match data.def {
            ValueDef::Result(i) => match &f.insts[i] {
                InstData::AccessChain { base, .. } => work.push(*base),
                InstData::Convert { op: ir::ConvertOp::PtrCast | ir::ConvertOp::Bitcast, arg, .. } => work.push(*arg),
                InstData::Select { if_true, if_false, .. } => work.extend([*if_true, *if_false]),
                _ => return None,
            },
            ValueDef::Param(b, index) if Some(b) != f.entry_block() => {
                for t in f.branches_to(b) {
                    for call in f.insts[t].successors() {
                        if call.block == b {
                            work.push(*call.args.get(index as usize)?);
                        }
                    }
                }
            }
            // A null generic pointer points nowhere: it does not decide the space.
            ValueDef::Const(_) => {}
            _ => return None,
        }
    }
    found
}

/// The `generic_space` answer for a pointer into `space`.
fn answer(space: AddressSpace) -> u32 {
    match space {
        AddressSpace::Local => ir::GENERIC_LOCAL,
        AddressSpace::Private => 0,
        _ => ir::GENERIC_GLOBAL,
    }
}

/// Folds the `generic_space` instructions of known origin in every function of `m`; returns
/// how many.
pub fn fold_module(m: &mut ir::Module) -> usize {
    let mut folded = 0;
    let ir::Module { types, constants, functions, .. } = m;
    for (_, f) in functions.iter_mut() {
        let mut found = Vec::new();
        for &b in &f.layout.blocks {
            for &i in &f.layout.insts[b] {
                if let InstData::GenericSpace { ptr } = f.insts[i] {
                    if let (Some(space), Some(r)) = (origin_space(types, f, ptr), f.inst_result[i]) {
                        found.push((i, r, answer(space)));
                    }
                }
            }
        }
        for (i, r, value) in found {
            let ty = f.value_type(r);
            let c = constants.push(ir::ConstData::Int { ty, bits: u64::from(value) });
            let v = f.const_value(c, ty);
            f.replace_all_uses(r, v);
            f.remove_inst(i);
            folded += 1;
        }
    }
    folded
}

#[cfg(test)]
mod tests {
    use crate::ir::InstData;

    /// The `generic_space` instructions of each kernel of `src` (by name), after inlining,
    /// before and after the pass.
    fn generic_spaces_of_kernels(src: &str) -> Vec<(String, usize, usize)> {
        let mut m = crate::compile_source(src, "-cl-std=CL3.0", &crate::Target::default()).expect("builds").module;
        let count = |m: &crate::ir::Module, k: &str| {
            let f = &m.functions[m.kernel(k).expect("the kernel").func];
            let insts = f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter());
            insts.filter(|&&i| matches!(f.insts[i], InstData::GenericSpace { .. })).count()
        };
        crate::passes::run_pass(&mut m, "inline", |m| crate::vectorize::inline_kernel_calls(m, 256)).expect("inlines");
        let names: Vec<String> = m.kernels.iter().map(|k| k.info.name.clone()).collect();
        let before: Vec<usize> = names.iter().map(|k| count(&m, k)).collect();
        crate::passes::run_pass(&mut m, "generic_spaces", |m| {
            super::fold_module(m);
            Ok(())
        })
        .expect("the pass leaves valid IR");
        names.iter().zip(before).map(|(k, b)| (k.clone(), b, count(&m, k))).collect()
    }

    #[test]
    fn pointers_of_one_origin_fold_and_others_stay() {
        let src = "__attribute__((noinline)) int f(int *p) { return get_fence(p) | (to_local(p) != 0) << 4; }\n\
                   kernel void known(global int *out, local int *l) {\n\
                   int x = 0; size_t i = get_global_id(0);\n\
                   int *g = i ? out + 1 : out + 2;\n\
                   out[0] = f(g) + f(l + i) + f(&x); }\n\
                   int *kept;\n\
                   kernel void unknown(global int *out) { out[0] = f(kept); }";
        for (kernel, before, after) in generic_spaces_of_kernels(src) {
            assert!(before > 0, "{kernel}: asks after inlining");
            match kernel.as_str() {
                "known" => assert_eq!(after, 0, "{kernel}: every pointer of one origin"),
                _ => assert_eq!(after, before, "{kernel}: a pointer loaded from memory"),
            }
        }
    }
}
