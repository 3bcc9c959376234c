use erp_tools_core::prelude::*;

fn ten() -> u32 {
    10
}

fn some_ten() -> Option<u32> {
    Some(10)
}

#[derive(Deserialize, ToolArgs)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    include_closed: bool,
    #[serde(default = "ten")]
    limit: u32,
    #[serde(default = "some_ten")]
    page_size: Option<u32>,
}

#[derive(Default, Deserialize, ToolArgs)]
#[serde(default)]
struct FilterArgs {
    status_filter: Option<String>,
}

fn main() {}
