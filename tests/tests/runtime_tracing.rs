//! Every call, direct, over MCP or from the agent loop, runs in an `execute_tool` span
//! carrying the OpenTelemetry GenAI attributes and the outcome. A minimal subscriber records span fields; spans are told apart by
//! their agent run id, so the two backends' tests can share it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use erp_tools_core::Outcome;
use erp_tools_core::agent::{
    Agent, ModelAction, RunOutcome, RunRequest, ScriptedModel, TokenUsage,
};
use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_tests::agent::Deployment;
use erp_tools_tests::app::arguments::{po_draft, valid_arguments};
use erp_tools_tests::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Session};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, SESSIONS};
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{call_tool, connect_in_process, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::BUYER;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A field's value as the subscriber was given it, and how: `i64`, `u64`, `bool`, `str`
/// or `debug` (the exporter turns `i64` into an OTLP `int` value, and a `u64` or a
/// `Debug` value into a string).
#[derive(Clone, Debug)]
struct Recorded {
    text: String,
    kind: &'static str,
}

impl std::ops::Deref for Recorded {
    type Target = String;
    fn deref(&self) -> &String {
        &self.text
    }
}

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq<&str> for Recorded {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<String> for Recorded {
    fn eq(&self, other: &String) -> bool {
        &self.text == other
    }
}

type Fields = BTreeMap<String, Recorded>;

#[derive(Default)]
struct Capture {
    next: AtomicU64,
    spans: Mutex<BTreeMap<u64, (String, Fields)>>,
}

struct Collect<'a>(&'a mut Fields);

impl Collect<'_> {
    fn put(&mut self, field: &Field, text: String, kind: &'static str) {
        self.0
            .insert(field.name().to_string(), Recorded { text, kind });
    }
}

impl Visit for Collect<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.to_string(), "i64");
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.to_string(), "u64");
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.to_string(), "bool");
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_string(), "str");
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}"), "debug");
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
        .filter(|(_, f)| f.get("erp_tools.run_id").is_some_and(|r| r == &run))
        .cloned()
        .collect()
}

/// The fields of every span called `name` whose fields satisfy `pred`.
fn spans_named(name: &str, pred: impl Fn(&Fields) -> bool) -> Vec<Fields> {
    capture()
        .spans
        .lock()
        .unwrap()
        .values()
        .filter(|(n, f)| n == name && pred(f))
        .map(|(_, f)| f.clone())
        .collect()
}

/// The model turns (`gen_ai.chat` spans) that reported `input_tokens`.
fn turns_reporting(input_tokens: u64) -> Vec<Fields> {
    let tokens = input_tokens.to_string();
    spans_named("gen_ai.chat", |f| {
        f.get("gen_ai.usage.input_tokens")
            .is_some_and(|t| *t == tokens)
    })
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
    // Failed calls (`isError: true`) are errors as the MCP conventions say: the status
    // Error, `error.type` tool_error, the finer kind beside it; successes carry neither.
    for (_, fields) in &spans[..2] {
        for absent in ["error.type", "otel.status_code", "erp_tools.error.kind"] {
            assert!(!fields.contains_key(absent), "{absent}: {fields:?}");
        }
    }
    for ((_, fields), kind) in spans[2..].iter().zip(["denied", "invalid_arguments"]) {
        assert_eq!(fields["error.type"], "tool_error");
        assert_eq!(fields["otel.status_code"], "error");
        assert_eq!(fields["erp_tools.error.kind"], kind);
        assert_eq!(fields["otel.status_description"], kind);
        assert!(
            !fields.contains_key("rpc.response.status_code"),
            "{fields:?}"
        );
    }
    // Arguments never reach the span.
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
        assert_eq!(fields["jsonrpc.request.id"], *fields["gen_ai.tool.call.id"]);
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

/// `agent` run as the buyer in `run`, with `model`.
async fn run_scripted(agent: &Agent, model: &mut ScriptedModel, run: &str) -> RunOutcome {
    let request = RunRequest::new("Draft the order").run_id(run);
    agent.run_with(&BUYER.shared(), model, request).await
}

/// The agent loop's calls run in the call's span too, beside its model turns' `chat`
/// spans; a failed model call ends its turn's span and the run's in an error.
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
    let outcome = run_scripted(&agent, &mut model, &run).await;
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
    let turns = turns_reporting(1234);
    assert!(turns.len() >= 2, "two turns recorded");
    for turn in &turns {
        // Integers as the GenAI conventions define them, exported as OTLP `int`s.
        assert_eq!(turn["gen_ai.usage.input_tokens"].kind, "i64");
        assert_eq!(turn["gen_ai.usage.output_tokens"].kind, "i64");
        assert!(!turn.contains_key("otel.status_code"), "{turn:?}");
    }
    let (_, run_span) = &spans[0];
    assert_eq!(run_span["erp_tools.run.status"], "done");
    assert!(!run_span.contains_key("otel.status_code"), "{run_span:?}");

    // A model call that fails ends its `chat` span in an error, and the run it aborts
    // ends its `invoke_agent` span in one too.
    let failed_run = new_run();
    // A script with no action: asking it is a model error. Its turn is told apart from
    // the other backend's by the tokens it reports.
    static TURNS: AtomicU64 = AtomicU64::new(17);
    let tokens = TURNS.fetch_add(1, Ordering::Relaxed);
    let mut model = ScriptedModel::new([]).usage_per_call(TokenUsage::new(tokens, 0));
    let outcome = run_scripted(&agent, &mut model, &failed_run).await;
    assert_eq!(outcome.status.as_str(), "aborted", "{:?}", outcome.status);

    let spans = spans_of_run(&failed_run);
    let (name, run_span) = &spans[0];
    assert_eq!(name, "erp_tools.agent_run");
    assert_eq!(run_span["erp_tools.run.status"], "aborted");
    assert_eq!(run_span["error.type"], "aborted");
    assert_eq!(run_span["otel.status_code"], "error");
    let failed_turns = turns_reporting(tokens);
    assert_eq!(
        failed_turns.len(),
        1,
        "one turn of this run: {failed_turns:?}"
    );
    let turn = &failed_turns[0];
    assert_eq!(turn["error.type"], "model_error");
    assert_eq!(turn["otel.status_code"], "error");
    assert_eq!(turn["otel.status_description"], "the model failed");
}
on_both_backends!(
    agent_calls_run_in_execute_tool_spans,
    crate::agent_calls_have_the_span
);

/// A protocol error (an unknown tool, JSON-RPC `-32602`) is an error named by its code;
/// the unknown tool's client-supplied name names no span (`_unknown`, as in the metrics);
/// over HTTP the request's span carries the integer status code.
async fn protocol_errors_carry_their_code(t: &TestDb) {
    capture();
    let run = new_run();
    let server = HttpServer::on(t).await;
    let client = server
        .client(&server.token(&BUYER.in_run(&run)), &SESSIONS, None)
        .await;
    let unknown = client
        .call_tool(erp_tools_tests::mcp::call(
            "purchasing_no_such_tool",
            json!({}),
        ))
        .await;
    assert!(unknown.is_err(), "a protocol error: {unknown:?}");
    client.cancel().await.unwrap();

    let spans = spans_of_run(&run);
    let (_, call) = spans
        .iter()
        .find(|(_, f)| f.get("gen_ai.tool.name").is_some_and(|n| n == &"_unknown"))
        .expect("the unknown tool's call span, named `_unknown` as in the metrics");
    assert_eq!(call["otel.name"], "tools/call _unknown");
    for (name, fields) in &spans {
        assert!(
            !name.contains("no_such_tool") && fields.values().all(|v| !v.contains("no_such_tool")),
            "a client-supplied tool name reached a span: {name} {fields:?}"
        );
    }
    assert_eq!(call["erp_tools.outcome"], "denied");
    assert_eq!(call["error.type"], "-32602");
    assert_eq!(call["rpc.response.status_code"], "-32602");
    assert_eq!(call["erp_tools.error.kind"], "unknown_tool");
    assert_eq!(call["otel.status_code"], "error");

    // The answered requests' spans (the capture is shared with the other backend's test,
    // whose requests may still be in flight, without a status yet).
    let edges = spans_named("erp_tools.http", |f| {
        f.contains_key("http.response.status_code")
    });
    assert!(!edges.is_empty(), "the HTTP requests' spans");
    for edge in &edges {
        let status = &edge["http.response.status_code"];
        assert_eq!(
            status.kind, "i64",
            "an integer, as the HTTP conventions say: {edge:?}"
        );
        // A 4xx is the client's: the server span's status is left unset.
        if status.parse::<u16>().expect("a status code") < 500 {
            assert!(!edge.contains_key("otel.status_code"), "{edge:?}");
        }
    }
}
on_both_backends!(
    protocol_errors_are_named_by_their_json_rpc_code,
    crate::protocol_errors_carry_their_code
);
