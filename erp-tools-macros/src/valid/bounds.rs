//! The meaning of `#[erp(..)]` bounds: they must be consistent (`min <= max`, a pattern
//! that compiles) and sit on a field that is read from the wire. Whether the field's
//! type can carry the bound (a number for `min`, text for `pattern`, text or a list for
//! `len`) is checked by the expansion, on the type's own `ToolArgs` constants, so a type
//! alias or a wrapper is judged by what it is, not by how it is spelled.

use std::cmp::Ordering;

use crate::ast::{Field, last_ident};
use crate::errors::Errors;

/// Checks one field's `header = ".."`: on a value of its own that every call sends, and
/// not the header of another field of the struct (header names are case-insensitive).
/// Whether the type is text, a number, an enum or a boolean is checked by the expansion.
pub(super) fn check_header(field: &Field, seen: &mut Vec<String>, errors: &mut Errors) {
    let Some(header) = &field.bounds.header else {
        return;
    };
    let name = header.value();
    if field.serde.flatten.is_some() {
        errors.spanned(
            header,
            format!(
                "`{}` is flattened, so it has no value of its own to send as a header; put `header = \"{name}\"` on a field of the flattened struct",
                field.ident
            ),
        );
    } else if last_ident(field.ty).as_deref() == Some("Option") {
        errors.spanned(
            header,
            format!(
                "`{}` is optional, and MCP clients refuse a header on an optional value (SEP-2243): make the field required, or remove `header = \"{name}\"`",
                field.ident
            ),
        );
    } else if seen.iter().any(|s| s.eq_ignore_ascii_case(&name)) {
        errors.spanned(
            header,
            format!(
                "another field is already sent as the header `{name}` (header names are case-insensitive); give each field its own header name"
            ),
        );
    } else {
        seen.push(name);
    }
}

/// Checks one field's bounds.
pub(super) fn check_bounds(field: &Field, errors: &mut Errors) {
    let b = &field.bounds;
    if b.is_empty() {
        return;
    }
    let at = b.span.unwrap_or_else(proc_macro2::Span::call_site);
    if field.serde.skip {
        errors.at(
            at,
            format!(
                "`{}` is skipped by serde, so it is never read and its bounds would never be checked; remove \
                 `#[erp(..)]` or the skip",
                field.ident
            ),
        );
        return;
    }
    if field.serde.flatten.is_some() {
        errors.at(
            at,
            format!(
                "`{}` is flattened, so it has no value of its own to bound; put `#[erp(..)]` on the fields of the \
                 flattened struct",
                field.ident
            ),
        );
        return;
    }
    if let (Some(min), Some(max)) = (&b.min, &b.max)
        && compare(&min.text, &max.text) == Ordering::Greater
    {
        errors.at(
            min.span,
            format!(
                "`min = {}` is more than `max = {}`, so no value is allowed; swap them",
                min.text, max.text
            ),
        );
    }
    if let Some(span) = b.positive {
        if let Some(min) = &b.min {
            errors.at(
                span,
                format!(
                    "`positive` and `min = {}` both set the smallest value; keep one (`positive` means more than 0)",
                    min.text
                ),
            );
        }
        if let Some(max) = &b.max
            && compare(&max.text, "0") != Ordering::Greater
        {
            errors.at(
                max.span,
                format!(
                    "`positive` with `max = {}` allows no value; a positive value is more than 0",
                    max.text
                ),
            );
        }
    }
    if let Some(pattern) = &b.pattern {
        let source = pattern.value();
        if source.is_empty() {
            errors.spanned(
                pattern,
                "an empty `pattern` matches only empty text; write the expression the whole value must match, \
                 e.g. `pattern = \"^[A-Z]{2}-[0-9]+$\"`",
            );
        } else if let Err(e) = regex_syntax::Parser::new().parse(&source) {
            let detail = e.to_string();
            let last = detail
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            errors.spanned(
                pattern,
                format!(
                    "`pattern` is not a valid regular expression ({}); fix it, e.g. `pattern = \"^[A-Z]{{2}}-[0-9]+$\"`",
                    last.trim().trim_start_matches("error: ")
                ),
            );
        }
    }
}

/// Compares two plain decimal texts (`-5`, `0.25`, `1000`) exactly.
pub(super) fn compare(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> (bool, String, String) {
        let (neg, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let mut it = body.splitn(2, '.');
        let int = it.next().unwrap_or("").trim_start_matches('0').to_string();
        let frac = it.next().unwrap_or("").trim_end_matches('0').to_string();
        let zero = int.is_empty() && frac.is_empty();
        (neg && !zero, int, frac)
    }
    let (an, ai, af) = parts(a);
    let (bn, bi, bf) = parts(b);
    let magnitude = ai
        .len()
        .cmp(&bi.len())
        .then_with(|| ai.cmp(&bi))
        .then_with(|| af.cmp(&bf));
    match (an, bn) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
    }
}

#[cfg(test)]
mod tests {
    use super::compare;
    use std::cmp::Ordering::*;

    #[test]
    fn decimal_texts_compare_exactly() {
        for (a, b, want) in [
            ("1", "1000", Less),
            ("1000", "999.99", Greater),
            ("-5", "0", Less),
            ("-5", "-10", Greater),
            ("0.10", "0.1", Equal),
            ("-0", "0", Equal),
            ("007", "7.000", Equal),
            ("0.01", "0.009", Greater),
        ] {
            assert_eq!(compare(a, b), want, "{a} vs {b}");
        }
    }
}
