//! The argument-name rules (SPEC D4), as plain functions over wire names.
//!
//! `#[derive(ToolArgs)]` applies these rules at compile time; this module calls the very
//! same code (the `erp-tools-internals` crate, which the macro crate uses too) so the
//! registry and the surface report can re-check a finished schema, whatever produced it,
//! with no second copy of the lists.

use erp_tools_internals::names;

use crate::tool::Tier;

/// Why a field name may not be a tool argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ForbiddenField {
    /// Names a branch, tenant or company: the branch comes from the caller's token.
    Branch,
    /// Names a person, run, call or authority: identity comes from the caller's token.
    Identity,
    /// A status, price, total or posting field: not for a draft tool.
    DraftOnly,
}

/// Whether a property is refused in a tool of `tier`: its name is forbidden, and no
/// opt-in of the refusing category (`#[erp(allow = "..")]`) allows it. Identity and
/// company names are refused whatever the opt-in says.
pub(crate) fn refused(p: &crate::schema::Property, tier: Tier) -> bool {
    if declared_counterparty(p) {
        return tier == Tier::Draft && names::classify_draft(&p.name).is_some();
    }
    match forbidden_field(&p.name, tier) {
        None => false,
        Some(ForbiddenField::DraftOnly) => !p.opt_in.as_ref().is_some_and(|o| {
            names::classify_draft(&p.name).is_some_and(|why| why.category().key() == o.category)
        }),
        Some(_) => true,
    }
}

/// Whether a property whose name is an ambiguous party (`entity`, `client`) is declared a
/// reference to a counterparty (`#[erp(kind = "reference", of = "vendor")]`), which takes
/// it in every tier.
pub(crate) fn declared_counterparty(p: &crate::schema::Property) -> bool {
    matches!(
        names::classify(&p.name),
        Some(names::Forbidden::Ambiguous(_))
    ) && p.kind.as_ref().is_some_and(|k| {
        k.kind == "reference" && k.of.as_deref().is_some_and(names::judge::is_counterparty)
    })
}

/// Classifies a wire name for a tool of `tier`; `None` means the name is allowed.
pub(crate) fn forbidden_field(name: &str, tier: Tier) -> Option<ForbiddenField> {
    match names::classify(name) {
        Some(names::Forbidden::Scope(_)) => return Some(ForbiddenField::Branch),
        Some(names::Forbidden::Erp(f)) if f.category == names::vocab::Category::Company => {
            return Some(ForbiddenField::Branch);
        }
        Some(_) => return Some(ForbiddenField::Identity),
        None => {}
    }
    if tier == Tier::Draft && names::classify_draft(name).is_some() {
        return Some(ForbiddenField::DraftOnly);
    }
    None
}

/// Whether a module description says what the module cannot do (SPEC R2): it names a
/// limit ("Cannot approve, send or post orders.", "can't", "can not") or says the module
/// is read only.
pub(crate) fn says_what_it_cannot_do(description: &str) -> bool {
    let d = description.to_lowercase();
    ["cannot", "can't", "can not", "read only", "read-only"]
        .iter()
        .any(|w| d.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_descriptions_must_say_what_they_cannot_do() {
        assert!(says_what_it_cannot_do(
            "Purchase orders. Cannot approve or post."
        ));
        assert!(says_what_it_cannot_do("Stock per warehouse. Read only."));
        assert!(says_what_it_cannot_do("Stock; it can't move stock"));
        assert!(!says_what_it_cannot_do(
            "Purchase orders for the caller's branch."
        ));
        assert!(!says_what_it_cannot_do(""));
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
    }

    #[test]
    fn an_opt_in_allows_only_the_category_that_refuses_the_field() {
        use crate::schema::{Property, Schema, SchemaKind};
        use ForbiddenField::*;
        let field = |name: &'static str| Property::new(name, Schema::new(SchemaKind::Decimal));
        assert!(refused(&field("discount"), Tier::Draft));
        assert!(!refused(&field("discount"), Tier::Read));
        assert!(!refused(
            &field("discount").with_opt_in("discount", "the customer asked; a manager approves"),
            Tier::Draft
        ));
        assert!(refused(
            &field("discount").with_opt_in("price", "wrong category"),
            Tier::Draft
        ));
        assert!(refused(
            &field("owner").with_opt_in("identity", "never allowed"),
            Tier::Draft
        ));
        assert_eq!(forbidden_field("cost_center", Tier::Read), Some(Branch));
        assert_eq!(forbidden_field("docstatus", Tier::Draft), Some(DraftOnly));
        assert_eq!(forbidden_field("docstatus", Tier::Read), None);
    }
}
