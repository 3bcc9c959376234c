use erp_tools_core::prelude::*;

#[derive(Deserialize)]
struct NoteArgs {
    text: String,
    client_ref: String,
}

/// Create a draft note.
#[erp_tool(module = "notes", tier = "draft", scopes = ["notes:draft"])]
async fn create_note(_ctx: &ToolContext, _tx: &mut DraftTx, args: NoteArgs) -> Result<String, ToolError> {
    Ok(args.text + &args.client_ref)
}

fn main() {}
