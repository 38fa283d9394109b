//! A work-group entry declares its argument block 8-byte aligned (`abi::ARGS_ALIGN`), so
//! that LLVM may hoist loads of it; `NativeKernel::run` runs a block that is not aligned
//! from an aligned copy, with the same result.

use softcl_compiler::{compile_source, Target, Vectorizer, WorkGroupContext, FINISHED};

#[test]
fn an_argument_block_at_any_address_gives_the_same_result() {
    let src = r#"
        __kernel void k(__global int *out, int a, long b, char c) {
            int i = get_global_id(0);
            out[i] = a * i + (int)b + c;
        }"#;
    for vectorizer in [Vectorizer::Off, Vectorizer::Forced { width: 8, register_bytes: 64 }] {
        let t = Target { vectorizer: vectorizer.clone(), ..Target::default() };
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
        let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
        let k = p.kernel("k").expect("kernel k");
        let n = 20usize;
        let size = k.info.arg_block_size;
        for shift in 0..8 {
            let mut out = vec![0i32; n];
            let mut block = vec![0u8; size + shift];
            let args = &mut block[shift..];
            let addr = out.as_mut_ptr().expose_provenance() as u64;
            args[k.info.args[0].offset..][..8].copy_from_slice(&addr.to_ne_bytes());
            args[k.info.args[1].offset..][..4].copy_from_slice(&7i32.to_ne_bytes());
            args[k.info.args[2].offset..][..8].copy_from_slice(&(-3i64).to_ne_bytes());
            args[k.info.args[3].offset] = 5;
            let ctx = WorkGroupContext {
                local_size: [n as u64, 1, 1],
                enqueued_local_size: [n as u64, 1, 1],
                global_size: [n as u64, 1, 1],
                ..WorkGroupContext::default()
            };
            // SAFETY: the block was laid out for this kernel; the buffers it points at outlive the call.
            assert_eq!(unsafe { k.run(args, &ctx, 0, n as u32, 0) }, FINISHED);
            let want: Vec<i32> = (0..n as i32).map(|i| 7 * i - 3 + 5).collect();
            assert_eq!(out, want, "argument block at offset {shift} ({vectorizer:?})");
        }
    }
}
