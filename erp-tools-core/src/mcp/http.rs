//! Streamable HTTP: the MCP endpoint behind bearer-token authentication.
//!
//! [`router`] serves
//!
//! - `/mcp`: MCP over streamable HTTP (`rmcp`'s `StreamableHttpService`). Every request
//!   must carry `Authorization: Bearer <token>`; the token's signature, expiry, issuer and
//!   audience are checked on each request, not once per session. A missing or bad token
//!   gets `401` with a `WWW-Authenticate: Bearer resource_metadata=".." scope=".."`
//!   challenge (plus `error="invalid_token"` when a token was sent). A request whose
//!   `Origin` header is not in the allowed list gets `403` (requests without `Origin`,
//!   which browsers always send cross-site, are allowed). Allowed origins get CORS
//!   headers, and their preflight requests are answered without a token.
//! - `/.well-known/oauth-protected-resource` (and `/.well-known/oauth-protected-resource/mcp`):
//!   the RFC 9728 protected-resource metadata.
//!
//! The verified caller is put into the request as [`Authenticated`]; the
//! `Authorization` header is removed before the request reaches the MCP layer, so the
//! token is never passed on. An MCP session (`Mcp-Session-Id`, protocol revisions up to
//! 2025-11-25) belongs to the principal (user and branch) that opened it: anyone else's
//! request on it gets `404`, as for an unknown session, and cannot end it
//! (`mcp/sessions.rs`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::handler::{AGENT_RUN_HEADER, Authenticated, ErpMcpServer};
use super::sessions::{self, SessionOwners};
use crate::auth::{AuthError, TokenConfig, verify};
use crate::runtime::ToolRuntime;
use crate::runtime::run_id::{MAX_RUN_ID_LEN, valid_run_id};

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Path of the RFC 9728 protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How the HTTP endpoint authenticates and which hosts and browser origins it accepts.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    tokens: TokenConfig,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    authorization_servers: Vec<String>,
    legacy_sessions: bool,
    list_ttl: std::time::Duration,
    cancellation: CancellationToken,
}

impl HttpConfig {
    /// Accepts tokens checked by `tokens`. Allowed hosts: `localhost`, `127.0.0.1`, `::1`
    /// and the host of the token configuration's resource URL. Allowed origins: none (any
    /// request with an `Origin` header is refused until origins are configured).
    pub fn new(tokens: TokenConfig) -> Self {
        let mut allowed_hosts: Vec<String> =
            vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if let Some(authority) = authority_of(tokens.resource_url()) {
            allowed_hosts.push(authority);
        }
        HttpConfig {
            tokens,
            allowed_hosts,
            allowed_origins: Vec::new(),
            authorization_servers: Vec::new(),
            legacy_sessions: true,
            list_ttl: std::time::Duration::ZERO,
            cancellation: CancellationToken::new(),
        }
    }

    /// Replaces the accepted `Host` values (hostnames, or `host:port`), which protect a
    /// locally running server against DNS rebinding. A public deployment lists its own
    /// hostnames here.
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = strings(hosts);
        self
    }

    /// Browser origins allowed to call the endpoint, exactly as browsers send them
    /// (`https://app.example.com`, `http://localhost:5173`).
    pub fn with_allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = strings(origins)
            .iter()
            .map(|o| normalise_origin(o))
            .collect();
        self
    }

    /// Authorization servers announced in the protected-resource metadata.
    pub fn with_authorization_servers<I, S>(mut self, servers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.authorization_servers = strings(servers);
        self
    }

    /// Whether clients on protocol revisions up to 2025-11-25 get a session
    /// (`Mcp-Session-Id`); default true. Revision 2026-07-28 is always stateless.
    pub fn with_legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy_sessions = enabled;
        self
    }

    /// `ttlMs` of `tools/list` results (see [`ErpMcpServer::with_list_ttl`]).
    pub fn with_list_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Cancelling this token closes every MCP session and stream ([`serve_http`] does so
    /// on shutdown).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// The token configuration.
    pub fn tokens(&self) -> &TokenConfig {
        &self.tokens
    }

    /// The cancellation token of the MCP sessions.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The URL of the protected-resource metadata, for `WWW-Authenticate` challenges.
    pub fn metadata_url(&self) -> String {
        match origin_of(self.tokens.resource_url()) {
            Some(origin) => format!("{origin}{METADATA_PATH}"),
            None => METADATA_PATH.to_string(),
        }
    }
}

struct GuardState {
    tokens: TokenConfig,
    allowed_origins: Vec<String>,
    metadata_url: String,
    scopes: String,
}

/// The axum router serving MCP at [`MCP_PATH`] and the protected-resource metadata at
/// [`METADATA_PATH`]. Mount it as is, or merge it into a larger application.
pub fn router(runtime: ToolRuntime, config: HttpConfig) -> Router {
    let scopes = scopes_supported(&runtime);
    let server = ErpMcpServer::new(runtime).with_list_ttl(config.list_ttl);
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_legacy_session_mode(config.legacy_sessions)
        .with_cancellation_token(config.cancellation.clone());
    if config.allowed_hosts.is_empty() {
        rmcp_config = rmcp_config.disable_allowed_hosts();
    }
    let sessions = Arc::new(LocalSessionManager::default());
    let owners = Arc::new(SessionOwners::new(sessions.clone()));
    let mcp =
        StreamableHttpService::new(move || Ok(server.new_connection()), sessions, rmcp_config);

    let metadata = Arc::new(json!({
        "resource": config.tokens.resource_url(),
        "authorization_servers": config.authorization_servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "ERP tools (MCP)",
    }));
    let guard = Arc::new(GuardState {
        metadata_url: config.metadata_url(),
        scopes: scopes.join(" "),
        tokens: config.tokens,
        allowed_origins: config.allowed_origins,
    });

    let mut mcp_routes = Router::new().route_service(MCP_PATH, mcp);
    if config.legacy_sessions {
        // Runs after `authenticate`: sessions belong to the principal that opened them.
        mcp_routes = mcp_routes.layer(middleware::from_fn_with_state(owners, sessions::bind));
    }
    let mcp_routes = mcp_routes.layer(middleware::from_fn_with_state(guard, authenticate));
    let metadata_routes = Router::new()
        .route(METADATA_PATH, get(protected_resource_metadata))
        .route(
            &format!("{METADATA_PATH}{MCP_PATH}"),
            get(protected_resource_metadata),
        )
        .with_state(metadata);
    mcp_routes.merge(metadata_routes)
}

/// Binds `addr` and serves `router` until Ctrl-C, then cancels `cancellation` (the MCP
/// sessions, see [`HttpConfig::cancellation`]) and shuts down gracefully.
pub async fn serve_http(
    addr: SocketAddr,
    router: Router,
    cancellation: CancellationToken,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over streamable HTTP at {MCP_PATH}");
    serve_listener(listener, router, cancellation).await
}

/// Serves `router` on an already bound listener until `cancellation` is cancelled (or
/// Ctrl-C is pressed, which cancels it).
pub async fn serve_listener(
    listener: TcpListener,
    router: Router,
    cancellation: CancellationToken,
) -> std::io::Result<()> {
    let stop = cancellation.clone();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => stop.cancel(),
                _ = stop.cancelled() => {}
            }
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
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

async fn authenticate(
    State(state): State<Arc<GuardState>>,
    request: Request,
    next: Next,
) -> Response {
    let origin = match request.headers().get(header::ORIGIN) {
        None => None,
        Some(value) => {
            let allowed = value
                .to_str()
                .ok()
                .filter(|o| state.allowed_origins.contains(&normalise_origin(o)));
            match allowed {
                Some(_) => Some(value.clone()),
                None => {
                    tracing::warn!(origin = ?value, "refused a request from a browser origin that is not allowed");
                    return (
                        StatusCode::FORBIDDEN,
                        axum::Json(json!({
                            "error": "forbidden_origin",
                            "error_description": "This Origin is not allowed to call the MCP endpoint."
                        })),
                    )
                        .into_response();
                }
            }
        }
    };
    let mut response = if origin.is_some() && request.method() == Method::OPTIONS {
        // CORS preflight from an allowed origin: carries no credentials by design.
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        authenticated(&state, request, next).await
    };
    if let Some(origin) = origin {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-session-id, mcp-protocol-version, www-authenticate"),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// Request headers a browser client may send (CORS preflight answer).
const CORS_ALLOW_HEADERS: &str = "authorization, content-type, accept, last-event-id, \
     mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, x-agent-run-id";

async fn authenticated(state: &GuardState, mut request: Request, next: Next) -> Response {
    let principal = match bearer_token(request.headers()) {
        Some(token) => verify(&state.tokens, token),
        None => Err(AuthError::Missing),
    };
    let principal = match principal {
        Ok(p) => p,
        Err(err) => {
            tracing::info!(reason = %err, "refused an MCP request without a valid token");
            return unauthorized(state, &err);
        }
    };

    let header_run = match request.headers().get(AGENT_RUN_HEADER) {
        None => None,
        Some(value) => match value.to_str().ok().filter(|v| valid_run_id(v)) {
            Some(v) => Some(v.to_string()),
            None => {
                return bad_request(&format!(
                    "The {AGENT_RUN_HEADER} header must be 1 to {MAX_RUN_ID_LEN} visible ASCII \
                     characters without spaces."
                ));
            }
        },
    };
    let agent_run_id = match (principal.agent_run_id(), header_run) {
        (Some(claim), Some(header)) if claim != header => {
            return bad_request(&format!(
                "The {AGENT_RUN_HEADER} header names another run than the token. Send the \
                 token's run id, or no header."
            ));
        }
        (Some(claim), _) => Some(claim.to_string()),
        (None, Some(header)) => Some(header),
        // No run named: the call runs in the caller's own scope (`principal_run_id`),
        // whatever the session or connection, so a resent call replays after a reconnect.
        (None, None) => None,
    };

    request.headers_mut().remove(header::AUTHORIZATION);
    request.extensions_mut().insert(Authenticated {
        principal: Arc::new(principal),
        agent_run_id,
    });
    let terminating = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if terminating {
        session_closed(&mut response);
    }
    response
}

/// A session closed with `DELETE` is answered `204 No Content`: rmcp says `202 Accepted`,
/// which clients that expect 200 or 204 (the official Python SDK) log as a failed
/// termination at every clean disconnect.
fn session_closed(response: &mut Response) {
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
}

fn strings<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into).collect()
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim();
    (!token.is_empty()).then_some(token)
}

fn unauthorized(state: &GuardState, err: &AuthError) -> Response {
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}\", scope=\"{}\"",
        state.metadata_url, state.scopes
    );
    let mut body = json!({
        "error": "unauthorized",
        "error_description": err.description(),
    });
    if !matches!(err, AuthError::Missing) {
        challenge.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{}\"",
            err.description()
        ));
        body["error"] = json!("invalid_token");
    }
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn bad_request(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({ "error": "invalid_request", "error_description": message })),
    )
        .into_response()
}

fn normalise_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `scheme://authority` of an absolute URL.
fn origin_of(url: &str) -> Option<String> {
    let uri: ::http::Uri = url.parse().ok()?;
    Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?))
}

/// The `Host` value a URL is reached at (`host` or `host:port`).
fn authority_of(url: &str) -> Option<String> {
    let uri: ::http::Uri = url.parse().ok()?;
    uri.authority().map(|a| a.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bearer_tokens() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc.def"),
        );
        assert_eq!(bearer_token(&h), Some("abc.def"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  xyz "),
        );
        assert_eq!(bearer_token(&h), Some("xyz"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer_token(&h), None);
    }

    #[test]
    fn a_closed_session_is_answered_no_content() {
        let mut closed = StatusCode::ACCEPTED.into_response();
        session_closed(&mut closed);
        assert_eq!(closed.status(), StatusCode::NO_CONTENT);
        let mut unknown = StatusCode::NOT_FOUND.into_response();
        session_closed(&mut unknown);
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn derives_metadata_url_and_hosts_from_the_resource() {
        let tokens = TokenConfig::development().for_resource("https://erp.example.com:8443/mcp");
        let config = HttpConfig::new(tokens);
        assert_eq!(
            config.metadata_url(),
            "https://erp.example.com:8443/.well-known/oauth-protected-resource"
        );
        assert!(
            config
                .allowed_hosts
                .contains(&"erp.example.com:8443".to_string())
        );
        assert!(valid_run_id("run-2026-07-01"));
        assert!(!valid_run_id("run with spaces"));
        assert!(!valid_run_id(""));
    }
}
