//! Gen-instrumented builds: a kernel vectorized at the Gen SIMD width that counts its
//! messages and blocks in generated code (the contract is [`crate::gen_abi`]).
//!
//! - [`GenSource`]: what a Gen device's program build keeps to compile a kernel's
//!   instrumented variant lazily, per SIMD width and lane layout, at the first launch that
//!   needs it (the CTS builds thousands of programs that never run at every width). A
//!   variant is the module built for `Target::gen` with that width: its last IR pass,
//!   `passes::gen_instrument`, plans the sites and blocks and inserts the `gen.block` /
//!   `gen.count` instructions, which the counting hook (`hooks`) turns into counting
//!   code.
//! - [`build_linear_entry`]: the work-group entry of a variant whose lanes are consecutive
//!   linear local ids (a hardware thread spanning rows); vector mode's
//!   `VecLower::linear_work_item` gives the ids of such lanes.
//! - [`enable`] (`hooks`): counting, as a hook of the lowering core; `helpers`: the general
//!   counts, host functions the counting code calls.

pub(crate) mod helpers;
mod hooks;
pub(crate) mod hot;

pub use hooks::enable;

use crate::back::llvm::{gep, Emitter, R};
use crate::back::Speed;
use crate::ir::{self};
use crate::{GenBuild, NativeKernel, NativeProgram, Target, Vectorizer};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue};
use inkwell::IntPredicate;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------
// Lazy variants

/// A compiled one-kernel program, or why the kernel cannot run so.
type Variant = Result<Arc<NativeProgram>, String>;

/// Launches of at least this many work-items get the default-level code at once: a quick
/// variant's code runs 1-4x slower, which a large launch would pay many times over.
pub const QUICK_VARIANT_MAX_ITEMS: u64 = 1 << 20;

/// The quick tier is compiled again at the default level once its launches have run for its
/// compile time over this.
const PROMOTE_AT_COST_OVER: u32 = 4;

/// A variant's code in two tiers. The first launch compiles it quickly (LLVM's fast
/// instruction selection and register allocation: about half the compile time, code that
/// runs 1-4x slower); once the kernel's launches have run on the host for a quarter of what
/// that compile took ([`PROMOTE_AT_COST_OVER`]), the next launch compiles it at the default
/// level, which serves every launch after. A kernel launched once or a few times briefly (a
/// CTS test, a fuzz run) never pays the second compile; one launched often pays it as soon
/// as its runs show it to be worth it. Both tiers are the same optimised LLVM module, so
/// their results and counters are the same.
#[derive(Default)]
struct Tiers {
    /// The quick tier and what compiling it took.
    quick: Option<(Variant, Duration)>,
    /// The default-level tier (or the quick one, when that is the default).
    full: Option<Variant>,
    /// Host time of the launches run with the quick tier.
    ran: Duration,
}

/// A Gen device's program: the module and target its kernels' instrumented variants are
/// compiled from, and the variants compiled so far.
pub struct GenSource {
    module: ir::Module,
    target: Target,
    /// (kernel name, build) -> the one-kernel program's tiers.
    variants: Mutex<HashMap<(String, GenBuild), Tiers>>,
}

impl std::fmt::Debug for GenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenSource").finish_non_exhaustive()
    }
}

impl GenSource {
    /// The source of a Gen device's program build (`target.gen` with SIMD 0); `None` for
    /// other targets.
    pub fn for_target(module: &ir::Module, target: &Target) -> Option<Arc<GenSource>> {
        let g = target.gen?;
        (g.simd == 0)
            .then(|| Arc::new(GenSource { module: module.clone(), target: target.clone(), variants: Mutex::default() }))
    }

    /// The variant of `kernel` for `build`, for a launch of `items` work-items: the best
    /// tier compiled so far, compiling the first or the second as [`Tiers`] says.
    pub(crate) fn variant(
        &self,
        kernel: &str,
        build: GenBuild,
        items: u64,
    ) -> Result<(NativeKernel, Arc<NativeProgram>), String> {
        if ![8, 16, 32].contains(&build.simd) {
            return Err(format!("SIMD width {} is not 8, 16 or 32", build.simd));
        }
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        let tiers = variants.entry((kernel.to_string(), build)).or_default();
        let program = match (&tiers.full, &tiers.quick) {
            (Some(full), _) => full.clone(),
            (None, Some((_, cost))) if tiers.ran * PROMOTE_AT_COST_OVER >= *cost => {
                let (full, ..) = self.compile(kernel, build, Speed::Default);
                tiers.full = Some(full.clone());
                full
            }
            (None, Some((quick, _))) => quick.clone(),
            (None, None) if items >= QUICK_VARIANT_MAX_ITEMS => {
                let (full, ..) = self.compile(kernel, build, Speed::Default);
                tiers.full = Some(full.clone());
                full
            }
            (None, None) => {
                let (quick, is_full, cost) = self.compile(kernel, build, Speed::QuickToCompile);
                // A kernel that cannot run vectorized cannot at either level.
                if is_full || quick.is_err() {
                    tiers.full = Some(quick.clone());
                } else {
                    tiers.quick = Some((quick.clone(), cost));
                }
                quick
            }
        }?;
        let k = program.kernel(kernel).ok_or_else(|| format!("kernel `{kernel}` missing from its Gen build"))?;
        Ok((k.clone(), program))
    }

    /// Adds `host_time` to what the launches of `kernel`'s `build` ran with its quick tier
    /// (nothing once it has the default-level one).
    pub(crate) fn ran(&self, kernel: &str, build: GenBuild, host_time: Duration) {
        let mut variants = self.variants.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tiers) = variants.get_mut(&(kernel.to_string(), build)) {
            if tiers.full.is_none() {
                tiers.ran += host_time;
            }
        }
    }

    /// The variant compiled at `speed`, whether it is what the default level makes, and what
    /// compiling it took (when this process compiled it for another program, what it took
    /// then).
    fn compile(&self, kernel: &str, build: GenBuild, speed: Speed) -> (Variant, bool, Duration) {
        let t = Instant::now();
        let mut m = self.module.clone();
        m.kernels.retain(|k| k.info.name == kernel);
        if m.kernels.is_empty() {
            return (Err(format!("no kernel `{kernel}`")), true, t.elapsed());
        }
        let target = Target {
            gen: Some(build),
            vectorizer: Vectorizer::Forced { width: build.simd, register_bytes: build.simd * 4 },
            ..self.target.clone()
        };
        let key = |speed: Speed| format!("{target:?}\n{speed:?}\n{}", m.describe());
        if let Some((v, cost)) = recent_variants::get(&key(Speed::Default)) {
            return (v, true, cost);
        }
        if let Some((v, cost)) = recent_variants::get(&key(speed)) {
            return (v, speed == Speed::Default, cost);
        }
        let (v, is_full) = match super::codegen_at(&m, &target, speed) {
            Ok((p, is_full)) => (Ok(p), is_full),
            Err(e) => (Err(e.log), true),
        };
        let cost = t.elapsed();
        recent_variants::put(key(if is_full { Speed::Default } else { speed }), v.clone(), cost);
        (v, is_full, cost)
    }
}

/// The variants this process compiled last, by the text of the one-kernel module and target
/// they were compiled from and their tier. Programs built again from the same source (the
/// CTS's image suites build one program per format and sampler from a few dozen sources,
/// each then launched at once) reuse the compiled variant instead of running LLVM again: an
/// image kernel's instrumented SIMD16 build takes about a second.
mod recent_variants {
    use super::Variant;
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::time::Duration;

    /// How many are kept (each holds its JIT's code).
    const KEPT: usize = 32;

    /// (key, the variant, what compiling it took).
    static RECENT: Mutex<VecDeque<(String, Variant, Duration)>> = Mutex::new(VecDeque::new());

    pub(super) fn get(key: &str) -> Option<(Variant, Duration)> {
        let recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
        recent.iter().find(|(k, ..)| k == key).map(|(_, v, cost)| (v.clone(), *cost))
    }

    pub(super) fn put(key: String, v: Variant, cost: Duration) {
        let mut recent = RECENT.lock().unwrap_or_else(|p| p.into_inner());
        if recent.iter().any(|(k, ..)| *k == key) {
            return;
        }
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back((key, v, cost));
    }
}

/// The work-group entry of a variant whose lanes are consecutive linear local ids: the
/// linear ids `first..end` in packets of `width` (the Gen device calls it once per hardware
/// thread, so once per packet), each call `wi(args, ctx, lin, 0, 0, state, resume_at, 0, hi)`
/// with `lin` the linear id of lane 0 and lanes `0..hi` active. A packet's state (W x
/// `state_size` bytes, structure of arrays) is at `state + lin * state_size`, which the row
/// layout's size ([`crate::KernelInfo::work_item_state_bytes`]) always covers.
pub fn build_linear_entry<'ctx>(
    e: &Emitter<'ctx, '_>,
    name: &str,
    wi: FunctionValue<'ctx>,
    state_size: u64,
    width: u32,
    opts: &super::workgroup::EntryOptions<'_>,
) -> R<FunctionValue<'ctx>> {
    let (restrict_offsets, args_size) = (opts.restrict_offsets, opts.args_size);
    let cx = e.cx;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let i8t = cx.i8_type();
    let w = width.max(1) as u64;
    let super::workgroup::EntryStart { f, args, ctx, first, end, resume } =
        super::workgroup::declare_entry(e, name, args_size)?;

    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    let body = cx.append_basic_block(f, "packet");
    let full = cx.append_basic_block(f, "packet.full");
    let part = cx.append_basic_block(f, "packet.part");
    let latch = cx.append_basic_block(f, "packet.latch");
    let exit = cx.append_basic_block(f, "exit");

    b.position_at_end(entry);
    // The work-item function's last arguments: the `restrict` buffers, then (Gen builds)
    // the counter array.
    let (state_base, mut trailing_args) =
        super::workgroup::entry_pointers(e, &b, ctx, args, state_size, restrict_offsets)?;
    if opts.gen_counters {
        trailing_args.push(crate::back::workgroup::entry_counter_array(e, &b, ctx)?.into());
    }
    let first64 = b.build_int_z_extend(first, i64t, "")?;
    let end64 = b.build_int_z_extend(end, i64t, "")?;
    let any = b.build_int_compare(IntPredicate::ULT, first64, end64, "")?;
    b.build_conditional_branch(any, body, exit)?;

    b.position_at_end(body);
    let p_lin = b.build_phi(i64t, "lin")?;
    let lin = p_lin.as_basic_value().into_int_value();
    let left = b.build_int_sub(end64, lin, "")?;
    let wc = i64t.const_int(w, false);
    let hi = b.build_select(b.build_int_compare(IntPredicate::ULT, left, wc, "")?, left, wc, "")?.into_int_value();
    let hi32 = b.build_int_truncate(hi, i32t, "")?;
    let state: BasicMetadataValueEnum<'ctx> = match state_base {
        Some(base) => {
            let off = b.build_int_mul(lin, i64t.const_int(state_size, false), "")?;
            gep(&b, i8t.into(), base, &[off], true)?.into()
        }
        None => ptr.const_null().into(),
    };
    let zero = i64t.const_zero();
    let common: Vec<BasicMetadataValueEnum<'ctx>> =
        vec![args.into(), ctx.into(), lin.into(), zero.into(), zero.into(), state, resume.into()];
    let is_full = b.build_int_compare(IntPredicate::EQ, hi, wc, "")?;
    b.build_conditional_branch(is_full, full, part)?;
    let mut results = Vec::new();
    for (blk, hi_arg) in [(full, i32t.const_int(w, false)), (part, hi32)] {
        b.position_at_end(blk);
        let mut a = common.clone();
        a.push(i32t.const_zero().into());
        a.push(hi_arg.into());
        a.extend(trailing_args.iter().copied());
        let r = b.build_call(wi, &a, "")?.try_as_basic_value().basic().ok_or("work-item function has no result")?;
        b.build_unconditional_branch(latch)?;
        results.push((r, blk));
    }
    b.position_at_end(latch);
    let rp = b.build_phi(i32t, "r")?;
    for (r, blk) in &results {
        rp.add_incoming(&[(r, *blk)]);
    }
    let next = b.build_int_add(lin, wc, "")?;
    let more = b.build_int_compare(IntPredicate::ULT, next, end64, "")?;
    b.build_conditional_branch(more, body, exit)?;
    p_lin.add_incoming(&[(&first64, entry), (&next, latch)]);

    b.position_at_end(exit);
    let res = b.build_phi(i32t, "res")?;
    res.add_incoming(&[(&i32t.const_zero(), entry), (&rp.as_basic_value(), latch)]);
    b.build_return(Some(&res.as_basic_value()))?;
    Ok(f)
}
