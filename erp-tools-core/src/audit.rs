//! The audit row types (see [`AuditEntry`]); their SQL is in `store/audit.rs`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::context::Principal;
use crate::tool::handles::DocumentRef;

/// Largest argument payload stored verbatim in an audit row, in bytes of JSON text.
pub(crate) const MAX_AUDIT_ARGUMENT_BYTES: usize = 64 * 1024;

/// How many characters of an oversized payload are kept in its summary.
const ARGUMENT_PREFIX_CHARS: usize = 2_000;

/// Largest result text of a read call kept in its audit row, in bytes; a longer one is
/// cut at a character boundary and marked.
pub(crate) const MAX_AUDIT_RESULT_BYTES: usize = 8 * 1024;

/// `text` cut to at most `max` bytes at a character boundary, with a closing mark saying
/// how long it was when it was cut.
pub(crate) fn bounded_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mark = format!("\n[… cut: {} bytes in all]", text.len());
    let mut end = max.saturating_sub(mark.len());
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{mark}", &text[..end])
}

/// Outcome of a tool call's row while the handler is running (or if the process died
/// while it ran).
pub(crate) const ATTEMPT: &str = "attempt";

/// `source` of rows written by the call pipeline.
pub(crate) const SOURCE_RUNTIME: &str = "runtime";
/// `source` of rows written by [`Database::record_event`].
pub(crate) const SOURCE_AGENT: &str = "agent";
/// `source` of rows loaded with [`Database::backfill_audit`](crate::Database::backfill_audit).
pub(crate) const SOURCE_BACKFILL: &str = "backfill";

/// The identifier of an audit row.
pub type AuditId = i64;

/// How a tool call ended, as recorded in the audit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The handler ran and succeeded.
    Ok,
    /// Invalid arguments, a business rule, an idempotency mismatch or a handler failure.
    ToolError,
    /// The caller may not use the tool (missing scope, unknown tool, policy).
    Denied,
    /// A retry of an earlier successful call: the original result was returned.
    Replayed,
    /// The server process stopped (killed, crashed, lost power) while the call ran; the
    /// start-up recovery pass closed its `attempt` row, linked to the document when one
    /// committed. Or a read whose client went away before it ended (its message says
    /// so). Never the answer to a call: the caller got no answer, and its retry
    /// replays what committed.
    Interrupted,
}

impl Outcome {
    /// `ok`, `tool_error`, `denied`, `replayed` or `interrupted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Denied => "denied",
            Outcome::Replayed => "replayed",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// Whether the call failed (`isError: true` in MCP).
    pub fn is_error(self) -> bool {
        matches!(
            self,
            Outcome::ToolError | Outcome::Denied | Outcome::Interrupted
        )
    }
}

/// The current time as stored in the database: UTC RFC 3339 with microseconds and a `Z`,
/// so text order is time order.
pub(crate) fn now_text() -> String {
    time_text(chrono::Utc::now())
}

pub(crate) fn time_text(t: chrono::DateTime<chrono::Utc>) -> String {
    // `%Y-%m-%dT%H:%M:%S%.6fZ` without parsing a format string on every row.
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// JSON text of `arguments` for an audit row, summarised when oversized.
pub(crate) fn arguments_text(arguments: &Value) -> String {
    let text = arguments.to_string();
    if text.len() <= MAX_AUDIT_ARGUMENT_BYTES {
        return text;
    }
    let prefix: String = text.chars().take(ARGUMENT_PREFIX_CHARS).collect();
    serde_json::json!({
        "truncated": true,
        "bytes": text.len(),
        "sha256": crate::validate::canonical_hash(&Value::String(text.clone())),
        "prefix": prefix,
    })
    .to_string()
}

/// One audit row to write: built from the authenticated principal, never from tool
/// arguments.
///
/// The audit log holds one row per tool call and one per agent-loop event, written by the
/// framework, never by the model (SPEC R7, A7).
///
/// A tool call's row is written *before* the handler runs, with outcome `attempt`, as its
/// own committed statement, so a crash mid-call still leaves a trace. When the call ends
/// the same row gets its final outcome (`ok`, `tool_error`, `denied`, `replayed`), the
/// document it created and the time it finished. For a draft call that succeeds, that
/// update runs inside the write transaction, so it commits together with the document
/// and the idempotency key; a failed draft call is rolled back first and its row updated
/// afterwards in a separate statement.
///
/// Calls refused before execution (unknown tool, missing scope, invalid arguments, a hard
/// limit) get a single row with their final outcome.
///
/// The agent loop writes its own events (`started`, `denied`, `failed`, `answered`, ...)
/// with [`Database::record_event`](crate::Database::record_event), into the same table, with `source = "agent"`. Rows
/// written by the call pipeline have `source = "runtime"`.
///
/// Arguments are stored as JSON text as the model sent them. Payloads larger than
/// [`AuditEntry::MAX_ARGUMENT_BYTES`] are replaced by a summary (size, sha256, the first
/// characters), so an oversized call cannot bloat the log.
///
/// ```
/// use erp_tools_core::{AuditEntry, Principal};
///
/// let principal = Principal::builder("u-17", 3, "SBY-01").model("gpt-5").build();
/// let entry = AuditEntry::new(&principal, "run-42", "started")
///     .tool("purchasing_create_po_draft", "call_1")
///     .arguments(&serde_json::json!({"client_ref": "R-1"}));
/// assert_eq!(entry.user_id, "u-17");
/// assert_eq!(entry.branch_code.as_deref(), Some("SBY-01"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// The agent run.
    pub agent_run_id: String,
    /// The protocol's id for the tool call, if the row is about one.
    pub tool_call_id: Option<String>,
    /// The framework's key of the call the row is about: the same on every row of one
    /// call, different for every other call of the run, even when two MCP sessions both
    /// number their requests from 1 (see [`CallKey`](crate::CallKey)).
    pub call_key: Option<String>,
    /// The tool, if the row is about one.
    pub tool_name: Option<String>,
    /// The person on whose behalf the agent acts.
    pub user_id: String,
    /// Internal id of the caller's branch.
    pub branch_id: Option<i64>,
    /// Business code of the caller's branch.
    pub branch_code: Option<String>,
    /// Arguments as JSON text (summarised when larger than [`AuditEntry::MAX_ARGUMENT_BYTES`]).
    pub arguments: Option<String>,
    /// The outcome or event: `attempt`, `ok`, `tool_error`, `denied`, `replayed` for tool
    /// calls; `started`, `denied`, `failed`, `answered` (or another loop status) for
    /// agent-loop events.
    pub outcome: String,
    /// A human-readable explanation (the model-facing error text, a denial reason).
    pub message: Option<String>,
    /// What a successful read call answered, as the text the model read (at most
    /// [`AuditEntry::MAX_RESULT_BYTES`]): the data the agent acted on.
    pub result_text: Option<String>,
    /// The document involved, if any.
    pub document: Option<DocumentRef>,
    /// The model driving the run.
    pub model: Option<String>,
    /// The prompt version of the run.
    pub prompt_version: Option<String>,
    /// Agent-loop events: the step (model turn), from 1.
    pub step: Option<i64>,
    /// Agent-loop events: the action signature (tool name plus canonical arguments).
    pub action_signature: Option<String>,
    /// The tool surface the row was written under: the registry's
    /// [`fingerprint`](crate::ToolRegistry::fingerprint) (`sha256:...`). The call pipeline
    /// and the agent loop set it.
    pub surface: Option<String>,
    /// A finished tool call: the size of its result as the client received it, in
    /// estimated tokens ([`ResultBudget`](crate::ResultBudget)).
    pub result_tokens: Option<i64>,
}

impl AuditEntry {
    /// Largest argument payload stored verbatim, in bytes of JSON text; larger ones are
    /// replaced by a summary (size, sha256, the first characters).
    pub const MAX_ARGUMENT_BYTES: usize = MAX_AUDIT_ARGUMENT_BYTES;
    /// Largest read result text kept verbatim, in bytes; a longer one is cut and marked.
    pub const MAX_RESULT_BYTES: usize = MAX_AUDIT_RESULT_BYTES;

    /// A row for `principal` in `agent_run_id` with `outcome` (an outcome or event name).
    /// User, branch, model and prompt version come from the principal.
    pub fn new(
        principal: &Principal,
        agent_run_id: impl Into<String>,
        outcome: impl Into<String>,
    ) -> Self {
        AuditEntry {
            agent_run_id: agent_run_id.into(),
            tool_call_id: None,
            call_key: None,
            tool_name: None,
            user_id: principal.user_id().to_string(),
            branch_id: Some(principal.branch_id()),
            branch_code: Some(principal.branch_code().to_string()),
            arguments: None,
            outcome: outcome.into(),
            message: None,
            result_text: None,
            document: None,
            model: principal.model().map(str::to_string),
            prompt_version: principal.prompt_version().map(str::to_string),
            step: None,
            action_signature: None,
            surface: None,
            result_tokens: None,
        }
    }

    /// The tool call the row is about.
    pub fn tool(mut self, tool_name: impl Into<String>, tool_call_id: impl Into<String>) -> Self {
        self.tool_name = Some(tool_name.into());
        self.tool_call_id = Some(tool_call_id.into());
        self
    }

    /// The framework's key of the call (see [`CallKey`](crate::CallKey)).
    pub fn call_key(mut self, key: impl Into<String>) -> Self {
        self.call_key = Some(key.into());
        self
    }

    /// What a read call answered (cut to [`AuditEntry::MAX_RESULT_BYTES`]).
    pub fn result_text(mut self, text: &str) -> Self {
        self.result_text = Some(bounded_text(text, MAX_AUDIT_RESULT_BYTES));
        self
    }

    /// The arguments of the call (stored as JSON text, summarised when oversized).
    pub fn arguments(mut self, arguments: &Value) -> Self {
        self.arguments = Some(arguments_text(arguments));
        self
    }

    /// An explanation.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The document involved.
    pub fn document(mut self, document: DocumentRef) -> Self {
        self.document = Some(document);
        self
    }

    /// Replaces the outcome.
    pub fn outcome(mut self, outcome: impl Into<String>) -> Self {
        self.outcome = outcome.into();
        self
    }

    /// Overrides the model (when the agent loop knows it and the token does not).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Overrides the prompt version.
    pub fn prompt_version(mut self, version: impl Into<String>) -> Self {
        self.prompt_version = Some(version.into());
        self
    }

    /// The agent-loop step the event belongs to.
    pub fn step(mut self, step: i64) -> Self {
        self.step = Some(step);
        self
    }

    /// The action signature the event is about.
    pub fn action_signature(mut self, signature: impl Into<String>) -> Self {
        self.action_signature = Some(signature.into());
        self
    }

    /// The size of the call's result, in estimated tokens.
    pub fn result_tokens(mut self, tokens: u32) -> Self {
        self.result_tokens = Some(i64::from(tokens));
        self
    }

    /// The tool surface the row is written under (a registry's
    /// [`fingerprint`](crate::ToolRegistry::fingerprint)).
    pub fn surface(mut self, fingerprint: &crate::lock::fingerprint::Fingerprint) -> Self {
        self.surface = Some(fingerprint.as_str().to_string());
        self
    }
}

/// One row of the audit log, as read back by [`Database::audit_log`](crate::Database::audit_log).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Row id; increases with time.
    pub id: AuditId,
    /// When the row was written (for tool calls: before execution).
    pub at: String,
    /// When the call ended (tool calls only; `None` while running or after a crash).
    pub finished_at: Option<String>,
    /// `runtime` (the call pipeline) or `agent` ([`Database::record_event`](crate::Database::record_event)).
    pub source: String,
    /// The agent run.
    pub agent_run_id: String,
    /// The protocol's id for the tool call.
    pub tool_call_id: Option<String>,
    /// The framework's key of the call: one per call, on every row of it; `None` on rows
    /// written before it was kept.
    pub call_key: Option<String>,
    /// The tool.
    pub tool_name: Option<String>,
    /// The person on whose behalf the agent acted.
    pub user_id: String,
    /// Internal id of the caller's branch.
    pub branch_id: Option<i64>,
    /// Business code of the caller's branch.
    pub branch_code: Option<String>,
    /// The arguments as JSON text.
    pub arguments: Option<String>,
    /// `attempt` (still running, or the process died), `ok`, `tool_error`, `denied`,
    /// `replayed`, or an agent-loop event.
    pub outcome: String,
    /// Explanation: the model-facing error text, a denial reason.
    pub message: Option<String>,
    /// What a successful read call answered, as the model read it (cut when long).
    pub result_text: Option<String>,
    /// The document created or replayed.
    pub document: Option<DocumentRef>,
    /// The model driving the run.
    pub model: Option<String>,
    /// The prompt version of the run.
    pub prompt_version: Option<String>,
    /// Agent-loop events: the step (model turn).
    pub step: Option<i64>,
    /// Agent-loop events: the action signature.
    pub action_signature: Option<String>,
    /// The tool surface the row was written under (`sha256:...`); `None` on rows written
    /// before it was kept, or by an application's own [`AuditEntry`] without it.
    pub surface: Option<String>,
    /// A finished tool call: the size of its result as the client received it, in
    /// estimated tokens; `None` on other rows and rows written before it was kept.
    pub result_tokens: Option<i64>,
}

impl AuditRecord {
    /// The arguments parsed back into JSON.
    pub fn arguments_json(&self) -> Option<Value> {
        self.arguments
            .as_deref()
            .and_then(|a| serde_json::from_str(a).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_arguments_are_summarised() {
        let big = serde_json::json!({ "note": "x".repeat(MAX_AUDIT_ARGUMENT_BYTES) });
        let text = arguments_text(&big);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["truncated"], true);
        assert!(v["bytes"].as_u64().unwrap() > MAX_AUDIT_ARGUMENT_BYTES as u64);
        assert_eq!(
            v["prefix"].as_str().unwrap().chars().count(),
            ARGUMENT_PREFIX_CHARS
        );
        let small = serde_json::json!({ "b": 1, "a": 2 });
        assert_eq!(arguments_text(&small), r#"{"b":1,"a":2}"#);
    }

    #[test]
    fn time_text_sorts() {
        let a = time_text(chrono::DateTime::from_timestamp(1_700_000_000, 5_000).unwrap());
        let b = time_text(chrono::DateTime::from_timestamp(1_700_000_000, 50_000).unwrap());
        assert!(a < b, "{a} {b}");
        assert!(a.ends_with('Z'));
        assert_eq!(a, "2023-11-14T22:13:20.000005Z");
    }
}
