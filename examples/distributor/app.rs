//! The example's registry and database set-up, shared by the binary and its tests.

use erp_tools_core::{Database, RegistryError, ToolRegistry};

use crate::{buying, data, inventory, printing, purchasing};

/// Every tool of the example, grouped by module.
pub fn registry() -> Result<ToolRegistry, RegistryError> {
    ToolRegistry::builder()
        .module("purchasing", purchasing::DESCRIPTION)
        .module("inventory", inventory::DESCRIPTION)
        .tools(erp_tools_core::tools![
            purchasing::search_vendors,
            purchasing::get_vendor_summary,
            purchasing::search_pos,
            buying::get_item_summary,
            purchasing::get_po,
            printing::print_po,
            purchasing::create_po_draft,
            inventory::get_stock,
            inventory::list_below_reorder,
        ])
        // Hosts with MCP Apps show the drafted order as a card.
        .card::<purchasing::create_po_draft>(erp_tools_core::mcp::apps::DRAFT_CARD)
        .build()
}

/// Opens (creating and seeding on first start) the example database at `url`.
pub async fn open_db(url: &str) -> Result<Database, String> {
    let db = Database::open(url)
        .await
        .map_err(|e| format!("cannot open database {url}: {e}"))?;
    prepare(&db).await?;
    Ok(db)
}

/// Creates the example's tables in an open database and seeds them if empty.
pub async fn prepare(db: &Database) -> Result<(), String> {
    data::prepare(db)
        .await
        .map_err(|e| format!("cannot prepare the example data: {e}"))
}
