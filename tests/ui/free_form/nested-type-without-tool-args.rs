use erp_tools_core::prelude::*;

#[derive(Deserialize)]
struct Window {
    from: NaiveDate,
    to: NaiveDate,
}

#[derive(Deserialize, ToolArgs)]
struct MovesArgs {
    item_code: String,
    window: Window,
}

fn main() {}
