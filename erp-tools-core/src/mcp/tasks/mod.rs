//! Tool calls run as MCP tasks (SEP-2663, `io.modelcontextprotocol/tasks`), held in the
//! database (`erp_tasks`, see `store/tasks.rs`).
//!
//! `tools/call` of a tool declared with [`TaskSupport`](crate::TaskSupport) inserts the
//! task row, audits it (`task_created`) and answers at once with the task; the call runs
//! on this replica (`worker.rs`) through the same pipeline as any call. `tasks/get`,
//! `tasks/update` and `tasks/cancel` read and change the row, so any replica answers
//! them:
//!
//! - only the principal (user and branch) who started a task sees it; to anyone else it
//!   does not exist (`-32602`, as for an unknown id);
//! - progress the handler reports ([`ToolContext::progress`](crate::ToolContext::progress))
//!   becomes the task's `statusMessage`;
//! - a question ([`ToolError::needs_input`](crate::ToolError::needs_input)) parks the task
//!   as `input_required` with its elicitation request; the answer (`tasks/update`, on any
//!   replica) runs the call again there, with the answer;
//! - `tasks/cancel` marks the task `cancelled` at once; the replica running it sees that
//!   within a poll and sets [`ToolContext::is_cancelled`](crate::ToolContext::is_cancelled);
//! - a task left `working` by a replica whose lease expired (killed, lost) is marked
//!   `failed` with the reason by the next `tasks/get`, on any replica;
//! - a task is deleted once its time to live has passed.

mod wire;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CreateTaskResult, GetTaskResult, InputResponses, Task, TaskStatus};
use serde_json::Value;

use super::input;
use crate::audit::AuditEntry;
use crate::runtime::ToolRuntime;
use crate::store::tasks::{self as store, NewTask, TaskRow};
use crate::text;
use crate::tool::context::Principal;
use crate::tool::input::{InputAnswers, InputRequest};
use worker::{Job, audit_run};

/// How long a task is kept by default, from its creation: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How often clients are asked to poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// A tool call to run as a task.
pub(super) struct TaskCall {
    /// Who calls (checked again on every `tasks/*` request).
    pub principal: Arc<Principal>,
    /// The run the token or the agent host names, if any.
    pub agent_run_id: Option<String>,
    /// The tool.
    pub name: String,
    /// The arguments as the client sent them.
    pub arguments: Value,
}

/// Creates the task of `call` (held for `ttl`) and starts running it on this replica.
pub(super) async fn start(
    runtime: &ToolRuntime,
    ttl: Duration,
    call: TaskCall,
) -> Result<CreateTaskResult, ErrorData> {
    let db = runtime.database();
    let id = new_id();
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    let run = call.agent_run_id.clone().unwrap_or_default();
    let arguments = call.arguments.to_string();
    let created = store::insert(
        db.pool(),
        &NewTask {
            id: &id,
            user_id: call.principal.user_id(),
            branch_id: call.principal.branch_id(),
            agent_run_id: &run,
            tool_name: &call.name,
            arguments: &arguments,
            answers: "{}",
            replica_id: db.replica_id(),
            ttl_ms,
        },
    )
    .await
    .map_err(unavailable)?;
    let event = AuditEntry::new(
        &call.principal,
        audit_run(&call.principal, &run),
        "task_created",
    )
    .tool(call.name.clone(), id.clone())
    .arguments(&call.arguments);
    if let Err(e) = db.record_task_event(event).await {
        // No call runs unaudited: the task ends before it starts.
        let error = wire::error_object(
            rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            &text::audit_unavailable(&e),
        );
        let _ = store::finish(
            db.pool(),
            &id,
            db.replica_id(),
            store::FAILED,
            None,
            Some(&error),
        )
        .await;
        return Err(ErrorData::internal_error(text::audit_unavailable(e), None));
    }
    let mut seed = Task::new(id.clone(), TaskStatus::Working, created.clone(), created)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    seed.ttl_ms = u64::try_from(ttl_ms).ok();
    worker::spawn(Job {
        runtime: runtime.clone(),
        principal: call.principal,
        task_id: id,
        run,
        tool: call.name,
        arguments: call.arguments,
        answers: InputAnswers::new(),
        refusal: None,
    });
    Ok(CreateTaskResult::new(seed))
}

/// `tasks/get`: the task of `principal` named `id`, as it stands. A task left `working`
/// by a dead replica is failed first.
pub(super) async fn get(
    runtime: &ToolRuntime,
    principal: &Principal,
    id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let db = runtime.database();
    let mut row = owned(runtime, principal, id).await?;
    if let Some(dead) = orphaned_by(runtime, &row).await? {
        let error = wire::error_object(
            rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            &text::tasks::task_orphaned(&dead),
        );
        if store::fail_orphan(db.pool(), id, &dead, &error)
            .await
            .map_err(unavailable)?
        {
            tracing::warn!(task = id, replica = %dead, "a dead replica's task was marked failed");
            let event = AuditEntry::new(
                principal,
                audit_run(principal, &row.agent_run_id),
                "task_failed",
            )
            .tool(row.tool_name.clone(), id.to_string())
            .message(text::tasks::task_orphaned(&dead));
            if let Err(e) = db.record_task_event(event).await {
                tracing::error!(error = %e, task = id, "the failed task's audit row was not written");
            }
        }
        row = owned(runtime, principal, id).await?;
    }
    Ok(GetTaskResult::new(wire::detailed(&row, POLL_INTERVAL_MS)?))
}

/// `tasks/update`: answers to the task's question. An acceptable answer (or a refusal,
/// for a declined or disallowed one) runs the call again on this replica; answers to
/// keys the task is not waiting for are ignored.
pub(super) async fn update(
    runtime: &ToolRuntime,
    principal: Arc<Principal>,
    id: &str,
    responses: &InputResponses,
) -> Result<(), ErrorData> {
    let db = runtime.database();
    let row = owned(runtime, &principal, id).await?;
    if row.status != store::INPUT_REQUIRED {
        return Ok(());
    }
    let Some(question) = row
        .question
        .as_deref()
        .and_then(|q| serde_json::from_str::<InputRequest>(q).ok())
    else {
        return Ok(());
    };
    let Some(response) = responses.get(&question.key) else {
        return Ok(());
    };
    let mut answers: InputAnswers = serde_json::from_str(&row.answers).unwrap_or_default();
    let refusal = match input::accepted_answer(&question, response) {
        Some(answer) => {
            answers.insert(question.key.clone(), answer);
            None
        }
        None => Some(text::answer_not_given(
            &question.question,
            &question.choices,
        )),
    };
    let answers_json = serde_json::to_string(&answers).unwrap_or_else(|_| "{}".into());
    if !store::resume(db.pool(), id, db.replica_id(), &answers_json)
        .await
        .map_err(unavailable)?
    {
        // Answered on another request first, or cancelled meanwhile.
        return Ok(());
    }
    worker::spawn(Job {
        runtime: runtime.clone(),
        principal,
        task_id: id.to_string(),
        arguments: serde_json::from_str(&row.arguments).unwrap_or(Value::Null),
        run: row.agent_run_id,
        tool: row.tool_name,
        answers,
        refusal,
    });
    Ok(())
}

/// `tasks/cancel`: the task ends `cancelled` (a task already ended stays as it ended).
pub(super) async fn cancel(
    runtime: &ToolRuntime,
    principal: &Principal,
    id: &str,
) -> Result<(), ErrorData> {
    let db = runtime.database();
    let row = owned(runtime, principal, id).await?;
    if store::cancel(db.pool(), id).await.map_err(unavailable)? {
        let event = AuditEntry::new(
            principal,
            audit_run(principal, &row.agent_run_id),
            "task_cancelled",
        )
        .tool(row.tool_name, id.to_string());
        if let Err(e) = db.record_task_event(event).await {
            tracing::error!(error = %e, task = id, "the cancelled task's audit row was not written");
        }
    }
    Ok(())
}

/// The task `id` if `principal` (user and branch) started it; otherwise, as for an
/// unknown id, `-32602`.
async fn owned(
    runtime: &ToolRuntime,
    principal: &Principal,
    id: &str,
) -> Result<TaskRow, ErrorData> {
    let row = store::get(runtime.database().pool(), id)
        .await
        .map_err(unavailable)?;
    match row {
        Some(row)
            if row.user_id == principal.user_id() && row.branch_id == principal.branch_id() =>
        {
            Ok(row)
        }
        _ => Err(ErrorData::invalid_params(
            text::tasks::task_not_found(id),
            Some(serde_json::json!({ "taskId": id })),
        )),
    }
}

/// The replica a `working` task was left by, if that replica's lease has expired.
async fn orphaned_by(runtime: &ToolRuntime, row: &TaskRow) -> Result<Option<String>, ErrorData> {
    let db = runtime.database();
    let Some(replica) = row.replica_id.as_deref() else {
        return Ok(None);
    };
    if row.status != store::WORKING || replica == db.replica_id() {
        return Ok(None);
    }
    let live = store::replica_live(db.pool(), replica, chrono::Utc::now())
        .await
        .map_err(unavailable)?;
    Ok((!live).then(|| replica.to_string()))
}

/// A new task id: 128 random bits, hex.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    hex::encode(bytes)
}

fn unavailable(e: crate::StoreError) -> ErrorData {
    tracing::error!(error = %e, "the store of tasks failed");
    ErrorData::internal_error(text::tasks::tasks_unavailable(e), None)
}
