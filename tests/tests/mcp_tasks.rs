//! Tool calls run as MCP tasks (SEP-2663), held in the database: `tools/call` answers
//! with a task at once; any replica (another `Database` on the same database) answers
//! `tasks/get`, `tasks/update` and `tasks/cancel`; a restart forgets no task; a task left
//! `working` by a dead replica is failed with the reason; only the principal who started
//! a task sees it; a caller without the tool's scope is refused at `tools/call`, no task
//! started; cancellation reaches the handler; expired tasks are deleted. Every
//! scenario runs on SQLite and on PostgreSQL.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::sqlx;
use erp_tools_core::{Database, Principal, TaskSupport, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::Declaring;
use erp_tools_tests::on_both_backends;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ErrorCode,
    GetTaskParams, InputResponses, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RunningService, ServiceError};
use serde_json::{Value, json};

/// Labels of the report runs whose handler saw the cancellation.
static SAW_CANCEL: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn saw_cancel(label: &str) -> bool {
    SAW_CANCEL
        .lock()
        .unwrap()
        .as_ref()
        .is_some_and(|s| s.contains(label))
}

#[tool_args]
struct CountArgs {
    /// A name for this run, e.g. r-1
    label: String,
    /// How many steps of 50 ms, 0 to 400
    #[erp(min = 0, max = 400)]
    steps: i64,
}

#[tool_output]
struct Counted {
    /// The run's label
    label: String,
    /// Steps done
    steps: i64,
}

/// Count through the steps slowly, reporting progress (a stand-in for a long report).
#[erp_tool(module = "reports", tier = "read", scopes = ["reports:read"])]
async fn count_slowly(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: CountArgs,
) -> Result<Counted, ToolError> {
    for step in 0..args.steps {
        if ctx.is_cancelled() {
            SAW_CANCEL
                .lock()
                .unwrap()
                .get_or_insert_with(HashSet::new)
                .insert(args.label.clone());
            return Err(ToolError::rejected("the count was cancelled"));
        }
        ctx.progress(step as f64, Some(args.steps as f64), "counting");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(Counted {
        label: args.label,
        steps: args.steps,
    })
}

#[tool_args]
struct PickArgs {
    /// A name for this run, e.g. r-1
    label: String,
}

/// Ask which warehouse to count, then count it (a question mid-way).
#[erp_tool(module = "reports", tier = "read", scopes = ["reports:read"])]
async fn pick_warehouse(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: PickArgs,
) -> Result<Counted, ToolError> {
    match ctx.input("warehouse") {
        Some(w) => Ok(Counted {
            label: format!("{}:{w}", args.label),
            steps: 1,
        }),
        None => Err(ToolError::needs_input(
            "warehouse",
            "Which warehouse?",
            ["WH-SBY", "WH-JKT"],
        )),
    }
}

/// Count at once; a task only when the client can take one.
#[erp_tool(module = "reports", tier = "read", scopes = ["reports:read"])]
async fn count_now(_ctx: &ToolContext, _db: &ReadDb) -> Result<Counted, ToolError> {
    Ok(Counted {
        label: "now".into(),
        steps: 0,
    })
}

/// The backend's name, to keep the two backends' labels apart.
fn backend(t: &TestDb) -> String {
    format!("{:?}", t.backend())
}

fn runtime(db: &Database) -> ToolRuntime {
    let registry = ToolRegistry::builder()
        .module("reports", "Stock reports. Read only: cannot change stock.")
        .tools(tools![count_slowly, pick_warehouse, count_now])
        .task::<count_slowly>(TaskSupport::Required)
        .task::<pick_warehouse>(TaskSupport::Required)
        .task::<count_now>(TaskSupport::Optional)
        .build()
        .unwrap();
    ToolRuntime::new(Arc::new(registry), db.clone())
}

fn clerk(user: &str) -> Principal {
    Principal::builder(user, 1, "SBY-01")
        .scopes(["reports:read"])
        .build()
}

type Client = RunningService<RoleClient, Declaring>;

/// A 2026-07-28 client of a server on `db` acting for `user`, declaring the tasks
/// extension when `tasks`.
async fn client(db: &Database, user: &str, tasks: bool) -> Client {
    client_of(
        ErpMcpServer::with_principal(runtime(db), clerk(user)),
        tasks,
    )
    .await
}

async fn client_of(server: ErpMcpServer, tasks: bool) -> Client {
    let capabilities = if tasks {
        ClientCapabilities::builder()
            .enable_tasks()
            .enable_elicitation()
            .build()
    } else {
        ClientCapabilities::default()
    };
    erp_tools_tests::mcp::client_2026(server, capabilities).await
}

fn call(tool: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string())
        .with_arguments(arguments.as_object().unwrap().clone())
}

/// Starts a task; its id.
async fn start(client: &Client, tool: &str, arguments: Value) -> String {
    match client.call_tool_once(call(tool, arguments)).await.unwrap() {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert!(created.task.ttl_ms.is_some_and(|t| t > 0));
            assert!(created.task.poll_interval_ms.is_some());
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn get(client: &Client, id: &str) -> rmcp::model::GetTaskResult {
    client.get_task(GetTaskParams::new(id)).await.unwrap()
}

/// Polls until the task leaves `working` (at most 20 s).
async fn settled(client: &Client, id: &str) -> rmcp::model::GetTaskResult {
    for _ in 0..400 {
        let got = get(client, id).await;
        if got.task.status() != TaskStatus::Working {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} still working after 20 s");
}

fn result_of(got: &rmcp::model::GetTaskResult) -> Value {
    match &got.task.payload {
        TaskPayload::Completed { result } => Value::Object(result.clone()),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

/// The JSON-RPC error of a refused request.
fn refused<T: std::fmt::Debug>(answered: Result<T, ServiceError>) -> rmcp::ErrorData {
    match answered {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The outcomes of audit `rows`, in order.
fn outcomes(rows: &[(String, String)]) -> Vec<&str> {
    rows.iter().map(|(o, _)| o.as_str()).collect()
}

/// Starts a count of 400 slow steps labelled `label`, long enough to cancel or cut.
async fn start_long_count(client: &Client, label: &str) -> String {
    let arguments = json!({"label": label, "steps": 400});
    start(client, "reports_count_slowly", arguments).await
}

/// Whether the handler of the count labelled `label` saw its cancellation within 2 s.
async fn handler_saw_cancel(label: &str) -> bool {
    for _ in 0..100 {
        if saw_cancel(label) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// (outcome, tool_call_id) of every audit row about `tool`.
async fn audit_rows(db: &Database, tool: &str) -> Vec<(String, String)> {
    db.audit_log(None)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.tool_name.as_deref() == Some(tool))
        .map(|r| (r.outcome, r.tool_call_id.unwrap_or_default()))
        .collect()
}

async fn completes_with_progress_and_is_audited(t: &TestDb) {
    let client = client(&t.db, "u-1", true).await;
    let id = start(
        &client,
        "reports_count_slowly",
        json!({"label": "p-1", "steps": 20}),
    )
    .await;
    // While it runs: working, with the handler's latest progress as the status message.
    let mut seen = None;
    for _ in 0..100 {
        let got = get(&client, &id).await;
        if let Some(message) = got.task.task.status_message.clone() {
            seen = Some(message);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = seen.expect("a status message while the task runs");
    assert!(
        seen.starts_with("counting (") && seen.ends_with("/20)"),
        "{seen}"
    );
    let done = settled(&client, &id).await;
    let result = result_of(&done);
    assert_eq!(
        result["structuredContent"],
        json!({"label": "p-1", "steps": 20})
    );
    assert_eq!(result["isError"], json!(false));
    assert!(
        done.task.task.poll_interval_ms.is_none(),
        "no polling after the end"
    );
    // Audited: the task's creation, the call itself (attempt, then ok) and its end, all
    // under the task id.
    let rows = audit_rows(&t.db, "reports_count_slowly").await;
    assert_eq!(
        outcomes(&rows),
        ["task_created", "ok", "task_completed"],
        "{rows:?}"
    );
    assert!(rows.iter().all(|(_, call)| *call == id), "{rows:?}");
}
on_both_backends!(completes_with_progress_and_is_audited);

async fn cancel_reaches_the_handler(t: &TestDb) {
    let client = client(&t.db, "u-1", true).await;
    let label = format!("c-{}", backend(t));
    let id = start_long_count(&client, &label).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    // Cancelled at once, whatever the handler does next.
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Cancelled);
    assert!(
        handler_saw_cancel(&label).await,
        "the handler saw the cancellation"
    );
    // The handler's own end does not overwrite it; cancelling again is acknowledged.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Cancelled);
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let rows = audit_rows(&t.db, "reports_count_slowly").await;
    assert_eq!(
        outcomes(&rows),
        ["task_created", "tool_error", "task_cancelled"],
        "{rows:?}"
    );
}
on_both_backends!(cancel_reaches_the_handler);

async fn another_replica_answers_get_update_and_cancel(t: &TestDb) {
    // Two servers, each with a `Database` (a replica, a lease row) of its own.
    let first = client(&t.db, "u-1", true).await;
    let other_db = t.open_again().await;
    assert_ne!(t.db.replica_id(), other_db.replica_id());
    let second = client(&other_db, "u-1", true).await;

    let id = start(
        &first,
        "reports_count_slowly",
        json!({"label": "r-1", "steps": 4}),
    )
    .await;
    let done = settled(&second, &id).await;
    assert_eq!(result_of(&done)["structuredContent"]["label"], "r-1");

    // A question asked on one replica, answered on the other.
    let id = start(&first, "reports_pick_warehouse", json!({"label": "q-1"})).await;
    let asked = settled(&second, &id).await;
    let TaskPayload::InputRequired { input_requests } = &asked.task.payload else {
        panic!("expected input_required, got {asked:?}");
    };
    let form = serde_json::to_value(&input_requests["warehouse"]).unwrap();
    assert_eq!(form["params"]["message"], "Which warehouse?", "{form}");
    assert_eq!(
        asked.task.task.status_message.as_deref(),
        Some("waiting for an answer: Which warehouse?")
    );
    let mut answers = InputResponses::new();
    answers.insert("unknown".into(), json!({"ignored": true}));
    second
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    assert_eq!(
        get(&first, &id).await.task.status(),
        TaskStatus::InputRequired
    );
    let mut answers = InputResponses::new();
    answers.insert(
        "warehouse".into(),
        json!({"action": "accept", "content": {"warehouse": "WH-JKT"}}),
    );
    second
        .update_task(UpdateTaskParams::new(&id, answers))
        .await
        .unwrap();
    let done = settled(&first, &id).await;
    assert_eq!(result_of(&done)["structuredContent"]["label"], "q-1:WH-JKT");

    // A cancel sent to the other replica reaches the handler on the first.
    let label = format!("x-{}", backend(t));
    let id = start_long_count(&first, &label).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    second
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    assert!(
        handler_saw_cancel(&label).await,
        "the handler on the first replica saw it"
    );
    other_db.close().await;
}
on_both_backends!(another_replica_answers_get_update_and_cancel);

async fn only_the_principal_who_started_it_sees_it(t: &TestDb) {
    let owner = client(&t.db, "u-1", true).await;
    let stranger = client(&t.db, "u-2", true).await;
    let id = start(
        &owner,
        "reports_count_slowly",
        json!({"label": "o-1", "steps": 10}),
    )
    .await;
    let unknown = refused(stranger.get_task(GetTaskParams::new(&id)).await);
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert!(unknown.message.contains("no task"), "{}", unknown.message);
    let not_mine = refused(stranger.cancel_task(CancelTaskParams::new(&id)).await);
    assert_eq!(not_mine.code, ErrorCode::INVALID_PARAMS);
    let not_mine = refused(
        stranger
            .update_task(UpdateTaskParams::new(&id, InputResponses::new()))
            .await,
    );
    assert_eq!(not_mine.code, ErrorCode::INVALID_PARAMS);
    // The same answer as for an id that never existed: nothing is revealed.
    let never = refused(stranger.get_task(GetTaskParams::new("0123abcd")).await);
    assert_eq!(never.code, ErrorCode::INVALID_PARAMS);
    // The owner's task ran on, untouched.
    assert_eq!(
        settled(&owner, &id).await.task.status(),
        TaskStatus::Completed
    );
    // Another branch of the same user is another principal.
    let other_branch = Principal::builder("u-1", 2, "JKT-01")
        .scopes(["reports:read"])
        .build();
    let other = client_of(
        ErpMcpServer::with_principal(runtime(&t.db), other_branch),
        true,
    )
    .await;
    refused(other.get_task(GetTaskParams::new(&id)).await);
}
on_both_backends!(only_the_principal_who_started_it_sees_it);

async fn capability_decides_task_or_answer(t: &TestDb) {
    let plain = client(&t.db, "u-1", false).await;
    // Optional: answered in the request for a client without the extension.
    match plain
        .call_tool_once(call("reports_count_now", json!({})))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(r) => assert_eq!(r.is_error, Some(false)),
        other => panic!("expected a result, got {other:?}"),
    }
    // Required: -32021 naming the extension.
    let e = refused(
        plain
            .call_tool_once(call(
                "reports_count_slowly",
                json!({"label": "n", "steps": 1}),
            ))
            .await,
    );
    assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    let data = e.data.unwrap();
    assert!(
        data["requiredCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{data}"
    );
    // tasks/* from such a client: -32021 as well.
    let e = refused(plain.get_task(GetTaskParams::new("x")).await);
    assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    // Optional, with the extension: a task.
    let tasks = client(&t.db, "u-1", true).await;
    let id = start(&tasks, "reports_count_now", json!({})).await;
    assert_eq!(
        settled(&tasks, &id).await.task.status(),
        TaskStatus::Completed
    );
}
on_both_backends!(capability_decides_task_or_answer);

/// A caller without the tool's scope is refused at `tools/call` as a plain call is (a
/// denied result, audited once), whether or not its client takes tasks: no task is
/// started, nothing "completes" with the denial later.
async fn a_task_the_caller_may_not_run_is_refused_at_the_call(t: &TestDb) {
    let outsider = || {
        Principal::builder("u-9", 1, "SBY-01")
            .scopes(["purchasing:read"])
            .build()
    };
    let mut answers = Vec::new();
    for tasks in [true, false] {
        let client = client_of(
            ErpMcpServer::with_principal(runtime(&t.db), outsider()),
            tasks,
        )
        .await;
        let arguments = json!({"label": "denied", "steps": 1});
        match client
            .call_tool_once(call("reports_count_slowly", arguments))
            .await
            .unwrap()
        {
            CallToolResponse::Complete(r) => {
                assert_eq!(r.is_error, Some(true), "{r:?}");
                answers.push(erp_tools_tests::mcp::text_of(&r));
            }
            other => panic!("expected the denial as the call's answer, got {other:?}"),
        }
    }
    assert!(answers[0].contains("reports:read"), "{}", answers[0]);
    assert_eq!(
        answers[0], answers[1],
        "the same denial with or without tasks"
    );
    let started: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM erp_tasks")
        .fetch_one(t.db.pool())
        .await
        .unwrap();
    assert_eq!(started, 0, "no task was started");
    t.db.flush_audit().await.unwrap();
    let rows = audit_rows(&t.db, "reports_count_slowly").await;
    assert_eq!(outcomes(&rows), ["denied", "denied"], "{rows:?}");
}
on_both_backends!(a_task_the_caller_may_not_run_is_refused_at_the_call);

async fn a_restart_forgets_no_task_and_a_stopped_replicas_task_is_taken_over(t: &TestDb) {
    // A finished task outlives its server and its database handle.
    let before = t.open_again().await;
    let first = client(&before, "u-1", true).await;
    let done = start(
        &first,
        "reports_count_slowly",
        json!({"label": "d-1", "steps": 2}),
    )
    .await;
    settled(&first, &done).await;
    // A running one is cut off: its process stops (the lease row goes with it).
    let cut = start(
        &first,
        "reports_count_slowly",
        json!({"label": "d-2", "steps": 20}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let dead = before.replica_id().to_string();
    before.close().await;
    drop(first);

    let after = client(&t.db, "u-1", true).await;
    let kept = get(&after, &done).await;
    assert_eq!(result_of(&kept)["structuredContent"]["label"], "d-1");
    // The next tasks/get takes it over: it runs again here, as its owner.
    let taken = get(&after, &cut).await;
    assert_eq!(taken.task.status(), TaskStatus::Working, "{taken:?}");
    let message = taken.task.task.status_message.clone().unwrap_or_default();
    assert!(
        message.contains(&dead) && message.contains("taken over by replica"),
        "{message}"
    );
    let finished = settled(&after, &cut).await;
    assert_eq!(result_of(&finished)["structuredContent"]["label"], "d-2");
    let (by, times): (Option<String>, i64) =
        sqlx::query_as("SELECT taken_over_by, takeovers FROM erp_tasks WHERE id = $1")
            .bind(cut.clone())
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    assert_eq!((by.as_deref(), times), (Some(t.db.replica_id()), 1));
    let rows = audit_rows(&t.db, "reports_count_slowly").await;
    for event in ["task_taken_over", "task_completed"] {
        assert!(rows.contains(&(event.to_string(), cut.clone())), "{rows:?}");
    }

    // A replica killed (its lease row left behind, never renewed) is found dead once its
    // lease has expired: here a row whose heartbeat is a minute old on a 1 s lease. Its
    // task, of a tool declared not safe to run again, is failed with the reason.
    let killed = "killed-replica";
    let old = (chrono::Utc::now() - chrono::Duration::seconds(60))
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    sqlx::query(
        "INSERT INTO erp_replicas (id, started_at, heartbeat_at, lease_ms) VALUES ($1, $2, $2, 1000)",
    )
    .bind(killed)
    .bind(old)
    .execute(t.db.pool())
    .await
    .unwrap();
    let registry = ToolRegistry::builder()
        .module("reports", "Stock reports. Read only: cannot change stock.")
        .tools(tools![count_slowly])
        .task::<count_slowly>(TaskSupport::Required)
        .no_rerun::<count_slowly>()
        .build()
        .unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    let once = client_of(ErpMcpServer::with_principal(runtime, clerk("u-1")), true).await;
    let label = format!("k-{}", backend(t));
    let id = start_long_count(&once, &label).await;
    sqlx::query("UPDATE erp_tasks SET replica_id = $1 WHERE id = $2")
        .bind(killed)
        .bind(id.clone())
        .execute(t.db.pool())
        .await
        .unwrap();
    let failed = get(&once, &id).await;
    let TaskPayload::Failed { error } = &failed.task.payload else {
        panic!("expected the stopped task failed, got {failed:?}");
    };
    assert_eq!(error["code"], json!(-32603));
    let why = error["message"].as_str().unwrap();
    assert!(
        why.contains(killed) && why.contains("not safe to run again"),
        "{why}"
    );
    let rows = audit_rows(&t.db, "reports_count_slowly").await;
    assert!(
        rows.contains(&("task_failed".to_string(), id.clone())),
        "{rows:?}"
    );
    // The replica that ran it (this one) sees it taken from it and stops the handler.
    assert!(handler_saw_cancel(&label).await, "the handler was stopped");
}
on_both_backends!(a_restart_forgets_no_task_and_a_stopped_replicas_task_is_taken_over);

async fn expired_tasks_are_deleted(t: &TestDb) {
    let server = ErpMcpServer::with_principal(runtime(&t.db), clerk("u-1"))
        .with_task_ttl(Duration::from_millis(300));
    let client = client_of(server, true).await;
    let id = start(&client, "reports_count_now", json!({})).await;
    settled(&client, &id).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let gone = refused(client.get_task(GetTaskParams::new(&id)).await);
    assert_eq!(gone.code, ErrorCode::INVALID_PARAMS);
    // The next task deletes the expired row.
    start(&client, "reports_count_now", json!({})).await;
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM erp_tasks WHERE id = $1")
        .bind(id)
        .fetch_one(t.db.pool())
        .await
        .unwrap();
    assert_eq!(left, 0);
}
on_both_backends!(expired_tasks_are_deleted);

/// A 2026-07-28 client declaring the tasks extension that keeps the task notifications
/// it gets.
#[derive(Clone, Default)]
struct Watching {
    seen: Arc<Mutex<Vec<rmcp::model::TaskStatusNotificationParams>>>,
}

impl rmcp::ClientHandler for Watching {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.capabilities = ClientCapabilities::builder().enable_tasks().build();
        info
    }

    async fn on_task_status(
        &self,
        params: rmcp::model::TaskStatusNotificationParams,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(params);
    }
}

impl Watching {
    /// The statuses notified for task `id`, with their messages, once one is terminal
    /// (at most 10 s).
    async fn until_ended(&self, id: &str) -> Vec<(TaskStatus, Option<String>)> {
        for _ in 0..200 {
            let seen: Vec<_> = self
                .seen
                .lock()
                .unwrap()
                .iter()
                .filter(|n| n.task.task.task_id == id)
                .map(|n| (n.task.status(), n.task.task.status_message.clone()))
                .collect();
            if seen.iter().any(|(s, _)| s.is_terminal()) {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no terminal notification for task {id}");
    }
}

async fn status_changes_are_notified_to_a_client_that_asked(t: &TestDb) {
    let watching = Watching::default();
    let server = ErpMcpServer::with_principal(runtime(&t.db), clerk("u-1"));
    let caps = ClientCapabilities::builder().enable_tasks().build();
    let client = erp_tools_tests::mcp::pair_directly(
        server,
        watching.clone(),
        rmcp::model::ProtocolVersion::V_2026_07_28,
        caps,
    )
    .await;
    let request = call("reports_count_slowly", json!({"label": "n-1", "steps": 10}));
    let CallToolResponse::Task(created) = client.call_tool_once(request).await.unwrap() else {
        panic!("expected a task");
    };
    let id = created.task.task_id;
    let seen = watching.until_ended(&id).await;
    assert_eq!(
        seen.first().map(|s| s.0),
        Some(TaskStatus::Working),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|(s, m)| *s == TaskStatus::Working
            && m.as_deref().is_some_and(|m| m.starts_with("counting ("))),
        "progress is notified: {seen:?}"
    );
    assert_eq!(
        seen.last().map(|s| s.0),
        Some(TaskStatus::Completed),
        "{seen:?}"
    );
    // The last notification is the task as tasks/get shows it.
    let last = watching.seen.lock().unwrap().last().cloned().unwrap();
    let got = client.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(last.task.payload, got.task.payload);

    // A question: input_required, then the answer's run to its end.
    let request = call("reports_pick_warehouse", json!({"label": "n-2"}));
    let CallToolResponse::Task(created) = client.call_tool_once(request).await.unwrap() else {
        panic!("expected a task");
    };
    let id = created.task.task_id;
    let asked = || {
        let seen = watching.seen.lock().unwrap();
        seen.iter()
            .any(|n| n.task.task.task_id == id && n.task.status() == TaskStatus::InputRequired)
    };
    for _ in 0..200 {
        if asked() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = client.get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::InputRequired);
    let asked = asked();
    assert!(asked, "input_required is notified");
}
on_both_backends!(status_changes_are_notified_to_a_client_that_asked);
