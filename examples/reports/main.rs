//! A stock valuation report served over MCP as a task (`report.rs`): `tools/call` of
//! `reports_stock_valuation` answers at once with a task; the client polls `tasks/get`
//! (the status message says how far it is), may cancel it with `tasks/cancel`, and finds
//! the result, with the CSV attached, in the completed task. Tasks are kept in the
//! database: start two of these servers on one PostgreSQL database and either answers
//! for the other's tasks.
//!
//! ```text
//! cargo run -p erp-tools-core --example reports -- --db sqlite:///tmp/reports.db \
//!   --addr 127.0.0.1:8790 --items 20000 --token-out /tmp/reports.token
//! ```
//!
//! `--token-out` receives a development token for user `u-1` of branch 1 (`SBY-01`)
//! with the scope `reports:read`; `--items` is how many items the first start seeds in
//! each warehouse (default 5 000).

#[path = "report.rs"]
mod report;

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::auth::{self, TokenConfig};
use erp_tools_core::mcp::{HttpConfig, router, serve_http};
use erp_tools_core::{Database, Principal, ToolRuntime};

struct Flags {
    db: String,
    addr: std::net::SocketAddr,
    items: i64,
    token_out: Option<String>,
}

fn flags() -> Result<Flags, String> {
    let usage = "usage: reports --db URL [--addr HOST:PORT] [--items N] [--token-out FILE]";
    let mut args = std::env::args().skip(1);
    let mut flags = Flags {
        db: String::new(),
        addr: erp_tools_core::auth::DEV_ADDR
            .parse()
            .map_err(|e| format!("{e}"))?,
        items: 5_000,
        token_out: None,
    };
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value; {usage}"))?;
        match flag.as_str() {
            "--db" => flags.db = value,
            "--addr" => flags.addr = value.parse().map_err(|e| format!("--addr {value}: {e}"))?,
            "--items" => {
                flags.items = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=1_000_000).contains(n))
                    .ok_or_else(|| format!("--items {value}: give a number from 1 to 1000000"))?
            }
            "--token-out" => flags.token_out = Some(value),
            other => return Err(format!("unknown flag {other}; {usage}")),
        }
    }
    if flags.db.is_empty() {
        return Err(usage.to_string());
    }
    Ok(flags)
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("reports: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    erp_tools_core::log_to_stderr();
    let flags = flags()?;
    let registry = report::registry().map_err(|e| e.to_string())?;
    let db = Database::open(&flags.db)
        .await
        .map_err(|e| format!("cannot open {}: {e}", flags.db))?;
    report::prepare(&db, flags.items)
        .await
        .map_err(|e| format!("cannot prepare the report's data: {e}"))?;
    let tokens = TokenConfig::development().for_resource(format!("http://{}/mcp", flags.addr));
    let clerk = Principal::builder("u-1", 1, "SBY-01")
        .scopes(["reports:read"])
        .build();
    let token = auth::mint(&tokens, &clerk, Duration::from_secs(8 * 3600));
    match &flags.token_out {
        Some(path) => {
            std::fs::write(path, &token).map_err(|e| format!("cannot write {path}: {e}"))?
        }
        None => eprintln!("reports: a token for u-1 (SBY-01, reports:read): {token}"),
    }
    let runtime = ToolRuntime::new(Arc::new(registry), db);
    let config = HttpConfig::new(tokens);
    let options = config.serve_options();
    eprintln!("reports: serving MCP on http://{}/mcp", flags.addr);
    serve_http(flags.addr, router(runtime, config), options)
        .await
        .map_err(|e| format!("cannot serve on {}: {e}", flags.addr))
}
