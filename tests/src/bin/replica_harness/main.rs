//! Several replicas of the distributor example on one PostgreSQL database, behind a
//! round-robin proxy on loopback, as production runs them behind a load balancer:
//!
//! 1. **rate limit**: one caller calls as fast as it can through every replica; the calls
//!    accepted in total stay within the configured burst plus rate (one bucket in the
//!    database, not one per process);
//! 2. **stop**: SIGTERM to every replica: each exits 0; they start again with no limit;
//! 3. **storm**: clients draft and send every answered call once more, which the proxy
//!    lands on another replica: one order per `client_ref`, every resend a replay;
//! 4. **reviewer**: signed in through the proxy, signed in on every replica; an action
//!    paused by an agent loop (its own process) is approved on replica 1 and runs once
//!    though another process resumes it too; signed out on one replica, out on all;
//! 5. **kill**: `kill -9` of a replica mid-storm; clients retry what got no answer through
//!    the others: every call answered, no duplicate; a live replica closes the dead one's
//!    open calls as `interrupted` within its lease (the time is measured);
//! 6. **rolling restart**: SIGTERM, exit, start, ready, each replica in turn under load:
//!    0 interrupted calls, every call answered.
//!
//! ```text
//! ERP_TOOLS_PG_URL=postgres://root@127.0.0.1:5432/test \
//!   replica_harness --binary target/debug/examples/distributor --replicas 3
//! ```
//!
//! Flags: `--binary`, `--replicas` (3), `--base-port` (19100), `--clients` (6), `--calls`
//! (drafts per storm client, 20), `--kill-after-ms` (1500: when replica 0 is killed in
//! phase 5), `--proxy HOST:PORT` (a load balancer of your own, e.g.
//! haproxy, already forwarding to ports `base-port..base-port + replicas`, instead of the
//! harness's round-robin proxy). For haproxy, a backend of
//! `balance roundrobin`, `option httpchk GET /readyz`, `default-server inter 500ms fall 1
//! rise 1`, `retries 3`, `option redispatch` and one `server .. check` per replica. Bounded: every phase stops by itself (about a minute in
//! all, most of it the lease of the killed replica). Prints one summary line of figures;
//! exits non-zero at the first broken promise, naming it. `scripts/replicas/run.sh` builds
//! and runs it.

mod fleet;
mod load;
mod scenarios;

use std::process::Command;
use std::time::{Duration, Instant};

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_core::{Database, DatabaseOptions, Principal, sqlx};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::proxy::RoundRobin;

use fleet::Fleet;
use load::LoadConfig;

/// The rate limit of the rate-limit phase: calls per minute, burst.
const RATE: (u32, u32) = (600, 20);

struct Args {
    binary: String,
    replicas: usize,
    base_port: u16,
    clients: usize,
    calls: usize,
    proxy: Option<std::net::SocketAddr>,
    kill_after: Duration,
}

fn parse_args() -> Args {
    let mut a = Args {
        binary: "target/debug/examples/distributor".into(),
        replicas: 3,
        base_port: 19100,
        clients: 6,
        calls: 20,
        proxy: None,
        kill_after: Duration::from_millis(1500),
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || -> usize { value.parse().unwrap_or_else(|_| panic!("{flag} N")) };
        match flag.as_str() {
            "--binary" => a.binary = value.clone(),
            "--replicas" => a.replicas = number(),
            "--base-port" => a.base_port = number() as u16,
            "--clients" => a.clients = number(),
            "--calls" => a.calls = number(),
            "--kill-after-ms" => a.kill_after = Duration::from_millis(number() as u64),
            "--proxy" => {
                a.proxy = Some(
                    value
                        .parse()
                        .unwrap_or_else(|_| panic!("--proxy HOST:PORT")),
                )
            }
            other => panic!(
                "unknown flag {other}; flags: --binary --replicas --base-port --clients --calls \
                 --proxy --kill-after-ms"
            ),
        }
    }
    assert!(
        a.replicas >= 3,
        "--replicas: at least 3 (the reviewer phase uses three)"
    );
    a
}

/// What every phase shares: the proxy, the database, tokens, the example binary.
pub struct Harness {
    /// The harness's own proxy, unless `--proxy` names another.
    own_proxy: Option<RoundRobin>,
    proxy: std::net::SocketAddr,
    tokens: TokenConfig,
    pool: sqlx::AnyPool,
    binary: String,
    db_url: String,
    clients: usize,
}

impl Harness {
    fn proxy_base(&self) -> String {
        format!("http://{}", self.proxy)
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.proxy_base())
    }

    /// A token of user `user` of branch SBY-01 with `scopes`, for every replica.
    fn token(&self, user: &str, scopes: &[&str]) -> String {
        let principal = Principal::builder(user, 1, "SBY-01")
            .role("buyer")
            .scopes(scopes.iter().copied())
            .build();
        mint(&self.tokens, &principal, Duration::from_secs(3600))
    }

    /// How the clients of phase `prefix` call.
    fn load(&self, prefix: &str, clients: usize, calls: usize, resend: bool) -> LoadConfig {
        LoadConfig {
            url: self.mcp_url(),
            token: self.token("7", &["purchasing:read", "purchasing:draft"]),
            prefix: prefix.into(),
            clients,
            calls_per_client: calls,
            resend,
        }
    }

    /// Runs the example's subcommand `args` on the shared database; its output.
    fn example(&self, args: &[&str]) -> String {
        let (ok, text, errors) = self.example_exit(args);
        if !ok {
            fail("example", &format!("{args:?} failed: {text} {errors}"));
        }
        text
    }

    /// Runs the example's subcommand `args` on the shared database: whether it exited 0,
    /// its output and its error output.
    fn example_exit(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(&self.binary)
            .args(["--db", &self.db_url])
            .args(args)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.binary));
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )
    }
}

/// Reports a broken promise and exits 1.
pub fn fail(phase: &str, what: &str) -> ! {
    eprintln!("replica harness: {phase}: {what}");
    fleet::kill_running();
    std::process::exit(1)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let a = parse_args();
    let Some(t) = TestDb::postgres().await else {
        println!("replica harness: skipped (ERP_TOOLS_PG_URL not set): replicas share PostgreSQL");
        return;
    };
    let started = Instant::now();
    let db_url = t.url().to_string();
    t.db.close().await;
    // Read through the framework's read-only pool, as the crash harness does.
    let checks = Database::connect(DatabaseOptions::new(db_url.clone()))
        .await
        .expect("check database");
    // The proxy's port is the resource every token names: bound before the replicas start.
    let mut fleet = Fleet::new(&a.binary, &db_url, "", a.replicas, a.base_port);
    let own_proxy = match a.proxy {
        Some(_) => None,
        None => Some(RoundRobin::start(fleet.addrs()).await),
    };
    let proxy = a
        .proxy
        .or_else(|| own_proxy.as_ref().map(RoundRobin::addr))
        .expect("a proxy");
    let resource = format!("http://{proxy}/mcp");
    fleet.resource = resource.clone();
    let h = Harness {
        tokens: TokenConfig::development().for_resource(&resource),
        pool: checks.read_db().pool().clone(),
        own_proxy,
        proxy,
        binary: a.binary.clone(),
        db_url,
        clients: a.clients,
    };

    // 1. The first replica creates and seeds the example's tables; then the others.
    fleet.rate_limit = format!("{},{}", RATE.0, RATE.1);
    for i in 0..a.replicas {
        fleet.start(i).await;
    }
    let rate = scenarios::rate_limit(&h, RATE.0, RATE.1, Duration::from_secs(2)).await;
    if rate.accepted > rate.bound {
        fail(
            "rate limit",
            &format!(
                "{} calls accepted in {:.1} s, more than the burst plus the rate ({})",
                rate.accepted, rate.seconds, rate.bound
            ),
        );
    }
    // 2.
    scenarios::stop_all(&mut fleet).await;
    fleet.rate_limit = "off".into();
    for i in 0..a.replicas {
        fleet.start(i).await;
    }
    // 3.
    let storm = scenarios::storm(&h, h.clients, a.calls).await;
    // 4.
    let review = scenarios::reviewer(&h, &fleet).await;
    // 5.
    let kill = scenarios::kill_mid_storm(&h, &mut fleet, 0, a.kill_after).await;
    fleet.start(0).await;
    // 6.
    let roll = scenarios::rolling_restart(&h, &mut fleet).await;
    scenarios::stop_all(&mut fleet).await;
    let forwarded = h.own_proxy.as_ref().map(RoundRobin::forwarded);
    h.pool.close().await;
    checks.close().await;
    println!(
        "replica harness: replicas={} proxy={} forwarded={forwarded:?} \
         rate: attempted={} accepted={} refused={} bound={} seconds={:.1} | \
         storm: calls={} resent={} retried={} cross_replica={} orders={} | \
         reviewer: signed_in_on={} approval={} executed={} second_resume={:?} | \
         kill: calls={} retried={} transport_errors={} orders={} closed_interrupted={} seconds_to_close={:.1} | \
         roll: calls={} retried={} transport_errors={} orders={} interrupted={} | \
         duplicates=0 seconds={:.1}",
        a.replicas,
        if h.own_proxy.is_some() {
            "round-robin (harness)"
        } else {
            "--proxy"
        },
        rate.attempted,
        rate.accepted,
        rate.refused,
        rate.bound,
        rate.seconds,
        storm.seen.calls,
        storm.seen.resent,
        storm.seen.retried,
        storm.cross_replica,
        storm.orders,
        review.replicas_signed_in,
        review.approval,
        review.executed,
        review.second_resume,
        kill.seen.calls,
        kill.seen.retried,
        kill.seen.transport_errors,
        kill.orders,
        kill.closed,
        kill.seconds_to_close,
        roll.seen.calls,
        roll.seen.retried,
        roll.seen.transport_errors,
        roll.orders,
        roll.interrupted,
        started.elapsed().as_secs_f64(),
    );
}
