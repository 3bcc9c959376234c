//! A bare `rmcp` streamable HTTP server with the distributor example's
//! `inventory_get_stock` (see `erp_tools_benches::stock`), started by the `http_read`
//! benchmark on a copy of the example's seeded SQLite database. Serves until SIGTERM or
//! SIGINT, then closes the database (committing queued audit rows).
//!
//! ```text
//! rmcp_stock --db sqlite:///tmp/x/distributor.db --addr 127.0.0.1:9000 --audit writer
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use axum::serve::ListenerExt;
use clap::{Parser, ValueEnum};
use erp_tools_benches::stock::{StockAudit, StockServer, stock_router};
use erp_tools_core::{Database, DatabaseOptions, Principal};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Audit {
    /// No audit row: rmcp alone.
    None,
    /// Every call's row handed to erp-tools' audit writer, answered once durable.
    Writer,
}

#[derive(Parser, Debug)]
#[command(about = "Bare rmcp streamable HTTP serving the example's inventory_get_stock")]
struct Args {
    /// The example's database (already created and seeded), e.g. sqlite:///tmp/x/distributor.db
    #[arg(long)]
    db: String,
    /// Address to listen on.
    #[arg(long)]
    addr: SocketAddr,
    /// Whether each call writes an audit row before it answers.
    #[arg(long, value_enum, default_value = "none")]
    audit: Audit,
    /// The caller's user id (the audit rows name it).
    #[arg(long, default_value = "7")]
    user: String,
    /// The caller's branch code; its stock is served.
    #[arg(long, default_value = "SBY-01")]
    branch: String,
    /// Commit with SQLite's `synchronous = NORMAL` (the last commits may be lost to an
    /// operating-system crash): measures what `FULL` costs.
    #[arg(long)]
    synchronous_normal: bool,
    /// Write the audit rows without their hash chain: measures what the chain costs.
    #[arg(long)]
    no_chain: bool,
}

async fn serve(args: Args) -> Result<(), String> {
    let mut options = DatabaseOptions::new(args.db.clone());
    if args.synchronous_normal {
        options = options.sqlite_synchronous_normal_risks_last_commits();
    }
    if args.no_chain {
        options = options.without_audit_chain_loses_tamper_evidence();
    }
    let db = Database::connect(options)
        .await
        .map_err(|e| format!("cannot open {}: {e}", args.db))?;
    let branch_id: i64 =
        erp_tools_core::sqlx::query_scalar("SELECT id FROM branches WHERE code = $1")
            .bind(&args.branch)
            .fetch_optional(db.pool())
            .await
            .map_err(|e| {
                format!(
                    "{}: {e}; is it the distributor example's database?",
                    args.db
                )
            })?
            .ok_or_else(|| format!("no branch {} in {}", args.branch, args.db))?;
    let who = Principal::builder(args.user.clone(), branch_id, args.branch.clone())
        .scopes(["inventory:read"])
        .build();
    let audit = match args.audit {
        Audit::None => StockAudit::None,
        Audit::Writer => StockAudit::Writer,
    };
    let router = stock_router(StockServer::new(&db, who, audit));
    // Without Nagle's delay, as the example's server sets its connections.
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        })
        .await
        .map_err(|e| e.to_string());
    db.close().await;
    served
}

#[tokio::main]
async fn main() -> ExitCode {
    match serve(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
