use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Priority {
    Low,
    #[serde(untagged)]
    High,
}

fn main() {}
