//! Tool definitions and results as an apps host sees them: the card link on a tool, the
//! links on its result, and the approval card's tools.

use rmcp::model::{CallToolResult, MetaObject, Tool};
use serde_json::{Value, json};

use super::links::McpApps;
use crate::DocumentRef;
use crate::registry::RegisteredTool;
use crate::tool::context::Principal;

/// `_meta` key of a card result's links (`run`, `console_document`, `document`) and the
/// drafted document as recorded (`document_ref`: type, id as the system gave it, number), for the
/// card to show.
pub const LINKS_META_KEY: &str = "erp-tools/links";

/// `tool` (as `tools/list` serves it) with `_meta.ui.resourceUri` set to its card, for a
/// host that declared the extension; unchanged when it has none.
pub(crate) fn tool_with_card(registered: &RegisteredTool, mut tool: Tool) -> Tool {
    let Some(uri) = registered.card() else {
        return tool;
    };
    let mut meta = tool.meta.take().unwrap_or_default();
    meta.0.insert(
        "ui".into(),
        json!({ "resourceUri": uri, "visibility": ["model", "app"] }),
    );
    // The key hosts read before the nested form was settled (ext-apps reads both).
    meta.0.insert("ui/resourceUri".into(), Value::from(uri));
    tool.meta = Some(meta);
    tool
}

/// Adds the links a card shows (the run's page and the document's page in the review
/// console, the document in the ERP) to a successful result of a tool with a card; the
/// text and the structured content stay as they are. The document is the one the call
/// drafted (or replayed); a tool that records none is linked by its output's `number`.
pub(crate) fn decorate_result(
    apps: &McpApps,
    registered: &RegisteredTool,
    result: &mut CallToolResult,
    run_id: &str,
    document: Option<&DocumentRef>,
) {
    if registered.card().is_none() || result.is_error == Some(true) {
        return;
    }
    let number = document.map(|d| d.number.as_str()).or_else(|| {
        result
            .structured_content
            .as_ref()
            .and_then(|s| s.get("number"))
            .and_then(Value::as_str)
    });
    let links = json!({
        "run": apps.run_link(run_id),
        "console_document": document.and_then(|d| apps.console_document_link(&d.doc_type, &d.number)),
        "document": match document {
            Some(d) => apps.document_link_of(d),
            None => number.and_then(|n| apps.document_link(n)),
        },
        // The document as the system holding it names it (its id a number or a string).
        "document_ref": document,
    });
    let meta = result.meta.get_or_insert_with(MetaObject::default);
    meta.0.insert(LINKS_META_KEY.into(), links);
}

/// The app tools `principal` may see (the approval card's, with the `agent` feature).
pub(crate) fn app_tools(apps: &McpApps, principal: &Principal) -> Vec<Tool> {
    #[cfg(feature = "agent")]
    {
        super::decisions::tools_for(apps, principal)
    }
    #[cfg(not(feature = "agent"))]
    {
        let _ = (apps, principal);
        Vec::new()
    }
}
