//! The host target: an LLVM `TargetMachine` for the CPU the code runs on.
//!
//! Without the host CPU name and features LLVM compiles for a generic x86-64 (no FMA, no
//! AVX), so both come from the host unless [`crate::Target`] overrides them.

use crate::Target;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;
use std::sync::OnceLock;

/// Initialises LLVM's native target once per process.
pub(crate) fn init_native() -> Result<(), String> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| LlvmTarget::initialize_native(&InitializationConfig::default())).clone()
}

/// The triple, CPU and feature string code is generated for.
#[derive(Debug, Clone)]
pub struct HostTarget {
    pub triple: String,
    pub cpu: String,
    pub features: String,
}

impl HostTarget {
    pub fn resolve(target: &Target) -> Self {
        let triple = TargetMachine::get_default_triple();
        let triple = triple.as_str().to_string_lossy().into_owned();
        let cpu = match &target.cpu {
            Some(c) => c.clone(),
            None => TargetMachine::get_host_cpu_name().to_string(),
        };
        let features = match &target.features {
            Some(f) => f.clone(),
            None => TargetMachine::get_host_cpu_features().to_string(),
        };
        HostTarget { triple, cpu, features }
    }

    /// A target machine for this target at O2, position independent (the JIT links the
    /// object wherever it allocates memory and reaches libm through its stubs).
    pub fn machine(&self) -> Result<TargetMachine, String> {
        self.machine_at(OptimizationLevel::Default)
    }

    /// [`Self::machine`] at code-generation level `level`.
    pub fn machine_at(&self, level: OptimizationLevel) -> Result<TargetMachine, String> {
        init_native()?;
        let triple = TargetTriple::create(&self.triple);
        let target = LlvmTarget::from_triple(&triple).map_err(|e| format!("LLVM target {}: {}", self.triple, e))?;
        target
            .create_target_machine(&triple, &self.cpu, &self.features, level, RelocMode::PIC, CodeModel::Small)
            .ok_or_else(|| format!("LLVM cannot create a target machine for {} cpu {}", self.triple, self.cpu))
    }
}
