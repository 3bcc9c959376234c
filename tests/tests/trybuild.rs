//! Compile-time rules: every rejected shape has a compile-fail case under `ui/<rule>/`
//! with its reviewed `.stderr`. The shapes that must compile, `ui/pass/`, are test
//! binaries of their own (`[[test]]` entries in `tests/Cargo.toml`), so trybuild only
//! has to check, never build.
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
    // Every file under ui/pass/ must be registered as a test, or it would silently not run.
    let manifest =
        std::fs::read_to_string(ui.with_file_name("Cargo.toml")).expect("tests/Cargo.toml");
    for entry in std::fs::read_dir(ui.join("pass")).expect("tests/ui/pass exists") {
        let file = entry
            .expect("ui/pass entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            manifest.contains(&format!("path = \"ui/pass/{file}\"")),
            "tests/ui/pass/{file} has no [[test]] entry in tests/Cargo.toml"
        );
    }
}
