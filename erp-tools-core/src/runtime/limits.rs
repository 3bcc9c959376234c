//! Hard value limits: the tool's own (`limit = "lines[].qty <= 1000"`) and any a policy
//! adds. One implementation, used by admission for MCP calls and agent calls alike.
//!
//! Also the size caps on what a request can make the server store or repeat: tool call
//! ids, tool names and audit messages are cut to a bounded length (with a digest of the
//! whole, so distinct long values stay distinct) and stripped of control characters,
//! whatever the request sent.

use std::borrow::Cow;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

use crate::text;
use crate::tool::Tier;
use crate::tool::error::ToolError;

/// Longest tool call id stored or handed to a handler, in bytes. Longer ids (a JSON-RPC
/// `id` may be any string) are cut, with a digest of the whole.
pub(crate) const MAX_TOOL_CALL_ID_BYTES: usize = 128;
/// Longest tool name stored in the audit row for a call naming an unknown tool, in bytes.
pub(crate) const MAX_TOOL_NAME_BYTES: usize = 128;
/// Longest message (model-facing text, audit message) a call produces, in bytes.
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024;

/// `text` cut to at most `max` bytes, with control characters (NUL among them, which
/// PostgreSQL text refuses) written as `\u{..}`. A cut value ends with `…` and the first
/// 16 hex digits of the sha256 of the whole, so two long values that differ stay
/// different. Text within the limits is returned as it is.
pub(crate) fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    let clean = text.chars().all(|c| !c.is_control() || c == '\n');
    if text.len() <= max && clean {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len().min(max + 8));
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            escaped.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            escaped.push(c);
        }
        if escaped.len() > max {
            break;
        }
    }
    if escaped.len() <= max {
        return Cow::Owned(escaped);
    }
    use sha2::{Digest, Sha256};
    let digest = hex::encode(&Sha256::digest(text.as_bytes())[..8]);
    let keep = max.saturating_sub(digest.len() + "…".len());
    let mut cut = keep.min(escaped.len());
    while !escaped.is_char_boundary(cut) {
        cut -= 1;
    }
    escaped.truncate(cut);
    escaped.push('…');
    escaped.push_str(&digest);
    Cow::Owned(escaped)
}

/// One limit to check: the value (or sum) at `path` may not exceed `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LimitCheck<'a> {
    pub path: &'a str,
    pub max: &'a str,
}

/// Reads a numeric value from tool arguments for limits and approval thresholds.
///
/// `path` is a dot-separated list of field names; a name ending in `[]` walks every item
/// of a list, and the values found are summed: `amount` reads one field, `lines[].qty` is
/// the total quantity over all lines. In such a sum a negative item counts as zero: a
/// limit or threshold bounds what the call asks for, so `[2000, -1500]` is 2000, never
/// 500 (a negative item cannot offset a positive one to slip under a limit). Values may
/// be decimal strings or JSON numbers.
/// Returns `Ok(None)` when nothing is there (absent or `null`), and an error when a value
/// is not a number, so callers can fail closed.
///
/// ```
/// use erp_tools_core::agent::value_at;
/// use rust_decimal::Decimal;
/// use serde_json::json;
///
/// let args = json!({"lines": [{"qty": "10"}, {"qty": "2.5"}], "amount": "99"});
/// assert_eq!(value_at(&args, "lines[].qty").unwrap(), Some(Decimal::new(125, 1)));
/// assert_eq!(value_at(&args, "amount").unwrap(), Some(Decimal::from(99)));
/// assert_eq!(value_at(&args, "note").unwrap(), None);
/// assert!(value_at(&json!({"amount": "lots"}), "amount").is_err());
/// ```
#[cfg_attr(not(feature = "agent"), allow(unreachable_pub))]
pub fn value_at(args: &Value, path: &str) -> Result<Option<Decimal>, String> {
    let mut current: Vec<&Value> = vec![args];
    let mut summed = false;
    for segment in path.split('.') {
        let (name, each) = match segment.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (segment, false),
        };
        summed |= each;
        let mut next = Vec::new();
        for v in current {
            match v.get(name) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) if each => next.extend(items.iter()),
                Some(_) if each => return Err(format!("`{name}` is not a list")),
                Some(found) => next.push(found),
            }
        }
        current = next;
    }
    let mut sum: Option<Decimal> = None;
    for v in current {
        let d = match v {
            Value::Null => continue,
            Value::String(s) => {
                Decimal::from_str(s).map_err(|_| format!("\"{s}\" is not a decimal number"))?
            }
            Value::Number(n) => {
                let s = n.to_string();
                Decimal::from_str(&s)
                    .or_else(|_| Decimal::from_scientific(&s))
                    .map_err(|_| format!("{s} is out of range"))?
            }
            other => return Err(format!("{other} is not a number")),
        };
        let d = if summed { d.max(Decimal::ZERO) } else { d };
        sum = Some(match sum {
            None => d,
            Some(s) => s.checked_add(d).ok_or("the total is out of range")?,
        });
    }
    Ok(sum)
}

/// Checks every limit against the normalised arguments of `tool`; the first one broken
/// is the error. A value that cannot be read counts as broken (fail closed).
pub(crate) fn check<'a>(
    tool: &str,
    tier: Tier,
    args: &Value,
    limits: impl IntoIterator<Item = LimitCheck<'a>>,
) -> Result<(), ToolError> {
    for limit in limits {
        let Ok(max) = Decimal::from_str(limit.max) else {
            return Err(text::limit_misconfigured(tool, tier, limit.path, limit.max));
        };
        let shown_max = max.normalize().to_string();
        match value_at(args, limit.path) {
            Ok(None) => {}
            Ok(Some(v)) if v <= max => {}
            Ok(Some(v)) => {
                return Err(text::over_limit(
                    tool,
                    tier,
                    limit.path,
                    &v.normalize().to_string(),
                    &shown_max,
                ));
            }
            Err(problem) => {
                return Err(text::limit_unreadable(
                    tool, tier, limit.path, &shown_max, &problem,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::error::ToolErrorKind;
    use serde_json::json;

    fn lim<'a>(path: &'a str, max: &'a str) -> LimitCheck<'a> {
        LimitCheck { path, max }
    }

    #[test]
    fn limits_sum_over_lists() {
        let args =
            json!({"amount": "10.5", "lines": [{"qty": "400"}, {"qty": "600.5"}, {"qty": null}]});
        let ok = [lim("lines[].qty", "1000.5"), lim("amount", "11")];
        assert!(check("t", Tier::Draft, &args, ok).is_ok());
        let err = check("t", Tier::Draft, &args, [lim("lines[].qty", "1000")]).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Denied);
        assert!(
            err.to_string().starts_with(
                "The total of `lines[].qty` (negative items count as zero) is 1000.5, over the hard limit of 1000 for `t`."
            ),
            "{err}"
        );
        assert!(err.to_string().ends_with("No draft was created."), "{err}");
        assert!(check("t", Tier::Draft, &args, [lim("missing", "1")]).is_ok());
    }

    #[test]
    fn bounded_text_is_cut_with_a_digest_and_loses_control_characters() {
        assert!(matches!(bounded("call_1", 128), Cow::Borrowed("call_1")));
        let long = "x".repeat(3_000_000);
        let cut = bounded(&long, MAX_TOOL_CALL_ID_BYTES);
        assert!(cut.len() <= MAX_TOOL_CALL_ID_BYTES, "{}", cut.len());
        let other = format!("{long}y");
        assert_ne!(bounded(&other, MAX_TOOL_CALL_ID_BYTES), cut);
        let nul = bounded("a\u{0}b\u{1b}c", 64);
        assert_eq!(nul, "a\\u{0}b\\u{1b}c");
        let wide = "é".repeat(200);
        let cut = bounded(&wide, 101);
        assert!(cut.len() <= 101 && cut.starts_with('é'), "{cut}");
        for max in 0..40 {
            assert!(bounded(&wide, max).len() <= max.max(20), "{max}");
        }
    }

    #[test]
    fn negative_items_never_offset_a_sum_limit() {
        let limit = [lim("lines[].qty", "1000")];
        for lines in [
            json!([{"qty": "2000"}, {"qty": "-1500"}]),
            json!([{"qty": 2000}, {"qty": -1500}]),
            json!([{"qty": "-5000"}, {"qty": "1001"}]),
        ] {
            let args = json!({ "lines": lines });
            let err = check("t", Tier::Draft, &args, limit).unwrap_err();
            assert_eq!(err.kind(), ToolErrorKind::Denied, "{args}");
        }
        let fine = json!({"lines": [{"qty": "600"}, {"qty": "-100"}, {"qty": "400"}]});
        assert!(check("t", Tier::Draft, &fine, limit).is_ok());
        assert_eq!(
            value_at(&json!({"amount": "-5"}), "amount").unwrap(),
            Some(Decimal::from(-5)),
            "a single value is read as it is"
        );
    }

    #[test]
    fn unreadable_values_and_bad_maxima_fail_closed() {
        let args = json!({"amount": "lots"});
        let err = check("t", Tier::Read, &args, [lim("amount", "5")]).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Denied);
        assert!(err.to_string().contains("could not be checked"), "{err}");
        let err = check(
            "t",
            Tier::Read,
            &json!({"amount": "1"}),
            [lim("amount", "x")],
        )
        .unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::Internal);
    }
}
