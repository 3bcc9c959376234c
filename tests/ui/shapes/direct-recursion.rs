use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Category {
    code: String,
    children: Vec<Category>,
}

fn main() {}
