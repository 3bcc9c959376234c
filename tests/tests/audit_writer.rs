//! The group-commit audit writer keeps the audit guarantee: no read result leaves, and no
//! draft commits, before the call's attempt row is durable; every call ends with exactly
//! one finished row; no acknowledged row is lost when the writer's connection dies in the
//! middle of a batch; reads on SQLite never wait for a running draft transaction.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::sqlx;
use erp_tools_core::{Backend, CallError, Database, DatabaseOptions, Outcome, ToolCall};
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::app::{App, Session};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::{new_run, unique_suffix};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

/// Callers sending read calls at once while the writer is being broken.
const CALLERS: usize = 32;
/// Calls each caller sends.
const CALLS_EACH: usize = 40;

/// What became of every call: `tool_call_id` → `Some(outcome)` when the caller got a
/// result, `None` when the call failed with an internal (audit) error.
type Results = HashMap<String, Option<Outcome>>;

/// `CALLERS` tasks sending `CALLS_EACH` read calls each, while `breaker` runs.
async fn storm(app: &App, run: &str, breaker: impl Future<Output = ()>) -> Results {
    let who = BUYER.shared();
    let mut tasks = Vec::new();
    for c in 0..CALLERS {
        let runtime = app.runtime.clone();
        let who = who.clone();
        let run = run.to_string();
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for i in 0..CALLS_EACH {
                let id = format!("call-{c}-{i}-{}", unique_suffix());
                let call = ToolCall {
                    agent_run_id: run.clone(),
                    tool_call_id: id.clone(),
                    name: GET_STOCK.into(),
                    arguments: valid_arguments(GET_STOCK, "unused"),
                };
                match runtime.call(&who, call).await {
                    Ok(o) => out.push((id, Some(o.outcome))),
                    Err(CallError::Internal(text)) => {
                        assert!(text.contains("audit"), "{text}");
                        out.push((id, None));
                    }
                    Err(e) => panic!("unexpected protocol error: {e}"),
                }
            }
            out
        }));
    }
    breaker.await;
    let mut results = Results::new();
    for t in tasks {
        results.extend(t.await.expect("caller task"));
    }
    results
}

/// Every call that returned a result has its audit row, finished with that outcome; a
/// call that failed has at most one row. Returns how many calls failed.
async fn every_answered_call_has_its_row(db: &Database, run: &str, results: &Results) -> usize {
    let log = db.audit_log(Some(run)).await.expect("read the audit log");
    let mut rows: HashMap<String, Vec<String>> = HashMap::new();
    for r in &log {
        let id = r.tool_call_id.clone().expect("a call's row names it");
        rows.entry(id).or_default().push(r.outcome.clone());
    }
    let mut failed = 0;
    for (id, outcome) in results {
        let found = rows.get(id).cloned().unwrap_or_default();
        match outcome {
            Some(o) => assert_eq!(found, [o.as_str()], "call {id}"),
            None => {
                failed += 1;
                assert!(found.len() <= 1, "call {id}: {found:?}");
            }
        }
    }
    assert!(
        rows.keys().all(|id| results.contains_key(id)),
        "no stray rows"
    );
    failed
}

/// PostgreSQL: the writer's connection is terminated by the server (as a failover or an
/// administrator would) several times while 32 callers send reads. Every answered call's
/// row is there, finished; the calls caught in a broken batch failed (no result left
/// the server); the writer reconnects and later calls succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_writer_whose_connection_dies_mid_batch_loses_no_acknowledged_row() {
    let Some(t) = TestDb::postgres().await else {
        return;
    };
    let app = App::new(&t.db).await;
    let run = new_run();
    let schema: String = sqlx::query_scalar("SELECT current_schema()::text")
        .fetch_one(t.db.pool())
        .await
        .unwrap();
    let name = format!("erp-tools audit writer ({schema})");
    let admin = t.db.pool().clone();
    let killed = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let k = killed.clone();
    let breaker = async move {
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(30)).await;
            let n: i64 = sqlx::query_scalar(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = left($1, 63)",
            )
            .bind(name.clone())
            .fetch_one(&admin)
            .await
            .unwrap();
            k.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let results = storm(&app, &run, breaker).await;
    assert!(
        killed.load(std::sync::atomic::Ordering::Relaxed) >= 1,
        "the writer's connection was found and terminated"
    );
    let failed = every_answered_call_has_its_row(&t.db, &run, &results).await;
    assert!(failed < results.len(), "most calls were answered");
    // The writer reconnected: a call now succeeds and is audited.
    let s = Session::new(&t.db, BUYER).await;
    let out = s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    assert_eq!(s.app.outcomes(&s.run).await, ["ok"]);
}

/// SQLite: another connection takes the audit file's write lock several times while 32
/// callers send reads, so the writer's batches fail (busy) mid-run. Every answered call's
/// row is there, finished; the others failed without a result.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_writer_whose_batches_fail_loses_no_acknowledged_row() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("erp.db").display());
    let db = Database::connect(
        DatabaseOptions::new(url.clone()).busy_timeout(Duration::from_millis(20)),
    )
    .await
    .unwrap();
    let app = App::new(&db).await;
    let run = new_run();
    let audit_file = db
        .audit_file()
        .expect("SQLite has an audit file")
        .to_owned();
    let blocker = sqlx::AnyPool::connect(&format!("sqlite://{}", audit_file.display()))
        .await
        .unwrap();
    let breaker = async {
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let mut conn = blocker.acquire().await.unwrap();
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut *conn)
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(60)).await;
            sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
        }
    };
    let results = storm(&app, &run, breaker).await;
    let failed = every_answered_call_has_its_row(&db, &run, &results).await;
    assert!(failed > 0, "some batches failed while the file was locked");
    assert!(failed < results.len(), "most calls were answered");
}

/// SQLite: while a draft transaction holds the main file's write lock, read calls are
/// answered and audited: the audit log has its own file and writer. (Bounded by a
/// timeout only so that a regression fails instead of hanging.) The run is used once
/// before: binding a new run to its owner is a write on the main file.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_are_answered_while_a_draft_transaction_holds_the_write_lock() {
    let t = TestDb::sqlite().await;
    let s = Session::new(&t.db, BUYER).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    let mut held = t.db.pool().begin_with("BEGIN IMMEDIATE").await.unwrap();
    sqlx::query("DELETE FROM erp_idempotency_keys WHERE 1 = 0")
        .execute(&mut *held)
        .await
        .unwrap();
    for _ in 0..5 {
        let out = tokio::time::timeout(
            Duration::from_secs(20),
            s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")),
        )
        .await
        .expect("a read does not wait for the write lock");
        assert_eq!(out.outcome, Outcome::Ok, "{}", out.text);
    }
    assert_eq!(s.app.outcomes(&s.run).await, ["ok"; 6]);
    held.rollback().await.unwrap();
}

/// `Database::close` commits every outcome still queued: reopened, the log shows each
/// call finished.
async fn close_commits_every_queued_row(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    for i in 0..20 {
        s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
        s.create_po(po_draft(&format!("R-{i}"))).await;
    }
    t.db.close().await;
    let refused = s
        .app
        .runtime
        .call(
            &s.who,
            ToolCall {
                agent_run_id: s.run.clone(),
                tool_call_id: "after-close".into(),
                name: GET_STOCK.into(),
                arguments: valid_arguments(GET_STOCK, "x"),
            },
        )
        .await;
    assert!(
        matches!(refused, Err(CallError::Internal(_))),
        "{refused:?}"
    );
    let again = t.open_again().await;
    let log = again.audit_log(Some(&s.run)).await.unwrap();
    assert_eq!(log.len(), 40);
    assert!(
        log.iter()
            .all(|r| r.outcome == "ok" && r.finished_at.is_some())
    );
    assert_eq!(log.iter().filter(|r| r.document.is_some()).count(), 20);
}
on_both_backends!(close_commits_every_queued_row);

/// SQLite: a draft committed on the main file whose audit row was left at `attempt` (the
/// process stopped between the commit and the audit update) is finished at the next
/// start from its key row, with the document; the interrupted read is then closed by the
/// recovery pass as `interrupted`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_committed_draft_left_at_attempt_is_reconciled_at_start_up() {
    let t = TestDb::sqlite().await;
    let s = Session::new(&t.db, BUYER).await;
    let created = s.create_po(po_draft("R-1")).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    t.db.close().await;
    // Put both rows back to `attempt`, as a crash right after the commits would leave them.
    let audit_file = t.db.audit_file().unwrap().to_owned();
    let raw = sqlx::AnyPool::connect(&format!("sqlite://{}", audit_file.display()))
        .await
        .unwrap();
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = 'attempt', finished_at = NULL, \
         document_type = NULL, document_id = NULL, document_number = NULL",
    )
    .execute(&raw)
    .await
    .unwrap();
    raw.close().await;

    let again = t.open_again().await;
    let log = again.audit_log(Some(&s.run)).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].tool_name.as_deref(), Some(CREATE_PO_DRAFT));
    assert_eq!(log[0].outcome, "ok");
    assert_eq!(log[0].document, created.document);
    assert!(
        log[0]
            .message
            .as_deref()
            .unwrap()
            .contains("idempotency key")
    );
    assert_eq!(
        log[1].outcome, "interrupted",
        "the recovery pass closes the read"
    );
    assert!(log[1].finished_at.is_some());
}

/// The audit log of a run reads the same through `audit_log`, the audit pool and the
/// write pool (SQLite attaches the audit file to both), and `erp_audit_log` cannot be
/// written through them on SQLite: only the audit writer writes it.
async fn the_log_is_readable_everywhere_and_writable_only_by_its_writer(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    t.db.flush_audit().await.unwrap();
    let count = |pool: sqlx::AnyPool, run: String| async move {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM erp_audit_log WHERE agent_run_id = $1")
            .bind(run)
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(count(t.db.audit_pool().clone(), s.run.clone()).await, 1);
    assert_eq!(count(t.db.pool().clone(), s.run.clone()).await, 1);
    assert_eq!(count(t.db.read_db().pool().clone(), s.run.clone()).await, 1);
    if t.backend() == Backend::Sqlite {
        let res = sqlx::query("DELETE FROM erp_audit_log")
            .execute(t.db.pool())
            .await;
        assert!(res.is_err(), "the write pool cannot change the audit log");
    }
    assert_eq!(s.app.outcomes(&s.run).await, ["ok"]);
}
on_both_backends!(the_log_is_readable_everywhere_and_writable_only_by_its_writer);

/// Every column of a row comes back exactly as written, whatever the text holds (quotes,
/// backslashes, JSON-looking text, escapes, control characters, non-ASCII, a long
/// payload, NUL on SQLite) and whichever optional fields are set, for rows committed
/// together in batches by concurrent callers.
async fn every_column_survives_the_batched_insert(t: &TestDb) {
    let who = erp_tools_core::Principal::builder("u-\"7\"\\", -3, "SBY-ü").build();
    let run = new_run();
    let mut texts = vec![
        String::new(),
        "plain".to_string(),
        "quote \" and backslash \\ and \\u0000 spelt out".to_string(),
        "[1, {\"a\": null}]".to_string(),
        "line\nbreak\ttab\r\u{1b}[0m".to_string(),
        "Rp 1.250.000 · ümlaut · 日本語 · 🧾".to_string(),
        "x".repeat(100_000),
    ];
    if t.backend() == Backend::Sqlite {
        texts.push("nul \0 inside".to_string());
    }
    let mut expected = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        for variant in 0..4i64 {
            let mut e = erp_tools_core::AuditEntry::new(&who, run.as_str(), text.as_str());
            e.tool_call_id = Some(format!("c-{i}-{variant}"));
            if variant % 2 == 0 {
                e.tool_name = Some(text.clone());
                e.arguments = Some(serde_json::json!({ "t": text }).to_string());
                e.message = Some(text.clone());
                e.document = Some(erp_tools_core::DocumentRef {
                    doc_type: text.clone(),
                    id: (i64::MAX - variant).into(),
                    number: text.clone(),
                });
                e.step = Some(i64::MIN + variant);
                e.action_signature = Some(text.clone());
            } else {
                e.branch_id = None;
                e.branch_code = None;
            }
            e.model = (variant == 1).then(|| text.clone());
            e.prompt_version = (variant == 3).then(|| text.clone());
            expected.push(e);
        }
    }
    let mut tasks = Vec::new();
    for e in expected.clone() {
        let db = t.db.clone();
        tasks.push(tokio::spawn(async move { db.record_event(e).await }));
    }
    for task in tasks {
        task.await.unwrap().expect("the row is committed");
    }
    let log = t.db.audit_log(Some(&run)).await.unwrap();
    assert_eq!(log.len(), expected.len());
    let by_call: HashMap<_, _> = log
        .iter()
        .map(|r| (r.tool_call_id.clone().unwrap(), r))
        .collect();
    for e in &expected {
        let r = by_call[e.tool_call_id.as_ref().unwrap()];
        let what = e.tool_call_id.as_deref().unwrap();
        assert_eq!(r.agent_run_id, e.agent_run_id, "{what}");
        assert_eq!(r.tool_name, e.tool_name, "{what}");
        assert_eq!(r.user_id, e.user_id, "{what}");
        assert_eq!(r.branch_id, e.branch_id, "{what}");
        assert_eq!(r.branch_code, e.branch_code, "{what}");
        assert_eq!(r.arguments, e.arguments, "{what}");
        assert_eq!(r.outcome, e.outcome, "{what}");
        assert_eq!(r.message, e.message, "{what}");
        assert_eq!(r.document, e.document, "{what}");
        assert_eq!(r.model, e.model, "{what}");
        assert_eq!(r.prompt_version, e.prompt_version, "{what}");
        assert_eq!(r.step, e.step, "{what}");
        assert_eq!(r.action_signature, e.action_signature, "{what}");
        assert!(r.finished_at.is_some(), "{what}");
    }
}
on_both_backends!(every_column_survives_the_batched_insert);

/// Outcomes finished by the writer in batches (concurrent drafts and reads) land on their
/// own rows: every draft's row names its own document, every row is finished once.
async fn batched_outcomes_land_on_their_own_rows(t: &TestDb) {
    let s = Arc::new(Session::new(&t.db, BUYER).await);
    let mut tasks = Vec::new();
    for i in 0..24 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let read = s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
            assert_eq!(read.outcome, Outcome::Ok, "{}", read.text);
            s.create_po(po_draft(&format!("B-{i}"))).await.document
        }));
    }
    let mut documents = Vec::new();
    for task in tasks {
        documents.push(task.await.unwrap().expect("a draft names its document"));
    }
    let log = t.db.audit_log(Some(&s.run)).await.unwrap();
    assert_eq!(log.len(), 48);
    assert!(
        log.iter()
            .all(|r| r.outcome == "ok" && r.finished_at.is_some())
    );
    let mut logged: Vec<_> = log.iter().filter_map(|r| r.document.clone()).collect();
    let key = |d: &erp_tools_core::DocumentRef| d.id.clone();
    logged.sort_by_key(key);
    documents.sort_by_key(key);
    assert_eq!(logged, documents);
}
on_both_backends!(batched_outcomes_land_on_their_own_rows);
