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
    // The last: a forced width wider than the registers (16 lanes on an AVX2 host's 32-byte
    // registers) builds and runs as Intel's runtime does, two registers to a value.
    for vectorizer in [
        Vectorizer::Off,
        Vectorizer::Forced { width: 8, register_bytes: 64 },
        Vectorizer::Forced { width: 16, register_bytes: 32 },
    ] {
        let t = Target { vectorizer: vectorizer.clone(), ..Target::default() };
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
        let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
        let k = p.kernel("k").expect("kernel k");
        if let Vectorizer::Forced { width, .. } = vectorizer {
            assert_eq!(k.info.simd_width, width, "{vectorizer:?}");
        }
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

/// A `long16` or `double16` argument claims 128-byte alignment, but the argument block is
/// only 8-byte aligned: its load must claim no more than the block's alignment at its
/// offset (an aligned 512-bit load of an unaligned address faults).
#[test]
fn wide_vector_arguments_in_a_block_aligned_to_8() {
    let src = r#"
        __kernel void k(__global long *out, long16 v, int a, double16 d) {
            int i = get_global_id(0);
            long16 w = v * (long)i + (long)a;
            vstore16(w + convert_long16(d), i, out);
        }"#;
    for vectorizer in [
        Vectorizer::Off,
        Vectorizer::Forced { width: 8, register_bytes: 64 },
        Vectorizer::Forced { width: 16, register_bytes: 64 },
    ] {
        let t = Target { vectorizer: vectorizer.clone(), ..Target::default() };
        let prog = compile_source(src, "", &t).unwrap_or_else(|e| panic!("front end: {}", e.log));
        let p = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
        let k = p.kernel("k").expect("kernel k");
        let n = 21usize;
        let size = k.info.arg_block_size;
        // The block at each multiple of 8 past a 128-byte boundary.
        let mut bytes = vec![0u8; size + 256];
        let base = bytes.as_ptr().align_offset(128);
        for shift in (8..128).step_by(8) {
            let mut out = vec![0i64; 16 * n];
            let args = &mut bytes[base + shift..base + shift + size];
            let addr = out.as_mut_ptr().expose_provenance() as u64;
            args[k.info.args[0].offset..][..8].copy_from_slice(&addr.to_ne_bytes());
            for c in 0..16 {
                let at = k.info.args[1].offset + 8 * c;
                args[at..at + 8].copy_from_slice(&(c as i64 - 5).to_ne_bytes());
                let at = k.info.args[3].offset + 8 * c;
                args[at..at + 8].copy_from_slice(&(c as f64 * 2.0).to_ne_bytes());
            }
            args[k.info.args[2].offset..][..4].copy_from_slice(&100i32.to_ne_bytes());
            let ctx = WorkGroupContext {
                local_size: [n as u64, 1, 1],
                enqueued_local_size: [n as u64, 1, 1],
                global_size: [n as u64, 1, 1],
                ..WorkGroupContext::default()
            };
            // SAFETY: the block was laid out for this kernel; the buffers it points at outlive the call.
            assert_eq!(unsafe { k.run(args, &ctx, 0, n as u32, 0) }, FINISHED);
            let want: Vec<i64> = (0..n as i64).flat_map(|i| (0..16).map(move |c| (c - 5) * i + 100 + c * 2)).collect();
            assert_eq!(out, want, "argument block at 128 * k + {shift} ({vectorizer:?})");
        }
    }
}
