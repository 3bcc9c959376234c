//! The cards: static HTML with their script inline, served as `ui://` resources.

use serde_json::{Value, json};

/// The extension's identifier, declared under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a card.
pub const CARD_MIME: &str = "text/html;profile=mcp-app";

/// The draft card: the document a draft tool created.
pub const DRAFT_CARD: &str = "ui://erp-tools/draft-card.html";

/// The approval card: an action waiting for a person's decision, with Approve / Reject.
pub const APPROVAL_CARD: &str = "ui://erp-tools/approval-card.html";

/// The content-security policy every card carries in its page: nothing is loaded from
/// or sent to anywhere (no network, no frames, no forms); only the card's own inline
/// script and style run. It talks to the host over `postMessage` only.
pub const CARD_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; img-src data:; connect-src 'none'; frame-src 'none'; \
    form-action 'none'; base-uri 'none'";

const DRAFT_HTML: &str = include_str!("draft_card.html");
const APPROVAL_HTML: &str = include_str!("approval_card.html");
const CLIENT_JS: &str = include_str!("card_client.js");
const STYLE: &str = include_str!("card.css");

/// The page of card `uri` (one of [`DRAFT_CARD`], [`APPROVAL_CARD`]), with its policy,
/// style and script inline; `None` for any other URI.
pub fn card_html(uri: &str) -> Option<String> {
    let body = match uri {
        DRAFT_CARD => DRAFT_HTML,
        APPROVAL_CARD => APPROVAL_HTML,
        _ => return None,
    };
    Some(
        body.replace("{{CSP}}", CARD_CSP)
            .replace("{{STYLE}}", STYLE)
            .replace("{{CLIENT}}", CLIENT_JS),
    )
}

/// Whether `uri` names a card this crate serves, without rendering its page (asked for
/// every request's server info).
pub(super) fn is_card(uri: &str) -> bool {
    matches!(uri, DRAFT_CARD | APPROVAL_CARD)
}

/// The name and description of card `uri` in `resources/list`.
pub(super) fn card_title(uri: &str) -> (&'static str, &'static str) {
    match uri {
        APPROVAL_CARD => (
            "Approval card",
            "An action waiting for approval, with Approve and Reject for a reviewer.",
        ),
        _ => (
            "Draft card",
            "The drafted document: vendor, lines, prices, total; a person must submit it.",
        ),
    }
}

/// The resource `_meta.ui` of a card (SEP-1865): no outside domain may be reached or
/// loaded from, and a border suits it.
pub(super) fn card_meta() -> Value {
    json!({
        "ui": {
            "csp": { "connectDomains": [], "resourceDomains": [], "frameDomains": [] },
            "prefersBorder": true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_carries_the_policy_and_no_outside_reference() {
        for uri in [DRAFT_CARD, APPROVAL_CARD] {
            let html = card_html(uri).unwrap();
            assert!(html.contains(CARD_CSP), "{uri}");
            assert!(!html.contains("{{"), "{uri}: a placeholder is left");
            assert!(
                !html.contains("innerHTML"),
                "{uri}: text must go in as text"
            );
            for outside in ["src=\"http", "href=\"http", "@import", "url(http"] {
                assert!(!html.contains(outside), "{uri} references {outside}");
            }
        }
        assert_eq!(card_html("ui://other"), None);
    }
}
