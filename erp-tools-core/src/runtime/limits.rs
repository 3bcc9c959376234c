//! Hard value limits: the tool's own (`limit = "lines[].qty <= 1000"`) and any a policy
//! adds. One implementation, used by admission for MCP calls and agent calls alike.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

use crate::text;
use crate::tool::Tier;
use crate::tool::error::ToolError;

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
/// the total quantity over all lines. Values may be decimal strings or JSON numbers.
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
pub fn value_at(args: &Value, path: &str) -> Result<Option<Decimal>, String> {
    let mut current: Vec<&Value> = vec![args];
    for segment in path.split('.') {
        let (name, each) = match segment.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (segment, false),
        };
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
                "The total of `lines[].qty` is 1000.5, over the hard limit of 1000 for `t`."
            ),
            "{err}"
        );
        assert!(err.to_string().ends_with("No draft was created."), "{err}");
        assert!(check("t", Tier::Draft, &args, [lim("missing", "1")]).is_ok());
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
