//! The fixture's tools exported for OpenAI, Anthropic and MCP: the shapes each provider
//! expects, the strict schemas, per-principal filtering, and the export checker.

use erp_tools_core::{
    Target, anthropic_tools, anthropic_tools_for, check_export, check_strict, mcp_tools,
    mcp_tools_for, openai_tools, openai_tools_for,
};
use erp_tools_tests::app::registry;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::{Value, json};

#[test]
fn openai_export_is_namespaced_strict_and_deferred() {
    let reg = registry();
    let export = openai_tools(&reg);
    assert_eq!(check_export(&export, Target::OpenAi), Vec::<String>::new());

    let items = export.as_array().unwrap();
    let kinds: Vec<(&str, Option<&str>)> = items
        .iter()
        .map(|i| (i["type"].as_str().unwrap(), i["name"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("namespace", Some("finance")),
            ("namespace", Some("inventory")),
            ("namespace", Some("purchasing")),
            ("tool_search", None)
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
    let functions = purchasing["tools"].as_array().unwrap();
    let names: Vec<&str> = functions
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "purchasing_create_po_draft",
            "purchasing_get_po",
            "purchasing_get_vendor_summary",
            "purchasing_search_vendors"
        ]
    );
    for f in functions {
        let tool = reg.get(f["name"].as_str().unwrap()).unwrap();
        assert_eq!(f["type"], json!("function"));
        assert_eq!(f["strict"], json!(true));
        assert_eq!(f["defer_loading"], json!(true));
        assert_eq!(&f["parameters"], tool.input_schema(Target::OpenAi).as_ref());
        assert_eq!(f["description"], json!(tool.description));
    }
    // OpenAI strict: optional fields are required and nullable.
    let draft = &functions[0]["parameters"];
    assert!(
        draft["required"]
            .as_array()
            .unwrap()
            .contains(&json!("note"))
    );
    assert_eq!(
        draft["properties"]["note"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn anthropic_export_has_input_schema_and_explicit_strict() {
    let reg = registry();
    let export = anthropic_tools(&reg);
    assert_eq!(
        check_export(&export, Target::Anthropic),
        Vec::<String>::new()
    );
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
        .find(|t| t["name"] == json!("purchasing_create_po_draft"))
        .unwrap();
    let schema = &draft["input_schema"];
    assert!(
        !schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("note"))
    );
    assert_eq!(schema["properties"]["note"]["type"], json!("string"));
    assert!(!schema.to_string().contains("\"null\""));
}

#[test]
fn mcp_export_matches_the_served_tools() {
    let reg = registry();
    let export = mcp_tools(&reg);
    assert_eq!(check_export(&export, Target::Mcp), Vec::<String>::new());
    for t in export.as_array().unwrap() {
        assert_eq!(check_strict(&t["inputSchema"], Target::Mcp), vec![]);
        let hints = &t["annotations"];
        let draft = [
            "purchasing_create_po_draft",
            "finance_create_payment_request_draft",
        ];
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
    let openai = openai_tools_for(&reg, &clerk);
    assert_eq!(check_export(&openai, Target::OpenAi), Vec::<String>::new());
    assert_eq!(
        openai,
        json!([
            {"type": "namespace", "name": "inventory",
             "description": reg.namespaces()[1].description,
             "tools": [openai_tools(&reg)[1]["tools"][0].clone()]},
            {"type": "tool_search"}
        ])
    );
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&anthropic_tools_for(&reg, &clerk)),
        ["inventory_get_stock"]
    );
    assert_eq!(names(&mcp_tools_for(&reg, &clerk)), ["inventory_get_stock"]);
    assert_eq!(
        names(&anthropic_tools_for(&reg, &BUYER.principal())),
        [
            "inventory_get_stock",
            "purchasing_create_po_draft",
            "purchasing_get_po",
            "purchasing_get_vendor_summary",
            "purchasing_search_vendors"
        ]
    );
}

#[test]
fn each_export_is_refused_by_the_other_providers_rules() {
    let reg = registry();
    let openai = openai_tools(&reg);
    let anthropic = anthropic_tools(&reg);

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
