//! Signed digests outside the database: a log written with digests on verifies against
//! them, and each change of the table, made behind the framework's back after the
//! digests were written, is a finding; so is a digest deleted, edited, or replaced by one
//! re-signed with the real key. Both backends, one replica and two.

use std::path::{Path, PathBuf};

use erp_tools_core::sqlx;
use erp_tools_core::{
    AuditEntry, AuditReader, ChainProblem, Database, DatabaseOptions, DigestFinding, DigestKey,
    DigestOptions, DigestPublicKey, DigestReport, SignedDigest,
};
use erp_tools_tests::db::{TestDb, raw_audit_pool};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

/// A server process with digests on (every hour: here written on demand and at close).
async fn open(url: &str, key: &DigestKey, dir: &Path) -> Database {
    let digests =
        DigestOptions::to_dir(key.clone(), dir).every(std::time::Duration::from_secs(3600));
    Database::connect(DatabaseOptions::new(url).audit_digests(digests))
        .await
        .unwrap()
}

async fn events(db: &Database, n: usize, run: &str) {
    let who = BUYER.principal();
    for i in 0..n {
        db.record_event(AuditEntry::new(&who, run, "answered").message(format!("{run} {i}")))
            .await
            .unwrap();
    }
}

/// Two processes one after the other, each writing rows, a digest on demand and its last
/// digest at close: two replicas' chains, four digests.
struct Log {
    key: DigestKey,
    dir: tempfile::TempDir,
    /// The chain ids, in order of writing.
    chains: Vec<String>,
}

async fn written(t: &TestDb) -> Log {
    t.db.close().await;
    let (key, dir) = (DigestKey::generate(), tempfile::tempdir().unwrap());
    let mut chains = Vec::new();
    for run in ["first", "second"] {
        let db = open(t.url(), &key, dir.path()).await;
        events(&db, 4, run).await;
        db.write_audit_digest().await.unwrap();
        events(&db, 2, run).await;
        chains.push(format!(
            "{}/{}",
            db.replica_id(),
            chrono::Utc::now().format("%Y-%m")
        ));
        db.close().await;
    }
    Log { key, dir, chains }
}

async fn check(t: &TestDb, log: &Log) -> DigestReport {
    let reader = AuditReader::open(t.url()).await.unwrap();
    let public = DigestPublicKey::from_hex(&log.key.public_key_hex()).unwrap();
    let report = reader
        .verify_digests(log.dir.path(), &public, None)
        .await
        .unwrap();
    reader.close().await;
    for f in &report.findings {
        println!("finding: {f}");
    }
    for p in &report.chain.problems {
        println!("chain: {p}");
    }
    report
}

/// Runs `sql` (binding `id` if given) on the audit log behind the framework's back.
async fn tamper(t: &TestDb, sql: &str, binds: &[&str]) {
    let db = Database::open(t.url()).await.unwrap();
    let raw = raw_audit_pool(&db).await;
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()));
    for b in binds {
        q = q.bind(b.to_string());
    }
    q.execute(&raw).await.unwrap();
    if t.backend() == erp_tools_core::Backend::Sqlite {
        raw.close().await;
    }
    // Closed without its own digests: this process is the attacker's.
    db.close().await;
}

fn digest_files(log: &Log) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(log.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

async fn an_untouched_log_verifies(t: &TestDb) {
    let log = written(t).await;
    let report = check(t, &log).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(
        (report.digests, report.replicas, report.newer_rows),
        (4, 2, 0)
    );
    assert_eq!(report.chain.chains, 2);
    let text = std::fs::read_to_string(&digest_files(&log)[1]).unwrap();
    println!("{text}");
    let signed: SignedDigest = serde_json::from_str(&text).unwrap();
    assert!(signed.digest.last && signed.digest.seq == 2, "{signed:?}");
}
on_both_backends!(an_untouched_log_verifies);

async fn a_cut_end_and_a_deleted_chain_are_found(t: &TestDb) {
    let log = written(t).await;
    tamper(
        t,
        "DELETE FROM erp_audit_log WHERE chain_id = $1 AND chain_seq = 6",
        &[&log.chains[0]],
    )
    .await;
    tamper(
        t,
        "DELETE FROM erp_audit_log WHERE chain_id = $1",
        &[&log.chains[1]],
    )
    .await;
    let report = check(t, &log).await;
    let mut problems = report.chain.problems.clone();
    problems.sort_by_key(|p| format!("{p:?}"));
    let mut expected = vec![
        ChainProblem::Truncated {
            chain: log.chains[0].clone(),
            last: 5,
            exported: 6,
        },
        ChainProblem::Truncated {
            chain: log.chains[1].clone(),
            last: 0,
            exported: 6,
        },
    ];
    expected.sort_by_key(|p| format!("{p:?}"));
    assert_eq!(problems, expected, "{report:?}");
}
on_both_backends!(a_cut_end_and_a_deleted_chain_are_found);

async fn a_rehashed_chain_and_an_appended_row_are_found(t: &TestDb) {
    let log = written(t).await;
    // Re-hashing the rest of a chain after an edit leaves it consistent in itself; its
    // digested head no longer matches. Played here by changing the head's hash.
    tamper(
        t,
        "UPDATE erp_audit_log SET chain_hash = $2 WHERE chain_id = $1 AND chain_seq = 6",
        &[&log.chains[0], &"ab".repeat(32)],
    )
    .await;
    // A row appended to the second chain (its hash is not checked here: the row is after
    // the head its writer's last digest named).
    tamper(
        t,
        "INSERT INTO erp_audit_log (at, finished_at, source, agent_run_id, user_id, outcome, \
         chain_id, chain_seq, chain_hash) VALUES ('2026-12-01T00:00:00.000000Z', \
         '2026-12-01T00:00:00.000000Z', 'runtime', 'x', 'u', 'ok', $1, 7, $2)",
        &[&log.chains[1], &"cd".repeat(32)],
    )
    .await;
    let report = check(t, &log).await;
    assert!(
        report.chain.problems.contains(&ChainProblem::HeadDiffers {
            chain: log.chains[0].clone(),
            seq: 6
        }),
        "{report:?}"
    );
    assert!(
        report.findings.contains(&DigestFinding::AfterLast {
            chain: log.chains[1].clone(),
            digested: 6,
            now: 7
        }),
        "{report:?}"
    );
}
on_both_backends!(a_rehashed_chain_and_an_appended_row_are_found);

async fn a_forged_archive_claim_and_a_raised_origin_are_found(t: &TestDb) {
    let log = written(t).await;
    tamper(
        t,
        "DELETE FROM erp_audit_log WHERE chain_id = $1",
        &[&log.chains[0]],
    )
    .await;
    let claim = serde_json::json!({
        "month": "2026-12", "file": "/nowhere/erp_audit_log_2026-12.jsonl", "rows": 6,
        "sha256": "00".repeat(32),
        "heads": [{"chain": log.chains[0], "seq": 6, "hash": "00", "audit_id": 6, "at": "x"}]
    });
    tamper(
        t,
        "INSERT INTO erp_audit_archives (month, file, rows, heads, archived_at) \
         VALUES ('2026-12', 'x', 6, $1, 'x')",
        &[&claim.to_string()],
    )
    .await;
    tamper(
        t,
        "UPDATE erp_audit_chain_origin SET last_unchained_id = 3",
        &[],
    )
    .await;
    let report = check(t, &log).await;
    assert!(
        report.findings.contains(&DigestFinding::ArchiveNotCovered {
            month: "2026-12".into()
        }),
        "{report:?}"
    );
    assert!(
        report.findings.contains(&DigestFinding::OriginChanged {
            digested: 0,
            now: 3
        }),
        "{report:?}"
    );
    assert!(
        report.chain.problems.contains(&ChainProblem::Truncated {
            chain: log.chains[0].clone(),
            last: 0,
            exported: 6
        }),
        "the claim does not excuse the chain: {report:?}"
    );
}
on_both_backends!(a_forged_archive_claim_and_a_raised_origin_are_found);

async fn deleted_edited_and_resigned_digests_are_found(t: &TestDb) {
    let log = written(t).await;
    let files = digest_files(&log);
    // The first replica's first digest deleted.
    std::fs::remove_file(&files[0]).unwrap();
    // The second replica's first digest edited (its head moved back), signature kept.
    let mut second: SignedDigest =
        serde_json::from_slice(&std::fs::read(&files[2]).unwrap()).unwrap();
    let original = second.clone();
    second.digest.chains.clear();
    std::fs::write(&files[2], serde_json::to_vec(&second).unwrap()).unwrap();
    let report = check(t, &log).await;
    let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let first_replica = original.digest.replica.clone();
    assert!(
        report.findings.contains(&DigestFinding::BadSignature {
            file: name(&files[2])
        }),
        "{report:?}"
    );
    let gone: SignedDigest = serde_json::from_slice(&std::fs::read(&files[1]).unwrap()).unwrap();
    assert!(
        report.findings.contains(&DigestFinding::Missing {
            replica: gone.digest.replica.clone(),
            from: 1,
            to: 1
        }),
        "{report:?}"
    );
    // Re-signed with the real key (an attacker who holds it): the next digest no longer
    // names it.
    let resigned = log.key.sign(second.digest.clone());
    std::fs::write(&files[2], serde_json::to_vec(&resigned).unwrap()).unwrap();
    let report = check(t, &log).await;
    assert!(
        report.findings.contains(&DigestFinding::Replaced {
            replica: first_replica,
            seq: 1
        }),
        "{report:?}"
    );
}
on_both_backends!(deleted_edited_and_resigned_digests_are_found);

async fn two_live_replicas_each_write_a_digest_chain(t: &TestDb) {
    t.db.close().await;
    let (key, dir) = (DigestKey::generate(), tempfile::tempdir().unwrap());
    let a = open(t.url(), &key, dir.path()).await;
    let b = open(t.url(), &key, dir.path()).await;
    events(&a, 3, "a").await;
    events(&b, 3, "b").await;
    a.write_audit_digest().await.unwrap();
    b.write_audit_digest().await.unwrap();
    events(&a, 1, "a").await;
    a.close().await;
    b.close().await;
    let log = Log {
        key,
        dir,
        chains: Vec::new(),
    };
    let report = check(t, &log).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!((report.digests, report.replicas), (4, 2));
    // A row inserted with no link after the last digests: in no chain, and newer than
    // every digest.
    tamper(
        t,
        "INSERT INTO erp_audit_log (at, finished_at, source, agent_run_id, user_id, outcome) \
         VALUES ('2026-01-05T10:00:00.000000Z', '2026-01-05T10:00:01.000000Z', 'runtime', \
         'x', 'someone-else', 'ok')",
        &[],
    )
    .await;
    let report = check(t, &log).await;
    assert_eq!(report.newer_rows, 1, "{report:?}");
    assert!(
        matches!(
            report.chain.problems.as_slice(),
            [ChainProblem::Unchained { .. }]
        ),
        "{report:?}"
    );
}
on_both_backends!(two_live_replicas_each_write_a_digest_chain);
