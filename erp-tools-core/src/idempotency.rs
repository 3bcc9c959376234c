//! Idempotency key types and the rule that decides a repeated key (documented on
//! [`DraftTx`](crate::DraftTx)); their SQL is in `store/keys.rs`.

use std::time::Duration;

use serde_json::Value;

use crate::tool::handles::DocumentRef;

/// Default retention of idempotency keys: 7 days.
pub(crate) const DEFAULT_KEY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// Shortest retention [`Database::purge_idempotency_keys`](crate::Database::purge_idempotency_keys) accepts: 24 hours.
pub(crate) const MIN_KEY_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Longest `client_ref` accepted, in characters.
pub(crate) const MAX_CLIENT_REF_CHARS: usize = 200;

/// The idempotency key of one draft call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IdempotencyKey {
    /// The agent run (from the token or the agent host).
    pub agent_run_id: String,
    /// The model's own id for the write.
    pub client_ref: String,
}

impl std::fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.agent_run_id, self.client_ref)
    }
}

/// The one definition of "the same arguments": the hash of a call's normalised arguments
/// (as admission leaves them: absent optional fields `null`, decimals in one canonical
/// form), compared by the idempotency key and by a question's `requestState`.
pub(crate) fn request_hash(normalised: &Value) -> String {
    crate::validate::canonical_hash(normalised)
}

/// What is claimed with the key.
pub(crate) struct Claim<'a> {
    pub key: &'a IdempotencyKey,
    pub request_hash: &'a str,
    pub tool_name: &'a str,
    pub user_id: &'a str,
    pub branch_id: i64,
}

/// A key row as stored.
#[derive(Clone, Debug)]
pub(crate) struct StoredKey {
    pub request_hash: String,
    pub tool_name: String,
    pub user_id: String,
    pub branch_id: i64,
    pub document: Option<DocumentRef>,
    pub response: Option<Value>,
    /// The response as rendered for the model, if the output type renders itself.
    pub response_text: Option<String>,
}

/// What a key that was already claimed means for a new call with the same key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Same caller, same tool, same arguments: return the stored result.
    Replay,
    /// Anything else: refuse; nothing is written. `same_caller` tells whether the stored
    /// document may be named to this caller.
    Mismatch { same_caller: bool },
}

impl StoredKey {
    /// Decides a repeated key (SPEC R4): a replay only for the same person and branch, the
    /// same tool and the same canonical arguments; checked on every path.
    pub(crate) fn verdict(&self, user_id: &str, branch_id: i64, tool: &str, hash: &str) -> Verdict {
        let same_caller = self.user_id == user_id && self.branch_id == branch_id;
        if same_caller && self.tool_name == tool && self.request_hash == hash {
            Verdict::Replay
        } else {
            Verdict::Mismatch { same_caller }
        }
    }
}
