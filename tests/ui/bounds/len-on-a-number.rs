use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoLine {
    #[erp(len = 1..=3)]
    qty: u32,
}

fn main() {}
