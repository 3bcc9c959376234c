//! The audit log's hash chain: a log written by the framework verifies intact, and a row
//! altered, removed or inserted behind its back, or the end of a chain cut, is reported
//! with the row it concerns. Both backends.

use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, ChainProblem, ChainReport, Database};
use erp_tools_tests::app::Session;
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::db::{TestDb, raw_audit_pool};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;
use serde_json::json;

/// `(id, chain, position)` of the chained rows, in chain order.
async fn links(db: &Database) -> Vec<(i64, String, i64)> {
    db.flush_audit().await.unwrap();
    sqlx::query_as(
        "SELECT id, chain_id, chain_seq FROM erp_audit_log WHERE chain_id IS NOT NULL \
         ORDER BY chain_id, chain_seq",
    )
    .fetch_all(db.audit_pool())
    .await
    .unwrap()
}

async fn verify(db: &Database) -> ChainReport {
    db.verify_audit_chain(&[]).await.unwrap()
}

async fn run(raw: &sqlx::AnyPool, sql: &str, id: i64) {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(id)
        .execute(raw)
        .await
        .unwrap();
}

async fn a_written_log_verifies_and_each_tampering_is_reported(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    for i in 0..4 {
        s.create_po(po_draft(&format!("C-{i}"))).await;
        s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    }
    // A replay, a refused call and an agent-loop event: every kind of row.
    s.call(CREATE_PO_DRAFT, po_draft("C-0")).await;
    s.call(GET_STOCK, json!({ "unknown": 1 })).await;
    t.db.record_event(AuditEntry::new(&s.who, &s.run, "answered"))
        .await
        .unwrap();

    let intact = verify(&t.db).await;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_log")
        .fetch_one(t.db.audit_pool())
        .await
        .unwrap();
    assert!(intact.is_intact(), "{intact:?}");
    assert_eq!(
        (intact.chains, intact.rows),
        (1, total as u64),
        "{intact:?}"
    );
    assert_eq!((intact.open, intact.pending), (0, 0), "every row linked");
    let heads = t.db.audit_chain_heads().await.unwrap();
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0].seq, total);
    assert_eq!(
        heads[0].chain,
        format!("{}/{}", t.db.replica_id(), &heads[0].at[..7]),
        "the writer's chain of the month"
    );

    let chain = links(&t.db).await;
    let (victim, name, seq) = chain[3].clone();
    let raw = raw_audit_pool(&t.db).await;
    let keep =
        |table: &str| format!("CREATE TABLE {table} AS SELECT * FROM erp_audit_log WHERE id = $1");
    let put_back = |table: &str| format!("INSERT INTO erp_audit_log SELECT * FROM {table}");

    // A column changed by hand.
    run(&raw, &keep("kept_altered"), victim).await;
    run(
        &raw,
        "UPDATE erp_audit_log SET user_id = 'someone-else' WHERE id = $1",
        victim,
    )
    .await;
    let altered = verify(&t.db).await;
    assert_eq!(
        altered.problems,
        [ChainProblem::Altered {
            audit_id: victim,
            chain: name.clone(),
            seq,
        }]
    );
    println!("altered row: {}", altered.problems[0]);
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", victim).await;
    run(&raw, &put_back("kept_altered"), 0).await;
    assert!(
        verify(&t.db).await.is_intact(),
        "the row put back as it was"
    );

    // A row deleted.
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", victim).await;
    let removed = verify(&t.db).await;
    assert_eq!(
        removed.problems,
        [ChainProblem::Removed {
            chain: name.clone(),
            from: seq,
            to: seq,
            next_audit_id: Some(chain[4].0),
        }]
    );
    println!("deleted row: {}", removed.problems[0]);
    run(&raw, &put_back("kept_altered"), 0).await;
    assert!(verify(&t.db).await.is_intact());

    // A finished row inserted by hand.
    let forged: i64 = sqlx::query_scalar(
        "INSERT INTO erp_audit_log (at, finished_at, source, agent_run_id, user_id, outcome) \
         VALUES ('2026-01-05T10:00:00.000000Z', '2026-01-05T10:00:01.000000Z', 'runtime', \
         $1, 'someone-else', 'ok') RETURNING id",
    )
    .bind(s.run.clone())
    .fetch_one(&raw)
    .await
    .unwrap();
    let inserted = verify(&t.db).await;
    assert_eq!(
        inserted.problems,
        [ChainProblem::Unchained { audit_id: forged }]
    );
    println!("inserted row: {}", inserted.problems[0]);
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", forged).await;

    // The chain's last row deleted: consistent in itself, caught by the exported head.
    let (last, _, last_seq) = chain.last().cloned().unwrap();
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", last).await;
    assert!(verify(&t.db).await.is_intact(), "a cut end needs the head");
    let cut = t.db.verify_audit_chain(&heads).await.unwrap();
    assert_eq!(
        cut.problems,
        [ChainProblem::Truncated {
            chain: name.clone(),
            last: last_seq - 1,
            exported: last_seq,
        }]
    );
    println!(
        "last row deleted, checked against the exported head: {}",
        cut.problems[0]
    );
    if t.backend() == erp_tools_core::Backend::Sqlite {
        raw.close().await;
    }
}
on_both_backends!(a_written_log_verifies_and_each_tampering_is_reported);

/// The example's `verify` and `chain-heads` commands on a SQLite database: intact, then a
/// row altered, a row deleted, and the last row deleted (caught with the exported heads).
#[tokio::test]
async fn the_examples_verify_command_names_the_tampered_row() {
    let t = TestDb::sqlite().await;
    let url = t.url().to_string();
    let who = BUYER.principal();
    for i in 0..6 {
        t.db.record_event(
            AuditEntry::new(&who, "run-cli", "answered").message(format!("step {i}")),
        )
        .await
        .unwrap();
    }
    let chain = links(&t.db).await;
    t.db.close().await;

    let (ok, heads) = erp_tools_tests::example::run(&url, &["chain-heads"]);
    assert!(ok, "{heads}");
    let parsed: Vec<erp_tools_core::ChainHead> = serde_json::from_str(&heads).unwrap();
    assert_eq!(parsed.len(), 1, "{heads}");
    let heads_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(heads_file.path(), &heads).unwrap();
    let heads_path = heads_file.path().to_str().unwrap().to_string();
    let (ok, out) = erp_tools_tests::example::run(&url, &["verify", "--heads", &heads_path]);
    assert!(ok && out.contains("intact"), "{out}");

    let again = t.open_again().await;
    let raw = raw_audit_pool(&again).await;
    run(
        &raw,
        "UPDATE erp_audit_log SET message = 'step 99' WHERE id = $1",
        chain[1].0,
    )
    .await;
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", chain[3].0).await;
    run(&raw, "DELETE FROM erp_audit_log WHERE id = $1", chain[5].0).await;
    raw.close().await;
    again.close().await;
    let (ok, out) = erp_tools_tests::example::run(&url, &["verify", "--heads", &heads_path]);
    println!("{out}");
    assert!(!ok, "tampering fails the command");
    let (chain_id, altered, removed) = (&chain[1].1, chain[1].0, chain[4].0);
    assert!(
        out.contains(&format!(
            "TAMPERED: row {altered} (chain {chain_id}, position 2) was altered"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "TAMPERED: chain {chain_id} ends at position 5 but its exported head is at position 6"
        )),
        "{out}"
    );
    // The first finding of a chain is reported: the deletion after the alteration shows
    // once the altered row is put back.
    assert!(
        !out.contains(&format!("next row present is {removed}")),
        "{out}"
    );
}
