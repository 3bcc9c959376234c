//! The audit writer's tests (`writer.rs`).

use super::*;

#[test]
fn a_row_completed_in_the_queue_is_inserted_finished_and_a_taken_one_is_not() {
    let slot = Arc::new(Slot::default());
    let (_ack, rx) = oneshot::channel();
    let pending = PendingRow {
        slot: slot.clone(),
        ack: rx,
        at: String::new(),
    };
    let fin = || Final::new(crate::audit::Outcome::Ok, None, None);
    assert!(pending.complete_in_queue(fin()).is_ok());
    let row = take(NewRow::test_row(), Some(slot.clone()));
    assert_eq!(row.entry.outcome, "ok");
    assert!(row.finished_at.is_some());
    // Once taken, the caller must finish the row itself.
    assert!(pending.complete_in_queue(fin()).is_err());
    let slot = Arc::new(Slot::default());
    let row = take(NewRow::test_row(), Some(slot.clone()));
    assert_eq!(row.entry.outcome, crate::audit::ATTEMPT);
    assert!(row.finished_at.is_none());
}

/// A batch PostgreSQL rolls back to break a real deadlock is committed again, whole.
///
/// The batch inserts a row of run A, then one of run B, in one statement: the lines
/// of both runs are locked in that order by the table's trigger. Another session holds
/// run B's line first, waits until the batch waits for it, then asks for run A's
/// line: a deadlock, which the batch's session detects first (the other session's
/// `deadlock_timeout` is a minute) and loses. The other session gets run A's line only
/// once the batch was rolled back, commits, and the batch, committed again, gets both
/// rows in. Without `ERP_TOOLS_PG_URL`, prints `skipped` and passes.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_rolled_back_as_a_deadlock_victim_is_committed_again() {
    use sqlx::{AnyConnection, Connection, Row};
    let Some(mut pg) = crate::store::pg_test::PgSchema::new("t_victim").await else {
        return;
    };
    let (db, url) = (pg.db.clone(), pg.url.clone());
    let writer = &db.inner.audit;
    let row = |run: &str| {
        let who = crate::Principal::builder("u-1", 1, "SBY-01").build();
        NewRow::attempt(&crate::audit::AuditEntry::new(
            &who,
            run,
            crate::audit::ATTEMPT,
        ))
    };
    let backend = Backend::Postgres;
    for run in ["victim-a", "victim-b"] {
        let mut work = Work {
            rows: vec![row(run)],
            ..Work::default()
        };
        commit(&writer.pool, backend, &writer.chain, &mut work)
            .await
            .expect("a run's first row");
    }

    let mut other = AnyConnection::connect(&url).await.expect("connect");
    let lock =
        |run: &str| format!("UPDATE erp_audit_runs SET calls = calls WHERE agent_run_id = '{run}'");
    let hold = format!(
        "BEGIN; SET LOCAL deadlock_timeout = '60s'; {}",
        lock("victim-b")
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(hold))
        .execute(&mut other)
        .await
        .expect("hold run B's line");
    let other_pid: i32 = sqlx::query("SELECT pg_backend_pid()")
        .fetch_one(&mut other)
        .await
        .expect("pid")
        .get(0);

    let (pool, chain) = (writer.pool.clone(), writer.chain.clone());
    let batch = tokio::spawn(async move {
        let mut work = Work {
            rows: vec![row("victim-a"), row("victim-b")],
            ..Work::default()
        };
        commit_again_if_chosen_as_victim(&pool, backend, &chain, &mut work).await
    });
    let started = std::time::Instant::now();
    loop {
        let waiting: i64 = sqlx::query(
            "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        )
        .bind(other_pid)
        .fetch_one(&mut pg.admin)
        .await
        .expect("blocked sessions")
        .get(0);
        if waiting > 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the batch never waited for run B's line"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Granted only once the batch's transaction is gone: it was rolled back.
    sqlx::raw_sql(sqlx::AssertSqlSafe(lock("victim-a")))
        .execute(&mut other)
        .await
        .expect("the other session is not the victim");
    let written: i64 =
        sqlx::query("SELECT count(*) FROM erp_audit_log WHERE agent_run_id = 'victim-a'")
            .fetch_one(&mut other)
            .await
            .expect("count")
            .get(0);
    assert_eq!(written, 1, "the batch's rows were rolled back");
    assert!(
        !batch.is_finished(),
        "the batch waits to be committed again"
    );
    sqlx::raw_sql("COMMIT")
        .execute(&mut other)
        .await
        .expect("commit");

    let ids = batch
        .await
        .expect("the batch's task")
        .expect("the batch committed on its second try");
    assert_eq!(ids.len(), 2);
    let lines = sqlx::query(
        "SELECT agent_run_id, calls FROM erp_audit_runs \
         WHERE agent_run_id LIKE 'victim-%' ORDER BY agent_run_id",
    )
    .fetch_all(&mut other)
    .await
    .expect("lines");
    let lines: Vec<(String, i64)> = lines
        .iter()
        .map(|l| (l.get::<String, _>(0), l.get::<i64, _>(1)))
        .collect();
    assert_eq!(
        lines,
        [("victim-a".to_string(), 2), ("victim-b".to_string(), 2)]
    );

    drop(other);
    drop(db);
    pg.drop_schema().await;
}
