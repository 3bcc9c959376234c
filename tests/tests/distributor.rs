//! The distributor example end to end, through the same pipeline MCP uses, on SQLite and
//! (when `ERP_TOOLS_PG_URL` is set) on PostgreSQL: seeded data, the seeds' unit error,
//! drafts with replay and provenance, branch isolation, scopes, and the safety report.

// `open_db` and `branch_id` serve the binary only.
#[allow(dead_code)]
#[path = "../../examples/distributor/app.rs"]
mod app;
#[allow(dead_code)]
#[path = "../../examples/distributor/data.rs"]
mod data;
#[path = "../../examples/distributor/inventory.rs"]
mod inventory;
#[path = "../../examples/distributor/purchasing.rs"]
mod purchasing;

use std::sync::Arc;

use erp_tools_core::{Outcome, Principal, Target, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

const BUYER: &[&str] = &["purchasing:read", "purchasing:draft", "inventory:read"];

fn principal(branch_id: i64, branch: &str, scopes: &[&str]) -> Arc<Principal> {
    Arc::new(
        Principal::builder("7", branch_id, branch)
            .role("buyer")
            .scopes(scopes.iter().copied())
            .build(),
    )
}

async fn runtime(t: &TestDb) -> ToolRuntime {
    app::prepare(&t.db).await.expect("seed the example");
    ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone())
}

fn call(run: &str, id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        agent_run_id: run.into(),
        tool_call_id: id.into(),
        name: name.into(),
        arguments,
    }
}

async fn count(t: &TestDb, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(t.db.pool())
        .await
        .expect("count")
}

fn draft_args(client_ref: &str, uom: &str) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2030-01-15",
        "client_ref": client_ref,
        "note": "Below reorder point in SBY-WH1",
        "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": uom}],
    })
}

async fn seeded_reorder_list(t: &TestDb) {
    let rt = runtime(t).await;
    let sby = principal(1, "SBY-01", BUYER);
    let out = rt
        .call(
            &sby,
            call("run-r", "c1", "inventory_list_below_reorder", json!({})),
        )
        .await
        .expect("call");
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    let items: Vec<(String, String)> = out.structured["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["item_code"].as_str().unwrap().to_string(),
                i["warehouse_code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            ("BRG-0042".to_string(), "SBY-WH1".to_string()),
            ("BRG-0230".to_string(), "SBY-WH1".to_string()),
        ]
    );
    assert_eq!(out.structured["items"][0]["shortfall"], json!("300"));
    // Jakarta sees its own warehouse only.
    let jkt = principal(2, "JKT-01", BUYER);
    let out = rt
        .call(
            &jkt,
            call("run-r", "c2", "inventory_list_below_reorder", json!({})),
        )
        .await
        .expect("call");
    assert!(
        out.structured["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["warehouse_code"] == json!("JKT-WH1")),
        "{}",
        out.structured
    );
}
on_both_backends!(
    seeded_reorder_list_is_per_branch,
    super::seeded_reorder_list
);

async fn unit_error_is_the_seeds_text(t: &TestDb) {
    let rt = runtime(t).await;
    let before = count(t, "SELECT COUNT(*) FROM purchase_orders").await;
    let out = rt
        .call(
            &principal(1, "SBY-01", BUYER),
            call(
                "run-kg",
                "c1",
                "purchasing_create_po_draft",
                draft_args("r-1", "KG"),
            ),
        )
        .await
        .expect("call");
    assert_eq!(out.outcome, Outcome::ToolError);
    assert_eq!(
        out.text,
        "Item BRG-0042 is not stocked in KG. Allowed units for BRG-0042: PCS, BOX \
         (1 BOX = 24 PCS). Resend the line with uom PCS or BOX. No draft was created."
    );
    assert_eq!(
        count(t, "SELECT COUNT(*) FROM purchase_orders").await,
        before
    );
    assert_eq!(
        count(t, "SELECT COUNT(*) FROM erp_idempotency_keys").await,
        0
    );
}
on_both_backends!(unit_error, super::unit_error_is_the_seeds_text);

async fn draft_is_priced_replayed_and_carries_provenance(t: &TestDb) {
    let rt = runtime(t).await;
    let sby = principal(1, "SBY-01", BUYER);
    let first = rt
        .call(
            &sby,
            call(
                "run-d",
                "c1",
                "purchasing_create_po_draft",
                draft_args("r-1", "BOX"),
            ),
        )
        .await
        .expect("call");
    assert_eq!(first.outcome, Outcome::Ok, "{}", first.text);
    let s = &first.structured;
    assert_eq!(s["status"], json!("draft"));
    assert_eq!(s["branch"], json!("SBY-01"));
    assert_eq!(s["lines"][0]["unit_price"], json!("42000"));
    assert_eq!(s["total"], json!("840000"));
    assert_eq!(s["replayed"], json!(false));
    let number = s["number"].as_str().expect("number").to_string();

    // The retry, with keys in another order and the quantity written differently.
    let retry_args = json!({
        "lines": [{"uom": "BOX", "qty": "20.00", "item_code": "BRG-0042"}],
        "note": "Below reorder point in SBY-WH1",
        "client_ref": "r-1",
        "needed_by": "2030-01-15",
        "vendor_code": "V-00231",
    });
    let second = rt
        .call(
            &sby,
            call("run-d", "c2", "purchasing_create_po_draft", retry_args),
        )
        .await
        .expect("call");
    assert_eq!(second.outcome, Outcome::Replayed, "{}", second.text);
    assert_eq!(second.structured["number"], json!(number));
    assert_eq!(second.structured["replayed"], json!(true));
    let mut a = first.structured.clone();
    let mut b = second.structured.clone();
    a.as_object_mut().unwrap().remove("replayed");
    b.as_object_mut().unwrap().remove("replayed");
    assert_eq!(a, b, "a replay returns the original result");

    assert_eq!(
        count(
            t,
            "SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run = 'run-d'"
        )
        .await,
        1
    );
    let (status, by): (String, String) = sqlx::query_as(
        "SELECT status, drafted_on_behalf_of FROM purchase_orders WHERE drafted_by_agent_run = 'run-d'",
    )
    .fetch_one(t.db.pool())
    .await
    .expect("provenance");
    assert_eq!((status.as_str(), by.as_str()), ("draft", "7"));
    let outcomes: Vec<String> =
        t.db.audit_log(Some("run-d"))
            .await
            .expect("audit")
            .into_iter()
            .map(|r| r.outcome)
            .collect();
    assert_eq!(outcomes, ["ok", "replayed"]);

    // The new draft is readable by number, in its branch only.
    let got = rt
        .call(
            &sby,
            call(
                "run-d",
                "c3",
                "purchasing_get_po",
                json!({ "number": number }),
            ),
        )
        .await
        .expect("call");
    assert_eq!(got.outcome, Outcome::Ok, "{}", got.text);
    assert_eq!(got.structured["drafted_by_agent_run"], json!("run-d"));
}
on_both_backends!(
    draft_replay_provenance,
    super::draft_is_priced_replayed_and_carries_provenance
);

async fn other_branch_looks_like_nothing(t: &TestDb) {
    let rt = runtime(t).await;
    let sby = principal(1, "SBY-01", BUYER);
    // PO-2026-0041 exists, in JKT-01 only.
    let hidden = rt
        .call(
            &sby,
            call(
                "run-b",
                "c1",
                "purchasing_get_po",
                json!({"number": "PO-2026-0041"}),
            ),
        )
        .await
        .expect("call");
    let missing = rt
        .call(
            &sby,
            call(
                "run-b",
                "c2",
                "purchasing_get_po",
                json!({"number": "PO-2026-9999"}),
            ),
        )
        .await
        .expect("call");
    assert_eq!(hidden.outcome, Outcome::ToolError);
    assert_eq!(
        hidden.text.replace("PO-2026-0041", "N"),
        missing.text.replace("PO-2026-9999", "N")
    );
    assert!(
        hidden.text.contains("purchasing_search_pos"),
        "{}",
        hidden.text
    );
    let jkt = principal(2, "JKT-01", BUYER);
    let visible = rt
        .call(
            &jkt,
            call(
                "run-b",
                "c3",
                "purchasing_get_po",
                json!({"number": "PO-2026-0041"}),
            ),
        )
        .await
        .expect("call");
    assert_eq!(visible.outcome, Outcome::Ok, "{}", visible.text);
    assert_eq!(
        visible.structured["lines"][0]["item_code"],
        json!("BRG-0230")
    );
}
on_both_backends!(branch_isolation, super::other_branch_looks_like_nothing);

async fn warehouse_user_cannot_draft(t: &TestDb) {
    let rt = runtime(t).await;
    let warehouse = principal(1, "SBY-01", &["inventory:read"]);
    let out = rt
        .call(
            &warehouse,
            call(
                "run-w",
                "c1",
                "purchasing_create_po_draft",
                draft_args("r-1", "BOX"),
            ),
        )
        .await
        .expect("call");
    assert_eq!(out.outcome, Outcome::Denied);
    assert!(out.text.contains("purchasing:draft"), "{}", out.text);
    assert_eq!(
        count(
            t,
            "SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run = 'run-w'"
        )
        .await,
        0
    );
    let audit = t.db.audit_log(Some("run-w")).await.expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].outcome, "denied");
    let visible: Vec<&str> = rt
        .registry()
        .list_for(&warehouse)
        .map(|tool| tool.name())
        .collect();
    assert_eq!(
        visible,
        ["inventory_get_stock", "inventory_list_below_reorder"]
    );
}
on_both_backends!(warehouse_denied, super::warehouse_user_cannot_draft);

async fn vendor_note_is_returned_as_data(t: &TestDb) {
    let rt = runtime(t).await;
    let out = rt
        .call(
            &principal(1, "SBY-01", BUYER),
            call(
                "run-n",
                "c1",
                "purchasing_get_vendor_summary",
                json!({"vendor_code": "V-00458"}),
            ),
        )
        .await
        .expect("call");
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    assert!(
        out.structured["vendor_note"]
            .as_str()
            .unwrap()
            .contains("ignore previous instructions")
    );
    // Open orders are the caller's branch only: PO-2026-0041 (JKT-01) is not listed.
    let open: Vec<&str> = out.structured["open_pos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["number"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["PO-2026-0040"]);
}
on_both_backends!(vendor_note_as_data, super::vendor_note_is_returned_as_data);

#[test]
fn every_tool_passes_the_safety_report_and_exports_are_strict() {
    let registry = app::registry().expect("registry");
    let report = erp_tools_core::SurfaceReport::new(&registry);
    assert!(report.all_pass(), "{}", report.to_table());
    assert_eq!(report.tools.len(), 7);
    for (target, export) in [
        (Target::OpenAi, erp_tools_core::openai_tools(&registry)),
        (
            Target::Anthropic,
            erp_tools_core::anthropic_tools(&registry),
        ),
    ] {
        let problems = erp_tools_core::check_export(&export, target);
        assert!(problems.is_empty(), "{target:?}: {problems:?}");
    }
}
