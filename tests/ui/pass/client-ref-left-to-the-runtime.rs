//! A draft handler need not read `client_ref` (the runtime claims the idempotency key with
//! it): the field does not trigger an unused-field warning.
#![deny(warnings)]

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Ref {
    client_ref: String,
}

#[derive(Deserialize, ToolArgs)]
struct NoteDraftArgs {
    text: String,
    client_ref: String,
}

#[derive(Deserialize, ToolArgs)]
struct FlatDraftArgs {
    text: String,
    #[serde(flatten)]
    write: Ref,
}

/// Create a draft note.
#[erp_tool(module = "notes", tier = "draft", scopes = ["notes:draft"])]
async fn create_note(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: NoteDraftArgs,
) -> Result<String, ToolError> {
    Ok(args.text)
}

/// Create another draft note.
#[erp_tool(module = "notes", tier = "draft", scopes = ["notes:draft"])]
async fn create_flat_note(
    _ctx: &ToolContext,
    _tx: &mut DraftTx,
    args: FlatDraftArgs,
) -> Result<String, ToolError> {
    Ok(args.text)
}

fn main() {
    let args: FlatDraftArgs =
        serde_json::from_str(r#"{"text": "x", "client_ref": "r-1"}"#).unwrap();
    assert_eq!(
        erp_tools_core::__private_0_1_0::DerivedToolArgs::client_ref(&args),
        Some("r-1")
    );
    let _ = (
        <create_note as erp_tools_core::ErpTool>::definition(),
        <create_flat_note as erp_tools_core::ErpTool>::definition(),
    );
}
