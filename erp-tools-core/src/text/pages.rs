//! What a model reads about pages and result sizes: a page's header and continuation,
//! a refused cursor, and a result over the budget.

use super::handler::NOTHING_CHANGED;
use crate::tool::error::{ToolError, ToolErrorKind};

/// Why a cursor is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CursorRefusal {
    /// Not a cursor this server issued, or altered.
    Invalid,
    /// Past its lifetime.
    Expired,
    /// Issued to another user or branch.
    OtherPerson,
    /// Issued by another tool.
    OtherTool,
    /// Issued for other values of the other arguments.
    OtherFilters,
}

/// A call whose cursor cannot be used.
pub(crate) fn cursor_refused(tool: &str, why: CursorRefusal) -> ToolError {
    let reason = match why {
        CursorRefusal::Invalid => "it was altered or not issued by this server".to_string(),
        CursorRefusal::Expired => "it has expired".to_string(),
        CursorRefusal::OtherPerson => "it was issued to another user".to_string(),
        CursorRefusal::OtherTool => format!("it was issued by another tool, not {tool}"),
        CursorRefusal::OtherFilters => "it was issued for other argument values; a cursor \
             continues only the list it came from"
            .to_string(),
    };
    let next = match why {
        CursorRefusal::OtherFilters => format!(
            "Send the cursor with exactly the arguments of the call that returned it, or call \
             {tool} with cursor null to start this list from its first page."
        ),
        _ => format!("Call {tool} again with cursor null to start from the first page."),
    };
    ToolError::new(
        ToolErrorKind::InvalidArguments,
        format!("The cursor was not accepted: {reason}."),
    )
    .next_step(next)
    .not_done(NOTHING_CHANGED)
}

/// The first line of a page's text: which items it holds.
pub(crate) fn page_header(tool: &str, first: u64, count: usize, has_more: bool) -> String {
    if count == 0 {
        return if first == 1 {
            format!("{tool}: no items.")
        } else {
            format!("{tool}: no more items.")
        };
    }
    let last = first + count as u64 - 1;
    let tail = if has_more {
        "more remain"
    } else {
        "the last page"
    };
    format!("{tool}: items {first} to {last}; {tail}.")
}

/// The sentence saying a page holds fewer items than asked because of the budget.
pub(crate) fn page_shrunk(sent: usize, asked: usize) -> String {
    format!(
        "This page holds {sent} of the {asked} items asked for: more would not fit the size \
         limit of one result."
    )
}

/// The last line of a page that has a next one: how to ask for it.
pub(crate) fn page_next(tool: &str, cursor: &str) -> String {
    format!("For the next page, call {tool} again with the same arguments and cursor \"{cursor}\".")
}

/// A page tool whose single next item is larger than the whole budget.
pub(crate) fn item_over_budget(tool: &str, tokens: u32, budget: u32) -> ToolError {
    ToolError::new(
        ToolErrorKind::Rejected,
        format!(
            "The next item of {tool} is about {tokens} tokens, more than the {budget} tokens one \
             result may hold, so it cannot be sent."
        ),
    )
    .next_step(
        "Narrow the call with its arguments, or tell the user the item is too large to show.",
    )
    .not_done(NOTHING_CHANGED)
}

/// A result larger than the budget; `args` are the tool's argument names.
pub(crate) fn result_over_budget(tool: &str, tokens: u32, budget: u32, args: &[&str]) -> ToolError {
    let next = if args.is_empty() {
        format!(
            "{tool} takes no arguments to narrow it; tell the user its result is too large \
             to show (its result budget can be raised by the server's operator)."
        )
    } else {
        format!(
            "Call {tool} again with narrower arguments ({}) so it returns less.",
            args.join(", ")
        )
    };
    ToolError::new(
        ToolErrorKind::Rejected,
        format!(
            "The result of {tool} is about {tokens} tokens, more than the {budget} tokens one \
             result may hold; it was not sent, so as not to be cut."
        ),
    )
    .next_step(next)
    .not_done(NOTHING_CHANGED)
}
