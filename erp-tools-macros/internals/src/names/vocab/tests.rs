use super::*;
use crate::names::{classify, classify_draft, segments};

/// The models the vocabulary must cover, per ERP: the header and line models of purchase
/// orders, sales orders and supplier invoices.
const REQUIRED: &[(System, &str)] = &[
    (System::Odoo, "purchase.order"),
    (System::Odoo, "purchase.order.line"),
    (System::Odoo, "sale.order"),
    (System::Odoo, "sale.order.line"),
    (System::Odoo, "account.move"),
    (System::Odoo, "account.move.line"),
    (System::Erpnext, "Purchase_Order"),
    (System::Erpnext, "Purchase_Order_Item"),
    (System::Erpnext, "Sales_Order"),
    (System::Erpnext, "Sales_Order_Item"),
    (System::Erpnext, "Purchase_Invoice"),
    (System::Erpnext, "Purchase_Invoice_Item"),
    (System::Tryton, "purchase.purchase"),
    (System::Tryton, "purchase.line"),
    (System::Tryton, "sale.sale"),
    (System::Tryton, "sale.line"),
    (System::SapB1, "PurchaseOrders"),
    (System::SapB1, "DocumentLines"),
    (System::BusinessCentral, "purchaseOrders"),
    (System::BusinessCentral, "purchaseOrderLines"),
];

#[test]
fn every_field_of_every_model_is_classified() {
    // A field line without a known category, a field listed twice in a model or a field
    // before its model is a parse error: the data is complete or this fails.
    let vocab = match parse_all() {
        Ok(v) => v,
        Err(errors) => panic!("unclassified or malformed entries: {errors:#?}"),
    };
    for (system, model) in REQUIRED {
        let fields = vocab
            .entries()
            .iter()
            .filter(|e| e.system == *system && e.model == *model)
            .count();
        assert!(fields >= 20, "{system:?} {model}: only {fields} fields");
    }
    for e in vocab.entries() {
        assert!(
            e.source.starts_with("github:")
                || e.source.starts_with("https://")
                || e.source.starts_with("pypi:"),
            "{e:?} cites no source"
        );
    }
}

#[test]
fn every_refused_field_of_the_erps_is_refused_by_the_rules() {
    for e in vocabulary().entries() {
        // A relation naming the document's lines (account.move's `line_ids`) is a list the
        // derive judges item by item: its items' fields are refused by their own names.
        if crate::names::kinds::names_lines(e.field) {
            continue;
        }
        match e.category {
            Category::Allowed => {}
            c if c.every_tier() => assert!(
                classify(e.field).is_some(),
                "{}: {c:?} in every tier",
                e.cite()
            ),
            c => assert!(
                classify(e.field).is_some() || classify_draft(e.field).is_some(),
                "{}: {c:?} in draft tools",
                e.cite()
            ),
        }
    }
}

#[test]
fn fields_every_erp_allows_stay_allowed_unless_a_rule_says_why() {
    // A field every ERP that has it allows is refused only by one of the rules' own
    // names (a `*_state` that is a region, say); list each such case here, reviewed.
    const REFUSED_BY_OWN_RULES: &[&str] = &[];
    let mut refused = Vec::new();
    for e in vocabulary()
        .entries()
        .iter()
        .filter(|e| e.category == Category::Allowed)
    {
        if lookup(e.field)
            .iter()
            .any(|o| o.category != Category::Allowed)
        {
            continue;
        }
        if classify(e.field).is_some() || classify_draft(e.field).is_some() {
            refused.push(format!(
                "{} ({:?} / {:?})",
                e.cite(),
                classify(e.field),
                classify_draft(e.field).map(|d| d.category())
            ));
        }
    }
    refused.retain(|r| {
        !REFUSED_BY_OWN_RULES
            .iter()
            .any(|f| r.contains(&format!("`{f}`")))
    });
    assert!(
        refused.is_empty(),
        "allowed by the ERPs, refused by the rules:\n{}",
        refused.join("\n")
    );
}

/// One word in the singular or the plural (`discount`, `discounts`; `tax`, `taxes`).
fn same_word(a: &str, b: &str) -> bool {
    let plural = |x: &str, y: &str| {
        x.strip_suffix('s')
            .is_some_and(|x| x == y || x.strip_suffix('e') == Some(y))
    };
    a == b || plural(a, b) || plural(b, a)
}

#[test]
fn marking_words_come_from_the_data() {
    let vocab = vocabulary();
    for cw in words::WORDS {
        let with_word: Vec<&Entry> = vocab
            .entries()
            .iter()
            .filter(|e| segments(e.field).iter().any(|s| same_word(s, cw.word)))
            .collect();
        assert!(
            with_word.iter().any(|e| e.category == cw.category),
            "`{}` marks {:?} but no ERP field of that category has it",
            cw.word,
            cw.category
        );
        let allowed: Vec<String> = with_word
            .iter()
            .filter(|e| e.category == Category::Allowed)
            .map(|e| e.cite())
            .collect();
        assert!(
            allowed.is_empty(),
            "`{}` marks {:?} but the ERPs allow {allowed:?}",
            cw.word,
            cw.category
        );
    }
}

#[test]
fn names_match_through_the_normalisation() {
    for (wire, category) in [
        ("docstatus", Category::Status),
        ("docStatus", Category::Status),
        ("DOC_STATUS", Category::Status),
        ("rate", Category::Price),
        ("line_rate", Category::Price),
        ("x_studio_rate", Category::Price),
        ("owner", Category::Identity),
        ("workflow_state", Category::Workflow),
        ("DiscountPercent", Category::Discount),
        ("discountAmount", Category::Discount),
        ("conversion_rate", Category::ExchangeRate),
    ] {
        let found = lookup(wire);
        assert_eq!(
            found.first().map(|e| e.category),
            Some(category),
            "{wire}: {found:?}"
        );
    }
    assert!(lookup("nothing_any_erp_has").is_empty());
}

#[test]
fn the_size_of_the_vocabulary_per_erp_and_category() {
    // Printed with `cargo test -p erp-tools-internals -- --nocapture vocabulary`; the
    // assertion keeps every ERP represented in every refused category it has data for.
    let vocab = vocabulary();
    for system in System::ALL {
        let of: Vec<&Entry> = vocab
            .entries()
            .iter()
            .filter(|e| e.system == system)
            .collect();
        let counts: Vec<String> = Category::ALL
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c.key(),
                    of.iter().filter(|e| e.category == *c).count()
                )
            })
            .collect();
        println!(
            "{:<17} {:>4} fields: {}",
            system.display(),
            of.len(),
            counts.join(", ")
        );
        assert!(of.len() > 100, "{system:?}");
    }
}
