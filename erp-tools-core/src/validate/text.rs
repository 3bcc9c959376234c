//! The sentences of argument validation and of declared bounds: what a value must be, as
//! the schema's description states it and as a refusal repeats it with the fix.

use crate::schema::Bounds;

/// The allowed numbers, as words: `from 1 to 1000`, `at least 1`, `at most 1000`,
/// `more than 0`, `more than 0 and at most 5`; `None` without a number bound.
pub(crate) fn bounds_numbers(b: &Bounds) -> Option<String> {
    let min = b.min.map(|m| m.normalize().to_string());
    let max = b.max.map(|m| m.normalize().to_string());
    Some(match (b.positive, min, max) {
        (true, _, Some(max)) => format!("more than 0 and at most {max}"),
        (true, _, None) => "more than 0".to_string(),
        (false, Some(min), Some(max)) => format!("from {min} to {max}"),
        (false, Some(min), None) => format!("at least {min}"),
        (false, None, Some(max)) => format!("at most {max}"),
        (false, None, None) => return None,
    })
}

/// The allowed lengths, as words: `1 to 40 characters`, `exactly 3 characters`, `at
/// most 50 items`; `None` without a length bound.
pub(crate) fn bounds_len(b: &Bounds, unit: &str) -> Option<String> {
    Some(match (b.min_len, b.max_len) {
        (Some(lo), Some(hi)) if lo == hi => format!("exactly {lo} {unit}"),
        (Some(lo), Some(hi)) => format!("{lo} to {hi} {unit}"),
        (Some(lo), None) => format!("at least {lo} {unit}"),
        (None, Some(hi)) => format!("at most {hi} {unit}"),
        (None, None) => return None,
    })
}

/// The pattern, as words.
pub(crate) fn bounds_pattern(b: &Bounds) -> Option<String> {
    b.pattern
        .as_deref()
        .map(|p| format!("the whole text matching the pattern {p}"))
}

/// A number outside its declared bounds.
pub(crate) fn number_out_of_bounds(value: &str, allowed: &str) -> String {
    format!("{value} is not allowed here; send a value {allowed}")
}

/// A text or list whose length is outside its declared bounds.
pub(crate) fn len_out_of_bounds(len: usize, unit: &str, b: &Bounds) -> String {
    let allowed = bounds_len(b, unit).unwrap_or_default();
    format!("{len} {unit}, but {allowed} are allowed; send {allowed}")
}

/// A text that does not match its declared pattern.
pub(crate) fn pattern_mismatch(value: &str, pattern: &str) -> String {
    format!("{value} does not match the pattern {pattern}; send text that matches it as a whole")
}

/// A JSON number that is not exactly a decimal the type can hold.
pub(crate) fn inexact_number(n: &str, why: &str) -> String {
    format!(
        "the number {n} {why}; send the exact value as a decimal string, e.g. \"12.50\" (at most 28 digits, \
         no exponent)"
    )
}

/// A decimal string that is not a plain decimal.
pub(crate) fn not_a_decimal(shown: &str, why: &str) -> String {
    format!(
        "expected a decimal number, e.g. \"24\" or \"12.50\" (a string or a JSON number), got {shown}: {why}"
    )
}
