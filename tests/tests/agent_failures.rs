//! Failures mid-run and retries (SPEC A5, A7, R4): a failed step does not undo earlier
//! ones and is told to the model and audited; a retried write inside a run executes once.
//! On SQLite and (with `ERP_TOOLS_PG_URL`) on PostgreSQL.

use erp_tools_core::agent::{
    AgentEventKind, ModelAction, ResultStatus, RunRequest, ScriptedModel, last_tool_result,
};
use erp_tools_tests::agent::{Deployment, events_of, order, pay, results, run_as, run_request};
use erp_tools_tests::app::seed::{VENDOR, VENDOR_BLOCKED};
use erp_tools_tests::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::MANAGER;

/// Step 1 drafts a purchase order; step 2 (a payment request to a vendor finance has
/// blocked) fails. The order draft stays (there is no rollback across steps), the failure
/// is audited and told to the model, and the model ends with an honest answer saying
/// what was and was not done.
async fn a_failed_second_step_keeps_the_first_and_the_run_ends_honestly(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent();
    let mut model = ScriptedModel::from_fn(|history, _| {
        let rs = results(history);
        match rs.len() {
            0 => order(VENDOR_BLOCKED, "24", "po-1"),
            1 => pay(VENDOR_BLOCKED, "4000", "pay-1"),
            _ => ModelAction::answer(format!(
                "Purchase order draft created ({}). The payment request failed: {}",
                rs[0].data(),
                rs[1].data()
            )),
        }
    });
    let task = "Order 24 of BRG-0042 from V-00013 and request the deposit";
    let out = run_as(&agent, MANAGER, &mut model, task).await;

    let answer = out.answer().expect("done");
    assert!(answer.contains("PO-2026-0001"), "{answer}");
    assert!(answer.contains("blocked for payments"), "{answer}");
    assert!(answer.contains("No draft was created."), "{answer}");

    let pos = d.app.purchase_orders().await;
    assert_eq!(pos.len(), 1, "the first step's draft still exists");
    assert_eq!(
        (pos[0].0.as_str(), pos[0].3.as_str()),
        ("PO-2026-0001", out.run_id.as_str())
    );
    assert!(
        d.app.payment_requests().await.is_empty(),
        "the failed write left nothing behind"
    );

    let failed = last_tool_result(&out.history).unwrap();
    assert_eq!(failed.status, ResultStatus::ToolError);
    assert_eq!(
        out.audit_summary()
            .iter()
            .map(|s| s.split('(').next().unwrap().to_string())
            .collect::<Vec<_>>(),
        [
            format!("started:{CREATE_PO_DRAFT}"),
            format!("started:{CREATE_PAYMENT_REQUEST_DRAFT}"),
            format!("failed:{CREATE_PAYMENT_REQUEST_DRAFT}"),
            "answered:-".to_string(),
        ]
    );
    assert_eq!(
        d.app.audit_lines(&out.run_id).await,
        [
            format!("agent:started:{CREATE_PO_DRAFT}"),
            format!("runtime:ok:{CREATE_PO_DRAFT}"),
            format!("agent:started:{CREATE_PAYMENT_REQUEST_DRAFT}"),
            format!("runtime:tool_error:{CREATE_PAYMENT_REQUEST_DRAFT}"),
            format!("agent:failed:{CREATE_PAYMENT_REQUEST_DRAFT}"),
            "agent:answered:-".to_string(),
        ]
    );
    let failed_row = d
        .app
        .audit(&out.run_id)
        .await
        .into_iter()
        .find(|r| r.outcome == "failed")
        .unwrap();
    assert!(failed_row.message.unwrap().contains("blocked for payments"));
}
on_both_backends!(a_failed_second_step_keeps_the_first_and_the_run_ends_honestly);

/// The model, unsure whether its order went through, sends it again with the same
/// `client_ref`: the runtime replays the original result and exactly one document
/// exists. The replay is visible to the model and in the audit log.
async fn an_idempotent_replay_inside_a_run_executes_once(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent();
    let mut model = ScriptedModel::new([
        order(VENDOR, "12", "po-1"),
        order(VENDOR, "12", "po-1"),
        ModelAction::answer("Ordered 12 of BRG-0042."),
    ]);
    let out = run_as(
        &agent,
        MANAGER,
        &mut model,
        "Order 12 of BRG-0042 from V-00001",
    )
    .await;

    assert_eq!(out.answer(), Some("Ordered 12 of BRG-0042."));
    assert_eq!(d.app.purchase_orders().await.len(), 1);
    let rs = results(&out.history);
    assert_eq!(
        (rs[0].status, rs[1].status),
        (ResultStatus::Ok, ResultStatus::Replayed)
    );
    assert!(rs[1].data().contains("PO-2026-0001"), "{}", rs[1].data());
    assert_eq!(
        events_of(&out, AgentEventKind::Started),
        2,
        "both attempts are audited"
    );
    let lines = d.app.audit_lines(&out.run_id).await;
    assert!(
        lines.contains(&format!("runtime:ok:{CREATE_PO_DRAFT}"))
            && lines.contains(&format!("runtime:replayed:{CREATE_PO_DRAFT}")),
        "{lines:?}"
    );

    // The same client_ref with other arguments is refused, not executed.
    let mut model = ScriptedModel::new([order(VENDOR, "99", "po-1"), ModelAction::answer("ok")]);
    let request = RunRequest::new("Change it").run_id(&out.run_id);
    let out2 = run_request(&agent, MANAGER, &mut model, request).await;
    assert_eq!(
        last_tool_result(&out2.history).unwrap().status,
        ResultStatus::ToolError
    );
    assert_eq!(d.app.purchase_orders().await.len(), 1);
}
on_both_backends!(an_idempotent_replay_inside_a_run_executes_once);
