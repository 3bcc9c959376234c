use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct Baris {
    kode_barang: String,
    jumlah: Decimal,
    harga_satuan: Decimal,
}

#[derive(Deserialize, ToolArgs)]
struct Args {
    client_ref: String,
    kode_pemasok: String,
    baris: Vec<Baris>,
}

/// Buat draf pesanan pembelian.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn tool_under_test(_ctx: &ToolContext, _tx: &mut DraftTx, args: Args) -> Result<String, ToolError> {
    let _ = args;
    Ok(String::new())
}

fn main() {}
