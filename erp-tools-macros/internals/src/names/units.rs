//! Unit and currency words in a wire name.

use super::rename::segments;

/// What a unit or currency word in a wire name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// A unit of measure (`uom`, `unit`).
    Unit,
    /// A currency (`currency`, `ccy`).
    Currency,
}

/// Where a unit or currency word sits in a wire name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitWord {
    /// Which kind of word it is.
    pub kind: UnitKind,
    /// Whether it is the name's last word, so the field *is* a unit or currency
    /// (`uom`, `order_uom`, `priceCurrency`, `baseunit`); otherwise the word qualifies
    /// another one (`currency_code`, `uom_name`, `units_per_box`, `uom_factor`).
    pub head: bool,
}

/// Words that start with `unit` and are not about units.
const NOT_UNIT_WORDS: &[&str] = &[
    "unity",
    "united",
    "unite",
    "unites",
    "uniting",
    "unitary",
    "unitarian",
];

fn unit_kind_of(word: &str) -> Option<(UnitKind, bool)> {
    // (kind, whether the word ends with the unit word)
    if matches!(word, "ccy" | "ccys" | "curr" | "cur") {
        return Some((UnitKind::Currency, true));
    }
    if let Some(at) = word.find("currenc") {
        let tail = &word[at..];
        return Some((
            UnitKind::Currency,
            matches!(tail, "currency" | "currencies"),
        ));
    }
    if word.contains("uom") {
        return Some((
            UnitKind::Unit,
            word.ends_with("uom") || word.ends_with("uoms"),
        ));
    }
    if word.ends_with("unit") || word.ends_with("units") {
        return Some((UnitKind::Unit, true));
    }
    if word.starts_with("unit") && !NOT_UNIT_WORDS.contains(&word) {
        return Some((UnitKind::Unit, false));
    }
    None
}

/// Finds a unit or currency word anywhere in a wire name, whatever its prefix or suffix
/// (`uom`, `order_uom`, `uomCode`, `base_unit_name`, `currency_code`, `ISOCurrency`,
/// `ccy`, `basecurrency`). A name naming a unit or currency must be an enum of the
/// allowed values; one whose last word is not the unit word (`uom_factor`,
/// `units_per_box`) may also be a number, never free text.
pub fn unit_word(wire: &str) -> Option<UnitWord> {
    let seg = segments(wire);
    let last = seg.len().checked_sub(1)?;
    let mut found: Option<UnitWord> = None;
    for (i, word) in seg.iter().enumerate() {
        if let Some((kind, ends)) = unit_kind_of(word) {
            let head = i == last && ends;
            if found.is_none_or(|f| head && !f.head) {
                found = Some(UnitWord { kind, head });
            }
        }
    }
    found
}

/// Whether a wire name names a unit or currency anywhere in it (see [`unit_word`]).
pub fn is_unit_like(wire: &str) -> bool {
    unit_word(wire).is_some()
}
