//! The checkpoint's lease fence on PostgreSQL under a concurrent take-over
//! (`run_turn.rs`). Without `ERP_TOOLS_PG_URL`, prints `skipped` and passes.

use std::time::Duration;

use sqlx::{AnyConnection, Connection};

use super::*;
use crate::audit::now_text;
use crate::store::run_log::{self as sql, NewRun};

fn turn(step: i64) -> TurnRow {
    TurnRow {
        step,
        action: "{}".to_string(),
        input_tokens: 10,
        output_tokens: 5,
        outcome: None,
    }
}

async fn new_run(db: &Database, run_id: &str, token: &str) {
    let mut conn = db.pool().acquire().await.expect("a connection");
    let new = NewRun {
        run_id,
        user_id: "u-1",
        branch_id: 1,
        branch_code: "SBY-01",
        opening: "[]".to_string(),
        grants: "{}".to_string(),
        replica: "r-old",
        token,
        now: &now_text(),
    };
    let inserted = sql::start_query(sql::START, &new)
        .fetch_optional(&mut *conn)
        .await
        .expect("start");
    assert!(inserted.is_some(), "a new run's row");
}

/// A take-over and a checkpoint of the driver it takes the run from are serialised on
/// the run's row: a take-over that came first leaves the checkpoint nothing to write, one
/// that came second waits until the checkpoint is committed and takes the run with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_and_a_take_over_of_its_run_are_serialised() {
    let Some(pg) = crate::store::pg_test::PgSchema::new("t_fence").await else {
        return;
    };
    let (db, url) = (pg.db.clone(), pg.url.clone());
    let mut other = AnyConnection::connect(&url).await.expect("connect");
    let wait = Duration::from_millis(400);

    // The take-over holds the row first: the checkpoint waits, then writes nothing.
    new_run(&db, "fence-a", "lease-a").await;
    let mut tx = other.begin().await.expect("begin");
    let taken = sqlx::query(
        "UPDATE erp_run_log SET lease_token = 'lease-b', replica_id = 'r-new' \
         WHERE agent_run_id = 'fence-a' AND lease_token = 'lease-a' AND status = 'running'",
    )
    .execute(&mut *tx)
    .await
    .expect("take over");
    assert_eq!(taken.rows_affected(), 1);
    let cut_off = db.clone();
    let pending = tokio::spawn(async move {
        checkpoint(
            &cut_off,
            "fence-a",
            "lease-a",
            turn(1),
            None,
            &now_text(),
            None,
        )
        .await
    });
    tokio::time::sleep(wait).await;
    assert!(
        !pending.is_finished(),
        "the checkpoint waits for the take-over"
    );
    tx.commit().await.expect("commit");
    let held = pending.await.expect("join").expect("checkpoint");
    assert!(!held, "the lease is lost");
    assert!(sql::turns(db.pool(), "fence-a").await.unwrap().is_empty());

    // The checkpoint holds the row first: the take-over waits for its commit, then takes
    // the run with the turn in its log.
    new_run(&db, "fence-b", "lease-a").await;
    let mut tx = other.begin().await.expect("begin");
    let stored = sqlx::query(PG_TURN)
        .bind(1_i64)
        .bind(10_i64)
        .bind(5_i64)
        .bind(now_text())
        .bind("fence-b".to_string())
        .bind("lease-a".to_string())
        .bind(None::<String>)
        .bind(None::<i64>)
        .bind("{}".to_string())
        .bind(None::<String>)
        .execute(&mut *tx)
        .await
        .expect("checkpoint");
    assert_eq!(stored.rows_affected(), 1);
    let taker = db.clone();
    let taking = tokio::spawn(async move {
        let by = "replica r-new as u-1";
        let now = now_text();
        sql::take_over(
            taker.pool(),
            "fence-b",
            "lease-a",
            "r-new",
            "lease-b",
            by,
            &now,
        )
        .await
    });
    tokio::time::sleep(wait).await;
    assert!(
        !taking.is_finished(),
        "the take-over waits for the checkpoint"
    );
    tx.commit().await.expect("commit");
    assert!(taking.await.expect("join").expect("take over"));
    let row = sql::get(db.pool(), "fence-b")
        .await
        .unwrap()
        .expect("the run");
    assert_eq!(row.lease_token.as_deref(), Some("lease-b"));
    assert_eq!((row.steps, row.input_tokens, row.output_tokens), (1, 10, 5));
    assert_eq!(row.resume_count, 1);
    assert!(row.interrupted_at.is_some());

    // The old driver writes nothing any more; the new one goes on.
    let prior = || Some((1, "{\"messages\":[]}".to_string()));
    let now = now_text();
    let old = checkpoint(&db, "fence-b", "lease-a", turn(2), prior(), &now, None);
    assert!(!old.await.expect("checkpoint"));
    let turns = sql::turns(db.pool(), "fence-b").await.unwrap();
    assert_eq!((turns.len(), turns[0].outcome.as_deref()), (1, None));
    let now = now_text();
    let new = checkpoint(&db, "fence-b", "lease-b", turn(2), prior(), &now, None);
    assert!(new.await.expect("checkpoint"));
    let row = sql::get(db.pool(), "fence-b")
        .await
        .unwrap()
        .expect("the run");
    assert_eq!(
        (row.steps, row.input_tokens, row.output_tokens),
        (2, 20, 10)
    );
    assert!(row.updated_at > row.resumed_at.clone().unwrap_or_default());

    drop(other);
    drop(db);
    pg.drop_schema().await;
}
