//! The MCP result of a finished call ([`call_tool_result`]): structured content plus the
//! text for the model, or a tool error with its structured form in `_meta`.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::runtime::CallOutcome;
use crate::tool::attachment::{Attachment, Body};

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

/// `result` with the documents a successful call attached after its text: an image as
/// `image` content, anything else as an embedded `resource` (text as it is, bytes in
/// base64). A failed call sends none.
pub(super) fn with_attachments(
    mut result: CallToolResult,
    attachments: Vec<Attachment>,
) -> CallToolResult {
    if result.is_error == Some(true) {
        return result;
    }
    let base64 = base64::engine::general_purpose::STANDARD;
    for attachment in attachments {
        let uri = attachment.uri().to_string();
        let mime = attachment.mime_type().to_string();
        let block = match attachment.body() {
            Body::Bytes(bytes) if mime.starts_with("image/") => {
                ContentBlock::image(base64.encode(bytes), mime)
            }
            Body::Bytes(bytes) => ContentBlock::resource(
                ResourceContents::blob(base64.encode(bytes), uri).with_mime_type(mime),
            ),
            Body::Text(text) => ContentBlock::resource(
                ResourceContents::text(text.clone(), uri).with_mime_type(mime),
            ),
        };
        result.content.push(block);
    }
    result
}
