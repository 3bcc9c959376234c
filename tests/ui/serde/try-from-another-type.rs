use erp_tools_core::prelude::*;

#[derive(Deserialize)]
struct Wire {
    code: String,
}

impl TryFrom<Wire> for LookupArgs {
    type Error = String;
    fn try_from(w: Wire) -> Result<Self, String> {
        Ok(LookupArgs { vendor_code: w.code })
    }
}

#[derive(Deserialize, ToolArgs)]
#[serde(try_from = "Wire")]
struct LookupArgs {
    vendor_code: String,
}

fn main() {}
