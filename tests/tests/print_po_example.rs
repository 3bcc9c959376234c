//! The distributor example's printable purchase order (`purchasing_print_po`): the result's
//! text for the model, the PDF attached (a well-formed PDF holding the order's lines and
//! total, one page per 36 lines), read again with `resources/read` by its caller only,
//! linked on its run's page in the review console for a reviewer of the branch only, and
//! an order of another branch refused exactly as one that does not exist. Both backends.

mod example;

use example::{app, buying, data, inventory, printing, purchasing};

use std::sync::Arc;

use base64::Engine;
use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::{Client, call_ok, call_tool, connect_in_process, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{
    BUYER, BUYER_IN_JAKARTA, JAKARTA_REVIEWER, OTHER_BRANCH_BUYER, REVIEWER, SECOND_BUYER,
};
use erp_tools_tests::review::{Browser, ReviewServer};
use rmcp::model::{ErrorCode, ReadResourceRequestParams, ResourceContents};
use rust_decimal::Decimal;
use serde_json::{Value, json};

const PRINT: &str = "purchasing_print_po";

async fn client(t: &TestDb, principal: Principal) -> Client {
    let runtime = ToolRuntime::new(Arc::new(app::registry().unwrap()), t.db.clone());
    connect_in_process(ErpMcpServer::with_principal(runtime, principal)).await
}

/// What a PDF's structure says: its pages, and the strings its pages show, in order.
struct ParsedPdf {
    pages: usize,
    shown: Vec<String>,
}

/// Reads `bytes` as a PDF the way a reader starts: the header, `startxref`, the
/// cross-reference table whose every offset must land on its object, the trailer's
/// `/Size` and `/Root`; then the page objects and the strings shown (`(..) Tj`).
fn parse_pdf(bytes: &[u8]) -> ParsedPdf {
    // Byte for byte (the header's binary comment as `?`), so offsets stay offsets.
    let text: String = bytes
        .iter()
        .map(|&b| if b.is_ascii() { char::from(b) } else { '?' })
        .collect();
    assert!(text.starts_with("%PDF-1."), "PDF header");
    assert!(text.trim_end().ends_with("%%EOF"), "PDF trailer end");
    let start = text.rfind("startxref").expect("startxref");
    let xref_at: usize = text[start + 9..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        text[xref_at..].starts_with("xref"),
        "startxref points at the table"
    );
    let mut lines = text[xref_at..].lines().skip(1);
    let head: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let (first, count) = (head[0], head[1]);
    assert_eq!(first, 0);
    for id in 0..count {
        let entry = lines.next().unwrap();
        let fields: Vec<&str> = entry.split_whitespace().collect();
        if fields[2] == "f" {
            continue;
        }
        let offset: usize = fields[0].parse().unwrap();
        assert!(
            text[offset..].starts_with(&format!("{id} 0 obj")),
            "object {id} at its offset {offset}"
        );
    }
    let trailer = &text[text.rfind("trailer").expect("trailer")..start];
    assert!(trailer.contains(&format!("/Size {count}")), "{trailer}");
    assert!(trailer.contains("/Root"), "{trailer}");
    let pages = text.matches("/Type /Page\n").count() + text.matches("/Type /Page ").count();
    ParsedPdf {
        pages,
        shown: shown_strings(bytes),
    }
}

/// The strings `bytes` shows with `Tj`, decoded (literal strings with their escapes and
/// balanced parentheses, hex strings), as Latin-1.
fn shown_strings(bytes: &[u8]) -> Vec<String> {
    let mut shown = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let (string, end) = match bytes[i] {
            b'(' => literal(bytes, i + 1),
            b'<' if bytes.get(i + 1) != Some(&b'<') => hex(bytes, i + 1),
            _ => {
                i += 1;
                continue;
            }
        };
        let after = &bytes[end..];
        let op = after
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(0);
        if after[op..].starts_with(b"Tj") {
            shown.push(string.iter().map(|&b| char::from(b)).collect());
        }
        i = end;
    }
    shown
}

/// The literal string starting after its `(` at `i`, and where it ends.
fn literal(bytes: &[u8], mut i: usize) -> (Vec<u8>, usize) {
    let (mut out, mut depth) = (Vec::new(), 0);
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        match b {
            b'\\' => {
                let e = bytes[i];
                i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        while i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                            v = v * 8 + u32::from(bytes[i] - b'0');
                            i += 1;
                        }
                        out.push(v as u8);
                    }
                    other => out.push(other),
                }
            }
            b'(' => {
                depth += 1;
                out.push(b);
            }
            b')' if depth == 0 => return (out, i),
            b')' => {
                depth -= 1;
                out.push(b);
            }
            _ => out.push(b),
        }
    }
    panic!("an unterminated string");
}

/// The hex string starting after its `<` at `i`, and where it ends.
fn hex(bytes: &[u8], i: usize) -> (Vec<u8>, usize) {
    let end = i + bytes[i..]
        .iter()
        .position(|&b| b == b'>')
        .expect("a hex string's end");
    let digits: Vec<u8> = bytes[i..end]
        .iter()
        .copied()
        .filter(|b| b.is_ascii_hexdigit())
        .collect();
    let out = digits
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).unwrap();
            u8::from_str_radix(&format!("{pair:0<2}"), 16).unwrap()
        })
        .collect();
    (out, end + 1)
}

/// The PDF a successful print result carries, with its URI.
fn attached_pdf(result: &rmcp::model::CallToolResult) -> (String, Vec<u8>) {
    let content = serde_json::to_value(&result.content).unwrap();
    assert_eq!(content.as_array().unwrap().len(), 2, "{content}");
    assert_eq!(content[1]["type"], "resource", "{content}");
    let resource = &content[1]["resource"];
    assert_eq!(resource["mimeType"], "application/pdf");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(resource["blob"].as_str().unwrap())
        .unwrap();
    (resource["uri"].as_str().unwrap().to_string(), bytes)
}

fn amount(v: &Value) -> Decimal {
    v.as_str().unwrap().parse().unwrap()
}

async fn a_purchase_order_prints_as_a_pdf_its_caller_reads_again(t: &TestDb) {
    app::prepare(&t.db).await.unwrap();
    let buyer = client(t, BUYER.principal()).await;
    let order = call_ok(
        &buyer,
        "purchasing_get_po",
        json!({"number": "PO-2026-0040"}),
    )
    .await;
    let result = call_tool(&buyer, PRINT, json!({"number": "PO-2026-0040"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(
        text.starts_with("Purchase order PO-2026-0040 (submitted) for ")
            && text.contains("printable PDF, 1 page(s)"),
        "{text}"
    );
    let printed = result.structured_content.clone().unwrap();
    let (uri, pdf) = attached_pdf(&result);
    assert_eq!(uri, "erp://purchasing/purchase-orders/PO-2026-0040.pdf");
    assert_eq!(printed["document_uri"], json!(uri));
    assert_eq!(printed["document_bytes"], json!(pdf.len()));
    assert_eq!(amount(&printed["total"]), amount(&order["total"]));

    let parsed = parse_pdf(&pdf);
    assert_eq!(parsed.pages, 1);
    let shown = &parsed.shown;
    assert!(shown.contains(&"PO-2026-0040".to_string()), "{shown:?}");
    assert!(shown.contains(&"SUBMITTED".to_string()), "{shown:?}");
    let vendor = format!(
        "{} {}",
        order["vendor_code"].as_str().unwrap(),
        order["vendor_name"].as_str().unwrap()
    );
    assert!(shown.contains(&vendor), "{shown:?}");
    for line in order["lines"].as_array().unwrap() {
        // The row: number, item, quantity, unit, price, line total, in this order.
        let row = [
            line["line_no"].to_string(),
            line["item_code"].as_str().unwrap().to_string(),
            data_qty(&line["qty"]),
            line["uom"].as_str().unwrap().to_string(),
            data::money(amount(&line["unit_price"])),
            data::money(amount(&line["line_total"])),
        ];
        let at = shown.iter().position(|s| *s == row[0]).expect("the line");
        assert_eq!(shown[at..at + 6], row, "{shown:?}");
    }
    let total = data::money(amount(&order["total"]));
    assert_eq!(shown[shown.len() - 2], total, "the total under the lines");

    // Read again by its URI: the same bytes, for the same caller only.
    let read = buyer
        .read_resource(ReadResourceRequestParams::new(uri.clone()))
        .await
        .unwrap();
    let ResourceContents::BlobResourceContents {
        blob, mime_type, ..
    } = &read.contents[0]
    else {
        panic!("a blob: {:?}", read.contents);
    };
    assert_eq!(mime_type.as_deref(), Some("application/pdf"));
    let again = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    assert_eq!(again, pdf);

    let never = "erp://purchasing/purchase-orders/PO-2026-9999.pdf";
    for other in [SECOND_BUYER, BUYER_IN_JAKARTA, OTHER_BRANCH_BUYER] {
        let other = client(t, other.principal()).await;
        let refused = other
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .expect_err("another principal may not read the document");
        let unknown = other
            .read_resource(ReadResourceRequestParams::new(never))
            .await
            .expect_err("no such document");
        let (refused, unknown) = (error_of(refused), error_of(unknown));
        assert_eq!(refused.0, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(
            refused.1.replace(&uri, "U"),
            unknown.1.replace(never, "U"),
            "the same answer as for a document never produced"
        );
    }
}

fn data_qty(v: &Value) -> String {
    data::qty(amount(v))
}

fn error_of(e: rmcp::ServiceError) -> (ErrorCode, String) {
    match e {
        rmcp::ServiceError::McpError(e) => (e.code, e.message.to_string()),
        other => panic!("a JSON-RPC error, not {other}"),
    }
}

async fn another_branch_s_order_is_not_printed(t: &TestDb) {
    app::prepare(&t.db).await.unwrap();
    let jakarta = client(t, OTHER_BRANCH_BUYER.principal()).await;
    // PO-2026-0040 is Surabaya's; PO-2026-9999 does not exist.
    let hidden = call_tool(&jakarta, PRINT, json!({"number": "PO-2026-0040"})).await;
    let missing = call_tool(&jakarta, PRINT, json!({"number": "PO-2026-9999"})).await;
    assert_eq!(hidden.is_error, Some(true));
    assert_eq!(hidden.content.len(), 1, "no document");
    assert_eq!(
        text_of(&hidden).replace("PO-2026-0040", "N"),
        text_of(&missing).replace("PO-2026-9999", "N")
    );
    assert!(text_of(&hidden).contains("Nothing was printed."));
    // Its own order prints.
    let own = call_ok(&jakarta, PRINT, json!({"number": "PO-2026-0041"})).await;
    assert_eq!(own["status"], "draft");
}

async fn a_printed_order_is_a_download_on_its_run_page(t: &TestDb) {
    app::prepare(&t.db).await.unwrap();
    let console = ReviewServer::beside(t, 20).await;
    let run = format!("run-print-{:?}", t.backend()).to_lowercase();
    let buyer = client(t, BUYER.in_run(&run)).await;
    let result = call_tool(&buyer, PRINT, json!({"number": "PO-2026-0040"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let (uri, pdf) = attached_pdf(&result);

    let mut reviewer = Browser::new(&console);
    reviewer
        .sign_in(&console.token(&REVIEWER.principal()))
        .await;
    let page = reviewer.get(&format!("/runs/{run}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let html = page.html.replace("&#x2f;", "/");
    let href =
        format!("/runs/{run}/kept/erp%3A%2F%2Fpurchasing%2Fpurchase-orders%2FPO-2026-0040.pdf");
    let link = format!(
        "<a href=\"/review{href}\" download>{uri}</a> · application/pdf, {} bytes",
        pdf.len()
    );
    assert!(html.contains(&link), "{html}");
    let download = reviewer.get(&href).await;
    assert_eq!(download.status, 200);
    assert_eq!(download.bytes, pdf, "byte for byte");

    let mut jakarta = Browser::new(&console);
    jakarta
        .sign_in(&console.token(&JAKARTA_REVIEWER.principal()))
        .await;
    let their_page = jakarta.get(&format!("/runs/{run}")).await;
    assert!(!their_page.html.contains("/kept/"), "{}", their_page.html);
    let refused = jakarta.get(&href).await;
    assert_eq!(refused.status, 404);
    assert!(!refused.html.contains("%PDF"));
}

on_both_backends!(a_purchase_order_prints_as_a_pdf_its_caller_reads_again);
on_both_backends!(a_printed_order_is_a_download_on_its_run_page);
on_both_backends!(another_branch_s_order_is_not_printed);

/// An order of 80 lines prints on three pages (36, 36, 8 lines), the header on each and
/// the total on the last.
#[test]
fn a_long_order_prints_on_pages() {
    let lines = (1..=80)
        .map(|n| purchasing::PoLineView {
            line_no: n,
            item_code: format!("BRG-{n:04}"),
            qty: Decimal::from(n),
            uom: "BOX".into(),
            unit_price: Decimal::new(4_200_050, 2),
            line_total: Decimal::new(4_200_050, 2) * Decimal::from(n),
        })
        .collect::<Vec<_>>();
    let total = lines.iter().map(|l| l.line_total).sum();
    let po = purchasing::PoView {
        po_id: 1,
        number: "PO-2026-0100".into(),
        branch: "SBY-01".into(),
        status: "draft".into(),
        vendor_code: "V-00231".into(),
        vendor_name: "PT Sinar Jaya (Surabaya) caf\u{e9}".into(),
        needed_by: "2026-12-15".into(),
        note: Some("Kode: \u{2192} gudang 2".into()),
        lines,
        total,
        currency: "IDR".into(),
        drafted_by_agent_run: None,
    };
    let (pdf, pages) = printing::po_pdf(&po);
    assert_eq!(pages, 3);
    let parsed = parse_pdf(&pdf);
    assert_eq!(parsed.pages, 3);
    let headers = parsed
        .shown
        .iter()
        .filter(|s| *s == "PURCHASE ORDER")
        .count();
    assert_eq!(headers, 3);
    let rows: Vec<&String> = parsed
        .shown
        .iter()
        .filter(|s| s.starts_with("BRG-"))
        .collect();
    assert_eq!(rows.len(), 80);
    assert!(
        parsed
            .shown
            .contains(&"PO-2026-0100 - page 3 of 3".to_string())
    );
    assert!(parsed.shown.contains(&data::money(total)));
    // A character WinAnsi cannot show prints as `?`; Latin-1 prints as it is.
    assert!(
        parsed.shown.contains(&"Kode: ? gudang 2".to_string()),
        "{:?}",
        parsed.shown
    );
    let vendor = "V-00231 PT Sinar Jaya (Surabaya) caf\u{e9}";
    assert!(
        parsed.shown.contains(&vendor.to_string()),
        "{:?}",
        parsed.shown
    );
}
