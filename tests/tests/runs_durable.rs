//! Durable agent runs (`erp_run_log`, `erp_run_turns`): a run cut off by a dead process
//! at a chosen point is continued from its log by another process on the same database;
//! stored turns are not asked (nor paid) again, stored outcomes are not executed again,
//! an action whose outcome was not stored runs again with its idempotency key, and the
//! answer is delivered. Two processes racing for one run: one wins. A run nobody can
//! continue ends with an explicit status. On SQLite and (with `ERP_TOOLS_PG_URL`)
//! PostgreSQL.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use erp_tools_core::agent::{
    Agent, AgentEventKind, CANNOT_CONTINUE, ModelAction, RUN_CANNOT_CONTINUE, RUN_TAKEN_OVER,
    Recovered, RunLog, RunRequest, RunStatus, ScriptedModel, TakeOverError, TokenUsage,
};
use erp_tools_core::{Database, Principal, ToolRuntime};
use erp_tools_tests::agent::{Deployment, order, pay, policy};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::durable::{HangingModel, HangingSink};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::MANAGER;

/// Tokens each scripted turn reports.
const TURN: TokenUsage = TokenUsage {
    input_tokens: 100,
    output_tokens: 10,
};

/// The run's turns: order, pay (below the approval threshold), answer.
fn script() -> Vec<ModelAction> {
    vec![
        order(VENDOR, "5", "po-1"),
        pay(VENDOR, "1200.00", "pay-1"),
        ModelAction::answer("Ordered 5 boxes and drafted the payment."),
    ]
}

/// An agent of the process on `db`, keeping its runs in `db`'s run log.
fn durable_agent(db: &Database) -> Agent {
    Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .unwrap()
        .run_log(RunLog::new(db.clone()))
}

fn manager() -> Arc<Principal> {
    Arc::new(MANAGER.principal())
}

/// A take-over of run `run_id`, which has ended, is refused as not running.
async fn refuses_to_take_over(agent: &Agent, run_id: &str) {
    let again = agent
        .take_over(&manager(), &mut ScriptedModel::new([]), run_id)
        .await;
    assert!(
        matches!(again, Err(TakeOverError::NotRunning { .. })),
        "{again:?}"
    );
}

/// Where process A is cut off in the script.
enum Cut {
    /// After turn 2 (the payment) was stored, before the payment runs.
    BeforeThePayment,
    /// After the payment ran, while the model is asked for turn 3 (the payment's outcome
    /// not stored yet: it goes with turn 3's answer).
    AskingTurn3,
    /// Once turn 3, the answer, was stored, while its `answered` event is written.
    AtTheAnswer,
}

/// Process A (a `Database` of its own on `t`'s database) runs the script as run `run_id`
/// and is cut off at `cut`, as a killed process leaves it: the task driving the run is
/// dropped and A's database closed. Returns how many turns A's model answered.
async fn cut_off_at(t: &TestDb, run_id: &str, cut: Cut) -> usize {
    let db_a = t.open_again().await;
    let script = ScriptedModel::new(script()).usage_per_call(TURN);
    let (agent_a, mut model, reached) = match cut {
        Cut::BeforeThePayment => {
            let sink = HangingSink::new(&db_a, AgentEventKind::Started, 2);
            let reached = sink.reached();
            let agent = durable_agent(&db_a).audit_sink(sink);
            (agent, HangingModel::new(script, 0), reached)
        }
        Cut::AskingTurn3 => {
            let model = HangingModel::new(script, 3);
            let reached = model.reached();
            (durable_agent(&db_a), model, reached)
        }
        Cut::AtTheAnswer => {
            let sink = HangingSink::new(&db_a, AgentEventKind::Answered, 3);
            let reached = sink.reached();
            let agent = durable_agent(&db_a).audit_sink(sink);
            (agent, HangingModel::new(script, 0), reached)
        }
    };
    let answered = model.answered();
    let request = RunRequest::new("Order 5 boxes and pay V-00001's invoice").run_id(run_id);
    let task = tokio::spawn(async move {
        agent_a
            .run_with(&manager(), &mut model, request)
            .await
            .status
    });
    tokio::time::timeout(Duration::from_secs(20), reached.notified())
        .await
        .expect("the run reaches the point it is cut off at");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    db_a.close().await;
    answered.load(Ordering::SeqCst)
}

/// Cut off after turn 2 was stored and before its payment ran: another process finds the
/// run interrupted, takes it over, runs the payment once, asks the model only for turn 3,
/// and delivers the answer; tokens are counted once per turn.
async fn a_run_cut_off_between_a_stored_turn_and_its_action_is_taken_over(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-1";
    let answered_a = cut_off_at(t, run_id, Cut::BeforeThePayment).await;
    assert_eq!(answered_a, 2, "turns 1 and 2 were answered");
    assert_eq!(d.app.purchase_orders().await.len(), 1);
    assert!(
        d.app.payment_requests().await.is_empty(),
        "the payment never ran"
    );

    let log = RunLog::new(t.db.clone());
    let orphaned = log.orphaned(10).await.unwrap();
    assert_eq!(orphaned.len(), 1, "{orphaned:?}");
    assert!(orphaned[0].interrupted);
    assert_eq!(
        (orphaned[0].steps, orphaned[0].status.as_str()),
        (2, "running")
    );
    assert_eq!(orphaned[0].input_tokens, 200, "two turns stored");

    // Process B continues it: the model is asked for turn 3 only.
    let agent_b = durable_agent(&t.db);
    let mut model_b = ScriptedModel::new([script()[2].clone()]).usage_per_call(TURN);
    let out = agent_b
        .take_over(&manager(), &mut model_b, run_id)
        .await
        .unwrap();
    assert_eq!(
        out.answer(),
        Some("Ordered 5 boxes and drafted the payment.")
    );
    assert_eq!(model_b.calls(), 1, "turns 1 and 2 were not asked again");
    assert_eq!(out.steps, 3);
    assert_eq!(
        out.usage,
        TokenUsage::new(300, 30),
        "each turn counted once"
    );
    assert_eq!(
        d.app.purchase_orders().await.len(),
        1,
        "the order did not run again"
    );
    let payments = d.app.payment_requests().await;
    assert_eq!(payments.len(), 1, "{payments:?}");
    assert_eq!(payments[0].3, run_id);

    let stored = log.get(run_id).await.unwrap().unwrap();
    assert_eq!(stored.status, "done");
    assert_eq!(
        stored.answer(),
        Some("Ordered 5 boxes and drafted the payment.")
    );
    assert!(!stored.interrupted);
    assert_eq!(stored.resume_count, 1);
    let by = stored.resumed_by.clone().unwrap();
    assert!(
        by.contains(t.db.replica_id()) && by.ends_with(MANAGER.user_id),
        "{by}"
    );
    assert!(stored.interrupted_at.is_some() && stored.resumed_at.is_some());
    let outcomes = d.app.outcomes(run_id).await;
    assert_eq!(
        outcomes.iter().filter(|o| *o == RUN_TAKEN_OVER).count(),
        1,
        "{outcomes:?}"
    );
    // Taking over a run that ended is refused.
    refuses_to_take_over(&agent_b, run_id).await;
}
on_both_backends!(a_run_cut_off_between_a_stored_turn_and_its_action_is_taken_over);

/// The payment ran, and the process died while the model was asked for turn 3, before
/// the payment's outcome was stored (it is stored with the next turn's answer): taken
/// over, the payment runs again with the same idempotency key and is replayed, not
/// created twice.
async fn an_action_whose_outcome_was_not_stored_is_replayed_not_doubled(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-2";
    assert_eq!(cut_off_at(t, run_id, Cut::AskingTurn3).await, 2);
    assert_eq!(d.app.payment_requests().await.len(), 1, "the payment ran");
    // A turn's outcome is stored in the next turn's row (`prior_outcome`).
    let outcomes: Vec<Option<String>> = erp_tools_core::sqlx::query_scalar(
        "SELECT COALESCE(t.outcome, n.prior_outcome) FROM erp_run_turns t \
         LEFT JOIN erp_run_turns n ON n.agent_run_id = t.agent_run_id AND n.step = t.step + 1 \
         WHERE t.agent_run_id = $1 ORDER BY t.step",
    )
    .bind(run_id)
    .fetch_all(t.db.pool())
    .await
    .unwrap();
    assert_eq!(outcomes.len(), 2);
    assert!(
        outcomes[0].is_some(),
        "the order's outcome came with turn 2"
    );
    assert!(
        outcomes[1].is_none(),
        "the payment's outcome was not stored"
    );

    let agent_b = durable_agent(&t.db);
    let mut model_b = ScriptedModel::new([script()[2].clone()]).usage_per_call(TURN);
    let out = agent_b
        .take_over(&manager(), &mut model_b, run_id)
        .await
        .unwrap();
    assert_eq!(out.status.as_str(), "done", "{:?}", out.status);
    assert_eq!(model_b.calls(), 1);
    assert_eq!(
        d.app.payment_requests().await.len(),
        1,
        "replayed, not created twice"
    );
    assert_eq!(d.app.purchase_orders().await.len(), 1);
    let replayed = erp_tools_tests::agent::results(&out.history)
        .iter()
        .filter(|r| r.status == erp_tools_core::agent::ResultStatus::Replayed)
        .count();
    assert_eq!(replayed, 1, "{:?}", out.history);
}
on_both_backends!(an_action_whose_outcome_was_not_stored_is_replayed_not_doubled);

/// Two processes take over one cut-off run at once: one drives it, the other is told
/// it is driven; a live driver's run is not taken over at all.
async fn two_processes_racing_for_one_run_one_wins(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-3";
    let db_a = t.open_again().await;
    let sink = HangingSink::new(&db_a, AgentEventKind::Started, 2);
    let reached = sink.reached();
    let agent_a = durable_agent(&db_a).audit_sink(sink);
    let model_a = HangingModel::new(ScriptedModel::new(script()), 0);
    // While A lives, nobody takes its run.
    let (db_b, db_c) = (t.open_again().await, t.open_again().await);
    let request = RunRequest::new("Order and pay").run_id(run_id);
    let mut model = model_a;
    let task = tokio::spawn(async move {
        agent_a
            .run_with(&manager(), &mut model, request)
            .await
            .status
    });
    reached.notified().await;
    let live = durable_agent(&db_b)
        .take_over(&manager(), &mut ScriptedModel::new([]), run_id)
        .await;
    assert!(
        matches!(live, Err(TakeOverError::Driven { .. })),
        "{live:?}"
    );
    task.abort();
    let _ = task.await;
    db_a.close().await;

    let (agent_b, agent_c) = (durable_agent(&db_b), durable_agent(&db_c));
    let mut model_b = ScriptedModel::new([script()[2].clone()]);
    let mut model_c = ScriptedModel::new([script()[2].clone()]);
    let who = manager();
    let (b, c) = tokio::join!(
        agent_b.take_over(&who, &mut model_b, run_id),
        agent_c.take_over(&who, &mut model_c, run_id),
    );
    let won: Vec<_> = [&b, &c].into_iter().filter(|r| r.is_ok()).collect();
    assert_eq!(won.len(), 1, "{b:?} {c:?}");
    let lost = if b.is_ok() { &c } else { &b };
    assert!(
        matches!(lost, Err(TakeOverError::Driven { .. })),
        "{lost:?}"
    );
    assert_eq!(model_b.calls() + model_c.calls(), 1, "turn 3 asked once");
    assert_eq!(d.app.payment_requests().await.len(), 1);
    db_b.close().await;
    db_c.close().await;
}
on_both_backends!(two_processes_racing_for_one_run_one_wins);

/// A cut-off run whose model is gone ends as `cannot_continue`, with the reason in the
/// log and in the audit trail; nothing further runs.
async fn a_run_nobody_can_continue_ends_explicitly(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-4";
    cut_off_at(t, run_id, Cut::BeforeThePayment).await;

    let agent_b = durable_agent(&t.db);
    let recovered = agent_b
        .recover_runs(10, |run| {
            assert_eq!(run.run_id, "run-durable-4");
            Err("the model test-model was retired".to_string())
        })
        .await
        .unwrap();
    assert_eq!(recovered.len(), 1);
    assert!(matches!(&recovered[0].1, Recovered::CannotContinue(why) if why.contains("retired")));
    let stored = RunLog::new(t.db.clone())
        .get(run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, CANNOT_CONTINUE);
    assert_eq!(
        stored.reason.as_deref(),
        Some("the model test-model was retired")
    );
    assert!(d.app.payment_requests().await.is_empty());
    assert!(
        d.app
            .outcomes(run_id)
            .await
            .iter()
            .any(|o| o == RUN_CANNOT_CONTINUE)
    );
    assert!(
        RunLog::new(t.db.clone())
            .orphaned(10)
            .await
            .unwrap()
            .is_empty()
    );
}
on_both_backends!(a_run_nobody_can_continue_ends_explicitly);

/// The run's final answer ends it in the same write as the answer's turn: a process cut
/// off once the answer was stored leaves a run that is `done`, with its answer, which
/// nobody takes over and whose model is not asked again.
async fn a_run_whose_answer_was_stored_is_done(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-answer";
    let answered_a = cut_off_at(t, run_id, Cut::AtTheAnswer).await;
    assert_eq!(answered_a, 3, "all three turns were answered");
    let log = RunLog::new(t.db.clone());
    let stored = log.get(run_id).await.unwrap().unwrap();
    assert_eq!(stored.status, "done");
    assert_eq!(
        stored.answer(),
        Some("Ordered 5 boxes and drafted the payment.")
    );
    assert_eq!((stored.steps, stored.input_tokens), (3, 300));
    assert!(!stored.interrupted);
    assert!(log.orphaned(10).await.unwrap().is_empty());
    refuses_to_take_over(&durable_agent(&t.db), run_id).await;
    assert_eq!(d.app.payment_requests().await.len(), 1);
}
on_both_backends!(a_run_whose_answer_was_stored_is_done);

/// An audit sink that fails at the `answered` event.
struct FailsAtTheAnswer;

impl erp_tools_core::agent::AuditSink for FailsAtTheAnswer {
    fn record<'a>(
        &'a self,
        _principal: &'a Principal,
        event: &'a erp_tools_core::agent::AgentEvent,
    ) -> futures::future::BoxFuture<'a, Result<(), erp_tools_core::agent::AuditError>> {
        let failed = event.kind == AgentEventKind::Answered;
        Box::pin(async move {
            if failed {
                Err(erp_tools_core::agent::AuditError(
                    "the audit store is down".to_string(),
                ))
            } else {
                Ok(())
            }
        })
    }
}

/// A run whose answer was stored (and the run with it as `done`) but which stopped
/// otherwise after all (its `answered` event could not be written) is logged with the end
/// it returned, not as `done`.
async fn a_run_stopped_after_its_answer_keeps_the_end_it_returned(t: &TestDb) {
    Deployment::new(&t.db).await;
    let run_id = "run-durable-answer-failed";
    let agent = durable_agent(&t.db).audit_sink(FailsAtTheAnswer);
    let mut model = ScriptedModel::new(script()).usage_per_call(TURN);
    let request = RunRequest::new("Order 5 boxes and pay V-00001's invoice").run_id(run_id);
    let out = agent.run_with(&manager(), &mut model, request).await;
    assert!(
        matches!(&out.status, RunStatus::Aborted { reason } if reason.contains("down")),
        "{:?}",
        out.status
    );
    let stored = RunLog::new(t.db.clone())
        .get(run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, out.status.as_str());
    assert_eq!(stored.answer(), None);
    assert_eq!(stored.steps, 3, "the answer's turn is stored");
}
on_both_backends!(a_run_stopped_after_its_answer_keeps_the_end_it_returned);

/// A run that pauses for approval is logged as paused (not cut off), and the resumed
/// run's steps go on in the same log.
async fn a_paused_run_is_not_cut_off_and_resumes_in_its_log(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = erp_tools_core::agent::ApprovalQueue::new(t.db.clone());
    let agent = durable_agent(&t.db).approval_queue(queue.clone());
    let mut model = ScriptedModel::new([
        pay(VENDOR, "85000.00", "pay-big"),
        ModelAction::answer("Paid."),
    ]);
    let out = agent.run(&manager(), &mut model, "Pay 85 000").await;
    assert_eq!(out.status.as_str(), "awaiting_approval");
    let log = RunLog::new(t.db.clone());
    let stored = log.get(&out.run_id).await.unwrap().unwrap();
    assert_eq!(stored.status, "awaiting_approval");
    assert!(!stored.interrupted);
    assert!(log.orphaned(10).await.unwrap().is_empty());
    let id = queue.pending(MANAGER.branch.id).await.unwrap()[0].id;
    let reviewer = erp_tools_tests::principals::REVIEWER.principal();
    queue.approve(id, &reviewer, None).await.unwrap();
    let done = queue
        .resume(&agent, &manager(), &mut model, id)
        .await
        .unwrap();
    assert!(
        matches!(done.status, RunStatus::Done { .. }),
        "{:?}",
        done.status
    );
    let stored = log.get(&out.run_id).await.unwrap().unwrap();
    assert_eq!((stored.status.as_str(), stored.steps), ("done", 2));
    assert_eq!(d.app.payment_requests().await.len(), 1);
}
on_both_backends!(a_paused_run_is_not_cut_off_and_resumes_in_its_log);

/// The process that takes a run over no longer has the tool whose call was cut off (a
/// new version dropped it): the call's outcome is unknown, and the tool is neither a read
/// nor a draft replayed through its idempotency key, so it is not run again; the run ends
/// as `cannot_continue`, saying why, and the model is not asked.
async fn a_call_that_cannot_be_replayed_ends_the_run_instead(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-5";
    cut_off_at(t, run_id, Cut::BeforeThePayment).await;

    // Process B: the fixture's tools but the payment request.
    let without_payments = app::namespaces()
        .tools(
            app::registry()
                .tools()
                .iter()
                .map(|tool| tool.def())
                .filter(|def| def.name() != app::tools::CREATE_PAYMENT_REQUEST_DRAFT),
        )
        .build()
        .unwrap();
    let agent_b = Agent::new(
        ToolRuntime::new(Arc::new(without_payments), t.db.clone()),
        erp_tools_core::agent::Policy::new(),
    )
    .unwrap()
    .run_log(RunLog::new(t.db.clone()));
    let mut model_b = ScriptedModel::new([script()[2].clone()]);
    let refused = agent_b.take_over(&manager(), &mut model_b, run_id).await;
    let Err(TakeOverError::CannotContinue { reason, .. }) = &refused else {
        panic!("{refused:?}");
    };
    assert!(
        reason.contains("step 2's call of `finance_create_payment_request_draft`")
            && reason.contains("not a tool of this process's registry")
            && reason.contains("check in the ERP"),
        "{reason}"
    );
    assert_eq!(model_b.calls(), 0, "the model was not asked");
    assert!(d.app.payment_requests().await.is_empty(), "nothing ran");
    let stored = RunLog::new(t.db.clone())
        .get(run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, CANNOT_CONTINUE);
    assert_eq!(stored.reason.as_deref(), Some(reason.as_str()));
    assert!(
        d.app
            .outcomes(run_id)
            .await
            .iter()
            .any(|o| o == RUN_CANNOT_CONTINUE)
    );
    // The process that has the tool would have replayed it; the run has ended.
    refuses_to_take_over(&durable_agent(&t.db), run_id).await;
}
on_both_backends!(a_call_that_cannot_be_replayed_ends_the_run_instead);

/// The built-in worker (`Agent::recover_runs_every`) finds a cut-off run on its own and
/// drives it to its end: the payment runs once, the model is asked for turn 3 only.
async fn the_take_over_worker_continues_a_cut_off_run(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run_id = "run-durable-6";
    cut_off_at(t, run_id, Cut::BeforeThePayment).await;

    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = asked.clone();
    let worker =
        Arc::new(durable_agent(&t.db)).recover_runs_every(Duration::from_millis(50), move |run| {
            assert_eq!(run.run_id, "run-durable-6");
            counted.fetch_add(1, Ordering::SeqCst);
            let model = ScriptedModel::new([script()[2].clone()]);
            Ok((
                manager(),
                Box::new(model) as Box<dyn erp_tools_core::agent::Model>,
            ))
        });
    let log = RunLog::new(t.db.clone());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let run = log.get(run_id).await.unwrap().unwrap();
        if run.status != "running" {
            assert_eq!(run.status, "done", "{run:?}");
            assert_eq!((run.steps, run.resume_count), (3, 1));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the worker did not take the run over within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A pass or two more: the ended run is not taken again.
    let passes = worker.passes();
    while worker.passes() < passes + 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!((worker.continued(), worker.cannot_continue()), (1, 0));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    worker.stop().await;
    assert_eq!(d.app.payment_requests().await.len(), 1);
    assert_eq!(d.app.purchase_orders().await.len(), 1);
}
on_both_backends!(the_take_over_worker_continues_a_cut_off_run);
