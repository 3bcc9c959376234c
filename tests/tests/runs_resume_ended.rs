//! Resuming a run that has ended changes nothing and says why: an approval a run already
//! went on from is refused by the queue, a run the run log has ended is refused by the
//! loop (its status, answer and turns stay), and the example's `resume --approval` says
//! so with a non-zero exit. On SQLite and (with `ERP_TOOLS_PG_URL`) on PostgreSQL.

use std::sync::Arc;

use erp_tools_core::agent::{
    Agent, Approval, ApprovalQueue, ModelAction, ResumeError, RunLog, RunStatus, ScriptedModel,
    StoredResumeError,
};
use erp_tools_core::{Database, Principal, ToolRuntime};
use erp_tools_tests::agent::{Deployment, pay, policy};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{MANAGER, REVIEWER};

/// An agent on `db` that stores its pauses in `queue` and keeps its runs in the run log.
fn logged_agent(db: &Database, queue: &ApprovalQueue) -> Agent {
    Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .unwrap()
        .approval_queue(queue.clone())
        .run_log(RunLog::new(db.clone()))
}

/// The number of turns stored for `run_id`.
async fn turns(db: &Database, run_id: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM erp_run_turns WHERE agent_run_id = $1")
        .bind(run_id.to_string())
        .fetch_one(db.pool())
        .await
        .unwrap()
}

/// A paid, approved and resumed run is done; resuming it again, from the store or from
/// the paused run in hand, is refused saying why, and its log, answer, turns, audit trail
/// and approval stay as they were: the payment exists once.
async fn an_ended_run_is_not_resumed_again(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let agent = logged_agent(&t.db, &queue);
    let manager = Arc::new(MANAGER.principal());
    let mut model = ScriptedModel::new([
        pay(VENDOR, "85000.00", "pay-big"),
        ModelAction::answer("Paid."),
    ]);
    let out = agent.run(&manager, &mut model, "Pay 85 000").await;
    let paused = out.paused().expect("the payment waits for approval");
    let id = queue.pending(MANAGER.branch.id).await.unwrap()[0].id;
    queue
        .approve(id, &REVIEWER.principal(), None)
        .await
        .unwrap();
    let done = queue
        .resume(&agent, &manager, &mut model, id)
        .await
        .unwrap();
    assert!(
        matches!(&done.status, RunStatus::Done { answer } if answer == "Paid."),
        "{:?}",
        done.status
    );
    let log = RunLog::new(t.db.clone());
    let before = log.get(&out.run_id).await.unwrap().unwrap();
    let approval_before = queue.get(id).await.unwrap().unwrap();
    let (turns_before, lines_before) = (
        turns(&t.db, &out.run_id).await,
        d.app.audit_lines(&out.run_id).await,
    );

    let mut again = ScriptedModel::new([ModelAction::answer("Something else.")]);
    let refused = queue
        .resume(&agent, &manager, &mut again, id)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StoredResumeError::AlreadyResumed { id: i, status, .. }
            if *i == id && status == "done"),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("nothing was run or changed"),
        "{refused}"
    );
    let approval = Approval::new(
        out.run_id.clone(),
        paused.pending.signature.clone(),
        REVIEWER.user_id,
    );
    let refused = agent
        .resume(&manager, &mut again, paused, approval)
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        ResumeError::NotWaiting {
            run_id: out.run_id.clone(),
            status: "done".into(),
        }
    );
    println!("{refused}");

    let after = log.get(&out.run_id).await.unwrap().unwrap();
    assert_eq!(after, before, "the run's record is unchanged");
    assert_eq!(after.answer(), Some("Paid."));
    assert_eq!(turns(&t.db, &out.run_id).await, turns_before);
    assert_eq!(d.app.audit_lines(&out.run_id).await, lines_before);
    assert_eq!(queue.get(id).await.unwrap().unwrap(), approval_before);
    assert_eq!(d.app.payment_requests().await.len(), 1);
}
on_both_backends!(an_ended_run_is_not_resumed_again);

/// `distributor <args>` on the database at `url`: (exit success, stdout, stderr).
fn example(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(erp_tools_tests::example::binary())
        .args(["--db", url])
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the example");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The example's loop pauses, a reviewer approves, `resume --approval` finishes the run;
/// a second `resume --approval` exits non-zero saying why, and the run stays `done` with
/// its answer (no run log write, no constraint error).
async fn the_examples_resume_of_an_ended_run_fails_and_changes_nothing(t: &TestDb) {
    let url = t.url().to_string();
    let (ok, paused, errors) = example(&url, &["agent", "--user", "7", "--branch", "SBY-01"]);
    assert!(ok, "{paused} {errors}");
    let id: i64 = paused
        .split("waiting for approval ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("the loop did not pause: {paused}"));
    let db = t.open_again().await;
    let queue = ApprovalQueue::new(db.clone());
    let stored = queue.get(id).await.unwrap().unwrap();
    let reviewer = Principal::builder("21", stored.branch_id, &stored.branch_code).build();
    queue.approve(id, &reviewer, None).await.unwrap();

    let (ok, first, errors) = example(&url, &["resume", "--approval", &id.to_string()]);
    assert!(
        ok && first.contains("The run resumed and finished"),
        "{first} {errors}"
    );
    let log = RunLog::new(db.clone());
    let before = log.get(&stored.run_id).await.unwrap().unwrap();
    assert_eq!(before.status, "done");
    let turns_before = turns(&db, &stored.run_id).await;

    let (ok, second, errors) = example(&url, &["resume", "--approval", &id.to_string()]);
    println!("{errors}");
    assert!(!ok, "a resume of an ended run exits non-zero: {second}");
    assert!(
        errors.contains(&format!("approval {id} was acted on already"))
            && errors.contains("nothing was run or changed"),
        "{errors}"
    );
    assert!(!errors.contains("UNIQUE"), "{errors}");
    let after = log.get(&stored.run_id).await.unwrap().unwrap();
    assert_eq!(after, before, "the run's record is unchanged");
    assert_eq!(after.answer(), before.answer());
    assert_eq!(turns(&db, &stored.run_id).await, turns_before);
    let again = queue.get(id).await.unwrap().unwrap();
    assert_eq!(again.resume_count, 1);
    db.close().await;
}
on_both_backends!(the_examples_resume_of_an_ended_run_fails_and_changes_nothing);
