//! The store (SPEC R7, R8): framework migrations, application migrations, key retention,
//! the shared audit sink for agent-loop events, and durable keys across reopen. Each
//! scenario runs on SQLite and, with `ERP_TOOLS_PG_URL`, on PostgreSQL.

use std::time::Duration;

use erp_tools_core::agent::{AgentEvent, AgentEventKind, AuditSink};
use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, Database, Outcome, StoreError};
use erp_tools_tests::app::arguments::po_draft;
use erp_tools_tests::app::tools::CREATE_PO_DRAFT;
use erp_tools_tests::app::{App, MIGRATIONS, Session, Table, count, migrate};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

async fn migrations(t: &TestDb) {
    let applied = t.db.applied_migrations().await.unwrap();
    let mut expected = vec![
        "erp_tools/0001_framework",
        "erp_tools/0002_audit_agent_columns",
        "erp_tools/0003_agent_runs",
        "erp_tools/0004_key_response_text",
        "erp_tools/0005_approvals",
        "erp_tools/0007_audit_writer",
        "erp_tools/0008_replicas",
        "erp_tools/0009_review_sessions",
        "erp_tools/0010_remote_drafts",
        "erp_tools/0011_approval_preview",
        "erp_tools/0012_used_request_states",
        "erp_tools/0014_audit_chain",
        "erp_tools/0015_surface",
        "erp_tools/0016_document_text_id",
        "erp_tools/0017_run_story",
        "erp_tools/0018_result_tokens",
        "erp_tools/0019_tasks",
        "erp_tools/0020_run_log",
        "erp_tools/0021_run_summaries",
        "erp_tools/0022_task_takeover",
        "erp_tools/0026_run_lines",
        "erp_tools/0027_documents",
        "erp_tools/0028_run_checkpoint",
        "erp_tools/0029_run_answer_ends",
        "erp_tools/0030_run_turn_appends",
        "erp_tools/0031_attempt_hash",
    ];
    if t.db.backend() == erp_tools_core::Backend::Postgres {
        // PostgreSQL writes a checkpoint with `WITH` parts, not through a view.
        expected.retain(|v| {
            !v.ends_with("0028_run_checkpoint") && !v.ends_with("0029_run_answer_ends")
        });
    } else {
        // On SQLite the result sizes and the run summaries and lines are migrations of the
        // audit file.
        expected.retain(|v| {
            !v.ends_with("0018_result_tokens")
                && !v.ends_with("0021_run_summaries")
                && !v.ends_with("0026_run_lines")
                && !v.ends_with("0031_attempt_hash")
        });
    }
    assert_eq!(applied, expected);

    migrate(&t.db).await;
    // Applying again, and opening again, changes nothing.
    migrate(&t.db).await;
    let again = t.open_again().await;
    migrate(&again).await;
    expected.extend(["0001_fixture_tables", "0002_fixture_seed"]);
    assert_eq!(again.applied_migrations().await.unwrap(), expected);

    // An applied migration whose SQL changed is refused, and nothing of it runs.
    let err =
        t.db.apply_migrations(&[(MIGRATIONS[0], "DROP TABLE purchase_orders")])
            .await
            .unwrap_err();
    assert!(
        matches!(&err, StoreError::Migration { version, .. } if version == MIGRATIONS[0]),
        "{err}"
    );
    assert!(err.to_string().contains("add a new migration"), "{err}");
    assert_eq!(count(&t.db, Table::PurchaseOrders).await, 0);

    // A failing migration is rolled back and not recorded.
    let err =
        t.db.apply_migrations(&[(
            "0002_broken",
            "CREATE TABLE warehouses (code TEXT PRIMARY KEY); THIS IS NOT SQL",
        )])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("0002_broken"), "{err}");
    assert!(
        !t.db
            .applied_migrations()
            .await
            .unwrap()
            .contains(&"0002_broken".to_string())
    );
    let warehouses_exists = sqlx::query("SELECT 1 FROM warehouses")
        .fetch_optional(t.db.pool())
        .await
        .is_ok();
    assert!(
        !warehouses_exists,
        "the failed migration left no table behind"
    );

    // The framework prefix is reserved; versions are unique.
    for bad in [
        &[("erp_tools/0009_mine", "SELECT 1")][..],
        &[("0003_a", "SELECT 1"), ("0003_a", "SELECT 2")][..],
    ] {
        assert!(t.db.apply_migrations(bad).await.is_err());
    }
}
on_both_backends!(migrations_apply_once_and_refuse_edits, crate::migrations);

async fn keys_are_durable_and_purged(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;
    let first = buyer.create_po(po_draft("R-1")).await;

    // A restarted server (a new `Database` on the same store) still replays.
    let restarted = App::new(&t.open_again().await).await;
    let again = restarted
        .call(&buyer.who, &buyer.run, CREATE_PO_DRAFT, po_draft("R-1"))
        .await;
    assert_eq!(again.outcome, Outcome::Replayed, "{}", again.text);
    assert_eq!(again.document, first.document);

    // Retention below the published minimum is refused.
    let err =
        t.db.purge_idempotency_keys(Duration::from_secs(3600))
            .await
            .unwrap_err();
    assert!(
        matches!(err, StoreError::RetentionTooShort { min_hours: 24, .. }),
        "{err}"
    );
    // Young keys survive a purge.
    assert_eq!(
        t.db.purge_idempotency_keys(Database::MIN_KEY_RETENTION)
            .await
            .unwrap(),
        0
    );
    // Age the key past the default retention: it is purged, and the client_ref is free.
    sqlx::query("UPDATE erp_idempotency_keys SET created_at = '2020-01-01T00:00:00.000000Z'")
        .execute(t.db.pool())
        .await
        .unwrap();
    assert_eq!(
        t.db.purge_idempotency_keys(Database::DEFAULT_KEY_RETENTION)
            .await
            .unwrap(),
        1
    );
    assert_eq!(t.db.idempotency_key_count().await.unwrap(), 0);
    buyer.create_po(po_draft("R-1")).await;
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 2);

    // The background reaper does the same on a schedule.
    sqlx::query("UPDATE erp_idempotency_keys SET created_at = '2020-01-01T00:00:00.000000Z'")
        .execute(t.db.pool())
        .await
        .unwrap();
    let reaper =
        t.db.spawn_idempotency_reaper(Database::DEFAULT_KEY_RETENTION, Duration::from_millis(200));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while t.db.idempotency_key_count().await.unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the reaper purged nothing"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    reaper.abort();
}
on_both_backends!(
    keys_survive_restarts_and_are_purged_after_retention,
    crate::keys_are_durable_and_purged
);

/// Writes the agent-loop event `entry` to `app`'s audit log.
async fn record(app: &App, entry: AuditEntry) {
    app.db()
        .record_event(entry)
        .await
        .expect("record the event");
}

async fn shared_audit_sink(t: &TestDb) {
    let buyer = Session::new(&t.db, BUYER).await;
    let (app, who, run) = (&buyer.app, &buyer.who, &buyer.run);
    // The agent loop's events and the pipeline's rows land in one log, in order.
    let started = AuditEntry::new(who, run.clone(), "started").tool(CREATE_PO_DRAFT, "call-1");
    record(app, started).await;
    buyer.create_po(po_draft("R-1")).await;
    let denied = AuditEntry::new(who, run.clone(), "denied")
        .tool("finance_create_refund_draft", "call-2")
        .arguments(&serde_json::json!({"amount": "5000000"}))
        .message("amount 5000000 is above the limit of 1000000");
    record(app, denied).await;
    let answered = AuditEntry::new(who, run.clone(), "answered")
        .message("Created PO")
        .model("other-model");
    record(app, answered).await;

    let log = app.audit(run).await;
    let summary: Vec<(&str, &str)> = log
        .iter()
        .map(|r| (r.source.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("agent", "started"),
            ("runtime", "ok"),
            ("agent", "denied"),
            ("agent", "answered")
        ]
    );
    assert!(
        log.windows(2)
            .all(|w| w[0].id < w[1].id && w[0].at <= w[1].at)
    );
    assert_eq!(
        log[2].message.as_deref(),
        Some("amount 5000000 is above the limit of 1000000")
    );
    assert_eq!(
        log[2].arguments_json(),
        Some(serde_json::json!({"amount": "5000000"}))
    );
    assert_eq!(log[3].tool_name, None);
    assert_eq!(log[3].model.as_deref(), Some("other-model"));
    assert_eq!(log[3].prompt_version.as_deref(), Some("p-3"));

    // The agent loop writes through the same sink with its `AuditSink` implementation.
    let event = AgentEvent {
        run_id: run.clone(),
        step: 3,
        kind: AgentEventKind::Stopped,
        tool: Some(CREATE_PO_DRAFT.into()),
        call_id: Some("call-9".into()),
        signature: Some("purchasing_create_po_draft{\"client_ref\":\"R-1\"}".into()),
        arguments: None,
        detail: Some("no_progress".into()),
        on_behalf_of: BUYER.user_id.into(),
        branch_code: BUYER.branch.code.into(),
        at: chrono::Utc::now(),
        surface: Some(app.runtime.registry().fingerprint().to_string()),
    };
    AuditSink::record(app.db(), who, &event).await.unwrap();
    let log = app.audit(run).await;
    let last = log.last().unwrap();
    assert_eq!(
        (last.source.as_str(), last.outcome.as_str()),
        ("agent", "stopped")
    );
    assert_eq!(last.step, Some(3));
    assert_eq!(last.action_signature, event.signature);
    assert_eq!(last.tool_call_id.as_deref(), Some("call-9"));
    assert_eq!(last.message.as_deref(), Some("no_progress"));
    assert_eq!(last.user_id, BUYER.user_id);
    assert_eq!(last.branch_code.as_deref(), Some(BUYER.branch.code));

    // Other runs are filtered out; the unfiltered log has everything.
    record(app, AuditEntry::new(who, new_run(), "started")).await;
    assert_eq!(app.audit(run).await.len(), 5);
    assert_eq!(app.whole_audit_log().await.len(), 6);
}
on_both_backends!(agent_events_share_the_audit_log, crate::shared_audit_sink);

#[tokio::test]
async fn unsupported_urls_are_explained() {
    for url in [
        "sqlite::memory:",
        "sqlite://?mode=memory",
        "mysql://root@localhost/test",
        "erp.db",
    ] {
        let err = Database::open(url).await.unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("sqlite://") && matches!(err, StoreError::UnsupportedUrl(_)),
            "{url}: {text}"
        );
    }
}

#[tokio::test]
async fn sqlite_file_is_created_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    assert!(!path.exists());
    let db = Database::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert!(path.exists());
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(fk, 1);
    let busy: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(busy, 10_000);
    db.close().await;
}
