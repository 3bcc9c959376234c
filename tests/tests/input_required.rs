//! Asking instead of guessing: a handler answers "needs input" with a question and the
//! allowed answers. Over MCP 2026-07-28 that is an `input_required` result with an
//! elicitation request and a sealed `requestState`; a 2025-11-25 client that declared
//! elicitation is asked with `elicitation/create`; any other client gets a tool error
//! with the question. The agent loop stops with `awaiting_input` and resumes with the
//! answer. Nothing is written before the answer; forged, altered, replayed or misbound
//! states are refused and audited.

use std::sync::Arc;

use erp_tools_core::agent::{
    Agent, AgentEventKind, ModelAction, PausedRun, Policy, ResumeError, RunStatus, ScriptedModel,
};
use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::{Database, Principal, ToolRuntime};
use erp_tools_tests::db::TestDb;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, InputResponses, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

#[tool_args]
struct OrderArgs {
    /// Item code, e.g. BRG-0042
    item_code: String,
    /// Quantity, more than 0
    qty: Decimal,
    /// Your own id for this order within the run. Reuse it when retrying.
    client_ref: String,
}

#[tool_output]
struct Ordered {
    /// Draft number
    number: String,
    /// The vendor the person chose
    vendor_code: String,
}

/// Create a DRAFT order of an item. Two vendors sell every item: a person picks one.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn order_item(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: OrderArgs,
) -> Result<Ordered, ToolError> {
    let Some(vendor) = ctx.input("vendor") else {
        return Err(ToolError::needs_input(
            "vendor",
            format!(
                "Two vendors sell {}: V-00001 (Sinar Jaya) or V-00002 (Maju). Which one?",
                args.item_code
            ),
            ["V-00001", "V-00002"],
        ));
    };
    let number = format!("DO-{}", args.client_ref);
    let id: i64 = erp_tools_core::sqlx::query_scalar(
        "INSERT INTO asked_orders (number, vendor_code, qty) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(&number)
    .bind(vendor)
    .bind(args.qty.to_string())
    .fetch_one(tx.conn())
    .await
    .map_err(ToolError::internal)?;
    tx.record_document(DocumentRef {
        doc_type: "order".into(),
        id: id.into(),
        number: number.clone(),
    });
    Ok(Ordered {
        number,
        vendor_code: vendor.to_string(),
    })
}

const TOOL: &str = "purchasing_order_item";

async fn runtime(db: &Database) -> ToolRuntime {
    db.apply_migrations(&[(
        "test/asked_orders",
        &erp_tools_tests::db::ddl(
            db.backend(),
            "CREATE TABLE asked_orders (id {id}, number TEXT NOT NULL, vendor_code TEXT NOT \
             NULL, qty TEXT NOT NULL)",
        ),
    )])
    .await
    .unwrap();
    let registry = ToolRegistry::builder()
        .module("purchasing", "Order drafts. Cannot approve or send orders.")
        .tools(tools![order_item])
        .build()
        .unwrap();
    ToolRuntime::new(Arc::new(registry), db.clone())
}

async fn orders(db: &Database) -> Vec<(String, String)> {
    erp_tools_core::sqlx::query_as("SELECT number, vendor_code FROM asked_orders ORDER BY id")
        .fetch_all(db.pool())
        .await
        .unwrap()
}

fn buyer() -> Principal {
    Principal::builder("u-7", 1, "SBY-01")
        .scopes(["purchasing:draft"])
        .build()
}

fn args(client_ref: &str) -> Value {
    json!({"item_code": "BRG-0042", "qty": "12", "client_ref": client_ref})
}

fn call(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(TOOL).with_arguments(arguments.as_object().unwrap().clone())
}

/// A client that answers every elicitation with `answer` in the form's `vendor` field (or
/// declines with `None`).
#[derive(Clone)]
struct Person {
    answer: Option<&'static str>,
    /// Whether the client declares the elicitation capability (on every 2026-07-28
    /// request's `_meta`, and at initialize).
    elicits: bool,
}

impl ClientHandler for Person {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        if self.elicits {
            info.capabilities = ClientCapabilities::builder().enable_elicitation().build();
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = &request else {
            return Err(ErrorData::invalid_params("a form was expected", None));
        };
        assert!(message.contains("Which one?"), "{message}");
        Ok(match self.answer {
            Some(a) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"vendor": a}))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// A client and server over an in-process pipe, the client speaking `version`, declaring
/// elicitation when `elicits` and answering with `answer`.
async fn pair(
    server: ErpMcpServer,
    version: ProtocolVersion,
    elicits: bool,
    answer: Option<&'static str>,
) -> RunningService<RoleClient, Person> {
    let person = Person { answer, elicits };
    let capabilities = if elicits {
        ClientCapabilities::builder().enable_elicitation().build()
    } else {
        ClientCapabilities::default()
    };
    erp_tools_tests::mcp::pair_directly(server, person, version, capabilities).await
}

/// The message of a call refused for its `requestState`: a JSON-RPC invalid-params error
/// (the spec's answer to state that fails its integrity check), not a tool result.
fn refused_state(
    answered: Result<rmcp::model::CallToolResult, rmcp::service::ServiceError>,
) -> String {
    match answered {
        Err(rmcp::service::ServiceError::McpError(e)) => {
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{e:?}");
            e.message.to_string()
        }
        other => panic!("expected a JSON-RPC error for the request state, got {other:?}"),
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

async fn outcomes(db: &Database) -> Vec<String> {
    db.audit_log(None)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.outcome)
        .collect()
}

/// The first round of a 2026-07-28 call: the `input_required` result.
async fn ask(
    client: &RunningService<RoleClient, Person>,
    arguments: Value,
) -> (String, rmcp::model::InputRequests) {
    match client.call_tool_once(call(arguments)).await.unwrap() {
        CallToolResponse::InputRequired(r) => (r.request_state.unwrap(), r.input_requests.unwrap()),
        other => panic!("expected input_required, got {other:?}"),
    }
}

fn answering(state: &str, answer: &str, arguments: Value) -> CallToolRequestParams {
    let mut responses = InputResponses::new();
    responses.insert(
        "vendor".into(),
        json!({"action": "accept", "content": {"vendor": answer}}),
    );
    call(arguments)
        .with_input_responses(responses)
        .with_request_state(state.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_2026_asks_with_input_required_and_the_repeated_call_delivers_the_answer() {
    let t = TestDb::sqlite().await;
    let server = ErpMcpServer::with_principal(runtime(&t.db).await, buyer());
    let client = pair(server, ProtocolVersion::V_2026_07_28, true, Some("V-00002")).await;

    // One round by hand: the question as an elicitation form, nothing written yet.
    let (state, requests) = ask(&client, args("a-1")).await;
    let InputRequest::Elicitation(elicit) = &requests["vendor"] else {
        panic!("an elicitation request: {requests:?}");
    };
    let form = serde_json::to_value(&elicit.params).unwrap();
    assert_eq!(form["mode"], "form");
    assert!(
        form["message"]
            .as_str()
            .unwrap()
            .contains("V-00001 (Sinar Jaya) or V-00002")
    );
    // The form's one field is named after the question's key.
    assert_eq!(
        form["requestedSchema"]["properties"]["vendor"]["enum"],
        json!(["V-00001", "V-00002"])
    );
    assert_eq!(form["requestedSchema"]["required"], json!(["vendor"]));
    assert!(
        orders(&t.db).await.is_empty(),
        "nothing is written before the answer"
    );

    let done = client
        .call_tool(answering(&state, "V-00001", args("a-1")))
        .await
        .unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert_eq!(
        orders(&t.db).await,
        [("DO-a-1".to_string(), "V-00001".to_string())]
    );

    // rmcp's client drives the rounds itself through its handler (the person says V-00002).
    let auto = client.call_tool(call(args("a-2"))).await.unwrap();
    assert_eq!(auto.structured_content.unwrap()["vendor_code"], "V-00002");
    assert_eq!(orders(&t.db).await.len(), 2);
    assert_eq!(
        outcomes(&t.db).await,
        ["tool_error", "ok", "tool_error", "ok"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_replayed_and_misbound_states_are_refused_and_audited() {
    let t = TestDb::sqlite().await;
    let rt = runtime(&t.db).await;
    let server = ErpMcpServer::with_principal(rt.clone(), buyer());
    let client = pair(server, ProtocolVersion::V_2026_07_28, true, None).await;

    let (state, _) = ask(&client, args("t-1")).await;
    // Altered: one character of the tag changed.
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let refused = refused_state(
        client
            .call_tool(answering(&tampered, "V-00001", args("t-1")))
            .await,
    );
    assert!(refused.contains("The answer was not accepted"), "{refused}");
    // Bound to the arguments: the state of t-1 does not answer a call with other arguments.
    refused_state(
        client
            .call_tool(answering(&state, "V-00001", args("t-2")))
            .await,
    );
    // An answer outside the choices is refused (and uses the state up).
    let (state2, _) = ask(&client, args("t-3")).await;
    let wrong = client
        .call_tool(answering(&state2, "V-99999", args("t-3")))
        .await
        .unwrap();
    assert!(
        text(&wrong).contains("No allowed answer was given"),
        "{}",
        text(&wrong)
    );
    assert!(orders(&t.db).await.is_empty());

    // The genuine state works once; replayed, it is refused and nothing is written twice.
    let ok = client
        .call_tool(answering(&state, "V-00001", args("t-1")))
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    let replay = refused_state(
        client
            .call_tool(answering(&state, "V-00002", args("t-1")))
            .await,
    );
    assert!(replay.contains("already used"), "{replay}");
    assert_eq!(
        orders(&t.db).await,
        [("DO-t-1".to_string(), "V-00001".to_string())]
    );

    // Another person cannot use the buyer's state.
    let other = Principal::builder("u-8", 1, "SBY-01")
        .scopes(["purchasing:draft"])
        .build();
    let other_client = pair(
        ErpMcpServer::with_principal(rt, other),
        ProtocolVersion::V_2026_07_28,
        true,
        None,
    )
    .await;
    let (state3, _) = ask(&client, args("t-4")).await;
    let stolen = refused_state(
        other_client
            .call_tool(answering(&state3, "V-00001", args("t-4")))
            .await,
    );
    assert!(stolen.contains("not accepted"), "{stolen}");

    let rows = t.db.audit_log(None).await.unwrap();
    let denied: Vec<_> = rows.iter().filter(|r| r.outcome == "denied").collect();
    assert_eq!(
        denied.len(),
        4,
        "tampered, misbound, replayed, another person's: {rows:?}"
    );
    assert!(
        denied
            .iter()
            .all(|r| r.message.as_deref().unwrap_or("").contains("not accepted"))
    );
    assert_eq!(orders(&t.db).await.len(), 1);
}

/// Two replicas (two servers with the same sealing key on one database): the state the
/// first one sealed is answered on the second, and a replay of it on the first is refused.
async fn a_state_is_accepted_once_across_replicas(t: TestDb) {
    const KEY: [u8; 32] = [42; 32];
    let replica = |db: &Database| {
        let db = db.clone();
        async move {
            ErpMcpServer::with_principal(runtime(&db).await, buyer())
                .with_request_state_key(KEY, std::time::Duration::from_secs(60))
                .unwrap()
        }
    };
    let first = pair(
        replica(&t.db).await,
        ProtocolVersion::V_2026_07_28,
        true,
        None,
    )
    .await;
    let second = pair(
        replica(&t.db).await,
        ProtocolVersion::V_2026_07_28,
        true,
        None,
    )
    .await;
    let (state, _) = ask(&first, args("r-1")).await;
    let done = second
        .call_tool(answering(&state, "V-00002", args("r-1")))
        .await
        .unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    let replay = refused_state(
        first
            .call_tool(answering(&state, "V-00001", args("r-1")))
            .await,
    );
    assert!(replay.contains("already used"), "{replay}");
    assert_eq!(
        orders(&t.db).await,
        [("DO-r-1".to_string(), "V-00002".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_is_accepted_once_across_replicas_sqlite() {
    a_state_is_accepted_once_across_replicas(TestDb::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_is_accepted_once_across_replicas_postgres() {
    if let Some(t) = TestDb::postgres().await {
        a_state_is_accepted_once_across_replicas(t).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_client_that_declared_elicitation_is_asked_by_the_server() {
    let t = TestDb::sqlite().await;
    let server = ErpMcpServer::with_principal(runtime(&t.db).await, buyer());
    let client = pair(server, ProtocolVersion::V_2025_11_25, true, Some("V-00002")).await;
    let done = client.call_tool(call(args("e-1"))).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert_eq!(
        orders(&t.db).await,
        [("DO-e-1".to_string(), "V-00002".to_string())]
    );

    let declining = pair(
        ErpMcpServer::with_principal(runtime(&t.db).await, buyer()),
        ProtocolVersion::V_2025_11_25,
        true,
        None,
    )
    .await;
    let declined = declining.call_tool(call(args("e-2"))).await.unwrap();
    assert_eq!(declined.is_error, Some(true));
    assert!(
        text(&declined).contains("No allowed answer was given"),
        "{}",
        text(&declined)
    );
    assert_eq!(orders(&t.db).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_cannot_be_asked_gets_the_question_and_the_choices_as_a_tool_error() {
    let t = TestDb::sqlite().await;
    let server = ErpMcpServer::with_principal(runtime(&t.db).await, buyer());
    let client = pair(server, ProtocolVersion::V_2025_11_25, false, None).await;
    let result = client.call_tool(call(args("n-1"))).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = text(&result);
    assert!(
        text.contains("V-00001 (Sinar Jaya) or V-00002 (Maju). Which one?"),
        "{text}"
    );
    assert!(
        text.contains("Allowed answers: V-00001, V-00002."),
        "{text}"
    );
    assert!(text.contains("Nothing was changed."), "{text}");
    let meta = result.meta.unwrap().0["erp-tools/error"].clone();
    assert_eq!(meta["error"], "needs_input");
    assert_eq!(meta["input"]["choices"], json!(["V-00001", "V-00002"]));
    assert!(orders(&t.db).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_without_elicitation_is_refused_naming_the_missing_capability() {
    let t = TestDb::sqlite().await;
    let server = ErpMcpServer::with_principal(runtime(&t.db).await, buyer());
    let client = pair(server, ProtocolVersion::V_2026_07_28, false, None).await;
    // The server must not send an elicitation request the client did not declare it can
    // answer: -32021, with the missing capability as a ClientCapabilities object.
    let refused = client.call_tool_once(call(args("c-1"))).await;
    let Err(rmcp::service::ServiceError::McpError(e)) = refused else {
        panic!("expected -32021, got {refused:?}");
    };
    assert_eq!(
        e.code,
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
    );
    let data = e.data.expect("the error names the capability");
    assert!(
        data["requiredCapabilities"]["elicitation"].is_object(),
        "{data}"
    );
    // What would have been asked travels with the error.
    assert_eq!(data["choices"], json!(["V-00001", "V-00002"]));
    assert!(e.message.contains("Which one?"), "{}", e.message);
    assert!(e.message.contains("nothing was changed"), "{}", e.message);
    assert!(orders(&t.db).await.is_empty(), "nothing is written");
    assert_eq!(outcomes(&t.db).await, ["tool_error"], "the call is audited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loop_stops_awaiting_input_and_resumes_with_the_answer() {
    let t = TestDb::sqlite().await;
    let agent = Agent::new(runtime(&t.db).await, Policy::new()).unwrap();
    let caller = Arc::new(buyer());
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(TOOL, args("g-1")),
        ModelAction::answer("Ordered from the vendor you chose."),
    ]);
    let out = agent.run(&caller, &mut model, "Order 12 BRG-0042").await;
    let RunStatus::AwaitingInput { input, action } = &out.status else {
        panic!("expected awaiting_input, got {:?}", out.status);
    };
    assert_eq!(out.status.as_str(), "awaiting_input");
    assert_eq!(input.choices, ["V-00001", "V-00002"]);
    assert_eq!(action.tool, TOOL);
    assert!(
        orders(&t.db).await.is_empty(),
        "nothing is written before the answer"
    );
    assert_eq!(
        out.audit
            .iter()
            .filter(|e| e.kind == AgentEventKind::AwaitingInput)
            .count(),
        1
    );

    // The paused run survives JSON (another process); a wrong answer or an approval is refused.
    let stored = serde_json::to_string(&out.paused().unwrap()).unwrap();
    let paused: PausedRun = serde_json::from_str(&stored).unwrap();
    let wrong = agent
        .answer(&caller, &mut model, paused.clone(), "V-77777")
        .await
        .unwrap_err();
    assert!(
        matches!(wrong, ResumeError::AnswerNotAllowed { .. }),
        "{wrong}"
    );
    let approval = paused.pending.approve("siti");
    let not_approval = agent
        .resume(&caller, &mut model, paused.clone(), approval)
        .await
        .unwrap_err();
    assert!(
        matches!(not_approval, ResumeError::WrongResume { .. }),
        "{not_approval}"
    );
    assert!(orders(&t.db).await.is_empty());

    let done = agent
        .answer(&caller, &mut model, paused, "V-00002")
        .await
        .unwrap();
    assert_eq!(done.answer(), Some("Ordered from the vendor you chose."));
    assert_eq!(
        orders(&t.db).await,
        [("DO-g-1".to_string(), "V-00002".to_string())]
    );
    let given: Vec<_> = done
        .audit
        .iter()
        .filter(|e| e.kind == AgentEventKind::InputGiven)
        .collect();
    assert_eq!(given.len(), 1);
    assert_eq!(
        given[0].detail.as_deref(),
        Some("answer to vendor: V-00002 (given by u-7)")
    );
    // The call has exactly one result in the history: the one after the answer.
    let results = done
        .history
        .iter()
        .filter(|m| m.as_tool_result().is_some())
        .count();
    assert_eq!(results, 1);
}
