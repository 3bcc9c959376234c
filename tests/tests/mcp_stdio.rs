//! The MCP server over stdio, as an MCP host runs it: a child process started with a
//! token, driven by `rmcp`'s child-process client. The caller is fixed by the token given
//! at start-up.

use std::time::Duration;

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_tests::app::arguments::valid_arguments;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{call, names, text_of};
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

async fn stdio_serves_the_caller_named_by_the_start_up_token(t: &TestDb) {
    let url = t.url();
    let dev = TokenConfig::development();
    let run = new_run();

    let token = mint(&dev, &WAREHOUSE.in_run(&run), Duration::from_secs(300));
    let transport = TokioChildProcess::new(server_command(url, &token)).unwrap();
    let client = ().serve(transport).await.expect("stdio server starts");
    let tools = client.list_tools(None).await.unwrap().tools;
    assert_eq!(names(&tools), ["inventory_get_stock"]);
    let denied = client
        .call_tool(call(
            "purchasing_create_po_draft",
            valid_arguments("purchasing_create_po_draft", "r-1"),
        ))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text_of(&denied).contains("`purchasing:draft`"),
        "{}",
        text_of(&denied)
    );
    client.cancel().await.unwrap();

    let token = mint(&dev, &BUYER.in_run(&run), Duration::from_secs(300));
    let transport = TokioChildProcess::new(server_command(url, &token)).unwrap();
    let client = ().serve(transport).await.expect("stdio server starts");
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 5);
    let created = client
        .call_tool(call(
            "purchasing_create_po_draft",
            valid_arguments("purchasing_create_po_draft", "r-1"),
        ))
        .await
        .unwrap();
    assert_eq!(created.is_error, Some(false), "{}", text_of(&created));
    assert_eq!(
        created.structured_content.unwrap()["replayed"],
        json!(false)
    );
    client.cancel().await.unwrap();

    let log = t.db.audit_log(Some(&run)).await.unwrap();
    let rows: Vec<(&str, &str)> = log
        .iter()
        .map(|r| (r.user_id.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(rows, [(WAREHOUSE.user_id, "denied"), (BUYER.user_id, "ok")]);
}
on_both_backends!(
    stdio_serves_the_caller_named_by_the_start_up_token,
    crate::stdio_serves_the_caller_named_by_the_start_up_token
);

async fn stdio_refuses_to_start_with_an_invalid_token(t: &TestDb) {
    let url = t.url();
    let other = TokenConfig::new(
        b"a key the development server does not know, 32+ bytes".to_vec(),
        erp_tools_core::auth::DEV_ISSUER,
        erp_tools_core::auth::DEV_AUDIENCE,
    )
    .unwrap();
    let forged = mint(&other, &BUYER.principal(), Duration::from_secs(300));
    let output = server_command(url, &forged)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(output.stdout.is_empty(), "nothing served");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("signature is invalid"), "{stderr}");
}
on_both_backends!(
    stdio_refuses_to_start_with_an_invalid_token,
    crate::stdio_refuses_to_start_with_an_invalid_token
);
