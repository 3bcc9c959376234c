use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct PoLine {
    #[erp(minimum = 1)]
    a: Decimal,
    #[erp(min = 1, min = 2)]
    b: Decimal,
    #[erp(min = "1")]
    c: Decimal,
    #[erp(max = 1e3)]
    d: Decimal,
    #[erp(min = 5u32)]
    e: u32,
    #[erp(min = 10, max = 1)]
    f: Decimal,
    #[erp(positive = true)]
    g: Decimal,
    #[erp(positive, max = 0)]
    h: Decimal,
    #[erp(positive, min = 1)]
    i: Decimal,
    #[erp(len = 1..40)]
    j: String,
    #[erp(len = 40..=1)]
    k: String,
    #[erp(len = 0)]
    l: String,
    #[erp(pattern = "^[A-Z+$")]
    m: String,
    #[erp(pattern = 5)]
    n: String,
    #[erp]
    o: String,
    #[erp(max)]
    p: Decimal,
    #[erp(min = LIMIT)]
    q: Decimal,
}

const LIMIT: u32 = 1;

fn main() {}
