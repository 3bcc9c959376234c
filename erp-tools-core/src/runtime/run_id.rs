//! Where a call's agent run id comes from, decided in one place.
//!
//! Idempotency keys are scoped to the run, so the run id decides which retries replay.
//! The order, first present wins:
//!
//! 1. the run the caller's token is bound to (its `run` claim): nothing the client sends
//!    can move its writes into another run;
//! 2. the sources the transport offers, in the order it gives them (MCP over HTTP: the
//!    agent host's `X-Agent-Run-Id` header, then the `Mcp-Session-Id`, then a digest of
//!    the bearer token; the agent loop: the run it was asked to use);
//! 3. a fresh id ([`fresh`]).

use crate::tool::context::Principal;

/// The token's bound run, else the first non-empty candidate.
pub(crate) fn first_of<'a>(
    principal: &'a Principal,
    candidates: impl IntoIterator<Item = Option<&'a str>>,
) -> Option<String> {
    if let Some(bound) = principal.agent_run_id() {
        return Some(bound.to_string());
    }
    candidates
        .into_iter()
        .flatten()
        .find(|c| !c.trim().is_empty())
        .map(str::to_string)
}

/// An id unique across processes in practice: `prefix-` plus 16 hex digits of a hash of
/// the time, the process id and a counter.
#[cfg(any(feature = "mcp", feature = "agent"))]
pub(crate) fn fresh(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let seed = format!(
        "{nanos}:{}:{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let hash = crate::validate::canonical_hash(&serde_json::Value::String(seed));
    format!("{prefix}-{}", &hash[..16])
}

/// The run of a stateless HTTP request that names none: derived from the token (a digest,
/// never the token itself), so every request made with one token shares one idempotency
/// scope.
#[cfg(feature = "mcp")]
pub fn token_run_id(token: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(token.as_bytes()));
    format!("token-{}", &digest[..24])
}
