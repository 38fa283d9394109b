//! Vector code never touches memory for an inactive lane, through the loader: guarded
//! accesses just before a work-item's own index (`l >= 1 ? t[l - 1] : 0`, a Hillis-Steele
//! scan, `if (i >= 2) x = a[i - 2]`), whose 32-bit unsigned index wraps to about 4 G in the
//! lanes the guard turns off. A packet's span must be placed by its active lanes: placed by
//! an inactive lane 0 it lies gigabytes away, and the process crashes (as it did).
//!
//! The CPU device's tests run in child processes of this test binary, one per setting: the
//! heuristic width, forced widths 4, 8 and 16 where the host has them, and the vectorizer
//! off. The Gen device runs the same kernels at the SIMD width its model picks. Local sizes
//! that are not a multiple of the width (1, 3, 13, 63) and global sizes that are not a
//! multiple of the local size give partial packets and partial work-groups.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_INACTIVE_LANES_TEST_CHILD";

/// In the parent: runs test `name` in one child per setting and returns true. In a child:
/// returns false (the test body runs there).
fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], false))
}

const SRC: &str = r#"
    __kernel void sel_load(__global const uint *in, __global uint *out) {
        __local uint t[256];
        uint l = get_local_id(0);
        t[l] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = l >= 1 ? t[l - 1] : 0;
    }
    // Inclusive Hillis-Steele scan of each work-group (local size at most 256).
    __kernel void scan(__global const uint *in, __global uint *out) {
        __local uint t[2][256];
        uint l = get_local_id(0), n = get_local_size(0);
        int p = 0;
        t[0][l] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < n; off *= 2) {
            uint v = t[p][l];
            if (l >= off)
                v += t[p][l - off];
            t[1 - p][l] = v;
            p = 1 - p;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        out[get_global_id(0)] = t[p][l];
    }
    __kernel void behind(__global const int *a, __global int *out) {
        uint i = get_global_id(0);
        int x = 5;
        if (i >= 2)
            x = a[i - 2];
        out[i] = x;
    }
    // A store to the element before one's own (a 32-bit unsigned index), then a read back.
    __kernel void store_behind(__global const int *a, __global int *out) {
        __local int t[256];
        uint l = get_local_id(0);
        t[l] = -1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l >= 1)
            t[l - 1] = a[get_global_id(0)] * 3;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[l];
    }
    // Members of one struct element (one span per packet) and int4 elements, two back.
    struct pair { int a; int b; };
    __kernel void members_behind(__global const struct pair *p, __global const int4 *q,
                                 __global int *out) {
        uint i = get_global_id(0);
        int x = 1;
        if (i >= 2) {
            struct pair e = p[i - 2];
            int4 v = q[i - 2];
            x = e.a * 7 + e.b + v.x - v.y + v.z * v.w;
        }
        out[i] = x;
    }
    // Every other element (lanes 8 bytes apart), guarded by && and ?:.
    __kernel void strided_behind(__global const int *a, __global int *out, uint n) {
        uint i = get_global_id(0);
        out[i] = (i >= 1 && 2 * i - 2 < n) ? a[2 * i - 2] : -7;
    }
    // Backwards (lanes 4 bytes apart downwards), lane 0's 64-bit index wrapped far away.
    __kernel void reversed_behind(__global const int *a, __global int *out, uint n) {
        uint i = get_global_id(0);
        uint j = i - 1;
        out[i] = i >= 1 ? a[(ulong)(n - 1) - (ulong)j] : -3;
    }
"#;

fn ramp(n: usize, k: i64) -> Vec<i32> {
    (0..n as i64).map(|i| ((i * k) % 1000 - 400) as i32).collect()
}

/// Runs every kernel of [`SRC`] on `env` at several local sizes and checks the results.
fn check_all(env: &TestEnv) {
    let program = env.build(SRC, "-cl-std=CL3.0");
    let n = 256usize;
    let a = ramp(n, 37);
    let au: Vec<u32> = a.iter().map(|&x| x as u32).collect();
    let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
    let bau = env.buffer_from(CL_MEM_READ_ONLY, &au);
    let out = env.buffer(CL_MEM_READ_WRITE, n * 4);

    for local in [256usize, 64, 63, 13, 3, 1] {
        // Whole work-groups for the __local kernels (they index t by the local id).
        let global = n - n % local;
        let k = kernel_of(&program, "sel_load");
        k.set_mem(0, &bau);
        k.set_mem(1, &out);
        env.run(&k, &[global], Some(&[local]));
        let got: Vec<u32> = env.read(&out, global);
        for (g, &v) in got.iter().enumerate() {
            let want = if g % local >= 1 { au[g - 1] } else { 0 };
            assert_eq!(v, want, "sel_load out[{g}], local size {local}");
        }

        let k = kernel_of(&program, "scan");
        k.set_mem(0, &bau);
        k.set_mem(1, &out);
        env.run(&k, &[global], Some(&[local]));
        let got: Vec<u32> = env.read(&out, global);
        for (g, &v) in got.iter().enumerate() {
            let start = g - g % local;
            let want = au[start..=g].iter().fold(0u32, |s, &x| s.wrapping_add(x));
            assert_eq!(v, want, "scan out[{g}], local size {local}");
        }

        let k = kernel_of(&program, "store_behind");
        k.set_mem(0, &ba);
        k.set_mem(1, &out);
        env.run(&k, &[global], Some(&[local]));
        let got: Vec<i32> = env.read(&out, global);
        for (g, &v) in got.iter().enumerate() {
            let want = if g % local + 1 < local { a[g + 1] * 3 } else { -1 };
            assert_eq!(v, want, "store_behind out[{g}], local size {local}");
        }
    }

    // Global kernels: partial work-groups (global sizes that local sizes do not divide).
    let pairs: Vec<i32> = ramp(2 * n, 13);
    let quads: Vec<i32> = ramp(4 * n, 29);
    let bp = env.buffer_from(CL_MEM_READ_ONLY, &pairs);
    let bq = env.buffer_from(CL_MEM_READ_ONLY, &quads);
    for (global, local) in [(n, Some(64usize)), (n - 3, Some(13)), (n - 1, Some(63)), (n, Some(3)), (n - 5, None)] {
        let l = local.map(|l| [l]);
        let l = l.as_ref().map(|l| &l[..]);
        let k = kernel_of(&program, "behind");
        k.set_mem(0, &ba);
        k.set_mem(1, &out);
        env.run(&k, &[global], l);
        let got: Vec<i32> = env.read(&out, global);
        for (i, &v) in got.iter().enumerate() {
            let want = if i >= 2 { a[i - 2] } else { 5 };
            assert_eq!(v, want, "behind out[{i}], global {global}, local {local:?}");
        }

        let k = kernel_of(&program, "members_behind");
        k.set_mem(0, &bp);
        k.set_mem(1, &bq);
        k.set_mem(2, &out);
        env.run(&k, &[global], l);
        let got: Vec<i32> = env.read(&out, global);
        for (i, &v) in got.iter().enumerate() {
            let want = if i >= 2 {
                let (e, q) = (&pairs[2 * (i - 2)..], &quads[4 * (i - 2)..]);
                e[0].wrapping_mul(7).wrapping_add(e[1]).wrapping_add(q[0]).wrapping_sub(q[1]).wrapping_add(q[2] * q[3])
            } else {
                1
            };
            assert_eq!(v, want, "members_behind out[{i}], global {global}, local {local:?}");
        }

        // Kernels of (a, out, n) guarded at i >= 1 (and more): out[i] as `want` says.
        let a_out_n = |name: &str, want: &dyn Fn(usize) -> i32| {
            let k = kernel_of(&program, name);
            k.set_mem(0, &ba);
            k.set_mem(1, &out);
            k.set_arg(2, &(n as u32));
            env.run(&k, &[global], l);
            let got: Vec<i32> = env.read(&out, global);
            for (i, &v) in got.iter().enumerate() {
                assert_eq!(v, want(i), "{name} out[{i}], global {global}, local {local:?}");
            }
        };
        a_out_n("strided_behind", &|i| if i >= 1 && 2 * i - 2 < n { a[2 * i - 2] } else { -7 });
        a_out_n("reversed_behind", &|i| if i >= 1 { a[n - i] } else { -3 });
    }
}

#[test]
fn guarded_accesses_before_the_own_index_on_the_cpu_device() {
    if run_in_every_mode("guarded_accesses_before_the_own_index_on_the_cpu_device") {
        return;
    }
    check_all(&device(DeviceKind::Cpu).expect("the CPU device").env());
}

#[test]
fn guarded_accesses_before_the_own_index_on_the_gen_device() {
    if let Some(d) = device(DeviceKind::Gpu) {
        check_all(&d.env());
    }
}

/// Private variables live across a barrier (work-item state), written under divergent
/// control flow: unoptimised code (`-cl-opt-disable`) keeps `x` in memory, and an
/// inactive lane's copy must keep its value. The state store of a masked block wrote every
/// lane of the packet (the odd lanes' 5 reached the even ones), and a divergent loop's
/// state stores must stop for the lanes that left it.
#[test]
fn state_written_under_a_mask_keeps_the_inactive_lanes_values() {
    if run_in_every_mode("state_written_under_a_mask_keeps_the_inactive_lanes_values") {
        return;
    }
    const STATE: &str = r#"
        __kernel void odd_five(__global int *out, __local int *t) {
            int lid = get_local_id(0);
            int x = 0;
            if (lid & 1)
                x = 5;
            t[lid] = lid;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = x + t[(lid + 1) % get_local_size(0)];
        }
        __kernel void steps(__global int *out, __local int *t) {
            int lid = get_local_id(0);
            int x = 0;
            for (int k = 0; k < lid % 5; k++)
                x += k + 1;
            t[lid] = x;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = x * 100 + t[(lid + 1) % get_local_size(0)];
        }"#;
    let env = device(DeviceKind::Cpu).expect("the CPU device").env();
    for options in ["", "-cl-opt-disable"] {
        let program = env.build(STATE, options);
        let n = 96usize;
        let out = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        for local in [16usize, 48, 12] {
            for name in ["odd_five", "steps"] {
                let k = kernel_of(&program, name);
                k.set_mem(0, &out);
                k.set_local(1, local * 4);
                env.run(&k, &[n], Some(&[local]));
                let got: Vec<i32> = env.read(&out, n);
                let steps = |l: usize| ((l % 5) * (l % 5 + 1) / 2) as i32;
                for (g, &v) in got.iter().enumerate() {
                    let (l, next) = (g % local, (g % local + 1) % local);
                    let want = match name {
                        "odd_five" => 5 * (l & 1) as i32 + next as i32,
                        _ => steps(l) * 100 + steps(next),
                    };
                    assert_eq!(v, want, "{name} out[{g}], local size {local}, options `{options}`");
                }
            }
        }
    }
}

/// A full packet reads a span with holes whole (one byte in four here: `src[4 * i]`) where
/// the target lacks AVX-512's masked loads: from lane 0's byte to the last lane's, the holes
/// between included, and never past the last lane's. The source buffer is the application's
/// memory (CL_MEM_USE_HOST_PTR) ending where a page the process cannot read begins, its
/// last byte the last work-item's: a byte read past it kills the process.
#[test]
fn a_span_read_whole_ends_at_its_last_lanes_element() {
    if run_in_every_mode("a_span_read_whole_ends_at_its_last_lanes_element") {
        return;
    }
    on_both_devices(check_span_end);
}

/// Runs `check` on the CPU device and, where there is one, on the Gen device.
fn on_both_devices(check: fn(&TestEnv)) {
    check(&device(DeviceKind::Cpu).expect("the CPU device").env());
    if let Some(d) = device(DeviceKind::Gpu) {
        check(&d.env());
    }
}

fn check_span_end(env: &TestEnv) {
    let k = env.kernel(
        "__kernel void every_fourth(__global const uchar *src, __global int *out) {
             int i = get_global_id(0);
             out[i] = src[4 * i] * 3;
         }",
        "",
        "every_fourth",
    );
    let out = env.buffer(CL_MEM_READ_WRITE, 256 * 4);
    for (global, local) in [(256usize, Some(64usize)), (256, None), (253, None), (61, Some(61))] {
        let len = 4 * (global - 1) + 1;
        let bytes: Vec<u8> = (0..len).map(|j| (j % 251) as u8).collect();
        at_page_end(env, &bytes, |mem| {
            k.set_mem(0, mem);
            k.set_mem(1, &out);
            let l = local.map(|l| [l]);
            env.run(&k, &[global], l.as_ref().map(|l| &l[..]));
        });
        let got: Vec<i32> = env.read(&out, global);
        for (i, &v) in got.iter().enumerate() {
            assert_eq!(v, ((4 * i) % 251) as i32 * 3, "out[{i}], global {global}, local {local:?}");
        }
    }
}

/// Runs `f` with a read-only `CL_MEM_USE_HOST_PTR` buffer of `bytes` that ends where an
/// unreadable page begins (the kernels `f` runs finish before it returns).
fn at_page_end(env: &TestEnv, bytes: &[u8], f: impl FnOnce(&Mem)) {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    assert!(bytes.len() <= page);
    // SAFETY: a fresh anonymous private mapping of two pages, no address requested; the
    // second page is made unreadable, the first stays readable and writable until munmap.
    let base = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            2 * page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "mmap");
        assert_eq!(libc::mprotect(p.cast::<u8>().add(page).cast(), page, libc::PROT_NONE), 0, "mprotect");
        p.cast::<u8>()
    };
    // SAFETY: the bytes end where the readable page does; Rust writes them before the
    // buffer exists, and the buffer is released (its kernels finished: `f` ran them to the
    // end) before the pages are unmapped.
    unsafe {
        let src = base.add(page - bytes.len());
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), src, bytes.len());
        let mem = Mem::from_raw(cl_create!(clCreateBuffer(
            env.context.raw(),
            CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
            bytes.len(),
            src.cast()
        )));
        f(&mem);
        drop(mem);
        libc::munmap(base.cast(), 2 * page);
    }
}

/// Gathers of bytes and of 16-bit words (x86 has no instruction for either: a dword gather
/// is the tempting replacement) from a table whose last element ends at an unreadable page
/// read to that element and no further, in every vector mode and on both devices: a dword
/// read at the last element's own address would fault.
#[test]
fn a_narrow_gather_reads_no_further_than_its_elements() {
    if run_in_every_mode("a_narrow_gather_reads_no_further_than_its_elements") {
        return;
    }
    on_both_devices(check_narrow_gather);
}

fn check_narrow_gather(env: &TestEnv) {
    let p = env.build(
        "__kernel void bytes(__global const uchar *t, __global const int *idx, __global int *out) {
             int i = get_global_id(0);
             if (i % 5 != 3)
                 out[i] = t[idx[i]] + 1000 * (i & 1);
         }
         __kernel void words(__global const ushort *t, __global const int *idx, __global int *out) {
             int i = get_global_id(0);
             out[i] = t[idx[i]] ^ i;
         }",
        "",
    );
    let n = 203usize;
    let out = env.buffer(CL_MEM_READ_WRITE, n * 4);
    // 1001 bytes: the last at the page's last byte, 3 bytes into its dword.
    let table: Vec<u8> = (0..1001).map(|j| (j * 7 % 253) as u8).collect();
    // Every element index, the last ones most.
    let idx: Vec<i32> = (0..n as i32).map(|i| if i % 3 == 0 { 1000 } else { (i * 389) % 1001 }).collect();
    let idx_mem = env.buffer_from(CL_MEM_READ_ONLY, &idx);
    let k = kernel_of(&p, "bytes");
    at_page_end(env, &table, |mem| {
        env.write(&out, &vec![-1i32; n]);
        k.set_mem(0, mem);
        k.set_mem(1, &idx_mem);
        k.set_mem(2, &out);
        env.run(&k, &[n], None);
    });
    let got: Vec<i32> = env.read(&out, n);
    for i in 0..n {
        let want = if i % 5 == 3 { -1 } else { i32::from(table[idx[i] as usize]) + 1000 * (i as i32 & 1) };
        assert_eq!(got[i], want, "bytes: out[{i}]");
    }
    // 16-bit words: 501 of them, the last one 2 bytes into its dword.
    let words: Vec<u16> = (0..501u32).map(|j| (j * 40503 % 65521) as u16).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let idx: Vec<i32> = (0..n as i32).map(|i| if i % 2 == 0 { 500 } else { (i * 97) % 501 }).collect();
    let idx_mem = env.buffer_from(CL_MEM_READ_ONLY, &idx);
    let k = kernel_of(&p, "words");
    at_page_end(env, &bytes, |mem| {
        k.set_mem(0, mem);
        k.set_mem(1, &idx_mem);
        k.set_mem(2, &out);
        env.run(&k, &[n], Some(&[29]));
    });
    let got: Vec<i32> = env.read(&out, n);
    for i in 0..n {
        assert_eq!(got[i], i32::from(words[idx[i] as usize]) ^ i as i32, "words: out[{i}]");
    }
}
