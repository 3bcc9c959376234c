//! Walking a schema's properties with their paths, for the surface report and lock.

use super::model::{Property, Schema, SchemaKind};

/// Every property of `schema` at any depth, with its path (`lines[].discount`).
pub(crate) fn fields<'s>(schema: &'s Schema, path: &str, out: &mut Vec<(String, &'s Property)>) {
    match &schema.kind {
        SchemaKind::Object(props) => {
            for p in props {
                let here = if path.is_empty() {
                    p.name.to_string()
                } else {
                    format!("{path}.{}", p.name)
                };
                fields(&p.schema, &here, out);
                out.push((here, p));
            }
        }
        SchemaKind::Array(inner) => fields(inner, &format!("{path}[]"), out),
        SchemaKind::Optional(inner) => fields(inner, path, out),
        _ => {}
    }
}
