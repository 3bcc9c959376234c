use erp_tools_core::prelude::*;
use serde_json::Value;

#[derive(Deserialize, ToolArgs)]
struct ImportArgs {
    rows: Vec<Value>,
}

fn main() {}
