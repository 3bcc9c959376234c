//! The positive path of `#[derive(ToolArgs)]` and `#[erp_tool]`: the purchasing shapes of
//! the distributor example declare, register and render as expected.

use erp_tools_core::prelude::*;
use erp_tools_core::{ErpTool, Target, Tier, ToolRegistry};
use erp_tools_tests::app::namespaces;
use serde_json::json;

#[derive(Debug, Deserialize, ToolArgs)]
struct SearchVendorsArgs {
    /// Part of the vendor's name or code, e.g. "sinar"
    query: Option<String>,
    /// Only vendors that supply this item code
    item_code: Option<String>,
    /// Most results to return
    limit: Option<u16>,
}

#[derive(Serialize, JsonSchema)]
struct VendorList {
    vendors: Vec<VendorRow>,
}

#[derive(Serialize, JsonSchema)]
struct VendorRow {
    code: String,
    name: String,
}

/// Search the vendors the caller's branch buys from.
///
/// Returns at most 20 vendors.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
async fn search_vendors(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: SearchVendorsArgs,
) -> Result<VendorList, ToolError> {
    let name = format!("{:?} {:?}", args.item_code, args.limit);
    Ok(VendorList {
        vendors: vec![VendorRow {
            code: args.query.unwrap_or_default(),
            name,
        }],
    })
}

#[derive(Debug, Deserialize, ToolArgs)]
struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0042
    number: String,
}

#[derive(Serialize, JsonSchema)]
struct PoView {
    number: String,
    status: String,
    total: Decimal,
}

/// Get one purchase order of the caller's branch by its number.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"], title = "Get purchase order")]
async fn get_po(_ctx: &ToolContext, _db: &ReadDb, args: GetPoArgs) -> Result<PoView, ToolError> {
    Err(ToolError::not_found("Purchase order", &args.number))
}

/// A unit of measure the price list knows.
#[derive(Debug, Deserialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
enum Uom {
    PCS,
    BOX,
    KG,
    LTR,
}

#[derive(Debug, Deserialize, ToolArgs)]
struct PoLine {
    /// Item code, e.g. BRG-0042
    item_code: String,
    /// Quantity in the given unit
    qty: Decimal,
    /// Unit of measure
    uom: Uom,
}

#[derive(Debug, Deserialize, ToolArgs)]
struct PoDraftArgs {
    /// Vendor code from purchasing_search_vendors, e.g. V-00231
    vendor_code: String,
    /// Date the goods are needed by
    needed_by: NaiveDate,
    /// Your own id for this order within the run. Reuse it when retrying.
    client_ref: String,
    /// Why this order is needed. Shown to the reviewer.
    note: Option<String>,
    /// The order lines
    lines: Vec<PoLine>,
}

#[derive(Serialize, JsonSchema)]
struct PoDraft {
    number: String,
    total: Decimal,
}

/// Create a DRAFT purchase order for the caller's branch. A person reviews and submits it
/// in the ERP.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    limit = "lines[].qty <= 1000",
    example = r#"{"vendor_code": "V-00231", "needed_by": "2026-12-01", "client_ref": "r1", "note": null,
                  "lines": [{"item_code": "BRG-0042", "qty": "24", "uom": "BOX"}]}"#
)]
async fn create_po_draft(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoDraft, ToolError> {
    let total = args.lines.iter().map(|l| l.qty).sum();
    let first = args
        .lines
        .first()
        .map(|l| format!("{} {:?}", l.item_code, l.uom));
    let number = format!(
        "PO-{}-{}-{}-{:?}-{:?}",
        args.vendor_code, args.needed_by, args.client_ref, args.note, first
    );
    Ok(PoDraft { number, total })
}

#[derive(Serialize, JsonSchema)]
pub struct ReorderList {
    items: Vec<String>,
}

/// List the items of the caller's branch that are below their reorder point.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn items_below_reorder_point(
    _ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<ReorderList, ToolError> {
    Ok(ReorderList { items: Vec::new() })
}

/// Say which branch the caller works in.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], name = "inventory_whoami")]
pub(crate) async fn my_branch(ctx: &ToolContext) -> Result<String, ToolError> {
    Ok(ctx.branch_code().to_string())
}

/// The tools above, under the fixture application's namespaces.
fn registry() -> ToolRegistry {
    namespaces()
        .tool::<search_vendors>()
        .tool::<get_po>()
        .tool::<create_po_draft>()
        .tool::<items_below_reorder_point>()
        .tool::<my_branch>()
        .build()
        .expect("registry builds")
}

#[test]
fn definitions_carry_the_attribute() {
    let def = create_po_draft::definition();
    assert_eq!(def.name(), "purchasing_create_po_draft");
    assert_eq!(def.fn_name(), "create_po_draft");
    assert_eq!(def.module(), "purchasing");
    assert_eq!(def.tier(), Tier::Draft);
    assert_eq!(def.scopes(), ["purchasing:draft"]);
    assert_eq!(def.title(), "Create po draft");
    assert_eq!(
        def.description(),
        "Create a DRAFT purchase order for the caller's branch. A person reviews and submits it in the ERP."
    );
    assert_eq!(def.limits().len(), 1);
    assert_eq!(
        (def.limits()[0].path, def.limits()[0].max),
        ("lines[].qty", "1000")
    );
    assert!(
        def.example()
            .is_some_and(|e| e.starts_with("{\"vendor_code\""))
    );
    assert!(!def.destructive());
    assert_eq!(def.args_type(), "PoDraftArgs");
    assert!(matches!(def.tier(), Tier::Draft));

    let def = search_vendors::definition();
    assert_eq!(def.name(), "purchasing_search_vendors");
    assert_eq!(def.tier(), Tier::Read);
    assert_eq!(
        def.description(),
        "Search the vendors the caller's branch buys from.\n\nReturns at most 20 vendors."
    );
    assert!(matches!(def.tier(), Tier::Read));
    assert_eq!(get_po::definition().title(), "Get purchase order");

    let def = items_below_reorder_point::definition();
    assert_eq!(def.args_type(), "NoArgs");
    assert_eq!(my_branch::definition().name(), "inventory_whoami");
}

#[test]
fn registry_renders_every_tool() {
    let reg = registry();
    let names: Vec<&str> = reg.tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "inventory_items_below_reorder_point",
            "inventory_whoami",
            "purchasing_create_po_draft",
            "purchasing_get_po",
            "purchasing_search_vendors",
        ]
    );
    for tool in reg.tools() {
        for target in Target::ALL {
            let schema = tool.input_schema(target);
            assert_eq!(
                erp_tools_core::schema::check_strict(schema, target),
                vec![],
                "{} {target:?}",
                tool.name()
            );
        }
    }
    let empty = reg
        .get("inventory_items_below_reorder_point")
        .unwrap()
        .input_schema(Target::OpenAi);
    assert_eq!(
        **empty,
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );

    let search = reg
        .get("purchasing_search_vendors")
        .unwrap()
        .input_schema(Target::OpenAi);
    assert_eq!(search["required"], json!(["query", "item_code", "limit"]));
    assert_eq!(
        search["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );

    let po = reg.get("purchasing_create_po_draft").unwrap();
    let line = &po.input_schema(Target::OpenAi)["properties"]["lines"]["items"];
    assert_eq!(
        line["properties"]["uom"]["enum"],
        json!(["PCS", "BOX", "KG", "LTR"])
    );
    assert_eq!(
        line["properties"]["uom"]["description"],
        json!("Unit of measure")
    );
    assert!(
        po.description()
            .contains("Example arguments: {\"vendor_code\"")
    );
    assert_eq!(
        po.output_schema()["properties"]["number"]["type"],
        json!("string")
    );
}

#[test]
fn client_ref_is_read_from_typed_arguments() {
    let args: PoDraftArgs = serde_json::from_value(json!({
        "vendor_code": "V-00231", "needed_by": "2026-12-01", "client_ref": "run-7/po-1",
        "note": null, "lines": []
    }))
    .unwrap();
    assert_eq!(
        erp_tools_core::__private_0_1_0::DerivedToolArgs::client_ref(&args),
        Some("run-7/po-1")
    );
    let search: SearchVendorsArgs = serde_json::from_value(json!({})).unwrap();
    assert_eq!(
        erp_tools_core::__private_0_1_0::DerivedToolArgs::client_ref(&search),
        None
    );
}

/// Text held as `Box<str>`, `Arc<str>` or `Cow<'static, str>`.
#[derive(Debug, Deserialize, ToolArgs)]
struct NoteArgs {
    /// Item code, e.g. BRG-0042
    #[erp(len = 3..=20)]
    item_code: Box<str>,
    /// Free note for the reviewer
    note: std::sync::Arc<str>,
    /// Vendor's reference, if any
    vendor_ref: Option<std::borrow::Cow<'static, str>>,
    /// Tags to search by
    tags: Vec<Box<str>>,
}

#[test]
fn boxed_shared_and_borrowed_text_are_strings() {
    let schema = <NoteArgs as ToolArgs>::tool_schema();
    let plain = <String as ToolArgs>::tool_schema();
    let rendered = schema.render(Target::OpenAi);
    for field in ["item_code", "note"] {
        assert_eq!(
            rendered["properties"][field]["type"],
            plain.render(Target::OpenAi)["type"],
            "{field}"
        );
    }
    assert_eq!(
        rendered["properties"]["vendor_ref"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        rendered["properties"]["tags"]["items"]["type"],
        json!("string")
    );
    let ok = json!({"item_code": "BRG-0042", "note": "urgent", "vendor_ref": "Q-7", "tags": ["a"]});
    let normalised = erp_tools_core::validate::validate(&schema, &ok).expect("valid");
    let args: NoteArgs = serde_json::from_value(normalised).unwrap();
    assert_eq!(&*args.item_code, "BRG-0042");
    assert_eq!(&*args.note, "urgent");
    assert_eq!(args.vendor_ref.as_deref(), Some("Q-7"));
    assert_eq!(args.tags, [Box::<str>::from("a")]);
    let short = json!({"item_code": "B", "note": "", "vendor_ref": null, "tags": []});
    assert!(
        erp_tools_core::validate::validate(&schema, &short)
            .unwrap_err()
            .to_string()
            .contains("item_code")
    );
}

/// erp-tools-core reached under another path, as a crate re-exporting it would.
mod my_reexport {
    pub use ::erp_tools_core;
}

mod through_a_reexport {
    use super::my_reexport::erp_tools_core::prelude::{Decimal, ReadDb, ToolContext, ToolError};
    use super::my_reexport::erp_tools_core::{ToolArgs, erp_tool, tool_args, tool_output};

    /// A unit the price list knows.
    #[derive(Debug, ToolArgs)]
    #[erp(crate = "super::my_reexport::erp_tools_core")]
    #[derive(serde::Deserialize)]
    #[allow(clippy::upper_case_acronyms)]
    pub enum Uom {
        PCS,
        BOX,
    }

    #[tool_args(crate = "super::my_reexport::erp_tools_core")]
    #[derive(Debug)]
    pub struct QuoteArgs {
        /// Item code, e.g. BRG-0042
        #[erp(len = 3..=20)]
        pub item_code: String,
        pub uom: Uom,
    }

    #[tool_output(crate = "super::my_reexport::erp_tools_core")]
    pub struct Quote {
        pub qty: Decimal,
    }

    /// Quote an item.
    #[erp_tool(
        module = "purchasing",
        tier = "read",
        scopes = ["purchasing:read"],
        crate = "super::my_reexport::erp_tools_core"
    )]
    pub async fn quote_item(
        _ctx: &ToolContext,
        _db: &ReadDb,
        args: QuoteArgs,
    ) -> Result<Quote, ToolError> {
        let _ = (args.item_code, args.uom);
        Ok(Quote { qty: Decimal::ONE })
    }
}

#[test]
fn a_crate_override_reaches_the_core_through_a_reexport() {
    let def = through_a_reexport::quote_item::definition();
    assert_eq!(def.name(), "purchasing_quote_item");
    assert_eq!(def.args_type(), "QuoteArgs");
    let reg = namespaces()
        .tool::<through_a_reexport::quote_item>()
        .build()
        .expect("registry builds");
    let schema = reg
        .get("purchasing_quote_item")
        .unwrap()
        .input_schema(Target::OpenAi);
    assert_eq!(schema["properties"]["uom"]["enum"], json!(["PCS", "BOX"]));
    assert_eq!(schema["required"], json!(["item_code", "uom"]));
}

/// How the goods travel.
#[derive(Debug, Deserialize, ToolArgs)]
enum Shipping {
    Truck,
    Courier,
}

#[derive(Debug, Deserialize, ToolArgs)]
struct ShipArgs {
    shipping: Shipping,
    fallback: Option<Shipping>,
    /// How the urgent lines travel
    urgent: Option<Shipping>,
}

#[test]
fn an_enum_doc_comment_describes_fields_without_their_own() {
    let schema = <ShipArgs as ToolArgs>::tool_schema();
    let _ = |a: ShipArgs| (a.shipping, a.fallback, a.urgent);
    for target in Target::ALL {
        let rendered = schema.render(target);
        let p = &rendered["properties"];
        assert_eq!(
            p["shipping"]["description"],
            json!("How the goods travel."),
            "{target:?}"
        );
        assert_eq!(
            p["fallback"]["description"],
            json!("How the goods travel."),
            "{target:?}"
        );
        assert_eq!(
            p["urgent"]["description"],
            json!("How the urgent lines travel"),
            "{target:?}"
        );
        assert_eq!(
            erp_tools_core::schema::check_strict(&rendered, target),
            vec![]
        );
    }
}
