//! Build options (clBuildProgram / clCompileProgram) and build diagnostics.

mod front_common;

use front_common::*;
use softcl_compiler::front::options::{split_words, BuildOptions, ClStd, LinkOptions};
use softcl_compiler::ir::InstData;
use softcl_compiler::{compile_source, BuildErrorKind, Target};

fn target_with(versions: &[&str]) -> Target {
    Target { cl_std_versions: versions.iter().map(|v| v.to_string()).collect(), ..Target::default() }
}

#[test]
fn defaults() {
    let parsed = BuildOptions::parse("").unwrap();
    assert_eq!(parsed, BuildOptions::default());
    assert_eq!(parsed.cl_std, None);
    assert_eq!(parsed.cl_std_for(&Target::default()).unwrap(), ClStd::Cl12);
    assert!(parsed.optimize);
    assert!(parsed.clang_args.is_empty());
    assert!(parsed.defines.is_empty() && parsed.include_dirs.is_empty());
    assert!(parsed.requires_uniform_work_groups(&Target::default()));
    // Without -cl-std the highest 1.x version the device has.
    assert_eq!(BuildOptions::parse("  ").unwrap().cl_std_for(&target_with(&["CL1.0", "CL1.1"])).unwrap(), ClStd::Cl11);
}

#[test]
fn defines_and_includes_in_every_spelling() {
    let parsed = BuildOptions::parse("-D FOO -DBAR=2 -D BAZ=x+1 -DQ= -I /tmp/a -I/tmp/b").unwrap();
    assert_eq!(
        parsed.defines,
        vec![
            ("FOO".to_string(), None),
            ("BAR".to_string(), Some("2".to_string())),
            ("BAZ".to_string(), Some("x+1".to_string())),
            ("Q".to_string(), Some(String::new())),
        ]
    );
    assert_eq!(parsed.include_dirs, ["/tmp/a", "/tmp/b"]);
    assert_eq!(parsed.clang_args, ["-DFOO", "-DBAR=2", "-DBAZ=x+1", "-DQ=", "-I/tmp/a", "-I/tmp/b"]);
}

#[test]
fn quoting() {
    assert_eq!(split_words(r#"-D X="a b" -I "dir with space""#).unwrap(), ["-D", "X=a b", "-I", "dir with space"]);
    assert_eq!(split_words(r#"-D 'Y=1 + 2' -DZ=\"str\""#).unwrap(), ["-D", "Y=1 + 2", r#"-DZ="str""#]);
    assert_eq!(split_words(r#"-DW="say \"hi\"""#).unwrap(), [r#"-DW=say "hi""#]);
    let parsed = BuildOptions::parse(r#"-D X="a b" -I "dir with space""#).unwrap();
    assert_eq!(parsed.defines, vec![("X".to_string(), Some("a b".to_string()))]);
    assert_eq!(parsed.include_dirs, ["dir with space"]);
    for bad in [r#"-D "X"#, "-D 'Y", "-DZ\\"] {
        let e = split_words(bad).expect_err(bad);
        assert_eq!(e.kind, BuildErrorKind::InvalidOptions);
    }
}

#[test]
fn function_like_macros_and_quoted_values_pass_through() {
    let options = r#"-D 'XM2S(x)=#x' -DF(a,b)=a+b -D "G( x , ... )=x" -DH()=1 -D NAME="a b" -DX=\"s\""#;
    let parsed = BuildOptions::parse(options).unwrap();
    assert_eq!(
        parsed.defines,
        vec![
            ("XM2S(x)".to_string(), Some("#x".to_string())),
            ("F(a,b)".to_string(), Some("a+b".to_string())),
            ("G( x , ... )".to_string(), Some("x".to_string())),
            ("H()".to_string(), Some("1".to_string())),
            ("NAME".to_string(), Some("a b".to_string())),
            ("X".to_string(), Some(r#""s""#.to_string())),
        ]
    );
    assert_eq!(parsed.clang_args[0], "-DXM2S(x)=#x");
    for bad in ["-D F(=1", "-D F(1)=1", "-D F(a,)=a", "-D F(...,a)=a", "-D (x)=1", "-D F(a)b=1"] {
        let error = BuildOptions::parse(bad).expect_err(bad);
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
        assert!(error.log.contains("-D"), "{bad}: {}", error.log);
    }
    let source = "constant char s[] = XM2S(hello);\n\
                  kernel void k(global char *p) { p[0] = s[0] + F(1, 2) + X[0] + sizeof(NAME_STR) + H(); }";
    build_with(source, r#"-D 'XM2S(x)=#x' -DF(a,b)=a+b -DX=\"s\" -DH()=1 -D NAME_STR="\"a b\"""#);
}

/// One parse gives everything later stages read: the value keeps the application's text (the
/// kernel cache's key, CL_PROGRAM_BUILD_OPTIONS) and parsing that text again gives the same value.
#[test]
fn the_parsed_value_round_trips() {
    let text = r#"-D 'F(x)=#x' -D NAME="a b" -DQ=\"s\" -I "dir with spaces" -cl-std=CL3.0 -cl-fast-relaxed-math
                  -cl-kernel-arg-info -g -cl-uniform-work-group-size -cl-denorms-are-zero -cl-opt-disable"#;
    let parsed: BuildOptions = text.parse().unwrap();
    assert_eq!(parsed.text(), text);
    assert_eq!(BuildOptions::parse(parsed.text()).unwrap(), parsed);
    let define = |n: &str, v: &str| (n.to_string(), Some(v.to_string()));
    assert_eq!(parsed.defines, [define("F(x)", "#x"), define("NAME", "a b"), define("Q", "\"s\"")]);
    assert_eq!(parsed.include_dirs, ["dir with spaces"]);
    assert_eq!(
        parsed.clang_args,
        [
            "-DF(x)=#x",
            "-DNAME=a b",
            "-DQ=\"s\"",
            "-Idir with spaces",
            "-cl-fast-relaxed-math",
            "-cl-uniform-work-group-size"
        ]
    );
    assert_eq!(parsed.cl_std, Some(ClStd::Cl30));
    assert!(parsed.fast_relaxed_math && parsed.unsafe_math() && parsed.denorms_are_zero && !parsed.optimize);
    assert!(parsed.kernel_arg_info && parsed.debug_info && parsed.uniform_work_group_size);
    // clCompileProgram's input headers: one more directory, last, whatever its characters; the
    // text stays the application's.
    let mut with_headers = parsed.clone();
    with_headers.add_include_dir("/tmp/headers \"1\" -DX").unwrap();
    assert_eq!(with_headers.text(), text);
    assert_eq!(with_headers.include_dirs.last().map(String::as_str), Some("/tmp/headers \"1\" -DX"));
    assert_eq!(with_headers.clang_args.last().map(String::as_str), Some("-I/tmp/headers \"1\" -DX"));
    assert_eq!(with_headers.add_include_dir("").unwrap_err().kind, BuildErrorKind::InvalidOptions);
    // Invalid strings are rejected with the option named.
    for (bad, named) in [("-D 'F(x=1'", "F(x"), ("-I", "-I"), (r#"-I "x"#, "unterminated"), ("-cl-std=CL9.9", "CL9.9")]
    {
        let error = BuildOptions::parse(bad).expect_err(bad);
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
        assert!(error.log.contains(named), "{bad}: {}", error.log);
    }
}

#[test]
fn link_options() {
    assert_eq!(LinkOptions::parse("").unwrap(), LinkOptions::default());
    let library = LinkOptions::parse(" -create-library -enable-link-options -cl-fast-relaxed-math").unwrap();
    assert!(library.create_library && library.enable_link_options);
    assert_eq!(library.math, ["-cl-fast-relaxed-math"]);
    assert_eq!(library.text(), " -create-library -enable-link-options -cl-fast-relaxed-math");
    let program = LinkOptions::parse("-cl-denorms-are-zero -cl-no-signed-zeroes").unwrap();
    assert!(!program.create_library && !program.enable_link_options);
    assert_eq!(program.math, ["-cl-denorms-are-zero", "-cl-no-signed-zeroes"]);
    for bad in ["-DX=1", "-enable-link-options", "-create-library -cl-finite-math-only", "-cl-std=CL3.0", "'-x"] {
        let error = LinkOptions::parse(bad).expect_err(bad);
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
    }
}

#[test]
fn language_versions() {
    let target = Target::default();
    // The specification defines no -cl-std=CL1.0.
    assert_eq!(BuildOptions::parse("-cl-std=CL1.0").unwrap_err().kind, BuildErrorKind::InvalidOptions);
    for (text, std) in [("CL1.1", ClStd::Cl11), ("CL1.2", ClStd::Cl12), ("CL2.0", ClStd::Cl20), ("CL3.0", ClStd::Cl30)]
    {
        let parsed = BuildOptions::parse(&format!("-cl-std={text}")).unwrap();
        assert_eq!((parsed.cl_std, parsed.cl_std_for(&target).unwrap()), (Some(std), std));
    }
    let cl20 = BuildOptions::parse("-cl-std=CL2.0").unwrap();
    let error = cl20.cl_std_for(&target_with(&["CL1.0", "CL1.1", "CL1.2"])).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::InvalidOptions);
    assert!(error.log.contains("-cl-std=CL2.0"), "{}", error.log);
    assert!(error.log.contains("CL1.2"), "{}", error.log);
    // An OpenCL 3.0 device without OpenCL C 2.0 (as SoftCL's are): 3.0 yes, 2.0 no.
    let no_cl20 = target_with(&["CL1.0", "CL1.1", "CL1.2", "CL3.0"]);
    assert_eq!(BuildOptions::parse("-cl-std=CL3.0").unwrap().cl_std_for(&no_cl20).unwrap(), ClStd::Cl30);
    assert_eq!(cl20.cl_std_for(&no_cl20).unwrap_err().kind, BuildErrorKind::InvalidOptions);
    // The same through compile_source, before any compilation.
    let error = compile_source("kernel void k() {}", "-cl-std=CL2.0", &no_cl20).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::InvalidOptions);
    assert!(error.log.contains("-cl-std=CL2.0") && error.log.contains("CL3.0"), "{}", error.log);
    // Without -cl-std: the highest 1.x the device supports.
    assert_eq!(BuildOptions::default().cl_std_for(&target_with(&["CL1.0", "CL1.1"])).unwrap(), ClStd::Cl11);
    for bad in ["-cl-std=CL4.0", "-cl-std=cl1.2", "-cl-std=", "-cl-std=CLC++"] {
        let error = BuildOptions::parse(bad).unwrap_err();
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
        assert!(error.log.contains(bad), "{bad}: {}", error.log);
    }
    assert!(!cl20.requires_uniform_work_groups(&target));
    let cl2_uniform = BuildOptions::parse("-cl-std=CL2.0 -cl-uniform-work-group-size").unwrap();
    assert!(cl2_uniform.requires_uniform_work_groups(&target));
    // A version the device lacks: the build fails, so whatever the answer, it is the safe one.
    assert!(cl20.requires_uniform_work_groups(&no_cl20));
}

#[test]
fn every_flag_is_accepted_and_recorded() {
    let parsed = BuildOptions::parse(
        "-cl-opt-disable -cl-mad-enable -cl-no-signed-zeros -cl-unsafe-math-optimizations -cl-finite-math-only \
         -cl-fast-relaxed-math -cl-denorms-are-zero -cl-single-precision-constant \
         -cl-fp32-correctly-rounded-divide-sqrt -cl-uniform-work-group-size -cl-no-subgroup-ifp \
         -cl-kernel-arg-info -w -Werror -g -cl-strict-aliasing",
    )
    .unwrap();
    assert!(!parsed.optimize);
    assert!(parsed.mad_enable && parsed.no_signed_zeros && parsed.unsafe_math_optimizations);
    assert!(parsed.finite_math_only && parsed.fast_relaxed_math && parsed.denorms_are_zero);
    assert!(parsed.single_precision_constant && parsed.fp32_correctly_rounded_divide_sqrt);
    assert!(parsed.uniform_work_group_size && parsed.no_subgroup_ifp);
    assert!(parsed.inhibit_warnings && parsed.warnings_as_errors && parsed.debug_info && parsed.kernel_arg_info);
    // Flags clang does not take (or that are always on) stay out of its command line.
    for absent in ["-cl-denorms-are-zero", "-cl-no-subgroup-ifp", "-g", "-cl-kernel-arg-info", "-cl-opt-disable"] {
        assert!(!parsed.clang_args.iter().any(|a| a == absent), "{absent} in {:?}", parsed.clang_args);
    }
    assert!(parsed.clang_args.iter().any(|a| a == "-cl-fast-relaxed-math"));
    let fast = BuildOptions::parse("-cl-fast-relaxed-math").unwrap();
    assert!(fast.unsafe_math() && fast.finite_math() && fast.mad_allowed() && fast.signed_zeros_ignored());
    let plain = BuildOptions::default();
    assert!(!plain.unsafe_math() && !plain.finite_math() && !plain.mad_allowed() && !plain.signed_zeros_ignored());
}

#[test]
fn unknown_or_incomplete_options_are_rejected() {
    for (bad, named) in [
        ("-O3", "-O3"),
        ("--foo", "--foo"),
        ("-cl-made-up", "-cl-made-up"),
        ("-DOK -cl-mad-enable -x", "-x"),
        ("-D", "-D"),
        ("-I", "-I"),
        ("-D 1X=2", "1X"),
        ("-D -cl-opt-disable", "-cl-opt-disable"),
        ("-Dfoo-bar", "foo-bar"),
    ] {
        let error = BuildOptions::parse(bad).expect_err(bad);
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
        assert!(error.log.contains(named), "{bad}: {}", error.log);
        // The same through compile_source, before any compilation.
        let error = compile_source("kernel void k() {}", bad, &Target::default()).expect_err(bad);
        assert_eq!(error.kind, BuildErrorKind::InvalidOptions, "{bad}");
    }
}

#[test]
fn defines_reach_the_compiler() {
    let source = "#if VALUE != 3\n#error VALUE is not 3\n#endif\n#if SUM != 3\n#error SUM is not 3\n#endif\n\
                  kernel void k(global int *p) { p[0] = VALUE + SUM; }";
    build_with(source, r#"-D VALUE=3 -D "SUM=1 + 2""#);
    let error = compile_source(source, "-DVALUE=4 -DSUM=3", &Target::default()).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("VALUE is not 3"), "{}", error.log);
}

#[test]
fn include_directory_with_a_space() {
    let dir = std::env::temp_dir().join(format!("softcl front include {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("softcl_front_test.h"), "#define FROM_HEADER 41\n").unwrap();
    let options = format!("-I \"{}\"", dir.display());
    let program = build_with(
        "#include \"softcl_front_test.h\"\nkernel void k(global int *p) { p[0] = FROM_HEADER + 1; }",
        &options,
    );
    std::fs::remove_dir_all(&dir).ok();
    let body = kernel_body(&program.module, "k");
    let stored: Vec<u64> = insts(body)
        .into_iter()
        .filter_map(|(d, _)| match d {
            InstData::Store { value, .. } => const_int(&program.module, body, *value),
            _ => None,
        })
        .collect();
    assert_eq!(stored, [42]);
}

#[test]
fn language_version_reaches_the_compiler() {
    let source = "#if __OPENCL_C_VERSION__ != EXPECTED\n#error wrong version\n#endif\nkernel void k() {}";
    build_with(source, "-DEXPECTED=120");
    build_with(source, "-DEXPECTED=300 -cl-std=CL3.0");
    build_with(source, "-DEXPECTED=200 -cl-std=CL2.0");
    // Generic address space only exists from 2.0 on.
    let generic = "void f(__generic int *p) { *p = 1; } kernel void k(global int *p) { f(p); }";
    assert!(compile_source(generic, "", &Target::default()).is_err());
    build_with(generic, "-cl-std=CL2.0");
}

#[test]
fn opt_disable_keeps_variables() {
    let source = "kernel void k(global int *p) { int x = p[0]; for (int i = 0; i < 4; i++) x += i; p[1] = x; }";
    let count_variables = |program: &softcl_compiler::Program| {
        all_insts(&program.module).iter().filter(|(_, d, _)| matches!(d, InstData::Variable { .. })).count()
    };
    assert!(count_variables(&build_with(source, "-cl-opt-disable")) >= 2);
    assert_eq!(count_variables(&build(source)), 0);
}

#[test]
fn warnings_go_to_the_log_or_fail_with_werror() {
    let source = "#warning a warning from the test\nkernel void k() {}";
    let program = build(source);
    assert!(program.log.contains("warning: a warning from the test"), "{}", program.log);
    assert!(program.log.contains("<source>:1:2"), "{}", program.log);
    let quiet = build_with(source, "-w");
    assert!(!quiet.log.contains("warning"), "{}", quiet.log);
    let error = compile_source(source, "-Werror", &Target::default()).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("a warning from the test"), "{}", error.log);
}

#[test]
fn compile_errors_carry_line_and_column() {
    let error =
        compile_source("kernel void k(global int *a) {\n    a[0] = undefined_thing;\n}", "", &Target::default())
            .unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(
        error.log.contains("<source>:2:12: error: use of undeclared identifier 'undefined_thing'"),
        "{}",
        error.log
    );
    assert!(!error.log.contains("<stdin>"));
}

#[test]
fn calling_an_undefined_function_is_an_error() {
    let error = compile_source(
        "int not_defined_anywhere(int);\nkernel void k(global int *a) { a[0] = not_defined_anywhere(a[1]); }",
        "",
        &Target::default(),
    )
    .unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("undefined function not_defined_anywhere"), "{}", error.log);
}

#[test]
fn disabled_device_features_are_compile_errors() {
    let source = "kernel void k(global double *d) { d[0] = d[1] * 2.0; }";
    build_with(source, "-cl-std=CL3.0");
    let no_fp64 =
        Target { disabled_features: vec!["cl_khr_fp64".into(), "__opencl_c_fp64".into()], ..Target::default() };
    let error = compile_source(source, "-cl-std=CL3.0", &no_fp64).unwrap_err();
    assert_eq!(error.kind, BuildErrorKind::CompileFailed);
    assert!(error.log.contains("double"), "{}", error.log);
}
