//! The answer of a call, ready for any protocol: structured content for programs, text
//! for the model, and what goes into the call's audit row.

use serde_json::Value;

use super::budget::ResultBudget;
use super::call::CallOutcome;
use crate::audit::Outcome;
use crate::text;
use crate::tool::Tier;
use crate::tool::error::{ToolError, ToolErrorKind};
use crate::tool::handles::DocumentRef;

/// How a call ended: its outcome plus the text for the audit row's `message`.
pub(crate) struct Finished {
    pub outcome: CallOutcome,
    /// The model-facing error text plus internal detail (failed calls), or a note
    /// (replays).
    pub audit_message: Option<String>,
    /// The answer's size as the client receives it, in estimated tokens (see
    /// [`ResultBudget`](super::ResultBudget)).
    pub result_tokens: u32,
}

impl Finished {
    /// A failed call; internal detail goes to the log and the audit row only.
    pub(crate) fn failed(outcome: Outcome, err: ToolError) -> Finished {
        use super::limits::{MAX_MESSAGE_BYTES, bounded};
        let text = bounded(&err.to_string(), MAX_MESSAGE_BYTES).into_owned();
        let audit_message = match (err.kind(), err.details()) {
            (ToolErrorKind::Internal, Some(detail)) => {
                let detail = detail
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| detail.to_string());
                tracing::error!(detail = %detail, "tool call failed internally");
                format!("{text} [internal: {detail}]")
            }
            _ => text.clone(),
        };
        let structured = err.to_json();
        Finished {
            result_tokens: ResultBudget::measure(&text, &structured),
            outcome: CallOutcome {
                outcome,
                structured,
                text,
                document: None,
                error: Some(err),
            },
            audit_message: Some(bounded(&audit_message, MAX_MESSAGE_BYTES).into_owned()),
        }
    }

    /// A successful call: the handler's output (with `replayed` for draft tools) and its
    /// text. With a rendering (`rendered`, from [`ModelText`](crate::ModelText)) the text
    /// is the rendering, after the replay sentence for a replayed draft; without one it is
    /// the output as JSON, after a sentence naming the document for a draft.
    pub(crate) fn succeeded(
        tier: Tier,
        output: Value,
        rendered: Option<String>,
        document: Option<DocumentRef>,
        replayed: bool,
    ) -> Finished {
        let mut structured = output;
        if tier == Tier::Draft
            && let Value::Object(map) = &mut structured
        {
            map.insert("replayed".into(), Value::Bool(replayed));
        }
        let has_rendering = rendered.is_some();
        let body = rendered.unwrap_or_else(|| {
            serde_json::to_string_pretty(&structured).unwrap_or_else(|_| structured.to_string())
        });
        let text = match (&document, replayed) {
            (Some(doc), true) => format!("{}\n{body}", text::draft_replayed(doc)),
            (Some(doc), false) if !has_rendering => {
                format!("{}\n{body}", text::draft_created(doc))
            }
            _ => body,
        };
        Finished {
            result_tokens: ResultBudget::measure(&text, &structured),
            outcome: CallOutcome {
                outcome: if replayed {
                    Outcome::Replayed
                } else {
                    Outcome::Ok
                },
                structured,
                text,
                document,
                error: None,
            },
            audit_message: None,
        }
    }
}

impl Finished {
    /// A page tool's answer, its size already counted while it was built (see
    /// [`pages::answer`](super::pages::answer)): measured once, not again here.
    pub(crate) fn page(structured: Value, text: String, result_tokens: u32) -> Finished {
        Finished {
            result_tokens,
            outcome: CallOutcome {
                outcome: Outcome::Ok,
                structured,
                text,
                document: None,
                error: None,
            },
            audit_message: None,
        }
    }
}

/// The text of a panic payload.
pub(crate) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft_success_carries_replayed() {
        let doc = DocumentRef {
            doc_type: "purchase_order".into(),
            id: 7.into(),
            number: "PO-2026-0042".into(),
        };
        let out = Finished::succeeded(
            Tier::Draft,
            json!({"number": "PO-2026-0042"}),
            None,
            Some(doc.clone()),
            true,
        )
        .outcome;
        assert_eq!(out.outcome, Outcome::Replayed);
        assert_eq!(out.structured["replayed"], true);
        assert!(
            out.text
                .starts_with("Returned the existing draft purchase order PO-2026-0042")
        );
        let read = Finished::succeeded(Tier::Read, json!({"qty": "3"}), None, None, false).outcome;
        assert!(read.structured.get("replayed").is_none());
        assert_eq!(read.text, "{\n  \"qty\": \"3\"\n}");
    }

    #[test]
    fn a_rendering_replaces_the_json_and_structured_content_keeps_everything() {
        let doc = DocumentRef {
            doc_type: "purchase_order".into(),
            id: 7.into(),
            number: "PO-2026-0042".into(),
        };
        let output = json!({"po_id": 7, "number": "PO-2026-0042"});
        let rendered = || Some("Draft PO-2026-0042 for V-00231; not sent to the vendor.".into());
        let new = Finished::succeeded(
            Tier::Draft,
            output.clone(),
            rendered(),
            Some(doc.clone()),
            false,
        )
        .outcome;
        assert_eq!(
            new.text,
            "Draft PO-2026-0042 for V-00231; not sent to the vendor."
        );
        assert_eq!(new.structured["po_id"], 7);
        let replay =
            Finished::succeeded(Tier::Draft, output.clone(), rendered(), Some(doc), true).outcome;
        assert!(
            replay
                .text
                .starts_with("Returned the existing draft purchase order PO-2026-0042")
        );
        assert!(
            replay
                .text
                .ends_with("\nDraft PO-2026-0042 for V-00231; not sent to the vendor.")
        );
        let read = Finished::succeeded(
            Tier::Read,
            output,
            Some("PO-2026-0042, draft.".into()),
            None,
            false,
        )
        .outcome;
        assert_eq!(read.text, "PO-2026-0042, draft.");
    }
}
