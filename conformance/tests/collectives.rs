//! Work-group collective functions through the loader: `work_group_reduce_*`,
//! `work_group_scan_inclusive_*` / `_exclusive_*` (add, min, max) of every scalar type,
//! `work_group_broadcast` in one, two and three dimensions, `work_group_any` /
//! `work_group_all`, and collectives in a helper function called in a loop.
//!
//! Each test runs in child processes of this test binary, one per setting: on the CPU
//! device at the heuristic width, at the forced widths 4, 8 and 16 where the host has them,
//! and scalar; on the Gen device with every kernel built at each of its SIMD widths 8, 16
//! and 32 (`intel_reqd_sub_group_size`, through `-DSG=n`). Every result is checked exactly
//! against a host reference that combines each work-group's values in the order of their
//! linear local ids (floats included: SoftCL combines in that order), with ND-ranges whose
//! last work-groups are smaller (non-uniform work-groups) and local sizes that leave partial
//! packets.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_COLLECTIVES_TEST_CHILD";

fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], true))
}

/// Ahead of every source (after [`KATTR_PRELUDE`]): the work-item's linear global id.
const PRELUDE: &str = r#"
    size_t linear_global_id(void) {
        return get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    }
"#;

/// A launch: global and local sizes in up to three dimensions.
type Launch = (Vec<usize>, Vec<usize>);

/// Per build: the device, its build options and the launches to run. The CPU device builds
/// once (its width comes from the child's environment); the Gen device once per SIMD width.
fn builds() -> Vec<(TestEnv, String, Vec<Launch>)> {
    let mode = vectorizer_mode(CHILD);
    let common: Vec<Launch> = vec![
        (vec![100], vec![3]),
        (vec![100], vec![17]),
        (vec![130], vec![64]),
        (vec![12, 10], vec![4, 3]),
        (vec![6, 4, 5], vec![3, 2, 2]),
    ];
    if mode == "gen" {
        let dev = device(DeviceKind::Gpu).expect("the Gen device");
        [8usize, 16, 32]
            .into_iter()
            .map(|sg| {
                let mut launches = common.clone();
                launches.push((vec![3 * sg + 5], vec![sg]));
                (dev.env(), format!("-cl-std=CL3.0 -DSG={sg}"), launches)
            })
            .collect()
    } else {
        let dev = device(DeviceKind::Cpu).expect("the CPU device");
        let mut launches = common;
        launches.push((vec![40], vec![1]));
        vec![(dev.env(), "-cl-std=CL3.0".to_string(), launches)]
    }
}

/// For every work-item of `launch` in linear global id order: its work-group's members in
/// linear local id order (as linear global ids), and its own position among them.
fn groups_of(launch: &Launch) -> Vec<(Vec<usize>, usize)> {
    let (global, local) = launch;
    let dim = |v: &Vec<usize>, d: usize| v.get(d).copied().unwrap_or(1);
    let (gx, gy, gz) = (dim(global, 0), dim(global, 1), dim(global, 2));
    let mut out = Vec::with_capacity(gx * gy * gz);
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                let pos = [x, y, z];
                let g = [gx, gy, gz];
                // This work-group's origin and actual size in each dimension.
                let (mut origin, mut size) = ([0usize; 3], [0usize; 3]);
                for d in 0..3 {
                    let l = dim(local, d);
                    origin[d] = pos[d] / l * l;
                    size[d] = l.min(g[d] - origin[d]);
                }
                let mut members = Vec::new();
                for lz in 0..size[2] {
                    for ly in 0..size[1] {
                        for lx in 0..size[0] {
                            let (mx, my, mz) = (origin[0] + lx, origin[1] + ly, origin[2] + lz);
                            members.push(mx + gx * (my + gy * mz));
                        }
                    }
                }
                let me = x + gx * (y + gy * z);
                let at = members.iter().position(|&m| m == me).expect("a member of its own work-group");
                out.push((members, at));
            }
        }
    }
    out
}

/// A scalar type of the reductions: its OpenCL C name, host arithmetic as OpenCL C does it
/// (wrapping integers, floats in their own precision) and the scans' identities.
trait Elem: Pod + Copy + PartialEq + PartialOrd + std::fmt::Debug + Default {
    const NAME: &'static str;
    fn add(self, other: Self) -> Self;
    fn min_identity() -> Self;
    fn max_identity() -> Self;
    fn from_seed(s: u64) -> Self;
}

macro_rules! int_elem {
    ($t:ty, $name:expr, $seed:expr) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn min_identity() -> Self {
                <$t>::MAX
            }
            fn max_identity() -> Self {
                <$t>::MIN
            }
            fn from_seed(s: u64) -> Self {
                $seed(s)
            }
        }
    };
}
// Signed values stay small enough that no sum overflows; unsigned sums wrap, as defined.
int_elem!(i32, "int", |s: u64| (s % 20_001) as i32 - 10_000);
int_elem!(u32, "uint", |s: u64| s as u32);
int_elem!(i64, "long", |s: u64| (s % 2_000_000_001) as i64 - 1_000_000_000);
int_elem!(u64, "ulong", |s: u64| s);

macro_rules! float_elem {
    ($t:ty, $name:expr) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn min_identity() -> Self {
                <$t>::INFINITY
            }
            fn max_identity() -> Self {
                <$t>::NEG_INFINITY
            }
            fn from_seed(s: u64) -> Self {
                (s % 20_001) as $t / 7.0 - 1400.0
            }
        }
    };
}
float_elem!(f32, "float");
float_elem!(f64, "double");

fn min_of<T: Elem>(a: T, b: T) -> T {
    if b < a {
        b
    } else {
        a
    }
}
fn max_of<T: Elem>(a: T, b: T) -> T {
    if b > a {
        b
    } else {
        a
    }
}

/// Pseudo-random values for `n` work-items.
fn values<T: Elem>(n: usize) -> Vec<T> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_seed(s)
        })
        .collect()
}

/// The nine results per work-item of kernel `wg` (reduce, inclusive and exclusive scan of
/// add, min and max), from the host.
fn reference<T: Elem>(x: &[T], launch: &Launch) -> Vec<T> {
    let mut want = Vec::with_capacity(9 * x.len());
    for (members, at) in groups_of(launch) {
        let vals: Vec<T> = members.iter().map(|&m| x[m]).collect();
        let fold = |upto: usize, init: T, f: fn(T, T) -> T| vals[..upto].iter().fold(init, |a, &b| f(a, b));
        let n = vals.len();
        // Sums start from the first value (not from 0: -0.0 + 0.0 would differ).
        let sum_to = |upto: usize| -> T {
            if upto == 0 {
                return T::default();
            }
            vals[1..upto].iter().fold(vals[0], |a, &b| a.add(b))
        };
        want.extend([
            sum_to(n),
            fold(n, T::min_identity(), min_of),
            fold(n, T::max_identity(), max_of),
            sum_to(at + 1),
            fold(at + 1, T::min_identity(), min_of),
            fold(at + 1, T::max_identity(), max_of),
            sum_to(at),
            fold(at, T::min_identity(), min_of),
            fold(at, T::max_identity(), max_of),
        ]);
    }
    want
}

fn check_reductions<T: Elem>(env: &TestEnv, options: &str, launches: &[Launch]) {
    let t = T::NAME;
    let src = format!(
        "{KATTR_PRELUDE}{PRELUDE}\n{}KATTR __kernel void wg(__global const {t} *x, __global {t} *out) {{\n\
         size_t g = linear_global_id();\n\
         {t} v = x[g];\n\
         out[9 * g + 0] = work_group_reduce_add(v);\n\
         out[9 * g + 1] = work_group_reduce_min(v);\n\
         out[9 * g + 2] = work_group_reduce_max(v);\n\
         out[9 * g + 3] = work_group_scan_inclusive_add(v);\n\
         out[9 * g + 4] = work_group_scan_inclusive_min(v);\n\
         out[9 * g + 5] = work_group_scan_inclusive_max(v);\n\
         out[9 * g + 6] = work_group_scan_exclusive_add(v);\n\
         out[9 * g + 7] = work_group_scan_exclusive_min(v);\n\
         out[9 * g + 8] = work_group_scan_exclusive_max(v);\n}}\n",
        if t == "double" { "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" } else { "" }
    );
    let program = env.build(&src, options);
    let k = kernel_of(&program, "wg");
    for launch in launches {
        let n: usize = launch.0.iter().product();
        let x: Vec<T> = values(n);
        let xs = env.buffer_from(CL_MEM_READ_ONLY, &x);
        let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![T::default(); 9 * n]);
        k.set_mem(0, &xs);
        k.set_mem(1, &out);
        env.run(&k, &launch.0, Some(&launch.1));
        let got: Vec<T> = env.read(&out, 9 * n);
        let want = reference(&x, launch);
        const WHAT: [&str; 9] = [
            "reduce_add",
            "reduce_min",
            "reduce_max",
            "scan_inclusive_add",
            "scan_inclusive_min",
            "scan_inclusive_max",
            "scan_exclusive_add",
            "scan_exclusive_min",
            "scan_exclusive_max",
        ];
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "work_group_{} of {t}, work-item {} of global {:?} local {:?} ({options})",
                WHAT[i % 9],
                i / 9,
                launch.0,
                launch.1
            );
        }
    }
}

/// Every reduction and scan of every scalar type (double where the device has fp64).
#[test]
fn reductions_and_scans_of_every_type_combine_in_local_id_order() {
    if run_in_every_mode("reductions_and_scans_of_every_type_combine_in_local_id_order") {
        return;
    }
    for (env, options, launches) in builds() {
        check_reductions::<i32>(&env, &options, &launches);
        check_reductions::<u32>(&env, &options, &launches);
        check_reductions::<i64>(&env, &options, &launches);
        check_reductions::<u64>(&env, &options, &launches);
        check_reductions::<f32>(&env, &options, &launches);
        let fp64: cl_ulong = device_info(env.dev(), CL_DEVICE_DOUBLE_FP_CONFIG);
        if fp64 != 0 {
            check_reductions::<f64>(&env, &options, &launches);
        }
    }
}

/// `work_group_broadcast` from a work-item named by one, two and three local ids (each
/// work-group names one of its own, the last ones being smaller), `work_group_any` and
/// `work_group_all`.
#[test]
fn broadcast_any_and_all() {
    if run_in_every_mode("broadcast_any_and_all") {
        return;
    }
    let src = format!(
        "{KATTR_PRELUDE}{PRELUDE}\nKATTR __kernel void bc(__global const int *x, __global int *out) {{\n\
         size_t g = linear_global_id();\n\
         int v = x[g];\n\
         size_t a = get_local_size(0) - 1, b = get_local_size(1) / 2, c = get_local_size(2) - 1;\n\
         out[5 * g + 0] = work_group_broadcast(v, a);\n\
         out[5 * g + 1] = work_group_broadcast(v, a / 2, b);\n\
         out[5 * g + 2] = work_group_broadcast(v, a, b, c);\n\
         out[5 * g + 3] = work_group_any(v == 7);\n\
         out[5 * g + 4] = work_group_all(v != 3);\n}}\n"
    );
    for (env, options, launches) in builds() {
        let program = env.build(&src, &options);
        let k = kernel_of(&program, "bc");
        for launch in &launches {
            let n: usize = launch.0.iter().product();
            let x: Vec<i32> = (0..n).map(|i| ((i * 7919) % 61) as i32).collect();
            let xs = env.buffer_from(CL_MEM_READ_ONLY, &x);
            let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![-1i32; 5 * n]);
            k.set_mem(0, &xs);
            k.set_mem(1, &out);
            env.run(&k, &launch.0, Some(&launch.1));
            let got: Vec<i32> = env.read(&out, 5 * n);
            let dims = launch.0.len();
            for (g, (members, _)) in groups_of(launch).iter().enumerate() {
                // The work-group's actual sizes: members are in linear local id order.
                let gx = launch.0[0];
                let size = |d: usize| -> usize {
                    let coord = |m: usize| match d {
                        0 => m % gx,
                        1 => (m / gx) % launch.0.get(1).copied().unwrap_or(1),
                        _ => m / (gx * launch.0.get(1).copied().unwrap_or(1)),
                    };
                    let lo = members.iter().map(|&m| coord(m)).min().unwrap_or(0);
                    let hi = members.iter().map(|&m| coord(m)).max().unwrap_or(0);
                    hi - lo + 1
                };
                let (sx, sy, sz) = (size(0), size(1), size(2));
                let at = |lx: usize, ly: usize, lz: usize| x[members[lx + sx * (ly + sy * lz)]];
                let (a, b, c) = (sx - 1, sy / 2, sz - 1);
                let vals: Vec<i32> = members.iter().map(|&m| x[m]).collect();
                let want = [
                    at(a, 0, 0),
                    if dims >= 2 || sy == 1 { at(a / 2, b, 0) } else { got[5 * g + 1] },
                    if dims == 3 || sz == 1 { at(a, b, c) } else { got[5 * g + 2] },
                    vals.contains(&7) as i32,
                    vals.iter().all(|&v| v != 3) as i32,
                ];
                assert_eq!(
                    &got[5 * g..5 * g + 5],
                    &want,
                    "work-item {g} of global {:?} local {:?} ({options})",
                    launch.0,
                    launch.1
                );
            }
        }
    }
}

/// Collectives in a helper function and in a loop: the same collective runs again before
/// some work-items could have read its last result, unless the expansion keeps them apart.
#[test]
fn collectives_in_a_helper_called_in_a_loop() {
    if run_in_every_mode("collectives_in_a_helper_called_in_a_loop") {
        return;
    }
    let src = format!(
        "{KATTR_PRELUDE}{PRELUDE}\nint total(int v) {{ return work_group_reduce_add(v); }}\n\
         KATTR __kernel void loop_sum(__global const int *x, __global int *out) {{\n\
         size_t g = linear_global_id();\n\
         int s = 0;\n\
         for (int r = 0; r < 3; ++r)\n\
             s += total(x[g] * (r + 1)) * 100 + work_group_scan_exclusive_add(r + (int)get_local_id(0));\n\
         out[g] = s;\n}}\n"
    );
    for (env, options, launches) in builds() {
        let program = env.build(&src, &options);
        let k = kernel_of(&program, "loop_sum");
        for launch in launches.iter().filter(|l| l.0.len() == 1) {
            let n = launch.0[0];
            let x: Vec<i32> = (0..n).map(|i| (i % 13) as i32 - 6).collect();
            let xs = env.buffer_from(CL_MEM_READ_ONLY, &x);
            let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![0i32; n]);
            k.set_mem(0, &xs);
            k.set_mem(1, &out);
            env.run(&k, &launch.0, Some(&launch.1));
            let got: Vec<i32> = env.read(&out, n);
            for (g, (members, at)) in groups_of(launch).iter().enumerate() {
                let sum: i32 = members.iter().map(|&m| x[m]).sum();
                let want: i32 = (0..3).map(|r| sum * (r + 1) * 100 + (0..*at as i32).map(|l| r + l).sum::<i32>()).sum();
                assert_eq!(got[g], want, "work-item {g} of global {:?} local {:?} ({options})", launch.0, launch.1);
            }
        }
    }
}
