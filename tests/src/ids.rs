//! Names that must not collide between tests running at the same time, in one process
//! or several: agent run ids, PostgreSQL schema names.

use std::sync::atomic::{AtomicUsize, Ordering};

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// `<process id>_<nanoseconds>_<sequence>`: unique across the tests of one process and
/// across processes started at the same time. Letters, digits and `_` only, so it can
/// end a SQL identifier.
pub fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}_{}_{}",
        std::process::id(),
        nanos,
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh agent run id, `run-<unique suffix>`.
pub fn new_run() -> String {
    format!("run-{}", unique_suffix())
}
