use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Delivery {
    address: String,
    branch_id: i64,
}

#[derive(Deserialize, ToolArgs)]
struct ShipArgs {
    order_number: String,
    delivery: Delivery,
}

fn main() {}
