//! The `inventory` module: stock on hand and reorder points per warehouse. Read only.

use erp_tools_core::prelude::*;
use sqlx::Row;

/// The namespace description: what the module does, and what it cannot do.
pub const DESCRIPTION: &str = "Inventory for the caller's branch: stock on hand, allowed units \
    and reorder points per warehouse. Read only: cannot move, adjust or reserve stock.";

use crate::data::{dec, find_by_code};

#[path = "inventory_texts.rs"]
mod texts;

/// Arguments of `inventory_get_stock`.
#[derive(Deserialize, ToolArgs)]
pub struct GetStockArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
    /// Only this warehouse of the caller's branch, e.g. SBY-WH1. Null for all of them.
    warehouse_code: Option<String>,
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

/// Get stock on hand and the reorder point of one item in the caller's branch, per
/// warehouse, with the units the item can be ordered in.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn get_stock(
    ctx: &ToolContext,
    db: &ReadDb,
    args: GetStockArgs,
) -> Result<StockView, ToolError> {
    let pool = db.pool();
    let item = find_by_code(
        pool,
        "SELECT id, name, base_uom FROM items WHERE code = $1",
        &args.item_code,
        "Item",
        "Use inventory_list_below_reorder to see item codes.",
    )
    .await?;
    let item_id: i64 = item.get(0);
    let units = sqlx::query("SELECT uom, factor FROM item_uoms WHERE item_id = $1 ORDER BY uom")
        .bind(item_id)
        .fetch_all(pool)
        .await
        .map_err(ToolError::internal)?;
    let rows = sqlx::query(
        "SELECT w.code, s.qty, s.reorder_point FROM stock s JOIN warehouses w ON w.id = s.warehouse_id
         WHERE s.item_id = $1 AND w.branch_id = $2 AND ($3 = '' OR w.code = $3)
         ORDER BY w.code",
    )
    .bind(item_id)
    .bind(ctx.branch_id())
    .bind(args.warehouse_code.clone().unwrap_or_default())
    .fetch_all(pool)
    .await
    .map_err(ToolError::internal)?;
    if let Some(code) = &args.warehouse_code
        && rows.is_empty()
    {
        return Err(ToolError::not_found("Warehouse", code)
            .next_step("Leave warehouse_code null to see every warehouse of your branch."));
    }
    Ok(StockView {
        item_code: args.item_code,
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

/// One item below its reorder point.
#[derive(Serialize, JsonSchema)]
pub struct ReorderRow {
    /// Item code.
    item_code: String,
    /// Item name.
    item_name: String,
    /// Warehouse code.
    warehouse_code: String,
    /// On hand, in the base unit.
    qty: Decimal,
    /// Reorder point, in the base unit.
    reorder_point: Decimal,
    /// How much is missing to reach the reorder point, in the base unit.
    shortfall: Decimal,
    /// Base unit.
    base_uom: String,
}

// ANCHOR: list_below_reorder
/// List the items whose stock is below their reorder point in the caller's branch, per
/// warehouse, with the shortfall, by warehouse and item code.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn list_below_reorder(
    ctx: &ToolContext,
    db: &ReadDb,
    page: PageRequest,
) -> Result<Page<ReorderRow>, ToolError> {
    // Unique within a branch: a warehouse holds an item once.
    const KEYSET: Keyset = Keyset::ascending(&["w.code", "i.code"]);
    let sql = format!(
        "SELECT i.code, i.name, w.code, s.qty, s.reorder_point, i.base_uom
         FROM stock s JOIN warehouses w ON w.id = s.warehouse_id JOIN items i ON i.id = s.item_id
         WHERE w.branch_id = $1 AND CAST(s.qty AS NUMERIC) < CAST(s.reorder_point AS NUMERIC)
           {}
         ORDER BY {} LIMIT {}",
        KEYSET.and_after(&page, 2),
        KEYSET.order_by(),
        page.fetch_limit()
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(ctx.branch_id());
    if let Some((warehouse, item)) = page.after::<(String, String)>()? {
        query = query.bind(warehouse).bind(item);
    }
    let rows = query
        .fetch_all(db.pool())
        .await
        .map_err(ToolError::internal)?;
    let items = rows
        .iter()
        .map(|r| {
            let qty = dec(&r.get::<String, _>(3));
            let reorder_point = dec(&r.get::<String, _>(4));
            ReorderRow {
                item_code: r.get(0),
                item_name: r.get(1),
                warehouse_code: r.get(2),
                qty,
                reorder_point,
                shortfall: reorder_point - qty,
                base_uom: r.get(5),
            }
        })
        .collect();
    Ok(page.page(items, |r: &ReorderRow| {
        (r.warehouse_code.clone(), r.item_code.clone())
    }))
}
// ANCHOR_END: list_below_reorder
