//! [`DocumentView`]: how the application shows one type of document in the console: on
//! its own page, in the Drafts list, and as the preview on an approval card.
//!
//! A view reads a document as JSON (the draft tool's output, as the handler returned it,
//! or what the application's loader reads now) through JSON pointers
//! (`/vendor_name`, `/lines`, `/total`): header fields, line columns, the total and
//! the status, and names the document's page in the ERP's own UI by a URL template.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::tool::handles::DocumentId;

/// Reads a document as it is now: `(branch_id, document id, number)` to its JSON in the
/// shape the view's pointers read, `None` when it no longer exists. The id is the one the
/// draft recorded, a number or a string as the system holding the document gave it.
pub type DocumentLoader = Arc<
    dyn Fn(i64, DocumentId, String) -> BoxFuture<'static, Result<Option<Value>, String>>
        + Send
        + Sync,
>;

/// How a column's or a field's value is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    /// A quantity: digits grouped by thousands.
    Number,
    /// Money: digits grouped, two decimals, the view's currency.
    Money,
}

#[derive(Clone, Debug)]
struct Field {
    label: String,
    pointer: String,
    format: Format,
}

/// How the console shows one document type: on its own page, in the Drafts list, and
/// as the preview on an approval card. Its values are read from the document's JSON (the
/// draft tool's output, or what the [`loader`](Self::loader) reads now) through JSON
/// pointers.
///
/// ```
/// use erp_tools_core::review::DocumentView;
///
/// let view = DocumentView::new("purchase_order", "Purchase order")
///     .field("Vendor", "/vendor_name")
///     .field("Needed by", "/needed_by")
///     .lines("/lines")
///     .column("Item", "/item_code")
///     .quantity("Qty", "/qty")
///     .column("Unit", "/uom")
///     .money("Unit price", "/unit_price")
///     .money("Amount", "/line_total")
///     .total("/total")
///     .currency("/currency")
///     .status("/status")
///     .erp_url("https://erp.example.com/purchase-orders/{number}");
/// # let _ = view;
/// ```
#[derive(Clone)]
pub struct DocumentView {
    pub(super) doc_type: String,
    pub(super) title: String,
    header: Vec<Field>,
    lines: Option<String>,
    columns: Vec<Field>,
    total: Option<String>,
    currency: Option<String>,
    status: Option<String>,
    vendor: Option<String>,
    erp_url: Option<String>,
    pub(super) loader: Option<DocumentLoader>,
}

impl std::fmt::Debug for DocumentView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentView")
            .field("doc_type", &self.doc_type)
            .field("title", &self.title)
            .field("loader", &self.loader.is_some())
            .finish_non_exhaustive()
    }
}

impl DocumentView {
    /// A view of documents of `doc_type` (as their draft tool records them, e.g.
    /// `purchase_order`), called `title` on their page.
    pub fn new(doc_type: impl Into<String>, title: impl Into<String>) -> Self {
        DocumentView {
            doc_type: doc_type.into(),
            title: title.into(),
            header: Vec::new(),
            lines: None,
            columns: Vec::new(),
            total: None,
            currency: None,
            status: None,
            vendor: None,
            erp_url: None,
            loader: None,
        }
    }

    /// A header field: `label` and the JSON pointer of its value. The first field is the
    /// counterparty the Drafts list shows (vendor, customer).
    pub fn field(mut self, label: impl Into<String>, pointer: impl Into<String>) -> Self {
        let pointer = pointer.into();
        if self.vendor.is_none() {
            self.vendor = Some(pointer.clone());
        }
        self.header.push(Field {
            label: label.into(),
            pointer,
            format: Format::Text,
        });
        self
    }

    /// Where the lines are: the pointer of an array of objects.
    pub fn lines(mut self, pointer: impl Into<String>) -> Self {
        self.lines = Some(pointer.into());
        self
    }

    /// A text column of the lines (pointer within one line).
    pub fn column(self, label: impl Into<String>, pointer: impl Into<String>) -> Self {
        self.push_column(label, pointer, Format::Text)
    }

    /// A quantity column of the lines.
    pub fn quantity(self, label: impl Into<String>, pointer: impl Into<String>) -> Self {
        self.push_column(label, pointer, Format::Number)
    }

    /// A money column of the lines, in the view's currency.
    pub fn money(self, label: impl Into<String>, pointer: impl Into<String>) -> Self {
        self.push_column(label, pointer, Format::Money)
    }

    fn push_column(
        mut self,
        label: impl Into<String>,
        pointer: impl Into<String>,
        format: Format,
    ) -> Self {
        self.columns.push(Field {
            label: label.into(),
            pointer: pointer.into(),
            format,
        });
        self
    }

    /// The pointer of the document's total.
    pub fn total(mut self, pointer: impl Into<String>) -> Self {
        self.total = Some(pointer.into());
        self
    }

    /// The pointer of the currency code of every amount.
    pub fn currency(mut self, pointer: impl Into<String>) -> Self {
        self.currency = Some(pointer.into());
        self
    }

    /// The pointer of the document's status.
    pub fn status(mut self, pointer: impl Into<String>) -> Self {
        self.status = Some(pointer.into());
        self
    }

    /// The document's page in the ERP's own UI: `{number}` and `{id}` are replaced
    /// (percent-encoded).
    pub fn erp_url(mut self, template: impl Into<String>) -> Self {
        self.erp_url = Some(template.into());
        self
    }

    /// Reads the document as it is now for its page (its status after a person
    /// submitted it, say); without a loader the page shows it as the draft tool returned
    /// it.
    pub fn loader<F, Fut>(mut self, load: F) -> Self
    where
        F: Fn(i64, DocumentId, String) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Option<Value>, String>> + Send + 'static,
    {
        self.loader = Some(Arc::new(move |b, id, n| Box::pin(load(b, id, n))));
        self
    }

    /// The ERP link of document `id` / `number`.
    pub(super) fn erp_href(&self, id: &DocumentId, number: &str) -> Option<String> {
        let t = self.erp_url.as_ref()?;
        Some(
            t.replace("{number}", &super::render::path_segment(number))
                .replace("{id}", &super::render::path_segment(&id.to_string())),
        )
    }

    fn currency_of(&self, doc: &Value) -> String {
        self.currency
            .as_deref()
            .and_then(|p| doc.pointer(p))
            .map(text_of)
            .unwrap_or_default()
    }

    /// The counterparty, total and status, for the Drafts list.
    pub(super) fn summary(&self, doc: &Value) -> Value {
        let currency = self.currency_of(doc);
        json!({
            "vendor": self.vendor.as_deref().and_then(|p| doc.pointer(p)).map(text_of),
            "total": self.total.as_deref().and_then(|p| doc.pointer(p))
                .map(|v| money(&text_of(v), &currency)),
            "status": self.status.as_deref().and_then(|p| doc.pointer(p)).map(text_of),
        })
    }

    /// What makes two documents of this type the same order for a person: the
    /// counterparty and the lines' text and quantity columns (not prices), lines sorted.
    /// `None` without a counterparty or lines.
    pub(super) fn identity(&self, doc: &Value) -> Option<(String, Vec<Vec<String>>)> {
        let vendor = text_of(doc.pointer(self.vendor.as_deref()?)?);
        let mut lines: Vec<Vec<String>> = doc
            .pointer(self.lines.as_deref()?)?
            .as_array()?
            .iter()
            .map(|line| {
                self.columns
                    .iter()
                    .filter(|c| c.format != Format::Money)
                    .map(|c| {
                        let v = line.pointer(&c.pointer).map(text_of).unwrap_or_default();
                        // 20, "20" and "20.00" are the same quantity.
                        match v.parse::<rust_decimal::Decimal>() {
                            Ok(d) => d.normalize().to_string(),
                            Err(_) => v,
                        }
                    })
                    .collect()
            })
            .collect();
        lines.sort();
        (!vendor.is_empty() && !lines.is_empty()).then_some((vendor, lines))
    }

    /// `doc` as the templates show it: header, columns, lines, total, status.
    pub(super) fn render(&self, doc: &Value) -> Value {
        let currency = self.currency_of(doc);
        let show = |v: Option<&Value>, f: Format| -> String {
            let t = v.map(text_of).unwrap_or_default();
            match f {
                Format::Text => t,
                Format::Number => group(&t),
                Format::Money => money(&t, &currency),
            }
        };
        let header: Vec<Value> = self
            .header
            .iter()
            .map(|h| json!({"label": h.label, "value": show(doc.pointer(&h.pointer), h.format)}))
            .collect();
        let lines: Vec<Vec<String>> = self
            .lines
            .as_deref()
            .and_then(|p| doc.pointer(p))
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|line| {
                        self.columns
                            .iter()
                            .map(|c| show(line.pointer(&c.pointer), c.format))
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let columns: Vec<Value> = self
            .columns
            .iter()
            .map(|c| json!({"label": c.label, "num": c.format != Format::Text}))
            .collect();
        json!({
            "title": self.title, "header": header, "columns": columns, "lines": lines,
            "total": self.total.as_deref().and_then(|p| doc.pointer(p))
                .map(|v| money(&text_of(v), &currency)),
            "status": self.status.as_deref().and_then(|p| doc.pointer(p)).map(text_of),
        })
    }
}

/// A JSON value as text: strings as they are, numbers and booleans spelled, others as
/// JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A decimal with its integer digits grouped by thousands (`1848000.5` → `1 848 000.5`,
/// with narrow no-break spaces); other text as it is.
pub(super) fn group(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", text),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// An amount with two decimals, grouped, and its currency: `1 848 000.00 IDR`.
pub(super) fn money(text: &str, currency: &str) -> String {
    let fixed = match text.parse::<rust_decimal::Decimal>() {
        Ok(d) => format!("{:.2}", d.round_dp(2)),
        Err(_) => return text.to_string(),
    };
    let grouped = group(&fixed);
    if currency.is_empty() {
        grouped
    } else {
        format!("{grouped} {currency}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_people_write_them() {
        assert_eq!(group("1848000"), "1\u{202f}848\u{202f}000");
        assert_eq!(group("-1234.5"), "-1\u{202f}234.5");
        assert_eq!(group("999"), "999");
        assert_eq!(group("n/a"), "n/a");
        assert_eq!(money("1848000", "IDR"), "1\u{202f}848\u{202f}000.00 IDR");
        assert_eq!(money("16800.005", ""), "16\u{202f}800.00");
    }

    #[test]
    fn a_view_reads_header_lines_and_total() {
        let view = DocumentView::new("po", "Purchase order")
            .field("Vendor", "/vendor")
            .lines("/lines")
            .column("Item", "/item")
            .money("Amount", "/amount")
            .total("/total")
            .currency("/cur")
            .erp_url("https://erp/po/{number}");
        let doc = json!({"vendor": "PT A", "cur": "IDR", "total": "1500",
            "lines": [{"item": "X", "amount": "1500"}]});
        let r = view.render(&doc);
        assert_eq!(r["header"][0]["value"], "PT A");
        assert_eq!(r["lines"][0][1], "1\u{202f}500.00 IDR");
        assert_eq!(r["total"], "1\u{202f}500.00 IDR");
        assert_eq!(view.summary(&doc)["vendor"], "PT A");
        assert_eq!(
            view.erp_href(&DocumentId::Number(3), "PO 1/2").as_deref(),
            Some("https://erp/po/PO%201%2F2")
        );
    }
}
