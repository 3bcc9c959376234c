//! The pages: Runs, Run, Drafts, Approvals, and the approve / reject forms.

use std::sync::Arc;

use axum::Form;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::Environment;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::config::{REVIEW_APPROVE, ReviewConfig};
use super::render::{self, path_segment, pretty_json, short_time};
use super::session::{Session, Sessions, same_secret};
use crate::agent::{ApprovalStatus, DecisionError, StoredApproval};
use crate::audit::{AuditRecord, time_text};
use crate::store::review::{self as sql, RunFilter};

/// The session of a request's reviewer; a request without a live session is sent to the
/// sign-in page.
pub(super) struct Reviewer(Session);

impl FromRequestParts<Arc<Console>> for Reviewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, c: &Arc<Console>) -> Result<Self, Response> {
        c.sessions
            .current(&parts.headers)
            .await
            .map(Reviewer)
            .ok_or_else(|| c.to_sign_in())
    }
}

/// The console's state: settings, templates, sessions.
pub(super) struct Console {
    pub config: ReviewConfig,
    pub env: Environment<'static>,
    pub sessions: Sessions,
}

impl Console {
    pub(super) fn new(config: ReviewConfig) -> Self {
        let sessions = Sessions::new(config.database().clone());
        Console {
            config,
            env: render::environment(),
            sessions,
        }
    }

    pub(super) fn base(&self) -> &str {
        &self.config.mount_path
    }

    /// A page with a heading and one paragraph.
    pub(super) fn message(&self, status: StatusCode, title: &str, text: &str) -> Response {
        render::page(
            &self.env,
            status,
            "message.html",
            json!({
                "base": self.base(), "me": null, "notice": null,
                "title": title, "text": text,
            }),
        )
    }

    /// The answer to a POST without the session's CSRF token.
    pub(super) fn csrf_refused(&self) -> Response {
        self.message(
            StatusCode::FORBIDDEN,
            "Form refused",
            "This form did not carry a valid CSRF token, so nothing was done. Reload the \
             page and submit the form again.",
        )
    }

    /// Where a request without a live session is sent.
    fn to_sign_in(&self) -> Response {
        Redirect::to(&format!("{}/sign-in", self.base())).into_response()
    }

    /// `template` for `session`'s reviewer, with the layout's values added to `context`.
    fn render(&self, session: &Session, template: &str, mut context: Value) -> Response {
        let p = &session.principal;
        if let Value::Object(map) = &mut context {
            map.insert("base".into(), json!(self.base()));
            map.insert("csrf".into(), json!(session.csrf));
            map.insert("notice".into(), json!(session.notice));
            map.insert(
                "me".into(),
                json!({
                    "user": p.user_id(),
                    "branch": p.branch_code(),
                    "can_approve": p.has_scope(REVIEW_APPROVE),
                }),
            );
        }
        render::page(&self.env, StatusCode::OK, template, context)
    }

    fn run_href(&self, run_id: &str) -> String {
        format!("{}/runs/{}", self.base(), path_segment(run_id))
    }

    fn store_failed(&self, e: impl std::fmt::Display) -> Response {
        tracing::error!(error = %e, "the review console could not read the database");
        self.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Cannot read the database",
            "The page could not be read from the database; the server log has the detail.",
        )
    }

    fn now(&self) -> String {
        time_text(chrono::Utc::now())
    }
}

/// `GET /`.
pub(super) async fn home(State(c): State<Arc<Console>>) -> Response {
    Redirect::to(&format!("{}/runs", c.base())).into_response()
}

/// Query of the Runs and Drafts pages.
#[derive(Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    page: Option<String>,
}

fn page_number(raw: &Option<String>) -> i64 {
    raw.as_deref()
        .and_then(|p| p.trim().parse::<i64>().ok())
        .filter(|p| *p >= 1 && *p <= 1_000_000)
        .unwrap_or(1)
}

/// `GET /runs?outcome=&page=`.
pub(super) async fn runs(
    State(c): State<Arc<Console>>,
    Query(q): Query<ListQuery>,
    Reviewer(session): Reviewer,
) -> Response {
    let Some(filter) = RunFilter::parse(q.outcome.trim()) else {
        let known: Vec<&str> = RunFilter::ALL.iter().map(|(_, v, _)| *v).collect();
        return c.message(
            StatusCode::BAD_REQUEST,
            "Unknown filter",
            &format!(
                "There is no outcome filter of that name; use one of: {}.",
                known[1..].join(", ")
            ),
        );
    };
    let page = page_number(&q.page);
    let size = c.config.page_size;
    let pool = audit_read_pool(&c).await;
    let branch = session.principal.branch_id();
    let mut lines =
        match sql::runs(&pool, branch, filter, &c.now(), size + 1, (page - 1) * size).await {
            Ok(lines) => lines,
            Err(e) => return c.store_failed(e),
        };
    let has_next = lines.len() as i64 > size;
    lines.truncate(size as usize);
    let outcome = q.outcome.trim();
    let page_href = |n: i64| {
        let mut href = format!("{}/runs?page={n}", c.base());
        if !outcome.is_empty() {
            href.push_str(&format!("&outcome={outcome}"));
        }
        href
    };
    let rows: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({
                "href": c.run_href(&l.run_id), "run_id": l.run_id, "user": l.user_id,
                "branch": l.branch_code, "first": short_time(&l.first_at),
                "last": short_time(&l.last_at), "last_event": l.last_event,
                "calls": l.calls, "denials": l.denials, "failures": l.failures,
                "replays": l.replays, "drafts": l.drafts, "pending": l.pending,
            })
        })
        .collect();
    let filters: Vec<Value> = RunFilter::ALL
        .iter()
        .map(|(f, v, label)| json!({"value": v, "label": label, "selected": *f == filter}))
        .collect();
    c.render(
        &session,
        "runs.html",
        json!({
            "nav": "runs", "rows": rows, "filters": filters, "page": page,
            "prev": (page > 1).then(|| page_href(page - 1)),
            "next": has_next.then(|| page_href(page + 1)),
        }),
    )
}

/// One audit row as the Run page shows it.
#[derive(Serialize)]
struct TrailRow {
    id: i64,
    at: String,
    source: String,
    step: Option<i64>,
    tool: Option<String>,
    arguments: Option<String>,
    outcome: String,
    /// `denied`, `failed` or `decision`: how the row stands out.
    flag: Option<&'static str>,
    message: Option<String>,
    replayed: bool,
    call_id: Option<String>,
    model: Option<String>,
    prompt_version: Option<String>,
    document: Option<String>,
    signature: Option<String>,
}

fn trail_row(r: AuditRecord) -> TrailRow {
    let flag = match r.outcome.as_str() {
        "denied" | crate::agent::APPROVAL_REJECTED => Some("denied"),
        "tool_error" | "failed" | "attempt" => Some("failed"),
        "awaiting_approval" | crate::agent::APPROVAL_GRANTED | "approved" => Some("decision"),
        _ => None,
    };
    TrailRow {
        id: r.id,
        at: short_time(&r.at),
        source: r.source,
        step: r.step,
        tool: r.tool_name,
        arguments: r.arguments.as_deref().map(pretty_json),
        replayed: r.outcome == "replayed",
        outcome: r.outcome,
        flag,
        message: r.message,
        call_id: r.tool_call_id,
        model: r.model,
        prompt_version: r.prompt_version,
        document: r.document.map(|d| format!("{} {}", d.doc_type, d.number)),
        signature: r.action_signature,
    }
}

/// `GET /runs/{run_id}`: the run's audit trail, in order.
pub(super) async fn run(
    State(c): State<Arc<Console>>,
    Path(run_id): Path<String>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let records = match c.config.database().audit_log(Some(&run_id)).await {
        Ok(r) => r,
        Err(e) => return c.store_failed(e),
    };
    let rows: Vec<TrailRow> = records
        .into_iter()
        .filter(|r| r.branch_id == Some(branch))
        .map(trail_row)
        .collect();
    if rows.is_empty() {
        return c.message(
            StatusCode::NOT_FOUND,
            "Run not found",
            &format!("Run {run_id} has no activity in your branch."),
        );
    }
    let approvals = match c.config.queue.for_run(branch, &run_id).await {
        Ok(a) => a,
        Err(e) => return c.store_failed(e),
    };
    let approvals: Vec<Value> = approvals.iter().map(|a| approval_view(&c, a)).collect();
    let models: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r.model.as_deref()).collect();
    c.render(
        &session,
        "run.html",
        json!({
            "nav": "runs", "run_id": run_id, "rows": rows, "approvals": approvals,
            "models": models.into_iter().collect::<Vec<_>>(),
        }),
    )
}

/// `GET /drafts?page=`.
pub(super) async fn drafts(
    State(c): State<Arc<Console>>,
    Query(q): Query<ListQuery>,
    Reviewer(session): Reviewer,
) -> Response {
    let page = page_number(&q.page);
    let size = c.config.page_size;
    let pool = audit_read_pool(&c).await;
    let branch = session.principal.branch_id();
    let mut lines = match sql::drafts(&pool, branch, size + 1, (page - 1) * size).await {
        Ok(lines) => lines,
        Err(e) => return c.store_failed(e),
    };
    let has_next = lines.len() as i64 > size;
    lines.truncate(size as usize);
    let rows: Vec<Value> = lines
        .iter()
        .map(|d| {
            json!({
                "number": d.document_number, "type": d.document_type.replace('_', " "),
                "id": d.document_id, "tool": d.tool, "user": d.user_id,
                "at": short_time(&d.at), "run_id": d.run_id, "href": c.run_href(&d.run_id),
            })
        })
        .collect();
    let page_href = |n: i64| format!("{}/drafts?page={n}", c.base());
    c.render(
        &session,
        "drafts.html",
        json!({
            "nav": "drafts", "rows": rows, "page": page,
            "prev": (page > 1).then(|| page_href(page - 1)),
            "next": has_next.then(|| page_href(page + 1)),
        }),
    )
}

fn approval_view(c: &Console, a: &StoredApproval) -> Value {
    json!({
        "id": a.id, "tool": a.tool, "run_id": a.run_id, "href": c.run_href(&a.run_id),
        "call_id": a.call_id,
        "arguments": serde_json::to_string_pretty(&a.arguments).unwrap_or_default(),
        "signature": a.signature, "reason": a.reason, "limits": a.limits, "user": a.user_id,
        "branch": a.branch_code, "status": a.status.as_str(),
        "created": short_time(&a.created_at), "expires": short_time(&a.expires_at),
        "decided_by": a.decided_by, "decided_at": a.decided_at.as_deref().map(short_time),
        "note": a.note, "resumed_at": a.resumed_at.as_deref().map(short_time),
        "resume_count": a.resume_count, "resume_status": a.resume_status,
        "approve_href": format!("{}/approvals/{}/approve", c.base(), a.id),
        "reject_href": format!("{}/approvals/{}/reject", c.base(), a.id),
    })
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
        (Err(e), _) | (_, Err(e)) => return c.store_failed(e),
    };
    let me = session.principal.user_id();
    let pending: Vec<Value> = pending
        .iter()
        .map(|a| {
            let mut v = approval_view(&c, a);
            v["own"] = json!(a.user_id == me);
            v
        })
        .collect();
    let decided: Vec<Value> = decided.iter().map(|a| approval_view(&c, a)).collect();
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
        return c.to_sign_in();
    };
    if !same_secret(&session.csrf, form.csrf.trim()) {
        return c.csrf_refused();
    }
    let reviewer = &session.principal;
    if !reviewer.has_scope(REVIEW_APPROVE) {
        return c.message(
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
            let mut text = e.to_string();
            if let Some(first) = text.get(..1) {
                text = format!("{}{}.", first.to_uppercase(), &text[1..]);
            }
            return c.message(status, title, &text);
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
    c.sessions.notify(&headers, notice).await;
    Redirect::to(&c.run_href(&decided.run_id)).into_response()
}

/// The read pool, after the audit writer committed what it holds, so every call that has
/// returned shows with its final outcome.
async fn audit_read_pool(c: &Console) -> sqlx::AnyPool {
    if let Err(e) = c.config.database().flush_audit().await {
        tracing::warn!(error = %e, "review console: the audit log could not be flushed");
    }
    c.config.database().read_db().pool().clone()
}
