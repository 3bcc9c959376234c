//! The argument-name rules (SPEC D4), as plain functions over wire names.
//!
//! `#[derive(ToolArgs)]` applies these rules at compile time; this module compiles the
//! very same source (the macro crate's `names.rs`) so the registry and the surface report
//! can re-check a finished schema, whatever produced it, with no second copy of the lists.

use crate::tool::Tier;

#[allow(dead_code, unreachable_pub)]
#[path = "../../erp-tools-macros/src/names.rs"]
mod names;

/// Why a field name may not be a tool argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForbiddenField {
    /// Names a branch, tenant or company: the branch comes from the caller's token.
    Branch,
    /// Names a person, run, call or authority: identity comes from the caller's token.
    Identity,
    /// A status, price, total or posting field: not for a draft tool.
    DraftOnly,
}

/// Splits a wire name into lower-case words: `branchId`, `branch-id` and `BRANCH_ID` all
/// become `["branch", "id"]`.
pub fn words(name: &str) -> Vec<String> {
    names::segments(name)
}

/// Whether a tool name or property key matches `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn valid_key(name: &str) -> bool {
    names::valid_key(name)
}

/// Classifies a wire name for a tool of `tier`; `None` means the name is allowed.
pub fn forbidden_field(name: &str, tier: Tier) -> Option<ForbiddenField> {
    match names::classify(name) {
        Some(names::Forbidden::Scope(_)) => return Some(ForbiddenField::Branch),
        Some(_) => return Some(ForbiddenField::Identity),
        None => {}
    }
    if tier == Tier::Draft && names::classify_draft(name).is_some() {
        return Some(ForbiddenField::DraftOnly);
    }
    None
}

/// The compile-time error text for a forbidden name: where the value comes from instead
/// and what to do.
pub fn explain(name: &str, tier: Tier) -> Option<String> {
    if let Some(why) = names::classify(name) {
        return Some(names::forbidden_message(name, why));
    }
    match (tier, names::classify_draft(name)) {
        (Tier::Draft, Some(why)) => Some(names::draft_message(name, why)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_casing() {
        assert_eq!(words("branchId"), ["branch", "id"]);
        assert_eq!(words("BRANCH_ID"), ["branch", "id"]);
        assert_eq!(words("branch-code"), ["branch", "code"]);
    }

    #[test]
    fn classifies_like_the_derive() {
        use ForbiddenField::*;
        assert_eq!(forbidden_field("branch_id", Tier::Read), Some(Branch));
        assert_eq!(
            forbidden_field("targetBranchCode", Tier::Read),
            Some(Branch)
        );
        assert_eq!(forbidden_field("vendor_company_name", Tier::Read), None);
        assert_eq!(forbidden_field("onBehalfOf", Tier::Draft), Some(Identity));
        assert_eq!(forbidden_field("agent_run_id", Tier::Read), Some(Identity));
        assert_eq!(forbidden_field("status", Tier::Read), None);
        assert_eq!(forbidden_field("status", Tier::Draft), Some(DraftOnly));
        assert_eq!(forbidden_field("unitPrice", Tier::Draft), Some(DraftOnly));
        assert_eq!(forbidden_field("qty", Tier::Draft), None);
        assert!(explain("branch_id", Tier::Read).unwrap().contains("token"));
    }
}
