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

mod bounds;
mod model;
pub(crate) mod output;
mod render;
mod strict;

pub use bounds::Bounds;
pub use model::{MAX_DEPTH, MAX_ENUM_VALUES, Property, Schema, SchemaKind, StringFormat, Target};
pub(crate) use strict::valid_key;
pub use strict::{StrictViolation, check_strict};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let s = output::output_schema_for::<Outer>();
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
