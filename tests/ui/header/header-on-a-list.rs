use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Lookup {
    /// Item codes to look up.
    #[erp(header = "Items")]
    codes: Vec<String>,
}

fn main() {}
