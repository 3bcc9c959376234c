//! Questions a tool asks a person, over MCP: the sealed `requestState` of 2026-07-28
//! `input_required` results, the elicitation request that carries the question, and the
//! record of states already used (in the database, so a state is accepted once whichever
//! replica the repeated call reaches).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest as McpInputRequest, InputRequests,
    RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::store::Database;
use crate::store::request_states;
use crate::tool::input::{InputAnswers, InputRequest};

/// What a sealed `requestState` carries: the question, the answers given so far, and a
/// nonce that makes it usable once.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Sealed {
    pub nonce: String,
    pub input: InputRequest,
    #[serde(default)]
    pub answers: InputAnswers,
}

/// Seals and opens request states; the ones already used are recorded in the database.
pub(super) struct StateKeeper {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl StateKeeper {
    /// A keeper sealing with `key` (32 bytes or more), states valid for `ttl`.
    pub(super) fn new(key: &[u8], ttl: Duration) -> Result<Self, RequestStateError> {
        let codec = RequestStateCodec::try_new(key.to_vec())?;
        Ok(StateKeeper { codec, ttl })
    }

    /// A keeper with a random key of this process (states do not survive a restart and
    /// are not accepted by other processes).
    pub(super) fn random(ttl: Duration) -> Arc<Self> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system provides random bytes");
        Arc::new(Self::new(&key, ttl).expect("32 bytes is a valid key"))
    }

    /// Seals `input` and `answers` for the call `binding` names.
    pub(super) fn seal(
        &self,
        binding: &str,
        input: &InputRequest,
        answers: &InputAnswers,
    ) -> String {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the operating system provides random bytes");
        let sealed = Sealed {
            nonce: hex::encode(nonce),
            input: input.clone(),
            answers: answers.clone(),
        };
        let options = SealOptions::new()
            .associated_data(binding.as_bytes())
            .ttl(self.ttl);
        self.codec
            .seal_json_with(&sealed, &options)
            .expect("the sealed state serialises")
    }

    /// Opens `state` for the call `binding` names and records it used in `db`: `Err`
    /// says why it is refused (forged, altered, expired, another call's, already used on
    /// any replica, or the record could not be written: a state is never accepted
    /// unrecorded).
    pub(super) async fn open(
        &self,
        db: &Database,
        state: &str,
        binding: &str,
    ) -> Result<Sealed, String> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, binding.as_bytes())
            .map_err(|e| e.to_string())?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        // Kept until the state itself expires (a second past, for the rounding).
        let expires_at = now + self.ttl.as_secs() as i64 + 1;
        match request_states::claim(db.pool(), &sealed.nonce, expires_at, now).await {
            Ok(true) => Ok(sealed),
            Ok(false) => Err("request state was already used".into()),
            Err(e) => {
                tracing::error!(error = %e, "the record of used request states failed");
                Err("the record of used request states is unavailable; ask again".into())
            }
        }
    }
}

impl std::fmt::Debug for StateKeeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateKeeper")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// What a sealed state is bound to: the caller (user, branch, run), the tool and the
/// hash of the arguments.
pub(super) fn binding(user: &str, branch: i64, run: &str, tool: &str, args_hash: &str) -> String {
    format!("erp-tools/input/v1\u{1f}{user}\u{1f}{branch}\u{1f}{run}\u{1f}{tool}\u{1f}{args_hash}")
}

/// The elicitation form asking `input`: one required string property named after the
/// question's key (`{"vendor": ..}` for `needs_input("vendor", ..)`), its enum the
/// choices.
pub(super) fn elicitation(input: &InputRequest) -> ElicitRequestParams {
    let mut properties = serde_json::Map::new();
    properties.insert(
        input.key.clone(),
        json!({
            "type": "string",
            "title": "Answer",
            "description": input.question,
            "enum": input.choices,
        }),
    );
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": [input.key],
    });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: input.question.clone(),
        requested_schema: serde_json::from_value(schema)
            .expect("an object with one enum property is an elicitation schema"),
    }
}

/// The `inputRequests` of an `input_required` result asking `input`.
pub(super) fn input_requests(input: &InputRequest) -> InputRequests {
    let mut requests = InputRequests::new();
    requests.insert(
        input.key.clone(),
        McpInputRequest::Elicitation(ElicitRequest::new(elicitation(input))),
    );
    requests
}

/// The answer in an elicitation result (`{"action": "accept", "content": {"vendor": ..}}`
/// for the question keyed `vendor`), if the person accepted and chose one of the choices.
pub(super) fn accepted_answer(input: &InputRequest, result: &Value) -> Option<String> {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return None;
    }
    let answer = result.get("content")?.get(&input.key)?.as_str()?;
    input.accepts(answer).then(|| answer.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> InputRequest {
        InputRequest {
            key: "vendor".into(),
            question: "Which vendor?".into(),
            choices: vec!["V-1".into(), "V-2".into()],
        }
    }

    /// A SQLite database in a fresh folder of its own.
    async fn database(name: &str) -> (Database, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("erp-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("s.db").display());
        (Database::open(&url).await.unwrap(), dir)
    }

    #[tokio::test]
    async fn a_state_opens_once_for_its_own_call_only_on_every_replica() {
        let (db, dir) = database("once").await;
        let key = [7u8; 32];
        let keeper = StateKeeper::new(&key, Duration::from_secs(60)).unwrap();
        // Another replica: the same key, the same database.
        let other_replica = StateKeeper::new(&key, Duration::from_secs(60)).unwrap();
        let call = binding("u-1", 1, "run-1", "t", "abc");
        let state = keeper.seal(&call, &question(), &InputAnswers::new());
        let other = binding("u-2", 1, "run-1", "t", "abc");
        assert!(
            keeper.open(&db, &state, &other).await.is_err(),
            "another caller"
        );
        let changed = binding("u-1", 1, "run-1", "t", "abd");
        assert!(
            keeper.open(&db, &state, &changed).await.is_err(),
            "other arguments"
        );
        let mut tampered = state.clone();
        tampered.replace_range(tampered.len() - 2.., "AA");
        assert!(keeper.open(&db, &tampered, &call).await.is_err(), "altered");
        assert_eq!(
            keeper.open(&db, &state, &call).await.unwrap().input,
            question()
        );
        assert_eq!(
            keeper.open(&db, &state, &call).await.unwrap_err(),
            "request state was already used"
        );
        assert_eq!(
            other_replica.open(&db, &state, &call).await.unwrap_err(),
            "request state was already used",
            "used on one replica is used on all"
        );
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn an_expired_state_is_refused() {
        let (db, dir) = database("expired").await;
        let keeper = StateKeeper::random(Duration::from_millis(1));
        let call = binding("u-1", 1, "r", "t", "h");
        let state = keeper.seal(&call, &question(), &InputAnswers::new());
        std::thread::sleep(Duration::from_millis(5));
        let refused = keeper.open(&db, &state, &call).await.unwrap_err();
        assert!(refused.contains("expired"), "{refused}");
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_an_accepted_allowed_answer_counts() {
        let q = question();
        let ok = json!({"action": "accept", "content": {"vendor": "V-2"}});
        assert_eq!(accepted_answer(&q, &ok).as_deref(), Some("V-2"));
        let other = json!({"action": "accept", "content": {"vendor": "V-9"}});
        assert_eq!(accepted_answer(&q, &other), None);
        let unnamed = json!({"action": "accept", "content": {"answer": "V-2"}});
        assert_eq!(
            accepted_answer(&q, &unnamed),
            None,
            "the form's field is `vendor`"
        );
        let declined = json!({"action": "decline"});
        assert_eq!(accepted_answer(&q, &declined), None);
    }
}
