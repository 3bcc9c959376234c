//! A read handler that answers at its first poll (nothing to fetch) has nothing to overlap
//! with its attempt row: its call is audited by one finished row, written before the
//! result is returned, whether the audit writer is idle (the row is inserted at once) or
//! busy (the row joins a batch). Handlers that wait keep the attempt row committed while
//! they run. Either way every call ends with exactly one finished row.
//!
//! A read that waits is audited by one finished row too, written when it ends, unless it
//! runs longer than the runtime's `read_attempt_after`: then its `attempt` row is
//! committed while it runs (so a crash leaves a trace), and finished when it ends. A read
//! dropped before it ends (its client went away) is recorded as `interrupted`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use erp_tools_core::prelude::*;
use erp_tools_core::{CallError, Outcome, Principal, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};
use tokio::sync::Notify;

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

/// The handlers of [`echo_when_released`] waiting, by the text they were called with.
static WAITING: Mutex<Vec<(String, Arc<Notify>)>> = Mutex::new(Vec::new());

/// The gate of the call with `text`, made on first use.
fn gate(text: &str) -> Arc<Notify> {
    let mut waiting = WAITING.lock().unwrap();
    if let Some((_, n)) = waiting.iter().find(|(t, _)| t == text) {
        return n.clone();
    }
    let n = Arc::new(Notify::new());
    waiting.push((text.to_string(), n.clone()));
    n
}

/// Echo a text back, upper-cased, once the test releases it.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"])]
async fn echo_when_released(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: EchoArgs,
) -> Result<Echoed, ToolError> {
    gate(&format!("{}:started", args.text)).notify_one();
    gate(&args.text).notified().await;
    Ok(Echoed {
        text: args.text.to_uppercase(),
    })
}

/// The outcomes of `run`'s rows as the log holds them now (the writer flushed first).
async fn outcomes(t: &TestDb, run: &str) -> Vec<String> {
    let log = t.db.audit_log(Some(run)).await.unwrap();
    log.into_iter().map(|r| r.outcome).collect()
}

/// Waits (at most 20 s) until `run`'s rows are `want`.
async fn wait_for_rows(t: &TestDb, run: &str, want: &[&str]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = outcomes(t, run).await;
        if now == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "rows of {run}: {now:?}, expected {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn runtime(t: &TestDb) -> ToolRuntime {
    let registry = ToolRegistry::builder()
        .module("catalog", "Echoes. Cannot change anything.")
        .tools(tools![echo, echo_later, echo_when_released])
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

/// A read still running after `read_attempt_after` has its `attempt` row committed while
/// it runs, finished on the same row when it ends; with `Duration::ZERO` at once. A read
/// ending sooner has only its finished row.
async fn a_long_read_leaves_its_attempt_row_while_it_runs(t: &TestDb) {
    let who = reader();
    for (after, text) in [
        (Some(Duration::ZERO), format!("now-{}", new_run())),
        (
            Some(Duration::from_millis(50)),
            format!("later-{}", new_run()),
        ),
        // The default, `DEFAULT_READ_ATTEMPT_AFTER` (100 ms).
        (None, format!("default-{}", new_run())),
    ] {
        let rt = match after {
            Some(after) => runtime(t).with_read_attempt_after(after),
            None => runtime(t),
        };
        let run = new_run();
        let running = {
            let (rt, who, run, text) = (rt.clone(), who.clone(), run.clone(), text.clone());
            tokio::spawn(async move {
                rt.call(
                    &who,
                    call(&run, "slow", "catalog_echo_when_released", &text),
                )
                .await
            })
        };
        wait_for_rows(t, &run, &["attempt"]).await;
        gate(&text).notify_one();
        let out = running.await.unwrap().expect("answered");
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
        wait_for_rows(t, &run, &["ok"]).await;
    }
    // The default and a read that ends at once: one row, written finished.
    let rt = runtime(t);
    let run = new_run();
    let text = format!("quick-{run}");
    gate(&text).notify_one();
    let out = rt
        .call(
            &who,
            call(&run, "quick", "catalog_echo_when_released", &text),
        )
        .await
        .expect("answered");
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    assert_eq!(outcomes(t, &run).await, ["ok"]);
}
on_both_backends!(a_long_read_leaves_its_attempt_row_while_it_runs);

/// A read whose call is dropped before it ends (its client went away) and before its
/// attempt row was due: one row, `interrupted`, saying nothing was answered.
async fn a_dropped_read_is_recorded_as_interrupted(t: &TestDb) {
    let rt = runtime(t).with_read_attempt_after(Duration::from_secs(3600));
    let who = reader();
    let run = new_run();
    let text = format!("dropped-{run}");
    let running = {
        let (rt, who, run, text) = (rt.clone(), who.clone(), run.clone(), text.clone());
        tokio::spawn(async move {
            rt.call(
                &who,
                call(&run, "gone", "catalog_echo_when_released", &text),
            )
            .await
        })
    };
    let started = gate(&format!("{text}:started"));
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the handler started");
    assert!(outcomes(t, &run).await.is_empty(), "no row while it runs");
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    wait_for_rows(t, &run, &["interrupted"]).await;
    let log = t.db.audit_log(Some(&run)).await.unwrap();
    assert_eq!(log[0].tool_call_id.as_deref(), Some("gone"));
    assert!(log[0].finished_at.is_some());
    assert!(
        log[0]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("nothing was answered")),
        "{:?}",
        log[0].message
    );
}
on_both_backends!(a_dropped_read_is_recorded_as_interrupted);
