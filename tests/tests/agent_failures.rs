//! Failures mid-run and retries (SPEC A5, A7, R4): a failed step does not undo earlier
//! ones and is told to the model and audited; a retried write inside a run executes once.

mod agent_support;

use agent_support::*;
use erp_tools_core::agent::{
    AgentEventKind, ManualClock, ModelAction, ResultStatus, ScriptedModel, last_tool_result,
};

/// Step 1 drafts a purchase order; step 2 (a payment request to a vendor finance has
/// blocked) fails. The order draft stays (there is no rollback across steps), the failure
/// is audited and told to the model, and the model ends with an honest answer saying
/// what was and was not done.
#[tokio::test]
async fn a_failed_second_step_keeps_the_first_and_the_run_ends_honestly() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock);
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
    let out = agent
        .run(
            &budi(ALL_SCOPES),
            &mut model,
            "Order 24 of BRG-0042 from V-0013 and request the deposit",
        )
        .await;

    let answer = out.answer().expect("done");
    assert!(answer.contains("PO-2026-0001"), "{answer}");
    assert!(answer.contains("blocked for payments"), "{answer}");
    assert!(answer.contains("No draft was created."), "{answer}");

    let pos = t.purchase_orders().await;
    assert_eq!(pos.len(), 1, "the first step's draft still exists");
    assert_eq!(
        (pos[0].0.as_str(), pos[0].3.as_str()),
        ("PO-2026-0001", out.run_id.as_str())
    );
    assert!(
        t.payment_requests().await.is_empty(),
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
            format!("started:{PO}"),
            format!("started:{PAY}"),
            format!("failed:{PAY}"),
            "answered:-".to_string(),
        ]
    );
    assert_eq!(
        t.audit_lines(&out.run_id).await,
        [
            format!("agent:started:{PO}"),
            format!("runtime:ok:{PO}"),
            format!("agent:started:{PAY}"),
            format!("runtime:tool_error:{PAY}"),
            format!("agent:failed:{PAY}"),
            "agent:answered:-".to_string(),
        ]
    );
    let failed_row = t
        .audit(&out.run_id)
        .await
        .into_iter()
        .find(|r| r.outcome == "failed")
        .unwrap();
    assert!(failed_row.message.unwrap().contains("blocked for payments"));
}

/// The model, unsure whether its order went through, sends it again with the same
/// `client_ref`: the runtime replays the original result and exactly one document
/// exists. The replay is visible to the model and in the audit log.
#[tokio::test]
async fn an_idempotent_replay_inside_a_run_executes_once() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock);
    let mut model = ScriptedModel::new([
        order("V-0001", "12", "po-1"),
        order("V-0001", "12", "po-1"),
        ModelAction::answer("Ordered 12 of BRG-0042."),
    ]);
    let out = agent
        .run(
            &budi(ALL_SCOPES),
            &mut model,
            "Order 12 of BRG-0042 from V-0001",
        )
        .await;

    assert_eq!(out.answer(), Some("Ordered 12 of BRG-0042."));
    assert_eq!(t.purchase_orders().await.len(), 1);
    let rs = results(&out.history);
    assert_eq!(
        (rs[0].status, rs[1].status),
        (ResultStatus::Ok, ResultStatus::Replayed)
    );
    assert!(rs[1].data().contains("PO-2026-0001"), "{}", rs[1].data());
    let started = out
        .audit
        .iter()
        .filter(|e| e.kind == AgentEventKind::Started)
        .count();
    assert_eq!(started, 2, "both attempts are audited");
    let lines = t.audit_lines(&out.run_id).await;
    assert!(
        lines.contains(&format!("runtime:ok:{PO}"))
            && lines.contains(&format!("runtime:replayed:{PO}")),
        "{lines:?}"
    );

    // The same client_ref with other arguments is refused, not executed.
    let mut model = ScriptedModel::new([order("V-0001", "99", "po-1"), ModelAction::answer("ok")]);
    let out2 = agent
        .run_with(
            &budi(ALL_SCOPES),
            &mut model,
            erp_tools_core::agent::RunRequest::new("Change it").run_id(&out.run_id),
        )
        .await;
    assert_eq!(
        last_tool_result(&out2.history).unwrap().status,
        ResultStatus::ToolError
    );
    assert_eq!(t.purchase_orders().await.len(), 1);
}
