use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(tag = "type")]
enum Delivery {
    Pickup,
    Courier,
}

fn main() {}
