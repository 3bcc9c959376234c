//! Words that mark a field's category wherever they stand in a name (`line_discount_pct`,
//! `vat_code`, `approver_email`), so that a name no ERP spells exactly is still judged by
//! the words the ERPs use. Each word is checked against the vocabulary by the crate's
//! tests: it occurs in the ERPs' fields of its category and in no field they allow.

use super::category::Category;

/// A word of a wire name that marks its category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CategoryWord {
    /// The word, as [`segments`](crate::names::segments) splits it.
    pub word: &'static str,
    /// The category it marks.
    pub category: Category,
}

/// The marking words, most specific first.
pub(crate) const WORDS: &[CategoryWord] = &[
    w("docstatus", Category::Status),
    w("workflow", Category::Workflow),
    w("discount", Category::Discount),
    w("discounts", Category::Discount),
    w("tax", Category::Tax),
    w("taxes", Category::Tax),
    w("vat", Category::Tax),
    w("withholding", Category::Tax),
    w("owner", Category::Identity),
    w("salesperson", Category::Identity),
    w("purchaser", Category::Identity),
    w("margin", Category::Price),
    w("valuation", Category::Price),
    w("rounded", Category::Amount),
    w("outstanding", Category::Amount),
];

const fn w(word: &'static str, category: Category) -> CategoryWord {
    CategoryWord { word, category }
}

/// The word that marks the category of a name split into `seg`, if any: one of
/// the marking words (`discount`, `tax`, `vat`, `owner`, ...), or a last word `rate` (a price; a tax rate, an exchange rate or a discount
/// rate by the word before it).
pub fn category_word(seg: &[String]) -> Option<CategoryWord> {
    for cw in WORDS {
        if seg.iter().any(|s| s == cw.word) {
            return Some(*cw);
        }
    }
    let last = seg.last()?;
    if last == "rate" || last == "rates" {
        let before = |words: &[&str]| {
            seg[..seg.len() - 1]
                .iter()
                .any(|s| words.contains(&s.as_str()))
        };
        let category = if before(&["exchange", "conversion", "currency", "fx", "forex"]) {
            Category::ExchangeRate
        } else {
            Category::Price
        };
        return Some(CategoryWord {
            word: "rate",
            category,
        });
    }
    None
}
