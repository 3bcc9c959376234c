//! Wire names: serde's renaming rules, the split of a name into words, and the classifier
//! that decides whether a name may be a tool argument.
//!
//! Everything here is a pure function on strings so it can be unit-tested without a
//! compiler in the loop.

mod forbidden;
mod header;
pub mod judge;
pub mod kinds;
mod lexicon;
mod rename;
mod text;
mod units;
mod verbs;
pub mod vocab;

pub use forbidden::{
    DraftForbidden, Finding, Forbidden, classify, classify_draft, draft_message, forbidden_message,
    valid_key,
};
pub use header::header_name_problem;
pub use kinds::{Kind, NameKinds, name_kinds, shape};
pub use lexicon::{COUNTERPARTIES, words};
pub use rename::{RenameRule, segments};
pub use text::{closest, edit_distance, humanise, join_doc};
pub use units::{UnitKind, UnitWord, is_unit_like, unit_word};
pub use verbs::{is_read_scope, post_tier_verb, status_value, verb_message};

#[cfg(test)]
mod tests;
