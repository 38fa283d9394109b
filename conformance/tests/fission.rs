//! Device fission through the loader: clCreateSubDevices on the CPU device (equally, by
//! counts, by affinity domain), its errors, the sub-devices' info queries and reference
//! counts, kernels on sub-devices and concurrent launches on sibling sub-devices. The Gen
//! device cannot be partitioned.

use softcl_conformance::*;
use std::ptr;

type Prop = cl_device_partition_property;

const EQUALLY: Prop = CL_DEVICE_PARTITION_EQUALLY as Prop;
const BY_COUNTS: Prop = CL_DEVICE_PARTITION_BY_COUNTS as Prop;
const BY_AFFINITY: Prop = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN as Prop;
const LIST_END: Prop = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END as Prop;

const DOMAINS: [cl_device_affinity_domain; 5] = [
    CL_DEVICE_AFFINITY_DOMAIN_NUMA as cl_device_affinity_domain,
    CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE as cl_device_affinity_domain,
    CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE as cl_device_affinity_domain,
    CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE as cl_device_affinity_domain,
    CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE as cl_device_affinity_domain,
];
const NEXT: cl_device_affinity_domain = CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE as cl_device_affinity_domain;

fn cpu() -> cl_device_id {
    device(DeviceKind::Cpu).expect("a CPU device").id
}

fn units(d: cl_device_id) -> usize {
    device_info::<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS) as usize
}

/// clCreateSubDevices: the sub-devices, or the error code.
fn try_partition(d: cl_device_id, props: &[Prop]) -> Result<Vec<cl_device_id>, cl_int> {
    init_loader();
    let mut n: cl_uint = 0;
    // SAFETY: props is 0-terminated; only the count is written.
    let err = unsafe { clCreateSubDevices(d, props.as_ptr(), 0, ptr::null_mut(), &mut n) };
    if err != CL_SUCCESS {
        return Err(err);
    }
    let mut out = vec![ptr::null_mut(); n as usize];
    let mut n2: cl_uint = 0;
    // SAFETY: out has room for n devices.
    unsafe { cl!(clCreateSubDevices(d, props.as_ptr(), n, out.as_mut_ptr(), &mut n2)) };
    assert_eq!(n, n2);
    Ok(out)
}

#[track_caller]
fn partition(d: cl_device_id, props: &[Prop]) -> Vec<cl_device_id> {
    try_partition(d, props).unwrap_or_else(|e| panic!("clCreateSubDevices({props:?}): {}", error_name(e)))
}

fn release(devices: &[cl_device_id]) {
    for &d in devices {
        // SAFETY: a sub-device we hold a reference to.
        unsafe { cl!(clReleaseDevice(d)) };
    }
}

fn ref_count(d: cl_device_id) -> cl_uint {
    device_info::<cl_uint>(d, CL_DEVICE_REFERENCE_COUNT)
}

/// A TestEnv (context of `context_devices`, in-order queue on `d`).
fn env_on(d: cl_device_id, context_devices: &[cl_device_id]) -> TestEnv {
    let context = context_for(context_devices);
    let queue = queue_for(&context, d, 0);
    let dev = device(DeviceKind::Cpu).unwrap();
    TestEnv { device: TestDevice { id: d, name: device_info_string(d, CL_DEVICE_NAME), ..dev }, context, queue }
}

#[test]
fn the_cpu_device_lists_its_partition_schemes_and_the_gen_device_none() {
    let cpu = cpu();
    let props = device_info_array::<Prop>(cpu, CL_DEVICE_PARTITION_PROPERTIES);
    assert!(props.contains(&EQUALLY) && props.contains(&BY_COUNTS), "{props:?}");
    assert_eq!(device_info::<cl_uint>(cpu, CL_DEVICE_PARTITION_MAX_SUB_DEVICES) as usize, units(cpu));
    assert!(device_info::<cl_device_id>(cpu, CL_DEVICE_PARENT_DEVICE).is_null());
    let domains = device_info::<cl_device_affinity_domain>(cpu, CL_DEVICE_PARTITION_AFFINITY_DOMAIN);
    // Affinity partitioning is listed exactly when some domain is.
    assert_eq!(props.contains(&BY_AFFINITY), domains != 0, "{props:?} {domains:#x}");

    let gen = device(DeviceKind::Gpu).expect("the Gen device").id;
    assert_eq!(device_info_array::<Prop>(gen, CL_DEVICE_PARTITION_PROPERTIES), vec![0]);
    assert_eq!(device_info::<cl_uint>(gen, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0);
    for props in [[EQUALLY, 1, 0, 0], [BY_COUNTS, 1, LIST_END, 0], [BY_AFFINITY, NEXT as Prop, 0, 0]] {
        expect_error("clCreateSubDevices(gen)", try_partition(gen, &props).unwrap_err(), CL_INVALID_VALUE);
    }
}

#[test]
fn partition_equally_and_the_sub_devices_info() {
    let cpu = cpu();
    let n = units(cpu);
    let subs = partition(cpu, &[EQUALLY, 1, 0]);
    assert_eq!(subs.len(), n);
    for &s in &subs {
        assert_ne!(s, cpu);
        assert_eq!(units(s), 1);
        assert_eq!(device_info::<cl_device_id>(s, CL_DEVICE_PARENT_DEVICE), cpu);
        assert_eq!(device_info_array::<Prop>(s, CL_DEVICE_PARTITION_TYPE), vec![EQUALLY, 1, 0]);
        assert_eq!(device_info::<cl_uint>(s, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 1);
        assert_eq!(ref_count(s), 1);
        assert_eq!(device_info::<cl_device_type>(s, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_CPU);
    }
    release(&subs);
    // The whole device in one sub-device is no further partition (the CTS's api
    // negative_create_sub_devices): CL_DEVICE_PARTITION_FAILED, as for a one-unit sub-device.
    // SAFETY: valid device and property list; no output array.
    let e = |d: cl_device_id, props: &[Prop]| unsafe {
        clCreateSubDevices(d, props.as_ptr(), 0, ptr::null_mut(), ptr::null_mut())
    };
    expect_error("equally n", e(cpu, &[EQUALLY, n as Prop, 0]), CL_DEVICE_PARTITION_FAILED);
    expect_error("by counts n", e(cpu, &[BY_COUNTS, n as Prop, LIST_END, 0]), CL_DEVICE_PARTITION_FAILED);
    let ones = partition(cpu, &[EQUALLY, 1, 0]);
    expect_error("a one-unit sub-device, equally 1", e(ones[0], &[EQUALLY, 1, 0]), CL_DEVICE_PARTITION_FAILED);
    release(&ones);
}

#[test]
fn partition_by_counts_and_again() {
    let cpu = cpu();
    let n = units(cpu);
    if n < 2 {
        println!("note: {n} compute unit: by-counts splits need two");
        return;
    }
    let subs = partition(cpu, &[BY_COUNTS, 1, (n - 1) as Prop, LIST_END, 0]);
    assert_eq!(subs.iter().map(|&s| units(s)).collect::<Vec<_>>(), vec![1, n - 1]);
    assert_eq!(
        device_info_array::<Prop>(subs[1], CL_DEVICE_PARTITION_TYPE),
        vec![BY_COUNTS, 1, (n - 1) as Prop, LIST_END, 0]
    );
    release(&subs);
    if n < 3 {
        println!("note: {n} compute units: partitioning a sub-device again needs one of two units");
        return;
    }
    // A sub-device of n - 1 units, partitioned again: the grandchildren's parent is it.
    let all = partition(cpu, &[BY_COUNTS, (n - 1) as Prop, LIST_END, 0]);
    assert_eq!(all.len(), 1);
    let grand = partition(all[0], &[EQUALLY, 1, 0]);
    assert_eq!(grand.len(), n - 1);
    for &g in &grand {
        assert_eq!(device_info::<cl_device_id>(g, CL_DEVICE_PARENT_DEVICE), all[0]);
        assert_eq!(units(g), 1);
    }
    // Releasing the parent first is safe: its children hold it.
    release(&all);
    release(&grand);
}

#[test]
fn partition_errors() {
    let cpu = cpu();
    let n = units(cpu) as Prop;
    let e = |props: &[Prop]| try_partition(cpu, props).unwrap_err();
    expect_error("NULL properties", e_null(cpu), CL_INVALID_VALUE);
    expect_error("unknown scheme", e(&[0x4242, 1, 0]), CL_INVALID_VALUE);
    expect_error("equally 0", e(&[EQUALLY, 0, 0]), CL_INVALID_VALUE);
    expect_error("two schemes", e(&[EQUALLY, 1, EQUALLY, 1, 0]), CL_INVALID_VALUE);
    expect_error("equally n+1", e(&[EQUALLY, n + 1, 0]), CL_INVALID_DEVICE_PARTITION_COUNT);
    expect_error("counts > units", e(&[BY_COUNTS, n, 1, LIST_END, 0]), CL_INVALID_DEVICE_PARTITION_COUNT);
    expect_error("negative count", e(&[BY_COUNTS, -1, LIST_END, 0]), CL_INVALID_DEVICE_PARTITION_COUNT);
    let many: Vec<Prop> =
        [BY_COUNTS].into_iter().chain(std::iter::repeat_n(1, n as usize + 1)).chain([LIST_END, 0]).collect();
    expect_error("more sub-devices than units", e(&many), CL_INVALID_DEVICE_PARTITION_COUNT);
    expect_error("empty counts", e(&[BY_COUNTS, LIST_END, 0]), CL_INVALID_DEVICE_PARTITION_COUNT);
    expect_error("not a domain", e(&[BY_AFFINITY, 0x3, 0]), CL_INVALID_VALUE);
    // A domain the device does not list is not supported.
    let listed = device_info::<cl_device_affinity_domain>(cpu, CL_DEVICE_PARTITION_AFFINITY_DOMAIN);
    if let Some(&missing) = DOMAINS.iter().find(|&&d| listed & d == 0) {
        expect_error("unlisted domain", e(&[BY_AFFINITY, missing as Prop, 0]), CL_INVALID_VALUE);
    }
    // num_devices smaller than the sub-devices the scheme makes.
    let mut out = [ptr::null_mut(); 1];
    if n >= 2 {
        let props = [EQUALLY, 1, 0];
        // SAFETY: out has room for 1 device, which is what num_devices says.
        let err = unsafe { clCreateSubDevices(cpu, props.as_ptr(), 1, out.as_mut_ptr(), ptr::null_mut()) };
        expect_error("num_devices too small", err, CL_INVALID_VALUE);
        assert!(out[0].is_null(), "a device was written on failure");
    }
    // SAFETY: an invalid device handle (NULL).
    let err =
        unsafe { clCreateSubDevices(ptr::null_mut(), [EQUALLY, 1, 0].as_ptr(), 0, ptr::null_mut(), ptr::null_mut()) };
    expect_error("NULL device", err, CL_INVALID_DEVICE);
}

fn e_null(d: cl_device_id) -> cl_int {
    let mut n = 0;
    // SAFETY: NULL properties; only the count would be written.
    unsafe { clCreateSubDevices(d, ptr::null(), 0, ptr::null_mut(), &mut n) }
}

/// Every domain the device lists splits it into two or more sub-devices of that domain (the
/// CTS's buffer_migrate and image_migrate partition by each listed domain and fail on any
/// error); NEXT_PARTITIONABLE picks the first of them.
#[test]
fn partition_by_affinity_domain() {
    let cpu = cpu();
    let n = units(cpu);
    let listed = device_info::<cl_device_affinity_domain>(cpu, CL_DEVICE_PARTITION_AFFINITY_DOMAIN);
    if listed == 0 {
        println!("note: the host describes no affinity domain");
        return;
    }
    assert_ne!(listed & NEXT, 0, "NEXT_PARTITIONABLE goes with any domain");
    let mut first_split = None;
    for &d in DOMAINS.iter().filter(|&&d| listed & d != 0) {
        match try_partition(cpu, &[BY_AFFINITY, d as Prop, 0]) {
            Ok(subs) => {
                assert!(subs.len() >= 2, "domain {d:#x}: {} sub-device", subs.len());
                assert!(subs.iter().map(|&s| units(s)).sum::<usize>() <= n);
                for &s in &subs {
                    assert_eq!(device_info_array::<Prop>(s, CL_DEVICE_PARTITION_TYPE), vec![BY_AFFINITY, d as Prop, 0]);
                    assert_eq!(device_info::<cl_device_id>(s, CL_DEVICE_PARENT_DEVICE), cpu);
                }
                first_split.get_or_insert((d, subs.len()));
                release(&subs);
            }
            Err(err) => panic!("listed domain {d:#x} does not partition the device: {}", error_name(err)),
        }
    }
    match (try_partition(cpu, &[BY_AFFINITY, NEXT as Prop, 0]), first_split) {
        (Ok(subs), Some((d, count))) => {
            assert_eq!(subs.len(), count);
            assert_eq!(device_info_array::<Prop>(subs[0], CL_DEVICE_PARTITION_TYPE), vec![BY_AFFINITY, d as Prop, 0]);
            release(&subs);
        }
        (got, expected) => panic!("NEXT_PARTITIONABLE gave {got:?}, the domains {expected:?}"),
    }
}

#[test]
fn sub_device_reference_counts() {
    let cpu = cpu();
    let subs = partition(cpu, &[EQUALLY, 1, 0]);
    let s = subs[0];
    // SAFETY: valid devices.
    unsafe {
        cl!(clRetainDevice(s));
        assert_eq!(ref_count(s), 2);
        cl!(clReleaseDevice(s));
        assert_eq!(ref_count(s), 1);
        // Root devices are not counted.
        cl!(clRetainDevice(cpu));
        cl!(clReleaseDevice(cpu));
        assert_eq!(ref_count(cpu), 1);
    }
    // A context and a queue hold the sub-device: release it, then use them.
    let env = env_on(s, &[s]);
    assert_eq!(ref_count(s), 1);
    release(&subs);
    // The released handle may not be named any more: build for the context's devices.
    let source = "__kernel void k(__global int* p) { p[get_global_id(0)] = 7 * (int)get_global_id(0); }";
    let program = program_from_source(&env.context, source);
    // SAFETY: a valid program; no device list, no options, no callback.
    unsafe { cl!(clBuildProgram(program.raw(), 0, ptr::null(), ptr::null(), None, ptr::null_mut())) };
    let k = kernel_of(&program, "k");
    let buf = env.buffer(CL_MEM_READ_WRITE, 64 * 4);
    k.set_mem(0, &buf);
    env.run(&k, &[64], None);
    assert_eq!(env.read::<i32>(&buf, 64), (0..64).map(|i| 7 * i).collect::<Vec<i32>>());
    // The context still answers with its device.
    assert_eq!(context_info_array::<cl_device_id>(env.context.raw(), CL_CONTEXT_DEVICES), vec![s]);
    // A released sub-device's handle is no longer valid.
    // SAFETY: the context keeps the object alive, so its header can be read.
    expect_error("clRetainDevice(released)", unsafe { clRetainDevice(s) }, CL_INVALID_DEVICE);
}

const KERNELS: &str = r#"
__kernel void scale(__global int* p, int k) { p[get_global_id(0)] = k * (int)get_global_id(0); }
// Waits for flag[0] (a bounded number of polls, so that launches that do not run at the same
// time fail the test instead of hanging it); out[0] = what it saw.
__kernel void wait_flag(__global int* flag, __global int* out) {
    int seen = 0;
    for (uint i = 0; i < 200000000u && seen == 0; i++)
        seen = atomic_add(flag, 0);
    out[0] = seen;
}
__kernel void set_flag(__global int* flag) { atomic_xchg(flag, 1); }
"#;

/// A program built for the parent device in a context of the parent and two sub-devices runs
/// on each sub-device; one built for a sub-device alone runs there.
#[test]
fn kernels_on_two_sub_devices() {
    let cpu = cpu();
    if units(cpu) < 2 {
        println!("note: one compute unit: no two sub-devices");
        return;
    }
    let subs = partition(cpu, &[EQUALLY, 1, 0]);
    let (a, b) = (subs[0], subs[1]);
    let context = context_for(&[cpu, a, b]);
    let program = build_program(program_from_source(&context, KERNELS), &[cpu], "").unwrap_or_else(|e| panic!("{e}"));
    for (i, &s) in [a, b].iter().enumerate() {
        assert_eq!(program_build_info::<cl_build_status>(program.raw(), s, CL_PROGRAM_BUILD_STATUS), CL_BUILD_SUCCESS);
        let queue = queue_for(&context, s, 0);
        let k = kernel_of(&program, "scale");
        let n = 10_000;
        // SAFETY: a valid context; no host pointer.
        let buf = unsafe {
            Mem::from_raw(cl_create!(clCreateBuffer(context.raw(), CL_MEM_READ_WRITE, n * 4, ptr::null_mut())))
        };
        k.set_mem(0, &buf);
        k.set_arg(1, &(i as i32 + 3));
        enqueue_nd(queue.raw(), &k, None, &[n], None, &[]).wait();
        let got: Vec<i32> = read_buffer(queue.raw(), &buf, 0, n);
        assert_eq!(got, (0..n as i32).map(|g| (i as i32 + 3) * g).collect::<Vec<_>>(), "on sub-device {i}");
    }
    // Built for one sub-device only: the other has no executable.
    let program = build_program(program_from_source(&context, KERNELS), &[b], "").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(program_build_info::<cl_build_status>(program.raw(), b, CL_PROGRAM_BUILD_STATUS), CL_BUILD_SUCCESS);
    assert_eq!(program_build_info::<cl_build_status>(program.raw(), a, CL_PROGRAM_BUILD_STATUS), CL_BUILD_NONE);
    release(&subs);
}

/// A launch on one sub-device waits for a flag that only a launch on its sibling sets: both
/// must run at once, each on its own compute unit.
#[test]
fn sibling_sub_devices_run_concurrently() {
    let cpu = cpu();
    if units(cpu) < 2 {
        println!("note: one compute unit: no two sub-devices");
        return;
    }
    let subs = partition(cpu, &[EQUALLY, 1, 0]);
    let (a, b) = (subs[0], subs[1]);
    let env_a = env_on(a, &[a, b]);
    let queue_b = queue_for(&env_a.context, b, 0);
    let program =
        build_program(program_from_source(&env_a.context, KERNELS), &[], "").unwrap_or_else(|e| panic!("{e}"));
    let (waiter, setter) = (kernel_of(&program, "wait_flag"), kernel_of(&program, "set_flag"));
    let flag = env_a.buffer_from(CL_MEM_READ_WRITE, &[0i32]);
    let out = env_a.buffer_from(CL_MEM_READ_WRITE, &[-1i32]);
    waiter.set_mem(0, &flag);
    waiter.set_mem(1, &out);
    setter.set_mem(0, &flag);
    let w = env_a.enqueue(&waiter, &[1], None);
    // SAFETY: a valid queue.
    unsafe { cl!(clFlush(env_a.q())) };
    let s = enqueue_nd(queue_b.raw(), &setter, None, &[1], None, &[]);
    w.wait();
    s.wait();
    assert_eq!(env_a.read::<i32>(&out, 1), vec![1], "the launch on sub-device A never saw B's flag");
    release(&subs);
}
