use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct RequestArgs {
    item_code: String,
    #[serde(flatten)]
    extra: Option<Extra>,
}

#[derive(Deserialize, ToolArgs)]
struct Extra {
    note: String,
}

fn main() {}
