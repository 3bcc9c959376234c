//! The `purchasing` module over Tryton: suppliers, a product with its supplier prices, and
//! draft purchases (`purchase.purchase` in state `draft`), each as the calling person's
//! own Tryton user inside their branch's company.

use erp_tools_core::prelude::*;
use erp_tools_core::remote::{RemoteDraft, RemoteError, RemoteWrite};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;

use erp_tools_core::page::RemoteKeyset;

use crate::tryton::{Caller, SYSTEM, Tryton, decimal, id_of, to_decimal};

/// The namespace description: what the module does, and what it cannot do.
pub const DESCRIPTION: &str = "Purchasing in Tryton for the caller's branch (one Tryton \
    company): list suppliers, search products, read a product with its supplier prices, create \
    DRAFT purchases. Prices come from Tryton's supplier prices. Cannot quote, confirm, process or cancel a \
    purchase: a person does that in Tryton.";

/// The field of `purchase.purchase` that carries a draft's marker.
pub const MARKER_FIELD: &str = "reference";

/// The Tryton client, set at start-up.
static TRYTON: std::sync::RwLock<Option<Arc<Tryton>>> = std::sync::RwLock::new(None);

/// Sets the Tryton client the tools use (at start-up; tests point it elsewhere).
pub fn install(client: Tryton) {
    *TRYTON.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(client));
}

fn installed() -> Option<Arc<Tryton>> {
    TRYTON.read().unwrap_or_else(|e| e.into_inner()).clone()
}

fn client() -> Result<Arc<Tryton>, ToolError> {
    installed()
        .ok_or_else(|| ToolError::internal("the Tryton client was not installed at start-up"))
}

/// The caller as Tryton knows them: their key, their branch's company.
fn caller(ctx: &ToolContext) -> Caller<'_> {
    Caller {
        user: ctx.user_id(),
        company: ctx.branch_id(),
    }
}

/// A read that Tryton did not answer with data, for the model: which kind of failure it
/// was (erp-tools' one mapping of remote errors).
fn read_error(e: RemoteError) -> ToolError {
    e.to_read_error(SYSTEM)
}

// ---------------------------------------------------------------------------------------
// purchasing_list_suppliers

/// One supplier of the branch and a product it has prices for.
#[derive(Serialize, JsonSchema)]
pub struct Supplier {
    /// Tryton party id, for the other purchasing tools.
    supplier_id: i64,
    /// Name.
    name: String,
    /// Tryton product ids these prices are for (the variants of one product).
    product_ids: Vec<i64>,
}

impl ModelText for Supplier {
    fn model_text(&self) -> String {
        let products: Vec<String> = self.product_ids.iter().map(i64::to_string).collect();
        format!(
            "supplier {} {}: prices for product {}",
            self.supplier_id,
            self.name,
            products.join(", ")
        )
    }
}

/// The supplier prices of a branch by supplier name: `(party.name, id)` of
/// `purchase.product_supplier`.
const SUPPLIERS: RemoteKeyset = RemoteKeyset::ascending(&["party.name", "id"]);

/// List the suppliers that have prices in the caller's branch, by name: one item per
/// supplier and product it supplies. Returns supplier ids for purchasing_get_product and
/// purchasing_draft_purchase.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn list_suppliers(
    ctx: &ToolContext,
    page: PageRequest,
) -> Result<Page<Supplier>, ToolError> {
    let tryton = client()?;
    let who = caller(ctx);
    let base = vec![json!(["company", "=", ctx.branch_id()])];
    let fields = ["party.name", "template.products"];
    let rows = tryton
        .search_page(
            &who,
            "purchase.product_supplier",
            SUPPLIERS,
            base,
            &fields,
            &page,
        )
        .await?;
    Ok(rows.map(|row| supplier(&row)))
}

/// A `purchase.product_supplier` row as a [`Supplier`].
fn supplier(row: &Value) -> Supplier {
    Supplier {
        supplier_id: id_of(&row["party"]).unwrap_or_default(),
        name: row["party"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        product_ids: row["template"]["products"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(id_of)
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// purchasing_search_products

/// Arguments of `purchasing_search_products`.
#[derive(Deserialize, ToolArgs)]
pub struct SearchProductsArgs {
    /// Part of the product's name, e.g. "beras". Null for every purchasable product.
    #[erp(len = 1..=100)]
    name_contains: Option<String>,
}

/// One purchasable product.
#[derive(Serialize, JsonSchema)]
pub struct ProductHit {
    /// Tryton product id, for purchasing_get_product and purchasing_draft_purchase.
    product_id: i64,
    /// Name.
    name: String,
    /// Tryton's product code, if it has one.
    code: Option<String>,
}

impl ModelText for ProductHit {
    fn model_text(&self) -> String {
        match &self.code {
            Some(code) => format!("product {} {} ({code})", self.product_id, self.name),
            None => format!("product {} {}", self.product_id, self.name),
        }
    }
}

// ANCHOR: search_products_keyset
/// Purchasable products by name: `(name, id)` of `product.product`.
const PRODUCTS: RemoteKeyset = RemoteKeyset::ascending(&["name", "id"]);

/// Search the purchasable products by name, in name order. Returns product ids for
/// purchasing_get_product (its supplier prices in the caller's branch) and
/// purchasing_draft_purchase.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn search_products(
    ctx: &ToolContext,
    args: SearchProductsArgs,
    page: PageRequest,
) -> Result<Page<ProductHit>, ToolError> {
    let tryton = client()?;
    let who = caller(ctx);
    let mut base = vec![json!(["purchasable", "=", true])];
    if let Some(text) = &args.name_contains {
        base.push(json!([
            "name",
            "ilike",
            format!("%{}%", like_escaped(text))
        ]));
    }
    let rows = tryton
        .search_page(
            &who,
            "product.product",
            PRODUCTS,
            base,
            &["name", "code"],
            &page,
        )
        .await?;
    Ok(rows.map(|row| ProductHit {
        product_id: row["id"].as_i64().unwrap_or_default(),
        name: row["name"].as_str().unwrap_or_default().to_string(),
        code: row["code"].as_str().map(str::to_string),
    }))
}
// ANCHOR_END: search_products_keyset

/// `text` for a LIKE pattern: its `%`, `_` and `\\` taken literally (Tryton escapes with
/// a backslash).
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------
// purchasing_get_product

/// Arguments of `purchasing_get_product`.
#[derive(Deserialize, ToolArgs)]
pub struct GetProductArgs {
    /// Tryton product id, from purchasing_search_products or purchasing_list_suppliers.
    #[erp(min = 1)]
    product_id: i64,
}

/// One price step of a supplier.
#[derive(Serialize, JsonSchema)]
pub struct PriceStep {
    /// Applies from this quantity on.
    from_quantity: Decimal,
    /// Unit price.
    unit_price: Decimal,
}

/// One supplier's prices for the product.
#[derive(Serialize, JsonSchema)]
pub struct SupplierPrices {
    /// Tryton party id.
    supplier_id: i64,
    /// Supplier name.
    supplier: String,
    /// Price steps, by quantity: the last step at or below the ordered quantity applies.
    prices: Vec<PriceStep>,
}

/// Result of `purchasing_get_product`.
#[derive(Serialize, JsonSchema)]
pub struct ProductView {
    /// Tryton product id.
    product_id: i64,
    /// Name.
    name: String,
    /// The suppliers with prices for it in the caller's branch.
    suppliers: Vec<SupplierPrices>,
}

/// Read a product with its supplier prices in the caller's branch.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn get_product(
    ctx: &ToolContext,
    args: GetProductArgs,
) -> Result<ProductView, ToolError> {
    let tryton = client()?;
    let who = caller(ctx);
    let products = tryton
        .search(
            &who,
            "product.product",
            &json!([["id", "=", args.product_id], ["purchasable", "=", true]]),
            &["rec_name"],
            Some(1),
        )
        .await
        .map_err(read_error)?;
    let Some(product) = products.first() else {
        return Err(
            ToolError::not_found("Product", &args.product_id.to_string())
                .next_step("Use purchasing_search_products to find product ids."),
        );
    };
    let rows = supplier_rows(&tryton, &who, args.product_id, None)
        .await
        .map_err(read_error)?;
    Ok(ProductView {
        product_id: args.product_id,
        name: product["rec_name"].as_str().unwrap_or_default().to_string(),
        suppliers: rows
            .iter()
            .map(|r| SupplierPrices {
                supplier_id: id_of(&r["party"]).unwrap_or_default(),
                supplier: r["party"]["rec_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                prices: steps(r)
                    .into_iter()
                    .map(|(from_quantity, unit_price)| PriceStep {
                        from_quantity,
                        unit_price,
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// The `purchase.product_supplier` rows of a product (of one supplier, if given) that the
/// caller sees in their company.
async fn supplier_rows(
    tryton: &Tryton,
    who: &Caller<'_>,
    product_id: i64,
    supplier: Option<i64>,
) -> Result<Vec<Value>, RemoteError> {
    let mut domain = vec![
        json!(["company", "=", who.company]),
        json!(["template.products", "=", product_id]),
    ];
    if let Some(s) = supplier {
        domain.push(json!(["party", "=", s]));
    }
    let rows = tryton
        .search(
            who,
            "purchase.product_supplier",
            &Value::Array(domain),
            &[
                "party.rec_name",
                "product",
                "unit",
                "currency",
                "prices.quantity",
                "prices.unit_price",
            ],
            Some(50),
        )
        .await?;
    // A row for another variant of the same template does not price this product.
    Ok(rows
        .into_iter()
        .filter(|r| id_of(&r["product"]).is_none_or(|p| p == product_id))
        .collect())
}

/// A supplier row's price steps, in Tryton's order (its `sequence`).
fn steps(row: &Value) -> Vec<(Decimal, Decimal)> {
    row["prices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let q = Decimal::try_from(p["quantity"].as_f64()?).ok()?;
            Some((q.normalize(), decimal(&p["unit_price"])?))
        })
        .collect()
}

/// Tryton's rule (`get_purchase_price`): of the steps in order, the last whose quantity
/// is at or below the ordered quantity.
fn price_for(steps: &[(Decimal, Decimal)], quantity: Decimal) -> Option<Decimal> {
    steps
        .iter()
        .filter(|(from, _)| *from <= quantity)
        .map(|(_, price)| *price)
        .next_back()
}

// ---------------------------------------------------------------------------------------
// purchasing_draft_purchase

/// Arguments of `purchasing_draft_purchase`.
#[derive(Deserialize, ToolArgs)]
pub struct DraftPurchaseArgs {
    /// Tryton party id of the supplier, from purchasing_list_suppliers.
    #[erp(min = 1)]
    supplier_id: i64,
    /// Your own id for this purchase within the run. Reuse it when retrying.
    client_ref: String,
    /// Why this purchase is needed. Shown to the person who confirms it.
    #[erp(len = 0..=500)]
    note: Option<String>,
    /// What to buy, at least one line.
    #[erp(len = 1..=30)]
    lines: Vec<DraftLineArgs>,
}

/// One line of a draft purchase.
#[derive(Deserialize, ToolArgs)]
pub struct DraftLineArgs {
    /// Tryton product id.
    #[erp(min = 1)]
    product_id: i64,
    /// Quantity in the supplier's purchase unit, more than 0.
    #[erp(positive, max = 100000)]
    quantity: Decimal,
}

/// A priced line of the draft.
#[derive(Clone, Serialize, JsonSchema)]
pub struct DraftLine {
    /// Tryton product id.
    product_id: i64,
    /// Quantity.
    quantity: Decimal,
    /// Unit price from the supplier's prices in Tryton.
    unit_price: Decimal,
    /// quantity × unit price.
    amount: Decimal,
}

/// The draft purchase in Tryton.
#[derive(Serialize, JsonSchema)]
pub struct DraftPurchase {
    /// Tryton's id of the purchase.
    purchase_id: i64,
    /// Tryton's number (none until a person quotes it).
    number: Option<String>,
    /// Its state in Tryton: draft.
    state: String,
    /// The branch (Tryton company).
    branch: String,
    /// Supplier party id.
    supplier_id: i64,
    /// The supplier's name in Tryton.
    supplier: String,
    /// The lines as priced.
    lines: Vec<DraftLine>,
    /// Total before taxes.
    untaxed_total: Decimal,
    /// What happens next.
    next_step: String,
}

/// What is sent to create the purchase, and how Tryton answered.
struct PurchaseWrite<'a> {
    tryton: &'a Tryton,
    who: Caller<'a>,
    body: Value,
    answer: std::sync::Mutex<Option<Value>>,
}

/// The fields read back from a created or found purchase.
const PURCHASE_FIELDS: &[&str] = &["number", "state", "company", "party"];

/// The document a purchase record names.
fn document(record: &Value) -> Option<DocumentRef> {
    let id = record["id"].as_i64()?;
    let number = record["number"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("#{id}"));
    Some(DocumentRef::new("purchase.purchase", id, number))
}

/// Finds the purchase that carries `marker`, as `who`.
pub async fn find_purchase(
    tryton: &Tryton,
    who: &Caller<'_>,
    marker: &str,
) -> Result<Option<(DocumentRef, Value)>, RemoteError> {
    let rows = tryton
        .search(
            who,
            "purchase.purchase",
            &json!([[MARKER_FIELD, "=", marker], ["company", "=", who.company]]),
            PURCHASE_FIELDS,
            Some(2),
        )
        .await?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| document(&r).map(|d| (d, r))))
}

impl RemoteWrite for PurchaseWrite<'_> {
    fn system(&self) -> &str {
        SYSTEM
    }

    fn find_by_marker<'a>(
        &'a self,
        marker: &'a str,
    ) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>> {
        Box::pin(async move {
            let found = find_purchase(self.tryton, &self.who, marker).await?;
            Ok(found.map(|(doc, record)| {
                *self.answer.lock().expect("not poisoned") = Some(record);
                doc
            }))
        })
    }

    fn create<'a>(&'a self, marker: &'a str) -> BoxFuture<'a, Result<DocumentRef, RemoteError>> {
        Box::pin(async move {
            let mut body = self.body.clone();
            body[MARKER_FIELD] = Value::from(marker);
            let record = self
                .tryton
                .create(&self.who, "purchase.purchase", &body, PURCHASE_FIELDS)
                .await?;
            let doc = document(&record).ok_or_else(|| RemoteError::NoResult {
                status: 200,
                detail: format!("the created record has no id: {record}"),
            })?;
            *self.answer.lock().expect("not poisoned") = Some(record);
            Ok(doc)
        })
    }
}

/// Create a DRAFT purchase in Tryton for the caller's branch, priced from the supplier's
/// prices in Tryton. A person quotes and confirms it in Tryton. Retrying with the same
/// client_ref never creates a second purchase.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    example = r#"{"supplier_id":3,"client_ref":"reorder-1","note":"Below reorder point","lines":[{"product_id":1,"quantity":"24"}]}"#
)]
pub async fn draft_purchase(
    ctx: &ToolContext,
    erp: &mut RemoteDraft,
    args: DraftPurchaseArgs,
) -> Result<DraftPurchase, ToolError> {
    let tryton = client()?;
    let who = caller(ctx);
    let mut priced = Vec::with_capacity(args.lines.len());
    let mut lines = Vec::with_capacity(args.lines.len());
    let mut currency = None;
    let mut supplier = String::new();
    for (i, line) in args.lines.iter().enumerate() {
        let n = i + 1;
        let rows = supplier_rows(&tryton, &who, line.product_id, Some(args.supplier_id))
            .await
            .map_err(|e| read_error(e).not_done("No draft was created."))?;
        let Some(row) = rows.first() else {
            return Err(ToolError::rejected(format!(
                "Line {n}: supplier {} has no price for product {} in branch {}.",
                args.supplier_id,
                line.product_id,
                ctx.branch_code()
            ))
            .next_step("Use purchasing_get_product to see who supplies it in this branch.")
            .not_done("No draft was created."));
        };
        let steps = steps(row);
        let Some(unit_price) = price_for(&steps, line.quantity) else {
            let from = steps.iter().map(|(q, _)| q.to_string()).collect::<Vec<_>>();
            return Err(ToolError::rejected(format!(
                "Line {n}: supplier {} has no price for quantity {} of product {}.",
                args.supplier_id, line.quantity, line.product_id
            ))
            .allowed(from)
            .next_step("Order at least the smallest quantity a price step starts from.")
            .not_done("No draft was created."));
        };
        if supplier.is_empty() {
            supplier = row["party"]["rec_name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        let line_currency = id_of(&row["currency"]);
        if currency.is_some() && currency != line_currency {
            return Err(ToolError::rejected(
                "The supplier's prices for these products are in different currencies.",
            )
            .next_step("Draft one purchase per currency.")
            .not_done("No draft was created."));
        }
        currency = line_currency;
        let quantity_f64: f64 = line.quantity.try_into().unwrap_or(0.0);
        lines.push(json!({
            "product": line.product_id,
            "product_supplier": row["id"],
            "quantity": quantity_f64,
            "unit": id_of(&row["unit"]),
            "unit_price": to_decimal(unit_price),
        }));
        priced.push(DraftLine {
            product_id: line.product_id,
            quantity: line.quantity,
            unit_price,
            amount: (line.quantity * unit_price).round_dp(2),
        });
    }
    let mut body = json!({
        "company": who.company,
        "party": args.supplier_id,
        "lines": [["create", lines]],
    });
    if let Some(c) = currency {
        body["currency"] = Value::from(c);
    }
    if let Some(note) = &args.note {
        body["description"] = Value::from(note.as_str());
    }
    let writer = PurchaseWrite {
        tryton: &tryton,
        who: who.clone(),
        body,
        answer: std::sync::Mutex::new(None),
    };
    let doc = erp.write(&writer).await?;
    let record = writer.answer.lock().expect("not poisoned").take();
    let record = match record {
        Some(r) => r,
        // Known from an earlier call: read it back for the answer.
        None => find_purchase(&tryton, &who, erp.marker())
            .await
            .ok()
            .flatten()
            .map(|(_, r)| r)
            .unwrap_or(Value::Null),
    };
    let untaxed_total = priced.iter().map(|l| l.amount).sum();
    // Tryton names records with numbers (`document` above).
    let purchase_id = doc.id.as_i64().ok_or_else(|| {
        ToolError::internal(format!("Tryton purchase id {} is not a number", doc.id))
    })?;
    Ok(DraftPurchase {
        purchase_id,
        number: record["number"].as_str().map(str::to_string),
        state: record["state"].as_str().unwrap_or("draft").to_string(),
        branch: ctx.branch_code().to_string(),
        supplier_id: args.supplier_id,
        supplier,
        lines: priced,
        untaxed_total,
        next_step: format!(
            "Draft purchase {} is in Tryton; a person quotes and confirms it there.",
            doc.number
        ),
    })
}

/// The lookup the start-up reconcile pass uses: the same search, as the key's person.
pub struct PurchaseLookup;

impl erp_tools_core::remote::RemoteLookup for PurchaseLookup {
    fn find_by_marker<'a>(
        &'a self,
        caller: &'a erp_tools_core::remote::RemoteCaller,
        marker: &'a str,
    ) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>> {
        Box::pin(async move {
            let tryton = installed().ok_or_else(|| RemoteError::Unreachable {
                detail: "the Tryton client was not installed".into(),
            })?;
            let who = Caller {
                user: &caller.user_id,
                company: caller.branch_id,
            };
            Ok(find_purchase(&tryton, &who, marker).await?.map(|(d, _)| d))
        })
    }
}
