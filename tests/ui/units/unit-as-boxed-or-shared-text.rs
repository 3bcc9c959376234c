use std::borrow::Cow;
use std::sync::Arc;

use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct QuoteArgs {
    uom: Box<str>,
    price_currency: Option<Arc<str>>,
    order_unit: Cow<'static, str>,
}

fn main() {}
