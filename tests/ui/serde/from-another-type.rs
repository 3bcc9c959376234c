use erp_tools_core::prelude::*;

#[derive(Deserialize)]
struct Wire {
    code: String,
}

impl From<Wire> for LookupArgs {
    fn from(w: Wire) -> Self {
        LookupArgs { vendor_code: w.code }
    }
}

#[derive(Deserialize, ToolArgs)]
#[serde(from = "Wire")]
struct LookupArgs {
    vendor_code: String,
}

fn main() {}
