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

/// A small deterministic generator (xorshift), so a kill harness's run can be repeated
/// with its `--seed`.
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed` (0 counts as 1).
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// A number between `lo` and `hi`, both included.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        lo + x % (hi - lo + 1)
    }
}
