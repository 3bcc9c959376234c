//! The MCP server over streamable HTTP on 127.0.0.1, as a server process: started on a
//! runtime, stopped (and started again on the same address) like a process that exits.
//! Driven by `rmcp`'s HTTP client on both protocol revisions, or by plain HTTP requests
//! for what a real client library would not send.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use erp_tools_core::auth::{Claims, TokenConfig, encode, mint};
use erp_tools_core::mcp::{HttpConfig, router, serve_listener};
use erp_tools_core::{Database, Principal, ToolRuntime};
use http::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::db::TestDb;
use crate::mcp::Client;

/// The revision with `initialize` and an `Mcp-Session-Id`.
pub const SESSIONS: ProtocolVersion = ProtocolVersion::V_2025_11_25;
/// The stateless revision (`server/discover`, no session).
pub const STATELESS: ProtocolVersion = ProtocolVersion::V_2026_07_28;
/// Both revisions.
pub const REVISIONS: [ProtocolVersion; 2] = [SESSIONS, STATELESS];

/// The fixture application's scopes, sorted, as the protected-resource metadata lists
/// them (`scopes_supported`).
pub const SCOPES_SUPPORTED: [&str; 4] = [
    "finance:draft",
    "inventory:read",
    "purchasing:draft",
    "purchasing:read",
];

/// The browser origin every server allows.
pub const ALLOWED_ORIGIN: &str = "http://localhost:5173";

/// An audience several servers accept, whatever port they listen on: a token minted for
/// one is good on another and after a restart, as behind a load balancer.
pub const SHARED_AUDIENCE: &str = "http://127.0.0.1/mcp";

/// How long minted tokens live.
const TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// One MCP server over streamable HTTP on 127.0.0.1: its own runtime, database pools and
/// sessions. Stops serving when dropped.
pub struct HttpServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// `http://<addr>`.
    pub base: String,
    /// The MCP endpoint, `<base>/mcp`.
    pub url: String,
    /// The tokens it accepts.
    pub tokens: TokenConfig,
    /// What it serves.
    pub runtime: ToolRuntime,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl HttpServer {
    /// Serves `runtime` on a free port, accepting tokens for its own URL.
    pub async fn start(runtime: ToolRuntime) -> HttpServer {
        Self::start_at(runtime, free_port(), None).await
    }

    /// The fixture application on `t`'s database, accepting tokens for the server's own
    /// URL.
    pub async fn on(t: &TestDb) -> HttpServer {
        Self::start(App::new(&t.db).await.runtime).await
    }

    /// A new server process on `t`'s database: the fixture application on database pools
    /// of its own, accepting tokens for [`SHARED_AUDIENCE`].
    pub async fn process_on(t: &TestDb) -> HttpServer {
        Self::restart_on(t, free_port()).await
    }

    /// [`HttpServer::process_on`] listening on `addr`: a server restarted where it was.
    pub async fn restart_on(t: &TestDb, addr: SocketAddr) -> HttpServer {
        let runtime = App::open(t.url()).await.runtime;
        Self::start_at(runtime, addr, Some(SHARED_AUDIENCE)).await
    }

    /// Serves `runtime` on `addr` (a restart binds the address it had before), accepting
    /// tokens for `audience` (for its own URL when `None`), with [`ALLOWED_ORIGIN`].
    pub async fn start_at(
        runtime: ToolRuntime,
        addr: SocketAddr,
        audience: Option<&str>,
    ) -> HttpServer {
        Self::serve(runtime, addr, |url| {
            let tokens = TokenConfig::development().for_resource(audience.unwrap_or(url));
            let config = HttpConfig::new(tokens.clone()).with_allowed_origins([ALLOWED_ORIGIN]);
            (tokens, config)
        })
        .await
    }

    /// Serves `runtime` on a free port with the configuration `configure` makes for the
    /// server's MCP URL (an identity provider, edge limits, a rate limit). `tokens` are
    /// development tokens for that URL.
    pub async fn start_configured(
        runtime: ToolRuntime,
        configure: impl FnOnce(&str) -> HttpConfig,
    ) -> HttpServer {
        Self::serve(runtime, free_port(), |url| {
            (TokenConfig::development().for_resource(url), configure(url))
        })
        .await
    }

    /// Binds `addr` and serves `runtime` with the development tokens and the
    /// configuration `setup` makes for the server's MCP URL.
    async fn serve(
        runtime: ToolRuntime,
        addr: SocketAddr,
        setup: impl FnOnce(&str) -> (TokenConfig, HttpConfig),
    ) -> HttpServer {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let base = format!("http://{addr}");
        let url = format!("{base}/mcp");
        let (tokens, config) = setup(&url);
        let options = config.serve_options();
        let stop = options.cancellation().clone();
        let task = tokio::spawn(serve_listener(
            listener,
            router(runtime.clone(), config),
            options,
        ));
        HttpServer {
            addr,
            base,
            url,
            tokens,
            runtime,
            stop,
            task: Some(task),
        }
    }

    /// The database it serves.
    pub fn db(&self) -> &Database {
        self.runtime.database()
    }

    /// A token it accepts for `principal`.
    pub fn token(&self, principal: &Principal) -> String {
        mint(&self.tokens, principal, TOKEN_LIFETIME)
    }

    /// A token whose claims were changed by `edit` after minting them for `principal`.
    pub fn token_with(&self, principal: &Principal, edit: impl FnOnce(&mut Claims)) -> String {
        let mut claims = Claims::for_principal(&self.tokens, principal, TOKEN_LIFETIME);
        edit(&mut claims);
        encode(&self.tokens, &claims)
    }

    /// A real `rmcp` client with `token` on `revision`: `initialize` and a session for
    /// 2025-11-25, stateless `server/discover` for 2026-07-28; `run` is sent as
    /// `X-Agent-Run-Id`. Asserts the revision negotiated.
    pub async fn client(
        &self,
        token: &str,
        revision: &ProtocolVersion,
        run: Option<&str>,
    ) -> Client {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(self.url.clone()).auth_header(token);
        if let Some(run) = run {
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

    /// Stops serving (sessions closed, connections drained within 5 s) and closes the
    /// database pools, as a process that exits would. Returns the address it had.
    pub async fn stop(mut self) -> SocketAddr {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        self.runtime.database().close().await;
        self.addr
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn free_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A POST of `body` to the MCP endpoint `url`, with the `Accept` header every
/// streamable-HTTP request carries (and no token).
pub fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(body)
}

/// The `initialize` request of a 2025-11-25 client.
pub fn initialize_body() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-http", "version": "1.0.0"}}
    })
}

/// Adds the headers of a request in the 2025-11-25 session `session`.
pub fn in_session(request: reqwest::RequestBuilder, session: &str) -> reqwest::RequestBuilder {
    request
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
}

/// Opens a 2025-11-25 session with raw requests (`initialize`, then `initialized`) and
/// returns its id.
pub async fn open_session(url: &str, token: &str) -> String {
    let response = post(url, &initialize_body())
        .bearer_auth(token)
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
    let request = post(url, &initialized).bearer_auth(token);
    let response = in_session(request, &session).send().await.unwrap();
    assert_eq!(response.status(), 202);
    session
}

/// A stateless (2026-07-28) `tools/call` of `tool` with `arguments`, as a raw request.
pub fn stateless_call(
    url: &str,
    token: &str,
    tool: &str,
    arguments: &Value,
) -> reqwest::RequestBuilder {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    post(url, &body)
        .bearer_auth(token)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
}

/// The `WWW-Authenticate` header of `response` (empty when there is none).
pub fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}
