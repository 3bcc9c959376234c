//! The distributor asks a person before an overstock: a purchase order line that would
//! take the branch's stock above five times its reorder point stops the agent with
//! `awaiting_input`; nothing is drafted until the person answers. On SQLite and (when
//! `ERP_TOOLS_PG_URL` is set) on PostgreSQL.

mod example;

use example::{app, buying, data, inventory, printing, purchasing};

use std::sync::Arc;

use erp_tools_core::agent::{
    Agent, ModelAction, Policy, ResultStatus, RunStatus, ScriptedModel, last_tool_result,
};
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

const CREATE_PO_DRAFT: &str = "purchasing_create_po_draft";

fn buyer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("7", 1, "SBY-01")
            .scopes(["purchasing:read", "purchasing:draft", "inventory:read"])
            .build(),
    )
}

/// 200 BOX of BRG-0042 (4 800 PCS) for Surabaya, where 780 PCS are on hand and the
/// reorder points add up to 580 PCS.
fn big_order(client_ref: &str) -> Value {
    json!({
        "vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": client_ref,
        "note": "Stock up before the holidays",
        "lines": [{"item_code": "BRG-0042", "qty": "200", "uom": "BOX"}],
    })
}

async fn drafts(t: &TestDb) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM purchase_orders WHERE status = 'draft'")
        .fetch_one(t.db.pool())
        .await
        .unwrap()
}

async fn agent(t: &TestDb) -> Agent {
    app::prepare(&t.db).await.expect("seed the example");
    let registry = Arc::new(app::registry().expect("registry"));
    Agent::new(ToolRuntime::new(registry, t.db.clone()), Policy::new()).unwrap()
}

async fn an_overstock_waits_for_the_person_and_is_drafted_after_order_anyway(t: &TestDb) {
    let agent = agent(t).await;
    let before = drafts(t).await;
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(CREATE_PO_DRAFT, big_order("stock-up-1")),
        ModelAction::answer("Drafted after your confirmation."),
    ]);
    let out = agent
        .run(&buyer(), &mut model, "Stock up on BRG-0042")
        .await;
    let RunStatus::AwaitingInput { input, .. } = &out.status else {
        panic!("expected awaiting_input, got {:?}", out.status);
    };
    assert_eq!(input.key, "overstock_line_1");
    assert_eq!(
        input.choices,
        [purchasing::ORDER_ANYWAY, purchasing::DO_NOT_ORDER]
    );
    assert_eq!(
        input.question,
        "Line 1 orders 200 BOX of BRG-0042, which takes stock in SBY-01 to 5580 PCS, more than \
         5 times its reorder point of 580 PCS. Order it anyway?"
    );
    assert_eq!(
        drafts(t).await,
        before,
        "nothing is drafted before the answer"
    );

    let done = agent
        .answer(
            &buyer(),
            &mut model,
            out.paused().unwrap(),
            purchasing::ORDER_ANYWAY,
        )
        .await
        .unwrap();
    assert_eq!(done.answer(), Some("Drafted after your confirmation."));
    assert_eq!(drafts(t).await, before + 1);
}
on_both_backends!(an_overstock_waits_for_the_person_and_is_drafted_after_order_anyway);

async fn do_not_order_drafts_nothing_and_tells_the_model(t: &TestDb) {
    let agent = agent(t).await;
    let before = drafts(t).await;
    let mut model = ScriptedModel::from_fn(|history, _| match last_tool_result(history) {
        None => ModelAction::tool_call(CREATE_PO_DRAFT, big_order("stock-up-2")),
        Some(r) => {
            assert_eq!(r.status, ResultStatus::ToolError);
            ModelAction::answer(format!("Not ordered: {}", r.data()))
        }
    });
    let out = agent
        .run(&buyer(), &mut model, "Stock up on BRG-0042")
        .await;
    let done = agent
        .answer(
            &buyer(),
            &mut model,
            out.paused().unwrap(),
            purchasing::DO_NOT_ORDER,
        )
        .await
        .unwrap();
    let answer = done.answer().unwrap();
    assert!(
        answer.contains("The person chose not to order line 1 (BRG-0042)"),
        "{answer}"
    );
    assert_eq!(drafts(t).await, before);
}
on_both_backends!(do_not_order_drafts_nothing_and_tells_the_model);
