//! [`SurfaceLock`]: the tool surface of a registry, as a lock file writes it.

use super::diff::{self, Change};
use super::entry::Entry;
use super::fingerprint::Fingerprint;
use super::text::{self, LockParseError};
use crate::registry::ToolRegistry;

/// The tool surface of a registry, as the lock file writes it: module descriptions and
/// tools, each with every field a reviewer signs off on. See [`crate::lock`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceLock {
    entries: Vec<Entry>,
}

impl SurfaceLock {
    /// The surface `registry` compiles.
    pub fn new(registry: &ToolRegistry) -> SurfaceLock {
        SurfaceLock {
            entries: crate::registry::surface::entries(registry.tools(), registry.namespaces()),
        }
    }

    /// The lock as text: a comment header, the fingerprint, then one block per module
    /// and per tool. Stable: the same registry writes the same bytes.
    pub fn to_text(&self) -> String {
        text::write(&self.entries)
    }

    /// Reads a lock written by [`to_text`](Self::to_text) (the header's fingerprint is not
    /// trusted: it is computed again from the blocks; [`check_lock`](super::check_lock)
    /// compares the two).
    pub fn parse(text: &str) -> Result<SurfaceLock, LockParseError> {
        text::parse(text).map(|entries| SurfaceLock { entries })
    }

    /// The SHA-256 of the lock's blocks: the registry's
    /// [`fingerprint`](ToolRegistry::fingerprint) for a lock of the same surface.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(&text::body(&self.entries))
    }

    /// What changed from this lock (the committed one) to `compiled`, entry by entry:
    /// empty when they are the same surface.
    pub fn diff(&self, compiled: &SurfaceLock) -> Vec<Change> {
        diff::diff(&self.entries, &compiled.entries)
    }

    /// The names of the tools in the lock.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.kind == "tool")
            .map(|e| e.name.as_str())
    }
}
