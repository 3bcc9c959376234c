//! The whole judgement of one draft field, as `#[derive(ToolArgs)]` and
//! `#[erp_tool(tier = "draft")]` reach it together: the refusals first, then the kind its
//! declaration, name or type gives it.

use super::forbidden::{DraftForbidden, Forbidden, classify, classify_draft};
use super::kinds::{Kind, NameKinds, name_kinds};
use super::lexicon::COUNTERPARTIES;

/// What the guard says of one field of a draft tool's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DraftVerdict {
    /// Taken, as what the name, the declaration or the type says it is.
    Allowed(NameKinds),
    /// Refused in every tier (a company, a person, an ambiguous party not declared).
    EveryTier(Forbidden),
    /// Refused in draft tools by a category an opt-in may name (status, price, ...).
    Draft(DraftForbidden),
    /// The name or declaration says a kind the type does not fit.
    Mismatch(Vec<Kind>),
    /// The framework cannot tell what the field is.
    Unknown,
}

/// Judges one draft field as `#[derive(ToolArgs)]` and `#[erp_tool(tier = "draft")]`
/// together do: `item_shape` is the [`shape`](super::kinds::shape) of the field's innermost item,
/// `declared` its `#[erp(kind = "..", of = "..")]`, `type_has_kind` whether its type
/// declares a kind of its own (a newtype named for what it is). The derive reaches the
/// same verdict, the name part when it expands and the type part when the draft tool's
/// arguments are checked; this function lets tests and the model counts ask directly.
pub fn judge_draft(
    wire: &str,
    item_shape: u16,
    declared: Option<(Kind, Option<&str>)>,
    type_has_kind: bool,
) -> DraftVerdict {
    if let Some(why) = classify(wire) {
        let lifted = matches!(why, Forbidden::Ambiguous(_))
            && declared
                .is_some_and(|(k, of)| k == Kind::Reference && of.is_some_and(is_counterparty));
        if !lifted {
            return DraftVerdict::EveryTier(why);
        }
    }
    if let Some(why) = classify_draft(wire) {
        return DraftVerdict::Draft(why);
    }
    if let Some((kind, _)) = declared {
        return if kind.shapes() & item_shape != 0 {
            DraftVerdict::Allowed(NameKinds::Kinds(vec![kind]))
        } else {
            DraftVerdict::Mismatch(vec![kind])
        };
    }
    let kinds = name_kinds(wire);
    if kinds.shapes() & item_shape != 0 || type_has_kind {
        return DraftVerdict::Allowed(kinds);
    }
    match kinds {
        NameKinds::Kinds(k) => DraftVerdict::Mismatch(k),
        _ => DraftVerdict::Unknown,
    }
}

/// Whether `of` names a counterparty a declared reference may stand for.
pub fn is_counterparty(of: &str) -> bool {
    COUNTERPARTIES.contains(&of)
}

#[cfg(test)]
#[path = "kinds_tests.rs"]
mod tests;
