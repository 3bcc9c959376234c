//! Pages with sealed cursors and the result budget, through the pipeline MCP uses, on
//! SQLite and (when `ERP_TOOLS_PG_URL` is set) on PostgreSQL: walking every page of a
//! large seeded list while rows are inserted returns each row once; tampered, foreign,
//! expired, other-tool and other-filter cursors are refused with what to do; a replica
//! with the same key continues a walk; a page shrinks to the budget and a handler
//! returning megabytes is refused, never cut.

mod example;

// The example's modules find each other at the crate root (`crate::data`).
#[allow(unused_imports)]
use example::{app, buying, data, inventory, printing, purchasing, scale};

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use erp_tools_core::prelude::*;
use erp_tools_core::{CallOutcome, Outcome, Principal, ResultBudget, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;

use serde_json::{Value, json};

const SEARCH_VENDORS: &str = "purchasing_search_vendors";
const SEARCH_POS: &str = "purchasing_search_pos";
const KEY: [u8; 32] = [42u8; 32];

fn buyer(user: &str, branch_id: i64, branch: &str) -> Arc<Principal> {
    Arc::new(
        Principal::builder(user, branch_id, branch)
            .scopes(["purchasing:read", "inventory:read"])
            .build(),
    )
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

async fn call(rt: &ToolRuntime, who: &Arc<Principal>, tool: &str, args: Value) -> CallOutcome {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    call_as(rt, who, "", format!("p{n}"), tool, args).await
}

async fn example(t: &TestDb) -> ToolRuntime {
    app::prepare(&t.db).await.expect("seed the example");
    let registry = Arc::new(app::registry().expect("registry"));
    ToolRuntime::new(registry, t.db.clone())
        .with_cursor_key(KEY, Duration::from_secs(600))
        .expect("key")
}

/// Walks every page of the vendor search from `args`, `size` a page, calling `between`
/// after each page; returns every code in the order received.
async fn walk(
    rt: &ToolRuntime,
    who: &Arc<Principal>,
    args: Value,
    mut between: impl AsyncFnMut(usize),
) -> Vec<String> {
    let mut codes = Vec::new();
    let mut cursor = Value::Null;
    for n in 0.. {
        let mut a = args.clone();
        a["cursor"] = cursor;
        let page = call(rt, who, SEARCH_VENDORS, a).await;
        assert_eq!(page.outcome, Outcome::Ok, "{}", page.text);
        let items = page.structured["items"].as_array().expect("items");
        codes.extend(
            items
                .iter()
                .map(|v| v["code"].as_str().unwrap().to_string()),
        );
        assert_eq!(
            page.structured["has_more"],
            !page.structured["next_cursor"].is_null()
        );
        between(n).await;
        cursor = page.structured["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    codes
}

async fn every_row_once_under_concurrent_inserts(t: &TestDb) {
    let rt = example(t).await;
    let scale = scale::Scale {
        vendors: 1_500,
        items: 0,
        orders: 0,
        order_lines: 0,
    };
    scale::seed(&t.db, scale).await.expect("seed");
    let before: BTreeSet<String> = sqlx::query_scalar("SELECT code FROM vendors")
        .fetch_all(t.db.pool())
        .await
        .unwrap()
        .into_iter()
        .collect();
    let who = buyer("7", 1, "SBY-01");
    let args = json!({"query": null, "item_code": null, "page_size": 200});
    let db = t.db.clone();
    let inserted = AtomicUsize::new(0);
    let codes = walk(&rt, &who, args, async |n| {
        // Between pages another user adds vendors: some sort before the walk's
        // position, some after it.
        for code in [format!("V-A{n:04}"), format!("V-Z{n:04}")] {
            sqlx::query(
                "INSERT INTO vendors (code, name, city, payment_terms, note, active) \
                 VALUES ($1, 'New', 'Surabaya', 'NET 30', '', 1)",
            )
            .bind(code)
            .execute(db.pool())
            .await
            .unwrap();
            inserted.fetch_add(1, Ordering::Relaxed);
        }
    })
    .await;
    let unique: BTreeSet<&String> = codes.iter().collect();
    assert_eq!(unique.len(), codes.len(), "a row was sent twice");
    for code in &before {
        assert!(unique.contains(code), "{code} was never sent");
    }
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(sorted, codes, "pages are in key order");
    // Rows added after the walk's position show up; those added before it do not.
    assert!(codes.iter().any(|c| c.starts_with("V-Z")));
    assert!(codes.len() > before.len());
    assert!(inserted.load(Ordering::Relaxed) >= 16, "at least 8 pages");
}

on_both_backends!(every_row_once_under_concurrent_inserts);

async fn cursors_are_refused_unless_the_same_caller_tool_and_filters(t: &TestDb) {
    let rt = example(t).await;
    scale::seed(
        &t.db,
        scale::Scale {
            vendors: 30,
            items: 0,
            orders: 40,
            order_lines: 0,
        },
    )
    .await
    .expect("seed");
    let who = buyer("7", 1, "SBY-01");
    let args = json!({"query": "v-s", "item_code": null, "page_size": 10});
    let first = call(&rt, &who, SEARCH_VENDORS, args.clone()).await;
    assert_eq!(first.outcome, Outcome::Ok, "{}", first.text);
    let cursor = first.structured["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_string();
    assert!(
        first.text.contains(&format!(
            "call {SEARCH_VENDORS} again with the same arguments and cursor \"{cursor}\""
        )),
        "{}",
        first.text
    );
    let with = |c: &str, a: &Value| {
        let mut a = a.clone();
        a["cursor"] = json!(c);
        a
    };
    // The same caller, tool and filters: the next page, also from a replica sharing the
    // key; an absent optional filter is the same as null.
    let second = call(&rt, &who, SEARCH_VENDORS, with(&cursor, &args)).await;
    assert_eq!(second.outcome, Outcome::Ok, "{}", second.text);
    assert!(
        second
            .text
            .starts_with(&format!("{SEARCH_VENDORS}: items 11 to 20")),
        "{}",
        second.text
    );
    let replica = ToolRuntime::new(rt.registry().clone(), t.db.clone())
        .with_cursor_key(KEY, Duration::from_secs(600))
        .unwrap();
    let same = call(
        &replica,
        &who,
        SEARCH_VENDORS,
        json!({"query": "v-s", "cursor": cursor, "page_size": 10}),
    )
    .await;
    assert_eq!(same.structured["items"], second.structured["items"]);

    let refused =
        async |rt: &ToolRuntime, who: &Arc<Principal>, tool: &str, a: Value, says: &str| {
            let out = call(rt, who, tool, a).await;
            assert_eq!(out.outcome, Outcome::ToolError, "{}", out.text);
            assert!(
                out.text.contains("The cursor was not accepted"),
                "{}",
                out.text
            );
            assert!(out.text.contains(says), "{says:?} in {}", out.text);
            assert!(out.text.contains("cursor null"), "{}", out.text);
        };
    // Altered: one character of the payload changed.
    let mut altered = cursor.clone().into_bytes();
    altered[5] = if altered[5] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    // Another key (a server that does not share it).
    let stranger = ToolRuntime::new(rt.registry().clone(), t.db.clone());
    // Another user of the same branch, the same user in another branch.
    let (colleague, elsewhere) = (buyer("8", 1, "SBY-01"), buyer("7", 2, "JKT-01"));
    // Changed filters.
    let changed = json!({"query": "v-s0", "item_code": null, "cursor": cursor});
    for (rt, who, a, says) in [
        (
            &rt,
            &who,
            with(&altered, &args),
            "altered or not issued by this server",
        ),
        (
            &rt,
            &who,
            with("forged", &args),
            "not issued by this server",
        ),
        (
            &stranger,
            &who,
            with(&cursor, &args),
            "not issued by this server",
        ),
        (
            &rt,
            &colleague,
            with(&cursor, &args),
            "issued to another user",
        ),
        (
            &rt,
            &elsewhere,
            with(&cursor, &args),
            "issued to another user",
        ),
        (&rt, &who, changed, "issued for other argument values"),
    ] {
        refused(rt, who, SEARCH_VENDORS, a, says).await;
    }
    // Another tool.
    let pos = json!({"status": null, "vendor_code": null, "needed_before": null, "cursor": cursor});
    refused(&rt, &who, SEARCH_POS, pos, "issued by another tool").await;
    // Expired.
    let brief = ToolRuntime::new(rt.registry().clone(), t.db.clone())
        .with_cursor_key(KEY, Duration::from_secs(0))
        .unwrap();
    let short = call(&brief, &who, SEARCH_VENDORS, args.clone()).await;
    let short = short.structured["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    refused(&brief, &who, SEARCH_VENDORS, with(&short, &args), "expired").await;
    // A page size over the bound is refused by the schema.
    let big = call(&rt, &who, SEARCH_VENDORS, json!({"page_size": 201})).await;
    assert_eq!(big.outcome, Outcome::ToolError, "{}", big.text);
}

on_both_backends!(cursors_are_refused_unless_the_same_caller_tool_and_filters);

// ---- the budget, on tools of this test ----

/// One row of a large list.
#[derive(Serialize, JsonSchema)]
struct BigRow {
    /// Row number.
    n: u32,
    /// A long text.
    text: String,
}

/// Arguments of `bulk_rows`.
#[derive(Deserialize, ToolArgs)]
struct RowsArgs {
    /// Characters in each row's text.
    #[erp(max = 100000)]
    width: u32,
}

/// List 500 generated rows whose text is `width` characters, for the budget tests.
#[erp_tool(module = "bulk", tier = "read", scopes = ["bulk:read"], page_size = 100, max_page_size = 500)]
async fn rows(
    _ctx: &ToolContext,
    args: RowsArgs,
    page: PageRequest,
) -> Result<Page<BigRow>, ToolError> {
    let after = page.after::<u32>()?.unwrap_or(0);
    let rows: Vec<BigRow> = (after + 1..=500)
        .take(page.fetch_limit() as usize)
        .map(|n| BigRow {
            n,
            text: "x".repeat(args.width as usize),
        })
        .collect();
    Ok(page.page(rows, |r| r.n))
}

/// The whole report at once, `megabytes` large (not a page tool).
#[derive(Deserialize, ToolArgs)]
struct ReportArgs {
    /// Size in megabytes.
    #[erp(max = 10)]
    megabytes: u32,
}

/// A report as large as asked.
#[derive(Serialize, JsonSchema)]
struct Report {
    /// The report.
    body: String,
}

/// Produce a report of the given size in one result, for the budget tests.
#[erp_tool(module = "bulk", tier = "read", scopes = ["bulk:read"])]
async fn report(_ctx: &ToolContext, args: ReportArgs) -> Result<Report, ToolError> {
    Ok(Report {
        body: "y".repeat(args.megabytes as usize * 1024 * 1024),
    })
}

fn bulk_runtime(t: &TestDb) -> ToolRuntime {
    let registry = ToolRegistry::builder()
        .module(
            "bulk",
            "Generated rows for tests. Read only: cannot change anything.",
        )
        .tools(erp_tools_core::tools![rows, report])
        .build()
        .expect("registry");
    ToolRuntime::new(Arc::new(registry), t.db.clone()).with_result_budget(
        ResultBudget::new(ResultBudget::DEFAULT_TOKENS).tool("bulk_report", 5_000),
    )
}

async fn a_page_shrinks_to_the_budget_and_megabytes_are_refused(t: &TestDb) {
    let rt = bulk_runtime(t);
    let who = Arc::new(
        Principal::builder("7", 1, "SBY-01")
            .scopes(["bulk:read"])
            .build(),
    );
    // 2 000-character rows: 100 of them would be ~400 000 bytes, far over 20 000 tokens.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let out = call(
            &rt,
            &who,
            "bulk_rows",
            json!({"width": 2000, "cursor": cursor, "page_size": 100}),
        )
        .await;
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        let tokens = ResultBudget::measure(&out.text, &out.structured);
        assert!(tokens <= ResultBudget::DEFAULT_TOKENS, "{tokens} tokens");
        let items = out.structured["items"].as_array().unwrap();
        assert!(!items.is_empty() && items.len() < 100, "{}", items.len());
        seen.extend(items.iter().map(|i| i["n"].as_u64().unwrap()));
        pages += 1;
        cursor = out.structured["next_cursor"].clone();
        if cursor.is_null() {
            assert!(out.text.contains("the last page"), "{}", out.text);
            break;
        }
        assert!(
            out.text
                .contains("more would not fit the size limit of one result"),
            "{}",
            out.text
        );
    }
    assert_eq!(
        seen,
        (1..=500).collect::<Vec<u64>>(),
        "every row once, in order"
    );
    assert!(pages > 5, "{pages} pages");

    // One row larger than the whole budget.
    let huge = call(&rt, &who, "bulk_rows", json!({"width": 100000})).await;
    assert_eq!(huge.outcome, Outcome::ToolError, "{}", huge.text);
    assert!(huge.text.contains("cannot be sent"), "{}", huge.text);

    // A handler returning megabytes: refused with how to narrow the call, never cut.
    let big = call(&rt, &who, "bulk_report", json!({"megabytes": 3})).await;
    assert_eq!(big.outcome, Outcome::ToolError, "{}", big.text);
    assert!(
        big.text
            .contains("more than the 5000 tokens one result may hold"),
        "{}",
        big.text
    );
    assert!(
        big.text.contains("narrower arguments (megabytes)"),
        "{}",
        big.text
    );
    assert!(big.text.len() < 2_000);
    assert!(serde_json::to_string(&big.structured).unwrap().len() < 4_000);

    // Every finished call's row carries its result's size, in the hash chain.
    let log = t.db.audit_log(None).await.unwrap();
    let finished: Vec<_> = log.iter().filter(|r| r.outcome != "attempt").collect();
    assert!(finished.len() >= pages + 2);
    for row in &finished {
        let tokens = row.result_tokens.expect("result_tokens on a finished call");
        assert!(
            tokens > 0 && tokens <= i64::from(ResultBudget::DEFAULT_TOKENS),
            "{tokens}"
        );
    }
    let report = t.db.verify_audit_chain(&[]).await.unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

on_both_backends!(a_page_shrinks_to_the_budget_and_megabytes_are_refused);
