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
        assert_eq!(
            classify_draft(name).map(DraftForbidden::category),
            Some(why.category()),
            "{name}"
        );
    }
    for name in [
        "vendor_code",
        "qty",
        "needed_by",
        "ship_to_state",
        "note",
        "client_ref",
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
        "`unit_price` cannot be an argument of a draft tool: prices come from the ERP's \
         price list on the server; remove the field and take what the price is looked up by \
         (an item code and a unit), the server prices the line"
    );
    assert!(draft_message("status", DraftForbidden::Status).contains("status draft"));
    assert!(draft_message("grand_total", DraftForbidden::Total).contains("computed by the server"));
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
