//! Back end: SoftCL IR -> LLVM 22 (inkwell) -> native code (JIT).
//!
//! 1. The middle end's IR passes (`prepare`, through `passes::run_pipeline`, which validates
//!    the module after each): `vloadn` / `vstoren` as loads and stores, calls that reach a
//!    barrier inlined, for vector code every call inlined and short-circuit chains folded,
//!    kernels split into barrier regions with what lives across barriers in work-item
//!    state variables (`passes::barriers`), then `passes::align` gives every load, store
//!    and copy the alignment its address is guaranteed, which the lowering uses as it is;
//!    for a Gen-instrumented variant, `passes::gen_instrument` last (the counting as
//!    `gen.block` / `gen.count`, lowered by `gen::hooks`).
//! 2. Each kernel's SIMD width is decided (`decide`); the divergent control flow of the
//!    kernels vectorized on the CPU device is linearized into masked blocks on a copy of the
//!    module (`passes::linearize`, validated), which the rest lowers.
//! 3. `llvm`, the lowering core, translates each function reachable from a kernel
//!    (`llvm::FnLower`); the two modes are parts that use it through its hooks
//!    (`llvm::LowerHook`, asked before the core for every instruction): `vector` (a
//!    function that runs W work-items per call: packet loads and stores, lane-by-lane
//!    operations, masked blocks) and `gen` (the Gen counting of an instrumented variant,
//!    which uses `vector`'s packet forms). `workgroup` lays out each kernel's work-item
//!    state, lowers its resume points and builds its work-group entry with the
//!    [`crate::abi`] signature; `builtins`, `mathlib`, `vecmath`, `imagelib` and `printf`
//!    are the libraries the core calls for OpenCL.std, images and printf.
//! 4. The module is verified, optimised with LLVM's O2 pipeline for the host CPU
//!    (`target`; O1 for the Gen device's scalar fallback build), emitted as an object file
//!    in memory and linked by ORC LLJIT (`jit`).
//!
//! `SOFTCL_DUMP_LLVM=1` prints the LLVM IR before and after optimisation to stderr.

pub mod builtins;
pub mod gen;
pub mod host;
pub mod imagelib;
pub mod jit;
pub mod llvm;
pub mod llvm_workarounds;
pub mod mathlib;
pub mod printf;
pub mod target;
pub mod vecmath;
pub mod vecmath_inline;
pub mod vector;
pub mod workgroup;

use crate::ir::{self, FuncKind, InstData};
use crate::kernel_info::{ArgKind, KernelInfo};
use crate::{vectorize, BuildError, BuildErrorKind, NativeImage, NativeKernel, NativeProgram, Target, WorkGroupEntry};
use inkwell::context::Context;
use inkwell::module::Linkage;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{FileType, TargetMachine};
use llvm::{Emitter, Error, FnLower, Mode};
use std::sync::Arc;
use workgroup::StatePlan;

fn fail(log: impl Into<String>) -> BuildError {
    BuildError { kind: BuildErrorKind::CompileFailed, log: log.into() }
}

fn dump_enabled() -> bool {
    std::env::var("SOFTCL_DUMP_LLVM").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Refuses a module that uses an optional feature the target device does not offer, for
/// programs the front end could not check against the device (IL, and built-ins clang declares
/// whatever -cl-ext says): doubles without fp64, sub-group functions and queries on a device
/// without sub-groups.
fn check_device_features(module: &ir::Module, target: &Target) -> Result<(), BuildError> {
    let disabled = |f: &str| target.disabled_features.iter().any(|d| d.trim_start_matches(['+', '-']) == f);
    if disabled("__opencl_c_fp64") && disabled("cl_khr_fp64") {
        if let Some(place) = builtins::fp64_use(module) {
            return Err(fail(format!(
                "{place} computes with doubles, but the device does not support fp64 (cl_khr_fp64, __opencl_c_fp64)"
            )));
        }
    }
    if !(disabled("__opencl_c_subgroups") && disabled("cl_khr_subgroups")) {
        return Ok(());
    }
    for (_, func) in module.functions.iter() {
        for (_, inst) in func.insts.iter() {
            let sub_group = match inst {
                ir::InstData::WorkItem { query } => query.is_sub_group(),
                ir::InstData::Group { scope, .. } => *scope == ir::Scope::SubGroup,
                _ => false,
            };
            if sub_group {
                return Err(fail(format!(
                    "function `{}` uses sub-group functions (get_sub_group_size, sub_group_reduce_add, ...), \
                     but the device does not support sub-groups",
                    func.name
                )));
            }
        }
    }
    Ok(())
}

/// The module as the back end lowers it: features checked, then the middle end's passes
/// (`passes::run_pipeline`, the module validated after each): work-group collectives made
/// `__local` memory and barriers (`passes::collectives`, sized by the device's largest
/// work-group); `vloadn` / `vstoren` made
/// loads and stores, `mul24` / `mad24` made multiply and add, calls that reach a barrier
/// inlined and, for vector code, every call in
/// a kernel inlined and its short-circuit chains folded; kernels with barriers split into
/// barrier regions (`passes::barriers`); last, every memory access given the alignment its
/// address is guaranteed (`passes::align`, once inlining exposed the addresses).
fn prepare(module: &ir::Module, target: &Target) -> Result<ir::Module, BuildError> {
    use crate::passes::{self, Pass};
    check_device_features(module, target)?;
    let mut m = module.clone();
    // First: what it makes (barriers, a loop) goes through every pass after it.
    passes::run_pass(&mut m, "collectives", |m| {
        passes::collectives::expand_module(m, target.max_work_group_size).map(|_| ())
    })
    .map_err(fail)?;
    let mut pipeline = vec![
        Pass {
            name: "vload_store",
            run: |m| {
                passes::vload_store::rewrite_module(m);
                Ok(())
            },
        },
        Pass {
            name: "mul24",
            run: |m| {
                passes::mul24::rewrite_module(m);
                Ok(())
            },
        },
        Pass { name: "inline_barrier_calls", run: passes::inline::inline_barrier_calls },
    ];
    if target.vectorizer != crate::Vectorizer::Off {
        pipeline.push(Pass { name: "inline_kernel_calls", run: |m| vectorize::inline_kernel_calls(m, 256) });
        pipeline.push(Pass {
            name: "short_circuit",
            run: |m| {
                passes::short_circuit::fold_kernels(m);
                Ok(())
            },
        });
        pipeline.push(Pass { name: "reducible", run: passes::reducible::run_module });
    }
    pipeline.push(Pass {
        name: "generic_spaces",
        run: |m| {
            passes::generic_spaces::fold_module(m);
            Ok(())
        },
    });
    pipeline.push(Pass { name: "barriers", run: passes::barriers::run_module });
    pipeline.push(Pass {
        name: "align",
        run: |m| {
            passes::align::run_module(m);
            Ok(())
        },
    });
    // A Gen-instrumented variant (never the program's own build): the counting made explicit,
    // last, on the module as the lowering sees it.
    if let Some(g) = target.gen.filter(|g| g.simd > 1) {
        // `Pass::run` is a plain function: one per lane layout and width.
        let run: fn(&mut ir::Module) -> Result<(), String> = match (g.linear_lanes, g.simd) {
            (true, 8) => |m| passes::gen_instrument::run(m, true, 8),
            (true, 16) => |m| passes::gen_instrument::run(m, true, 16),
            (true, _) => |m| passes::gen_instrument::run(m, true, 32),
            (false, 8) => |m| passes::gen_instrument::run(m, false, 8),
            (false, 16) => |m| passes::gen_instrument::run(m, false, 16),
            (false, _) => |m| passes::gen_instrument::run(m, false, 32),
        };
        pipeline.push(Pass { name: "gen_instrument", run });
    }
    passes::run_pipeline(&mut m, &pipeline).map_err(fail)?;
    Ok(m)
}

pub fn codegen(module: &ir::Module, target: &Target) -> Result<Arc<NativeProgram>, BuildError> {
    codegen_at(module, target, Speed::Default).map(|(p, _)| p)
}

/// What a build's code generation aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speed {
    /// The level [`codegen_level`] picks for the target and module.
    Default,
    /// A light optimisation ([`QUICK_PIPELINE`]) and LLVM's fast instruction selection and
    /// register allocation where the frames stay small ([`QUICK_FRAME_BYTES`]; otherwise
    /// the default level): a third to a half of the compile time of a Gen variant, code 1-4x
    /// slower (`gen::GenSource`'s first tier).
    QuickToCompile,
}

/// [`codegen`] at `speed`; the flag says whether the code is what [`Speed::Default`] makes
/// (it is also when the default level is the fast one).
pub(crate) fn codegen_at(
    module: &ir::Module,
    target: &Target,
    speed: Speed,
) -> Result<(Arc<NativeProgram>, bool), BuildError> {
    let t0 = std::time::Instant::now();
    let m = prepare(module, target)?;

    let host = target::HostTarget::resolve(target);
    let level = codegen_level(target, &m);
    let tm = host.machine_at(level).map_err(fail)?;
    let quick = match speed {
        Speed::QuickToCompile if level != inkwell::OptimizationLevel::None => {
            Some(host.machine_at(inkwell::OptimizationLevel::None).map_err(fail)?)
        }
        _ => None,
    };
    // The build-log line for math on vectors running per lane (libsleef missing).
    let math_note = builtins::vector_math_note(&m, vecmath::vector_bits(&host.features), target.knobs.vector_math)
        .map(|n| n + "\n");
    let t1 = std::time::Instant::now();
    let (object, infos, times, log, host_symbols, quickly) = {
        let context = Context::create();
        emit(&context, &m, &tm, target, None, quick.as_ref())?
    };

    let t2 = std::time::Instant::now();
    let image =
        NativeImage { object, host_symbols, kernels: infos, log: format!("{}{log}", math_note.unwrap_or_default()) };
    let native = load(image, module, target)?;
    if std::env::var("SOFTCL_CODEGEN_TIMES").is_ok_and(|v| v == "1") {
        eprintln!(
            "softcl codegen: passes+target {:?}, IR->LLVM {:?}, optimisation {:?}, object {:?}, JIT link {:?}, total {:?}",
            t1 - t0,
            times[0],
            times[1],
            times[2],
            t2.elapsed(),
            t0.elapsed()
        );
    }
    Ok((native, !quickly))
}

/// Registers LLVM's native target, which code generation and the JIT need, now rather than
/// in the first build that needs it (see `softcl_runtime::program_cache::warm_up`).
pub fn warm_up() -> Result<(), String> {
    target::init_native()
}

/// Native code from an image `codegen` made (here or in another process: a cache entry, a
/// program binary) for `target`: the object linked by the JIT with this process's host
/// functions. `module` is the program's IR (the Gen device's lazy SIMD-width variants are
/// compiled from it).
pub fn load(image: NativeImage, module: &ir::Module, target: &Target) -> Result<Arc<NativeProgram>, BuildError> {
    // The JIT needs the host's LLVM target (registered by the first code generation otherwise).
    target::init_native().map_err(fail)?;
    let mut symbols: Vec<String> = (0..image.kernels.len()).map(entry_symbol).collect();
    let has_globals = !crate::program_globals::layout(module).vars.is_empty();
    if has_globals {
        symbols.push(crate::program_globals::STORAGE_SYMBOL.to_string());
    }
    let host = host::resolve(&image.host_symbols).map_err(fail)?;
    let (jit, mut addrs) = jit::Jit::load(&image.object, &symbols, &host).map_err(fail)?;
    let program_globals = if has_globals { addrs.pop().unwrap_or(0) } else { 0 };
    let labels: Vec<String> = image.kernels.iter().map(|k| k.name.clone()).collect();
    jit::perf_map(&image.object, &symbols[..addrs.len()], &addrs, &labels);
    let mut kernels = Vec::with_capacity(image.kernels.len());
    let gen_source = gen::GenSource::for_target(module, target);
    for (info, addr) in image.kernels.iter().cloned().zip(addrs) {
        // SAFETY: `addr` is the address of the entry function generated by `workgroup::
        // build_entry` with exactly the `WorkGroupEntry` signature (C calling convention,
        // (ptr, ptr, i32, i32, i32) -> i32), linked by `jit`, which the NativeProgram keeps
        // alive for as long as the kernel can be called. An image from elsewhere was checked
        // by its reader (format version, driver version, device target) to be such code.
        let entry = unsafe { std::mem::transmute::<usize, WorkGroupEntry>(addr) };
        kernels.push(NativeKernel { info, entry, gen_source: gen_source.clone(), program_globals });
    }
    Ok(Arc::new(NativeProgram { kernels, log: image.log.clone(), image: Some(image), _code: Box::new(jit) }))
}

/// Whether this is the Gen device's program build: scalar kernels that only run when a
/// kernel's instrumented SIMD variant cannot be built (`GenThreads`), and that give the
/// kernel's facts before its first launch. Every launch of the others runs the variant, so
/// this build is compiled for speed of compiling: the CTS builds thousands of programs, and
/// compiling each twice at O2 (this build, then the variant at its first launch) made the
/// Gen device's suites 2-4x slower than the CPU device's.
fn gen_fallback_build(target: &Target) -> bool {
    target.gen.is_some_and(|g| g.simd == 0)
}

/// LLVM's optimisation pipeline for a build of `target`.
fn pipeline(target: &Target) -> &'static str {
    if gen_fallback_build(target) {
        "default<O1>"
    } else {
        "default<O2>"
    }
}

/// LLVM's optimisation of a module compiled at the fast level ([`Speed::QuickToCompile`]):
/// the generated code's locals in registers, its redundancies and constants folded, loop
/// invariants hoisted; none of the default pipeline's inlining, unrolling, vectorizing or
/// repeated rounds. On the tiled product's SIMD32 Gen variant (AVX2 host) 25-45 ms in the
/// driver where `default<O2>` took 150-220 ms, and the fast level's code from it is no larger.
///
/// InstCombine without its fixpoint check: named in a pipeline string, LLVM checks that one
/// run left nothing to combine and aborts the process when it did (a fuzz kernel's Gen
/// variant); the default pipelines run it unchecked.
const QUICK_PIPELINE: &str =
    "always-inline,function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm))";

/// The code-generation level for a build of `target` of the prepared module `m`: a Gen
/// variant with a kernel of more than `gen_instrument::FAST_CODEGEN_SITES` messages gets
/// LLVM's fast instruction selection (its code generation grows quadratically with a
/// block's messages).
fn codegen_level(target: &Target, m: &ir::Module) -> inkwell::OptimizationLevel {
    let sites = m.kernels.iter().filter_map(|k| k.info.gen.as_ref()).map(|g| g.sites.len()).max().unwrap_or(0);
    if gen_fallback_build(target) {
        inkwell::OptimizationLevel::Less
    } else if sites > crate::passes::gen_instrument::FAST_CODEGEN_SITES {
        inkwell::OptimizationLevel::None
    } else {
        inkwell::OptimizationLevel::Default
    }
}

/// The optimised LLVM IR `codegen` would compile to native code (for tests and tools that
/// look at what the vectorizer and LLVM made of a kernel).
pub fn optimized_llvm_ir(module: &ir::Module, target: &Target) -> Result<String, BuildError> {
    let m = prepare(module, target)?;
    let tm = target::HostTarget::resolve(target).machine_at(codegen_level(target, &m)).map_err(fail)?;
    let context = Context::create();
    let mut text = String::new();
    emit(&context, &m, &tm, target, Some(&mut text), None)?;
    Ok(text)
}

fn entry_symbol(k: usize) -> String {
    format!("softcl_kernel_{k}")
}

/// Generates and optimises the LLVM module; returns the object file, the kernel infos, the
/// phases' times, the log, the host functions the object calls (`host`) and whether the
/// object was generated by the `quick` machine.
type Emitted = (Vec<u8>, Vec<KernelInfo>, [std::time::Duration; 3], String, Vec<String>, bool);

/// `ir_text`: instead of an object file, the optimised LLVM IR (the object is empty).
/// `quick`: a machine at LLVM's fast level that generates the object instead of `tm`, from
/// the module optimised by [`QUICK_PIPELINE`], when its frames stay small at that level
/// ([`QUICK_FRAME_BYTES`]; otherwise the rest of the optimisation and `tm`).
fn emit(
    context: &Context,
    m: &ir::Module,
    tm: &TargetMachine,
    target: &Target,
    ir_text: Option<&mut String>,
    quick: Option<&TargetMachine>,
) -> Result<Emitted, BuildError> {
    let t0 = std::time::Instant::now();
    let decisions = m.kernels.iter().map(|k| decide(m, k, target)).collect::<Result<Vec<_>, _>>()?;
    let lin = linearize_kernels(m, &decisions)?;
    let (m, linearized) = match &lin {
        Some((lm, changed)) => (lm, changed.clone()),
        None => (m, Default::default()),
    };
    let llm = context.create_module("softcl");
    llm.set_triple(&tm.get_triple());
    llm.set_data_layout(&tm.get_target_data().get_data_layout());
    let mut e = Emitter::new(context, llm, m, tm.get_target_data()).map_err(|e| fail(e.0))?;
    // The target's features as the build resolved them, which `tm` was made from (the
    // machine's own feature string is memory inkwell never gives back).
    let features = target::HostTarget::resolve(target).features;
    e.math_vector_bits = vecmath::vector_bits(&features);
    e.rsqrt14 = vecmath::has_rsqrt14(&features);
    e.masked = vector::MaskedSupport::of_machine(context, tm, &features);
    e.knobs = target.knobs;
    e.declare_globals().map_err(|e| fail(e.0))?;

    // Local memory layouts and the functions each kernel reaches.
    let mut bodies: Vec<(ir::Func, Option<usize>, usize)> = Vec::new();
    for (k, kernel) in m.kernels.iter().enumerate() {
        let kerr = |e: Error| fail(format!("kernel `{}`: {}", kernel.info.name, e.0));
        if !m.functions.is_valid(kernel.func) || m.functions[kernel.func].kind == FuncKind::Import {
            return Err(fail(format!("kernel `{}` has no body", kernel.info.name)));
        }
        e.layout_locals(k, kernel.func).map_err(kerr)?;
        for f in e.reachable_functions(kernel.func).into_iter().skip(1) {
            if m.functions[f].kind == FuncKind::Import {
                continue;
            }
            let key = e.instance_key(f, k);
            if !e.funcs.contains_key(&key) {
                e.declare_function(key).map_err(kerr)?;
                bodies.push((f, key.1, k));
            }
        }
    }
    for &(f, layout, k) in &bodies {
        let fv = e.funcs[&(f, layout)];
        let func = &m.functions[f];
        FnLower::new(&e, func, fv, k, Mode::Function)
            .and_then(|l| l.lower())
            .map_err(|err| fail(format!("kernel `{}`: {}", m.kernels[k].info.name, err.0)))?;
    }

    // Kernels: work-item function and work-group entry.
    let mut infos = Vec::with_capacity(m.kernels.len());
    let mut log = String::new();
    for (k, kernel) in m.kernels.iter().enumerate() {
        let kerr = |e: Error| fail(format!("kernel `{}`: {}", kernel.info.name, e.0));
        let func = &m.functions[kernel.func];
        let cfg = crate::analysis::Cfg::new(func);
        if cfg.entry().is_none() {
            return Err(fail(format!("kernel `{}` has no body", kernel.info.name)));
        }
        let plan = workgroup::plan_state(&e, func, &kernel.info).map_err(kerr)?;
        let d = &decisions[k];
        let mut lanes = d.lanes;
        let gen_build = target.gen.filter(|g| g.simd > 1);
        // A linearized kernel (`passes::linearize`) is analysed again as it is lowered.
        let wa_lin;
        let wa = if linearized.contains(&k) {
            wa_lin = vectorize::analysis::analyze_gen(m, func, gen_build);
            &wa_lin
        } else {
            &d.wa
        };
        // Divergence the analysis finds only in the linearized kernel (a value that was
        // uniform now comes through a select under a mask) has no vector form: the kernel
        // runs scalar, masked blocks and all (one work-item's masks are its own conditions).
        if lanes > 1 && !wa.divergent_branches.is_empty() {
            let why = "divergent control flow left after linearization";
            if let Some(g) = gen_build {
                return Err(fail(format!("kernel `{}` cannot run at SIMD{}: {why}", kernel.info.name, g.simd)));
            }
            let line = format!("vectorizer: kernel `{}`: scalar after all: {why}", kernel.info.name);
            if vectorize::report_enabled() {
                eprintln!("softcl {line}");
            }
            log.push_str(&format!("{line}\n"));
            lanes = 1;
        }
        let pressure = d.pressure;
        // The plan of `passes::gen_instrument`, whose instructions the hooks lower.
        let gen_plan = match gen_build {
            Some(_) => Some(kernel.info.gen.as_ref().ok_or_else(|| kerr(Error("no Gen instrumentation".into())))?),
            None => None,
        };
        if let Some(report) = &d.report {
            eprintln!("softcl {report}");
            log.push_str(&format!("{report}\n"));
        }

        let cx = e.cx;
        let ptr = cx.ptr_type(inkwell::AddressSpace::default());
        let i64t = cx.i64_type();
        let i32t = cx.i32_type();
        let mut wi_params =
            vec![ptr.into(), ptr.into(), i64t.into(), i64t.into(), i64t.into(), ptr.into(), i32t.into()];
        if lanes > 1 {
            // The active lanes lo..hi of the packet.
            wi_params.push(i32t.into());
            wi_params.push(i32t.into());
        }
        // `restrict` buffers: extra `noalias` parameters (the inliner turns them into alias
        // scopes), loaded from the argument block by the work-group entry.
        let restrict: Vec<(usize, u64)> = kernel
            .info
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| a.qualifiers.is_restrict && matches!(a.kind, ArgKind::Buffer { .. }))
            .map(|(i, a)| (i, a.offset as u64))
            .collect();
        let first_restrict = wi_params.len() as u32;
        wi_params.extend(restrict.iter().map(|_| inkwell::types::BasicMetadataTypeEnum::from(ptr)));
        // A Gen-instrumented build's counter array: the last parameter.
        let gen_counters = gen_plan.is_some();
        if gen_counters {
            wi_params.push(ptr.into());
        }
        let wi_ty = i32t.fn_type(&wi_params, false);
        // A kernel that stays scalar with stores that may stream gets a second work-item
        // function whose stores are non-temporal, and an entry that picks one per launch
        // from the ND-range's size (`vector::scalar_streaming_stores`).
        let stream_set = if lanes == 1 && target.vectorizer != crate::Vectorizer::Off {
            vector::scalar_streaming_stores(m, func, wa, &target.knobs)
        } else {
            Default::default()
        };
        let lower_wi = |suffix: &str, stream: std::collections::HashSet<ir::Inst>| -> Result<_, BuildError> {
            let name = format!("wi{}.{}{suffix}", k, llvm::sanitize(&kernel.info.name));
            let wi = e.m.add_function(&name, wi_ty, Some(Linkage::Internal));
            e.add_fn_attr(wi, "alwaysinline");
            e.add_fn_attr(wi, "nounwind");
            e.add_param_attr(wi, 0, "noalias");
            e.add_param_attr(wi, 1, "noalias");
            if plan.state_noalias {
                e.add_param_attr(wi, 5, "noalias");
            }
            for j in 0..restrict.len() as u32 {
                e.add_param_attr(wi, first_restrict + j, "noalias");
            }
            if gen_counters {
                e.add_param_attr(wi, first_restrict + restrict.len() as u32, "noalias");
            }
            FnLower::new(&e, func, wi, k, Mode::Kernel { info: &kernel.info, plan: &plan })
                .and_then(|mut l| {
                    l.restrict_params =
                        restrict.iter().enumerate().map(|(j, (i, _))| (*i, first_restrict + j as u32)).collect();
                    if lanes > 1 {
                        vector::enable(&mut l, lanes, wa)?;
                    }
                    if let Some(p) = gen_plan {
                        gen::enable(&mut l, p)?;
                    }
                    l.stream_stores = stream;
                    l.lower()
                })
                .map_err(kerr)?;
            Ok(wi)
        };
        let wi = lower_wi("", Default::default())?;
        let restrict_offsets: Vec<u64> = restrict.iter().map(|(_, off)| *off).collect();
        let args_size = kernel.info.arg_block_size as u64;
        let opts = workgroup::EntryOptions { restrict_offsets: &restrict_offsets, args_size, gen_counters };
        if gen_build.is_some_and(|g| g.linear_lanes) {
            gen::build_linear_entry(&e, &entry_symbol(k), wi, plan.size, lanes, &opts).map_err(kerr)?;
        } else if stream_set.is_empty() {
            workgroup::build_entry(&e, &entry_symbol(k), wi, plan.size, lanes, &opts).map_err(kerr)?;
        } else {
            let per_item: u64 = stream_set
                .iter()
                .filter_map(|&i| match &func.insts[i] {
                    InstData::Store { value, .. } => Some(m.types.size_of(func.value_type(*value))),
                    _ => None,
                })
                .sum();
            let need = target.knobs.streaming_stores.unwrap_or(u64::MAX).div_ceil(per_item.max(1));
            let wi_nt = lower_wi(".stream", stream_set)?;
            let sym = entry_symbol(k);
            let plain = workgroup::build_entry(&e, &format!("{sym}.plain"), wi, plan.size, 1, &opts).map_err(kerr)?;
            let nt = workgroup::build_entry(&e, &format!("{sym}.stream"), wi_nt, plan.size, 1, &opts).map_err(kerr)?;
            workgroup::build_size_switch(&e, &sym, need, nt, plain).map_err(kerr)?;
        }

        let mut info = kernel.info.clone();
        info.static_local_mem_size = e.layouts.get(k).map(|l| l.size).unwrap_or(0);
        info.barrier_count = plan.barriers;
        info.work_item_state_size = plan.size;
        info.private_mem_size = private_bytes(&e, kernel.func, &plan);
        info.simd_width = if lanes > 1 { lanes } else { 0 };
        info.register_pressure = Some(pressure);
        info.gen = gen_plan.map(|p| {
            let mut g = p.clone();
            g.simd = lanes;
            g.set_sources(m);
            g
        });
        info.uses_printf =
            e.reachable_functions(kernel.func).into_iter().any(|f| printf::calls_printf(&m.functions[f]));
        infos.push(info);
    }

    if dump_enabled() {
        eprintln!("; SoftCL LLVM IR before optimisation\n{}", e.m.print_to_string().to_string());
    }
    if let Err(msg) = e.m.verify() {
        return Err(fail(format!("internal error: LLVM rejected the generated code:\n{}", msg.to_string())));
    }
    let t1 = std::time::Instant::now();
    let optimise = |passes: &str| {
        e.m.run_passes(passes, tm, PassBuilderOptions::create())
            .map_err(|msg| fail(format!("LLVM optimisation failed: {msg}")))
    };
    optimise(if quick.is_some() { QUICK_PIPELINE } else { pipeline(target) })?;
    if dump_enabled() {
        eprintln!("; SoftCL LLVM IR after optimisation\n{}", e.m.print_to_string().to_string());
    }
    let t2 = std::time::Instant::now();
    if let Some(text) = ir_text {
        *text = e.m.print_to_string().to_string();
        return Ok((Vec::new(), infos, [t1 - t0, t2 - t1, t2.elapsed()], log, Vec::new(), false));
    }
    let quick = match quick {
        Some(q) if frame_bytes(&e.m, &tm.get_target_data()) <= QUICK_FRAME_BYTES => Some(q),
        Some(_) => {
            // The default level compiles it after all: the rest of its optimisation first.
            optimise(pipeline(target))?;
            None
        }
        None => None,
    };
    let machine = quick.unwrap_or(tm);
    if llvm_workarounds::affected(&features) {
        llvm_workarounds::legalize_narrow_vectors_at_256_bits(&e.m);
    }
    let buf = machine
        .write_to_memory_buffer(&e.m, FileType::Object)
        .map_err(|msg| fail(format!("LLVM code generation failed: {msg}")))?;
    let host_symbols = host::used_by(&e.m);
    Ok((buf.as_slice().to_vec(), infos, [t1 - t0, t2 - t1, t2.elapsed()], log, host_symbols, quick.is_some()))
}

/// The most [`frame_bytes`] a module compiled at LLVM's fast level may have. That level's
/// register allocator gives each value that lives across blocks its own stack slot, and it
/// lays out every `alloca` apart (the default level overlaps those whose lifetimes do not
/// meet), so a large vectorized function, or one with large private arrays, gets a large
/// frame; the frames of a kernel thread's generated code must fit in what
/// `limits::PACKET_PRIVATE_BYTES` leaves of its stack (1 MiB), and its private arrays in
/// that. Measured frames at that level were 0.3-1.2x the estimate (the tiled product at
/// SIMD32: 33 KB for 117 KB; a 6,500-line SIMD32 fuzz kernel: 424 KB for 353 KB, against
/// 7.5 KB at the default level), so the limit leaves the estimate a factor of 2.
const QUICK_FRAME_BYTES: u64 = 384 << 10;

/// The bytes of every value the instructions of `m` make and of every `alloca`: what the
/// fast register allocator's frames may hold at most, about.
fn frame_bytes(m: &inkwell::module::Module<'_>, td: &inkwell::targets::TargetData) -> u64 {
    let mut total: u64 = 0;
    for f in m.get_functions() {
        for b in f.get_basic_blocks() {
            let mut at = b.get_first_instruction();
            while let Some(i) = at {
                if i.get_opcode() == inkwell::values::InstructionOpcode::Alloca {
                    let count = i
                        .get_operand(0)
                        .and_then(|o| o.value())
                        .filter(|v| v.is_int_value())
                        .and_then(|v| v.into_int_value().get_zero_extended_constant())
                        .unwrap_or(1);
                    let elem = i.get_allocated_type().map_or(0, |t| td.get_abi_size(&t));
                    total = total.saturating_add(elem.saturating_mul(count));
                } else {
                    let ty = i.get_type();
                    if !ty.is_void_type() {
                        total = total.saturating_add(td.get_store_size(&ty));
                    }
                }
                at = i.get_next_instruction();
            }
        }
    }
    total
}

/// What the back end decides for a kernel before lowering it, from the kernel as the middle
/// end left it: its SIMD width, its work-item analysis, register pressure and report line.
struct Decision {
    lanes: u32,
    wa: vectorize::analysis::WorkItemAnalysis,
    pressure: crate::gen_abi::RegisterPressure,
    report: Option<vectorize::Report>,
}

fn decide(m: &ir::Module, kernel: &ir::Kernel, target: &Target) -> Result<Decision, BuildError> {
    if !m.functions.is_valid(kernel.func) || m.functions[kernel.func].kind == FuncKind::Import {
        return Err(fail(format!("kernel `{}` has no body", kernel.info.name)));
    }
    let func = &m.functions[kernel.func];
    let has_barriers = func
        .layout
        .blocks
        .iter()
        .any(|&b| func.terminator(b).is_some_and(|t| matches!(func.insts[t], ir::InstData::BarrierResume { .. })));
    let width = vectorize::width::choose(m, func, &kernel.info, &target.vectorizer)
        .map_err(|msg| fail(format!("kernel `{}`: {msg}", kernel.info.name)))?;
    let gen_build = target.gen.filter(|g| g.simd > 1);
    let wa = vectorize::analysis::analyze_gen(m, func, gen_build);
    let pressure = vectorize::pressure::kernel_pressure(m, func, &wa);
    let scalar_reason = if width.lanes <= 1 {
        (target.vectorizer != crate::Vectorizer::Off).then(|| width.why.clone())
    } else {
        vectorize::blocker(m, func, &wa, has_barriers)
            .or_else(|| {
                crate::passes::linearize::check(func, &wa)
                    .map(|why| format!("divergent control flow that cannot be linearized: {why}"))
            })
            .or_else(|| match target.vectorizer {
                crate::Vectorizer::Auto { register_bytes } => {
                    vectorize::width::register_bound(m, func, &pressure, register_bytes)
                }
                _ => None,
            })
            .or_else(|| {
                let checked = matches!(target.vectorizer, crate::Vectorizer::Auto { .. }) || gen_build.is_some();
                checked.then(|| vectorize::linearization_bound(func, &wa)).flatten()
            })
    };
    let mut width = width;
    if scalar_reason.is_none() && width.auto {
        if let Some(i) = vectorize::width::interleave(m, func, &wa) {
            width.lanes *= i.packets;
            width.why = format!("{}; {}", width.why, i.why);
        }
    }
    let lanes = if scalar_reason.is_none() { width.lanes.max(1) } else { 1 };
    if let Some(g) = gen_build {
        if lanes != g.simd {
            let why = scalar_reason.clone().unwrap_or_else(|| width.why.clone());
            return Err(fail(format!("kernel `{}` cannot run at SIMD{}: {why}", kernel.info.name, g.simd)));
        }
    }
    let report =
        (target.vectorizer != crate::Vectorizer::Off && vectorize::report_enabled()).then(|| vectorize::Report {
            kernel: kernel.info.name.clone(),
            width: lanes,
            why: width.why.clone(),
            counts: wa.counts(func),
            divergent_branches: wa.divergent_branches.len(),
            control_flow: vectorize::control_flow(func, &wa),
            per_lane: vectorize::per_lane_summary(m, func, &wa),
            barrier_uniform: wa.barrier_uniform.len(),
            scalar_reason,
        });
    Ok(Decision { lanes, wa, pressure, report })
}

/// The module with the divergent control flow of every kernel that runs at a width above 1
/// linearized with masks (`passes::linearize`, validated), and the kernels it changed;
/// `None` when it changed none. The Gen device's instrumented builds too: their counting
/// instructions count under the masks of their blocks.
fn linearize_kernels(
    m: &ir::Module,
    decisions: &[Decision],
) -> Result<Option<(ir::Module, std::collections::HashSet<usize>)>, BuildError> {
    let wanted: Vec<usize> = (0..m.kernels.len())
        .filter(|&k| decisions[k].lanes > 1 && !decisions[k].wa.divergent_branches.is_empty())
        .collect();
    if wanted.is_empty() {
        return Ok(None);
    }
    let mut lin = m.clone();
    let mut changed = std::collections::HashSet::new();
    crate::passes::run_pass(&mut lin, "linearize", |lm| {
        for &k in &wanted {
            // Two kernels of one function: it is linearized once, for the first.
            let func = lm.kernels[k].func;
            if lm.kernels[..k].iter().any(|o| o.func == func) {
                continue;
            }
            if crate::passes::linearize::run(lm, func, &decisions[k].wa)? {
                changed.insert(k);
            }
        }
        Ok(())
    })
    .map_err(fail)?;
    Ok((!changed.is_empty()).then_some((lin, changed)))
}

/// Private memory of one work-item: variables of the kernel and the functions it reaches
/// (an upper bound), plus spilled values.
fn private_bytes(e: &Emitter<'_, '_>, root: ir::Func, plan: &StatePlan) -> u64 {
    let mut total = 0u64;
    let mut var_state = 0u64;
    for f in e.reachable_functions(root) {
        let func = &e.ir.functions[f];
        for &b in &func.layout.blocks {
            for &i in &func.layout.insts[b] {
                if let InstData::Variable { ty, .. } = &func.insts[i] {
                    let size = e.ty(*ty).map(|t| e.alloc_size(t)).unwrap_or(0);
                    total += size;
                    if f == root && plan.state_vars.contains_key(&i) {
                        var_state += size;
                    }
                }
            }
        }
    }
    total + plan.size.saturating_sub(var_state)
}
