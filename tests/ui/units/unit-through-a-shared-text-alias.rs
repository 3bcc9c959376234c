use erp_tools_core::prelude::*;

type Code = std::sync::Arc<str>;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    base_uom: Code,
}

fn main() {}
