use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
pub struct Line {
    pub qty: Decimal,
}

#[derive(Deserialize, ToolArgs)]
#[erp(min = 1)]
struct PoArgs {
    #[erp(len = 1..=10)]
    #[serde(flatten)]
    line: Line,
    #[erp(max = 5)]
    #[serde(skip)]
    cached: u32,
}

#[derive(Deserialize, ToolArgs)]
enum Priority {
    #[erp(min = 1)]
    Low,
}

fn main() {}
