//! Idempotency of draft calls (SPEC R4, R5): replay, mismatch, canonical hashing,
//! concurrent duplicates (one pool and two "server processes"), and rollback of failed
//! writes. Each scenario runs on SQLite and, with `ERP_TOOLS_PG_URL`, on PostgreSQL.

use std::sync::Arc;

use erp_tools_core::{CallOutcome, Outcome};
use erp_tools_tests::app::arguments::po_draft;
use erp_tools_tests::app::faults::{
    VENDOR_FAILS_AFTER_INSERT, VENDOR_HANGS, VENDOR_PANICS_AFTER_INSERT,
};
use erp_tools_tests::app::seed::{ITEM, ITEM_BY_WEIGHT, VENDOR};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Session, Table, handler_calls_for, without_replayed};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, OTHER_BRANCH_BUYER, SBY};
use serde_json::{Value, json};

/// How many duplicates the concurrency scenarios send at once.
const AT_ONCE: usize = 50;

/// [`AT_ONCE`] purchase order drafts of the buyer in `run`, sent at the same time: the
/// `i`th to `apps[i % apps.len()]`, with the client_ref `client_ref(i)`.
async fn all_at_once(
    apps: &[Arc<App>],
    run: &str,
    client_ref: impl Fn(usize) -> String,
) -> Vec<CallOutcome> {
    let who = BUYER.shared();
    let tasks: Vec<_> = (0..AT_ONCE)
        .map(|i| {
            let (app, who, run) = (apps[i % apps.len()].clone(), who.clone(), run.to_string());
            let arguments = po_draft(&client_ref(i));
            tokio::spawn(async move { app.call(&who, &run, CREATE_PO_DRAFT, arguments).await })
        })
        .collect();
    futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|r| r.expect("task"))
        .collect()
}

/// Asserts that exactly one of `results` created the draft and every other one replayed it.
fn assert_one_created_the_rest_replayed(results: &[CallOutcome]) {
    let ok = results.iter().filter(|r| r.outcome == Outcome::Ok).count();
    let replayed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Replayed)
        .count();
    assert_eq!(
        (ok, replayed),
        (1, AT_ONCE - 1),
        "{:?}",
        results.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
}

async fn replay(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;

    let first = buyer.create_po(po_draft("R-1")).await;
    assert_eq!(first.structured["replayed"], false);
    assert_eq!(first.structured["status"], "draft");
    assert_eq!(first.structured["total_qty"], "34.5");
    let doc = first.document.clone().expect("document recorded");
    assert_eq!(doc.doc_type, "purchase_order");
    assert!(
        first
            .text
            .starts_with(&format!("Created draft purchase order {}.", doc.number)),
        "{}",
        first.text
    );

    let second = buyer.call(CREATE_PO_DRAFT, po_draft("R-1")).await;
    assert_eq!(second.outcome, Outcome::Replayed, "{}", second.text);
    assert!(!second.is_error());
    assert_eq!(second.structured["replayed"], true);
    assert_eq!(
        without_replayed(&first.structured),
        without_replayed(&second.structured)
    );
    assert_eq!(second.document.as_ref(), Some(&doc));
    assert!(
        second.text.contains("no new draft was created"),
        "{}",
        second.text
    );

    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 1);
    assert_eq!(buyer.app.count(Table::PoLines).await, 2);
    assert_eq!(buyer.app.count(Table::IdempotencyKeys).await, 1);
    assert_eq!(handler_calls_for(&buyer.run), 1, "the handler ran once");

    let log = buyer.app.audit(&buyer.run).await;
    let outcomes: Vec<&str> = log.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["ok", "replayed"]);
    for row in &log {
        assert_eq!(row.source, "runtime");
        assert_eq!(row.tool_name.as_deref(), Some(CREATE_PO_DRAFT));
        assert_eq!(row.user_id, BUYER.user_id);
        assert_eq!(row.branch_id, Some(SBY.id));
        assert_eq!(row.branch_code.as_deref(), Some("SBY-01"));
        assert_eq!(row.model.as_deref(), Some("test-model"));
        assert_eq!(row.prompt_version.as_deref(), Some("p-3"));
        assert_eq!(row.document.as_ref(), Some(&doc));
        assert_eq!(row.arguments_json(), Some(po_draft("R-1")));
        assert!(row.finished_at.is_some());
    }
    assert_ne!(log[0].tool_call_id, log[1].tool_call_id);

    // The document carries its provenance.
    let view = buyer.call(GET_PO, json!({"number": doc.number})).await;
    assert_eq!(view.outcome, Outcome::Ok, "{}", view.text);
    assert_eq!(view.structured["drafted_by_agent_run"], buyer.run.as_str());
    assert_eq!(view.structured["drafted_on_behalf_of"], BUYER.user_id);
    assert_eq!(view.structured["status"], "draft");

    // Keys are scoped to the run: another run may use the same client_ref.
    let other_run = buyer.app.session(BUYER);
    let third = other_run.create_po(po_draft("R-1")).await;
    assert_ne!(third.document.as_ref().unwrap().number, doc.number);
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 2);
}
on_both_backends!(replay_returns_the_original_result, crate::replay);

async fn mismatch(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;

    let first = buyer.create_po(po_draft("R-1")).await;
    let number = first.document.unwrap().number;

    let mut changed = po_draft("R-1");
    changed["lines"][0]["qty"] = json!("48");
    let second = buyer.call(CREATE_PO_DRAFT, changed).await;
    assert_eq!(second.outcome, Outcome::ToolError);
    assert!(second.is_error());
    assert_eq!(second.structured["error"], "idempotency_mismatch");
    assert_eq!(
        second.text,
        format!(
            "client_ref R-1 was already used in this run for a different purchase order \
             ({number}). Use a new client_ref for a new draft, or resend the original \
             arguments to get the original result. No draft was created."
        )
    );
    assert!(second.document.is_none());
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 1);
    assert_eq!(buyer.app.count(Table::PoLines).await, 2);

    // Another user reusing the run id and client_ref is refused: the run is not theirs,
    // and they learn nothing about the document.
    let third = buyer
        .app
        .call(
            &OTHER_BRANCH_BUYER.shared(),
            &buyer.run,
            CREATE_PO_DRAFT,
            po_draft("R-1"),
        )
        .await;
    assert_eq!(third.outcome, Outcome::Denied);
    assert!(
        third.text.contains("belongs to another person"),
        "{}",
        third.text
    );
    assert!(!third.text.contains(&number), "{}", third.text);
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 1);
    assert_eq!(handler_calls_for(&buyer.run), 1);

    assert_eq!(
        buyer.app.outcomes(&buyer.run).await,
        ["ok", "tool_error", "denied"]
    );
}
on_both_backends!(mismatch_is_a_tool_error_and_writes_nothing, crate::mismatch);

async fn key_order(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;

    let first = buyer.create_po(po_draft("R-1")).await;

    // Same request: keys in another order, decimals written differently.
    let reordered = json!({
        "lines": [{"uom": "BOX", "qty": "24.00", "item_code": ITEM},
                  {"qty": "10.5", "uom": "KG", "item_code": ITEM_BY_WEIGHT}],
        "note": "restock before the holidays", "client_ref": "R-1",
        "needed_by": "2026-12-01", "vendor_code": VENDOR});
    let second = buyer.call(CREATE_PO_DRAFT, reordered).await;
    assert_eq!(second.outcome, Outcome::Replayed, "{}", second.text);
    assert_eq!(second.document, first.document);

    // An absent optional field is the same as null.
    let mut with_null = po_draft("R-2");
    with_null["note"] = Value::Null;
    buyer.create_po(with_null).await;
    let mut absent = po_draft("R-2");
    absent.as_object_mut().unwrap().remove("note");
    let fourth = buyer.call(CREATE_PO_DRAFT, absent).await;
    assert_eq!(fourth.outcome, Outcome::Replayed, "{}", fourth.text);

    // Line order is part of the request.
    let mut swapped = po_draft("R-1");
    let lines = swapped["lines"].as_array_mut().unwrap();
    lines.swap(0, 1);
    let fifth = buyer.call(CREATE_PO_DRAFT, swapped).await;
    assert_eq!(fifth.outcome, Outcome::ToolError, "{}", fifth.text);

    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 2);
    assert_eq!(handler_calls_for(&buyer.run), 2);
}
on_both_backends!(key_order_and_decimal_form_do_not_matter, crate::key_order);

async fn concurrent_duplicates(t: &TestDb) {
    let app = Arc::new(App::new(&t.db).await);
    let run = new_run();

    let results = all_at_once(std::slice::from_ref(&app), &run, |_| "R-1".into()).await;
    assert_one_created_the_rest_replayed(&results);
    let expected = without_replayed(&results[0].structured);
    for r in &results {
        assert_eq!(without_replayed(&r.structured), expected);
        assert_eq!(r.document, results[0].document);
    }
    assert_eq!(app.count(Table::PurchaseOrders).await, 1);
    assert_eq!(app.count(Table::PoLines).await, 2);
    assert_eq!(app.count(Table::IdempotencyKeys).await, 1);
    assert_eq!(handler_calls_for(&run), 1);
    let outcomes = app.outcomes(&run).await;
    assert_eq!(outcomes.len(), AT_ONCE);
    assert_eq!(outcomes.iter().filter(|o| *o == "ok").count(), 1);
    assert_eq!(
        outcomes.iter().filter(|o| *o == "replayed").count(),
        AT_ONCE - 1
    );

    // Distinct client_refs: one document each.
    let results = all_at_once(std::slice::from_ref(&app), &new_run(), |i| format!("R-{i}")).await;
    assert!(
        results.iter().all(|r| r.outcome == Outcome::Ok),
        "{:?}",
        results.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    let mut numbers: Vec<_> = results
        .iter()
        .map(|r| r.document.clone().unwrap().number)
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), AT_ONCE);
    assert_eq!(app.count(Table::PurchaseOrders).await, 51);
    assert_eq!(app.count(Table::IdempotencyKeys).await, 51);
}
on_both_backends!(
    concurrent_duplicates_create_one_document,
    crate::concurrent_duplicates
);

async fn two_processes(t: &TestDb) {
    // Two independent `Database`s on one store, as two server processes would have.
    let a = Arc::new(App::new(&t.db).await);
    let b = Arc::new(App::new(&t.open_again().await).await);
    let run = new_run();
    let results = all_at_once(&[a.clone(), b.clone()], &run, |_| "R-1".into()).await;
    assert_one_created_the_rest_replayed(&results);
    assert_eq!(a.count(Table::PurchaseOrders).await, 1);
    assert_eq!(b.count(Table::PurchaseOrders).await, 1);
    assert_eq!(handler_calls_for(&run), 1);
}
on_both_backends!(
    duplicates_across_two_server_processes_create_one_document,
    crate::two_processes
);

async fn crash(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;

    let mut failing = po_draft("R-1");
    failing["vendor_code"] = json!(VENDOR_FAILS_AFTER_INSERT);
    let out = buyer.call(CREATE_PO_DRAFT, failing).await;
    assert_eq!(out.outcome, Outcome::ToolError);
    assert_eq!(
        out.text,
        "Vendor V-FAIL is blocked for new orders. No draft was created."
    );
    assert_eq!(out.structured["error"], "rejected");
    assert!(out.document.is_none());

    let mut panicking = po_draft("R-2");
    panicking["vendor_code"] = json!(VENDOR_PANICS_AFTER_INSERT);
    let out = buyer.call(CREATE_PO_DRAFT, panicking).await;
    assert_eq!(out.outcome, Outcome::ToolError);
    assert_eq!(out.structured["error"], "internal");
    assert!(out.text.ends_with("No draft was created."), "{}", out.text);
    assert!(
        !out.text.contains("simulated crash"),
        "internal detail stays out of the model's text: {}",
        out.text
    );

    // Nothing of either attempt persisted: no order, no line, no key.
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 0);
    assert_eq!(buyer.app.count(Table::PoLines).await, 0);
    assert_eq!(buyer.app.count(Table::IdempotencyKeys).await, 0);

    let log = buyer.app.audit(&buyer.run).await;
    let outcomes: Vec<&str> = log.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["tool_error", "tool_error"]);
    assert!(log[0].message.as_deref().unwrap().contains("blocked"));
    assert!(
        log[1]
            .message
            .as_deref()
            .unwrap()
            .contains("simulated crash"),
        "the audit row keeps the internal detail: {:?}",
        log[1].message
    );
    assert!(log.iter().all(|r| r.document.is_none()));

    // A retry with the same client_refs succeeds: the failed calls claimed nothing.
    buyer.create_po(po_draft("R-1")).await;
    buyer.create_po(po_draft("R-2")).await;
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 2);
    assert_eq!(buyer.app.count(Table::PoLines).await, 4);
    assert_eq!(buyer.app.count(Table::IdempotencyKeys).await, 2);
}
on_both_backends!(failed_write_leaves_nothing_and_retry_succeeds, crate::crash);

async fn cancelled(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;
    let mut hanging = po_draft("R-1");
    hanging["vendor_code"] = json!(VENDOR_HANGS);
    // The caller gives up while the handler is inside its transaction (a dropped
    // connection, a killed process): nothing commits, but the attempt is on record.
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        buyer.call(CREATE_PO_DRAFT, hanging),
    )
    .await;
    assert!(gave_up.is_err(), "the handler hangs until cancelled");
    assert_eq!(handler_calls_for(&buyer.run), 1);

    let log = buyer.app.audit(&buyer.run).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, "attempt");
    assert!(log[0].finished_at.is_none());
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 0);
    assert_eq!(buyer.app.count(Table::IdempotencyKeys).await, 0);

    // The retry is not blocked by the abandoned attempt.
    buyer.create_po(po_draft("R-1")).await;
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 1);
}
on_both_backends!(
    abandoned_call_leaves_an_attempt_and_no_write,
    crate::cancelled
);
