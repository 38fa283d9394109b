//! Program binaries that hold native code (runtime/src/program.rs, "Binaries"): an executable's
//! CL_PROGRAM_BINARIES carries its SPIR-V and the device's native code. Loading it in another
//! process (clCreateProgramWithBinary, then clBuildProgram) links that code without the
//! toolchain and without LLVM's code generation. Native code of another driver build is not
//! used: the program is rebuilt from the binary's SPIR-V, with a line in the build log.
//!
//! The loading side runs in a child process of this test binary (the ignored `child` entry) with
//! `SOFTCL_CLANG` / `SOFTCL_LLVM_SPIRV` pointing at missing files and `SOFTCL_DUMP_LLVM=1`, which
//! prints the LLVM IR of every code generation to stderr: a build that generated code shows it.

use softcl_conformance::*;
use std::ffi::c_void;
use std::process::Command;
use std::ptr;

const CHILD: &str = "SOFTCL_NATIVE_BINARY_TEST_CHILD";
/// Printed by the child after clBuildProgram, before the kernel's first launch (the Gen
/// device compiles its SIMD-width variant then, which is not the binary's business).
const BUILT: &str = "NATIVE BINARY TEST: BUILT";

const SOURCE: &str = r#"
__kernel void k(__global int* out, int add) {
    int i = get_global_id(0);
    out[i] = i * 5 + add + (int)(cbrt((double)(i * i * i)) + 0.5);
}
"#;

fn expected() -> Vec<i32> {
    (0..53).map(|i| i * 5 + 7 + i).collect()
}

/// CL_PROGRAM_BINARIES of a one-device program.
fn binary_of(program: &Program) -> Vec<u8> {
    let sizes: Vec<usize> = program_info_array(program.raw(), CL_PROGRAM_BINARY_SIZES);
    assert_eq!(sizes.len(), 1);
    let mut bytes = vec![0u8; sizes[0]];
    let mut ptrs = [bytes.as_mut_ptr()];
    // SAFETY: one pointer to a buffer of the reported size.
    unsafe {
        cl!(clGetProgramInfo(
            program.raw(),
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(&ptrs),
            ptrs.as_mut_ptr().cast::<c_void>(),
            ptr::null_mut()
        ))
    };
    bytes
}

/// The child: loads the binary file `KB_BINARY` for device `$CHILD`, builds it, runs `k`.
#[test]
#[ignore = "a child process of the native binary tests"]
fn child() {
    let Ok(device_name) = std::env::var(CHILD) else { return };
    let kind = if device_name == "gpu" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    let bytes = std::fs::read(std::env::var("KB_BINARY").expect("KB_BINARY")).expect("the binary file");
    let env = device(kind).expect("the device under test").env();
    let dev = env.dev();
    let (len, mut ptr_bin, mut status, mut err) = (bytes.len(), bytes.as_ptr(), 1, 0);
    // SAFETY: one device, one binary of len bytes, a status slot.
    let raw =
        unsafe { clCreateProgramWithBinary(env.context.raw(), 1, &dev, &len, &mut ptr_bin, &mut status, &mut err) };
    assert_eq!((err, status), (CL_SUCCESS, CL_SUCCESS), "clCreateProgramWithBinary");
    // SAFETY: a new program whose reference we own.
    let program = unsafe { Program::from_raw(raw) };
    let program = build_program(program, &[dev], "").unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{BUILT}");
    let log = program_build_info_string(program.raw(), dev, CL_PROGRAM_BUILD_LOG);
    println!("BUILD LOG<<<{log}>>>");
    let k = kernel_of(&program, "k");
    let b = env.buffer(CL_MEM_WRITE_ONLY, 53 * 4);
    k.set_mem(0, &b);
    k.set_arg(1, &7i32);
    env.run(&k, &[53], None);
    env.finish();
    let got: Vec<i32> = env.read(&b, 53);
    assert_eq!(got, expected());
}

/// Runs the child on `binary`; returns (stdout, stderr up to the BUILT line).
fn load_in_child(device: &str, binary: &[u8], name: &str) -> (String, String) {
    let file = std::env::temp_dir().join(format!("softcl-native-binary-{name}-{}.bin", std::process::id()));
    std::fs::write(&file, binary).expect("write the binary");
    let out = Command::new(std::env::current_exe().expect("test binary path"))
        .args(["child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, device)
        .env("KB_BINARY", &file)
        .env("SOFTCL_CACHE", "0")
        .env("SOFTCL_CLANG", "/nonexistent/softcl-test-clang")
        .env("SOFTCL_LLVM_SPIRV", "/nonexistent/softcl-test-llvm-spirv")
        .env("SOFTCL_DUMP_LLVM", "1")
        .output()
        .expect("run the test binary");
    let _ = std::fs::remove_file(&file);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    let (before, _) = stderr.split_once(BUILT).unwrap_or_else(|| panic!("the child did not build:\n{stderr}"));
    (stdout, before.to_string())
}

fn built_binary(kind: DeviceKind) -> Vec<u8> {
    let env = device(kind).expect("the device under test").env();
    let program = env.build(SOURCE, "");
    binary_of(&program)
}

#[test]
fn a_binary_with_native_code_loads_without_the_toolchain_or_code_generation() {
    for (kind, name) in [(DeviceKind::Cpu, "cpu"), (DeviceKind::Gpu, "gpu")] {
        let binary = built_binary(kind);
        let (_, stderr) = load_in_child(name, &binary, name);
        assert!(!stderr.contains("; SoftCL LLVM IR"), "{name}: clBuildProgram generated code:\n{stderr}");
    }
}

/// FNV-1a 64, the container's checksum.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The binary with its native section's identity changed as another driver build would have
/// it (the checksum made right again): version 2 header, u32 fields at 8..32.
fn from_another_driver(binary: &[u8]) -> Vec<u8> {
    let u32_at = |at: usize| u32::from_le_bytes(binary[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(u32_at(8), 2, "a version 2 container");
    let native_len = u32_at(28);
    assert!(native_len > 0, "the binary holds native code");
    let native_at = 32 + u32_at(20) + 4 * u32_at(24);
    let mut b = binary[..binary.len() - 8].to_vec();
    // The identity text starts after its u32 length with "softcl <version>".
    let id = native_at + 4;
    assert_eq!(&b[id..id + 7], b"softcl ");
    b[id] = b'S';
    let sum = fnv1a(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

#[test]
fn native_code_of_another_driver_build_is_rebuilt_from_the_spirv() {
    for (kind, name) in [(DeviceKind::Cpu, "cpu"), (DeviceKind::Gpu, "gpu")] {
        let stale = from_another_driver(&built_binary(kind));
        let (stdout, stderr) = load_in_child(name, &stale, &format!("stale-{name}"));
        assert!(stderr.contains("; SoftCL LLVM IR"), "{name}: the code is generated again:\n{stderr}");
        assert!(
            stdout.contains("native code was built by another SoftCL build or for another device"),
            "{name}: the build log says why:\n{stdout}"
        );
    }
}

#[test]
fn native_code_for_the_other_device_is_not_used() {
    // The CPU device's binary given for the Gen device: same driver, another target.
    let binary = built_binary(DeviceKind::Cpu);
    let (stdout, stderr) = load_in_child("gpu", &binary, "other-device");
    assert!(stderr.contains("; SoftCL LLVM IR"), "the code is generated for the Gen device:\n{stderr}");
    assert!(stdout.contains("for another device"), "{stdout}");
}
