//! Cancellation a handler can see ([`ToolContext::is_cancelled`](super::context::ToolContext::is_cancelled)):
//! set by the protocol layer when the caller cancels a call that runs as a task.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a call was cancelled; shared by the context and the protocol layer.
#[derive(Clone, Debug, Default)]
pub(crate) struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag not set.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Sets the flag: the call was cancelled.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
