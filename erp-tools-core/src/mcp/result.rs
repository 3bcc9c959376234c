//! The MCP result of a finished call ([`call_tool_result`]): structured content plus the
//! text for the model, or a tool error with its structured form in `_meta`.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::runtime::CallOutcome;

/// `_meta` key carrying the structured form of a tool error (kind, allowed values,
/// missing scopes) on `isError` results.
pub const ERROR_META_KEY: &str = "erp-tools/error";

/// The MCP result of a call: `structuredContent` plus the text for the model on success;
/// on tool errors and denials, `isError: true` with the model-facing text.
///
/// An error result carries no `structuredContent`: clients (the MCP Inspector among them)
/// validate any `structuredContent` against the tool's `outputSchema`, which describes
/// the successful result. The structured error goes in `_meta` under [`ERROR_META_KEY`].
pub fn call_tool_result(outcome: CallOutcome) -> CallToolResult {
    if outcome.is_error() {
        let mut result = CallToolResult::error(vec![ContentBlock::text(outcome.text)]);
        let mut meta = rmcp::model::JsonObject::new();
        meta.insert(ERROR_META_KEY.into(), outcome.structured);
        result.meta = Some(rmcp::model::MetaObject(meta));
        result
    } else {
        let mut result = CallToolResult::success(vec![ContentBlock::text(outcome.text)]);
        result.structured_content = Some(outcome.structured);
        result
    }
}
