//! Kernels whose optimised module llvm-spirv-15 refuses (found by the differential fuzzer):
//! the front end must still translate them (see the module documentation of
//! `front::opencl_c`), noting the rescue in the build log, while a kernel the translator
//! accepts keeps its log as clang wrote it.

mod front_common;

use front_common::{assert_valid, insts, kernel_body};
use softcl_compiler::front::opencl_c::freeze_as_select;
use softcl_compiler::ir::InstData;
use softcl_compiler::{compile_source, Program, Target};

/// clang -O2 leaves a `freeze` (loop unswitching) that the translator cannot translate.
const FREEZE: &str = include_str!("../../conformance/fuzz-corpus/spirv-freeze.cl");
/// clang -O2 narrows a `switch` condition to an `i3`: "InvalidBitWidth".
const BIT_WIDTH: &str = include_str!("../../conformance/fuzz-corpus/spirv-invalid-bit-width.cl");
/// A `freeze` from clang's early passes, and a module the translator asserts on at -O0.
const FREEZE_EARLY: &str = include_str!("../../conformance/fuzz-corpus/spirv-freeze-early.cl");
/// The translator dies on an assertion (`cast<ConstantInt>`) on clang's -O2 module.
const CAST: &str = include_str!("../../conformance/fuzz-corpus/spirv-cast-assertion.cl");

fn build_on(source: &str, options: &str, target: &Target) -> Program {
    match compile_source(source, options, target) {
        Ok(program) => {
            assert_valid(&program.module);
            assert!(program.module.kernel("fuzz").is_some(), "no kernel `fuzz`");
            program
        }
        Err(e) => panic!("build failed ({:?}):\n{}", e.kind, e.log),
    }
}

fn targets() -> [Target; 2] {
    let lines = Target { line_tables: true, ..Target::default() };
    [Target::default(), lines]
}

fn assert_rescued(source: &str, refusal: &str) {
    for target in targets() {
        for options in ["-cl-std=CL3.0", "-cl-std=CL3.0 -cl-opt-disable"] {
            let program = build_on(source, options, &target);
            if !options.contains("opt-disable") {
                assert!(
                    program.log.contains("SPIR-V translation of the optimised module failed")
                        && program.log.contains(refusal),
                    "the log should note the rescue and name `{refusal}`:\n{}",
                    program.log
                );
            }
        }
    }
}

#[test]
fn freeze_from_loop_unswitching_is_rescued() {
    assert_rescued(FREEZE, "freeze");
}

#[test]
fn odd_integer_width_is_rescued() {
    assert_rescued(BIT_WIDTH, "InvalidBitWidth");
    // Declaring native integer widths is enough: the module stays fully optimised.
    let program = build_on(BIT_WIDTH, "-cl-std=CL3.0", &Target::default());
    assert!(program.log.contains("native integer widths"), "{}", program.log);
}

#[test]
fn translator_assertion_is_rescued() {
    assert_rescued(CAST, "Assertion");
}

#[test]
fn translated_kernel_has_no_note() {
    let program = build_on(
        "kernel void fuzz(global uint *out) { out[get_global_id(0)] = (uint)get_global_id(0) * 3u; }",
        "-cl-std=CL3.0",
        &Target::default(),
    );
    assert!(!program.log.contains("SPIR-V translation"), "{}", program.log);
}

#[test]
fn freeze_from_the_early_passes_is_rescued() {
    assert_rescued(FREEZE_EARLY, "freeze");
    let program = build_on(FREEZE_EARLY, "-cl-std=CL3.0", &Target::default());
    assert!(program.log.contains("`freeze` instruction(s) removed"), "{}", program.log);
}

#[test]
fn freeze_is_written_as_the_value_it_freezes() {
    let ir = "  %5 = freeze i32 %4\n  %v = freeze <4 x i32> %w, !dbg !12\n  ; %a = freeze i32 %b\n  ret void\n";
    let (text, count) = freeze_as_select(ir);
    assert_eq!(count, 2);
    assert_eq!(
        text,
        "  %5 = select i1 true, i32 %4, i32 %4\n  %v = select i1 true, <4 x i32> %w, <4 x i32> %w, !dbg !12\n  \
         ; %a = freeze i32 %b\n  ret void\n"
    );
}

/// clang -O2 computes `i % w` beside `i / w` as `i - (i / w) * w` of frozen operands
/// (DivRemPairs). Rescued as the unoptimised module, such a kernel kept every local in a
/// variable, which the middle end sees as memory: OpenCV's `morph` (its tile's `point %
/// width` and `point / width`) stored its locals in work-item state across its barrier and
/// wrote its result by a scatter, 1.7x as slow. The optimised module with its `freeze`s
/// removed comes first.
#[test]
fn a_division_beside_a_remainder_keeps_the_optimised_module() {
    let src = "kernel void fuzz(global int *out, int w) { int i = get_global_id(0); out[i] = i / w + (i % w) * 7; }";
    for target in targets() {
        let program = build_on(src, "-cl-std=CL3.0", &target);
        assert!(program.log.contains("`freeze` instruction(s) removed"), "{}", program.log);
        let body = kernel_body(&program.module, "fuzz");
        let variables = insts(body).iter().filter(|(d, _)| matches!(d, InstData::Variable { .. })).count();
        assert_eq!(variables, 0, "the unoptimised module (its locals are variables) was translated");
    }
}
