use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Lookup {
    /// The warehouse.
    #[erp(header = "Ware house")]
    warehouse: String,
    /// The item.
    #[erp(header = "Item:Code")]
    item: String,
    /// Not a string.
    #[erp(header = Region)]
    region: String,
}

fn main() {}
