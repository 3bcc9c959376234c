//! Crash injection: runs the release build of the distributor example, sends purchase
//! order drafts from several clients at once, `kill -9`s the server at a random moment,
//! restarts it, and checks after every restart that nothing was lost or half-written:
//!
//! - no order without its lines and no line without its order;
//! - every drafted order has its idempotency key row and both provenance columns;
//! - every key row points at an order;
//! - every call that was in flight when the server died, retried with the same
//!   `client_ref`, replays what committed (same order number, `replayed: true`) or, when
//!   nothing had committed, drafts once: never a second order for one `client_ref`;
//! - every audit row left at `attempt` by the killed process is closed as `interrupted`
//!   by the start-up recovery pass.
//!
//! ```text
//! crash_harness --binary target/release/examples/distributor --backend sqlite --kills 100
//! ERP_TOOLS_PG_URL=postgres://root@127.0.0.1:5432/test crash_harness --backend postgres ...
//! ```
//!
//! Bounded: `--kills` rounds, each at most a few seconds; it stops by itself and prints
//! one summary line of figures (`kills=.. survived=..`). Exits non-zero on the first
//! broken invariant, naming it. `scripts/crash/run.sh` builds and runs it.

use std::collections::HashMap;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_core::sqlx;
use erp_tools_core::{Database, DatabaseOptions, Principal};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::drafts::{CallFailure, check_invariants, scalar, send_draft};
use erp_tools_tests::ids::Rng;

struct Args {
    binary: String,
    backend: String,
    kills: usize,
    clients: usize,
    seed: u64,
    port: u16,
}

fn parse_args() -> Args {
    let mut a = Args {
        binary: "target/release/examples/distributor".into(),
        backend: "sqlite".into(),
        kills: 100,
        clients: 4,
        seed: 1,
        port: 18765,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--binary" => a.binary = value.clone(),
            "--backend" => a.backend = value.clone(),
            "--kills" => a.kills = value.parse().expect("--kills N"),
            "--clients" => a.clients = value.parse().expect("--clients N"),
            "--seed" => a.seed = value.parse().expect("--seed N"),
            "--port" => a.port = value.parse().expect("--port N"),
            other => panic!(
                "unknown flag {other}; flags: --binary --backend --kills --clients --seed --port"
            ),
        }
    }
    a
}

/// What a client knows about one `client_ref`.
#[derive(Clone, Debug, PartialEq)]
enum Known {
    /// Sent, no answer yet (the server may have died with it).
    InFlight,
    /// Answered with this order number.
    Drafted(String),
}

#[derive(Default)]
struct Figures {
    answered: u64,
    in_flight_at_kill: u64,
    retried_replayed: u64,
    retried_drafted: u64,
    interrupted_rows: u64,
    linked_rows: u64,
}

/// One draft call; a call over the rate limit waits as told (HTTP 429 `Retry-After`)
/// and is sent again.
async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    client_ref: &str,
) -> Result<(String, bool), String> {
    loop {
        match send_draft(http, url, token, client_ref, client_ref).await {
            Ok(d) => return Ok((d.number, d.replayed)),
            Err(CallFailure::RateLimited(wait)) => {
                tokio::time::sleep(wait.clamp(Duration::from_secs(1), Duration::from_secs(5))).await
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn start_server(a: &Args, db_url: &str, log: &std::path::Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("server log");
    let child = Command::new(&a.binary)
        .args([
            "--db",
            db_url,
            "--resource",
            &format!("http://127.0.0.1:{}/mcp", a.port),
            "serve",
            "--addr",
            &format!("127.0.0.1:{}", a.port),
        ])
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", a.binary));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", a.port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server did not start in 20 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let a = parse_args();
    let t = match a.backend.as_str() {
        "sqlite" => TestDb::sqlite().await,
        "postgres" => TestDb::postgres()
            .await
            .expect("ERP_TOOLS_PG_URL must name the PostgreSQL database"),
        other => panic!("--backend sqlite or postgres, not {other}"),
    };
    let db_url = t.url().to_string();
    t.db.close().await;
    let log = std::env::temp_dir().join(format!("crash-harness-{}-{}.log", a.backend, a.seed));
    let _ = std::fs::remove_file(&log);
    let url = format!("http://127.0.0.1:{}/mcp", a.port);
    let tokens = TokenConfig::development().for_resource(&url);
    let principal = Principal::builder("7", 1, "SBY-01")
        .role("buyer")
        .scopes(["purchasing:read", "purchasing:draft"])
        .build();
    let token = mint(&tokens, &principal, Duration::from_secs(3600));
    // The checks read through the framework's read-only pool: on SQLite it attaches the
    // audit log's own file, so `erp_audit_log` and the documents are read together.
    let checks = Database::connect(DatabaseOptions::new(db_url.clone()))
        .await
        .expect("check database");
    let pool = checks.read_db().pool().clone();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let known: Arc<Mutex<HashMap<String, Known>>> = Arc::default();
    let mut figures = Figures::default();
    let mut rng = Rng::seeded(a.seed);
    let started = Instant::now();
    let mut survived = 0usize;

    for round in 0..a.kills {
        // The start-up recovery pass closes every `attempt` row of the killed process:
        // the server runs it when it opens the database. On PostgreSQL its default grace
        // (10 minutes) leaves rows younger than that to the other server processes that may
        // share the database, so the harness, the only process here, first runs the same
        // pass with no grace, as a single-server deployment configured so would.
        if a.backend == "postgres" {
            recover_now(&db_url).await;
        }
        let mut server = start_server(&a, &db_url, &log);
        // Retry every call that was in flight when the server died.
        let in_flight: Vec<String> = known
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, k)| **k == Known::InFlight)
            .map(|(r, _)| r.clone())
            .collect();
        for client_ref in in_flight {
            let committed: Option<String> = sqlx::query_scalar(
                "SELECT document_number FROM erp_idempotency_keys WHERE client_ref = $1",
            )
            .bind(client_ref.clone())
            .fetch_optional(&pool)
            .await
            .expect("key lookup")
            .flatten();
            let (number, replayed) = call(&http, &url, &token, &client_ref)
                .await
                .unwrap_or_else(|e| fail(round, &format!("retry of {client_ref}: {e}")));
            match committed {
                Some(n) if n == number && replayed => figures.retried_replayed += 1,
                Some(n) => fail(
                    round,
                    &format!(
                        "retry of {client_ref} answered {number} (replayed {replayed}), but {n} had committed"
                    ),
                ),
                None if !replayed => figures.retried_drafted += 1,
                None => fail(
                    round,
                    &format!("retry of {client_ref} replayed {number}, which had not committed"),
                ),
            }
            known
                .lock()
                .unwrap()
                .insert(client_ref, Known::Drafted(number));
        }
        if let Err(broken) = check_invariants(&pool).await {
            fail(round, &broken);
        }
        // Rows of the live server (its retries just answered) may still be at `attempt`
        // for a moment on SQLite, where a draft's outcome commits with the audit
        // writer's next batch: those get up to 5 s; rows of a killed server none.
        let open_of = |live: bool| {
            let pool = pool.clone();
            async move {
                let sql = format!(
                    "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'attempt' \
                     AND source = 'runtime' AND replica_id {} \
                     (SELECT id FROM erp_replicas)",
                    if live { "IN" } else { "NOT IN" }
                );
                sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
                    .fetch_one(&pool)
                    .await
                    .expect("count open rows")
            }
        };
        let dead = open_of(false).await;
        let settled = Instant::now() + Duration::from_secs(5);
        let mut live = open_of(true).await;
        while live != 0 && Instant::now() < settled {
            tokio::time::sleep(Duration::from_millis(50)).await;
            live = open_of(true).await;
        }
        let open = dead + live;
        if open != 0 {
            fail(
                round,
                &format!("{open} audit rows left at attempt after the recovery pass"),
            );
        }
        survived += 1;

        // Load, then a kill at a random moment.
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut tasks = Vec::new();
        for client in 0..a.clients {
            let (http, url, token, known, stop) = (
                http.clone(),
                url.clone(),
                token.clone(),
                known.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut answered = 0u64;
                for seq in 0.. {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let client_ref = format!("r{round}-c{client}-{seq}");
                    known
                        .lock()
                        .unwrap()
                        .insert(client_ref.clone(), Known::InFlight);
                    match call(&http, &url, &token, &client_ref).await {
                        Ok((number, false)) => {
                            known
                                .lock()
                                .unwrap()
                                .insert(client_ref, Known::Drafted(number));
                            answered += 1;
                        }
                        Ok((number, true)) => {
                            panic!("a first call of {client_ref} was a replay of {number}")
                        }
                        // The server died under it: it stays in flight.
                        Err(e) if e.starts_with("transport") => break,
                        Err(e) => panic!("{client_ref}: {e}"),
                    }
                }
                answered
            }));
        }
        let wait = rng.between(20, 700);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        server.kill().expect("kill -9");
        server.wait().expect("reap the server");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for task in tasks {
            match task.await {
                Ok(n) => figures.answered += n,
                Err(e) => fail(round, &format!("a client failed: {e}")),
            }
        }
        figures.in_flight_at_kill += known
            .lock()
            .unwrap()
            .values()
            .filter(|k| **k == Known::InFlight)
            .count() as u64;
    }
    // The last restart: recovery and the checks once more.
    if a.backend == "postgres" {
        recover_now(&db_url).await;
    }
    let mut server = start_server(&a, &db_url, &log);
    if let Err(broken) = check_invariants(&pool).await {
        fail(a.kills, &broken);
    }
    figures.interrupted_rows = scalar(
        &pool,
        "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'interrupted'",
    )
    .await as u64;
    figures.linked_rows = scalar(
        &pool,
        "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'interrupted' AND document_id IS NOT NULL",
    )
    .await as u64;
    let orders = scalar(
        &pool,
        "SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run IS NOT NULL",
    )
    .await;
    server.kill().ok();
    server.wait().ok();
    pool.close().await;
    println!(
        "crash harness {}: kills={} survived={} clients={} drafts_answered={} in_flight_at_kill={} \
         retries_replayed={} retries_drafted={} orders={} interrupted_rows={} interrupted_linked={} seconds={:.1}",
        a.backend,
        a.kills,
        survived,
        a.clients,
        figures.answered,
        figures.in_flight_at_kill,
        figures.retried_replayed,
        figures.retried_drafted,
        orders,
        figures.interrupted_rows,
        figures.linked_rows,
        started.elapsed().as_secs_f64()
    );
}

/// The start-up recovery pass with no grace period.
async fn recover_now(db_url: &str) {
    let db = Database::connect(DatabaseOptions::new(db_url).recovery_grace(Duration::ZERO))
        .await
        .expect("recovery pass");
    db.close().await;
}

fn fail(round: usize, what: &str) -> ! {
    eprintln!("crash harness: invariant broken after kill {round}: {what}");
    std::process::exit(1)
}
