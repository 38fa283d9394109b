//! Defects found by running hashcat (Debian package) on both SoftCL devices, each reduced to
//! a small test through the loader. scripts/hashcat.sh runs hashcat itself.

use softcl_conformance::*;
use std::ptr;

/// Blocking write of `data` at element `offset` of `mem`.
fn write_at<T: Copy>(queue: cl_command_queue, mem: &Mem, offset: usize, data: &[T]) {
    let size = std::mem::size_of::<T>();
    // SAFETY: a blocking write reads size_of_val(data) bytes of data before returning.
    unsafe {
        cl!(clEnqueueWriteBuffer(
            queue,
            mem.raw(),
            CL_TRUE,
            offset * size,
            std::mem::size_of_val(data),
            data.as_ptr().cast(),
            0,
            ptr::null(),
            ptr::null_mut()
        ))
    };
}

/// Resident set size of this process in bytes (/proc/self/statm, field 2, in pages of 4 KiB).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("statm resident field");
    pages * 4096
}

/// hashcat measures a GPU's free memory by creating 64 MiB buffers until clCreateBuffer fails
/// or CL_DEVICE_GLOBAL_MEM_SIZE is reached, touching only their first and last 8 bytes. A
/// buffer's storage must therefore be committed lazily, as on real drivers: before the fix
/// every buffer was zeroed with a memset at creation, so hashcat committed all of
/// CL_DEVICE_GLOBAL_MEM_SIZE (80% of the host's memory on the Gen device) and the kernel's
/// OOM killer ended it. A new buffer's contents are undefined (OpenCL; a buffer of 2 MiB or
/// more may get a released buffer's memory): the probe's writes read back.
#[test]
fn untouched_buffer_storage_is_not_committed() {
    const BUF: usize = 64 << 20;
    const COUNT: usize = 8;
    for_each_device(|d| {
        let env = d.env();
        let before = resident_bytes();
        let mut bufs = Vec::new();
        for _ in 0..COUNT {
            let b = env.buffer(CL_MEM_READ_WRITE, BUF);
            // hashcat's probe: read and write 8 bytes at both ends.
            for offset in [0, BUF / 8 - 1] {
                let _: Vec<u64> = read_buffer(env.q(), &b, offset, 1);
                write_at(env.q(), &b, offset, &[0x0123_4567_89ab_cdefu64 ^ offset as u64]);
                let v: Vec<u64> = read_buffer(env.q(), &b, offset, 1);
                assert_eq!(v, [0x0123_4567_89ab_cdef ^ offset as u64]);
            }
            bufs.push(b);
        }
        let grown = resident_bytes().saturating_sub(before);
        // COUNT * BUF = 512 MiB when committed; allow 128 MiB for the rest of the process
        // (other tests of this file run concurrently).
        assert!(
            grown < 128 << 20,
            "{COUNT} buffers of {} MiB touched at their ends grew the resident set by {} MiB",
            BUF >> 20,
            grown >> 20
        );
    });
}

/// hashcat's bcrypt kernel (m03200) defines helpers as plain `inline` functions (C99: an
/// inline definition only). Calls clang does not inline - every call under -cl-opt-disable,
/// calls from large functions at -O2 - were left as imports of a function nobody defined, and
/// clBuildProgram / clLinkProgram failed with "undefined symbol". Real drivers accept these
/// sources; the function must be defined and called.
const PLAIN_INLINE: &str = r#"
inline uint twice(uint x) { return x * 2u; }
inline void store(__global uint *p, uint v) { p[get_global_id(0)] = v; }
__kernel void k(__global uint *p) { store(p, twice(p[get_global_id(0)]) + 1u); }
"#;

#[test]
fn plain_inline_functions_are_defined_when_not_inlined() {
    for_each_device(|d| {
        let env = d.env();
        for options in ["-cl-opt-disable", ""] {
            let k = env.kernel(PLAIN_INLINE, options, "k");
            let input: Vec<u32> = (0..64).collect();
            let buf = env.buffer_from(CL_MEM_READ_WRITE, &input);
            k.set_mem(0, &buf);
            env.run(&k, &[input.len()], None);
            let out: Vec<u32> = env.read(&buf, input.len());
            let want: Vec<u32> = input.iter().map(|x| x * 2 + 1).collect();
            assert_eq!(out, want, "options {options:?}");
        }
    });
}
