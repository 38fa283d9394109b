//! Code generation around defects of LLVM 22 itself.
//!
//! With AVX-512BW, LLVM 22's instruction selection can loop for ever on 512-bit vectors of
//! bytes: `convert_uchar4_sat` of an `int4` at 16 work-items (a saturating
//! `<64 x i32>` to `<64 x i8>` truncation), masked, interleaved by a shuffle, bitcast to
//! `<16 x i32>` and multiplied, never leaves `SelectionDAG::Legalize` (`llc -mcpu=x86-64-v4`
//! reproduces it at every optimisation level; without AVX-512BW, or with 256-bit vectors
//! legal, it compiles in milliseconds). A kernel doing that hung its build on the CPU device
//! at width 16 and on the Gen device at SIMD16. A function that computes with such vectors
//! is compiled as clang compiles for most AVX-512 CPUs: with 256-bit vectors legal
//! (`"min-legal-vector-width"="256"`, `"prefer-vector-width"="256"`), each 512-bit operation
//! two 256-bit ones; every other function keeps the 512-bit registers. Only bytes: the same
//! legality on a kernel with `<128 x i16>` values (`short16` at 8 lanes, fuzz seed 47304)
//! sent LLVM's DAG combiner into a loop of its own, where the 512-bit form compiles.

use inkwell::attributes::AttributeLoc;
use inkwell::module::Module;
use inkwell::types::{AnyTypeEnum, BasicTypeEnum};
use inkwell::values::{AnyValue, InstructionValue};

/// Whether code for `features` (an LLVM feature string) has the defect: AVX-512BW.
pub fn affected(features: &str) -> bool {
    features.split(',').any(|f| f == "+avx512bw")
}

/// Marks every function of `m` that computes with 512-bit (or wider) vectors of bytes to be
/// compiled with 256-bit vectors legal. Returns how many it marked.
pub fn legalize_narrow_vectors_at_256_bits(m: &Module<'_>) -> usize {
    let cx = m.get_context();
    let mut marked = 0;
    // Definitions only: a declaration's parameters may be metadata (intrinsics), which
    // inkwell cannot take as values.
    for f in m.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        let wide = f.get_param_iter().any(|p| wide_narrow_vector(p.as_any_value_enum().get_type()))
            || f.get_basic_block_iter().any(|b| b.get_instructions().any(|i| uses_wide_narrow_vector(&i)));
        if wide {
            for (k, v) in [("min-legal-vector-width", "256"), ("prefer-vector-width", "256")] {
                f.add_attribute(AttributeLoc::Function, cx.create_string_attribute(k, v));
            }
            marked += 1;
        }
    }
    marked
}

/// Whether `t` is a vector of at least 512 bits of bytes.
fn wide_narrow_vector(t: AnyTypeEnum<'_>) -> bool {
    match t {
        AnyTypeEnum::VectorType(v) => match v.get_element_type() {
            BasicTypeEnum::IntType(e) => e.get_bit_width() == 8 && v.get_size() >= 64,
            _ => false,
        },
        _ => false,
    }
}

/// Whether instruction `i` produces such a vector (every one an instruction takes but a
/// parameter or a constant is produced by one; operands are not read: inkwell cannot take
/// metadata operands as values).
fn uses_wide_narrow_vector(i: &InstructionValue<'_>) -> bool {
    wide_narrow_vector(i.as_any_value_enum().get_type())
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;

    #[test]
    fn only_functions_with_wide_byte_vectors_are_marked() {
        let cx = Context::create();
        let m = cx.create_module("t");
        let (i8t, i32t) = (cx.i8_type(), cx.i32_type());
        let i16t = cx.i16_type();
        for (name, lanes, elem) in
            [("bytes", 64u32, i8t), ("ints", 16, i32t), ("narrow", 16, i8t), ("shorts", 128, i16t)]
        {
            let vt = elem.vec_type(lanes);
            let f = m.add_function(name, vt.fn_type(&[vt.into(), vt.into()], false), None);
            let b = cx.create_builder();
            b.position_at_end(cx.append_basic_block(f, "entry"));
            let (x, y) =
                (f.get_nth_param(0).unwrap().into_vector_value(), f.get_nth_param(1).unwrap().into_vector_value());
            let s = b.build_int_add(x, y, "").unwrap();
            b.build_return(Some(&s)).unwrap();
        }
        assert_eq!(legalize_narrow_vectors_at_256_bits(&m), 1);
        let attr = |name: &str| {
            m.get_function(name).unwrap().get_string_attribute(AttributeLoc::Function, "min-legal-vector-width")
        };
        assert!(attr("bytes").is_some() && attr("ints").is_none() && attr("narrow").is_none());
        // Shorts keep their 512-bit form (256-bit legality looped LLVM's combiner on them).
        assert!(attr("shorts").is_none());
        assert!(affected("+avx2,+avx512f,+avx512bw") && !affected("+avx2,+avx512f,-avx512bw"));
    }
}
