//! Cutting a run off at a chosen point, as a dying process would: a model that stops
//! answering at one turn, an audit sink that stops at one event. The task driving the
//! run is then aborted (its future dropped) and its database closed (its replica lease
//! released), which leaves the database as a killed process leaves it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use erp_tools_core::agent::{
    AgentEvent, AgentEventKind, AuditError, AuditSink, Message, Model, ModelAction, ModelError,
    ScriptedModel, TokenUsage, ToolSpec,
};
use erp_tools_core::{Database, Principal};
use futures::future::BoxFuture;
use tokio::sync::Notify;

/// A scripted model that never answers its `hang_at`-th request (counting from 1) and
/// counts the turns it answered.
pub struct HangingModel {
    inner: ScriptedModel,
    hang_at: usize,
    asked: usize,
    answered: Arc<AtomicUsize>,
    reached: Arc<Notify>,
}

impl HangingModel {
    /// `inner`'s answers, hanging at request `hang_at` (0: never).
    pub fn new(inner: ScriptedModel, hang_at: usize) -> Self {
        HangingModel {
            inner,
            hang_at,
            asked: 0,
            answered: Arc::default(),
            reached: Arc::default(),
        }
    }

    /// The turns answered so far (shared: readable after the model moved into a task).
    pub fn answered(&self) -> Arc<AtomicUsize> {
        self.answered.clone()
    }

    /// Notified when the hanging request is reached.
    pub fn reached(&self) -> Arc<Notify> {
        self.reached.clone()
    }
}

impl Model for HangingModel {
    fn next<'a>(
        &'a mut self,
        history: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelAction, ModelError>> {
        self.asked += 1;
        if self.asked == self.hang_at {
            self.reached.notify_one();
            return Box::pin(futures::future::pending());
        }
        Box::pin(async move {
            let action = self.inner.next(history, tools).await;
            self.answered.fetch_add(1, Ordering::SeqCst);
            action
        })
    }

    fn take_usage(&mut self) -> TokenUsage {
        self.inner.take_usage()
    }

    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }
}

/// An audit sink that never returns from event `kind` of step `step`, once that step's
/// turn is stored in `db`'s run log: the run stops there, after the turn was stored and
/// before its call runs (for `Started`). The loop writes a turn while it records the step's
/// first event, so the sink waits for the turn's row before it hangs.
pub struct HangingSink {
    db: Database,
    kind: AgentEventKind,
    step: u32,
    reached: Arc<Notify>,
}

impl HangingSink {
    /// Hangs at `kind` of `step`, the run being logged in `db`.
    pub fn new(db: &Database, kind: AgentEventKind, step: u32) -> Self {
        HangingSink {
            db: db.clone(),
            kind,
            step,
            reached: Arc::default(),
        }
    }

    /// Notified when the sink hangs.
    pub fn reached(&self) -> Arc<Notify> {
        self.reached.clone()
    }
}

/// Whether turn `step` of `run_id` is in `db`'s run log.
async fn turn_stored(db: &Database, run_id: &str, step: u32) -> bool {
    erp_tools_core::sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM erp_run_turns WHERE agent_run_id = $1 AND step = $2",
    )
    .bind(run_id)
    .bind(i64::from(step))
    .fetch_one(db.pool())
    .await
    .is_ok_and(|n| n == 1)
}

impl AuditSink for HangingSink {
    fn record<'a>(
        &'a self,
        _principal: &'a Principal,
        event: &'a AgentEvent,
    ) -> BoxFuture<'a, Result<(), AuditError>> {
        if event.kind == self.kind && event.step == self.step {
            return Box::pin(async move {
                // Bounded by the test's own timeout on `reached`.
                while !turn_stored(&self.db, &event.run_id, event.step).await {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                self.reached.notify_one();
                futures::future::pending().await
            });
        }
        Box::pin(async { Ok(()) })
    }
}
