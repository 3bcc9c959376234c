//! What a draft tool's argument may be: the small, closed set of kinds a model may
//! describe in a draft (what to order, how many, in which unit, by when, from whom, and a
//! note for a person), recognised from a field's name here and from its type by the
//! derive. A draft field of no kind is refused (default deny).

use super::lexicon::{
    DATE_PURPOSE, DATE_SYSTEM, LINES, MASTER, NOTE, POSITION, QUANTITY, QUANTITY_STATE, REF_SUFFIX,
    REF_WORDS, TIME, TIME_LAST, has_any, is_postal, words,
};
use super::vocab::{self, Category};

/// What the model may describe in a draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A reference to master data or an outside document by its code, number or name
    /// (a vendor, an item, a warehouse, a project, a contract, the vendor's reference).
    Reference,
    /// How many the person asks for.
    Quantity,
    /// A unit of measure (an enum).
    Unit,
    /// A currency (an enum).
    Currency,
    /// A date the person asks for (needed by, delivery, valid until).
    Date,
    /// Free text for people (a note, a description, a memo).
    Note,
    /// The document's list of lines (objects judged field by field).
    Lines,
    /// A closed choice of the document's own (an enum none of whose values is a status
    /// or a post-tier verb; a `bool` only when declared).
    Choice,
    /// A line's position or sequence number.
    Position,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 9] = [
        Kind::Reference,
        Kind::Quantity,
        Kind::Unit,
        Kind::Currency,
        Kind::Date,
        Kind::Note,
        Kind::Lines,
        Kind::Choice,
        Kind::Position,
    ];

    /// The kind's bit in a set of kinds (a type's `KIND` constant).
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// The key of `#[erp(kind = "..")]`.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Reference => "reference",
            Kind::Quantity => "quantity",
            Kind::Unit => "unit",
            Kind::Currency => "currency",
            Kind::Date => "date",
            Kind::Note => "note",
            Kind::Lines => "lines",
            Kind::Choice => "choice",
            Kind::Position => "position",
        }
    }

    /// The kind spelled `key`.
    pub fn parse(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }

    /// The wire shapes ([`shape`]) a value of this kind may have.
    pub fn shapes(self) -> u16 {
        use shape::*;
        match self {
            Kind::Reference => TEXT | NUMBER | ENUM | UUID | OBJECT,
            Kind::Quantity | Kind::Position => NUMBER,
            Kind::Unit | Kind::Currency => ENUM | NUMBER,
            Kind::Date => DATE | OTHER,
            Kind::Note => TEXT,
            Kind::Lines => OBJECT,
            Kind::Choice => ENUM | BOOL,
        }
    }

    /// What the kind is, for messages ("a quantity").
    pub fn what(self) -> &'static str {
        match self {
            Kind::Reference => "a reference to master data by its code or number",
            Kind::Quantity => "a quantity",
            Kind::Unit => "a unit of measure",
            Kind::Currency => "a currency",
            Kind::Date => "a date the person asks for",
            Kind::Note => "a note for people",
            Kind::Lines => "a list of lines",
            Kind::Choice => "a choice of the document's own",
            Kind::Position => "a line's position",
        }
    }

    /// The types a value of this kind is written as, for messages.
    pub fn types(self) -> &'static str {
        match self {
            Kind::Reference => "a `String` (a code or number), an integer id, an enum or a `Uuid`",
            Kind::Quantity | Kind::Position => "a `Decimal` or an integer",
            Kind::Unit | Kind::Currency => "an enum of the allowed values",
            Kind::Date => "a `chrono::NaiveDate`",
            Kind::Note => "a `String`",
            Kind::Lines => "a `Vec` of a struct deriving ToolArgs",
            Kind::Choice => "an enum of the allowed values (or a `bool`)",
        }
    }
}

/// What a value is on the wire, as the derive's compile-time checks see it (one bit a
/// shape, so a set of shapes is a mask).
pub mod shape {
    /// Free text (`String`, `Box<str>`, `Arc<str>`, `Cow<'static, str>`).
    pub const TEXT: u16 = 1;
    /// An integer or a decimal.
    pub const NUMBER: u16 = 2;
    /// A unit-only enum, sent as one of its values.
    pub const ENUM: u16 = 4;
    /// A struct with named fields.
    pub const OBJECT: u16 = 8;
    /// A list.
    pub const LIST: u16 = 16;
    /// A time or a date and time.
    pub const OTHER: u16 = 32;
    /// A calendar date (`chrono::NaiveDate`).
    pub const DATE: u16 = 64;
    /// A boolean.
    pub const BOOL: u16 = 128;
    /// A `uuid::Uuid`.
    pub const UUID: u16 = 256;
    /// Every shape.
    pub const ANY: u16 = 511;
}

/// How a draft field's name is judged for its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameKinds {
    /// The name says what the field is: the kinds it may be (its type picks among them).
    Kinds(Vec<Kind>),
    /// An ERP field every ERP that has it allows in a draft: any shape.
    Vocabulary(&'static vocab::Entry),
    /// The name says nothing the rules know: only an enum (a choice), a `Uuid` or a type
    /// that declares its kind is accepted.
    Unknown,
}

impl NameKinds {
    /// The shapes a field of this name may have, beside a type that declares its kind.
    pub fn shapes(&self) -> u16 {
        match self {
            NameKinds::Kinds(kinds) => kinds.iter().fold(0, |m, k| m | k.shapes()),
            NameKinds::Vocabulary(_) => shape::ANY,
            NameKinds::Unknown => shape::ENUM | shape::UUID,
        }
    }
}

/// The kinds a draft field's name says it is. Refusals are judged first and apart
/// (`classify`, `classify_draft`); this only
/// says what an accepted name may hold.
pub fn name_kinds(wire: &str) -> NameKinds {
    if wire == "client_ref" {
        return NameKinds::Kinds(vec![Kind::Reference]);
    }
    let w = words(wire);
    if w.is_empty() {
        return NameKinds::Unknown;
    }
    let mut kinds = Vec::new();
    let last = w[w.len() - 1].as_str();
    let has_time = has_any(&w, TIME).is_some() || (w.len() > 1 && TIME_LAST.contains(&last));
    if has_any(&w, QUANTITY).is_some() && has_any(&w, QUANTITY_STATE).is_none() {
        kinds.push(Kind::Quantity);
    }
    if has_any(&w, NOTE).is_some() && !has_time {
        kinds.push(Kind::Note);
    }
    let single_purpose = w.len() == 1 && DATE_PURPOSE.contains(&last);
    if has_time || single_purpose {
        let validity = valid_until(&w);
        let purpose = has_any(&w, DATE_PURPOSE).is_some() || validity;
        let system = w
            .iter()
            .any(|s| DATE_SYSTEM.contains(&s.as_str()) && !(validity && s == "valid"));
        if purpose && !system {
            kinds.push(Kind::Date);
        }
    }
    if let Some(u) = super::units::unit_word(wire) {
        kinds.push(match u.kind {
            super::units::UnitKind::Unit => Kind::Unit,
            super::units::UnitKind::Currency => Kind::Currency,
        });
    }
    if !has_time
        && (has_any(&w, MASTER).is_some() || has_any(&w, REF_WORDS).is_some() || is_postal(&w))
    {
        kinds.push(Kind::Reference);
    }
    if w.iter()
        .all(|s| POSITION.contains(&s.as_str()) || REF_SUFFIX.contains(&s.as_str()))
        && has_any(&w, POSITION).is_some()
    {
        kinds.push(Kind::Position);
    }
    if names_lines(wire) {
        kinds.push(Kind::Lines);
    }
    // A document named by its number (`number`, `po_number`, `DocumentNo`): the draft a
    // tool changes, or the source document a line comes from.
    let documents = [
        "po", "order", "doc", "document", "draft", "purchase", "so", "invoice", "bill", "rfq",
        "orig", "original", "external", "link", "source",
    ];
    if REF_SUFFIX.contains(&last)
        && !has_time
        && w[..w.len() - 1]
            .iter()
            .all(|s| documents.contains(&s.as_str()))
    {
        kinds.push(Kind::Reference);
    }
    if !kinds.is_empty() {
        kinds.sort();
        kinds.dedup();
        return NameKinds::Kinds(kinds);
    }
    match vocab_allowed(wire) {
        Some(e) => NameKinds::Vocabulary(e),
        None => NameKinds::Unknown,
    }
}

/// `valid_until`, `valid_from`, `valid_to`: a validity a person asks for (`date_valid`
/// alone is the date a document was validated).
fn valid_until(w: &[String]) -> bool {
    w.windows(2).any(|p| {
        p[0] == "valid"
            && ["from", "to", "until", "till", "thru", "through"].contains(&p[1].as_str())
    })
}

/// The ERP field `wire` is exactly (after normalisation), when every ERP that has it
/// allows it in a draft.
pub fn vocab_allowed(wire: &str) -> Option<&'static vocab::Entry> {
    let found = vocab::lookup(wire);
    let first = found.first()?;
    let exact = vocab::normalise(first.field) == vocab::normalise(wire);
    (exact && found.iter().all(|e| e.category == Category::Allowed)).then_some(*first)
}

/// Whether the words of `wire` name the document's lines (`lines`, `line_ids`, `items`,
/// `order_line`): a list the derive judges item by item, which no vocabulary entry of
/// another model's relation refuses.
pub fn names_lines(wire: &str) -> bool {
    let w = words(wire);
    !w.is_empty()
        && has_any(&w, LINES).is_some()
        && w.iter().all(|s| {
            LINES.contains(&s.as_str())
                || REF_SUFFIX.contains(&s.as_str())
                || [
                    "order",
                    "purchase",
                    "requisition",
                    "document",
                    "doc",
                    "sale",
                    "sales",
                    "list",
                    "invoice",
                    "po",
                ]
                .contains(&s.as_str())
        })
}

/// The compile error for a draft field whose name says no kind and whose type declares
/// none.
pub fn unknown_message(wire: &str, field: &str) -> String {
    format!(
        "{field} cannot be an argument of a draft tool: the framework cannot tell what `{wire}` is, and a draft \
         takes only what a person may describe (a reference to master data by code, a quantity, a unit or \
         currency, a date asked for, a note for people, lines, a choice); name the field for what it is \
         (`vendor_code`, `qty`, `needed_by`, `note`) or declare it, e.g. \
         `#[erp(kind = \"reference\", of = \"vendor\")]` or `#[erp(kind = \"quantity\")]` (kinds: {})",
        Kind::ALL.map(Kind::key).join(", ")
    )
}

/// The compile error for a draft field whose name (or declaration) gives kinds its type
/// does not fit.
pub fn mismatch_message(field: &str, kinds: &[Kind], declared: bool) -> String {
    let said = if declared { "is declared" } else { "names" };
    let what: Vec<&str> = kinds.iter().map(|k| k.what()).collect();
    let types: Vec<&str> = kinds.iter().map(|k| k.types()).collect();
    format!(
        "{field} {said} {}, so it must be {}; change the field's type{}",
        what.join(" or "),
        types.join(", or "),
        if declared {
            ", or declare the kind it is"
        } else {
            ", or rename the field for what it is, or declare its kind with `#[erp(kind = \"..\")]`"
        }
    )
}
