//! Intel's sub-group extensions in OpenCL C: the declarations of their functions.
//!
//! clang-15 declares OpenCL's built-in functions from its own table (`-fdeclare-opencl-
//! builtins`), which has none of `cl_intel_subgroups`, `cl_intel_subgroups_short` or
//! `cl_intel_subgroups_char`. For a device that offers them, the compiler defines their
//! macros and, for a source that calls one (its text names `intel_sub_group`), puts these
//! declarations before it. Declared as overloaded convergent functions, the calls reach
//! llvm-spirv-15 under the names it translates to `SPV_INTEL_subgroups` instructions
//! (`OpSubgroupShuffleINTEL`, `OpSubgroupBlockReadINTEL`, ...: `front::spirv_body`). The
//! broadcasts, reductions and scans of 8- and 16-bit integers the `_char` and `_short`
//! extensions add are the standard sub-group functions of those types under Intel's names.

use crate::Target;
use std::fmt::Write;

/// Intel's sub-group extensions, each with its OpenCL C macro where the device offers it
/// (`cl_intel_spirv_subgroups` has no functions of its own; its macro is defined all the
/// same, as for every extension the device lists).
pub const EXTENSIONS: [&str; 5] = [
    "cl_intel_subgroups",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_char",
    "cl_intel_required_subgroup_size",
    "cl_intel_spirv_subgroups",
];

/// The `-D` options that define the macros of the extensions of [`EXTENSIONS`] `target`
/// offers.
pub fn macro_options(target: &Target) -> Vec<String> {
    EXTENSIONS.iter().filter(|e| target.offers(e)).map(|e| format!("-D{e}=1")).collect()
}

/// The declarations of the functions of Intel's sub-group extensions `target` offers, for a
/// `source` that calls one; empty otherwise.
pub fn declarations(source: &str, target: &Target) -> String {
    if !source.contains("intel_sub_group") || !target.offers("cl_intel_subgroups") {
        return String::new();
    }
    let images = target.offers("__opencl_c_images");
    let read_write_images = images && target.offers("__opencl_c_read_write_images");
    let mut out = String::from("#define __softcl_sg __attribute__((overloadable, convergent))\n");
    let widths = ["", "2", "3", "4", "8", "16"];
    let shuffles = |out: &mut String, scalar: &str, vectors: bool| {
        for n in if vectors { &widths[..] } else { &widths[..1] } {
            let t = format!("{scalar}{n}");
            let _ = writeln!(out, "{t} __softcl_sg intel_sub_group_shuffle({t}, uint);");
            let _ = writeln!(out, "{t} __softcl_sg intel_sub_group_shuffle_xor({t}, uint);");
            let _ = writeln!(out, "{t} __softcl_sg intel_sub_group_shuffle_down({t}, {t}, uint);");
            let _ = writeln!(out, "{t} __softcl_sg intel_sub_group_shuffle_up({t}, {t}, uint);");
        }
    };
    for t in ["float", "int", "uint"] {
        shuffles(&mut out, t, true);
    }
    for t in ["long", "ulong"] {
        shuffles(&mut out, t, false);
    }
    if target.offers("cl_khr_fp64") {
        shuffles(&mut out, "double", false);
    }
    let blocks = |out: &mut String, suffix: &str, scalar: &str, counts: &[&str]| {
        for n in counts {
            let t = format!("{scalar}{n}");
            let (read, write) =
                (format!("intel_sub_group_block_read{suffix}{n}"), format!("intel_sub_group_block_write{suffix}{n}"));
            let _ = writeln!(out, "{t} __softcl_sg {read}(const __global {scalar} *);");
            let _ = writeln!(out, "void __softcl_sg {write}(__global {scalar} *, {t});");
            // Images where the language version has them (OpenCL C 1.2 has no read_write).
            if images {
                let _ = writeln!(out, "#ifdef __IMAGE_SUPPORT__");
                let _ = writeln!(out, "{t} __softcl_sg {read}(read_only image2d_t, int2);");
                let _ = writeln!(out, "void __softcl_sg {write}(write_only image2d_t, int2, {t});");
                let _ = writeln!(out, "#endif");
            }
            if read_write_images {
                let _ = writeln!(out, "#ifdef __opencl_c_read_write_images");
                let _ = writeln!(out, "{t} __softcl_sg {read}(read_write image2d_t, int2);");
                let _ = writeln!(out, "void __softcl_sg {write}(read_write image2d_t, int2, {t});");
                let _ = writeln!(out, "#endif");
            }
        }
    };
    blocks(&mut out, "", "uint", &["", "2", "4", "8"]);
    blocks(&mut out, "_ui", "uint", &["", "2", "4", "8"]);
    let narrow = [("cl_intel_subgroups_short", "short", "_us"), ("cl_intel_subgroups_char", "char", "_uc")];
    for (extension, scalar, suffix) in narrow {
        if !target.offers(extension) {
            continue;
        }
        for unsigned in [false, true] {
            let t = if unsigned { format!("u{scalar}") } else { scalar.to_string() };
            shuffles(&mut out, &t, true);
            // A broadcast is a shuffle from one work-item; reductions and scans are the
            // 32-bit ones (OpenCL C 1.2 has no sub-group functions of 8- and 16-bit types),
            // wrapped (addition) or bounded to the type (an exclusive scan's identity).
            for n in widths {
                let _ = writeln!(
                    out,
                    "static inline {t}{n} __softcl_sg intel_sub_group_broadcast({t}{n} x, uint id) \
                     {{ return intel_sub_group_shuffle(x, id); }}"
                );
            }
            let (wide, lo, hi) = match (unsigned, scalar) {
                (false, "short") => ("int", "SHRT_MIN", "SHRT_MAX"),
                (true, "short") => ("uint", "0", "USHRT_MAX"),
                (false, _) => ("int", "SCHAR_MIN", "SCHAR_MAX"),
                (true, _) => ("uint", "0", "UCHAR_MAX"),
            };
            for op in ["add", "min", "max"] {
                for f in ["reduce", "scan_exclusive", "scan_inclusive"] {
                    let r = format!("sub_group_{f}_{op}(({wide})x)");
                    let r = match (f, op) {
                        ("scan_exclusive", "min") => format!("min({r}, ({wide}){hi})"),
                        ("scan_exclusive", "max") => format!("max({r}, ({wide}){lo})"),
                        _ => r,
                    };
                    let _ = writeln!(
                        out,
                        "static inline {t} __softcl_sg intel_sub_group_{f}_{op}({t} x) {{ return ({t}){r}; }}"
                    );
                }
            }
        }
        blocks(&mut out, suffix, &format!("u{scalar}"), &["", "2", "4", "8", "16"]);
    }
    out.push_str("#undef __softcl_sg\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(disabled: &[&str]) -> Target {
        Target { disabled_features: disabled.iter().map(|s| s.to_string()).collect(), ..Target::default() }
    }

    #[test]
    fn declared_only_for_a_source_that_calls_them_on_a_device_that_offers_them() {
        let calls = "kernel void k(global uint *p) { p[0] = intel_sub_group_shuffle(p[1], 0); }";
        assert!(declarations("kernel void k() {}", &target(&[])).is_empty());
        assert!(declarations(calls, &target(&["cl_intel_subgroups"])).is_empty());
        let all = declarations(calls, &target(&[]));
        assert!(all.contains("uint16 __softcl_sg intel_sub_group_shuffle_down(uint16, uint16, uint);"), "{all}");
        assert!(all.contains("ushort8 __softcl_sg intel_sub_group_block_read_us8(read_only image2d_t, int2);"));
        assert!(all.contains("void __softcl_sg intel_sub_group_block_write_uc16(__global uchar *, uchar16);"));
        let no_narrow =
            declarations(calls, &target(&["cl_intel_subgroups_short", "cl_intel_subgroups_char", "cl_khr_fp64"]));
        assert!(!no_narrow.contains("_us") && !no_narrow.contains("_uc") && !no_narrow.contains("double"));
        assert_eq!(macro_options(&target(&["cl_intel_subgroups_char"])).len(), 4);
    }
}
