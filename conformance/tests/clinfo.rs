//! `clinfo` (a real third-party OpenCL program) sees the platform and both devices, and
//! none of its queries fail.

use softcl_conformance::*;
use std::process::Command;

fn run_clinfo(args: &[&str]) -> String {
    // Make sure OCL_ICD_VENDORS is set in this process, so that clinfo inherits it.
    init_loader();
    let out = Command::new("clinfo").args(args).output().expect("cannot run clinfo (Debian package clinfo)");
    assert!(
        out.status.success(),
        "clinfo {args:?} exited with {}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    format!("{stdout}{stderr}")
}

/// The lines of clinfo's output that report a failed query.
fn error_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            // "Error Correction support" is a property name, not an error.
            let l2 = l.replace("Error Correction support", "");
            l2.contains("error") || l2.contains("CL_INVALID") || l2.contains("Invalid")
        })
        .collect()
}

#[test]
fn clinfo_lists_platform_and_devices() {
    let listing = run_clinfo(&["-l"]);
    let name = platform_name();
    assert!(
        listing.contains(&format!("Platform #0: {name}"))
            || listing.lines().any(|l| l.contains("Platform #") && l.contains(&name)),
        "clinfo -l does not list {name:?}:\n{listing}"
    );
    for d in test_devices() {
        assert!(listing.contains(&d.name), "clinfo -l does not list the {} device {:?}:\n{listing}", d.kind, d.name);
    }
}

#[test]
fn clinfo_full_output_has_no_errors() {
    let text = run_clinfo(&[]);
    let name = platform_name();
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("Platform Name") && l.trim_end().ends_with(&name)),
        "no 'Platform Name ... {name}' line:\n{text}"
    );
    for d in test_devices() {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with("Device Name") && l.contains(&d.name)),
            "no 'Device Name' line for the {} device {:?}",
            d.kind,
            d.name
        );
    }
    let types: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("Device Type")).collect();
    for d in test_devices() {
        let want = d.kind.to_string();
        assert!(types.iter().any(|l| l.trim_end().ends_with(&want)), "no 'Device Type {want}' line: {types:?}");
    }
    let errors = error_lines(&text);
    assert!(
        errors.is_empty(),
        "clinfo reports {} failed queries:\n{}\n\n--- full output ---\n{text}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn softcl_clinfo_sees_only_softcl_with_two_devices() {
    let text = run_clinfo(&[]);
    let platforms: Vec<&str> = text.lines().filter(|l| l.starts_with("Number of platforms")).collect();
    assert_eq!(platforms.len(), 1, "{text}");
    assert!(platforms[0].trim_end().ends_with(" 1"), "{}", platforms[0]);
    let devices: Vec<&str> = text.lines().filter(|l| l.starts_with("Number of devices")).collect();
    assert!(devices.iter().any(|l| l.trim_end().ends_with(" 2")), "{devices:?}");
    assert!(text.contains("OpenCL 3.0 SoftCL"), "no SoftCL platform version");
    assert!(text.contains("SoftCL model"), "no Gen model device");
}
