//! A logged run's start (`Agent::run_log`): a new run's row in the run log is written in
//! the transaction that binds the run to its person, when the log is on the runtime's
//! database, and on its own otherwise. Either way a run of another person is refused
//! before anything of it is logged, a run id used before by its owner is logged, and two
//! processes starting one new run id at once never both drive it. On SQLite and (with
//! `ERP_TOOLS_PG_URL`) PostgreSQL.

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::agent::{
    Agent, AgentEventKind, ModelAction, RunLog, RunRequest, RunStatus, ScriptedModel,
};
use erp_tools_core::{Database, Principal, ToolRuntime};
use erp_tools_tests::agent::{Deployment, order, policy};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::durable::HangingModel;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, MANAGER};
use sqlx::Row;

/// An agent whose runtime is on `db`, keeping its runs in `log`'s run log.
fn logged_agent(db: &Database, log: &Database) -> Agent {
    Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .unwrap()
        .run_log(RunLog::new(log.clone()))
}

fn manager() -> Arc<Principal> {
    Arc::new(MANAGER.principal())
}

/// One order, then the answer.
fn script(client_ref: &str) -> ScriptedModel {
    ScriptedModel::new([
        order(VENDOR, "2", client_ref),
        ModelAction::answer("Ordered 2 boxes."),
    ])
}

async fn run(agent: &Agent, who: &Arc<Principal>, run_id: &str, client_ref: &str) -> RunStatus {
    let request = RunRequest::new("Order 2 boxes").run_id(run_id);
    let mut model = script(client_ref);
    agent.run_with(who, &mut model, request).await.status
}

/// The person and tool surface a run is bound to.
async fn binding(db: &Database, run_id: &str) -> (String, i64, Option<String>) {
    let row = sqlx::query(
        "SELECT user_id, branch_id, surface FROM erp_agent_runs WHERE agent_run_id = $1",
    )
    .bind(run_id)
    .fetch_one(db.pool())
    .await
    .unwrap();
    (row.get("user_id"), row.get("branch_id"), row.get("surface"))
}

/// A new run on the runtime's database: bound to its person with the surface it saw,
/// logged, driven to its answer, and its row counts its turns.
async fn a_new_run_is_bound_and_logged_at_once(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = logged_agent(&t.db, &t.db);
    let status = run(&agent, &manager(), "run-start-new", "start-1").await;
    assert_eq!(status.as_str(), "done", "{status:?}");
    let (user, branch, surface) = binding(&t.db, "run-start-new").await;
    let who = manager();
    assert_eq!((user.as_str(), branch), (who.user_id(), who.branch_id()));
    assert_eq!(
        surface.as_deref(),
        Some(app::registry().fingerprint().as_str())
    );
    let logged = RunLog::new(t.db.clone())
        .get("run-start-new")
        .await
        .unwrap()
        .expect("the run is logged");
    assert_eq!((logged.status.as_str(), logged.steps), ("done", 2));
    assert_eq!(logged.user_id, who.user_id());
    assert_eq!(d.app.purchase_orders().await.len(), 1);
}
on_both_backends!(a_new_run_is_bound_and_logged_at_once);

/// A run id another person used first is refused before the model is asked, with one
/// `denied` event, and nothing of it is logged: the run log keeps no row of a run that
/// is not the caller's, and its owner does not change.
async fn a_run_of_another_person_is_refused_and_not_logged(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let buyer = Arc::new(BUYER.principal());
    t.db.claim_agent_run("run-start-theirs", &buyer)
        .await
        .unwrap();
    // Another handle on the same database: the binding is read from the store, not from
    // what this process remembers.
    let db = t.open_again().await;
    let agent = logged_agent(&db, &db);
    let mut model = script("start-2");
    let request = RunRequest::new("Order 2 boxes").run_id("run-start-theirs");
    let out = agent.run_with(&manager(), &mut model, request).await;
    assert!(
        matches!(&out.status, RunStatus::Aborted { reason } if reason.contains("another person")),
        "{:?}",
        out.status
    );
    assert_eq!(model.calls(), 0, "the model is not asked");
    let denied = out
        .audit
        .iter()
        .filter(|e| e.kind == AgentEventKind::Denied)
        .count();
    assert_eq!(denied, 1);
    let log = RunLog::new(db.clone());
    assert_eq!(log.get("run-start-theirs").await.unwrap(), None);
    let (user, branch, _) = binding(&db, "run-start-theirs").await;
    assert_eq!(
        (user.as_str(), branch),
        (buyer.user_id(), buyer.branch_id())
    );
    assert!(d.app.purchase_orders().await.is_empty());
    db.close().await;
}
on_both_backends!(a_run_of_another_person_is_refused_and_not_logged);

/// A run id its owner used before (a tool call in that run, or this process's memory of
/// it) is logged on its own and runs as a new run would.
async fn a_run_id_used_before_by_its_owner_is_logged(t: &TestDb) {
    Deployment::new(&t.db).await;
    let who = manager();
    // Bound in this process (remembered) and through another handle (only stored).
    t.db.claim_agent_run("run-start-mine", &who).await.unwrap();
    let other = t.open_again().await;
    other
        .claim_agent_run("run-start-stored", &who)
        .await
        .unwrap();
    let agent = logged_agent(&t.db, &t.db);
    for (run_id, client_ref) in [
        ("run-start-mine", "start-3"),
        ("run-start-stored", "start-4"),
    ] {
        let status = run(&agent, &who, run_id, client_ref).await;
        assert_eq!(status.as_str(), "done", "{run_id}: {status:?}");
        let logged = RunLog::new(t.db.clone()).get(run_id).await.unwrap();
        assert_eq!(
            logged.map(|r| (r.status, r.steps)),
            Some(("done".to_string(), 2)),
            "{run_id}"
        );
    }
    other.close().await;
}
on_both_backends!(a_run_id_used_before_by_its_owner_is_logged);

/// A run log kept through another handle than the runtime's (here on the same store)
/// starts its runs on its own; the run is bound and logged all the same.
async fn a_log_on_another_handle_starts_its_runs_itself(t: &TestDb) {
    Deployment::new(&t.db).await;
    let log = t.open_again().await;
    let agent = logged_agent(&t.db, &log);
    let status = run(&agent, &manager(), "run-start-apart", "start-5").await;
    assert_eq!(status.as_str(), "done", "{status:?}");
    let logged = RunLog::new(t.db.clone())
        .get("run-start-apart")
        .await
        .unwrap()
        .expect("the run is logged");
    assert_eq!((logged.status.as_str(), logged.steps), ("done", 2));
    assert_eq!(
        binding(&t.db, "run-start-apart").await.0,
        manager().user_id()
    );
    log.close().await;
}
on_both_backends!(a_log_on_another_handle_starts_its_runs_itself);

/// Two processes start the same new run id at once: one drives it (its model is asked),
/// the other is told the run is driven before its model is asked anything. While the
/// first still drives it, a third start of the run id is refused the same way.
async fn two_processes_starting_one_new_run_one_drives_it(t: &TestDb) {
    Deployment::new(&t.db).await;
    let run_id = "run-start-race";
    let handles = [
        t.open_again().await,
        t.open_again().await,
        t.open_again().await,
    ];
    let start = |db: &Database| {
        let agent = logged_agent(db, db);
        // Never answers: whoever drives the run stays in its first turn.
        let mut model = HangingModel::new(script("start-6"), 1);
        let reached = model.reached();
        let task = tokio::spawn(async move {
            let request = RunRequest::new("Order 2 boxes").run_id(run_id);
            agent.run_with(&manager(), &mut model, request).await.status
        });
        (task, reached)
    };
    let (mut a, reached_a) = start(&handles[0]);
    let (mut b, reached_b) = start(&handles[1]);
    let wait = Duration::from_secs(30);
    // The one that does not drive the run returns; the driver waits for its model.
    let (lost, driver, reached) = tokio::time::timeout(wait, async {
        tokio::select! {
            lost = &mut a => (lost, b, reached_b),
            lost = &mut b => (lost, a, reached_a),
        }
    })
    .await
    .expect("one start is refused");
    let lost = lost.unwrap();
    assert!(
        matches!(&lost, RunStatus::Aborted { reason } if reason.contains("driven by another process")),
        "{lost:?}"
    );
    tokio::time::timeout(wait, reached.notified())
        .await
        .expect("the driver asks its model");
    let (third, _) = start(&handles[2]);
    let third = tokio::time::timeout(wait, third).await.unwrap().unwrap();
    assert!(
        matches!(&third, RunStatus::Aborted { reason } if reason.contains("driven by another process")),
        "{third:?}"
    );
    let logged = RunLog::new(t.db.clone())
        .get(run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((logged.status.as_str(), logged.steps), ("running", 0));
    driver.abort();
    let _ = driver.await;
    for db in handles {
        db.close().await;
    }
}
on_both_backends!(two_processes_starting_one_new_run_one_drives_it);
