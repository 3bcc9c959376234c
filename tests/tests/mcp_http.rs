//! The MCP server over streamable HTTP on 127.0.0.1, driven by `rmcp`'s HTTP client on
//! both protocol revisions (2025-11-25 sessions and 2026-07-28 stateless), and by plain
//! HTTP requests for the authentication, origin and metadata rules.

use std::time::Duration;

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_core::{Outcome, principal_run_id};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, FOR_BUYER, GET_STOCK};
use erp_tools_tests::app::{Table, audit_outcomes, count};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{
    ALLOWED_ORIGIN, HttpServer, REVISIONS, SCOPES_SUPPORTED, SESSIONS, STATELESS, challenge,
    in_session, initialize_body, open_session, post,
};
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{assert_error_text, assert_list_matches, call_ok, call_tool};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::{Value, json};

const ALL_SCOPES: &str = "finance:draft inventory:read purchasing:draft purchasing:read";

async fn lists_shrink_and_calls_are_denied_over_http_on_both_revisions(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let registry = server.runtime.registry().clone();
    for revision in &REVISIONS {
        let as_buyer = server
            .client(&server.token(&BUYER.principal()), revision, None)
            .await;
        let list = as_buyer.list_tools(None).await.unwrap();
        assert_list_matches(&list, &registry, &FOR_BUYER);
        assert_eq!(as_buyer.list_tools(None).await.unwrap().tools, list.tools);

        let run = new_run();
        let as_clerk = server
            .client(&server.token(&WAREHOUSE.in_run(&run)), revision, None)
            .await;
        let list = as_clerk.list_tools(None).await.unwrap();
        assert_list_matches(&list, &registry, &[GET_STOCK]);

        let arguments = valid_arguments(CREATE_PO_DRAFT, "r-1");
        let denied = call_tool(&as_clerk, CREATE_PO_DRAFT, arguments).await;
        assert_error_text(&denied, "`purchasing:draft`");
        let log = server.db().audit_log(Some(&run)).await.unwrap();
        assert_eq!(log.len(), 1, "{revision}: {log:#?}");
        assert_eq!(log[0].outcome, Outcome::Denied.as_str());
        assert_eq!(log[0].user_id, WAREHOUSE.user_id);

        let stock = call_ok(&as_clerk, GET_STOCK, valid_arguments(GET_STOCK, "")).await;
        assert_eq!(
            stock["on_hand"],
            json!("120"),
            "the branch's own stock, not another branch's"
        );
        as_buyer.cancel().await.unwrap();
        as_clerk.cancel().await.unwrap();
    }
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 0);
}
on_both_backends!(lists_shrink_and_calls_are_denied_over_http_on_both_revisions);

async fn the_run_header_scopes_idempotency_across_connections_and_revisions(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let run = new_run();
    let token = server.token(&BUYER.principal());
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-7");

    let first = server.client(&token, &SESSIONS, Some(&run)).await;
    let created = call_ok(&first, CREATE_PO_DRAFT, arguments.clone()).await;
    assert_eq!(created["replayed"], json!(false));
    first.cancel().await.unwrap();

    // A retry from a new, stateless connection of the same run gets the same draft back.
    let retry = server.client(&token, &STATELESS, Some(&run)).await;
    let replayed = call_ok(&retry, CREATE_PO_DRAFT, arguments).await;
    assert_eq!(replayed["replayed"], json!(true));
    assert_eq!(replayed["number"], created["number"]);
    retry.cancel().await.unwrap();

    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 1);
    assert_eq!(
        audit_outcomes(server.db(), Some(&run)).await,
        ["ok", "replayed"]
    );
}
on_both_backends!(the_run_header_scopes_idempotency_across_connections_and_revisions);

async fn without_a_named_run_the_callers_scope_is_the_run(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let token = server.token(&BUYER.principal());
    let client = server.client(&token, &SESSIONS, None).await;
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-session");
    for expected in [false, true] {
        let result = call_ok(&client, CREATE_PO_DRAFT, arguments.clone()).await;
        assert_eq!(result["replayed"], json!(expected));
    }
    client.cancel().await.unwrap();
    let log = server.db().audit_log(None).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].agent_run_id, log[1].agent_run_id);
    assert_eq!(
        log[0].agent_run_id,
        principal_run_id(&BUYER.principal()),
        "the session is not the run: the caller's own scope is"
    );
}
on_both_backends!(without_a_named_run_the_callers_scope_is_the_run);

async fn without_a_named_run_stateless_retries_with_one_token_replay(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let token = server.token(&BUYER.principal());
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-stateless");
    // Two separate stateless connections, as a client retrying after a timeout would open.
    for expected in [false, true] {
        let client = server.client(&token, &STATELESS, None).await;
        let result = call_ok(&client, CREATE_PO_DRAFT, arguments.clone()).await;
        assert_eq!(result["replayed"], json!(expected));
        client.cancel().await.unwrap();
    }
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 1);
    let log = server.db().audit_log(None).await.unwrap();
    let runs: Vec<&str> = log.iter().map(|r| r.agent_run_id.as_str()).collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], principal_run_id(&BUYER.principal()));
    assert!(
        !runs[0].contains(&token[..20]),
        "the token itself is not stored"
    );
}
on_both_backends!(without_a_named_run_stateless_retries_with_one_token_replay);

async fn missing_and_bad_tokens_get_401_with_a_bearer_challenge(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let metadata = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\", scope=\"{ALL_SCOPES}\"",
        server.base
    );
    let body = initialize_body();

    let response = post(&server.url, &body).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge(&response),
        metadata,
        "no error code when no token was sent"
    );

    let other_key = TokenConfig::new(
        b"a different key of at least thirty-two bytes".to_vec(),
        erp_tools_core::auth::DEV_ISSUER,
        server.url.clone(),
    )
    .unwrap();
    let buyer = BUYER.principal();
    let cases = [
        (
            "bad signature",
            mint(&other_key, &buyer, Duration::from_secs(300)),
            "signature",
        ),
        (
            "expired",
            server.token_with(&buyer, |c| c.exp = c.iat - 120),
            "expired",
        ),
        (
            "wrong audience",
            server.token_with(&buyer, |c| c.aud = "http://127.0.0.1:1/mcp".into()),
            "another resource",
        ),
        (
            "wrong issuer",
            server.token_with(&buyer, |c| c.iss = "https://someone-else.example".into()),
            "unknown issuer",
        ),
        (
            "not a token",
            "definitely-not-a-jwt".to_string(),
            "malformed",
        ),
    ];
    for (case, token, reason) in cases {
        let response = post(&server.url, &body)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{case}");
        let header = challenge(&response);
        assert!(header.starts_with(&metadata), "{case}: {header}");
        for expected in ["error=\"invalid_token\"", reason] {
            assert!(header.contains(expected), "{case}: {header}");
        }
        let json: Value = response.json().await.unwrap();
        assert_eq!(json["error"], json!("invalid_token"), "{case}");
    }

    let response = post(&server.url, &body)
        .bearer_auth(server.token(&buyer))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "a valid token is let through");
    assert!(server.db().audit_log(None).await.unwrap().is_empty());
}
on_both_backends!(missing_and_bad_tokens_get_401_with_a_bearer_challenge);

async fn every_request_of_a_session_is_checked(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let good = server.token(&BUYER.principal());
    let expired = server.token_with(&BUYER.principal(), |c| c.exp = c.iat - 120);
    let session = open_session(&server.url, &good).await;

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for (token, status) in [(&good, 200), (&expired, 401)] {
        let request = post(&server.url, &list).bearer_auth(token);
        let response = in_session(request, &session).send().await.unwrap();
        assert_eq!(response.status(), status);
    }
}
on_both_backends!(every_request_of_a_session_is_checked);

async fn protected_resource_metadata_is_served(t: &TestDb) {
    let server = HttpServer::on(t).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let response = reqwest::get(format!("{}{path}", server.base))
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let doc: Value = response.json().await.unwrap();
        assert_eq!(doc["resource"], json!(server.url), "{path}");
        assert_eq!(doc["scopes_supported"], json!(SCOPES_SUPPORTED));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert!(doc["authorization_servers"].is_array());
    }
}
on_both_backends!(protected_resource_metadata_is_served);

/// An `initialize` POST with `token` (none for `None`) and `headers`.
async fn send_initialize(
    server: &HttpServer,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = post(&server.url, &initialize_body());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

async fn browser_origins_and_hosts_are_checked(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let token = server.token(&BUYER.principal());
    let attacker = [("origin", "https://attacker.example")];

    let response = send_initialize(&server, Some(&token), &attacker).await;
    assert_eq!(response.status(), 403, "an origin that is not allowed");
    // Refused before the token is even looked at.
    let response = send_initialize(&server, None, &attacker).await;
    assert_eq!(response.status(), 403);

    let allowed = [("origin", ALLOWED_ORIGIN)];
    let response = send_initialize(&server, Some(&token), &allowed).await;
    assert_eq!(response.status(), 200, "the allowed origin");
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        ALLOWED_ORIGIN,
        "CORS for the allowed origin"
    );

    // The browser's preflight carries no token; it is answered for allowed origins only.
    let preflight = |origin: &str| {
        reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &server.url)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            )
            .send()
    };
    let response = preflight(ALLOWED_ORIGIN).await.unwrap();
    assert_eq!(response.status(), 204);
    let allowed_headers = response.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_string();
    for expected in ["authorization", "mcp-session-id"] {
        assert!(allowed_headers.contains(expected), "{allowed_headers}");
    }
    assert_eq!(
        preflight("https://attacker.example")
            .await
            .unwrap()
            .status(),
        403
    );

    // Without a token, the allowed origin gets the 401 challenge and may read it.
    let response = send_initialize(&server, None, &allowed).await;
    assert_eq!(response.status(), 401);
    let exposed = response.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(exposed.contains("www-authenticate"), "{exposed}");

    let rebound = [("host", "rebound.attacker.example")];
    let response = send_initialize(&server, Some(&token), &rebound).await;
    assert_eq!(
        response.status(),
        403,
        "DNS rebinding: a host that is not allowed"
    );
}
on_both_backends!(browser_origins_and_hosts_are_checked);

async fn a_run_header_that_contradicts_the_token_is_refused(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let token = server.token(&BUYER.in_run("run-from-token"));
    let elsewhere = [("x-agent-run-id", "run-from-elsewhere")];
    let response = send_initialize(&server, Some(&token), &elsewhere).await;
    assert_eq!(response.status(), 400);
    let json: Value = response.json().await.unwrap();
    assert!(
        json["error_description"]
            .as_str()
            .unwrap()
            .contains("another run"),
        "{json}"
    );
    let same = [("x-agent-run-id", "run-from-token")];
    let response = send_initialize(&server, Some(&token), &same).await;
    assert_eq!(response.status(), 200, "the same run is fine");
}
on_both_backends!(a_run_header_that_contradicts_the_token_is_refused);
