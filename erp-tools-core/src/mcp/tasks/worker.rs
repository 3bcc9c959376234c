//! Running a task's call on this replica: through the same pipeline as any call (admission,
//! audit, idempotency), with its progress written to the task row, its cancellation read
//! from it, and its end (result, question, failure) written back.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::board::TaskBoard;
use super::notify::Notifier;
use super::wire;
use crate::audit::{AuditEntry, Outcome};
use crate::mcp::documents;
use crate::mcp::input;
use crate::runtime::{CallError, ToolCall, ToolRuntime};
use crate::store::Database;
use crate::store::tasks as store;
use crate::text;
use crate::tool::attachment::AttachmentSink;
use crate::tool::cancel::CancelFlag;
use crate::tool::context::Principal;
use crate::tool::error::{ToolError, ToolErrorKind};
use crate::tool::input::InputAnswers;
use crate::tool::progress::{ProgressNote, ProgressSink};

/// How often a running task's row is read (cancelled? failed by another replica?) and
/// its latest progress written.
const WATCH: Duration = Duration::from_millis(200);

/// One run of a task's call.
pub(super) struct Job {
    pub runtime: ToolRuntime,
    /// The tasks this replica runs (a drain waits for them).
    pub board: TaskBoard,
    /// Where status changes go (the connection that asked for them).
    pub notifier: Notifier,
    pub principal: Arc<Principal>,
    pub task_id: String,
    /// The run the caller named ('' for none).
    pub run: String,
    pub tool: String,
    pub arguments: Value,
    /// The answers to the task's questions so far.
    pub answers: InputAnswers,
    /// A refusal recorded instead of running (an answer that was declined or not allowed).
    pub refusal: Option<ToolError>,
}

/// Runs `job` in the background; a handler that panics fails the task (never leaves it
/// `working`).
pub(super) fn spawn(job: Job) {
    let db = job.runtime.database().clone();
    let id = job.task_id.clone();
    let run = tokio::spawn(run(job));
    tokio::spawn(async move {
        if let Err(e) = run.await {
            tracing::error!(task = %id, error = %e, "a task's run ended abnormally");
            let error = wire::error_object(
                rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                text::tasks::TASK_SERVER_FAILED,
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
        }
    });
}

async fn run(job: Job) {
    let db = job.runtime.database().clone();
    let replica = db.replica_id().to_string();
    let flag = CancelFlag::new();
    let _on_board = job.board.enter(&job.task_id, flag.clone());
    let notifier = job.notifier.clone();
    notifier.changed(&db, &job.task_id).await;
    let latest: Arc<Mutex<Option<ProgressNote>>> = Arc::default();
    let sink = {
        let latest = latest.clone();
        ProgressSink::new(move |note| {
            *latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
        })
    };
    let (stop, stopped) = oneshot::channel();
    let watcher = tokio::spawn(watch(
        db.clone(),
        job.task_id.clone(),
        flag.clone(),
        latest,
        notifier.clone(),
        stopped,
    ));
    let call = ToolCall {
        agent_run_id: job.run.clone(),
        tool_call_id: job.task_id.clone(),
        name: job.tool.clone(),
        arguments: job.arguments,
    };
    let mut prepared = job.runtime.prepare(&job.principal, call);
    // The run the task is audited under: its kept documents carry it.
    let audited_run = prepared.entry.agent_run_id.clone();
    prepared.progress = Some(sink);
    prepared.cancel = Some(flag);
    let attached = AttachmentSink::new();
    prepared.attachments = Some(attached.clone());
    if let Some(refusal) = job.refusal {
        prepared.refuse(Outcome::ToolError, refusal);
    }
    let outcome = job
        .runtime
        .run_prepared(&job.principal, prepared, job.answers)
        .await;
    let _ = stop.send(());
    let _ = watcher.await;

    let id = job.task_id.as_str();
    let (status, result, error, message) = match outcome {
        Err(e) => {
            let message = match &e {
                CallError::UnknownTool(_, text) => text.clone(),
                CallError::Internal(_) => text::SERVER_FAILED.to_string(),
            };
            let code = match e {
                CallError::UnknownTool(..) => rmcp::model::ErrorCode::INVALID_PARAMS.0,
                CallError::Internal(_) => rmcp::model::ErrorCode::INTERNAL_ERROR.0,
            };
            (
                store::FAILED,
                None,
                Some(wire::error_object(code, &message)),
                message,
            )
        }
        Ok(outcome) => {
            if let Some(question) = outcome.input_request() {
                let requests = serde_json::to_string(&input::input_requests(&question))
                    .unwrap_or_else(|_| "{}".into());
                let asked = serde_json::to_string(&question).unwrap_or_default();
                let waiting = text::tasks::task_waiting(&question.question);
                if let Err(e) =
                    store::ask(db.pool(), id, &replica, &asked, &requests, &waiting).await
                {
                    tracing::error!(task = id, error = %e, "the task's question was not stored");
                }
                notifier.changed(&db, id).await;
                return;
            }
            let internal = outcome
                .error
                .as_ref()
                .is_some_and(|e| e.kind() == ToolErrorKind::Internal);
            if internal {
                let message = text::tasks::TASK_SERVER_FAILED.to_string();
                let error = wire::error_object(rmcp::model::ErrorCode::INTERNAL_ERROR.0, &message);
                (store::FAILED, None, Some(error), message)
            } else {
                let message = outcome.text.clone();
                let docs = attached.take();
                let origin = documents::Origin {
                    principal: &job.principal,
                    tool: &job.tool,
                    run_id: &audited_run,
                    call_id: Some(id),
                };
                let result = documents::result(&db, origin, outcome, docs).await;
                let result = serde_json::to_string(&result).ok();
                (store::COMPLETED, result, None, message)
            }
        }
    };
    let ended = store::finish(
        db.pool(),
        id,
        &replica,
        status,
        result.as_deref(),
        error.as_deref(),
    )
    .await;
    match ended {
        Ok(true) => {
            let event = AuditEntry::new(
                &job.principal,
                audit_run(&job.principal, &job.run),
                format!("task_{status}"),
            )
            .tool(job.tool, id.to_string())
            .message(message);
            if let Err(e) = db.record_task_event(event).await {
                tracing::error!(task = id, error = %e, "the finished task's audit row was not written");
            }
        }
        // Cancelled (or failed by another replica) meanwhile: its end stands.
        Ok(false) => tracing::debug!(task = id, "the task had ended before its call did"),
        Err(e) => tracing::error!(task = id, error = %e, "the task's end was not stored"),
    }
    notifier.changed(&db, id).await;
}

/// Until `stopped`: writes the latest progress to the row and, when the row says the task
/// no longer runs here (cancelled, failed or taken over by another replica, released by
/// a drain, deleted), sets `flag`.
async fn watch(
    db: Database,
    id: String,
    flag: CancelFlag,
    latest: Arc<Mutex<Option<ProgressNote>>>,
    notifier: Notifier,
    mut stopped: oneshot::Receiver<()>,
) {
    let replica = db.replica_id().to_string();
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            _ = tokio::time::sleep(WATCH) => {}
        }
        let note = latest.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(note) = note {
            match store::progress(db.pool(), &id, &replica, &status_message(&note)).await {
                Ok(_) => notifier.changed(&db, &id).await,
                Err(e) => {
                    tracing::warn!(task = %id, error = %e, "the task's progress was not stored")
                }
            }
        }
        match store::holder(db.pool(), &id).await {
            Ok(Some((status, holder)))
                if status == store::WORKING && holder.as_deref() == Some(replica.as_str()) => {}
            Ok(_) => {
                // Cancelled, taken over by another replica, released, or deleted.
                flag.cancel();
                notifier.changed(&db, &id).await;
                return;
            }
            Err(e) => tracing::warn!(task = %id, error = %e, "the task's status could not be read"),
        }
    }
}

/// A progress report as the task's status message: "counting stock in SBY-01 (3/12)".
fn status_message(note: &ProgressNote) -> String {
    let count = match note.total {
        Some(total) => format!("{}/{}", note.done, total),
        None => format!("{}", note.done),
    };
    match &note.message {
        Some(message) => format!("{message} ({count})"),
        None => count,
    }
}

/// The run a task's audit rows are written under: the one the caller named, else the
/// principal's own scope (as the call's own rows).
pub(super) fn audit_run(principal: &Principal, named: &str) -> String {
    match principal.agent_run_id() {
        Some(run) => run.to_string(),
        None if !named.is_empty() => named.to_string(),
        None => crate::principal_run_id(principal),
    }
}
