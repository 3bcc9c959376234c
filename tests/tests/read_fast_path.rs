//! A read handler that answers at its first poll (nothing to fetch) has nothing to overlap
//! with its attempt row: its call is audited by one finished row, written before the
//! result is returned, whether the audit writer is idle (the row is inserted at once) or
//! busy (the row joins a batch). Handlers that wait keep the attempt row committed while
//! they run. Either way every call ends with exactly one finished row.

use std::sync::Arc;

use erp_tools_core::prelude::*;
use erp_tools_core::{CallError, Outcome, Principal, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

#[tool_args]
struct EchoArgs {
    /// Any text, e.g. BRG-0042
    text: String,
}

#[tool_output]
struct Echoed {
    /// The text, upper-cased
    text: String,
}

/// Echo a text back, upper-cased. Reads nothing.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"])]
async fn echo(_ctx: &ToolContext, _db: &ReadDb, args: EchoArgs) -> Result<Echoed, ToolError> {
    if args.text == "refuse" {
        return Err(ToolError::invalid_arguments(
            "`refuse` is not a text this tool echoes",
        ));
    }
    Ok(Echoed {
        text: args.text.to_uppercase(),
    })
}

/// Echo a text back, upper-cased, after letting other tasks run once.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"])]
async fn echo_later(_ctx: &ToolContext, _db: &ReadDb, args: EchoArgs) -> Result<Echoed, ToolError> {
    tokio::task::yield_now().await;
    Ok(Echoed {
        text: args.text.to_uppercase(),
    })
}

fn runtime(t: &TestDb) -> ToolRuntime {
    let registry = ToolRegistry::builder()
        .module("catalog", "Echoes. Cannot change anything.")
        .tools(tools![echo, echo_later])
        .build()
        .unwrap();
    ToolRuntime::new(Arc::new(registry), t.db.clone())
}

fn reader() -> Arc<Principal> {
    Arc::new(
        Principal::builder("u-7", 1, "SBY-01")
            .scopes(["catalog:read"])
            .build(),
    )
}

fn call(run: &str, id: &str, tool: &str, text: &str) -> ToolCall {
    ToolCall {
        agent_run_id: run.into(),
        tool_call_id: id.into(),
        name: tool.into(),
        arguments: json!({ "text": text }),
    }
}

/// One reader, one call after the other: every call answered, every call one finished
/// row with its outcome and arguments.
async fn calls_that_answer_at_once_have_one_finished_row_each(t: &TestDb) {
    let rt = runtime(t);
    let who = reader();
    let run = new_run();
    let cases = [
        ("catalog_echo", "a", Outcome::Ok),
        ("catalog_echo", "refuse", Outcome::ToolError),
        ("catalog_echo_later", "b", Outcome::Ok),
    ];
    for (i, (tool, text, outcome)) in cases.iter().enumerate() {
        let out = rt
            .call(&who, call(&run, &format!("c-{i}"), tool, text))
            .await
            .expect("answered");
        assert_eq!(out.outcome, *outcome, "{tool}: {}", out.text);
        if *outcome == Outcome::Ok {
            assert_eq!(out.structured["text"], Value::from(text.to_uppercase()));
        }
    }
    let log = t.db.audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), cases.len());
    for (r, (tool, text, outcome)) in log.iter().zip(&cases) {
        assert_eq!(r.tool_name.as_deref(), Some(*tool));
        assert_eq!(r.outcome, outcome.as_str());
        assert!(r.finished_at.is_some());
        assert_eq!(r.arguments_json(), Some(json!({ "text": text })));
    }
}
on_both_backends!(calls_that_answer_at_once_have_one_finished_row_each);

/// Many readers at once (the writer busy, so most rows go through its batches): every
/// call answered and audited exactly once.
async fn concurrent_calls_that_answer_at_once_are_each_audited_once(t: &TestDb) {
    let rt = runtime(t);
    let who = reader();
    let run = new_run();
    let mut tasks = Vec::new();
    for c in 0..16 {
        let (rt, who, run) = (rt.clone(), who.clone(), run.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let tool = if i % 5 == 0 {
                    "catalog_echo_later"
                } else {
                    "catalog_echo"
                };
                let out = rt
                    .call(&who, call(&run, &format!("c-{c}-{i}"), tool, "x"))
                    .await
                    .expect("answered");
                assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let log = t.db.audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), 16 * 25);
    let mut ids: Vec<_> = log
        .iter()
        .map(|r| r.tool_call_id.clone().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 16 * 25, "one row per call");
    assert!(
        log.iter()
            .all(|r| r.outcome == "ok" && r.finished_at.is_some())
    );
}
on_both_backends!(concurrent_calls_that_answer_at_once_are_each_audited_once);

/// After `Database::close` a call that would answer at once is refused, unaudited rows are
/// not written, and its result does not leave.
async fn a_closed_database_refuses_calls_that_answer_at_once(t: &TestDb) {
    let rt = runtime(t);
    let who = reader();
    let run = new_run();
    rt.call(&who, call(&run, "before", "catalog_echo", "a"))
        .await
        .expect("answered");
    t.db.close().await;
    let refused = rt
        .call(&who, call(&run, "after", "catalog_echo", "a"))
        .await;
    assert!(
        matches!(refused, Err(CallError::Internal(_))),
        "{refused:?}"
    );
    let again = t.open_again().await;
    let log = again.audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].tool_call_id.as_deref(), Some("before"));
}
on_both_backends!(a_closed_database_refuses_calls_that_answer_at_once);
