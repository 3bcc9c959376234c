//! What paging and the result budget cost, in one run, on the distributor example's
//! `purchasing_search_vendors` over a large seeded vendor table (SQLite; PostgreSQL too
//! when `ERP_TOOLS_PG_URL` is set). Samples of each variant are interleaved.
//!
//! - **page vs hand-written keyset**: a call of the page tool (`page_size` 50, through
//!   `ToolRuntime::call`: admission, audit row, cursor, budget) against a call of a
//!   plain read tool of this binary running the same keyset query written by hand
//!   (`LIMIT 51`, no `Page`, no cursor) through the same pipeline; target at most 1.10.
//!   The bare query on the pool (no pipeline) is reported as the floor.
//! - **deep page vs first page**: the page at `--deep-page` (reached by walking the
//!   cursors) against page 1, both `page_size` 50; target at most 1.2.
//! - **budget check vs read call**: measuring a page's result (text plus structured
//!   content) against the budget, as a share of a whole read call; target at most 2 %.
//!   Timed as `ResultBudget::measure` on a whole page answer: one walk over the
//!   structured content, no text written, which is at least what the runtime does (it
//!   sizes each item once and adds the envelope's and the text's lengths). Serialising
//!   the structured content again, the way the check used to count it, is timed beside
//!   it for comparison.

// The example's modules are compiled in whole; this binary uses part of them.
#![allow(dead_code)]

#[path = "../../../examples/distributor/app.rs"]
mod app;
#[path = "../../../examples/distributor/buying.rs"]
mod buying;
#[path = "../../../examples/distributor/data.rs"]
mod data;
#[path = "../../../examples/distributor/inventory.rs"]
mod inventory;
#[path = "../../../examples/distributor/printing.rs"]
mod printing;
#[path = "../../../examples/distributor/purchasing.rs"]
mod purchasing;
#[path = "../../../examples/distributor/scale.rs"]
mod scale;

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_core::prelude::*;
use erp_tools_core::{Database, Outcome, Principal, ResultBudget, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "The cost of pages with sealed cursors and of the result budget")]
struct Args {
    /// Vendors seeded (besides the example's three).
    #[arg(long, default_value_t = 520_000)]
    vendors: usize,
    /// The deep page measured (pages of 50).
    #[arg(long, default_value_t = 10_000)]
    deep_page: usize,
    /// Samples per variant.
    #[arg(long, default_value_t = 400)]
    samples: usize,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// One vendor of the hand-written list.
#[derive(Serialize, JsonSchema)]
struct VendorRow {
    /// Vendor code.
    code: String,
    /// Vendor name.
    name: String,
    /// City.
    city: String,
    /// Payment terms.
    payment_terms: String,
    /// Whether the vendor can receive orders.
    active: bool,
}

/// The first 50 vendors, by code.
#[derive(Serialize, JsonSchema)]
struct VendorRows {
    /// The vendors.
    vendors: Vec<VendorRow>,
    /// Whether more follow.
    has_more: bool,
}

/// The hand-written keyset query of `purchasing_search_vendors`'s first page.
const KEYSET_SQL: &str = "SELECT v.code, v.name, v.city, v.payment_terms, v.active FROM vendors v
     WHERE (LOWER(v.name) LIKE $1 OR LOWER(v.code) LIKE $1)
       AND ($2 = '' OR EXISTS (SELECT 1 FROM vendor_prices p JOIN items i ON i.id = p.item_id
                              WHERE p.vendor_id = v.id AND i.code = $2))
     ORDER BY v.code ASC LIMIT 51";

async fn keyset_rows(pool: &sqlx::AnyPool) -> Result<VendorRows, sqlx::Error> {
    use sqlx::Row;
    let rows = sqlx::query(KEYSET_SQL)
        .bind("%%")
        .bind("")
        .fetch_all(pool)
        .await?;
    let mut vendors: Vec<VendorRow> = rows
        .iter()
        .map(|r| VendorRow {
            code: r.get(0),
            name: r.get(1),
            city: r.get(2),
            payment_terms: r.get(3),
            active: r.get::<i64, _>(4) != 0,
        })
        .collect();
    let has_more = vendors.len() > 50;
    vendors.truncate(50);
    Ok(VendorRows { vendors, has_more })
}

/// List the first 50 vendors by code, with the keyset query written by hand (the
/// benchmark's baseline).
#[erp_tool(module = "bench", tier = "read", scopes = ["purchasing:read"])]
async fn first_vendors(_ctx: &ToolContext, db: &ReadDb) -> Result<VendorRows, ToolError> {
    keyset_rows(db.pool()).await.map_err(ToolError::internal)
}

struct Bench {
    runtime: ToolRuntime,
    who: Arc<Principal>,
    db: Database,
}

impl Bench {
    async fn call(&self, name: &str, arguments: Value) -> (f64, erp_tools_core::CallOutcome) {
        let started = Instant::now();
        let out = self
            .runtime
            .call(
                &self.who,
                ToolCall {
                    agent_run_id: String::new(),
                    tool_call_id: "bench".into(),
                    name: name.into(),
                    arguments,
                },
            )
            .await
            .expect("call");
        let took = started.elapsed().as_secs_f64();
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        (took, out)
    }
}

fn page(cursor: Value) -> Value {
    json!({"query": null, "item_code": null, "page_size": 50, "cursor": cursor})
}

async fn measure(name: &str, t: TestDb, args: &Args) -> Value {
    app::prepare(&t.db).await.expect("example tables");
    let seeding = Instant::now();
    let scale = scale::Scale {
        vendors: args.vendors,
        items: 0,
        orders: 0,
        order_lines: 0,
    };
    scale::seed(&t.db, scale).await.expect("seed");
    eprintln!(
        "{name}: seeded {} vendors in {:.1} s",
        args.vendors,
        seeding.elapsed().as_secs_f64()
    );
    let registry = ToolRegistry::builder()
        .module("purchasing", purchasing::DESCRIPTION)
        .module("inventory", inventory::DESCRIPTION)
        .module(
            "bench",
            "The benchmark's baseline list. Read only: cannot change anything.",
        )
        .tools(erp_tools_core::tools![
            purchasing::search_vendors,
            first_vendors
        ])
        .build()
        .expect("registry");
    let bench = Bench {
        runtime: ToolRuntime::new(Arc::new(registry), t.db.clone()),
        who: Arc::new(
            Principal::builder("7", 1, "SBY-01")
                .scopes(["purchasing:read"])
                .build(),
        ),
        db: t.db.clone(),
    };
    // The cursor of the deep page: walk there with pages of 200 (same key, same filters).
    let walking = Instant::now();
    let mut cursor = Value::Null;
    let mut offset = 0usize;
    let target = (args.deep_page - 1) * 50;
    while offset < target {
        let size = (target - offset).min(200);
        let mut a = page(cursor);
        a["page_size"] = json!(size);
        let (_, out) = bench.call("purchasing_search_vendors", a).await;
        offset += out.structured["items"].as_array().map_or(0, Vec::len);
        cursor = out.structured["next_cursor"].clone();
        assert!(
            !cursor.is_null(),
            "the table has fewer than {} pages of 50",
            args.deep_page
        );
    }
    eprintln!(
        "{name}: walked to page {} in {:.1} s",
        args.deep_page,
        walking.elapsed().as_secs_f64()
    );
    let deep = cursor;

    let (mut first, mut hand, mut bare, mut deeps, mut checks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut sample_page = None;
    for i in 0..args.samples + 20 {
        let warm = i < 20;
        let order = i % 3;
        for step in 0..3 {
            match (step + order) % 3 {
                0 => {
                    let (s, out) = bench
                        .call("purchasing_search_vendors", page(Value::Null))
                        .await;
                    if !warm {
                        first.push(s);
                    }
                    sample_page.get_or_insert(out);
                }
                1 => {
                    let (s, _) = bench.call("bench_first_vendors", json!({})).await;
                    if !warm {
                        hand.push(s);
                    }
                }
                _ => {
                    let (s, out) = bench
                        .call("purchasing_search_vendors", page(deep.clone()))
                        .await;
                    assert_eq!(out.structured["items"].as_array().map(Vec::len), Some(50));
                    if !warm {
                        deeps.push(s);
                    }
                }
            }
        }
        let started = Instant::now();
        let rows = keyset_rows(bench.db.read_db().pool()).await.expect("query");
        let _ = serde_json::to_value(&rows).expect("json");
        if !warm {
            bare.push(started.elapsed().as_secs_f64());
        }
    }
    // The budget check on a page's answer, timed over many repetitions.
    let sample = sample_page.expect("a page");
    let reps = 2_000;
    let started = Instant::now();
    let mut total = 0u64;
    for _ in 0..reps {
        total += u64::from(ResultBudget::measure(&sample.text, &sample.structured));
    }
    let check_s = started.elapsed().as_secs_f64() / f64::from(reps);
    checks.push(check_s);
    std::hint::black_box(total);
    let started = Instant::now();
    let mut total = 0usize;
    for _ in 0..reps {
        total += sample.text.len() + written_len(&sample.structured);
    }
    let serialise_s = started.elapsed().as_secs_f64() / f64::from(reps);
    std::hint::black_box(total);
    bench.db.flush_audit().await.expect("flush");

    // Milliseconds.
    let s = |v: &[f64]| {
        let ms: Vec<f64> = v.iter().map(|x| x * 1e3).collect();
        Summary::of(&ms).expect("samples")
    };
    let (first, hand, bare, deeps) = (s(&first), s(&hand), s(&bare), s(&deeps));
    let page_over_hand = first.median / hand.median;
    let deep_over_first = deeps.median / first.median;
    let check_share = check_s * 1e3 / first.median;
    let serialise_share = serialise_s * 1e3 / first.median;
    let tokens = ResultBudget::measure(&sample.text, &sample.structured);
    eprintln!(
        "{name}: page 1 {} ms, hand-written keyset tool {} ms (ratio {page_over_hand:.3}, target <= 1.10), \
         bare query {} ms; page {} {} ms (ratio {deep_over_first:.3}, target <= 1.2); budget check \
         {:.2} us = {:.3} % of a read call (target <= 2 %; serialising again {:.2} us = {:.3} %); \
         a page of 50 is {tokens} tokens",
        first.display(3),
        hand.display(3),
        bare.display(3),
        args.deep_page,
        deeps.display(3),
        check_s * 1e6,
        check_share * 100.0,
        serialise_s * 1e6,
        serialise_share * 100.0,
    );
    json!({
        "backend": name,
        "vendors": args.vendors,
        "page_1_ms": first,
        "hand_written_keyset_tool_ms": hand,
        "bare_keyset_query_ms": bare,
        "deep_page": args.deep_page,
        "deep_page_ms": deeps,
        "ratio_page_over_hand_written": page_over_hand,
        "ratio_deep_over_first": deep_over_first,
        "budget_check_s": check_s,
        "budget_check_share_of_read_call": check_share,
        "serialise_again_s": serialise_s,
        "serialise_again_share_of_read_call": serialise_share,
        "page_of_50_tokens": tokens,
    })
}

/// The length of `value` as compact JSON, written out to a counter (how the budget
/// check counted before it walked the value).
fn written_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("JSON");
    count.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = Args::parse();
    let mut results = vec![measure("sqlite", TestDb::sqlite().await, &args).await];
    if let Some(pg) = TestDb::postgres().await {
        results.push(measure("postgres", pg, &args).await);
    }
    emit_json(
        &json!({"samples": args.samples, "results": results}),
        args.json.as_deref(),
    );
}
