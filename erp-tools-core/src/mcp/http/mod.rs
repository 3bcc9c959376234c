//! Streamable HTTP: the MCP endpoint behind bearer-token authentication.
//!
//! [`router`] serves
//!
//! - `/mcp`: MCP over streamable HTTP (`rmcp`'s `StreamableHttpService`). Every request
//!   must carry `Authorization: Bearer <token>`, verified on each request (not once per
//!   session) by the configuration's [`Authenticator`]: development HS256 tokens, or the
//!   identity provider's JWTs against its JWKS. A missing or bad token gets `401` with a
//!   `WWW-Authenticate: Bearer resource_metadata=".." scope=".."` challenge (plus
//!   `error="invalid_token"` when a token was sent); a server that cannot fetch its
//!   provider's keys answers `503`. Browser origins follow `mcp/origin.rs`: requests
//!   without `Origin` as any client, same-origin and configured origins accepted (the
//!   latter with CORS headers, their preflight answered without a token), others `403`.
//!   `tools/call` is rate-limited per principal (`429` with `Retry-After`, `mcp/rate.rs`).
//! - `/.well-known/oauth-protected-resource` (and `/.well-known/oauth-protected-resource/mcp`):
//!   the RFC 9728 protected-resource metadata, naming the authorization server(s) and the
//!   registry's scopes.
//! - `/mcp/server-card` (`card.rs`): the Server Card (experimental extension, SEP-2127),
//!   public: name, version, transport, protocol versions, authorization and extensions.
//! - `/healthz` and `/readyz` (`health.rs`): liveness and readiness, unauthenticated.
//! - `/metrics` (`metrics.rs`, feature `metrics`): OpenMetrics text for Prometheus, to
//!   loopback peers or a token with the `metrics:read` scope.
//!
//! Every `/mcp` request runs in a span (`trace.rs`) that continues the caller's W3C
//! `traceparent` header; the call's `tools/call {tool}` span is its child.
//!
//! [`serve_http`] and [`serve_listener`] drain on SIGTERM and SIGINT: they stop accepting,
//! `/readyz` answers `503`, the calls in flight and the running tasks finish within the
//! shutdown grace ([`HttpConfig::with_shutdown_grace`], 30 s by default; a task still
//! running then is handed over to another replica, which takes it over at once), then
//! the MCP sessions are closed and they return, so the caller can close its
//! [`Database`](crate::Database). The router also takes over, every few seconds
//! ([`HttpConfig::with_task_sweep`]), the tasks of replicas that stopped.
//!
//! The verified caller is put into the request as [`Authenticated`](super::Authenticated);
//! the `Authorization` header is removed before the request reaches the MCP layer, so the
//! token is never passed on. An MCP session (`Mcp-Session-Id`, protocol revisions up to
//! 2025-11-25) belongs to the principal (user and branch) that opened it: anyone else's
//! request on it gets `404`, as for an unknown session, and cannot end it
//! (`mcp/sessions.rs`). [`serve_http`] applies the edge limits of `mcp/edge.rs`.
//!
//! This file builds the router and serves it; [`HttpConfig`] is `config.rs`, the origin
//! check and CORS `cors.rs`, the token and the run header `auth.rs`, the POST body and
//! the rate limit `rate.rs`, the JSON refusals `errors.rs`, the health checks `health.rs`.

mod auth;
mod card;
mod config;
mod cors;
mod errors;
mod health;
#[cfg(feature = "metrics")]
mod metrics;
mod paths;
mod rate;
mod shared;
mod state;
mod trace;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub use self::card::{SERVER_CARD_MEDIA_TYPE, SERVER_CARD_SCHEMA};
pub use self::config::HttpConfig;
pub use self::health::{HEALTH_PATH, READY_PATH};
#[cfg(feature = "metrics")]
pub use self::metrics::{METRICS_PATH, METRICS_SCOPE};
pub use self::paths::{MCP_PATH, METADATA_PATH, SERVER_CARD_PATH};
use self::state::GuardState;
use super::edge::{self, ServeOptions};
use super::handler::ErpMcpServer;
use super::origin::OriginPolicy;
use super::rate::Limiter;
use super::sessions::{self, SessionOwners};
use crate::runtime::ToolRuntime;

/// The axum router serving MCP at [`MCP_PATH`], the protected-resource metadata at
/// [`METADATA_PATH`], the Server Card at [`SERVER_CARD_PATH`], and the health checks at [`HEALTH_PATH`] and [`READY_PATH`]. Mount
/// it as is, or merge it into a larger application.
pub fn router(runtime: ToolRuntime, config: HttpConfig) -> Router {
    let scopes = scopes_supported(&runtime);
    #[cfg(feature = "metrics")]
    let metrics_state = metrics::MetricsState {
        authenticator: config.authenticator.clone(),
        db: runtime.database().clone(),
    };
    let ready = health::ReadyState {
        db: runtime.database().clone(),
        authenticator: config.authenticator.clone(),
        drain: config.drain.clone(),
        stop: config.cancellation.clone(),
        reconciliation: config.reconciliation.clone(),
    };
    config.tasks.attach(runtime.database());
    super::tasks::start_sweeps(&runtime, &config.tasks);
    let mut server = ErpMcpServer::new(runtime)
        .with_list_ttl(config.list_ttl)
        .with_task_ttl(config.task_ttl)
        .with_apps(config.apps.clone());
    server.tasks.board = config.tasks.clone();
    if let Some(states) = &config.request_states {
        server = server.with_state_keeper(states.clone());
    }
    let (info, versions) = (server.get_info(), server.supported_protocol_versions());
    let registry = server.registry().clone();
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_legacy_session_mode(config.legacy_sessions)
        .with_cancellation_token(config.cancellation.clone());
    if config.allowed_hosts.is_empty() {
        rmcp_config = rmcp_config.disable_allowed_hosts();
    }
    let sessions = Arc::new(LocalSessionManager::default());
    let owners = Arc::new(SessionOwners::new(sessions.clone()));
    let mcp = shared::SharedMcp::new(StreamableHttpService::new(
        move || Ok(server.new_connection()),
        sessions,
        rmcp_config,
    ));

    let mut authorization_servers = config.authenticator.authorization_servers();
    for extra in &config.authorization_servers {
        if !authorization_servers.contains(extra) {
            authorization_servers.push(extra.clone());
        }
    }
    let metadata = Arc::new(json!({
        "resource": config.authenticator.resource_url(),
        "authorization_servers": authorization_servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "ERP tools (MCP)",
    }));
    let card = card::Card::new(card::CardSource {
        registry: &registry,
        info: &info,
        versions: &versions,
        resource_url: config.authenticator.resource_url(),
        metadata_url: config.metadata_url(),
        metadata: &metadata,
    });
    let guard = Arc::new(GuardState {
        metadata_url: config.metadata_url(),
        scopes: scopes.join(" "),
        origins: OriginPolicy::new(
            &config.allowed_origins,
            config.authenticator.resource_url(),
            &config.allowed_hosts,
        ),
        authenticator: config.authenticator,
        limits: config.limits,
        calls: config
            .rate_limit
            .map(|limit| Limiter::for_database(limit, &ready.db)),
        owners: config.legacy_sessions.then_some(owners),
    });

    let mcp_routes = Router::new()
        .route_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(guard, front));
    let metadata_routes = Router::new()
        .route(METADATA_PATH, get(protected_resource_metadata))
        .route(
            &format!("{METADATA_PATH}{MCP_PATH}"),
            get(protected_resource_metadata),
        )
        .with_state(metadata);
    let card_routes = Router::new()
        .route(SERVER_CARD_PATH, get(card::server_card))
        .with_state(card);
    let health_routes = Router::new()
        .route(HEALTH_PATH, get(health::healthz))
        .route(READY_PATH, get(health::readyz))
        .with_state(ready);
    let routes = mcp_routes
        .merge(metadata_routes)
        .merge(card_routes)
        .merge(health_routes);
    #[cfg(feature = "metrics")]
    let routes = routes.merge(
        Router::new()
            .route(metrics::METRICS_PATH, get(metrics::metrics))
            .with_state(metrics_state),
    );
    routes
}

/// The one middleware in front of `/mcp`: the request's span (`trace.rs`), the origin
/// check and CORS (`cors.rs`), the token, the run header and the POST gate (`auth.rs`),
/// then, with legacy sessions, the session's owner (`mcp/sessions.rs`: sessions belong to
/// the principal that opened them). One function, not a layer each: a layer boxes its
/// future and clones the service it wraps at every request.
async fn front(State(guard): State<Arc<GuardState>>, request: Request, next: Next) -> Response {
    trace::edge_span(request, async |request| {
        cors::guard(&guard, request, async |request| match &guard.owners {
            Some(owners) => sessions::bind(owners, request, async |r| next.run(r).await).await,
            None => next.run(request).await,
        })
        .await
    })
    .await
}

/// Binds `addr` and serves `router` with the edge limits of `options` (from
/// [`HttpConfig::serve_options`]) until SIGTERM, SIGINT (Ctrl-C) or its drain token, which
/// drain it (see the module doc), or its cancellation, which stops it at once. Refuses a
/// non-loopback `addr` when the configuration uses the published development key.
pub async fn serve_http(
    addr: SocketAddr,
    router: Router,
    options: impl Into<ServeOptions>,
) -> std::io::Result<()> {
    let options = options.into();
    edge::check_address(addr, &options)?;
    let listener = TcpListener::bind(addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over streamable HTTP at {MCP_PATH}");
    serve_listener(listener, router, options).await
}

/// Serves `router` on an already bound listener until SIGTERM, SIGINT or the drain token
/// of `options` drains it, or its cancellation stops it. Refuses a listener on a
/// non-loopback address when the configuration uses the published development key.
pub async fn serve_listener(
    listener: TcpListener,
    router: Router,
    options: impl Into<ServeOptions>,
) -> std::io::Result<()> {
    let options = options.into();
    edge::check_address(listener.local_addr()?, &options)?;
    let (stop, drain) = (options.cancellation.clone(), options.drain.clone());
    tokio::spawn(async move {
        tokio::select! {
            signal = shutdown_signal() => {
                tracing::info!(signal, "shutting down: draining");
                drain.cancel();
            }
            _ = stop.cancelled() => {}
            _ = drain.cancelled() => {}
        }
    });
    edge::serve(listener, router, options).await
}

/// The first of SIGTERM and SIGINT, by name.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        async fn recv(kind: SignalKind) {
            match signal(kind) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(err) => {
                    tracing::warn!(%err, "cannot listen for a signal");
                    std::future::pending::<()>().await
                }
            }
        }
        tokio::select! {
            _ = recv(SignalKind::terminate()) => "SIGTERM",
            _ = recv(SignalKind::interrupt()) => "SIGINT",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

fn scopes_supported(runtime: &ToolRuntime) -> Vec<String> {
    let mut scopes: Vec<String> = runtime
        .registry()
        .tools()
        .iter()
        .flat_map(|t| t.def.scopes().iter().map(|s| s.to_string()))
        .collect();
    scopes.sort();
    scopes.dedup();
    scopes
}

async fn protected_resource_metadata(State(doc): State<Arc<Value>>) -> Response {
    (
        [(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=300"),
        )],
        axum::Json(doc.as_ref().clone()),
    )
        .into_response()
}
