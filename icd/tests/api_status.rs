//! docs/API_STATUS.md must list exactly what the dispatch table implements.

#[test]
fn api_status_doc_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/API_STATUS.md");
    let expected = softcl::dispatch::api_status_markdown();
    if std::env::var_os("SOFTCL_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &expected).expect("write docs/API_STATUS.md");
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/API_STATUS.md is stale: run SOFTCL_UPDATE_DOCS=1 cargo test -p softcl-icd --test api_status"
    );
}

#[test]
fn every_slot_points_at_a_function_and_tags_are_set() {
    let table = &softcl::dispatch::DISPATCH.0;
    // The table is a struct of pointer-sized slots: read it as words.
    let words = std::mem::size_of_val(table) / std::mem::size_of::<usize>();
    let ptr = table as *const _ as *const usize;
    for i in 0..words {
        // SAFETY: the table is `words` pointer-sized fields (checked by its size), all initialised.
        let w = unsafe { ptr.add(i).read() };
        assert_ne!(w, 0, "dispatch slot {i} is NULL");
    }
    // SAFETY: as above; slot 0 is clGetPlatformIDs (cl_khr_icd 2.0 tag).
    let first = unsafe { ptr.read() };
    assert_eq!(first as isize, softcl::dispatch::CL_ICD2_TAG_KHR);
    assert_eq!(softcl::dispatch::ENTRY_POINTS.len(), words);
    let unload = softcl::dispatch::ENTRY_POINTS.iter().position(|e| e.name == "clUnloadCompiler").unwrap();
    // SAFETY: unload < words (ENTRY_POINTS has one entry per slot, in header order).
    assert_eq!(unsafe { ptr.add(unload).read() } as isize, softcl::dispatch::CL_ICD2_TAG_KHR);
}

#[test]
fn feature_not_supported_entries_are_implemented_slots() {
    for (name, _) in softcl::dispatch::FEATURE_NOT_SUPPORTED {
        let e = softcl::dispatch::ENTRY_POINTS.iter().find(|e| e.name == *name);
        assert!(
            e.is_some_and(|e| e.implemented),
            "{name} is listed as implemented-without-feature but is not an implemented slot"
        );
    }
}

#[test]
fn every_missing_entry_point_belongs_to_an_unadvertised_extension() {
    for e in softcl::dispatch::ENTRY_POINTS.iter().filter(|e| !e.implemented) {
        let why = softcl::dispatch::missing_reason(e.name);
        assert!(why.is_some(), "{} is missing and belongs to no unadvertised extension", e.name);
    }
    // A core entry point has no reason to be missing.
    assert_eq!(softcl::dispatch::missing_reason("clCreateBuffer"), None);
    assert_eq!(softcl::dispatch::missing_reason("clEnqueueNDRangeKernel"), None);
}
