use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Urgency {
    Normal,
    Urgent,
}

#[derive(Deserialize, ToolArgs)]
struct RequestArgs {
    item_code: String,
    #[serde(flatten)]
    urgency: Urgency,
}

fn main() {}
