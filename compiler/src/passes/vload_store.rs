//! `vloadn` and `vstoren` (OpenCL.std) as the loads and stores they are.
//!
//! `vload3(i, p)` reads the three elements at `p + 3 * i`; written as a call, it was an
//! instruction without a vector form, so a vectorized kernel ran it lane by lane (a
//! SIMD32 `vload3` / `vstore3` pair compiled to 64 guarded scalar accesses, and the Gen
//! model did not see the messages at all). As `Load` / `Store` of the vector type through
//! `p + n * i` with the element's alignment, they are ordinary memory accesses: the
//! work-item analysis classifies them (a consecutive `i` makes a span of `n` slots per
//! lane), the vector lowering loads and stores the span, and the Gen model counts them.

use crate::ir::{self, BinaryOp, ConstData, ConvertOp, InstData, TypeData};
use spirv::OpenclStd100Op as Op;

/// Rewrites every `vloadn` / `vstoren` of `m` whose pointer's pointee is the vector's
/// element type; returns how many.
pub fn rewrite_module(m: &mut ir::Module) -> usize {
    let ir::Module { types, constants, functions, .. } = m;
    let mut done = 0;
    for (_, f) in functions.iter_mut() {
        if f.kind != ir::FuncKind::Import {
            done += rewrite(types, constants, f);
        }
    }
    done
}

fn rewrite(types: &mut ir::TypeTable, constants: &mut ir::Arena<ir::Const, ConstData>, f: &mut ir::Function) -> usize {
    let (vloadn, vstoren) = (Op::vloadn as u32, Op::vstoren as u32);
    let candidates: Vec<ir::Inst> = f
        .layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter().copied())
        .filter(|&i| matches!(&f.insts[i], InstData::ExtInst { opcode, .. } if *opcode == vloadn || *opcode == vstoren))
        .collect();
    let mut done = 0;
    for i in candidates {
        let InstData::ExtInst { opcode, args } = f.insts[i].clone() else { continue };
        let (vector_ty, offset, ptr, data) = if opcode == vloadn {
            let Some(r) = f.inst_result[i] else { continue };
            // The literal n follows, as an i32 constant (`front::spirv_body`).
            match args[..] {
                [offset, ptr, ..] => (f.value_type(r), offset, ptr, None),
                _ => continue,
            }
        } else {
            match args[..] {
                [data, offset, ptr] => (f.value_type(data), offset, ptr, Some(data)),
                _ => continue,
            }
        };
        let (elem, n) = match types.get(vector_ty) {
            TypeData::Vector { elem, len } => (*elem, *len),
            _ => continue,
        };
        let (space, pointee) = match types.get(f.value_type(ptr)) {
            TypeData::Pointer { space, pointee } => (*space, *pointee),
            _ => continue,
        };
        let offset_ty = f.value_type(offset);
        if pointee != elem || !matches!(types.get(offset_ty), TypeData::Int { .. }) {
            continue;
        }
        let align = types.size_of(elem).max(1) as u32;
        let ptr_ty = f.value_type(ptr);
        let vector_ptr_ty = types.pointer(space, vector_ty);
        let n_const = constants.push(ConstData::Int { ty: offset_ty, bits: u64::from(n) });
        let n_value = f.const_value(n_const, offset_ty);
        let (_, scaled) = f.insert_inst_before(
            i,
            InstData::Binary { op: BinaryOp::IMul, lhs: offset, rhs: n_value },
            Some(offset_ty),
        );
        let Some(scaled) = scaled else { continue };
        let chain = InstData::AccessChain { base: ptr, element: Some(scaled), indices: Vec::new(), in_bounds: false };
        let (_, first) = f.insert_inst_before(i, chain, Some(ptr_ty));
        let Some(first) = first else { continue };
        let cast = InstData::Convert { op: ConvertOp::Bitcast, arg: first, saturate: false, rounding: None };
        let (_, at) = f.insert_inst_before(i, cast, Some(vector_ptr_ty));
        let Some(at) = at else { continue };
        match data {
            None => {
                let (_, loaded) = f.insert_inst_before(
                    i,
                    InstData::Load { ptr: at, align, volatile: false, block: None },
                    Some(vector_ty),
                );
                if let (Some(old), Some(new)) = (f.inst_result[i], loaded) {
                    f.replace_all_uses(old, new);
                }
            }
            Some(value) => {
                f.insert_inst_before(i, InstData::Store { ptr: at, value, align, volatile: false, block: None }, None);
            }
        }
        f.remove_inst(i);
        done += 1;
    }
    done
}
