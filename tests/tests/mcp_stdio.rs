//! The MCP server over stdio, as an MCP host runs it: a child process started with a
//! token, driven by `rmcp`'s child-process client. The caller is fixed by the token given
//! at start-up.

use std::time::Duration;

use erp_tools_core::Principal;
use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{Client, assert_error_text, call_ok, call_tool, names};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::process::Command;

fn server_command(db_url: &str, token: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp_stdio_fixture"));
    cmd.env("ERP_TOOLS_DB_URL", db_url)
        .env("ERP_TOOLS_TOKEN", token)
        .env("RUST_LOG", "off");
    cmd
}

/// The stdio server on `t`'s database started with a development token for `principal`,
/// and a client connected to it.
async fn start_as(t: &TestDb, principal: &Principal) -> Client {
    let token = mint(
        &TokenConfig::development(),
        principal,
        Duration::from_secs(300),
    );
    let transport = TokioChildProcess::new(server_command(t.url(), &token)).unwrap();
    ().serve(transport).await.expect("stdio server starts")
}

/// `(user, outcome)` of every audit row of `run`.
async fn audit_of(t: &TestDb, run: &str) -> Vec<(String, String)> {
    let log = t.db.audit_log(Some(run)).await.unwrap();
    log.into_iter().map(|r| (r.user_id, r.outcome)).collect()
}

async fn stdio_serves_the_caller_named_by_the_start_up_token(t: &TestDb) {
    let clerks_run = new_run();
    let client = start_as(t, &WAREHOUSE.in_run(&clerks_run)).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    assert_eq!(names(&tools), [GET_STOCK]);
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-1");
    let denied = call_tool(&client, CREATE_PO_DRAFT, arguments).await;
    assert_error_text(&denied, "`purchasing:draft`");
    client.cancel().await.unwrap();

    // A run belongs to the person who used it first: the buyer works in a run of their own.
    let buyers_run = new_run();
    let client = start_as(t, &BUYER.in_run(&buyers_run)).await;
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 5);
    let arguments = valid_arguments(CREATE_PO_DRAFT, "r-1");
    let created = call_ok(&client, CREATE_PO_DRAFT, arguments).await;
    assert_eq!(created["replayed"], json!(false));
    client.cancel().await.unwrap();

    let row = |role: &str, outcome: &str| (role.to_string(), outcome.to_string());
    assert_eq!(
        audit_of(t, &clerks_run).await,
        [row(WAREHOUSE.user_id, "denied")]
    );
    assert_eq!(audit_of(t, &buyers_run).await, [row(BUYER.user_id, "ok")]);
}
on_both_backends!(stdio_serves_the_caller_named_by_the_start_up_token);

async fn stdio_refuses_to_start_with_an_invalid_token(t: &TestDb) {
    let other = TokenConfig::new(
        b"a key the development server does not know, 32+ bytes".to_vec(),
        erp_tools_core::auth::DEV_ISSUER,
        erp_tools_core::auth::DEV_AUDIENCE,
    )
    .unwrap();
    let forged = mint(&other, &BUYER.principal(), Duration::from_secs(300));
    let output = server_command(t.url(), &forged)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(output.stdout.is_empty(), "nothing served");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("signature is invalid"), "{stderr}");
}
on_both_backends!(stdio_refuses_to_start_with_an_invalid_token);
