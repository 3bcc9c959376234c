//! A test-only MCP server for the official conformance suite's tools scenarios: the
//! diagnostic tools the suite names (`tools.rs`), written with erp-tools' own
//! `#[erp_tool]` and served by erp-tools' own `serve_http`, exactly as an application's
//! tools are.
//!
//! ```text
//! conformance_fixture --db sqlite:///tmp/f.db --addr 127.0.0.1:18800 \
//!   --resource http://127.0.0.1:18801/mcp --token-out /tmp/token
//! ```
//!
//! `--token-out` receives a development token for the caller (scope `diagnostics:read`),
//! which `scripts/conformance/proxy.mjs` adds to every request of the suite (the suite
//! sends none). `scripts/conformance_fixture_check.sh` runs every tools scenario against it,
//! and the tasks scenarios (`tasks.rs`).

mod tasks;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::auth::{self, TokenConfig};
use erp_tools_core::mcp::{HttpConfig, router, serve_http};
use erp_tools_core::{Database, Principal, TaskSupport, ToolRegistry, ToolRuntime};

struct Flags {
    db: String,
    addr: std::net::SocketAddr,
    resource: String,
    token_out: String,
}

fn flags() -> Result<Flags, String> {
    let mut args = std::env::args().skip(1);
    let (mut db, mut addr, mut resource, mut token_out) = (None, None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--db" => db = Some(value),
            "--addr" => addr = Some(value.parse().map_err(|e| format!("--addr {value}: {e}"))?),
            "--resource" => resource = Some(value),
            "--token-out" => token_out = Some(value),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    let usage =
        "usage: conformance_fixture --db URL --addr HOST:PORT --resource URL --token-out FILE";
    Ok(Flags {
        db: db.ok_or(usage)?,
        addr: addr.ok_or(usage)?,
        resource: resource.ok_or(usage)?,
        token_out: token_out.ok_or(usage)?,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("conformance_fixture: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let flags = flags()?;
    if !flags.addr.ip().is_loopback() {
        return Err(format!("{} is not a loopback address", flags.addr));
    }
    let registry = ToolRegistry::builder()
        .module("test", tools::DESCRIPTION)
        .module("test_input_required", tools::DESCRIPTION)
        .module("test_missing", tools::DESCRIPTION)
        .module("greet", tools::DESCRIPTION)
        .module("slow", tools::DESCRIPTION)
        .module("failing", tools::DESCRIPTION)
        .module("protocol", tools::DESCRIPTION)
        .module("confirm", tools::DESCRIPTION)
        .module("multi", tools::DESCRIPTION)
        .module("test_tool", tools::DESCRIPTION)
        .module("test_image", tools::DESCRIPTION)
        .tools(erp_tools_core::tools![
            tools::simple_text,
            tools::error_handling,
            tools::elicitation,
            tools::tool_with_progress,
            tools::custom_headers,
            tools::streaming_elicitation,
            tools::logging_tool,
            tools::result_elicitation,
            tools::result_request_state,
            tools::result_multi_round,
            tools::result_tampered_state,
            tools::result_capabilities,
            tools::capability,
            tools::embedded_resource,
            tools::multiple_content_types,
            tools::image_content,
            tasks::greet,
            tasks::slow_compute,
            tasks::failing_job,
            tasks::protocol_error_job,
            tasks::confirm_delete,
            tasks::multi_input,
            tasks::tool_with_task,
        ])
        // The suite's tasks scenarios (SEP-2663): these calls run as tasks.
        .task::<tasks::slow_compute>(TaskSupport::Optional)
        .task::<tasks::failing_job>(TaskSupport::Required)
        .task::<tasks::protocol_error_job>(TaskSupport::Optional)
        .task::<tasks::confirm_delete>(TaskSupport::Optional)
        .task::<tasks::multi_input>(TaskSupport::Optional)
        .task::<tasks::tool_with_task>(TaskSupport::Required)
        // A card, so that the suite's caching scenario finds resources to read.
        .card::<tools::simple_text>(erp_tools_core::mcp::apps::DRAFT_CARD)
        .build()
        .map_err(|e| e.to_string())?;
    let db = Database::open(&flags.db)
        .await
        .map_err(|e| format!("cannot open {}: {e}", flags.db))?;
    let tokens = TokenConfig::development().for_resource(flags.resource.clone());
    let caller = Principal::builder("conformance", 1, "HQ")
        .scopes([tools::SCOPE])
        .build();
    let token = auth::mint(&tokens, &caller, Duration::from_secs(3600));
    std::fs::write(&flags.token_out, token)
        .map_err(|e| format!("cannot write {}: {e}", flags.token_out))?;
    let runtime = ToolRuntime::new(Arc::new(registry), db);
    let config = HttpConfig::new(tokens);
    let options = config.serve_options();
    serve_http(flags.addr, router(runtime, config), options)
        .await
        .map_err(|e| format!("cannot serve on {}: {e}", flags.addr))
}
