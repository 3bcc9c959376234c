//! The distributor example as a program, for tests that run its command line.

use std::process::Command;

/// The example's debug binary, built first as the tests' build does (a no-op when it is
/// up to date).
pub fn binary() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--example", "distributor"])
        .status()
        .expect("cargo build --example distributor");
    assert!(status.success(), "the example builds");
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    target.join("debug/examples/distributor")
}

/// `distributor --db <url> <args>`: (exit success, stdout).
pub fn run(url: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(binary())
        .args(["--db", url])
        .args(args)
        .output()
        .expect("run the example");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
