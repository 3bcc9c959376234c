//! The distributor example end to end, through the same pipeline MCP uses, on SQLite and
//! (when `ERP_TOOLS_PG_URL` is set) on PostgreSQL: seeded data, the seeds' unit error,
//! drafts with replay and provenance, branch isolation, scopes, and the safety report.

mod example;

use example::{app, buying, data, inventory, printing, purchasing};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use erp_tools_core::{CallOutcome, Outcome, Principal, Target, ToolCall, ToolRuntime};
use erp_tools_tests::app::{audit_outcomes, expect_outcome, without_replayed};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::exports::checked_export;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

const BUYER: &[&str] = &["purchasing:read", "purchasing:draft", "inventory:read"];
const LIST_BELOW_REORDER: &str = "inventory_list_below_reorder";
const CREATE_PO_DRAFT: &str = "purchasing_create_po_draft";
const GET_PO: &str = "purchasing_get_po";

/// User 7 of `branch` (id `branch_id`) with `scopes`.
fn principal(branch_id: i64, branch: &str, scopes: &[&str]) -> Arc<Principal> {
    Arc::new(
        Principal::builder("7", branch_id, branch)
            .role("buyer")
            .scopes(scopes.iter().copied())
            .build(),
    )
}

/// The example's tools, seeded, on `t`: calls in one agent run, numbered `c1`, `c2`, ...
struct Run {
    rt: ToolRuntime,
    id: &'static str,
    calls: AtomicUsize,
}

impl Run {
    async fn on(t: &TestDb, id: &'static str) -> Run {
        app::prepare(&t.db).await.expect("seed the example");
        let registry = Arc::new(app::registry().expect("registry"));
        Run {
            rt: ToolRuntime::new(registry, t.db.clone()),
            id,
            calls: AtomicUsize::new(0),
        }
    }

    /// Another run on the same tools.
    fn another(&self, id: &'static str) -> Run {
        Run {
            rt: self.rt.clone(),
            id,
            calls: AtomicUsize::new(0),
        }
    }

    /// Calls `tool` with `arguments` as `who`, in this run.
    async fn call(&self, who: &Arc<Principal>, tool: &str, arguments: Value) -> CallOutcome {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall {
            agent_run_id: self.id.into(),
            tool_call_id: format!("c{n}"),
            name: tool.into(),
            arguments,
        };
        self.rt.call(who, call).await.expect("call")
    }

    /// [`Run::call`], asserting that the call ended with `expected`.
    async fn expect(
        &self,
        expected: Outcome,
        who: &Arc<Principal>,
        tool: &str,
        arguments: Value,
    ) -> CallOutcome {
        expect_outcome(self.call(who, tool, arguments).await, expected)
    }
}

async fn count(t: &TestDb, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(t.db.pool())
        .await
        .expect("count")
}

/// Purchase orders drafted in `run`.
async fn drafted_in(t: &TestDb, run: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run = $1")
        .bind(run.to_string())
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

/// The `key` of every object in the list `value`.
fn texts<'a>(value: &'a Value, key: &str) -> Vec<&'a str> {
    let items = value.as_array().expect("a list");
    items.iter().map(|i| i[key].as_str().unwrap()).collect()
}

async fn seeded_reorder_list(t: &TestDb) {
    let run = Run::on(t, "run-r").await;
    let sby = principal(1, "SBY-01", BUYER);
    let out = run
        .expect(Outcome::Ok, &sby, LIST_BELOW_REORDER, json!({}))
        .await;
    let items = &out.structured["items"];
    assert_eq!(texts(items, "item_code"), ["BRG-0042", "BRG-0230"]);
    assert_eq!(texts(items, "warehouse_code"), ["SBY-WH1", "SBY-WH1"]);
    assert_eq!(out.structured["items"][0]["shortfall"], json!("300"));
    assert_eq!(out.structured["next_cursor"], Value::Null);
    assert!(
        out.text.starts_with(
            "inventory_list_below_reorder: items 1 to 2; the last page.\n\
             BRG-0042 Plastic container 500 ml in SBY-WH1: 180 of 480 PCS, short 300 PCS"
        ),
        "{}",
        out.text
    );
    // The same list one item a page: the cursor continues after the warehouse and item.
    let first = run
        .expect(
            Outcome::Ok,
            &sby,
            LIST_BELOW_REORDER,
            json!({"page_size": 1}),
        )
        .await;
    assert_eq!(texts(&first.structured["items"], "item_code"), ["BRG-0042"]);
    let cursor = first.structured["next_cursor"].clone();
    assert!(cursor.is_string(), "{}", first.structured);
    let second = run
        .expect(
            Outcome::Ok,
            &sby,
            LIST_BELOW_REORDER,
            json!({"page_size": 1, "cursor": cursor}),
        )
        .await;
    assert_eq!(
        texts(&second.structured["items"], "item_code"),
        ["BRG-0230"]
    );
    assert_eq!(second.structured["has_more"], false);
    // Jakarta sees its own warehouse only (in a run of its own: runs belong to people).
    let jkt = principal(2, "JKT-01", BUYER);
    let out = run
        .another("run-r-jkt")
        .call(&jkt, LIST_BELOW_REORDER, json!({}))
        .await;
    assert!(
        texts(&out.structured["items"], "warehouse_code")
            .iter()
            .all(|w| *w == "JKT-WH1"),
        "{}",
        out.structured
    );
}
on_both_backends!(
    seeded_reorder_list_is_per_branch,
    super::seeded_reorder_list
);

async fn unit_error_is_the_seeds_text(t: &TestDb) {
    let run = Run::on(t, "run-kg").await;
    let before = count(t, "SELECT COUNT(*) FROM purchase_orders").await;
    let sby = principal(1, "SBY-01", BUYER);
    let out = run
        .expect(
            Outcome::ToolError,
            &sby,
            CREATE_PO_DRAFT,
            draft_args("r-1", "KG"),
        )
        .await;
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
    let run = Run::on(t, "run-d").await;
    let sby = principal(1, "SBY-01", BUYER);
    let first = run
        .expect(Outcome::Ok, &sby, CREATE_PO_DRAFT, draft_args("r-1", "BOX"))
        .await;
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
    let second = run
        .expect(Outcome::Replayed, &sby, CREATE_PO_DRAFT, retry_args)
        .await;
    assert_eq!(second.structured["number"], json!(number));
    assert_eq!(second.structured["replayed"], json!(true));
    assert_eq!(
        without_replayed(&first.structured),
        without_replayed(&second.structured),
        "a replay returns the original result"
    );

    assert_eq!(drafted_in(t, "run-d").await, 1);
    let (status, by): (String, String) = sqlx::query_as(
        "SELECT status, drafted_on_behalf_of FROM purchase_orders WHERE drafted_by_agent_run = 'run-d'",
    )
    .fetch_one(t.db.pool())
    .await
    .expect("provenance");
    assert_eq!((status.as_str(), by.as_str()), ("draft", "7"));
    assert_eq!(
        audit_outcomes(&t.db, Some("run-d")).await,
        ["ok", "replayed"]
    );

    // The new draft is readable by number, in its branch only.
    let got = run
        .expect(Outcome::Ok, &sby, GET_PO, json!({ "number": number }))
        .await;
    assert_eq!(got.structured["drafted_by_agent_run"], json!("run-d"));
}
on_both_backends!(
    draft_replay_provenance,
    super::draft_is_priced_replayed_and_carries_provenance
);

async fn other_branch_looks_like_nothing(t: &TestDb) {
    let run = Run::on(t, "run-b").await;
    let sby = principal(1, "SBY-01", BUYER);
    // PO-2026-0041 exists, in JKT-01 only.
    let hidden = run
        .call(&sby, GET_PO, json!({"number": "PO-2026-0041"}))
        .await;
    let missing = run
        .call(&sby, GET_PO, json!({"number": "PO-2026-9999"}))
        .await;
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
    // In Jakarta (a run of its own: runs belong to people) it is there.
    let jkt = principal(2, "JKT-01", BUYER);
    let visible = run
        .another("run-b-jkt")
        .expect(Outcome::Ok, &jkt, GET_PO, json!({"number": "PO-2026-0041"}))
        .await;
    assert_eq!(
        visible.structured["lines"][0]["item_code"],
        json!("BRG-0230")
    );
}
on_both_backends!(branch_isolation, super::other_branch_looks_like_nothing);

async fn warehouse_user_cannot_draft(t: &TestDb) {
    let run = Run::on(t, "run-w").await;
    let warehouse = principal(1, "SBY-01", &["inventory:read"]);
    let out = run
        .expect(
            Outcome::Denied,
            &warehouse,
            CREATE_PO_DRAFT,
            draft_args("r-1", "BOX"),
        )
        .await;
    assert!(out.text.contains("purchasing:draft"), "{}", out.text);
    assert_eq!(drafted_in(t, "run-w").await, 0);
    assert_eq!(audit_outcomes(&t.db, Some("run-w")).await, ["denied"]);
    let visible: Vec<&str> = run
        .rt
        .registry()
        .list_for(&warehouse)
        .map(|tool| tool.name())
        .collect();
    assert_eq!(visible, ["inventory_get_stock", LIST_BELOW_REORDER]);
}
on_both_backends!(warehouse_denied, super::warehouse_user_cannot_draft);

async fn vendor_note_is_returned_as_data(t: &TestDb) {
    let run = Run::on(t, "run-n").await;
    let sby = principal(1, "SBY-01", BUYER);
    let summary = json!({"vendor_code": "V-00458"});
    let out = run
        .expect(Outcome::Ok, &sby, "purchasing_get_vendor_summary", summary)
        .await;
    assert!(
        out.structured["vendor_note"]
            .as_str()
            .unwrap()
            .contains("ignore previous instructions")
    );
    // Open orders are the caller's branch only: PO-2026-0041 (JKT-01) is not listed.
    assert_eq!(
        texts(&out.structured["open_pos"], "number"),
        ["PO-2026-0040"]
    );
}
on_both_backends!(vendor_note_as_data, super::vendor_note_is_returned_as_data);

#[test]
fn every_tool_passes_the_safety_report_and_exports_are_strict() {
    let registry = app::registry().expect("registry");
    let report = erp_tools_core::report::SurfaceReport::new(&registry);
    assert!(report.all_pass(), "{}", report.to_table());
    assert_eq!(report.tools.len(), 9);
    for target in [Target::OpenAi, Target::Anthropic] {
        checked_export(&registry, target, None);
    }
}
