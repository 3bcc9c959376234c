//! Kill -9 of the Tryton example mid-draft, repeatedly, against a real Tryton: each round
//! starts the example server (erp-tools' store on SQLite) behind which a proxy delays
//! every create's answer after Tryton committed it (the window where only Tryton knows),
//! sends drafts from several clients at once, `kill -9`s the server at a random moment,
//! restarts it (its start-up pass reconciles the pending keys by their markers) and
//! resends every draft of the round with the same `client_ref`. After every round:
//!
//! - every `client_ref` has exactly one purchase in Tryton (found by its marker);
//! - every resend answered with that purchase.
//!
//! At the end: no pending key left in the store, and the figures (creates forwarded to
//! Tryton, purchases, duplicates, calls in flight at the kills, keys found at restart).
//!
//! ```text
//! tryton_kill --binary target/debug/examples/tryton --kills 10 --clients 3
//! ```
//! Bounded: `--kills` rounds of a few seconds each. Exits non-zero on the first broken
//! invariant. `scripts/tryton/kill_run.sh` builds and runs it.

use std::time::{Duration, Instant};

use erp_tools_core::Database;
use erp_tools_core::remote;
use erp_tools_tests::fault_proxy::FaultProxy;
use erp_tools_tests::ids::Rng;
use erp_tools_tests::tryton::{Example, TrytonRun, mcp_call, result_text};
use serde_json::{Value, json};

const TOOL: &str = "purchasing_draft_purchase";

struct Args {
    binary: String,
    kills: usize,
    clients: usize,
    seed: u64,
}

fn parse_args() -> Args {
    let mut a = Args {
        binary: "target/debug/examples/tryton".into(),
        kills: 10,
        clients: 3,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--binary" => a.binary = value,
            "--kills" => a.kills = value.parse().expect("--kills N"),
            "--clients" => a.clients = value.parse().expect("--clients N"),
            "--seed" => a.seed = value.parse().expect("--seed N"),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

/// One draft call; `Ok(purchase id, replayed)` or why not.
async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    args: &Value,
) -> Result<(i64, bool), String> {
    let result = mcp_call(http, url, token, TOOL, args).await?;
    if result["isError"] == json!(true) {
        return Err(format!("tool error: {}", result_text(&result)));
    }
    let s = &result["structuredContent"];
    Ok((
        s["purchase_id"].as_i64().unwrap_or_default(),
        s["replayed"].as_bool().unwrap_or(false),
    ))
}

fn fail(round: usize, what: &str) -> ! {
    eprintln!("tryton kill run: invariant broken in round {round}: {what}");
    std::process::exit(1);
}

#[tokio::main]
async fn main() {
    let a = parse_args();
    let started = Instant::now();
    let tr = TrytonRun::start_now();
    let proxy = FaultProxy::start(tr.port()).await;
    proxy.delay_creates(Duration::from_millis(250)).await;
    let example = Example::new(
        a.binary.clone().into(),
        &tr.url_via(proxy.addr.port()),
        &tr.keys_path(),
        1500,
    );
    let token = example
        .token(
            "buyer-sby",
            "SBY-01",
            "purchasing:read,purchasing:draft",
            Some("kill-run"),
        )
        .unwrap_or_else(|e| panic!("token: {e}"));
    let url = example.mcp_url();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let sby = tr.fact("companies", "SBY-01");
    let draft_args = |client_ref: &str| {
        json!({
            "supplier_id": tr.fact("suppliers", "CV Minyak Jaya"),
            "client_ref": client_ref,
            "note": "kill run",
            "lines": [
                {"product_id": tr.fact("products", "OIL-2L"), "quantity": "12"},
                {"product_id": tr.fact("products", "RICE-25"), "quantity": "3"},
            ],
        })
    };
    let mut rng = Rng::seeded(a.seed);
    let (mut in_flight, mut answered, mut found_by_marker, mut resends) = (0u64, 0u64, 0u64, 0u64);
    let mut refs = Vec::new();
    // The longest a restart after a kill took to listen (the pending keys are reconciled
    // beside serving).
    let mut max_listen = Duration::ZERO;
    for round in 0..a.kills {
        let (mut server, _) = example.serve();
        let round_refs: Vec<String> = (0..a.clients).map(|c| format!("r{round}-c{c}")).collect();
        let tasks: Vec<_> = round_refs
            .iter()
            .map(|r| {
                let (http, url, token, args) =
                    (http.clone(), url.clone(), token.clone(), draft_args(r));
                tokio::spawn(async move { call(&http, &url, &token, &args).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(rng.between(20, 900))).await;
        server.kill().expect("kill -9");
        server.wait().ok();
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => answered += 1,
                Err(_) => in_flight += 1,
            }
        }
        let (mut server, listening) = example.serve();
        max_listen = max_listen.max(listening);
        for r in &round_refs {
            let marker = remote::marker("kill-run", r);
            let mut got = None;
            // Bounded: a key whose earlier request may still be in flight (its lease) or that
            // the start-up reconcile holds is "still writing" for a few seconds.
            for _ in 0..40 {
                resends += 1;
                match call(&http, &url, &token, &draft_args(r)).await {
                    Ok(v) => {
                        got = Some(v);
                        break;
                    }
                    Err(e) if e.contains("still writing") || e.contains("Nothing is confirmed") => {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    Err(e) => fail(round, &format!("resend of {r}: {e}")),
                }
            }
            let Some((id, _)) = got else {
                fail(round, &format!("resend of {r} never answered"))
            };
            let purchases = tr.with_marker("buyer-sby", sby, &marker).await;
            if purchases.len() != 1 {
                fail(
                    round,
                    &format!("{r}: {} purchases in Tryton", purchases.len()),
                );
            }
            if purchases[0]["id"].as_i64() != Some(id) {
                fail(
                    round,
                    &format!("{r}: answered {id}, Tryton has {}", purchases[0]["id"]),
                );
            }
            refs.push(r.clone());
        }
        server.kill().ok();
        server.wait().ok();
    }
    let logged = std::fs::read_to_string(&example.log).unwrap_or_default();
    for line in logged
        .lines()
        .filter(|l| l.contains("reconciled pending drafts at start-up"))
    {
        found_by_marker += line
            .split(": ")
            .nth(2)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
    }
    let db = Database::open(&example.db_url).await.expect("the store");
    let pending = remote::pending_keys(&db).await.unwrap();
    db.close().await;
    let all = tr.purchases("buyer-sby", sby, json!([])).await;
    let duplicates = all.len() as i64 - refs.len() as i64;
    println!(
        "tryton kill run: kills={} clients={} client_refs={} answered_before_kill={answered} \
         in_flight_at_kill={in_flight} found_by_marker_at_restart={found_by_marker} resends={resends} \
         creates_forwarded={} purchases_in_tryton={} duplicates={duplicates} pending_keys_left={pending} \
         max_ms_to_listen_after_kill={} seconds={}",
        a.kills,
        a.clients,
        refs.len(),
        proxy.creates(),
        all.len(),
        max_listen.as_millis(),
        started.elapsed().as_secs()
    );
    if duplicates != 0 || pending != 0 {
        fail(a.kills, "duplicates or pending keys left");
    }
}
