//! Post-tier actions in enum values and read-only scopes: two ways a draft tool can be
//! more than a draft tool.

use super::rename::segments;

/// Words of a post-tier action, with the verb they are a form of: submitting, posting,
/// approving, confirming, sending, cancelling, validating, and the ERPs' synonyms
/// (releasing in Business Central, booking, finalising, voiding, signing, paying).
const POST_TIER_WORDS: &[(&str, &str)] = &[
    ("submit", "submit"),
    ("submitted", "submit"),
    ("submission", "submit"),
    ("post", "post"),
    ("posted", "post"),
    ("posting", "post"),
    ("approve", "approve"),
    ("approved", "approve"),
    ("approval", "approve"),
    ("confirm", "confirm"),
    ("confirmed", "confirm"),
    ("confirmation", "confirm"),
    ("send", "send"),
    ("sent", "send"),
    ("sending", "send"),
    ("cancel", "cancel"),
    ("cancelled", "cancel"),
    ("canceled", "cancel"),
    ("cancellation", "cancel"),
    ("validate", "validate"),
    ("validated", "validate"),
    ("validation", "validate"),
    ("release", "release"),
    ("released", "release"),
    ("book", "book"),
    ("booked", "book"),
    ("finalize", "finalise"),
    ("finalise", "finalise"),
    ("finalized", "finalise"),
    ("finalised", "finalise"),
    ("void", "void"),
    ("voided", "void"),
    ("authorize", "approve"),
    ("authorise", "approve"),
    ("authorized", "approve"),
    ("authorised", "approve"),
    ("sign", "sign"),
    ("signed", "sign"),
    ("pay", "pay"),
    ("paid", "pay"),
];

/// The post-tier verb an enum value's wire name contains (`Submit`, `SaveAndSubmit`,
/// `send_to_vendor`, `POSTED`), as the verb's plain form, or `None`.
pub fn post_tier_verb(wire: &str) -> Option<&'static str> {
    segments(wire).iter().find_map(|s| {
        POST_TIER_WORDS
            .iter()
            .find(|(w, _)| w == s)
            .map(|(_, verb)| *verb)
    })
}

/// Words of an enum value that make it a document's status rather than a choice of its
/// own (`Closed`, `Done`, `OnHold`, `Disetujui`).
const STATUS_VALUES: &[&str] = &[
    "closed",
    "done",
    "completed",
    "rejected",
    "locked",
    "invoiced",
    "received",
    "hold",
    "onhold",
    "processed",
    "billed",
    "disetujui",
    "diposting",
    "dibatalkan",
    "ditutup",
    "selesai",
    "ditolak",
    "dibayar",
    "lunas",
];

/// The status an enum value's wire name names (`Closed`, `ON_HOLD`), as its word, or
/// `None`.
pub fn status_value(wire: &str) -> Option<&'static str> {
    segments(wire)
        .iter()
        .find_map(|s| STATUS_VALUES.iter().find(|w| *w == s).copied())
}

/// The compile error for an enum value of a draft tool's arguments that names a
/// post-tier action.
pub fn verb_message(enum_name: &str, wire: &str, verb: &str) -> String {
    let article = if verb.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!(
        "`{wire}` cannot be a value of `{enum_name}` in a draft tool's arguments: it asks to {verb}, and to {verb} \
         belongs to a person in the ERP (a draft tool whose argument may say `{wire}` is {article} {verb} tool); \
         remove the value, the draft is always left for a person to act on"
    )
}

/// Words that make a scope's action read-only (`purchasing:read`, `sales:view`,
/// `stock:read-only`).
const READ_WORDS: &[&str] = &[
    "read", "reads", "reader", "readonly", "ro", "view", "viewer", "list", "get", "query",
    "search", "lookup", "show", "browse", "see",
];

/// Whether a scope (`module:action`) only grants reading: its action's last word is a
/// read word (`read`, `view`, `list`, `read_only`, ...).
pub fn is_read_scope(scope: &str) -> bool {
    let action = scope.rsplit(':').next().unwrap_or(scope);
    let words = segments(action);
    let mut rev = words.iter().rev();
    let mut last = rev.next();
    if last.is_some_and(|w| w == "only") {
        last = rev.next();
    }
    last.is_some_and(|w| READ_WORDS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_post_tier_verbs_in_values() {
        for (wire, verb) in [
            ("Submit", "submit"),
            ("SaveAndSubmit", "submit"),
            ("send_to_vendor", "send"),
            ("POSTED", "post"),
            ("approve", "approve"),
            ("Confirm", "confirm"),
            ("cancel-order", "cancel"),
            ("Validate", "validate"),
            ("Release", "release"),
        ] {
            assert_eq!(post_tier_verb(wire), Some(verb), "{wire}");
        }
        for wire in [
            "Draft",
            "SaveDraft",
            "Urgent",
            "Normal",
            "Pcs",
            "Box",
            "Postcode",
            "Booklet",
            "Sentinel",
        ] {
            assert_eq!(post_tier_verb(wire), None, "{wire}");
        }
    }

    #[test]
    fn read_scopes() {
        for s in [
            "purchasing:read",
            "sales:view",
            "stock:read-only",
            "a:b:list",
            "purchasing:po.read",
        ] {
            assert!(is_read_scope(s), "{s}");
        }
        for s in [
            "purchasing:draft",
            "purchasing:write",
            "sales:quote.create",
            "purchasing:read_write",
            "x:write_only",
        ] {
            assert!(!is_read_scope(s), "{s}");
        }
    }
}
