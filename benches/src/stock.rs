//! The HTTP benchmark's bare `rmcp` servers: the distributor example's
//! `inventory_get_stock` (the same three SQLite statements on the same database, the
//! same result) as a plain `#[tool]`, served by `rmcp`'s own streamable HTTP service
//! with its default configuration. Without audit, it is what a team would write with
//! `rmcp` alone; with [`StockAudit::Writer`] each call's finished row is handed to
//! erp-tools' audit writer ([`Database::record_event`]) and the result waits until the
//! row is durable: the floor of "no answer before its audit row".

use std::sync::Arc;

use erp_tools_core::sqlx::{self, Row};
use erp_tools_core::{AuditEntry, Database, Principal, ReadDb};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use rmcp::{ErrorData, Json, tool, tool_handler, tool_router};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `inventory_get_stock`, as the example declares them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetStockArgs {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Only this warehouse of the caller's branch, e.g. SBY-WH1. Null for all of them.
    pub warehouse_code: Option<String>,
}

/// A unit an item is stocked in.
#[derive(Serialize, JsonSchema)]
pub struct UnitView {
    /// Unit of measure.
    uom: String,
    /// How many base units one of this unit holds.
    factor: Decimal,
}

/// Stock of one item in one warehouse.
#[derive(Serialize, JsonSchema)]
pub struct WarehouseStock {
    /// Warehouse code.
    warehouse_code: String,
    /// On hand, in the item's base unit.
    qty: Decimal,
    /// Reorder point, in the base unit.
    reorder_point: Decimal,
    /// Whether stock is below the reorder point.
    below_reorder: bool,
}

/// Result of `inventory_get_stock`.
#[derive(Serialize, JsonSchema)]
pub struct StockView {
    /// Item code.
    item_code: String,
    /// Item name.
    item_name: String,
    /// Base unit all quantities are in.
    base_uom: String,
    /// Units the item can be ordered in, with conversions.
    units: Vec<UnitView>,
    /// Stock per warehouse of the caller's branch.
    warehouses: Vec<WarehouseStock>,
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap_or_default()
}

/// The example's `inventory_get_stock` body: the item, its units, its stock in the
/// branch's warehouses (the same statements, in the same order, on the same pool kind).
pub async fn stock_body(
    db: &ReadDb,
    branch_id: i64,
    args: &GetStockArgs,
) -> Result<StockView, String> {
    let pool = db.pool();
    let item = sqlx::query("SELECT id, name, base_uom FROM items WHERE code = $1")
        .bind(&args.item_code)
        .fetch_optional(pool)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("Item {} not found", args.item_code))?;
    let item_id: i64 = item.get(0);
    let units = sqlx::query("SELECT uom, factor FROM item_uoms WHERE item_id = $1 ORDER BY uom")
        .bind(item_id)
        .fetch_all(pool)
        .await
        .map_err(|e| e.to_string())?;
    let rows = sqlx::query(
        "SELECT w.code, s.qty, s.reorder_point FROM stock s JOIN warehouses w ON w.id = s.warehouse_id
         WHERE s.item_id = $1 AND w.branch_id = $2 AND ($3 = '' OR w.code = $3)
         ORDER BY w.code",
    )
    .bind(item_id)
    .bind(branch_id)
    .bind(args.warehouse_code.clone().unwrap_or_default())
    .fetch_all(pool)
    .await
    .map_err(|e| e.to_string())?;
    Ok(StockView {
        item_code: args.item_code.clone(),
        item_name: item.get(1),
        base_uom: item.get(2),
        units: units
            .iter()
            .map(|u| UnitView {
                uom: u.get(0),
                factor: dec(&u.get::<String, _>(1)),
            })
            .collect(),
        warehouses: rows
            .iter()
            .map(|r| {
                let qty = dec(&r.get::<String, _>(1));
                let reorder_point = dec(&r.get::<String, _>(2));
                WarehouseStock {
                    warehouse_code: r.get(0),
                    qty,
                    reorder_point,
                    below_reorder: qty < reorder_point,
                }
            })
            .collect(),
    })
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
        let view = stock_body(&self.read, self.who.branch_id(), &args)
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        if let Some(db) = &self.audit {
            let entry = AuditEntry::new(&self.who, "http-bench", "ok")
                .tool("inventory_get_stock", "call-1")
                .arguments(&serde_json::json!({
                    "item_code": args.item_code,
                    "warehouse_code": args.warehouse_code,
                }));
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
