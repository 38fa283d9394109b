//! OpenCL C 2.0's address-space features through the loader: program-scope `__global`
//! variables (initialised, zeroed, holding each other's addresses, shared by the kernels of
//! a program and kept from launch to launch, one set per program), the generic address space
//! (`get_fence`, `to_global`, `to_local`, `to_private` on pointers into each space, chosen per
//! work-item, and loads and stores through generic pointers), and 64-bit atomics
//! (cl_khr_int64_base_atomics, cl_khr_int64_extended_atomics, C11 `atomic_long`).
//!
//! Each test runs in child processes of this test binary, one per setting: on the CPU
//! device at the heuristic width, at the forced widths 4, 8 and 16 where the host has them,
//! and scalar; and on the Gen device.

use softcl_conformance::*;

const CHILD: &str = "SOFTCL_ADDRESS_SPACES_TEST_CHILD";

fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], true))
}

fn env() -> TestEnv {
    let kind = if vectorizer_mode(CHILD) == "gen" { DeviceKind::Gpu } else { DeviceKind::Cpu };
    device(kind).expect("the device").env()
}

const PROGRAM_VARIABLES: &str = r#"
    typedef struct { int x; int y; } pair;
    global int counter;                       // zeroed
    global int start = 5;
    global int table[4] = {10, 20, 30, 40};
    global pair pairs[2] = {{1, 2}, {3, 4}};
    global int *third = &table[2];            // an address in an initializer
    global int *py = &pairs[1].y;             // an access chain of several indices
    global struct { char tag; long big; global int *to; } mixed = {7, 1L << 40, &start};
    constant int limit = 1000;
    constant int *plimit = &limit;
    global float4 vec[2] = {(float4)(0.5f, 1.5f, 2.5f, 3.5f)};

    // Every work-item counts itself; work-item 0 moves the others along.
    kernel void bump(void) {
        atomic_inc(&counter);
        if (get_global_id(0) == 0) {
            start += 1;
            *third += 100;
            *py += 1;
            mixed.big += 1;
            vec[1] += vec[0];
        }
    }

    kernel void read(global long *out) {
        size_t i = get_global_id(0);
        long v[12] = {counter, start, table[0], table[2], *third, *py, mixed.tag, mixed.big,
                      *mixed.to, *plimit, (long)(vec[1].w * 2.0f), (long)(third - table)};
        if (i < 12) out[i] = v[i];
    }
"#;

#[test]
fn program_scope_variables_live_with_their_program() {
    if run_in_every_mode("program_scope_variables_live_with_their_program") {
        return;
    }
    let env = env();
    let read_all = |program: &Program| -> Vec<i64> {
        let read = kernel_of(program, "read");
        let out = env.buffer(CL_MEM_READ_WRITE, 12 * 8);
        read.set_mem(0, &out);
        env.run(&read, &[37], Some(&[37]));
        env.read(&out, 12)
    };
    let program = env.build(PROGRAM_VARIABLES, "-cl-std=CL3.0");
    let initial = vec![0, 5, 10, 30, 30, 4, 7, 1 << 40, 5, 1000, 0, 2];
    assert_eq!(read_all(&program), initial, "the initial values");

    let bump = kernel_of(&program, "bump");
    for launch in 1..=3i64 {
        env.run(&bump, &[300], Some(&[60]));
        let want = vec![
            300 * launch,
            5 + launch,
            10,
            30 + 100 * launch,
            30 + 100 * launch,
            4 + launch,
            7,
            (1 << 40) + launch,
            5 + launch,
            1000,
            (2.0 * 3.5 * launch as f32) as i64,
            2,
        ];
        assert_eq!(read_all(&program), want, "after {launch} launches of `bump`");
    }

    // Another program from the same source has its own variables.
    let other = env.build(PROGRAM_VARIABLES, "-cl-std=CL3.0");
    assert_eq!(read_all(&other), initial, "a second program's variables");
    assert_eq!(read_all(&program)[0], 900, "the first program's counter");

    // In the order clang emits them (the tentative definition `counter` last), aligned as
    // OpenCL C says: start 0-4, table 4-20, pairs 20-36, third 40-48, py 48-56, mixed 56-80,
    // plimit (a __global pointer to __constant) 80-88, vec 96-128, counter 128-132.
    let size: usize = program_build_info(program.raw(), env.dev(), CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE);
    assert_eq!(size, 132, "CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE");
}

const GENERIC: &str = r#"
    // Not inlined by clang: the callee sees only a generic pointer.
    __attribute__((noinline)) int describe(int *p) {
        return (int)get_fence(p) | (to_global(p) != NULL) << 4 | (to_local(p) != NULL) << 5
            | (to_private(p) != NULL) << 6;
    }
    __attribute__((noinline)) void add_to(int *p, int v) { *p += v; }

    kernel void spaces(global int *out, local int *arg) {
        local int mine[64];
        int priv[4] = {0, 0, 0, 0};
        size_t i = get_global_id(0), l = get_local_id(0);
        int *p;
        switch (i % 4) {
            case 0: p = out + i; break;
            case 1: p = mine + l; break;
            case 2: p = arg + l; break;
            default: p = priv + (l % 4); break;
        }
        int space = describe(p);
        *p = 0;
        add_to(p, 3);
        add_to(p, (int)l);
        out[i] = space << 16 | *p;
    }
"#;

#[test]
fn generic_pointers_know_their_address_space() {
    if run_in_every_mode("generic_pointers_know_their_address_space") {
        return;
    }
    let env = env();
    let k = env.kernel(GENERIC, "-cl-std=CL3.0", "spaces");
    let n = 200;
    let out = env.buffer(CL_MEM_READ_WRITE, n * 4);
    k.set_mem(0, &out);
    k.set_local(1, 64 * 4);
    env.run(&k, &[n], Some(&[40]));
    let got: Vec<i32> = env.read(&out, n);
    for (i, &g) in got.iter().enumerate() {
        // CLK_GLOBAL_MEM_FENCE = 2, CLK_LOCAL_MEM_FENCE = 1; then which to_* is not NULL.
        let space = match i % 4 {
            0 => 0x2 | 0x10,
            1 | 2 => 0x1 | 0x20,
            _ => 0x40,
        };
        assert_eq!(g, space << 16 | (3 + (i % 40) as i32), "work-item {i}");
    }
}

const INT64_ATOMICS: &str = r#"
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    kernel void atomics64(global long *out, global ulong *bits) {
        long i = get_global_id(0);
        atom_add(&out[0], i << 33);
        atom_max(&out[1], i << 34);
        atom_min(&out[2], -(i << 35));
        atom_inc(&out[3]);
        atom_xchg(&out[4], 1L << 50);
        long old;
        do { old = out[5]; } while (atom_cmpxchg(&out[5], old, old + i) != old);
        atomic_fetch_add((volatile global atomic_long *)&out[6], 1L << 32);
        atomic_fetch_max_explicit((volatile global atomic_long *)&out[7], i * 3, memory_order_relaxed);
        atom_or(&bits[i / 64], 1UL << (i % 64));
        atom_xor(&bits[4], 1UL << 60);
        atom_and(&bits[5], ~(1UL << (i % 64)));
    }
"#;

#[test]
fn int64_atomics_of_every_operation() {
    if run_in_every_mode("int64_atomics_of_every_operation") {
        return;
    }
    let env = env();
    let k = env.kernel(INT64_ATOMICS, "-cl-std=CL3.0", "atomics64");
    let n = 256i64;
    let out = env.buffer_from(CL_MEM_READ_WRITE, &[0i64; 8]);
    let bits = env.buffer_from(CL_MEM_READ_WRITE, &[0u64, 0, 0, 0, 0, u64::MAX]);
    k.set_mem(0, &out);
    k.set_mem(1, &bits);
    env.run(&k, &[n as usize], Some(&[64]));
    let got: Vec<i64> = env.read(&out, 8);
    let sum: i64 = (0..n).sum();
    assert_eq!(got[0], sum << 33, "atom_add");
    assert_eq!(got[1], (n - 1) << 34, "atom_max");
    assert_eq!(got[2], -((n - 1) << 35), "atom_min");
    assert_eq!(got[3], n, "atom_inc");
    assert_eq!(got[4], 1 << 50, "atom_xchg");
    assert_eq!(got[5], sum, "an atom_cmpxchg loop adding");
    assert_eq!(got[6], n << 32, "atomic_fetch_add");
    assert_eq!(got[7], (n - 1) * 3, "atomic_fetch_max_explicit");
    let got: Vec<u64> = env.read(&bits, 6);
    assert_eq!(&got[..4], &[u64::MAX; 4], "atom_or");
    assert_eq!(got[4], 0, "atom_xor, an even number of times");
    assert_eq!(got[5], 0, "atom_and");
}
