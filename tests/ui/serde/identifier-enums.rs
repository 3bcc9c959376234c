use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(variant_identifier)]
enum Priority {
    Low,
    High,
}

fn main() {}
