//! Golden schemas: the exact JSON each provider is shown for the interesting argument
//! shapes, rendered from one declaration through a built registry.
//!
//! The expected files live in `tests/golden/<case>.<target>.json`. After an intended change,
//! regenerate them with `ERP_TOOLS_BLESS=1 cargo test -p erp-tools-tests --test golden_schema`
//! and review the diff like code.

use std::path::PathBuf;
use std::sync::LazyLock;

use erp_tools_core::prelude::*;
use erp_tools_core::registry::RegisteredTool;
use erp_tools_core::schema::check_strict;
use erp_tools_core::{Target, ToolRegistry};
use erp_tools_tests::app::namespaces;
use serde_json::{Value, json};

/// A unit of measure the price list knows.
#[derive(Deserialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    PCS,
    BOX,
    KG,
    LTR,
}

#[derive(Deserialize, ToolArgs)]
pub struct PoLine {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Quantity in the given unit
    pub qty: Decimal,
    /// Unit of measure; the item must be sold in it
    pub uom: Uom,
}

#[derive(Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    /// Vendor code from purchasing_search_vendors, e.g. V-00231
    pub vendor_code: String,
    /// Date the goods are needed by
    pub needed_by: NaiveDate,
    /// Your own id for this order within the run. Reuse it when retrying.
    pub client_ref: String,
    /// Why this order is needed. Shown to the reviewer.
    pub note: Option<String>,
    /// The order lines, at least one
    pub lines: Vec<PoLine>,
}

#[derive(Serialize, JsonSchema)]
pub struct PoDraft {
    /// The draft's number, e.g. PO-2026-0042
    pub number: String,
    /// Total at the vendor's list prices
    pub total: Decimal,
}

/// Create a DRAFT purchase order for the caller's branch. A person reviews and submits it
/// in the ERP; this tool cannot approve or send it.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
pub async fn create_po_draft(
    _ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoDraft, ToolError> {
    let number = format!("PO-{}", args.client_ref);
    tx.record_document(DocumentRef {
        doc_type: "purchase_order".into(),
        id: 1.into(),
        number: number.clone(),
    });
    let _ = (args.vendor_code, args.needed_by, args.note);
    let total = args
        .lines
        .iter()
        .filter(|l| {
            !l.item_code.is_empty() && matches!(l.uom, Uom::PCS | Uom::BOX | Uom::KG | Uom::LTR)
        })
        .map(|l| l.qty)
        .sum();
    Ok(PoDraft { number, total })
}

/// How urgent a request is.
#[derive(Deserialize, ToolArgs)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    Normal,
    Urgent,
}

#[derive(Deserialize, ToolArgs)]
pub struct DeliveryWindow {
    /// Earliest delivery date
    pub from: NaiveDate,
    /// Latest delivery date, if any
    pub to: Option<NaiveDate>,
}

#[derive(Deserialize, ToolArgs)]
pub struct ReorderSearchArgs {
    /// Item code prefix, e.g. BRG
    pub item_prefix: String,
    /// Only requests of this urgency
    pub urgency: Option<Urgency>,
    /// Only requests to be delivered in this window
    pub delivery: Option<DeliveryWindow>,
    /// Most results to return
    pub limit: Option<u8>,
}

#[derive(Serialize, JsonSchema)]
pub struct ReorderRequests {
    pub item_codes: Vec<String>,
}

/// Search the reorder requests of the caller's branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
pub async fn search_reorder_requests(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: ReorderSearchArgs,
) -> Result<ReorderRequests, ToolError> {
    let _ = (
        args.urgency,
        args.delivery.map(|d| (d.from, d.to)),
        args.limit,
    );
    Ok(ReorderRequests {
        item_codes: vec![args.item_prefix],
    })
}

/// One reorder request in a page.
#[derive(Serialize, JsonSchema)]
pub struct ReorderRow {
    /// Item code.
    pub item_code: String,
}

/// List the reorder requests of the caller's branch, by item code.
#[erp_tool(
    module = "inventory",
    tier = "read",
    scopes = ["inventory:read"],
    page_size = 25,
    max_page_size = 100
)]
pub async fn list_reorder_requests(
    _ctx: &ToolContext,
    args: ReorderSearchArgs,
    page: PageRequest,
) -> Result<Page<ReorderRow>, ToolError> {
    let rows = vec![ReorderRow {
        item_code: args.item_prefix,
    }];
    Ok(page.page(rows, |r| r.item_code.clone()))
}

/// The tools above, under the fixture application's namespaces.
static REGISTRY: LazyLock<ToolRegistry> = LazyLock::new(|| {
    namespaces()
        .tool::<create_po_draft>()
        .tool::<search_reorder_requests>()
        .tool::<list_reorder_requests>()
        .build()
        .expect("registry builds")
});

/// The registered tool `name`.
fn tool(name: &str) -> &'static RegisteredTool {
    REGISTRY.get(name).expect("registered")
}

fn golden_path(case: &str, target: Target) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(format!("{case}.{}.json", target.as_str()))
}

/// Compares the schema of `tool` rendered for every target with its golden file
/// `<case>.<target>.json`, and checks that each is strict for its target.
fn assert_golden_per_target(tool: &RegisteredTool, case: &str) {
    for target in Target::ALL {
        let schema = tool.input_schema(target);
        assert_golden(case, target, schema);
        assert_eq!(check_strict(schema, target), vec![], "{target:?}");
    }
}

/// Compares the rendered schema, byte for byte (key order included), with its golden file.
fn assert_golden(case: &str, target: Target, rendered: &Value) {
    let path = golden_path(case, target);
    let actual = serde_json::to_string_pretty(rendered).expect("schema serialises") + "\n";
    if std::env::var_os("ERP_TOOLS_BLESS").is_some() {
        std::fs::write(&path, &actual).expect("golden file written");
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with ERP_TOOLS_BLESS=1 to create it",
            path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "{} differs from the rendered schema",
        path.display()
    );
}

#[test]
fn po_draft_golden_per_target() {
    assert_golden_per_target(tool("purchasing_create_po_draft"), "po_draft");
}

#[test]
fn po_draft_shape_per_target() {
    let tool = tool("purchasing_create_po_draft");
    for target in [Target::OpenAi, Target::Mcp] {
        let s = tool.input_schema(target);
        assert_eq!(
            s["required"],
            json!(["vendor_code", "needed_by", "client_ref", "note", "lines"])
        );
        assert_eq!(s["properties"]["note"]["type"], json!(["string", "null"]));
    }
    let s = tool.input_schema(Target::Anthropic);
    assert_eq!(
        s["required"],
        json!(["vendor_code", "needed_by", "client_ref", "lines"])
    );
    assert_eq!(s["properties"]["note"]["type"], json!("string"));
    for target in Target::ALL {
        let s = tool.input_schema(target);
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["needed_by"]["format"], json!("date"));
        let line = &s["properties"]["lines"]["items"];
        assert_eq!(line["additionalProperties"], json!(false));
        assert_eq!(
            line["properties"]["uom"]["enum"],
            json!(["PCS", "BOX", "KG", "LTR"])
        );
        assert_eq!(line["properties"]["qty"]["type"], json!("string"));
    }
}

#[test]
fn nested_optional_enum_and_object_golden_per_target() {
    let tool = tool("inventory_search_reorder_requests");
    assert_golden_per_target(tool, "reorder_search");
    let openai = tool.input_schema(Target::OpenAi);
    assert_eq!(
        openai["properties"]["urgency"]["anyOf"][1],
        json!({"type": "null"})
    );
    assert_eq!(
        openai["properties"]["delivery"]["anyOf"][0]["additionalProperties"],
        json!(false)
    );
    let anthropic = tool.input_schema(Target::Anthropic);
    assert_eq!(anthropic["required"], json!(["item_prefix"]));
    assert_eq!(
        anthropic["properties"]["urgency"]["enum"],
        json!(["normal", "urgent"])
    );
}

#[test]
fn output_schema_is_inlined() {
    let tool = tool("purchasing_create_po_draft");
    let text = tool.output_schema().to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("title"),
        "{text}"
    );
    assert_eq!(
        tool.output_schema()["properties"]["number"]["type"],
        json!("string")
    );
    // The handler's own output type, as `#[erp_tool]` describes it ...
    let own = tool.def().output_schema();
    assert_eq!(own["required"], json!(["number", "total"]));
    // ... and as registered for a draft tool, with the runtime's `replayed` flag.
    assert_eq!(
        tool.output_schema()["required"],
        json!(["number", "total", "replayed"])
    );
}

#[test]
fn page_tool_golden_per_target() {
    let tool = tool("inventory_list_reorder_requests");
    assert_golden_per_target(tool, "reorder_page");
    for target in [Target::OpenAi, Target::Mcp] {
        let s = tool.input_schema(target);
        assert_eq!(s["properties"]["cursor"]["type"], json!(["string", "null"]));
        assert_eq!(
            s["properties"]["page_size"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(
            s["required"],
            json!([
                "item_prefix",
                "urgency",
                "delivery",
                "limit",
                "cursor",
                "page_size"
            ])
        );
    }
    let anthropic = tool.input_schema(Target::Anthropic);
    assert_eq!(anthropic["required"], json!(["item_prefix"]));
    let size = anthropic["properties"]["page_size"]["description"]
        .as_str()
        .unwrap();
    assert!(
        size.contains("25 when left out") && size.contains("from 1 to 100"),
        "{size}"
    );
    assert!(
        tool.description()
            .ends_with("call this tool again with the same arguments and cursor set to next_cursor to get the next page; leave cursor null for the first page."),
        "{}",
        tool.description()
    );
    let out = tool.output_schema();
    assert_eq!(out["required"], json!(["items", "next_cursor", "has_more"]));
    assert_eq!(
        out["properties"]["next_cursor"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        out["properties"]["items"]["items"]["properties"]["item_code"]["type"],
        json!("string")
    );
}

/// The whole deferred exports of the registry above, byte for byte: OpenAI's namespace
/// with `tool_search`, and Anthropic's tools behind the regex search tool, each accepted
/// by the export checker.
#[test]
fn deferred_exports_golden() {
    use erp_tools_core::export::{
        AnthropicToolSearch, anthropic_tools_deferred, check_export, openai_tools,
    };
    let anthropic = anthropic_tools_deferred(&REGISTRY, AnthropicToolSearch::Regex);
    let openai = openai_tools(&REGISTRY);
    for (target, export) in [(Target::Anthropic, &anthropic), (Target::OpenAi, &openai)] {
        assert_eq!(
            check_export(export, target),
            Vec::<String>::new(),
            "{target:?}"
        );
        assert_golden("deferred_export", target, export);
    }
}
