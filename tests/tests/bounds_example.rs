//! The distributor example's declared bounds (`qty` more than 0 and at most 10000, 1 to 50
//! lines): stated in every provider's schema, accepted by the strict checkers, enforced by
//! the pipeline with the fix in the message; and the example's input schemas as the fuzz
//! crate (`tests/fuzz`) declares them.
//!
//! After an intended change to the example's argument types, regenerate
//! `tests/fuzz/example_schemas.json` with `ERP_TOOLS_BLESS=1 cargo test -p erp-tools-tests
//! --test bounds_example` and update `tests/fuzz/src/example_args.rs` to match.

#[allow(dead_code)]
#[path = "../../examples/distributor/app.rs"]
mod app;
#[allow(dead_code)]
#[path = "../../examples/distributor/buying.rs"]
mod buying;
#[allow(dead_code)]
#[path = "../../examples/distributor/data.rs"]
mod data;
#[path = "../../examples/distributor/inventory.rs"]
mod inventory;
#[path = "../../examples/distributor/printing.rs"]
mod printing;
#[path = "../../examples/distributor/purchasing.rs"]
mod purchasing;

use std::sync::Arc;

use erp_tools_core::{Outcome, Principal, Target, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::exports::checked_export;
use erp_tools_tests::on_both_backends;
use serde_json::{Map, Value, json};

const DRAFT: &str = "purchasing_create_po_draft";

fn input_schemas() -> Value {
    let registry = app::registry().expect("registry");
    let mut out = Map::new();
    for tool in registry.tools() {
        if tool.def().name() == "inventory_list_below_reorder" {
            continue;
        }
        out.insert(
            tool.def().name().to_string(),
            tool.schema().render(Target::Mcp),
        );
    }
    Value::Object(out)
}

#[test]
fn the_fuzz_crate_declares_the_example_schemas() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/example_schemas.json");
    let actual = input_schemas();
    if std::env::var_os("ERP_TOOLS_BLESS").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&actual).unwrap() + "\n").unwrap();
    }
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("committed")).expect("json");
    assert_eq!(
        actual, committed,
        "regenerate with ERP_TOOLS_BLESS=1 and update tests/fuzz"
    );
}

#[test]
fn bounds_are_stated_for_every_provider() {
    let registry = app::registry().expect("registry");
    for target in Target::ALL {
        let export = checked_export(&registry, target, None).to_string();
        assert!(
            export.contains("more than 0 and at most 10000"),
            "{target:?}: {export}"
        );
        assert!(export.contains("1 to 50 items"), "{target:?}");
    }
}

fn buyer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("7", 1, "SBY-01")
            .scopes(["purchasing:read", "purchasing:draft"])
            .build(),
    )
}

fn order(qty: Value, lines: usize, client_ref: &str) -> Value {
    let line = json!({"item_code": "BRG-0042", "qty": qty, "uom": "BOX"});
    json!({
        "vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": client_ref,
        "note": null, "lines": vec![line; lines],
    })
}

/// Marks a case the bounds let through to the tool, which then asks a person.
const ASKS: &str = "<the tool asks a person>";

async fn bounds_are_enforced_with_the_fix(t: &TestDb) {
    app::prepare(&t.db).await.expect("seed");
    let rt = ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone());
    let run = erp_tools_tests::ids::new_run();
    let who = buyer();
    let cases = [
        (
            order(json!("0"), 1, "b1"),
            Some(
                "`lines[0].qty`: 0 is not allowed here; send a value more than 0 and at most 10000",
            ),
        ),
        (order(json!(-3), 1, "b2"), Some("-3 is not allowed here")),
        (
            order(json!("10000.5"), 1, "b3"),
            Some("10000.5 is not allowed here"),
        ),
        (
            order(json!("1"), 0, "b4"),
            Some("`lines`: 0 items, but 1 to 50 items are allowed"),
        ),
        (
            order(json!("1"), 51, "b5"),
            Some("51 items, but 1 to 50 items are allowed"),
        ),
        // At the bound: accepted by validation and handed to the tool, whose overstock rule
        // then asks the person (10000 boxes is far above the branch's reorder point).
        (order(json!("10000"), 1, "b6"), Some(ASKS)),
        (order(json!(0.5), 1, "b7"), None),
    ];
    for (i, (arguments, refusal)) in cases.into_iter().enumerate() {
        let out = rt
            .call(
                &who,
                ToolCall {
                    agent_run_id: run.clone(),
                    tool_call_id: format!("b{i}"),
                    name: DRAFT.into(),
                    arguments,
                },
            )
            .await
            .unwrap();
        match refusal {
            Some(ASKS) => {
                assert_eq!(out.outcome, Outcome::ToolError, "{}", out.text);
                assert!(out.text.contains("A person must decide"), "{}", out.text);
                assert!(!out.text.contains("is not allowed here"), "{}", out.text);
            }
            Some(says) => {
                assert_eq!(out.outcome, Outcome::ToolError, "{}", out.text);
                assert!(out.text.contains(says), "{}", out.text);
                assert!(out.text.contains("No draft was created"), "{}", out.text);
            }
            None => assert_eq!(out.outcome, Outcome::Ok, "{}", out.text),
        }
    }
    let drafted: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run = $1")
            .bind(run)
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    assert_eq!(drafted, 1, "only the order of 0.5 box is drafted");
}

on_both_backends!(bounds_are_enforced_with_the_fix);
