//! The key that ties every audit row of one call together ([`CallKey`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The key of one call in the audit log: written on every row of that call (its attempt
/// and outcome, the agent loop's events about it, a person's decision on it), different
/// for every other call.
///
/// A protocol's own id for a call is not enough: a JSON-RPC id restarts at 1 in every MCP
/// session, and one agent run spans sessions, reconnections, replicas and restarts. The
/// review console groups a run's trail by this key, so two calls never share a card.
///
/// ```
/// use erp_tools_core::CallKey;
///
/// let (a, b) = (CallKey::fresh(), CallKey::fresh());
/// assert_ne!(a, b);
/// assert!(a.as_str().starts_with("call-"));
/// // The agent loop's key of a call is the same in every process that resumes the run.
/// assert_eq!(CallKey::loop_call(3, "call_9").as_str(), "loop-3-call_9");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallKey(String);

impl CallKey {
    /// A new key, never handed out before by any process: `call-` and 24 hexadecimal
    /// digits of a hash of the process's start (time, process id) and a counter.
    pub fn fresh() -> Self {
        static PROCESS: OnceLock<String> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let process = PROCESS.get_or_init(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            let place = &COUNTER as *const AtomicU64 as usize;
            format!("{nanos}:{}:{place}", std::process::id())
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let seed = serde_json::Value::String(format!("{process}:{n}"));
        let hash = crate::validate::canonical_hash(&seed);
        CallKey(format!("call-{}", &hash[..24]))
    }

    /// The key of the call the agent loop proposed at `step` (model turn) with the
    /// model's `call_id`: derived, so the process that resumes a paused run, and the
    /// queue recording a person's decision on it, write the same key.
    pub fn loop_call(step: u32, call_id: &str) -> Self {
        CallKey(format!("loop-{step}-{call_id}"))
    }

    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as stored.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for CallKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
