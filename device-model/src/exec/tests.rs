use super::*;
use softcl_compiler::{AddressSpace, KernelArg};
use std::collections::HashMap;
use std::sync::atomic::AtomicU32;

fn kernel_info(name: &str, barrier_count: u32) -> KernelInfo {
    KernelInfo { name: name.into(), barrier_count, ..KernelInfo::default() }
}

const LIMITS: Limits = Limits { max_work_group_size: 4096, local_mem_size: 65536, printf_buffer_size: 1 << 16 };

/// Linear local id -> local id, as compiled code decomposes it (with this group's size).
fn local_id(ctx: &WorkGroupContext, i: u32) -> [u64; 3] {
    let [l0, l1, _] = ctx.local_size;
    let i = u64::from(i);
    [i % l0, (i / l0) % l1, i / (l0 * l1)]
}

fn global_id(ctx: &WorkGroupContext, i: u32) -> [u64; 3] {
    let lid = local_id(ctx, i);
    std::array::from_fn(|d| ctx.group_id[d] * ctx.enqueued_local_size[d] + lid[d] + ctx.global_offset[d])
}

/// Counts how often each global id runs.
struct Coverage {
    info: KernelInfo,
    offset: [usize; 3],
    global: [usize; 3],
    hits: Vec<AtomicU32>,
    out_of_range: AtomicU32,
}

impl Coverage {
    fn new(offset: [usize; 3], global: [usize; 3]) -> Self {
        let n = global.iter().product();
        Self {
            info: kernel_info("coverage", 0),
            offset,
            global,
            hits: (0..n).map(|_| AtomicU32::new(0)).collect(),
            out_of_range: AtomicU32::new(0),
        }
    }
    fn record(&self, gid: [u64; 3]) {
        let mut index = 0;
        for d in (0..3).rev() {
            let g = gid[d] as usize;
            if g < self.offset[d] || g >= self.offset[d] + self.global[d] {
                self.out_of_range.fetch_add(1, Ordering::SeqCst);
                return;
            }
            index = index * self.global[d] + (g - self.offset[d]);
        }
        self.hits[index].fetch_add(1, Ordering::SeqCst);
    }
    fn assert_each_once(&self) {
        assert_eq!(self.out_of_range.load(Ordering::SeqCst), 0, "global id outside the NDRange");
        for (i, h) in self.hits.iter().enumerate() {
            assert_eq!(h.load(Ordering::SeqCst), 1, "global id #{i} ran {} times", h.load(Ordering::SeqCst));
        }
    }
}

impl GroupKernel for Coverage {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32 {
        assert_eq!(resume_at, 0);
        for i in first..end {
            self.record(global_id(ctx, i));
        }
        FINISHED
    }
}

/// (work_dim, offset, global, local).
type Case = (u32, [usize; 3], [usize; 3], [usize; 3]);
/// Uniform and non-uniform NDRanges, 1D/2D/3D, with offsets.
const CASES: &[Case] = &[
    (1, [0, 0, 0], [64, 1, 1], [16, 1, 1]),
    (1, [5, 0, 0], [100, 1, 1], [16, 1, 1]),
    (1, [0, 0, 0], [1, 1, 1], [1, 1, 1]),
    (1, [3, 0, 0], [7, 1, 1], [32, 1, 1]),
    (2, [0, 0, 0], [32, 8, 1], [8, 4, 1]),
    (2, [1, 2, 0], [33, 9, 1], [8, 4, 1]),
    (3, [0, 0, 0], [8, 6, 4], [4, 3, 2]),
    (3, [7, 11, 13], [9, 7, 5], [4, 3, 2]),
    (3, [0, 0, 0], [5, 5, 5], [8, 8, 8]),
];

#[test]
fn enumeration_covers_every_global_id_once() {
    for &(dim, offset, global, local) in CASES {
        let range = NdRange::new(dim, offset, global, local).unwrap();
        let k = Coverage::new(offset, global);
        let mut ctx = range.base_context();
        for g in 0..range.group_count {
            let (id, n) = range.set_group(&mut ctx, g);
            assert_eq!(ctx.group_id, id.map(|x| x as u64));
            assert_eq!(n as u64, ctx.local_size.iter().product::<u64>());
            assert!((0..3).all(|d| ctx.local_size[d] >= 1 && ctx.local_size[d] <= local[d] as u64));
            k.run(&[], &ctx, 0, n, 0);
        }
        k.assert_each_once();
    }
}

#[test]
fn context_fields() {
    let range = NdRange::new(2, [1, 2, 9], [33, 9, 7], [8, 4, 3]).unwrap();
    // Dimensions beyond work_dim are normalised.
    assert_eq!(range.global, [33, 9, 1]);
    assert_eq!(range.local, [8, 4, 1]);
    assert_eq!(range.offset, [1, 2, 0]);
    assert_eq!(range.num_groups, [5, 3, 1]);
    assert_eq!(range.group_count, 15);
    let mut ctx = range.base_context();
    assert_eq!(ctx.work_dim, 2);
    assert_eq!(ctx.enqueued_local_size, [8, 4, 1]);
    assert_eq!(ctx.global_size, [33, 9, 1]);
    assert_eq!(ctx.global_offset, [1, 2, 0]);
    assert_eq!(ctx.num_groups, [5, 3, 1]);
    // The last group in both dimensions is partial.
    let (id, n) = range.set_group(&mut ctx, 14);
    assert_eq!(id, [4, 2, 0]);
    assert_eq!(ctx.local_size, [1, 1, 1]);
    assert_eq!(n, 1);
    let (id, n) = range.set_group(&mut ctx, 9);
    assert_eq!(id, [4, 1, 0]);
    assert_eq!(ctx.local_size, [1, 4, 1]);
    assert_eq!(n, 4);
}

#[test]
fn bad_geometry_is_an_error() {
    assert!(NdRange::new(0, [0; 3], [1; 3], [1; 3]).is_err());
    assert!(NdRange::new(4, [0; 3], [1; 3], [1; 3]).is_err());
    assert!(NdRange::new(1, [0; 3], [8, 1, 1], [0, 1, 1]).is_err());
    assert!(NdRange::new(1, [usize::MAX, 0, 0], [2, 1, 1], [1, 1, 1]).is_err());
    assert!(NdRange::new(3, [0; 3], [usize::MAX; 3], [1; 3]).is_err());
    // A zero global size is an empty range, not an error.
    assert_eq!(NdRange::new(1, [0; 3], [0, 1, 1], [4, 1, 1]).unwrap().group_count, 0);
}

#[test]
fn sum_over_groups_matches_brute_force() {
    for &(dim, offset, global, local) in CASES {
        let range = NdRange::new(dim, offset, global, local).unwrap();
        for simd in [8u64, 16, 32] {
            let mut ctx = range.base_context();
            let brute: u128 = (0..range.group_count)
                .map(|g| u128::from(u64::from(range.set_group(&mut ctx, g).1).div_ceil(simd)))
                .sum();
            assert_eq!(range.sum_over_groups(|n| n.div_ceil(simd)), brute);
        }
        assert_eq!(range.sum_over_groups(|n| n), range.work_items());
    }
}

#[test]
fn simd_chunking() {
    assert_eq!(simd_threads(16, 16).collect::<Vec<_>>(), [(0, 16)]);
    assert_eq!(simd_threads(40, 16).collect::<Vec<_>>(), [(0, 16), (16, 32), (32, 40)]);
    assert_eq!(simd_threads(5, 8).collect::<Vec<_>>(), [(0, 5)]);
    assert_eq!(simd_threads(0, 8).count(), 0);
    assert_eq!(simd_threads(256, 32).count(), 8);
}

#[test]
fn aligned_buffer() {
    let mut b = AlignedBuf::default();
    b.resize(0).unwrap();
    assert!(!b.as_mut_ptr().is_null());
    b.resize(300).unwrap();
    assert_eq!(b.len(), 300);
    assert_eq!(b.as_mut_ptr() as usize % BLOCK_ALIGN, 0);
    b.bytes_mut().fill(7);
    assert!(b.bytes().iter().all(|&x| x == 7));
    let p = b.as_mut_ptr();
    b.resize(200).unwrap();
    assert_eq!(p, b.as_mut_ptr(), "shrinking keeps the allocation");
}

fn job(kernel: Arc<dyn GroupKernel>, range: NdRange, schedule: Schedule, observer: Option<Arc<dyn Observer>>) -> Job {
    Job::new(kernel, &[], &[], range, schedule, observer, LIMITS).unwrap()
}

#[test]
fn executor_covers_every_global_id_once() {
    let exec = Executor::new(3, "test");
    for &(dim, offset, global, local) in CASES {
        for schedule in [Schedule::WholeGroup, Schedule::Simd(8), Schedule::Simd(16)] {
            let range = NdRange::new(dim, offset, global, local).unwrap();
            let k = Arc::new(Coverage::new(offset, global));
            exec.execute(job(k.clone(), range, schedule, None)).unwrap();
            k.assert_each_once();
        }
    }
    // Many groups: exercises chunked claiming.
    let range = NdRange::new(1, [0; 3], [100_003, 1, 1], [7, 1, 1]).unwrap();
    let k = Arc::new(Coverage::new([0; 3], [100_003, 1, 1]));
    exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
    k.assert_each_once();
}

#[test]
fn empty_range_runs_nothing() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [0, 1, 1], [4, 1, 1]).unwrap();
    let k = Arc::new(Coverage::new([0; 3], [0, 1, 1]));
    exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
}

type Calls = Vec<(u32, u32, u32)>;

/// A kernel with two barriers that logs every call.
struct Regions {
    info: KernelInfo,
    /// Per group id: (resume point, first, end) of each call.
    log: Mutex<HashMap<[u64; 3], Calls>>,
}

impl GroupKernel for Regions {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32 {
        self.log.lock().entry(ctx.group_id).or_default().push((resume_at, first, end));
        match resume_at {
            0 => 1,
            1 => 2,
            _ => FINISHED,
        }
    }
}

#[test]
fn regions_run_in_order_per_thread() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [40, 1, 1], [24, 1, 1]).unwrap();
    for (schedule, full, partial) in [
        (Schedule::WholeGroup, vec![(0, 24)], vec![(0, 16)]),
        (Schedule::Simd(8), vec![(0, 8), (8, 16), (16, 24)], vec![(0, 8), (8, 16)]),
        (Schedule::Simd(16), vec![(0, 16), (16, 24)], vec![(0, 16)]),
    ] {
        let k = Arc::new(Regions { info: kernel_info("regions", 2), log: Mutex::new(HashMap::new()) });
        exec.execute(job(k.clone(), range, schedule, None)).unwrap();
        let log = k.log.lock();
        assert_eq!(log.len(), 2);
        for (group, threads) in [([0, 0, 0], &full), ([1, 0, 0], &partial)] {
            let expected: Vec<_> =
                [0, 1, 2].iter().flat_map(|&r| threads.iter().map(move |&(f, e)| (r, f, e))).collect();
            assert_eq!(log[&group], expected, "{schedule:?} group {group:?}");
        }
    }
}

/// Work-items 0..8 stop at barrier 1, the others finish.
struct Diverging(KernelInfo);
impl GroupKernel for Diverging {
    fn info(&self) -> &KernelInfo {
        &self.0
    }
    fn run(&self, _: &[u8], _: &WorkGroupContext, first: u32, _: u32, resume_at: u32) -> u32 {
        if first == 0 && resume_at == 0 {
            1
        } else {
            FINISHED
        }
    }
}

#[test]
fn threads_reaching_different_barriers_is_an_error() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [64, 1, 1], [32, 1, 1]).unwrap();
    let k = Arc::new(Diverging(kernel_info("diverging", 1)));
    let err = exec.execute(job(k, range, Schedule::Simd(8), None)).unwrap_err();
    assert_eq!(err, LaunchError::Invalid("work-items of a work-group reached different barriers".into()));
}

/// Returns a barrier id the kernel does not have.
struct BadBarrier(KernelInfo);
impl GroupKernel for BadBarrier {
    fn info(&self) -> &KernelInfo {
        &self.0
    }
    fn run(&self, _: &[u8], _: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        5
    }
}

#[test]
fn unknown_barrier_id_is_an_error() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [64, 1, 1], [32, 1, 1]).unwrap();
    let k = Arc::new(BadBarrier(kernel_info("bad", 1)));
    assert!(matches!(exec.execute(job(k, range, Schedule::WholeGroup, None)), Err(LaunchError::Invalid(_))));
}

/// Panics in work-group 3.
struct Panicking(KernelInfo);
impl GroupKernel for Panicking {
    fn info(&self) -> &KernelInfo {
        &self.0
    }
    fn run(&self, _: &[u8], ctx: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        if ctx.group_id[0] == 3 {
            panic!("boom in group 3");
        }
        FINISHED
    }
}

#[test]
fn a_panic_becomes_an_error_and_the_pool_survives() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [64, 1, 1], [4, 1, 1]).unwrap();
    for _ in 0..2 {
        let k = Arc::new(Panicking(kernel_info("panicking", 0)));
        match exec.execute(job(k, range, Schedule::WholeGroup, None)) {
            Err(LaunchError::Invalid(m)) => assert!(m.contains("boom in group 3"), "{m}"),
            other => panic!("expected an error, got {other:?}"),
        }
        // The same pool still runs launches.
        let k = Arc::new(Coverage::new([0; 3], [64, 1, 1]));
        exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
        k.assert_each_once();
    }
}

fn arg(name: &str, kind: ArgKind, offset: usize) -> KernelArg {
    KernelArg {
        name: name.into(),
        type_name: String::new(),
        address_space: if kind == ArgKind::Local { AddressSpace::Local } else { AddressSpace::Global },
        access: Default::default(),
        qualifiers: Default::default(),
        kind,
        offset,
        size: 8,
        align: 8,
    }
}

/// Checks the layout of local memory and the argument block it sees.
struct LocalLayout {
    info: KernelInfo,
    errors: Mutex<Vec<String>>,
    calls: AtomicU32,
}

impl GroupKernel for LocalLayout {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, args: &[u8], ctx: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let read = |o: usize| u64::from_ne_bytes(args[o..o + 8].try_into().unwrap());
        let local = ctx.local_memory as u64;
        let mut errors = Vec::new();
        if !(args.as_ptr() as usize).is_multiple_of(BLOCK_ALIGN) {
            errors.push("argument block not aligned".to_string());
        }
        if !local.is_multiple_of(BLOCK_ALIGN as u64) || !(ctx.work_item_state as usize).is_multiple_of(BLOCK_ALIGN) {
            errors.push("local memory or state not aligned".into());
        }
        // static 100 bytes -> first __local argument at 128; its 200 bytes -> next at 128+256.
        if read(8) != local + 128 {
            errors.push(format!("first __local argument at +{}", read(8).wrapping_sub(local)));
        }
        if read(24) != local + 384 {
            errors.push(format!("second __local argument at +{}", read(24).wrapping_sub(local)));
        }
        if read(0) != 0xdead_beef || read(16) != 42 {
            errors.push("other arguments changed".into());
        }
        self.errors.lock().extend(errors);
        FINISHED
    }
}

fn layout_kernel() -> LocalLayout {
    LocalLayout {
        info: KernelInfo {
            name: "layout".into(),
            args: vec![
                arg("out", ArgKind::Buffer { address_space: AddressSpace::Global }, 0),
                arg("a", ArgKind::Local, 8),
                arg("n", ArgKind::Value, 16),
                arg("b", ArgKind::Local, 24),
            ],
            arg_block_size: 32,
            static_local_mem_size: 100,
            work_item_state_size: 24,
            ..KernelInfo::default()
        },
        errors: Mutex::new(Vec::new()),
        calls: AtomicU32::new(0),
    }
}

fn layout_args() -> Vec<u8> {
    let mut args = vec![0u8; 32];
    args[0..8].copy_from_slice(&0xdead_beef_u64.to_ne_bytes());
    args[16..24].copy_from_slice(&42u64.to_ne_bytes());
    args
}

#[test]
fn local_arguments_point_at_aligned_worker_memory() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [256, 1, 1], [16, 1, 1]).unwrap();
    let k = Arc::new(layout_kernel());
    let args = layout_args();
    let job = Job::new(k.clone(), &args, &[(3, 64), (1, 200)], range, Schedule::WholeGroup, None, LIMITS).unwrap();
    exec.execute(job).unwrap();
    assert_eq!(k.calls.load(Ordering::SeqCst), 16);
    assert!(k.errors.lock().is_empty(), "{:?}", k.errors.lock());
}

#[test]
fn launch_checks() {
    let range = NdRange::new(1, [0; 3], [256, 1, 1], [16, 1, 1]).unwrap();
    let k: Arc<dyn GroupKernel> = Arc::new(layout_kernel());
    let args = layout_args();
    let new = |args: &[u8], sizes: &[(usize, usize)], range, limits| {
        Job::new(k.clone(), args, sizes, range, Schedule::WholeGroup, None, limits).map(|_| ())
    };
    assert!(new(&args, &[(1, 8), (3, 8)], range, LIMITS).is_ok());
    // Argument block too short.
    assert!(matches!(new(&args[..16], &[(1, 8), (3, 8)], range, LIMITS), Err(LaunchError::Invalid(_))));
    // A __local argument without a size; a size for a non-__local argument.
    assert!(matches!(new(&args, &[(1, 8)], range, LIMITS), Err(LaunchError::Invalid(_))));
    assert!(matches!(new(&args, &[(1, 8), (3, 8), (2, 8)], range, LIMITS), Err(LaunchError::Invalid(_))));
    assert!(matches!(new(&args, &[(1, 8), (3, 8), (9, 8)], range, LIMITS), Err(LaunchError::Invalid(_))));
    // Too much __local memory (100 static + 65500).
    assert!(matches!(new(&args, &[(1, 65_500), (3, 8)], range, LIMITS), Err(LaunchError::OutOfResources(_))));
    assert!(matches!(new(&args, &[(1, usize::MAX), (3, 8)], range, LIMITS), Err(LaunchError::OutOfResources(_))));
    // Work-group bigger than the device allows.
    let small = Limits { max_work_group_size: 8, ..LIMITS };
    assert!(matches!(new(&args, &[(1, 8), (3, 8)], range, small), Err(LaunchError::Invalid(_))));
    // reqd_work_group_size must match.
    let mut info = kernel_info("reqd", 0);
    info.reqd_work_group_size = Some([8, 1, 1]);
    let reqd: Arc<dyn GroupKernel> = Arc::new(Regions { info, log: Mutex::new(HashMap::new()) });
    assert!(Job::new(reqd.clone(), &[], &[], range, Schedule::WholeGroup, None, LIMITS).is_err());
    let ok = NdRange::new(1, [0; 3], [256, 1, 1], [8, 1, 1]).unwrap();
    assert!(Job::new(reqd.clone(), &[], &[], ok, Schedule::WholeGroup, None, LIMITS).is_ok());
    // SIMD width.
    assert!(Job::new(reqd, &[], &[], ok, Schedule::Simd(4), None, LIMITS).is_err());
}

#[derive(Default)]
struct Counting {
    begins: AtomicU32,
    ends: AtomicU32,
    regions: AtomicU32,
    lanes: AtomicU32,
}

impl Observer for Counting {
    fn work_group_begin(&self, _: [usize; 3]) {
        self.begins.fetch_add(1, Ordering::SeqCst);
    }
    fn work_group_end(&self, _: [usize; 3]) {
        self.ends.fetch_add(1, Ordering::SeqCst);
    }
    fn thread_region(&self, _: [usize; 3], _: u32, lanes: u32, _: u32) {
        self.regions.fetch_add(1, Ordering::SeqCst);
        self.lanes.fetch_add(lanes, Ordering::SeqCst);
    }
}

#[test]
fn observer_sees_groups_and_thread_regions() {
    let exec = Executor::new(2, "test");
    // 3 groups: 24, 24, 12 work-items; SIMD8 -> 3 + 3 + 2 threads, 3 regions each.
    let range = NdRange::new(1, [0; 3], [60, 1, 1], [24, 1, 1]).unwrap();
    let k = Arc::new(Regions { info: kernel_info("regions", 2), log: Mutex::new(HashMap::new()) });
    let observer = Arc::new(Counting::default());
    exec.execute(job(k, range, Schedule::Simd(8), Some(observer.clone()))).unwrap();
    assert_eq!(observer.begins.load(Ordering::SeqCst), 3);
    assert_eq!(observer.ends.load(Ordering::SeqCst), 3);
    assert_eq!(observer.regions.load(Ordering::SeqCst), 8 * 3);
    assert_eq!(observer.lanes.load(Ordering::SeqCst), 60 * 3);
}

#[test]
fn concurrent_launches_on_one_executor() {
    let exec = Arc::new(Executor::new(2, "test"));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let exec = exec.clone();
            std::thread::spawn(move || {
                let global = [1000 + i, 1, 1];
                let range = NdRange::new(1, [i; 3], global, [10, 1, 1]).unwrap();
                let k = Arc::new(Coverage::new([i, 0, 0], global));
                exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
                k.assert_each_once();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Records the `ctx.printf` address of every call.
struct PrintfUser {
    info: KernelInfo,
    seen: Mutex<Vec<usize>>,
}

impl GroupKernel for PrintfUser {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _args: &[u8], ctx: &WorkGroupContext, _first: u32, _end: u32, _resume_at: u32) -> u32 {
        self.seen.lock().push(ctx.printf.addr());
        FINISHED
    }
}

#[test]
fn only_printf_kernels_get_one_printf_buffer_per_launch() {
    let exec = Executor::new(2, "test");
    let range = NdRange::new(1, [0; 3], [64, 1, 1], [8, 1, 1]).unwrap();
    for uses_printf in [true, false] {
        let info = KernelInfo { uses_printf, ..kernel_info("p", 0) };
        let k = Arc::new(PrintfUser { info, seen: Mutex::new(Vec::new()) });
        exec.execute(job(k.clone(), range, Schedule::Simd(8), None)).unwrap();
        let seen = k.seen.lock();
        assert_eq!(seen.len(), 8, "one call per hardware thread");
        assert!(seen.iter().all(|&a| a == seen[0]), "one buffer shared by the whole launch");
        assert_eq!(seen[0] != 0, uses_printf, "a buffer only for kernels that call printf");
    }
}

#[test]
fn printf_storage_is_reused_and_rezeroed() {
    let mut store = PrintfStore::new(64, None).unwrap();
    assert_eq!(store.header.capacity, 64);
    assert_eq!(store.header.data, store.storage.as_ptr().addr() as u64);
    store.storage[..10].fill(7);
    store.header.used.store(10, Ordering::SeqCst);
    assert_eq!(store.records(), &[7; 10]);
    let storage = store.into_storage();
    assert!(storage.iter().all(|&b| b == 0), "the written part is zeroed again");
    let address = storage.as_ptr();
    let again = PrintfStore::new(64, Some(storage)).unwrap();
    assert_eq!(again.storage.as_ptr(), address, "same size: reused");
    assert!(again.records().is_empty());
    // A reservation past the end (a failed printf) counts in `used` but only `capacity`
    // bytes are records.
    again.header.used.store(100, Ordering::SeqCst);
    assert_eq!(again.records().len(), 64);
    let other = PrintfStore::new(32, Some(again.into_storage())).unwrap();
    assert_eq!(other.storage.len(), 32, "another size: a new buffer");
}

/// Records the name of the thread each work-group runs on; each group spins for `spin`.
struct WhereRun {
    info: KernelInfo,
    spin: std::time::Duration,
    threads: Mutex<Vec<String>>,
}

impl WhereRun {
    fn new(name: &str, spin_us: u64) -> Arc<Self> {
        Arc::new(Self {
            info: kernel_info(name, 0),
            spin: std::time::Duration::from_micros(spin_us),
            threads: Mutex::new(Vec::new()),
        })
    }
    fn take_threads(&self) -> Vec<String> {
        std::mem::take(&mut *self.threads.lock())
    }
}

impl GroupKernel for WhereRun {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _: &[u8], _: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        let start = Instant::now();
        while start.elapsed() < self.spin {
            std::hint::spin_loop();
        }
        self.threads.lock().push(std::thread::current().name().unwrap_or("").to_string());
        FINISHED
    }
}

#[test]
fn inline_rule() {
    assert!(run_inline(1, 8, None), "one work-group: nothing to share");
    assert!(run_inline(100, 1, None), "one thread");
    assert!(!run_inline(2, 2, None), "unknown cost: the pool");
    assert!(run_inline(2, 2, Some(1_000)), "2 us in all");
    assert!(run_inline(4, 2, Some(4_000)), "16 us in all: less than 8 us + a wake-up");
    assert!(!run_inline(2, 2, Some(50_000)));
    assert!(!run_inline(1000, 2, Some(1_000)), "1 ms in all");
    assert!(!run_inline(16, 16, Some(1_500)), "24 us on one thread against 11.5 us on 16");
}

#[test]
fn small_launches_run_on_the_launching_thread_and_big_ones_on_the_pool() {
    let exec = Executor::new(2, "where");
    let me = std::thread::current().name().unwrap_or("").to_string();
    let range = |groups: usize| NdRange::new(1, [0; 3], [4 * groups, 1, 1], [4, 1, 1]).unwrap();
    let pool_launches = || exec.pool_launches.load(Ordering::SeqCst);

    let one = WhereRun::new("one", 0);
    exec.execute(job(one.clone(), range(1), Schedule::WholeGroup, None)).unwrap();
    assert_eq!(one.take_threads(), vec![me.clone()], "one work-group runs on the launching thread");
    assert_eq!(pool_launches(), 0);

    // Slow work-groups: the pool, where a worker shares them with the launching thread.
    let slow = WhereRun::new("slow", 5_000);
    for launch in 1..=2 {
        exec.execute(job(slow.clone(), range(8), Schedule::WholeGroup, None)).unwrap();
        assert_eq!(pool_launches(), launch);
        let names = slow.take_threads();
        assert_eq!(names.len(), 8);
        assert!(names.iter().all(|n| *n == me || n.starts_with("softcl-where-")), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("softcl-where-")), "no worker took part: {names:?}");
    }

    // A cheap kernel: the pool the first time (its cost is unknown), then the launching thread.
    let cheap = WhereRun::new("cheap", 0);
    exec.execute(job(cheap.clone(), range(2), Schedule::WholeGroup, None)).unwrap();
    assert_eq!(pool_launches(), 3);
    assert_eq!(cheap.take_threads().len(), 2);
    // Tries a few times: a preempted thread may make one launch look expensive.
    let inline = (0..20).any(|_| {
        let before = pool_launches();
        exec.execute(job(cheap.clone(), range(2), Schedule::WholeGroup, None)).unwrap();
        let names = cheap.take_threads();
        assert_eq!(names.len(), 2);
        pool_launches() == before && names == vec![me.clone(), me.clone()]
    });
    assert!(inline, "cheap launches of two work-groups run on the launching thread");
}

#[test]
fn inline_launches_catch_panics_and_report_errors() {
    let exec = Executor::new(2, "inline-panic");
    // Group 3 of 4 panics; a single work-group runs on the launching thread.
    let range = NdRange::new(1, [0; 3], [16, 1, 1], [16, 1, 1]).unwrap();
    let k = Arc::new(Panicking(kernel_info("panicking", 0)));
    let err = exec.execute(job(k.clone(), range, Schedule::WholeGroup, None));
    assert!(err.is_ok(), "one group: group id 0 only");
    let range = NdRange::new(1, [0; 3], [16, 1, 1], [4, 1, 1]).unwrap();
    for _ in 0..3 {
        // Cheap: after the first launch these run on the launching thread.
        let err = exec.execute(job(k.clone(), range, Schedule::WholeGroup, None));
        assert!(matches!(err, Err(LaunchError::Invalid(ref m)) if m.contains("boom in group 3")), "{err:?}");
    }
    let k = Arc::new(Coverage::new([0; 3], [16, 1, 1]));
    exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
    k.assert_each_once();
}

/// A run of Gen counters as an observer is given it: first work-group, how many, counters.
type Run = ([usize; 3], u64, Vec<u64>);

/// Records the runs of Gen counters an observer is given.
#[derive(Default)]
struct Runs(Mutex<Vec<Run>>);

impl Observer for Runs {
    fn gen_counters(&self, first_group: [usize; 3], groups: u64, counters: &[u64]) {
        self.0.lock().push((first_group, groups, counters.to_vec()));
    }
}

#[test]
fn counter_runs_join_consecutive_equal_work_groups() {
    let runs = Runs::default();
    let o: Option<&dyn Observer> = Some(&runs);
    let mut run = CounterRun::default();
    let id = |x| [x, 0, 0];
    run.add(o, 0, id(0), &[1, 2]);
    run.add(o, 1, id(1), &[1, 2]);
    run.add(o, 2, id(2), &[1, 2]);
    // Different counters end the run.
    run.add(o, 3, id(3), &[1, 3]);
    // So does a gap in the linear ids, even with equal counters.
    run.add(o, 5, id(5), &[1, 3]);
    assert_eq!(runs.0.lock().len(), 2, "runs are handed over when they end, not before");
    run.flush(o);
    run.flush(o);
    let seen = runs.0.lock().clone();
    assert_eq!(
        seen,
        vec![(id(0), 3, vec![1, 2]), (id(3), 1, vec![1, 3]), (id(5), 1, vec![1, 3])],
        "three runs, each once"
    );
}

/// A Gen-instrumented kernel (one block, no sites) that fails in work-group `fails_in`.
struct GenKernel {
    info: KernelInfo,
    fails_in: Option<u64>,
}
impl GroupKernel for GenKernel {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _: &[u8], ctx: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        if Some(ctx.group_id[0]) == self.fails_in {
            99 // not a barrier of the kernel: an error
        } else {
            FINISHED
        }
    }
}

#[test]
fn a_stopped_launchs_counter_run_is_not_given_to_the_next_launch() {
    let gen = softcl_compiler::gen_abi::GenKernelInfo { blocks: vec![Default::default()], ..Default::default() };
    let info = KernelInfo { gen: Some(gen), ..kernel_info("gen", 0) };
    let mut scratch = Scratch::default();
    // Work-groups 0 and 1 make a run; work-group 2 stops the launch before it is handed over.
    let first = Arc::new(Runs::default());
    let failing = Arc::new(GenKernel { info: info.clone(), fails_in: Some(2) });
    let range = NdRange::new(1, [0; 3], [64, 1, 1], [8, 1, 1]).unwrap();
    let mut stopped = job(failing, range, Schedule::WholeGroup, Some(first.clone()));
    stopped.chunk = 8;
    stopped.work(&mut scratch, &mut || false);
    assert!(stopped.error.lock().is_some(), "the launch failed");
    // The next launch on the same worker (one work-group) sees only its own work-group.
    let second = Arc::new(Runs::default());
    let ok = Arc::new(GenKernel { info, fails_in: None });
    let range = NdRange::new(1, [0; 3], [8, 1, 1], [8, 1, 1]).unwrap();
    job(ok, range, Schedule::WholeGroup, Some(second.clone())).work(&mut scratch, &mut || false);
    let seen = second.0.lock().clone();
    assert_eq!(seen, vec![([0, 0, 0], 1, vec![0, 0])], "only the second launch's work-group");
}

/// Work-groups that wait (at most 10 s) for a flag another launch sets, or set it.
struct FlagKernel {
    info: KernelInfo,
    flag: Arc<AtomicBool>,
    set: bool,
    started: AtomicBool,
    timed_out: AtomicBool,
}

impl GroupKernel for FlagKernel {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _args: &[u8], _ctx: &WorkGroupContext, _first: u32, _end: u32, _resume_at: u32) -> u32 {
        if self.set {
            self.flag.store(true, Ordering::SeqCst);
            return FINISHED;
        }
        self.started.store(true, Ordering::SeqCst);
        let start = Instant::now();
        while !self.flag.load(Ordering::SeqCst) {
            if start.elapsed() > std::time::Duration::from_secs(10) {
                self.timed_out.store(true, Ordering::SeqCst);
                break;
            }
            std::thread::yield_now();
        }
        FINISHED
    }
}

/// Two launches on one executor at once: the second does not wait for the first (which
/// waits for the second), so both finish.
#[test]
fn concurrent_launches_on_one_executor_both_progress() {
    let exec = Arc::new(Executor::new(2, "concurrent"));
    let flag = Arc::new(AtomicBool::new(false));
    let kernel = |name: &str, set| {
        Arc::new(FlagKernel {
            info: kernel_info(name, 0),
            flag: flag.clone(),
            set,
            started: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
        })
    };
    let waiter = kernel("waiter", false);
    let setter = kernel("setter", true);
    let range = NdRange::new(1, [0; 3], [16, 1, 1], [4, 1, 1]).unwrap();
    let first = {
        let (exec, waiter) = (exec.clone(), waiter.clone());
        std::thread::spawn(move || exec.execute(job(waiter, range, Schedule::WholeGroup, None)))
    };
    while !waiter.started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    exec.execute(job(setter.clone(), range, Schedule::WholeGroup, None)).unwrap();
    first.join().unwrap().unwrap();
    assert!(!waiter.timed_out.load(Ordering::SeqCst), "the waiting launch never saw the flag");
    assert_eq!(exec.concurrent_launches.load(Ordering::SeqCst), 1);
}

/// Work-groups that record their thread; all but the first wait (at most 10 s) for `gate`.
struct GatedWhere {
    info: KernelInfo,
    gate: Arc<AtomicBool>,
    flag: Arc<AtomicBool>,
    threads: Mutex<Vec<String>>,
}

impl GroupKernel for GatedWhere {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _args: &[u8], ctx: &WorkGroupContext, _first: u32, _end: u32, _resume_at: u32) -> u32 {
        if ctx.group_id[0] == 0 {
            self.flag.store(true, Ordering::SeqCst);
        } else {
            let start = Instant::now();
            while !self.gate.load(Ordering::SeqCst) && start.elapsed() < std::time::Duration::from_secs(10) {
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.threads.lock().push(std::thread::current().name().unwrap_or("").to_string());
        FINISHED
    }
}

/// A launch that started on its own thread while another held the pool hands its chunks left
/// to the pool once the other launch is over.
#[test]
fn concurrent_launch_moves_to_the_pool_when_it_is_free() {
    let exec = Arc::new(Executor::new(2, "handover"));
    let flag = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(AtomicBool::new(false));
    let waiter = Arc::new(FlagKernel {
        info: kernel_info("waiter", 0),
        flag: flag.clone(),
        set: false,
        started: AtomicBool::new(false),
        timed_out: AtomicBool::new(false),
    });
    let first = {
        let (exec, waiter) = (exec.clone(), waiter.clone());
        let range = NdRange::new(1, [0; 3], [1, 1, 1], [1, 1, 1]).unwrap();
        std::thread::spawn(move || exec.execute(job(waiter, range, Schedule::WholeGroup, None)))
    };
    while !waiter.started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let second = Arc::new(GatedWhere {
        info: kernel_info("gated", 0),
        gate: gate.clone(),
        flag: flag.clone(),
        threads: Mutex::new(Vec::new()),
    });
    let run_second = {
        let (exec, second) = (exec.clone(), second.clone());
        let range = NdRange::new(1, [0; 3], [64, 1, 1], [1, 1, 1]).unwrap();
        std::thread::spawn(move || exec.execute(job(second, range, Schedule::WholeGroup, None)))
    };
    // The first launch sees the flag the second one's first work-group sets and ends; then
    // the second one's work-groups go on.
    first.join().unwrap().unwrap();
    assert!(!waiter.timed_out.load(Ordering::SeqCst));
    gate.store(true, Ordering::SeqCst);
    run_second.join().unwrap().unwrap();
    let names = second.threads.lock().clone();
    assert_eq!(names.len(), 64);
    assert_eq!(exec.concurrent_launches.load(Ordering::SeqCst), 1);
    assert!(names.iter().any(|n| n.starts_with("softcl-handover-")), "the pool never took part: {names:?}");
}

/// Records the OS thread and the CPU each work-group ran on.
struct WhereRan {
    info: KernelInfo,
    threads: Mutex<std::collections::HashSet<std::thread::ThreadId>>,
    cpus: Mutex<std::collections::HashSet<i32>>,
}

impl GroupKernel for WhereRan {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, _: &[u8], _: &WorkGroupContext, _: u32, _: u32, _: u32) -> u32 {
        self.threads.lock().insert(std::thread::current().id());
        // SAFETY: sched_getcpu has no preconditions.
        self.cpus.lock().insert(unsafe { libc::sched_getcpu() });
        // Some work, so that several workers take part.
        std::hint::black_box((0..2000u64).sum::<u64>());
        FINISHED
    }
}

fn where_ran(exec: &Executor, groups: usize) -> WhereRan {
    let k = Arc::new(WhereRan {
        info: kernel_info("where_ran", 0),
        threads: Mutex::new(Default::default()),
        cpus: Mutex::new(Default::default()),
    });
    let range = NdRange::new(1, [0; 3], [groups, 1, 1], [1, 1, 1]).unwrap();
    exec.execute(job(k.clone(), range, Schedule::WholeGroup, None)).unwrap();
    Arc::into_inner(k).unwrap()
}

#[test]
fn a_pinned_executor_runs_on_its_cpus_with_one_worker_per_cpu() {
    let cpus = allowed_cpus().unwrap();
    // The last CPU alone, then every CPU the process may use.
    for set in [vec![*cpus.last().unwrap()], cpus.clone()] {
        let exec = Executor::pinned(&set, "test-pinned");
        for groups in [1, 5000] {
            let ran = where_ran(&exec, groups);
            let threads = ran.threads.lock();
            // Never the launching thread, at most one thread per CPU.
            assert!(!threads.contains(&std::thread::current().id()), "a work-group ran on the launching thread");
            assert!(threads.len() <= set.len(), "{} threads for {} CPUs", threads.len(), set.len());
            for cpu in ran.cpus.lock().iter() {
                assert!(set.contains(&(*cpu as usize)), "ran on CPU {cpu}, outside {set:?}");
            }
        }
        let state = exec.state.lock();
        assert_eq!(state.pool.as_ref().unwrap().threads.len(), set.len());
    }
}

#[test]
fn pinning_and_affinity() {
    let cpus = allowed_cpus().unwrap();
    assert!(cpus.len() >= std::thread::available_parallelism().unwrap().get());
    assert!(!pin_current_thread(&[]));
    let last = *cpus.last().unwrap();
    let pinned = std::thread::spawn(move || (pin_current_thread(&[last]), allowed_cpus())).join().unwrap();
    assert_eq!(pinned, (true, Some(vec![last])));
}

/// Two launches at once on a sub-device's executor: the second, which finds the pool held,
/// runs on a thread pinned to the sub-device's CPUs (not the launching thread), and both
/// finish.
#[test]
fn a_concurrent_launch_on_a_pinned_executor_stays_on_its_cpus() {
    let cpus = allowed_cpus().unwrap();
    let set = vec![*cpus.last().unwrap()];
    let exec = Arc::new(Executor::pinned(&set, "test-pinned-c"));
    let flag = Arc::new(AtomicBool::new(false));
    let waiter = Arc::new(FlagKernel {
        info: kernel_info("waiter", 0),
        flag: flag.clone(),
        set: false,
        started: AtomicBool::new(false),
        timed_out: AtomicBool::new(false),
    });
    let range = NdRange::new(1, [0; 3], [4, 1, 1], [4, 1, 1]).unwrap();
    let first = {
        let (exec, waiter) = (exec.clone(), waiter.clone());
        std::thread::spawn(move || exec.execute(job(waiter, range, Schedule::WholeGroup, None)))
    };
    while !waiter.started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    // The second launch records where it ran, then releases the first.
    let ran = where_ran(&exec, 3);
    flag.store(true, Ordering::SeqCst);
    first.join().unwrap().unwrap();
    assert!(!waiter.timed_out.load(Ordering::SeqCst));
    assert_eq!(exec.concurrent_launches.load(Ordering::SeqCst), 1);
    assert_eq!(exec.pinned_concurrent.load(Ordering::SeqCst), 1);
    assert!(!ran.threads.lock().contains(&std::thread::current().id()));
    assert!(ran.cpus.lock().iter().all(|&c| set.contains(&(c as usize))), "{:?} outside {set:?}", ran.cpus.lock());
}
