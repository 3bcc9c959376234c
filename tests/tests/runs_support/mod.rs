//! Self-contained set-up for the tests of issue 15 (runs and sessions that belong to
//! people, retries that replay across reconnects): a two-tool purchasing app, a throw-away
//! database per test (a SQLite file, or a PostgreSQL schema when `ERP_TOOLS_PG_URL` is
//! set), MCP servers over HTTP on 127.0.0.1 that can be stopped and started again on the
//! same database, and real `rmcp` clients.
//!
//! It depends only on `erp-tools-core`'s public API, so it can move onto the shared
//! fixture in `tests/src` later without changing what the tests check.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use erp_tools_core::auth::{Claims, TokenConfig, encode, mint};
use erp_tools_core::mcp::{HttpConfig, router, serve_listener};
use erp_tools_core::prelude::*;
use erp_tools_core::{AuditRecord, Backend, Database, Principal, ToolRegistry, ToolRuntime};
use http::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------
// People
// ---------------------------------------------------------------------------------------

pub const BRANCH_SBY: i64 = 3;
pub const BRANCH_JKT: i64 = 4;
const SCOPES: [&str; 2] = ["purchasing:read", "purchasing:draft"];

/// Ani, a buyer in SBY-01.
pub fn ani() -> Principal {
    person("u-ani", BRANCH_SBY, "SBY-01", None)
}
/// Budi, another buyer in the same branch.
pub fn budi() -> Principal {
    person("u-budi", BRANCH_SBY, "SBY-01", None)
}
/// Ani's user id in another branch: another principal.
pub fn ani_in_jakarta() -> Principal {
    person("u-ani", BRANCH_JKT, "JKT-02", None)
}
/// `principal` with its token bound to `run` (the token's `run` claim).
pub fn bound(principal: &Principal, run: &str) -> Principal {
    person(
        principal.user_id(),
        principal.branch_id(),
        principal.branch_code(),
        Some(run),
    )
}
fn person(user: &str, branch: i64, code: &str, run: Option<&str>) -> Principal {
    let b = Principal::builder(user, branch, code)
        .role("buyer")
        .scopes(SCOPES);
    match run {
        Some(r) => b.agent_run_id(r).build(),
        None => b.build(),
    }
}

/// A run id no other test uses.
pub fn new_run(tag: &str) -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    format!(
        "run-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

// ---------------------------------------------------------------------------------------
// The app: one draft tool, one read tool
// ---------------------------------------------------------------------------------------

/// Arguments of `purchasing_create_po_draft`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    /// Vendor code, e.g. V-00231
    pub vendor_code: String,
    /// Quantity to order, e.g. "24"
    pub qty: Decimal,
    /// Your own id for this order. Reuse it when retrying.
    pub client_ref: String,
    /// Why this order is needed.
    pub note: Option<String>,
}

/// The draft created.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PoDraft {
    /// Business number, e.g. PO-2026-0001.
    pub number: String,
    /// Always `draft`.
    pub status: String,
}

/// Create a DRAFT purchase order for the caller's branch.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoDraft, ToolError> {
    let p = tx.provenance();
    let (run, user) = (
        p.drafted_by_agent_run.to_string(),
        p.drafted_on_behalf_of.to_string(),
    );
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO purchase_orders (number, branch_id, vendor_code, qty, \
         drafted_by_agent_run, drafted_on_behalf_of) VALUES ($1, $2, $3, $4, $5, $6) \
         RETURNING id",
    )
    .bind(format!("pending:{run}:{}", args.client_ref))
    .bind(ctx.branch_id())
    .bind(args.vendor_code)
    .bind(args.qty.normalize().to_string())
    .bind(run)
    .bind(user)
    .fetch_one(&mut *tx.conn())
    .await?;
    let number = format!("PO-2026-{id:04}");
    sqlx::query("UPDATE purchase_orders SET number = $1 WHERE id = $2")
        .bind(number.clone())
        .bind(id)
        .execute(&mut *tx.conn())
        .await?;
    tx.record_document(DocumentRef {
        doc_type: "purchase_order".into(),
        id,
        number: number.clone(),
    });
    Ok(PoDraft {
        number,
        status: "draft".into(),
    })
}

/// Arguments of `purchasing_get_po`.
#[derive(Debug, Deserialize, ToolArgs)]
pub struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0001
    pub number: String,
}

/// One purchase order.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PoView {
    /// Business number.
    pub number: String,
    /// The agent run that drafted it.
    pub drafted_by_agent_run: String,
}

/// Show one purchase order of the caller's branch.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn get_po(ctx: &ToolContext, db: &ReadDb, args: GetPoArgs) -> Result<PoView, ToolError> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT number, drafted_by_agent_run FROM purchase_orders \
         WHERE number = $1 AND branch_id = $2",
    )
    .bind(args.number.clone())
    .bind(ctx.branch_id())
    .fetch_optional(db.pool())
    .await?;
    let Some((number, drafted_by_agent_run)) = row else {
        return Err(ToolError::not_found("Purchase order", &args.number));
    };
    Ok(PoView {
        number,
        drafted_by_agent_run,
    })
}

pub fn registry() -> Arc<ToolRegistry> {
    Arc::new(
        ToolRegistry::builder()
            .module(
                "purchasing",
                "Purchase orders of your branch. Drafts only: cannot approve, send or post.",
            )
            .tool::<create_po_draft>()
            .tool::<get_po>()
            .build()
            .expect("the registry is valid"),
    )
}

pub const DRAFT: &str = "purchasing_create_po_draft";
pub const GET_PO: &str = "purchasing_get_po";

/// Arguments of a draft for `qty` with `client_ref`.
pub fn draft_args(client_ref: &str, qty: &str) -> Value {
    json!({"vendor_code": "V-00231", "qty": qty, "client_ref": client_ref, "note": null})
}

const SQLITE_SCHEMA: &str = "CREATE TABLE purchase_orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    number TEXT NOT NULL UNIQUE,
    branch_id INTEGER NOT NULL,
    vendor_code TEXT NOT NULL,
    qty TEXT NOT NULL,
    drafted_by_agent_run TEXT NOT NULL,
    drafted_on_behalf_of TEXT NOT NULL)";
const POSTGRES_SCHEMA: &str = "CREATE TABLE purchase_orders (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    branch_id BIGINT NOT NULL,
    vendor_code TEXT NOT NULL,
    qty TEXT NOT NULL,
    drafted_by_agent_run TEXT NOT NULL,
    drafted_on_behalf_of TEXT NOT NULL)";

// ---------------------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------------------

/// A database that exists for one test; [`TestDb::open`] opens it (again) with pools of
/// its own, as a restarted or a second server process would.
pub struct TestDb {
    url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

fn unique_suffix() -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}_{nanos}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temporary directory");
        let url = format!("sqlite://{}", dir.path().join("erp.db").display());
        TestDb {
            url,
            _dir: Some(dir),
            pg: None,
        }
    }

    /// A fresh schema in `ERP_TOOLS_PG_URL`'s database, or `None` (printing that the test
    /// was skipped) when the variable is unset.
    pub async fn postgres() -> Option<TestDb> {
        let Ok(base) = std::env::var("ERP_TOOLS_PG_URL") else {
            println!("skipped: ERP_TOOLS_PG_URL is not set");
            return None;
        };
        sqlx::any::install_default_drivers();
        let schema = format!("i15_{}", unique_suffix());
        let admin = sqlx::AnyPool::connect(&base)
            .await
            .expect("connect to ERP_TOOLS_PG_URL");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
            .execute(&admin)
            .await
            .expect("create the test schema");
        admin.close().await;
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
        Some(TestDb {
            url,
            _dir: None,
            pg: Some((base, schema)),
        })
    }

    /// Opens the database with pools of its own and the app's tables.
    pub async fn open(&self) -> Database {
        let db = Database::open(&self.url).await.expect("open the database");
        let sql = match db.backend() {
            Backend::Sqlite => SQLITE_SCHEMA,
            Backend::Postgres => POSTGRES_SCHEMA,
        };
        db.apply_migrations(&[("0001_issue15_purchase_orders", sql)])
            .await
            .expect("app migrations");
        db
    }

    pub async fn runtime(&self) -> ToolRuntime {
        ToolRuntime::new(registry(), self.open().await)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((base, schema)) = self.pg.take() else {
            return;
        };
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                if let Ok(admin) = sqlx::AnyPool::connect(&base).await {
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                        "DROP SCHEMA IF EXISTS {schema} CASCADE"
                    )))
                    .execute(&admin)
                    .await;
                    admin.close().await;
                }
            });
        })
        .join();
    }
}

/// `$scenario(TestDb)` on SQLite and, when `ERP_TOOLS_PG_URL` is set, on PostgreSQL: the
/// tests `$scenario::sqlite` and `$scenario::postgres`.
#[macro_export]
macro_rules! on_both_backends {
    ($scenario:ident) => {
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$scenario(super::runs_support::TestDb::sqlite()).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some(db) = super::runs_support::TestDb::postgres().await {
                    super::$scenario(db).await;
                }
            }
        }
    };
}

pub async fn purchase_order_count(db: &Database) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM purchase_orders")
        .fetch_one(db.pool())
        .await
        .expect("count purchase orders")
}

/// The audit rows written by the call pipeline (not the agent loop's events).
pub async fn runtime_rows(db: &Database) -> Vec<AuditRecord> {
    db.audit_log(None)
        .await
        .expect("audit log")
        .into_iter()
        .filter(|r| r.source == "runtime")
        .collect()
}

// ---------------------------------------------------------------------------------------
// Servers and clients
// ---------------------------------------------------------------------------------------

/// The audience of every token: the HTTP servers of these tests all accept it, whatever
/// port they listen on, so a token survives a restart as it would in production.
pub const RESOURCE: &str = "http://127.0.0.1/mcp";

pub fn tokens() -> TokenConfig {
    TokenConfig::development().for_resource(RESOURCE)
}

pub fn token(principal: &Principal) -> String {
    mint(&tokens(), principal, Duration::from_secs(600))
}

/// A token for `principal` whose claims `edit` changed after minting.
pub fn token_with(principal: &Principal, edit: impl FnOnce(&mut Claims)) -> String {
    let config = tokens();
    let mut claims = Claims::for_principal(&config, principal, Duration::from_secs(600));
    edit(&mut claims);
    encode(&config, &claims)
}

/// One MCP server over streamable HTTP on 127.0.0.1 (a "server process": its own
/// runtime, database pools and sessions).
pub struct Server {
    pub addr: SocketAddr,
    pub url: String,
    pub runtime: ToolRuntime,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// Serves `runtime` on a free port.
    pub async fn start(runtime: ToolRuntime) -> Server {
        Self::start_at(runtime, "127.0.0.1:0".parse().unwrap()).await
    }

    /// Serves `runtime` on `addr` (a restart binds the address it had before).
    pub async fn start_at(runtime: ToolRuntime, addr: SocketAddr) -> Server {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let config = HttpConfig::new(tokens());
        let stop = config.cancellation().clone();
        let task = tokio::spawn(serve_listener(
            listener,
            router(runtime.clone(), config),
            stop.clone(),
        ));
        Server {
            addr,
            url: format!("http://{addr}/mcp"),
            runtime,
            stop,
            task: Some(task),
        }
    }

    pub fn db(&self) -> &Database {
        self.runtime.database()
    }

    /// Stops the server (sessions closed, connections drained within 5 s) and closes its
    /// database pools, as a process that exits would.
    pub async fn stop(mut self) -> SocketAddr {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        self.runtime.database().close().await;
        self.addr
    }

    /// A real `rmcp` client: `initialize` and an `Mcp-Session-Id` for 2025-11-25, stateless
    /// `server/discover` for 2026-07-28; `run` is sent as `X-Agent-Run-Id`.
    pub async fn client(
        &self,
        token: &str,
        revision: &ProtocolVersion,
        run: Option<&str>,
    ) -> RunningService<RoleClient, ()> {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(self.url.clone()).auth_header(token);
        if let Some(run) = run {
            config = config.custom_headers(HashMap::from([(
                HeaderName::from_static("x-agent-run-id"),
                HeaderValue::from_str(run).unwrap(),
            )]));
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        if revision.has_initialize() {
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
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub const SESSIONS: ProtocolVersion = ProtocolVersion::V_2025_11_25;
pub const STATELESS: ProtocolVersion = ProtocolVersion::V_2026_07_28;

pub fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_string())
        .with_arguments(arguments.as_object().expect("an object").clone())
}

pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// A draft call's `(number, replayed)`, panicking with the text if it failed.
pub fn drafted(result: &CallToolResult) -> (String, bool) {
    assert_eq!(result.is_error, Some(false), "{}", text_of(result));
    let s = result.structured_content.as_ref().expect("structured");
    (
        s["number"].as_str().expect("number").to_string(),
        s["replayed"].as_bool().expect("replayed"),
    )
}

/// Sends the draft `arguments` on `client` and returns `(number, replayed)`.
pub async fn draft_on(
    client: &RunningService<RoleClient, ()>,
    arguments: &Value,
) -> (String, bool) {
    let result = client
        .call_tool(call(DRAFT, arguments.clone()))
        .await
        .expect("tools/call");
    drafted(&result)
}

// ---------------------------------------------------------------------------------------
// Plain HTTP, for what a real client library would not send
// ---------------------------------------------------------------------------------------

/// A POST to the MCP endpoint with the headers every streamable-HTTP request carries.
pub fn post(url: &str, token: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
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
    post(url, token, &body)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
}

/// The JSON-RPC message of a response, whether sent as JSON or as one SSE event.
pub async fn json_rpc(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("response body");
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text:?}"))
}

/// `initialize` (2025-11-25) as a raw request; returns the session id.
pub async fn open_session(url: &str, token: &str) -> String {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "issue-15-test", "version": "1"}
        }
    });
    let response = post(url, token, &body).send().await.expect("initialize");
    assert_eq!(response.status(), 200);
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_string();
    drop(response);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = in_session(post(url, token, &initialized), &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    session
}

/// Adds the session headers of a 2025-11-25 request.
pub fn in_session(request: reqwest::RequestBuilder, session: &str) -> reqwest::RequestBuilder {
    request
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
}
