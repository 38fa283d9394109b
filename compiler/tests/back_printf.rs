//! printf lowering: kernels run directly (no device) with a printf buffer in the context; the
//! records they write are formatted with `softcl_compiler::printf`.

use softcl_compiler::abi::PrintfBuffer;
use softcl_compiler::printf::format_buffer;
use softcl_compiler::{compile_source, NativeProgram, Target, WorkGroupContext, FINISHED};
use std::sync::atomic::Ordering;
use std::sync::Arc;

fn build(src: &str, opts: &str) -> Arc<NativeProgram> {
    build_for(src, opts, &Target::default())
}

fn build_for(src: &str, opts: &str, t: &Target) -> Arc<NativeProgram> {
    let t = t.clone();
    let prog = compile_source(src, opts, &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

/// Runs kernel `k(global int *ret)` as one work-group of `n` work-items (no barriers) with a
/// printf buffer of `capacity` bytes (`None`: no buffer). Returns (output, ret, bytes used).
fn run(src: &str, n: usize, capacity: Option<usize>) -> (String, Vec<i32>, u64) {
    run_opts(src, "", n, capacity)
}

fn run_opts(src: &str, opts: &str, n: usize, capacity: Option<usize>) -> (String, Vec<i32>, u64) {
    run_on(build(src, opts), n, capacity)
}

fn run_on(p: Arc<NativeProgram>, n: usize, capacity: Option<usize>) -> (String, Vec<i32>, u64) {
    let k = p.kernel("k").expect("kernel k");
    assert!(k.info.uses_printf, "uses_printf is set");
    assert_eq!(k.info.barrier_count, 0);
    let mut ret = vec![12345i32; n];
    let mut args = vec![0u8; k.info.arg_block_size];
    let addr = ret.as_mut_ptr().expose_provenance() as u64;
    args[k.info.args[0].offset..][..8].copy_from_slice(&addr.to_ne_bytes());
    let mut storage = vec![0u8; capacity.unwrap_or(0)];
    let header = PrintfBuffer {
        data: storage.as_mut_ptr().expose_provenance() as u64,
        capacity: capacity.unwrap_or(0) as u64,
        used: Default::default(),
    };
    let ctx = WorkGroupContext {
        local_size: [n as u64, 1, 1],
        enqueued_local_size: [n as u64, 1, 1],
        global_size: [n as u64, 1, 1],
        printf: if capacity.is_some() { &header } else { std::ptr::null() },
        program_globals: k.program_globals(),
        ..WorkGroupContext::default()
    };
    // SAFETY: the block holds the output buffer's address; it and the printf buffer outlive the call.
    assert_eq!(unsafe { k.run(&args, &ctx, 0, n as u32, 0) }, FINISHED);
    let used = header.used.load(Ordering::SeqCst);
    let records = &storage[..(used as usize).min(storage.len())];
    (String::from_utf8(format_buffer(records)).expect("utf-8"), ret, used)
}

const NESTED_PRINTF: &str = r#"kernel void k(global int *ret) {
            int i = get_global_id(0);
            int r = 0;
            if (i & 1) {
                r = printf("odd %d\n", i) + 1;
                if (i & 2) r += printf("odd %d\n", i + 100) + 2;
            }
            ret[i] = r;
        }"#;

/// Runs `prog` (the kernel [`NESTED_PRINTF`]) at width 8 and checks its records and results.
fn check_nested_printf(prog: &softcl_compiler::Program) {
    let t = Target {
        vectorizer: softcl_compiler::Vectorizer::Forced { width: 8, register_bytes: 64 },
        ..Target::default()
    };
    let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    assert_eq!(p.kernel("k").expect("kernel k").info.simd_width, 8);
    let (out, ret, _) = run_on(p, 8, Some(4096));
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["odd 1", "odd 103", "odd 107", "odd 3", "odd 5", "odd 7"], "{out}");
    assert_eq!(ret, [0, 1, 0, 3, 0, 1, 0, 3]);
}

/// Vector code at width 8 with printf under nested divergent branches (masked blocks).
#[test]
fn printf_under_nested_masks() {
    let prog = compile_source(NESTED_PRINTF, "", &Target::default()).unwrap_or_else(|e| panic!("{}", e.log));
    check_nested_printf(&prog);
}

/// The inner printf's format address computed in the outer branch: once linearized, it is a
/// value of a masked block used after it, which crosses the block's skip guard. It must stay
/// a constant there (printf needs its format as one), not become a phi.
#[test]
fn a_printf_format_from_an_outer_masked_block_stays_constant() {
    use softcl_compiler::ir::{InstData, ValueDef};
    let mut prog = compile_source(NESTED_PRINTF, "", &Target::default()).unwrap_or_else(|e| panic!("{}", e.log));
    // The kernel's body (a wrapper calls it; the back end inlines it).
    let func = prog
        .module
        .functions
        .iter()
        .find(|(_, f)| f.insts.iter().any(|(_, d)| matches!(d, InstData::ExtInst { opcode: 184, .. })))
        .map(|(func, _)| func)
        .expect("a function with printf");
    let f = &mut prog.module.functions[func];
    let printfs: Vec<_> = f
        .layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].clone())
        .filter(|&i| matches!(&f.insts[i], InstData::ExtInst { opcode: 184, .. }))
        .collect();
    assert_eq!(printfs.len(), 2);
    let InstData::ExtInst { args, .. } = &f.insts[printfs[1]] else { unreachable!() };
    let ValueDef::Result(def) = f.values[args[0]].def else { panic!("the format is not computed") };
    assert!(f.insts[def]
        .operands()
        .iter()
        .all(|&v| !matches!(f.values[v].def, ValueDef::Result(_) | ValueDef::Param(..))));
    f.layout.remove_inst(def);
    assert!(f.layout.insert_inst_before(printfs[0], def));
    softcl_compiler::ir::validate::validate(&prog.module).expect("still valid");
    check_nested_printf(&prog);
}

#[test]
fn records_are_written_in_call_order_per_work_item() {
    let (out, ret, _) = run(
        r#"kernel void k(global int *ret) {
            int i = get_global_id(0);
            ret[i] = printf("%d:%s", i, "a") | printf("%d:%c|", i, 'b');
        }"#,
        3,
        Some(4096),
    );
    assert_eq!(out, "0:a0:b|1:a1:b|2:a2:b|");
    assert_eq!(ret, [0, 0, 0]);
}

#[test]
fn without_a_buffer_printf_returns_minus_one() {
    let (out, ret, _) = run(r#"kernel void k(global int *ret) { ret[0] = printf("x\n"); }"#, 1, None);
    assert_eq!((out.as_str(), ret[0]), ("", -1));
}

#[test]
fn a_record_that_does_not_fit_is_dropped() {
    // "%d\n" with one int: 8 (header) + 3 (format) + 4 (argument header) + 4 = 19 bytes.
    let src = r#"kernel void k(global int *ret) { int i = get_global_id(0); ret[i] = printf("%d\n", i); }"#;
    let (out, ret, used) = run(src, 3, Some(19 * 2));
    assert_eq!(out, "0\n1\n");
    assert_eq!(ret, [0, 0, -1]);
    assert_eq!(used, 19 * 3, "the failed reservation is counted but not written");
    let (out, ret, used) = run(src, 1, Some(18));
    assert_eq!((out.as_str(), ret[0], used), ("", -1, 0), "larger than the buffer: nothing reserved");
}

#[test]
fn run_time_strings_are_copied_with_their_length() {
    let (out, ret, _) = run(
        r#"constant char names[2][6] = { "even", "odd" };
        kernel void k(global int *ret) {
            int i = get_global_id(0);
            constant char *s = names[i & 1];
            constant char *z = 0;
            ret[i] = printf("%d %s%s;", i, s, z);
        }"#,
        3,
        Some(4096),
    );
    assert_eq!(out, "0 even;1 odd;2 even;");
    assert_eq!(ret, [0, 0, 0]);
}

#[test]
fn a_global_string_is_read_when_printed_not_when_compiled() {
    // A program-scope __global string may change: %s copies what it holds at the call.
    let src = r#"global char word[8] = "before";
        kernel void k(global int *ret) {
            word[0] = 'B';
            word[3] = 0;
            ret[0] = printf("%s|%s\n", word, "lit");
        }"#;
    let (out, ret, _) = run_opts(src, "-cl-std=CL2.0", 1, Some(256));
    assert_eq!((out.as_str(), ret[0]), ("Bef|lit\n", 0));
}

#[test]
fn printf_builds_without_optimisation() {
    let src = r#"kernel void k(global int *ret) {
            float4 v = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
            constant char *s = "str";
            ret[get_global_id(0)] = printf("%d %s %v4hlf %c\n", (int)get_global_id(0), s, v, 'z');
        }"#;
    let (out, ret, _) = run_opts(src, "-cl-opt-disable", 2, Some(1024));
    assert_eq!(out, "0 str 1.000000,2.000000,3.000000,4.000000 z\n1 str 1.000000,2.000000,3.000000,4.000000 z\n");
    assert_eq!(ret, [0, 0]);
}
