use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Nothing;

fn main() {}
