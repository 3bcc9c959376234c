//! A data set at ERP scale for the example (`distributor seed`): many vendors, items
//! with stock in every warehouse, and purchase orders with many lines, inserted in large
//! multi-row statements on either backend.

use erp_tools_core::Database;

/// How many rows `seed` adds.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Vendors added (codes `V-S000001`, ...).
    pub vendors: usize,
    /// Items added (codes `BRG-S000001`, ...), each with stock in every warehouse.
    pub items: usize,
    /// Purchase orders added, spread over both branches.
    pub orders: usize,
    /// Lines added, spread over the orders.
    pub order_lines: usize,
}

/// Rows per INSERT statement.
const BATCH: usize = 500;

/// Adds `scale`'s rows to an example database that [`crate::app::prepare`] set up; codes
/// continue after those already seeded this way, so it may run more than once.
pub async fn seed(db: &Database, scale: Scale) -> Result<(), sqlx::Error> {
    let pool = db.pool();
    let mut tx = pool.begin().await?;
    let count = |table: &'static str| {
        sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM {table} WHERE code LIKE '%-S%'"
        )))
    };
    let vendors0 = count("vendors").fetch_one(&mut *tx).await? as usize;
    let items0 = count("items").fetch_one(&mut *tx).await? as usize;
    let orders0: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM purchase_orders WHERE number LIKE 'PO-S%'")
            .fetch_one(&mut *tx)
            .await?;
    let orders0 = orders0 as usize;
    rows(
        &mut tx,
        "vendors (code, name, city, payment_terms, note, active)",
        scale.vendors,
        |i| {
            let n = vendors0 + i + 1;
            format!("('V-S{n:06}', 'Vendor {n}', 'Surabaya', 'NET 30', '', 1)")
        },
    )
    .await?;
    rows(&mut tx, "items (code, name, base_uom)", scale.items, |i| {
        let n = items0 + i + 1;
        format!("('BRG-S{n:06}', 'Item {n}', 'PCS')")
    })
    .await?;
    let warehouses: Vec<i64> = sqlx::query_scalar("SELECT id FROM warehouses ORDER BY id")
        .fetch_all(&mut *tx)
        .await?;
    let first_item: i64 = sqlx::query_scalar(
        "SELECT COALESCE(MIN(id), 0) FROM items WHERE code LIKE 'BRG-S%' AND code > $1",
    )
    .bind(format!("BRG-S{items0:06}"))
    .fetch_one(&mut *tx)
    .await?;
    let stock_rows = scale.items * warehouses.len();
    rows(
        &mut tx,
        "stock (warehouse_id, item_id, qty, reorder_point)",
        stock_rows,
        |i| {
            let item = first_item + (i / warehouses.len()) as i64;
            let wh = warehouses[i % warehouses.len()];
            format!("({wh}, {item}, '{}', '100')", (i * 37) % 500)
        },
    )
    .await?;
    let vendor_ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM vendors ORDER BY id LIMIT 100")
        .fetch_all(&mut *tx)
        .await?;
    rows(
        &mut tx,
        "purchase_orders (branch_id, number, vendor_id, status, needed_by, note, total, created_at)",
        scale.orders,
        |i| {
            let n = orders0 + i + 1;
            let vendor = vendor_ids[i % vendor_ids.len()];
            let status = ["draft", "submitted", "approved", "posted"][i % 4];
            format!(
                "({}, 'PO-S{n:07}', {vendor}, '{status}', '2026-12-{:02}', NULL, '100000', '2026-11-01T08:00:00Z')",
                1 + i % 2,
                1 + i % 28
            )
        },
    )
    .await?;
    if scale.order_lines > 0 && scale.orders > 0 {
        let first_po: i64 = sqlx::query_scalar(
            "SELECT MIN(id) FROM purchase_orders WHERE number LIKE 'PO-S%' AND number > $1",
        )
        .bind(format!("PO-S{orders0:07}"))
        .fetch_one(&mut *tx)
        .await?;
        let items: Vec<i64> = sqlx::query_scalar("SELECT id FROM items ORDER BY id LIMIT 1000")
            .fetch_all(&mut *tx)
            .await?;
        rows(
            &mut tx,
            "purchase_order_lines (po_id, line_no, item_id, qty, uom, unit_price, line_total)",
            scale.order_lines,
            |i| {
                let po = first_po + (i % scale.orders) as i64;
                let line = 1 + i / scale.orders;
                let item = items[(i * 7) % items.len()];
                let price = 1000 + (i % 90) * 100;
                format!(
                    "({po}, {line}, {item}, '10', 'PCS', '{price}', '{}')",
                    price * 10
                )
            },
        )
        .await?;
    }
    tx.commit().await
}

/// Inserts `n` rows into `table (columns)`, `row(i)` writing the `i`th row's values.
async fn rows(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    table: &str,
    n: usize,
    row: impl Fn(usize) -> String,
) -> Result<(), sqlx::Error> {
    let mut start = 0;
    while start < n {
        let end = (start + BATCH).min(n);
        let values: Vec<String> = (start..end).map(&row).collect();
        let sql = format!("INSERT INTO {table} VALUES {}", values.join(", "));
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut **tx)
            .await?;
        start = end;
    }
    Ok(())
}
