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
//!
//! The guide's chapter: *Declaring tools: what the compiler refuses* (`guide/src/declaring.md` in the repository).

mod bounds;
mod model;
pub(crate) mod output;
pub(crate) mod paths;
mod render;
mod strict;

pub use bounds::Bounds;
pub use model::{
    DeclaredKind, MAX_DEPTH, MAX_ENUM_VALUES, OptIn, Property, Schema, SchemaKind, StringFormat,
    Target,
};
pub use strict::{StrictViolation, check_strict};
pub(crate) use strict::{header_violations, valid_key};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn po_like() -> Schema {
        Schema::object(vec![
            Property::new(
                "note",
                Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::String(None),
                ))))
                .with_description("Why"),
            ),
            Property::new(
                "uom",
                Schema::new(SchemaKind::Optional(Box::new(Schema::new(
                    SchemaKind::Enum(vec!["PCS".into(), "BOX".into()]),
                )))),
            ),
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

    fn text() -> Schema {
        Schema::new(SchemaKind::String(None))
    }

    #[test]
    fn a_header_is_declared_to_mcp_only() {
        let s = Schema::object(vec![
            Property::new("region", text()).with_header("Region"),
            Property::new("query", text()),
        ]);
        let mcp = s.render(Target::Mcp);
        assert_eq!(mcp["properties"]["region"]["x-mcp-header"], json!("Region"));
        assert!(mcp["properties"]["query"].get("x-mcp-header").is_none());
        for t in Target::ALL {
            assert_eq!(check_strict(&s.render(t), t), vec![], "{t:?}");
        }
        for t in [Target::OpenAi, Target::Anthropic] {
            assert!(
                s.render(t)["properties"]["region"]
                    .get("x-mcp-header")
                    .is_none()
            );
            // Written by hand for a provider, the keyword is outside its strict subset.
            let v = check_strict(&mcp, t);
            assert!(
                v.iter().any(|v| v.message.contains("x-mcp-header")),
                "{t:?}: {v:?}"
            );
        }
    }

    #[test]
    fn headers_the_clients_would_refuse_are_named() {
        let optional = Schema::new(SchemaKind::Optional(Box::new(text())));
        let list = Schema::new(SchemaKind::Array(Box::new(text())));
        let nested = Schema::object(vec![Property::new("code", text()).with_header("Code")]);
        let s = Schema::object(vec![
            Property::new("a", text()).with_header("Region"),
            Property::new("b", text()).with_header("region"),
            Property::new("c", optional).with_header("Note"),
            Property::new("d", list).with_header("Items"),
            Property::new("e", text()).with_header("My Region"),
            Property::new("f", nested),
        ]);
        let v: Vec<String> = check_strict(&s.render(Target::Mcp), Target::Mcp)
            .iter()
            .map(ToString::to_string)
            .collect();
        let at = |path: &str, says: &str| {
            assert!(
                v.iter()
                    .any(|v| v.starts_with(&format!("at `{path}`")) && v.contains(says)),
                "{path} / {says}: {v:#?}"
            )
        };
        at("properties.b", "also given at `properties.a`");
        at("properties.c", "required text, integer or boolean");
        at("properties.d", "required text, integer or boolean");
        at("properties.e", "a space");
        // A property of a nested object is still reached through `properties` alone.
        assert!(!v.iter().any(|v| v.contains("properties.f")), "{v:#?}");
        assert_eq!(v.len(), 4, "{v:#?}");
        // A header on a list's items is off the `properties` chain.
        let items = json!({"type": "object", "additionalProperties": false, "required": ["l"],
            "properties": {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}}});
        let v = check_strict(&items, Target::Mcp);
        assert!(v.iter().any(|v| v.path == "properties.l.items"), "{v:?}");
    }
}
