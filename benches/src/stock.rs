//! The HTTP benchmark's bare `rmcp` servers: the distributor example's
//! `inventory_get_stock` (its own body, called as a function: the same three SQLite
//! statements on the same database, the same result) as a plain `#[tool]`, served by
//! `rmcp`'s own streamable HTTP service with its default configuration. Without audit, it is what a team would write with
//! `rmcp` alone; with [`StockAudit::Writer`] each call's finished row is handed to
//! erp-tools' audit writer ([`Database::record_event`]) and the result waits until the
//! row is durable: the floor of "no answer before its audit row".

use std::sync::Arc;

use erp_tools_core::{AuditEntry, Database, Principal, ReadDb, ToolContext};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use rmcp::{ErrorData, Json, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::inventory::{self, StockView};

/// Arguments of `inventory_get_stock`, as the example declares them (the schema `rmcp`
/// publishes).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetStockArgs {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Only this warehouse of the caller's branch, e.g. SBY-WH1. Null for all of them.
    pub warehouse_code: Option<String>,
}

/// The example's `inventory_get_stock` body, called as a plain function (no admission,
/// no audit): the item, its units, its stock in the branch's warehouses, on `db`'s pool.
/// `arguments` are the call's, as the example's tool reads them.
pub async fn stock_body(
    db: &ReadDb,
    who: &Arc<Principal>,
    arguments: &Value,
) -> Result<StockView, String> {
    let args = inventory::GetStockArgs::deserialize(arguments).map_err(|e| e.to_string())?;
    let ctx = ToolContext::new(who.clone(), "http-bench", "call-1", "inventory_get_stock");
    inventory::get_stock(&ctx, db, args)
        .await
        .map_err(|e| e.to_string())
}

/// What a bare `rmcp` stock server does about audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StockAudit {
    /// Nothing: the user's alternative without the framework.
    None,
    /// Each call's finished row handed to erp-tools' group-commit audit writer, answered
    /// once durable.
    Writer,
}

/// A bare `rmcp` server with one tool, `inventory_get_stock`, for a fixed caller.
#[derive(Clone)]
pub struct StockServer {
    read: ReadDb,
    who: Arc<Principal>,
    audit: Option<Database>,
    tool_router: ToolRouter<Self>,
}

impl StockServer {
    /// Serves `db`'s stock to `who`'s branch, with audit as `audit` says.
    pub fn new(db: &Database, who: Principal, audit: StockAudit) -> Self {
        StockServer {
            read: db.read_db(),
            who: Arc::new(who),
            audit: (audit == StockAudit::Writer).then(|| db.clone()),
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router(router = tool_router)]
impl StockServer {
    /// Get stock on hand and the reorder point of one item in the caller's branch, per
    /// warehouse, with the units the item can be ordered in.
    #[tool(name = "inventory_get_stock")]
    async fn get_stock(
        &self,
        Parameters(args): Parameters<GetStockArgs>,
    ) -> Result<Json<StockView>, ErrorData> {
        let arguments = serde_json::json!({
            "item_code": args.item_code,
            "warehouse_code": args.warehouse_code,
        });
        let view = stock_body(&self.read, &self.who, &arguments)
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        if let Some(db) = &self.audit {
            let entry = AuditEntry::new(&self.who, "http-bench", "ok")
                .tool("inventory_get_stock", "call-1")
                .arguments(&arguments);
            db.record_event(entry)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        }
        Ok(Json(view))
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for StockServer {}

/// The axum router serving `server` at `/mcp` with `rmcp`'s default streamable HTTP
/// configuration (sessions for older protocol revisions, stateless 2026-07-28 requests).
pub fn stock_router(server: StockServer) -> axum::Router {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    axum::Router::new().route_service("/mcp", service)
}
