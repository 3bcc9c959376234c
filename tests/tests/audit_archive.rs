//! The audit log's retention: whole past months archived as JSON lines with their chain
//! heads, then detached (PostgreSQL partitions) or deleted in bounded batches (SQLite);
//! what stays verifies, also against heads exported before. Both backends.

use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, Backend, StoreError};
use erp_tools_tests::app::Session;
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::tools::GET_STOCK;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

/// Rows backfilled in January 2026: more than one SQLite delete batch (5 000).
const JANUARY_ROWS: usize = 6_200;
const FEBRUARY_ROWS: usize = 20;

async fn rows_before(t: &TestDb, month: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_log WHERE at < $1")
        .bind(month.to_string())
        .fetch_one(t.db.audit_pool())
        .await
        .unwrap()
}

async fn past_months_are_archived_and_the_rest_still_verifies(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    t.db.ensure_audit_partitions("2026-01", "2026-02")
        .await
        .unwrap();
    let who = BUYER.principal();
    let at = |day: usize, i: usize| {
        format!(
            "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            if day > 31 { 2 } else { 1 },
            (day - 1) % 28 + 1,
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            i
        )
    };
    let january = (0..JANUARY_ROWS).map(|i| {
        let entry = AuditEntry::new(&who, format!("run-jan-{}", i % 50), "answered");
        (at(1 + i % 31, i), entry)
    });
    let february = (0..FEBRUARY_ROWS).map(|i| {
        let entry = AuditEntry::new(&who, "run-feb", "answered");
        (at(32 + i, i), entry)
    });
    let written = t.db.backfill_audit(january.chain(february)).await.unwrap();
    assert_eq!(written as usize, JANUARY_ROWS + FEBRUARY_ROWS);
    let before = t.db.verify_audit_chain(&[]).await.unwrap();
    assert!(before.is_intact(), "{before:?}");
    let heads = t.db.audit_chain_heads().await.unwrap();
    let month_heads = |month: &str| {
        heads
            .iter()
            .filter(|h| h.chain.ends_with(&format!("/{month}")))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(month_heads("2026-01").len(), 1, "{heads:?}");

    let dir = tempfile::tempdir().unwrap();
    let archives = t.db.archive_audit_log("2026-03", dir.path()).await.unwrap();
    let months: Vec<(&str, u64)> = archives
        .iter()
        .map(|a| (a.month.as_str(), a.rows))
        .collect();
    assert_eq!(
        months,
        [
            ("2026-01", JANUARY_ROWS as u64),
            ("2026-02", FEBRUARY_ROWS as u64)
        ]
    );
    for archive in &archives {
        let text = std::fs::read_to_string(&archive.file).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len() as u64, archive.rows);
        use sha2::Digest;
        assert_eq!(
            archive.sha256,
            hex::encode(sha2::Sha256::digest(text.as_bytes()))
        );
        assert_eq!(archive.heads, month_heads(&archive.month));
        // The file ends with its chain's head, in chain order.
        let last = lines.last().unwrap();
        assert_eq!(last["chain_hash"], archive.heads[0].hash.as_str());
        assert_eq!(last["chain_seq"], archive.heads[0].seq);
        assert_eq!(lines[0]["chain_seq"], 1);
        assert_eq!(lines[0]["source"], "backfill");
        let heads_file = archive
            .file
            .with_file_name(format!("erp_audit_log_{}.heads.json", archive.month));
        let recorded: erp_tools_core::AuditArchive =
            serde_json::from_str(&std::fs::read_to_string(heads_file).unwrap()).unwrap();
        assert_eq!(&recorded, archive);
    }
    assert_eq!(
        rows_before(t, "2026-03").await,
        0,
        "the months left the live log"
    );
    if t.backend() == Backend::Postgres {
        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_archived_2026_01")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
        assert_eq!(
            kept as usize, JANUARY_ROWS,
            "the partition is detached, not dropped"
        );
    }
    // What stays verifies, also against the heads exported before (archived ones too).
    let after = t.db.verify_audit_chain(&heads).await.unwrap();
    assert!(after.is_intact(), "{after:?}");
    assert!(after.rows >= 1, "this month's rows stay: {after:?}");
    // Again: nothing left to archive.
    let again = t.db.archive_audit_log("2026-03", dir.path()).await.unwrap();
    assert!(again.is_empty(), "{again:?}");

    for (before, expected) in [
        ("2999-01", "after the current month"),
        ("2026-1", "is not a month"),
    ] {
        let err =
            t.db.archive_audit_log(before, dir.path())
                .await
                .unwrap_err();
        assert!(matches!(err, StoreError::Archive(_)), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
    }
    let future =
        t.db.backfill_audit([(
            "2999-01-01T00:00:00.000000Z".to_string(),
            AuditEntry::new(&who, "r", "answered"),
        )])
        .await
        .unwrap_err();
    assert!(future.to_string().contains("not a past time"), "{future}");
}
on_both_backends!(past_months_are_archived_and_the_rest_still_verifies);
