use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
#[serde(remote = "Other")]
struct LookupArgs {
    vendor_code: String,
}

struct Other {
    vendor_code: String,
}

fn main() {
    let _ = Other { vendor_code: String::new() }.vendor_code;
}
