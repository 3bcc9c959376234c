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
//!
//! The verified caller is put into the request as [`Authenticated`]; the
//! `Authorization` header is removed before the request reaches the MCP layer, so the
//! token is never passed on. An MCP session (`Mcp-Session-Id`, protocol revisions up to
//! 2025-11-25) belongs to the principal (user and branch) that opened it: anyone else's
//! request on it gets `404`, as for an unknown session, and cannot end it
//! (`mcp/sessions.rs`). [`serve_http`] applies the edge limits of `mcp/edge.rs`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
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

use super::edge::{self, EdgeLimits, ServeOptions};
use super::handler::{AGENT_RUN_HEADER, Authenticated, ErpMcpServer};
use super::origin::{OriginCheck, OriginPolicy, authority_of, normalise, origin_of};
use super::rate::{CallLimiter, RateLimit, is_tool_call, retry_after_secs};
use super::sessions::{self, SessionOwners};
use crate::auth::{AuthError, Authenticator, TokenConfig};
use crate::runtime::ToolRuntime;
use crate::runtime::run_id::{MAX_RUN_ID_LEN, valid_run_id};

/// Path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Path of the RFC 9728 protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How the HTTP endpoint authenticates, which hosts and browser origins it accepts, and
/// its edge limits.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    authenticator: Authenticator,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    authorization_servers: Vec<String>,
    legacy_sessions: bool,
    list_ttl: Duration,
    cancellation: CancellationToken,
    limits: EdgeLimits,
    rate_limit: Option<RateLimit>,
}

impl HttpConfig {
    /// Accepts HS256 tokens checked by `tokens` (see [`from_authenticator`](Self::from_authenticator)
    /// for an identity provider).
    pub fn new(tokens: TokenConfig) -> Self {
        Self::from_authenticator(Authenticator::shared_secret(tokens))
    }

    /// Accepts the tokens `authenticator` accepts. Allowed hosts: `localhost`,
    /// `127.0.0.1`, `::1` and the host of the resource URL. Allowed cross-origin pages:
    /// none (same-origin requests and requests without `Origin` are accepted). Edge
    /// limits and the rate limit: their defaults.
    pub fn from_authenticator(authenticator: Authenticator) -> Self {
        let mut allowed_hosts: Vec<String> =
            vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if let Some(authority) = authority_of(authenticator.resource_url()) {
            allowed_hosts.push(authority);
        }
        HttpConfig {
            authenticator,
            allowed_hosts,
            allowed_origins: Vec::new(),
            authorization_servers: Vec::new(),
            legacy_sessions: true,
            list_ttl: Duration::ZERO,
            cancellation: CancellationToken::new(),
            limits: EdgeLimits::default(),
            rate_limit: Some(RateLimit::default()),
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

    /// Browser origins allowed to call the endpoint cross-origin, exactly as browsers
    /// send them (`https://app.example.com`, `http://localhost:5173`).
    pub fn with_allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = strings(origins).iter().map(|o| normalise(o)).collect();
        self
    }

    /// Authorization servers announced in the protected-resource metadata, in addition
    /// to the authenticator's issuer.
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
    pub fn with_list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Cancelling this token closes every MCP session and stream ([`serve_http`] does so
    /// on shutdown).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Replaces the edge limits (timeouts, body size, connection cap).
    pub fn with_edge_limits(mut self, limits: EdgeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Replaces the per-principal rate limit on `tools/call`; `None` turns it off.
    pub fn with_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }

    /// The authenticator that checks every request's token.
    pub fn authenticator(&self) -> &Authenticator {
        &self.authenticator
    }

    /// The cancellation token of the MCP sessions.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// What [`serve_http`] and [`serve_listener`] need from this configuration: the edge
    /// limits, the cancellation, and whether the development key is in use.
    pub fn serve_options(&self) -> ServeOptions {
        ServeOptions {
            limits: self.limits,
            cancellation: self.cancellation.clone(),
            development: self.authenticator.is_development(),
        }
    }

    /// The URL of the protected-resource metadata, for `WWW-Authenticate` challenges.
    pub fn metadata_url(&self) -> String {
        match origin_of(self.authenticator.resource_url()) {
            Some(origin) => format!("{origin}{METADATA_PATH}"),
            None => METADATA_PATH.to_string(),
        }
    }
}

impl From<&HttpConfig> for ServeOptions {
    fn from(config: &HttpConfig) -> Self {
        config.serve_options()
    }
}

struct GuardState {
    authenticator: Authenticator,
    origins: OriginPolicy,
    metadata_url: String,
    scopes: String,
    limits: EdgeLimits,
    calls: Option<CallLimiter>,
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
        calls: config.rate_limit.map(CallLimiter::new),
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

/// Binds `addr` and serves `router` with the edge limits of `options` (from
/// [`HttpConfig::serve_options`]) until Ctrl-C or its cancellation, then cancels the MCP
/// sessions and shuts down gracefully. Refuses a non-loopback `addr` when the
/// configuration uses the published development key.
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

/// Serves `router` on an already bound listener until the cancellation of `options` is
/// cancelled (or Ctrl-C is pressed, which cancels it). Refuses a listener on a
/// non-loopback address when the configuration uses the published development key.
pub async fn serve_listener(
    listener: TcpListener,
    router: Router,
    options: impl Into<ServeOptions>,
) -> std::io::Result<()> {
    let options = options.into();
    edge::check_address(listener.local_addr()?, &options)?;
    let stop = options.cancellation.clone();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => stop.cancel(),
                _ = stop.cancelled() => {}
            }
        }
    });
    edge::serve(listener, router, options).await
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
    let cors = match state.origins.check(request.headers()) {
        OriginCheck::NoOrigin | OriginCheck::SameOrigin => None,
        OriginCheck::Cors(origin) => Some(origin),
        OriginCheck::Refused(reason) => {
            tracing::warn!(origin = ?request.headers().get(header::ORIGIN), reason, "refused a request from a browser origin");
            return json_error(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                "This Origin is not allowed to call the MCP endpoint.",
            );
        }
    };
    let mut response = if cors.is_some() && request.method() == Method::OPTIONS {
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
    if let Some(origin) = cors {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(
                "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after",
            ),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// Request headers a browser client may send (CORS preflight answer).
const CORS_ALLOW_HEADERS: &str = "authorization, content-type, accept, last-event-id, \
     mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, x-agent-run-id";

async fn authenticated(state: &GuardState, request: Request, next: Next) -> Response {
    let identity = match bearer_token(request.headers()) {
        Some(token) => state.authenticator.authenticate(token).await,
        None => Err(AuthError::Missing),
    };
    let principal = match identity {
        Ok(identity) => identity.principal,
        Err(err) if err.is_server_side() => {
            tracing::error!(reason = %err, "cannot check tokens");
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "The server cannot check tokens right now. Try again later.",
            );
        }
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

    let mut request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body, &state.limits).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        if let Some(calls) = &state.calls
            && is_tool_call(&bytes)
            && let Err(wait) = calls.check(&principal)
        {
            return too_many_calls(wait);
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
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

/// The whole body of a POST, within the body timeout and size limit.
async fn read_body(body: Body, limits: &EdgeLimits) -> Result<axum::body::Bytes, Response> {
    let read = axum::body::to_bytes(body, limits.max_body_bytes);
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request",
            &format!(
                "The request body is larger than {} bytes, or was cut off.",
                limits.max_body_bytes
            ),
        )),
        Err(_) => Err(json_error(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request",
            &format!(
                "The request body did not arrive within {} s.",
                limits.body_timeout.as_secs()
            ),
        )),
    }
}

fn too_many_calls(wait: Duration) -> Response {
    let secs = retry_after_secs(wait);
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!("Too many tool calls from this caller. Retry after {secs} s."),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
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

fn json_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        axum::Json(json!({ "error": error, "error_description": description })),
    )
        .into_response()
}

fn bad_request(message: &str) -> Response {
    json_error(StatusCode::BAD_REQUEST, "invalid_request", message)
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
        assert!(config.serve_options().development);
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
