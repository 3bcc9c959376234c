use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Lookup {
    /// The warehouse.
    #[erp(header = "Code")]
    warehouse: String,
    /// The item.
    #[erp(header = "code")]
    item: String,
}

fn main() {}
