//! The three brakes of the agent loop (SPEC A1, A2, A8), each tripped by a scripted model
//! against the real tool runtime on SQLite. No network, no sleeping: time is a
//! `ManualClock`.

mod agent_support;

use std::time::Duration;

use agent_support::*;
use erp_tools_core::Target;
use erp_tools_core::agent::{
    AgentEventKind, ManualClock, ModelAction, ResultStatus, RunStatus, ScriptedModel,
    action_signature,
};
use serde_json::json;

/// Every step is new and legal (a different vendor each time), so only the step budget
/// can stop the run: it stops after exactly `max_steps` executed calls.
#[tokio::test]
async fn step_budget_stops_a_model_that_never_finishes() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock).max_steps(5);
    let mut n = 0;
    let mut model = ScriptedModel::from_fn(move |_, _| {
        n += 1;
        lookup(&format!("V-{n:04}"))
    });
    let out = agent
        .run(&budi(ALL_SCOPES), &mut model, "Find me a good vendor")
        .await;

    assert_eq!(out.status, RunStatus::StepLimit);
    assert_eq!(out.steps, 5);
    assert_eq!(model.calls(), 5, "the model is not asked a sixth time");
    let runtime_rows = t
        .audit(&out.run_id)
        .await
        .into_iter()
        .filter(|r| r.source == "runtime")
        .count();
    assert_eq!(runtime_rows, 5, "five calls reached the runtime, no more");
    let results = results(&out.history);
    assert_eq!(results.len(), 5);
    // V-0001 and V-0002 exist; the others are honest not-found tool errors.
    assert_eq!(results[0].status, ResultStatus::Ok);
    assert_eq!(results[2].status, ResultStatus::ToolError);
    assert!(
        t.audit_lines(&out.run_id)
            .await
            .last()
            .unwrap()
            .starts_with("agent:stopped")
    );
}

/// The same lookup again and again: repeat detection stops it on the third proposal,
/// long before the step budget, and the third call is never executed.
#[tokio::test]
async fn repeated_identical_action_is_no_progress() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock).max_steps(20);
    let mut model = ScriptedModel::new([lookup("V-0001")]).repeat_last();
    let out = agent
        .run(&budi(ALL_SCOPES), &mut model, "Check vendor V-0001")
        .await;

    let expected = action_signature(VENDOR, &json!({"vendor_code": "V-0001"}));
    assert_eq!(
        out.status,
        RunStatus::NoProgress {
            signature: expected
        }
    );
    assert_eq!(out.steps, 3);
    let started = out
        .audit
        .iter()
        .filter(|e| e.kind == AgentEventKind::Started)
        .count();
    assert_eq!(started, 2, "the repeated third call is not executed");
    let lines = t.audit_lines(&out.run_id).await;
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("runtime:ok")).count(),
        2,
        "{lines:?}"
    );
}

/// Reordering keys (at every depth) and respelling decimals does not make an action new:
/// a draft proposed three times with shuffled arguments is still caught, and because the
/// runtime hashes the same canonical form, the second proposal is a replay, not a second
/// document.
#[tokio::test]
async fn repeated_action_with_reordered_keys_is_still_detected() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock).max_steps(20);
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(
            PO,
            json!({
            "vendor_code": "V-0001", "client_ref": "reorder-1",
            "lines": [{"item_code": "BRG-0042", "qty": "24"}]}),
        ),
        ModelAction::tool_call(
            PO,
            json!({
            "lines": [{"qty": "24.0", "item_code": "BRG-0042"}],
            "client_ref": "reorder-1", "vendor_code": "V-0001"}),
        ),
        ModelAction::tool_call(
            PO,
            json!({
            "client_ref": "reorder-1",
            "lines": [{"qty": "24.00", "item_code": "BRG-0042"}], "vendor_code": "V-0001"}),
        ),
    ]);
    let out = agent
        .run(&budi(ALL_SCOPES), &mut model, "Reorder BRG-0042")
        .await;

    assert!(
        matches!(out.status, RunStatus::NoProgress { .. }),
        "{:?}",
        out.status
    );
    let results = results(&out.history);
    assert_eq!(results[0].status, ResultStatus::Ok);
    assert_eq!(results[1].status, ResultStatus::Replayed);
    assert_eq!(t.purchase_orders().await.len(), 1, "one document");
}

/// Each model turn takes 50 simulated seconds; with a 120-second budget the run ends
/// with `timeout` after the third turn and its proposal is not executed.
#[tokio::test]
async fn timeout_with_a_fake_clock() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock)
        .timeout(Duration::from_secs(120))
        .max_steps(50);
    let model_clock = clock.clone();
    let mut n = 0;
    let mut model = ScriptedModel::from_fn(move |_, _| {
        model_clock.advance(Duration::from_secs(50));
        n += 1;
        lookup(&format!("V-{n:04}"))
    });
    let out = agent
        .run(&budi(ALL_SCOPES), &mut model, "Look around")
        .await;

    assert_eq!(out.status, RunStatus::Timeout);
    assert_eq!(out.steps, 3);
    assert_eq!(out.elapsed, Duration::from_secs(150));
    let started = out
        .audit
        .iter()
        .filter(|e| e.kind == AgentEventKind::Started)
        .count();
    assert_eq!(
        started, 2,
        "the proposal that arrived after the deadline did not run"
    );
}

/// A tool call that never returns is bounded too: the call is abandoned at the deadline,
/// its transaction rolls back (no half-written payment request), the audit keeps the
/// attempt, and the model is told the outcome is unknown.
#[tokio::test]
async fn a_hanging_tool_call_is_bounded_by_the_timeout() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    *hang_clock().lock().unwrap() = Some(clock.clone());
    let agent = agent(&t.db, policy(), &clock).timeout(Duration::from_secs(60));
    let mut model = ScriptedModel::new([pay(VENDOR_HANGING, "100", "slow-1")]);
    let out = agent
        .run(&budi(ALL_SCOPES), &mut model, "Pay the slow vendor")
        .await;

    assert_eq!(out.status, RunStatus::Timeout);
    assert!(
        t.payment_requests().await.is_empty(),
        "the abandoned write was rolled back"
    );
    let last = results(&out.history).pop().unwrap();
    assert_eq!(last.status, ResultStatus::InternalError);
    assert!(last.data().contains("not known whether it took effect"));
    let lines = t.audit_lines(&out.run_id).await;
    assert!(
        lines.contains(&format!("runtime:attempt:{PAY}")),
        "{lines:?}"
    );
    assert!(lines.contains(&format!("agent:failed:{PAY}")), "{lines:?}");
}

/// The model is offered the registry's tools, filtered by the caller's scopes and
/// rendered for the configured provider.
#[tokio::test]
async fn the_model_sees_only_its_tools_rendered_for_the_target() {
    let t = TestDb::new().await;
    let clock = ManualClock::new();
    let agent = agent(&t.db, policy(), &clock).target(Target::Anthropic);
    let mut model = ScriptedModel::from_fn(move |_, tools| {
        let seen: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let pay = tools.iter().find(|t| t.name == PAY);
        ModelAction::answer(format!(
            "{seen:?} {}",
            pay.map(|p| p.input_schema["required"].to_string())
                .unwrap_or_default()
        ))
    });
    let out = agent
        .run(
            &budi(&["purchasing:read", "finance:draft"]),
            &mut model,
            "What can you do?",
        )
        .await;
    let answer = out.answer().unwrap();
    assert!(
        answer.starts_with(&format!("[\"{PAY}\", \"{VENDOR}\"]")),
        "{answer}"
    );
    // Anthropic strict: the optional `note` is left out of `required`.
    assert!(
        answer.ends_with(r#"["vendor_code","amount","client_ref"]"#),
        "{answer}"
    );
}
