//! Drafts (the documents agents drafted, with vendor, total and status) and a drafted
//! document's own page: header, lines, totals and status as the application's
//! [`DocumentView`](super::DocumentView) shows them, the run that drafted it, and a link
//! to the document in the ERP.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::pages::{Console, ListQuery, Reviewer, page_number};
use super::render::when;
use crate::store::review as sql;

/// `GET /drafts?page=`.
pub(super) async fn drafts(
    State(c): State<Arc<Console>>,
    Query(q): Query<ListQuery>,
    Reviewer(session): Reviewer,
) -> Response {
    let page = page_number(&q.page);
    let size = c.config.page_size;
    let pool = c.read_pool().await;
    let branch = session.principal.branch_id();
    let mut lines = match sql::drafts(&pool, branch, size + 1, (page - 1) * size).await {
        Ok(lines) => lines,
        Err(e) => return c.store_failed(&session, e),
    };
    let has_next = lines.len() as i64 > size;
    lines.truncate(size as usize);
    let mut rows: Vec<Value> = Vec::with_capacity(lines.len());
    for d in &lines {
        let stored = match sql::document(&pool, branch, &d.document_type, &d.document_number).await
        {
            Ok(s) => s,
            Err(e) => return c.store_failed(&session, e),
        };
        let view = c.config.view(&d.document_type);
        let summary = match (view, stored.as_ref().and_then(|s| s.response.as_ref())) {
            (Some(v), Some(doc)) => v.summary(doc),
            _ => json!({"vendor": null, "total": null, "status": null}),
        };
        rows.push(json!({
            "number": d.document_number,
            "type": view.map_or_else(|| d.document_type.replace('_', " "), |v| v.title.clone()),
            "href": c.document_href(&d.document_type, &d.document_number),
            "tool": d.tool, "person": c.person(&d.user_id), "at": when(&d.at),
            "run_id": d.run_id, "run_href": c.run_href(&d.run_id),
            "vendor": summary["vendor"], "total": summary["total"], "status": summary["status"],
        }));
    }
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

/// `GET /documents/{doc_type}/{number}`: a document an agent drafted in the reviewer's
/// branch, as it is now (the view's loader) or as the draft tool returned it.
pub(super) async fn document(
    State(c): State<Arc<Console>>,
    Path((doc_type, number)): Path<(String, String)>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let pool = c.read_pool().await;
    let stored = match sql::document(&pool, branch, &doc_type, &number).await {
        Ok(Some(s)) => s,
        Ok(None) => {
            return c.message(
                Some(&session),
                StatusCode::NOT_FOUND,
                "Document not found",
                &format!(
                    "No agent drafted a {} numbered {number} in your branch.",
                    doc_type.replace('_', " ")
                ),
            );
        }
        Err(e) => return c.store_failed(&session, e),
    };
    let view = c.config.view(&doc_type);
    let (current, live) = match view.and_then(|v| v.loader.clone()) {
        Some(load) => match load(branch, stored.document_id.clone(), number.clone()).await {
            Ok(Some(doc)) => (Some(doc), true),
            Ok(None) => (None, true),
            Err(e) => {
                tracing::warn!(error = %e, "review console: the document could not be loaded");
                (stored.response.clone(), false)
            }
        },
        None => (stored.response.clone(), false),
    };
    let rendered = match (view, &current) {
        (Some(v), Some(doc)) => Some(v.render(doc)),
        _ => None,
    };
    c.render(
        &session,
        "document.html",
        json!({
            "nav": "drafts",
            "title": view.map_or_else(|| doc_type.replace('_', " "), |v| v.title.clone()),
            "number": number, "doc": rendered, "live": live, "gone": live && current.is_none(),
            "json": current.as_ref().and_then(|d| serde_json::to_string_pretty(d).ok()),
            "erp_href": view.and_then(|v| v.erp_href(&stored.document_id, &number)),
            "run_id": stored.run_id, "run_href": c.run_href(&stored.run_id),
            "tool": c.tool(&stored.tool), "person": c.person(&stored.user_id),
            "at": when(&stored.created_at),
        }),
    )
}
