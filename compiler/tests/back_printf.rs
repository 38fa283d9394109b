//! printf lowering: kernels run directly (no device) with a printf buffer in the context; the
//! records they write are formatted with `softcl_compiler::printf`.

use softcl_compiler::abi::PrintfBuffer;
use softcl_compiler::printf::format_buffer;
use softcl_compiler::{compile_source, NativeProgram, Target, WorkGroupContext, FINISHED};
use std::sync::atomic::Ordering;
use std::sync::Arc;

fn build(src: &str, opts: &str) -> Arc<NativeProgram> {
    let t = Target::default();
    let prog = compile_source(src, opts, &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

/// Runs kernel `k(global int *ret)` as one work-group of `n` work-items (no barriers) with a
/// printf buffer of `capacity` bytes (`None`: no buffer). Returns (output, ret, bytes used).
fn run(src: &str, n: usize, capacity: Option<usize>) -> (String, Vec<i32>, u64) {
    run_opts(src, "", n, capacity)
}

fn run_opts(src: &str, opts: &str, n: usize, capacity: Option<usize>) -> (String, Vec<i32>, u64) {
    let p = build(src, opts);
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
        ..WorkGroupContext::default()
    };
    // SAFETY: the block holds the output buffer's address; it and the printf buffer outlive the call.
    assert_eq!(unsafe { k.run(&args, &ctx, 0, n as u32, 0) }, FINISHED);
    let used = header.used.load(Ordering::SeqCst);
    let records = &storage[..(used as usize).min(storage.len())];
    (String::from_utf8(format_buffer(records)).expect("utf-8"), ret, used)
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
