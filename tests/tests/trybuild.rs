//! Compile-time rules: every rejected shape has a compile-fail case under `ui/<rule>/`
//! with its reviewed `.stderr`; `ui/pass/` holds shapes that must compile.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p erp-tools-tests --test
//! trybuild` and review the diff like code.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    let ui = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut rules: Vec<String> = std::fs::read_dir(&ui)
        .expect("tests/ui exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "pass")
        .collect();
    rules.sort();
    assert!(
        rules.len() >= 10,
        "expected the rule folders under tests/ui, found {rules:?}"
    );
    for rule in rules {
        t.compile_fail(format!("ui/{rule}/*.rs"));
    }
    t.pass("ui/pass/*.rs");
}
