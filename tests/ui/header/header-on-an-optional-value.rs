use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Lookup {
    /// The warehouse, if one.
    #[erp(header = "Warehouse")]
    warehouse: Option<String>,
}

fn main() {}
