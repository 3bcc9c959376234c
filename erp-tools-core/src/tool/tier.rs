//! [`Tier`] (what a tool may do) and [`Limit`] (a hard value limit it declares).

use serde::Serialize;

/// What a tool may do. There is no posting tier: posting, approving, sending and
/// cancelling belong to a person in the ERP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Looks things up. Gets a read-only database handle; cannot write.
    Read,
    /// Creates a document in status *draft* for a person to review and submit in the ERP.
    /// Gets the write transaction in which the idempotency key was claimed.
    Draft,
}

impl Tier {
    /// `"read"` or `"draft"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Draft => "draft",
        }
    }

    /// Whether calls of this tier write (and so need an idempotency key).
    pub fn writes(self) -> bool {
        matches!(self, Tier::Draft)
    }
}

/// A hard value limit declared on a tool with `limit = "<path> <= <max>"`.
///
/// `path` names a numeric argument (`amount`), or a numeric field of an array's items
/// (`lines[].qty`), in which case the limit applies to the sum over all items. The agent
/// policy checks limits before approvals, so an approved action over a limit is still
/// denied; the runtime checks them again on every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limit {
    /// Argument path, e.g. `amount` or `lines[].qty`.
    pub path: &'static str,
    /// Largest accepted value (or sum), as a decimal string.
    pub max: &'static str,
}
