//! The fixture's tools exported for OpenAI, Anthropic and MCP: the shapes each provider
//! expects, the strict schemas, per-principal filtering, and the export checker.

use erp_tools_core::Target;
use erp_tools_core::export::{
    AnthropicToolSearch, anthropic_tools, anthropic_tools_deferred, anthropic_tools_deferred_for,
    check_export, openai_tools,
};
use erp_tools_core::schema::check_strict;
use erp_tools_tests::app::registry;
use erp_tools_tests::app::tools::{
    CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, FOR_BUYER, GET_STOCK,
};
use erp_tools_tests::exports::checked_export;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::{Value, json};

/// The `key` of every item of the list `value`.
fn each<'a>(value: &'a Value, key: &str) -> Vec<Option<&'a str>> {
    let items = value.as_array().expect("a list");
    items.iter().map(|i| i[key].as_str()).collect()
}

/// The names in a tool list.
fn names(value: &Value) -> Vec<&str> {
    each(value, "name")
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

/// Whether the schema `schema` lists `field` in `required`.
fn requires(schema: &Value, field: &str) -> bool {
    schema["required"]
        .as_array()
        .unwrap()
        .contains(&json!(field))
}

#[test]
fn openai_export_is_namespaced_strict_and_deferred() {
    let reg = registry();
    let export = checked_export(&reg, Target::OpenAi, None);
    let items = export.as_array().unwrap();
    let kinds: Vec<(Option<&str>, Option<&str>)> = each(&export, "type")
        .into_iter()
        .zip(each(&export, "name"))
        .collect();
    assert_eq!(
        kinds,
        [
            (Some("namespace"), Some("finance")),
            (Some("namespace"), Some("inventory")),
            (Some("namespace"), Some("purchasing")),
            (Some("tool_search"), None)
        ]
    );
    let purchasing = &items[2];
    assert!(
        purchasing["description"]
            .as_str()
            .unwrap()
            .contains("cannot approve"),
        "the namespace says what the module cannot do"
    );
    let functions = &purchasing["tools"];
    assert_eq!(names(functions), FOR_BUYER[1..]);
    for f in functions.as_array().unwrap() {
        let tool = reg.get(f["name"].as_str().unwrap()).unwrap();
        assert_eq!(f["type"], json!("function"));
        assert_eq!(f["strict"], json!(true));
        assert_eq!(f["defer_loading"], json!(true));
        assert_eq!(&f["parameters"], tool.input_schema(Target::OpenAi).as_ref());
        assert_eq!(f["description"], json!(tool.description()));
    }
    // OpenAI strict: optional fields are required and nullable.
    let draft = &functions[0]["parameters"];
    assert!(requires(draft, "note"));
    assert_eq!(
        draft["properties"]["note"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn anthropic_export_has_input_schema_and_explicit_strict() {
    let export = checked_export(&registry(), Target::Anthropic, None);
    let tools = export.as_array().unwrap();
    assert_eq!(tools.len(), 6);
    for t in tools {
        let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "description", "input_schema", "strict"]);
        assert_eq!(t["strict"], json!(true));
    }
    // Anthropic strict: optional fields are left out of `required`, without a null branch.
    let draft = tools
        .iter()
        .find(|t| t["name"] == json!(CREATE_PO_DRAFT))
        .unwrap();
    let schema = &draft["input_schema"];
    assert!(!requires(schema, "note"));
    assert_eq!(schema["properties"]["note"]["type"], json!("string"));
    assert!(!schema.to_string().contains("\"null\""));
}

/// The deferred Anthropic export: the search tool first (never deferred), then the same
/// strict tools as the plain export, grouped by module in the OpenAI export's order, each
/// with `defer_loading: true`; per caller it keeps only their tools; the checker accepts
/// it and refuses it without its search tool.
#[test]
fn anthropic_deferred_export_groups_by_module_behind_a_search_tool() {
    let reg = registry();
    let plain = anthropic_tools(&reg);
    let module_order: Vec<Value> = openai_tools(&reg)
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|ns| ns["tools"].as_array())
        .flatten()
        .map(|f| f["name"].clone())
        .collect();
    for search in AnthropicToolSearch::ALL {
        let export = anthropic_tools_deferred(&reg, search);
        assert_eq!(
            check_export(&export, Target::Anthropic),
            Vec::<String>::new()
        );
        let items = export.as_array().unwrap();
        assert_eq!(
            items[0],
            json!({"type": search.type_name(), "name": search.tool_name()})
        );
        let tools = &items[1..];
        let order: Vec<Value> = tools.iter().map(|t| t["name"].clone()).collect();
        assert_eq!(order, module_order, "grouped by module");
        for t in tools {
            assert_eq!(t["defer_loading"], json!(true));
            let mut loaded = t.clone();
            loaded.as_object_mut().unwrap().remove("defer_loading");
            assert!(plain.as_array().unwrap().contains(&loaded), "{t}");
        }
        let without_search = Value::Array(tools.to_vec());
        let problems = check_export(&without_search, Target::Anthropic).join("\n");
        assert!(
            problems.contains("no tool-search tool is sent"),
            "{problems}"
        );

        let clerk = anthropic_tools_deferred_for(&reg, &WAREHOUSE.principal(), search);
        assert_eq!(names(&clerk), [search.tool_name(), GET_STOCK]);
        let buyer = anthropic_tools_deferred_for(&reg, &BUYER.principal(), search);
        assert_eq!(
            check_export(&buyer, Target::Anthropic),
            Vec::<String>::new()
        );
        let mut expected = vec![search.tool_name()];
        expected.extend(FOR_BUYER);
        assert_eq!(names(&buyer), expected);
    }
}

#[test]
fn mcp_export_matches_the_served_tools() {
    let export = checked_export(&registry(), Target::Mcp, None);
    for t in export.as_array().unwrap() {
        assert_eq!(check_strict(&t["inputSchema"], Target::Mcp), vec![]);
        let hints = &t["annotations"];
        let draft = [CREATE_PO_DRAFT, CREATE_PAYMENT_REQUEST_DRAFT];
        let read = !draft.iter().any(|d| t["name"] == json!(d));
        assert_eq!(hints["readOnlyHint"], json!(read));
        assert_eq!(hints["destructiveHint"], json!(false));
        assert_eq!(hints["idempotentHint"], json!(true));
        assert_eq!(hints["openWorldHint"], json!(false));
    }
}

#[test]
fn exports_keep_only_what_the_principal_may_use() {
    let reg = registry();
    let clerk = WAREHOUSE.principal();
    let openai = checked_export(&reg, Target::OpenAi, Some(&clerk));
    assert_eq!(
        openai,
        json!([
            {"type": "namespace", "name": "inventory",
             "description": reg.namespaces()[1].description,
             "tools": [openai_tools(&reg)[1]["tools"][0].clone()]},
            {"type": "tool_search"}
        ])
    );
    for target in [Target::Anthropic, Target::Mcp] {
        let export = checked_export(&reg, target, Some(&clerk));
        assert_eq!(names(&export), [GET_STOCK], "{target:?}");
    }
    let buyers = checked_export(&reg, Target::Anthropic, Some(&BUYER.principal()));
    assert_eq!(names(&buyers), FOR_BUYER);
}

#[test]
fn each_export_is_refused_by_the_other_providers_rules() {
    let reg = registry();
    let openai = checked_export(&reg, Target::OpenAi, None);
    let anthropic = checked_export(&reg, Target::Anthropic, None);

    // An OpenAI envelope is not an Anthropic tool list.
    let problems = check_export(&openai, Target::Anthropic);
    assert!(!problems.is_empty());
    // Anthropic schemas leave optional fields out of `required`: not OpenAI strict, and
    // no namespaces or tool_search.
    let problems = check_export(&anthropic, Target::OpenAi).join("\n");
    assert!(problems.contains("tool_search"), "{problems}");
    // Anthropic tools wrapped as OpenAI functions still fail on the optional fields.
    let wrapped = json!([
        {"type": "namespace", "name": "purchasing", "description": "x", "tools":
            anthropic.as_array().unwrap().iter().map(|t| json!({
                "type": "function", "name": t["name"], "description": t["description"],
                "strict": true, "defer_loading": true, "parameters": t["input_schema"],
            })).collect::<Vec<_>>()},
        {"type": "tool_search"}
    ]);
    let problems = check_export(&wrapped, Target::OpenAi).join("\n");
    assert!(
        problems.contains("properties.note") && problems.contains("required"),
        "{problems}"
    );
}
