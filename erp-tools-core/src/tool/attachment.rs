//! Documents a handler attaches to its result ([`ToolContext::attach`](super::context::ToolContext::attach)):
//! a CSV report, a printable PDF, a JSON export, a picture. An MCP client receives each
//! as content of the result beside the text for the model: an image as `image` content,
//! anything else as an embedded `resource`.

use std::sync::{Arc, Mutex};

use super::error::{ToolError, ToolErrorKind};
use crate::text::handler::{ATTACHMENT_NEXT_STEP, attachment_refused};

/// Most bytes of attachments one call may carry (all its attachments together): 512 KiB.
/// A result travels as one server-sent event, and the official Python MCP client refuses
/// an event over 1 MiB (a binary attachment grows by a third in base64); hosts also pass
/// results to the model's context and store them. A larger document belongs in the ERP,
/// linked by its number, or in a narrower report.
pub const MAX_ATTACHMENT_BYTES: usize = 512 * 1024;

/// A document attached to a call's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    uri: String,
    mime_type: String,
    body: Body,
}

/// What an attachment holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// Text (CSV, JSON, plain text), sent as it is.
    Text(String),
    /// Bytes (a PDF, an image), sent base64-encoded.
    Bytes(Vec<u8>),
}

impl Attachment {
    /// A text document: `uri` names it (e.g. `erp://reports/stock-valuation/SBY-01.csv`),
    /// `mime_type` says what it is (`text/csv`, `application/json`).
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Attachment {
            uri: uri.into(),
            mime_type: mime_type.into(),
            body: Body::Text(text.into()),
        }
    }

    /// A binary document (`application/pdf`, `image/png`).
    pub fn bytes(uri: impl Into<String>, mime_type: impl Into<String>, bytes: Vec<u8>) -> Self {
        Attachment {
            uri: uri.into(),
            mime_type: mime_type.into(),
            body: Body::Bytes(bytes),
        }
    }

    /// The document's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its media type.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// Its size in bytes (text as UTF-8).
    pub fn len(&self) -> usize {
        match &self.body {
            Body::Text(text) => text.len(),
            Body::Bytes(bytes) => bytes.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn body(&self) -> &Body {
        &self.body
    }

    /// Why the attachment cannot be sent, if it cannot: no URI scheme, no media type.
    pub(crate) fn problem(&self) -> Option<String> {
        let scheme = self.uri.split_once(':').map(|(s, _)| s).unwrap_or("");
        let valid_scheme = !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !valid_scheme {
            return Some(format!(
                "the attachment's uri `{}` has no scheme; name it like \
                 `erp://reports/stock-valuation.csv`",
                self.uri
            ));
        }
        if !self.mime_type.contains('/') {
            return Some(format!(
                "the attachment `{}` has no media type (`{}`); give one like `text/csv`",
                self.uri, self.mime_type
            ));
        }
        None
    }
}

/// Where a call's attachments go: set by the protocol layer; emptied before each run of
/// the call (a run that asked a question sends nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct AttachmentSink(Arc<Mutex<Vec<Attachment>>>);

impl AttachmentSink {
    /// An empty sink.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The attachments so far, leaving the sink empty.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn take(&self) -> Vec<Attachment> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds `attachment` if it is well-formed and the call's attachments stay within
    /// [`MAX_ATTACHMENT_BYTES`].
    pub(crate) fn add(&self, attachment: Attachment) -> Result<(), ToolError> {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let total: usize = held.iter().map(Attachment::len).sum();
        check(&attachment, total)?;
        held.push(attachment);
        Ok(())
    }
}

/// Refuses an `attachment` that is malformed or takes the call's attachments (`total`
/// bytes so far) over [`MAX_ATTACHMENT_BYTES`].
pub(crate) fn check(attachment: &Attachment, total: usize) -> Result<(), ToolError> {
    if let Some(problem) = attachment.problem() {
        return Err(refused(&problem));
    }
    if total.saturating_add(attachment.len()) > MAX_ATTACHMENT_BYTES {
        return Err(refused(&format!(
            "the attachments of one call may hold {MAX_ATTACHMENT_BYTES} bytes; `{}` ({} bytes) \
             would take them to {}",
            attachment.uri,
            attachment.len(),
            total + attachment.len()
        )));
    }
    Ok(())
}

fn refused(why: &str) -> ToolError {
    ToolError::new(ToolErrorKind::Rejected, attachment_refused(why)).next_step(ATTACHMENT_NEXT_STEP)
}
