//! Malformed payloads against the distributor example's tools, table-driven: wrong
//! types, sizes, unicode and control characters, deep nesting, huge and exponent numbers,
//! nulls in required fields, unknown and forbidden fields, limits bypassed with negative
//! lines. Each one is a clean tool error, writes nothing but exactly one finished audit row
//! of bounded size, and leaves the server answering; raw JSON-RPC bodies (a BOM, duplicate
//! keys, truncated JSON, nesting 100 000 deep, a 3 MB id) are answered without a crash.
//!
//! The figures (how many payloads) are printed and recorded in RELIABILITY.md.

mod example;

use example::{app, buying, data, inventory, printing, purchasing};

use std::sync::Arc;

use erp_tools_core::{Outcome, Principal, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

const DRAFT: &str = "purchasing_create_po_draft";
const GET_PO: &str = "purchasing_get_po";
const SEARCH_VENDORS: &str = "purchasing_search_vendors";
const VENDOR_SUMMARY: &str = "purchasing_get_vendor_summary";
const SEARCH_POS: &str = "purchasing_search_pos";
const GET_STOCK: &str = "inventory_get_stock";

/// Longest text or audit message a refusal may produce (the cap plus the digest).
const MAX_TEXT: usize = 16 * 1024 + 64;

fn buyer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("7", 1, "SBY-01")
            .role("buyer")
            .scopes(["purchasing:read", "purchasing:draft", "inventory:read"])
            .build(),
    )
}

fn valid_draft() -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2030-01-15",
        "client_ref": "bad-1",
        "note": "Below reorder point",
        "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": "BOX"}],
    })
}

/// `valid_draft()` with `edit` applied.
fn draft(edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = valid_draft();
    edit(&mut v);
    v
}

fn line(edit: impl FnOnce(&mut Value)) -> Value {
    draft(|v| edit(&mut v["lines"][0]))
}

fn nested(depth: usize) -> Value {
    let mut v = json!("deep");
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

fn many_unknown(n: usize, len: usize) -> Value {
    let mut v = valid_draft();
    for i in 0..n {
        v[format!("{i}{}", "k".repeat(len))] = json!(1);
    }
    v
}

/// The payloads collected so far: (what, tool, arguments).
#[derive(Default)]
struct Payloads(Vec<(String, &'static str, Value)>);

impl Payloads {
    fn add(&mut self, what: &str, tool: &'static str, arguments: Value) {
        self.0.push((what.into(), tool, arguments));
    }

    /// One payload for `tool` per case.
    fn each<const N: usize>(&mut self, tool: &'static str, cases: [(&str, Value); N]) {
        for (what, v) in cases {
            self.add(what, tool, v);
        }
    }

    /// `valid_draft()` with `field` set to each case's value.
    fn draft_fields<const N: usize>(&mut self, field: &str, cases: [(&str, Value); N]) {
        for (what, v) in cases {
            self.add(what, DRAFT, draft(|d| d[field] = v));
        }
    }

    /// `valid_draft()` with its line's `field` set to each case's value.
    fn line_fields<const N: usize>(&mut self, field: &str, cases: [(&str, Value); N]) {
        for (what, v) in cases {
            self.add(what, DRAFT, line(|l| l[field] = v));
        }
    }

    /// `valid_draft()` without `field`.
    fn draft_without(&mut self, what: &str, field: &str) {
        let args = draft(|d| {
            d.as_object_mut().unwrap().remove(field);
        });
        self.add(what, DRAFT, args);
    }

    /// `valid_draft()` with a line without `field`.
    fn line_without(&mut self, what: &str, field: &str) {
        let args = line(|l| {
            l.as_object_mut().unwrap().remove(field);
        });
        self.add(what, DRAFT, args);
    }
}

/// Every malformed payload: (what, tool, arguments).
fn payloads() -> Vec<(String, &'static str, Value)> {
    let mut p = Payloads::default();

    // The arguments themselves.
    for (what, v) in [
        ("null arguments", Value::Null),
        ("a list", json!([])),
        ("a string", json!("{\"vendor_code\":\"V-00231\"}")),
        ("a number", json!(5)),
        ("true", json!(true)),
        ("an empty object", json!({})),
    ] {
        p.add(what, DRAFT, v.clone());
        p.add(what, GET_PO, v);
    }

    // vendor_code
    p.draft_fields(
        "vendor_code",
        [
            ("vendor_code number", json!(231)),
            ("vendor_code bool", json!(true)),
            ("vendor_code null", Value::Null),
            ("vendor_code list", json!(["V-00231"])),
            ("vendor_code object", json!({"code": "V-00231"})),
            ("vendor_code 4001 chars", json!("V".repeat(4001))),
            ("vendor_code 1 MB", json!("V".repeat(1 << 20))),
        ],
    );
    p.draft_without("vendor_code missing", "vendor_code");
    p.draft_fields(
        "needed_by",
        [
            ("needed_by month 13", json!("2030-13-01")),
            ("needed_by day first", json!("15-01-2030")),
            ("needed_by number", json!(20300115)),
            ("needed_by date-time", json!("2030-01-15T00:00:00Z")),
            ("needed_by null", Value::Null),
            ("needed_by empty", json!("")),
            ("needed_by February 30", json!("2030-02-30")),
            ("needed_by in the past", json!("2001-01-01")),
            ("needed_by with NUL", json!("2030-01-15\u{0}")),
            ("needed_by year 99999", json!("99999-01-01")),
        ],
    );
    p.draft_fields(
        "client_ref",
        [
            ("client_ref number", json!(1)),
            ("client_ref null", Value::Null),
            ("client_ref empty", json!("")),
            ("client_ref blank", json!("   ")),
            ("client_ref 10 000 chars", json!("r".repeat(10_000))),
            ("client_ref list", json!(["r"])),
        ],
    );
    p.draft_without("client_ref missing", "client_ref");
    p.draft_fields(
        "note",
        [
            ("note number", json!(5)),
            ("note 4001 chars", json!("n".repeat(4001))),
            ("note object", json!({"text": "x"})),
            ("note nested 120 deep", nested(120)),
        ],
    );
    p.draft_fields(
        "lines",
        [
            ("lines null", Value::Null),
            ("lines object", json!({"item_code": "BRG-0042"})),
            ("lines string", json!("[]")),
            ("lines empty", json!([])),
            ("lines of numbers", json!([1, 2])),
            ("lines of null", json!([null])),
            ("lines of empty objects", json!([{}])),
            (
                "lines nested lists",
                json!([[{"item_code": "BRG-0042", "qty": "1", "uom": "BOX"}]]),
            ),
            (
                "501 lines",
                Value::Array(vec![
                    json!({"item_code": "BRG-0042", "qty": "1", "uom": "BOX"});
                    501
                ]),
            ),
            ("lines nested 127 deep", nested(127)),
        ],
    );
    p.line_fields(
        "qty",
        [
            ("qty text", json!("twenty")),
            ("qty NaN", json!("NaN")),
            ("qty Infinity", json!("Infinity")),
            ("qty -Infinity", json!("-Infinity")),
            ("qty exponent string", json!("2e1")),
            ("qty zero", json!("0")),
            ("qty zero number", json!(0)),
            ("qty negative", json!("-5")),
            ("qty negative number", json!(-5)),
            ("qty tiny", json!(1e-30)),
            ("qty inexact float", json!(0.30000000000000004)),
            ("qty huge float", json!(1e300)),
            ("qty 32 digits", json!("12345678901234567890123456789012")),
            ("qty empty", json!("")),
            ("qty leading space", json!(" 5")),
            ("qty trailing space", json!("5 ")),
            ("qty plus sign", json!("+5")),
            ("qty hex", json!("0x10")),
            ("qty comma", json!("1,5")),
            ("qty bool", json!(true)),
            ("qty list", json!(["5"])),
            ("qty object", json!({"value": "5"})),
            ("qty null", Value::Null),
            ("qty over its declared maximum", json!("10000.01")),
            ("qty arabic-indic digits", json!("٥")),
            ("qty fullwidth digits", json!("２０")),
        ],
    );
    p.line_fields(
        "uom",
        [
            ("uom lower case", json!("box")),
            ("uom unknown", json!("CRATE")),
            ("uom empty", json!("")),
            ("uom number", json!(1)),
            ("uom null", Value::Null),
            ("uom with NUL", json!("BOX\u{0}")),
            ("uom fullwidth", json!("ＢＯＸ")),
            ("uom trailing space", json!("BOX ")),
            ("uom zero-width joiner", json!("B\u{200d}OX")),
        ],
    );
    p.line_fields(
        "item_code",
        [
            ("item_code number", json!(42)),
            (
                "item_code right-to-left override",
                json!("\u{202e}2400-GRB"),
            ),
            ("item_code emoji", json!("📦📦📦")),
            ("item_code control characters", json!("BRG\u{1b}[31m-0042")),
            ("item_code unknown", json!("NOPE-0000")),
            ("item_code 5000 chars", json!("I".repeat(5000))),
            ("item_code lone surrogate escape", json!("\u{fffd}")),
        ],
    );
    p.add(
        "two lines over the limit, one negative",
        DRAFT,
        draft(|d| {
            d["lines"] = json!([
                {"item_code": "BRG-0042", "qty": "20000", "uom": "BOX"},
                {"item_code": "BRG-0042", "qty": "-15000", "uom": "BOX"},
            ]);
        }),
    );
    p.line_without("line missing qty", "qty");
    for (what, key) in [
        ("unknown field", "colour"),
        ("branch_id smuggled", "branch_id"),
        ("user_id smuggled", "user_id"),
        ("unit_price smuggled", "unit_price"),
        ("status smuggled", "status"),
        ("agent_run_id smuggled", "agent_run_id"),
        ("empty key", ""),
        ("NUL key", "\u{0}"),
        ("450 KB key", &"k".repeat(450_000)),
    ] {
        p.add(what, DRAFT, draft(|d| d[key] = json!("x")));
    }
    p.add(
        "unknown field in a line",
        DRAFT,
        line(|l| l["discount"] = json!("10")),
    );
    p.add(
        "unit_price in a line",
        DRAFT,
        line(|l| l["unit_price"] = json!("1")),
    );
    p.add("8 unknown keys of 450 KB", DRAFT, many_unknown(8, 450_000));
    p.add("1000 unknown keys", DRAFT, many_unknown(1000, 8));

    // Read tools.
    for (what, v) in [
        ("number null", Value::Null),
        ("number integer", json!(42)),
        ("number 1 MB", json!("P".repeat(1 << 20))),
        ("number list", json!(["PO-2026-0001"])),
    ] {
        p.add(what, GET_PO, json!({ "number": v }));
    }
    p.add(
        "get_po unknown field",
        GET_PO,
        json!({"number": "PO-1", "branch_code": "JKT-01"}),
    );
    p.each(
        SEARCH_VENDORS,
        [
            (
                "search query number",
                json!({"query": 5, "item_code": null}),
            ),
            (
                "search query object",
                json!({"query": {"$ne": null}, "item_code": null}),
            ),
            (
                "search extra field",
                json!({"query": null, "item_code": null, "limit": 5}),
            ),
            (
                "search query nested",
                json!({"query": nested(100), "item_code": null}),
            ),
        ],
    );
    p.each(
        VENDOR_SUMMARY,
        [
            ("summary missing code", json!({})),
            ("summary code null", json!({"vendor_code": null})),
            ("summary code bool", json!({"vendor_code": false})),
        ],
    );
    p.each(
        SEARCH_POS,
        [
            (
                "search_pos bad status",
                json!({"status": "POSTED", "vendor_code": null, "needed_before": null}),
            ),
            (
                "search_pos status number",
                json!({"status": 1, "vendor_code": null, "needed_before": null}),
            ),
            (
                "search_pos bad date",
                json!({"status": null, "vendor_code": null, "needed_before": "yesterday"}),
            ),
            (
                "search_pos date number",
                json!({"status": null, "vendor_code": null, "needed_before": 1}),
            ),
        ],
    );
    p.each(
        GET_STOCK,
        [
            ("stock item null", json!({"item_code": null})),
            ("stock item number", json!({"item_code": 42})),
            (
                "stock extra warehouse",
                json!({"item_code": "BRG-0042", "warehouse": "JKT-WH1"}),
            ),
        ],
    );
    p.0
}

async fn count(t: &TestDb, sql: &'static str, run: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(run.to_string())
        .fetch_one(t.db.pool())
        .await
        .expect("count")
}

async fn every_malformed_payload_is_a_clean_refusal(t: &TestDb) {
    app::prepare(&t.db).await.expect("seed the example");
    let rt = ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone());
    let run = erp_tools_tests::ids::new_run();
    let who = buyer();
    let payloads = payloads();
    assert!(payloads.len() >= 100, "{} payloads", payloads.len());
    for (i, (what, tool, arguments)) in payloads.iter().enumerate() {
        let call_id = format!("bad-{i}");
        let out = rt
            .call(
                &who,
                ToolCall {
                    agent_run_id: run.clone(),
                    tool_call_id: call_id.clone(),
                    name: (*tool).into(),
                    arguments: arguments.clone(),
                },
            )
            .await
            .unwrap_or_else(|e| panic!("{what}: not a tool error but {e:?}"));
        assert!(
            matches!(out.outcome, Outcome::ToolError | Outcome::Denied),
            "{what}: {:?} {}",
            out.outcome,
            out.text
        );
        assert!(!out.text.trim().is_empty(), "{what}: an empty refusal");
        assert!(
            out.text.len() <= MAX_TEXT,
            "{what}: {} bytes of text",
            out.text.len()
        );
        // Raw SQL on the audit log: first commit what the audit writer has queued.
        t.db.flush_audit().await.unwrap();
        let rows: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT outcome, message FROM erp_audit_log WHERE agent_run_id = $1 AND tool_call_id = $2",
        )
        .bind(run.clone())
        .bind(call_id)
        .fetch_all(t.db.pool())
        .await
        .unwrap();
        assert_eq!(rows.len(), 1, "{what}: one audit row");
        assert_eq!(rows[0].0, out.outcome.as_str(), "{what}");
        let message = rows[0].1.as_deref().unwrap_or_default();
        assert!(
            message.len() <= MAX_TEXT,
            "{what}: {} bytes of audit message",
            message.len()
        );
        assert!(
            !message.contains('\u{0}'),
            "{what}: a NUL in the audit message"
        );
    }
    let drafted = count(
        t,
        "SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run = $1",
        &run,
    )
    .await;
    assert_eq!(drafted, 0, "no malformed payload created a document");
    let keys = count(
        t,
        "SELECT COUNT(*) FROM erp_idempotency_keys WHERE agent_run_id = $1",
        &run,
    )
    .await;
    assert_eq!(keys, 0, "no malformed payload claimed a key");
    t.db.flush_audit().await.unwrap();
    let open = count(
        t,
        "SELECT COUNT(*) FROM erp_audit_log WHERE agent_run_id = $1 AND outcome = 'attempt'",
        &run,
    )
    .await;
    assert_eq!(open, 0, "every audit row is finished");
    // Still serving.
    let out = rt
        .call(
            &who,
            ToolCall {
                agent_run_id: run.clone(),
                tool_call_id: "good".into(),
                name: DRAFT.into(),
                arguments: draft(|d| d["client_ref"] = json!("good-1")),
            },
        )
        .await
        .unwrap();
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    println!(
        "malformed payloads tried: {} on {:?}",
        payloads.len(),
        t.backend()
    );
}

on_both_backends!(every_malformed_payload_is_a_clean_refusal);

/// A JSON number for a decimal is the same argument as the string: `48`, `"48"` and
/// `"48.0"` replay one draft.
async fn a_number_quantity_replays_the_string_one(t: &TestDb) {
    app::prepare(&t.db).await.expect("seed the example");
    let rt = ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone());
    let run = erp_tools_tests::ids::new_run();
    let who = buyer();
    let mut outcomes = Vec::new();
    for (i, qty) in [json!(48), json!("48"), json!("48.0"), json!(48.0)]
        .into_iter()
        .enumerate()
    {
        let out = rt
            .call(
                &who,
                ToolCall {
                    agent_run_id: run.clone(),
                    tool_call_id: format!("n{i}"),
                    name: DRAFT.into(),
                    arguments: line(|l| l["qty"] = qty.clone()),
                },
            )
            .await
            .unwrap();
        outcomes.push((qty, out.outcome, out.document.map(|d| d.id)));
    }
    assert_eq!(outcomes[0].1, Outcome::Ok, "{outcomes:?}");
    for o in &outcomes[1..] {
        assert_eq!(o.1, Outcome::Replayed, "{outcomes:?}");
        assert_eq!(o.2, outcomes[0].2, "{outcomes:?}");
    }
}

on_both_backends!(a_number_quantity_replays_the_string_one);

/// Raw JSON-RPC bodies the JSON layer sees first: each gets an answer (never a 5xx or a
/// dropped connection), a tool call in it is refused cleanly, and the server keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_bodies_are_answered_and_the_server_stays_up() {
    use erp_tools_tests::http::{HttpServer, open_session};
    let t = TestDb::sqlite().await;
    app::prepare(&t.db).await.expect("seed the example");
    let rt = ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone());
    let server = HttpServer::start(rt).await;
    let who = buyer();
    let token = server.token(&who);
    let session = open_session(&server.url, &token).await;
    let call = |id: &str, args: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{DRAFT}","arguments":{args}}}}}"#
        )
    };
    let good_args = valid_draft().to_string();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        (
            "a byte order mark",
            format!(
                "\u{feff}{}",
                call("1", &good_args.replace("bad-1", "bom-1"))
            )
            .into_bytes(),
        ),
        (
            "duplicate keys, the last one invalid",
            call(
                "2",
                &good_args.replacen("\"qty\":\"20\"", r#""qty":"20","qty":"-1""#, 1),
            )
            .into_bytes(),
        ),
        (
            "truncated JSON",
            call("3", &good_args).as_bytes()[..60].to_vec(),
        ),
        ("not JSON", b"hello".to_vec()),
        ("an empty body", Vec::new()),
        ("nesting 100 000 deep", call("4", &deep).into_bytes()),
        (
            "a huge exponent",
            call("5", &good_args.replace(r#""20""#, "1e400")).into_bytes(),
        ),
        (
            "a 3 MB string id",
            call(
                &format!("\"{}\"", "i".repeat(3 << 20)),
                &good_args.replace("bad-1", "big-id"),
            )
            .into_bytes(),
        ),
        (
            "a NUL in the id",
            call(r#""id\u0000nul""#, r#"{"vendor_code":1}"#).into_bytes(),
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\xff\"}".to_vec(),
        ),
        ("arguments an array", call("6", "[1,2,3]").into_bytes()),
        (
            "a number id beyond u64",
            call("123456789012345678901234567890", r#"{"vendor_code":1}"#).into_bytes(),
        ),
    ];
    let client = reqwest::Client::new();
    for (what, body) in &bodies {
        let body: Vec<u8> = body.clone();
        let body_len = body.len();
        let response = client
            .post(&server.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .bearer_auth(&token)
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert!(!status.is_server_error(), "{what}: {status} {text}");
        // JSON-RPC echoes the request's `id` in the answer, so the answer is bounded by
        // what was sent; nothing else in it grows with the request.
        assert!(
            text.len() < body_len + 64 * 1024,
            "{what}: a {} byte answer to {body_len} bytes",
            text.len()
        );
    }
    // Audit rows stay bounded whatever the id.
    t.db.flush_audit().await.unwrap();
    let longest: Option<i64> =
        sqlx::query_scalar("SELECT MAX(LENGTH(tool_call_id)) FROM erp_audit_log")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    assert!(
        longest.unwrap_or(0) <= 128,
        "tool_call_id of {longest:?} characters"
    );
    let open: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'attempt'")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    assert_eq!(open, 0);
    // Still serving: a good call drafts.
    let response = client
        .post(&server.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .bearer_auth(&token)
        .body(call(
            "99",
            &valid_draft().to_string().replace("bad-1", "alive-1"),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("PO-"), "{text}");
    println!("raw bodies tried: {}", bodies.len());
}
