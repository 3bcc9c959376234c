//! A small multi-branch distributor ERP served to AI agents over MCP.
//!
//! ```text
//! cargo run --example distributor                       # HTTP on 127.0.0.1:8765/mcp, SQLite file
//! cargo run --example distributor -- serve --stdio      # stdio, identity from ERP_TOOLS_TOKEN
//! cargo run --example distributor -- token --user 7 --branch SBY-01 --scopes purchasing:read,purchasing:draft
//! cargo run --example distributor -- export --target openai
//! cargo run --example distributor -- report
//! ```

mod app;
mod data;
mod inventory;
mod purchasing;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use erp_tools_core::auth::{self, TokenConfig};
use erp_tools_core::mcp::HttpConfig;
use erp_tools_core::{Principal, Target, ToolRuntime};

#[derive(Parser)]
#[command(
    name = "distributor",
    about = "A multi-branch distributor ERP served over MCP"
)]
struct Cli {
    /// Database URL: sqlite://path (created and seeded on first start) or postgres://...
    #[arg(
        long,
        global = true,
        env = "ERP_TOOLS_DB",
        default_value = "sqlite://distributor.db"
    )]
    db: String,
    /// This server's MCP URL: the audience tokens are minted for and checked against.
    #[arg(long, global = true, env = "ERP_TOOLS_RESOURCE", default_value = DEFAULT_RESOURCE)]
    resource: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the tools over MCP (streamable HTTP by default).
    Serve {
        /// Serve over stdio instead; the identity comes from the ERP_TOOLS_TOKEN token.
        #[arg(long)]
        stdio: bool,
        /// Address for streamable HTTP.
        #[arg(long, default_value = DEFAULT_ADDR)]
        addr: SocketAddr,
    },
    /// Print a development token for a user, branch and scopes.
    Token {
        /// User id the agent acts for.
        #[arg(long)]
        user: String,
        /// Branch code, e.g. SBY-01 or JKT-01.
        #[arg(long)]
        branch: String,
        /// Comma-separated scopes, e.g. purchasing:read,purchasing:draft,inventory:read
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
        /// Roles, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "buyer")]
        roles: Vec<String>,
        /// Agent run id to bind the token to (otherwise the run is the user's own scope).
        #[arg(long)]
        run: Option<String>,
        /// Lifetime in minutes.
        #[arg(long, default_value_t = 480)]
        ttl_minutes: u64,
    },
    /// Print the tools for a provider: openai, anthropic or mcp.
    Export {
        /// openai | anthropic | mcp
        #[arg(long)]
        target: Target,
    },
    /// Answer the seven-question safety checklist for every tool.
    Report,
}

/// The framework's development defaults: tokens minted by `token` without `--resource`
/// are for the server `serve` starts without `--addr`.
const DEFAULT_ADDR: &str = auth::DEV_ADDR;
const DEFAULT_RESOURCE: &str = auth::DEV_AUDIENCE;

/// The token settings: `ERP_TOOLS_SIGNING_KEY` (and `ERP_TOOLS_ISSUER`) when set, the
/// clearly labelled development key otherwise. Tokens are for `resource`.
fn token_config(resource: &str) -> Result<TokenConfig, String> {
    match std::env::var("ERP_TOOLS_SIGNING_KEY") {
        Ok(key) => {
            let issuer = std::env::var("ERP_TOOLS_ISSUER")
                .unwrap_or_else(|_| "erp-tools-distributor".into());
            TokenConfig::new(key.into_bytes(), issuer, resource)
                .map_err(|e| format!("ERP_TOOLS_SIGNING_KEY: {e}"))
        }
        Err(_) => Ok(TokenConfig::development().for_resource(resource)),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    // Logs go to stderr: stdout carries the MCP stdio transport and command output.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let registry = Arc::new(app::registry().map_err(|e| e.to_string())?);
    let tokens = token_config(&cli.resource)?;
    match cli.command.unwrap_or(Command::Serve {
        stdio: false,
        addr: DEFAULT_ADDR.parse().expect("valid address"),
    }) {
        Command::Serve { stdio: true, .. } => {
            let token = std::env::var("ERP_TOOLS_TOKEN").map_err(|_| {
                "serve --stdio needs ERP_TOOLS_TOKEN: mint one with `cargo run --example \
                 distributor -- token --user 7 --branch SBY-01 --scopes purchasing:read`"
                    .to_string()
            })?;
            let principal =
                auth::verify(&tokens, token.trim()).map_err(|e| format!("ERP_TOOLS_TOKEN: {e}"))?;
            let db = app::open_db(&cli.db).await?;
            let runtime = ToolRuntime::new(registry, db);
            erp_tools_core::mcp::serve_stdio(runtime, principal)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Command::Serve { stdio: false, addr } => {
            let db = app::open_db(&cli.db).await?;
            let runtime = ToolRuntime::new(registry, db.clone());
            let config = HttpConfig::new(tokens);
            let cancellation = config.cancellation().clone();
            let router = erp_tools_core::mcp::router(runtime, config);
            eprintln!(
                "distributor: MCP over streamable HTTP at http://{addr}/mcp (database {})",
                cli.db
            );
            eprintln!(
                "distributor: mint a token with `cargo run --example distributor -- token --user 7 --branch SBY-01 --scopes purchasing:read,purchasing:draft,inventory:read`"
            );
            let served = erp_tools_core::mcp::serve_http(addr, router, cancellation)
                .await
                .map_err(|e| format!("cannot serve on {addr}: {e}"));
            // Commits the audit rows still queued.
            db.close().await;
            served
        }
        Command::Token {
            user,
            branch,
            scopes,
            roles,
            run,
            ttl_minutes,
        } => {
            let db = app::open_db(&cli.db).await?;
            let branch_id = data::branch_id(&db, &branch)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| {
                    format!("unknown branch `{branch}`; the example has SBY-01 and JKT-01")
                })?;
            let known: Vec<&str> = registry
                .tools()
                .iter()
                .flat_map(|t| t.def.scopes().iter().copied())
                .collect();
            if let Some(bad) = scopes.iter().find(|s| !known.contains(&s.as_str())) {
                return Err(format!(
                    "unknown scope `{bad}`; the example's scopes are purchasing:read, purchasing:draft, inventory:read"
                ));
            }
            let mut builder = Principal::builder(user, branch_id, branch).scopes(scopes);
            for r in roles {
                builder = builder.role(r);
            }
            if let Some(run) = run {
                builder = builder.agent_run_id(run);
            }
            let token = auth::mint(
                &tokens,
                &builder.build(),
                Duration::from_secs(ttl_minutes * 60),
            );
            print_out(&token);
            Ok(())
        }
        Command::Export { target } => {
            let value = match target {
                Target::OpenAi => erp_tools_core::openai_tools(&registry),
                Target::Anthropic => erp_tools_core::anthropic_tools(&registry),
                Target::Mcp => erp_tools_core::mcp_tools(&registry),
            };
            let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
            print_out(&text);
            Ok(())
        }
        Command::Report => {
            let report = erp_tools_core::SurfaceReport::new(&registry);
            print_out(report.to_table().trim_end());
            if report.all_pass() {
                Ok(())
            } else {
                Err("some tools fail the safety checklist (rows marked NO)".into())
            }
        }
    }
}

/// Prints a line to stdout; a closed pipe (`| head`) is not an error worth a panic.
fn print_out(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}
