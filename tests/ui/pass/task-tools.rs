//! `task = ".."` and `rerun` on read and draft tools: the definition carries them.
#![deny(warnings)]

use erp_tools_core::prelude::*;
use erp_tools_core::{ErpTool, TaskSupport};

#[derive(Serialize, JsonSchema)]
pub struct Valuation {
    pub total: Decimal,
}

/// Value the stock of every warehouse of the caller's branch.
#[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"], task = "optional")]
pub async fn value_stock(_ctx: &ToolContext) -> Result<Valuation, ToolError> {
    Ok(Valuation {
        total: Decimal::ZERO,
    })
}

/// Send the stock valuation to the controller, once.
#[erp_tool(
    module = "inventory",
    tier = "read",
    scopes = ["inventory:read"],
    task = "required",
    rerun = false
)]
pub async fn mail_valuation(_ctx: &ToolContext) -> Result<Valuation, ToolError> {
    Ok(Valuation {
        total: Decimal::ZERO,
    })
}

#[derive(Deserialize, ToolArgs)]
pub struct ReorderArgs {
    /// Warehouse code, e.g. SBY-WH1
    pub warehouse: String,
    /// Your own id for this draft; reuse it when retrying
    pub client_ref: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Reorder {
    pub number: String,
}

/// Draft the purchase orders that bring a warehouse back to its reorder points.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"], task = "required")]
pub async fn draft_reorders(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: ReorderArgs,
) -> Result<Reorder, ToolError> {
    Ok(Reorder {
        number: args.client_ref,
    })
}

/// The definitions and the registry carry the declarations.
fn main() {
    assert_eq!(
        value_stock::definition().task_support(),
        TaskSupport::Optional
    );
    assert!(value_stock::definition().rerun());
    assert_eq!(
        mail_valuation::definition().task_support(),
        TaskSupport::Required
    );
    assert!(!mail_valuation::definition().rerun());
    assert_eq!(
        draft_reorders::definition().task_support(),
        TaskSupport::Required
    );
    assert!(draft_reorders::definition().rerun());
    let registry = erp_tools_core::ToolRegistry::builder()
        .module("inventory", "Stock per warehouse. Read only.")
        .module(
            "purchasing",
            "Draft purchase orders. Cannot approve, send or post.",
        )
        .tools(erp_tools_core::tools![
            value_stock,
            mail_valuation,
            draft_reorders
        ])
        .build()
        .unwrap();
    let tool = |name: &str| registry.get(name).unwrap();
    assert_eq!(
        tool("inventory_value_stock").task_support(),
        TaskSupport::Optional
    );
    assert!(!tool("inventory_mail_valuation").task_rerun());
    assert_eq!(
        tool("purchasing_draft_reorders").task_support(),
        TaskSupport::Required
    );
}
