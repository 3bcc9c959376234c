//! The MCP server over streamable HTTP on 127.0.0.1, driven by `rmcp`'s HTTP client on
//! both protocol revisions (2025-11-25 sessions and 2026-07-28 stateless), and by plain
//! HTTP requests for the authentication, origin and metadata rules.

use std::collections::HashMap;
use std::time::Duration;

use erp_tools_core::ToolRuntime;
use erp_tools_core::auth::{Claims, TokenConfig, encode, mint};
use erp_tools_core::mcp::{HttpConfig, router, serve_listener};
use erp_tools_core::{Outcome, Principal};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::{App, Table, count};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{assert_list_matches, call, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use http::{HeaderName, HeaderValue};
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const BUYER_TOOLS: [&str; 5] = [
    "inventory_get_stock",
    "purchasing_create_po_draft",
    "purchasing_get_po",
    "purchasing_get_vendor_summary",
    "purchasing_search_vendors",
];
const ALL_SCOPES: &str = "finance:draft inventory:read purchasing:draft purchasing:read";
const ALLOWED_ORIGIN: &str = "http://localhost:5173";

struct Server {
    base: String,
    url: String,
    tokens: TokenConfig,
    runtime: ToolRuntime,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Server {
    async fn start(t: &TestDb) -> Server {
        let runtime = App::new(&t.db).await.runtime;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let url = format!("{base}/mcp");
        let tokens = TokenConfig::development().for_resource(&url);
        let config = HttpConfig::new(tokens.clone()).with_allowed_origins([ALLOWED_ORIGIN]);
        let stop = config.cancellation().clone();
        tokio::spawn(serve_listener(
            listener,
            router(runtime.clone(), config),
            stop.clone(),
        ));
        Server {
            base,
            url,
            tokens,
            runtime,
            stop,
        }
    }

    fn token(&self, principal: &Principal) -> String {
        mint(&self.tokens, principal, Duration::from_secs(300))
    }

    /// A token whose claims were changed by `edit` after minting them for `principal`.
    fn token_with(&self, principal: &Principal, edit: impl FnOnce(&mut Claims)) -> String {
        let mut claims = Claims::for_principal(&self.tokens, principal, Duration::from_secs(300));
        edit(&mut claims);
        encode(&self.tokens, &claims)
    }

    async fn client(
        &self,
        token: &str,
        revision: &ProtocolVersion,
        run_header: Option<&str>,
    ) -> RunningService<RoleClient, ()> {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(self.url.clone()).auth_header(token);
        if let Some(run) = run_header {
            config = config.custom_headers(HashMap::from([(
                HeaderName::from_static("x-agent-run-id"),
                HeaderValue::from_str(run).unwrap(),
            )]));
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = if revision.has_initialize() {
            ().serve(transport).await.expect("initialize over HTTP")
        } else {
            ().serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![revision.clone()],
                },
            )
            .await
            .expect("discover over HTTP")
        };
        let negotiated = client.peer_info().map(|i| i.protocol_version.clone());
        assert_eq!(negotiated.as_ref(), Some(revision), "negotiated revision");
        client
    }
}

const REVISIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

async fn lists_shrink_and_calls_are_denied_over_http_on_both_revisions(t: &TestDb) {
    let server = Server::start(t).await;
    let registry = server.runtime.registry().clone();
    for revision in &REVISIONS {
        let as_buyer = server
            .client(&server.token(&BUYER.principal()), revision, None)
            .await;
        let list = as_buyer.list_tools(None).await.unwrap();
        assert_list_matches(&list, &registry, &BUYER_TOOLS);
        assert_eq!(as_buyer.list_tools(None).await.unwrap().tools, list.tools);

        let run = new_run();
        let as_clerk = server
            .client(&server.token(&WAREHOUSE.in_run(&run)), revision, None)
            .await;
        let list = as_clerk.list_tools(None).await.unwrap();
        assert_list_matches(&list, &registry, &["inventory_get_stock"]);

        let denied = as_clerk
            .call_tool(call(
                "purchasing_create_po_draft",
                valid_arguments("purchasing_create_po_draft", "r-1"),
            ))
            .await
            .expect("a denial is a tool result");
        assert_eq!(denied.is_error, Some(true), "{revision}");
        assert!(
            text_of(&denied).contains("`purchasing:draft`"),
            "{}",
            text_of(&denied)
        );
        let log = server
            .runtime
            .database()
            .audit_log(Some(&run))
            .await
            .unwrap();
        assert_eq!(log.len(), 1, "{revision}: {log:#?}");
        assert_eq!(log[0].outcome, Outcome::Denied.as_str());
        assert_eq!(log[0].user_id, WAREHOUSE.user_id);

        let stock = as_clerk
            .call_tool(call(
                "inventory_get_stock",
                valid_arguments("inventory_get_stock", ""),
            ))
            .await
            .unwrap();
        assert_eq!(stock.is_error, Some(false), "{}", text_of(&stock));
        assert_eq!(
            stock.structured_content.unwrap()["on_hand"],
            json!("120"),
            "the branch's own stock, not another branch's"
        );
        as_buyer.cancel().await.unwrap();
        as_clerk.cancel().await.unwrap();
    }
    assert_eq!(
        count(server.runtime.database(), Table::PurchaseOrders).await,
        0
    );
}
on_both_backends!(
    lists_shrink_and_calls_are_denied_over_http_on_both_revisions,
    crate::lists_shrink_and_calls_are_denied_over_http_on_both_revisions
);

async fn the_run_header_scopes_idempotency_across_connections_and_revisions(t: &TestDb) {
    let server = Server::start(t).await;
    let run = new_run();
    let token = server.token(&BUYER.principal());
    let arguments = valid_arguments("purchasing_create_po_draft", "r-7");

    let first = server
        .client(&token, &ProtocolVersion::V_2025_11_25, Some(&run))
        .await;
    let created = first
        .call_tool(call("purchasing_create_po_draft", arguments.clone()))
        .await
        .unwrap();
    assert_eq!(created.is_error, Some(false), "{}", text_of(&created));
    let created = created.structured_content.unwrap();
    assert_eq!(created["replayed"], json!(false));
    first.cancel().await.unwrap();

    // A retry from a new, stateless connection of the same run gets the same draft back.
    let retry = server
        .client(&token, &ProtocolVersion::V_2026_07_28, Some(&run))
        .await;
    let replayed = retry
        .call_tool(call("purchasing_create_po_draft", arguments))
        .await
        .unwrap();
    assert_eq!(replayed.is_error, Some(false), "{}", text_of(&replayed));
    let replayed = replayed.structured_content.unwrap();
    assert_eq!(replayed["replayed"], json!(true));
    assert_eq!(replayed["number"], created["number"]);
    retry.cancel().await.unwrap();

    assert_eq!(
        count(server.runtime.database(), Table::PurchaseOrders).await,
        1
    );
    let log = server
        .runtime
        .database()
        .audit_log(Some(&run))
        .await
        .unwrap();
    let outcomes: Vec<&str> = log.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["ok", "replayed"]);
}
on_both_backends!(
    the_run_header_scopes_idempotency_across_connections_and_revisions,
    crate::the_run_header_scopes_idempotency_across_connections_and_revisions
);

async fn without_a_named_run_the_callers_scope_is_the_run(t: &TestDb) {
    let server = Server::start(t).await;
    let token = server.token(&BUYER.principal());
    let client = server
        .client(&token, &ProtocolVersion::V_2025_11_25, None)
        .await;
    let arguments = valid_arguments("purchasing_create_po_draft", "r-session");
    for expected in [false, true] {
        let result = client
            .call_tool(call("purchasing_create_po_draft", arguments.clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        assert_eq!(
            result.structured_content.unwrap()["replayed"],
            json!(expected)
        );
    }
    client.cancel().await.unwrap();
    let log = server.runtime.database().audit_log(None).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].agent_run_id, log[1].agent_run_id);
    assert_eq!(
        log[0].agent_run_id,
        erp_tools_core::principal_run_id(&BUYER.principal()),
        "the session is not the run: the caller's own scope is"
    );
}
on_both_backends!(
    without_a_named_run_the_callers_scope_is_the_run,
    crate::without_a_named_run_the_callers_scope_is_the_run
);

async fn without_a_named_run_stateless_retries_with_one_token_replay(t: &TestDb) {
    let server = Server::start(t).await;
    let token = server.token(&BUYER.principal());
    let arguments = valid_arguments("purchasing_create_po_draft", "r-stateless");
    // Two separate stateless connections, as a client retrying after a timeout would open.
    for expected in [false, true] {
        let client = server
            .client(&token, &ProtocolVersion::V_2026_07_28, None)
            .await;
        let result = client
            .call_tool(call("purchasing_create_po_draft", arguments.clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        assert_eq!(
            result.structured_content.unwrap()["replayed"],
            json!(expected)
        );
        client.cancel().await.unwrap();
    }
    assert_eq!(
        count(server.runtime.database(), Table::PurchaseOrders).await,
        1
    );
    let log = server.runtime.database().audit_log(None).await.unwrap();
    let runs: Vec<&str> = log.iter().map(|r| r.agent_run_id.as_str()).collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0], runs[1]);
    assert_eq!(
        runs[0],
        erp_tools_core::principal_run_id(&BUYER.principal())
    );
    assert!(
        !runs[0].contains(&token[..20]),
        "the token itself is not stored"
    );
}
on_both_backends!(
    without_a_named_run_stateless_retries_with_one_token_replay,
    crate::without_a_named_run_stateless_retries_with_one_token_replay
);

fn initialize_body() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-http", "version": "1.0.0"}}
    })
}

fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(body)
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

async fn missing_and_bad_tokens_get_401_with_a_bearer_challenge(t: &TestDb) {
    let server = Server::start(t).await;
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
    let cases = [
        (
            "bad signature",
            mint(&other_key, &BUYER.principal(), Duration::from_secs(300)),
            "signature",
        ),
        (
            "expired",
            server.token_with(&BUYER.principal(), |c| c.exp = c.iat - 120),
            "expired",
        ),
        (
            "wrong audience",
            server.token_with(&BUYER.principal(), |c| {
                c.aud = "http://127.0.0.1:1/mcp".into()
            }),
            "another resource",
        ),
        (
            "wrong issuer",
            server.token_with(&BUYER.principal(), |c| {
                c.iss = "https://someone-else.example".into()
            }),
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
        assert!(
            header.contains("error=\"invalid_token\""),
            "{case}: {header}"
        );
        assert!(header.contains(reason), "{case}: {header}");
        let json: Value = response.json().await.unwrap();
        assert_eq!(json["error"], json!("invalid_token"), "{case}");
    }

    let response = post(&server.url, &body)
        .bearer_auth(server.token(&BUYER.principal()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "a valid token is let through");
    assert!(
        server
            .runtime
            .database()
            .audit_log(None)
            .await
            .unwrap()
            .is_empty()
    );
}
on_both_backends!(
    missing_and_bad_tokens_get_401_with_a_bearer_challenge,
    crate::missing_and_bad_tokens_get_401_with_a_bearer_challenge
);

async fn every_request_of_a_session_is_checked(t: &TestDb) {
    let server = Server::start(t).await;
    let good = server.token(&BUYER.principal());
    let expired = server.token_with(&BUYER.principal(), |c| c.exp = c.iat - 120);

    let response = post(&server.url, &initialize_body())
        .bearer_auth(&good)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a 2025-11-25 session")
        .to_str()
        .unwrap()
        .to_string();
    drop(response);

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(&server.url, &initialized)
        .bearer_auth(&good)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for (token, status) in [(&good, 200), (&expired, 401)] {
        let response = post(&server.url, &list)
            .bearer_auth(token)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status);
    }
}
on_both_backends!(
    every_request_of_a_session_is_checked,
    crate::every_request_of_a_session_is_checked
);

async fn protected_resource_metadata_is_served(t: &TestDb) {
    let server = Server::start(t).await;
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
        assert_eq!(
            doc["scopes_supported"],
            json!([
                "finance:draft",
                "inventory:read",
                "purchasing:draft",
                "purchasing:read"
            ])
        );
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert!(doc["authorization_servers"].is_array());
    }
}
on_both_backends!(
    protected_resource_metadata_is_served,
    crate::protected_resource_metadata_is_served
);

async fn browser_origins_and_hosts_are_checked(t: &TestDb) {
    let server = Server::start(t).await;
    let token = server.token(&BUYER.principal());
    let body = initialize_body();

    let response = post(&server.url, &body)
        .bearer_auth(&token)
        .header("origin", "https://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403, "an origin that is not allowed");
    // Refused before the token is even looked at.
    let response = post(&server.url, &body)
        .header("origin", "https://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);

    let response = post(&server.url, &body)
        .bearer_auth(&token)
        .header("origin", ALLOWED_ORIGIN)
        .send()
        .await
        .unwrap();
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
    assert!(
        allowed_headers.contains("authorization"),
        "{allowed_headers}"
    );
    assert!(
        allowed_headers.contains("mcp-session-id"),
        "{allowed_headers}"
    );
    assert_eq!(
        preflight("https://attacker.example")
            .await
            .unwrap()
            .status(),
        403
    );

    // Without a token, the allowed origin gets the 401 challenge and may read it.
    let response = post(&server.url, &body)
        .header("origin", ALLOWED_ORIGIN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let exposed = response.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(exposed.contains("www-authenticate"), "{exposed}");

    let response = post(&server.url, &body)
        .bearer_auth(&token)
        .header("host", "rebound.attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        403,
        "DNS rebinding: a host that is not allowed"
    );
}
on_both_backends!(
    browser_origins_and_hosts_are_checked,
    crate::browser_origins_and_hosts_are_checked
);

async fn a_run_header_that_contradicts_the_token_is_refused(t: &TestDb) {
    let server = Server::start(t).await;
    let token = server.token(&BUYER.in_run("run-from-token"));
    let response = post(&server.url, &initialize_body())
        .bearer_auth(&token)
        .header("x-agent-run-id", "run-from-elsewhere")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let json: Value = response.json().await.unwrap();
    assert!(
        json["error_description"]
            .as_str()
            .unwrap()
            .contains("another run"),
        "{json}"
    );
    let response = post(&server.url, &initialize_body())
        .bearer_auth(&token)
        .header("x-agent-run-id", "run-from-token")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "the same run is fine");
}
on_both_backends!(
    a_run_header_that_contradicts_the_token_is_refused,
    crate::a_run_header_that_contradicts_the_token_is_refused
);
