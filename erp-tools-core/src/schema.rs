//! The strict argument schema: one model per tool, rendered per provider.
//!
//! Argument types describe themselves through [`ToolArgs::tool_schema`](crate::ToolArgs)
//! as a [`Schema`]. The registry builds each tool's schema once and renders it for every
//! [`Target`]; the same model drives server-side validation, so the schema the model sees
//! and the checks the server runs can never drift apart.
//!
//! The rendering follows the strict subset that OpenAI strict mode, Anthropic strict tool
//! use and MCP clients all accept: every object closed with `additionalProperties: false`,
//! no `$ref`/`$defs`, no `title`/`default`/`$schema`, only `anyOf` for unions, and
//! `format` only from `date`, `date-time`, `time`, `email`, `uuid`.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

/// The provider a schema or tool list is rendered for.
///
/// Optional fields are the one place the providers disagree:
///
/// | target | optional field |
/// |---|---|
/// | [`Target::OpenAi`], [`Target::Mcp`] | listed in `required`, typed `["T","null"]` (or `anyOf` with `{"type":"null"}` for enums and objects) |
/// | [`Target::Anthropic`] | left out of `required`, no null branch |
///
/// The server treats an absent optional field and an explicit `null` the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// OpenAI function calling with `strict: true`.
    OpenAi,
    /// Anthropic tool use with `strict: true`.
    Anthropic,
    /// MCP `tools/list` `inputSchema`.
    Mcp,
}

impl Target {
    /// Every target, in a stable order.
    pub const ALL: [Target; 3] = [Target::OpenAi, Target::Anthropic, Target::Mcp];

    /// Lower-case name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::OpenAi => "openai",
            Target::Anthropic => "anthropic",
            Target::Mcp => "mcp",
        }
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Target::OpenAi),
            "anthropic" => Ok(Target::Anthropic),
            "mcp" => Ok(Target::Mcp),
            other => Err(format!(
                "unknown target `{other}`; expected one of: openai, anthropic, mcp"
            )),
        }
    }
}

/// A `format` a string may carry in the strict subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringFormat {
    /// `YYYY-MM-DD` (`chrono::NaiveDate`).
    Date,
    /// RFC 3339 date and time (`chrono::DateTime`).
    DateTime,
    /// `HH:MM:SS` (`chrono::NaiveTime`).
    Time,
}

impl StringFormat {
    /// The JSON Schema `format` keyword value.
    pub fn as_str(self) -> &'static str {
        match self {
            StringFormat::Date => "date",
            StringFormat::DateTime => "date-time",
            StringFormat::Time => "time",
        }
    }
}

/// The shape of one value in a tool's arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaKind {
    /// Free text (`String`), optionally with a [`StringFormat`].
    String(Option<StringFormat>),
    /// A decimal number carried as a string, such as `"1234.50"` (`rust_decimal::Decimal`).
    /// Never a JSON float, so money keeps its exact value and hashes the same every time.
    Decimal,
    /// A whole number within `min..=max` (the Rust type's range).
    Integer {
        /// Smallest accepted value.
        min: i128,
        /// Largest accepted value.
        max: i128,
    },
    /// `true` or `false`.
    Boolean,
    /// One of a fixed list of strings (a Rust enum of unit variants).
    Enum(Vec<Cow<'static, str>>),
    /// A list of values of one shape.
    Array(Box<Schema>),
    /// A closed object: exactly these properties, nothing else.
    Object(Vec<Property>),
    /// The inner value or nothing (`Option<T>`).
    Optional(Box<Schema>),
}

/// A schema node: a shape plus the description shown to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// The shape of the value.
    pub kind: SchemaKind,
    /// What the value means, usually the field's doc comment.
    pub description: Option<Cow<'static, str>>,
}

/// One property of an object schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// The name on the wire (after `serde(rename)` / `rename_all`).
    pub name: Cow<'static, str>,
    /// The property's schema; [`SchemaKind::Optional`] marks an optional property.
    pub schema: Schema,
}

impl Schema {
    /// A schema of the given kind without a description.
    pub fn new(kind: SchemaKind) -> Self {
        Schema {
            kind,
            description: None,
        }
    }

    /// An object with these properties, closed to any other.
    pub fn object(properties: Vec<Property>) -> Self {
        Schema::new(SchemaKind::Object(properties))
    }

    /// The schema of a tool that takes no arguments.
    pub fn empty_object() -> Self {
        Schema::object(Vec::new())
    }

    /// Sets the description (a field's doc comment). An empty text clears it.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        let d = description.into();
        self.description = if d.trim().is_empty() { None } else { Some(d) };
        self
    }

    /// Whether the value may be absent or `null`.
    pub fn is_optional(&self) -> bool {
        matches!(self.kind, SchemaKind::Optional(_))
    }

    /// Nesting depth: a scalar is 1, an object of scalars is 2, and so on.
    pub fn depth(&self) -> usize {
        match &self.kind {
            SchemaKind::Object(props) => {
                1 + props.iter().map(|p| p.schema.depth()).max().unwrap_or(0)
            }
            SchemaKind::Array(item) => 1 + item.depth(),
            SchemaKind::Optional(inner) => inner.depth(),
            _ => 1,
        }
    }

    /// Every enum's number of values, for the budget check.
    pub fn max_enum_values(&self) -> usize {
        match &self.kind {
            SchemaKind::Enum(values) => values.len(),
            SchemaKind::Object(props) => props
                .iter()
                .map(|p| p.schema.max_enum_values())
                .max()
                .unwrap_or(0),
            SchemaKind::Array(item) | SchemaKind::Optional(item) => item.max_enum_values(),
            _ => 0,
        }
    }

    /// The properties of an object schema (empty for anything else).
    pub fn properties(&self) -> &[Property] {
        match &self.kind {
            SchemaKind::Object(props) => props,
            SchemaKind::Optional(inner) => inner.properties(),
            _ => &[],
        }
    }

    /// The text the model reads for this value: the description, then what the type
    /// itself requires (a decimal string, an integer range) since the strict subset has
    /// no keywords for bounds.
    fn rendered_description(&self) -> Option<String> {
        let hint = self.kind_hint();
        match (&self.description, hint) {
            (Some(d), Some(h)) => Some(format!("{} ({h})", d.trim_end_matches('.'))),
            (Some(d), None) => Some(d.to_string()),
            (None, Some(h)) => Some(capitalise(&h)),
            (None, None) => None,
        }
    }

    fn kind_hint(&self) -> Option<String> {
        match &self.kind {
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
            SchemaKind::Optional(inner) => inner.kind_hint(),
            _ => None,
        }
    }

    /// Renders the schema as JSON for one provider.
    pub fn render(&self, target: Target) -> Value {
        let mut out = self.render_inner(target);
        if let (Some(obj), Some(d)) = (out.as_object_mut(), self.rendered_description()) {
            obj.insert("description".into(), Value::String(d));
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
                    let rendered = if target == Target::Anthropic {
                        // Anthropic strict: optional means "not required", no null branch.
                        match &p.schema.kind {
                            SchemaKind::Optional(inner) => {
                                let mut inner = (**inner).clone();
                                if inner.description.is_none() {
                                    inner.description = p.schema.description.clone();
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

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The keywords the strict subset allows.
const ALLOWED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "description",
    "format",
];

/// The `format` values the strict subset allows.
const ALLOWED_FORMATS: &[&str] = &["date", "date-time", "time", "email", "uuid"];

/// One violation of the strict schema rules (SPEC S), with the JSON path where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictViolation {
    /// Where in the schema, e.g. `properties.lines.items.properties.uom`.
    pub path: String,
    /// What rule was broken.
    pub message: String,
}

impl std::fmt::Display for StrictViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.message)
    }
}

/// Checks a rendered input schema against the strict rules for `target`; returns every
/// violation found (an empty list means the schema is accepted).
///
/// This checks JSON from any source, so it can vet a schema written by hand or produced by
/// another generator as well as this crate's own renderings.
pub fn check_strict(schema: &Value, target: Target) -> Vec<StrictViolation> {
    let mut out = Vec::new();
    match schema.as_object() {
        Some(root) => {
            if root.get("type") != Some(&json!("object")) {
                out.push(violation("", "the root must be `\"type\": \"object\"`"));
            }
            for k in ["$ref", "anyOf", "oneOf", "allOf"] {
                if root.contains_key(k) {
                    out.push(violation("", format!("the root must not use `{k}`")));
                }
            }
        }
        None => out.push(violation("", "the root must be a JSON object")),
    }
    check_node(schema, target, "", 1, &mut out);
    out
}

fn violation(path: &str, message: impl Into<String>) -> StrictViolation {
    StrictViolation {
        path: if path.is_empty() {
            "<root>".into()
        } else {
            path.to_string()
        },
        message: message.into(),
    }
}

fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

fn check_node(
    node: &Value,
    target: Target,
    path: &str,
    depth: usize,
    out: &mut Vec<StrictViolation>,
) {
    let Some(obj) = node.as_object() else {
        out.push(violation(path, "every schema must be a JSON object"));
        return;
    };
    if depth > MAX_DEPTH {
        out.push(violation(
            path,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ));
        return;
    }
    for key in obj.keys() {
        if !ALLOWED_KEYWORDS.contains(&key.as_str()) {
            out.push(violation(
                path,
                format!("keyword `{key}` is outside the strict subset"),
            ));
        }
    }
    if let Some(f) = obj.get("format") {
        match f.as_str() {
            Some(f) if ALLOWED_FORMATS.contains(&f) => {}
            _ => out.push(violation(path, format!("format {f} is not allowed"))),
        }
    }
    if let Some(values) = obj.get("enum") {
        match values.as_array() {
            Some(v) if v.len() > MAX_ENUM_VALUES => out.push(violation(
                path,
                format!("enum has {} values, more than {MAX_ENUM_VALUES}", v.len()),
            )),
            Some(_) => {}
            None => out.push(violation(path, "`enum` must be an array")),
        }
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"number") {
        out.push(violation(
            path,
            "JSON numbers with fractions are not allowed: use a decimal string or integer minor units",
        ));
    }
    if target == Target::Anthropic && types.contains(&"null") {
        out.push(violation(
            path,
            "Anthropic strict: optional fields are left out of `required`, without a null branch",
        ));
    }
    if types.contains(&"object") {
        let props = obj.get("properties").and_then(Value::as_object);
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(violation(
                path,
                "object without `additionalProperties: false`",
            ));
        }
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            None => out.push(violation(path, "object without `properties`")),
            Some(props) => {
                for (name, sub) in props {
                    if !valid_key(name) {
                        out.push(violation(
                            path,
                            format!("property key `{name}` does not match ^[a-zA-Z0-9_-]{{1,64}}$"),
                        ));
                    }
                    let sub_path = join(path, &format!("properties.{name}"));
                    let listed = required.contains(&name.as_str());
                    if target != Target::Anthropic && !listed {
                        out.push(violation(
                            &sub_path,
                            "every property must be listed in `required` (optional ones as nullable)",
                        ));
                    }
                    if target == Target::Anthropic && listed && is_nullable(sub) {
                        out.push(violation(
                            &sub_path,
                            "a required property must not be nullable",
                        ));
                    }
                    check_node(sub, target, &sub_path, depth + 1, out);
                }
                for r in &required {
                    if !props.contains_key(*r) {
                        out.push(violation(
                            path,
                            format!("`{r}` is required but not a property"),
                        ));
                    }
                }
            }
        }
    }
    if let Some(items) = obj.get("items") {
        check_node(items, target, &join(path, "items"), depth + 1, out);
    }
    if let Some(any_of) = obj.get("anyOf") {
        match any_of.as_array() {
            Some(branches) => {
                for (i, b) in branches.iter().enumerate() {
                    if target == Target::Anthropic && b.get("type") == Some(&json!("null")) {
                        out.push(violation(
                            path,
                            "Anthropic strict: optional fields are left out of `required`, without a null branch",
                        ));
                        continue;
                    }
                    check_node(b, target, &join(path, &format!("anyOf.{i}")), depth, out);
                }
            }
            None => out.push(violation(path, "`anyOf` must be an array")),
        }
    }
}

fn is_nullable(node: &Value) -> bool {
    match node.get("type") {
        Some(Value::Array(ts)) if ts.contains(&json!("null")) => return true,
        Some(Value::String(t)) if t == "null" => return true,
        _ => {}
    }
    node.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|bs| bs.iter().any(|b| b.get("type") == Some(&json!("null"))))
}

/// Whether a tool name or property key is safe on every provider: `^[a-zA-Z0-9_-]{1,64}$`.
/// The same rule `#[erp_tool]` and `#[derive(ToolArgs)]` apply at compile time.
pub fn valid_key(name: &str) -> bool {
    crate::rules::valid_key(name)
}

/// Deepest nesting a tool's arguments may have.
pub const MAX_DEPTH: usize = 5;
/// Most values one enum may have.
pub const MAX_ENUM_VALUES: usize = 1000;

/// Turns a schemars-generated output schema into a self-contained one: every `$ref`
/// inlined, no `$defs`, `$schema`, `title` or `default`, and unsigned-integer formats
/// dropped. Output schemas may stay open (they describe what the server returns).
pub fn normalise_output_schema(schema: Value) -> Value {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = inline_refs(schema, &defs, 0);
    if let Some(obj) = out.as_object_mut() {
        obj.remove("$defs");
        obj.remove("$schema");
    }
    out
}

fn inline_refs(node: Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match node {
        Value::Object(mut obj) => {
            if let Some(Value::String(r)) = obj.get("$ref").cloned()
                && depth < 32
                && let Some(target) = r.strip_prefix("#/$defs/").and_then(|name| defs.get(name))
            {
                obj.remove("$ref");
                let resolved = inline_refs(target.clone(), defs, depth + 1);
                if let Value::Object(t) = resolved {
                    for (k, v) in t {
                        obj.entry(k).or_insert(v);
                    }
                }
            }
            let mut out = Map::new();
            for (k, v) in obj {
                match k.as_str() {
                    "title" | "default" | "$defs" | "$schema" => continue,
                    "format" if matches!(v.as_str(), Some(f) if f.starts_with("uint") || f.starts_with("int") || f == "double" || f == "float") =>
                    {
                        continue;
                    }
                    // `properties` maps names to schemas: keep the names, inline the schemas.
                    "properties" => {
                        let props = match v {
                            Value::Object(p) => Value::Object(
                                p.into_iter()
                                    .map(|(name, s)| (name, inline_refs(s, defs, depth + 1)))
                                    .collect(),
                            ),
                            other => other,
                        };
                        out.insert(k, props);
                    }
                    _ => {
                        out.insert(k, inline_refs(v, defs, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| inline_refs(v, defs, depth + 1))
                .collect(),
        ),
        other => other,
    }
}

/// Builds the output schema of a handler's return type with schemars and normalises it
/// with [`normalise_output_schema`].
pub fn output_schema_for<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    normalise_output_schema(schema.to_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn po_like() -> Schema {
        Schema::object(vec![
            Property {
                name: "note".into(),
                schema: Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::String(None),
                ))))
                .with_description("Why"),
            },
            Property {
                name: "uom".into(),
                schema: Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::Enum(vec!["PCS".into(), "BOX".into()]),
                )))),
            },
        ])
    }

    #[test]
    fn optional_fields_render_per_target() {
        let s = po_like();
        let openai = s.render(Target::OpenAi);
        assert_eq!(openai["required"], json!(["note", "uom"]));
        assert_eq!(
            openai["properties"]["note"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            openai["properties"]["uom"]["anyOf"][1],
            json!({"type": "null"})
        );
        let anthropic = s.render(Target::Anthropic);
        assert_eq!(anthropic["required"], json!([]));
        assert_eq!(anthropic["properties"]["note"]["type"], json!("string"));
        assert_eq!(anthropic["properties"]["note"]["description"], json!("Why"));
        for t in Target::ALL {
            assert_eq!(check_strict(&s.render(t), t), vec![], "{t:?}");
        }
    }

    #[test]
    fn checker_flags_loose_schemas() {
        let loose = json!({
            "type": "object",
            "title": "X",
            "properties": {"a": {"type": "number"}, "b": {"type": "object", "properties": {}}},
            "required": ["a"],
        });
        let v = check_strict(&loose, Target::OpenAi);
        let text: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|t| t.contains("`title`")), "{text:?}");
        assert!(
            text.iter().any(|t| t.contains("additionalProperties")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("properties.b") && t.contains("required")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|t| t.contains("decimal string")),
            "{text:?}"
        );
    }

    #[test]
    fn output_schema_has_no_refs() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Inner {
            n: u32,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Outer {
            a: Inner,
            b: Vec<Inner>,
        }
        let s = output_schema_for::<Outer>();
        let text = s.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        assert!(
            !text.contains("uint32") && !text.contains("title"),
            "{text}"
        );
        assert_eq!(
            s["properties"]["a"]["properties"]["n"]["type"],
            json!("integer")
        );
    }
}
