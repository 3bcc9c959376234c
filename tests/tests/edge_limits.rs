//! The HTTP edge under pressure, on 127.0.0.1, bounded in count and time: idle and
//! byte-at-a-time connections do not keep an authenticated client out; a body that never
//! arrives is answered `408`, an oversized one `413`; `tools/call` is rate-limited per
//! caller with `429` and `Retry-After`; same-origin browser requests pass.

use std::time::{Duration, Instant};

use erp_tools_core::auth::TokenConfig;
use erp_tools_core::mcp::{EdgeLimits, HttpConfig, RateLimit};
use erp_tools_tests::app::App;
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::tools::{FOR_BUYER, GET_STOCK};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, SESSIONS, initialize_body, post, stateless_call};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn server_with(t: &TestDb, edit: impl FnOnce(HttpConfig) -> HttpConfig) -> HttpServer {
    let runtime = App::new(&t.db).await.runtime;
    HttpServer::start_configured(runtime, move |url| {
        edit(HttpConfig::new(
            TokenConfig::development().for_resource(url),
        ))
    })
    .await
}

/// `count` connections that send nothing.
async fn idle_connections(server: &HttpServer, count: usize) -> Vec<TcpStream> {
    let mut idle = Vec::with_capacity(count);
    for _ in 0..count {
        idle.push(TcpStream::connect(server.addr).await.unwrap());
    }
    idle
}

/// `count` connections that send a request head one byte every 200 ms, for at most
/// `for_at_most`.
fn slow_connections(
    server: &HttpServer,
    count: usize,
    for_at_most: Duration,
) -> Vec<tokio::task::JoinHandle<()>> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nX-Padding: {}\r\n",
        server.addr,
        "a".repeat(200)
    );
    (0..count)
        .map(|_| {
            let addr = server.addr;
            let head = head.clone().into_bytes();
            tokio::spawn(async move {
                let Ok(mut stream) = TcpStream::connect(addr).await else {
                    return;
                };
                let deadline = Instant::now() + for_at_most;
                for byte in head {
                    if Instant::now() > deadline || stream.write_all(&[byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            })
        })
        .collect()
}

/// Lists tools as an authenticated buyer, within `limit`; returns how long it took.
async fn buyer_lists_tools(server: &HttpServer, limit: Duration) -> Duration {
    let started = Instant::now();
    let token = server.token(&BUYER.principal());
    let listed = tokio::time::timeout(limit, async {
        let client = server.client(&token, &SESSIONS, None).await;
        let tools = client.list_tools(None).await.unwrap().tools;
        client.cancel().await.unwrap();
        tools.len()
    })
    .await
    .expect("the authenticated client got through in time");
    assert_eq!(listed, FOR_BUYER.len());
    started.elapsed()
}

async fn idle_and_slow_connections_do_not_stop_an_authenticated_client(t: &TestDb) {
    // Default limits: 300 idle and 20 slow connections fit under the cap.
    let server = server_with(t, |c| c).await;
    let idle = idle_connections(&server, 300).await;
    let slow = slow_connections(&server, 20, Duration::from_secs(15));
    let took = buyer_lists_tools(&server, Duration::from_secs(10)).await;
    eprintln!("default limits, 300 idle + 20 slow connections: the buyer listed tools in {took:?}");
    drop(idle);
    slow.iter().for_each(|s| s.abort());
    drop(server);

    // A small cap and a short header timeout: the 300 idle connections fill the cap many
    // times over; the server cuts each off after the header timeout, so the client waits
    // a bounded time.
    let limits = EdgeLimits {
        header_timeout: Duration::from_secs(1),
        max_connections: 64,
        ..EdgeLimits::default()
    };
    let server = server_with(t, |c| c.with_edge_limits(limits)).await;
    let mut idle = idle_connections(&server, 300).await;
    let slow = slow_connections(&server, 20, Duration::from_secs(30));
    let took = buyer_lists_tools(&server, Duration::from_secs(30)).await;
    eprintln!("cap 64, header timeout 1 s, 300 idle + 20 slow connections: listed in {took:?}");

    // The first idle connection was accepted and closed by the server (EOF), not kept.
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), idle[0].read(&mut byte))
        .await
        .expect("the server closes an idle connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    slow.iter().for_each(|s| s.abort());
}
on_both_backends!(idle_and_slow_connections_do_not_stop_an_authenticated_client);

async fn a_body_that_never_arrives_or_is_too_large_is_refused(t: &TestDb) {
    let limits = EdgeLimits {
        body_timeout: Duration::from_secs(1),
        max_body_bytes: 64 * 1024,
        ..EdgeLimits::default()
    };
    let server = server_with(t, |c| c.with_edge_limits(limits)).await;
    let token = server.token(&BUYER.principal());

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        server.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("answered within the body timeout")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");

    let mut body = initialize_body();
    body["params"]["padding"] = Value::String("x".repeat(100 * 1024));
    let response = post(&server.url, &body)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let response = post(&server.url, &initialize_body())
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "a normal body still passes");
}
on_both_backends!(a_body_that_never_arrives_or_is_too_large_is_refused);

async fn tool_calls_are_rate_limited_per_caller(t: &TestDb) {
    let limit = RateLimit {
        per_minute: 6,
        burst: 2,
    };
    let server = server_with(t, |c| c.with_rate_limit(Some(limit))).await;
    let buyer = server.token(&BUYER.principal());
    let arguments = valid_arguments(GET_STOCK, "");
    for _ in 0..2 {
        let response = stateless_call(&server.url, &buyer, GET_STOCK, &arguments)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let refused = stateless_call(&server.url, &buyer, GET_STOCK, &arguments)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=10).contains(&retry_after), "{retry_after}");
    let json: Value = refused.json().await.unwrap();
    assert_eq!(json["error"], "rate_limited");

    // Requests other than tools/call are not counted; another caller has its own bucket.
    for _ in 0..5 {
        let response = post(&server.url, &initialize_body())
            .bearer_auth(&buyer)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let clerk = server.token(&WAREHOUSE.principal());
    let response = stateless_call(&server.url, &clerk, GET_STOCK, &arguments)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // The refused call never reached the runtime: three calls ran, three audit rows.
    assert_eq!(server.db().audit_log(None).await.unwrap().len(), 3);
}
on_both_backends!(tool_calls_are_rate_limited_per_caller);

async fn same_origin_requests_pass_and_other_origins_get_403(t: &TestDb) {
    let server = server_with(t, |c| c).await;
    let token = server.token(&BUYER.principal());
    let send = |origin: String| {
        post(&server.url, &initialize_body())
            .bearer_auth(&token)
            .header("origin", origin)
            .send()
    };
    // reqwest sends `Host: 127.0.0.1:<port>`: the page at that origin is this server's.
    let response = send(server.base.clone()).await.unwrap();
    assert_eq!(response.status(), 200, "same origin");
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none(),
        "same-origin requests need no CORS headers"
    );
    let other_port = format!("http://127.0.0.1:{}", server.addr.port() + 1);
    assert_eq!(send(other_port).await.unwrap().status(), 403);
    assert_eq!(
        send("https://attacker.example".into())
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(send("null".into()).await.unwrap().status(), 403);
}
on_both_backends!(same_origin_requests_pass_and_other_origins_get_403);
