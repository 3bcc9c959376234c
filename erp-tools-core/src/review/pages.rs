//! The console's state and its shared page helpers, the Runs page and the 404 page. The
//! Run page is in `story.rs`, Drafts and document pages in `documents.rs`, Approvals and
//! the decisions in `approvals.rs`.

use std::sync::Arc;

use axum::extract::{FromRequestParts, OriginalUri, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use minijinja::Environment;
use serde::Deserialize;
use serde_json::{Value, json};

use super::config::{REVIEW_APPROVE, ReviewConfig};
use super::render::{self, path_segment, short_surface, when};
use super::session::{Session, Sessions};
use crate::audit::time_text;
use crate::store::review::{self as sql, RunFilter, RunSearch};

/// The mark a stored notice starts with when it reports that nothing was done.
pub(super) const NEUTRAL_NOTICE: &str = "\u{1}neutral\u{1}";

/// The session of a request's reviewer; a request without a live session is sent to the
/// sign-in page, which returns to the page asked for.
pub(super) struct Reviewer(pub Session);

impl FromRequestParts<Arc<Console>> for Reviewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, c: &Arc<Console>) -> Result<Self, Response> {
        if let Some(s) = c.sessions.current(&parts.headers).await {
            return Ok(Reviewer(s));
        }
        let asked = parts
            .extensions
            .get::<OriginalUri>()
            .map(|u| u.0.clone())
            .unwrap_or_else(|| parts.uri.clone());
        let next = asked
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        Err(c.to_sign_in(Some(&next)))
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

    /// A page with a heading and one paragraph; with the navigation and the reviewer's
    /// name when `session` is a signed-in reviewer's.
    pub(super) fn message(
        &self,
        session: Option<&Session>,
        status: StatusCode,
        title: &str,
        text: &str,
    ) -> Response {
        let context = json!({ "title": title, "text": text, "nav": "" });
        match session {
            Some(s) => self.render_status(s, status, "message.html", context),
            None => render::page(
                &self.env,
                status,
                "message.html",
                json!({
                    "base": self.base(), "me": null, "notice": null, "nav": "",
                    "title": title, "text": text,
                }),
            ),
        }
    }

    /// The answer to a POST without the session's CSRF token.
    pub(super) fn csrf_refused(&self, session: Option<&Session>) -> Response {
        self.message(
            session,
            StatusCode::FORBIDDEN,
            "Form refused",
            "This form did not carry a valid CSRF token, so nothing was done. Reload the \
             page and submit the form again.",
        )
    }

    /// Where a request without a live session is sent; `next` is the console page to
    /// return to after signing in.
    pub(super) fn to_sign_in(&self, next: Option<&str>) -> Response {
        let mut href = format!("{}/sign-in", self.base());
        if let Some(next) = next.and_then(|n| self.local_path(n)) {
            href.push_str("?next=");
            href.push_str(&path_segment(&next));
        }
        Redirect::to(&href).into_response()
    }

    /// `path` if it is a page of this console (never another site or another app).
    pub(super) fn local_path(&self, path: &str) -> Option<String> {
        let rest = path.strip_prefix(self.base())?;
        let ok = rest.starts_with('/')
            && !rest.starts_with("//")
            && !rest.contains('\\')
            && !rest.starts_with("/sign-")
            && path.chars().all(|c| c.is_ascii_graphic());
        ok.then(|| path.to_string())
    }

    /// `template` for `session`'s reviewer, with the layout's values added to `context`.
    pub(super) fn render(&self, session: &Session, template: &str, context: Value) -> Response {
        self.render_status(session, StatusCode::OK, template, context)
    }

    fn render_status(
        &self,
        session: &Session,
        status: StatusCode,
        template: &str,
        mut context: Value,
    ) -> Response {
        let p = &session.principal;
        if let Value::Object(map) = &mut context {
            map.insert("base".into(), json!(self.base()));
            map.insert("csrf".into(), json!(session.csrf));
            // A notice that reports nothing done (the run paused again) is kept with a
            // leading mark and shown in a neutral colour, not the green of success.
            let (notice, neutral) = match session.notice.as_deref() {
                Some(n) => match n.strip_prefix(NEUTRAL_NOTICE) {
                    Some(rest) => (Some(rest), true),
                    None => (Some(n), false),
                },
                None => (None, false),
            };
            map.insert("notice".into(), json!(notice));
            map.insert("notice_neutral".into(), json!(neutral));
            map.insert(
                "me".into(),
                json!({
                    "user": self.person(p.user_id()),
                    "branch": p.branch_code(),
                    "can_approve": p.has_scope(REVIEW_APPROVE),
                }),
            );
        }
        render::page(&self.env, status, template, context)
    }

    /// A person as the templates show them: name (when the application names people)
    /// and id.
    pub(super) fn person(&self, user: &str) -> Value {
        json!({ "id": user, "name": self.config.name_of(user).unwrap_or_else(|| format!("user {user}")) })
    }

    /// A tool as the templates show it: its title (when the application named the
    /// titles) and its name.
    pub(super) fn tool(&self, name: &str) -> Value {
        json!({ "name": name, "title": self.config.title_of(name).unwrap_or(name) })
    }

    /// A message the framework wrote naming a person by id (`approved by 21`, `rejected
    /// by 21: why`), with the person named instead.
    pub(super) fn named_message(&self, message: &str) -> String {
        for lead in ["approved by ", "rejected by "] {
            if let Some(rest) = message.strip_prefix(lead) {
                let end = rest.find([':', ' ', ';']).unwrap_or(rest.len());
                let (id, tail) = rest.split_at(end);
                if let Some(name) = self.config.name_of(id) {
                    return format!("{lead}{name}{tail}");
                }
            }
        }
        message.to_string()
    }

    /// The name of a run whose first tool is `first_tool`, the same on every page.
    pub(super) fn run_name(&self, first_tool: &str) -> String {
        self.config
            .title_of(first_tool)
            .unwrap_or(first_tool)
            .to_string()
    }

    pub(super) fn run_href(&self, run_id: &str) -> String {
        format!("{}/runs/{}", self.base(), path_segment(run_id))
    }

    pub(super) fn document_href(&self, doc_type: &str, number: &str) -> String {
        format!(
            "{}/documents/{}/{}",
            self.base(),
            path_segment(doc_type),
            path_segment(number)
        )
    }

    pub(super) fn store_failed(&self, session: &Session, e: impl std::fmt::Display) -> Response {
        tracing::error!(error = %e, "the review console could not read the database");
        self.message(
            Some(session),
            StatusCode::INTERNAL_SERVER_ERROR,
            "Cannot read the database",
            "The page could not be read from the database; the server log has the detail.",
        )
    }

    pub(super) fn now(&self) -> String {
        time_text(chrono::Utc::now())
    }

    /// The read pool, after the audit writer committed what it holds, so every call that
    /// has returned shows with its final outcome.
    pub(super) async fn read_pool(&self) -> sqlx::AnyPool {
        if let Err(e) = self.config.database().flush_audit().await {
            tracing::warn!(error = %e, "review console: the audit log could not be flushed");
        }
        self.config.database().read_db().pool().clone()
    }
}

/// `GET /`.
pub(super) async fn home(State(c): State<Arc<Console>>) -> Response {
    Redirect::to(&format!("{}/runs", c.base())).into_response()
}

/// Any other path: a 404 page, with the navigation for a signed-in reviewer.
pub(super) async fn not_found(State(c): State<Arc<Console>>, headers: HeaderMap) -> Response {
    let session = c.sessions.current(&headers).await;
    c.message(
        session.as_ref(),
        StatusCode::NOT_FOUND,
        "Page not found",
        "The console has no page at this address. Use the navigation to find runs, drafts \
         and approvals, or search the runs.",
    )
}

/// Query of the Runs and Drafts pages.
#[derive(Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    pub page: Option<String>,
}

pub(super) fn page_number(raw: &Option<String>) -> i64 {
    raw.as_deref()
        .and_then(|p| p.trim().parse::<i64>().ok())
        .filter(|p| *p >= 1 && *p <= 1_000_000)
        .unwrap_or(1)
}

/// `GET /runs?outcome=&q=&page=`: runs that need attention first (waiting approvals,
/// denials, failures), then the latest activity.
pub(super) async fn runs(
    State(c): State<Arc<Console>>,
    Query(q): Query<ListQuery>,
    Reviewer(session): Reviewer,
) -> Response {
    let Some(filter) = RunFilter::parse(q.outcome.trim()) else {
        let known: Vec<&str> = RunFilter::ALL.iter().map(|(_, v, _)| *v).collect();
        return c.message(
            Some(&session),
            StatusCode::BAD_REQUEST,
            "Unknown filter",
            &format!(
                "There is no outcome filter of that name; use one of: {}.",
                known[1..].join(", ")
            ),
        );
    };
    let query: String = q.q.trim().chars().take(100).collect();
    let page = page_number(&q.page);
    let size = c.config.page_size;
    let pool = c.read_pool().await;
    let branch = session.principal.branch_id();
    let mut search = RunSearch::new(&query);
    if !query.is_empty() && c.config.people.is_some() {
        // People by name: the branch's people whose name contains the words typed.
        match sql::people(&pool, branch).await {
            Ok(ids) => {
                let needle = query.to_lowercase();
                search.users = ids
                    .into_iter()
                    .filter(|id| {
                        c.config
                            .name_of(id)
                            .is_some_and(|n| n.to_lowercase().contains(&needle))
                    })
                    .take(20)
                    .collect();
            }
            Err(e) => return c.store_failed(&session, e),
        }
    }
    if !query.is_empty() {
        let needle = query.to_lowercase();
        search.tools = c
            .config
            .titles
            .iter()
            .filter(|(_, title)| title.to_lowercase().contains(&needle))
            .map(|(name, _)| name.clone())
            .take(20)
            .collect();
    }
    let lines = sql::runs(
        &pool,
        branch,
        filter,
        &search,
        &c.now(),
        size + 1,
        (page - 1) * size,
    )
    .await;
    let mut lines = match lines {
        Ok(lines) => lines,
        Err(e) => return c.store_failed(&session, e),
    };
    let has_next = lines.len() as i64 > size;
    lines.truncate(size as usize);
    let outcome = q.outcome.trim();
    let page_href = |n: i64| {
        let mut href = format!("{}/runs?page={n}", c.base());
        if !outcome.is_empty() {
            href.push_str(&format!("&outcome={outcome}"));
        }
        if !query.is_empty() {
            href.push_str(&format!("&q={}", path_segment(&query)));
        }
        href
    };
    let rows: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({
                "href": c.run_href(&l.run_id), "run_id": l.run_id,
                "title": l.first_tool.as_deref().map_or_else(|| "run".into(), |t| c.run_name(t)),
                "tool": l.first_tool,
                "person": c.person(&l.user_id), "branch": l.branch_code,
                "first": when(&l.first_at), "last": when(&l.last_at),
                "last_event": l.last_event.replace('_', " "),
                "calls": l.calls, "denials": l.denials, "failures": l.failures,
                "replays": l.replays, "drafts": l.drafts, "pending": l.pending,
                "attention": l.pending > 0 || l.denials > 0 || l.failures > 0,
                "surface": l.surface.as_deref().map(short_surface),
                "surface_title": l.surface,
                "surface_changed_in_run": l.surface_changed,
                "surface_changed_since": l.previous_surface.as_deref()
                    .filter(|previous| l.first_surface.as_deref().is_some_and(|first| first != *previous))
                    .map(short_surface),
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
            "nav": "runs", "rows": rows, "filters": filters, "page": page, "q": query,
            "prev": (page > 1).then(|| page_href(page - 1)),
            "next": has_next.then(|| page_href(page + 1)),
        }),
    )
}
