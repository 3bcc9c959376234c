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
//! - a task left `working` by a replica whose lease expired (killed, lost), or released by
//!   a draining one, is taken over by a live replica and run again as its owner
//!   (`takeover.rs`), or failed with the reason when its tool may not run again;
//! - a drain lets running tasks finish within its grace, then hands them over
//!   (`board.rs`);
//! - a client that asked for them gets `notifications/tasks` (`notify.rs`);
//! - a task is deleted once its time to live has passed.

mod board;
mod identity;
mod notify;
mod takeover;
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
pub(crate) use board::TaskBoard;
pub(crate) use notify::Notifier;
pub(crate) use takeover::sweep;
use worker::{Job, audit_run};

/// How long a task is kept by default, from its creation: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

use wire::POLL_INTERVAL_MS;

/// How a server keeps tasks: for how long, and the tasks this replica runs.
#[derive(Clone, Debug)]
pub(crate) struct TaskPlace {
    pub ttl: Duration,
    pub board: TaskBoard,
}

impl Default for TaskPlace {
    fn default() -> Self {
        TaskPlace {
            ttl: DEFAULT_TASK_TTL,
            board: TaskBoard::default(),
        }
    }
}

/// Starts the sweep that takes over stopped replicas' tasks on this replica, if the
/// registry has task tools and a Tokio runtime is running; it ends when `board` drains.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) fn start_sweeps(runtime: &ToolRuntime, board: &TaskBoard) {
    let has_tasks = runtime
        .registry()
        .tools()
        .iter()
        .any(|t| t.task_support().allows_task());
    if let (true, Ok(handle)) = (has_tasks, tokio::runtime::Handle::try_current()) {
        handle.spawn(takeover::run_sweeps(runtime.clone(), board.clone()));
    }
}

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
    /// Where its status changes go.
    pub notifier: Notifier,
}

/// How `tools/call` of `name` may run as a task for `principal`: `None` for an unknown
/// tool, and for a caller without the tool's scopes, who is refused as a plain call is
/// (a denied result at once, audited), never given a task that fails later.
pub(super) fn support_for(
    registry: &crate::ToolRegistry,
    name: &str,
    principal: &crate::Principal,
) -> Option<crate::TaskSupport> {
    let tool = registry.get(name)?;
    tool.allowed_for(principal).then(|| tool.task_support())
}

/// Creates the task of `call` and starts running it on this replica.
pub(super) async fn start(
    runtime: &ToolRuntime,
    place: &TaskPlace,
    call: TaskCall,
) -> Result<CreateTaskResult, ErrorData> {
    if place.board.draining() {
        return Err(ErrorData::internal_error(text::tasks::TASK_DRAINING, None));
    }
    let db = runtime.database();
    let id = new_id();
    let ttl_ms = i64::try_from(place.ttl.as_millis()).unwrap_or(i64::MAX);
    let principal = identity::store(&call.principal);
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
            principal: &principal,
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
        board: place.board.clone(),
        notifier: call.notifier,
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
/// by a stopped replica is taken over first (or failed, when it cannot run again).
pub(super) async fn get(
    runtime: &ToolRuntime,
    place: &TaskPlace,
    principal: &Principal,
    id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let mut row = owned(runtime, principal, id).await?;
    if let Some(stopped) = orphaned_by(runtime, &row).await? {
        takeover::take_over(runtime, &place.board, &row, &stopped)
            .await
            .map_err(unavailable)?;
        row = owned(runtime, principal, id).await?;
    }
    Ok(GetTaskResult::new(wire::detailed(&row, POLL_INTERVAL_MS)?))
}

/// `tasks/update`: answers to the task's question. An acceptable answer (or a refusal,
/// for a declined or disallowed one) runs the call again on this replica; answers to
/// keys the task is not waiting for are ignored.
pub(super) async fn update(
    runtime: &ToolRuntime,
    place: &TaskPlace,
    principal: Arc<Principal>,
    id: &str,
    responses: &InputResponses,
    notifier: Notifier,
) -> Result<(), ErrorData> {
    let db = runtime.database();
    let row = owned(runtime, &principal, id).await?;
    if row.status != store::INPUT_REQUIRED {
        return Ok(());
    }
    if place.board.draining() {
        // Left waiting: the client's next tasks/update reaches a replica that runs it.
        return Err(ErrorData::internal_error(text::tasks::TASK_DRAINING, None));
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
        board: place.board.clone(),
        notifier,
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

/// The replica a `working` task was left by, if that replica has stopped: its lease
/// expired, or it released the task (`""`).
async fn orphaned_by(runtime: &ToolRuntime, row: &TaskRow) -> Result<Option<String>, ErrorData> {
    let db = runtime.database();
    if row.status != store::WORKING {
        return Ok(None);
    }
    let Some(replica) = row.replica_id.as_deref() else {
        return Ok(Some(String::new()));
    };
    if replica == db.replica_id() {
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
