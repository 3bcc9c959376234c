//! The OpenAI Responses API adapter against a local fixture that speaks the API's wire
//! format: what the adapter sends (strict tools of the caller only, the policy in
//! `instructions`, `function_call` / `function_call_output` items, the bearer key), how it
//! reads answers (several calls in one answer, usage), retries, and the audit rows.

use erp_tools_core::Target;
use erp_tools_core::agent::providers::{ApiKey, OpenAiModel};
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

const KEY: &str = "sk-test-openai-0123456789";

/// An answer with two function calls, after a tool search (as the API returns them).
fn two_calls() -> Value {
    json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "tool_search_call", "id": "ts_1", "status": "completed",
             "arguments": {"query": "vendor stock"}, "execution": "server"},
            {"type": "tool_search_output", "id": "tso_1", "status": "completed",
             "tools": [], "execution": "server"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_vendor_1",
             "name": GET_VENDOR_SUMMARY, "arguments": format!(r#"{{"vendor_code":"{VENDOR}"}}"#),
             "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_stock_2",
             "name": GET_STOCK, "arguments": format!(r#"{{"item_code":"{ITEM}"}}"#),
             "status": "completed"}
        ],
        "usage": {"input_tokens": 1200, "output_tokens": 80, "total_tokens": 1280}
    })
}

fn final_text(text: &str) -> Value {
    json!({
        "id": "resp_2", "object": "response", "status": "completed",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 1500, "output_tokens": 40, "total_tokens": 1540}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_requests_carry_strict_caller_tools_policy_and_results_in_responses_format() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let fixture = ProviderFixture::start([
        Reply::status(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .header("retry-after-ms", "20"),
        Reply::ok(two_calls()),
        Reply::status(503, json!({"error": {"message": "overloaded"}})).header("retry-after", "0"),
        Reply::ok(final_text("Vendor V-00001 is active; 12 boxes in stock.")),
    ])
    .await;
    let registry = d.app.runtime.registry().clone();
    let mut model = OpenAiModel::new(registry.clone(), "gpt-test", ApiKey::new(KEY))
        .base_url(&fixture.base_url)
        .http(fast_retries())
        .max_output_tokens(900);
    let policy = Policy::new().require_approval_above(CREATE_PO_DRAFT, "lines[].qty", "100");
    let agent = d.agent_with(policy).prompt_version("pv-7");
    let caller = buyer();
    let out = agent
        .run(
            &caller,
            &mut model,
            "How is V-00001 and our BRG-0042 stock?",
        )
        .await;
    assert_eq!(
        out.status,
        RunStatus::Done {
            answer: "Vendor V-00001 is active; 12 boxes in stock.".into()
        }
    );

    let received = fixture.received();
    assert_eq!(
        received.len(),
        4,
        "two answers, each after one retried failure"
    );
    for r in &received {
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(r.headers["authorization"], format!("Bearer {KEY}"));
        assert!(r.headers["content-type"].starts_with("application/json"));
    }
    // A retry sends the same request again.
    assert_eq!(received[0].body, received[1].body);
    let first = &received[0].body;
    assert_eq!(first["model"], "gpt-test");
    assert_eq!(first["store"], false);
    assert_eq!(first["max_output_tokens"], 900);
    assert_eq!(
        first["input"],
        json!([{"role": "user", "content": "How is V-00001 and our BRG-0042 stock?"}])
    );

    // The policy rides in the system prompt: the tool the buyer lacks, and the approval rule.
    let instructions = first["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with("You work in an ERP"),
        "{instructions}"
    );
    assert!(instructions.contains(&format!("Not available to this user: {CREATE_PAYMENT_REQUEST_DRAFT} (needs the permission finance:draft)")), "{instructions}");
    assert!(
        instructions.contains(&format!("{CREATE_PO_DRAFT}, when lines[].qty is above 100")),
        "{instructions}"
    );

    // Tools: the registry's strict export, only the buyer's tools.
    let tools = first["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap(), &json!({"type": "tool_search"}));
    let mut names = Vec::new();
    for ns in tools.iter().filter(|t| t["type"] == "namespace") {
        assert!(ns["description"].as_str().is_some_and(|d| !d.is_empty()));
        for f in ns["tools"].as_array().unwrap() {
            assert_eq!(f["type"], "function");
            assert_eq!(f["strict"], true);
            assert_eq!(f["defer_loading"], true);
            let name = f["name"].as_str().unwrap();
            let tool = registry.get(name).unwrap();
            assert_eq!(&f["parameters"], tool.input_schema(Target::OpenAi).as_ref());
            assert_eq!(f["parameters"]["additionalProperties"], false);
            names.push(name.to_string());
        }
    }
    assert_offered_to(&agent, &caller, &names);
    assert!(!names.iter().any(|n| n == CREATE_PAYMENT_REQUEST_DRAFT));
    assert!(
        !tools.iter().any(|t| t["name"] == "finance"),
        "no empty namespace"
    );

    // The second turn: tool search items, both calls, both outputs as untrusted data.
    let input = received[3].body["input"].as_array().unwrap().clone();
    let types: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "tool_search_call",
            "tool_search_output",
            "function_call",
            "function_call_output",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[3]["call_id"], "call_vendor_1");
    assert_eq!(input[3]["name"], GET_VENDOR_SUMMARY);
    let args: Value = serde_json::from_str(input[3]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"vendor_code": VENDOR}));
    assert_eq!(input[4]["call_id"], "call_vendor_1");
    assert_eq!(input[6]["call_id"], "call_stock_2");
    for output in [&input[4], &input[6]] {
        let text = output["output"].as_str().unwrap();
        assert!(text.starts_with("<tool_result tool="), "{text}");
        assert!(text.contains(r#"trust="untrusted-data""#), "{text}");
    }

    // Usage summed over both answers; call ids, model and prompt version in the audit rows.
    assert_eq!(out.usage.input_tokens, 2700);
    assert_eq!(out.usage.output_tokens, 120);
    let rows = t.db.audit_log(Some(&out.run_id)).await.unwrap();
    let runtime_rows: Vec<_> = rows.iter().filter(|r| r.source == "runtime").collect();
    let ids: Vec<_> = runtime_rows
        .iter()
        .map(|r| r.tool_call_id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["call_vendor_1", "call_stock_2"]);
    for row in &rows {
        assert_eq!(row.model.as_deref(), Some("gpt-test"), "{row:?}");
        assert_eq!(row.prompt_version.as_deref(), Some("pv-7"), "{row:?}");
    }
    // The key is in no request body and no audit row.
    assert!(received.iter().all(|r| !r.body.to_string().contains(KEY)));
    assert!(rows.iter().all(|r| !format!("{r:?}").contains(KEY)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_errors_other_than_429_and_5xx_are_not_retried_and_never_show_the_key() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let fixture = ProviderFixture::start([Reply::status(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )])
    .await;
    let mut model = OpenAiModel::new(
        d.app.runtime.registry().clone(),
        "gpt-test",
        ApiKey::new(KEY),
    )
    .base_url(&fixture.base_url)
    .http(fast_retries());
    assert!(!format!("{model:?}").contains(KEY));
    let out = d.agent().run(&buyer(), &mut model, "Anything").await;
    let RunStatus::Aborted { reason } = &out.status else {
        panic!("expected aborted, got {:?}", out.status);
    };
    assert!(
        reason.contains("HTTP 401: Incorrect API key provided"),
        "{reason}"
    );
    assert!(!reason.contains(KEY));
    assert_eq!(fixture.received().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_retries_are_bounded() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let busy = || Reply::status(500, json!({"error": {"message": "server error"}}));
    let fixture = ProviderFixture::start([busy(), busy(), busy(), busy(), busy()]).await;
    let mut model = OpenAiModel::new(
        d.app.runtime.registry().clone(),
        "gpt-test",
        ApiKey::new(KEY),
    )
    .base_url(&fixture.base_url)
    .http(fast_retries().max_retries(2));
    let out = d.agent().run(&buyer(), &mut model, "Anything").await;
    assert_eq!(out.status.as_str(), "aborted");
    assert_eq!(fixture.received().len(), 3, "one attempt and two retries");
}
