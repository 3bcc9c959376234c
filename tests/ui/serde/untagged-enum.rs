use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(untagged)]
enum Priority {
    Low,
    High,
}

fn main() {}
