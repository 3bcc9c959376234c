use erp_tools_core::prelude::*;

#[derive(ToolArgs)]
union Number {
    int: i64,
    uint: u64,
}

fn main() {}
