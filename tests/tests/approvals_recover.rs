//! An approval stored when its process dies, before the run resumed from it, leads to its
//! action exactly once: the take-over pass every process runs (`Agent::recover_runs`,
//! `Agent::recover_runs_every`) resumes the run from the stored decision, and two passes
//! racing on one database (two replicas) still create the draft once, the run ending
//! `done` and the approval resumed once. A kill during that resume is taken over like
//! any cut-off run. On SQLite and (with `ERP_TOOLS_PG_URL`) on PostgreSQL.

use std::sync::Arc;

use erp_tools_core::agent::{
    Agent, ApprovalQueue, Model, ModelAction, Recovered, RunLog, ScriptedModel,
};
use erp_tools_core::{Database, Principal, ToolRuntime};
use erp_tools_tests::agent::{Deployment, pay, policy};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::durable::HangingModel;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{MANAGER, REVIEWER};

/// The answer the run gives once its payment ran.
const PAID: &str = "Paid.";

/// A process's agent on `db`: pauses stored in an approval queue, runs in the run log.
fn process_agent(db: &Database) -> Agent {
    Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .unwrap()
        .approval_queue(ApprovalQueue::new(db.clone()))
        .run_log(RunLog::new(db.clone()))
}

fn manager() -> Arc<Principal> {
    Arc::new(MANAGER.principal())
}

/// What a take-over pass continues a run with: the manager, and a model that answers.
fn continue_with(
    _run: &erp_tools_core::agent::LoggedRun,
) -> Result<(Arc<Principal>, Box<dyn Model>), String> {
    let model = ScriptedModel::new([ModelAction::answer(PAID)]);
    Ok((manager(), Box::new(model)))
}

/// A process of its own on `t`'s database starts `runs` runs that each propose a payment
/// needing approval; a reviewer approves each; then the process dies (its agent, queue
/// and database dropped) before any run resumed. Returns the runs and approval ids.
async fn approved_then_killed(t: &TestDb, runs: usize) -> Vec<(String, i64)> {
    let db_a = t.open_again().await;
    let agent = process_agent(&db_a);
    let queue = agent.queue().unwrap().clone();
    let mut out = Vec::new();
    for n in 0..runs {
        let mut model = ScriptedModel::new([pay(VENDOR, "85000.00", &format!("pay-{n}"))]);
        let run = agent.run(&manager(), &mut model, "Pay 85 000").await;
        assert!(run.paused().is_some(), "{:?}", run.status);
        let pending = queue.pending(MANAGER.branch.id).await.unwrap();
        let id = pending.iter().find(|a| a.run_id == run.run_id).unwrap().id;
        queue
            .approve(id, &REVIEWER.principal(), None)
            .await
            .unwrap();
        out.push((run.run_id, id));
    }
    drop((agent, queue));
    db_a.close().await;
    out
}

/// Checks that every run of `approved` ran its payment once and ended `done`, its
/// approval resumed once with the run `done`.
async fn each_acted_on_once(t: &TestDb, d: &Deployment, approved: &[(String, i64)]) {
    assert_eq!(d.app.payment_requests().await.len(), approved.len());
    let (log, queue) = (RunLog::new(t.db.clone()), ApprovalQueue::new(t.db.clone()));
    for (run_id, id) in approved {
        let run = log.get(run_id).await.unwrap().unwrap();
        assert_eq!(run.status, "done", "{run:?}");
        assert_eq!(run.answer(), Some(PAID));
        let approval = queue.get(*id).await.unwrap().unwrap();
        assert_eq!(
            (approval.resume_status.as_deref(), approval.resume_count),
            (Some("done"), 1),
            "{approval:?}"
        );
    }
}

/// A decision stored, the process dead before resuming: a new process's take-over pass
/// resumes the run, the payment is drafted once and the run ends `done`; a second pass
/// finds nothing to do.
async fn a_new_process_acts_on_an_approval_left_waiting(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let approved = approved_then_killed(t, 1).await;
    let (run_id, id) = approved[0].clone();
    let log = RunLog::new(t.db.clone());
    assert_eq!(
        log.get(&run_id).await.unwrap().unwrap().status,
        "awaiting_approval"
    );
    assert!(d.app.payment_requests().await.is_empty());

    let agent = process_agent(&t.db);
    let recovered = agent.recover_runs(100, continue_with).await.unwrap();
    assert_eq!(recovered.len(), 1, "{recovered:?}");
    assert_eq!(recovered[0].0, run_id);
    assert!(
        matches!(&recovered[0].1, Recovered::Resumed { approval, outcome }
            if *approval == id && outcome.status.as_str() == "done"),
        "{recovered:?}"
    );
    each_acted_on_once(t, &d, &approved).await;

    let again = agent.recover_runs(100, continue_with).await.unwrap();
    assert!(again.is_empty(), "{again:?}");
    each_acted_on_once(t, &d, &approved).await;
}
on_both_backends!(a_new_process_acts_on_an_approval_left_waiting);

/// Two replicas (each a process of its own on the database) run their take-over passes
/// at once over several approvals left waiting: each payment is drafted once, each run
/// ends `done`, each approval is resumed once (the replica losing a race does not mark
/// it), and between them the passes resumed each run once.
async fn two_racing_passes_act_on_each_approval_once(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let approved = approved_then_killed(t, 8).await;
    let (db_b, db_c) = (t.open_again().await, t.open_again().await);
    let (agent_b, agent_c) = (process_agent(&db_b), process_agent(&db_c));
    let (b, c) = tokio::join!(
        agent_b.recover_runs(100, continue_with),
        agent_c.recover_runs(100, continue_with)
    );
    let all: Vec<_> = b.unwrap().into_iter().chain(c.unwrap()).collect();
    let resumed = all
        .iter()
        .filter(|(_, how)| matches!(how, Recovered::Resumed { .. }))
        .count();
    assert_eq!(resumed, approved.len(), "{all:?}");
    let lost = all
        .iter()
        .filter(|(_, how)| matches!(how, Recovered::NotResumed { error, .. } if error.contains("not waiting")))
        .count();
    assert_eq!(all.len(), resumed + lost, "{all:?}");
    println!("{resumed} resumed, {lost} races lost");
    each_acted_on_once(t, &d, &approved).await;
    db_b.close().await;
    db_c.close().await;
}
on_both_backends!(two_racing_passes_act_on_each_approval_once);

/// The built-in worker (`Agent::recover_runs_every`) of a new process finds an approval
/// left waiting on its own and acts on it once.
async fn the_worker_acts_on_an_approval_left_waiting(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let approved = approved_then_killed(t, 1).await;
    let worker = Arc::new(process_agent(&t.db))
        .recover_runs_every(std::time::Duration::from_millis(50), continue_with);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while worker.continued() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the worker did not resume the approved run within 20 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let passes = worker.passes();
    while worker.passes() < passes + 2 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!((worker.continued(), worker.cannot_continue()), (1, 0));
    worker.stop().await;
    each_acted_on_once(t, &d, &approved).await;
}
on_both_backends!(the_worker_acts_on_an_approval_left_waiting);

/// Killed during the resume (after the payment ran, while the model is asked for the
/// answer): the run is left `running` under a dead lease and the next process's
/// take-over continues it, the payment replayed through its key, not drafted again; the
/// approval is not resumed a second time.
async fn a_kill_during_the_resume_is_taken_over_not_resumed_again(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let approved = approved_then_killed(t, 1).await;
    let (run_id, id) = approved[0].clone();
    let db_b = t.open_again().await;
    let agent_b = process_agent(&db_b);
    let queue_b = agent_b.queue().unwrap().clone();
    let mut model = HangingModel::new(ScriptedModel::new([ModelAction::answer(PAID)]), 1);
    let reached = model.reached();
    let task = tokio::spawn(async move {
        let _ = queue_b.resume(&agent_b, &manager(), &mut model, id).await;
    });
    tokio::time::timeout(std::time::Duration::from_secs(20), reached.notified())
        .await
        .expect("the resume reaches its model turn");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    db_b.close().await;
    assert_eq!(d.app.payment_requests().await.len(), 1);
    let log = RunLog::new(t.db.clone());
    assert_eq!(log.get(&run_id).await.unwrap().unwrap().status, "running");

    let agent = process_agent(&t.db);
    let recovered = agent.recover_runs(100, continue_with).await.unwrap();
    assert_eq!(recovered.len(), 1, "{recovered:?}");
    assert!(
        matches!(&recovered[0].1, Recovered::Continued(out) if out.status.as_str() == "done"),
        "{recovered:?}"
    );
    let run = log.get(&run_id).await.unwrap().unwrap();
    assert_eq!((run.status.as_str(), run.answer()), ("done", Some(PAID)));
    assert_eq!(d.app.payment_requests().await.len(), 1);
    let again = agent.recover_runs(100, continue_with).await.unwrap();
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(d.app.payment_requests().await.len(), 1);
}
on_both_backends!(a_kill_during_the_resume_is_taken_over_not_resumed_again);
