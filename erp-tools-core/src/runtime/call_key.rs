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
    /// digits. The first 8 are a hash of the process's start (time, process id), the
    /// other 16 a counter of this process, scrambled by a one-to-one mix keyed by that
    /// hash: two keys of one process always differ, and a key does not tell how many
    /// calls the process served before it.
    pub fn fresh() -> Self {
        static PROCESS: OnceLock<(String, u64)> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let (prefix, secret) = PROCESS.get_or_init(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            let place = &COUNTER as *const AtomicU64 as usize;
            let seed = serde_json::Value::String(format!("{nanos}:{}:{place}", std::process::id()));
            let hash = crate::validate::canonical_hash(&seed);
            let secret = u64::from_str_radix(&hash[8..24], 16).unwrap_or_default();
            (hash[..8].to_string(), secret)
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        CallKey(format!(
            "call-{prefix}{:016x}",
            mix(n.wrapping_add(*secret))
        ))
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

/// SplitMix64's finaliser: a one-to-one map of `u64` that spreads neighbouring values
/// over the whole range.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl std::fmt::Display for CallKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_keys_are_distinct_and_shaped() {
        let keys: std::collections::HashSet<String> = (0..10_000)
            .map(|_| CallKey::fresh().into_string())
            .collect();
        assert_eq!(keys.len(), 10_000);
        for key in keys.iter().take(100) {
            let digits = key.strip_prefix("call-").expect("prefix");
            assert_eq!(digits.len(), 24, "{key}");
            assert!(digits.bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
        }
        // Consecutive calls do not show as consecutive numbers.
        let (a, b) = (
            CallKey::fresh().into_string(),
            CallKey::fresh().into_string(),
        );
        let tail = |k: &str| u64::from_str_radix(&k[13..], 16).unwrap();
        assert_ne!(tail(&b).wrapping_sub(tail(&a)), 1);
    }
}
