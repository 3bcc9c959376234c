//! Where a call's agent run id comes from, decided in one place ([`choose`]).
//!
//! Idempotency keys are scoped to the run, so the run id decides which retries replay.
//! The order, first present wins:
//!
//! 1. the run the caller's token is bound to (its `run` claim): nothing the client sends
//!    can move its writes into another run;
//! 2. the run the agent host names: the `X-Agent-Run-Id` header over MCP, the
//!    [`ToolCall::agent_run_id`](crate::ToolCall::agent_run_id) of a direct call, the
//!    [`RunRequest`](crate::agent::RunRequest)'s run in the agent loop;
//! 3. otherwise the caller's own scope, [`principal_run_id`]: `user-` plus a digest of
//!    the user and the branch. It is the same for every connection, session, token
//!    refresh, server restart and server process, so a client that names no run (a plain
//!    MCP client) replays its retries after a reconnect instead of drafting twice.
//!
//! Every run id, whatever its source, must be 1 to [`MAX_RUN_ID_LEN`] visible ASCII
//! characters ([`valid_run_id`]). Ids starting with [`PRINCIPAL_RUN_PREFIX`] are reserved
//! for the principal scopes: a caller may name only its own. Which principal a run
//! belongs to is then checked against the database (`store/runs.rs`): a run is bound to
//! the principal (user and branch) that used it first.

use sha2::{Digest, Sha256};

use crate::tool::context::Principal;

pub(crate) use crate::tool::context::{MAX_RUN_ID_LEN, valid_run_id};

/// Prefix of the run ids derived from a principal ([`principal_run_id`]); reserved.
pub(crate) const PRINCIPAL_RUN_PREFIX: &str = "user-";

/// The digest that identifies a principal (its user and branch) wherever it must be
/// compared without being stored in full: the principal run scope, MCP session owners.
pub(crate) fn principal_digest(principal: &Principal) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"erp-tools/principal\0");
    hash.update(principal.user_id().as_bytes());
    hash.update(b"\0");
    hash.update(principal.branch_id().to_string().as_bytes());
    hash.finalize().into()
}

/// The run of a caller that names none: `user-` plus 24 hex digits of a digest of the
/// user id and the branch id. Stable across connections, MCP sessions, token refreshes,
/// server restarts and server processes; different for every person and branch.
///
/// ```
/// use erp_tools_core::{Principal, principal_run_id};
///
/// let budi = Principal::builder("budi", 1, "SBY-01").build();
/// let run = principal_run_id(&budi);
/// assert!(run.starts_with("user-") && run.len() == 29);
/// // A new token for the same person and branch: the same scope.
/// assert_eq!(run, principal_run_id(&Principal::builder("budi", 1, "SBY-01").scopes(["x"]).build()));
/// assert_ne!(run, principal_run_id(&Principal::builder("budi", 2, "JKT-01").build()));
/// ```
pub fn principal_run_id(principal: &Principal) -> String {
    let digest = hex::encode(principal_digest(principal));
    format!("{PRINCIPAL_RUN_PREFIX}{}", &digest[..24])
}

/// Where a refused run id came from, for the refusal's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunSource {
    /// The token's `run` claim.
    Token,
    /// The agent host (header, `ToolCall`, `RunRequest`).
    Named,
}

impl RunSource {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            RunSource::Token => "the token's `run` claim",
            RunSource::Named => "the agent host",
        }
    }
}

/// A run id that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadRunId {
    /// Not 1 to [`MAX_RUN_ID_LEN`] visible ASCII characters. `placeholder` stands for it
    /// in the audit log (the id itself is never stored).
    Invalid {
        source: RunSource,
        bytes: usize,
        placeholder: String,
    },
    /// Another principal's reserved scope (`user-...`): refused like any run of another
    /// person.
    Reserved { run_id: String },
}

impl BadRunId {
    /// The id that stands for the refused run in the audit log and the loop's events.
    pub(crate) fn audit_id(&self) -> &str {
        match self {
            BadRunId::Invalid { placeholder, .. } => placeholder,
            BadRunId::Reserved { run_id } => run_id,
        }
    }

    /// The model-facing refusal.
    pub(crate) fn refusal(&self) -> crate::ToolError {
        match self {
            BadRunId::Invalid { source, bytes, .. } => {
                crate::text::invalid_run_id(source.describe(), *bytes, MAX_RUN_ID_LEN)
            }
            BadRunId::Reserved { run_id } => crate::text::run_of_another_person(run_id),
        }
    }
}

/// The run of a call by `principal` that names `named` (empty: none), in the order of the
/// module docs, validated.
pub(crate) fn choose(principal: &Principal, named: Option<&str>) -> Result<String, BadRunId> {
    let (candidate, source) = match (principal.agent_run_id(), named) {
        (Some(bound), _) => (bound, RunSource::Token),
        (None, Some(named)) if !named.is_empty() => (named, RunSource::Named),
        (None, _) => return Ok(principal_run_id(principal)),
    };
    if !valid_run_id(candidate) {
        return Err(BadRunId::Invalid {
            source,
            bytes: candidate.len(),
            placeholder: invalid_placeholder(candidate),
        });
    }
    if candidate.starts_with(PRINCIPAL_RUN_PREFIX) && candidate != principal_run_id(principal) {
        return Err(BadRunId::Reserved {
            run_id: candidate.to_string(),
        });
    }
    Ok(candidate.to_string())
}

/// What the audit log records instead of an invalid run id: `invalid-run-` plus 16 hex
/// digits of its digest.
fn invalid_placeholder(id: &str) -> String {
    let digest = hex::encode(Sha256::digest(id.as_bytes()));
    format!("invalid-run-{}", &digest[..16])
}

/// An id unique across processes in practice: `prefix-` plus 16 hex digits of a hash of
/// the time, the process id and a counter.
#[cfg(feature = "agent")]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn budi() -> Principal {
        Principal::builder("budi", 1, "SBY-01").build()
    }

    #[test]
    fn the_order_is_token_then_named_then_principal() {
        let bound = Principal::builder("budi", 1, "SBY-01")
            .agent_run_id("run-token")
            .build();
        assert_eq!(choose(&bound, Some("run-header")).unwrap(), "run-token");
        assert_eq!(choose(&budi(), Some("run-header")).unwrap(), "run-header");
        assert_eq!(
            choose(&budi(), Some("")).unwrap(),
            principal_run_id(&budi())
        );
        assert_eq!(choose(&budi(), None).unwrap(), principal_run_id(&budi()));
    }

    #[test]
    fn every_source_is_validated() {
        let huge = "r".repeat(300 * 1024);
        for bad in [huge.as_str(), "run with spaces", "run-é", " ", "run\n"] {
            let bound = Principal::builder("budi", 1, "SBY-01")
                .agent_run_id(bad)
                .build();
            let Err(BadRunId::Invalid {
                source,
                bytes,
                placeholder,
            }) = choose(&bound, None)
            else {
                panic!("accepted {bad:?} from the token");
            };
            assert_eq!((source, bytes), (RunSource::Token, bad.len()));
            assert!(placeholder.len() < 40 && valid_run_id(&placeholder));
            assert!(matches!(
                choose(&budi(), Some(bad)),
                Err(BadRunId::Invalid {
                    source: RunSource::Named,
                    ..
                })
            ));
        }
        assert!(valid_run_id(&"r".repeat(MAX_RUN_ID_LEN)));
        assert!(!valid_run_id(&"r".repeat(MAX_RUN_ID_LEN + 1)));
    }

    #[test]
    fn principal_scopes_are_reserved() {
        let siti = Principal::builder("siti", 1, "SBY-01").build();
        let budis = principal_run_id(&budi());
        assert_eq!(
            choose(&siti, Some(&budis)),
            Err(BadRunId::Reserved {
                run_id: budis.clone()
            })
        );
        assert_eq!(choose(&budi(), Some(&budis)).unwrap(), budis);
        assert!(matches!(
            choose(&siti, Some("user-made-up")),
            Err(BadRunId::Reserved { .. })
        ));
    }
}
