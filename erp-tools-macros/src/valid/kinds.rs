//! The draft tier's default deny: what each field of a draft tool's arguments is (a
//! reference, a quantity, a unit, a date asked for, a note, lines, a choice), from its
//! declaration `#[erp(kind = "..", of = "..")]`, its name, or its type; a field of no kind
//! is refused when a draft tool takes it.

use erp_tools_internals::names::{self, Kind, NameKinds};
use proc_macro2::TokenStream;
use syn::Type;

use crate::ast::{ArgsInput, Field};
use crate::errors::Errors;

/// One field's kind check in a draft tool: its item's shape must be one of `mask`, or
/// (when the kind comes from the name alone) its type must declare a kind of its own.
pub(crate) struct KindCheck {
    /// Where the error points (the field's name).
    pub at: TokenStream,
    /// The field's type.
    pub ty: Type,
    /// The shapes the kind may have ([`names::shape`]).
    pub mask: u16,
    /// Whether the kind was declared (then the type's own kind does not count).
    pub declared: bool,
    /// The compile error.
    pub message: String,
}

/// `#[erp(kind = "..", of = "..")]` on a field, checked: a known kind, `of` only on a
/// reference.
pub(super) fn declared_kind(field: &Field, errors: &mut Errors) -> Option<(Kind, Option<String>)> {
    let (kind, of) = (&field.bounds.kind, &field.bounds.of);
    if let (None, Some(o)) = (kind, of) {
        errors.spanned(
            o,
            "`of` says what a declared reference refers to; write it with `kind = \"reference\"`, e.g. \
             `#[erp(kind = \"reference\", of = \"vendor\")]`",
        );
        return None;
    }
    let lit = kind.as_ref()?;
    let Some(k) = Kind::parse(&lit.value()) else {
        let keys = Kind::ALL.map(Kind::key);
        let hint = names::closest(&lit.value(), &keys)
            .map(|b| format!("did you mean `{b}`? "))
            .unwrap_or_default();
        errors.spanned(
            lit,
            format!(
                "unknown kind `{}`; {hint}a draft field is one of: {} (e.g. `#[erp(kind = \"reference\", of = \
                 \"vendor\")]`)",
                lit.value(),
                keys.join(", ")
            ),
        );
        return None;
    };
    if let Some(o) = of {
        if k != Kind::Reference {
            errors.spanned(
                o,
                format!(
                    "`of` goes with `kind = \"reference\"`, not `kind = \"{}\"`; remove it",
                    k.key()
                ),
            );
        } else if o.value().trim().is_empty() {
            errors.spanned(
                o,
                "`of` is empty; name what the reference refers to, e.g. `of = \"vendor\"`",
            );
        }
    }
    Some((k, of.as_ref().map(|o| o.value())))
}

/// The draft tier's default-deny check of one field, from its declared kind or its name.
pub(super) fn kind_check(field: &Field, declared: Option<Kind>) -> KindCheck {
    let describe = field.describe();
    let (mask, message) = match declared {
        Some(k) => (
            k.shapes(),
            names::kinds::mismatch_message(&describe, &[k], true),
        ),
        None => {
            let kinds = names::name_kinds(&field.wire);
            let message = match &kinds {
                NameKinds::Kinds(k) => names::kinds::mismatch_message(&describe, k, false),
                _ => names::kinds::unknown_message(&field.wire, &describe),
            };
            (kinds.shapes(), message)
        }
    };
    KindCheck {
        at: field.name_tokens(),
        ty: field.ty.clone(),
        mask,
        declared: declared.is_some(),
        message,
    }
}

/// A newtype's own name: the kinds it says (`VendorCode` a reference, `Qty` a quantity),
/// one bit a kind, or a draft refusal (`UnitPrice`): `(where, message, name)`.
pub(super) fn newtype_name(input: &ArgsInput) -> (u16, Option<(TokenStream, String, String)>) {
    let own = input.ident.to_string();
    if let Some(why) = names::classify_draft(&own) {
        let refusal = (
            quote::ToTokens::to_token_stream(input.ident),
            names::draft_message(&own, why),
            own,
        );
        return (0, Some(refusal));
    }
    match names::name_kinds(&own) {
        NameKinds::Kinds(kinds) => (kinds.iter().fold(0, |m, k| m | k.bit()), None),
        _ => (0, None),
    }
}
