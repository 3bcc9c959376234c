//! Purchasing tools over a real Tryton 8.2 (an ERP the team does not own), reached over its
//! REST API, served to AI agents over MCP. Drafts are exactly-once across timeouts, lost
//! answers and killed processes (erp-tools' remote drafts, SPEC R11).
//!
//! ```text
//! scripts/tryton/start.sh target/tryton/run      # prints ERP_TOOLS_TRYTON_URL and _KEYS
//! export ERP_TOOLS_TRYTON_URL=http://127.0.0.1:<port>/erp ERP_TOOLS_TRYTON_KEYS=target/tryton/run/keys.json
//! cargo run --example tryton -- token --user buyer-sby --branch SBY-01 --scopes purchasing:read,purchasing:draft
//! cargo run --example tryton -- serve --addr 127.0.0.1:8766   # MCP at http://127.0.0.1:8766/mcp
//! cargo run --example tryton -- token --user buyer-sby --branch SBY-01 --scopes review:read
//!                                      # sign in at http://127.0.0.1:8766/review with it
//! ```
//!
//! - **Branch = Tryton company**: a token's branch is a Tryton company (its id; its code is
//!   the company party's code), sent in `X-Tryton-Context` on every request, so a read or a
//!   draft never reaches another company.
//! - **Each person acts as their own Tryton user**: the token's subject is looked up in
//!   `ERP_TOOLS_TRYTON_KEYS` (JSON subject → REST key), so Tryton's own access rules apply
//!   and the purchase's creator is the person.
//! - erp-tools' own store (idempotency keys, audit log) is `--db` (SQLite by default).

mod purchasing;
mod review;
mod tryton;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use erp_tools_core::auth::{self, Authenticator, IdentityConfig, KeysFrom};
use erp_tools_core::mcp::HttpConfig;
use erp_tools_core::remote::{self, RemoteLookup};
use erp_tools_core::{Database, Principal, ToolRegistry, ToolRuntime};
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "tryton",
    about = "Purchasing tools over Tryton's REST API, served over MCP"
)]
struct Cli {
    /// erp-tools' own store: sqlite://path (created on first start) or postgres://...
    #[arg(
        long,
        global = true,
        env = "ERP_TOOLS_DB",
        default_value = "sqlite://tryton-tools.db"
    )]
    db: String,
    /// This server's MCP URL: the audience tokens are minted for and checked against.
    #[arg(long, global = true, env = "ERP_TOOLS_RESOURCE", default_value = auth::DEV_AUDIENCE)]
    resource: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the tools over MCP (streamable HTTP).
    Serve {
        /// Address for streamable HTTP.
        #[arg(long, default_value = auth::DEV_ADDR)]
        addr: SocketAddr,
    },
    /// Print a development token for a person (a subject in the keys file) and branch.
    Token {
        /// The person: a subject of ERP_TOOLS_TRYTON_KEYS, e.g. buyer-sby.
        #[arg(long)]
        user: String,
        /// Branch code (a Tryton company's party code), e.g. SBY-01.
        #[arg(long)]
        branch: String,
        /// Comma-separated scopes: purchasing:read, purchasing:draft, review:read, review:approve.
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
        /// Agent run id to bind the token to.
        #[arg(long)]
        run: Option<String>,
        /// Lifetime in minutes.
        #[arg(long, default_value_t = 480)]
        ttl_minutes: u64,
    },
}

/// Every tool of the example.
fn registry() -> Result<ToolRegistry, String> {
    ToolRegistry::builder()
        .module("purchasing", purchasing::DESCRIPTION)
        .tools(erp_tools_core::tools![
            purchasing::list_suppliers,
            purchasing::search_products,
            purchasing::get_product,
            purchasing::draft_purchase,
        ])
        .build()
        .map_err(|e| e.to_string())
}

/// The Tryton companies as branches (id, the company party's code): each configured
/// person's own companies, read as that person inside their own company (see `tryton.rs`:
/// a request never carries a company that is not the caller's).
async fn branches(tryton: &tryton::Tryton) -> Result<Vec<(i64, String)>, String> {
    let mut out: Vec<(i64, String)> = Vec::new();
    let mut last_error = None;
    for user in tryton.subjects() {
        let companies = match tryton.own_companies(user).await {
            Ok(c) if !c.is_empty() => c,
            Ok(_) => continue, // a person without a company has no branch
            Err(e) => {
                last_error = Some(e.to_string());
                continue;
            }
        };
        let who = tryton::Caller {
            user,
            company: companies[0],
        };
        match tryton
            .search(
                &who,
                "company.company",
                &json!([["id", "in", companies]]),
                &["party.code"],
                None,
            )
            .await
        {
            Ok(rows) => {
                for r in rows {
                    let (Some(id), Some(code)) = (r["id"].as_i64(), r["party"]["code"].as_str())
                    else {
                        continue;
                    };
                    if !out.iter().any(|(i, _)| *i == id) {
                        out.push((id, code.to_string()));
                    }
                }
            }
            Err(e) => last_error = Some(e.to_string()),
        }
    }
    if out.is_empty() {
        return Err(format!(
            "cannot read Tryton's companies at ERP_TOOLS_TRYTON_URL with any key of ERP_TOOLS_TRYTON_KEYS{}",
            last_error.map(|e| format!(": {e}")).unwrap_or_default()
        ));
    }
    out.sort();
    Ok(out)
}

/// How long one request to Tryton may take (`ERP_TOOLS_REMOTE_TIMEOUT_MS`, default 10 s).
fn timeout() -> Duration {
    remote::request_timeout()
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,rmcp=warn".into()),
        )
        .init();
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let tryton = tryton::Tryton::from_env(timeout())?;
    let identity = IdentityConfig::from_env()
        .map(|c| c.for_resource(&cli.resource))
        .map_err(|e| e.to_string())?;
    match cli.command {
        Command::Serve { addr } => {
            let registry = Arc::new(registry()?);
            let db = Database::open(&cli.db)
                .await
                .map_err(|e| format!("cannot open {}: {e}", cli.db))?;
            let authenticator = match identity.keys() {
                KeysFrom::SharedSecret(tokens) => {
                    let branches = branches(&tryton).await?;
                    Authenticator::shared_secret(tokens.clone().with_branches(branches))
                }
                _ => Authenticator::from_config(identity)
                    .await
                    .map_err(|e| e.to_string())?,
            };
            purchasing::install(tryton);
            // The pending keys of calls a stopped process left, looked up by their marker
            // beside the server: it listens at once, /readyz tells the progress, and a
            // retry meanwhile is exactly-once all the same.
            let lookup: Arc<dyn RemoteLookup> = Arc::new(purchasing::PurchaseLookup);
            let reconciliation = remote::reconcile_in_background(
                db.clone(),
                vec![("purchasing_draft_purchase".into(), lookup)],
                1000,
                timeout() * 3,
            );
            let pass = reconciliation.clone();
            tokio::spawn(async move {
                match pass.finished().await {
                    Ok(done) => eprintln!(
                        "tryton: reconciled pending drafts at start-up: {} found in Tryton, {} freed, {} left pending",
                        done.found, done.released, done.unresolved
                    ),
                    Err(e) => {
                        eprintln!("tryton: the start-up reconcile of remote drafts failed: {e}")
                    }
                }
            });
            let runtime = ToolRuntime::new(registry, db.clone());
            let authenticator_for_console = authenticator.clone();
            let config = HttpConfig::from_authenticator(authenticator)
                .with_rate_limit(None)
                .with_reconciliation(reconciliation);
            let options = config.serve_options();
            let console = review::console(authenticator_for_console, db.clone());
            let router = erp_tools_core::mcp::router(runtime, config).nest("/review", console);
            eprintln!(
                "tryton: MCP over streamable HTTP at http://{addr}/mcp, review console at \
                 http://{addr}/review (store {})",
                cli.db
            );
            let served = erp_tools_core::mcp::serve_http(addr, router, options)
                .await
                .map_err(|e| format!("cannot serve on {addr}: {e}"));
            db.close().await;
            served
        }
        Command::Token {
            user,
            branch,
            scopes,
            run,
            ttl_minutes,
        } => {
            let KeysFrom::SharedSecret(tokens) = identity.keys() else {
                return Err(
                    "ERP_TOOLS_ISSUER is set: tokens come from that identity provider".into(),
                );
            };
            let branches = branches(&tryton).await?;
            let Some((branch_id, _)) = branches.iter().find(|(_, c)| *c == branch) else {
                let known: Vec<&str> = branches.iter().map(|(_, c)| c.as_str()).collect();
                return Err(format!(
                    "unknown branch `{branch}`; Tryton's companies are {}",
                    known.join(", ")
                ));
            };
            if !tryton.subjects().contains(&user.as_str()) {
                return Err(format!("`{user}` has no key in ERP_TOOLS_TRYTON_KEYS"));
            }
            // Every request runs inside the token's branch: it must be one of the
            // person's own Tryton companies.
            let own = tryton
                .own_companies(&user)
                .await
                .map_err(|e| format!("cannot read {user}'s Tryton companies: {e}"))?;
            if !own.contains(branch_id) {
                let theirs: Vec<&str> = branches
                    .iter()
                    .filter(|(id, _)| own.contains(id))
                    .map(|(_, c)| c.as_str())
                    .collect();
                return Err(format!(
                    "`{user}` is not a user of {branch} in Tryton; their companies are {}",
                    if theirs.is_empty() {
                        "none".to_string()
                    } else {
                        theirs.join(", ")
                    }
                ));
            }
            let known = ["purchasing:read", "purchasing:draft"]
                .into_iter()
                .chain(review::REVIEW_SCOPES);
            let known: Vec<&str> = known.collect();
            if let Some(bad) = scopes.iter().find(|s| !known.contains(&s.as_str())) {
                return Err(format!(
                    "unknown scope `{bad}`; the example's scopes are {}",
                    known.join(", ")
                ));
            }
            let mut builder = Principal::builder(user, *branch_id, branch).scopes(scopes);
            if let Some(run) = run {
                builder = builder.agent_run_id(run);
            }
            let tokens = tokens.clone().with_branches(branches);
            println!(
                "{}",
                auth::mint(
                    &tokens,
                    &builder.build(),
                    Duration::from_secs(ttl_minutes * 60)
                )
            );
            Ok(())
        }
    }
}
