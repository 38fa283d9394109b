//! cl_khr_fp64 through the loader: what each device advertises, double kernels on both
//! devices checked against host references, and a Gen configuration without fp64 hardware
//! (gen11-gt2, run in a child process) that advertises none of it and refuses doubles.
#![allow(clippy::needless_range_loop)]

use softcl_conformance::*;

/// `(name, version)` pairs of a CL_DEVICE_*_WITH_VERSION query (cl_name_version: a cl_version
/// and a 64-byte name).
fn name_versions(device: cl_device_id, param: cl_uint) -> Vec<(String, u32)> {
    let bytes: Vec<u8> = device_info_array(device, param);
    assert_eq!(bytes.len() % 68, 0, "cl_name_version array of {} bytes", bytes.len());
    bytes
        .chunks(68)
        .map(|c| {
            let version = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
            let name = &c[4..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            (String::from_utf8_lossy(&name[..end]).into_owned(), version)
        })
        .collect()
}

const V1_0_0: u32 = 1 << 22;
const V3_0_0: u32 = 3 << 22;

/// What the fp64 queries say, as one tuple per device.
fn fp64_report(device: cl_device_id) -> (bool, bool, bool, cl_ulong, [cl_uint; 2]) {
    let ext = device_info_string(device, CL_DEVICE_EXTENSIONS);
    let in_string = ext.split(' ').any(|e| e == "cl_khr_fp64");
    let with_version = name_versions(device, CL_DEVICE_EXTENSIONS_WITH_VERSION);
    let in_list = with_version.iter().any(|(n, v)| n == "cl_khr_fp64" && *v == V1_0_0);
    assert_eq!(in_string, in_list, "CL_DEVICE_EXTENSIONS and _WITH_VERSION disagree: {ext}");
    let features = name_versions(device, CL_DEVICE_OPENCL_C_FEATURES);
    let feature = features.iter().any(|(n, v)| n == "__opencl_c_fp64" && *v == V3_0_0);
    let config: cl_ulong = device_info(device, CL_DEVICE_DOUBLE_FP_CONFIG);
    let widths = [
        device_info::<cl_uint>(device, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE),
        device_info::<cl_uint>(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE),
    ];
    (in_string, feature, in_list, config, widths)
}

const FULL_FP64: cl_ulong =
    (CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_INF_NAN | CL_FP_DENORM)
        as cl_ulong;

/// The macros a kernel sees, as bits: cl_khr_fp64, __opencl_c_fp64.
const MACROS: &str = r#"
    kernel void macros(global int* out) {
        int m = 0;
    #ifdef cl_khr_fp64
        m |= 1;
    #endif
    #ifdef __opencl_c_fp64
        m |= 2;
    #endif
        out[0] = m;
    }"#;

fn macros_seen(env: &TestEnv) -> i32 {
    let k = env.kernel(MACROS, "-cl-std=CL3.0", "macros");
    let out = env.buffer(CL_MEM_WRITE_ONLY, 4);
    k.set_mem(0, &out);
    env.run(&k, &[1], None);
    env.read::<i32>(&out, 1)[0]
}

/// Whether the device should have fp64: the CPU and the Gen9 configurations do; Gen11 and
/// Xe-LP (chosen with SOFTCL_GEN_CONFIG) have no fp64 hardware.
fn expects_fp64(d: &TestDevice) -> bool {
    d.kind == DeviceKind::Cpu || !is_softcl() || d.name.contains("Gen9")
}

/// Runs `f` on the devices that should have fp64, and checks that the others report none.
fn for_each_fp64_device(mut f: impl FnMut(&TestDevice)) {
    for_each_device(|d| {
        if expects_fp64(d) {
            f(d);
        } else {
            println!("note: {} has no fp64 hardware: skipped", d.name);
            assert_eq!(fp64_report(d.id), (false, false, false, 0, [0, 0]), "{}", d.name);
        }
    });
}

#[test]
fn fp64_is_advertised_consistently() {
    for_each_fp64_device(|d| {
        let (ext, feature, _, config, widths) = fp64_report(d.id);
        assert!(ext && feature, "{}: cl_khr_fp64 {ext}, __opencl_c_fp64 {feature}", d.name);
        // The OpenCL 3.0 minimum for a device with fp64.
        assert_eq!(config & FULL_FP64, FULL_FP64, "{}: CL_DEVICE_DOUBLE_FP_CONFIG {config:#x}", d.name);
        assert!(widths[0] > 0 && widths[1] > 0, "{}: double vector widths {widths:?}", d.name);
        assert_eq!(macros_seen(&d.env()), 3, "{}: the kernel sees both macros", d.name);
    });
}

/// One kernel of double math, conversions and vectors on each device.
#[test]
fn double_kernels_on_both_devices() {
    const SRC: &str = r#"
        kernel void d(global const double* in, global double* out, global long* l, global float* f) {
            size_t i = get_global_id(0);
            double x = in[i];
            out[8 * i + 0] = sin(x);
            out[8 * i + 1] = sqrt(fabs(x));
            out[8 * i + 2] = x / 3.0;
            out[8 * i + 3] = fma(x, x, -1.0);
            out[8 * i + 4] = rootn(x, 3);
            out[8 * i + 5] = powr(-0.0, -1.0) + tanpi(0.25);
            int q;
            out[8 * i + 6] = remquo(x, 0.0625, &q);
            double2 v = (double2)(x, 2.0 * x);
            out[8 * i + 7] = length(v * 1.0e300);
            l[4 * i + 0] = q;
            l[4 * i + 1] = convert_long_sat_rtp(x * 1.0e18);
            long2 nan = isnan(v + (double2)(0.0, NAN));
            l[4 * i + 2] = nan.y + 10 * nan.x;
            l[4 * i + 3] = ilogb(x - x + NAN);
            f[2 * i + 0] = convert_float_rtz(x / 3.0);
            f[2 * i + 1] = convert_float_rtp(x / 3.0);
        }"#;
    let mut input: Vec<f64> = (0..256).map(|i| (i as f64 - 128.0) * 0.37 + 0.01).collect();
    input[0] = 1.0e300;
    input[1] = -27.0;
    input[2] = 4.9e-324;
    let n = input.len();
    for_each_fp64_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "d");
        let bin = env.buffer_from(CL_MEM_READ_ONLY, &input);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 64);
        let bl = env.buffer(CL_MEM_WRITE_ONLY, n * 32);
        let bf = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
        k.set_mem(0, &bin);
        k.set_mem(1, &bout);
        k.set_mem(2, &bl);
        k.set_mem(3, &bf);
        env.run(&k, &[n], Some(&[64]));
        let out: Vec<f64> = env.read(&bout, n * 8);
        let l: Vec<i64> = env.read(&bl, n * 4);
        let f: Vec<f32> = env.read(&bf, n * 2);
        for i in 0..n {
            let x = input[i];
            let o = &out[8 * i..8 * i + 8];
            let close = |got: f64, want: f64, ulps: f64, what: &str| {
                let tol = ulps * f64::EPSILON * want.abs().max(f64::MIN_POSITIVE);
                assert!((got - want).abs() <= tol, "{}: {what}({x:e}) = {got:e}, want {want:e}", d.name);
            };
            close(o[0], x.sin(), 4.0, "sin");
            assert_eq!(o[1], x.abs().sqrt(), "sqrt is correctly rounded");
            assert_eq!(o[2], x / 3.0, "divide is correctly rounded");
            assert_eq!(o[3], x.mul_add(x, -1.0), "fma is exact");
            close(o[4], x.abs().cbrt().copysign(x), 16.0, "rootn(x, 3)");
            assert_eq!(o[5], f64::INFINITY, "powr(-0, -1) is +inf");
            // x - k/16 with k = round(16x): exact.
            let k16 = (x * 16.0).round_ties_even();
            let want_rem = if x.abs() < 1.0e10 { x - k16 / 16.0 } else { 0.0 };
            assert_eq!(o[6], want_rem, "{}: remquo({x}, 1/16)", d.name);
            if x.abs() < 1.0e10 {
                let k = k16 as i64;
                // The sign of x/y and at least the 7 low bits of |k|.
                let q = l[4 * i];
                assert_eq!(q.abs() & 0x7f, k.abs() & 0x7f, "{}: quotient of {x}: {q}", d.name);
                if k & 0x7f != 0 {
                    assert_eq!(q.signum(), k.signum(), "{}: quotient sign of {x}: {q}", d.name);
                }
            }
            let len = (x * 1.0e300).hypot(2.0 * x * 1.0e300);
            if len.is_finite() && len > 0.0 {
                close(o[7], len, 4.0, "length(v * 1e300)");
            }
            let r = (x * 1.0e18).ceil();
            let want_l = r as i64; // Rust saturates like _sat
            assert_eq!(l[4 * i + 1], want_l, "{}: convert_long_sat_rtp({x} * 1e18)", d.name);
            assert_eq!(l[4 * i + 2], -1, "isnan on a double2: -1 for true, 0 for false");
            assert_eq!(l[4 * i + 3], i64::from(i32::MAX), "ilogb(NaN) = FP_ILOGBNAN");
            let q = x / 3.0;
            let (rtz, rtp) = (f[2 * i], f[2 * i + 1]);
            assert!(f64::from(rtz).abs() <= q.abs() && f64::from(rtp) >= q, "{}: {q:e} -> {rtz:e} {rtp:e}", d.name);
            let step = |v: f32| f32::from_bits(v.to_bits() + 1);
            if q.abs() <= f64::from(f32::MAX) && q != 0.0 && f64::from(rtz) != q {
                assert!(f64::from(step(rtz.abs())) > q.abs(), "{}: rtz of {q:e} is {rtz:e}", d.name);
            }
        }
    });
}

/// The test body run by `a_gen_without_fp64_hardware_refuses_doubles` in a process whose GPU
/// is a gen11-gt2 (the configuration is read when the driver loads).
#[test]
#[ignore = "run in a child process with SOFTCL_GEN_CONFIG=gen11-gt2"]
fn gen11_child() {
    assert_eq!(std::env::var("SOFTCL_GEN_CONFIG").as_deref(), Ok("gen11-gt2"));
    let d = device(DeviceKind::Gpu).expect("the GPU device");
    assert!(d.name.contains("Gen11"), "{}", d.name);
    let (ext, feature, in_list, config, widths) = fp64_report(d.id);
    assert_eq!((ext, feature, in_list, config, widths), (false, false, false, 0, [0, 0]), "{}", d.name);
    let env = d.env();
    assert_eq!(macros_seen(&env), 0);
    let failure = env
        .try_build("kernel void k(global double* p) { p[0] = sqrt(p[0]); }", "-cl-std=CL3.0")
        .expect_err("doubles build on a device without fp64");
    assert_eq!(failure.code, CL_BUILD_PROGRAM_FAILURE);
    assert!(failure.log.contains("fp64"), "the build log names fp64: {}", failure.log);
}

#[test]
fn a_gen_without_fp64_hardware_refuses_doubles() {
    if !is_softcl() {
        println!("note: SOFTCL_GEN_CONFIG applies to SoftCL only: skipped");
        return;
    }
    init_loader();
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args(["--ignored", "--exact", "gen11_child", "--nocapture"])
        .env("SOFTCL_GEN_CONFIG", "gen11-gt2")
        .output()
        .expect("run the child test");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
}

/// Doubles and double vectors by value: clSetKernelArg sizes 8, 24 (double3 occupies 32)
/// and 128 (double16, aligned to 128 in the argument block).
#[test]
fn double_arguments_by_value() {
    const SRC: &str = r#"
        kernel void args(double a, double3 b, char c, double16 v, global double* out) {
            out[0] = a;
            out[1] = b.x + b.y + b.z;
            out[2] = (double)c;
            out[3] = v.s0 + v.sf;
            out[4] = dot(v.s0123, v.s4567);
        }"#;
    for_each_fp64_device(|d| {
        let env = d.env();
        let k = env.kernel(SRC, "", "args");
        let v: [f64; 16] = std::array::from_fn(|i| i as f64 * 1.5);
        let b: [f64; 4] = [0.25, 0.5, 1.0e300, 0.0];
        let out = env.buffer(CL_MEM_WRITE_ONLY, 5 * 8);
        k.set_arg(0, &std::f64::consts::PI);
        k.set_arg(1, &b);
        k.set_arg(2, &-7i8);
        k.set_arg(3, &v);
        k.set_mem(4, &out);
        env.run(&k, &[1], None);
        let o: Vec<f64> = env.read(&out, 5);
        let dot: f64 = (0..4).map(|i| v[i] * v[4 + i]).sum();
        assert_eq!(o, vec![std::f64::consts::PI, 0.25 + 0.5 + 1.0e300, -7.0, v[0] + v[15], dot], "{}", d.name);
    });
}
