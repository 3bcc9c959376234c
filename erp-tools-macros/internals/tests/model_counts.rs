//! The draft guard over whole published ERP models that are not in the vocabulary table:
//! every field of each model (`tests/models/<erp>.txt`, each labelled by what it is in its
//! ERP and typed as a team copying it would type it) is judged as a draft tool's argument,
//! and the counts are checked: the unsafe fields refused, the safe ones taken.
//!
//! Run with `--nocapture` to see the table:
//! `cargo test -p erp-tools-internals --test model_counts -- --nocapture`.

use std::collections::BTreeMap;

use erp_tools_internals::names::judge::{DraftVerdict, judge_draft};
use erp_tools_internals::names::shape;

/// What a field is, by its meaning in its ERP.
const SAFE: &[&str] = &[
    "reference",
    "quantity",
    "unit",
    "currency",
    "date",
    "note",
    "lines",
    "choice",
    "position",
];
const UNSAFE: &[&str] = &[
    "identity",
    "company",
    "status",
    "workflow",
    "price",
    "discount",
    "tax",
    "exchange_rate",
    "amount",
    "dimension",
    "other",
];

struct Field {
    erp: String,
    model: String,
    name: String,
    shape: u16,
    what: String,
}

fn shape_of(ty: &str) -> Option<u16> {
    Some(match ty {
        "text" => shape::TEXT,
        "int" | "decimal" => shape::NUMBER,
        "date" => shape::DATE,
        "datetime" => shape::OTHER,
        "bool" => shape::BOOL,
        "enum" => shape::ENUM,
        "lines" | "object" => shape::OBJECT,
        "uuid" => shape::UUID,
        _ => return None,
    })
}

fn read_models() -> Vec<Field> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/models")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("model file");
        let mut model = String::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let parts: Vec<&str> = line.split_whitespace().collect();
            let at = format!("{}:{}", path.display(), n + 1);
            if parts[0] == "@model" {
                assert!(parts.len() >= 4, "{at}: `@model <erp> <model> <source>`");
                model = parts[2].to_string();
                continue;
            }
            assert_eq!(parts.len(), 3, "{at}: `<field> <type> <what>`");
            assert!(!model.is_empty(), "{at}: a field before any @model");
            let shape =
                shape_of(parts[1]).unwrap_or_else(|| panic!("{at}: unknown type {}", parts[1]));
            assert!(
                SAFE.contains(&parts[2]) || UNSAFE.contains(&parts[2]),
                "{at}: unknown label {}",
                parts[2]
            );
            out.push(Field {
                erp: path.file_stem().unwrap().to_string_lossy().into_owned(),
                model: model.clone(),
                name: parts[0].to_string(),
                shape,
                what: parts[2].to_string(),
            });
        }
    }
    out
}

fn taken(f: &Field) -> bool {
    matches!(
        judge_draft(&f.name, f.shape, None, false),
        DraftVerdict::Allowed(_)
    )
}

#[test]
fn whole_models_of_other_erps_judged_as_draft_arguments() {
    let fields = read_models();
    assert!(
        fields.len() > 500,
        "the model files hold {} fields",
        fields.len()
    );
    // (erp) -> [unsafe refused, unsafe, safe taken, safe]
    let mut per_erp: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut per_what: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    let mut admitted = Vec::new();
    let mut refused_safe = Vec::new();
    for f in &fields {
        let row = per_erp.entry(f.erp.clone()).or_default();
        let by = per_what.entry(f.what.clone()).or_default();
        let ok = taken(f);
        by[1] += 1;
        if SAFE.contains(&f.what.as_str()) {
            row[3] += 1;
            if ok {
                row[2] += 1;
                by[0] += 1;
            } else {
                refused_safe.push(format!(
                    "{} {}.{} ({}): {:?}",
                    f.erp,
                    f.model,
                    f.name,
                    f.what,
                    judge_draft(&f.name, f.shape, None, false)
                ));
            }
        } else {
            row[1] += 1;
            if ok {
                admitted.push(format!("{} {}.{} ({})", f.erp, f.model, f.name, f.what));
            } else {
                row[0] += 1;
                by[0] += 1;
            }
        }
    }
    println!(
        "{:<16} {:>16} {:>16}",
        "erp", "unsafe refused", "safe taken"
    );
    let mut total = [0usize; 4];
    for (erp, r) in &per_erp {
        println!(
            "{erp:<16} {:>10} of {:>3} {:>10} of {:>3}",
            r[0], r[1], r[2], r[3]
        );
        for i in 0..4 {
            total[i] += r[i];
        }
    }
    println!(
        "{:<16} {:>10} of {:>3} {:>10} of {:>3}",
        "all", total[0], total[1], total[2], total[3]
    );
    println!("\nby what the field is (refused for unsafe, taken for safe):");
    for (what, r) in &per_what {
        println!("  {what:<14} {:>4} of {:>4}", r[0], r[1]);
    }
    println!(
        "\nunsafe fields taken ({}):\n  {}",
        admitted.len(),
        admitted.join("\n  ")
    );
    println!(
        "\nsafe fields refused ({}):\n  {}",
        refused_safe.len(),
        refused_safe.join("\n  ")
    );
    // Every field of a named unsafe category is refused, but for these, reviewed: the
    // document's own number (a draft tool that changes a draft names it, so a number is a
    // reference), and names whose every word is a reference to master data.
    const REVIEWED: &[(&str, &str)] = &[
        (
            "acumatica PurchaseOrder.OrderNbr",
            "the document's number: a reference",
        ),
        (
            "dolibarr CommandeFournisseur.ref",
            "the document's number: a reference",
        ),
        (
            "idempiere C_Order.DocumentNo",
            "the document's number: a reference",
        ),
        (
            "intacct create_potransaction.documentno",
            "the document's number: a reference",
        ),
        (
            "tryton_invoice account.invoice.number",
            "the document's number: a reference",
        ),
        (
            "tryton_invoice account.invoice.sequence",
            "a sequence is read as a line's position",
        ),
        (
            "d365_fo PurchaseOrderHeadersV2.ChargeVendorGroupId",
            "a vendor group, by its words",
        ),
        (
            "d365_fo PurchaseOrderLinesV2.VendorInvoiceMatchingPolicy",
            "an enum: a choice",
        ),
        (
            "d365_fo PurchaseOrderHeadersV2.EUSalesListCode",
            "a list code: no tax word",
        ),
        (
            "d365_fo PurchaseOrderLinesV2.DIOTOperationType",
            "an enum: a choice",
        ),
        (
            "idempiere C_Order.ShippingRateInquiry",
            "a shipping reference, by its words",
        ),
        (
            "idempiere C_OrderLine.RRStartDate",
            "a start date asked for, by its words",
        ),
        (
            "intacct potransitem.locationid",
            "a location is a warehouse elsewhere",
        ),
        (
            "netsuite PurchaseOrder.linkedTrackingNumbers",
            "tracking numbers: references",
        ),
    ];
    let unreviewed: Vec<&String> = admitted
        .iter()
        .filter(|a| !a.ends_with("(other)"))
        .filter(|a| {
            !REVIEWED
                .iter()
                .any(|(f, _)| a.starts_with(&format!("{f} ")))
        })
        .collect();
    assert!(
        unreviewed.is_empty(),
        "unsafe fields a draft takes:\n{unreviewed:?}"
    );
    // Over all unsafe fields (with those labelled `other`, the ERP's own bookkeeping and
    // technical fields), and over the safe side: what this build measures, as a floor.
    let unsafe_ratio = total[0] as f64 / total[1] as f64;
    let safe_ratio = total[2] as f64 / total[3] as f64;
    println!(
        "\nunsafe refused {:.1}%, safe taken {:.1}%",
        unsafe_ratio * 100.0,
        safe_ratio * 100.0
    );
    assert!(
        unsafe_ratio >= 0.89,
        "only {:.1}% of the unsafe fields are refused",
        unsafe_ratio * 100.0
    );
    assert!(
        safe_ratio >= 0.77,
        "only {:.1}% of the safe fields are taken",
        safe_ratio * 100.0
    );
}
