//! Clients sending drafts through the proxy until told to stop. A call that gets no
//! answer (its replica died or closed the connection, or the proxy answered 502, 503 or
//! 504) is sent again with the same
//! `client_ref`, through the proxy, so it lands on another replica; a call over the rate
//! limit waits as told. Every call ends answered or counted as an error no retry fixed.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use erp_tools_tests::drafts::{CallFailure, Drafted, send_draft};
use tokio::task::JoinHandle;

/// Attempts per call before it counts as an error no retry fixed.
const MAX_ATTEMPTS: u32 = 40;

/// What the clients of one phase saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Calls started (distinct `client_ref`s).
    pub calls: u64,
    /// Calls sent more than once because an attempt got no answer.
    pub retried: u64,
    /// Attempts that got no answer (no HTTP answer, or a proxy's 502, 503 or 504).
    pub transport_errors: u64,
    /// Attempts refused with 429 and sent again.
    pub rate_limited: u64,
    /// Calls deliberately sent a second time after their answer (`resend`).
    pub resent: u64,
    /// The first answer of each `client_ref`.
    pub answers: HashMap<String, Drafted>,
    /// Calls no retry could bring to an answer, or answers that broke exactly-once.
    pub errors: Vec<String>,
}

impl Seen {
    fn merge(&mut self, other: Seen) {
        self.calls += other.calls;
        self.retried += other.retried;
        self.transport_errors += other.transport_errors;
        self.rate_limited += other.rate_limited;
        self.resent += other.resent;
        self.answers.extend(other.answers);
        self.errors.extend(other.errors);
    }
}

/// Clients running in the background.
pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<Seen>>,
}

/// How the clients of a phase call.
#[derive(Clone)]
pub struct LoadConfig {
    pub url: String,
    pub token: String,
    /// `client_ref` prefix of the phase (also the JSON-RPC ids' prefix).
    pub prefix: String,
    pub clients: usize,
    /// Calls per client at most (a phase may stop them sooner).
    pub calls_per_client: usize,
    /// Sends every answered call once more, which must replay the same order.
    pub resend: bool,
}

impl Load {
    /// Starts `config.clients` clients.
    pub fn start(config: &LoadConfig) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let http = reqwest::Client::builder()
            // A new connection per request, so the proxy spreads the calls of one client
            // (and a call's retries) over the replicas.
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("http client");
        let tasks = (0..config.clients)
            .map(|client| {
                let (config, stop, http) = (config.clone(), stop.clone(), http.clone());
                tokio::spawn(async move { run_client(&http, &config, client, &stop).await })
            })
            .collect();
        Load { stop, tasks }
    }

    /// Tells the clients to stop after their current call and collects what they saw.
    pub async fn stop(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        self.finish().await
    }

    /// Waits for the clients to make all their calls and collects what they saw.
    pub async fn finish(self) -> Seen {
        let mut seen = Seen::default();
        for task in self.tasks {
            match task.await {
                Ok(s) => seen.merge(s),
                Err(e) => seen.errors.push(format!("a client failed: {e}")),
            }
        }
        seen
    }
}

async fn run_client(
    http: &reqwest::Client,
    config: &LoadConfig,
    client: usize,
    stop: &AtomicBool,
) -> Seen {
    let mut seen = Seen::default();
    for seq in 0..config.calls_per_client {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let client_ref = format!("{}-c{client}-{seq}", config.prefix);
        seen.calls += 1;
        let mut attempt = 0;
        let first = match call(http, config, &client_ref, &mut attempt, &mut seen).await {
            Ok(d) => d,
            Err(e) => {
                seen.errors.push(e);
                continue;
            }
        };
        if attempt > 1 {
            seen.retried += 1;
        }
        if config.resend {
            seen.resent += 1;
            match call(http, config, &client_ref, &mut attempt, &mut seen).await {
                Ok(again) if again.number == first.number && again.replayed => {}
                Ok(again) => seen.errors.push(format!(
                    "{client_ref}: first answered {first:?}, its resend {again:?}"
                )),
                Err(e) => seen.errors.push(e),
            }
        }
        seen.answers.insert(client_ref, first);
    }
    seen
}

/// One call until it is answered: JSON-RPC ids `<client_ref>/<attempt>`.
async fn call(
    http: &reqwest::Client,
    config: &LoadConfig,
    client_ref: &str,
    attempt: &mut u32,
    seen: &mut Seen,
) -> Result<Drafted, String> {
    loop {
        *attempt += 1;
        if *attempt > MAX_ATTEMPTS {
            return Err(format!(
                "{client_ref}: no answer in {MAX_ATTEMPTS} attempts"
            ));
        }
        let id = format!("{client_ref}/{attempt}");
        match send_draft(http, &config.url, &config.token, client_ref, &id).await {
            Ok(d) => return Ok(d),
            Err(CallFailure::Transport(_) | CallFailure::Gateway(_)) => {
                seen.transport_errors += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(CallFailure::RateLimited(wait)) => {
                seen.rate_limited += 1;
                tokio::time::sleep(wait.min(Duration::from_secs(2))).await;
            }
            Err(e @ CallFailure::Refused(_)) => return Err(format!("{client_ref}: {e}")),
        }
    }
}
