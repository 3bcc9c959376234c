//! The checks of declared [`Bounds`]: a number, a length or a text against what the
//! field declares; each returns the problem's text when the value is out of bounds.

use rust_decimal::Decimal;
use serde_json::Value;

use super::decimal::canonical_decimal;
use super::problems::{ArgumentProblem, push};
use super::text;
use crate::schema::Bounds;

/// Checks a number; the problem's text when it is out of bounds.
pub(super) fn number_problem(b: &Bounds, value: Decimal) -> Option<String> {
    let shown = value.normalize().to_string();
    let allowed = text::bounds_numbers(b)?;
    let below = b.min.is_some_and(|m| value < m) || (b.positive && value <= Decimal::ZERO);
    let above = b.max.is_some_and(|m| value > m);
    (below || above).then(|| text::number_out_of_bounds(&shown, &allowed))
}

/// Checks a length (characters or items); the problem's text when it is out of bounds.
pub(super) fn len_problem(b: &Bounds, len: usize, unit: &str) -> Option<String> {
    let short = b.min_len.is_some_and(|m| len < m);
    let long = b.max_len.is_some_and(|m| len > m);
    (short || long).then(|| text::len_out_of_bounds(len, unit, b))
}

/// Whether `text` matches the declared pattern as a whole (true when there is none).
pub(super) fn text_matches(b: &Bounds, text: &str) -> bool {
    b.regex().is_none_or(|r| r.is_match(text))
}

/// A checked decimal: its canonical string, or `null` after a bounds problem.
pub(super) fn bounded_number(
    d: Decimal,
    bounds: Option<&Bounds>,
    path: &str,
    problems: &mut Vec<ArgumentProblem>,
) -> Value {
    if let Some(problem) = bounds.and_then(|b| number_problem(b, d)) {
        push(problems, path, problem);
        return Value::Null;
    }
    Value::String(canonical_decimal(d))
}
