//! The priced preview of a pending draft call (SPEC V3): what the call would create,
//! computed before a person decides.
//!
//! A draft tool's preview runs **the same handler** as the real call, in a write
//! transaction that claims the idempotency key like the real call and is then always
//! rolled back: nothing it wrote (the document, its lines, a sequence number, the key)
//! survives. A draft that does not write through SQL (an external ERP) offers a
//! read-only [`PreviewHook`] instead, which returns what it would create.
//!
//! The preview's [`digest`](Preview::digest) is what an approval binds to. When the
//! approved call runs, the handler's output is digested the same way inside its
//! transaction; a different digest (a price changed in between) rolls the transaction
//! back, so nothing is created, and the run pauses again with the new preview. The
//! document's own identity (its number and id, which a sequence hands out at creation)
//! is left out of the digest: the preview and the real call may get different numbers.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::admit::Admitted;
use crate::idempotency::{Claim, IdempotencyKey, request_hash};
use crate::store::Database;
use crate::store::keys;
use crate::tool::context::{Principal, ToolContext};
use crate::tool::error::ToolError;
use crate::tool::handler::Handler;
use crate::tool::handles::{Backend, DocumentRef, DraftTx};

/// The `details` key of the tool error a bound call ends with when its document differs
/// from the approved preview; its value is the new [`Preview`].
pub(crate) const PREVIEW_CHANGED: &str = "preview_changed";

/// How a preview was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviewKind {
    /// The draft handler ran in a transaction that was rolled back: this is the document
    /// it would create.
    RolledBack,
    /// The call's `client_ref` already created a document: running it returns that
    /// document again and creates nothing.
    Replay,
    /// A remote draft's [`PreviewHook`] said what it would create.
    Hook,
    /// The handler refused (or asked a question): the call would create nothing as it
    /// stands. `value` is the error as the model would read it.
    Refused,
}

impl PreviewKind {
    /// How the preview was obtained, as a reviewer reads it after "Preview " (the review
    /// console and the approval card both say it so).
    #[cfg_attr(
        not(any(feature = "review", all(feature = "mcp", feature = "agent"))),
        allow(dead_code)
    )]
    pub(crate) fn how(self) -> &'static str {
        match self {
            PreviewKind::RolledBack => "computed by the tool in a transaction that was rolled back",
            PreviewKind::Replay => "this client_ref already drafted it: approving returns it again",
            PreviewKind::Hook => "computed by the remote system's preview, without writing",
            PreviewKind::Refused => "the tool would refuse this action as it stands",
        }
    }
}

/// What a pending draft call would create, as its handler (or hook) produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preview {
    /// How it was obtained.
    pub kind: PreviewKind,
    /// The document's type (`purchase_order`), when the handler recorded one.
    pub document_type: Option<String>,
    /// The handler's output (for [`PreviewKind::Refused`], the error as JSON).
    pub value: Value,
    /// The handler's own text for it, or the refusal's message.
    pub text: Option<String>,
    /// What an approval of this preview binds to (see the module docs).
    pub digest: String,
}

impl Preview {
    /// A preview a remote draft's hook computed: `value` is what the call would create,
    /// in the shape its real output will have (so the digests compare).
    pub fn from_hook(document_type: impl Into<String>, value: Value) -> Preview {
        Preview {
            kind: PreviewKind::Hook,
            document_type: Some(document_type.into()),
            digest: binding_digest(&value, None),
            value,
            text: None,
        }
    }

    /// The preview of a document the handler produced in its transaction.
    pub(crate) fn rolled_back(value: Value, text: Option<String>, doc: &DocumentRef) -> Self {
        Self::document(PreviewKind::RolledBack, value, text, doc)
    }

    fn document(kind: PreviewKind, value: Value, text: Option<String>, doc: &DocumentRef) -> Self {
        Preview {
            kind,
            document_type: Some(doc.doc_type.clone()),
            digest: binding_digest(&value, Some(doc)),
            value,
            text,
        }
    }

    /// The preview of a call its handler (or hook) refused.
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) fn refused(err: &ToolError) -> Preview {
        let value = err.to_json();
        Preview {
            kind: PreviewKind::Refused,
            document_type: None,
            digest: format!("refused:{}", crate::validate::canonical_hash(&value)),
            text: Some(err.to_string()),
            value,
        }
    }
}

/// A read-only preview for a draft that does not write through the framework's
/// transaction (a draft in an external ERP): given the call's context and normalised
/// arguments, what the call would create, without creating it. Register it with
/// [`ApprovalQueue::preview_hook`](crate::agent::ApprovalQueue::preview_hook).
pub trait PreviewHook: Send + Sync + 'static {
    /// What the call would create; an error when it would be refused.
    fn preview<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Preview, ToolError>>;
}

impl<F> PreviewHook for F
where
    F: for<'a> Fn(&'a ToolContext, &'a Value) -> BoxFuture<'a, Result<Preview, ToolError>>
        + Send
        + Sync
        + 'static,
{
    fn preview<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: &'a Value,
    ) -> BoxFuture<'a, Result<Preview, ToolError>> {
        self(ctx, args)
    }
}

/// A shared hook.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) type SharedHook = Arc<dyn PreviewHook>;

/// The digest of a document an approval binds to: `value` with the document's number
/// (in any string) and id (in any member named `id` or ending in `_id`) masked, hashed
/// canonically (key order never matters).
pub(crate) fn binding_digest(value: &Value, doc: Option<&DocumentRef>) -> String {
    fn mask(v: &Value, key: Option<&str>, doc: &DocumentRef) -> Value {
        let id_key = key.is_some_and(|k| k == "id" || k.ends_with("_id"));
        match v {
            Value::String(s) if id_key && doc.id.as_text() == Some(s.as_str()) => {
                Value::String("{document id}".into())
            }
            Value::String(s) if !doc.number.is_empty() => {
                Value::String(s.replace(&doc.number, "{document}"))
            }
            Value::Number(n) if id_key && n.as_i64().is_some() && n.as_i64() == doc.id.as_i64() => {
                Value::String("{document id}".into())
            }
            Value::Array(items) => Value::Array(items.iter().map(|i| mask(i, None, doc)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), mask(v, Some(k), doc)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let masked = match doc {
        Some(doc) => mask(value, None, doc),
        None => value.clone(),
    };
    crate::validate::canonical_hash(&masked)
}

/// The preview of an admitted draft call for `principal` in run `run_id`: its handler
/// run on `db` in a transaction that is rolled back (see the module docs). `None` for a
/// read tool.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) async fn preview_admitted(
    db: &Database,
    principal: &Arc<Principal>,
    run_id: &str,
    call_id: &str,
    admitted: &Admitted<'_>,
) -> Option<Result<Preview, sqlx::Error>> {
    let (Handler::Draft(handler), Some(key)) = (admitted.tool.def.handler(), &admitted.key) else {
        return None;
    };
    let ctx = ToolContext::new(principal.clone(), run_id, call_id, admitted.tool.def.name());
    Some(rolled_back(db, handler, &ctx, key, admitted.args.clone()).await)
}

async fn rolled_back(
    db: &Database,
    handler: crate::tool::handler::DraftHandlerFn,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    args: Value,
) -> Result<Preview, sqlx::Error> {
    let hash = request_hash(&args);
    let claim = Claim {
        key,
        request_hash: &hash,
        tool_name: ctx.tool_name(),
        user_id: ctx.user_id(),
        branch_id: ctx.branch_id(),
    };
    let _turn = db.write_turn().await;
    let mut tx = db.begin_write().await?;
    let new = if db.backend() == Backend::Postgres {
        keys::claim(&mut tx, &claim).await?
    } else {
        keys::load(&mut tx, key).await?.is_none()
    };
    if !new {
        let stored = keys::load(&mut tx, key).await?;
        tx.rollback().await?;
        return Ok(match stored {
            Some(s) => match (s.response, s.document) {
                (Some(value), Some(doc)) => {
                    Preview::document(PreviewKind::Replay, value, s.response_text, &doc)
                }
                _ => Preview::refused(&ToolError::rejected(
                    "This client_ref was used before without a stored document.",
                )),
            },
            None => Preview::refused(&ToolError::rejected(
                "The idempotency key changed while the preview was computed; try again.",
            )),
        });
    }
    let mut draft = DraftTx::new(
        tx,
        db.backend(),
        key.agent_run_id.clone(),
        ctx.user_id().to_string(),
    );
    let ran = AssertUnwindSafe(handler(ctx, &mut draft, args))
        .catch_unwind()
        .await;
    let (tx, document) = draft.into_parts();
    // Always rolled back: a preview never leaves anything behind.
    tx.rollback().await?;
    Ok(match (ran, document) {
        (Ok(Ok(output)), Some(doc)) => {
            Preview::document(PreviewKind::RolledBack, output.value, output.text, &doc)
        }
        (Ok(Ok(_)), None) => Preview::refused(&crate::text::document_not_recorded(ctx.tool_name())),
        (Ok(Err(err)), _) => Preview::refused(&err),
        (Err(_), _) => Preview::refused(&ToolError::internal("the draft handler panicked")),
    })
}

/// The error a bound call ends with when its handler produced a document other than the
/// approved preview: nothing was created; `details` carries the new preview.
pub(crate) fn changed(tool: &str, now: &Preview) -> ToolError {
    ToolError::rejected(format!(
        "{tool} would now create a different document than the one a person approved (for \
         example a price changed since the preview). Nothing was created."
    ))
    .not_done("No draft was created.")
    .next_step("Wait: the run pauses for a person to approve the new preview.")
    .with_details(serde_json::json!({ PREVIEW_CHANGED: now }))
}

/// The new preview in a call's error, if the call ended because its document changed.
#[cfg_attr(not(feature = "agent"), allow(dead_code))]
pub(crate) fn changed_preview(err: &ToolError) -> Option<Preview> {
    let v = err.details()?.get(PREVIEW_CHANGED)?;
    serde_json::from_value(v.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_ignores_the_documents_identity_but_not_a_price() {
        let a = json!({"po_id": 3, "number": "PO-1", "next_step": "Draft PO-1 made", "total": "10", "lines": [{"line_no": 3}]});
        let b = json!({"po_id": 4, "number": "PO-2", "next_step": "Draft PO-2 made", "total": "10", "lines": [{"line_no": 3}]});
        let c = json!({"po_id": 4, "number": "PO-2", "next_step": "Draft PO-2 made", "total": "11", "lines": [{"line_no": 3}]});
        let doc = |id: i64, n: &str| DocumentRef::new("po", id, n);
        let da = binding_digest(&a, Some(&doc(3, "PO-1")));
        assert_eq!(da, binding_digest(&b, Some(&doc(4, "PO-2"))));
        assert_ne!(da, binding_digest(&c, Some(&doc(4, "PO-2"))));
        // A line number equal to the id is not the id.
        let d = json!({"po_id": 3, "number": "PO-1", "next_step": "Draft PO-1 made", "total": "10", "lines": [{"line_no": 4}]});
        assert_ne!(da, binding_digest(&d, Some(&doc(3, "PO-1"))));
    }

    #[test]
    fn a_changed_error_carries_the_new_preview() {
        let p = Preview::from_hook("po", json!({"total": "5"}));
        let err = changed("t", &p);
        assert_eq!(changed_preview(&err), Some(p));
        assert_eq!(changed_preview(&ToolError::rejected("x")), None);
    }
}
