//! Sub-groups through the loader: the sub-group queries against clGetKernelSubGroupInfo,
//! and every sub-group function (reductions, scans, broadcasts, shuffles, votes, ballots
//! and their bit operations, clustered reductions, rotations, the ballot masks), uniform and in
//! divergent control flow (the non-uniform forms).
//!
//! Each test runs in child processes of this test binary, one per setting: on the CPU
//! device at the heuristic width, at the forced widths 4, 8 and 16 where the host has them,
//! and scalar; on the Gen device with every kernel built at each of its SIMD widths 8, 16
//! and 32 (`intel_reqd_sub_group_size`, through `-DSG=n`). A sub-group's members are
//! found from what the kernel reports (its work-group, sub-group id and sub-group local id);
//! every result is checked exactly against a host reference computed from them, with
//! ND-ranges whose last work-groups are smaller, two-dimensional work-groups and local
//! sizes that leave partial sub-groups.

use softcl_conformance::*;
use std::collections::BTreeMap;

const CHILD: &str = "SOFTCL_SUB_GROUPS_TEST_CHILD";

fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], true))
}

/// A launch: global and local sizes in one or two dimensions.
type Launch = (Vec<usize>, Vec<usize>);

/// Per build: the device, its build options and the launches to run.
fn builds() -> Vec<(TestEnv, String, Vec<Launch>)> {
    let launches: Vec<Launch> = vec![
        (vec![100], vec![16]),
        (vec![100], vec![13]),
        (vec![64], vec![3]),
        (vec![70], vec![35]),
        (vec![20, 12], vec![4, 4]),
        (vec![21, 10], vec![3, 5]),
        (vec![40, 6], vec![16, 2]),
    ];
    if vectorizer_mode(CHILD) == "gen" {
        let dev = device(DeviceKind::Gpu).expect("the Gen device");
        [8usize, 16, 32]
            .into_iter()
            .map(|sg| (dev.env(), format!("-cl-std=CL3.0 -DSG={sg}"), launches.clone()))
            .collect()
    } else {
        let dev = device(DeviceKind::Cpu).expect("the CPU device");
        vec![(dev.env(), "-cl-std=CL3.0".to_string(), launches)]
    }
}

const COLUMNS: usize = 34;

/// Every work-item writes COLUMNS ints: its ids, then one result per function.
const SRC: &str = r#"
    KATTR __kernel void sg(__global int *o) {
        int g = get_global_id(1) * get_global_size(0) + get_global_id(0);
        __global int *r = o + 34 * g;
        int x = (g * 7919) % 61 - 20;
        uint u = (uint)x * 2654435761u;
        r[0] = get_group_id(1) * get_num_groups(0) + get_group_id(0);
        r[1] = get_sub_group_id();
        r[2] = get_sub_group_local_id();
        r[3] = get_sub_group_size();
        r[4] = get_max_sub_group_size();
        r[5] = get_num_sub_groups();
        r[6] = get_enqueued_num_sub_groups();
        r[7] = sub_group_reduce_add(x);
        r[8] = sub_group_reduce_min(x);
        r[9] = sub_group_scan_inclusive_max(x);
        r[10] = sub_group_scan_exclusive_add(x);
        r[11] = sub_group_broadcast(x, 1 % get_sub_group_size());
        r[12] = sub_group_any(x == 7);
        r[13] = sub_group_all(x > -20);
        r[14] = (int)sub_group_non_uniform_reduce_xor(u);
        r[15] = sub_group_non_uniform_scan_inclusive_mul(x | 1);
        r[16] = sub_group_non_uniform_reduce_logical_and(x != 0);
        r[17] = sub_group_shuffle(x, get_sub_group_size() - 1 - get_sub_group_local_id());
        r[18] = sub_group_shuffle_xor(x, 1u);
        r[19] = sub_group_shuffle_up(x, 1u);
        r[20] = sub_group_shuffle_down(x, 2u);
        r[21] = sub_group_broadcast_first(x);
        r[22] = sub_group_elect();
        r[23] = sub_group_non_uniform_all_equal(x & 0x100);
        uint4 b = sub_group_ballot(x > 0);
        r[24] = (int)b.x;
        r[25] = sub_group_ballot_bit_count(b);
        r[26] = sub_group_ballot_inclusive_scan(b);
        r[27] = sub_group_inverse_ballot(b);
        r[28] = (int)get_sub_group_lt_mask().x;
        r[29] = sub_group_clustered_reduce_add(x, 4);
        // Divergent: each half of the sub-group combines its own.
        if (get_sub_group_local_id() < get_sub_group_size() / 2)
            r[30] = sub_group_non_uniform_reduce_add(x);
        else
            r[30] = sub_group_non_uniform_reduce_max(x + 1000);
        r[31] = (g & 1) ? sub_group_broadcast_first(x) : sub_group_non_uniform_reduce_min(x);
        r[32] = sub_group_rotate(x, 3);
        r[33] = sub_group_clustered_rotate(x, 1, 4);
    }
"#;

/// The value work-item `g` computes from.
fn value(g: usize) -> i32 {
    ((g * 7919) % 61) as i32 - 20
}

/// The host's results for one sub-group (members in sub-group local id order) and work-item
/// `me` of it: columns 7 and up, `None` where the result is undefined.
fn expected(members: &[usize], me: usize, max_size: usize) -> Vec<Option<i32>> {
    let xs: Vec<i32> = members.iter().map(|&g| value(g)).collect();
    let n = xs.len();
    let u = |x: i32| (x as u32).wrapping_mul(2654435761);
    let ballot: u32 = xs.iter().enumerate().filter(|(_, x)| **x > 0).map(|(k, _)| 1u32 << k).sum();
    let half: Vec<usize> = if me < n / 2 { (0..n / 2).collect() } else { (n / 2..n).collect() };
    let odd: Vec<usize> = (0..n).filter(|&k| members[k] & 1 == 1).collect();
    let even: Vec<usize> = (0..n).filter(|&k| members[k] & 1 == 0).collect();
    let cluster = me / 4 * 4..(me / 4 * 4 + 4).min(n);
    let lane = |k: usize| if k < n { Some(xs[k]) } else { None };
    vec![
        Some(xs.iter().sum()),
        xs.iter().min().copied(),
        xs[..=me].iter().max().copied(),
        Some(xs[..me].iter().sum()),
        lane(1 % n),
        Some(xs.contains(&7) as i32),
        Some(xs.iter().all(|&x| x > -20) as i32),
        Some(xs.iter().fold(0u32, |a, &x| a ^ u(x)) as i32),
        Some(xs[..=me].iter().fold(1i32, |a, &x| a.wrapping_mul(x | 1))),
        Some(xs.iter().all(|&x| x != 0) as i32),
        lane(n - 1 - me),
        lane(me ^ 1),
        me.checked_sub(1).and_then(lane),
        lane(me + 2),
        Some(xs[0]),
        Some((me == 0) as i32),
        Some(xs.iter().all(|&x| x & 0x100 == xs[0] & 0x100) as i32),
        Some(ballot as i32),
        Some((ballot & if max_size >= 32 { u32::MAX } else { (1u32 << max_size) - 1 }).count_ones() as i32),
        Some((ballot & if me >= 31 { u32::MAX } else { (2u32 << me) - 1 }).count_ones() as i32),
        Some((ballot >> me & 1) as i32),
        Some(((1u64 << me) - 1) as i32),
        Some(xs[cluster].iter().sum()),
        Some(if me < n / 2 {
            half.iter().map(|&k| xs[k]).sum()
        } else {
            half.iter().map(|&k| xs[k] + 1000).max().unwrap_or(0)
        }),
        Some(if members[me] & 1 == 1 { xs[odd[0]] } else { even.iter().map(|&k| xs[k]).min().unwrap_or(0) }),
        lane((me + 3) % n),
        // Undefined where the cluster runs past the sub-group.
        lane(me / 4 * 4 + (me % 4 + 1) % 4),
    ]
}

/// Every sub-group query and function against the host, and the queries against
/// clGetKernelSubGroupInfo for each launch's local size.
#[test]
fn every_sub_group_function_matches_the_host() {
    if run_in_every_mode("every_sub_group_function_matches_the_host") {
        return;
    }
    let src = format!("{KATTR_PRELUDE}{SRC}");
    for (env, options, launches) in builds() {
        let program = env.build(&src, &options);
        let k = kernel_of(&program, "sg");
        for (global, local) in &launches {
            let n: usize = global.iter().product();
            let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![-7i32; COLUMNS * n]);
            k.set_mem(0, &out);
            env.run(&k, global, Some(local));
            let got: Vec<i32> = env.read(&out, COLUMNS * n);
            let row = |g: usize| &got[COLUMNS * g..COLUMNS * (g + 1)];
            // Sub-groups by (work-group, sub-group id), members by sub-group local id.
            let mut groups: BTreeMap<(i32, i32), Vec<(i32, usize)>> = BTreeMap::new();
            for g in 0..n {
                groups.entry((row(g)[0], row(g)[1])).or_default().push((row(g)[2], g));
            }
            let what = format!("global {global:?} local {local:?} ({options})");
            let (max_size, count) = sub_group_info(&k, env.dev(), local);
            for ((wg, _), members) in &groups {
                let mut members = members.clone();
                members.sort();
                let ids: Vec<i32> = members.iter().map(|m| m.0).collect();
                assert_eq!(ids, (0..ids.len() as i32).collect::<Vec<_>>(), "sub-group local ids, {what}");
                let members: Vec<usize> = members.iter().map(|m| m.1).collect();
                let in_group = groups.keys().filter(|(w, _)| w == wg).count() as i32;
                for (me, &g) in members.iter().enumerate() {
                    let r = row(g);
                    assert_eq!(r[3], members.len() as i32, "get_sub_group_size of work-item {g}, {what}");
                    assert_eq!(r[5], in_group, "get_num_sub_groups of work-item {g}, {what}");
                    for (c, want) in expected(&members, me, r[4] as usize).into_iter().enumerate() {
                        if let Some(want) = want {
                            assert_eq!(r[7 + c], want, "column {} of work-item {g} (lane {me}), {what}", 7 + c);
                        }
                    }
                }
            }
            // The queries of a full work-group agree with the kernel's view of the first one.
            let first = row(0);
            assert_eq!(first[6] as usize, count, "CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, {what}");
            assert_eq!(first[5] as usize, count, "get_num_sub_groups of a full work-group, {what}");
            assert_eq!(first[4] as usize, max_size, "CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, {what}");
        }
    }
}

/// (CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE) for
/// `local`.
fn sub_group_info(k: &Kernel, dev: cl_device_id, local: &[usize]) -> (usize, usize) {
    let query = |param: cl_uint| -> usize {
        let mut v = 0usize;
        let code = unsafe {
            // SAFETY: `local` holds `local.len()` size_t values; `v` has room for one.
            clGetKernelSubGroupInfo(
                k.raw(),
                dev,
                param,
                std::mem::size_of_val(local),
                local.as_ptr().cast(),
                std::mem::size_of::<usize>(),
                (&mut v as *mut usize).cast(),
                std::ptr::null_mut(),
            )
        };
        check("clGetKernelSubGroupInfo", code);
        v
    };
    (query(CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE), query(CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE))
}

/// clGetKernelSubGroupInfo's other queries and errors: the local size for a number of
/// sub-groups gives that many, the most sub-groups of a work-group, no input where one is
/// needed.
#[test]
fn sub_group_info_queries_and_errors() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(&format!("{KATTR_PRELUDE}{SRC}"), "-cl-std=CL3.0");
        let k = kernel_of(&program, "sg");
        let mut local = [0usize; 3];
        let count = 3usize;
        let code = unsafe {
            // SAFETY: one size_t in, room for three out.
            clGetKernelSubGroupInfo(
                k.raw(),
                env.dev(),
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                std::mem::size_of::<usize>(),
                (&count as *const usize).cast(),
                std::mem::size_of_val(&local),
                local.as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        };
        check("clGetKernelSubGroupInfo", code);
        assert!(local[0] > 0 && local[1] == 1 && local[2] == 1, "{local:?} on {}", d.kind);
        assert_eq!(sub_group_info(&k, env.dev(), &local).1, count, "{local:?} on {}", d.kind);
        let mut most = 0usize;
        let code = unsafe {
            // SAFETY: no input; room for one size_t.
            clGetKernelSubGroupInfo(
                k.raw(),
                env.dev(),
                CL_KERNEL_MAX_NUM_SUB_GROUPS,
                0,
                std::ptr::null(),
                std::mem::size_of::<usize>(),
                (&mut most as *mut usize).cast(),
                std::ptr::null_mut(),
            )
        };
        check("clGetKernelSubGroupInfo", code);
        assert!(most >= 1, "{}", d.kind);
        // An NDRange query without its local size.
        let code = unsafe {
            // SAFETY: NULL input is what is being checked; room for one size_t.
            clGetKernelSubGroupInfo(
                k.raw(),
                env.dev(),
                CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                0,
                std::ptr::null(),
                std::mem::size_of::<usize>(),
                (&mut most as *mut usize).cast(),
                std::ptr::null_mut(),
            )
        };
        expect_error("clGetKernelSubGroupInfo without a local size", code, CL_INVALID_VALUE);
    });
}
