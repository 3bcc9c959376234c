//! The tools measured: two read tools (one reading SQLite, one answering from memory) and
//! one draft tool (an order with lines). Each handler body is a plain function, so the
//! benchmarks can call exactly the same body directly, through erp-tools and through a
//! plain `rmcp` server.

use erp_tools_core::prelude::*;
use erp_tools_core::sqlx::{self, Row};

/// Namespace description of `catalog`.
pub const CATALOG_DESCRIPTION: &str =
    "Item catalog of the caller's branch: look up items. Read only: cannot change items or stock.";
/// Namespace description of `orders`.
pub const ORDERS_DESCRIPTION: &str = "Purchase orders: create order DRAFTS for a person to \
     review. Cannot approve, send, post or cancel orders.";

/// Arguments of `catalog_get_item` and `catalog_describe_item`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, ToolArgs)]
pub struct ItemArgs {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
}

/// One item as the read tools return it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemView {
    /// Item code.
    pub item_code: String,
    /// Item name.
    pub name: String,
    /// Base unit of measure.
    pub base_uom: String,
    /// Stock on hand in the caller's branch, in the base unit.
    pub on_hand: Decimal,
}

/// The failure of a read body: the item is not there, or the database failed.
#[derive(Debug)]
pub enum ReadFailure {
    /// No item with that code in the branch.
    NotFound(String),
    /// The database failed.
    Db(sqlx::Error),
}

impl From<ReadFailure> for ToolError {
    fn from(f: ReadFailure) -> Self {
        match f {
            ReadFailure::NotFound(code) => ToolError::not_found("Item", &code)
                .next_step("Use an item code from the catalog, e.g. BRG-0042."),
            ReadFailure::Db(e) => ToolError::internal(e),
        }
    }
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::NotFound(code) => write!(f, "item {code} not found"),
            ReadFailure::Db(e) => write!(f, "database error: {e}"),
        }
    }
}

/// The SQLite/PostgreSQL read body: one indexed `SELECT`.
pub async fn item_body(
    pool: &sqlx::AnyPool,
    branch_id: i64,
    item_code: &str,
) -> Result<ItemView, ReadFailure> {
    let row = sqlx::query(
        "SELECT code, name, base_uom, on_hand FROM bench_items WHERE branch_id = $1 AND code = $2",
    )
    .bind(branch_id)
    .bind(item_code.to_string())
    .fetch_optional(pool)
    .await
    .map_err(ReadFailure::Db)?
    .ok_or_else(|| ReadFailure::NotFound(item_code.to_string()))?;
    Ok(ItemView {
        item_code: row.get(0),
        name: row.get(1),
        base_uom: row.get(2),
        on_hand: row.get::<String, _>(3).parse().unwrap_or_default(),
    })
}

/// Items of the in-memory catalog: (code, name, base unit, on hand).
const MEMORY_ITEMS: &[(&str, &str, &str, i64)] = &[
    ("BRG-0042", "Plastic container 500 ml", "PCS", 180),
    ("BRG-0107", "Cooking oil 1 L", "LTR", 340),
    ("BRG-0230", "Granulated sugar", "KG", 95),
    ("BRG-0315", "Carton box 40x30", "PCS", 1200),
];

/// The in-memory read body: a lookup in a static table (no I/O), so what is measured
/// around it is the framework alone.
pub async fn memory_body(item_code: &str) -> Result<ItemView, ReadFailure> {
    MEMORY_ITEMS
        .iter()
        .find(|(code, ..)| *code == item_code)
        .map(|(code, name, uom, qty)| ItemView {
            item_code: (*code).to_string(),
            name: (*name).to_string(),
            base_uom: (*uom).to_string(),
            on_hand: Decimal::from(*qty),
        })
        .ok_or_else(|| ReadFailure::NotFound(item_code.to_string()))
}

/// Get one item of the caller's branch by code, with its stock on hand.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"])]
pub async fn get_item(
    ctx: &ToolContext,
    db: &ReadDb,
    args: ItemArgs,
) -> Result<ItemView, ToolError> {
    Ok(item_body(db.pool(), ctx.branch_id(), &args.item_code).await?)
}

/// Describe one item by code from the built-in catalog, with its stock on hand.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"])]
pub async fn describe_item(_ctx: &ToolContext, args: ItemArgs) -> Result<ItemView, ToolError> {
    Ok(memory_body(&args.item_code).await?)
}

/// Unit of measure.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    /// Pieces.
    PCS,
    /// Boxes.
    BOX,
    /// Kilograms.
    KG,
}

impl Uom {
    /// The unit's code.
    pub fn as_str(self) -> &'static str {
        match self {
            Uom::PCS => "PCS",
            Uom::BOX => "BOX",
            Uom::KG => "KG",
        }
    }
}

/// One line of an order draft.
#[derive(Clone, Debug, Deserialize, Serialize, ToolArgs)]
pub struct OrderLine {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Quantity in the given unit, more than 0.
    pub qty: Decimal,
    /// Unit of measure.
    pub uom: Uom,
}

/// Arguments of `orders_create_order_draft`.
#[derive(Clone, Debug, Deserialize, Serialize, ToolArgs)]
pub struct OrderDraftArgs {
    /// Vendor code, e.g. V-00231
    pub vendor_code: String,
    /// Your own id for this order within the run. Reuse it when retrying.
    pub client_ref: String,
    /// Why this order is needed. Shown to the reviewer.
    pub note: Option<String>,
    /// What to order, at least one line.
    pub lines: Vec<OrderLine>,
}

/// The draft that was created.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct OrderDraft {
    /// Business number of the draft.
    pub number: String,
    /// Number of lines.
    pub line_count: usize,
    /// Sum of the line quantities.
    pub total_qty: Decimal,
}

/// The draft body: inserts the order (status `draft`, with provenance) and its lines on
/// `conn`, and returns the order's id and the result. Used by the tool and by the
/// hand-written floor transaction alike.
pub async fn insert_order(
    conn: &mut sqlx::AnyConnection,
    branch_id: i64,
    agent_run_id: &str,
    user_id: &str,
    args: &OrderDraftArgs,
) -> Result<(i64, OrderDraft), sqlx::Error> {
    let total: Decimal = args.lines.iter().map(|l| l.qty).sum();
    let number = format!("BO-{}-{}", agent_run_id, args.client_ref);
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO bench_orders (number, branch_id, vendor_code, note, status, total_qty, \
         drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7) RETURNING id",
    )
    .bind(number.clone())
    .bind(branch_id)
    .bind(args.vendor_code.clone())
    .bind(args.note.clone())
    .bind(total.normalize().to_string())
    .bind(agent_run_id.to_string())
    .bind(user_id.to_string())
    .fetch_one(&mut *conn)
    .await?;
    for (i, line) in args.lines.iter().enumerate() {
        sqlx::query(
            "INSERT INTO bench_order_lines (order_id, line_no, item_code, qty, uom) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(i as i64 + 1)
        .bind(line.item_code.clone())
        .bind(line.qty.normalize().to_string())
        .bind(line.uom.as_str())
        .execute(&mut *conn)
        .await?;
    }
    Ok((
        id,
        OrderDraft {
            number,
            line_count: args.lines.len(),
            total_qty: total.normalize(),
        },
    ))
}

/// Create a DRAFT purchase order for the caller's branch. A person reviews and submits it
/// in the ERP. Returns the draft number.
#[erp_tool(module = "orders", tier = "draft", scopes = ["orders:draft"])]
pub async fn create_order_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: OrderDraftArgs,
) -> Result<OrderDraft, ToolError> {
    let p = tx.provenance();
    let (run, user) = (
        p.drafted_by_agent_run.to_string(),
        p.drafted_on_behalf_of.to_string(),
    );
    let (id, draft) = insert_order(tx.conn(), ctx.branch_id(), &run, &user, &args).await?;
    tx.record_document(DocumentRef {
        doc_type: "purchase_order".into(),
        id: id.into(),
        number: draft.number.clone(),
    });
    Ok(draft)
}

/// Arguments of one order draft call with `lines` lines, as a model would send them.
pub fn order_arguments(client_ref: &str, lines: usize) -> serde_json::Value {
    let lines: Vec<serde_json::Value> = (0..lines)
        .map(|i| {
            serde_json::json!({
                "item_code": format!("BRG-{:04}", 42 + i),
                "qty": format!("{}", 10 + i),
                "uom": "BOX",
            })
        })
        .collect();
    serde_json::json!({
        "vendor_code": "V-00231",
        "client_ref": client_ref,
        "note": "Below reorder point in SBY-WH1",
        "lines": lines,
    })
}
