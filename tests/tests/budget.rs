//! The spend cap: token usage summed per run and per integration, with limits; a run that
//! would pass one stops with `budget_exhausted`, audited, before the model is asked again.

use erp_tools_core::agent::{
    AgentEventKind, Budget, BudgetScope, ModelAction, RunStatus, ScriptedModel, SharedLedger,
    TokenUsage, UsageLedger,
};
use erp_tools_tests::agent::{Deployment, events_of, lookup, run_as};
use erp_tools_tests::app::seed::{VENDOR, VENDOR_OTHER};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::principals::MANAGER;

fn turns() -> ScriptedModel {
    ScriptedModel::new([
        lookup(VENDOR),
        lookup(VENDOR_OTHER),
        lookup("V-00013"),
        ModelAction::answer("done"),
    ])
    .usage_per_call(TokenUsage::new(800, 200))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stops_before_the_turn_that_would_pass_its_limit() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let agent = d.agent().budget(Budget::new().run_limit(2500));
    let mut model = turns();
    let out = run_as(&agent, MANAGER, &mut model, "Look up three vendors").await;
    // Turns of 1000 tokens: after two (2000), a third would make 3000 > 2500.
    assert_eq!(
        out.status,
        RunStatus::BudgetExhausted {
            scope: BudgetScope::Run,
            used: 2000,
            limit: 2500
        }
    );
    assert_eq!(out.status.as_str(), "budget_exhausted");
    assert_eq!(model.calls(), 2, "the model is not asked a third time");
    assert_eq!(out.usage, TokenUsage::new(1600, 400));
    assert_eq!(
        events_of(&out, AgentEventKind::Started),
        2,
        "both proposals still ran"
    );
    let stop = out.audit.last().unwrap();
    assert_eq!(stop.kind, AgentEventKind::Stopped);
    assert!(
        stop.detail
            .as_deref()
            .unwrap()
            .starts_with("budget_exhausted: the run has used 2000 of 2500 tokens"),
        "{stop:?}"
    );
    // Audited in the database too.
    let rows = t.db.audit_log(Some(&out.run_id)).await.unwrap();
    assert!(rows.iter().any(|r| {
        r.outcome == "stopped"
            && r.message
                .as_deref()
                .is_some_and(|m| m.starts_with("budget_exhausted"))
    }));
    // The status survives JSON.
    let json = serde_json::to_value(&out.status).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"status": "budget_exhausted", "scope": "run", "used": 2000, "limit": 2500})
    );
    assert_eq!(
        serde_json::from_value::<RunStatus>(json).unwrap(),
        out.status
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_integration_limit_counts_every_run_that_shares_the_ledger() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let ledger = SharedLedger::new();
    let budget = Budget::new().integration("reorder-bot", 3000, ledger.clone());
    // Two agents of the process, one ledger.
    let first = d.agent().budget(budget.clone());
    let second = d.agent().budget(budget);

    let mut model = ScriptedModel::new([lookup(VENDOR), ModelAction::answer("ok")])
        .usage_per_call(TokenUsage::new(900, 100));
    let out = run_as(&first, MANAGER, &mut model, "Look up a vendor").await;
    assert_eq!(out.answer(), Some("ok"));
    assert_eq!(ledger.used("reorder-bot").await.unwrap(), 2000);

    let mut model = turns();
    let out = run_as(&second, MANAGER, &mut model, "Look up three vendors").await;
    assert_eq!(
        out.status,
        RunStatus::BudgetExhausted {
            scope: BudgetScope::Integration {
                name: "reorder-bot".into()
            },
            used: 3000,
            limit: 3000,
        }
    );
    assert_eq!(model.calls(), 1);
    assert_eq!(out.usage.total(), 1000, "the run's own total");
    assert!(
        out.audit
            .last()
            .unwrap()
            .detail
            .as_deref()
            .unwrap()
            .contains("integration reorder-bot has used 3000 of 3000")
    );

    // Another integration is not affected; a seeded ledger starts from its totals.
    let seeded = SharedLedger::with_totals([("nightly", 4000)]);
    let third = d
        .agent()
        .budget(Budget::new().integration("nightly", 4000, seeded));
    let mut model = turns();
    let out = run_as(&third, MANAGER, &mut model, "Anything").await;
    assert_eq!(out.status.as_str(), "budget_exhausted");
    assert_eq!(model.calls(), 0, "an exhausted integration asks nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_limits_usage_is_still_summed() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let mut model = turns();
    let out = run_as(&d.agent(), MANAGER, &mut model, "Look up three vendors").await;
    assert_eq!(out.answer(), Some("done"));
    assert_eq!(out.usage, TokenUsage::new(3200, 800));
}
