use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct UpdateArgs {
    item_code: String,
    /// Anything else the model wants to send
    extra: serde_json::Value,
}

fn main() {}
