//! OpenCL C printf through the loader, on both devices. Each kernel runs in a child process
//! (`softcl-printf-run`) whose stdout is captured: the driver writes printf output to the
//! application's stdout. Expected text is C's printf output for the same format and values.

use softcl_conformance::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// What a child run reported.
struct Run {
    /// The printf output (stdout before the completion marker).
    out: String,
    /// `ret[i]` of each work-item.
    ret: Vec<i32>,
}

/// Runs `kernel void k(global int *ret)` of `src` over `global` work-items (`local` 0: NULL).
#[track_caller]
fn run(kind: DeviceKind, src: &str, global: usize, local: usize) -> Run {
    run_with(kind, src, global, local, false)
}

/// [`run`], from SPIR-V made with every OpenCL C feature on when `il`.
#[track_caller]
fn run_with(kind: DeviceKind, src: &str, global: usize, local: usize, il: bool) -> Run {
    init_loader();
    let dev = match kind {
        DeviceKind::Cpu => "cpu",
        DeviceKind::Gpu => "gpu",
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_softcl-printf-run"))
        .args([dev, &global.to_string(), &local.to_string()])
        .args(il.then_some("il"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start softcl-printf-run");
    child.stdin.take().expect("stdin").write_all(src.as_bytes()).expect("write the kernel source");
    let output = child.wait_with_output().expect("wait for softcl-printf-run");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{kind}: child failed ({}):\n{stderr}\nstdout:\n{stdout}", output.status);
    assert!(stderr.contains(&format!("status: {CL_COMPLETE}")), "{kind}: event not complete:\n{stderr}");
    // Everything printed must be there when the event is complete: before the marker.
    let out = stdout
        .strip_suffix("<<complete>>\n")
        .unwrap_or_else(|| panic!("{kind}: printf output after the event completed:\n{stdout}"))
        .to_string();
    let ret = stderr
        .lines()
        .find_map(|l| l.strip_prefix("ret: "))
        .unwrap_or_else(|| panic!("{kind}: no ret line:\n{stderr}"))
        .split_whitespace()
        .map(|v| v.parse().expect("ret value"))
        .collect();
    Run { out, ret }
}

fn on_both(mut f: impl FnMut(DeviceKind)) {
    init_loader();
    for d in test_devices() {
        println!("--- on {} device {:?}", d.kind, d.name);
        f(d.kind);
    }
}

#[test]
fn every_scalar_conversion() {
    const SRC: &str = r#"
        constant char gs[] = "global string";
        kernel void k(global int *ret) {
            int r = 0;
            r |= printf("d:%d|%5d|%-5d|%05d|%+d|% d|%.3d|%i|%.0d|\n", -42, 42, 42, 42, 42, 42, 7, -3, 0);
            r |= printf("u:%u|%o|%#o|%x|%#X|%08x|%hhu|%hd|%hx\n", 4000000000u, 8, 8, 255, 255, 255, 300, 70000, -1);
            r |= printf("l:%ld|%lu|%lx|%lX|%lo|%+ld\n", -9000000000L, 18000000000000000000UL,
                        0x123456789abcdefUL, 0xfedcba9876543210UL, 01234567012345670UL, 5L);
            r |= printf("f:%f|%.2f|%10.3f|%-10.1f|%+.1f|%e|%.3E|%g|%G|%g|%#g\n", 3.14159f, 2.5f, 1.0f / 3,
                        -1.25f, 2.0f, 12345.678f, 0.000123f, 100000.0f, 1e-10f, 0.0001f, 1.0f);
            r |= printf("a:%a|%A|%.2a|%F|%E|%f|%5.1f|\n", 1.0f, -0.5f, 3.0f, INFINITY, NAN, -INFINITY, INFINITY);
            r |= printf("c:%c%c%c|%3c|%-3c|\n", 'O', 'K', '!', 'x', 'y');
            r |= printf("s:%s|%8s|%-8s|%.2s|%s|%s|%%|\n", "abc", "abc", "abc", "abc", "", gs);
            ret[get_global_id(0)] = r;
        }"#;
    const WANT: &str = "d:-42|   42|42   |00042|+42| 42|007|-3||\n\
        u:4000000000|10|010|ff|0XFF|000000ff|44|4464|ffff\n\
        l:-9000000000|18000000000000000000|123456789abcdef|FEDCBA9876543210|1234567012345670|+5\n\
        f:3.141590|2.50|     0.333|-1.2      |+2.0|1.234568e+04|1.230E-04|100000|1E-10|0.0001|1.00000\n\
        a:0x1p+0|-0X1P-1|0x1.80p+1|INF|NAN|-inf|  inf|\n\
        c:OK!|  x|y  |\n\
        s:abc|     abc|abc     |ab||global string|%|\n";
    on_both(|kind| {
        let r = run(kind, SRC, 1, 0);
        assert_eq!(r.out, WANT, "{kind}");
        assert_eq!(r.ret, [0], "{kind}: printf returns 0 on success");
    });
}

#[test]
fn vectors_with_the_hl_modifier() {
    const SRC: &str = r#"
        kernel void k(global int *ret) {
            ret[0] = printf("v:%v4hlf|%2.2v4hlf|%#v2hhx|%v3hd|%v2hld|%v2lu|%+v4hli|%.1v2hla|%v8hhd|%.2v3hle\n",
                (float4)(1.0f, 2.5f, -3.0f, 4.0f), (float4)(1.0f, 2.5f, -3.0f, 4.0f), (uchar2)(0xfa, 0xfb),
                (short3)(-1, 2, -3), (int2)(7, -8), (ulong2)(1, 18446744073709551615UL), (int4)(1, -2, 3, -4),
                (float2)(0.25f, 1.5f), (char8)(1, -1, 2, -2, 3, -3, 4, -4), (float3)(1234.25f, 987654.5f, 0.0005f));
        }"#;
    const WANT: &str = "v:1.000000,2.500000,-3.000000,4.000000|1.00,2.50,-3.00,4.00|0xfa,0xfb|-1,2,-3|7,-8|\
        1,18446744073709551615|+1,-2,+3,-4|0x1.0p-2,0x1.8p+0|1,-1,2,-2,3,-3,4,-4|1.23e+03,9.88e+05,5.00e-04\n";
    on_both(|kind| {
        let r = run(kind, SRC, 1, 0);
        assert_eq!(r.out, WANT, "{kind}");
        assert_eq!(r.ret, [0], "{kind}");
    });
}

#[test]
fn strings_chosen_at_run_time_and_pointers() {
    // %s of a pointer only known at run time (strlen at run time), from a helper function;
    // %p of a buffer address, checked against the address the kernel stores.
    const SRC: &str = r#"
        constant char names[3][8] = { "zero", "one", "two" };
        int show(int i, constant char *s) { return printf("item %d is %s.\n", i, s); }
        kernel void k(global int *ret) {
            int i = get_global_id(0);
            if (i < 3) {
                constant char *s = i == 0 ? "nought" : names[i];
                ret[i] = show(i, s);
            }
            if (i == 3) {
                printf("p:%p\n", (global void *)ret);
                ulong a = (ulong)ret;
                ret[3] = (int)(a & 0xffffffff);
                ret[4] = (int)(a >> 32);
            }
        }"#;
    on_both(|kind| {
        let r = run(kind, SRC, 5, 1);
        let mut lines: Vec<&str> = r.out.lines().collect();
        let p = lines.iter().position(|l| l.starts_with("p:")).expect("the %p line");
        let p = lines.remove(p);
        lines.sort();
        assert_eq!(lines, ["item 0 is nought.", "item 1 is one.", "item 2 is two."], "{kind}");
        let addr = u64::from(r.ret[3] as u32) | (u64::from(r.ret[4] as u32) << 32);
        assert_eq!(p, format!("p:0x{addr:x}"), "{kind}");
        assert_eq!(r.ret[..3], [0, 0, 0], "{kind}");
    });
}

#[test]
fn many_work_items_write_whole_lines_in_order() {
    const SRC: &str = r#"
        kernel void k(global int *ret) {
            int i = get_global_id(0);
            int a = printf("wi %d of %d: first %s\n", i, (int)get_global_size(0), "line");
            barrier(CLK_LOCAL_MEM_FENCE);
            int b = printf("wi %d: second %v2d\n", i, (int2)(i, -i));
            ret[i] = a == 0 && b == 0 ? 0 : -1;
        }"#;
    let n = 2000;
    on_both(|kind| {
        let r = run(kind, SRC, n, 40);
        assert_eq!(r.ret, vec![0; n], "{kind}: every printf returned 0");
        let lines: Vec<&str> = r.out.lines().collect();
        assert_eq!(lines.len(), 2 * n, "{kind}: line count");
        let mut first_at = vec![None; n];
        let mut second_at = vec![None; n];
        for (at, line) in lines.iter().enumerate() {
            let words: Vec<&str> = line.split(' ').collect();
            let i: usize = words[1].trim_end_matches(':').parse().unwrap_or_else(|_| panic!("{kind}: line {line:?}"));
            if line.ends_with("first line") {
                assert_eq!(*line, format!("wi {i} of {n}: first line"), "{kind}");
                first_at[i] = Some(at);
            } else {
                assert_eq!(*line, format!("wi {i}: second {i},{}", -(i as i64)), "{kind}");
                second_at[i] = Some(at);
            }
        }
        for i in 0..n {
            let (Some(a), Some(b)) = (first_at[i], second_at[i]) else { panic!("{kind}: work-item {i} missing") };
            assert!(a < b, "{kind}: work-item {i}'s lines out of order");
        }
    });
}

#[test]
fn overflowing_the_printf_buffer_returns_minus_one() {
    // Each work-item tries 64 records of about 140 bytes: 4096 x 64 x 140 > 4 MiB (the larger
    // CL_DEVICE_PRINTF_BUFFER_SIZE). ret[i] counts the calls that succeeded; a failed call must
    // return -1 and print nothing.
    const SRC: &str = r#"
        kernel void k(global int *ret) {
            int i = get_global_id(0);
            int ok = 0;
            for (int j = 0; j < 64; j++) {
                int r = printf("%d %d ....................................................................................................\n", i, j);
                if (r == 0) ok++;
                else if (r != -1) ok -= 100000;
            }
            ret[i] = ok;
        }"#;
    let n = 4096;
    on_both(|kind| {
        let device = device(kind).expect("device");
        let size: usize = device_info(device.id, CL_DEVICE_PRINTF_BUFFER_SIZE);
        let r = run(kind, SRC, n, 64);
        assert!(r.ret.iter().all(|&v| (0..=64).contains(&v)), "{kind}: printf returned neither 0 nor -1");
        let succeeded: usize = r.ret.iter().map(|&v| v as usize).sum();
        assert!(succeeded < n * 64, "{kind}: no call failed");
        assert!(succeeded > 0, "{kind}: no call succeeded");
        let lines: Vec<&str> = r.out.lines().collect();
        assert_eq!(lines.len(), succeeded, "{kind}: one line per successful call");
        assert!(r.out.len() <= size, "{kind}: {} bytes printed, the buffer has {size}", r.out.len());
        for l in &lines {
            assert!(l.ends_with("....") && l.len() == l.split(' ').take(2).map(str::len).sum::<usize>() + 102);
        }
        // Then a launch that fits succeeds again (the buffer is per launch).
        let again = run(kind, "kernel void k(global int *ret) { ret[0] = printf(\"again\\n\"); }", 1, 0);
        assert_eq!((again.out.as_str(), again.ret[0]), ("again\n", 0), "{kind}");
    });
}

#[test]
fn a_format_unknown_at_compile_time_fails_the_build_with_a_log() {
    // OpenCL C: the format string must be resolvable at compile time.
    const SRC: &str = "kernel void k(global int *ret, constant char *f) { ret[0] = printf(f); }";
    for_each_device(|d| {
        let env = d.env();
        let failure = match env.try_build(SRC, "") {
            Ok(_) => panic!("{}: a run-time format string was accepted", d.kind),
            Err(f) => f,
        };
        assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE, "{}", d.kind);
        assert!(failure.log.contains("format string must be a string literal"), "{}: log {:?}", d.kind, failure.log);
    });
}

#[test]
fn star_width_and_precision() {
    const SRC: &str = r#"kernel void k(global int *ret) { ret[0] = printf("[%*d|%-*.*f|%.*s]\n", 5, 42, 8, 2, 3.14159f, 2, "abc"); }"#;
    on_both(|kind| {
        let r = run(kind, SRC, 1, 0);
        assert_eq!((r.out.as_str(), r.ret[0]), ("[   42|3.14    |ab]\n", 0), "{kind}");
    });
}

#[test]
fn floats_promoted_to_double_in_spirv_print_on_devices_without_fp64() {
    // clang with every feature on promotes float printf arguments to double (the module
    // declares Float64); the devices must still print them, whether they offer fp64 or not.
    const SRC: &str = r#"kernel void k(global int *ret) {
        float x = get_global_id(0) + 0.25f;
        ret[0] = printf("%f %.1e %g %a|%v2hlf\n", x, x, x, x, (float2)(x, -x));
    }"#;
    let il = compile_to_spirv(SRC, "CL3.0").unwrap_or_else(|e| panic!("{e}"));
    // OpCapability (word count 2, opcode 17) Float64 (10).
    let words: Vec<u32> = il.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    assert!(words.windows(2).any(|w| w == [0x0002_0011, 10]), "the module declares Float64");
    on_both(|kind| {
        let r = run_with(kind, SRC, 1, 0, true);
        assert_eq!((r.out.as_str(), r.ret[0]), ("0.250000 2.5e-01 0.25 0x1p-2|0.250000,-0.250000\n", 0), "{kind}");
    });
}
