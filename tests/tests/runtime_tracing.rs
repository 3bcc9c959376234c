//! Every call, direct, over MCP or from the agent loop, runs in an `execute_tool` span
//! carrying the OpenTelemetry GenAI attributes and the outcome. A minimal subscriber records span fields; spans are told apart by
//! their agent run id, so the two backends' tests can share it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use erp_tools_core::Outcome;
use erp_tools_core::agent::{ModelAction, RunRequest, ScriptedModel, TokenUsage};
use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_tests::agent::Deployment;
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Session};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{call_tool, connect_in_process, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

#[derive(Default)]
struct Capture {
    next: AtomicU64,
    spans: Mutex<BTreeMap<u64, (String, Fields)>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
}

impl Subscriber for &'static Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = Fields::new();
        span.record(&mut Collect(&mut fields));
        self.spans
            .lock()
            .unwrap()
            .insert(id, (span.metadata().name().to_string(), fields));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Collect(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<&'static Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::default());
        tracing::subscriber::set_global_default(capture).expect("one global subscriber");
        capture
    })
}

fn spans_of_run(run: &str) -> Vec<(String, Fields)> {
    capture()
        .spans
        .lock()
        .unwrap()
        .values()
        .filter(|(_, f)| f.get("erp_tools.run_id").map(String::as_str) == Some(run))
        .cloned()
        .collect()
}

async fn spans(t: &TestDb) {
    capture();
    let buyer = Session::new(&t.db, BUYER).await;
    // A draft, its replay, a payment request the buyer has no scope for, and a read
    // with its arguments missing.
    let calls = [
        (CREATE_PO_DRAFT, po_draft("R-1"), Outcome::Ok),
        (CREATE_PO_DRAFT, po_draft("R-1"), Outcome::Replayed),
        (
            CREATE_PAYMENT_REQUEST_DRAFT,
            valid_arguments(CREATE_PAYMENT_REQUEST_DRAFT, "R-2"),
            Outcome::Denied,
        ),
        (GET_PO, json!({}), Outcome::ToolError),
    ];
    for (tool, arguments, expected) in calls {
        let out = buyer.call(tool, arguments).await;
        assert_eq!(out.outcome, expected, "{tool}: {}", out.text);
    }

    let spans = spans_of_run(&buyer.run);
    assert_eq!(spans.len(), 4, "{spans:?}");
    let outcomes: Vec<&str> = spans
        .iter()
        .map(|(_, f)| f["erp_tools.outcome"].as_str())
        .collect();
    assert_eq!(outcomes, ["ok", "replayed", "denied", "invalid"]);
    for (name, fields) in &spans {
        assert_eq!(name, "execute_tool");
        assert_eq!(fields["gen_ai.operation.name"], "execute_tool");
        let tool = &fields["gen_ai.tool.name"];
        assert_eq!(fields["otel.name"], format!("tools/call {tool}"));
        assert_eq!(fields["mcp.method.name"], "tools/call");
        assert!(fields["gen_ai.tool.call.id"].starts_with("call-"));
    }
    assert_eq!(spans[0].1["gen_ai.tool.name"], CREATE_PO_DRAFT);
    assert_eq!(spans[0].1["enduser.id"], BUYER.user_id);
    assert_eq!(spans[0].1["erp_tools.branch"], BUYER.branch.code);
    assert_eq!(spans[3].1["gen_ai.tool.name"], GET_PO);
    // Failures name their kind; arguments never reach the span.
    assert_eq!(spans[2].1["error.type"], "denied");
    assert_eq!(spans[3].1["error.type"], "invalid_arguments");
    assert!(
        spans
            .iter()
            .all(|(_, f)| !f.values().any(|v| v.contains("R-1")))
    );
}
on_both_backends!(calls_run_in_execute_tool_spans, crate::spans);

/// A draft over MCP (a real `rmcp` client in-process) runs in the call's span.
async fn mcp_calls_have_the_span(t: &TestDb) {
    capture();
    let run = new_run();
    let app = App::new(&t.db).await;
    let client = connect_in_process(ErpMcpServer::with_principal(
        app.runtime.clone(),
        BUYER.in_run(&run),
    ))
    .await;
    let result = call_tool(&client, CREATE_PO_DRAFT, po_draft("M-1")).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let replay = call_tool(&client, CREATE_PO_DRAFT, po_draft("M-1")).await;
    assert_eq!(replay.is_error, Some(false), "{}", text_of(&replay));

    let spans = spans_of_run(&run);
    assert_eq!(spans.len(), 2, "{spans:?}");
    for (name, fields) in &spans {
        assert_eq!(name, "execute_tool");
        assert_eq!(fields["gen_ai.tool.name"], CREATE_PO_DRAFT);
        assert_eq!(fields["enduser.id"], BUYER.user_id);
        assert_eq!(fields["erp_tools.tier"], "draft");
        // The protocol's side: the JSON-RPC id is the tool call id, the revision is known.
        assert_eq!(fields["jsonrpc.request.id"], fields["gen_ai.tool.call.id"]);
        assert!(fields.contains_key("mcp.protocol.version"), "{fields:?}");
        assert!(!fields.contains_key("error.type"), "{fields:?}");
    }
    let outcomes: Vec<&str> = spans
        .iter()
        .map(|(_, f)| f["erp_tools.outcome"].as_str())
        .collect();
    assert_eq!(outcomes, ["ok", "replayed"]);
}
on_both_backends!(
    mcp_calls_run_in_execute_tool_spans,
    crate::mcp_calls_have_the_span
);

/// The agent loop's calls run in the call's span too: one executed, one denied by the
/// deployment's policy before it ran (an over-limit payment request waiting for a person).
async fn agent_calls_have_the_span(t: &TestDb) {
    capture();
    let run = new_run();
    let deployment = Deployment::new(&t.db).await;
    let agent = deployment.agent();
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(CREATE_PO_DRAFT, po_draft("A-1")),
        ModelAction::answer("Drafted."),
    ])
    .usage_per_call(TokenUsage::new(1234, 56));
    let outcome = agent
        .run_with(
            &BUYER.shared(),
            &mut model,
            RunRequest::new("Draft the order").run_id(&run),
        )
        .await;
    assert_eq!(outcome.answer(), Some("Drafted."), "{:?}", outcome.status);

    // The run's span (GenAI `invoke_agent`), and the call's inside it.
    let spans = spans_of_run(&run);
    assert_eq!(spans.len(), 2, "{spans:?}");
    let (name, fields) = &spans[0];
    assert_eq!(name, "erp_tools.agent_run");
    assert_eq!(fields["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(fields["enduser.id"], BUYER.user_id);
    let (name, fields) = &spans[1];
    assert_eq!(name, "execute_tool");
    assert_eq!(fields["gen_ai.tool.name"], CREATE_PO_DRAFT);
    assert_eq!(fields["erp_tools.outcome"], "ok");
    assert_eq!(fields["gen_ai.tool.call.id"], "call-1");
    // Each model turn is a GenAI `chat` span with its tokens.
    let turns = capture()
        .spans
        .lock()
        .unwrap()
        .values()
        .filter(|(name, f)| {
            name == "gen_ai.chat"
                && f.get("gen_ai.usage.input_tokens").map(String::as_str) == Some("1234")
        })
        .count();
    assert!(turns >= 2, "two turns recorded");
}
on_both_backends!(
    agent_calls_run_in_execute_tool_spans,
    crate::agent_calls_have_the_span
);
