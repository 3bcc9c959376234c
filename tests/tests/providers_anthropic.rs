//! The Anthropic Messages API adapter against a local fixture that speaks the API's wire
//! format: headers (`x-api-key`, `anthropic-version`), strict tools of the caller only,
//! the policy in `system`, `tool_use` / `tool_result` blocks, usage with cache tokens,
//! retries, and the audit rows.

use erp_tools_core::Target;
use erp_tools_core::agent::providers::{AnthropicModel, ApiKey};
use erp_tools_core::agent::{Policy, RunStatus};
use erp_tools_tests::agent::Deployment;
use erp_tools_tests::app::seed::{ITEM, VENDOR};
use erp_tools_tests::app::tools::{
    CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_STOCK, GET_VENDOR_SUMMARY,
};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::provider_fixture::{
    ProviderFixture, Reply, assert_offered_to, buyer, fast_retries,
};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-0123456789";

fn two_tool_uses() -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "text", "text": "Let me look both up."},
            {"type": "tool_use", "id": "toolu_vendor", "name": GET_VENDOR_SUMMARY,
             "input": {"vendor_code": VENDOR}},
            {"type": "tool_use", "id": "toolu_stock", "name": GET_STOCK,
             "input": {"item_code": ITEM}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 900, "output_tokens": 70,
                  "cache_creation_input_tokens": 100, "cache_read_input_tokens": 0}
    })
}

fn final_text(text: &str) -> Value {
    json!({
        "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 300, "output_tokens": 30,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1000}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_requests_carry_headers_strict_caller_tools_policy_and_tool_result_blocks() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let fixture = ProviderFixture::start([
        Reply::status(529, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
            .header("retry-after", "0"),
        Reply::ok(two_tool_uses()),
        Reply::ok(final_text("V-00001 is active and BRG-0042 is in stock.")),
    ])
    .await;
    let registry = d.app.runtime.registry().clone();
    let mut model = AnthropicModel::new(registry.clone(), "claude-test", ApiKey::new(KEY))
        .base_url(&fixture.base_url)
        .http(fast_retries())
        .max_tokens(1024);
    let policy = Policy::new().limit(CREATE_PO_DRAFT, "lines[].qty", "750");
    let agent = d.agent_with(policy).prompt_version("pv-anthropic");
    let caller = buyer();
    let out = agent
        .run(&caller, &mut model, "Check V-00001 and BRG-0042")
        .await;
    assert_eq!(
        out.status,
        RunStatus::Done {
            answer: "V-00001 is active and BRG-0042 is in stock.".into()
        }
    );

    let received = fixture.received();
    assert_eq!(
        received.len(),
        3,
        "two answers, the first after one retried 529"
    );
    for r in &received {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.headers["x-api-key"], KEY);
        assert_eq!(r.headers["anthropic-version"], "2023-06-01");
        assert!(!r.headers.contains_key("authorization"));
    }
    let first = &received[1].body;
    assert_eq!(first, &received[0].body, "a retry sends the same request");
    assert_eq!(first["model"], "claude-test");
    assert_eq!(first["max_tokens"], 1024);
    let system = first["system"].as_str().unwrap();
    assert!(system.starts_with("You work in an ERP"), "{system}");
    assert!(
        system.contains(&format!(
            "Not available to this user: {CREATE_PAYMENT_REQUEST_DRAFT}"
        )),
        "{system}"
    );
    assert!(
        system.contains(&format!(
            "{CREATE_PO_DRAFT}: the sum of lines[].qty over all items is at most 750"
        )),
        "{system}"
    );
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Check V-00001 and BRG-0042"}]}])
    );
    let tools = first["tools"].as_array().unwrap();
    let mut names: Vec<String> = Vec::new();
    for tool in tools {
        assert_eq!(tool["strict"], true);
        let name = tool["name"].as_str().unwrap();
        assert_eq!(
            &tool["input_schema"],
            registry
                .get(name)
                .unwrap()
                .input_schema(Target::Anthropic)
                .as_ref()
        );
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()));
        names.push(name.into());
    }
    assert_offered_to(&agent, &caller, &names);

    // The second request: each call as a tool_use block answered by a tool_result block.
    let messages = received[2].body["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"],
        json!([{"type": "tool_use", "id": "toolu_vendor", "name": GET_VENDOR_SUMMARY, "input": {"vendor_code": VENDOR}}])
    );
    for (i, id) in [(2, "toolu_vendor"), (4, "toolu_stock")] {
        let block = &messages[i]["content"][0];
        assert_eq!(block["type"], "tool_result");
        assert_eq!(block["tool_use_id"], id);
        assert_eq!(block["is_error"], false);
        let text = block["content"].as_str().unwrap();
        assert!(text.contains(r#"trust="untrusted-data""#), "{text}");
    }

    assert_eq!(out.usage.input_tokens, 900 + 100 + 300 + 1000);
    assert_eq!(out.usage.output_tokens, 100);
    let rows = t.db.audit_log(Some(&out.run_id)).await.unwrap();
    let ids: Vec<_> = rows
        .iter()
        .filter(|r| r.source == "runtime")
        .map(|r| r.tool_call_id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_vendor", "toolu_stock"]);
    assert!(
        rows.iter()
            .all(|r| r.model.as_deref() == Some("claude-test")
                && r.prompt_version.as_deref() == Some("pv-anthropic"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_denied_calls_go_back_as_error_tool_results() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let pay = json!({
        "id": "msg_01", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_pay", "name": CREATE_PAYMENT_REQUEST_DRAFT,
                     "input": {"vendor_code": VENDOR, "amount": "10", "client_ref": "p-1", "note": null}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}
    });
    let fixture =
        ProviderFixture::start([Reply::ok(pay), Reply::ok(final_text("I cannot pay."))]).await;
    let mut model = AnthropicModel::new(
        d.app.runtime.registry().clone(),
        "claude-test",
        ApiKey::new(KEY),
    )
    .base_url(&fixture.base_url)
    .http(fast_retries());
    let out = d.agent().run(&buyer(), &mut model, "Pay V-00001").await;
    assert_eq!(out.answer(), Some("I cannot pay."));
    let second = &fixture.received()[1].body;
    let block = &second["messages"][2]["content"][0];
    assert_eq!(block["tool_use_id"], "toolu_pay");
    assert_eq!(block["is_error"], true);
    assert!(
        block["content"].as_str().unwrap().contains("finance:draft"),
        "{block}"
    );
}

/// With tool search, the request sends the search tool and the caller's tools deferred
/// (the deferred export), with `anthropic-beta` naming tool search before the account's
/// own beta; once the model called two tools, the next request sends those two loaded,
/// so its `tool_use` blocks name loaded tools, and the rest stay deferred.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_tool_search_defers_the_callers_tools_and_loads_the_called_ones() {
    use erp_tools_core::export::{AnthropicToolSearch, anthropic_tools_deferred_for, check_export};
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let fixture = ProviderFixture::start([
        Reply::ok(two_tool_uses()),
        Reply::ok(final_text("Both looked up.")),
    ])
    .await;
    let registry = d.app.runtime.registry().clone();
    let mut model = AnthropicModel::new(registry.clone(), "claude-test", ApiKey::new(KEY))
        .base_url(&fixture.base_url)
        .http(fast_retries())
        .beta("context-management-2025-06-27")
        .tool_search(AnthropicToolSearch::Bm25);
    let caller = buyer();
    let agent = d.agent();
    let out = agent
        .run(&caller, &mut model, "Check V-00001 and BRG-0042")
        .await;
    assert_eq!(out.answer(), Some("Both looked up."));

    let received = fixture.received();
    assert_eq!(received.len(), 2);
    for r in &received {
        assert_eq!(
            r.headers["anthropic-beta"],
            "advanced-tool-use-2025-11-20,context-management-2025-06-27"
        );
    }
    let first = &received[0].body["tools"];
    assert_eq!(
        first,
        &anthropic_tools_deferred_for(&registry, &caller, AnthropicToolSearch::Bm25)
    );
    assert_eq!(check_export(first, Target::Anthropic), Vec::<String>::new());
    let names: Vec<String> = first.as_array().unwrap()[1..]
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_offered_to(&agent, &caller, &names);

    let second = received[1].body["tools"].as_array().unwrap();
    assert_eq!(second[0]["type"], "tool_search_tool_bm25_20251119");
    for tool in &second[1..] {
        let called = [GET_VENDOR_SUMMARY, GET_STOCK].contains(&tool["name"].as_str().unwrap());
        assert_eq!(tool["defer_loading"], json!(!called), "{}", tool["name"]);
    }
    assert_eq!(
        check_export(&json!(second), Target::Anthropic),
        Vec::<String>::new()
    );
}
