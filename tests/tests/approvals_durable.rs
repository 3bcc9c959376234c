//! Durable approvals (`erp_approvals`): a run paused for approval is stored with its
//! proposed action and found by any process; a person other than the one it acts for
//! approves or rejects it (who, when, why); one of two concurrent decisions wins; pending
//! approvals expire; resuming from the store executes exactly the approved action once.
//! On SQLite and (with `ERP_TOOLS_PG_URL`) on PostgreSQL.

use std::time::Duration;

use erp_tools_core::ToolRuntime;
use erp_tools_core::agent::{
    APPROVAL_GRANTED, APPROVAL_REJECTED, Agent, ApprovalQueue, ApprovalStatus, DecisionError,
    ManualClock, ModelAction, ResumeError, RunStatus, ScriptedModel, StoredResumeError,
    action_signature, last_tool_result,
};
use erp_tools_tests::agent::{Deployment, pay, policy, run_as};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::tools::CREATE_PAYMENT_REQUEST_DRAFT;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{JAKARTA_REVIEWER, MANAGER, REVIEWER, SECOND_BUYER};
use serde_json::json;

/// An agent over `d` with the deployment's policy that stores its pauses in `queue`.
fn durable_agent(d: &Deployment, queue: &ApprovalQueue) -> Agent {
    d.agent().approval_queue(queue.clone())
}

/// The manager's run pays [`VENDOR`] 85 000 and pauses; the stored approval's id.
async fn paused_payment(d: &Deployment, queue: &ApprovalQueue) -> (String, i64) {
    let agent = durable_agent(d, queue);
    let mut model = ScriptedModel::new([pay(VENDOR, "85000.00", "pay-1")]);
    let out = run_as(&agent, MANAGER, &mut model, "Pay V-00001 85 000").await;
    assert_eq!(out.status.as_str(), "awaiting_approval", "{:?}", out.status);
    let pending = queue.pending(MANAGER.branch.id).await.unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    (out.run_id, pending[0].id)
}

/// A model that answers with the last tool result.
fn answering_model() -> ScriptedModel {
    ScriptedModel::from_fn(|history, _| {
        ModelAction::answer(format!(
            "Done: {}",
            last_tool_result(history)
                .map(|r| r.data())
                .unwrap_or_default()
        ))
    })
}

/// The pause is stored with the normalised arguments, the signature an approval must
/// name, the policy's reason and the tool's hard limit, and another process (its own
/// connection) finds it. Nothing ran.
async fn a_paused_run_is_stored_and_found_by_another_process(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let (run_id, id) = paused_payment(&d, &queue).await;

    let other = ApprovalQueue::new(t.open_again().await);
    let stored = other.get(id).await.unwrap().expect("stored");
    let normalised =
        json!({"amount": "85000", "client_ref": "pay-1", "note": null, "vendor_code": VENDOR});
    assert_eq!(stored.run_id, run_id);
    assert_eq!(stored.tool, CREATE_PAYMENT_REQUEST_DRAFT);
    assert_eq!(
        stored.arguments, normalised,
        "normalised: 85000.00 is 85000"
    );
    assert_eq!(
        stored.signature,
        action_signature(CREATE_PAYMENT_REQUEST_DRAFT, &normalised)
    );
    assert_eq!(
        stored.reason,
        "amount above 50000 needs a person's approval"
    );
    assert_eq!(stored.limits.as_deref(), Some("amount ≤ 10000000 (tool)"));
    assert_eq!(
        (stored.user_id.as_str(), stored.branch_id),
        (MANAGER.user_id, MANAGER.branch.id)
    );
    assert_eq!(stored.status, ApprovalStatus::Pending);
    assert!(stored.created_at < stored.expires_at);
    assert_eq!(stored.decided_by, None);
    assert!(d.app.payment_requests().await.is_empty(), "nothing ran");
    assert!(
        other
            .pending(JAKARTA_REVIEWER.branch.id)
            .await
            .unwrap()
            .is_empty(),
        "another branch's list does not show it"
    );
}
on_both_backends!(a_paused_run_is_stored_and_found_by_another_process);

/// Approving records who and when and writes the decision into the run's trail; the run
/// resumed from the store, in another process, executes the payment once. A second
/// resume is refused and changes nothing: still one payment request.
async fn approved_action_resumes_from_the_store_and_runs_once(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let (run_id, id) = paused_payment(&d, &queue).await;

    let reviewer = REVIEWER.principal();
    let decided = queue
        .approve(id, &reviewer, Some("invoice 7 checked"))
        .await
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(decided.decided_by.as_deref(), Some(REVIEWER.user_id));
    assert!(decided.decided_at.is_some());
    assert_eq!(decided.note.as_deref(), Some("invoice 7 checked"));

    // Another process resumes it.
    let db2 = t.open_again().await;
    let queue2 = ApprovalQueue::new(db2.clone());
    let agent2 = Agent::new(ToolRuntime::new(app::registry(), db2), policy())
        .unwrap()
        .clock(ManualClock::new())
        .approval_queue(queue2.clone());
    let manager = MANAGER.shared();
    let done = queue2
        .resume(&agent2, &manager, &mut answering_model(), id)
        .await
        .unwrap();
    // The number, not a fixed one: the approval's preview ran the handler, and on
    // PostgreSQL the id sequence it drew from is not rolled back.
    assert!(
        done.answer().unwrap().contains("PR-2026-"),
        "{:?}",
        done.status
    );
    assert_eq!(d.app.payment_requests().await.len(), 1);

    let again = queue2
        .resume(&agent2, &manager, &mut answering_model(), id)
        .await
        .unwrap_err();
    assert!(
        matches!(&again, StoredResumeError::AlreadyResumed { status, .. } if status == "done"),
        "{again}"
    );
    assert_eq!(d.app.payment_requests().await.len(), 1, "not paid twice");
    let stored = queue.get(id).await.unwrap().unwrap();
    assert_eq!(stored.resume_count, 1, "the refused resume changed nothing");
    assert_eq!(stored.resume_status.as_deref(), Some("done"));
    assert!(stored.resumed_at.is_some());

    let lines = d.app.audit_lines(&run_id).await;
    let granted = lines
        .iter()
        .position(|l| l == &format!("agent:{APPROVAL_GRANTED}:{CREATE_PAYMENT_REQUEST_DRAFT}"))
        .expect("the decision is in the trail");
    let executed = lines
        .iter()
        .position(|l| l == &format!("runtime:ok:{CREATE_PAYMENT_REQUEST_DRAFT}"))
        .expect("the payment ran");
    assert!(granted < executed, "{lines:?}");
    assert!(
        !lines.contains(&format!("runtime:replayed:{CREATE_PAYMENT_REQUEST_DRAFT}")),
        "{lines:?}"
    );
}
on_both_backends!(approved_action_resumes_from_the_store_and_runs_once);

/// Four eyes: the person an action was proposed for cannot approve or reject it; a
/// reviewer of another branch cannot even find it; only the run's own person can resume
/// it; nothing changed.
async fn nobody_decides_their_own_action_or_another_branchs(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let (_, id) = paused_payment(&d, &queue).await;

    let own = queue
        .approve(id, &MANAGER.principal(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(own, DecisionError::OwnAction(i) if i == id),
        "{own}"
    );
    assert!(own.to_string().contains("on your own behalf"), "{own}");
    let own = queue
        .reject(id, &MANAGER.principal(), "no")
        .await
        .unwrap_err();
    assert!(matches!(own, DecisionError::OwnAction(_)), "{own}");
    let elsewhere = queue
        .approve(id, &JAKARTA_REVIEWER.principal(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(elsewhere, DecisionError::NotFound(_)),
        "{elsewhere}"
    );
    assert_eq!(
        queue.get(id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );

    // Approved by a colleague, it still resumes only as the manager.
    queue
        .approve(id, &SECOND_BUYER.principal(), None)
        .await
        .unwrap();
    let agent = durable_agent(&d, &queue);
    let err = queue
        .resume(&agent, &SECOND_BUYER.shared(), &mut answering_model(), id)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoredResumeError::Resume(ResumeError::WrongPrincipal { .. })
        ),
        "{err}"
    );
    assert!(d.app.payment_requests().await.is_empty());
}
on_both_backends!(nobody_decides_their_own_action_or_another_branchs);

/// A rejection needs a reason, records who, when and why (also in the run's trail), and
/// the run cannot be resumed from it.
async fn rejection_records_why_and_blocks_the_resume(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let (run_id, id) = paused_payment(&d, &queue).await;
    let reviewer = REVIEWER.principal();

    let blank = queue.reject(id, &reviewer, "  ").await.unwrap_err();
    assert!(matches!(blank, DecisionError::ReasonRequired), "{blank}");
    let rejected = queue
        .reject(id, &reviewer, "invoice 7 was paid last week")
        .await
        .unwrap();
    assert_eq!(rejected.status, ApprovalStatus::Rejected);
    assert_eq!(rejected.decided_by.as_deref(), Some(REVIEWER.user_id));
    assert_eq!(
        rejected.note.as_deref(),
        Some("invoice 7 was paid last week")
    );

    let agent = durable_agent(&d, &queue);
    let err = queue
        .resume(&agent, &MANAGER.shared(), &mut answering_model(), id)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoredResumeError::NotApproved {
                status: ApprovalStatus::Rejected,
                ..
            }
        ),
        "{err}"
    );
    let trail = d.app.audit(&run_id).await;
    let row = trail
        .iter()
        .find(|r| r.outcome == APPROVAL_REJECTED)
        .expect("rejection in the trail");
    assert_eq!(
        row.message.as_deref(),
        Some("rejected by u-reviewer: invoice 7 was paid last week")
    );
    assert!(d.app.payment_requests().await.is_empty());
    let late = queue.approve(id, &reviewer, None).await.unwrap_err();
    assert!(
        matches!(
            late,
            DecisionError::AlreadyDecided {
                status: ApprovalStatus::Rejected,
                ..
            }
        ),
        "{late}"
    );
}
on_both_backends!(rejection_records_why_and_blocks_the_resume);

/// A pending approval expires after the configured time: it leaves the pending list, is
/// shown as expired, and can no longer be approved.
async fn pending_approvals_expire(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let clock = ManualClock::new();
    let queue = ApprovalQueue::new(t.db.clone())
        .expire_after(Duration::from_secs(3600))
        .clock(clock.clone());
    let (_, id) = paused_payment(&d, &queue).await;

    clock.advance(Duration::from_secs(3599));
    assert_eq!(queue.pending(MANAGER.branch.id).await.unwrap().len(), 1);
    clock.advance(Duration::from_secs(2));
    assert!(queue.pending(MANAGER.branch.id).await.unwrap().is_empty());
    let stored = queue.get(id).await.unwrap().unwrap();
    assert_eq!(stored.status, ApprovalStatus::Expired);
    let decided = queue.decided(MANAGER.branch.id, 10).await.unwrap();
    assert_eq!(decided.iter().map(|a| a.id).collect::<Vec<_>>(), [id]);

    let err = queue
        .approve(id, &REVIEWER.principal(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, DecisionError::Expired { .. }), "{err}");
    assert!(
        err.to_string().contains("can no longer be decided"),
        "{err}"
    );
}
on_both_backends!(pending_approvals_expire);

/// Two reviewers decide the same action at once, one approving, one rejecting: exactly
/// one decision is recorded, and the other reviewer is told who decided first.
async fn concurrent_decisions_one_wins_the_other_is_told(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    for round in 0..4 {
        let agent = durable_agent(&d, &queue);
        let mut model = ScriptedModel::new([pay(VENDOR, "85000", &format!("pay-{round}"))]);
        let out = run_as(&agent, MANAGER, &mut model, "Pay").await;
        let id = queue
            .pending(MANAGER.branch.id)
            .await
            .unwrap()
            .into_iter()
            .find(|a| a.run_id == out.run_id && a.arguments["client_ref"] == format!("pay-{round}"))
            .expect("stored")
            .id;
        // Each reviewer on its own connection, as two server processes would be.
        let (q1, q2) = (
            ApprovalQueue::new(t.open_again().await),
            ApprovalQueue::new(t.open_again().await),
        );
        let (approver, rejecter) = (REVIEWER.principal(), SECOND_BUYER.principal());
        let (a, r) = tokio::join!(
            q1.approve(id, &approver, None),
            q2.reject(id, &rejecter, "duplicate invoice"),
        );
        let stored = queue.get(id).await.unwrap().unwrap();
        match (a, r) {
            (Ok(won), Err(DecisionError::AlreadyDecided { status, by, .. })) => {
                assert_eq!(won.status, ApprovalStatus::Approved);
                assert_eq!(
                    (status, by.as_str()),
                    (ApprovalStatus::Approved, REVIEWER.user_id)
                );
                assert_eq!(stored.status, ApprovalStatus::Approved);
            }
            (Err(DecisionError::AlreadyDecided { status, by, .. }), Ok(won)) => {
                assert_eq!(won.status, ApprovalStatus::Rejected);
                assert_eq!(
                    (status, by.as_str()),
                    (ApprovalStatus::Rejected, SECOND_BUYER.user_id)
                );
                assert_eq!(stored.status, ApprovalStatus::Rejected);
            }
            other => panic!("exactly one decision must win: {other:?}"),
        }
    }
}
on_both_backends!(concurrent_decisions_one_wins_the_other_is_told);

/// The stored approval covers its own signature only: after resuming, a changed amount
/// is a new action, stored as a new pending approval, and nothing of it runs.
async fn a_changed_argument_needs_a_new_stored_approval(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let queue = ApprovalQueue::new(t.db.clone());
    let (run_id, id) = paused_payment(&d, &queue).await;
    queue
        .approve(id, &REVIEWER.principal(), None)
        .await
        .unwrap();

    let agent = durable_agent(&d, &queue);
    let mut model = ScriptedModel::new([pay(VENDOR, "90000", "pay-2")]);
    let out = queue
        .resume(&agent, &MANAGER.shared(), &mut model, id)
        .await
        .unwrap();
    assert!(
        matches!(out.status, RunStatus::AwaitingApproval { .. }),
        "{:?}",
        out.status
    );
    let pending = queue.pending(MANAGER.branch.id).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_ne!(pending[0].id, id);
    assert_eq!(pending[0].run_id, run_id);
    assert_eq!(pending[0].arguments["amount"], "90000");
    let rows = d.app.payment_requests().await;
    assert_eq!(rows.len(), 1, "only the approved 85 000 ran");
    assert_eq!(rows[0].2, "85000");
    assert_eq!(
        queue
            .for_run(MANAGER.branch.id, &run_id)
            .await
            .unwrap()
            .len(),
        2
    );
}
on_both_backends!(a_changed_argument_needs_a_new_stored_approval);
