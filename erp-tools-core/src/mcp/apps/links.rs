//! [`McpApps`]: what the cards link to and, with the `agent` feature, the approval queue
//! the approval card decides in.

#[cfg(feature = "agent")]
use super::approvals::Approvals;

/// The MCP Apps set-up of a server: where the cards link, and which approvals they
/// decide. `McpApps::default()` serves the draft card with no links.
///
/// ```
/// use erp_tools_core::mcp::apps::McpApps;
///
/// let apps = McpApps::new()
///     .console_url("https://erp.example.com/review")
///     .erp_document_url("https://erp.example.com/po/{number}");
/// assert_eq!(apps.document_link("PO-1").as_deref(), Some("https://erp.example.com/po/PO-1"));
/// assert_eq!(
///     apps.console_document_link("purchase_order", "PO-1").as_deref(),
///     Some("https://erp.example.com/review/documents/purchase_order/PO-1"),
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct McpApps {
    console_url: Option<String>,
    erp_document_url: Option<String>,
    #[cfg(feature = "agent")]
    pub(super) approvals: Option<Approvals>,
    #[cfg(feature = "agent")]
    pub(super) people: Option<People>,
}

/// Names a person by user id (the approval card's "proposed for" and "decided by").
#[cfg(feature = "agent")]
#[derive(Clone)]
pub(super) struct People(pub(super) crate::agent::PeopleFn);

#[cfg(feature = "agent")]
impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("People(..)")
    }
}

impl McpApps {
    /// No links, no approvals.
    pub fn new() -> Self {
        Self::default()
    }

    /// The review console's address as a browser reaches it, e.g.
    /// `https://erp.example.com/review`: the draft card links to the run's page and the
    /// document's page there.
    pub fn console_url(mut self, url: impl Into<String>) -> Self {
        self.console_url = Some(url.into().trim_end_matches('/').to_string());
        self
    }

    /// The ERP's page of a document, `{number}` standing for its number and `{id}` for its
    /// id, e.g. `https://erp.example.com/po/{number}`.
    pub fn erp_document_url(mut self, template: impl Into<String>) -> Self {
        self.erp_document_url = Some(template.into());
        self
    }

    /// The console page of run `run_id`, if a console URL is set.
    pub fn run_link(&self, run_id: &str) -> Option<String> {
        self.console_url
            .as_ref()
            .map(|base| format!("{base}/runs/{}", percent(run_id)))
    }

    /// The console page of document `number` of type `doc_type` (e.g. `purchase_order`),
    /// if a console URL is set.
    pub fn console_document_link(&self, doc_type: &str, number: &str) -> Option<String> {
        self.console_url
            .as_ref()
            .map(|base| format!("{base}/documents/{}/{}", percent(doc_type), percent(number)))
    }

    /// The ERP page of document `number`, if a template is set.
    pub fn document_link(&self, number: &str) -> Option<String> {
        self.erp_document_url
            .as_ref()
            .map(|t| t.replace("{number}", &percent(number)))
    }

    /// The ERP page of `document`, if a template is set: `{number}` and `{id}` stand for
    /// its number and its id (a number or the system's own string id, e.g. ERPNext's
    /// `https://erp.example.com/app/purchase-order/{id}`), percent-encoded.
    pub fn document_link_of(&self, document: &crate::DocumentRef) -> Option<String> {
        self.document_link(&document.number)
            .map(|l| l.replace("{id}", &percent(&document.id.to_string())))
    }

    /// The console's approvals page, if a console URL is set.
    pub fn approvals_link(&self) -> Option<String> {
        self.console_url.as_ref().map(|b| format!("{b}/approvals"))
    }
}

/// `s` with everything but unreserved URL characters percent-encoded.
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_encode_what_they_embed() {
        let apps = McpApps::new()
            .console_url("http://h/review/")
            .erp_document_url("http://erp/po/{number}");
        assert_eq!(
            apps.run_link("a b/c").as_deref(),
            Some("http://h/review/runs/a%20b%2Fc")
        );
        assert_eq!(
            apps.document_link("PO\"<x>").as_deref(),
            Some("http://erp/po/PO%22%3Cx%3E")
        );
        assert_eq!(McpApps::new().run_link("r"), None);
        let by_id = McpApps::new().erp_document_url("http://erp/app/purchase-order/{id}");
        let doc = crate::DocumentRef::new("purchase_order", "PUR-ORD 2026/1", "PUR-ORD 2026/1");
        assert_eq!(
            by_id.document_link_of(&doc).as_deref(),
            Some("http://erp/app/purchase-order/PUR-ORD%202026%2F1")
        );
    }
}
