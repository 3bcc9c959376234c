use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
enum Delivery {
    Pickup,
    Courier,
}

fn main() {}
