//! The words the rules read a name by, in English, Indonesian and the spellings other ERPs
//! use (French in Dolibarr, glued capitals in Sage Intacct), and the split of a glued word
//! (`MEGAENTITYID`, `uiprice`, `exchrate`) into the words it is made of.
//!
//! These lists are the rules' own. The ERP vocabulary ([`super::vocab`]) explains a name a
//! model of a known ERP spells exactly; these words judge every other name.

use super::rename::segments;

mod kinds;
mod refusing;

pub(crate) use kinds::*;
pub use refusing::COUNTERPARTIES;
pub(crate) use refusing::*;

use super::vocab::Category;

/// Words the dictionary split of a glued word may also use, beyond the lists above.
const GLUE_EXTRA: &[&str] = &[
    "doc", "document", "when", "ui", "po", "so", "is", "fk", "unit", "uom", "currency", "user",
    "company", "branch", "tenant", "tax", "vat", "rate", "discount", "data", "area", "mega",
    "legal", "business", "approver", "owner", "sales", "rep", "value", "list", "other", "par",
    "ordered", "order", "header", "purchase", "be", "to", "email", "supplier", "type",
];

/// Words that are never split, though made of shorter words (`postcode` is not a posting).
const UNSPLIT: &[&str] = &[
    "postcode",
    "postal",
    "posting",
    "description",
    "username",
    "whence",
    "notebook",
    "shipto",
    "billto",
    "shipfrom",
];

fn in_dictionary(word: &str) -> bool {
    [
        COMPANY,
        PERSON,
        AMBIGUOUS_PARTY,
        STATUS,
        WORKFLOW,
        PRICE,
        DISCOUNT,
        TAX,
        EXCHANGE,
        EXCHANGE_WORDS,
        AMOUNT,
        QUANTITY,
        QUANTITY_STATE,
        NOTE,
        DATE_PURPOSE,
        DATE_SYSTEM,
        TIME,
        MASTER,
        REF_SUFFIX,
        REF_WORDS,
        POSITION,
        GLUE_EXTRA,
    ]
    .iter()
    .any(|list| list.contains(&word))
}

/// Splits a glued word into dictionary words (`megaentityid` → `mega`, `entity`, `id`;
/// `uiprice` → `ui`, `price`), the fewest pieces first; `None` when the word is a
/// dictionary word itself, is kept whole ([`UNSPLIT`]), or cannot be covered.
fn split_glued(word: &str) -> Option<Vec<String>> {
    if word.len() < 5 || in_dictionary(word) || UNSPLIT.contains(&word) {
        return None;
    }
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let n = word.len();
    // best[i]: the fewest pieces covering word[..i], and where the last piece starts.
    let mut best: Vec<Option<(usize, usize)>> = vec![None; n + 1];
    best[0] = Some((0, 0));
    for end in 1..=n {
        for start in 0..end {
            let Some((pieces, _)) = best[start] else {
                continue;
            };
            let piece = &word[start..end];
            if piece.len() >= 2 && in_dictionary(piece) {
                let candidate = (pieces + 1, start);
                if best[end].is_none_or(|b| candidate.0 < b.0) {
                    best[end] = Some(candidate);
                }
            }
        }
    }
    let (pieces, _) = best[n]?;
    if pieces < 2 {
        return None;
    }
    let mut out = Vec::new();
    let mut end = n;
    while end > 0 {
        let (_, start) = best[end]?;
        out.push(word[start..end].to_string());
        end = start;
    }
    out.reverse();
    Some(out)
}

/// The words of a wire name: its [`segments`], each glued word split into the dictionary
/// words it is made of (`MEGAENTITYID` → `mega`, `entity`, `id`).
pub fn words(wire: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in segments(wire).into_iter().flat_map(split_digits) {
        match split_glued(&s) {
            Some(parts) => out.extend(parts),
            None => out.push(s),
        }
    }
    out
}

/// `tax1099` → `tax`, `1099`: letters and digits apart.
fn split_digits(word: String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in word.chars() {
        let digit = c.is_ascii_digit();
        match out.last_mut() {
            Some(last) if last.chars().last().is_some_and(|p| p.is_ascii_digit()) == digit => {
                last.push(c)
            }
            _ => out.push(c.to_string()),
        }
    }
    out
}

/// Where `words` first holds one of `list`'s words.
pub(crate) fn has_any(words: &[String], list: &[&str]) -> Option<usize> {
    words.iter().position(|w| list.contains(&w.as_str()))
}

/// The first of `words` that `list` holds, with its place, as `list` spells it.
pub(crate) fn first_of(
    words: &[String],
    list: &'static [&'static str],
) -> Option<(usize, &'static str)> {
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| list.iter().find(|l| **l == w.as_str()).map(|l| (i, *l)))
}

/// Whether the words hold a postal code or box (`post_code`, `PostBox`): not a posting.
pub(crate) fn is_postal(words: &[String]) -> bool {
    words
        .windows(2)
        .any(|p| p[0] == "post" && (p[1] == "code" || p[1] == "box"))
}

/// The first of `pairs` that stands side by side in `words`.
pub(crate) fn has_pair(
    words: &[String],
    pairs: &'static [(&'static str, &'static str, &'static str)],
) -> Option<&'static str> {
    words.windows(2).find_map(|w| {
        pairs
            .iter()
            .find(|(a, b, _)| w[0] == *a && w[1] == *b)
            .map(|(_, _, both)| *both)
    })
}

/// Who an every-tier word names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Party {
    /// The company or an organisational unit.
    Company,
    /// A person of the company's own side.
    Person,
    /// A counterparty in one ERP, the company in another.
    Ambiguous,
}

/// The every-tier refusal the lexicon makes of `wire`: a company or organisational unit,
/// a person of the company's own side, or a word that is a counterparty in one ERP and the
/// company in another.
pub(crate) fn every_tier(wire: &str) -> Option<(Party, &'static str)> {
    if wire == "client_ref" {
        return None;
    }
    let w = words(wire);
    let named = |i: usize| {
        // `company_name`, `nama_perusahaan`: a counterparty's name, not the caller's company;
        // `perusahaan_pemasok`: the supplier's company.
        // `company_vendor_code`: the vendor's code in the company's books; but the company's
        // own party, partner, address or contact (Tryton's `company_party`) is the company.
        let own = ["party", "partner", "address", "contact", "alamat"];
        w.get(i + 1).is_some_and(|n| {
            n == "name"
                || n == "nama"
                || (MASTER.contains(&n.as_str()) && !own.contains(&n.as_str()))
        }) || (i > 0 && w[i - 1] == "nama")
    };
    if let Some((i, word)) = first_of(&w, COMPANY)
        && !named(i)
    {
        return Some((Party::Company, word));
    }
    if let Some(both) = has_pair(&w, COMPANY_PAIRS) {
        return Some((Party::Company, both));
    }
    if let Some((_, word)) = first_of(&w, PERSON) {
        return Some((Party::Person, word));
    }
    if let Some(both) = has_pair(&w, PERSON_PAIRS) {
        return Some((Party::Person, both));
    }
    // `fk_user_author`, `user_valid`: the user word followed by anything but a field of the
    // user's own record.
    if let Some(i) = w.iter().position(|s| s == "user" || s == "users")
        && !w
            .get(i + 1)
            .is_some_and(|n| ["agent", "defined", "field", "fields", "text"].contains(&n.as_str()))
    {
        return Some((Party::Person, "user"));
    }
    if let Some((_, word)) = first_of(&w, AMBIGUOUS_PARTY) {
        return Some((Party::Ambiguous, word));
    }
    None
}

/// The draft-tier category the lexicon marks `wire` with, and the word that marks it.
pub(crate) fn draft_word(wire: &str) -> Option<(Category, &'static str)> {
    let w = words(wire);
    let find = |list: &'static [&'static str]| first_of(&w, list).map(|(_, word)| word);
    let postal = is_postal(&w);
    let checks: [(&'static [&'static str], Category); 7] = [
        (STATUS, Category::Status),
        (WORKFLOW, Category::Workflow),
        (PRICE, Category::Price),
        (DISCOUNT, Category::Discount),
        (TAX, Category::Tax),
        (EXCHANGE_WORDS, Category::ExchangeRate),
        (AMOUNT, Category::Amount),
    ];
    for (list, category) in checks {
        if let Some(word) = find(list) {
            if postal && word == "post" {
                continue;
            }
            return Some((category, word));
        }
    }
    if let Some(both) = has_pair(&w, WORKFLOW_PAIRS) {
        return Some((Category::Workflow, both));
    }
    // A last word `tx` is Dolibarr's rate (`tva_tx`, `multicurrency_tx`).
    if w.len() > 1 && w[w.len() - 1] == "tx" {
        let exchange = w[..w.len() - 1]
            .iter()
            .any(|s| EXCHANGE.contains(&s.as_str()));
        return Some(if exchange {
            (Category::ExchangeRate, "tx")
        } else {
            (Category::Price, "tx")
        });
    }
    if w.len() > 1
        && w[w.len() - 1] == "rate"
        && w[..w.len() - 1]
            .iter()
            .any(|s| EXCHANGE.contains(&s.as_str()))
    {
        return Some((Category::ExchangeRate, "rate"));
    }
    // A count the ERP keeps (`qty_received`, `QtyDelivered`, `qty_to_invoice`).
    if has_any(&w, QUANTITY).is_some()
        && let Some(word) = find(QUANTITY_STATE)
    {
        return Some((Category::Workflow, word));
    }
    // A date of the books (`DateAcct`, `gl_date`, `accounting_date`).
    if has_any(&w, TIME).is_some()
        && let Some(word) = find(&[
            "accounting",
            "acct",
            "gl",
            "ledger",
            "booking",
            "pembukuan",
            "jurnal",
        ])
    {
        return Some((Category::Workflow, word));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glued_words_split_into_dictionary_words() {
        let cases: &[(&str, &[&str])] = &[
            ("MEGAENTITYID", &["megaentity", "id"]),
            ("ProcurementBUId", &["procurement", "bu", "id"]),
            ("fk_user_author", &["fk", "user", "author"]),
            ("UIPRICE", &["ui", "price"]),
            ("EXCHRATE", &["exchrate"]),
            ("EXCHANGERATETYPE", &["exchangerate", "type"]),
            ("VENDORID", &["vendor", "id"]),
            ("WHENDUE", &["when", "due"]),
            ("PONUMBER", &["po", "number"]),
            ("dataAreaId", &["data", "area", "id"]),
            ("supervisorapproval", &["supervisor", "approval"]),
            ("postcode", &["postcode"]),
            ("description", &["description"]),
            ("harga_satuan", &["harga", "satuan"]),
            ("QUANTITY", &["quantity"]),
            ("taxonomy", &["taxonomy"]),
        ];
        for (name, expect) in cases {
            assert_eq!(words(name), *expect, "{name}");
        }
    }
}
