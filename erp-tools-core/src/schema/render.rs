//! Rendering a [`Schema`] as JSON for one provider ([`Target`]).

use serde_json::{Map, Value, json};

use super::bounds::Bounds;
use super::model::{Schema, SchemaKind, StringFormat, Target};
use crate::validate::text;

impl Schema {
    /// The text the model reads for this value: the description, then what the type
    /// itself requires (a decimal string, an integer range) since the strict subset has
    /// no keywords for bounds.
    ///
    /// A hint is added only when the description does not already say it: a field
    /// documented "Date needed, YYYY-MM-DD" is not told "YYYY-MM-DD" twice.
    fn rendered_description(&self) -> Option<String> {
        let kind = self.kind_hint().filter(|h| {
            !self
                .description
                .as_deref()
                .is_some_and(|d| already_says(d, h))
        });
        let bounds = self.bounds_hint(&self.bounds);
        let hint = match (kind, bounds) {
            (Some(k), Some(b)) => Some(format!("{k}; {b}")),
            (k, b) => k.or(b),
        };
        match (&self.description, hint) {
            (Some(d), Some(h)) => Some(format!("{} ({h})", d.trim_end_matches('.'))),
            (Some(d), None) => Some(d.to_string()),
            (None, Some(h)) => Some(capitalise(&h)),
            (None, None) => None,
        }
    }

    /// The declared bounds as words, for the value this node describes.
    fn bounds_hint(&self, b: &Bounds) -> Option<String> {
        if b.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        match &self.kind {
            SchemaKind::Optional(inner) => return inner.bounds_hint(b),
            SchemaKind::Array(item) => {
                parts.extend(text::bounds_len(b, "items"));
                if let Some(each) = item.bounds_hint(&b.for_items()) {
                    parts.push(format!("each item {each}"));
                }
            }
            SchemaKind::Decimal | SchemaKind::Integer { .. } => {
                parts.extend(text::bounds_numbers(b));
            }
            SchemaKind::String(_) => {
                parts.extend(text::bounds_len(b, "characters"));
                parts.extend(text::bounds_pattern(b));
            }
            _ => {}
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
    fn kind_hint(&self) -> Option<String> {
        self.kind_hint_with(&self.bounds)
    }

    fn kind_hint_with(&self, bounds: &Bounds) -> Option<String> {
        match &self.kind {
            SchemaKind::Integer { .. } if bounds.has_number() => Some("whole number".into()),
            SchemaKind::Decimal => Some("decimal number as a string, e.g. \"12.50\"".into()),
            SchemaKind::Integer { min, max } => {
                let (min, max) = (*min, *max);
                if min == 0 && max >= i64::MAX as i128 {
                    Some("whole number, 0 or more".into())
                } else if min <= i64::MIN as i128 && max >= i64::MAX as i128 {
                    None
                } else {
                    Some(format!("whole number from {min} to {max}"))
                }
            }
            SchemaKind::String(Some(StringFormat::Date)) => Some("YYYY-MM-DD".into()),
            SchemaKind::String(Some(StringFormat::Uuid)) => {
                Some("UUID, e.g. 123e4567-e89b-12d3-a456-426614174000".into())
            }
            SchemaKind::Optional(inner) => inner.kind_hint_with(bounds),
            _ => None,
        }
    }

    /// Renders the schema as JSON for one provider.
    pub fn render(&self, target: Target) -> Value {
        let mut out = self.render_inner(target);
        if let (Some(obj), Some(d)) = (out.as_object_mut(), self.rendered_description()) {
            obj.insert("description".into(), Value::String(d));
        }
        // Anthropic's strict tool use compiles `pattern` with a regex dialect narrower than
        // the one `#[erp(pattern = "..")]` is checked against, and one pattern it cannot
        // compile refuses the whole request; there the description states the pattern and
        // the server's validation enforces it. OpenAI strict and MCP take it as written.
        if target != Target::Anthropic
            && let Some(p) = self.bounds.pattern.as_deref()
        {
            add_pattern(&mut out, &self.kind, p);
        }
        out
    }

    fn render_inner(&self, target: Target) -> Value {
        match &self.kind {
            SchemaKind::String(format) => {
                let mut m = Map::new();
                m.insert("type".into(), json!("string"));
                if let Some(f) = format {
                    m.insert("format".into(), json!(f.as_str()));
                }
                Value::Object(m)
            }
            SchemaKind::Decimal => json!({"type": "string"}),
            SchemaKind::Integer { .. } => json!({"type": "integer"}),
            SchemaKind::Boolean => json!({"type": "boolean"}),
            SchemaKind::Enum(values) => json!({"type": "string", "enum": values}),
            SchemaKind::Array(item) => json!({"type": "array", "items": item.render(target)}),
            SchemaKind::Object(props) => {
                let mut properties = Map::new();
                let mut required = Vec::new();
                for p in props {
                    let mut rendered = if target == Target::Anthropic {
                        // Anthropic strict: optional means "not required", no null branch.
                        match &p.schema.kind {
                            SchemaKind::Optional(inner) => {
                                let mut inner = (**inner).clone();
                                // The field's own description wins over its type's.
                                if p.schema.description.is_some() {
                                    inner.description = p.schema.description.clone();
                                }
                                if inner.bounds.is_empty() {
                                    inner.bounds = p.schema.bounds.clone();
                                }
                                inner.render(target)
                            }
                            _ => {
                                required.push(p.name.clone());
                                p.schema.render(target)
                            }
                        }
                    } else {
                        required.push(p.name.clone());
                        p.schema.render(target)
                    };
                    // SEP-2243: the header an MCP client mirrors the value into. MCP only:
                    // the providers' strict modes take no `x-` keywords.
                    if target == Target::Mcp
                        && let (Some(h), Some(obj)) = (&p.header, rendered.as_object_mut())
                    {
                        obj.insert("x-mcp-header".into(), Value::String(h.to_string()));
                    }
                    properties.insert(p.name.to_string(), rendered);
                }
                json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                })
            }
            SchemaKind::Optional(inner) => {
                let inner_json = inner.render_inner(target);
                nullable(inner_json, &inner.kind)
            }
        }
    }
}

/// Adds the null branch: `["T","null"]` for scalars and arrays, `anyOf` for enums and
/// objects (where a type list would leave the enum or properties ambiguous).
fn nullable(mut inner: Value, kind: &SchemaKind) -> Value {
    match kind {
        SchemaKind::Enum(_) | SchemaKind::Object(_) => json!({"anyOf": [inner, {"type": "null"}]}),
        SchemaKind::Optional(_) => inner,
        _ => {
            if let Some(obj) = inner.as_object_mut()
                && let Some(Value::String(t)) = obj.get("type").cloned()
            {
                obj.insert("type".into(), json!([t, "null"]));
            }
            inner
        }
    }
}

/// Adds `pattern` to the text a schema holds (the value, the value when present, or each
/// item of a list), anchored: a declared pattern matches the whole text, while JSON
/// Schema's `pattern` matches anywhere in it.
fn add_pattern(out: &mut Value, kind: &SchemaKind, pattern: &str) {
    match kind {
        SchemaKind::String(_) => {
            if let Some(obj) = out.as_object_mut() {
                obj.insert("pattern".into(), Value::String(format!("^(?:{pattern})$")));
            }
        }
        SchemaKind::Optional(inner) => add_pattern(out, &inner.kind, pattern),
        SchemaKind::Array(item) => {
            if let Some(items) = out.get_mut("items") {
                add_pattern(items, &item.kind, pattern);
            }
        }
        _ => {}
    }
}

/// Whether `description` already states `hint`: the hint's own words, or its key term
/// (`decimal` for decimals), case-insensitively.
fn already_says(description: &str, hint: &str) -> bool {
    let d = description.to_lowercase();
    let h = hint.to_lowercase();
    if d.contains(&h) {
        return true;
    }
    h.starts_with("decimal") && d.contains("decimal")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(kind: SchemaKind, description: &'static str) -> Value {
        Schema::new(kind)
            .with_description(description)
            .render(Target::OpenAi)["description"]
            .clone()
    }

    #[test]
    fn hints_are_added_only_when_the_description_does_not_say_them() {
        let date = SchemaKind::String(Some(StringFormat::Date));
        let month = SchemaKind::Integer { min: 1, max: 12 };
        let cases = [
            (&date, "Date needed, YYYY-MM-DD", "Date needed, YYYY-MM-DD"),
            (
                &date,
                "Date needed, yyyy-mm-dd.",
                "Date needed, yyyy-mm-dd.",
            ),
            (&date, "Date needed.", "Date needed (YYYY-MM-DD)"),
            (
                &SchemaKind::Decimal,
                "Amount in IDR, a decimal string",
                "Amount in IDR, a decimal string",
            ),
            (
                &SchemaKind::Decimal,
                "Quantity, more than 0.",
                "Quantity, more than 0 (decimal number as a string, e.g. \"12.50\")",
            ),
            (
                &month,
                "Month, a whole number from 1 to 12",
                "Month, a whole number from 1 to 12",
            ),
            (&month, "Month", "Month (whole number from 1 to 12)"),
        ];
        for (kind, description, shown) in cases {
            assert_eq!(described(kind.clone(), description), shown, "{description}");
        }
    }
}
