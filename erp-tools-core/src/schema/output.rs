//! Output schemas: schemars output made self-contained.

use serde_json::{Map, Value};

/// Turns a schemars-generated output schema into a self-contained one: every `$ref`
/// inlined, no `$defs`, `$schema`, `title` or `default`, and unsigned-integer formats
/// dropped. Output schemas may stay open (they describe what the server returns).
pub(crate) fn normalise_output_schema(schema: Value) -> Value {
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
/// with every `$ref` inlined and no `$defs`, `$schema`, `title` or `default`.
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
