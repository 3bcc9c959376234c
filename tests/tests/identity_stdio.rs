//! stdio serves its caller only while the start-up token is valid: at its expiry the
//! session ends with a message saying to restart with a fresh token.

use std::process::Stdio;
use std::time::{Duration, Instant};

use erp_tools_core::auth::{TokenConfig, mint};
use erp_tools_tests::app::tools::GET_STOCK;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::names;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::WAREHOUSE;
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

async fn the_stdio_session_ends_when_its_token_expires(t: &TestDb) {
    let lifetime = Duration::from_secs(3);
    let token = mint(
        &TokenConfig::development(),
        &WAREHOUSE.principal(),
        lifetime,
    );
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp_stdio_fixture"));
    cmd.env("ERP_TOOLS_DB_URL", t.url())
        .env("ERP_TOOLS_TOKEN", &token)
        .env("RUST_LOG", "off");
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.expect("stdio server starts");
    assert_eq!(
        names(&client.list_tools(None).await.unwrap().tools),
        [GET_STOCK]
    );

    // `exp` is whole seconds: wait past it, then one more second.
    tokio::time::sleep((lifetime + Duration::from_secs(2)).saturating_sub(started.elapsed())).await;
    let after = tokio::time::timeout(Duration::from_secs(5), client.list_tools(None)).await;
    assert!(
        !matches!(after, Ok(Ok(_))),
        "nothing is served after the token expired"
    );
    let mut message = String::new();
    let mut stderr = stderr.expect("piped stderr");
    tokio::time::timeout(Duration::from_secs(5), stderr.read_to_string(&mut message))
        .await
        .expect("the server exits")
        .unwrap();
    assert!(
        message.contains("the token of this stdio server expired at")
            && message.contains("restart the server with a fresh token"),
        "{message}"
    );
}
on_both_backends!(the_stdio_session_ends_when_its_token_expires);
