//! Wire names: serde's renaming rules, the split of a name into words, and the classifier
//! that decides whether a name may be a tool argument.
//!
//! Everything here is a pure function on strings so it can be unit-tested without a
//! compiler in the loop.

/// One of serde's `rename_all` rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    /// Every rule with the spelling serde accepts.
    pub const ALL: [(&'static str, RenameRule); 8] = [
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    /// The rule serde spells `name`.
    pub fn parse(name: &str) -> Option<RenameRule> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
    }

    /// Applies the rule to a struct field name (written in `snake_case`), as serde does.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                lower_first(&pascal)
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_field(field)
                .replace('_', "-"),
        }
    }

    /// Applies the rule to an enum variant name (written in `PascalCase`), as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_string(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// Splits a wire name into lower-case words: on `_`, `-`, `.` and spaces, and on case
/// changes (`branchId` → `branch`, `id`; `BranchID` → `branch`, `id`;
/// `HTTPServer` → `http`, `server`).
pub fn segments(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // `branchId`: a capital after a lower-case letter or digit starts a word;
            // `HTTPServer`: the last capital of a run starts a word when a lower-case follows.
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

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
}

/// Why a wire name may not be an argument of a draft tool (read tools may take it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DraftForbidden {
    /// `status`, `state`, `*_status`.
    Status,
    /// Any word `price` (`unit_price`, `price_per_unit`), `unit_cost`.
    Price,
    /// `total`, `amount_total`, `grand_total`, `subtotal`, ...
    Total,
    /// `posting_date`, `posted_at`, `approved_at`, ...
    PostingDate,
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

/// Classifies a wire name against the rules for every tier.
pub fn classify(wire: &str) -> Option<Forbidden> {
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

/// Classifies a wire name against the extra rules for draft tools.
pub fn classify_draft(wire: &str) -> Option<DraftForbidden> {
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
    };
    format!("`{wire}` cannot be a tool argument; {source}, remove the field")
}

/// The compile error for a name forbidden in draft tools, worded for any domain (a
/// purchase order, a sales quote, a payment request).
pub fn draft_message(wire: &str, why: DraftForbidden) -> String {
    let reason = match why {
        DraftForbidden::Status => {
            "a draft is always created in status draft and only a person moves it on"
        }
        DraftForbidden::Price | DraftForbidden::Total => {
            "prices and totals are computed by the server from its own data"
        }
        DraftForbidden::PostingDate => {
            "posting and approval dates are set when a person posts or approves the document"
        }
    };
    format!("`{wire}` cannot be an argument of a draft tool: {reason}; remove the field")
}

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

/// Edit distance between two short strings, counting a swap of neighbours as one edit
/// (for "did you mean" suggestions: `titel` is one edit from `title`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) || c.starts_with(word) || word.starts_with(c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A function name as a title: `create_po_draft` → `Create po draft`.
pub fn humanise(ident: &str) -> String {
    let words = segments(ident).join(" ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// Joins doc-comment lines into a description: a common leading space is dropped, lines of
/// one paragraph are joined with a space, paragraphs with a blank line, and list items
/// (`- `, `* `, `1. `) keep their own line.
pub fn join_doc(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for raw in lines.iter().flat_map(|l| l.split('\n')) {
        let line = raw.trim();
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            if blank {
                out.push_str("\n\n");
            } else if is_list_item(line) {
                out.push('\n');
            } else {
                out.push(' ');
            }
        }
        blank = false;
        out.push_str(line);
    }
    out
}

fn is_list_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_rules_match_serde() {
        // (rule, field `target_branch_code`, variant `VeryTasty`), as serde renames them.
        let expect = [
            (RenameRule::Lower, "target_branch_code", "verytasty"),
            (RenameRule::Upper, "TARGET_BRANCH_CODE", "VERYTASTY"),
            (RenameRule::Pascal, "TargetBranchCode", "VeryTasty"),
            (RenameRule::Camel, "targetBranchCode", "veryTasty"),
            (RenameRule::Snake, "target_branch_code", "very_tasty"),
            (
                RenameRule::ScreamingSnake,
                "TARGET_BRANCH_CODE",
                "VERY_TASTY",
            ),
            (RenameRule::Kebab, "target-branch-code", "very-tasty"),
            (
                RenameRule::ScreamingKebab,
                "TARGET-BRANCH-CODE",
                "VERY-TASTY",
            ),
        ];
        for (rule, field, variant) in expect {
            assert_eq!(rule.apply_to_field("target_branch_code"), field, "{rule:?}");
            assert_eq!(rule.apply_to_variant("VeryTasty"), variant, "{rule:?}");
        }
        for (name, rule) in RenameRule::ALL {
            assert_eq!(RenameRule::parse(name), Some(rule));
        }
        assert_eq!(RenameRule::parse("camelcase"), None);
    }

    #[test]
    fn splits_names_into_words() {
        let cases: &[(&str, &[&str])] = &[
            ("branch_id", &["branch", "id"]),
            ("branchId", &["branch", "id"]),
            ("BranchID", &["branch", "id"]),
            ("targetBranchCode", &["target", "branch", "code"]),
            ("TARGET-BRANCH-CODE", &["target", "branch", "code"]),
            ("HTTPServer", &["http", "server"]),
            ("line2Qty", &["line2", "qty"]),
            ("__weird__name_", &["weird", "name"]),
            ("username", &["username"]),
            ("", &[]),
        ];
        for (name, words) in cases {
            assert_eq!(segments(name), *words, "{name}");
        }
    }

    #[test]
    fn forbids_scope_and_identity_names_in_every_tier() {
        let forbidden = [
            ("branch", Forbidden::Scope("branch")),
            ("branch_id", Forbidden::Scope("branch")),
            ("branchId", Forbidden::Scope("branch")),
            ("branch_code", Forbidden::Scope("branch")),
            ("target_branch_code", Forbidden::Scope("branch")),
            ("BRANCH-NO", Forbidden::Scope("branch")),
            ("branches", Forbidden::Scope("branch")),
            ("tenant_id", Forbidden::Scope("tenant")),
            ("company_id", Forbidden::Scope("company")),
            ("companyKey", Forbidden::Scope("company")),
            ("user_id", Forbidden::Identity),
            ("user", Forbidden::Identity),
            ("username", Forbidden::Identity),
            ("userName", Forbidden::Identity),
            ("user_email", Forbidden::Identity),
            ("on_behalf_of", Forbidden::Identity),
            ("onBehalfOf", Forbidden::Identity),
            ("created_by", Forbidden::Identity),
            ("approved_by", Forbidden::Identity),
            ("requested_by", Forbidden::Identity),
            ("submitted_by", Forbidden::Identity),
            ("posted_by", Forbidden::Identity),
            ("agent_run_id", Forbidden::RunIds),
            ("run_id", Forbidden::RunIds),
            ("tool_call_id", Forbidden::RunIds),
            ("agentId", Forbidden::RunIds),
            ("scopes", Forbidden::Authority),
            ("roles", Forbidden::Authority),
        ];
        for (name, why) in forbidden {
            assert_eq!(classify(name), Some(why), "{name}");
        }
    }

    #[test]
    fn allows_business_names() {
        for name in [
            "vendor_code",
            "item_code",
            "qty",
            "uom",
            "needed_by",
            "sort_by",
            "order_by",
            "group_by",
            "dry_run",
            "branch_count",
            "company_vendor_code",
            "warehouse_code",
            "client_ref",
            "note",
            "status",
            "unit_price",
            "sales_agent_code",
            "principal_amount",
            "company_name",
        ] {
            assert_eq!(classify(name), None, "{name}");
        }
    }

    #[test]
    fn forbids_server_owned_names_in_draft_tools() {
        let forbidden = [
            ("status", DraftForbidden::Status),
            ("state", DraftForbidden::Status),
            ("po_status", DraftForbidden::Status),
            ("docStatus", DraftForbidden::Status),
            ("unit_price", DraftForbidden::Price),
            ("price", DraftForbidden::Price),
            ("price_per_unit", DraftForbidden::Price),
            ("unitPrice", DraftForbidden::Price),
            ("unit_cost", DraftForbidden::Price),
            ("amount_total", DraftForbidden::Total),
            ("total_amount", DraftForbidden::Total),
            ("grand_total", DraftForbidden::Total),
            ("subtotal", DraftForbidden::Total),
            ("posting_date", DraftForbidden::PostingDate),
            ("posted_at", DraftForbidden::PostingDate),
            ("post_date", DraftForbidden::PostingDate),
            ("posted_on", DraftForbidden::PostingDate),
            ("approved_at", DraftForbidden::PostingDate),
            ("postingDate", DraftForbidden::PostingDate),
        ];
        for (name, why) in forbidden {
            assert_eq!(classify_draft(name), Some(why), "{name}");
        }
        for name in [
            "vendor_code",
            "qty",
            "needed_by",
            "ship_to_state",
            "note",
            "client_ref",
            "cost_center",
        ] {
            assert_eq!(classify_draft(name), None, "{name}");
        }
    }

    #[test]
    fn messages_say_where_the_value_comes_from() {
        let m = forbidden_message("branch_id", Forbidden::Scope("branch"));
        assert_eq!(
            m,
            "`branch_id` cannot be a tool argument; the branch comes from the caller's token \
             (ToolContext::branch_id, ToolContext::branch_code), remove the field"
        );
        assert_eq!(
            draft_message("unit_price", DraftForbidden::Price),
            "`unit_price` cannot be an argument of a draft tool: prices and totals are \
             computed by the server from its own data; remove the field"
        );
        assert!(draft_message("status", DraftForbidden::Status).contains("status draft"));
        assert!(
            draft_message("grand_total", DraftForbidden::Total).contains("computed by the server")
        );
        assert!(
            draft_message("posted_at", DraftForbidden::PostingDate)
                .contains("when a person posts or approves")
        );
        for why in [DraftForbidden::Price, DraftForbidden::Total] {
            let m = draft_message("price", why);
            assert!(!m.contains("vendor") && !m.contains("purchase"), "{m}");
        }
        for m in [
            forbidden_message("user_id", Forbidden::Identity),
            draft_message("status", DraftForbidden::Status),
        ] {
            assert!(!m.contains('{') && !m.ends_with('.'), "{m}");
            assert_eq!(m, m.trim());
        }
    }

    #[test]
    fn unit_like_names() {
        for name in [
            "uom",
            "unit",
            "currency",
            "order_uom",
            "baseUnit",
            "price_currency",
            "baseunit",
            "ordercurrency",
            "ccy",
            "currencies",
        ] {
            let w = unit_word(name).unwrap_or_else(|| panic!("{name}"));
            assert!(w.head, "{name} is itself a unit or currency");
        }
        for name in [
            "currency_code",
            "currencyCode",
            "currencycode",
            "uom_code",
            "uomName",
            "base_uom_name",
            "unit_of_measure",
            "ISOCurrencyCode",
            "units_per_box",
            "uom_factor",
            "currency_iso",
            "unitcode",
        ] {
            let w = unit_word(name).unwrap_or_else(|| panic!("{name}"));
            assert!(!w.head, "{name} qualifies another word");
        }
        assert_eq!(
            unit_word("ccy_code").map(|w| w.kind),
            Some(UnitKind::Currency)
        );
        assert_eq!(unit_word("uom_code").map(|w| w.kind), Some(UnitKind::Unit));
        for name in [
            "qty",
            "community",
            "united_states",
            "opportunity",
            "note",
            "unity",
        ] {
            assert!(!is_unit_like(name), "{name}");
        }
    }

    #[test]
    fn suggestions_and_titles() {
        let keys = ["module", "tier", "scopes", "title", "limit"];
        assert_eq!(closest("scope", &keys), Some("scopes"));
        assert_eq!(closest("modul", &keys), Some("module"));
        assert_eq!(closest("teir", &keys), Some("tier"));
        assert_eq!(closest("titel", &keys), Some("title"));
        assert_eq!(edit_distance("titel", "title"), 1);
        assert_eq!(closest("limits", &keys), Some("limit"));
        assert_eq!(closest("zzzzzz", &keys), None);
        assert_eq!(humanise("create_po_draft"), "Create po draft");
        assert_eq!(
            join_doc(&[
                " Create a draft.".into(),
                " Second line.".into(),
                "".into(),
                " - item".into(),
                " - item 2".into()
            ]),
            "Create a draft. Second line.\n\n- item\n- item 2"
        );
    }
}
