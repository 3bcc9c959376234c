//! The example's registry and database set-up, shared by the binary and its tests.

use erp_tools_core::{
    Database, DatabaseOptions, DigestKey, DigestOptions, RegistryError, ToolRegistry,
};

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

/// Opens (creating and seeding on first start) the example database at `url`. With
/// `ERP_TOOLS_DIGEST_DIR` and `ERP_TOOLS_DIGEST_KEY` (64 hex digits, from `distributor
/// digest-key`) set, it writes signed audit digests to that directory (every
/// `ERP_TOOLS_DIGEST_MINUTES`, default 5, and at shutdown).
pub async fn open_db(url: &str) -> Result<Database, String> {
    let mut options = DatabaseOptions::new(url);
    if let Ok(dir) = std::env::var("ERP_TOOLS_DIGEST_DIR") {
        let key = DigestKey::from_env("ERP_TOOLS_DIGEST_KEY").map_err(|e| e.to_string())?;
        let minutes = match std::env::var("ERP_TOOLS_DIGEST_MINUTES") {
            Err(_) => 5,
            Ok(m) => m.parse::<u64>().map_err(|_| {
                format!("ERP_TOOLS_DIGEST_MINUTES={m:?} is not a number of minutes")
            })?,
        };
        let every = std::time::Duration::from_secs(60 * minutes.max(1));
        options = options.audit_digests(DigestOptions::to_dir(key, dir).every(every));
    }
    let db = Database::connect(options)
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
