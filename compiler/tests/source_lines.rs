//! Source lines from clang (`-gline-tables-only`, `Target::line_tables`: the Gen device)
//! through SPIR-V OpLine into `ir::Function::inst_locs` and `ir::Module::source_files`,
//! kept through inlining and the IR's editing API; line tables change nothing but
//! forwarding blocks.

use softcl_compiler::front::opencl_c::compile_to_spirv;
use softcl_compiler::front::BuildOptions;
use softcl_compiler::gen_abi::SourceLoc;
use softcl_compiler::ir::{Func, Function, Inst, InstData, Module, Scope};
use softcl_compiler::{compile_source, load_spirv, Program, Target};

/// The Gen device's target: with line tables.
fn lines_target() -> Target {
    Target { line_tables: true, ..Target::default() }
}

fn build(source: &str, options: &str) -> Program {
    compile_source(source, options, &lines_target()).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log))
}

/// The program as built without line tables.
fn build_without_lines(source: &str, options: &str) -> Program {
    let target = Target::default();
    let parsed = BuildOptions::parse(options).unwrap();
    assert!(!target.line_tables, "line tables are off by default");
    let bytes = compile_to_spirv(source, &parsed, &target).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log)).bytes;
    load_spirv(&bytes).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log))
}

fn placed(f: &Function) -> Vec<Inst> {
    f.layout.blocks.iter().flat_map(|&b| f.layout.insts[b].iter().copied()).collect()
}

/// The function doing the work of kernel `name`: the one its entry stub calls (or the
/// entry itself when it calls nothing).
fn kernel_body(module: &Module, name: &str) -> Func {
    let entry = module.kernel(name).unwrap_or_else(|| panic!("no kernel {name}")).func;
    let f = &module.functions[entry];
    let calls: Vec<Func> = placed(f)
        .into_iter()
        .filter_map(|i| match f.insts[i] {
            InstData::Call { func, .. } => Some(func),
            _ => None,
        })
        .collect();
    match calls.as_slice() {
        [callee] => *callee,
        _ => entry,
    }
}

/// (file name, line) of every load and store of `f`, in layout order.
fn memory_lines(module: &Module, f: &Function) -> Vec<(&'static str, Option<(String, u32)>)> {
    placed(f)
        .into_iter()
        .filter_map(|i| {
            let kind = match f.insts[i] {
                InstData::Load { .. } => "load",
                InstData::Store { .. } => "store",
                _ => return None,
            };
            let loc = f.inst_locs[i].map(|l| (module.source_files[l.file as usize].clone(), l.line));
            Some((kind, loc))
        })
        .collect()
}

/// The 1-based line of the first line of `source` containing `marker`.
fn line_of(source: &str, marker: &str) -> u32 {
    source.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("no line with {marker}")) as u32 + 1
}

const WITH_HELPER: &str = "\
__attribute__((noinline)) void exchange(__global float *data, __local float *tile) {
    size_t l = get_local_id(0);
    tile[l] = data[get_global_id(0)];            // helper load+store
    barrier(CLK_LOCAL_MEM_FENCE);
    data[get_global_id(0)] = tile[(l + 1) % get_local_size(0)];   // helper swap
}

__kernel void k(__global float *data, __global const float *in, __local float *tile) {
    size_t i = get_global_id(0);
    float x = in[i];                              // kernel load
    exchange(data, tile);
    data[i] += x;                                 // kernel update
}
";

#[test]
fn loads_and_stores_keep_their_lines_through_inlining() {
    let mut program = build(WITH_HELPER, "");
    let module = &mut program.module;
    assert_eq!(module.source_files.first().map(String::as_str), Some("<source>"), "{:?}", module.source_files);
    assert_eq!(module.source_texts.first().and_then(|t| t.as_deref()), Some(WITH_HELPER));
    softcl_compiler::passes::inline::inline_barrier_calls(module).unwrap();
    softcl_compiler::ir::validate::validate(module).unwrap_or_else(|e| panic!("{e:?}"));

    let body = &module.functions[kernel_body(module, "k")];
    assert!(placed(body).iter().all(|&i| !matches!(body.insts[i], InstData::Call { .. })), "the helper is inlined");
    let src = |marker: &str| Some(("<source>".to_string(), line_of(WITH_HELPER, marker)));
    let got = memory_lines(module, body);
    let expected = [
        ("load", src("kernel load")),
        ("load", src("helper load+store")),
        ("store", src("helper load+store")),
        ("load", src("helper swap")),
        ("store", src("helper swap")),
        ("load", src("kernel update")),
        ("store", src("kernel update")),
    ];
    for want in &expected {
        assert!(got.contains(want), "{want:?} missing from {got:?}");
    }
    assert!(got.iter().all(|(_, loc)| loc.is_some()), "every access has a line: {got:?}");
    // No call is left, and the barrier sits on its own line.
    let barrier_line = line_of(WITH_HELPER, "barrier(");
    let barriers: Vec<Option<SourceLoc>> = placed(body)
        .into_iter()
        .filter(|&i| matches!(body.insts[i], InstData::Barrier { .. }))
        .map(|i| body.inst_locs[i])
        .collect();
    assert_eq!(barriers.len(), 1);
    assert_eq!(barriers[0].map(|l| l.line), Some(barrier_line));
    assert!(barriers[0].is_some_and(|l| l.column > 0));
}

#[test]
fn header_lines_name_the_header() {
    let dir = std::env::temp_dir().join(format!("softcl-source-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let header = "// a header\nfloat scaled(__global const float *p, size_t i) {\n    return p[i * 3] * 2.0f;\n}\n";
    std::fs::write(dir.join("scale.h"), header).unwrap();
    let source = "#include \"scale.h\"\n__kernel void k(__global const float *in, __global float *out) {\n    size_t i = get_global_id(0);\n    out[i] = scaled(in, i);\n}\n";
    let program = build(source, &format!("-I {}", dir.display()));
    std::fs::remove_dir_all(&dir).ok();
    let module = &program.module;
    let header_path = dir.join("scale.h").display().to_string();
    assert_eq!(module.source_files, vec!["<source>".to_string(), header_path.clone()]);
    assert_eq!(module.source_texts.len(), 2);
    assert_eq!(module.source_texts[0].as_deref(), Some(source));
    assert_eq!(module.source_texts[1].as_deref(), Some(header), "the header's text is read when built");
    let mut gen = softcl_compiler::gen_abi::GenKernelInfo::default();
    gen.set_sources(module);
    assert_eq!((&gen.source_files, &gen.source_texts), (&module.source_files, &module.source_texts));
    // clang inlines `scaled`: its load keeps the header's line, the store the kernel's.
    let got = memory_lines(module, &module.functions[kernel_body(module, "k")]);
    assert!(got.contains(&("load", Some((header_path, 3)))), "{got:?}");
    assert!(got.contains(&("store", Some(("<source>".to_string(), 4)))), "{got:?}");
}

#[test]
fn a_program_without_line_tables_has_no_locations() {
    let program = build_without_lines(WITH_HELPER, "");
    let module = &program.module;
    assert!(module.source_files.is_empty(), "{:?}", module.source_files);
    for (_, f) in module.functions.iter() {
        assert!(placed(f).iter().all(|&i| f.inst_locs[i].is_none()), "{} has locations", f.name);
    }
}

/// Kernels that exercise the translator's paths: loops, barriers, local memory, vectors,
/// structs, printf, atomics, switch, and the unoptimised (-cl-opt-disable) module.
const CORPUS: &[(&str, &str)] = &[
    (WITH_HELPER, ""),
    (WITH_HELPER, "-cl-opt-disable"),
    (
        "typedef struct { float4 p; int n; } P;
         __kernel void s(__global P *ps, __global float *o, volatile __global int *c) {
             size_t i = get_global_id(0);
             P q = ps[i];
             float acc = 0;
             for (int j = 0; j < q.n; ++j) { acc += dot(q.p, (float4)(j)); if (acc > 10) break; }
             switch (q.n & 7) { case 1: acc *= 2; break; case 3: acc -= 1; break; default: acc = sqrt(acc); }
             if (i == 0) printf(\"%f\\n\", acc);
             atomic_add(c, (int)acc);
             o[i] = acc;
         }",
        "-cl-std=CL1.2",
    ),
    (
        "__kernel void r(__global const float *in, __global float *out, __local float *s) {
             size_t l = get_local_id(0);
             s[l] = in[get_global_id(0)];
             barrier(CLK_LOCAL_MEM_FENCE);
             for (size_t off = get_local_size(0) / 2; off > 0; off /= 2) {
                 if (l < off) s[l] += s[l + off];
                 barrier(CLK_LOCAL_MEM_FENCE);
             }
             if (l == 0) out[get_group_id(0)] = s[0];
         }",
        "-cl-std=CL3.0 -cl-fast-relaxed-math",
    ),
];

/// The text of a function with block names, block labels and unconditional jumps left out:
/// what remains when blocks that only forward to another are merged away.
fn without_forwarding(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("block") && !l.trim_start().starts_with("jump "))
        .map(|l| {
            l.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.starts_with("block"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn line_tables_change_no_generated_code() {
    for (source, options) in CORPUS {
        let with = build(source, options);
        let without = build_without_lines(source, options);
        let with_lines = with.module.functions.iter().any(|(_, f)| placed(f).iter().any(|&i| f.inst_locs[i].is_some()));
        assert!(with_lines, "no line information for options {options:?}");
        let names = |p: &Program| p.kernels().map(|k| k.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&with), names(&without));
        for kernel in &with.module.kernels {
            let other = without.module.kernel(&kernel.info.name).unwrap();
            let mut info = kernel.info.clone();
            // Argument info is the same; CL_KERNEL_ATTRIBUTES are dropped for IL.
            info.attributes.clear();
            assert_eq!(&info, &other.info);
        }
        assert_eq!(with.module.functions.len(), without.module.functions.len());
        // llvm-spirv-15 gives a loop that has debug locations (clang's !llvm.loop) a preheader
        // and dedicated exit blocks that only jump on: the instructions are the same, the
        // CFG has forwarding blocks more (why the CPU device builds without line tables).
        let mut forwarding_only = false;
        for ((f, a), (_, b)) in with.module.functions.iter().zip(without.module.functions.iter()) {
            let (x, y) = (with.module.display_function(f).to_string(), without.module.display_function(f).to_string());
            assert_eq!(without_forwarding(&x), without_forwarding(&y), "function {} ({options:?})", a.name);
            forwarding_only |= x != y;
            assert_eq!(a.name, b.name);
        }
        if source.contains("for (") {
            assert!(forwarding_only, "loops get forwarding blocks ({options:?}): update the Target::line_tables note");
        }
        assert_eq!(with.module.constants.len(), without.module.constants.len(), "{options:?}");
        assert_eq!(with.module.globals.len(), without.module.globals.len(), "{options:?}");
    }
}

#[test]
fn editing_keeps_locations() {
    let mut program = build(WITH_HELPER, "");
    let module = &mut program.module;
    let body = kernel_body(module, "k");
    let f = &mut module.functions[body];
    let store = placed(f).into_iter().rev().find(|&i| matches!(f.insts[i], InstData::Store { .. })).unwrap();
    let loc = f.inst_locs[store];
    assert!(loc.is_some());
    let (before, _) = f.insert_inst_before(store, InstData::Fence { scope: Scope::WorkGroup, semantics: 0 }, None);
    let (after, _) = f.insert_inst_after(store, InstData::Fence { scope: Scope::WorkGroup, semantics: 0 }, None);
    assert_eq!((f.inst_locs[before], f.inst_locs[after]), (loc, loc));
    let new_block = f.split_block(store).unwrap();
    let (split_from, _) = f.layout.position(before).unwrap();
    let jump = f.terminator(split_from).unwrap();
    assert_eq!(f.inst_locs[jump], loc, "the jump of a split block takes the split point's location");
    assert_eq!(f.layout.position(store).map(|p| p.0), Some(new_block));
    let edge_block = f.split_edge(jump, 0).unwrap();
    let edge_jump = f.terminator(edge_block).unwrap();
    assert_eq!(f.inst_locs[edge_jump], loc);
}

/// Assembles SPIR-V text with spirv-as (package spirv-tools).
fn assemble(text: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("softcl-source-lines-asm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("in.spvasm"), dir.join("out.spv"));
    std::fs::write(&input, text).unwrap();
    let status = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0", "-o"])
        .arg(&output)
        .arg(&input)
        .status()
        .expect("spirv-as runs");
    assert!(status.success(), "spirv-as failed");
    let bytes = std::fs::read(&output).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    bytes
}

#[test]
fn opline_reaches_its_block_end_or_opnoline() {
    // The header's line comes first, yet the program's source gets index 0; OpNoLine and the
    // end of a block end a line's scope; an OpLine naming no OpString gives no location.
    let module = assemble(
        "OpCapability Addresses
         OpCapability Kernel
         OpCapability Int64
         OpMemoryModel Physical64 OpenCL
         OpEntryPoint Kernel %k \"k\"
         %src = OpString \"/home/me/<stdin>\"
         %hdr = OpString \"/usr/include/./my.h\"
         %void = OpTypeVoid
         %uint = OpTypeInt 32 0
         %ptr = OpTypePointer CrossWorkgroup %uint
         %fnty = OpTypeFunction %void %ptr
         %one = OpConstant %uint 1
         %k = OpFunction %void None %fnty
         %p = OpFunctionParameter %ptr
         %entry = OpLabel
         OpLine %hdr 7 2
         %x = OpLoad %uint %p
         OpLine %src 10 3
         %y = OpIAdd %uint %x %one
         OpBranch %next
         %next = OpLabel
         %z = OpIAdd %uint %y %one
         OpLine %src 12 1
         OpLine %uint 1 1
         OpStore %p %z
         OpLine %src 13 4
         OpNoLine
         OpReturn
         OpFunctionEnd
",
    );
    let program = load_spirv(&module).unwrap_or_else(|e| panic!("{:?}: {}", e.kind, e.log));
    let module = &program.module;
    assert_eq!(module.source_files, vec!["<source>".to_string(), "/usr/include/my.h".to_string()]);
    assert!(module.source_texts.is_empty(), "IL carries no source text");
    let f = &module.functions[module.kernel("k").unwrap().func];
    type Located = (String, Option<(u32, u32, u32)>);
    let locs: Vec<Located> = placed(f)
        .into_iter()
        .map(|i| {
            let name = match f.insts[i] {
                InstData::Load { .. } => "load",
                InstData::Binary { .. } => "add",
                InstData::Jump { .. } => "jump",
                InstData::Store { .. } => "store",
                InstData::Return { .. } => "return",
                _ => "other",
            };
            (name.to_string(), f.inst_locs[i].map(|l| (l.file, l.line, l.column)))
        })
        .collect();
    let expected = [
        ("load", Some((1, 7, 2))),
        ("add", Some((0, 10, 3))),
        ("jump", Some((0, 10, 3))),
        ("add", None),
        ("store", None),
        ("return", None),
    ]
    .map(|(n, l)| (n.to_string(), l));
    assert_eq!(locs, expected);
}

#[test]
fn the_applications_g_option_still_builds_with_lines() {
    let with_g = build(WITH_HELPER, "-g");
    let plain = build(WITH_HELPER, "");
    assert_eq!(with_g.module.source_files, plain.module.source_files);
    let body = |p: &Program| p.module.display_function(kernel_body(&p.module, "k")).to_string();
    assert_eq!(body(&with_g), body(&plain));
}

const LINKED_MAIN: &str = "\
float scale(float x);

__kernel void k(__global float *data) {
    size_t i = get_global_id(0);
    data[i] = scale(data[i]);                     // main update
}
";

const LINKED_LIB: &str = "\
// a second file, with its own line numbers
__constant float factors[4] = {1.0f, 2.0f, 3.0f, 4.0f};

float scale(float x) {
    return x * factors[(int)x & 3];               // library load
}
";

/// A program linked from two compiled sources: each keeps its own lines and text, the
/// second named `<source 2>`. spirv-link leaves the second input's line tables naming that
/// input's strings, which it does not keep: its lines had no location (or, had an id
/// matched, a wrong one).
#[test]
fn linked_sources_keep_their_own_lines_and_texts() {
    let t = lines_target();
    let main =
        softcl_compiler::compile_object(LINKED_MAIN, &Default::default(), &t).unwrap_or_else(|e| panic!("{}", e.log));
    let lib =
        softcl_compiler::compile_object(LINKED_LIB, &Default::default(), &t).unwrap_or_else(|e| panic!("{}", e.log));
    for (inputs, names) in [([&main, &lib], ["<source>", "<source 2>"]), ([&lib, &main], ["<source 2>", "<source>"])] {
        let linked = softcl_compiler::link(&inputs, false).unwrap_or_else(|e| panic!("{}", e.log));
        let m = &linked.module;
        assert_eq!(m.source_files, vec!["<source>".to_string(), "<source 2>".to_string()]);
        let text = |name: &str| m.source_texts[m.source_files.iter().position(|f| f == name).unwrap()].clone();
        assert_eq!(text(names[0]).as_deref(), Some(LINKED_MAIN));
        assert_eq!(text(names[1]).as_deref(), Some(LINKED_LIB));
        let mut seen = Vec::new();
        for (_, f) in m.functions.iter() {
            seen.extend(memory_lines(m, f).into_iter().filter_map(|(kind, loc)| Some((kind, loc?))));
        }
        let main_line = line_of(LINKED_MAIN, "main update");
        let lib_line = line_of(LINKED_LIB, "library load");
        assert!(seen.contains(&("store", (names[0].to_string(), main_line))), "{names:?}: {seen:?}");
        assert!(seen.contains(&("load", (names[1].to_string(), lib_line))), "{names:?}: {seen:?}");
    }
}
