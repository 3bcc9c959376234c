//! The argument-name rules (SPEC D4), as plain functions over wire names.
//!
//! `#[derive(ToolArgs)]` applies the same rules at compile time; this copy lets the
//! registry and the surface report re-check a finished schema, whatever produced it.

use crate::tool::Tier;

/// Why a field name may not be a tool argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForbiddenField {
    /// Names a branch, tenant or company: the branch comes from the caller's token.
    Branch,
    /// Names a person or run: identity comes from the caller's token.
    Identity,
    /// A status, price, total or posting field: not for a draft tool.
    DraftOnly,
}

/// Splits a wire name into lower-case words: `branchId`, `branch-id` and `BRANCH_ID` all
/// become `["branch", "id"]`.
pub fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let boundary = c.is_uppercase()
            && i > 0
            && (chars[i - 1].is_lowercase()
                || (chars[i - 1].is_uppercase()
                    && chars.get(i + 1).is_some_and(|n| n.is_lowercase())));
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const SCOPE_WORDS: &[&str] = &["branch", "tenant", "company"];
const SCOPE_TAILS: &[&str] = &[
    "id", "code", "no", "number", "key", "branch", "tenant", "company",
];
const IDENTITY: &[&str] = &[
    "user",
    "user_id",
    "username",
    "on_behalf_of",
    "created_by",
    "approved_by",
    "requested_by",
    "submitted_by",
    "posted_by",
    "agent_run_id",
    "run_id",
    "tool_call_id",
    "scopes",
    "roles",
];
const DRAFT_EXACT: &[&str] = &[
    "status",
    "state",
    "amount_total",
    "total_amount",
    "grand_total",
    "subtotal",
    "posting_date",
    "posted_at",
    "post_date",
    "posted_on",
    "approved_at",
];

/// Classifies a wire name for a tool of `tier`; `None` means the name is allowed.
pub fn forbidden_field(name: &str, tier: Tier) -> Option<ForbiddenField> {
    let w = words(name);
    let snake = w.join("_");
    let last = w.last().map(String::as_str).unwrap_or("");
    if w.iter().any(|x| SCOPE_WORDS.contains(&x.as_str())) && SCOPE_TAILS.contains(&last) {
        return Some(ForbiddenField::Branch);
    }
    if IDENTITY.contains(&snake.as_str()) {
        return Some(ForbiddenField::Identity);
    }
    if tier == Tier::Draft
        && (DRAFT_EXACT.contains(&snake.as_str())
            || last == "status"
            || w.iter().any(|x| x == "price"))
    {
        return Some(ForbiddenField::DraftOnly);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_casing() {
        assert_eq!(words("branchId"), ["branch", "id"]);
        assert_eq!(words("BRANCH_ID"), ["branch", "id"]);
        assert_eq!(words("branch-code"), ["branch", "code"]);
        assert_eq!(words("HTTPServerId"), ["http", "server", "id"]);
    }

    #[test]
    fn classifies() {
        use ForbiddenField::*;
        assert_eq!(forbidden_field("branch_id", Tier::Read), Some(Branch));
        assert_eq!(
            forbidden_field("targetBranchCode", Tier::Read),
            Some(Branch)
        );
        assert_eq!(forbidden_field("company", Tier::Read), Some(Branch));
        assert_eq!(forbidden_field("vendor_company_name", Tier::Read), None);
        assert_eq!(forbidden_field("onBehalfOf", Tier::Draft), Some(Identity));
        assert_eq!(forbidden_field("status", Tier::Read), None);
        assert_eq!(forbidden_field("status", Tier::Draft), Some(DraftOnly));
        assert_eq!(forbidden_field("unitPrice", Tier::Draft), Some(DraftOnly));
        assert_eq!(forbidden_field("amount", Tier::Draft), None);
        assert_eq!(forbidden_field("qty", Tier::Draft), None);
    }
}
