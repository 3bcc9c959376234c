//! The harness's phases, each checked against the database the replicas share.

use std::time::{Duration, Instant};

use erp_tools_tests::drafts::{check_invariants, scalar};
use erp_tools_tests::review::Browser;
use serde_json::json;

use crate::fleet::Fleet;
use crate::load::{Load, Seen};
use crate::{Harness, fail};

/// A read tool every caller of the rate-limit phase calls.
const READ_TOOL: &str = "inventory_list_below_reorder";

/// The rate-limit phase's figures.
pub struct RateFigures {
    pub attempted: u64,
    pub accepted: u64,
    pub refused: u64,
    pub seconds: f64,
    /// The most a limit shared by all replicas may accept in that time.
    pub bound: u64,
}

/// One caller sends read calls as fast as 8 connections allow for `window`, spread over
/// every replica: the calls accepted in total stay within the burst plus the rate.
pub async fn rate_limit(h: &Harness, per_minute: u32, burst: u32, window: Duration) -> RateFigures {
    let token = h.token("rate-1", &["inventory:read"]);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("http client");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for task in 0..8 {
        let (http, url, token) = (http.clone(), h.mcp_url(), token.clone());
        tasks.push(tokio::spawn(async move {
            let (mut ok, mut refused) = (0u64, 0u64);
            let mut n = 0;
            while started.elapsed() < window {
                n += 1;
                let body = json!({
                    "jsonrpc": "2.0", "id": format!("rate-{task}-{n}"), "method": "tools/call",
                    "params": {"name": READ_TOOL, "arguments": {}, "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {}}}
                });
                let sent = http
                    .post(&url)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", READ_TOOL)
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .await;
                match sent.map(|r| r.status().as_u16()) {
                    Ok(200) => ok += 1,
                    Ok(429) => refused += 1,
                    Ok(other) => panic!("a read call answered HTTP {other}"),
                    Err(e) => panic!("a read call got no answer: {e}"),
                }
            }
            (ok, refused)
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for t in tasks {
        let (a, r) = t.await.expect("a rate-limit client");
        accepted += a;
        refused += r;
    }
    let seconds = started.elapsed().as_secs_f64();
    let per_second = f64::from(per_minute) / 60.0;
    let bound = u64::from(burst) + (per_second * seconds).ceil() as u64 + 1;
    RateFigures {
        attempted: accepted + refused,
        accepted,
        refused,
        seconds,
        bound,
    }
}

/// SIGTERM to replica `i`: it must exit 0 within 40 s (its 30 s grace and the close).
async fn drain(fleet: &mut Fleet, i: usize, phase: &str) {
    let status = fleet.drain(i, Duration::from_secs(40)).await;
    if !status.success() {
        fail(
            phase,
            &format!("replica {i} exited with {status} after SIGTERM"),
        );
    }
}

/// Sends SIGTERM to every replica in turn and checks each exits 0.
pub async fn stop_all(fleet: &mut Fleet) {
    for i in 0..fleet.replicas.len() {
        drain(fleet, i, "stop").await;
    }
}

/// The storm's figures, read from the database after it.
pub struct StormFigures {
    pub seen: Seen,
    /// Calls whose attempts (first answer and resend) ran on more than one replica.
    pub cross_replica: i64,
    pub orders: i64,
}

/// Clients draft through the proxy and send every answered call a second time, which
/// lands on another replica: each `client_ref` is one order, every resend a replay.
pub async fn storm(h: &Harness, clients: usize, calls_per_client: usize) -> StormFigures {
    let seen = Load::start(&h.load("storm", clients, calls_per_client, true))
        .finish()
        .await;
    if !seen.errors.is_empty() {
        fail("storm", &seen.errors.join("\n"));
    }
    let cross_replica = cross_replica_calls(h, "storm").await;
    if cross_replica == 0 {
        fail(
            "storm",
            "no resend ran on another replica than its first call: nothing was shown",
        );
    }
    let orders = orders_of(h, "storm").await;
    check(h, "storm", &seen, orders).await;
    StormFigures {
        seen,
        cross_replica,
        orders,
    }
}

/// Every call answered once, one order per `client_ref`, and the database's invariants.
async fn check(h: &Harness, phase: &str, seen: &Seen, orders: i64) {
    if let Err(broken) = check_invariants(&h.pool).await {
        fail(phase, &broken);
    }
    if orders != seen.answers.len() as i64 {
        fail(
            phase,
            &format!(
                "{} calls answered but {orders} orders drafted",
                seen.answers.len()
            ),
        );
    }
    let mut numbers: Vec<&String> = seen.answers.values().map(|d| &d.number).collect();
    numbers.sort();
    numbers.dedup();
    if numbers.len() != seen.answers.len() {
        fail(phase, "two client_refs were answered with one order");
    }
}

/// Orders drafted by calls of `phase` (their key rows' `client_ref`).
async fn orders_of(h: &Harness, phase: &str) -> i64 {
    scalar(
        &h.pool,
        &format!(
            "SELECT COUNT(*) FROM purchase_orders po JOIN erp_idempotency_keys k \
             ON k.document_id = po.id WHERE k.client_ref LIKE '{phase}-%'"
        ),
    )
    .await
}

/// Calls of `phase` whose audit rows name more than one replica.
async fn cross_replica_calls(h: &Harness, phase: &str) -> i64 {
    scalar(
        &h.pool,
        &format!(
            "SELECT COUNT(*) FROM (SELECT split_part(tool_call_id, '/', 1) AS call \
             FROM erp_audit_log WHERE source = 'runtime' AND tool_call_id LIKE '{phase}-%' \
             GROUP BY 1 HAVING COUNT(DISTINCT replica_id) > 1) c"
        ),
    )
    .await
}

/// What the reviewer phase saw.
pub struct ReviewFigures {
    pub replicas_signed_in: usize,
    pub approval: i64,
    pub executed: i64,
    /// Why the second resume (another process) was refused.
    pub second_resume: String,
}

/// A reviewer signs in through the proxy and is signed in on every replica; an action the
/// agent loop paused (a process of its own on the same database) is approved on replica
/// 1, whose console resumes the run; a resume from another process finds it done; the
/// action ran once. Signing out on one replica signs out on all.
pub async fn reviewer(h: &Harness, fleet: &Fleet) -> ReviewFigures {
    let token = h.token("21", &["review:read", "review:approve"]);
    let mut browser = Browser::at(&format!("{}/review", h.proxy_base()));
    let signed = browser.sign_in(&token).await;
    if signed.status != 303 {
        fail(
            "reviewer",
            &format!("sign-in through the proxy answered {}", signed.status),
        );
    }
    let mut replicas_signed_in = 0;
    for i in 0..fleet.replicas.len() {
        browser.go_to(&fleet.console(i));
        let page = browser.get("/approvals").await;
        if page.status != 200 {
            fail(
                "reviewer",
                &format!(
                    "signed in through the proxy, replica {i} answered {}",
                    page.status
                ),
            );
        }
        replicas_signed_in += 1;
    }
    let paused = h.example(&["agent", "--user", "7", "--branch", "SBY-01"]);
    let approval: i64 = paused
        .split("waiting for approval ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| {
            fail(
                "reviewer",
                &format!("the agent loop did not pause: {paused}"),
            )
        });
    let run = paused
        .strip_prefix("run ")
        .and_then(|r| r.split(':').next())
        .unwrap_or_default()
        .to_string();
    browser.go_to(&fleet.console(1));
    let page = browser.get("/approvals").await;
    let csrf = page
        .csrf()
        .unwrap_or_else(|| fail("reviewer", "no CSRF token on Approvals"));
    let decided = browser
        .post(
            &format!("/approvals/{approval}/approve"),
            &[("csrf", &csrf), ("note", "ok")],
        )
        .await;
    if decided.status != 303 {
        fail(
            "reviewer",
            &format!("approving on replica 1 answered {}", decided.status),
        );
    }
    // The console resumed the run: a resume from another process changes nothing and
    // says why, with a non-zero exit.
    let (resumed_again, _, again) =
        h.example_exit(&["resume", "--approval", &approval.to_string()]);
    if resumed_again || !again.contains("nothing was run or changed") {
        fail(
            "reviewer",
            &format!("a second resume exited {resumed_again} and said: {again}"),
        );
    }
    let executed = scalar(
        &h.pool,
        &format!(
            "SELECT COUNT(*) FROM erp_audit_log WHERE agent_run_id = '{run}' \
             AND source = 'runtime' AND tool_name = 'purchasing_create_po_draft' \
             AND outcome = 'ok'"
        ),
    )
    .await;
    if executed != 1 {
        fail(
            "reviewer",
            &format!("the approved action ran {executed} times (a second resume said: {again})"),
        );
    }
    browser.go_to(&fleet.console(2));
    let page = browser.get("/approvals").await;
    let csrf = page.csrf().unwrap_or_default();
    browser.post("/sign-out", &[("csrf", &csrf)]).await;
    browser.go_to(&fleet.console(0));
    let after = browser.get("/approvals").await;
    if after.status == 200 {
        fail(
            "reviewer",
            "signed out on replica 2, still signed in on replica 0",
        );
    }
    ReviewFigures {
        replicas_signed_in,
        approval,
        executed,
        second_resume: again,
    }
}

/// The kill phase's figures.
pub struct KillFigures {
    pub seen: Seen,
    pub orders: i64,
    /// The killed replica's calls left at `attempt`, closed as `interrupted`.
    pub closed: i64,
    /// From the kill until none of its calls is left at `attempt`.
    pub seconds_to_close: f64,
}

/// `kill -9` of replica `victim` `after` clients started drafting through the proxy; they retry what
/// got no answer. Then waits until a live replica closed the dead one's open calls.
pub async fn kill_mid_storm(
    h: &Harness,
    fleet: &mut Fleet,
    victim: usize,
    after: Duration,
) -> KillFigures {
    let load = Load::start(&h.load("kill", 6, 10_000, false));
    tokio::time::sleep(after).await;
    let dead = fleet.host_name(victim);
    fleet.kill(victim);
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let seen = load.stop().await;
    if !seen.errors.is_empty() {
        fail("kill", &seen.errors.join("\n"));
    }
    let open_sql = format!(
        "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'attempt' AND replica_id LIKE '{dead}-%'"
    );
    let bound = Duration::from_secs(40);
    while scalar(&h.pool, &open_sql).await != 0 {
        if killed.elapsed() > bound {
            fail(
                "kill",
                &format!("the dead replica's calls were still open after {bound:?}"),
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seconds_to_close = killed.elapsed().as_secs_f64();
    let closed = scalar(
        &h.pool,
        &format!(
            "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'interrupted' \
             AND replica_id LIKE '{dead}-%'"
        ),
    )
    .await;
    let orders = orders_of(h, "kill").await;
    check(h, "kill", &seen, orders).await;
    KillFigures {
        seen,
        orders,
        closed,
        seconds_to_close,
    }
}

/// The rolling restart's figures.
pub struct RollFigures {
    pub seen: Seen,
    pub orders: i64,
    pub interrupted: i64,
}

/// SIGTERM, wait for exit 0, start again, ready: each replica in turn while clients
/// draft through the proxy. No call is interrupted and every call is answered.
pub async fn rolling_restart(h: &Harness, fleet: &mut Fleet) -> RollFigures {
    let load = Load::start(&h.load("roll", 6, 10_000, false));
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..fleet.replicas.len() {
        drain(fleet, i, "roll").await;
        fleet.start(i).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let seen = load.stop().await;
    if !seen.errors.is_empty() {
        fail("roll", &seen.errors.join("\n"));
    }
    let interrupted = scalar(
        &h.pool,
        "SELECT COUNT(*) FROM erp_audit_log WHERE outcome = 'interrupted' \
         AND tool_call_id LIKE 'roll-%'",
    )
    .await;
    if interrupted != 0 {
        fail(
            "roll",
            &format!("{interrupted} calls interrupted by the rolling restart"),
        );
    }
    let orders = orders_of(h, "roll").await;
    check(h, "roll", &seen, orders).await;
    RollFigures {
        seen,
        orders,
        interrupted,
    }
}
