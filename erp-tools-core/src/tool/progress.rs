//! Progress a handler reports while it runs ([`ToolContext::progress`](super::context::ToolContext::progress)),
//! for a client that asked for it (an MCP request carrying a `progressToken`).

use std::sync::Arc;

/// One report of how far a call is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProgressNote {
    /// Work done so far; increases with every report.
    pub done: f64,
    /// All the work, if known.
    pub total: Option<f64>,
    /// What is being done now, for a person.
    pub message: Option<String>,
}

/// Where a call's progress reports go. Set by the protocol layer for a caller that asked
/// for progress; a report must not wait (it is dropped when the client is not keeping up,
/// as progress is advisory).
#[derive(Clone)]
pub(crate) struct ProgressSink(Arc<dyn Fn(ProgressNote) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `send` for every report.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn new(send: impl Fn(ProgressNote) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(send))
    }

    pub(crate) fn report(&self, note: ProgressNote) {
        (self.0)(note)
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}
