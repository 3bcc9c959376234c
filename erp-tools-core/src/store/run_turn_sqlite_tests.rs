//! The checkpoint on SQLite, on the run log's own connection (`relaxed.rs`): a driver
//! that lost its run writes nothing, and the connection goes on serving the next write.

use super::*;
use crate::audit::now_text;
use crate::store::run_log::{self as sql, NewRun};

fn turn(step: i64) -> TurnRow {
    TurnRow {
        step,
        action: format!("{{\"step\":{step}}}"),
        input_tokens: 10,
        output_tokens: 5,
        outcome: None,
    }
}

async fn turns(db: &Database, run_id: &str) -> Vec<(i64, Option<String>)> {
    let turns = sql::turns(db.pool(), run_id).await.expect("turns");
    turns.into_iter().map(|t| (t.step, t.outcome)).collect()
}

/// Run `run_id`'s row, driven by replica `r-1` under `lease-a` (its strings live for the
/// test's process).
fn new_run(run_id: &str, now: &str) -> NewRun<'static> {
    NewRun {
        run_id: run_id.to_string().leak(),
        user_id: "u-1",
        branch_id: 1,
        branch_code: "SBY-01",
        opening: "[]".to_string(),
        grants: "{}".to_string(),
        replica: "r-1",
        token: "lease-a",
        now: now.to_string().leak(),
    }
}

/// A new SQLite file in `dir`.
async fn open(dir: &tempfile::TempDir) -> Database {
    let url = format!("sqlite://{}", dir.path().join("j.db").display());
    Database::open(&url).await.expect("open")
}

#[tokio::test]
async fn a_checkpoint_of_a_lost_run_writes_nothing_and_the_journal_goes_on() {
    let dir = tempfile::tempdir().expect("a directory");
    let db = open(&dir).await;
    let new = new_run("j-1", &now_text());
    let held = db.journal().lock(&db).await.expect("the journal");
    let started = held
        .transaction(async |conn| {
            let q = sql::start_query(sql::START, &new);
            Ok(q.fetch_optional(conn).await?.is_some())
        })
        .await
        .expect("start");
    assert!(started);
    let now = now_text();
    assert!(
        checkpoint(&db, "j-1", "lease-a", turn(1), None, &now, None)
            .await
            .expect("turn 1")
    );

    // Another process takes the run over.
    sqlx::query("UPDATE erp_run_log SET lease_token = 'lease-b' WHERE agent_run_id = 'j-1'")
        .execute(db.pool())
        .await
        .expect("take over");
    let prior = Some((1, "{\"old\":true}".to_string()));
    let held = checkpoint(&db, "j-1", "lease-a", turn(2), prior, &now, None).await;
    assert!(!held.expect("a lost lease is an answer, not an error"));
    assert_eq!(turns(&db, "j-1").await, vec![(1, None)], "nothing written");

    // The journal's connection rolled back and serves the new driver; the write pool
    // is not left waiting on a lock.
    let prior = Some((1, "{\"new\":true}".to_string()));
    assert!(
        checkpoint(&db, "j-1", "lease-b", turn(2), prior, &now, None)
            .await
            .expect("turn 2")
    );
    assert_eq!(
        turns(&db, "j-1").await,
        vec![(1, Some("{\"new\":true}".to_string())), (2, None)]
    );
    let run = sql::get(db.pool(), "j-1")
        .await
        .expect("the run")
        .expect("logged");
    assert_eq!(
        (run.steps, run.input_tokens, run.output_tokens),
        (2, 20, 10)
    );
    db.close().await;
}

#[tokio::test]
async fn an_outcome_goes_with_the_next_turn_and_a_turn_further_back_is_updated() {
    let dir = tempfile::tempdir().expect("a directory");
    let db = open(&dir).await;
    let new = new_run("a-1", &now_text());
    let started = sql::start_query(sql::START, &new)
        .fetch_optional(db.pool())
        .await
        .expect("start");
    assert!(started.is_some());
    let now = now_text();
    let write = async |step: i64, prior: Option<(i64, &str)>| {
        let prior = prior.map(|(s, o)| (s, o.to_string()));
        let held = checkpoint(&db, "a-1", "lease-a", turn(step), prior, &now, None).await;
        assert!(held.expect("checkpoint"), "turn {step}");
    };
    write(1, None).await;
    write(2, Some((1, "{\"one\":1}"))).await;
    // Not the turn just before: its own row is updated.
    write(4, Some((2, "{\"two\":2}"))).await;
    let stored: Vec<(i64, Option<String>)> = sqlx::query_as(
        "SELECT step, prior_outcome FROM erp_run_turns WHERE agent_run_id = 'a-1' ORDER BY step",
    )
    .fetch_all(db.pool())
    .await
    .expect("rows");
    assert_eq!(
        stored,
        vec![(1, None), (2, Some("{\"one\":1}".to_string())), (4, None)],
        "turn 2 carries turn 1's outcome; turn 4 carries none"
    );
    assert_eq!(
        turns(&db, "a-1").await,
        vec![
            (1, Some("{\"one\":1}".to_string())),
            (2, Some("{\"two\":2}".to_string())),
            (4, None)
        ]
    );
    let run = sql::get(db.pool(), "a-1")
        .await
        .expect("the run")
        .expect("logged");
    assert_eq!(
        (run.steps, run.input_tokens, run.output_tokens),
        (4, 30, 15)
    );
    assert!(run.updated_at >= now);
    db.close().await;
}
