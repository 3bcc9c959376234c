//! A logged run's turn is in the run log before its call runs, although the loop writes
//! it while the step's `started` audit event is written: a read tool that counts its
//! run's stored turns sees its own turn every time, also when the turn's write is held up
//! (another session holds the run's row) long after the audit event was written. On SQLite
//! and (with `ERP_TOOLS_PG_URL`) PostgreSQL.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use erp_tools_core::agent::{Agent, ModelAction, Policy, RunLog, RunRequest, ScriptedModel};
use erp_tools_core::prelude::*;
use erp_tools_core::{Database, ToolRuntime};
use erp_tools_tests::app;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::MANAGER;
use serde_json::json;

/// What the tool saw, per run: the number of its run's turns stored when each call ran.
static SEEN: Mutex<Vec<(String, i64)>> = Mutex::new(Vec::new());

/// Per run, another session on its database, which the run's first call has hold the
/// run's row for a while.
static HOLDERS: Mutex<Vec<(String, Database)>> = Mutex::new(Vec::new());

/// How long the run's row is held after its first call.
const HOLD: Duration = Duration::from_millis(300);

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
    args: CountArgs,
) -> Result<Counted, ToolError> {
    let run_id = ctx.agent_run_id().to_string();
    let turns: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM erp_run_turns WHERE agent_run_id = $1")
            .bind(run_id.clone())
            .fetch_one(db.pool())
            .await
            .map_err(ToolError::internal)?;
    SEEN.lock().unwrap().push((run_id.clone(), turns));
    if args.call == 1 {
        hold_the_run(&run_id).await;
    }
    Ok(Counted { turns })
}

/// Has another session hold `run_id`'s row (SQLite's write lock, PostgreSQL's row lock)
/// for [`HOLD`]: the next turn's write waits for it, the next audit event does not.
async fn hold_the_run(run_id: &str) {
    let other = HOLDERS
        .lock()
        .unwrap()
        .iter()
        .find(|(run, _)| run == run_id)
        .map(|(_, db)| db.clone())
        .expect("the test registered the run's other session");
    let mut tx = other.pool().begin().await.expect("a transaction");
    sqlx::query("UPDATE erp_run_log SET updated_at = updated_at WHERE agent_run_id = $1")
        .bind(run_id.to_string())
        .execute(&mut *tx)
        .await
        .expect("the run's row held");
    tokio::spawn(async move {
        tokio::time::sleep(HOLD).await;
        let _ = tx.rollback().await;
    });
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
    let other = t.open_again().await;
    HOLDERS.lock().unwrap().push((run_id.clone(), other));
    let out = agent
        .run_with(
            &Arc::new(MANAGER.principal()),
            &mut ScriptedModel::new(script),
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
