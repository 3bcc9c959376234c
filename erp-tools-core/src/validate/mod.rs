//! Server-side validation of tool arguments against the strict [`Schema`].
//!
//! The schema a model is shown is advice; this is the enforcement. Every call's arguments
//! are checked here before anything is recorded as executed: unknown fields, wrong types,
//! missing fields, unknown enum values, malformed dates and decimals, over-long strings and
//! lists are all refused with a message that names the field and the allowed values.
//!
//! Validation also *normalises* the arguments (absent optional fields become `null`,
//! decimals are written in one canonical form) so that the idempotency hash of two
//! equivalent calls is the same.
//!
//! The guide's chapter: *Declaring tools: what the compiler refuses* (`guide/src/declaring.md` in the repository).

use std::str::FromStr;

use serde_json::{Map, Value};

use rust_decimal::Decimal;

use crate::schema::{Bounds, Schema, SchemaKind, StringFormat};

mod bounds;
mod canonical;
mod decimal;
mod problems;
pub(crate) mod text;

use bounds::bounded_number;
pub use canonical::{canonical_hash, canonical_json};
use decimal::{decimal_from_number, decimal_from_str};
use problems::push;
pub use problems::{ArgumentErrors, ArgumentProblem};

/// Longest string accepted in any argument, in characters.
pub const MAX_STRING_CHARS: usize = 4_000;
/// Most items accepted in any list argument.
pub const MAX_ARRAY_ITEMS: usize = 500;

/// Validates `value` against `schema` and returns the normalised arguments.
pub fn validate(schema: &Schema, value: &Value) -> Result<Value, ArgumentErrors> {
    let mut problems = Vec::new();
    let out = check(schema, value, &mut String::new(), &mut problems, None);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ArgumentErrors { problems })
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Checks one value. `inherited` are the bounds of the enclosing optional or list node,
/// used when this node declares none of its own.
fn check(
    schema: &Schema,
    value: &Value,
    path: &mut String,
    problems: &mut Vec<ArgumentProblem>,
    inherited: Option<&Bounds>,
) -> Value {
    let bounds = if schema.bounds.is_empty() {
        inherited
    } else {
        Some(&schema.bounds)
    };
    match (&schema.kind, value) {
        (SchemaKind::Optional(_), Value::Null) => Value::Null,
        (SchemaKind::Optional(inner), v) => check(inner, v, path, problems, bounds),
        (SchemaKind::String(format), Value::String(s)) => {
            let chars = s.chars().count();
            if chars > MAX_STRING_CHARS {
                push(
                    problems,
                    path,
                    format!("text longer than {MAX_STRING_CHARS} characters; shorten it"),
                );
                return Value::Null;
            }
            if let Some(b) = bounds {
                if let Some(problem) = bounds::len_problem(b, chars, "characters") {
                    push(problems, path, problem);
                } else if !bounds::text_matches(b, s) {
                    push(
                        problems,
                        path,
                        text::pattern_mismatch(&quote_short(s), b.pattern.as_deref().unwrap_or("")),
                    );
                }
            }
            if let Some(f) = format {
                let ok = match f {
                    StringFormat::Date => {
                        chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10
                    }
                    StringFormat::Time => chrono::NaiveTime::from_str(s).is_ok(),
                    StringFormat::Uuid => is_hyphenated_uuid(s),
                    StringFormat::DateTime => {
                        chrono::DateTime::parse_from_rfc3339(s).is_ok()
                            || chrono::NaiveDateTime::from_str(s).is_ok()
                    }
                };
                if !ok {
                    let expected = match f {
                        StringFormat::Date => "a date as YYYY-MM-DD, e.g. \"2026-12-01\"",
                        StringFormat::Time => "a time as HH:MM:SS",
                        StringFormat::Uuid => {
                            "a UUID as 8-4-4-4-12 hexadecimal digits, e.g. \"123e4567-e89b-12d3-a456-426614174000\""
                        }
                        StringFormat::DateTime => {
                            "a date and time as RFC 3339, e.g. \"2026-12-01T09:00:00Z\""
                        }
                    };
                    push(
                        problems,
                        path,
                        format!("expected {expected}, got {}", quote_short(s)),
                    );
                }
            }
            Value::String(s.clone())
        }
        (SchemaKind::Decimal, Value::String(s)) => match decimal_from_str(s) {
            Ok(d) => bounded_number(d, bounds, path, problems),
            Err(why) => {
                push(problems, path, text::not_a_decimal(&quote_short(s), &why));
                Value::Null
            }
        },
        (SchemaKind::Decimal, Value::Number(n)) => match decimal_from_number(n) {
            Ok(d) => bounded_number(d, bounds, path, problems),
            Err(why) => {
                push(
                    problems,
                    path,
                    text::inexact_number(&short(&n.to_string()), &why),
                );
                Value::Null
            }
        },
        (SchemaKind::Integer { min, max }, Value::Number(n)) => {
            let as_int = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from));
            match as_int {
                Some(i) if i >= *min && i <= *max => {
                    if let Some(problem) = bounds.and_then(|b| {
                        bounds::number_problem(b, Decimal::from_i128_with_scale(i, 0))
                    }) {
                        push(problems, path, problem);
                        return Value::Null;
                    }
                    Value::Number(n.clone())
                }
                Some(_) => {
                    push(
                        problems,
                        path,
                        format!("{n} is out of range; allowed: {min} to {max}"),
                    );
                    Value::Null
                }
                None => {
                    push(
                        problems,
                        path,
                        format!("expected a whole number, got {}", short(&n.to_string())),
                    );
                    Value::Null
                }
            }
        }
        (SchemaKind::Boolean, Value::Bool(b)) => Value::Bool(*b),
        (SchemaKind::Enum(values), Value::String(s)) => {
            if values.iter().any(|v| v == s) {
                Value::String(s.clone())
            } else {
                push(
                    problems,
                    path,
                    format!(
                        "{} is not allowed; allowed values: {}",
                        quote_short(s),
                        values.join(", ")
                    ),
                );
                Value::Null
            }
        }
        (SchemaKind::Array(item), Value::Array(items)) => {
            if let Some(problem) = bounds.and_then(|b| bounds::len_problem(b, items.len(), "items"))
            {
                push(problems, path, problem);
                return Value::Null;
            }
            if items.len() > MAX_ARRAY_ITEMS {
                push(
                    problems,
                    path,
                    format!(
                        "{} items, more than the {MAX_ARRAY_ITEMS} allowed",
                        items.len()
                    ),
                );
                return Value::Null;
            }
            let item_bounds = bounds.map(Bounds::for_items);
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(check(item, v, path, problems, item_bounds.as_ref()));
                path.truncate(len);
            }
            Value::Array(out)
        }
        (SchemaKind::Object(props), Value::Object(map)) => {
            let mut out = Map::new();
            for key in map.keys() {
                if !props.iter().any(|p| p.name == *key) {
                    let known: Vec<&str> = props.iter().map(|p| p.name.as_ref()).collect();
                    push(
                        problems,
                        &join(path, &echoed_name(key)),
                        format!(
                            "unknown field; remove it. Allowed fields here: {}",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    );
                }
            }
            for p in props {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&p.name);
                match map.get(p.name.as_ref()) {
                    Some(v) => {
                        out.insert(
                            p.name.to_string(),
                            check(&p.schema, v, path, problems, None),
                        );
                    }
                    None if p.schema.is_optional() => {
                        out.insert(p.name.to_string(), Value::Null);
                    }
                    None => push(problems, path, "missing required field".to_string()),
                }
                path.truncate(len);
            }
            Value::Object(out)
        }
        (kind, Value::Null) => {
            push(
                problems,
                path,
                format!("must not be null; expected {}", expected(kind)),
            );
            Value::Null
        }
        (kind, v) => {
            push(
                problems,
                path,
                format!("expected {}, got {}", expected(kind), type_name(v)),
            );
            Value::Null
        }
    }
}

/// `123e4567-e89b-12d3-a456-426614174000`: 32 hexadecimal digits in groups of 8, 4, 4, 4
/// and 12, the form a UUID is written in a schema of format `uuid`.
fn is_hyphenated_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn expected(kind: &SchemaKind) -> String {
    match kind {
        SchemaKind::String(Some(StringFormat::Date)) => "a date string YYYY-MM-DD".into(),
        SchemaKind::String(_) => "a string".into(),
        SchemaKind::Decimal => "a decimal number, e.g. \"12.50\"".into(),
        SchemaKind::Integer { .. } => "a whole number".into(),
        SchemaKind::Boolean => "true or false".into(),
        SchemaKind::Enum(values) => format!("one of {}", values.join(", ")),
        SchemaKind::Array(_) => "a list".into(),
        SchemaKind::Object(_) => "an object".into(),
        SchemaKind::Optional(inner) => format!("{} or null", expected(&inner.kind)),
    }
}

/// A value repeated in a message: at most 40 characters, as a JSON string (so control
/// characters and quotes are escaped).
fn quote_short(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if s.chars().nth(40).is_some() {
        t.push('…');
    }
    Value::String(t).to_string()
}

/// Longest unknown field name repeated in a message, in characters.
pub(crate) const MAX_ECHOED_NAME_CHARS: usize = 64;

/// An unknown field's name as a message repeats it: at most
/// [`MAX_ECHOED_NAME_CHARS`] characters, control characters escaped.
fn echoed_name(key: &str) -> String {
    if key.chars().nth(MAX_ECHOED_NAME_CHARS).is_some() {
        let t: String = key.chars().take(MAX_ECHOED_NAME_CHARS).collect();
        let q = Value::String(t).to_string();
        format!("{}…", &q[1..q.len() - 1])
    } else {
        let q = Value::String(key.to_string()).to_string();
        q[1..q.len() - 1].to_string()
    }
}

fn short(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        t.push('…');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::decimal::canonical_decimal;
    use super::*;
    use crate::schema::Property;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::object(vec![
            Property::new("qty", Schema::new(SchemaKind::Decimal)),
            Property::new(
                "uom",
                Schema::new(SchemaKind::Enum(vec!["PCS".into(), "BOX".into()])),
            ),
            Property::new(
                "note",
                Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::String(None),
                )))),
            ),
        ])
    }

    #[test]
    fn normalises_decimals_and_absent_optionals() {
        let a = validate(&schema(), &json!({"qty": "24.00", "uom": "BOX"})).unwrap();
        let b = validate(&schema(), &json!({"uom": "BOX", "note": null, "qty": "24"})).unwrap();
        assert_eq!(a, b);
        assert_eq!(canonical_hash(&a), canonical_hash(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"note":null,"qty":"24","uom":"BOX"}"#
        );
    }

    #[test]
    fn names_allowed_values() {
        let e = validate(&schema(), &json!({"qty": 3, "uom": "KG", "x": 1})).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`x`: unknown field"), "{text}");
        assert!(text.contains("allowed values: PCS, BOX"), "{text}");
        assert!(
            !text.contains("`qty`"),
            "a JSON number is a decimal: {text}"
        );
    }

    fn parse_decimal(s: &str) -> Option<String> {
        decimal_from_str(s).ok().map(canonical_decimal)
    }

    #[test]
    fn decimal_grammar() {
        for ok in ["1", "-1.5", "0.10", "1234.50"] {
            assert!(parse_decimal(ok).is_some(), "{ok}");
        }
        for bad in ["", "1e5", "1.", ".5", " 1", "NaN", "1,5", "0x10", "+1"] {
            assert!(parse_decimal(bad).is_none(), "{bad}");
        }
        assert_eq!(parse_decimal("24.00").unwrap(), "24");
        assert_eq!(parse_decimal("-0.00").unwrap(), "0");
    }

    fn qty_hash(qty: Value) -> Result<String, String> {
        validate(&schema(), &json!({"qty": qty, "uom": "PCS"}))
            .map(|v| canonical_hash(&v))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_json_number_is_the_same_decimal_as_its_string() {
        let want = qty_hash(json!("48")).unwrap();
        for same in [
            json!(48),
            json!(48.0),
            json!("48.0"),
            json!("48.000"),
            json!(4.8e1),
        ] {
            assert_eq!(qty_hash(same.clone()).unwrap(), want, "{same}");
        }
        assert_eq!(
            qty_hash(json!(0.1)).unwrap(),
            qty_hash(json!("0.1")).unwrap()
        );
        assert_eq!(
            qty_hash(json!(-12.5)).unwrap(),
            qty_hash(json!("-12.50")).unwrap()
        );
        assert_eq!(
            qty_hash(json!(u64::MAX)).unwrap(),
            qty_hash(json!("18446744073709551615")).unwrap()
        );
        assert_ne!(qty_hash(json!(48.5)).unwrap(), want);
    }

    #[test]
    fn inexact_numbers_are_refused_with_the_fix() {
        for (bad, says) in [
            (json!(0.30000000000000004), "significant digits"),
            (json!(1.2345678901234567e30), "significant digits"),
            (json!(1e30), "larger than a decimal holds"),
            (json!(1e-30), "smaller than a decimal holds"),
            (json!("NaN"), "not a number or infinite"),
            (json!("-Infinity"), "not a number or infinite"),
            (json!("inf"), "not a number or infinite"),
            (json!("1e5"), "without an exponent"),
            (json!("1,5"), "decimal point"),
            (json!("12345678901234567890123456789012"), "at most 28"),
        ] {
            let e = qty_hash(bad.clone()).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(
                e.contains("\"12.50\""),
                "{bad}: the message shows the fix: {e}"
            );
        }
    }
}
