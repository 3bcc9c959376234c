//! `purchasing_print_po`: a purchase order of the caller's branch as a printable PDF (A4,
//! Helvetica): header, vendor, lines and total. The model gets a short summary; the PDF
//! goes with the result as an embedded resource, and the caller may read it again with
//! `resources/read` by its URI within the hour (nobody else may).

use erp_tools_core::prelude::*;
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use crate::data::{money, qty};
use crate::purchasing::{GetPoArgs, PoLineView, PoView, load_po};

/// Result of `purchasing_print_po`: what was printed; the PDF is attached.
#[tool_output]
pub struct PrintedPo {
    /// Purchase order number.
    number: String,
    /// Status of the order when it was printed.
    status: String,
    /// Vendor code.
    vendor_code: String,
    /// Vendor name.
    vendor_name: String,
    /// Lines printed.
    lines: usize,
    /// Total, IDR.
    total: Decimal,
    /// The attached PDF's URI; `resources/read` gives it again to this caller for an hour.
    document_uri: String,
    /// The PDF's size in bytes.
    document_bytes: usize,
    /// Its pages.
    pages: usize,
}

impl ModelText for PrintedPo {
    fn model_text(&self) -> String {
        format!(
            "Purchase order {} ({}) for {} {}: {} line(s), total {} IDR. Attached as a \
             printable PDF, {} page(s), {} bytes ({}), for a person to print or save; it \
             shows the order as purchasing_get_po reads it and changes nothing.",
            self.number,
            self.status,
            self.vendor_code,
            self.vendor_name,
            self.lines,
            money(self.total),
            self.pages,
            self.document_bytes,
            self.document_uri,
        )
    }
}

/// Print one purchase order of the caller's branch as a PDF document (header, vendor,
/// lines, total) for a person to print or save. Read only: prints the order as it is.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn print_po(
    ctx: &ToolContext,
    db: &ReadDb,
    args: GetPoArgs,
) -> Result<PrintedPo, ToolError> {
    let mut conn = db.pool().acquire().await.map_err(ToolError::internal)?;
    let po = load_po(&mut conn, ctx.branch_id(), ctx.branch_code(), &args.number)
        .await
        .map_err(ToolError::internal)?
        .ok_or_else(|| {
            // The same message for an order of another branch as for none (no probing).
            ToolError::not_found("Purchase order", &args.number)
                .next_step("Use purchasing_search_pos to find the right number.")
                .not_done("Nothing was printed.")
        })?;
    // ANCHOR: attach
    let (pdf, pages) = po_pdf(&po);
    let uri = format!("erp://purchasing/purchase-orders/{}.pdf", po.number);
    let bytes = pdf.len();
    ctx.attach(Attachment::bytes(uri.clone(), "application/pdf", pdf))?;
    // ANCHOR_END: attach
    Ok(PrintedPo {
        number: po.number,
        status: po.status,
        vendor_code: po.vendor_code,
        vendor_name: po.vendor_name,
        lines: po.lines.len(),
        total: po.total,
        document_uri: uri,
        document_bytes: bytes,
        pages,
    })
}

/// A4 in points, the left and right margins, and the table's rows per page.
const PAGE: (f32, f32) = (595.0, 842.0);
const LEFT: f32 = 50.0;
const RIGHT: f32 = 545.0;
const ROWS_PER_PAGE: usize = 36;

/// The table's columns: heading and where its text ends (right-aligned) or starts.
const COLUMNS: [(&str, f32, bool); 6] = [
    ("#", LEFT, false),
    ("Item", LEFT + 30.0, false),
    ("Qty", 300.0, true),
    ("Unit", 310.0, false),
    ("Unit price", 440.0, true),
    ("Line total", RIGHT, true),
];

/// The order as a PDF, and its page count: the header on every page, the lines in
/// pages of `ROWS_PER_PAGE` lines, the total under the last.
pub fn po_pdf(po: &PoView) -> (Vec<u8>, usize) {
    let chunks: Vec<_> = po.lines.chunks(ROWS_PER_PAGE).collect();
    let pages = chunks.len().max(1);
    let (catalog, tree, info, regular, bold) = (
        Ref::new(1),
        Ref::new(2),
        Ref::new(3),
        Ref::new(4),
        Ref::new(5),
    );
    let page_ref = |n: usize| Ref::new(6 + 2 * n as i32);
    let content_ref = |n: usize| Ref::new(7 + 2 * n as i32);

    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids((0..pages).map(page_ref))
        .count(pages as i32);
    pdf.document_info(info)
        .title(TextStr(&format!("Purchase order {}", po.number)))
        .creator(TextStr("erp-tools distributor example"));
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    for n in 0..pages {
        let mut page = pdf.page(page_ref(n));
        page.parent(tree)
            .media_box(Rect::new(0.0, 0.0, PAGE.0, PAGE.1))
            .contents(content_ref(n));
        page.resources()
            .fonts()
            .pair(Name(b"F1"), regular)
            .pair(Name(b"F2"), bold);
        page.finish();
        let rows = chunks.get(n).copied().unwrap_or(&[]);
        let content = page_content(po, rows, (n + 1, pages));
        pdf.stream(content_ref(n), &content);
    }
    (pdf.finish(), pages)
}

/// One page: the header, `rows` of the table, the total on the last page.
fn page_content(po: &PoView, rows: &[PoLineView], (n, of): (usize, usize)) -> Vec<u8> {
    let mut c = Content::new();
    let mut y = PAGE.1 - 60.0;
    text(&mut c, (LEFT, y), true, 18.0, "PURCHASE ORDER");
    text_right(&mut c, (RIGHT, y), true, 14.0, &po.number);
    y -= 26.0;
    let facts = [
        ("Branch", po.branch.clone()),
        ("Status", po.status.to_uppercase()),
        ("Needed by", po.needed_by.clone()),
        ("Vendor", format!("{} {}", po.vendor_code, po.vendor_name)),
        ("Currency", po.currency.clone()),
    ];
    for (label, value) in facts {
        text(&mut c, (LEFT, y), true, 10.0, label);
        text(&mut c, (LEFT + 80.0, y), false, 10.0, &value);
        y -= 15.0;
    }
    if let Some(note) = &po.note {
        text(&mut c, (LEFT, y), true, 10.0, "Note");
        text(&mut c, (LEFT + 80.0, y), false, 10.0, note);
        y -= 15.0;
    }
    if po.status == "draft" {
        text(
            &mut c,
            (LEFT, y),
            true,
            10.0,
            "DRAFT: not approved and not sent to the vendor.",
        );
        y -= 15.0;
    }
    y -= 12.0;
    for (heading, x, right) in COLUMNS {
        cell(&mut c, (x, y), right, true, heading);
    }
    rule(&mut c, y - 5.0);
    y -= 20.0;
    for line in rows {
        let values = [
            line.line_no.to_string(),
            line.item_code.clone(),
            qty(line.qty),
            line.uom.clone(),
            money(line.unit_price),
            money(line.line_total),
        ];
        for ((_, x, right), value) in COLUMNS.iter().zip(&values) {
            cell(&mut c, (*x, y), *right, false, value);
        }
        y -= 16.0;
    }
    if n == of {
        rule(&mut c, y + 10.0);
        y -= 6.0;
        text_right(
            &mut c,
            (COLUMNS[4].1, y),
            true,
            10.0,
            &format!("Total {}", po.currency),
        );
        text_right(&mut c, (RIGHT, y), true, 10.0, &money(po.total));
    }
    text(
        &mut c,
        (LEFT, 40.0),
        false,
        8.0,
        &format!("{} - page {n} of {of}", po.number),
    );
    c.finish().into_vec()
}

fn cell(c: &mut Content, at: (f32, f32), right: bool, bold: bool, value: &str) {
    if right {
        text_right(c, at, bold, 10.0, value);
    } else {
        text(c, at, bold, 10.0, value);
    }
}

fn rule(c: &mut Content, y: f32) {
    c.set_line_width(0.5);
    c.move_to(LEFT, y);
    c.line_to(RIGHT, y);
    c.stroke();
}

fn text(c: &mut Content, (x, y): (f32, f32), bold: bool, size: f32, value: &str) {
    let font = if bold { Name(b"F2") } else { Name(b"F1") };
    c.begin_text();
    c.set_font(font, size);
    c.next_line(x, y);
    c.show(Str(&win_ansi(value)));
    c.end_text();
}

/// `value` ending at `x`: its width from Helvetica's metrics for the characters amounts,
/// numbers and codes use (0.556 em for digits and letters of that width).
fn text_right(c: &mut Content, (x, y): (f32, f32), bold: bool, size: f32, value: &str) {
    let em: f32 = value
        .chars()
        .map(|ch| match ch {
            ' ' | '.' | ',' | 'I' | 'i' | 'l' | 'j' | 't' | 'f' => 0.278,
            '-' | 'r' => 0.333,
            'M' | 'm' | 'W' => 0.833,
            'w' => 0.722,
            c if c.is_ascii_uppercase() => 0.667,
            _ => 0.556,
        })
        .sum();
    let em = if bold { em * 1.05 } else { em };
    text(c, (x - em * size, y), bold, size, value);
}

/// `value` in the fonts' WinAnsi encoding: Latin-1 as it is, anything else as `?`.
fn win_ansi(value: &str) -> Vec<u8> {
    value
        .chars()
        .map(|ch| match u32::from(ch) {
            n @ (0x20..=0x7e | 0xa0..=0xff) => n as u8,
            _ => b'?',
        })
        .collect()
}
