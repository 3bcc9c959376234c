//! The `reports` module: a stock valuation per warehouse of the caller's branch, run as an
//! MCP task, with its progress, its cancellation and its CSV attached to the result.

use erp_tools_core::prelude::*;
use erp_tools_core::{Backend, Database, MAX_ATTACHMENT_BYTES};
use sqlx::Row;

/// The namespace description: what the module does, and what it cannot do.
pub const DESCRIPTION: &str = "Reports over the caller's branch: stock valuation per \
    warehouse as a CSV document. Read only: cannot move, adjust or revalue stock.";

/// Rows valued between two progress reports (and two checks for a cancel).
const PAGE: i64 = 500;

/// The example's registry: the valuation runs as a task for a client that can take one,
/// in the request for any other (`task = "optional"`).
pub fn registry() -> Result<ToolRegistry, RegistryError> {
    ToolRegistry::builder()
        .module("reports", DESCRIPTION)
        .tools(tools![stock_valuation])
        .build()
}

/// Arguments of `reports_stock_valuation`.
#[tool_args]
pub struct ValuationArgs {
    /// Only this warehouse of the caller's branch, e.g. SBY-WH1. Null for all of them.
    warehouse_code: Option<String>,
}

/// The value of one warehouse's stock.
#[derive(Serialize, JsonSchema)]
pub struct WarehouseValue {
    /// Warehouse code.
    warehouse_code: String,
    /// Items in stock.
    lines: i64,
    /// Stock value at unit cost.
    value: Decimal,
}

/// Result of `reports_stock_valuation`.
#[tool_output]
pub struct Valuation {
    /// The caller's branch.
    branch_code: String,
    /// One entry per warehouse valued.
    warehouses: Vec<WarehouseValue>,
    /// The value of all of them.
    total_value: Decimal,
    /// The attached CSV document.
    csv_uri: String,
    /// What the CSV lists: `items` (one line per warehouse and item) or `warehouses`
    /// (one line per warehouse, when the item list is too large to attach).
    csv_detail: String,
}

impl ModelText for Valuation {
    fn model_text(&self) -> String {
        let lines: i64 = self.warehouses.iter().map(|w| w.lines).sum();
        format!(
            "Stock valuation of branch {}: {} warehouse(s), {lines} item lines, total value \
             {}. Attached as CSV ({}): {}.",
            self.branch_code,
            self.warehouses.len(),
            self.total_value,
            self.csv_uri,
            if self.csv_detail == "items" {
                "one line per warehouse and item"
            } else {
                "one line per warehouse; the item list is too large to attach, value one \
                 warehouse for it"
            }
        )
    }
}

/// Value the stock of the caller's branch per warehouse, at each item's unit cost, as a
/// CSV document (warehouse, item, quantity, unit cost, value) with per-warehouse totals.
/// Long on a large branch: it runs as a task and reports its progress.
#[erp_tool(
    module = "reports",
    tier = "read",
    scopes = ["reports:read"],
    task = "optional"
)]
pub async fn stock_valuation(
    ctx: &ToolContext,
    db: &ReadDb,
    args: ValuationArgs,
) -> Result<Valuation, ToolError> {
    let pool = db.pool();
    let only = args.warehouse_code.clone().unwrap_or_default();
    let warehouses = sqlx::query(
        "SELECT w.id, w.code, (SELECT COUNT(*) FROM rpt_stock s WHERE s.warehouse_id = w.id) \
         FROM rpt_warehouses w WHERE w.branch_id = $1 AND ($2 = '' OR w.code = $2) ORDER BY w.code",
    )
    .bind(ctx.branch_id())
    .bind(only.clone())
    .fetch_all(pool)
    .await
    .map_err(ToolError::internal)?;
    if warehouses.is_empty() && !only.is_empty() {
        return Err(ToolError::not_found("Warehouse", &only)
            .next_step("Leave warehouse_code null to value every warehouse of your branch."));
    }
    let total_rows: i64 = warehouses.iter().map(|w| w.get::<i64, _>(2)).sum();
    let mut csv = String::from("warehouse,item,qty,unit_cost,value\n");
    let (mut done, mut valued, mut total) = (0i64, Vec::new(), Decimal::ZERO);
    for warehouse in &warehouses {
        let (id, code): (i64, String) = (warehouse.get(0), warehouse.get(1));
        let (mut lines, mut value, mut after) = (0i64, Decimal::ZERO, 0i64);
        loop {
            if ctx.is_cancelled() {
                return Err(ToolError::rejected("the stock valuation was cancelled"));
            }
            ctx.progress(
                done as f64,
                Some(total_rows as f64),
                &format!("valuing {code}"),
            );
            let page = sqlx::query(
                "SELECT i.id, i.code, s.qty, i.unit_cost FROM rpt_stock s \
                 JOIN rpt_items i ON i.id = s.item_id \
                 WHERE s.warehouse_id = $1 AND i.id > $2 ORDER BY i.id LIMIT $3",
            )
            .bind(id)
            .bind(after)
            .bind(PAGE)
            .fetch_all(pool)
            .await
            .map_err(ToolError::internal)?;
            let Some(last) = page.last() else { break };
            after = last.get(0);
            for row in &page {
                let qty: Decimal = row.get::<String, _>(2).parse().unwrap_or_default();
                let cost: Decimal = row.get::<String, _>(3).parse().unwrap_or_default();
                let line = (qty * cost).round_dp(2);
                csv.push_str(&format!(
                    "{code},{},{qty},{cost},{line}\n",
                    row.get::<String, _>(1)
                ));
                value += line;
                lines += 1;
            }
            done += page.len() as i64;
        }
        total += value;
        valued.push(WarehouseValue {
            warehouse_code: code,
            lines,
            value,
        });
    }
    ctx.progress(done as f64, Some(total_rows as f64), "writing the CSV");
    let name = if only.is_empty() {
        ctx.branch_code()
    } else {
        &only
    };
    let (csv_uri, csv_detail, csv) = if csv.len() <= MAX_ATTACHMENT_BYTES {
        (
            format!("erp://reports/stock-valuation/{name}.csv"),
            "items",
            csv,
        )
    } else {
        let mut totals = String::from("warehouse,lines,value\n");
        for w in &valued {
            totals.push_str(&format!("{},{},{}\n", w.warehouse_code, w.lines, w.value));
        }
        let uri = format!("erp://reports/stock-valuation/{name}-warehouses.csv");
        (uri, "warehouses", totals)
    };
    ctx.attach(Attachment::text(csv_uri.clone(), "text/csv", csv))?;
    Ok(Valuation {
        branch_code: ctx.branch_code().to_string(),
        warehouses: valued,
        total_value: total,
        csv_uri,
        csv_detail: csv_detail.to_string(),
    })
}

/// Creates the report's tables and, when empty, seeds two branches with `items` items in
/// stock in each of their warehouses (three in branch 1, one in branch 2).
pub async fn prepare(db: &Database, items: i64) -> Result<(), sqlx::Error> {
    let id = match db.backend() {
        Backend::Sqlite => "INTEGER PRIMARY KEY",
        Backend::Postgres => "BIGINT PRIMARY KEY",
    };
    let pool = db.pool();
    for ddl in [
        format!(
            "CREATE TABLE IF NOT EXISTS rpt_warehouses (id {id}, branch_id BIGINT NOT NULL, \
             code TEXT NOT NULL UNIQUE)"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS rpt_items (id {id}, code TEXT NOT NULL UNIQUE, \
             unit_cost TEXT NOT NULL)"
        ),
        "CREATE TABLE IF NOT EXISTS rpt_stock (warehouse_id BIGINT NOT NULL, item_id BIGINT \
         NOT NULL, qty TEXT NOT NULL, PRIMARY KEY (warehouse_id, item_id))"
            .to_string(),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(ddl)).execute(pool).await?;
    }
    let seeded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM rpt_warehouses")
        .fetch_one(pool)
        .await?;
    if seeded > 0 {
        return Ok(());
    }
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO rpt_warehouses (id, branch_id, code) VALUES \
         (1, 1, 'SBY-WH1'), (2, 1, 'SBY-WH2'), (3, 1, 'SBY-WH3'), (4, 2, 'JKT-WH1')",
    )
    .execute(&mut *tx)
    .await?;
    for item in 1..=items {
        // Unit costs from 1 000.50 to 99 000.50, quantities from 1 to 500: deterministic.
        let cost = format!("{}.50", 1_000 + (item * 7_919) % 98_000);
        sqlx::query("INSERT INTO rpt_items (id, code, unit_cost) VALUES ($1, $2, $3)")
            .bind(item)
            .bind(format!("ITM-{item:06}"))
            .bind(cost)
            .execute(&mut *tx)
            .await?;
        for warehouse in 1..=4i64 {
            let qty = 1 + (item * 31 + warehouse * 17) % 500;
            sqlx::query("INSERT INTO rpt_stock (warehouse_id, item_id, qty) VALUES ($1, $2, $3)")
                .bind(warehouse)
                .bind(item)
                .bind(qty.to_string())
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await
}
