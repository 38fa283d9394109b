//! A Gen variant's two tiers: code quick to compile at the first launch, compiled again at
//! LLVM's default level once the kernel's launches have run long enough to pay for it (or at
//! once for a launch of a million work-items or more). Both tiers are the same optimised
//! module: they compute the same results and the same counters, so the model prices them
//! alike to the last digit.

use softcl_compiler::GenBuild;
use softcl_device_model::GenDevice;
use std::sync::Arc;
use std::time::Duration;

mod support;
use support::{build, launch_with_ints, Buf, Sum};

/// The kernel; each test builds it with its own `tag` (a process reuses a variant compiled
/// from the same source, at the best tier it has).
fn kernel(tag: &str) -> String {
    KERNEL.replace("TAG", tag)
}

const KERNEL: &str = r#"
/* TAG */
__attribute__((intel_reqd_sub_group_size(16)))
kernel void k(global const int *in, global int *out, int w) {
    local int t[64];
    int l = get_local_id(0), g = get_global_id(0);
    t[l] = in[g] * 3 + w;
    barrier(CLK_LOCAL_MEM_FENCE);
    int acc = 0;
    for (int j = 0; j < 8; ++j)
        acc += t[(l + 7 * j) & 63] ^ in[(g * 5 + j) & 1023];
    out[g] = l >= 1 ? acc + t[l - 1] : acc;
}
"#;

const BUILD: GenBuild = GenBuild { simd: 16, linear_lanes: false, row_width: 0 };

/// A long time, more than any compile: the next launch gets the default level.
const AGES: Duration = Duration::from_secs(3600);

#[test]
fn a_variant_is_compiled_quickly_first_and_again_once_its_launches_have_run_long() {
    let program = build(&GenDevice::default(), &kernel("quick first"));
    let k = program.kernel("k").expect("kernel exists");
    let variant = || k.gen_variant(BUILD, 256).expect("a Gen build").expect("vectorized").1;
    let quick = variant();
    assert!(Arc::ptr_eq(&quick, &variant()), "the quick tier serves until the kernel has run");
    k.gen_ran(BUILD, Duration::from_nanos(1));
    assert!(Arc::ptr_eq(&quick, &variant()), "a nanosecond of runs does not pay for a compile");
    k.gen_ran(BUILD, AGES);
    let full = variant();
    assert!(!Arc::ptr_eq(&quick, &full), "compiled again at the default level");
    k.gen_ran(BUILD, AGES);
    assert!(Arc::ptr_eq(&full, &variant()), "the default level is the last tier");
    // A program built again from the source starts where the first one got to.
    let again = build(&GenDevice::default(), &kernel("quick first"));
    let k2 = again.kernel("k").expect("kernel exists");
    assert!(Arc::ptr_eq(&full, &k2.gen_variant(BUILD, 256).expect("a Gen build").expect("vectorized").1));
}

#[test]
fn a_launch_of_a_million_work_items_gets_the_default_level_at_once() {
    let program = build(&GenDevice::default(), &kernel("large launch"));
    let k = program.kernel("k").expect("kernel exists");
    let variant = || k.gen_variant(BUILD, 1 << 20).expect("a Gen build").expect("vectorized").1;
    let first = variant();
    k.gen_ran(BUILD, AGES);
    assert!(Arc::ptr_eq(&first, &variant()), "no second compile");
}

#[test]
fn both_tiers_compute_and_count_alike() {
    let dev = GenDevice::default();
    let program = build(&dev, &kernel("alike"));
    let k = program.kernel("k").expect("kernel exists");
    let run = || {
        let mut input = Buf::new(1024, |i| (i as i32).wrapping_mul(2654435761u32 as i32) >> 9);
        let mut out = Buf::new(1088, |_| -1);
        let sum = Arc::new(Sum::default());
        let report = launch_with_ints(
            &dev,
            k,
            &mut [&mut input, &mut out],
            &[(2, 5)],
            &[],
            [1024, 1, 1],
            [64, 1, 1],
            Some(sum.clone()),
        );
        let tier = k.gen_variant(BUILD, 0).expect("a Gen build").expect("vectorized");
        let info = tier.0.info.gen.clone().expect("instrumented");
        ((0..1088).map(|i| out.get(i)).collect::<Vec<_>>(), sum.words(&info), report.device_time_ns, tier.1)
    };
    let (out, counters, time, quick) = run();
    k.gen_ran(BUILD, AGES);
    let (out2, counters2, time2, full) = run();
    assert!(!Arc::ptr_eq(&quick, &full), "the second launch ran the default level");
    assert!(out.iter().take(1024).all(|&v| v != -1) && out[1024] == -1, "every work-item wrote, no other");
    assert_eq!(out, out2, "the results");
    assert_eq!(counters, counters2, "the counters");
    assert_eq!(time, time2, "the modelled time");
}

#[test]
fn a_program_built_again_shares_the_quick_tier_and_what_it_cost() {
    let dev = GenDevice::default();
    let (a, b) = (build(&dev, &kernel("shared")), build(&dev, &kernel("shared")));
    let ka = a.kernel("k").expect("kernel exists");
    let kb = b.kernel("k").expect("kernel exists");
    let variant =
        |k: &softcl_compiler::NativeKernel| k.gen_variant(BUILD, 256).expect("a Gen build").expect("vectorized").1;
    let quick = variant(ka);
    assert!(Arc::ptr_eq(&quick, &variant(kb)), "one compile for both programs");
    // Runs far shorter than the first compile (tens of milliseconds), far longer than
    // finding the compiled variant again.
    kb.gen_ran(BUILD, Duration::from_millis(2));
    assert!(Arc::ptr_eq(&quick, &variant(kb)), "2 ms of runs do not pay for the first program's compile");
}
