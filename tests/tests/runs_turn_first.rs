//! A logged run's turn is in the run log before its call runs, although the loop writes
//! it while the step's `started` audit event is written: a read tool that counts its
//! run's stored turns sees its own turn every time, also when the turn's write is held up
//! (another session holds the run's row) long after the audit event was written. On SQLite
//! and (with `ERP_TOOLS_PG_URL`) PostgreSQL.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use erp_tools_core::agent::{
    Agent, Message, Model, ModelAction, ModelError, Policy, RunLog, RunRequest, ScriptedModel,
    TokenUsage, ToolSpec,
};
use erp_tools_core::prelude::*;
use erp_tools_core::{Database, ToolRuntime};
use erp_tools_tests::app;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::MANAGER;
use futures::future::BoxFuture;
use serde_json::json;

/// What the tool saw, per run: the number of its run's turns stored when each call ran.
static SEEN: Mutex<Vec<(String, i64)>> = Mutex::new(Vec::new());

/// Arguments of `inventory_count_turns`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct CountArgs {
    /// Which call of the run this is, e.g. 1
    pub call: i64,
}

/// How many turns of the run the log held.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Counted {
    /// Turns stored when the call ran.
    pub turns: i64,
}

/// Count the turns of the calling run stored in the run log.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn count_turns(
    ctx: &ToolContext,
    db: &ReadDb,
    _args: CountArgs,
) -> Result<Counted, ToolError> {
    let turns: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM erp_run_turns WHERE agent_run_id = $1")
            .bind(ctx.agent_run_id().to_string())
            .fetch_one(db.pool())
            .await
            .map_err(ToolError::internal)?;
    SEEN.lock()
        .unwrap()
        .push((ctx.agent_run_id().to_string(), turns));
    Ok(Counted { turns })
}

/// A scripted model that, before giving its second answer, has another session hold the
/// run's row for `hold`: the write of that turn waits for it, the step's audit event does
/// not.
struct HoldingModel {
    inner: ScriptedModel,
    other: Database,
    run_id: String,
    hold: Duration,
    asked: usize,
}

impl Model for HoldingModel {
    fn next<'a>(
        &'a mut self,
        history: &'a [Message],
        tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelAction, ModelError>> {
        self.asked += 1;
        Box::pin(async move {
            if self.asked == 2 {
                // A write transaction on the run's row: SQLite's write lock, PostgreSQL's
                // row lock; rolled back after `hold`.
                let mut tx = self.other.pool().begin().await.expect("a transaction");
                sqlx::query(
                    "UPDATE erp_run_log SET updated_at = updated_at WHERE agent_run_id = $1",
                )
                .bind(self.run_id.clone())
                .execute(&mut *tx)
                .await
                .expect("the run's row held");
                let hold = self.hold;
                tokio::spawn(async move {
                    tokio::time::sleep(hold).await;
                    let _ = tx.rollback().await;
                });
            }
            self.inner.next(history, tools).await
        })
    }

    fn take_usage(&mut self) -> TokenUsage {
        self.inner.take_usage()
    }

    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }
}

/// Each of five calls finds the turn that asked for it (and every earlier one) stored,
/// the second one although its turn's write waited 300 ms for another session.
async fn every_call_finds_its_turn_stored(t: &TestDb) {
    let registry = Arc::new(
        app::namespaces()
            .tool::<count_turns>()
            .build()
            .expect("a valid registry"),
    );
    let agent = Agent::new(ToolRuntime::new(registry, t.db.clone()), Policy::new())
        .unwrap()
        .run_log(RunLog::new(t.db.clone()));
    let mut script: Vec<ModelAction> = (1..=5)
        .map(|call| ModelAction::tool_call("inventory_count_turns", json!({ "call": call })))
        .collect();
    script.push(ModelAction::answer("counted"));
    let run_id = format!("run-turn-first-{:?}", t.backend()).to_lowercase();
    let mut model = HoldingModel {
        inner: ScriptedModel::new(script),
        other: t.open_again().await,
        run_id: run_id.clone(),
        hold: Duration::from_millis(300),
        asked: 0,
    };
    let out = agent
        .run_with(
            &Arc::new(MANAGER.principal()),
            &mut model,
            RunRequest::new("Count the turns").run_id(run_id.clone()),
        )
        .await;
    assert_eq!(out.status.as_str(), "done", "{:?}", out.status);
    let seen: Vec<i64> = SEEN
        .lock()
        .unwrap()
        .iter()
        .filter(|(run, _)| *run == run_id)
        .map(|(_, turns)| *turns)
        .collect();
    assert_eq!(seen, vec![1, 2, 3, 4, 5], "turns stored when each call ran");
}
on_both_backends!(every_call_finds_its_turn_stored);
