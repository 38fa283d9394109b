//! Measures clBuildProgram through the ICD loader: cold (compiled) and warm (SoftCL's kernel
//! cache) builds of the same program.
//!
//! Usage: `softcl-build-time [--device cpu|gpu] [--builds N] [--il | --binary] [--options OPTS] [file.cl]`.
//! Builds the
//! program (the file, or a built-in one with four kernels: a tiled matrix product with local
//! memory and barriers, a reduction, math built-ins, a copy) N times (default 5), each time
//! clCreateProgramWithSource (or clCreateProgramWithIL with `--il`: the source compiled by
//! clang-15 and llvm-spirv-15 first) + clBuildProgram + clReleaseProgram, and prints each build's
//! wall time in milliseconds. `--options` passes OPTS to clBuildProgram (hashcat's `-D KERNEL_STATIC -D
//! INCLUDE_PATH=... -w`, for example). With `--binary`, each build is clCreateProgramWithBinary of the
//! first build's CL_PROGRAM_BINARIES (SPIR-V and native code) + clBuildProgram. The kernel cache is on unless `SOFTCL_CACHE` says otherwise;
//! point `SOFTCL_CACHE_DIR` at an empty directory for a cold first build. Run it twice to see
//! a warm build in a fresh process (docs/PERFORMANCE.md, "Program builds").

use softcl_conformance::*;
use std::process::ExitCode;
use std::time::Instant;

const BUILTIN: &str = r#"
#define TILE 16
__kernel void matmul(__global const float* a, __global const float* b, __global float* c, int n) {
    __local float ta[TILE][TILE];
    __local float tb[TILE][TILE];
    int row = get_global_id(1), col = get_global_id(0);
    int lr = get_local_id(1), lc = get_local_id(0);
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        ta[lr][lc] = a[row * n + t * TILE + lc];
        tb[lr][lc] = b[(t * TILE + lr) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++) acc += ta[lr][k] * tb[k][lc];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
__kernel void reduce(__global const float* in, __global float* out, __local float* scratch) {
    int l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) scratch[l] += scratch[l + s];
    }
    if (l == 0) out[get_group_id(0)] = scratch[0];
}
__kernel void math(__global float4* x, float k) {
    int i = get_global_id(0);
    float4 v = x[i];
    x[i] = sin(v) * exp(-v * k) + sqrt(fabs(v)) + pow(v, (float4)(1.5f));
}
__kernel void copy(__global const int* s, __global int* d) {
    d[get_global_id(0)] = s[get_global_id(0)];
}
"#;

fn main() -> ExitCode {
    let mut kind = DeviceKind::Cpu;
    let mut builds = 5usize;
    let mut il = false;
    let mut binary = false;
    let mut file: Option<String> = None;
    let mut options = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--device" => match args.next().as_deref() {
                Some("cpu") => kind = DeviceKind::Cpu,
                Some("gpu") => kind = DeviceKind::Gpu,
                _ => return usage(),
            },
            "--builds" => match args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0) {
                Some(n) => builds = n,
                None => return usage(),
            },
            "--il" => il = true,
            "--options" => match args.next() {
                Some(o) => options = o,
                None => return usage(),
            },
            "--binary" => binary = true,
            "-h" | "--help" => return usage(),
            f => file = Some(f.to_string()),
        }
    }
    let source = match &file {
        Some(f) => match std::fs::read_to_string(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{f}: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => BUILTIN.to_string(),
    };
    if std::env::var_os("SOFTCL_CACHE").is_none() {
        // The conformance crate turns the cache off by default (tests must not depend on a
        // warm cache); this tool is about the cache.
        std::env::set_var("SOFTCL_CACHE", "1");
    }
    let Some(dev) = device(kind) else {
        eprintln!("no {kind} device");
        return ExitCode::FAILURE;
    };
    let t = Instant::now();
    let ctx = dev.context();
    let context_ms = t.elapsed().as_secs_f64() * 1e3;
    let spirv = if il {
        match spirv_of(&source) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("cannot compile the source to SPIR-V: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let bin = if binary {
        let p =
            build_program(program_from_source(&ctx, &source), &[dev.id], &options).unwrap_or_else(|e| panic!("{e}"));
        Some(binary_of(&p))
    } else {
        None
    };
    println!(
        "device: {kind} {:?}; clCreateContext {context_ms:.3} ms; input: {}",
        dev.name,
        if il {
            "SPIR-V (clCreateProgramWithIL)"
        } else if binary {
            "binary (clCreateProgramWithBinary)"
        } else {
            "OpenCL C source"
        }
    );
    for i in 0..builds {
        let t = Instant::now();
        let program = match (&spirv, &bin) {
            (Some(bytes), _) => program_from_il(&ctx, bytes).unwrap_or_else(|e| panic!("{e}")),
            (_, Some(bytes)) => program_from_binary(&ctx, dev.id, bytes),
            _ => program_from_source(&ctx, &source),
        };
        let program = build_program(program, &[dev.id], &options).unwrap_or_else(|e| panic!("{e}"));
        drop(program);
        println!("build {}: {:.3} ms", i + 1, t.elapsed().as_secs_f64() * 1e3);
    }
    ExitCode::SUCCESS
}

/// CL_PROGRAM_BINARIES of a one-device program.
fn binary_of(program: &Program) -> Vec<u8> {
    let sizes: Vec<usize> = program_info_array(program.raw(), CL_PROGRAM_BINARY_SIZES);
    let mut bytes = vec![0u8; sizes.first().copied().unwrap_or(0)];
    let mut ptrs = [bytes.as_mut_ptr()];
    // SAFETY: one pointer to a buffer of the reported size.
    unsafe {
        cl!(clGetProgramInfo(
            program.raw(),
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(&ptrs),
            ptrs.as_mut_ptr().cast::<std::ffi::c_void>(),
            std::ptr::null_mut()
        ))
    };
    bytes
}

/// clCreateProgramWithBinary for one device.
fn program_from_binary(ctx: &Context, dev: cl_device_id, bytes: &[u8]) -> Program {
    let (len, mut ptr_bin, mut status, mut err) = (bytes.len(), bytes.as_ptr(), 1, 0);
    // SAFETY: one device, one binary of len bytes, a status slot.
    let raw = unsafe { clCreateProgramWithBinary(ctx.raw(), 1, &dev, &len, &mut ptr_bin, &mut status, &mut err) };
    assert_eq!((err, status), (CL_SUCCESS, CL_SUCCESS), "clCreateProgramWithBinary");
    // SAFETY: a new program whose reference we own.
    unsafe { Program::from_raw(raw) }
}

/// The source as SPIR-V: clang-15 piped into llvm-spirv-15.
fn spirv_of(source: &str) -> Result<Vec<u8>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let run = |cmd: &str, args: &[&str], input: &[u8]| -> Result<Vec<u8>, String> {
        let mut child = Command::new(cmd)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{cmd}: {e}"))?;
        child.stdin.take().ok_or("no stdin")?.write_all(input).map_err(|e| e.to_string())?;
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(out.stdout)
    };
    let bc = run(
        "clang-15",
        &["-c", "--target=spir64", "-cl-std=CL2.0", "-O2", "-emit-llvm", "-x", "cl", "-", "-o", "-"],
        source.as_bytes(),
    )?;
    run("llvm-spirv-15", &["-", "-o", "-"], &bc)
}

fn usage() -> ExitCode {
    eprintln!("usage: softcl-build-time [--device cpu|gpu] [--builds N] [--il | --binary] [--options OPTS] [file.cl]");
    ExitCode::FAILURE
}
