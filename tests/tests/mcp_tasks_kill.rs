//! `kill -9` of the server process running a task: another server on the same PostgreSQL
//! database (a replica of its own) reports the task `failed`, with the reason, once the
//! killed replica's lease has expired; never `working` forever. The server killed is the
//! conformance fixture (a process of its own, its calls as tasks over streamable HTTP).

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::prelude::*;
use erp_tools_core::{Principal, TaskSupport, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::Declaring;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, GetTaskParams, ProtocolVersion,
    TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

/// The default replica lease the fixture runs with.
const LEASE: Duration = Duration::from_secs(15);

/// A task tool, so that this server offers the tasks extension and answers `tasks/get`.
#[erp_tool(module = "slow", name = "slow_compute", tier = "read", scopes = ["diagnostics:read"])]
async fn slow_compute(_ctx: &ToolContext, _db: &ReadDb) -> Result<u32, ToolError> {
    Ok(0)
}

/// The fixture's caller (its token is for this principal).
fn caller() -> Principal {
    Principal::builder("conformance", 1, "HQ")
        .scopes(["diagnostics:read"])
        .build()
}

fn tasks() -> ClientCapabilities {
    ClientCapabilities::builder().enable_tasks().build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_replicas_task_is_failed_by_another_within_the_lease() {
    let Some(t) = TestDb::postgres().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut fixture = tokio::process::Command::new(env!("CARGO_BIN_EXE_conformance_fixture"))
        .args(["--db", t.url(), "--addr", &format!("127.0.0.1:{port}")])
        .args(["--resource", &url, "--token-out"])
        .arg(&token_file)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the fixture");
    let mut token = String::new();
    for _ in 0..300 {
        token = std::fs::read_to_string(&token_file).unwrap_or_default();
        if !token.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!token.is_empty(), "the fixture wrote its token");

    // A client of the fixture starts a long task over HTTP.
    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(token);
    let mut remote = None;
    for _ in 0..100 {
        let transport = StreamableHttpClientTransport::from_config(config.clone());
        let host = Declaring {
            capabilities: tasks(),
        };
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        if let Ok(client) = host.serve_with_lifecycle(transport, lifecycle).await {
            remote = Some(client);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let remote = remote.expect("the fixture answers");
    let call = CallToolRequestParams::new("slow_compute").with_arguments(
        json!({"seconds": 600, "label": "killed"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let CallToolResponse::Task(created) = remote.call_tool_once(call).await.unwrap() else {
        panic!("expected a task");
    };
    let id = created.task.task_id;

    // Another server on the same database: a replica of its own.
    let registry = ToolRegistry::builder()
        .module(
            "slow",
            "A slow diagnostic job. Cannot read or change ERP data.",
        )
        .tools(tools![slow_compute])
        .task::<slow_compute>(TaskSupport::Optional)
        .build()
        .unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    let other =
        erp_tools_tests::mcp::client_2026(ErpMcpServer::with_principal(runtime, caller()), tasks())
            .await;
    // It sees the task run on the fixture, with its progress.
    let mut running = None;
    for _ in 0..100 {
        let got = other.get_task(GetTaskParams::new(&id)).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
        if got.task.task.status_message.is_some() {
            running = got.task.task.status_message;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(running.is_some_and(|m| m.starts_with("killed (")));

    fixture.start_kill().unwrap();
    let killed = Instant::now();
    fixture.wait().await.unwrap();
    drop(remote);

    let failed = loop {
        let got = other.get_task(GetTaskParams::new(&id)).await.unwrap();
        if got.task.status() != TaskStatus::Working {
            break got;
        }
        assert!(
            killed.elapsed() < LEASE + Duration::from_secs(10),
            "still working {:?} after the kill",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let taken_over = killed.elapsed();
    println!("a killed replica's task was failed {taken_over:?} after the kill");
    let TaskPayload::Failed { error } = &failed.task.payload else {
        panic!("expected failed, got {failed:?}");
    };
    let why = error["message"].as_str().unwrap();
    assert!(why.contains("stopped before the call finished"), "{why}");
    // Not before the lease could have expired (the killed replica renewed it until the
    // kill, at most a third of a lease before).
    assert!(
        taken_over >= LEASE * 2 / 3 - Duration::from_secs(1),
        "{taken_over:?}"
    );
}
