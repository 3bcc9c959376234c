use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Line {
    item_code: String,
    created_by: String,
}

#[derive(Deserialize, ToolArgs)]
struct RequestArgs {
    lines: Vec<Option<Line>>,
}

fn main() {}
