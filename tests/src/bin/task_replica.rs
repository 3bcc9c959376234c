//! One replica of a server whose calls run as MCP tasks, for the take-over tests
//! (`tests/tests/mcp_tasks_kill.rs`): several of them on one database, one killed or
//! drained mid-task, another taking its tasks over.
//!
//! ```text
//! task_replica --db sqlite:///tmp/t.db --addr 127.0.0.1:18900 --token-out /tmp/token \
//!   --lease-ms 3000 --sweep-ms 300 --grace-ms 1000
//! ```
//!
//! Its tools, each a task:
//! - `tasks_slow_draft` (draft, `task = "required"`): works for `seconds`, then drafts one
//!   row of `task_drafts` (the test creates the table) for its `client_ref`;
//! - `tasks_slow_report` (read, `task = "required"`, `rerun = false`): works for `seconds`,
//!   then answers; a stopped replica's report is failed, not run again;
//! - `tasks_slow_count` (read, `task = "optional"`): works for `seconds`, then answers.
//!
//! `--token-out` receives a development token (scopes `tasks:read`, `tasks:draft`) for
//! `--resource` (default `http://127.0.0.1/mcp`), which every replica accepts.

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::auth::{self, TokenConfig};
use erp_tools_core::mcp::{HttpConfig, router, serve_http};
use erp_tools_core::prelude::*;
use erp_tools_core::{Database, DatabaseOptions, Principal, ToolRegistry, ToolRuntime, sqlx};

/// Arguments of `tasks_slow_draft`.
#[tool_args]
struct SlowDraftArgs {
    /// Your own id for this draft; reuse it when retrying, e.g. nightly-1
    client_ref: String,
    /// What to draft, e.g. restock
    label: String,
    /// How long to work first, in seconds (0 to 60)
    #[erp(min = 0, max = 60, kind = "quantity")]
    seconds: i64,
}

/// A drafted row.
#[derive(Serialize, JsonSchema)]
struct Drafted {
    client_ref: String,
    label: String,
    /// The process that drafted it.
    drafted_by: String,
}

/// Works for `seconds` (reporting progress), then drafts one row for `client_ref`.
#[erp_tool(
    module = "tasks",
    tier = "draft",
    scopes = ["tasks:draft"],
    task = "required"
)]
async fn slow_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: SlowDraftArgs,
) -> Result<Drafted, ToolError> {
    work(ctx, args.seconds, &args.label).await?;
    let drafted_by = std::process::id().to_string();
    sqlx::query("INSERT INTO task_drafts (client_ref, label, drafted_by) VALUES ($1, $2, $3)")
        .bind(args.client_ref.clone())
        .bind(args.label.clone())
        .bind(drafted_by.clone())
        .execute(tx.conn())
        .await
        .map_err(ToolError::internal)?;
    let number = format!("TD-{}", args.client_ref);
    tx.record_document(DocumentRef::new(
        "task_draft",
        args.client_ref.clone(),
        number,
    ));
    Ok(Drafted {
        client_ref: args.client_ref,
        label: args.label,
        drafted_by,
    })
}

/// Arguments of `tasks_slow_report`.
#[tool_args]
struct ReportArgs {
    /// What to report on, e.g. stock
    label: String,
    /// How long to work, in seconds (0 to 60)
    #[erp(min = 0, max = 60, kind = "quantity")]
    seconds: i64,
}

/// A report.
#[derive(Serialize, JsonSchema)]
struct Reported {
    label: String,
    /// The process that reported it.
    reported_by: String,
}

/// Works for `seconds` (reporting progress), then answers; not run again after a stop.
#[erp_tool(
    module = "tasks",
    tier = "read",
    scopes = ["tasks:read"],
    task = "required",
    rerun = false
)]
async fn slow_report(ctx: &ToolContext, args: ReportArgs) -> Result<Reported, ToolError> {
    report(ctx, args).await
}

/// Works for `seconds` (reporting progress), then answers; run again after a stop.
#[erp_tool(
    module = "tasks",
    tier = "read",
    scopes = ["tasks:read"],
    task = "optional"
)]
async fn slow_count(ctx: &ToolContext, args: ReportArgs) -> Result<Reported, ToolError> {
    report(ctx, args).await
}

/// The report both report tools make.
async fn report(ctx: &ToolContext, args: ReportArgs) -> Result<Reported, ToolError> {
    work(ctx, args.seconds, &args.label).await?;
    Ok(Reported {
        label: args.label,
        reported_by: std::process::id().to_string(),
    })
}

/// `seconds` of work in steps of 100 ms, reporting progress; stops when cancelled.
async fn work(ctx: &ToolContext, seconds: i64, label: &str) -> Result<(), ToolError> {
    let steps = seconds * 10;
    for step in 0..steps {
        if ctx.is_cancelled() {
            return Err(ToolError::rejected(format!("{label} was cancelled")));
        }
        ctx.progress(step as f64, Some(steps as f64), label);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

struct Flags {
    db: String,
    addr: std::net::SocketAddr,
    token_out: String,
    /// The URL tokens are issued for: one for every replica, as behind a load balancer.
    resource: String,
    lease: Duration,
    sweep: Duration,
    grace: Duration,
}

fn flags() -> Result<Flags, String> {
    let mut args = std::env::args().skip(1);
    let mut f = Flags {
        db: String::new(),
        addr: "127.0.0.1:0".parse().expect("an address"),
        token_out: String::new(),
        resource: "http://127.0.0.1/mcp".into(),
        lease: Duration::from_secs(15),
        sweep: Duration::from_secs(5),
        grace: Duration::from_secs(30),
    };
    let ms = |v: &str| {
        v.parse()
            .map(Duration::from_millis)
            .map_err(|e| format!("{v}: {e}"))
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--db" => f.db = value,
            "--addr" => f.addr = value.parse().map_err(|e| format!("--addr {value}: {e}"))?,
            "--token-out" => f.token_out = value,
            "--resource" => f.resource = value,
            "--lease-ms" => f.lease = ms(&value)?,
            "--sweep-ms" => f.sweep = ms(&value)?,
            "--grace-ms" => f.grace = ms(&value)?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if f.db.is_empty() || f.token_out.is_empty() || !f.addr.ip().is_loopback() {
        return Err(
            "usage: task_replica --db URL --addr 127.0.0.1:PORT --token-out FILE \
                    [--resource URL] [--lease-ms N] [--sweep-ms N] [--grace-ms N]"
                .into(),
        );
    }
    Ok(f)
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("task_replica: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    erp_tools_core::log_to_stderr();
    let flags = flags()?;
    let registry = ToolRegistry::builder()
        .module(
            "tasks",
            "Slow drafts and reports run as tasks. Cannot post or approve.",
        )
        .tools(erp_tools_core::tools![slow_draft, slow_report, slow_count])
        .build()
        .map_err(|e| e.to_string())?;
    let db = Database::connect(DatabaseOptions::new(flags.db.clone()).replica_lease(flags.lease))
        .await
        .map_err(|e| format!("cannot open {}: {e}", flags.db))?;
    let tokens = TokenConfig::development().for_resource(flags.resource.clone());
    let caller = Principal::builder("u-tasks", 1, "HQ")
        .scopes(["tasks:read", "tasks:draft"])
        .build();
    let token = auth::mint(&tokens, &caller, Duration::from_secs(3600));
    // Written whole, then renamed: a reader never sees half a token.
    let part = format!("{}.part", flags.token_out);
    std::fs::write(&part, token)
        .and_then(|()| std::fs::rename(&part, &flags.token_out))
        .map_err(|e| format!("cannot write {}: {e}", flags.token_out))?;
    let runtime = ToolRuntime::new(Arc::new(registry), db.clone());
    let config = HttpConfig::new(tokens)
        .with_task_sweep(flags.sweep)
        .with_shutdown_grace(flags.grace);
    let options = config.serve_options();
    serve_http(flags.addr, router(runtime, config), options)
        .await
        .map_err(|e| format!("cannot serve on {}: {e}", flags.addr))?;
    db.close().await;
    Ok(())
}
