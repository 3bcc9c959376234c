//! `verify` only reads: the audit log opened with [`AuditReader`] (the example's `verify`
//! and `chain-heads`) is checked as found, with no migration, recovery pass or sweep
//! first. A finished row inserted with no link, which opening the store would link into
//! a new chain, is reported; so is a row hidden by raising the chain's origin past it,
//! an open call with its age, and an open call's row edited before the call finished
//! (it is hashed when written). Both backends.

use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, AuditReader, ChainProblem, ChainReport, Database};
use erp_tools_tests::app::Session;
use erp_tools_tests::app::arguments::po_draft;
use erp_tools_tests::app::faults::VENDOR_HANGS;
use erp_tools_tests::app::tools::CREATE_PO_DRAFT;
use erp_tools_tests::db::{TestDb, raw_audit_pool};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;
use serde_json::json;

/// Six finished rows written by the framework, then the database closed: the log of a
/// stopped server.
async fn written_log(db: &Database) {
    let who = BUYER.principal();
    for i in 0..6 {
        db.record_event(AuditEntry::new(&who, "run-reader", "answered").message(format!("{i}")))
            .await
            .unwrap();
    }
    db.close().await;
}

/// A finished row inserted behind the framework's back, with no link; its id.
async fn forge(raw: &sqlx::AnyPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO erp_audit_log (at, finished_at, source, agent_run_id, user_id, outcome) \
         VALUES ('2026-01-05T10:00:00.000000Z', '2026-01-05T10:00:01.000000Z', 'runtime', \
         'run-reader', 'someone-else', 'ok') RETURNING id",
    )
    .fetch_one(raw)
    .await
    .unwrap()
}

/// Closes the tampering process (`again`, `raw`), then opens the log read-only and
/// verifies it.
async fn read_after(t: &TestDb, again: Database, raw: sqlx::AnyPool) -> (AuditReader, ChainReport) {
    if t.backend() == erp_tools_core::Backend::Sqlite {
        raw.close().await;
    }
    again.close().await;
    let reader = AuditReader::open(t.url()).await.unwrap();
    let report = reader.verify(&[]).await.unwrap();
    (reader, report)
}

/// How many rows have no link.
async fn unlinked(reader: &AuditReader) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_log WHERE chain_seq IS NULL")
        .fetch_one(reader.pool())
        .await
        .unwrap()
}

async fn an_inserted_row_is_reported_not_adopted(t: &TestDb) {
    written_log(&t.db).await;
    let again = t.open_again().await;
    let raw = raw_audit_pool(&again).await;
    let forged = forge(&raw).await;
    let (reader, report) = read_after(t, again, raw).await;
    assert_eq!(
        report.problems,
        [ChainProblem::Unchained { audit_id: forged }],
        "{report:?}"
    );
    assert_eq!(unlinked(&reader).await, 1, "the reader linked nothing");
    println!("{}", report.problems[0]);
    reader.close().await;
}
on_both_backends!(an_inserted_row_is_reported_not_adopted);

async fn a_row_hidden_below_a_raised_origin_is_reported(t: &TestDb) {
    written_log(&t.db).await;
    let again = t.open_again().await;
    let raw = raw_audit_pool(&again).await;
    let forged = forge(&raw).await;
    sqlx::query("UPDATE erp_audit_chain_origin SET last_unchained_id = $1")
        .bind(forged)
        .execute(&raw)
        .await
        .unwrap();
    let (reader, report) = read_after(t, again, raw).await;
    let first: i64 =
        sqlx::query_scalar("SELECT MIN(id) FROM erp_audit_log WHERE chain_seq IS NOT NULL")
            .fetch_one(reader.pool())
            .await
            .unwrap();
    assert_eq!(
        report.problems,
        [
            ChainProblem::OriginMoved {
                audit_id: first,
                origin: forged,
            },
            ChainProblem::Unchained { audit_id: forged },
        ],
        "{report:?}"
    );
    assert_eq!(report.before_chain, 0, "{report:?}");
    for problem in &report.problems {
        println!("{problem}");
    }
    reader.close().await;
}
on_both_backends!(a_row_hidden_below_a_raised_origin_is_reported);

async fn an_open_call_is_listed_with_its_age(t: &TestDb) {
    written_log(&t.db).await;
    let again = t.open_again().await;
    let raw = raw_audit_pool(&again).await;
    // A call left open an hour ago by a process that stopped (the recovery pass of the
    // next start would close it; the reader does not).
    let at = chrono::Utc::now() - chrono::Duration::hours(1);
    let at = at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
    let open: i64 = sqlx::query_scalar(
        "INSERT INTO erp_audit_log (at, source, agent_run_id, user_id, outcome) \
         VALUES ($1, 'runtime', 'run-reader', 'u', 'attempt') RETURNING id",
    )
    .bind(at.clone())
    .fetch_one(&raw)
    .await
    .unwrap();
    let (reader, report) = read_after(t, again, raw).await;
    assert_eq!(report.open, 1, "{report:?}");
    assert_eq!(
        report.problems,
        [ChainProblem::AttemptUnsealed { audit_id: open }],
        "an open row without the hash the writer gives it: {report:?}"
    );
    let call = &report.open_calls[0];
    assert_eq!((call.audit_id, call.at.as_str()), (open, at.as_str()));
    assert!((3590..3700).contains(&call.age_secs), "{call:?}");
    reader.close().await;
}
on_both_backends!(an_open_call_is_listed_with_its_age);

async fn an_open_call_edited_before_it_finishes_is_reported(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;
    let mut hanging = po_draft("H-1");
    hanging["vendor_code"] = json!(VENDOR_HANGS);
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        buyer.call(CREATE_PO_DRAFT, hanging),
    )
    .await;
    assert!(gave_up.is_err(), "the handler hangs until cancelled");
    let open = t.db.verify_audit_chain(&[]).await.unwrap();
    assert!(open.is_intact() && open.open == 1, "{open:?}");
    let raw = raw_audit_pool(&t.db).await;
    let id: i64 = sqlx::query_scalar(
        "UPDATE erp_audit_log SET arguments = '{}' WHERE outcome = 'attempt' RETURNING id",
    )
    .fetch_one(&raw)
    .await
    .unwrap();
    if t.backend() == erp_tools_core::Backend::Sqlite {
        raw.close().await;
    }
    let expected = [ChainProblem::AttemptAltered { audit_id: id }];
    let live = t.db.verify_audit_chain(&[]).await.unwrap();
    assert_eq!(live.problems, expected, "{live:?}");
    let reader = AuditReader::open(t.url()).await.unwrap();
    let read = reader.verify(&[]).await.unwrap();
    assert_eq!(read.problems, expected, "{read:?}");
    println!("{}", read.problems[0]);
    reader.close().await;
}
on_both_backends!(an_open_call_edited_before_it_finishes_is_reported);

/// A reader never creates a database: a path with no audit log is an error naming it.
#[tokio::test]
async fn a_missing_audit_log_is_an_error_not_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nothing.db");
    let url = format!("sqlite://{}", db.display());
    let e = AuditReader::open(&url).await.unwrap_err().to_string();
    assert!(
        e.contains("does not exist") && e.contains("nothing.db-audit"),
        "{e}"
    );
    assert!(!db.exists() && !dir.path().join("nothing.db-audit").exists());
}

/// The example's `verify` reports a forged finished row instead of linking it when it
/// opens the store (SQLite; the example is built with that backend).
#[tokio::test]
async fn the_examples_verify_reports_an_inserted_row() {
    let t = TestDb::sqlite().await;
    written_log(&t.db).await;
    let again = t.open_again().await;
    let raw = raw_audit_pool(&again).await;
    let forged = forge(&raw).await;
    raw.close().await;
    again.close().await;
    let (ok, out) = erp_tools_tests::example::run(t.url(), &["verify"]);
    println!("{out}");
    assert!(!ok, "a finding fails the command: {out}");
    assert!(
        out.contains(&format!(
            "TAMPERED: row {forged} is finished but in no chain"
        )),
        "{out}"
    );
    let (ok, again) = erp_tools_tests::example::run(t.url(), &["verify"]);
    assert!(
        !ok && again.contains(&format!("row {forged}")),
        "still reported: {again}"
    );
}
