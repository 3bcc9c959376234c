use erp_tools_core::prelude::*;

mod lenient {
    use erp_tools_core::__private_0_1_0::serde::{Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        String::deserialize(d)
    }
}

#[derive(Deserialize, ToolArgs)]
struct LookupArgs {
    #[serde(with = "lenient")]
    vendor_code: String,
    #[serde(deserialize_with = "lenient::deserialize")]
    item_code: String,
}

fn main() {}
