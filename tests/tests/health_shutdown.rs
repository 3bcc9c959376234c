//! `/healthz` and `/readyz`, and the drain on SIGTERM: the example server, sent SIGTERM
//! while drafts are in flight, answers every call it took, leaves no `attempt` or
//! `interrupted` audit row and no lease row, and exits 0.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_core::mcp::{HEALTH_PATH, HttpConfig, READY_PATH, router};
use erp_tools_core::sqlx;
use erp_tools_core::{Database, DatabaseOptions, Principal};
use erp_tools_tests::app::App;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::HttpServer;
use erp_tools_tests::on_both_backends;
use serde_json::{Value, json};

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.expect("GET");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Both answer without a token; `/readyz` checks the database; nothing but `GET` is
/// answered.
async fn health_and_readiness_answer_without_a_token(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let base = &server.base;
    assert_eq!(
        get(&format!("{base}{HEALTH_PATH}")).await,
        (200, json!({"status": "ok"}))
    );
    assert_eq!(
        get(&format!("{base}{READY_PATH}")).await,
        (200, json!({"status": "ready"}))
    );
    let posted = reqwest::Client::new()
        .post(format!("{base}{READY_PATH}"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 405, "only GET is answered");
    let other = reqwest::get(format!("{base}/healthz/more")).await.unwrap();
    assert_eq!(other.status(), 404);
    // The database closed under it: not ready, still alive.
    server.db().close().await;
    let (status, body) = get(&format!("{base}{READY_PATH}")).await;
    assert_eq!(status, 503);
    assert_eq!(body["status"], "not ready");
    assert_eq!(body["reason"], "database unreachable");
    assert_eq!(get(&format!("{base}{HEALTH_PATH}")).await.0, 200);
    server.stop().await;
}
on_both_backends!(health_and_readiness_answer_without_a_token);

/// Once drained (as SIGTERM does), `/readyz` says so. The router is served by plain axum
/// here, so it keeps answering while drained.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_server_is_not_ready() {
    let t = TestDb::sqlite().await;
    let runtime = App::new(&t.db).await.runtime;
    let config = HttpConfig::new(TokenConfig::development());
    let options = config.serve_options();
    let app = router(runtime, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    assert_eq!(get(&format!("{base}{READY_PATH}")).await.0, 200);
    options.drain().cancel();
    assert_eq!(
        get(&format!("{base}{READY_PATH}")).await,
        (503, json!({"status": "not ready", "reason": "draining"}))
    );
    assert_eq!(get(&format!("{base}{HEALTH_PATH}")).await.0, 200);
    served.abort();
}

const TOOL: &str = "purchasing_create_po_draft";
/// Clients sending drafts at once, each as fast as it is answered.
const CLIENTS: usize = 8;

fn draft(client_ref: &str) -> Value {
    let lines: Vec<Value> = (0..20)
        .map(|i| json!({"item_code": "BRG-0042", "qty": (i + 1).to_string(), "uom": "PCS"}))
        .collect();
    json!({
        "jsonrpc": "2.0", "id": client_ref, "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": {
                "vendor_code": "V-00231", "needed_by": "2030-01-15",
                "client_ref": client_ref, "note": "shutdown test", "lines": lines,
            },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
}

/// What became of one draft sent.
enum Sent {
    /// The server answered with a result.
    Answered {
        after_signal: bool,
        started_before: bool,
    },
    /// The request never reached a server that took it (connection refused or reset
    /// before an answer); checked below to have left no trace.
    NotTaken,
}

/// SIGTERM with drafts in flight: every call the server took is answered, nothing is left
/// open, the lease row is released, exit code 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_drains_the_example_and_exits_0() {
    let binary = erp_tools_tests::example::binary();
    let t = TestDb::sqlite().await;
    let db_url = t.url().to_string();
    t.db.close().await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let url = format!("{base}/mcp");
    let mut child = Command::new(&binary)
        .args(["--db", &db_url, "--resource", &url, "serve", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .env("ERP_TOOLS_RATE_LIMIT", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the example");
    // Ready within 30 s.
    let started = Instant::now();
    loop {
        if let Ok(r) = reqwest::get(format!("{base}{READY_PATH}")).await
            && r.status() == 200
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the example never got ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tokens = TokenConfig::development().for_resource(&url);
    let buyer = Principal::builder("7", 1, "SBY-01")
        .role("buyer")
        .scopes(["purchasing:read", "purchasing:draft"])
        .build();
    let token = mint(&tokens, &buyer, Duration::from_secs(3600));
    // No connection reuse: a request is either taken by the server on a new connection
    // or refused at connect.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let signalled = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (http, url, token, signalled, sent) = (
            http.clone(),
            url.clone(),
            token.clone(),
            signalled.clone(),
            sent.clone(),
        );
        clients.push(tokio::spawn(async move {
            let mut out = Vec::new();
            // Bounded: at most 2 000 drafts per client, and it stops at its first
            // refused request after the signal.
            for i in 0..2_000 {
                let client_ref = format!("C{c}-{i}");
                let started_before = !signalled.load(Ordering::SeqCst);
                sent.fetch_add(1, Ordering::SeqCst);
                let answer = http
                    .post(&url)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", TOOL)
                    .bearer_auth(&token)
                    .json(&draft(&client_ref))
                    .send()
                    .await;
                let text = match answer {
                    Ok(r) => r.text().await.map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                match text {
                    Ok(text) => {
                        assert!(
                            text.contains("\"result\"") && !text.contains("\"isError\":true"),
                            "{client_ref}: {text:.400}"
                        );
                        out.push((
                            client_ref,
                            Sent::Answered {
                                after_signal: signalled.load(Ordering::SeqCst),
                                started_before,
                            },
                        ));
                    }
                    Err(e) => {
                        assert!(
                            signalled.load(Ordering::SeqCst),
                            "{client_ref}: a transport error before the signal: {e}"
                        );
                        eprintln!("{client_ref}: refused after the signal: {e}");
                        out.push((client_ref, Sent::NotTaken));
                        break;
                    }
                }
            }
            out
        }));
    }
    // Let the storm run, then SIGTERM.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    signalled.store(true, Ordering::SeqCst);
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(kill.success());
    let mut results = Vec::new();
    for c in clients {
        results.extend(c.await.expect("client"));
    }
    // Exits 0 within the grace (30 s) and a margin.
    let deadline = Instant::now() + Duration::from_secs(45);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the example did not exit within 45 s of SIGTERM");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0), "exit code after SIGTERM");

    let answered = results
        .iter()
        .filter(|(_, s)| matches!(s, Sent::Answered { .. }))
        .count();
    let across = results
        .iter()
        .filter(|(_, s)| {
            matches!(
                s,
                Sent::Answered {
                    after_signal: true,
                    started_before: true
                }
            )
        })
        .count();
    let not_taken: Vec<&String> = results
        .iter()
        .filter_map(|(r, s)| matches!(s, Sent::NotTaken).then_some(r))
        .collect();
    eprintln!(
        "shutdown: {} sent, {answered} answered ({across} in flight at SIGTERM), {} refused after it",
        sent.load(Ordering::SeqCst),
        not_taken.len()
    );
    assert!(answered > 0);
    assert!(across > 0, "some calls were in flight when SIGTERM arrived");

    let db = Database::connect(DatabaseOptions::new(db_url))
        .await
        .unwrap();
    let pool = db.read_db().pool().clone();
    let open: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM erp_audit_log WHERE outcome IN ('attempt', 'interrupted')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(open, 0, "no attempt or interrupted row left");
    let calls: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM erp_audit_log WHERE tool_name = $1 AND outcome = 'ok'",
    )
    .bind(TOOL)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(calls as usize, answered, "one ok row per answered call");
    // A request refused after the signal left nothing behind.
    for client_ref in not_taken {
        let traces: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM erp_audit_log WHERE arguments LIKE $1")
                .bind(format!("%\"{client_ref}\"%"))
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(traces, 0, "{client_ref} was refused but left an audit row");
    }
    let leases: Vec<String> = sqlx::query_scalar("SELECT id FROM erp_replicas")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(
        leases,
        vec![db.replica_id().to_string()],
        "the example released its lease"
    );
    db.close().await;
}
