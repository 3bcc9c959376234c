use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct ApproveArgs {
    number: String,
    #[serde(alias = "user_id")]
    requester_note: String,
}

fn main() {}
