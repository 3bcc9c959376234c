//! The classifier that decides whether a wire name may be a tool argument, and the
//! compile errors it words.

use super::rename::segments;
use super::vocab::{self, Category, Entry};

/// Whether a tool name or property key is safe on every provider: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn valid_key(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Why a wire name may not be an argument of any tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forbidden {
    /// Names a branch, tenant or company (the word is given).
    Scope(&'static str),
    /// Names the person acting (`user_id`, `on_behalf_of`, `created_by`, ...).
    Identity,
    /// Names the agent run or the tool call (`agent_run_id`, `tool_call_id`, ...).
    RunIds,
    /// Names the caller's authority (`scopes`, `roles`, ...).
    Authority,
    /// A field the ERPs' models use for a person of the organisation or for the company
    /// or an organisational unit ([`Category::Identity`], [`Category::Company`]).
    Erp(Finding),
    /// A word (or two) naming the company or an organisational unit: an organisation, a
    /// subsidiary, a business unit, a legal entity, a data area, in English, Indonesian
    /// or an ERP's spelling (`AD_Org_ID`, `dataAreaId`, `ProcurementBUId`, `cabang_id`).
    Company(&'static str),
    /// A word naming a person of the company's own side: an author, a buyer, an employee,
    /// a sales rep, a validator (`fk_user_author`, `BuyerId`, `dibuat_oleh`).
    Person(&'static str),
    /// A word that names a counterparty in one ERP and the company in another (`entity`,
    /// `client`, `soc`): refused until declared a reference to the counterparty with
    /// `#[erp(kind = "reference", of = "vendor")]`.
    Ambiguous(&'static str),
}

/// A name judged by the ERPs' vocabulary: its category, and the evidence (the ERP field
/// it is, or the word that marks it and an ERP field with that word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What the field is.
    pub category: Category,
    /// The ERP field the name is (or, for a word, a field that has the word).
    pub entry: Option<&'static Entry>,
    /// The word of the name that marks the category, when the name is in no model as a
    /// whole.
    pub word: Option<&'static str>,
}

impl Finding {
    /// Judges `wire` by the vocabulary: an exact (normalised) ERP field first, then the
    /// marking words. `None` when neither refuses it.
    pub fn of(wire: &str) -> Option<Finding> {
        let found = vocab::lookup(wire);
        if let Some(first) = found.first() {
            return (first.category != Category::Allowed).then_some(Finding {
                category: first.category,
                entry: Some(first),
                word: None,
            });
        }
        let cw = vocab::category_word(&segments(wire))?;
        let example = vocab::vocabulary()
            .entries()
            .iter()
            .find(|e| e.category == cw.category && segments(e.field).iter().any(|s| s == cw.word));
        Some(Finding {
            category: cw.category,
            entry: example,
            word: Some(cw.word),
        })
    }

    /// Why the name is refused: "ERPNext's `rate` (Purchase Order Item) is a price" or
    /// "it has the word `discount` (as ERPNext's `discount_percentage` (Sales Order
    /// Item)), so it is a discount".
    pub fn evidence(&self) -> String {
        match (self.word, self.entry) {
            (None, Some(e)) => format!("{} {}", e.cite(), self.category.what()),
            (Some(w), Some(e)) => format!(
                "it has the word `{w}`, as {} has, so it {}",
                e.cite(),
                self.category.what()
            ),
            (Some(w), None) => format!("it has the word `{w}`, so it {}", self.category.what()),
            (None, None) => format!("it {}", self.category.what()),
        }
    }
}

/// Why a wire name may not be an argument of a draft tool (read tools may take it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DraftForbidden {
    /// A field the ERPs' models use for a status, a workflow or posting step, a price, a
    /// discount, a tax, an exchange rate or a computed amount.
    Erp(Finding),
    /// `status`, `state`, `*_status`.
    Status,
    /// Any word `price` (`unit_price`, `price_per_unit`), `unit_cost`.
    Price,
    /// `total`, `amount_total`, `grand_total`, `subtotal`, ...
    Total,
    /// `posting_date`, `posted_at`, `approved_at`, ...
    PostingDate,
    /// A word of the rules' own lexicon (English, Indonesian, other ERPs' spellings) that
    /// marks the category: `harga` a price, `diskon` a discount, `is_posted` a workflow
    /// step, `qty_received` a count the ERP keeps.
    Marked(Category, &'static str),
}

const SCOPE_WORDS: &[(&str, &str)] = &[
    ("branch", "branch"),
    ("branches", "branch"),
    ("tenant", "tenant"),
    ("tenants", "tenant"),
    ("company", "company"),
    ("companies", "company"),
];

/// Words that, after a branch/tenant/company word, make the name an identifier of it.
const ID_SUFFIXES: &[&str] = &[
    "id", "ids", "code", "codes", "no", "nr", "number", "key", "uuid",
];

/// Words that, after a user word, make the name an identifier of the person.
const USER_SUFFIXES: &[&str] = &[
    "id", "ids", "code", "codes", "no", "nr", "number", "key", "uuid", "name", "email", "login",
];

const USER_WORDS: &[&str] = &["user", "users", "username", "usernames"];

/// Words that name the person who approves, requests or reviews: never the model's to say.
const PERSON_WORDS: &[&str] = &[
    "approver",
    "approvers",
    "requester",
    "requesters",
    "requestor",
    "requestors",
    "reviewer",
    "reviewers",
    "signatory",
    "signatories",
];

/// Past participles that, followed by `by`, name who did something.
const ACTED: &[&str] = &[
    "created",
    "approved",
    "requested",
    "submitted",
    "posted",
    "updated",
    "modified",
    "reviewed",
    "drafted",
    "prepared",
    "entered",
    "deleted",
    "cancelled",
    "canceled",
    "authorized",
    "authorised",
    "initiated",
    "signed",
    "edited",
    "changed",
    "validated",
    "verified",
    "checked",
    "rejected",
    "closed",
    "ordered",
    "processed",
    "completed",
    "received",
    "confirmed",
    "released",
    "assigned",
];

const AUTHORITY_NAMES: &[&str] = &[
    "scope",
    "scopes",
    "role",
    "roles",
    "permission",
    "permissions",
    "granted_scopes",
    "user_roles",
];

/// Words that, followed by `id`, name the run or call.
const RUN_WORDS: &[&str] = &["run", "call", "agent", "session"];

impl DraftForbidden {
    /// The vocabulary category of the refusal; `#[erp(allow = "..")]` names it.
    pub fn category(self) -> Category {
        match self {
            DraftForbidden::Erp(f) => f.category,
            DraftForbidden::Status => Category::Status,
            DraftForbidden::Price => Category::Price,
            DraftForbidden::Total => Category::Amount,
            DraftForbidden::PostingDate => Category::Workflow,
            DraftForbidden::Marked(c, _) => c,
        }
    }
}

/// Classifies a wire name against the rules for every tier.
pub fn classify(wire: &str) -> Option<Forbidden> {
    classify_own_words(wire)
        .or_else(|| {
            Finding::of(wire)
                .filter(|f| f.category.every_tier())
                .map(Forbidden::Erp)
        })
        .or_else(|| {
            // The lexicon judges names no ERP of the vocabulary spells; a field every ERP
            // that has it allows (SAP Business One's `CountryOrg`, a country of origin) is
            // what its ERP says it is.
            if super::kinds::vocab_allowed(wire).is_some() {
                None
            } else {
                super::lexicon::every_tier(wire).map(|(party, word)| match party {
                    super::lexicon::Party::Company => Forbidden::Company(word),
                    super::lexicon::Party::Person => Forbidden::Person(word),
                    super::lexicon::Party::Ambiguous => Forbidden::Ambiguous(word),
                })
            }
        })
}

fn classify_own_words(wire: &str) -> Option<Forbidden> {
    let seg = segments(wire);
    if seg.is_empty() {
        return None;
    }
    let joined = seg.join("_");
    let followed_by = |i: usize, suffixes: &[&str]| {
        i + 1 == seg.len()
            || seg
                .get(i + 1)
                .is_some_and(|n| suffixes.contains(&n.as_str()))
    };
    for (i, s) in seg.iter().enumerate() {
        if let Some((_, word)) = SCOPE_WORDS.iter().find(|(w, _)| w == s)
            && followed_by(i, ID_SUFFIXES)
        {
            return Some(Forbidden::Scope(word));
        }
    }
    if AUTHORITY_NAMES.contains(&joined.as_str()) {
        return Some(Forbidden::Authority);
    }
    for (i, s) in seg.iter().enumerate() {
        if USER_WORDS.contains(&s.as_str()) && followed_by(i, USER_SUFFIXES) {
            return Some(Forbidden::Identity);
        }
        if PERSON_WORDS.contains(&s.as_str()) && followed_by(i, USER_SUFFIXES) {
            return Some(Forbidden::Identity);
        }
        if s == "behalf" || s == "impersonate" || s == "impersonating" {
            return Some(Forbidden::Identity);
        }
        if s == "by" && i > 0 && ACTED.contains(&seg[i - 1].as_str()) {
            return Some(Forbidden::Identity);
        }
        if RUN_WORDS.contains(&s.as_str())
            && seg.get(i + 1).is_some_and(|n| n == "id" || n == "ids")
        {
            return Some(Forbidden::RunIds);
        }
    }
    None
}

/// Classifies a wire name against the extra rules for draft tools: a field the ERPs'
/// models classify as a status, workflow step, price, discount, tax, exchange rate or
/// amount (exactly, or by a marking word), and the rules' own names (`*_status`,
/// `*price*`, `*total*`, `posted_at`, ...). A name [`classify`] refuses is not reported
/// again here.
pub fn classify_draft(wire: &str) -> Option<DraftForbidden> {
    if classify(wire).is_some() {
        return None;
    }
    // The document's lines are judged item by item, whatever another model's relation of
    // the same name is (account.move's `line_ids` are journal items, purchase.requisition's
    // are the lines asked for).
    let erp = Finding::of(wire).filter(|_| !super::kinds::names_lines(wire));
    if let Some(f) = erp
        && f.word.is_none()
    {
        return Some(DraftForbidden::Erp(f));
    }
    if super::kinds::vocab_allowed(wire).is_some() {
        return None;
    }
    classify_draft_own_words(wire)
        .or(erp.map(DraftForbidden::Erp))
        .or_else(|| super::lexicon::draft_word(wire).map(|(c, w)| DraftForbidden::Marked(c, w)))
}

fn classify_draft_own_words(wire: &str) -> Option<DraftForbidden> {
    let seg = segments(wire);
    let last = seg.last()?;
    if last == "status"
        || last == "statuses"
        || (seg.len() == 1 && (last == "state" || last == "states"))
    {
        return Some(DraftForbidden::Status);
    }
    if seg.iter().any(|s| s == "price" || s == "prices") || seg.join("_") == "unit_cost" {
        return Some(DraftForbidden::Price);
    }
    if seg
        .iter()
        .any(|s| s == "total" || s == "totals" || s == "subtotal" || s == "subtotals")
    {
        return Some(DraftForbidden::Total);
    }
    const POSTED: &[&str] = &[
        "post", "posted", "posting", "approved", "approval", "approve",
    ];
    const WHEN: &[&str] = &[
        "date",
        "at",
        "on",
        "time",
        "datetime",
        "timestamp",
        "period",
    ];
    for pair in seg.windows(2) {
        if POSTED.contains(&pair[0].as_str()) && WHEN.contains(&pair[1].as_str()) {
            return Some(DraftForbidden::PostingDate);
        }
    }
    None
}

/// The compile error for a name forbidden in every tier.
pub fn forbidden_message(wire: &str, why: Forbidden) -> String {
    let source = match why {
        Forbidden::Scope(word) => format!(
            "the {word} comes from the caller's token (ToolContext::branch_id, ToolContext::branch_code)"
        ),
        Forbidden::Identity => {
            "the person on whose behalf the agent acts comes from the caller's token (ToolContext::user_id)"
                .to_string()
        }
        Forbidden::RunIds => "run and call ids come from the authenticated request \
                              (ToolContext::agent_run_id, ToolContext::tool_call_id)"
            .to_string(),
        Forbidden::Authority => {
            "scopes and roles come from the caller's token (ToolContext::scopes, ToolContext::roles)".to_string()
        }
        Forbidden::Erp(f) => {
            return format!(
                "`{wire}` cannot be a tool argument: {}; {}",
                f.evidence(),
                f.category.instead()
            );
        }
        Forbidden::Company(word) | Forbidden::Person(word) => {
            let category = if matches!(why, Forbidden::Company(_)) {
                Category::Company
            } else {
                Category::Identity
            };
            return format!(
                "`{wire}` cannot be a tool argument: it has the word `{word}`, so it {}; {}. This holds in \
                 every tier, and no opt-in or declaration lifts it",
                category.what(),
                category.instead()
            );
        }
        Forbidden::Ambiguous(word) => {
            return format!(
                "`{wire}` cannot be a tool argument as it stands: `{word}` names the counterparty in some ERPs \
                 (NetSuite's `entity` on a purchase order is its vendor) and the company or tenant in others \
                 (iDempiere's `AD_Client_ID`), and the framework cannot tell which; if it is the vendor or \
                 customer the caller chooses, declare it: `#[erp(kind = \"reference\", of = \"vendor\")]` \
                 (or `of = \"customer\"`); if it is the company, remove it, the company comes from the caller's \
                 token (ToolContext::branch_id)"
            );
        }
    };
    format!("`{wire}` cannot be a tool argument; {source}, remove the field")
}

/// The compile error for a name forbidden in draft tools, worded for any domain (a
/// purchase order, a sales quote, a payment request).
pub fn draft_message(wire: &str, why: DraftForbidden) -> String {
    let reason = match why {
        DraftForbidden::Erp(f) => {
            return format!(
                "`{wire}` cannot be an argument of a draft tool: {}; {}",
                f.evidence(),
                f.category.instead()
            );
        }
        DraftForbidden::Status => {
            "a draft is always created in status draft and only a person moves it on"
        }
        DraftForbidden::Price => {
            return format!(
                "`{wire}` cannot be an argument of a draft tool: prices come from the ERP's price list on the \
                 server; remove the field and take what the price is looked up by (an item code and a unit), the \
                 server prices the line"
            );
        }
        DraftForbidden::Total => "prices and totals are computed by the server from its own data",
        DraftForbidden::PostingDate => {
            "posting and approval dates are set when a person posts or approves the document"
        }
        DraftForbidden::Marked(category, word) => {
            return format!(
                "`{wire}` cannot be an argument of a draft tool: it has the word `{word}`, so it {}; {}",
                category.what(),
                category.instead()
            );
        }
    };
    format!("`{wire}` cannot be an argument of a draft tool: {reason}; remove the field")
}
