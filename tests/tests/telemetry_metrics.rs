//! `/metrics`: the calls' counters and histogram as OpenMetrics text, served to loopback
//! peers, and elsewhere only to a token with the `metrics:read` scope. The metrics are
//! the process's, shared by every test here: assertions compare before and after.

use std::time::Duration;

use erp_tools_core::Outcome;
use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_core::mcp::{HttpConfig, METRICS_PATH, METRICS_SCOPE, router};
use erp_tools_core::telemetry::metrics;
use erp_tools_tests::app::arguments::po_draft;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Session};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::HttpServer;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::json;

/// The value of the sample `series` (name and labels, as rendered) in `text`, 0 if absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.split(' ').next()?.parse().ok())
        .unwrap_or(0.0)
}

fn calls(text: &str, tool: &str, outcome: &str) -> f64 {
    sample(
        text,
        &format!(
            "erp_tools_calls_total{{gen_ai_tool_name=\"{tool}\",erp_tools_outcome=\"{outcome}\"}}"
        ),
    )
}

async fn counted(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let buyer = Session::new(&t.db, BUYER).await;
    let warehouse = Session::new(&t.db, WAREHOUSE).await;
    let scrape = || async {
        let response = reqwest::get(format!("{}{METRICS_PATH}", server.base))
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "a loopback peer reads the metrics");
        assert_eq!(
            response.headers()["content-type"],
            metrics::CONTENT_TYPE,
            "OpenMetrics text"
        );
        response.text().await.unwrap()
    };
    // A family with no sample yet (no call in this process) is not rendered at all, so
    // the families' headers are checked after the calls.
    let before = scrape().await;
    assert!(before.trim_end().ends_with("# EOF"));

    let ref_ = format!("metrics-{:?}", t.db.backend()).to_lowercase();
    let runs = [
        (&buyer, CREATE_PO_DRAFT, po_draft(&ref_), Outcome::Ok),
        (&buyer, CREATE_PO_DRAFT, po_draft(&ref_), Outcome::Replayed),
        (
            &warehouse,
            CREATE_PO_DRAFT,
            po_draft("m-2"),
            Outcome::Denied,
        ),
        (&buyer, GET_PO, json!({}), Outcome::ToolError),
    ];
    for (who, tool, arguments, expected) in runs {
        let out = who.call(tool, arguments).await;
        assert_eq!(out.outcome, expected, "{tool}: {}", out.text);
    }
    let after = scrape().await;
    assert!(after.contains("# TYPE mcp_server_operation_duration_seconds histogram"));
    assert!(after.contains("# UNIT mcp_server_operation_duration_seconds seconds"));
    assert!(after.trim_end().ends_with("# EOF"));
    for (tool, outcome) in [
        (CREATE_PO_DRAFT, "ok"),
        (CREATE_PO_DRAFT, "replayed"),
        (CREATE_PO_DRAFT, "denied"),
        (GET_PO, "invalid"),
    ] {
        assert!(
            calls(&after, tool, outcome) >= calls(&before, tool, outcome) + 1.0,
            "{tool}/{outcome} counted:\n{after}"
        );
    }
    let replays = format!("erp_tools_replays_total{{gen_ai_tool_name=\"{CREATE_PO_DRAFT}\"}}");
    assert!(sample(&after, &replays) >= sample(&before, &replays) + 1.0);
    let denials = format!("erp_tools_denials_total{{gen_ai_tool_name=\"{CREATE_PO_DRAFT}\"}}");
    assert!(sample(&after, &denials) >= sample(&before, &denials) + 1.0);
    let count = format!(
        "mcp_server_operation_duration_seconds_count{{mcp_method_name=\"tools/call\",\
         gen_ai_tool_name=\"{CREATE_PO_DRAFT}\",erp_tools_outcome=\"ok\"}}"
    );
    assert!(sample(&after, &count) >= sample(&before, &count) + 1.0);
    assert!(sample(&after, "erp_tools_audit_batch_size_count") >= 1.0);
    for gauge in [
        "erp_tools_audit_queue_depth",
        "erp_tools_idempotency_pending",
        "erp_tools_approvals_waiting",
        "erp_tools_rate_limited_total",
    ] {
        assert!(
            after.lines().any(|l| l.starts_with(&format!("{gauge} "))),
            "{gauge} is rendered:\n{after}"
        );
    }
    // No label carries a user, a run or an argument.
    assert!(!after.contains(&buyer.run) && !after.contains(&ref_));
    server.stop().await;
}
on_both_backends!(calls_are_counted_on_the_metrics_route, crate::counted);

/// Served without the peer's address (plain `axum::serve`), the route is not open: a
/// token with `metrics:read` reads it, any other is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elsewhere_a_metrics_scope_is_needed() {
    let t = TestDb::sqlite().await;
    let runtime = App::new(&t.db).await.runtime;
    let tokens = TokenConfig::development();
    let app = router(runtime, HttpConfig::new(tokens.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{METRICS_PATH}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();
    let get = |token: Option<String>| {
        let mut request = client.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.unwrap() }
    };
    let ttl = Duration::from_secs(300);
    let none = get(None).await;
    assert_eq!(none.status(), 401);
    assert!(none.text().await.unwrap().contains("metrics:read"));
    assert_eq!(get(Some("not-a-token".into())).await.status(), 401);
    let buyer = mint(&tokens, &BUYER.principal(), ttl);
    let lacking = get(Some(buyer)).await;
    assert_eq!(lacking.status(), 403);
    assert!(
        lacking
            .text()
            .await
            .unwrap()
            .contains("lacks the metrics:read scope")
    );
    let monitor = BUYER.holding(&[METRICS_SCOPE]);
    let allowed = get(Some(mint(&tokens, &monitor, ttl))).await;
    assert_eq!(allowed.status(), 200);
    assert!(
        allowed
            .text()
            .await
            .unwrap()
            .contains("erp_tools_rate_limited_total")
    );
    served.abort();
}
