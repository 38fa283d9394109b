//! `mul24` and `mad24` (OpenCL.std) as the multiply and add they compute.
//!
//! The specification leaves the result implementation-defined when an operand does not fit
//! in 24 bits; SoftCL computes the full 32-bit `a * b (+ c)` (`back::builtins`), so the two
//! are exactly `IMul` (and `IAdd`). As calls, the work-item analysis could not see through
//! them: OpenCV's kernels index every row as `mad24(y, step, mad24(x, size, offset))`, and
//! each such load and store became a gather or scatter (OpenCV's threshold at a fifth of
//! the host's memory speed). As arithmetic, the index is affine in the work-item id and the
//! access consecutive.

use crate::ir::{self, BinaryOp, InstData};
use spirv::OpenclStd100Op as Op;

/// Rewrites every `mul24` / `mad24` of `m`; returns how many.
pub fn rewrite_module(m: &mut ir::Module) -> usize {
    let mut done = 0;
    for (_, f) in m.functions.iter_mut() {
        if f.kind != ir::FuncKind::Import {
            done += rewrite(f);
        }
    }
    done
}

fn rewrite(f: &mut ir::Function) -> usize {
    let ops = [Op::s_mul24, Op::u_mul24, Op::s_mad24, Op::u_mad24].map(|o| o as u32);
    let candidates: Vec<ir::Inst> = f
        .layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter().copied())
        .filter(|&i| matches!(&f.insts[i], InstData::ExtInst { opcode, .. } if ops.contains(opcode)))
        .collect();
    let mut done = 0;
    for i in candidates {
        let InstData::ExtInst { opcode, args } = f.insts[i].clone() else { continue };
        let Some(old) = f.inst_result[i] else { continue };
        let ty = f.value_type(old);
        let mad = opcode == Op::s_mad24 as u32 || opcode == Op::u_mad24 as u32;
        let (a, b, c) = match (mad, &args[..]) {
            (false, &[a, b]) => (a, b, None),
            (true, &[a, b, c]) => (a, b, Some(c)),
            _ => continue,
        };
        // Operands of the result's type only (a scalar operand of a vector call would need
        // a splat first; the front end gives both the same type).
        if [Some(a), Some(b), c].into_iter().flatten().any(|v| f.value_type(v) != ty) {
            continue;
        }
        let (_, product) = f.insert_inst_before(i, InstData::Binary { op: BinaryOp::IMul, lhs: a, rhs: b }, Some(ty));
        let Some(mut new) = product else { continue };
        if let Some(c) = c {
            let (_, sum) = f.insert_inst_before(i, InstData::Binary { op: BinaryOp::IAdd, lhs: new, rhs: c }, Some(ty));
            let Some(sum) = sum else { continue };
            new = sum;
        }
        f.replace_all_uses(old, new);
        f.remove_inst(i);
        done += 1;
    }
    done
}

#[cfg(test)]
mod tests {
    use crate::ir::InstData;

    /// The module of `src` after the pass, validated.
    fn rewritten(src: &str) -> (crate::ir::Module, usize) {
        let mut m = crate::compile_source(src, "", &crate::Target::default()).expect("builds").module;
        let mut n = 0;
        crate::passes::run_pass(&mut m, "mul24", |m| {
            n = super::rewrite_module(m);
            Ok(())
        })
        .expect("the pass leaves valid IR");
        (m, n)
    }

    fn ext_insts(m: &crate::ir::Module) -> usize {
        m.functions
            .iter()
            .flat_map(|(_, f)| {
                f.layout.blocks.iter().flat_map(move |&b| f.layout.insts[b].iter().map(move |&i| &f.insts[i]))
            })
            .filter(|d| matches!(d, InstData::ExtInst { .. }))
            .count()
    }

    #[test]
    fn mul24_and_mad24_become_multiply_and_add() {
        let src = "__kernel void k(__global const uchar *src, __global uchar *dst, int step, int off, int4 v) {\n\
                   int x = get_global_id(0), y = get_global_id(1);\n\
                   int i = mad24(y, step, mad24(x, (int)sizeof(uchar), off));\n\
                   uint u = mul24((uint)x, 3u) + (uint)mul24(v, v).x;\n\
                   dst[i] = src[i] + (uchar)u;\n\
                   }";
        let (mut m, n) = rewritten(src);
        assert_eq!(n, 4, "two mad24, two mul24 (one on int4)");
        assert_eq!(ext_insts(&m), 0, "no call left");
        // The row-major index through mad24 is affine: the load and the store are consecutive.
        crate::vectorize::inline_kernel_calls(&mut m, 256).expect("inlining");
        let f = &m.functions[m.kernels[0].func];
        let wa = crate::vectorize::analysis::analyze(&m, f);
        let accesses: Vec<_> = f
            .layout
            .blocks
            .iter()
            .flat_map(|&b| f.layout.insts[b].iter().copied())
            .filter(|&i| matches!(f.insts[i], InstData::Load { .. } | InstData::Store { .. }))
            .map(|i| wa.access(i))
            .collect();
        assert!(!accesses.is_empty());
        assert!(accesses.iter().all(|a| *a == Some(crate::vectorize::analysis::Access::Consecutive)), "{accesses:?}");
    }
}
