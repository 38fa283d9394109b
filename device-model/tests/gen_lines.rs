//! The Gen device builds programs with source lines (for its per-line report); the CPU
//! device does not (line tables add forwarding blocks to loops: compiler/tests/source_lines.rs).

use softcl_compiler::compile_source;
use softcl_compiler::ir::Module;
use softcl_device_model::{CpuDevice, Device, GenDevice};

const SOURCE: &str = "__kernel void k(__global float *a) {\n    a[get_global_id(0)] *= 2.0f;\n}\n";

fn located_instructions(module: &Module) -> usize {
    module
        .functions
        .iter()
        .map(|(_, f)| {
            f.layout.blocks.iter().flat_map(|&b| &f.layout.insts[b]).filter(|&&i| f.inst_locs[i].is_some()).count()
        })
        .sum()
}

#[test]
fn the_gen_device_builds_with_source_lines_and_the_cpu_device_without() {
    let gen = GenDevice::default();
    let program = compile_source(SOURCE, "", gen.target()).unwrap_or_else(|e| panic!("{}", e.log));
    assert_eq!(program.module.source_files, vec!["<source>".to_string()]);
    assert_eq!(program.module.source_texts[0].as_deref(), Some(SOURCE));
    assert!(located_instructions(&program.module) > 0);

    let cpu = CpuDevice::new();
    let program = compile_source(SOURCE, "", cpu.target()).unwrap_or_else(|e| panic!("{}", e.log));
    assert!(program.module.source_files.is_empty());
    assert_eq!(located_instructions(&program.module), 0);
}
