//! Documents kept for `resources/read`: what a successful call attached to its result (a
//! purchase order's PDF, a report's CSV) is kept in the database, an hour, for the
//! principal (user and branch) whose call produced it. That principal reads it again by
//! its URI on any replica; anyone else, as any URI never produced, gets "resource not
//! found" (`-32002`), so a document's existence is not told to a caller who may not see it.

use base64::Engine;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ReadResourceResponse, ReadResourceResult, ResourceContents};
use serde_json::json;

use super::apps;
use super::result::{call_tool_result, with_attachments};
use crate::Database;
use crate::audit::AuditEntry;
use crate::runtime::CallOutcome;
use crate::store::documents::{self as store, StoredDocument};
use crate::text;
use crate::tool::attachment::{Attachment, Body};
use crate::tool::context::Principal;

/// How long a document is kept: an hour, as a task is.
pub(crate) const DOCUMENT_TTL_MS: i64 = 3_600_000;

/// The call whose documents are kept: who made it, the tool, and the run id and call id it
/// was audited under (the Run page of the review console lists them by run).
pub(crate) struct Origin<'a> {
    pub principal: &'a Principal,
    pub tool: &'a str,
    pub run_id: &'a str,
    pub call_id: Option<&'a str>,
}

/// The run and call id a call is audited under (`entry`): its kept documents carry them.
pub(crate) fn audited(entry: &AuditEntry) -> (String, Option<String>) {
    (entry.agent_run_id.clone(), entry.tool_call_id.clone())
}

impl<'a> Origin<'a> {
    /// The call of `tool` by `principal`, audited under `(run id, call id)`.
    pub(crate) fn new(
        principal: &'a Principal,
        tool: &'a str,
        (run_id, call_id): &'a (String, Option<String>),
    ) -> Self {
        Origin {
            principal,
            tool,
            run_id,
            call_id: call_id.as_deref(),
        }
    }
}

/// The MCP result of the call `origin`, with the documents it attached: kept for
/// `resources/read` when the call succeeded (a failure to keep them is logged; the result
/// still carries them).
pub(crate) async fn result(
    db: &Database,
    origin: Origin<'_>,
    outcome: CallOutcome,
    docs: Vec<Attachment>,
) -> CallToolResult {
    if !outcome.is_error() && !docs.is_empty() {
        keep(db, &origin, &docs).await;
    }
    with_attachments(call_tool_result(outcome), docs)
}

async fn keep(db: &Database, origin: &Origin<'_>, docs: &[Attachment]) {
    let tool = origin.tool;
    let base64 = base64::engine::general_purpose::STANDARD;
    let stored: Vec<StoredDocument> = docs
        .iter()
        .map(|doc| {
            let (body, is_base64) = match doc.body() {
                Body::Text(text) => (text.clone(), false),
                Body::Bytes(bytes) => (base64.encode(bytes), true),
            };
            StoredDocument {
                uri: doc.uri().to_string(),
                mime_type: doc.mime_type().to_string(),
                tool_name: tool.to_string(),
                agent_run_id: origin.run_id.to_string(),
                tool_call_id: origin.call_id.map(str::to_string),
                body,
                is_base64,
            }
        })
        .collect();
    let owner = (origin.principal.user_id(), origin.principal.branch_id());
    if let Err(e) = store::keep(db.pool(), owner, &stored, DOCUMENT_TTL_MS).await {
        tracing::error!(tool, error = %e, "the call's documents were not kept for resources/read");
    }
}

/// `resources/read` of `uri`: a card this server `served`, or a document a call of
/// `caller` produced within the hour. Anything else is "resource not found", the same for
/// a document another principal's call produced as for a URI never produced.
pub(crate) async fn read(
    served: &[&'static str],
    db: &Database,
    caller: Option<&Principal>,
    uri: &str,
) -> Result<ReadResourceResponse, ErrorData> {
    if let Some(card) = apps::read_resource(served, uri) {
        return Ok(card.into());
    }
    let Some(principal) = caller else {
        return Err(ErrorData::invalid_request(text::NOT_AUTHENTICATED, None));
    };
    let owner = (principal.user_id(), principal.branch_id());
    let doc = store::read(db.pool(), owner, uri).await.map_err(|e| {
        tracing::error!(uri, error = %e, "a kept document could not be read");
        ErrorData::internal_error(text::SERVER_FAILED, None)
    })?;
    let Some(doc) = doc else {
        let why = text::resource_not_found(uri);
        return Err(ErrorData::resource_not_found(
            why,
            Some(json!({ "uri": uri })),
        ));
    };
    let contents = if doc.is_base64 {
        ResourceContents::blob(doc.body, doc.uri)
    } else {
        ResourceContents::text(doc.body, doc.uri)
    };
    let contents = vec![contents.with_mime_type(doc.mime_type)];
    Ok(ReadResourceResult::new(contents).into())
}
