//! How many times the fixture's handlers ran, per agent run: what a test checks to prove
//! a refused, replayed or deduplicated call never reached its handler.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

fn handler_calls() -> &'static Mutex<HashMap<String, usize>> {
    static CALLS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    CALLS.get_or_init(Default::default)
}

/// Counts one handler run for `run`.
pub(super) fn count_handler_call(run: &str) {
    *handler_calls()
        .lock()
        .unwrap()
        .entry(run.to_string())
        .or_default() += 1;
}

/// How many times a handler of the fixture ran for `run`.
pub fn handler_calls_for(run: &str) -> usize {
    handler_calls()
        .lock()
        .unwrap()
        .get(run)
        .copied()
        .unwrap_or(0)
}
