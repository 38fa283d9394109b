//! Every OpenCL C built-in the back end lowers, over scalar and vector types: each program
//! must compile to native code and run (on small inputs) without a build error or a crash.
//! Values are checked by the other back-end tests; this one guards coverage.

mod common;

use common::*;
use softcl_compiler::{compile_source, Target};

const FLOAT_UNARY: &[&str] = &[
    "acos",
    "acosh",
    "acospi",
    "asin",
    "asinh",
    "asinpi",
    "atan",
    "atanh",
    "atanpi",
    "cbrt",
    "ceil",
    "cos",
    "cosh",
    "cospi",
    "erfc",
    "erf",
    "exp",
    "exp2",
    "exp10",
    "expm1",
    "fabs",
    "floor",
    "lgamma",
    "log",
    "log2",
    "log10",
    "log1p",
    "logb",
    "rint",
    "round",
    "rsqrt",
    "sin",
    "sinh",
    "sinpi",
    "sqrt",
    "tan",
    "tanh",
    "tanpi",
    "tgamma",
    "trunc",
    "degrees",
    "radians",
    "sign",
    "native_cos",
    "native_exp",
    "native_exp2",
    "native_exp10",
    "native_log",
    "native_log2",
    "native_log10",
    "native_recip",
    "native_rsqrt",
    "native_sin",
    "native_sqrt",
    "native_tan",
];
const HALF_UNARY: &[&str] = &[
    "half_cos",
    "half_exp",
    "half_exp2",
    "half_exp10",
    "half_log",
    "half_log2",
    "half_log10",
    "half_recip",
    "half_rsqrt",
    "half_sin",
    "half_sqrt",
    "half_tan",
];
const FLOAT_BINARY: &[&str] = &[
    "atan2",
    "atan2pi",
    "copysign",
    "fdim",
    "fmax",
    "fmin",
    "fmod",
    "hypot",
    "maxmag",
    "minmag",
    "nextafter",
    "pow",
    "powr",
    "remainder",
    "step",
    "native_divide",
    "native_powr",
    "max",
    "min",
];
const FLOAT_TERNARY: &[&str] = &["fma", "mad", "mix", "clamp", "smoothstep"];

fn build_and_run(src: &str, opts: &str, kernel: &str, nbufs: usize, elem_bytes: usize) {
    if std::env::var("COVERAGE_TRACE").is_ok() {
        eprintln!("{src}");
    }
    let t = Target::default();
    let prog = compile_source(src, opts, &t).unwrap_or_else(|e| panic!("front end: {}\n{src}", e.log));
    let native = prog.codegen(&t).unwrap_or_else(|e| panic!("back end: {}", e.log));
    let k = native.kernel(kernel).unwrap();
    let n = 4usize;
    // Buffers of small positive values (bytes 0x3f: floats near 0.75, doubles near 0.5).
    let mut bufs: Vec<AlignedBuf> = (0..nbufs).map(|_| AlignedBuf::new(n * elem_bytes * 256)).collect();
    for b in bufs.iter_mut() {
        b.bytes_mut().fill(0x3f);
    }
    let mut args = ArgBlock::new(&k.info);
    for (i, b) in bufs.iter_mut().enumerate() {
        let p = b.as_mut_ptr();
        args.set_ptr(&k.info, i, p);
    }
    run_ndrange(k, &mut args, 1, [n as u64, 1, 1], [n as u64, 1, 1], [0; 3], Pattern::Whole, &[]);
}

fn scalar_of(t: &str) -> &'static str {
    if t.starts_with("float") {
        "float"
    } else if t.starts_with("half") {
        "half"
    } else {
        "double"
    }
}

fn float_types() -> Vec<(&'static str, &'static str, usize)> {
    // (type, extension pragma, bytes per element upper bound)
    let mut v = Vec::new();
    for t in ["float", "float2", "float3", "float4", "float8", "float16"] {
        v.push((t, "", 64));
    }
    for t in ["double", "double2", "double3", "double4", "double16"] {
        v.push((t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", 128));
    }
    for t in ["half", "half3", "half8"] {
        v.push((t, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n", 32));
    }
    v
}

#[test]
fn float_math_all_types() {
    for (t, pragma, bytes) in float_types() {
        let is_float = t.starts_with("float");
        let mut body = String::new();
        let mut k = 0;
        let scalar = scalar_of(t);
        let it = t.replace(scalar, "int");
        for f in FLOAT_UNARY.iter().chain(if is_float { HALF_UNARY } else { &[] }) {
            if !is_float && f.starts_with("native_") {
                continue;
            }
            body += &format!("    o[{k}] = {f}(a[0]);\n");
            k += 1;
        }
        for f in FLOAT_BINARY {
            if !is_float && f.starts_with("native_") {
                continue;
            }
            body += &format!("    o[{k}] = {f}(a[0], a[1]);\n");
            k += 1;
        }
        for f in FLOAT_TERNARY {
            body += &format!("    o[{k}] = {f}(a[0], a[1], a[2]);\n");
            k += 1;
        }
        // Scalar second arguments and the functions with integer or pointer operands.
        body +=
            &format!("    o[{k}] = fmax(a[0], ({scalar})1); o[{}] = clamp(a[0], ({scalar})0, ({scalar})1);\n", k + 1);
        body +=
            &format!("    o[{}] = mix(a[0], a[1], ({scalar})0.5); o[{}] = step(({scalar})0.5, a[0]);\n", k + 2, k + 3);
        body += &format!(
            "    o[{}] = ldexp(a[0], ({it})3); o[{}] = pown(a[0], ({it})2); o[{}] = rootn(a[0], ({it})3);\n",
            k + 4,
            k + 5,
            k + 6
        );
        body += &format!("    oi[0] = ilogb(a[0]); {t} fr; {it} e;\n");
        body += &format!(
            "    o[{}] = frexp(a[0], &e); oi[1] = e; o[{}] = modf(a[0], &fr); o[{}] = fr;\n",
            k + 7,
            k + 8,
            k + 9
        );
        body += &format!("    o[{}] = fract(a[0], &fr); o[{}] = fr + sincos(a[0], &fr) + fr;\n", k + 10, k + 11);
        body += &format!(
            "    o[{}] = remquo(a[0], a[1], &e); oi[2] = e; o[{}] = lgamma_r(a[0], &e); oi[3] = e;\n",
            k + 12,
            k + 13
        );
        body += &format!(
            "    o[{}] = ldexp(a[0], 2); o[{}] = smoothstep(({scalar})0, ({scalar})1, a[0]);\n",
            k + 14,
            k + 15
        );
        let src = format!(
            "{pragma}kernel void m(global const {t}* a, global {t}* o, global {it}* oi) {{\n    a += get_global_id(0) * 3; o += get_global_id(0) * 64; oi += get_global_id(0) * 4;\n{body}}}\n"
        );
        build_and_run(&src, "", "m", 3, bytes);
    }
}

#[test]
fn geometric_all_types() {
    for (t, pragma, bytes) in float_types() {
        if t.ends_with("8") || t.ends_with("16") {
            continue;
        }
        let scalar = scalar_of(t);
        let mut body =
            "    r[0] = dot(a[0], a[1]); r[1] = length(a[0]); r[2] = distance(a[0], a[1]);\n    o[0] = normalize(a[0]);\n"
                .to_string();
        if scalar == "float" {
            body += "    r[3] = fast_length(a[0]); r[4] = fast_distance(a[0], a[1]); o[1] = fast_normalize(a[0]);\n";
        }
        if t.ends_with('3') || t.ends_with('4') {
            body += "    o[2] = cross(a[0], a[1]);\n";
        }
        let src =
            format!("{pragma}kernel void g(global const {t}* a, global {t}* o, global {scalar}* r) {{\n{body}}}\n");
        build_and_run(&src, "", "g", 3, bytes);
    }
}

#[test]
fn integer_functions_all_types() {
    let types = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "char16", "uchar4", "short8", "int3",
        "uint4", "long2", "ulong16",
    ];
    for t in types {
        let mut body = String::new();
        let fs1 = ["abs", "clz", "ctz", "popcount"];
        let fs2 = ["abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "max", "min", "mul_hi", "rotate"];
        let fs3 = ["clamp", "mad_hi", "mad_sat"];
        let mut k = 0;
        for f in fs1 {
            body += &format!("    o[{k}] = as_{t}({f}(a[0]));\n");
            k += 1;
        }
        for f in fs2 {
            body += &format!("    o[{k}] = as_{t}({f}(a[0], a[1]));\n");
            k += 1;
        }
        for f in fs3 {
            body += &format!("    o[{k}] = {f}(a[0], a[1], a[2]);\n");
            k += 1;
        }
        body += &format!("    o[{k}] = a[0] / a[1] + a[0] % a[2] + (a[0] << a[1]) + (a[0] >> a[2]);\n");
        if t.starts_with("int") || t.starts_with("uint") {
            body += &format!("    o[{}] = mad24(a[0], a[1], a[2]) + mul24(a[0], a[1]);\n", k + 1);
        }
        let src = format!("kernel void i(global const {t}* a, global {t}* o) {{\n{body}}}\n");
        build_and_run(&src, "-cl-std=CL2.0", "i", 2, 128);
    }
    // upsample over each width pair.
    let src = r#"
kernel void u(global const uchar4* a, global const ushort4* b, global const uint4* c, global short4* o1, global int4* o2, global long4* o3) {
    o1[0] = upsample(as_char4(a[0]), a[1]);
    o2[0] = upsample(as_short4(b[0]), b[1]);
    o3[0] = upsample(as_int4(c[0]), c[1]);
}
"#;
    build_and_run(src, "", "u", 6, 64);
}

#[test]
fn relational_and_select_all_types() {
    for (t, pragma, bytes) in float_types() {
        let scalar = scalar_of(t);
        let it = match scalar {
            "float" => t.replace("float", "int"),
            "half" => t.replace("half", "short"),
            _ => t.replace("double", "long"),
        };
        let body = format!(
            "    oi[0] = isequal(a[0], a[1]) + isnotequal(a[0], a[1]) + isgreater(a[0], a[1]) + isgreaterequal(a[0], a[1])\n\
             + isless(a[0], a[1]) + islessequal(a[0], a[1]) + islessgreater(a[0], a[1]) + isfinite(a[0]) + isinf(a[0])\n\
             + isnan(a[0]) + isnormal(a[0]) + isordered(a[0], a[1]) + isunordered(a[0], a[1]) + signbit(a[0]);\n\
             o[0] = select(a[0], a[1], ({it})isgreater(a[0], a[1])); o[1] = bitselect(a[0], a[1], a[2]);\n\
             oi[1] = ({it})(any(isless(a[0], a[1])) + all(isless(a[0], a[1])));\n"
        );
        let src = format!("{pragma}kernel void r(global const {t}* a, global {t}* o, global {it}* oi) {{\n{body}}}\n");
        build_and_run(&src, "", "r", 3, bytes);
    }
}

#[test]
fn vector_loads_stores_and_half_all_widths() {
    let mut body = String::new();
    for n in ["2", "3", "4", "8", "16"] {
        body += &format!("    vstore{n}(vload{n}(1, f), 2, fo);\n");
        body += &format!("    vstore{n}(vload{n}(1, i), 2, io);\n");
        body += &format!("    vstore_half{n}(vload_half{n}(1, h), 2, ho);\n");
        body += &format!("    vstorea_half{n}(vloada_half{n}(1, h), 3, ho);\n");
        for r in ["rte", "rtz", "rtp", "rtn"] {
            body += &format!("    vstore_half{n}_{r}(vload{n}(0, f), 4, ho);\n");
            body += &format!("    vstorea_half{n}_{r}(vload{n}(0, f), 5, ho);\n");
        }
    }
    body += "    vstore_half(vload_half(0, h), 0, ho); vstore_half_rtz(f[0], 1, ho); vstore_half_rtn(d[0], 2, ho);\n";
    body += "    vstore_half4_rtp(vload4(0, d), 3, ho);\n";
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\nkernel void v(global const float* f, global float* fo, global const int* i, global int* io,\n  global const half* h, global half* ho, global const double* d) {{\n{body}}}\n"
    );
    build_and_run(&src, "", "v", 7, 512);
}

#[test]
fn conversions_all_modes() {
    let mut body = String::new();
    let dst = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double"];
    let src_t = ["char4", "uchar4", "short4", "int4", "uint4", "long4", "ulong4", "float4", "double4"];
    let mut k = 0;
    for s in src_t {
        for d in dst {
            for sat in ["", "_sat"] {
                if sat == "_sat" && (d == "float" || d == "double") {
                    continue;
                }
                for r in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
                    body += &format!("    acc{k} += convert_{d}4{sat}{r}(in_{s}[0]);\n");
                }
            }
            k += 1;
        }
    }
    let mut decls = String::new();
    let mut stores = String::new();
    let mut k = 0;
    for _ in src_t {
        for d in dst {
            decls += &format!("    {d}4 acc{k} = 0;\n");
            stores += &format!("    out[{k}] = convert_double4(acc{k});\n");
            k += 1;
        }
    }
    let params: Vec<String> = src_t.iter().map(|s| format!("global const {s}* in_{s}")).collect();
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\nkernel void c({}, global double4* out) {{\n{decls}{body}{stores}}}\n",
        params.join(", ")
    );
    build_and_run(&src, "", "c", src_t.len() + 1, 2048);
}

#[test]
fn shuffles_and_swizzles_all_widths() {
    let mut body = String::new();
    for n in ["2", "4", "8", "16"] {
        for m in ["2", "4", "8", "16"] {
            body += &format!("    r{m} += shuffle(vload{n}(0, a), vload{m}(0, mask));\n");
            body += &format!("    r{m} += shuffle2(vload{n}(0, a), vload{n}(1, a), vload{m}(0, mask));\n");
        }
    }
    let src = format!(
        "kernel void s(global const int* a, global const uint* mask, global int* o) {{\n    int2 r2 = 0; int4 r4 = 0; int8 r8 = 0; int16 r16 = 0;\n{body}    vstore2(r2, 0, o); vstore4(r4, 1, o); vstore8(r8, 1, o); vstore16(r16, 1, o);\n}}\n"
    );
    build_and_run(&src, "", "s", 3, 128);
}
