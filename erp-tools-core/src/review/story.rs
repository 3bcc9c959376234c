//! The Run page: the run's story, one card per tool call (its arguments once, every
//! event of it in order, its result as untrusted data) and one per loop event outside a
//! call (the answer, a brake).

use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::approvals::approval_in;
use super::pages::{Console, Reviewer};
use super::render::{pretty_json, short_surface, when};
use crate::agent::{RUN_CANNOT_CONTINUE, RUN_TAKEN_OVER, RunLog};
use crate::audit::AuditRecord;
use crate::store::review as sql;

/// How an event stands out: `denied`, `failed` or `decision`.
fn flag(outcome: &str) -> Option<&'static str> {
    match outcome {
        "denied" | crate::agent::APPROVAL_REJECTED => Some("denied"),
        "tool_error" | "failed" | "attempt" | "interrupted" | RUN_CANNOT_CONTINUE => Some("failed"),
        "awaiting_approval" | crate::agent::APPROVAL_GRANTED | "approved" | RUN_TAKEN_OVER => {
            Some("decision")
        }
        _ => None,
    }
}

fn event(c: &Console, r: &AuditRecord) -> Value {
    json!({
        "id": r.id, "at": when(&r.at), "source": r.source, "step": r.step,
        "outcome": r.outcome.replace('_', " "), "flag": flag(&r.outcome),
        "message": r.message.as_deref().map(|m| c.named_message(m)),
        "replayed": r.outcome == "replayed",
        "person": c.person(&r.user_id),
        "document": r.document.as_ref().map(|d| json!({
            "label": format!("{} {}", d.doc_type.replace('_', " "), d.number),
            "href": c.document_href(&d.doc_type, &d.number),
        })),
    })
}

/// `GET /runs/{run_id}`: the run's story.
pub(super) async fn run(
    State(c): State<Arc<Console>>,
    Path(run_id): Path<String>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let pool = c.read_pool().await;
    let records = match c.config.database().audit_log(Some(&run_id)).await {
        Ok(r) => r,
        Err(e) => return c.store_failed(&session, e),
    };
    let records: Vec<AuditRecord> = records
        .into_iter()
        .filter(|r| r.branch_id == Some(branch))
        .collect();
    if records.is_empty() {
        return c.message(
            Some(&session),
            StatusCode::NOT_FOUND,
            "Run not found",
            &format!("Run {run_id} has no activity in your branch."),
        );
    }
    let documents = match sql::run_documents(&pool, branch, &run_id).await {
        Ok(d) => d,
        Err(e) => return c.store_failed(&session, e),
    };
    let approvals = match c.config.queue.for_run(branch, &run_id).await {
        Ok(a) => a,
        Err(e) => return c.store_failed(&session, e),
    };

    let cards = cards(&c, &records, &documents);
    // The documents the run's tasks produced and its calls attached (both are MCP's).
    #[cfg(feature = "mcp")]
    let (attachments, kept) = {
        let listed = futures::try_join!(
            super::attachments::of_run(&c, &run_id, branch, &records),
            super::attachments::kept_of_run(&c, &run_id, branch, &records),
        );
        match listed {
            Ok(listed) => listed,
            Err(e) => return c.store_failed(&session, e),
        }
    };
    #[cfg(not(feature = "mcp"))]
    let (attachments, kept): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
    let first = &records[0];
    let title = records
        .iter()
        .find_map(|r| r.tool_name.as_deref())
        .map_or_else(|| "run".into(), |t| c.run_name(t));
    let story = match sql::story(&pool, &run_id).await {
        Ok(s) => s,
        Err(e) => return c.store_failed(&session, e),
    };
    let models: std::collections::BTreeSet<&str> =
        records.iter().filter_map(|r| r.model.as_deref()).collect();
    let prompts: std::collections::BTreeSet<&str> = records
        .iter()
        .filter_map(|r| r.prompt_version.as_deref())
        .collect();
    // The tool surfaces the run's rows were written under, in the order first seen.
    let mut surfaces: Vec<&str> = Vec::new();
    for s in records.iter().filter_map(|r| r.surface.as_deref()) {
        if !surfaces.contains(&s) {
            surfaces.push(s);
        }
    }
    let surfaces: Vec<Value> = surfaces
        .iter()
        .map(|s| json!({"short": short_surface(s), "full": s}))
        .collect();
    let approvals: Vec<Value> = approvals
        .iter()
        .map(|a| approval_in(&c, a, &approvals))
        .collect();
    // The run's durable log, if it is kept: cut off, taken over (by whom, when).
    let log = match RunLog::new(c.config.database().clone()).get(&run_id).await {
        Ok(log) => log.filter(|l| l.branch_id == branch).map(|l| {
            json!({
                "status": l.status.replace('_', " "), "interrupted": l.interrupted,
                "steps": l.steps, "resume_count": l.resume_count,
                "resumed_by": l.resumed_by, "reason": l.reason,
                "resumed_at": l.resumed_at.as_deref().map(when),
                "interrupted_at": l.interrupted_at.as_deref().map(when),
            })
        }),
        Err(e) => return c.store_failed(&session, e),
    };
    c.render(
        &session,
        "run.html",
        json!({
            "nav": "runs", "run_id": run_id, "title": title, "cards": cards,
            "approvals": approvals, "person": c.person(&first.user_id),
            "branch": first.branch_code, "started": when(&first.at),
            "models": models.into_iter().collect::<Vec<_>>(),
            "prompts": prompts.into_iter().collect::<Vec<_>>(),
            "rows": records.len(), "surfaces": surfaces,
            "sessions": sessions(&records),
            "task": story.task,
            "ending": story.ended_status.as_deref().map(|status| json!({
                "status": status.replace('_', " "), "done": status == "done",
                "text": story.answer, "at": story.ended_at.as_deref().map(when),
            })),
            "log": log,
            "kept": !kept.is_empty(),
            "attachments": attachments.into_iter().chain(kept).collect::<Vec<_>>(),
        }),
    )
}

/// The key a row is grouped by: its call key; on rows written before call keys were
/// kept, a loop event's call id, a runtime row its own card.
fn group_key(r: &AuditRecord) -> Option<String> {
    if let Some(key) = r.call_key.as_deref().filter(|k| !k.is_empty()) {
        return Some(key.to_string());
    }
    match r.tool_call_id.as_deref().filter(|id| !id.is_empty()) {
        Some(id) if r.source != crate::audit::SOURCE_RUNTIME => Some(format!("id:{id}")),
        Some(_) => Some(format!("row:{}", r.id)),
        None => None,
    }
}

/// How many MCP calls of the run came from calls numbered alike (a JSON-RPC id that
/// repeats: another session, a reconnection): said on the page, so a reviewer knows the
/// cards are per call, not per id.
fn sessions(records: &[AuditRecord]) -> usize {
    let mut by_id: HashMap<&str, HashSet<&str>> = HashMap::new();
    for r in records
        .iter()
        .filter(|r| r.source == crate::audit::SOURCE_RUNTIME)
    {
        if let (Some(id), Some(key)) = (r.tool_call_id.as_deref(), r.call_key.as_deref()) {
            by_id.entry(id).or_default().insert(key);
        }
    }
    by_id.values().map(HashSet::len).max().unwrap_or(0)
}

/// The run's cards: one per call (by [`group_key`]), in the order calls began, each with
/// its own arguments, events, and result; loop events outside a call each get their own.
fn cards(c: &Console, records: &[AuditRecord], documents: &[sql::DraftedDocument]) -> Vec<Value> {
    let mut cards: Vec<Value> = Vec::new();
    let mut by_call: HashMap<String, usize> = HashMap::new();
    for r in records {
        let at = match group_key(r) {
            Some(key) => *by_call.entry(key).or_insert_with(|| {
                cards.push(json!({
                    "kind": "call", "tool": null, "step": r.step, "arguments": null,
                    "events": [], "result": null, "read": null, "flag": null,
                    "call_id": r.tool_call_id, "source": r.source,
                }));
                cards.len() - 1
            }),
            None => {
                cards.push(json!({
                    "kind": "event", "tool": null, "events": [], "flag": null,
                    "title": r.outcome.replace('_', " "), "arguments": null, "result": null,
                    "read": null, "step": r.step,
                }));
                cards.len() - 1
            }
        };
        let card = &mut cards[at];
        if card["arguments"].is_null()
            && let Some(args) = &r.arguments
        {
            card["arguments"] = json!(pretty_json(args));
        }
        if card["tool"].is_null()
            && let Some(name) = &r.tool_name
        {
            card["tool"] = c.tool(name);
        }
        if card["step"].is_null() && r.step.is_some() {
            card["step"] = json!(r.step);
        }
        if let Some(f) = flag(&r.outcome)
            && (card["flag"].is_null() || f == "denied")
        {
            card["flag"] = json!(f);
        }
        if let Some(text) = r.result_text.as_deref().filter(|t| !t.is_empty())
            && card["read"].is_null()
        {
            card["read"] = json!(text);
        }
        if let Some(doc) = &r.document
            && card["result"].is_null()
            && let Some(d) = documents.iter().find(|d| d.number == doc.number)
        {
            card["result"] = drafted(c, d);
        }
        let ev = event(c, r);
        if let Value::Array(events) = &mut card["events"] {
            events.push(ev);
        }
    }
    cards
}

/// A drafted document's result as the card shows it.
fn drafted(c: &Console, d: &sql::DraftedDocument) -> Value {
    json!({
        "text": d.response_text.clone().or_else(|| d.response.as_ref().map(|_| {
            c.config.view(&d.document_type).map_or_else(
                || format!("{} {} was drafted.", d.document_type.replace('_', " "), d.number),
                |v| format!("{} {} was drafted.", v.title, d.number),
            )
        })),
        "structured": d.response.as_ref().and_then(|v| serde_json::to_string_pretty(v).ok()),
        "href": c.document_href(&d.document_type, &d.number),
        "label": format!("{} {}", d.document_type.replace('_', " "), d.number),
    })
}
