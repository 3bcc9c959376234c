//! Declared bounds on one argument field (`#[erp(min = 1, max = 1000)]`,
//! `#[erp(positive)]`, `#[erp(len = 1..=40, pattern = "^[A-Z]+$")]`).
//!
//! The strict subset has no number or length keywords (`minimum`, `maxLength` are
//! refused by at least one provider), so bounds are stated in the property's description
//! and enforced by the server's validation; a `pattern` is also rendered as JSON Schema
//! `pattern` for the targets that take it (see `Schema::render`).

use std::borrow::Cow;
use std::str::FromStr;

use rust_decimal::Decimal;

/// The bounds declared on one field. Numbers apply to the value (or, for a list, to each
/// item), `len` to the text's characters or the list's items, `pattern` to the text (or
/// each text item), which must match it as a whole.
#[derive(Clone, Debug, Default)]
pub struct Bounds {
    /// Smallest value allowed.
    pub min: Option<Decimal>,
    /// Largest value allowed.
    pub max: Option<Decimal>,
    /// Whether the value must be more than zero.
    pub positive: bool,
    /// Fewest characters (text) or items (list).
    pub min_len: Option<usize>,
    /// Most characters (text) or items (list).
    pub max_len: Option<usize>,
    /// A regular expression the whole text must match, as declared.
    pub pattern: Option<Cow<'static, str>>,
    regex: Option<regex::Regex>,
}

impl PartialEq for Bounds {
    fn eq(&self, other: &Self) -> bool {
        self.min == other.min
            && self.max == other.max
            && self.positive == other.positive
            && self.min_len == other.min_len
            && self.max_len == other.max_len
            && self.pattern == other.pattern
    }
}

fn decimal(text: &str) -> Decimal {
    Decimal::from_str_exact(text)
        .or_else(|_| Decimal::from_str(text))
        .unwrap_or_else(|_| panic!("bound `{text}` is not a decimal number"))
}

impl Bounds {
    /// No bound.
    pub fn new() -> Self {
        Bounds::default()
    }

    /// Sets the smallest value allowed, written as a decimal (`"1"`, `"0.01"`).
    ///
    /// # Panics
    /// When `min` is not a decimal number (the derive checks it at compile time).
    pub fn with_min(mut self, min: &str) -> Self {
        self.min = Some(decimal(min));
        self
    }

    /// Sets the largest value allowed, written as a decimal.
    ///
    /// # Panics
    /// When `max` is not a decimal number (the derive checks it at compile time).
    pub fn with_max(mut self, max: &str) -> Self {
        self.max = Some(decimal(max));
        self
    }

    /// Requires a value more than zero.
    pub fn positive(mut self) -> Self {
        self.positive = true;
        self
    }

    /// Sets the fewest and most characters (text) or items (list).
    pub fn with_len(mut self, min: usize, max: Option<usize>) -> Self {
        self.min_len = (min > 0).then_some(min);
        self.max_len = max;
        self
    }

    /// Sets the regular expression the whole text must match.
    ///
    /// # Panics
    /// When `pattern` does not compile (the derive checks it at compile time).
    pub fn with_pattern(mut self, pattern: impl Into<Cow<'static, str>>) -> Self {
        let pattern = pattern.into();
        let anchored = format!("^(?:{pattern})$");
        let regex = regex::RegexBuilder::new(&anchored)
            .size_limit(1 << 20)
            .build()
            .unwrap_or_else(|e| panic!("pattern `{pattern}` does not compile: {e}"));
        self.regex = Some(regex);
        self.pattern = Some(pattern);
        self
    }

    /// Whether no bound is set.
    pub fn is_empty(&self) -> bool {
        self.min.is_none()
            && self.max.is_none()
            && !self.positive
            && self.min_len.is_none()
            && self.max_len.is_none()
            && self.pattern.is_none()
    }

    /// Whether a number bound is set.
    pub(crate) fn has_number(&self) -> bool {
        self.min.is_some() || self.max.is_some() || self.positive
    }

    /// The same bounds without the length (for a list's items).
    pub(crate) fn for_items(&self) -> Bounds {
        Bounds {
            min_len: None,
            max_len: None,
            ..self.clone()
        }
    }

    /// The compiled pattern, anchored at both ends (`None` without one).
    pub(crate) fn regex(&self) -> Option<&regex::Regex> {
        self.regex.as_ref()
    }
}
