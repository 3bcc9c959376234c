//! `purchasing_get_item_summary`: what a buyer asks before drafting an order for an
//! item, in one bounded answer (stock per warehouse, open orders, last prices paid,
//! vendor prices), instead of four list calls and thousands of tokens.

use erp_tools_core::prelude::*;
use sqlx::Row;

use crate::data::{dec, find_by_code, money, qty};

/// Open orders listed at most.
const MAX_OPEN: i64 = 10;
/// Prices paid listed at most.
const MAX_PAID: i64 = 5;
/// Vendor prices listed at most.
const MAX_QUOTED: i64 = 10;

/// Arguments of `purchasing_get_item_summary`.
#[derive(Deserialize, ToolArgs)]
pub struct ItemSummaryArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
}

/// Stock of the item in one warehouse of the caller's branch.
#[derive(Serialize, JsonSchema)]
pub struct StockLine {
    /// Warehouse code.
    warehouse_code: String,
    /// On hand, in the base unit.
    qty: Decimal,
    /// Reorder point, in the base unit.
    reorder_point: Decimal,
}

/// An open order line for the item.
#[derive(Serialize, JsonSchema)]
pub struct OpenLine {
    /// Purchase order number.
    number: String,
    /// Status: draft, submitted or approved.
    status: String,
    /// Vendor code.
    vendor_code: String,
    /// Quantity ordered.
    qty: Decimal,
    /// Unit of the quantity.
    uom: String,
    /// Date needed.
    needed_by: String,
}

/// A price: paid on an order line, or on a vendor's price list.
#[derive(Serialize, JsonSchema)]
pub struct PricePoint {
    /// Vendor code.
    vendor_code: String,
    /// Price per unit, IDR.
    price: Decimal,
    /// Unit the price is for.
    uom: String,
    /// The order it was paid on; null for a price-list price.
    number: Option<String>,
}

/// Result of `purchasing_get_item_summary`.
#[derive(Serialize, JsonSchema)]
pub struct ItemSummary {
    /// Item code.
    item_code: String,
    /// Item name.
    item_name: String,
    /// Base unit of the stock quantities.
    base_uom: String,
    /// Stock per warehouse of the caller's branch.
    stock: Vec<StockLine>,
    /// Open order lines (draft, submitted, approved) for the item in the caller's
    /// branch, newest first, at most 10.
    open_orders: Vec<OpenLine>,
    /// How many open order lines there are in all.
    open_orders_total: i64,
    /// Prices paid on the newest orders of the caller's branch, at most 5.
    last_prices: Vec<PricePoint>,
    /// Vendors' price-list prices, lowest first, at most 10.
    vendor_prices: Vec<PricePoint>,
}

/// Get what to know before ordering an item, in one call: its stock per warehouse of the
/// caller's branch, its open purchase order lines, the last prices paid and the vendors'
/// prices. Bounded: at most 10 open lines, 5 prices paid and 10 vendor prices.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read", "inventory:read"])]
pub async fn get_item_summary(
    ctx: &ToolContext,
    db: &ReadDb,
    args: ItemSummaryArgs,
) -> Result<ItemSummary, ToolError> {
    let pool = db.pool();
    let item = find_by_code(
        pool,
        "SELECT id, name, base_uom FROM items WHERE code = $1",
        &args.item_code,
        "Item",
        "Use inventory_list_below_reorder or purchasing_get_vendor_summary to see item codes.",
    )
    .await?;
    let item_id: i64 = item.get(0);
    let branch = ctx.branch_id();
    let fail = ToolError::internal;
    let stock = sqlx::query(
        "SELECT w.code, s.qty, s.reorder_point FROM stock s JOIN warehouses w ON w.id = s.warehouse_id
         WHERE s.item_id = $1 AND w.branch_id = $2 ORDER BY w.code",
    )
    .bind(item_id)
    .bind(branch)
    .fetch_all(pool)
    .await
    .map_err(fail)?;
    const OPEN: &str = "FROM purchase_order_lines l JOIN purchase_orders po ON po.id = l.po_id
         JOIN vendors v ON v.id = po.vendor_id
         WHERE l.item_id = $1 AND po.branch_id = $2 AND po.status IN ('draft', 'submitted', 'approved')";
    let open = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT po.number, po.status, v.code, l.qty, l.uom, po.needed_by {OPEN}
         ORDER BY po.number DESC, l.line_no LIMIT {MAX_OPEN}"
    )))
    .bind(item_id)
    .bind(branch)
    .fetch_all(pool)
    .await
    .map_err(fail)?;
    let open_total: i64 =
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) {OPEN}")))
            .bind(item_id)
            .bind(branch)
            .fetch_one(pool)
            .await
            .map_err(fail)?;
    let paid = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT v.code, l.unit_price, l.uom, po.number FROM purchase_order_lines l
         JOIN purchase_orders po ON po.id = l.po_id JOIN vendors v ON v.id = po.vendor_id
         WHERE l.item_id = $1 AND po.branch_id = $2 AND po.status <> 'cancelled'
         ORDER BY po.number DESC, l.line_no LIMIT {MAX_PAID}"
    )))
    .bind(item_id)
    .bind(branch)
    .fetch_all(pool)
    .await
    .map_err(fail)?;
    let quoted = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT v.code, p.price, p.uom FROM vendor_prices p JOIN vendors v ON v.id = p.vendor_id
         WHERE p.item_id = $1 AND v.active = 1 ORDER BY v.code, p.uom LIMIT {MAX_QUOTED}"
    )))
    .bind(item_id)
    .fetch_all(pool)
    .await
    .map_err(fail)?;
    let price = |r: &sqlx::any::AnyRow, number: Option<String>| PricePoint {
        vendor_code: r.get(0),
        price: dec(&r.get::<String, _>(1)),
        uom: r.get(2),
        number,
    };
    let mut vendor_prices: Vec<PricePoint> = quoted.iter().map(|r| price(r, None)).collect();
    vendor_prices.sort_by_key(|p| p.price);
    Ok(ItemSummary {
        item_code: args.item_code,
        item_name: item.get(1),
        base_uom: item.get(2),
        stock: stock
            .iter()
            .map(|r| StockLine {
                warehouse_code: r.get(0),
                qty: dec(&r.get::<String, _>(1)),
                reorder_point: dec(&r.get::<String, _>(2)),
            })
            .collect(),
        open_orders: open
            .iter()
            .map(|r| OpenLine {
                number: r.get(0),
                status: r.get(1),
                vendor_code: r.get(2),
                qty: dec(&r.get::<String, _>(3)),
                uom: r.get(4),
                needed_by: r.get(5),
            })
            .collect(),
        open_orders_total: open_total,
        last_prices: paid.iter().map(|r| price(r, Some(r.get(3)))).collect(),
        vendor_prices,
    })
}

impl ModelText for ItemSummary {
    fn model_text(&self) -> String {
        let stock = self
            .stock
            .iter()
            .map(|s| {
                let low = if s.qty < s.reorder_point {
                    ", below reorder point"
                } else {
                    ""
                };
                format!(
                    "{} {} {} (reorder at {}{low})",
                    s.warehouse_code,
                    qty(s.qty),
                    self.base_uom,
                    qty(s.reorder_point)
                )
            })
            .collect::<Vec<_>>();
        let open = self
            .open_orders
            .iter()
            .map(|o| {
                format!(
                    "{} ({}, {}) {} {} needed by {}",
                    o.number,
                    o.status,
                    o.vendor_code,
                    qty(o.qty),
                    o.uom,
                    o.needed_by
                )
            })
            .collect::<Vec<_>>();
        let prices = |list: &[PricePoint]| {
            list.iter()
                .map(|p| match &p.number {
                    Some(n) => format!("{} {} IDR/{} on {n}", p.vendor_code, money(p.price), p.uom),
                    None => format!("{} {} IDR/{}", p.vendor_code, money(p.price), p.uom),
                })
                .collect::<Vec<_>>()
        };
        let or_none = |v: Vec<String>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join("; ")
            }
        };
        let shown = self.open_orders.len() as i64;
        let more = if self.open_orders_total > shown {
            format!(
                " ({} more; purchasing_search_pos lists every order)",
                self.open_orders_total - shown
            )
        } else {
            String::new()
        };
        format!(
            "{} {}.\nStock in your branch: {}.\nOpen order lines: {}{more}.\nLast prices paid: {}.\nVendor prices: {}.",
            self.item_code,
            self.item_name,
            or_none(stock),
            or_none(open),
            or_none(prices(&self.last_prices)),
            or_none(prices(&self.vendor_prices)),
        )
    }
}
