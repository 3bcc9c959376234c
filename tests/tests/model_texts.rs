//! The guide's catalogue of what a model reads (`guide/src/model-texts.md`), made from real
//! calls: every situation below is called through the pipeline MCP uses, and the text the
//! model receives is written into the chapter. The test fails when a sentence changed and
//! the chapter was not rewritten (`ERP_TOOLS_UPDATE_GUIDE=1 cargo test -p erp-tools-tests
//! --test model_texts` rewrites it), so the reference cannot drift from the framework.

mod example;

// The example's modules find each other at the crate root (`crate::data`).
#[allow(unused_imports)]
use example::{app, buying, data, inventory, printing, purchasing, scale};

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::{CallOutcome, Principal, ToolCall, ToolRuntime};
use erp_tools_tests::app::Session;
use erp_tools_tests::app::arguments::{order, po_draft};
use erp_tools_tests::app::faults::{VENDOR_FAILS_AFTER_INSERT, VENDOR_PANICS_AFTER_INSERT};
use erp_tools_tests::app::seed::VENDOR_OTHER;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::principals::{BUYER, SECOND_BUYER, VIEWER};
use serde_json::{Value, json};

const CHAPTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../guide/src/model-texts.md");

/// One situation of the catalogue: what happened, the call, and what the model read.
struct Entry {
    situation: &'static str,
    tool: String,
    arguments: Value,
    outcome: String,
    text: String,
}

impl Entry {
    fn of(situation: &'static str, tool: &str, arguments: Value, out: &CallOutcome) -> Entry {
        Entry {
            situation,
            tool: tool.to_string(),
            arguments,
            outcome: out.outcome.as_str().to_string(),
            text: out.text.clone(),
        }
    }
}

/// Run ids, cursors and other values that differ between runs, replaced by a stable
/// placeholder so the chapter changes only when a sentence does.
fn stable(text: &str, runs: &[&str]) -> String {
    let mut text = text.to_string();
    for run in runs {
        text = text.replace(run, "<run>");
    }
    // A sealed cursor: the text after `cursor "` up to the closing quote.
    while let Some(at) = text.find("cursor \"eyJ") {
        let start = at + "cursor \"".len();
        let end = start + text[start..].find('"').expect("a closed cursor");
        text.replace_range(start..end, "<sealed cursor>");
    }
    text
}

async fn pipeline_entries(t: &TestDb) -> (Vec<Entry>, Vec<String>) {
    let buyer = Session::new(&t.db, BUYER).await;
    let mut e = Vec::new();
    let mut call = async |s: &Session, situation, tool: &str, args: Value| {
        let out = s.call(tool, args.clone()).await;
        e.push(Entry::of(situation, tool, args, &out));
    };
    call(&buyer, "A draft is created (the fixture's output has no `ModelText`: the framework's sentence, then the output as JSON)", CREATE_PO_DRAFT, po_draft("R-1")).await;
    call(
        &buyer,
        "The same draft is sent again with the same `client_ref` (a retry after a lost answer)",
        CREATE_PO_DRAFT,
        po_draft("R-1"),
    )
    .await;
    call(
        &buyer,
        "The `client_ref` was used in this run for other arguments",
        CREATE_PO_DRAFT,
        order(VENDOR_OTHER, "5", "R-1"),
    )
    .await;
    call(
        &buyer,
        "An empty `client_ref`",
        CREATE_PO_DRAFT,
        po_draft(""),
    )
    .await;
    call(
        &buyer,
        "Arguments that do not match the schema",
        CREATE_PO_DRAFT,
        json!({"vendor_code": 42, "junk": true}),
    )
    .await;
    call(
        &buyer,
        "A value over a hard limit declared on the tool (`limit = \"lines[].qty <= 10000\"`)",
        CREATE_PO_DRAFT,
        order(VENDOR_OTHER, "20000", "R-2"),
    )
    .await;
    call(&buyer, "A document the caller's branch cannot see (the same text whether it exists elsewhere or not at all)", GET_PO, json!({"number": "PO-2026-9999"})).await;
    call(&buyer, "The handler refused the call with its own `ToolError::rejected` (here after writing, which the draft's transaction rolls back)", CREATE_PO_DRAFT, order(VENDOR_FAILS_AFTER_INSERT, "1", "R-3")).await;
    call(&buyer, "The handler panicked or failed inside the server (its detail goes to the log and the audit row only)", CREATE_PO_DRAFT, order(VENDOR_PANICS_AFTER_INSERT, "1", "R-4")).await;
    let viewer = buyer.app.session(VIEWER);
    call(
        &viewer,
        "The caller lacks a scope the tool needs",
        CREATE_PO_DRAFT,
        po_draft("R-5"),
    )
    .await;
    let intruder = Session {
        app: buyer.app.clone(),
        who: SECOND_BUYER.shared(),
        run: buyer.run.clone(),
    };
    call(
        &intruder,
        "A call in an agent run that belongs to another person",
        GET_PO,
        json!({"number": "PO-2026-0001"}),
    )
    .await;
    let unknown = buyer
        .app
        .runtime
        .call(
            &buyer.who,
            ToolCall {
                agent_run_id: buyer.run.clone(),
                tool_call_id: "call-unknown".into(),
                name: "purchasing_post_po".into(),
                arguments: json!({}),
            },
        )
        .await
        .expect_err("an unknown tool is a protocol error");
    e.push(Entry {
        situation: "A tool that does not exist or that the caller may not see (over MCP: JSON-RPC error -32602 with this message)",
        tool: "purchasing_post_po".into(),
        arguments: json!({}),
        outcome: "denied".into(),
        text: unknown.to_string(),
    });
    let runs = vec![buyer.run.clone(), viewer.run.clone()];
    (e, runs)
}

async fn page_entries(t: &TestDb) -> Vec<Entry> {
    app::prepare(&t.db).await.expect("seed the example");
    scale::seed(
        &t.db,
        scale::Scale {
            vendors: 30,
            items: 0,
            orders: 0,
            order_lines: 0,
        },
    )
    .await
    .expect("seed");
    let rt = ToolRuntime::new(Arc::new(app::registry().expect("registry")), t.db.clone())
        .with_cursor_key([7u8; 32], Duration::from_secs(600))
        .expect("key");
    let who: Arc<Principal> = Arc::new(
        Principal::builder("7", 1, "SBY-01")
            .scopes(["purchasing:read"])
            .build(),
    );
    let call = async |args: Value| -> CallOutcome {
        rt.call(
            &who,
            ToolCall {
                agent_run_id: "run-pages".into(),
                tool_call_id: "p".into(),
                name: "purchasing_search_vendors".into(),
                arguments: args,
            },
        )
        .await
        .expect("call")
    };
    let tool = "purchasing_search_vendors";
    let first_args = json!({"query": "v-s", "page_size": 2});
    let first = call(first_args.clone()).await;
    let mut altered = first.structured["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_string()
        .into_bytes();
    altered[5] = if altered[5] == b'A' { b'B' } else { b'A' };
    let altered =
        json!({"query": "v-s", "page_size": 2, "cursor": String::from_utf8(altered).unwrap()});
    let refused = call(altered.clone()).await;
    // The cursors followed to the last page (bounded: 30 vendors, 2 a page).
    let mut last = call(first_args.clone()).await;
    let mut pages = 1;
    while let Some(cursor) = last.structured["next_cursor"].as_str().map(str::to_string) {
        assert!(pages < 30, "the pages never ended");
        last = call(json!({"query": "v-s", "page_size": 2, "cursor": cursor})).await;
        pages += 1;
    }
    assert!(pages > 1, "the search fits one page: no last page to show");
    let ends = |outcome: &CallOutcome| {
        outcome
            .text
            .lines()
            .take(1)
            .chain(outcome.text.lines().last())
            .collect::<Vec<_>>()
            .join("\n…\n")
    };
    vec![
        Entry {
            text: ends(&first),
            ..Entry::of(
                "A page of a page tool, with more to come (its first and last lines; the items between)",
                tool,
                first_args.clone(),
                &first,
            )
        },
        Entry {
            text: ends(&last),
            ..Entry::of(
                "The last page of a page tool (its first and last lines; the items between)",
                tool,
                json!({"query": "v-s", "page_size": 2, "cursor": "<the previous page's cursor>"}),
                &last,
            )
        },
        Entry::of(
            "A cursor that was altered, forged, issued to someone else, for another tool or other filters, or expired (here: altered)",
            tool,
            json!({"query": "v-s", "page_size": 2, "cursor": "<altered cursor>"}),
            &refused,
        ),
    ]
}

fn chapter(entries: &[Entry]) -> String {
    let mut md = String::from(
        "# What a model reads\n\n\
         Every sentence the framework itself says to a model, as a model receives it: the \
         text content of the tool result (`isError: true` for failures), also stored on the \
         call's audit row. Each one below comes from a real call through the pipeline MCP \
         uses, against the test fixture's tools (`tests/src/app`) and the example's page \
         tools; `tests/tests/model_texts.rs` makes them and fails when a sentence changes \
         without this page being rewritten (`ERP_TOOLS_UPDATE_GUIDE=1 cargo test -p \
         erp-tools-tests --test model_texts`). Run ids and cursors are shown as \
         placeholders.\n\n\
         Each failure says what failed, what is allowed, what to do next, and what did not \
         happen (\"No draft was created.\", \"Nothing was changed.\"). Internal details (an \
         SQL error, a panic message) are never in it: they go to the log and to the audit \
         row's message.\n",
    );
    for e in entries {
        let _ = write!(
            md,
            "\n## {}\n\n`{}` with `{}`, outcome `{}`:\n\n```text\n{}\n```\n",
            e.situation,
            e.tool,
            e.arguments,
            e.outcome,
            e.text.trim_end()
        );
    }
    md
}

#[tokio::test]
async fn the_guide_shows_what_a_model_reads() {
    let t = TestDb::sqlite().await;
    let (mut entries, runs) = pipeline_entries(&t).await;
    let example = TestDb::sqlite().await;
    entries.extend(page_entries(&example).await);
    let runs: Vec<&str> = runs.iter().map(String::as_str).collect();
    for e in &mut entries {
        e.text = stable(&e.text, &runs);
    }
    let made = chapter(&entries);
    if std::env::var_os("ERP_TOOLS_UPDATE_GUIDE").is_some() {
        std::fs::write(CHAPTER, &made).expect("write the chapter");
        return;
    }
    let kept = std::fs::read_to_string(CHAPTER).unwrap_or_default();
    assert!(
        kept == made,
        "guide/src/model-texts.md is not what the framework says to a model; once the change \
         is intended, rewrite it: ERP_TOOLS_UPDATE_GUIDE=1 cargo test -p erp-tools-tests --test \
         model_texts\n--- the guide\n{kept}\n--- the framework\n{made}"
    );
}
