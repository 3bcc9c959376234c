//! What an approval card says beyond the approval itself: where an approved action stands
//! after its run resumed (created, or paused again because the document changed), what
//! changed between the preview a person approved and the new one, and a recent draft the
//! proposal repeats.

use serde_json::{Value, json};

use super::document::DocumentView;
use super::pages::Console;
use super::render::when;
use crate::agent::{ApprovalStatus, StoredApproval};
use crate::runtime::{Preview, PreviewKind};
use crate::store::review as sql;

/// How long a draft counts as recent for the repeat warning: 7 days.
const REPEAT_WINDOW_HOURS: i64 = 24 * 7;

/// The approval that replaced `a`: the same call of the same run, proposed again after
/// `a` (its run paused again with a new preview).
pub(super) fn successor<'a>(
    a: &StoredApproval,
    all: &'a [StoredApproval],
) -> Option<&'a StoredApproval> {
    all.iter()
        .filter(|b| b.run_id == a.run_id && b.call_id == a.call_id && b.id > a.id)
        .min_by_key(|b| b.id)
}

/// The approved approval `a` replaced, if `a` is the same call proposed again.
pub(super) fn predecessor<'a>(
    a: &StoredApproval,
    all: &'a [StoredApproval],
) -> Option<&'a StoredApproval> {
    all.iter()
        .filter(|b| {
            b.run_id == a.run_id
                && b.call_id == a.call_id
                && b.id < a.id
                && b.status == ApprovalStatus::Approved
        })
        .max_by_key(|b| b.id)
}

/// Where `a` stands, in one label that cannot contradict itself: `label`, a CSS `class`,
/// and a `detail` sentence.
pub(super) fn state(a: &StoredApproval, next: Option<&StoredApproval>) -> Value {
    let resumed = a.resume_status.as_deref();
    let (label, class, detail) = match a.status {
        ApprovalStatus::Pending => ("waiting for a decision", "pending", None),
        ApprovalStatus::Approved => match (next, resumed) {
            (Some(next), _) => (
                "approved, nothing created",
                "superseded",
                Some(format!(
                    "the document differed from the approved preview when the action ran \
                     (a price changed), so nothing was created; it waits again as approval {}",
                    next.id
                )),
            ),
            (None, Some(status)) => (
                "approved",
                "approved",
                Some(format!(
                    "the run resumed{} and ended {}",
                    if a.resume_count > 1 {
                        format!(" {} times", a.resume_count)
                    } else {
                        String::new()
                    },
                    status.replace('_', " ")
                )),
            ),
            (None, None) => ("approved", "approved", Some("not resumed yet".to_string())),
        },
        ApprovalStatus::Rejected => ("rejected", "rejected", None),
        ApprovalStatus::Expired => ("expired", "expired", None),
    };
    json!({ "label": label, "class": class, "detail": detail })
}

/// What changed between the preview a person approved (`old`) and the new one: each
/// changed header field and line cell, and the total, old against new. `None` when the
/// console has no view of the document type or nothing it shows changed.
pub(super) fn diff(c: &Console, old: &Preview, new: &Preview) -> Option<Value> {
    if old.kind == PreviewKind::Refused || new.kind == PreviewKind::Refused {
        return None;
    }
    diff_in(c.config.view(new.document_type.as_deref()?)?, old, new)
}

fn diff_in(view: &DocumentView, old: &Preview, new: &Preview) -> Option<Value> {
    let (before, after) = (view.render(&old.value), view.render(&new.value));
    let mut changes = Vec::new();
    let cells = |doc: &Value| doc["header"].as_array().cloned().unwrap_or_default();
    for (b, a) in cells(&before).iter().zip(cells(&after).iter()) {
        if b["value"] != a["value"] {
            changes.push(json!({
                "what": b["label"], "old": b["value"], "new": a["value"],
            }));
        }
    }
    let columns = after["columns"].as_array().cloned().unwrap_or_default();
    let lines = |doc: &Value| doc["lines"].as_array().cloned().unwrap_or_default();
    let (old_lines, new_lines) = (lines(&before), lines(&after));
    for i in 0..old_lines.len().max(new_lines.len()) {
        let (o, n) = (old_lines.get(i), new_lines.get(i));
        let name = n
            .or(o)
            .and_then(|l| l[0].as_str())
            .unwrap_or("")
            .to_string();
        match (o, n) {
            (Some(o), Some(n)) => {
                for (j, col) in columns.iter().enumerate() {
                    if o[j] != n[j] {
                        changes.push(json!({
                            "what": format!("line {} ({name}): {}", i + 1, col["label"].as_str().unwrap_or("")),
                            "old": o[j], "new": n[j],
                        }));
                    }
                }
            }
            (Some(_), None) => changes.push(json!({
                "what": format!("line {} ({name})", i + 1), "old": "present", "new": "removed",
            })),
            (None, Some(_)) => changes.push(json!({
                "what": format!("line {} ({name})", i + 1), "old": "absent", "new": "added",
            })),
            (None, None) => {}
        }
    }
    if before["total"] != after["total"] {
        changes.push(json!({ "what": "Total", "old": before["total"], "new": after["total"] }));
    }
    (!changes.is_empty()).then(|| json!({ "changes": changes }))
}

/// Documents drafted recently in `branch_id` that `a`'s preview repeats: the same
/// counterparty and the same lines (items, quantities, units), by the application's
/// view of the document type. Each with its number, link, age and who it was drafted for.
pub(super) async fn repeats(
    c: &Console,
    pool: &sqlx::AnyPool,
    branch_id: i64,
    a: &StoredApproval,
) -> Result<Vec<Value>, sqlx::Error> {
    let Some(preview) = a
        .preview
        .as_ref()
        .filter(|p| p.kind != PreviewKind::Refused)
    else {
        return Ok(Vec::new());
    };
    let Some(doc_type) = preview.document_type.as_deref() else {
        return Ok(Vec::new());
    };
    let Some(view) = c.config.view(doc_type) else {
        return Ok(Vec::new());
    };
    let Some(wanted) = view.identity(&preview.value) else {
        return Ok(Vec::new());
    };
    let since = chrono::Utc::now() - chrono::Duration::hours(REPEAT_WINDOW_HOURS);
    let since = crate::audit::time_text(since);
    let recent = sql::recent_documents(pool, branch_id, doc_type, &since, 200).await?;
    Ok(recent
        .iter()
        .filter(|d| {
            d.response
                .as_ref()
                .and_then(|r| view.identity(r))
                .is_some_and(|have| have == wanted)
        })
        .take(3)
        .map(|d| {
            json!({
                "number": d.number, "href": c.document_href(&d.document_type, &d.number),
                "at": when(&d.created_at), "person": c.person(&d.user_id),
                "run_href": c.run_href(&d.run_id), "same_run": d.run_id == a.run_id,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn po(price: &str, total: &str) -> Preview {
        Preview::from_hook(
            "purchase_order",
            json!({"vendor": "CV Maju", "currency": "IDR", "total": total,
                   "lines": [{"item": "BRG-0230", "qty": "110", "price": price}]}),
        )
    }

    fn view() -> DocumentView {
        DocumentView::new("purchase_order", "Purchase order")
            .field("Vendor", "/vendor")
            .lines("/lines")
            .column("Item", "/item")
            .quantity("Qty", "/qty")
            .money("Unit price", "/price")
            .total("/total")
            .currency("/currency")
    }

    #[test]
    fn a_changed_price_shows_old_against_new_for_the_line_and_the_total() {
        let d = diff_in(&view(), &po("16800", "1848000"), &po("21000", "2310000")).unwrap();
        let changes = d["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert_eq!(changes[0]["what"], "line 1 (BRG-0230): Unit price");
        assert!(changes[0]["old"].as_str().unwrap().starts_with("16"));
        assert!(changes[0]["new"].as_str().unwrap().starts_with("21"));
        assert_eq!(changes[1]["what"], "Total");
        assert!(changes[1]["new"].as_str().unwrap().contains("IDR"));
        assert_eq!(diff_in(&view(), &po("1", "1"), &po("1", "1")), None);
    }

    #[test]
    fn the_same_vendor_and_lines_are_the_same_order_whatever_the_prices() {
        let v = view();
        let a = v.identity(&po("16800", "1848000").value).unwrap();
        let b = v.identity(&po("21000", "2310000").value).unwrap();
        assert_eq!(a, b);
        let other = json!({"vendor": "CV Maju", "lines": [{"item": "BRG-0230", "qty": "111"}]});
        assert_ne!(v.identity(&other), Some(a));
    }

    fn approval(id: i64, status: ApprovalStatus, resumed: Option<&str>) -> StoredApproval {
        StoredApproval {
            id,
            run_id: "run-1".into(),
            call_id: "call-3".into(),
            tool: "purchasing_create_po_draft".into(),
            arguments: json!({}),
            signature: "sig".into(),
            reason: "policy".into(),
            limits: None,
            user_id: "7".into(),
            branch_id: 1,
            branch_code: "SBY-01".into(),
            status,
            created_at: "2026-12-05T06:00:00.000000Z".into(),
            expires_at: "2026-12-06T06:00:00.000000Z".into(),
            decided_by: Some("21".into()),
            decided_at: Some("2026-12-05T06:01:00.000000Z".into()),
            note: None,
            resumed_at: resumed.map(|_| "2026-12-05T06:01:01.000000Z".into()),
            resume_count: i64::from(resumed.is_some()),
            resume_status: resumed.map(str::to_string),
            preview: None,
        }
    }

    #[test]
    fn an_approval_that_paused_again_is_not_called_approved_and_waiting() {
        let first = approval(1, ApprovalStatus::Approved, Some("awaiting_approval"));
        let second = approval(2, ApprovalStatus::Pending, None);
        let all = [first.clone(), second.clone()];
        assert_eq!(successor(&first, &all).map(|a| a.id), Some(2));
        assert_eq!(predecessor(&second, &all).map(|a| a.id), Some(1));
        let s = state(&first, successor(&first, &all));
        assert_eq!(s["label"], "approved, nothing created");
        assert!(s["detail"].as_str().unwrap().contains("approval 2"));
        assert!(!s["detail"].as_str().unwrap().contains("awaiting approval"));
        let done = approval(3, ApprovalStatus::Approved, Some("done"));
        let s = state(&done, None);
        assert_eq!(s["label"], "approved");
        assert_eq!(s["detail"], "the run resumed and ended done");
    }
}
