//! IR passes and the pipeline that runs them.
//!
//! Each pass is a function over a whole module, listed in a [`Pass`] with its name. The
//! back end runs its passes through [`run_pipeline`], which validates the module
//! (`ir::validate`) after every pass: a pass that breaks an invariant fails the build with
//! a log naming the pass and the problem, instead of reaching code generation.
//! `SOFTCL_PRINT_IR=1` prints the module after each pass to stderr (a diagnostic knob: such
//! builds are not cached).
//!
//! The passes: work-group collective functions as `__local` memory and barriers
//! (`collectives`, first), inlining (`inline`), short-circuit chains folded into one branch
//! (`short_circuit`), `vloadn` / `vstoren` as loads and stores (`vload_store`), `mul24` /
//! `mad24` as multiply and add (`mul24`), the address-space questions of generic pointers of
//! known origin as constants (`generic_spaces`), barrier
//! regions with the values live across barriers in work-item state (`barriers`), the
//! alignment every memory access is guaranteed (`align`), divergent control flow of vector
//! kernels on the CPU device as masked blocks (`linearize`), and for a Gen-instrumented
//! variant only, last, the Gen instrumentation (`gen_instrument`: the plan of sites and
//! blocks on the kernel, `gen.block` / `gen.count` instructions that the lowering's hooks,
//! `back::gen::hooks`, turn into counting code).

pub mod align;
pub mod barriers;
pub mod collectives;
pub mod gen_instrument;
pub mod gen_strides;
pub mod generic_spaces;
pub mod inline;
pub mod linearize;
pub mod mul24;
pub mod reducible;
pub mod short_circuit;
pub mod vload_store;

use crate::ir::{self, Module};

/// One pass over a module.
#[derive(Clone, Copy)]
pub struct Pass {
    /// What the build log calls it.
    pub name: &'static str,
    pub run: fn(&mut Module) -> Result<(), String>,
}

/// Runs `run` on the function of every kernel of `m` (with the module's type table), once
/// per function; the first error stops it.
pub fn for_each_kernel(
    m: &mut Module,
    mut run: impl FnMut(&mut ir::TypeTable, &mut ir::Function) -> Result<(), String>,
) -> Result<(), String> {
    let mut kernels: Vec<_> = m.kernels.iter().map(|k| k.func).collect();
    kernels.dedup();
    let Module { types, functions, .. } = m;
    for func in kernels {
        let Some(f) = functions.get(func) else { continue };
        if f.kind != ir::FuncKind::Kernel {
            continue;
        }
        run(types, &mut functions[func])?;
    }
    Ok(())
}

/// Whether `SOFTCL_PRINT_IR` asks for the module after each pass.
pub fn print_ir_enabled() -> bool {
    std::env::var("SOFTCL_PRINT_IR").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Runs `passes` on `m` in order, validating the module after each one. The error names the
/// pass that failed or left invalid IR.
pub fn run_pipeline(m: &mut Module, passes: &[Pass]) -> Result<(), String> {
    for pass in passes {
        run_pass(m, pass.name, pass.run)?;
    }
    Ok(())
}

/// Runs one pass `run` named `name` (a closure: a pass that needs what the back end decided,
/// such as `linearize`), printed and validated as [`run_pipeline`] does.
pub fn run_pass(m: &mut Module, name: &str, run: impl FnOnce(&mut Module) -> Result<(), String>) -> Result<(), String> {
    run(m).map_err(|e| format!("IR pass `{name}`: {e}"))?;
    if print_ir_enabled() {
        eprintln!("; SoftCL IR after `{name}`\n{m}");
    }
    if let Err(errors) = ir::validate::validate(m) {
        let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(format!("IR pass `{name}` left invalid IR:\n{}", msgs.join("\n")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaks_the_kernel_list(m: &mut Module) -> Result<(), String> {
        // A kernel entry that refers to a function which is not a kernel.
        if let Some(k) = m.kernels.first_mut() {
            let other = m.functions.iter().map(|(f, _)| f).find(|&f| f != k.func);
            if let Some(f) = other {
                k.func = f;
            }
        }
        Ok(())
    }

    fn fails(_: &mut Module) -> Result<(), String> {
        Err("nothing to do".into())
    }

    fn kernel_module() -> Module {
        let src = "int helper(int x) { return x * 3; }\n\
                   __kernel void k(__global int *p) { p[get_global_id(0)] = helper(p[0]); }";
        crate::compile_source(src, "", &crate::Target::default()).expect("the test kernel builds").module
    }

    #[test]
    fn each_pass_is_validated_and_named() {
        let mut m = kernel_module();
        let ok = [Pass {
            name: "vload_store",
            run: |m| {
                vload_store::rewrite_module(m);
                Ok(())
            },
        }];
        run_pipeline(&mut m, &ok).expect("a valid pass passes");
        let bad = [ok[0], Pass { name: "breaks_the_kernel_list", run: breaks_the_kernel_list }];
        let err = run_pipeline(&mut m, &bad).expect_err("invalid IR is caught");
        assert!(err.contains("`breaks_the_kernel_list` left invalid IR"), "{err}");
        assert!(err.contains("not a kernel function"), "{err}");
        let err = run_pipeline(&mut kernel_module(), &[Pass { name: "fails", run: fails }]).expect_err("an error");
        assert_eq!(err, "IR pass `fails`: nothing to do");
    }
}
