//! Programs, kernels and NDRange launches through the entry points, on every device.

use softcl::api::context::{clCreateContext, clCreateContextFromType, clGetContextInfo, clReleaseContext};
use softcl::api::enqueue::{clEnqueueNativeKernel, clEnqueueReadBuffer, clEnqueueWriteBuffer};
use softcl::api::event::{clCreateUserEvent, clGetEventInfo, clReleaseEvent, clSetUserEventStatus, clWaitForEvents};
use softcl::api::kernel::*;
use softcl::api::memory::{clCreateBuffer, clReleaseMemObject};
use softcl::api::program::*;
use softcl::api::queue::{clCreateCommandQueueWithProperties, clFinish, clReleaseCommandQueue};
use softcl_runtime::cl::*;
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};

const SUCCESS: cl_int = CL_SUCCESS as cl_int;

/// A context over all devices with one queue per device.
struct Env {
    ctx: cl_context,
    devices: Vec<cl_device_id>,
    queues: Vec<cl_command_queue>,
}

impl Env {
    fn new() -> Self {
        let mut err = 0;
        let ctx = clCreateContextFromType(null(), CL_DEVICE_TYPE_ALL as u64, None, null_mut(), &mut err);
        assert_eq!(err, SUCCESS);
        Self::with_context(ctx)
    }

    /// A context of only the `index`-th device.
    fn single(index: usize) -> Self {
        let all = Env::new();
        let mut err = 0;
        let ctx = clCreateContext(null(), 1, &all.devices[index], None, null_mut(), &mut err);
        assert_eq!(err, SUCCESS);
        Self::with_context(ctx)
    }

    fn with_context(ctx: cl_context) -> Self {
        // The persistent kernel cache stays off: these tests must not read or fill the
        // user's cache (set once, before any build, like the conformance harness does).
        static NO_CACHE: std::sync::Once = std::sync::Once::new();
        NO_CACHE.call_once(|| {
            if std::env::var_os("SOFTCL_CACHE").is_none() {
                std::env::set_var("SOFTCL_CACHE", "0");
            }
        });
        let mut devices: Vec<cl_device_id> = vec![null_mut(); 8];
        let mut size = 0usize;
        let bytes = std::mem::size_of_val(devices.as_slice());
        assert_eq!(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, bytes, devices.as_mut_ptr().cast(), &mut size), SUCCESS);
        devices.truncate(size / std::mem::size_of::<cl_device_id>());
        let queues = devices
            .iter()
            .map(|&d| {
                let mut err = 0;
                let q = clCreateCommandQueueWithProperties(ctx, d, null(), &mut err);
                assert_eq!(err, SUCCESS);
                q
            })
            .collect();
        Self { ctx, devices, queues }
    }

    fn source(&self, src: &str) -> cl_program {
        let mut err = 0;
        let c = CString::new(src).unwrap();
        let mut p = c.as_ptr();
        let prog = clCreateProgramWithSource(self.ctx, 1, &mut p, null(), &mut err);
        assert_eq!(err, SUCCESS);
        prog
    }

    fn build(&self, src: &str, options: &str) -> cl_program {
        let prog = self.source(src);
        let o = CString::new(options).unwrap();
        let code = clBuildProgram(prog, 0, null(), o.as_ptr(), None, null_mut());
        assert_eq!(code, SUCCESS, "build failed: {}", build_log(prog, self.devices[0]));
        prog
    }

    fn buffer<T: Copy>(&self, data: &[T]) -> cl_mem {
        let mut err = 0;
        let size = std::mem::size_of_val(data).max(1);
        let b = clCreateBuffer(
            self.ctx,
            (CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR) as u64,
            size,
            data.as_ptr() as *mut c_void,
            &mut err,
        );
        assert_eq!(err, SUCCESS);
        b
    }

    fn read<T: Copy + Default>(&self, q: cl_command_queue, b: cl_mem, n: usize) -> Vec<T> {
        let mut out = vec![T::default(); n];
        let size = std::mem::size_of_val(out.as_slice());
        let code = clEnqueueReadBuffer(q, b, CL_TRUE, 0, size, out.as_mut_ptr().cast(), 0, null(), null_mut());
        assert_eq!(code, SUCCESS);
        out
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        for &q in &self.queues {
            clFinish(q);
            clReleaseCommandQueue(q);
        }
        clReleaseContext(self.ctx);
    }
}

fn build_info_bytes(prog: cl_program, dev: cl_device_id, param: u32) -> Vec<u8> {
    let mut size = 0usize;
    assert_eq!(clGetProgramBuildInfo(prog, dev, param, 0, null_mut(), &mut size), SUCCESS);
    let mut buf = vec![0u8; size];
    assert_eq!(clGetProgramBuildInfo(prog, dev, param, size, buf.as_mut_ptr().cast(), null_mut()), SUCCESS);
    buf
}

fn build_info_string(prog: cl_program, dev: cl_device_id, param: u32) -> String {
    let mut b = build_info_bytes(prog, dev, param);
    assert_eq!(b.pop(), Some(0));
    String::from_utf8(b).unwrap()
}

fn build_log(prog: cl_program, dev: cl_device_id) -> String {
    build_info_string(prog, dev, CL_PROGRAM_BUILD_LOG)
}

fn build_status(prog: cl_program, dev: cl_device_id) -> cl_build_status {
    i32::from_ne_bytes(build_info_bytes(prog, dev, CL_PROGRAM_BUILD_STATUS).try_into().unwrap())
}

fn binary_type(prog: cl_program, dev: cl_device_id) -> cl_program_binary_type {
    u32::from_ne_bytes(build_info_bytes(prog, dev, CL_PROGRAM_BINARY_TYPE).try_into().unwrap())
}

fn program_info_bytes(prog: cl_program, param: u32) -> Result<Vec<u8>, cl_int> {
    let mut size = 0usize;
    let code = clGetProgramInfo(prog, param, 0, null_mut(), &mut size);
    if code != SUCCESS {
        return Err(code);
    }
    let mut buf = vec![0u8; size];
    assert_eq!(clGetProgramInfo(prog, param, size, buf.as_mut_ptr().cast(), null_mut()), SUCCESS);
    Ok(buf)
}

fn program_info_string(prog: cl_program, param: u32) -> Result<String, cl_int> {
    let mut b = program_info_bytes(prog, param)?;
    assert_eq!(b.pop(), Some(0));
    Ok(String::from_utf8(b).unwrap())
}

fn kernel(prog: cl_program, name: &str) -> Result<cl_kernel, cl_int> {
    let mut err = 0;
    let n = CString::new(name).unwrap();
    let k = clCreateKernel(prog, n.as_ptr(), &mut err);
    if err == SUCCESS {
        assert!(!k.is_null());
        Ok(k)
    } else {
        assert!(k.is_null());
        Err(err)
    }
}

fn set_mem(k: cl_kernel, i: u32, m: &cl_mem) {
    let p = m as *const cl_mem as *const c_void;
    assert_eq!(clSetKernelArg(k, i, std::mem::size_of::<cl_mem>(), p), SUCCESS);
}

fn set_val<T>(k: cl_kernel, i: u32, v: &T) {
    assert_eq!(clSetKernelArg(k, i, std::mem::size_of::<T>(), v as *const T as *const c_void), SUCCESS);
}

/// Enqueues an NDRange and waits; returns the enqueue's code.
fn run(q: cl_command_queue, k: cl_kernel, global: &[usize], local: Option<&[usize]>) -> cl_int {
    let mut ev = null_mut();
    let lp = local.map_or(null(), |l| l.as_ptr());
    let code = clEnqueueNDRangeKernel(q, k, global.len() as u32, null(), global.as_ptr(), lp, 0, null(), &mut ev);
    if code == SUCCESS {
        assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
        clReleaseEvent(ev);
    }
    code
}

const VADD: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, float k) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] * k;
}"#;

const THREE: &str = r#"
__kernel void first(__global int* p) { p[get_global_id(0)] = 1; }
__kernel void second(__global int* p, int v) { p[get_global_id(0)] = v; }
__kernel void third(__global int* p, int a, int b) { p[get_global_id(0)] = a * b; }
"#;

#[test]
fn build_success_and_program_info() {
    let env = Env::new();
    let prog = env.source(THREE);
    // Nothing built yet.
    assert_eq!(program_info_string(prog, CL_PROGRAM_KERNEL_NAMES), Err(CL_INVALID_PROGRAM_EXECUTABLE));
    assert_eq!(program_info_bytes(prog, CL_PROGRAM_NUM_KERNELS), Err(CL_INVALID_PROGRAM_EXECUTABLE));
    assert_eq!(kernel(prog, "first"), Err(CL_INVALID_PROGRAM_EXECUTABLE));
    assert_eq!(build_status(prog, env.devices[0]), CL_BUILD_NONE);
    assert_eq!(binary_type(prog, env.devices[0]), CL_PROGRAM_BINARY_TYPE_NONE);

    let opts = CString::new("-DUNUSED=1 -cl-mad-enable").unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), opts.as_ptr(), None, null_mut()), SUCCESS);
    for &d in &env.devices {
        assert_eq!(build_status(prog, d), CL_BUILD_SUCCESS as cl_build_status);
        assert_eq!(binary_type(prog, d), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        assert_eq!(build_info_string(prog, d, CL_PROGRAM_BUILD_OPTIONS), "-DUNUSED=1 -cl-mad-enable");
        let gv = build_info_bytes(prog, d, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE);
        assert_eq!(usize::from_ne_bytes(gv.try_into().unwrap()), 0);
    }
    let n = program_info_bytes(prog, CL_PROGRAM_NUM_KERNELS).unwrap();
    assert_eq!(usize::from_ne_bytes(n.try_into().unwrap()), 3);
    assert_eq!(program_info_string(prog, CL_PROGRAM_KERNEL_NAMES).unwrap(), "first;second;third");
    assert_eq!(program_info_string(prog, CL_PROGRAM_SOURCE).unwrap(), THREE);
    assert_eq!(program_info_bytes(prog, CL_PROGRAM_IL).unwrap(), Vec::<u8>::new());
    let nd = program_info_bytes(prog, CL_PROGRAM_NUM_DEVICES).unwrap();
    assert_eq!(u32::from_ne_bytes(nd.try_into().unwrap()) as usize, env.devices.len());
    let ctx = program_info_bytes(prog, CL_PROGRAM_CONTEXT).unwrap();
    assert_eq!(usize::from_ne_bytes(ctx.try_into().unwrap()), env.ctx as usize);
    let ctors = program_info_bytes(prog, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT).unwrap();
    assert_eq!(u32::from_ne_bytes(ctors.try_into().unwrap()), CL_FALSE);
    let rc = program_info_bytes(prog, CL_PROGRAM_REFERENCE_COUNT).unwrap();
    assert_eq!(u32::from_ne_bytes(rc.try_into().unwrap()), 1);
    // Too small a buffer.
    let mut small = [0u8; 2];
    assert_eq!(
        clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 2, small.as_mut_ptr().cast(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(clGetProgramInfo(prog, 0x7777, 0, null_mut(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clReleaseProgram(prog), SUCCESS);
    assert_eq!(clReleaseProgram(prog), CL_INVALID_PROGRAM);
}

#[test]
fn create_program_with_source_arguments() {
    let env = Env::single(0);
    let mut err = 0;
    // Several strings with explicit and zero lengths.
    let parts = ["__kernel void a(__global int* p) ", "{ p[0] = 7; } // trailing junk", "\n"];
    let c: Vec<CString> = parts.iter().map(|s| CString::new(*s).unwrap()).collect();
    let mut ptrs: Vec<*const c_char> = c.iter().map(|s| s.as_ptr()).collect();
    let lengths = [parts[0].len(), 13, 0];
    let prog = clCreateProgramWithSource(env.ctx, 3, ptrs.as_mut_ptr(), lengths.as_ptr(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(
        program_info_string(prog, CL_PROGRAM_SOURCE).unwrap(),
        "__kernel void a(__global int* p) { p[0] = 7; }\n"
    );
    clReleaseProgram(prog);
    // count 0, NULL strings, a NULL entry.
    assert!(clCreateProgramWithSource(env.ctx, 0, ptrs.as_mut_ptr(), null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    assert!(clCreateProgramWithSource(env.ctx, 1, null_mut(), null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    ptrs[1] = null();
    assert!(clCreateProgramWithSource(env.ctx, 3, ptrs.as_mut_ptr(), null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    assert!(clCreateProgramWithSource(null_mut(), 1, ptrs.as_mut_ptr(), null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
}

#[test]
fn build_failure_has_status_and_log() {
    const BAD: &str = "__kernel void bad(__global int* out) {\n    int y = 1;\n    int x = undeclared_thing + y;\n    out[0] = x;\n}\n";
    let env = Env::new();
    let prog = env.source(BAD);
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, null_mut()), CL_BUILD_PROGRAM_FAILURE);
    for &d in &env.devices {
        assert_eq!(build_status(prog, d), CL_BUILD_ERROR);
        let log = build_log(prog, d);
        assert!(log.contains(":3:13") && log.contains("undeclared_thing") && log.contains("error"), "log: {log}");
    }
    assert_eq!(kernel(prog, "bad"), Err(CL_INVALID_PROGRAM_EXECUTABLE));
    let mut n = 0u32;
    assert_eq!(clCreateKernelsInProgram(prog, 0, null_mut(), &mut n), CL_INVALID_PROGRAM_EXECUTABLE);
    clReleaseProgram(prog);
}

extern "C" fn count_notify(_program: cl_program, user_data: *mut c_void) {
    // SAFETY: the tests pass a pointer to an AtomicU32 that outlives the build.
    let counter = unsafe { &*(user_data as *const std::sync::atomic::AtomicU32) };
    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn build_argument_errors_and_notify() {
    let env = Env::single(0);
    let prog = env.source(VADD);
    let bad = CString::new("-cl-no-such-option").unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), bad.as_ptr(), None, null_mut()), CL_INVALID_BUILD_OPTIONS);
    let bad_std = CString::new("-cl-std=CL9.9").unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), bad_std.as_ptr(), None, null_mut()), CL_INVALID_BUILD_OPTIONS);
    // Options that are not UTF-8: the options error with a log saying so (it was
    // CL_INVALID_VALUE with an empty log).
    let not_utf8 = CString::new(b"-DX=\xff\xfe".to_vec()).unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), not_utf8.as_ptr(), None, null_mut()), CL_INVALID_BUILD_OPTIONS);
    let log = build_log(prog, env.devices[0]);
    assert!(log.contains("not UTF-8"), "{log}");
    // user_data without pfn_notify; inconsistent device list.
    let mut x = 0u8;
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, (&mut x as *mut u8).cast()), CL_INVALID_VALUE);
    assert_eq!(clBuildProgram(prog, 0, env.devices.as_ptr(), null(), None, null_mut()), CL_INVALID_VALUE);
    assert_eq!(clBuildProgram(prog, 1, null(), null(), None, null_mut()), CL_INVALID_VALUE);
    // A device of the platform that is not the program's.
    let all = Env::new();
    if all.devices.len() > 1 {
        assert_eq!(clBuildProgram(prog, 1, &all.devices[1], null(), None, null_mut()), CL_INVALID_DEVICE);
    }
    assert_eq!(clBuildProgram(null_mut(), 0, null(), null(), None, null_mut()), CL_INVALID_PROGRAM);
    // The callback runs once the build has completed.
    let counter = std::sync::atomic::AtomicU32::new(0);
    let ud = &counter as *const _ as *mut c_void;
    assert_eq!(clBuildProgram(prog, 1, env.devices.as_ptr(), null(), Some(count_notify), ud), SUCCESS);
    assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Rebuilding is allowed while no kernel is attached, not after.
    let k = kernel(prog, "vadd").unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, null_mut()), CL_INVALID_OPERATION);
    clReleaseKernel(k);
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, null_mut()), SUCCESS);
    clReleaseProgram(prog);
}

fn binaries_of(prog: cl_program) -> Vec<Vec<u8>> {
    let sizes = program_info_bytes(prog, CL_PROGRAM_BINARY_SIZES).unwrap();
    let sizes: Vec<usize> = sizes.chunks_exact(8).map(|c| usize::from_ne_bytes(c.try_into().unwrap())).collect();
    let mut bins: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
    let mut ptrs: Vec<*mut u8> = bins.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let bytes = std::mem::size_of_val(ptrs.as_slice());
    let mut ret = 0usize;
    assert_eq!(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, bytes, ptrs.as_mut_ptr().cast(), &mut ret), SUCCESS);
    assert_eq!(ret, bytes);
    // Too small an array of pointers.
    assert_eq!(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, 4, ptrs.as_mut_ptr().cast(), null_mut()), CL_INVALID_VALUE);
    bins
}

fn from_binaries(env: &Env, bins: &[Vec<u8>]) -> (cl_program, cl_int, Vec<cl_int>) {
    let lengths: Vec<usize> = bins.iter().map(Vec::len).collect();
    let mut ptrs: Vec<*const u8> = bins.iter().map(|b| b.as_ptr()).collect();
    let mut status = vec![1; bins.len()];
    let mut err = 0;
    let p = clCreateProgramWithBinary(
        env.ctx,
        bins.len() as u32,
        env.devices.as_ptr(),
        lengths.as_ptr(),
        ptrs.as_mut_ptr(),
        status.as_mut_ptr(),
        &mut err,
    );
    (p, err, status)
}

fn run_vadd(env: &Env, prog: cl_program, di: usize, n: usize) {
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (ba, bb, bc) = (env.buffer(&a), env.buffer(&b), env.buffer(&vec![0f32; n]));
    let k = kernel(prog, "vadd").unwrap();
    set_mem(k, 0, &ba);
    set_mem(k, 1, &bb);
    set_mem(k, 2, &bc);
    set_val(k, 3, &2.0f32);
    assert_eq!(run(env.queues[di], k, &[n], None), SUCCESS);
    let c: Vec<f32> = env.read(env.queues[di], bc, n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i] * 2.0, "device {di} c[{i}]");
    }
    clReleaseKernel(k);
    for m in [ba, bb, bc] {
        clReleaseMemObject(m);
    }
}

#[test]
fn binaries_round_trip() {
    let env = Env::new();
    let prog = env.build(VADD, "-cl-std=CL3.0");
    let bins = binaries_of(prog);
    assert_eq!(bins.len(), env.devices.len());
    assert!(bins.iter().all(|b| b.starts_with(b"SOFTCLB\0")));
    let (p2, err, status) = from_binaries(&env, &bins);
    assert_eq!(err, SUCCESS);
    assert!(status.iter().all(|&s| s == SUCCESS));
    // A binary must still be built; its binary type is known at once.
    assert_eq!(binary_type(p2, env.devices[0]), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
    assert_eq!(kernel(p2, "vadd"), Err(CL_INVALID_PROGRAM_EXECUTABLE));
    // A failed build keeps the binary.
    let bad = CString::new("-cl-no-such-option").unwrap();
    assert_eq!(clBuildProgram(p2, 0, null(), bad.as_ptr(), None, null_mut()), CL_INVALID_BUILD_OPTIONS);
    assert_eq!(build_status(p2, env.devices[0]), CL_BUILD_ERROR);
    assert_eq!(clBuildProgram(p2, 0, null(), null(), None, null_mut()), SUCCESS);
    for di in 0..env.devices.len() {
        run_vadd(&env, p2, di, 333);
    }
    // The OpenCL C 2.0 options travel with the binary: non-uniform work-groups are allowed.
    let k = kernel(p2, "vadd").unwrap();
    let n = 100usize;
    let bufs: Vec<cl_mem> = (0..3).map(|_| env.buffer(&vec![1f32; n])).collect();
    for (i, b) in bufs.iter().enumerate() {
        set_mem(k, i as u32, b);
    }
    set_val(k, 3, &1.0f32);
    assert_eq!(run(env.queues[0], k, &[n], Some(&[64])), SUCCESS);
    clReleaseKernel(k);
    clReleaseProgram(p2);

    // Garbage, and a corrupted binary, are rejected per device.
    let mut bad = bins.clone();
    bad[0] = b"definitely not a binary".to_vec();
    let last = bad.len() - 1;
    let mid = bad[last].len() / 2;
    bad[last][mid] ^= 0x40;
    let (p3, err, status) = from_binaries(&env, &bad);
    assert!(p3.is_null());
    assert_eq!(err, CL_INVALID_BINARY);
    assert_eq!(status[0], CL_INVALID_BINARY);
    assert_eq!(status[last], CL_INVALID_BINARY);
    // An empty binary is CL_INVALID_VALUE.
    let mut empty = bins.clone();
    empty[0].clear();
    let (p4, err, status) = from_binaries(&env, &empty);
    assert!(p4.is_null());
    assert_eq!((err, status[0]), (CL_INVALID_VALUE, CL_INVALID_VALUE));
    clReleaseProgram(prog);
}

fn spirv_of(src: &str) -> Vec<u8> {
    use softcl_compiler::front::{opencl_c, BuildOptions};
    let target = softcl_compiler::Target::default();
    let options = BuildOptions::default();
    opencl_c::compile_to_spirv(src, &options, &target).unwrap().bytes
}

#[test]
fn program_from_il() {
    let env = Env::new();
    let il = spirv_of(VADD);
    let mut err = 0;
    let prog = clCreateProgramWithIL(env.ctx, il.as_ptr().cast(), il.len(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(program_info_bytes(prog, CL_PROGRAM_IL).unwrap(), il);
    assert_eq!(program_info_string(prog, CL_PROGRAM_SOURCE).unwrap(), "");
    // Bad options are still bad options.
    let bad = CString::new("-cl-bogus").unwrap();
    assert_eq!(clBuildProgram(prog, 0, null(), bad.as_ptr(), None, null_mut()), CL_INVALID_BUILD_OPTIONS);
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, null_mut()), SUCCESS);
    for di in 0..env.devices.len() {
        run_vadd(&env, prog, di, 77);
    }
    // The translator kept the argument names: argument info is available.
    let k = kernel(prog, "vadd").unwrap();
    let mut size = 0;
    assert_eq!(clGetKernelArgInfo(k, 3, CL_KERNEL_ARG_NAME, 0, null_mut(), &mut size), SUCCESS);
    assert_eq!(size, 2);
    clReleaseKernel(k);
    // No specialization constant in this module; source programs take none at all.
    assert_eq!(clSetProgramSpecializationConstant(prog, 0, 4, (&1u32 as *const u32).cast()), CL_INVALID_SPEC_ID);
    assert_eq!(clSetProgramSpecializationConstant(prog, 0, 4, null()), CL_INVALID_VALUE);
    let src = env.source(VADD);
    assert_eq!(clSetProgramSpecializationConstant(src, 0, 4, (&1u32 as *const u32).cast()), CL_INVALID_PROGRAM);
    clReleaseProgram(src);
    clReleaseProgram(prog);

    let garbage: Vec<u8> = (0..256u32).map(|i| (i * 37 + 11) as u8).collect();
    let p = clCreateProgramWithIL(env.ctx, garbage.as_ptr().cast(), garbage.len(), &mut err);
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    assert!(clCreateProgramWithIL(env.ctx, null(), 4, &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
}

#[test]
fn compile_and_link_single_program() {
    let env = Env::new();
    let header = env.source("#define SCALE 3\n");
    let prog =
        env.source("#include \"inc/scale.h\"\n__kernel void s(__global int* p) { p[get_global_id(0)] *= SCALE; }\n");
    // Without the header the include fails.
    assert_eq!(
        clCompileProgram(prog, 0, null(), null(), 0, null(), null_mut(), None, null_mut()),
        CL_COMPILE_PROGRAM_FAILURE
    );
    assert!(build_log(prog, env.devices[0]).contains("inc/scale.h"));
    let name = CString::new("inc/scale.h").unwrap();
    let mut names = [name.as_ptr()];
    let bad = CString::new("-cl-nope").unwrap();
    assert_eq!(
        clCompileProgram(prog, 0, null(), bad.as_ptr(), 1, &header, names.as_mut_ptr(), None, null_mut()),
        CL_INVALID_COMPILER_OPTIONS
    );
    assert_eq!(
        clCompileProgram(prog, 0, null(), null(), 1, null(), names.as_mut_ptr(), None, null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(clCompileProgram(prog, 0, null(), null(), 1, &header, names.as_mut_ptr(), None, null_mut()), SUCCESS);
    for &d in &env.devices {
        assert_eq!(binary_type(prog, d), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        assert_eq!(build_status(prog, d), CL_BUILD_SUCCESS as cl_build_status);
    }
    // A compiled object is not an executable.
    assert_eq!(kernel(prog, "s"), Err(CL_INVALID_PROGRAM_EXECUTABLE));

    let mut err = 0;
    let bad_link = CString::new("-DX").unwrap();
    let l = clLinkProgram(env.ctx, 0, null(), bad_link.as_ptr(), 1, &prog, None, null_mut(), &mut err);
    assert!(l.is_null());
    assert_eq!(err, CL_INVALID_LINKER_OPTIONS);
    assert!(clLinkProgram(env.ctx, 0, null(), null(), 0, null(), None, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    // A source program without a compiled object cannot be linked.
    let plain = env.source(VADD);
    assert!(clLinkProgram(env.ctx, 0, null(), null(), 1, &plain, None, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_OPERATION);

    let lib_opt = CString::new("-create-library").unwrap();
    let lib = clLinkProgram(env.ctx, 0, null(), lib_opt.as_ptr(), 1, &prog, None, null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(binary_type(lib, env.devices[0]), CL_PROGRAM_BINARY_TYPE_LIBRARY);

    let exe = clLinkProgram(env.ctx, 0, null(), null(), 1, &lib, None, null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    for (di, &d) in env.devices.iter().enumerate() {
        assert_eq!(binary_type(exe, d), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        let k = kernel(exe, "s").unwrap();
        let data: Vec<i32> = (0..16).collect();
        let b = env.buffer(&data);
        set_mem(k, 0, &b);
        assert_eq!(run(env.queues[di], k, &[16], None), SUCCESS);
        assert_eq!(env.read::<i32>(env.queues[di], b, 16), data.iter().map(|x| x * 3).collect::<Vec<_>>());
        clReleaseKernel(k);
        clReleaseMemObject(b);
    }
    // Linking a program with itself defines every symbol twice: a link failure with a
    // program and a log naming the symbol.
    let pair = [prog, prog];
    let two = clLinkProgram(env.ctx, 0, null(), null(), 2, pair.as_ptr(), None, null_mut(), &mut err);
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
    assert!(!two.is_null());
    assert_eq!(build_status(two, env.devices[0]), CL_BUILD_ERROR);
    let log = build_log(two, env.devices[0]);
    assert!(log.contains("duplicate definition") && log.contains("\"s\""), "{log}");
    for p in [two, exe, lib, plain, prog, header] {
        assert_eq!(clReleaseProgram(p), SUCCESS);
    }
}

const ARGS: &str = r#"
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

fn arg_info_string(k: cl_kernel, i: u32, param: u32) -> String {
    let mut size = 0;
    assert_eq!(clGetKernelArgInfo(k, i, param, 0, null_mut(), &mut size), SUCCESS);
    let mut b = vec![0u8; size];
    assert_eq!(clGetKernelArgInfo(k, i, param, size, b.as_mut_ptr().cast(), null_mut()), SUCCESS);
    b.pop();
    String::from_utf8(b).unwrap()
}

fn arg_info_u64(k: cl_kernel, i: u32, param: u32) -> u64 {
    let mut b = [0u8; 8];
    let mut size = 0;
    assert_eq!(clGetKernelArgInfo(k, i, param, 8, b.as_mut_ptr().cast(), &mut size), SUCCESS);
    match size {
        4 => u32::from_ne_bytes(b[..4].try_into().unwrap()) as u64,
        _ => u64::from_ne_bytes(b),
    }
}

#[test]
fn kernel_info_and_arg_info() {
    let env = Env::new();
    let prog = env.build(ARGS, "");
    let k = kernel(prog, "args").unwrap();
    let mut b = [0u8; 64];
    let mut size = 0;
    assert_eq!(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 64, b.as_mut_ptr().cast(), &mut size), SUCCESS);
    assert_eq!(&b[..size], b"args\0");
    assert_eq!(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, 4, b.as_mut_ptr().cast(), null_mut()), SUCCESS);
    assert_eq!(u32::from_ne_bytes(b[..4].try_into().unwrap()), 6);
    assert_eq!(clGetKernelInfo(k, CL_KERNEL_PROGRAM, 8, b.as_mut_ptr().cast(), null_mut()), SUCCESS);
    assert_eq!(usize::from_ne_bytes(b[..8].try_into().unwrap()), prog as usize);
    assert_eq!(clGetKernelInfo(k, CL_KERNEL_CONTEXT, 8, b.as_mut_ptr().cast(), null_mut()), SUCCESS);
    assert_eq!(usize::from_ne_bytes(b[..8].try_into().unwrap()), env.ctx as usize);
    assert_eq!(clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, 64, b.as_mut_ptr().cast(), null_mut()), SUCCESS);
    assert_eq!(clGetKernelInfo(k, 0x1234, 64, b.as_mut_ptr().cast(), null_mut()), CL_INVALID_VALUE);

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
        assert_eq!(arg_info_string(k, i, CL_KERNEL_ARG_NAME), names[iu]);
        assert_eq!(arg_info_string(k, i, CL_KERNEL_ARG_TYPE_NAME), types[iu]);
        assert_eq!(arg_info_u64(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER), address[iu] as u64);
        assert_eq!(arg_info_u64(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER), CL_KERNEL_ARG_ACCESS_NONE as u64);
    }
    let q0 = arg_info_u64(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER);
    assert_eq!(q0, (CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT) as u64);
    assert_eq!(arg_info_u64(k, 1, CL_KERNEL_ARG_TYPE_QUALIFIER), 0);
    assert_ne!(arg_info_u64(k, 3, CL_KERNEL_ARG_TYPE_QUALIFIER) & CL_KERNEL_ARG_TYPE_CONST as u64, 0);
    assert_eq!(clGetKernelArgInfo(k, 6, CL_KERNEL_ARG_NAME, 0, null_mut(), &mut size), CL_INVALID_ARG_INDEX);

    // Clones are independent kernel objects of the same program.
    let mut err = 0;
    let c = clCloneKernel(k, &mut err);
    assert_eq!(err, SUCCESS);
    assert_ne!(c, k);
    assert_eq!(clGetKernelInfo(c, CL_KERNEL_FUNCTION_NAME, 64, b.as_mut_ptr().cast(), &mut size), SUCCESS);
    assert_eq!(&b[..size], b"args\0");

    // Sub-groups: every device has them; an unknown query is CL_INVALID_VALUE.
    let mut v = 0usize;
    let d = env.devices[0];
    let vp = (&mut v as *mut usize).cast();
    assert_eq!(clGetKernelSubGroupInfo(k, d, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, null(), 8, vp, null_mut()), SUCCESS);
    assert!(v >= 1);
    assert_eq!(clGetKernelSubGroupInfo(k, d, 0x7fff, 0, null(), 8, vp, null_mut()), CL_INVALID_VALUE);
    // SVM: a NULL exec-info value is CL_INVALID_VALUE, a bad handle CL_INVALID_KERNEL.
    assert_eq!(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, null()), CL_INVALID_VALUE);
    assert_eq!(clSetKernelArgSVMPointer(null_mut(), 0, null()), CL_INVALID_KERNEL);

    for kk in [c, k] {
        assert_eq!(clReleaseKernel(kk), SUCCESS);
    }
    clReleaseProgram(prog);
}

#[test]
fn create_kernels_and_names() {
    let env = Env::single(0);
    let prog = env.build(THREE, "");
    assert_eq!(kernel(prog, "nope"), Err(CL_INVALID_KERNEL_NAME));
    let mut err = 0;
    assert!(clCreateKernel(prog, null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let mut n = 0u32;
    assert_eq!(clCreateKernelsInProgram(prog, 0, null_mut(), &mut n), SUCCESS);
    assert_eq!(n, 3);
    let mut ks = vec![null_mut(); 3];
    assert_eq!(clCreateKernelsInProgram(prog, 2, ks.as_mut_ptr(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clCreateKernelsInProgram(prog, 3, ks.as_mut_ptr(), null_mut()), SUCCESS);
    let buf = env.buffer(&[0i32; 8]);
    for &k in &ks {
        set_mem(k, 0, &buf);
        let mut nargs = 0u32;
        assert_eq!(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, 4, (&mut nargs as *mut u32).cast(), null_mut()), SUCCESS);
        for i in 1..nargs {
            set_val(k, i, &(i as i32 + 5));
        }
        assert_eq!(run(env.queues[0], k, &[8], None), SUCCESS);
    }
    assert_eq!(env.read::<i32>(env.queues[0], buf, 8), vec![42; 8]);
    // Kernels keep the program's build: rebuilding is refused.
    assert_eq!(clBuildProgram(prog, 0, null(), null(), None, null_mut()), CL_INVALID_OPERATION);
    for k in ks {
        clReleaseKernel(k);
    }
    clReleaseMemObject(buf);
    clReleaseProgram(prog);
}

#[test]
fn set_kernel_arg_errors() {
    let env = Env::single(0);
    let prog = env.build(ARGS, "");
    let k = kernel(prog, "args").unwrap();
    let buf = env.buffer(&[0f32; 16]);
    let m = std::mem::size_of::<cl_mem>();
    assert_eq!(clSetKernelArg(k, 6, 4, (&1i32 as *const i32).cast()), CL_INVALID_ARG_INDEX);
    // Buffers.
    assert_eq!(clSetKernelArg(k, 0, 4, (&buf as *const cl_mem).cast()), CL_INVALID_ARG_SIZE);
    let bogus: cl_mem = (&0u64 as *const u64) as cl_mem;
    assert_eq!(clSetKernelArg(k, 0, m, (&bogus as *const cl_mem).cast()), CL_INVALID_MEM_OBJECT);
    assert_eq!(clSetKernelArg(k, 0, m, null()), SUCCESS);
    let nul: cl_mem = null_mut();
    assert_eq!(clSetKernelArg(k, 3, m, (&nul as *const cl_mem).cast()), SUCCESS);
    // __local.
    assert_eq!(clSetKernelArg(k, 2, 0, null()), CL_INVALID_ARG_SIZE);
    assert_eq!(clSetKernelArg(k, 2, 64, (&buf as *const cl_mem).cast()), CL_INVALID_ARG_VALUE);
    assert_eq!(clSetKernelArg(k, 2, 64, null()), SUCCESS);
    // Values.
    assert_eq!(clSetKernelArg(k, 4, 8, (&1u64 as *const u64).cast()), CL_INVALID_ARG_SIZE);
    assert_eq!(clSetKernelArg(k, 4, 4, null()), CL_INVALID_ARG_VALUE);
    assert_eq!(clSetKernelArg(k, 5, 16, [0f32; 4].as_ptr().cast()), SUCCESS);
    assert_eq!(clSetKernelArg(null_mut(), 0, 4, null()), CL_INVALID_KERNEL);
    // Argument 1 and 4 are unset.
    set_mem(k, 0, &buf);
    assert_eq!(run(env.queues[0], k, &[4], None), CL_INVALID_KERNEL_ARGS);
    clReleaseKernel(k);
    clReleaseMemObject(buf);
    clReleaseProgram(prog);
}

const WG: &str = r#"
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

fn wg_info<const N: usize>(k: cl_kernel, d: cl_device_id, param: u32) -> Result<[u8; N], cl_int> {
    let mut b = [0u8; N];
    let mut size = 0;
    match clGetKernelWorkGroupInfo(k, d, param, N, b.as_mut_ptr().cast(), &mut size) {
        0 => {
            assert_eq!(size, N);
            Ok(b)
        }
        e => Err(e),
    }
}

fn device_usize(d: cl_device_id, param: u32) -> usize {
    let mut v = 0usize;
    let code = softcl::api::device::clGetDeviceInfo(d, param, 8, (&mut v as *mut usize).cast(), null_mut());
    assert_eq!(code, SUCCESS);
    v
}

#[test]
fn work_group_info() {
    let env = Env::new();
    let prog = env.build(WG, "");
    for (di, &d) in env.devices.iter().enumerate() {
        let max = device_usize(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
        let plain = kernel(prog, "plain").unwrap();
        assert_eq!(usize::from_ne_bytes(wg_info(plain, d, CL_KERNEL_WORK_GROUP_SIZE).unwrap()), max);
        let mult = usize::from_ne_bytes(wg_info(plain, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE).unwrap());
        assert!(mult >= 1 && mult <= max);
        assert_eq!(u64::from_ne_bytes(wg_info(plain, d, CL_KERNEL_LOCAL_MEM_SIZE).unwrap()), 0);
        assert_eq!(wg_info::<24>(plain, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE).unwrap(), [0; 24]);
        wg_info::<8>(plain, d, CL_KERNEL_PRIVATE_MEM_SIZE).unwrap();
        assert_eq!(wg_info::<24>(plain, d, CL_KERNEL_GLOBAL_WORK_SIZE), Err(CL_INVALID_VALUE));
        // Two devices: NULL is ambiguous.
        assert_eq!(wg_info::<8>(plain, null_mut(), CL_KERNEL_WORK_GROUP_SIZE), Err(CL_INVALID_DEVICE));

        let wl = kernel(prog, "with_local").unwrap();
        let fixed = u64::from_ne_bytes(wg_info(wl, d, CL_KERNEL_LOCAL_MEM_SIZE).unwrap());
        assert!(fixed >= 256, "{fixed}");
        assert_eq!(clSetKernelArg(wl, 1, 1024, null()), SUCCESS);
        assert_eq!(u64::from_ne_bytes(wg_info(wl, d, CL_KERNEL_LOCAL_MEM_SIZE).unwrap()), fixed + 1024);
        // More __local memory than the device has.
        let local_mem = {
            let mut v = 0u64;
            softcl::api::device::clGetDeviceInfo(
                d,
                CL_DEVICE_LOCAL_MEM_SIZE,
                8,
                (&mut v as *mut u64).cast(),
                null_mut(),
            );
            v
        };
        let buf = env.buffer(&[1f32; 64]);
        set_mem(wl, 0, &buf);
        assert_eq!(clSetKernelArg(wl, 1, local_mem as usize, null()), SUCCESS);
        assert_eq!(run(env.queues[di], wl, &[64], Some(&[64])), CL_OUT_OF_RESOURCES);
        assert_eq!(clSetKernelArg(wl, 1, 64 * 4, null()), SUCCESS);
        assert_eq!(run(env.queues[di], wl, &[64], Some(&[64])), SUCCESS);
        assert_eq!(env.read::<f32>(env.queues[di], buf, 64), vec![2.0; 64]);

        let fk = kernel(prog, "fixed_size").unwrap();
        let compile = wg_info::<24>(fk, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE).unwrap();
        let sizes: Vec<usize> = compile.chunks_exact(8).map(|c| usize::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(sizes, [8, 4, 1]);
        assert_eq!(usize::from_ne_bytes(wg_info(fk, d, CL_KERNEL_WORK_GROUP_SIZE).unwrap()), 32);
        let out = env.buffer(&[0i32; 256]);
        set_mem(fk, 0, &out);
        // NULL local size: the required size is used.
        assert_eq!(run(env.queues[di], fk, &[32, 8], None), SUCCESS);
        assert_eq!(env.read::<i32>(env.queues[di], out, 256), vec![4; 256]);
        // Any other local size is refused.
        assert_eq!(run(env.queues[di], fk, &[32, 8], Some(&[4, 8])), CL_INVALID_WORK_GROUP_SIZE);
        assert_eq!(run(env.queues[di], fk, &[32, 8], Some(&[8, 4])), SUCCESS);
        for k in [plain, wl, fk] {
            clReleaseKernel(k);
        }
        clReleaseMemObject(buf);
        clReleaseMemObject(out);
    }
    clReleaseProgram(prog);
}

#[test]
fn vector_add_on_every_device() {
    let env = Env::new();
    let prog = env.build(VADD, "");
    for di in 0..env.devices.len() {
        for n in [1usize, 64, 1000, 4099] {
            run_vadd(&env, prog, di, n);
        }
    }
    clReleaseProgram(prog);
}

const IDS: &str = r#"
__kernel void ids(__global uint* out, __global uint* lsize) {
    size_t g = get_global_id(0);
    out[g - get_global_offset(0)] = (uint)g;
    if (get_local_id(0) == 0)
        lsize[get_group_id(0)] = (uint)get_local_size(0);
}"#;

#[test]
fn ndrange_uniformity_offsets_and_tasks() {
    let env = Env::new();
    let cl12 = env.build(IDS, "");
    let cl20 = env.build(IDS, "-cl-std=CL3.0");
    let cl20u = env.build(IDS, "-cl-std=CL3.0 -cl-uniform-work-group-size");
    let (global, local) = (1000usize, 64usize);
    let groups = global.div_ceil(local);
    for (di, &q) in env.queues.iter().enumerate() {
        let out = env.buffer(&vec![0u32; global]);
        let ls = env.buffer(&vec![0u32; groups]);
        let k12 = kernel(cl12, "ids").unwrap();
        let k20 = kernel(cl20, "ids").unwrap();
        let k20u = kernel(cl20u, "ids").unwrap();
        for k in [k12, k20, k20u] {
            set_mem(k, 0, &out);
            set_mem(k, 1, &ls);
        }
        // Non-uniform work-groups: OpenCL C 2.0 and later only, and not with -cl-uniform-work-group-size.
        assert_eq!(run(q, k12, &[global], Some(&[local])), CL_INVALID_WORK_GROUP_SIZE);
        assert_eq!(run(q, k20u, &[global], Some(&[local])), CL_INVALID_WORK_GROUP_SIZE);
        assert_eq!(run(q, k20, &[global], Some(&[local])), SUCCESS);
        let l: Vec<u32> = env.read(q, ls, groups);
        assert!(l[..groups - 1].iter().all(|&x| x as usize == local), "device {di}: {l:?}");
        assert_eq!(l[groups - 1] as usize, global - (groups - 1) * local);
        // NULL local size picks a size dividing the global size.
        assert_eq!(run(q, k12, &[global], None), SUCCESS);
        let l: Vec<u32> = env.read(q, ls, 1);
        assert!(l[0] >= 1 && global % l[0] as usize == 0, "picked {}", l[0]);
        assert_eq!(env.read::<u32>(q, out, global), (0..global as u32).collect::<Vec<_>>());
        // A global offset.
        let offset = [500usize];
        let mut ev = null_mut();
        let code = clEnqueueNDRangeKernel(
            q,
            k12,
            1,
            offset.as_ptr(),
            [256usize].as_ptr(),
            [64usize].as_ptr(),
            0,
            null(),
            &mut ev,
        );
        assert_eq!(code, SUCCESS);
        assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
        clReleaseEvent(ev);
        assert_eq!(env.read::<u32>(q, out, 256), (500..756u32).collect::<Vec<_>>());
        // clEnqueueTask: one work-item.
        let mut ev = null_mut();
        assert_eq!(clEnqueueTask(q, k12, 0, null(), &mut ev), SUCCESS);
        assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
        let mut ty = 0u32;
        assert_eq!(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, 4, (&mut ty as *mut u32).cast(), null_mut()), SUCCESS);
        assert_eq!(ty, CL_COMMAND_TASK);
        clReleaseEvent(ev);
        assert_eq!(env.read::<u32>(q, ls, 1), vec![1]);
        for k in [k12, k20, k20u] {
            clReleaseKernel(k);
        }
        clReleaseMemObject(out);
        clReleaseMemObject(ls);
    }
    for p in [cl12, cl20, cl20u] {
        clReleaseProgram(p);
    }
}

#[test]
fn ndrange_errors() {
    let env = Env::new();
    let prog = env.build(VADD, "");
    let k = kernel(prog, "vadd").unwrap();
    let q = env.queues[0];
    let d = env.devices[0];
    let bufs: Vec<cl_mem> = (0..3).map(|_| env.buffer(&[0f32; 64])).collect();
    for (i, b) in bufs.iter().enumerate() {
        set_mem(k, i as u32, b);
    }
    set_val(k, 3, &1.0f32);
    let g = [64usize, 1, 1];
    let nd = |dim: u32, global: *const usize, local: *const usize| {
        clEnqueueNDRangeKernel(q, k, dim, null(), global, local, 0, null(), null_mut())
    };
    assert_eq!(nd(0, g.as_ptr(), null()), CL_INVALID_WORK_DIMENSION);
    assert_eq!(nd(4, g.as_ptr(), null()), CL_INVALID_WORK_DIMENSION);
    // OpenCL 2.1+: no work-items is a command that trivially succeeds.
    let mut ev = null_mut();
    assert_eq!(clEnqueueNDRangeKernel(q, k, 1, null(), null(), null(), 0, null(), &mut ev), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    clReleaseEvent(ev);
    assert_eq!(nd(2, [64usize, 0].as_ptr(), null()), SUCCESS);
    let max_items = {
        let mut v = [0usize; 3];
        softcl::api::device::clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, 24, v.as_mut_ptr().cast(), null_mut());
        v
    };
    let max = device_usize(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    let big = [max_items[0] * 2];
    assert_eq!(nd(1, [big[0] * 2].as_ptr(), big.as_ptr()), CL_INVALID_WORK_ITEM_SIZE);
    if max_items[0] * max_items[1] > max {
        let l = [max_items[0], max_items[1]];
        let gl = [l[0] * 2, l[1] * 2];
        assert_eq!(nd(2, gl.as_ptr(), l.as_ptr()), CL_INVALID_WORK_GROUP_SIZE);
    }
    assert_eq!(nd(1, g.as_ptr(), [0usize].as_ptr()), CL_INVALID_WORK_GROUP_SIZE);
    assert_eq!(nd(1, [60usize].as_ptr(), [8usize].as_ptr()), CL_INVALID_WORK_GROUP_SIZE);
    assert_eq!(nd(1, g.as_ptr(), [16usize].as_ptr()), SUCCESS);
    let offset = [usize::MAX - 10];
    assert_eq!(
        clEnqueueNDRangeKernel(q, k, 1, offset.as_ptr(), g.as_ptr(), null(), 0, null(), null_mut()),
        CL_INVALID_GLOBAL_OFFSET
    );
    // Wait lists.
    assert_eq!(
        clEnqueueNDRangeKernel(q, k, 1, null(), g.as_ptr(), null(), 1, null(), null_mut()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    assert_eq!(
        clEnqueueNDRangeKernel(null_mut(), k, 1, null(), g.as_ptr(), null(), 0, null(), null_mut()),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        clEnqueueNDRangeKernel(q, null_mut(), 1, null(), g.as_ptr(), null(), 0, null(), null_mut()),
        CL_INVALID_KERNEL
    );
    // A queue of another context.
    let other = Env::single(0);
    assert_eq!(
        clEnqueueNDRangeKernel(other.queues[0], k, 1, null(), g.as_ptr(), null(), 0, null(), null_mut()),
        CL_INVALID_CONTEXT
    );
    // A program built for the first device only cannot run on the second.
    if env.devices.len() > 1 {
        let p1 = env.source(VADD);
        assert_eq!(clBuildProgram(p1, 1, &env.devices[0], null(), None, null_mut()), SUCCESS);
        assert_eq!(build_status(p1, env.devices[1]), CL_BUILD_NONE);
        let k1 = kernel(p1, "vadd").unwrap();
        for (i, b) in bufs.iter().enumerate() {
            set_mem(k1, i as u32, b);
        }
        set_val(k1, 3, &1.0f32);
        assert_eq!(run(env.queues[1], k1, &g[..1], None), CL_INVALID_PROGRAM_EXECUTABLE);
        assert_eq!(run(env.queues[0], k1, &g[..1], None), SUCCESS);
        clReleaseKernel(k1);
        clReleaseProgram(p1);
    }
    // Native kernels: a NULL function is invalid; only the CPU device (the first) runs them.
    assert_eq!(
        clEnqueueNativeKernel(q, None, null_mut(), 0, 0, null(), null_mut(), 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    if env.devices.len() > 1 {
        extern "C" fn nothing(_: *mut c_void) {}
        assert_eq!(
            clEnqueueNativeKernel(
                env.queues[1],
                Some(nothing),
                null_mut(),
                0,
                0,
                null(),
                null_mut(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_OPERATION
        );
    }
    clFinish(q);
    clReleaseKernel(k);
    for b in bufs {
        clReleaseMemObject(b);
    }
    clReleaseProgram(prog);
}

#[test]
fn arguments_are_captured_at_enqueue() {
    const SRC: &str = "__kernel void put(__global int* p, int v) { p[get_global_id(0)] = v; }";
    let env = Env::single(0);
    let prog = env.build(SRC, "");
    let k = kernel(prog, "put").unwrap();
    let a = env.buffer(&[0i32; 4]);
    let b = env.buffer(&[0i32; 4]);
    let q = env.queues[0];
    // Changing the arguments right after enqueueing does not affect the enqueued command.
    set_mem(k, 0, &a);
    set_val(k, 1, &5i32);
    assert_eq!(clEnqueueNDRangeKernel(q, k, 1, null(), [4usize].as_ptr(), null(), 0, null(), null_mut()), SUCCESS);
    set_mem(k, 0, &b);
    set_val(k, 1, &9i32);
    assert_eq!(clEnqueueNDRangeKernel(q, k, 1, null(), [4usize].as_ptr(), null(), 0, null(), null_mut()), SUCCESS);
    assert_eq!(env.read::<i32>(q, a, 4), vec![5; 4]);
    assert_eq!(env.read::<i32>(q, b, 4), vec![9; 4]);
    let data = [3i32; 4];
    let code = clEnqueueWriteBuffer(q, a, CL_TRUE, 0, 16, data.as_ptr().cast(), 0, null(), null_mut());
    assert_eq!(code, SUCCESS);

    // The application may release a buffer (and unset the argument) while an enqueued
    // command still has to use it.
    let mut host = [0i32; 4];
    let mut err = 0;
    let flags = (CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR) as u64;
    let c = clCreateBuffer(env.ctx, flags, 16, host.as_mut_ptr().cast(), &mut err);
    assert_eq!(err, SUCCESS);
    let gate = clCreateUserEvent(env.ctx, &mut err);
    assert_eq!(err, SUCCESS);
    set_mem(k, 0, &c);
    set_val(k, 1, &11i32);
    let mut ev = null_mut();
    assert_eq!(clEnqueueNDRangeKernel(q, k, 1, null(), [4usize].as_ptr(), null(), 1, &gate, &mut ev), SUCCESS);
    assert_eq!(clReleaseMemObject(c), SUCCESS);
    assert_eq!(clSetKernelArg(k, 0, std::mem::size_of::<cl_mem>(), null()), SUCCESS);
    assert_eq!(clSetUserEventStatus(gate, CL_COMPLETE as cl_int), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    // SAFETY: the command has completed; nothing else writes `host`.
    assert_eq!(unsafe { std::ptr::read_volatile(&host) }, [11; 4]);
    clReleaseEvent(ev);
    clReleaseEvent(gate);
    clReleaseKernel(k);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseProgram(prog);
}

#[test]
fn unsupported_program_features() {
    let env = Env::single(0);
    let mut err = 0;
    let names = CString::new("builtin_kernel").unwrap();
    let p = clCreateProgramWithBuiltInKernels(env.ctx, 1, env.devices.as_ptr(), names.as_ptr(), &mut err);
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let prog = env.source(VADD);
    assert_eq!(clSetProgramReleaseCallback(prog, Some(count_notify), null_mut()), CL_INVALID_OPERATION);
    assert_eq!(clSetProgramReleaseCallback(prog, None, null_mut()), CL_INVALID_VALUE);
    assert_eq!(clUnloadCompiler(), SUCCESS);
    clReleaseProgram(prog);
}
