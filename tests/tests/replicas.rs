//! Running several replicas: durability chosen per backend, replica leases and the
//! recovery of a dead replica's calls.

use erp_tools_tests::db::{TestDb, raw_audit_pool};

/// SQLite commits with `synchronous = FULL` unless the option that names the risk relaxes
/// it, on the database file and on its audit file.
#[tokio::test]
async fn sqlite_commits_with_synchronous_full_by_default() {
    let full = TestDb::sqlite().await;
    let normal = TestDb::sqlite_with(|o| o.sqlite_synchronous_normal_risks_last_commits()).await;
    // 2 = FULL, 1 = NORMAL
    for (t, expected) in [(&full, 2i64), (&normal, 1)] {
        let main: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
        assert_eq!(main, expected, "main file");
    }
}

use std::time::Duration;

use erp_tools_core::sqlx;
use erp_tools_core::{Backend, Database, DatabaseOptions};
use erp_tools_tests::app::Session;
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;

/// `now` shifted by `secs`, as the framework writes times.
fn time(secs: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(secs))
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

async fn lease_row(db: &Database, id: &str, heartbeat: &str, lease_ms: i64) {
    sqlx::query(
        "INSERT INTO erp_replicas (id, started_at, heartbeat_at, lease_ms) VALUES ($1, $2, $2, $3)",
    )
    .bind(id.to_string())
    .bind(heartbeat.to_string())
    .bind(lease_ms)
    .execute(db.pool())
    .await
    .unwrap();
}

async fn lease_ids(db: &Database) -> Vec<String> {
    sqlx::query_scalar("SELECT id FROM erp_replicas ORDER BY id")
        .fetch_all(db.pool())
        .await
        .unwrap()
}

/// (id, outcome, replica) of the run's rows, oldest first.
async fn rows(db: &Database, run: &str) -> Vec<(i64, String, Option<String>)> {
    db.flush_audit().await.unwrap();
    sqlx::query_as::<_, (i64, String, Option<String>)>(
        "SELECT id, outcome, replica_id FROM erp_audit_log WHERE agent_run_id = $1 ORDER BY id",
    )
    .bind(run.to_string())
    .fetch_all(db.audit_pool())
    .await
    .unwrap()
}

/// Replica A runs a draft (it commits) and two reads, then dies with all three rows at
/// `attempt` (its lease row left behind, expired). Its second read is re-labelled as the
/// call of a live replica. The lease pass of replica B closes A's two rows, linking the
/// draft's to its document, leaves the live replica's row alone, and removes A's lease.
async fn a_dead_replicas_calls_are_closed_and_a_live_ones_are_not(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    let created = s.create_po(po_draft("R-1")).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "y")).await;
    let a = t.db.replica_id().to_string();
    let written = rows(&t.db, &s.run).await;
    assert_eq!(written.len(), 3);
    assert!(
        written
            .iter()
            .all(|(_, _, r)| r.as_deref() == Some(a.as_str())),
        "every attempt row names its replica: {written:?}"
    );
    assert!(lease_ids(&t.db).await.contains(&a), "A holds a lease");
    t.db.close().await;

    let b = t.open_again().await;
    assert!(
        !lease_ids(&b).await.contains(&a),
        "A released its lease on close"
    );
    // A died instead: its lease expired a minute ago, its rows are left at `attempt`.
    lease_row(&b, &a, &time(-60), 15_000).await;
    lease_row(&b, "live-replica", &time(0), 3_600_000).await;
    let raw = raw_audit_pool(&b).await;
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = 'attempt', finished_at = NULL, \
         document_type = NULL, document_id = NULL, document_number = NULL \
         WHERE agent_run_id = $1",
    )
    .bind(s.run.clone())
    .execute(&raw)
    .await
    .unwrap();
    sqlx::query("UPDATE erp_audit_log SET replica_id = 'live-replica' WHERE id = $1")
        .bind(written[2].0)
        .execute(&raw)
        .await
        .unwrap();

    let done = b.recover_dead_replicas().await.unwrap();
    assert_eq!((done.linked, done.interrupted), (1, 1), "{done:?}");
    let log = b.audit_log(Some(&s.run)).await.unwrap();
    assert_eq!(log[0].outcome, "interrupted");
    assert_eq!(
        log[0].document, created.document,
        "the draft is linked to its document"
    );
    assert_eq!(log[1].outcome, "interrupted");
    assert_eq!(log[1].document, None);
    assert_eq!(
        log[2].outcome, "attempt",
        "a live replica's call is never touched"
    );
    let leases = lease_ids(&b).await;
    assert!(
        !leases.contains(&a),
        "the dead replica's lease is removed: {leases:?}"
    );
    assert!(leases.contains(&"live-replica".to_string()));
    assert!(leases.contains(&b.replica_id().to_string()));
    // Again: nothing more to close; the live replica's row still open.
    assert_eq!(b.recover_dead_replicas().await.unwrap(), Default::default());
    if t.backend() == Backend::Sqlite {
        raw.close().await;
    }
    b.close().await;
}
on_both_backends!(a_dead_replicas_calls_are_closed_and_a_live_ones_are_not);

/// Without being asked: a replica with a short lease closes the open call of a replica
/// whose lease expired within a few of its heartbeats, and that of a replica whose lease
/// expires while it watches once that lease has run out.
async fn the_background_pass_closes_a_dead_replicas_calls(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "y")).await;
    let written = rows(&t.db, &s.run).await;
    let watcher =
        Database::connect(DatabaseOptions::new(t.url()).replica_lease(Duration::from_millis(300)))
            .await
            .unwrap();
    lease_row(&watcher, "dead-replica", &time(-60), 15_000).await;
    // Renewed a moment ago, lease 2 s, never renewed again: it dies while we watch.
    lease_row(&watcher, "dying-replica", &time(0), 2_000).await;
    let raw = raw_audit_pool(&watcher).await;
    for ((id, _, _), replica) in written.iter().zip(["dead-replica", "dying-replica"]) {
        sqlx::query(
            "UPDATE erp_audit_log SET outcome = 'attempt', finished_at = NULL, replica_id = $1 \
             WHERE id = $2",
        )
        .bind(replica.to_string())
        .bind(*id)
        .execute(&raw)
        .await
        .unwrap();
    }
    let outcomes = || async {
        rows(&watcher, &s.run)
            .await
            .into_iter()
            .map(|(_, o, _)| o)
            .collect::<Vec<_>>()
    };
    let started = std::time::Instant::now();
    let mut seen = Vec::new();
    // Bounded: 10 s at most, polled every 50 ms.
    while started.elapsed() < Duration::from_secs(10) {
        let now = outcomes().await;
        if seen.is_empty() && now[0] == "interrupted" {
            assert_eq!(
                now[1], "attempt",
                "the dying replica's lease had not run out yet"
            );
            seen.push(started.elapsed());
        }
        if now.iter().all(|o| o == "interrupted") {
            seen.push(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        seen.len(),
        2,
        "both rows closed within the bound: {:?}",
        outcomes().await
    );
    assert!(
        seen[1] >= Duration::from_millis(1_500),
        "the dying replica's row waited for its lease: {seen:?}"
    );
    if t.backend() == Backend::Sqlite {
        raw.close().await;
    }
    watcher.close().await;
}
on_both_backends!(the_background_pass_closes_a_dead_replicas_calls);

/// PostgreSQL: two servers (each its own `Database`, as two replicas) on one database
/// share one caller's budget: of 12 calls alternating between them, exactly the burst
/// is accepted in total; another caller has a budget of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_share_one_callers_rate_limit() {
    use erp_tools_core::auth::TokenConfig;
    use erp_tools_core::mcp::{HttpConfig, RateLimit};
    use erp_tools_tests::app::App;
    use erp_tools_tests::http::{HttpServer, stateless_call};
    use erp_tools_tests::principals::WAREHOUSE;

    let Some(t) = TestDb::postgres().await else {
        return;
    };
    // One call a minute on average, 5 at once: nothing refills during the test.
    let limit = RateLimit {
        per_minute: 1,
        burst: 5,
    };
    let mut servers = Vec::new();
    for _ in 0..2 {
        let runtime = App::open(t.url()).await.runtime;
        servers.push(
            HttpServer::start_configured(runtime, move |url| {
                HttpConfig::new(TokenConfig::development().for_resource(url))
                    .with_rate_limit(Some(limit))
            })
            .await,
        );
    }
    let arguments = valid_arguments(GET_STOCK, "");
    let mut statuses = Vec::new();
    for i in 0..12 {
        let server = &servers[i % 2];
        let token = server.token(&BUYER.principal());
        let response = stateless_call(&server.url, &token, GET_STOCK, &arguments)
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    let accepted = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(
        (accepted, refused),
        (5, 7),
        "rate + burst in total across both replicas: {statuses:?}"
    );
    assert_eq!(
        &statuses[..5],
        &[200; 5],
        "the burst first, whichever replica"
    );
    // Calls at once on both replicas: still the budget of one caller (another one's).
    let token_a = servers[0].token(&WAREHOUSE.principal());
    let token_b = servers[1].token(&WAREHOUSE.principal());
    let mut at_once = Vec::new();
    for i in 0..10 {
        let (url, token) = if i % 2 == 0 {
            (servers[0].url.clone(), token_a.clone())
        } else {
            (servers[1].url.clone(), token_b.clone())
        };
        let arguments = arguments.clone();
        at_once.push(tokio::spawn(async move {
            stateless_call(&url, &token, GET_STOCK, &arguments)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }));
    }
    let mut concurrent = Vec::new();
    for call in at_once {
        concurrent.push(call.await.unwrap());
    }
    let accepted = concurrent.iter().filter(|s| **s != 429).count();
    assert_eq!(
        accepted, 5,
        "concurrent calls on two replicas: {concurrent:?}"
    );
    for server in servers {
        server.stop().await;
    }
}

/// A live replica's open call survives another replica's start (on PostgreSQL; on SQLite
/// one server process owns the file, so a start closes it); a recovery grace set by hand
/// closes it at start-up on both backends.
async fn a_start_up_leaves_a_live_replicas_call_unless_told_otherwise(t: &TestDb) {
    let s = Session::new(&t.db, BUYER).await;
    s.call(GET_STOCK, valid_arguments(GET_STOCK, "x")).await;
    let written = rows(&t.db, &s.run).await;
    // A live replica (lease for an hour) with that call still open.
    lease_row(&t.db, "busy-replica", &time(0), 3_600_000).await;
    let raw = raw_audit_pool(&t.db).await;
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = 'attempt', finished_at = NULL, \
         replica_id = 'busy-replica' WHERE id = $1",
    )
    .bind(written[0].0)
    .execute(&raw)
    .await
    .unwrap();
    if t.backend() == Backend::Sqlite {
        raw.close().await;
    }
    let outcome = |db: Database| {
        let run = s.run.clone();
        async move {
            let o = rows(&db, &run).await[0].1.clone();
            db.close().await;
            o
        }
    };
    let expected = match t.backend() {
        Backend::Postgres => "attempt",
        Backend::Sqlite => "interrupted",
    };
    assert_eq!(outcome(t.open_again().await).await, expected);
    let by_hand = Database::connect(DatabaseOptions::new(t.url()).recovery_grace(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(outcome(by_hand).await, "interrupted");
}
on_both_backends!(a_start_up_leaves_a_live_replicas_call_unless_told_otherwise);

/// When the client's retry of a killed call lands, relative to the lease pass that closes
/// the killed call's row.
#[derive(Clone, Copy, Debug)]
enum RetryLands {
    Before,
    During,
    After,
}

/// `(outcome, message, document number, hash chain)` of audit row `id`.
async fn closed_row(
    db: &Database,
    id: i64,
) -> (String, Option<String>, Option<String>, Option<String>) {
    db.flush_audit().await.unwrap();
    sqlx::query_as(
        "SELECT outcome, message, document_number, chain_id FROM erp_audit_log WHERE id = $1",
    )
    .bind(id)
    .fetch_one(db.audit_pool())
    .await
    .unwrap()
}

/// A replica is killed during a draft, and the client retries the same `client_ref` on
/// another replica, before, during and after that replica's lease pass closes the killed
/// call. The killed call is linked to a document only when its own transaction committed
/// it (its key row names its audit row); a killed call that committed nothing is never
/// linked to the document its retry created, whenever the retry ran.
async fn an_interrupted_call_is_linked_only_to_what_it_committed(t: &TestDb) {
    use erp_tools_tests::app::App;

    let a = Session::new(&t.db, BUYER).await;
    a.create_po(po_draft("shape")).await;
    // The row the killed calls' rows are copied from (a draft's columns, this run).
    let shape = rows(&t.db, &a.run).await[0].0;
    let b_db = t.open_again().await;
    let b = Session {
        app: App::new(&b_db).await,
        who: a.who.clone(),
        run: a.run.clone(),
    };
    let raw = raw_audit_pool(&b_db).await;
    // Replica A died a minute ago; its calls are left at `attempt`.
    lease_row(&b_db, "killed-a", &time(-60), 15_000).await;
    let mut matrix = Vec::new();
    for lands in [RetryLands::Before, RetryLands::During, RetryLands::After] {
        for committed in [false, true] {
            let client_ref = format!("{lands:?}-{committed}");
            let (killed, original) = if committed {
                // A's draft committed; A died before its answer left.
                let out = a.create_po(po_draft(&client_ref)).await;
                let id = rows(&t.db, &a.run).await.last().unwrap().0;
                sqlx::query(
                    "UPDATE erp_audit_log SET outcome = 'attempt', finished_at = NULL, \
                     document_type = NULL, document_id = NULL, document_number = NULL, \
                     replica_id = 'killed-a' WHERE id = $1",
                )
                .bind(id)
                .execute(&raw)
                .await
                .unwrap();
                (id, out.document)
            } else {
                // A died while its draft ran: its attempt row is durable, nothing committed.
                let arguments = po_draft(&client_ref).to_string();
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO erp_audit_log (at, source, agent_run_id, tool_call_id, \
                     tool_name, user_id, branch_id, branch_code, arguments, outcome, replica_id) \
                     SELECT $1, source, agent_run_id, tool_call_id, tool_name, user_id, \
                     branch_id, branch_code, $2, 'attempt', 'killed-a' \
                     FROM erp_audit_log WHERE id = $3 RETURNING id",
                )
                .bind(time(-5))
                .bind(arguments)
                .bind(shape)
                .fetch_one(&raw)
                .await
                .unwrap();
                (id, None)
            };
            let retry = || b.call(CREATE_PO_DRAFT, po_draft(&client_ref));
            let (retried, pass) = match lands {
                RetryLands::Before => {
                    let retried = retry().await;
                    (retried, b_db.recover_dead_replicas().await.unwrap())
                }
                RetryLands::During => {
                    let (retried, pass) = tokio::join!(retry(), b_db.recover_dead_replicas());
                    (retried, pass.unwrap())
                }
                RetryLands::After => {
                    let pass = b_db.recover_dead_replicas().await.unwrap();
                    (retry().await, pass)
                }
            };
            let expected = match committed {
                true => erp_tools_core::Outcome::Replayed,
                false => erp_tools_core::Outcome::Ok,
            };
            assert_eq!(retried.outcome, expected, "{lands:?}");
            let (outcome, message, number, chain) = closed_row(&b_db, killed).await;
            assert_eq!(outcome, "interrupted", "{lands:?}, committed: {committed}");
            let message = message.unwrap_or_default();
            if committed {
                let original = original.clone().expect("A's draft created a document");
                assert_eq!(
                    retried.document.as_ref(),
                    Some(&original),
                    "the retry replays"
                );
                assert_eq!(retried.structured["replayed"], true);
                assert_eq!(number.as_deref(), Some(original.number.as_str()));
                assert!(message.contains("after the draft committed"), "{message}");
                assert_eq!((pass.linked, pass.interrupted), (1, 0), "{lands:?}");
            } else {
                assert_eq!(retried.structured["replayed"], false, "{lands:?}");
                assert_eq!(
                    number, None,
                    "{lands:?}: the killed call is not linked to its retry's document {:?}",
                    retried.document
                );
                assert!(message.contains("nothing was committed"), "{message}");
                assert_eq!((pass.linked, pass.interrupted), (0, 1), "{lands:?}");
                let chain = chain.unwrap_or_default();
                assert!(
                    chain.starts_with(&format!("{}/", b_db.replica_id())),
                    "the closed row joined a hash chain of the replica that closed it: {chain}"
                );
            }
            matrix.push(format!(
                "{lands:?} committed={committed}: {outcome}, linked to {number:?}"
            ));
        }
    }
    println!("{}", matrix.join("\n"));
    if t.backend() == Backend::Sqlite {
        raw.close().await;
    }
    b_db.close().await;
}
on_both_backends!(an_interrupted_call_is_linked_only_to_what_it_committed);
