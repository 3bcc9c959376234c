//! The documents a run's tasks produced (a CSV report, a printable order: the
//! attachments of their results), listed on the Run page and served, each to a reviewer
//! of the task's branch, as a download (`GET /runs/{run_id}/documents/{task_id}/{n}`);
//! and the documents its plain calls attached, kept an hour (`erp_documents`), served
//! alike to a reviewer of the call's branch (`GET /runs/{run_id}/kept/{uri}`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use super::pages::{Console, Reviewer};
use super::render::path_segment;
use super::session::Session;
use crate::audit::AuditRecord;
use crate::store::documents::{self as kept, StoredDocument};
use crate::store::tasks as store;

/// One document of a task's result.
struct Document {
    /// Its URI (`erp://reports/stock-valuation/SBY-01.csv`), or `image N`.
    name: String,
    mime: String,
    bytes: Vec<u8>,
}

/// The documents in a stored `CallToolResult` (JSON text): embedded resources and images.
fn documents(result: &str) -> Vec<Document> {
    let Ok(result) = serde_json::from_str::<Value>(result) else {
        return Vec::new();
    };
    let base64 = base64::engine::general_purpose::STANDARD;
    let content = result["content"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (i, block) in content.iter().enumerate() {
        let (resource, name) = match block["type"].as_str() {
            Some("resource") => (&block["resource"], block["resource"]["uri"].as_str()),
            Some("image") => (block, None),
            _ => continue,
        };
        let mime = resource["mimeType"]
            .as_str()
            .unwrap_or("application/octet-stream");
        let data = resource["blob"].as_str().or(resource["data"].as_str());
        let bytes = match (resource["text"].as_str(), data) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(data)) => base64.decode(data).unwrap_or_default(),
            (None, None) => continue,
        };
        out.push(Document {
            name: name.map_or_else(|| format!("image {}", i + 1), str::to_string),
            mime: mime.to_string(),
            bytes,
        });
    }
    out
}

/// The ids of the tasks the run's rows created.
fn task_ids(records: &[AuditRecord]) -> Vec<&str> {
    records
        .iter()
        .filter(|r| r.outcome == "task_created")
        .filter_map(|r| r.tool_call_id.as_deref())
        .collect()
}

/// The documents the run's completed tasks in `branch` produced, for the Run page: the
/// name, the type, the size and the link of each.
pub(super) async fn of_run(
    c: &Console,
    run_id: &str,
    branch: i64,
    records: &[AuditRecord],
) -> Result<Vec<Value>, crate::StoreError> {
    let pool = c.config.database().pool();
    let mut listed = Vec::new();
    for id in task_ids(records) {
        let Some(task) = store::get(pool, id).await? else {
            continue;
        };
        let Some(result) = task.result.as_deref().filter(|_| task.branch_id == branch) else {
            continue;
        };
        for (n, doc) in documents(result).iter().enumerate() {
            listed.push(json!({
                "name": doc.name, "mime": doc.mime, "bytes": doc.bytes.len(),
                "tool": c.tool(&task.tool_name),
                "href": format!(
                    "{}/runs/{}/documents/{}/{n}",
                    c.base(),
                    path_segment(run_id),
                    path_segment(id)
                ),
            }));
        }
    }
    Ok(listed)
}

/// `GET /runs/{run_id}/documents/{task_id}/{n}`: the `n`th document of a task the run
/// created, as a download, to a reviewer of the task's branch.
pub(super) async fn download(
    State(c): State<Arc<Console>>,
    Path((run_id, task_id, n)): Path<(String, String, usize)>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let records = match run_records(&c, &session, &run_id).await {
        Ok(r) => r,
        Err(failed) => return failed,
    };
    let created_here = records.iter().any(|r| {
        r.branch_id == Some(branch)
            && r.outcome == "task_created"
            && r.tool_call_id.as_deref() == Some(&task_id)
    });
    let task = match store::get(c.config.database().pool(), &task_id).await {
        Ok(task) => task.filter(|t| created_here && t.branch_id == branch),
        Err(e) => return c.store_failed(&session, e),
    };
    let doc = task
        .and_then(|t| t.result)
        .and_then(|result| documents(&result).into_iter().nth(n));
    served(
        &c,
        &session,
        doc,
        "This run produced no such document in your branch, or its task has expired.",
    )
}

/// `doc` as a file to save, named by the last part of its URI; a 404 page saying `gone`
/// without one.
/// The audit rows of run `run_id`, which a download checks the document's call against;
/// the console's error page if the store failed.
async fn run_records(
    c: &Console,
    session: &Session,
    run_id: &str,
) -> Result<Vec<AuditRecord>, Response> {
    c.config
        .database()
        .audit_log(Some(run_id))
        .await
        .map_err(|e| c.store_failed(session, e))
}

fn served(c: &Console, session: &Session, doc: Option<Document>, gone: &str) -> Response {
    let Some(doc) = doc else {
        return c.message(
            Some(session),
            StatusCode::NOT_FOUND,
            "Document not found",
            gone,
        );
    };
    let file = doc
        .name
        .rsplit('/')
        .next()
        .unwrap_or("document")
        .replace('"', "");
    (
        [
            (header::CONTENT_TYPE, doc.mime),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file}\""),
            ),
        ],
        doc.bytes,
    )
        .into_response()
}

/// Whether the run's `records` hold a call `call_id` in `branch`: a kept document of the
/// run is shown only beside the call that attached it.
fn called_here(records: &[AuditRecord], branch: i64, call_id: Option<&str>) -> bool {
    call_id.is_some_and(|id| {
        records
            .iter()
            .any(|r| r.branch_id == Some(branch) && r.tool_call_id.as_deref() == Some(id))
    })
}

/// A kept document as served: its bytes decoded from base64 when it is binary.
fn kept_document(doc: StoredDocument) -> Document {
    let bytes = if doc.is_base64 {
        let base64 = base64::engine::general_purpose::STANDARD;
        base64.decode(doc.body).unwrap_or_default()
    } else {
        doc.body.into_bytes()
    };
    Document {
        name: doc.uri,
        mime: doc.mime_type,
        bytes,
    }
}

/// The documents the run's plain calls in `branch` attached and that are still kept (a
/// task's are listed by [`of_run`]), for the Run page: the name, the type, the size, the
/// tool and the link of each.
pub(super) async fn kept_of_run(
    c: &Console,
    run_id: &str,
    branch: i64,
    records: &[AuditRecord],
) -> Result<Vec<Value>, crate::StoreError> {
    let tasks = task_ids(records);
    let docs = kept::of_run(c.config.database().pool(), run_id, branch).await?;
    let listed = docs
        .into_iter()
        .filter(|d| called_here(records, branch, d.tool_call_id.as_deref()))
        .filter(|d| {
            !d.tool_call_id
                .as_deref()
                .is_some_and(|id| tasks.contains(&id))
        })
        .map(|d| {
            let tool = c.tool(&d.tool_name);
            let href = format!(
                "{}/runs/{}/kept/{}",
                c.base(),
                path_segment(run_id),
                path_segment(&d.uri)
            );
            let doc = kept_document(d);
            json!({
                "name": doc.name, "mime": doc.mime, "bytes": doc.bytes.len(),
                "tool": tool, "href": href,
            })
        })
        .collect();
    Ok(listed)
}

/// `GET /runs/{run_id}/kept/{uri}`: the document `uri` a call of the run attached, while
/// it is kept, as a download, to a reviewer of the call's branch.
pub(super) async fn download_kept(
    State(c): State<Arc<Console>>,
    Path((run_id, uri)): Path<(String, String)>,
    Reviewer(session): Reviewer,
) -> Response {
    let branch = session.principal.branch_id();
    let records = match run_records(&c, &session, &run_id).await {
        Ok(r) => r,
        Err(failed) => return failed,
    };
    let docs = match kept::of_run(c.config.database().pool(), &run_id, branch).await {
        Ok(docs) => docs,
        Err(e) => return c.store_failed(&session, e),
    };
    let doc = docs
        .into_iter()
        .find(|d| d.uri == uri && called_here(&records, branch, d.tool_call_id.as_deref()));
    served(
        &c,
        &session,
        doc.map(kept_document),
        "This run produced no such document in your branch, or it is no longer kept \
         (a call's documents are kept for an hour).",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_documents_are_its_resources_and_images() {
        let result = json!({"content": [
            {"type": "text", "text": "Valued 3 warehouses."},
            {"type": "resource", "resource": {"uri": "erp://r/a.csv", "mimeType": "text/csv", "text": "a,b\n"}},
            {"type": "resource", "resource": {"uri": "erp://r/p.pdf", "mimeType": "application/pdf", "blob": "JVBERg=="}},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
        ]});
        let docs = documents(&result.to_string());
        let names: Vec<&str> = docs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["erp://r/a.csv", "erp://r/p.pdf", "image 4"]);
        assert_eq!(docs[0].bytes, b"a,b\n");
        assert_eq!(docs[1].bytes, b"%PDF");
        assert_eq!(docs[2].mime, "image/png");
        assert!(documents("not json").is_empty());
    }
}
