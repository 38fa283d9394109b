//! The SIMD width a kernel is compiled for, as Intel's graphics compiler chooses it on
//! Gen9-Gen12 (shared/reference/gen-model.md, "SIMD width choice"):
//! 1. a required sub-group size (`intel_reqd_sub_group_size`) fixes it;
//! 2. a work-group of 8 or fewer work-items forces SIMD8, of 16 or fewer rules out SIMD32;
//! 3. SIMD32 is skipped for kernels with divergent loops, sub-group functions or very many
//!    instructions;
//! 4. otherwise SIMD32, 16, 8: the first whose register pressure (uniform bytes + varying
//!    bytes x width, `KernelInfo::register_pressure` from the compiler) fits the GRF
//!    (128 x 32 B); SIMD8 when none fits (it spills). Private arrays indexed at run time (a
//!    register tile) stay in registers at a width where all lanes' copies take at most
//!    three quarters of the GRF (`gen_abi::private_arrays_in_registers`) and then count in its pressure: the
//!    widest width where they do and everything fits is taken first, else the arrays are
//!    scratch memory and the pressure alone decides.
//!
//! Barriers and SLM do not change the width, only occupancy.
//!
//! For tests, `SOFTCL_GEN_SIMD=8|16|32` ([`FORCE_ENV`]) forces the width of every launch
//! whose kernel requires no sub-group size (rules 2-4 are skipped), so that one kernel can be
//! run at each width (the differential fuzzer, `softcl-fuzz`, does).

use crate::gen::GenConfig;
use softcl_compiler::gen_abi::RegisterPressure;
use softcl_compiler::KernelInfo;

/// Kernels with more IR instructions than this skip SIMD32 (compile time and instruction
/// cache, as IGC does for very large kernels).
pub const LARGE_KERNEL_INSTRUCTIONS: u32 = 4000;

/// The environment variable that forces the SIMD width (8, 16 or 32) of kernels without a
/// required sub-group size; read at each launch.
pub const FORCE_ENV: &str = "SOFTCL_GEN_SIMD";

/// Which rule decided the width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdRule {
    RequiredSubGroupSize,
    /// `SOFTCL_GEN_SIMD` forces the width.
    Forced,
    WorkGroupUpTo8,
    /// Work-group of 16 or fewer: SIMD16 when it fits.
    WorkGroupUpTo16,
    /// SIMD32 skipped (why), then SIMD16 when it fits.
    DivergentLoops,
    SubGroupFunctions,
    LargeKernel,
    /// The widest width whose pressure fits.
    PressureFits,
    /// The widest width where the private arrays indexed at run time stay in registers.
    PrivateArrays,
    /// SIMD32 (and maybe SIMD16) would spill: the first that fits.
    WiderSpills,
    /// Nothing fits: SIMD8, spilling.
    Spills,
    /// The compiler gave no register pressure: SIMD16.
    NoPressure,
}

impl SimdRule {
    /// A report phrase for the rule.
    pub fn text(self) -> &'static str {
        match self {
            SimdRule::RequiredSubGroupSize => "required sub-group size",
            SimdRule::Forced => "forced by SOFTCL_GEN_SIMD",
            SimdRule::WorkGroupUpTo8 => "work-group size <= 8 forces SIMD8",
            SimdRule::WorkGroupUpTo16 => "work-group size <= 16 rules out SIMD32",
            SimdRule::DivergentLoops => "SIMD32 skipped: divergent loops",
            SimdRule::SubGroupFunctions => "SIMD32 skipped: sub-group functions",
            SimdRule::LargeKernel => "SIMD32 skipped: very large kernel",
            SimdRule::PressureFits => "register pressure fits the GRF at SIMD32",
            SimdRule::PrivateArrays => "private arrays indexed at run time stay in registers only at this width",
            SimdRule::WiderSpills => "register pressure: wider widths would spill",
            SimdRule::Spills => "register pressure spills even at SIMD8",
            SimdRule::NoPressure => "no register pressure from the compiler: SIMD16",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimdChoice {
    pub simd: u32,
    pub rule: SimdRule,
    /// Register bytes the kernel needs at the chosen width (0 when unknown).
    pub pressure_bytes: u64,
}

impl SimdChoice {
    /// "SIMD16: register pressure: wider widths would spill (SIMD32 needs 5120 B of 4096 B)".
    pub fn reason(&self, config: &GenConfig, pressure: Option<RegisterPressure>) -> String {
        let mut s = self.rule.text().to_string();
        if let (SimdRule::WiderSpills, Some(p)) = (self.rule, pressure) {
            let wider = self.simd * 2;
            s.push_str(&format!(
                " (SIMD{wider} needs {} B of {} B)",
                bytes_at(p, wider),
                config.grf_bytes_per_thread()
            ));
        }
        if let (SimdRule::Spills, Some(p)) = (self.rule, pressure) {
            s.push_str(&format!(" ({} B of {} B)", bytes_at(p, 8), config.grf_bytes_per_thread()));
        }
        s
    }
}

/// Register bytes at `simd`: uniform + varying x simd, plus the private arrays indexed at
/// run time where they stay in registers.
pub fn bytes_at(p: RegisterPressure, simd: u32) -> u64 {
    let arrays = u64::from(p.private_array_bytes);
    let in_registers = softcl_compiler::gen_abi::private_arrays_in_registers(arrays, simd);
    u64::from(p.uniform_bytes) + (u64::from(p.varying_bytes) + if in_registers { arrays } else { 0 }) * u64::from(simd)
}

/// The width for `kernel` in work-groups of `work_group_size` (see the module
/// documentation), with `SOFTCL_GEN_SIMD` as the process environment has it; `Err` for a
/// required or forced width the configuration does not have.
pub fn choose(config: &GenConfig, kernel: &KernelInfo, work_group_size: usize) -> Result<SimdChoice, String> {
    choose_forced(config, kernel, work_group_size, std::env::var(FORCE_ENV).ok().as_deref())
}

/// [`choose`] with `forced` as the value of `SOFTCL_GEN_SIMD` (`None`: unset).
pub fn choose_forced(
    config: &GenConfig,
    kernel: &KernelInfo,
    work_group_size: usize,
    forced: Option<&str>,
) -> Result<SimdChoice, String> {
    let p = kernel.register_pressure;
    let at = |simd: u32| p.map_or(0, |p| bytes_at(p, simd));
    let grf = u64::from(config.grf_bytes_per_thread());
    let has = |w: u32| config.simd_widths.contains(&(w as usize));
    let pick = |simd: u32, rule: SimdRule| Ok(SimdChoice { simd, rule, pressure_bytes: at(simd) });
    if let Some(s) = kernel.reqd_sub_group_size {
        return if has(s) {
            pick(s, SimdRule::RequiredSubGroupSize)
        } else {
            Err(format!("kernel {}: required sub-group size {s} is not supported", kernel.name))
        };
    }
    match forced.map(str::trim) {
        None | Some("") => {}
        Some(v) => {
            return match v.parse::<u32>() {
                Ok(s) if has(s) => pick(s, SimdRule::Forced),
                _ => {
                    Err(format!("{FORCE_ENV}={v}: the {} configuration runs SIMD {:?}", config.key, config.simd_widths))
                }
            };
        }
    }
    if work_group_size <= 8 {
        return pick(8, SimdRule::WorkGroupUpTo8);
    }
    let Some(pressure) = p else { return pick(16, SimdRule::NoPressure) };
    let skip32 = if work_group_size <= 16 {
        Some(SimdRule::WorkGroupUpTo16)
    } else if pressure.divergent_loops {
        Some(SimdRule::DivergentLoops)
    } else if pressure.subgroup_functions {
        Some(SimdRule::SubGroupFunctions)
    } else if pressure.instructions > LARGE_KERNEL_INSTRUCTIONS {
        Some(SimdRule::LargeKernel)
    } else {
        None
    };
    let widths: &[u32] = if skip32.is_some() { &[16, 8] } else { &[32, 16, 8] };
    // Private arrays in registers first: the widest width where they stay there and fit.
    let arrays = u64::from(pressure.private_array_bytes);
    let widest = widths.iter().copied().find(|&w| has(w));
    for &w in widths.iter().filter(|&&w| has(w)) {
        if softcl_compiler::gen_abi::private_arrays_in_registers(arrays, w) && at(w) <= grf {
            if Some(w) == widest {
                break; // the rules below name it
            }
            return pick(w, SimdRule::PrivateArrays);
        }
    }
    for &w in widths.iter().filter(|&&w| has(w)) {
        if at(w) <= grf {
            let rule = match (skip32, w) {
                (Some(r), 16) => r,
                (None, 32) => SimdRule::PressureFits,
                _ => SimdRule::WiderSpills,
            };
            return pick(w, rule);
        }
    }
    pick(8, SimdRule::Spills)
}
