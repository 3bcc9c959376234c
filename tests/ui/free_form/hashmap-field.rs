use std::collections::{BTreeMap, HashMap};

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct StockArgs {
    quantities: HashMap<String, i64>,
    labels: Option<BTreeMap<String, String>>,
}

fn main() {}
