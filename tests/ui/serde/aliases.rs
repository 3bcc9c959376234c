use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
enum Priority {
    #[serde(alias = "lo")]
    Low,
    High,
}

#[derive(Deserialize, ToolArgs)]
struct LookupArgs {
    #[serde(alias = "vendor")]
    vendor_code: String,
    priority: Priority,
}

fn main() {}
