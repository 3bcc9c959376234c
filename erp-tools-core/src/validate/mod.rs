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

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::schema::{Schema, SchemaKind, StringFormat};

mod canonical;

pub use canonical::{canonical_hash, canonical_json};

/// Longest string accepted in any argument, in characters.
pub const MAX_STRING_CHARS: usize = 4_000;
/// Most items accepted in any list argument.
pub const MAX_ARRAY_ITEMS: usize = 500;

/// One reason the arguments were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentProblem {
    /// Where, e.g. `lines[2].uom`; empty for the arguments object itself.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Every reason the arguments were refused (at most a handful are collected).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentErrors {
    /// The problems, in document order.
    pub problems: Vec<ArgumentProblem>,
}

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if p.path.is_empty() {
                write!(f, "{}", p.message)?;
            } else {
                write!(f, "`{}`: {}", p.path, p.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentErrors {}

const MAX_PROBLEMS: usize = 8;

/// Validates `value` against `schema` and returns the normalised arguments.
pub fn validate(schema: &Schema, value: &Value) -> Result<Value, ArgumentErrors> {
    let mut problems = Vec::new();
    let out = check(schema, value, &mut String::new(), &mut problems);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ArgumentErrors { problems })
    }
}

fn push(problems: &mut Vec<ArgumentProblem>, path: &str, message: String) {
    if problems.len() < MAX_PROBLEMS {
        problems.push(ArgumentProblem {
            path: path.to_string(),
            message,
        });
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

fn check(
    schema: &Schema,
    value: &Value,
    path: &mut String,
    problems: &mut Vec<ArgumentProblem>,
) -> Value {
    match (&schema.kind, value) {
        (SchemaKind::Optional(_), Value::Null) => Value::Null,
        (SchemaKind::Optional(inner), v) => check(inner, v, path, problems),
        (SchemaKind::String(format), Value::String(s)) => {
            if s.chars().count() > MAX_STRING_CHARS {
                push(
                    problems,
                    path,
                    format!("text longer than {MAX_STRING_CHARS} characters; shorten it"),
                );
                return Value::Null;
            }
            if let Some(f) = format {
                let ok = match f {
                    StringFormat::Date => {
                        chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10
                    }
                    StringFormat::Time => chrono::NaiveTime::from_str(s).is_ok(),
                    StringFormat::DateTime => {
                        chrono::DateTime::parse_from_rfc3339(s).is_ok()
                            || chrono::NaiveDateTime::from_str(s).is_ok()
                    }
                };
                if !ok {
                    let expected = match f {
                        StringFormat::Date => "a date as YYYY-MM-DD, e.g. \"2026-12-01\"",
                        StringFormat::Time => "a time as HH:MM:SS",
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
        (SchemaKind::Decimal, Value::String(s)) => match parse_decimal(s) {
            Some(d) => Value::String(d),
            None => {
                push(
                    problems,
                    path,
                    format!(
                        "expected a decimal number as a string, e.g. \"24\" or \"12.50\", got {}",
                        quote_short(s)
                    ),
                );
                Value::Null
            }
        },
        (SchemaKind::Decimal, Value::Number(n)) => {
            push(
                problems,
                path,
                format!(
                    "expected a decimal number as a string, e.g. \"{n}\", got the number {n}; send it quoted"
                ),
            );
            Value::Null
        }
        (SchemaKind::Integer { min, max }, Value::Number(n)) => {
            let as_int = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from));
            match as_int {
                Some(i) if i >= *min && i <= *max => Value::Number(n.clone()),
                Some(_) => {
                    push(
                        problems,
                        path,
                        format!("{n} is out of range; allowed: {min} to {max}"),
                    );
                    Value::Null
                }
                None => {
                    push(problems, path, format!("expected a whole number, got {n}"));
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
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(check(item, v, path, problems));
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
                        &join(path, key),
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
                        out.insert(p.name.to_string(), check(&p.schema, v, path, problems));
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
        SchemaKind::Decimal => "a decimal number as a string, e.g. \"12.50\"".into(),
        SchemaKind::Integer { .. } => "a whole number".into(),
        SchemaKind::Boolean => "true or false".into(),
        SchemaKind::Enum(values) => format!("one of {}", values.join(", ")),
        SchemaKind::Array(_) => "a list".into(),
        SchemaKind::Object(_) => "an object".into(),
        SchemaKind::Optional(inner) => format!("{} or null", expected(&inner.kind)),
    }
}

fn quote_short(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        t.push('…');
    }
    format!("\"{t}\"")
}

/// Parses a decimal string and writes it canonically (no exponent, no trailing zeros
/// after the point, no `+`), so `"24"`, `"24.0"` and `"24.00"` are one value.
pub fn parse_decimal(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() || t != s || t.len() > 40 {
        return None;
    }
    let body = t.strip_prefix('-').unwrap_or(t);
    let mut parts = body.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    let d = rust_decimal::Decimal::from_str_exact(t).ok()?;
    Some(d.normalize().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Property;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::object(vec![
            Property {
                name: "qty".into(),
                schema: Schema::new(SchemaKind::Decimal),
            },
            Property {
                name: "uom".into(),
                schema: Schema::new(SchemaKind::Enum(vec!["PCS".into(), "BOX".into()])),
            },
            Property {
                name: "note".into(),
                schema: Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::String(None),
                )))),
            },
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
        assert!(text.contains("send it quoted"), "{text}");
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
    }
}
