//! Runs one printf kernel through the ICD loader, for the printf tests (conformance/tests/
//! printf.rs), which run it as a child process to capture the driver's stdout.
//!
//! Usage: `softcl-printf-run <cpu|gpu> <global size> <local size or 0 for NULL> [il]` with the
//! OpenCL C source on stdin (`il`: compiled to SPIR-V by the host's clang with every feature
//! on, so float printf arguments arrive promoted to double, and built with
//! clCreateProgramWithIL). The source must define `kernel void k(global int *ret)`; `ret`
//! has one int per work-item, set to 12345 before the launch. The program waits for the
//! launch's event, then writes `<<complete>>` to stdout (so output that arrives after the event
//! completed would follow the marker), and `ret:` with the values of `ret` to stderr.

use softcl_conformance::*;
use std::io::{Read, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let usage = || {
        eprintln!("usage: softcl-printf-run <cpu|gpu> <global> <local|0> [il] < kernel.cl");
        ExitCode::from(2)
    };
    let il = match args.get(4).map(String::as_str) {
        None => false,
        Some("il") => true,
        Some(_) => return usage(),
    };
    if !(4..=5).contains(&args.len()) {
        return usage();
    }
    let kind = match args[1].as_str() {
        "cpu" => DeviceKind::Cpu,
        "gpu" => DeviceKind::Gpu,
        _ => return usage(),
    };
    let (Ok(global), Ok(local)) = (args[2].parse::<usize>(), args[3].parse::<usize>()) else { return usage() };
    let mut source = String::new();
    if std::io::stdin().read_to_string(&mut source).is_err() {
        return usage();
    }
    init_loader();
    let Some(device) = device(kind) else {
        eprintln!("no {kind} device");
        return ExitCode::from(3);
    };
    let env = device.env();
    let built = if il {
        let spirv = match compile_to_spirv(&source, "CL3.0") {
            Ok(spirv) => spirv,
            Err(e) => {
                eprintln!("cannot make SPIR-V: {e}");
                return ExitCode::from(4);
            }
        };
        let program = program_from_il(&env.context, &spirv).unwrap_or_else(|e| panic!("{e}"));
        build_program(program, &[device.id], "")
    } else {
        env.try_build(&source, "")
    };
    let program = match built {
        Ok(p) => p,
        Err(e) => {
            eprintln!("build failed: {e}");
            return ExitCode::from(4);
        }
    };
    let kernel = create_kernel(&program, "k").unwrap_or_else(|e| panic!("{e}"));
    let ret = env.buffer_from(CL_MEM_READ_WRITE, &vec![12345i32; global.max(1)]);
    kernel.set_mem(0, &ret);
    let local_size = [local];
    let event = env.enqueue(&kernel, &[global], (local != 0).then_some(&local_size[..]));
    event.wait();
    let status = event.status();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(b"<<complete>>\n");
    let _ = out.flush();
    let values: Vec<i32> = env.read(&ret, global.max(1));
    let text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    eprintln!("status: {status}");
    eprintln!("ret: {}", text.join(" "));
    ExitCode::SUCCESS
}
