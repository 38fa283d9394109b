//! Programs and kernels: build options, SPIR-V IL, build failures, program/kernel info,
//! work-group info.

use softcl_conformance::*;
use std::ptr;

const SCALE_SRC: &str = r#"
__kernel void scale(__global const int* in, __global int* out) {
    size_t i = get_global_id(0);
    out[i] = in[i] * SCALE + OFFSET + FLAG;
}"#;

fn run_int_kernel(env: &TestEnv, k: &Kernel, input: &[i32]) -> Vec<i32> {
    let bin = env.buffer_from(CL_MEM_READ_ONLY, input);
    let bout = env.buffer(CL_MEM_WRITE_ONLY, std::mem::size_of_val(input));
    k.set_mem(0, &bin);
    k.set_mem(1, &bout);
    env.run(k, &[input.len()], None);
    env.read(&bout, input.len())
}

#[test]
fn build_option_define() {
    let input: Vec<i32> = (0..256).collect();
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(SCALE_SRC, "-D SCALE=7 -DOFFSET=3 -D FLAG", "scale");
        let out = run_int_kernel(&env, &k, &input);
        let want: Vec<i32> = input.iter().map(|x| x * 7 + 3 + 1).collect();
        assert_eq!(out, want);
        // The same source with other values gives other results (no stale cache).
        let k = env.kernel(SCALE_SRC, "-DSCALE=-2 -D OFFSET=100 -DFLAG=0", "scale");
        let out = run_int_kernel(&env, &k, &input);
        let want: Vec<i32> = input.iter().map(|x| x * -2 + 100).collect();
        assert_eq!(out, want);
    });
}

#[test]
fn build_option_include_dir() {
    let dir = TempDir::new("include");
    std::fs::write(
        dir.path().join("softcl_test_inc.h"),
        "#define INC_VALUE 42\nstatic inline int twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    const SRC: &str = r#"
        #include "softcl_test_inc.h"
        __kernel void inc(__global const int* in, __global int* out) {
            size_t i = get_global_id(0);
            out[i] = twice(in[i]) + INC_VALUE;
        }"#;
    let input: Vec<i32> = (0..100).map(|i| i * 5 - 30).collect();
    for_each_device(|d| {
        let env = d.env();
        let options = format!("-I {}", dir.path().display());
        let k = env.kernel(SRC, &options, "inc");
        let out = run_int_kernel(&env, &k, &input);
        let want: Vec<i32> = input.iter().map(|x| 2 * x + 42).collect();
        assert_eq!(out, want);
        // Without the -I the header is not found.
        let err = env.try_build(SRC, "").expect_err("built without -I");
        expect_error("clBuildProgram without -I", err.code, CL_BUILD_PROGRAM_FAILURE);
        assert!(err.log.contains("softcl_test_inc.h"), "log: {}", err.log);
    });
}

#[test]
fn program_from_spirv_il() {
    const SRC: &str = r#"
        __kernel void il_kernel(__global const float* a, __global float* out, float k) {
            size_t i = get_global_id(0);
            out[i] = a[i] * k + (float)i;
        }"#;
    let il = compile_to_spirv(SRC, "CL1.2").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&il[..4], &0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
    let n = 300usize;
    let a: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    for_each_device(|d| {
        let versions = device_info_string(d.id, CL_DEVICE_IL_VERSION);
        assert!(versions.contains("SPIR-V_1."), "CL_DEVICE_IL_VERSION {versions:?}");
        let env = d.env();
        let program = program_from_il(&env.context, &il).unwrap_or_else(|e| panic!("{e}"));
        let stored: Vec<u8> = program_info_array(program.raw(), CL_PROGRAM_IL);
        assert_eq!(stored, il, "CL_PROGRAM_IL");
        let program = build_program(program, &[d.id], "").unwrap_or_else(|e| panic!("{e}"));
        let k = create_kernel(&program, "il_kernel").unwrap();
        let ba = env.buffer_from(CL_MEM_READ_ONLY, &a);
        let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 4);
        k.set_mem(0, &ba);
        k.set_mem(1, &bout);
        k.set_arg(2, &3.0f32);
        env.run(&k, &[n], None);
        let out: Vec<f32> = env.read(&bout, n);
        for i in 0..n {
            assert_eq!(out[i], a[i] * 3.0 + i as f32, "out[{i}]");
        }
    });
}

/// clSetProgramSpecializationConstant through the loader: a 32-bit signed integer (a
/// negative value, sign-extended), a 64-bit one and a boolean written into the module before
/// the build, on every device; the defaults where nothing is set; the size checked.
#[test]
fn specialization_constants_reach_the_kernel() {
    const TEXT: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "spec" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %c SpecId 3
               OpDecorate %big SpecId 4
               OpDecorate %flag SpecId 5
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
          %c = OpSpecConstant %uint 5
        %big = OpSpecConstant %ulong 1000
       %flag = OpSpecConstantTrue %bool
   %uint_100 = OpConstant %uint 100
     %uint_0 = OpConstant %uint 0
    %v3ulong = OpTypeVector %ulong 3
  %ptr_in_v3 = OpTypePointer Input %v3ulong
       %void = OpTypeVoid
   %ptr_cw_l = OpTypePointer CrossWorkgroup %ulong
        %fty = OpTypeFunction %void %ptr_cw_l
        %gid = OpVariable %ptr_in_v3 Input
          %k = OpFunction %void None %fty
        %out = OpFunctionParameter %ptr_cw_l
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid Aligned 32
          %g = OpCompositeExtract %ulong %g3 0
        %add = OpSelect %uint %flag %uint_100 %uint_0
         %s1 = OpIAdd %uint %c %add
        %s64 = OpSConvert %ulong %s1
         %s2 = OpIAdd %ulong %s64 %big
         %s3 = OpIAdd %ulong %s2 %g
          %p = OpInBoundsPtrAccessChain %ptr_cw_l %out %g
               OpStore %p %s3 Aligned 8
               OpReturn
               OpFunctionEnd
"#;
    let il = assemble_spirv(TEXT);
    let n = 40usize;
    for_each_device(|d| {
        let env = d.env();
        let run = |set: &dyn Fn(cl_program)| -> Vec<i64> {
            let program = program_from_il(&env.context, &il).unwrap_or_else(|e| panic!("{e}"));
            set(program.raw());
            let program = build_program(program, &[d.id], "").unwrap_or_else(|e| panic!("{e}"));
            let k = create_kernel(&program, "spec").unwrap();
            let bout = env.buffer(CL_MEM_WRITE_ONLY, n * 8);
            k.set_mem(0, &bout);
            env.run(&k, &[n], None);
            env.read(&bout, n)
        };
        let defaults = run(&|_| {});
        assert_eq!(defaults, (0..n as i64).map(|g| 5 + 100 + 1000 + g).collect::<Vec<_>>());
        let set = run(&|p| {
            // SAFETY: each value outlives the call that reads it.
            unsafe {
                check(
                    "clSetProgramSpecializationConstant",
                    clSetProgramSpecializationConstant(p, 3, 4, (&-7i32 as *const i32).cast()),
                );
                check(
                    "clSetProgramSpecializationConstant",
                    clSetProgramSpecializationConstant(p, 4, 8, (&(1i64 << 40) as *const i64).cast()),
                );
                check(
                    "clSetProgramSpecializationConstant",
                    clSetProgramSpecializationConstant(p, 5, 1, (&0u8 as *const u8).cast()),
                );
                // The wrong size for SpecId 3 (a 32-bit integer).
                expect_error(
                    "clSetProgramSpecializationConstant",
                    clSetProgramSpecializationConstant(p, 3, 8, (&0i64 as *const i64).cast()),
                    CL_INVALID_VALUE,
                );
            }
        });
        // -7 is sign-extended (OpSConvert of a 32-bit value) before 2^40 is added.
        assert_eq!(set, (0..n as i64).map(|g| -7 + (1i64 << 40) + g).collect::<Vec<_>>());
    });
}

#[test]
fn garbage_il_is_invalid_value() {
    let garbage: Vec<u8> = (0..256u32).map(|i| (i * 37 + 11) as u8).collect();
    for_each_device(|d| {
        let ctx = d.context();
        let err = program_from_il(&ctx, &garbage).expect_err("garbage IL accepted");
        expect_error("clCreateProgramWithIL(garbage)", err.code, CL_INVALID_VALUE);
    });
}

#[test]
fn build_failure_has_status_and_log() {
    // The error is on line 3, column 13 (the undeclared identifier).
    const BAD: &str = "__kernel void bad(__global int* out) {\n\
                       \x20   int y = 1;\n\
                       \x20   int x = undeclared_thing + y;\n\
                       \x20   out[0] = x;\n\
                       }\n";
    for_each_device(|d| {
        let env = d.env();
        let err = env.try_build(BAD, "").expect_err("bad source built");
        expect_error("clBuildProgram", err.code, CL_BUILD_PROGRAM_FAILURE);
        let program = err.program.as_ref().expect("program kept");
        let status: cl_build_status = program_build_info(program.raw(), d.id, CL_PROGRAM_BUILD_STATUS);
        assert_eq!(status, CL_BUILD_ERROR, "CL_PROGRAM_BUILD_STATUS");
        assert!(err.log.contains("error"), "log: {}", err.log);
        assert!(err.log.contains(":3:13"), "log lacks line:col 3:13: {}", err.log);
        assert!(err.log.contains("undeclared_thing"), "log: {}", err.log);
        // No kernel can be created from a program that failed to build.
        // SAFETY: a valid program and a NUL-terminated name.
        let (k, code) = unsafe { cl_create_err!(clCreateKernel(program.raw(), c"bad".as_ptr())) };
        assert!(k.is_null());
        expect_error("clCreateKernel after failed build", code, CL_INVALID_PROGRAM_EXECUTABLE);
    });
}

#[test]
fn unknown_build_option_is_invalid_build_options() {
    for_each_device(|d| {
        let env = d.env();
        let err = env
            .try_build(SCALE_SRC, "-DSCALE=1 -DOFFSET=0 -DFLAG=0 -cl-no-such-option")
            .expect_err("unknown option accepted");
        expect_error("clBuildProgram(-cl-no-such-option)", err.code, CL_INVALID_BUILD_OPTIONS);
    });
}

#[test]
fn unknown_kernel_name() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(SCALE_SRC, "-DSCALE=1 -DOFFSET=0 -DFLAG=0");
        let err = create_kernel(&program, "no_such_kernel").expect_err("kernel created");
        expect_error("clCreateKernel(no_such_kernel)", err.code, CL_INVALID_KERNEL_NAME);
        assert!(create_kernel(&program, "scale").is_ok());
    });
}

const THREE_KERNELS: &str = r#"
__kernel void first(__global int* p) { p[get_global_id(0)] = 1; }
__kernel void second(__global int* p, int v) { p[get_global_id(0)] = v; }
__kernel void third(__global int* p, int a, int b) { p[get_global_id(0)] = a * b; }
"#;

#[test]
fn program_info_after_build() {
    for_each_device(|d| {
        let env = d.env();
        let options = "-DUNUSED=1";
        let program = env.build(THREE_KERNELS, options);
        let p = program.raw();
        let status: cl_build_status = program_build_info(p, d.id, CL_PROGRAM_BUILD_STATUS);
        assert_eq!(status, CL_BUILD_SUCCESS);
        assert_eq!(program_build_info_string(p, d.id, CL_PROGRAM_BUILD_OPTIONS), options);
        assert_eq!(program_info::<usize>(p, CL_PROGRAM_NUM_KERNELS), 3);
        let mut names: Vec<String> =
            program_info_string(p, CL_PROGRAM_KERNEL_NAMES).split(';').map(str::to_string).collect();
        names.sort();
        assert_eq!(names, ["first", "second", "third"]);
        assert_eq!(program_info_string(p, CL_PROGRAM_SOURCE), THREE_KERNELS);
        assert_eq!(program_info::<cl_uint>(p, CL_PROGRAM_NUM_DEVICES), 1);
        assert_eq!(program_info_array::<cl_device_id>(p, CL_PROGRAM_DEVICES), vec![d.id]);
        assert_eq!(program_info::<cl_context>(p, CL_PROGRAM_CONTEXT), env.context.raw());
    });
}

#[test]
fn create_kernels_in_program() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(THREE_KERNELS, "");
        let mut n: cl_uint = 0;
        // SAFETY: a count query, then an array of n handles.
        let kernels: Vec<Kernel> = unsafe {
            cl!(clCreateKernelsInProgram(program.raw(), 0, ptr::null_mut(), &mut n));
            assert_eq!(n, 3);
            let mut raw = vec![ptr::null_mut(); n as usize];
            cl!(clCreateKernelsInProgram(program.raw(), n, raw.as_mut_ptr(), ptr::null_mut()));
            raw.into_iter().map(|k| Kernel::from_raw(k)).collect()
        };
        let mut found: Vec<(String, cl_uint)> =
            kernels.iter().map(|k| (k.name(), kernel_info::<cl_uint>(k.raw(), CL_KERNEL_NUM_ARGS))).collect();
        found.sort();
        assert_eq!(found, [("first".to_string(), 1), ("second".to_string(), 2), ("third".to_string(), 3)]);
        // Each kernel runs.
        let buf = env.buffer(CL_MEM_READ_WRITE, 16 * 4);
        for k in &kernels {
            k.set_mem(0, &buf);
            let nargs: cl_uint = kernel_info(k.raw(), CL_KERNEL_NUM_ARGS);
            for i in 1..nargs {
                k.set_arg(i, &(i as cl_int + 5));
            }
            env.run(k, &[16], None);
            let want = match k.name().as_str() {
                "first" => 1,
                "second" => 6,
                _ => 42,
            };
            assert_eq!(env.read::<i32>(&buf, 16), vec![want; 16], "{}", k.name());
        }
    });
}

const ARG_INFO_SRC: &str = r#"
__kernel void args(__global const float* restrict src,
                   __global float4* dst,
                   __local int* scratch,
                   __constant uint* table,
                   int count,
                   float4 weights) {
    size_t i = get_global_id(0);
    scratch[get_local_id(0)] = count;
    dst[i] = weights * src[i] + (float)table[0] + (float)scratch[0];
}"#;

#[test]
fn kernel_info_and_arg_info() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(ARG_INFO_SRC, "-cl-kernel-arg-info");
        let k = create_kernel(&program, "args").unwrap();
        let kr = k.raw();
        assert_eq!(k.name(), "args");
        assert_eq!(kernel_info::<cl_uint>(kr, CL_KERNEL_NUM_ARGS), 6);
        assert_eq!(kernel_info::<cl_context>(kr, CL_KERNEL_CONTEXT), env.context.raw());
        assert_eq!(kernel_info::<cl_program>(kr, CL_KERNEL_PROGRAM), program.raw());
        let names = ["src", "dst", "scratch", "table", "count", "weights"];
        let types = ["float*", "float4*", "int*", "uint*", "int", "float4"];
        let address = [
            CL_KERNEL_ARG_ADDRESS_GLOBAL,
            CL_KERNEL_ARG_ADDRESS_GLOBAL,
            CL_KERNEL_ARG_ADDRESS_LOCAL,
            CL_KERNEL_ARG_ADDRESS_CONSTANT,
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
            CL_KERNEL_ARG_ADDRESS_PRIVATE,
        ];
        for i in 0..6u32 {
            let iu = i as usize;
            assert_eq!(kernel_arg_info_string(kr, i, CL_KERNEL_ARG_NAME), names[iu], "arg {i} name");
            assert_eq!(kernel_arg_info_string(kr, i, CL_KERNEL_ARG_TYPE_NAME), types[iu], "arg {i} type name");
            let aq: cl_kernel_arg_address_qualifier = kernel_arg_info(kr, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER);
            assert_eq!(aq, address[iu], "arg {i} address qualifier");
            let acc: cl_kernel_arg_access_qualifier = kernel_arg_info(kr, i, CL_KERNEL_ARG_ACCESS_QUALIFIER);
            assert_eq!(acc, CL_KERNEL_ARG_ACCESS_NONE, "arg {i} access qualifier");
        }
        let q0: cl_kernel_arg_type_qualifier = kernel_arg_info(kr, 0, CL_KERNEL_ARG_TYPE_QUALIFIER);
        assert_eq!(q0, CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT, "src type qualifier");
        let q1: cl_kernel_arg_type_qualifier = kernel_arg_info(kr, 1, CL_KERNEL_ARG_TYPE_QUALIFIER);
        assert_eq!(q1, CL_KERNEL_ARG_TYPE_NONE);
        // __constant pointers are const-qualified.
        let q3: cl_kernel_arg_type_qualifier = kernel_arg_info(kr, 3, CL_KERNEL_ARG_TYPE_QUALIFIER);
        assert_ne!(q3 & CL_KERNEL_ARG_TYPE_CONST, 0);
        // Index past the last argument.
        let mut size = 0usize;
        // SAFETY: a size query only.
        let code = unsafe { clGetKernelArgInfo(kr, 6, CL_KERNEL_ARG_NAME, 0, ptr::null_mut(), &mut size) };
        expect_error("clGetKernelArgInfo(index 6)", code, CL_INVALID_ARG_INDEX);
    });
}

const WG_SRC: &str = r#"
__kernel void plain(__global float* p) { p[get_global_id(0)] *= 2.0f; }
__kernel void with_local(__global float* p, __local float* dyn) {
    __local float fixed[64];
    size_t l = get_local_id(0);
    fixed[l % 64] = p[get_global_id(0)];
    dyn[l] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    p[get_global_id(0)] = fixed[(l + 1) % 64] + dyn[0];
}
__kernel __attribute__((reqd_work_group_size(8, 4, 1)))
void fixed_size(__global int* p) {
    p[get_global_id(1) * get_global_size(0) + get_global_id(0)] = (int)get_local_size(1);
}"#;

#[test]
fn kernel_work_group_info() {
    for_each_device(|d| {
        let env = d.env();
        let program = env.build(WG_SRC, "");
        let dev_max: usize = device_info(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        let local_mem: cl_ulong = device_info(d.id, CL_DEVICE_LOCAL_MEM_SIZE);

        let plain = create_kernel(&program, "plain").unwrap();
        let wg: usize = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_WORK_GROUP_SIZE);
        assert!(wg >= 1 && wg <= dev_max, "CL_KERNEL_WORK_GROUP_SIZE {wg}");
        let mult: usize = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
        assert!(mult >= 1 && mult <= wg, "preferred multiple {mult}");
        let lm: cl_ulong = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_LOCAL_MEM_SIZE);
        assert_eq!(lm, 0, "plain kernel uses no local memory");
        let compile: [usize; 3] = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
        assert_eq!(compile, [0, 0, 0]);
        let _private: cl_ulong = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_PRIVATE_MEM_SIZE);

        let wl = create_kernel(&program, "with_local").unwrap();
        let lm_static: cl_ulong = kernel_wg_info(wl.raw(), d.id, CL_KERNEL_LOCAL_MEM_SIZE);
        assert!(lm_static >= 256, "static __local float[64]: {lm_static} bytes");
        wl.set_local(1, 1024);
        let lm_dyn: cl_ulong = kernel_wg_info(wl.raw(), d.id, CL_KERNEL_LOCAL_MEM_SIZE);
        assert!(lm_dyn >= 256 + 1024, "with a 1024-byte __local arg: {lm_dyn}");
        assert!(lm_dyn <= local_mem);

        let fixed = create_kernel(&program, "fixed_size").unwrap();
        let compile: [usize; 3] = kernel_wg_info(fixed.raw(), d.id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
        assert_eq!(compile, [8, 4, 1]);
        let buf = env.buffer(CL_MEM_READ_WRITE, 32 * 8 * 4);
        fixed.set_mem(0, &buf);
        env.run(&fixed, &[32, 8], Some(&[8, 4]));
        assert_eq!(env.read::<i32>(&buf, 256), vec![4; 256]);
    });
}

#[test]
fn softcl_gen_kernel_work_group_info() {
    let d = device(DeviceKind::Gpu).expect("GPU device");
    let env = d.env();
    let program = env.build(WG_SRC, "");
    let plain = create_kernel(&program, "plain").unwrap();
    let wg: usize = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_WORK_GROUP_SIZE);
    assert_eq!(wg, 256);
    let mult: usize = kernel_wg_info(plain.raw(), d.id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
    assert!([8, 16, 32].contains(&mult), "Gen SIMD width {mult}");
}
