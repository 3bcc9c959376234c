use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Page<T> {
    items: Vec<T>,
    page: u32,
}

fn main() {}
