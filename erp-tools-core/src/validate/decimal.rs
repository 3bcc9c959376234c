//! Decimals as arguments: a decimal string or JSON number read exactly, and the one
//! canonical spelling the normalised arguments carry.

use rust_decimal::Decimal;

/// A decimal written canonically (no exponent, no trailing zeros after the point, no
/// `+`, no negative zero), so `"24"`, `24`, `"24.0"` and `"24.00"` are one value.
pub(super) fn canonical_decimal(d: Decimal) -> String {
    if d.is_zero() {
        "0".to_string()
    } else {
        d.normalize().to_string()
    }
}

/// A decimal string, exactly, or why it is not one.
pub(super) fn decimal_from_str(s: &str) -> Result<Decimal, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("the text is empty".into());
    }
    if t != s {
        return Err("remove the spaces around the number".into());
    }
    let lower = t.to_ascii_lowercase();
    if matches!(
        lower.trim_start_matches(['-', '+']),
        "nan" | "inf" | "infinity"
    ) {
        return Err("not a number or infinite; send a finite amount".into());
    }
    if t.len() > 40 {
        return Err("more digits than a decimal holds (at most 28)".into());
    }
    if t.contains(['e', 'E']) {
        return Err("write it without an exponent".into());
    }
    if t.starts_with('+') {
        return Err("write it without the `+`".into());
    }
    if t.contains(',') {
        return Err("use `.` as the decimal point and no thousands separators".into());
    }
    let body = t.strip_prefix('-').unwrap_or(t);
    let mut parts = body.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return Err("digits with an optional `.` and digits after it".into());
    }
    Decimal::from_str_exact(t).map_err(|_| "more digits than a decimal holds (at most 28)".into())
}

/// Significant digits a JSON number (read as a binary double) carries exactly: any
/// decimal of at most this many digits is read back as itself.
const EXACT_NUMBER_DIGITS: usize = 15;

/// A JSON number as an exact decimal, or why it cannot be one. Integers are exact;
/// a number with a fraction or an exponent is exact when its shortest spelling has at
/// most [`EXACT_NUMBER_DIGITS`] significant digits (`48.5`, `1e3`, `0.1`); one with more
/// (`0.30000000000000004`, a 20-digit integer) may already have been rounded, so it is
/// refused with the advice to send a string.
pub(super) fn decimal_from_number(n: &serde_json::Number) -> Result<Decimal, String> {
    if let Some(i) = n.as_i64() {
        return Ok(Decimal::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Ok(Decimal::from(u));
    }
    let Some(f) = n.as_f64().filter(|f| f.is_finite()) else {
        return Err("is not a finite number".into());
    };
    let spelled = n.to_string();
    let mantissa = spelled.split(['e', 'E']).next().unwrap_or("");
    let significant = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(char::from)
        .collect::<String>();
    let significant = significant.trim_start_matches('0').trim_end_matches('0');
    if significant.len() > EXACT_NUMBER_DIGITS {
        return Err(format!(
            "has more than {EXACT_NUMBER_DIGITS} significant digits, more than a JSON number carries exactly"
        ));
    }
    let parsed = if spelled.contains(['e', 'E']) {
        Decimal::from_scientific(&spelled)
    } else {
        Decimal::from_str_exact(&spelled)
    };
    match parsed {
        Ok(d) => Ok(d),
        Err(_) if f.abs() >= 1.0 => Err("is larger than a decimal holds (28 digits)".into()),
        Err(_) => Err("is smaller than a decimal holds (28 decimal places)".into()),
    }
}
