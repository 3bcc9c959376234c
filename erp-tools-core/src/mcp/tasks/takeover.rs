//! Taking over the tasks of a replica that stopped: a task left `working` by a replica
//! whose lease expired (killed, lost) or that released it (a drain out of time) is taken
//! by a live replica, which runs its call again from the stored arguments and answers,
//! as the principal who started it, and records the take-over on the row (by which
//! replica, when, how many times) and in the audit log (`task_taken_over`).
//!
//! Running again is exactly-once where it matters: a read has nothing to repeat, and a
//! draft's `client_ref` is in the stored arguments, so a draft the stopped replica had
//! committed is returned as it was (a replay), never written twice. A tool declared not
//! safe to repeat (`rerun = false`, [`ToolRegistryBuilder::no_rerun`](crate::ToolRegistryBuilder::no_rerun)),
//! a tool this replica does not serve, or a task without its stored principal is failed
//! instead, saying why.
//!
//! Two ways in, bounded by the lease: every replica's sweep ([`sweep`], run by
//! [`router`](crate::mcp::router) every few seconds; it leaves a task of a tool it does
//! not serve to a replica that does) and the next `tasks/get` of the task on any replica.
//! Of two replicas taking one task, one wins (a conditional `UPDATE` on the holder they
//! both saw).

use std::sync::Arc;

use serde_json::Value;

use super::board::TaskBoard;
use super::notify::Notifier;
use super::worker::{self, Job, audit_run};
use super::{identity, wire};
use crate::audit::AuditEntry;
use crate::runtime::ToolRuntime;
use crate::store::StoreError;
use crate::store::tasks::{self as store, TaskRow};
use crate::text;
use crate::tool::input::InputAnswers;

/// What became of a stopped replica's task.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Orphan {
    /// This replica took it over and runs it again.
    TakenOver,
    /// It was failed, with the reason.
    Failed,
    /// Another replica took it, or it ended meanwhile, or this replica is draining.
    Left,
}

/// Takes over (or fails) every task of a stopped replica; returns how many were taken
/// over. Run by [`run_sweeps`] and by tests.
pub(crate) async fn sweep(runtime: &ToolRuntime, board: &TaskBoard) -> Result<usize, StoreError> {
    let db = runtime.database();
    let working = store::working(db.pool()).await?;
    if working.is_empty() || board.draining() {
        return Ok(0);
    }
    let live = store::live_replicas(db.pool(), db.replica_id()).await?;
    let mut taken = 0;
    for (id, holder) in working {
        let stopped = match holder {
            None => String::new(),
            Some(replica) if !live.contains(&replica) => replica,
            Some(_) => continue,
        };
        let Some(row) = store::get(db.pool(), &id).await? else {
            continue;
        };
        if runtime.registry().get(&row.tool_name).is_none() {
            // Left to a replica that serves its tool (or failed by the next tasks/get).
            continue;
        }
        if take_over(runtime, board, &row, &stopped).await? == Orphan::TakenOver {
            taken += 1;
        }
    }
    Ok(taken)
}

/// Sweeps every [`TaskBoard::sweep_every`] until the board drains.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(super) async fn run_sweeps(runtime: ToolRuntime, board: TaskBoard) {
    loop {
        tokio::time::sleep(board.sweep_every()).await;
        if board.draining() {
            return;
        }
        if let Err(e) = sweep(&runtime, &board).await {
            tracing::warn!(error = %e, "the sweep for stopped replicas' tasks failed");
        }
    }
}

/// Takes over task `row`, left `working` by the replica `stopped` (`""`: released), or
/// fails it when its call cannot run again here.
pub(super) async fn take_over(
    runtime: &ToolRuntime,
    board: &TaskBoard,
    row: &TaskRow,
    stopped: &str,
) -> Result<Orphan, StoreError> {
    if board.draining() {
        return Ok(Orphan::Left);
    }
    let db = runtime.database();
    let me = db.replica_id();
    let tool = runtime.registry().get(&row.tool_name);
    let principal = identity::load(row.principal.as_deref(), &row.user_id, row.branch_id);
    let why_not = match (tool, &principal) {
        (None, _) => Some(text::tasks::not_served(&row.tool_name)),
        (Some(t), _) if !t.task_rerun() => Some(text::tasks::not_rerun(&row.tool_name)),
        (_, None) => Some(text::tasks::IDENTITY_NOT_KEPT.to_string()),
        _ => None,
    };
    let (Some(principal), None) = (principal, &why_not) else {
        let why = text::tasks::task_orphaned(stopped, why_not.as_deref().unwrap_or_default());
        let error = wire::error_object(rmcp::model::ErrorCode::INTERNAL_ERROR.0, &why);
        if !store::fail_orphan(db.pool(), &row.id, stopped, &error).await? {
            return Ok(Orphan::Left);
        }
        tracing::warn!(task = %row.id, replica = stopped, "a stopped replica's task was failed");
        record(runtime, row, "task_failed", why).await;
        return Ok(Orphan::Failed);
    };
    let message = text::tasks::task_taken_over(stopped, me, principal.user_id());
    if !store::take_over(db.pool(), &row.id, stopped, me, &message).await? {
        return Ok(Orphan::Left);
    }
    tracing::info!(task = %row.id, from = stopped, "a stopped replica's task was taken over");
    record(runtime, row, "task_taken_over", message).await;
    let answers: InputAnswers = serde_json::from_str(&row.answers).unwrap_or_default();
    worker::spawn(Job {
        runtime: runtime.clone(),
        board: board.clone(),
        notifier: Notifier::none(),
        principal: Arc::new(principal),
        task_id: row.id.clone(),
        run: row.agent_run_id.clone(),
        tool: row.tool_name.clone(),
        arguments: serde_json::from_str(&row.arguments).unwrap_or(Value::Null),
        answers,
        refusal: None,
    });
    Ok(Orphan::TakenOver)
}

/// Writes the audit row `event` about task `row`, as its owner.
async fn record(runtime: &ToolRuntime, row: &TaskRow, event: &str, message: String) {
    let owner = identity::load(row.principal.as_deref(), &row.user_id, row.branch_id)
        .unwrap_or_else(|| {
            crate::Principal::builder(row.user_id.clone(), row.branch_id, String::new()).build()
        });
    let entry = AuditEntry::new(&owner, audit_run(&owner, &row.agent_run_id), event)
        .tool(row.tool_name.clone(), row.id.clone())
        .message(message);
    if let Err(e) = runtime.database().record_task_event(entry).await {
        tracing::error!(task = %row.id, error = %e, "the task's audit row was not written");
    }
}
