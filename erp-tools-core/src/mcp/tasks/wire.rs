//! A stored task as the protocol shows it: `DetailedTask` for `tasks/get`, and the
//! JSON-RPC error object of a failed task.

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, InputRequests, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::{Value, json};

use crate::store::tasks::{self as store, TaskRow};
use crate::text;

/// How often clients are asked to poll `tasks/get`, in milliseconds.
pub(super) const POLL_INTERVAL_MS: u64 = 500;

/// The `DetailedTask` of `row`: status, times, TTL, the poll interval, the latest progress
/// (or, once it ended, whether it was taken over) and the status's payload (questions,
/// result or error).
pub(super) fn detailed(row: &TaskRow, poll_interval_ms: u64) -> Result<DetailedTask, ErrorData> {
    let status = status_of(&row.status)?;
    let mut task = Task::new(
        row.id.clone(),
        status,
        row.created_at.clone(),
        row.updated_at.clone(),
    );
    task.ttl_ms = u64::try_from(row.ttl_ms).ok();
    if !status.is_terminal() {
        task.poll_interval_ms = Some(poll_interval_ms);
    }
    if let Some(message) = &row.status_message {
        task.status_message = Some(message.clone());
    } else if let (Some(by), Some(at)) = (&row.taken_over_by, &row.taken_over_at) {
        // An ended task that was taken over says so.
        task.status_message = Some(text::tasks::was_taken_over(by, at, row.takeovers));
    }
    let payload = match status {
        TaskStatus::InputRequired => TaskPayload::InputRequired {
            input_requests: parse::<InputRequests>(row.input_requests.as_deref())?,
        },
        TaskStatus::Completed => TaskPayload::Completed {
            result: parse::<JsonObject>(row.result.as_deref())?,
        },
        TaskStatus::Failed => TaskPayload::Failed {
            error: parse::<JsonObject>(row.error.as_deref())?,
        },
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        _ => TaskPayload::Working,
    };
    Ok(DetailedTask::new(task, payload))
}

/// The JSON text of a JSON-RPC error object with `code` and `message`.
pub(super) fn error_object(code: i32, message: &str) -> String {
    json!({ "code": code, "message": message }).to_string()
}

fn status_of(status: &str) -> Result<TaskStatus, ErrorData> {
    Ok(match status {
        store::WORKING => TaskStatus::Working,
        store::INPUT_REQUIRED => TaskStatus::InputRequired,
        store::COMPLETED => TaskStatus::Completed,
        store::FAILED => TaskStatus::Failed,
        store::CANCELLED => TaskStatus::Cancelled,
        other => return Err(corrupt(format!("unknown status `{other}`"))),
    })
}

fn parse<T: serde::de::DeserializeOwned>(text: Option<&str>) -> Result<T, ErrorData> {
    let value: Value = match text {
        Some(text) => serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?,
        None => return Err(corrupt("a payload is missing".into())),
    };
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}

fn corrupt(detail: String) -> ErrorData {
    tracing::error!(%detail, "a stored task could not be read");
    ErrorData::internal_error(text::tasks::tasks_unavailable(detail), None)
}
