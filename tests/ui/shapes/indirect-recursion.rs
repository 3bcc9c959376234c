// Indirect recursion (`Bom` -> `Part` -> `Bom`) cannot be seen by one derive, which only
// sees its own type. It is caught by the compiler as a cycle in the nesting depth
// (`DerivedToolArgs::DEPTH`) that every derived type computes: the error names both derives.
use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Bom {
    item_code: String,
    parts: Vec<Part>,
}

#[derive(Deserialize, ToolArgs)]
struct Part {
    qty: Decimal,
    sub_assembly: Option<Box<Bom>>,
}

fn main() {}
