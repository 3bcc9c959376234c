//! The three brakes of the agent loop (SPEC A1, A2, A8), each tripped by a scripted model
//! against the real tool runtime, on SQLite and (with `ERP_TOOLS_PG_URL`) on PostgreSQL. No network, no sleeping: time is a
//! `ManualClock`.

use std::time::Duration;

use erp_tools_core::Target;
use erp_tools_core::agent::{
    AgentEventKind, ModelAction, ResultStatus, RunRequest, RunStatus, ScriptedModel,
    action_signature,
};
use erp_tools_tests::agent::{Deployment, events_of, lookup, pay, results, run_as, run_request};
use erp_tools_tests::app::faults::{VENDOR_HANGS, advance_when_hanging};
use erp_tools_tests::app::runtime_rows;
use erp_tools_tests::app::seed::{ITEM, VENDOR};
use erp_tools_tests::app::tools::{
    CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_PO, GET_VENDOR_SUMMARY, SEARCH_VENDORS,
};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{ACCOUNTANT, MANAGER};
use serde_json::json;

/// Every step is new and legal (a different vendor each time), so only the step budget
/// can stop the run: it stops after exactly `max_steps` executed calls.
async fn step_budget_stops_a_model_that_never_finishes(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().max_steps(5);
    let mut n = 0;
    let mut model = ScriptedModel::from_fn(move |_, _| {
        n += 1;
        lookup(&format!("V-{n:05}"))
    });
    let out = run_as(&agent, MANAGER, &mut model, "Find me a good vendor").await;

    assert_eq!(out.status, RunStatus::StepLimit);
    assert_eq!(out.steps, 5);
    assert_eq!(model.calls(), 5, "the model is not asked a sixth time");
    let rows = runtime_rows(d.app.db(), Some(&out.run_id)).await;
    assert_eq!(rows.len(), 5, "five calls reached the runtime, no more");
    let results = results(&out.history);
    assert_eq!(results.len(), 5);
    // V-00001 and V-00002 exist; the others are honest not-found tool errors.
    assert_eq!(results[0].status, ResultStatus::Ok);
    assert_eq!(results[2].status, ResultStatus::ToolError);
    let lines = d.app.audit_lines(&out.run_id).await;
    assert!(
        lines.last().unwrap().starts_with("agent:stopped"),
        "{lines:?}"
    );
}
on_both_backends!(step_budget_stops_a_model_that_never_finishes);

/// The same lookup again and again: repeat detection stops it on the third proposal,
/// long before the step budget, and the third call is never executed.
async fn repeated_identical_action_is_no_progress(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().max_steps(20);
    let mut model = ScriptedModel::new([lookup(VENDOR)]).repeat_last();
    let out = run_as(&agent, MANAGER, &mut model, "Check vendor V-00001").await;

    let expected = action_signature(GET_VENDOR_SUMMARY, &json!({"vendor_code": VENDOR}));
    assert_eq!(
        out.status,
        RunStatus::NoProgress {
            signature: expected
        }
    );
    assert_eq!(out.steps, 3);
    assert_eq!(
        events_of(&out, AgentEventKind::Started),
        2,
        "the repeated third call is not executed"
    );
    let lines = d.app.audit_lines(&out.run_id).await;
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("runtime:ok")).count(),
        2,
        "{lines:?}"
    );
}
on_both_backends!(repeated_identical_action_is_no_progress);

/// Reordering keys (at every depth) and respelling decimals does not make an action new:
/// a draft proposed three times with shuffled arguments is still caught, and because the
/// runtime hashes the same canonical form, the second proposal is a replay, not a second
/// document.
async fn repeated_action_with_reordered_keys_is_still_detected(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().max_steps(20);
    let mut model = ScriptedModel::new(
        [
            json!({
            "vendor_code": VENDOR, "needed_by": "2026-12-01", "client_ref": "reorder-1",
            "lines": [{"item_code": ITEM, "qty": "24", "uom": "BOX"}]}),
            json!({
            "lines": [{"uom": "BOX", "qty": "24.0", "item_code": ITEM}],
            "client_ref": "reorder-1", "needed_by": "2026-12-01", "vendor_code": VENDOR}),
            json!({
            "client_ref": "reorder-1", "needed_by": "2026-12-01",
            "lines": [{"qty": "24.00", "item_code": ITEM, "uom": "BOX"}], "vendor_code": VENDOR}),
        ]
        .map(|arguments| ModelAction::tool_call(CREATE_PO_DRAFT, arguments)),
    );
    let out = run_as(&agent, MANAGER, &mut model, "Reorder BRG-0042").await;

    assert!(
        matches!(out.status, RunStatus::NoProgress { .. }),
        "{:?}",
        out.status
    );
    let results = results(&out.history);
    assert_eq!(results[0].status, ResultStatus::Ok);
    assert_eq!(results[1].status, ResultStatus::Replayed);
    assert_eq!(d.app.purchase_orders().await.len(), 1, "one document");
}
on_both_backends!(repeated_action_with_reordered_keys_is_still_detected);

/// Each model turn takes 50 simulated seconds; with a 120-second budget the run ends
/// with `timeout` after the third turn and its proposal is not executed.
async fn timeout_with_a_fake_clock(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().timeout(Duration::from_secs(120)).max_steps(50);
    let model_clock = d.clock.clone();
    let mut n = 0;
    let mut model = ScriptedModel::from_fn(move |_, _| {
        model_clock.advance(Duration::from_secs(50));
        n += 1;
        lookup(&format!("V-{n:05}"))
    });
    let out = run_as(&agent, MANAGER, &mut model, "Look around").await;

    assert_eq!(out.status, RunStatus::Timeout);
    assert_eq!(out.steps, 3);
    assert_eq!(out.elapsed, Duration::from_secs(150));
    assert_eq!(
        events_of(&out, AgentEventKind::Started),
        2,
        "the proposal that arrived after the deadline did not run"
    );
}
on_both_backends!(timeout_with_a_fake_clock);

/// A tool call that never returns is bounded too: the call is abandoned at the deadline,
/// its transaction rolls back (no half-written payment request), the audit keeps the
/// attempt, and the model is told the outcome is unknown.
async fn a_hanging_tool_call_is_bounded_by_the_timeout(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let run = new_run();
    advance_when_hanging(&run, &d.clock);
    let agent = d.agent().timeout(Duration::from_secs(60));
    let mut model = ScriptedModel::new([pay(VENDOR_HANGS, "100", "slow-1")]);
    let request = RunRequest::new("Pay the slow vendor").run_id(&run);
    let out = run_request(&agent, MANAGER, &mut model, request).await;

    assert_eq!(out.status, RunStatus::Timeout);
    assert!(
        d.app.payment_requests().await.is_empty(),
        "the abandoned write was rolled back"
    );
    let last = results(&out.history).pop().unwrap();
    assert_eq!(last.status, ResultStatus::InternalError);
    assert!(last.data().contains("not known whether it took effect"));
    let lines = d.app.audit_lines(&out.run_id).await;
    for expected in ["runtime:attempt", "agent:failed"] {
        assert!(
            lines.contains(&format!("{expected}:{CREATE_PAYMENT_REQUEST_DRAFT}")),
            "{lines:?}"
        );
    }
}
on_both_backends!(a_hanging_tool_call_is_bounded_by_the_timeout);

/// The model is offered the registry's tools, filtered by the caller's scopes and
/// rendered for the configured provider.
async fn the_model_sees_only_its_tools_rendered_for_the_target(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().target(Target::Anthropic);
    let mut model = ScriptedModel::from_fn(move |_, tools| {
        let seen: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let pay = tools
            .iter()
            .find(|t| t.name == CREATE_PAYMENT_REQUEST_DRAFT);
        ModelAction::answer(format!(
            "{seen:?} {}",
            pay.map(|p| p.input_schema["required"].to_string())
                .unwrap_or_default()
        ))
    });
    let out = run_as(&agent, ACCOUNTANT, &mut model, "What can you do?").await;
    let answer = out.answer().unwrap();
    assert!(
        answer.starts_with(&format!(
            "[\"{CREATE_PAYMENT_REQUEST_DRAFT}\", \"{GET_PO}\", \"{GET_VENDOR_SUMMARY}\", \
             \"{SEARCH_VENDORS}\"]"
        )),
        "{answer}"
    );
    // Anthropic strict: the optional `note` is left out of `required`.
    assert!(
        answer.ends_with(r#"["vendor_code","amount","client_ref"]"#),
        "{answer}"
    );
}
on_both_backends!(the_model_sees_only_its_tools_rendered_for_the_target);
