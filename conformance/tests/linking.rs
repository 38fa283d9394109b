//! Separate compilation and linking: clCompileProgram with extern declarations and input
//! headers, clLinkProgram of objects and libraries, link options and errors, binaries of
//! compiled objects and libraries, SPIR-V modules with Import/Export linkage, callbacks.

use softcl_conformance::*;
use std::ffi::{c_char, c_void, CString};
use std::ptr;

/// Uses a function and a program-scope variable defined in another program.
const USER_SRC: &str = r#"
extern int helper(int x);
extern constant int offset;
kernel void use_extern(global int *out) {
    size_t i = get_global_id(0);
    out[i] = helper((int)i) + offset;
}"#;

/// Defines them, plus a kernel of its own.
const DEFS_SRC: &str = r#"
constant int offset = 7;
int helper(int x) { return x * 3; }
kernel void read_offset(global int *out) { out[0] = offset; }
"#;

const N: usize = 64;

fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

/// clCompileProgram of `program` for `dev` with `headers` (include name, header program).
fn compile_program(program: &Program, dev: cl_device_id, options: &str, headers: &[(&str, &Program)]) -> cl_int {
    let opts = cstring(options);
    let names: Vec<CString> = headers.iter().map(|(n, _)| cstring(n)).collect();
    let mut name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let handles: Vec<cl_program> = headers.iter().map(|(_, p)| p.raw()).collect();
    let (h, n) =
        if headers.is_empty() { (ptr::null(), ptr::null_mut()) } else { (handles.as_ptr(), name_ptrs.as_mut_ptr()) };
    // SAFETY: valid program and device; the header arrays have headers.len() entries.
    unsafe {
        clCompileProgram(program.raw(), 1, &dev, opts.as_ptr(), headers.len() as cl_uint, h, n, None, ptr::null_mut())
    }
}

/// Creates `source` and compiles it, panicking with the log on failure.
#[track_caller]
fn compiled(env: &TestEnv, source: &str, options: &str) -> Program {
    let program = program_from_source(&env.context, source);
    let code = compile_program(&program, env.dev(), options, &[]);
    if code != CL_SUCCESS {
        let log = program_build_info_string(program.raw(), env.dev(), CL_PROGRAM_BUILD_LOG);
        panic!("clCompileProgram: {} ({code})\n{log}", error_name(code));
    }
    program
}

/// clLinkProgram for `dev`: the program (if one was returned), the error code and the log.
fn link(env: &TestEnv, options: &str, inputs: &[&Program]) -> (Option<Program>, cl_int, String) {
    let opts = cstring(options);
    let raw: Vec<cl_program> = inputs.iter().map(|p| p.raw()).collect();
    let dev = env.dev();
    let mut err = 0;
    // SAFETY: valid context, device and input programs; no callback.
    let linked = unsafe {
        clLinkProgram(
            env.context.raw(),
            1,
            &dev,
            opts.as_ptr(),
            raw.len() as cl_uint,
            raw.as_ptr(),
            None,
            ptr::null_mut(),
            &mut err,
        )
    };
    if linked.is_null() {
        return (None, err, String::new());
    }
    // SAFETY: a new program whose reference we own.
    let program = unsafe { Program::from_raw(linked) };
    let log = program_build_info_string(program.raw(), dev, CL_PROGRAM_BUILD_LOG);
    (Some(program), err, log)
}

#[track_caller]
fn linked(env: &TestEnv, options: &str, inputs: &[&Program]) -> Program {
    let (program, err, log) = link(env, options, inputs);
    assert_eq!(err, CL_SUCCESS, "clLinkProgram: {} \n{log}", error_name(err));
    program.expect("a program")
}

fn binary_type(program: &Program, dev: cl_device_id) -> cl_program_binary_type {
    program_build_info(program.raw(), dev, CL_PROGRAM_BINARY_TYPE)
}

/// Runs kernel `name` of `program`, whose only argument is an output buffer of N elements,
/// on N work-items and returns the output.
fn run_kernel<T: Pod>(env: &TestEnv, program: &Program, name: &str) -> Vec<T> {
    let k = create_kernel(program, name).unwrap_or_else(|e| panic!("{e}"));
    let out = env.buffer(CL_MEM_WRITE_ONLY, N * std::mem::size_of::<T>());
    k.set_mem(0, &out);
    env.run(&k, &[N], None);
    env.read(&out, N)
}

fn run_use_extern(env: &TestEnv, program: &Program) -> Vec<i32> {
    run_kernel(env, program, "use_extern")
}

fn expected(offset: i32) -> Vec<i32> {
    (0..N as i32).map(|i| i * 3 + offset).collect()
}

#[test]
fn two_compiled_programs_share_a_function_and_a_global() {
    for_each_device(|d| {
        let env = d.env();
        let user = compiled(&env, USER_SRC, "");
        let defs = compiled(&env, DEFS_SRC, "");
        assert_eq!(binary_type(&user, d.id), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        assert_eq!(binary_type(&defs, d.id), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        let program = linked(&env, "", &[&user, &defs]);
        assert_eq!(binary_type(&program, d.id), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        let status: cl_build_status = program_build_info(program.raw(), d.id, CL_PROGRAM_BUILD_STATUS);
        assert_eq!(status, CL_BUILD_SUCCESS);
        // Kernels of every input are kernels of the linked program.
        let mut names: Vec<String> =
            program_info_string(program.raw(), CL_PROGRAM_KERNEL_NAMES).split(';').map(String::from).collect();
        names.sort();
        assert_eq!(names, ["read_offset", "use_extern"]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
        let read = create_kernel(&program, "read_offset").unwrap();
        let out = env.buffer(CL_MEM_WRITE_ONLY, 4);
        read.set_mem(0, &out);
        env.run(&read, &[1], None);
        assert_eq!(env.read::<i32>(&out, 1), [7]);
        // The order of the inputs does not matter.
        let program = linked(&env, "", &[&defs, &user]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
    });
}

#[test]
fn extern_struct_and_static_functions() {
    const A: &str = r#"
        typedef struct { int a; float b; } pair;
        extern float combine(pair p);
        static int local_fn(int x) { return x + 1; }
        kernel void use_struct(global float *out) {
            size_t i = get_global_id(0);
            pair p = { local_fn((int)i), 0.5f };
            out[i] = combine(p);
        }"#;
    const B: &str = r#"
        typedef struct { int a; float b; } pair;
        static int local_fn(int x) { return x * 100; }
        float combine(pair p) { return (float)local_fn(p.a) + p.b; }
        "#;
    for_each_device(|d| {
        let env = d.env();
        let program = linked(&env, "", &[&compiled(&env, A, ""), &compiled(&env, B, "")]);
        let got: Vec<f32> = run_kernel(&env, &program, "use_struct");
        // Each static local_fn stays its own module's.
        let want: Vec<f32> = (0..N).map(|i| ((i as i32 + 1) * 100) as f32 + 0.5).collect();
        assert_eq!(got, want);
    });
}

#[test]
fn kernel_calls_an_extern_kernel() {
    const CALLER: &str = r#"
        extern kernel void fill(global int *out, int v);
        kernel void caller(global int *out) { fill(out, 41); }"#;
    const CALLEE: &str = r#"
        kernel void fill(global int *out, int v) { out[get_global_id(0)] = v + 1; }"#;
    for_each_device(|d| {
        let env = d.env();
        let program = linked(&env, "", &[&compiled(&env, CALLER, ""), &compiled(&env, CALLEE, "")]);
        assert_eq!(run_kernel::<i32>(&env, &program, "caller"), vec![42; N]);
    });
}

#[test]
fn library_linked_with_an_object() {
    for_each_device(|d| {
        let env = d.env();
        let defs = compiled(&env, DEFS_SRC, "");
        let library = linked(&env, "-create-library", &[&defs]);
        assert_eq!(binary_type(&library, d.id), CL_PROGRAM_BINARY_TYPE_LIBRARY);
        // A library has no executable: no kernels can be created from it.
        let err = create_kernel(&library, "read_offset").expect_err("kernel from a library");
        expect_error("clCreateKernel(library)", err.code, CL_INVALID_PROGRAM_EXECUTABLE);
        // A library may leave imports unresolved.
        let user = compiled(&env, USER_SRC, "");
        let user_lib = linked(&env, "-create-library -enable-link-options -cl-fast-relaxed-math", &[&user]);
        assert_eq!(binary_type(&user_lib, d.id), CL_PROGRAM_BINARY_TYPE_LIBRARY);
        // Libraries of several objects, then libraries linked with objects and libraries.
        let both = linked(&env, "-create-library", &[&user, &defs]);
        assert_eq!(run_use_extern(&env, &linked(&env, "", &[&both])), expected(7));
        let program = linked(&env, "", &[&user, &library]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
        let program = linked(&env, "-cl-denorms-are-zero", &[&user_lib, &library]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
    });
}

/// CL_PROGRAM_BINARIES of a one-device program.
fn binary_of(program: &Program) -> Vec<u8> {
    let sizes: Vec<usize> = program_info_array(program.raw(), CL_PROGRAM_BINARY_SIZES);
    assert_eq!(sizes.len(), 1);
    let mut bytes = vec![0u8; sizes[0]];
    let mut ptrs = [bytes.as_mut_ptr()];
    // SAFETY: one pointer to a buffer of the reported size.
    unsafe {
        cl!(clGetProgramInfo(
            program.raw(),
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(&ptrs),
            ptrs.as_mut_ptr().cast::<c_void>(),
            ptr::null_mut()
        ))
    };
    bytes
}

/// clCreateProgramWithBinary for one device: the program or (error, binary status).
fn from_binary(env: &TestEnv, bytes: &[u8]) -> Result<Program, (cl_int, cl_int)> {
    let dev = env.dev();
    let len = bytes.len();
    let mut ptr_bin = bytes.as_ptr();
    let mut status = 1;
    let mut err = 0;
    // SAFETY: one device, one binary of len bytes, a status slot.
    let raw =
        unsafe { clCreateProgramWithBinary(env.context.raw(), 1, &dev, &len, &mut ptr_bin, &mut status, &mut err) };
    if raw.is_null() {
        return Err((err, status));
    }
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: a new program whose reference we own.
    Ok(unsafe { Program::from_raw(raw) })
}

#[test]
fn binaries_of_objects_and_libraries_round_trip() {
    for_each_device(|d| {
        let env = d.env();
        let user = compiled(&env, USER_SRC, "");
        let library = linked(&env, "-create-library", &[&compiled(&env, DEFS_SRC, "")]);
        let user_bin = binary_of(&user);
        let lib_bin = binary_of(&library);
        assert!(!user_bin.is_empty() && !lib_bin.is_empty());
        let user2 = from_binary(&env, &user_bin).unwrap_or_else(|e| panic!("object binary rejected: {e:?}"));
        let lib2 = from_binary(&env, &lib_bin).unwrap_or_else(|e| panic!("library binary rejected: {e:?}"));
        assert_eq!(binary_type(&user2, d.id), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        assert_eq!(binary_type(&lib2, d.id), CL_PROGRAM_BINARY_TYPE_LIBRARY);
        // The reloaded binaries link like the originals, and again after another round trip.
        let program = linked(&env, "", &[&user2, &lib2]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
        let exe_bin = binary_of(&program);
        let exe = from_binary(&env, &exe_bin).unwrap();
        assert_eq!(binary_type(&exe, d.id), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        let exe = build_program(exe, &[d.id], "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(run_use_extern(&env, &exe), expected(7));
        // An object with unresolved imports cannot become an executable by itself.
        let lonely = from_binary(&env, &user_bin).unwrap();
        let err = build_program(lonely, &[d.id], "").expect_err("built an object with undefined symbols");
        expect_error("clBuildProgram(object with imports)", err.code, CL_BUILD_PROGRAM_FAILURE);
        assert!(err.log.contains("helper"), "log: {}", err.log);
        // Something that is not SoftCL's binary.
        let err = from_binary(&env, b"\x7fELF not a SoftCL binary at all, no").expect_err("foreign binary");
        assert_eq!(err, (CL_INVALID_BINARY, CL_INVALID_BINARY));
        let mut spirv_only = compile_to_spirv(DEFS_SRC, "CL1.2").unwrap();
        spirv_only.truncate(spirv_only.len() & !3);
        let err = from_binary(&env, &spirv_only).expect_err("raw SPIR-V as a binary");
        assert_eq!(err.0, CL_INVALID_BINARY);
    });
}

#[test]
fn link_errors_name_the_symbol() {
    for_each_device(|d| {
        let env = d.env();
        let user = compiled(&env, USER_SRC, "");
        // Undefined symbols: the program is returned, with a log and an error status.
        let (program, err, log) = link(&env, "", &[&user]);
        expect_error("clLinkProgram(undefined)", err, CL_LINK_PROGRAM_FAILURE);
        let program = program.expect("a failed link returns the program");
        let status: cl_build_status = program_build_info(program.raw(), d.id, CL_PROGRAM_BUILD_STATUS);
        assert_eq!(status, CL_BUILD_ERROR);
        assert!(log.contains("helper") && log.contains("offset"), "log: {log}");
        let err = create_kernel(&program, "use_extern").expect_err("kernel of a failed link");
        expect_error("clCreateKernel(failed link)", err.code, CL_INVALID_PROGRAM_EXECUTABLE);

        // Only one symbol missing.
        let only_offset = compiled(&env, "constant int offset = 1;", "");
        let (_, err, log) = link(&env, "", &[&user, &only_offset]);
        expect_error("clLinkProgram(helper missing)", err, CL_LINK_PROGRAM_FAILURE);
        assert!(log.contains("helper") && !log.contains("\"offset\""), "log: {log}");

        // Duplicate definitions, used or not.
        let defs = compiled(&env, DEFS_SRC, "");
        let again = compiled(&env, "int helper(int x) { return x; }", "");
        let (_, err, log) = link(&env, "", &[&user, &defs, &again]);
        expect_error("clLinkProgram(duplicate)", err, CL_LINK_PROGRAM_FAILURE);
        assert!(log.contains("duplicate") && log.contains("helper"), "log: {log}");

        // A signature that does not match the declaration.
        let float_helper = compiled(&env, "constant int offset = 2; float helper(float x) { return x; }", "");
        let (_, err, log) = link(&env, "", &[&user, &float_helper]);
        expect_error("clLinkProgram(mismatch)", err, CL_LINK_PROGRAM_FAILURE);
        assert!(log.contains("helper"), "log: {log}");

        // Invalid options; an input that is not compiled.
        let (p, err, _) = link(&env, "-DX=1", &[&user, &defs]);
        assert!(p.is_none());
        expect_error("clLinkProgram(-DX=1)", err, CL_INVALID_LINKER_OPTIONS);
        let (p, err, _) = link(&env, "-enable-link-options", &[&user, &defs]);
        assert!(p.is_none());
        expect_error("clLinkProgram(-enable-link-options alone)", err, CL_INVALID_LINKER_OPTIONS);
        let source_only = program_from_source(&env.context, DEFS_SRC);
        let (p, err, _) = link(&env, "", &[&user, &source_only]);
        assert!(p.is_none());
        expect_error("clLinkProgram(uncompiled input)", err, CL_INVALID_OPERATION);
    });
}

#[test]
fn input_headers_with_subdirectories() {
    const SRC: &str = r#"
        #include "defs.h"
        #include "foo/bar.h"
        kernel void with_headers(global int *out) {
            size_t i = get_global_id(0);
            out[i] = scaled((int)i) + BASE;
        }"#;
    for_each_device(|d| {
        let env = d.env();
        let defs = program_from_source(&env.context, "#define BASE 11\n");
        let bar = program_from_source(&env.context, "#include \"baz.h\"\nint scaled(int x) { return x * FACTOR; }\n");
        let baz = program_from_source(&env.context, "#define FACTOR 5\n");
        let program = program_from_source(&env.context, SRC);
        let code = compile_program(&program, d.id, "", &[("defs.h", &defs), ("foo/bar.h", &bar), ("foo/baz.h", &baz)]);
        let log = program_build_info_string(program.raw(), d.id, CL_PROGRAM_BUILD_LOG);
        assert_eq!(code, CL_SUCCESS, "clCompileProgram with headers: {log}");
        let program = linked(&env, "", &[&program]);
        let got: Vec<i32> = run_kernel(&env, &program, "with_headers");
        assert_eq!(got, (0..N as i32).map(|i| i * 5 + 11).collect::<Vec<_>>());
        // Without the headers the include fails, and the log names it.
        let program = program_from_source(&env.context, SRC);
        let code = compile_program(&program, d.id, "", &[]);
        expect_error("clCompileProgram without headers", code, CL_COMPILE_PROGRAM_FAILURE);
        let log = program_build_info_string(program.raw(), d.id, CL_PROGRAM_BUILD_LOG);
        assert!(log.contains("defs.h"), "log: {log}");
    });
}

#[test]
fn spirv_modules_with_import_and_export_linkage() {
    let user_il = compile_to_spirv(USER_SRC, "CL1.2").unwrap_or_else(|e| panic!("{e}"));
    let defs_il = compile_to_spirv(DEFS_SRC, "CL1.2").unwrap_or_else(|e| panic!("{e}"));
    for_each_device(|d| {
        let env = d.env();
        // Well-formed IL that imports symbols is accepted; building it alone fails.
        let user = program_from_il(&env.context, &user_il).unwrap_or_else(|e| panic!("{e}"));
        let err = build_program(user, &[d.id], "").expect_err("built IL with undefined symbols");
        expect_error("clBuildProgram(IL with imports)", err.code, CL_BUILD_PROGRAM_FAILURE);
        assert!(err.log.contains("offset"), "log: {}", err.log);

        let user = program_from_il(&env.context, &user_il).unwrap();
        let defs = program_from_il(&env.context, &defs_il).unwrap();
        for p in [&user, &defs] {
            let code = compile_program(p, d.id, "", &[]);
            let log = program_build_info_string(p.raw(), d.id, CL_PROGRAM_BUILD_LOG);
            assert_eq!(code, CL_SUCCESS, "clCompileProgram(IL): {log}");
            assert_eq!(binary_type(p, d.id), CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT);
        }
        let program = linked(&env, "", &[&user, &defs]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
        // IL objects link with OpenCL C objects too.
        let program = linked(&env, "", &[&user, &compiled(&env, DEFS_SRC, "")]);
        assert_eq!(run_use_extern(&env, &program), expected(7));
    });
}

extern "C" fn count_notify(program: cl_program, user_data: *mut c_void) {
    // SAFETY: the test passes a pointer to a live (AtomicUsize, AtomicPtr) pair.
    let (count, seen) =
        unsafe { &*(user_data as *const (std::sync::atomic::AtomicUsize, std::sync::atomic::AtomicPtr<c_void>)) };
    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    seen.store(program.cast(), std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn link_callback_gets_the_new_program() {
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    for_each_device(|d| {
        let env = d.env();
        let user = compiled(&env, USER_SRC, "");
        let defs = compiled(&env, DEFS_SRC, "");
        for (inputs, want) in [(vec![user.raw(), defs.raw()], CL_SUCCESS), (vec![user.raw()], CL_LINK_PROGRAM_FAILURE)]
        {
            let state = (AtomicUsize::new(0), AtomicPtr::new(ptr::null_mut()));
            let dev = d.id;
            let mut err = 1;
            // SAFETY: valid handles; the callback's user data outlives the (synchronous or
            // completed-before-return) call, and we wait for the callback below.
            let raw = unsafe {
                clLinkProgram(
                    env.context.raw(),
                    1,
                    &dev,
                    ptr::null(),
                    inputs.len() as cl_uint,
                    inputs.as_ptr(),
                    Some(count_notify),
                    &state as *const _ as *mut c_void,
                    &mut err,
                )
            };
            assert!(!raw.is_null(), "no program returned");
            // SAFETY: a new program whose reference we own.
            let program = unsafe { Program::from_raw(raw) };
            // The callback may be called asynchronously: wait for it (at most 10 s).
            let start = std::time::Instant::now();
            while state.0.load(Ordering::SeqCst) == 0 && start.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(state.0.load(Ordering::SeqCst), 1, "callback calls");
            assert_eq!(state.1.load(Ordering::SeqCst), raw.cast::<c_void>(), "callback program");
            let status: cl_build_status = program_build_info(program.raw(), dev, CL_PROGRAM_BUILD_STATUS);
            if want == CL_SUCCESS {
                assert_eq!(err, CL_SUCCESS);
                assert_eq!(status, CL_BUILD_SUCCESS);
            } else {
                // With a callback, errcode_ret may report success; the status tells.
                assert!(err == CL_SUCCESS || err == want, "errcode {}", error_name(err));
                assert_eq!(status, CL_BUILD_ERROR);
            }
        }
        // user_data without a callback.
        let raw_inputs = [user.raw(), defs.raw()];
        let mut err = 0;
        let mut dummy = 0u8;
        // SAFETY: valid handles; the call fails its argument check.
        let raw = unsafe {
            clLinkProgram(
                env.context.raw(),
                0,
                ptr::null(),
                ptr::null(),
                2,
                raw_inputs.as_ptr(),
                None,
                (&mut dummy as *mut u8).cast(),
                &mut err,
            )
        };
        assert!(raw.is_null());
        expect_error("clLinkProgram(user_data without callback)", err, CL_INVALID_VALUE);
    });
}

#[test]
fn compile_and_link_for_every_device_of_a_context() {
    let devices: Vec<cl_device_id> = test_devices().iter().map(|d| d.id).collect();
    let context = context_for(&devices);
    let user = program_from_source(&context, USER_SRC);
    let defs = program_from_source(&context, DEFS_SRC);
    for p in [&user, &defs] {
        // SAFETY: a valid program; no device list (all of the program's), no headers.
        let code = unsafe {
            clCompileProgram(
                p.raw(),
                0,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
                None,
                ptr::null_mut(),
            )
        };
        assert_eq!(code, CL_SUCCESS, "clCompileProgram: {}", error_name(code));
    }
    let inputs = [user.raw(), defs.raw()];
    let mut err = 1;
    // SAFETY: valid context and programs; no device list, options or callback.
    let raw = unsafe {
        clLinkProgram(context.raw(), 0, ptr::null(), ptr::null(), 2, inputs.as_ptr(), None, ptr::null_mut(), &mut err)
    };
    assert_eq!(err, CL_SUCCESS, "clLinkProgram: {}", error_name(err));
    // SAFETY: a new program whose reference we own.
    let program = unsafe { Program::from_raw(raw) };
    let binaries: Vec<usize> = program_info_array(program.raw(), CL_PROGRAM_BINARY_SIZES);
    assert_eq!(binaries.len(), devices.len());
    assert!(binaries.iter().all(|&n| n > 0), "binary sizes {binaries:?}");
    for d in test_devices() {
        assert_eq!(binary_type(&program, d.id), CL_PROGRAM_BINARY_TYPE_EXECUTABLE);
        let queue = queue_for(&context, d.id, 0);
        let env = TestEnv { device: d.clone(), context: context.clone(), queue };
        assert_eq!(run_use_extern(&env, &program), expected(7), "on {}", d.kind);
    }
}
