//! The tiers a tool may declare.

/// The tier of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// `tier = "read"`
    Read,
    /// `tier = "draft"`
    Draft,
}
