//! The Approvals page and the approve / reject forms. A pending action is shown as what
//! it would create (its priced preview, as the application's [`DocumentView`] renders
//! it) and where it stands against each hard limit.
//!
//! [`DocumentView`]: super::DocumentView

use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::changes;
use super::config::REVIEW_APPROVE;
use super::document::group;
use super::pages::{Console, NEUTRAL_NOTICE, Reviewer};
use super::render::when;
use super::session::same_secret;
use crate::agent::{ApprovalStatus, DecisionError, StoredApproval, value_at};
use crate::runtime::{Preview, PreviewKind};

/// Each hard limit of `a` with this action's value against it: the limits are stored as
/// `path ≤ max (source)`, joined by `; `.
fn limits(a: &StoredApproval) -> Vec<Value> {
    let Some(text) = &a.limits else {
        return Vec::new();
    };
    text.split("; ")
        .filter_map(|one| {
            let (path, rest) = one.split_once(" ≤ ")?;
            let (max, source) = match rest.split_once(" (") {
                Some((m, s)) => (m, s.trim_end_matches(')')),
                None => (rest, ""),
            };
            let value = match value_at(&a.arguments, path) {
                Ok(Some(v)) => group(&v.normalize().to_string()),
                Ok(None) => "not set".into(),
                Err(e) => format!("unreadable ({e})"),
            };
            let summed = path.contains("[]");
            Some(json!({
                "path": path, "max": group(max), "source": source, "value": value,
                "summed": summed,
            }))
        })
        .collect()
}

fn preview_view(c: &Console, p: &Preview) -> Value {
    let view = p.document_type.as_deref().and_then(|t| c.config.view(t));
    json!({
        "kind": p.kind.how(), "refused": p.kind == PreviewKind::Refused,
        "doc": view.filter(|_| p.kind != PreviewKind::Refused).map(|v| v.render(&p.value)),
        "text": p.text,
        "json": serde_json::to_string_pretty(&p.value).unwrap_or_default(),
    })
}

/// An approval as the templates show it.
pub(super) fn approval_view(c: &Console, a: &StoredApproval) -> Value {
    json!({
        "id": a.id, "tool": c.tool(&a.tool), "run_id": a.run_id, "href": c.run_href(&a.run_id),
        "call_id": a.call_id,
        "arguments": serde_json::to_string_pretty(&a.arguments).unwrap_or_default(),
        "signature": a.signature, "reason": a.reason, "limits": limits(a),
        "person": c.person(&a.user_id),
        "branch": a.branch_code, "status": a.status.as_str(),
        "created": when(&a.created_at), "expires": when(&a.expires_at),
        "decided_by": a.decided_by.as_deref().map(|p| c.person(p)),
        "decided_at": a.decided_at.as_deref().map(when),
        "note": a.note, "resumed_at": a.resumed_at.as_deref().map(when),
        "resume_count": a.resume_count, "resume_status": a.resume_status.as_deref().map(|s| s.replace('_', " ")),
        "preview": a.preview.as_ref().map(|p| preview_view(c, p)),
        "approve_href": format!("{}/approvals/{}/approve", c.base(), a.id),
        "reject_href": format!("{}/approvals/{}/reject", c.base(), a.id),
        "state": changes::state(a, None), "diff": null, "replaced": null, "repeats": [],
    })
}

/// [`approval_view`] with what `all` (approvals of its run, or the page's) says about it:
/// the approval that replaced it, and what changed since the approval it replaces.
pub(super) fn approval_in(c: &Console, a: &StoredApproval, all: &[StoredApproval]) -> Value {
    let mut v = approval_view(c, a);
    v["state"] = changes::state(a, changes::successor(a, all));
    if let Some(before) = changes::predecessor(a, all) {
        v["replaced"] = json!({ "id": before.id, "decided_by": before.decided_by.as_deref().map(|p| c.person(p)) });
        if let (Some(old), Some(new)) = (&before.preview, &a.preview) {
            v["diff"] = json!(changes::diff(c, old, new));
        }
    }
    v
}

/// `GET /approvals`: pending actions with their forms, then the latest decisions.
pub(super) async fn approvals(
    State(c): State<Arc<Console>>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let (pending, decided) = match (
        c.config.queue.pending(branch).await,
        c.config.queue.decided(branch, 50).await,
    ) {
        (Ok(p), Ok(d)) => (p, d),
        (Err(e), _) | (_, Err(e)) => return c.store_failed(&session, e),
    };
    let me = session.principal.user_id();
    let pool = c.read_pool().await;
    let mut shown = Vec::new();
    for a in &pending {
        // The run's approvals: the one this replaces, if the run paused again.
        let run = match c.config.queue.for_run(branch, &a.run_id).await {
            Ok(run) => run,
            Err(e) => return c.store_failed(&session, e),
        };
        let mut v = approval_in(&c, a, &run);
        v["own"] = json!(a.user_id == me);
        v["repeats"] = match changes::repeats(&c, &pool, branch, a).await {
            Ok(r) => json!(r),
            Err(e) => return c.store_failed(&session, e),
        };
        shown.push(v);
    }
    let mut all = decided.clone();
    all.extend(pending);
    let pending = shown;
    let decided: Vec<Value> = decided.iter().map(|a| approval_in(&c, a, &all)).collect();
    c.render(
        &session,
        "approvals.html",
        json!({ "nav": "approvals", "pending": pending, "decided": decided }),
    )
}

/// The approve and reject forms' fields.
#[derive(Deserialize)]
pub(super) struct DecisionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    note: String,
}

/// `POST /approvals/{id}/approve`.
pub(super) async fn approve(
    State(c): State<Arc<Console>>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<DecisionForm>,
) -> Response {
    decide(c, headers, id, form, ApprovalStatus::Approved).await
}

/// `POST /approvals/{id}/reject`.
pub(super) async fn reject(
    State(c): State<Arc<Console>>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<DecisionForm>,
) -> Response {
    decide(c, headers, id, form, ApprovalStatus::Rejected).await
}

async fn decide(
    c: Arc<Console>,
    headers: HeaderMap,
    id: i64,
    form: DecisionForm,
    decision: ApprovalStatus,
) -> Response {
    let Some(session) = c.sessions.current(&headers).await else {
        return c.to_sign_in(Some(&format!("{}/approvals", c.base())));
    };
    if !same_secret(&session.csrf, form.csrf.trim()) {
        return c.csrf_refused(Some(&session));
    }
    let reviewer = &session.principal;
    if !reviewer.has_scope(REVIEW_APPROVE) {
        return c.message(
            Some(&session),
            StatusCode::FORBIDDEN,
            "Not allowed to decide",
            &format!(
                "Your token grants reading the console but not {REVIEW_APPROVE}; nothing was \
                 decided. Ask for a token with {REVIEW_APPROVE}."
            ),
        );
    }
    let queue = &c.config.queue;
    let result = match decision {
        ApprovalStatus::Rejected => queue.reject(id, reviewer, &form.note).await,
        _ => queue.approve(id, reviewer, Some(&form.note)).await,
    };
    let decided = match result {
        Ok(d) => d,
        Err(e) => {
            let (status, title) = match &e {
                DecisionError::NotFound(_) => (StatusCode::NOT_FOUND, "Approval not found"),
                DecisionError::OwnAction(_) => (StatusCode::FORBIDDEN, "Four eyes"),
                DecisionError::ReasonRequired => (StatusCode::BAD_REQUEST, "Say why"),
                DecisionError::Store(_) => {
                    (StatusCode::INTERNAL_SERVER_ERROR, "Nothing was decided")
                }
                DecisionError::Expired { .. } | DecisionError::AlreadyDecided { .. } => {
                    (StatusCode::CONFLICT, "Already settled")
                }
            };
            let text = settled_text(&c, &e);
            return c.message(Some(&session), status, title, &text);
        }
    };
    let mut notice = format!(
        "Approval {} of {} was {} by you.",
        decided.id,
        decided.tool,
        decided.status.as_str()
    );
    if decided.status == ApprovalStatus::Approved
        && let Some(hook) = &c.config.on_approved
    {
        match hook(decided.clone()).await {
            Ok(text) => notice.push_str(&format!(" {text}")),
            Err(e) => notice.push_str(&format!(" Resuming the run failed: {e}")),
        }
    }
    // Nothing was created when the run paused again on the same call (the document
    // differed from the approved preview): said so, in a neutral banner.
    if decided.status == ApprovalStatus::Approved
        && let Ok(run) = queue.for_run(reviewer.branch_id(), &decided.run_id).await
        && let Some(next) = changes::successor(&decided, &run)
    {
        notice = format!(
            "{NEUTRAL_NOTICE}Approval {} was approved by you, but nothing was created: the \
             document differed from the preview you approved when the action ran. It waits \
             again as approval {} with the new preview; compare and decide. {}",
            decided.id,
            next.id,
            notice
                .split_once(" by you. ")
                .map(|(_, rest)| rest)
                .unwrap_or_default()
        );
    }
    c.sessions.notify(&headers, notice).await;
    Redirect::to(&c.run_href(&decided.run_id)).into_response()
}

/// A decision error as a sentence, with people named and times as people read them.
fn settled_text(c: &Console, e: &DecisionError) -> String {
    let text = match e {
        DecisionError::AlreadyDecided { id, status, by, at } => {
            let who = match c.config.name_of(by) {
                Some(name) => format!("{name} ({by})"),
                None => by.clone(),
            };
            format!(
                "Approval {id} was already {} by {who} {}; nothing was changed",
                status.as_str(),
                when(at)["text"].as_str().unwrap_or(at)
            )
        }
        DecisionError::Expired { id, expired_at } => format!(
            "Approval {id} expired {} and can no longer be decided; the run has to propose \
             the action again",
            when(expired_at)["text"].as_str().unwrap_or(expired_at)
        ),
        other => other.to_string(),
    };
    match text.get(..1) {
        Some(first) => format!("{}{}.", first.to_uppercase(), &text[1..]),
        None => text,
    }
}
