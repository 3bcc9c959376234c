//! The field vocabularies of real ERPs: every field of the purchase, sales and supplier
//! invoice models of Odoo, ERPNext, Tryton, SAP Business One and Dynamics 365 Business
//! Central, each classified into a [`Category`], with the source it was read from.
//!
//! The data lives in `data/<system>.txt`, one file per ERP, in this format:
//!
//! ```text
//! # comment
//! @model <system> <model> <source>
//! @source <another source of the same model>
//! <field> <category> # optional note
//! ```
//!
//! A draft tool may not take a field the table classifies as anything but
//! [`Category::Allowed`]; no tool may take an identity or company field. A field name
//! matches an entry through the same normalisation the other rules use: the wire name is
//! split into words ([`segments`](super::segments)) and compared without separators or
//! case (`docstatus`, `docStatus` and `DOC_STATUS` are one name), also after dropping a
//! custom-field prefix (`x_`, `x_studio_`, `u_`, `custom_`), a domain prefix (`line_`,
//! `item_`, `po_`, ...) or an identifier suffix (`_id`, `_code`, `_name`, ...).

use std::collections::HashMap;
use std::sync::OnceLock;

mod category;
mod words;

pub use category::Category;
pub use words::{CategoryWord, category_word};

/// The ERP a vocabulary entry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum System {
    /// Odoo (`odoo/odoo`).
    Odoo,
    /// ERPNext (`frappe/erpnext`).
    Erpnext,
    /// Tryton (`trytond-purchase`, `trytond-sale`).
    Tryton,
    /// SAP Business One, Service Layer.
    SapB1,
    /// Dynamics 365 Business Central, API v2.0.
    BusinessCentral,
}

impl System {
    /// Every system, in the order the data files are read.
    pub const ALL: [System; 5] = [
        System::Odoo,
        System::Erpnext,
        System::Tryton,
        System::SapB1,
        System::BusinessCentral,
    ];

    /// The key used in the data files (`odoo`, `erpnext`, `tryton`, `sap_b1`,
    /// `business_central`).
    pub fn key(self) -> &'static str {
        match self {
            System::Odoo => "odoo",
            System::Erpnext => "erpnext",
            System::Tryton => "tryton",
            System::SapB1 => "sap_b1",
            System::BusinessCentral => "business_central",
        }
    }

    /// The name people know the ERP by.
    pub fn display(self) -> &'static str {
        match self {
            System::Odoo => "Odoo",
            System::Erpnext => "ERPNext",
            System::Tryton => "Tryton",
            System::SapB1 => "SAP Business One",
            System::BusinessCentral => "Business Central",
        }
    }

    fn data(self) -> &'static str {
        match self {
            System::Odoo => include_str!("data/odoo.txt"),
            System::Erpnext => include_str!("data/erpnext.txt"),
            System::Tryton => include_str!("data/tryton.txt"),
            System::SapB1 => include_str!("data/sap_b1.txt"),
            System::BusinessCentral => include_str!("data/business_central.txt"),
        }
    }
}

/// One field of one ERP model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The ERP.
    pub system: System,
    /// The model as the ERP names it (`purchase.order`, `Purchase Order Item`).
    pub model: &'static str,
    /// The field as the ERP spells it.
    pub field: &'static str,
    /// What the field is.
    pub category: Category,
    /// Why, where the classification is not obvious.
    pub note: Option<&'static str>,
    /// Where the model's fields were read (a repository file at a commit, or a page).
    pub source: &'static str,
}

impl Entry {
    /// `ERPNext's `rate` (Purchase Order Item)`.
    pub fn cite(&self) -> String {
        format!(
            "{}'s `{}` ({})",
            self.system.display(),
            self.field,
            self.model.replace('_', " ").replace("  ", "_")
        )
    }
}

/// The whole vocabulary: every entry of every data file, and an index by normalised name.
#[derive(Debug)]
pub struct Vocabulary {
    entries: Vec<Entry>,
    by_key: HashMap<String, Vec<usize>>,
}

/// A problem in a data file, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError {
    /// The ERP whose file it is in.
    pub system: System,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Vocabulary {
    /// Every entry, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries whose normalised name is exactly `key` (see [`normalise`]).
    pub fn exact(&self, key: &str) -> impl Iterator<Item = &Entry> {
        self.by_key
            .get(key)
            .into_iter()
            .flatten()
            .map(|&i| &self.entries[i])
    }
}

/// The vocabulary, parsed once. Panics on malformed data, which the crate's tests rule
/// out (see [`parse_all`]).
pub fn vocabulary() -> &'static Vocabulary {
    static VOCABULARY: OnceLock<Vocabulary> = OnceLock::new();
    VOCABULARY.get_or_init(|| match parse_all() {
        Ok(v) => v,
        Err(errors) => panic!("the ERP vocabulary data is malformed: {errors:?}"),
    })
}

/// Parses every data file.
pub fn parse_all() -> Result<Vocabulary, Vec<DataError>> {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for system in System::ALL {
        parse(system, system.data(), &mut entries, &mut errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        by_key.entry(normalise(e.field)).or_default().push(i);
    }
    Ok(Vocabulary { entries, by_key })
}

fn parse(system: System, text: &'static str, out: &mut Vec<Entry>, errors: &mut Vec<DataError>) {
    let mut model: Option<(&'static str, &'static str)> = None;
    let mut seen: Vec<&'static str> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let mut error = |message: String| {
            errors.push(DataError {
                system,
                line: n + 1,
                message,
            })
        };
        let (line, note) = match raw.split_once('#') {
            Some((l, c)) => (l.trim(), Some(c.trim()).filter(|c| !c.is_empty())),
            None => (raw.trim(), None),
        };
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let first = parts.next().unwrap_or_default();
        if first == "@model" {
            let (Some(sys), Some(name), Some(source)) = (parts.next(), parts.next(), parts.next())
            else {
                error("`@model` needs a system, a model name and a source".into());
                continue;
            };
            if sys != system.key() {
                error(format!("`@model {sys}` in the file of `{}`", system.key()));
            }
            model = Some((name, source));
            seen.clear();
            continue;
        }
        if first == "@source" {
            if model.is_none() {
                error("`@source` before any `@model`".into());
            }
            continue;
        }
        let Some((model_name, source)) = model else {
            error(format!("field `{first}` before any `@model`"));
            continue;
        };
        let Some(category) = parts.next().and_then(Category::parse) else {
            error(format!(
                "field `{first}` of `{model_name}` has no known category (one of {})",
                Category::ALL.map(Category::key).join(", ")
            ));
            continue;
        };
        if parts.next().is_some() {
            error(format!(
                "field `{first}`: more than a name and a category on the line"
            ));
        }
        if seen.contains(&first) {
            error(format!("field `{first}` of `{model_name}` is listed twice"));
        }
        seen.push(first);
        out.push(Entry {
            system,
            model: model_name,
            field: first,
            category,
            note,
            source,
        });
    }
}

/// The key a name is compared by: its words, lower-case, without separators
/// (`docStatus`, `doc_status` and `DOCSTATUS` are all `docstatus`). A leading `_` is
/// kept: it marks an ERP's internal column (ERPNext's `_comments`, `_assign`), which is
/// not the field of the same words (SAP Business One's `Comments`).
pub fn normalise(name: &str) -> String {
    let words = super::rename::segments(name).concat();
    if name.starts_with('_') {
        format!("_{words}")
    } else {
        words
    }
}

/// Prefixes of custom fields in the ERPs (`x_` and `x_studio_` in Odoo, `U_` in SAP
/// Business One, `custom_` in ERPNext), dropped before a name is looked up.
const CUSTOM_PREFIXES: &[&[&str]] = &[&["x", "studio"], &["x"], &["u"], &["custom"], &["cust"]];

/// Words naming the document or the line a field belongs to (`line_discount`,
/// `po_rate`, `item_tax_template`), dropped before a name is looked up.
const DOMAIN_PREFIXES: &[&str] = &[
    "line", "lines", "item", "items", "order", "po", "so", "doc", "document", "header", "purchase",
    "sale", "sales", "invoice", "new", "override", "manual", "custom",
];

/// Words after a name that make it a reference to the same thing (`approver_id`,
/// `owner_code`), dropped before a name is looked up. (`name` is not one: a
/// `company_name` is the counterparty's name on a new vendor, not the caller's company.)
const ID_SUFFIXES: &[&str] = &[
    "id", "ids", "code", "codes", "no", "nr", "number", "key", "uuid", "ref",
];

/// The vocabulary entries a wire name stands for, most restrictive first (and, within a
/// category, the ERP that spells the name exactly so first): the entries of
/// its normalised name, or failing that of the name without a custom-field prefix, a
/// domain prefix or an identifier suffix. Empty when the name is in no ERP's models.
pub fn lookup(wire: &str) -> Vec<&'static Entry> {
    let vocab = vocabulary();
    let seg = super::rename::segments(wire);
    if seg.is_empty() {
        return Vec::new();
    }
    let mut tries: Vec<&[String]> = vec![&seg];
    let mut bare: &[String] = &seg;
    for prefix in CUSTOM_PREFIXES {
        if bare.len() > prefix.len() && bare.iter().zip(prefix.iter()).all(|(a, b)| a == b) {
            bare = &bare[prefix.len()..];
            tries.push(bare);
            break;
        }
    }
    if bare.len() > 1 && DOMAIN_PREFIXES.contains(&bare[0].as_str()) {
        tries.push(&bare[1..]);
    }
    let snapshot = tries.clone();
    for t in snapshot {
        if t.len() > 1 && ID_SUFFIXES.contains(&t[t.len() - 1].as_str()) {
            tries.push(&t[..t.len() - 1]);
        }
    }
    let internal = if wire.starts_with('_') { "_" } else { "" };
    for t in tries {
        let mut found: Vec<&'static Entry> =
            vocab.exact(&format!("{internal}{}", t.concat())).collect();
        if !found.is_empty() {
            // Most restrictive first; within a category, the ERP that spells the name
            // exactly as written (`UnitPrice` is SAP Business One's, `unit_price` Tryton's).
            found.sort_by_key(|e| {
                (
                    e.category == Category::Allowed,
                    e.category,
                    e.field != wire,
                    e.system,
                )
            });
            return found;
        }
    }
    Vec::new()
}

/// The entry that refuses `wire`, if any: the most restrictive of [`lookup`]'s, unless
/// every ERP that has the name allows it.
pub fn refusing_entry(wire: &str) -> Option<&'static Entry> {
    lookup(wire)
        .into_iter()
        .next()
        .filter(|e| e.category != Category::Allowed)
}

#[cfg(test)]
mod tests;
