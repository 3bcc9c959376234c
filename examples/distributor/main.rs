//! A small multi-branch distributor ERP served to AI agents over MCP.
//!
//! ```text
//! cargo run --example distributor                       # HTTP on 127.0.0.1:8765/mcp, SQLite file
//! cargo run --example distributor -- serve --stdio      # stdio, identity from ERP_TOOLS_TOKEN
//! cargo run --example distributor -- token --user 7 --branch SBY-01 --scopes purchasing:read,purchasing:draft
//! cargo run --example distributor -- export --target openai
//! cargo run --example distributor -- report
//! cargo run --example distributor -- lock --check examples/distributor/tools.lock
//! ERP_TOOLS_ISSUER=https://id.example.com/realms/erp ERP_TOOLS_RESOURCE=https://erp.example.com/mcp \
//!     cargo run --example distributor -- serve --addr 0.0.0.0:8765   # tokens from your provider
//! cargo run --example distributor -- agent --user 7 --branch SBY-01   # the loop; pauses for approval
//! cargo run --example distributor -- resume --approval 1              # resume an approved action
//! ```
//!
//! `serve` also serves the review console at http://127.0.0.1:8765/review (sign in with a
//! token carrying review:read and review:approve); approving there resumes the run.

mod app;
mod audit;
mod buying;
mod data;
mod identity;
mod inventory;
mod printing;
mod purchasing;
mod review;
mod scale;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use erp_tools_core::auth::{self, Authenticator, IdentityConfig, KeysFrom, TokenConfig};
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
    /// Print the tool surface lock (every tool as a model is given it, and its
    /// fingerprint), or write it to a file, or check a committed one.
    Lock {
        /// Write the lock to this file (after the change was reviewed).
        #[arg(long)]
        write: Option<std::path::PathBuf>,
        /// Compare the compiled surface with this lock; fail printing what changed.
        #[arg(long, conflicts_with = "write")]
        check: Option<std::path::PathBuf>,
    },
    /// Run the agent loop with a scripted model (no network) on a reorder task; its draft
    /// waits for a reviewer's approval in the console.
    Agent {
        /// User id the agent acts for.
        #[arg(long, default_value = "7")]
        user: String,
        /// Branch code.
        #[arg(long, default_value = "SBY-01")]
        branch: String,
        /// Milliseconds the scripted model takes before each answer, as a hosted one does.
        #[arg(long, default_value_t = 0)]
        think_ms: u64,
    },
    /// Resume the run of an approved action (the console's approve does this too).
    Resume {
        /// The approval's id, as the console shows it.
        #[arg(long)]
        approval: i64,
    },
    /// Check the audit log's hash chains: prints the first row altered, inserted or
    /// removed in each chain (exit status 1 if any), or that the log is intact.
    Verify {
        /// Chain heads exported earlier with `chain-heads` (a JSON file), checked too: a
        /// chain that now ends before one of them was cut.
        #[arg(long, conflicts_with = "digests")]
        heads: Option<std::path::PathBuf>,
        /// A directory of signed audit digests (ERP_TOOLS_DIGEST_DIR of the server): the
        /// log is checked against them too.
        #[arg(long, requires = "public_key")]
        digests: Option<std::path::PathBuf>,
        /// The digests' public key: a file of 64 hex digits (`digest-key` prints it).
        #[arg(long, requires = "digests")]
        public_key: Option<std::path::PathBuf>,
        /// Where the archive files are now, if not where their claims say.
        #[arg(long, requires = "digests")]
        archives: Option<std::path::PathBuf>,
    },
    /// Print a new digest signing key (for ERP_TOOLS_DIGEST_KEY) and its public key (for
    /// `verify --public-key`).
    DigestKey,
    /// Print the last link of every audit chain as JSON, for an auditor to keep
    /// elsewhere and give back to `verify --heads`.
    ChainHeads,
    /// Add a data set at ERP scale (vendors, items with stock, orders with lines), to try
    /// the paged list tools and the result budget on.
    Seed {
        /// Vendors to add.
        #[arg(long, default_value_t = 10_000)]
        vendors: usize,
        /// Items to add, each with stock in every warehouse.
        #[arg(long, default_value_t = 100_000)]
        items: usize,
        /// Purchase orders to add.
        #[arg(long, default_value_t = 100_000)]
        orders: usize,
        /// Purchase order lines to add, spread over the orders.
        #[arg(long, default_value_t = 1_000_000)]
        order_lines: usize,
    },
}

/// The framework's development defaults: tokens minted by `token` without `--resource`
/// are for the server `serve` starts without `--addr`.
const DEFAULT_ADDR: &str = auth::DEV_ADDR;
const DEFAULT_RESOURCE: &str = auth::DEV_AUDIENCE;

/// Who may call, from the environment (`erp_tools_core::auth::IdentityConfig::from_env`):
/// `ERP_TOOLS_ISSUER` for the team's identity provider, `ERP_TOOLS_SIGNING_KEY` (and
/// `ERP_TOOLS_SIGNING_ISSUER`) for a shared HS256 secret, the clearly labelled
/// development key otherwise. Tokens are for `resource`.
fn identity_config(resource: &str) -> Result<IdentityConfig, String> {
    IdentityConfig::from_env()
        .map(|c| c.for_resource(resource))
        .map_err(|e| e.to_string())
}

/// The HS256 settings of a shared-secret configuration, with the ERP's branches so a
/// token's `branch_code` must be its `branch_id`'s.
async fn shared_tokens(
    config: &IdentityConfig,
    db: &erp_tools_core::Database,
) -> Result<Option<TokenConfig>, String> {
    let KeysFrom::SharedSecret(tokens) = config.keys() else {
        return Ok(None);
    };
    let branches = identity::branches(db).await.map_err(|e| e.to_string())?;
    Ok(Some(tokens.clone().with_branches(branches)))
}

/// Verifies every token as configured: the provider's JWTs resolved through the users
/// table, or HS256 tokens read as signed.
async fn authenticator(
    config: IdentityConfig,
    db: &erp_tools_core::Database,
) -> Result<Authenticator, String> {
    identity::prepare(db)
        .await
        .map_err(|e| format!("cannot prepare the users table: {e}"))?;
    match shared_tokens(&config, db).await? {
        // The verified-token cache as configured (`ERP_TOOLS_TOKEN_CACHE_SECS`).
        Some(tokens) => {
            let (ttl, capacity) = config.token_cache();
            let config = IdentityConfig::shared_secret(tokens).with_token_cache(ttl, capacity);
            Authenticator::from_config(config)
                .await
                .map_err(|e| e.to_string())
        }
        None => {
            let issuer = config.issuer().to_string();
            let authenticator = Authenticator::from_config(config)
                .await
                .map_err(|e| format!("ERP_TOOLS_ISSUER {issuer}: {e}"))?;
            Ok(authenticator.with_resolver(identity::ErpUsers::new(db.clone())))
        }
    }
}

/// The id of the branch `code`, or what to write instead.
async fn branch_id(db: &erp_tools_core::Database, code: &str) -> Result<i64, String> {
    data::branch_id(db, code)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("unknown branch `{code}`; the example has SBY-01 and JKT-01"))
}

/// The per-caller limit on tool calls: the framework's default (120 a minute, 30 at
/// once), or `ERP_TOOLS_RATE_LIMIT=<per minute>,<burst>`, or `off` (benchmarks, load tests).
fn rate_limit_from_env() -> Result<Option<erp_tools_core::mcp::RateLimit>, String> {
    let Ok(value) = std::env::var("ERP_TOOLS_RATE_LIMIT") else {
        return Ok(Some(erp_tools_core::mcp::RateLimit::default()));
    };
    if value.trim() == "off" {
        return Ok(None);
    }
    let parsed = value.split_once(',').and_then(|(per_minute, burst)| {
        Some(erp_tools_core::mcp::RateLimit {
            per_minute: per_minute.trim().parse().ok().filter(|n| *n > 0)?,
            burst: burst.trim().parse().ok().filter(|n| *n > 0)?,
        })
    });
    parsed.map(Some).ok_or_else(|| {
        format!(
            "ERP_TOOLS_RATE_LIMIT={value}: write `<calls per minute>,<burst>` (e.g. 120,30) \
             or `off`"
        )
    })
}

/// `config` sealing questions' `requestState`s with `ERP_TOOLS_REQUEST_STATE_KEY` (32
/// characters or more, the same on every replica), or with a random key of this process
/// when it is not set.
fn with_request_state_key(config: HttpConfig) -> Result<HttpConfig, String> {
    let Ok(key) = std::env::var("ERP_TOOLS_REQUEST_STATE_KEY") else {
        return Ok(config);
    };
    config
        .with_request_state_key(key.as_bytes(), erp_tools_core::mcp::DEFAULT_INPUT_TTL)
        .map_err(|e| {
            format!(
                "ERP_TOOLS_REQUEST_STATE_KEY: {e}; give 32 characters or more (e.g. `openssl \
                 rand -hex 32`), the same on every replica"
            )
        })
}

/// `runtime` writing a read's `attempt` audit row once it has run
/// `ERP_TOOLS_READ_ATTEMPT_AFTER_MS` milliseconds (`0`: before it goes on, as drafts do),
/// or after the framework's default (100 ms) when it is not set.
fn with_read_attempt_after(runtime: ToolRuntime) -> Result<ToolRuntime, String> {
    let Ok(value) = std::env::var("ERP_TOOLS_READ_ATTEMPT_AFTER_MS") else {
        return Ok(runtime);
    };
    let millis: u64 = value.trim().parse().map_err(|_| {
        format!(
            "ERP_TOOLS_READ_ATTEMPT_AFTER_MS={value}: write a number of milliseconds, e.g. 1000"
        )
    })?;
    Ok(runtime.with_read_attempt_after(std::time::Duration::from_millis(millis)))
}

/// `runtime` sealing page cursors with `ERP_TOOLS_CURSOR_KEY` (32 characters or more, the
/// same on every replica), or with a random key of this process when it is not set.
fn with_cursor_key(runtime: ToolRuntime) -> Result<ToolRuntime, String> {
    let Ok(key) = std::env::var("ERP_TOOLS_CURSOR_KEY") else {
        return Ok(runtime);
    };
    runtime
        .with_cursor_key(key.as_bytes(), erp_tools_core::DEFAULT_CURSOR_TTL)
        .map_err(|e| {
            format!(
                "ERP_TOOLS_CURSOR_KEY: {e}; give 32 characters or more (e.g. `openssl rand \
                 -hex 32`), the same on every replica"
            )
        })
}

/// The log filter unless `RUST_LOG` is set: `info`, with rmcp at `warn` (at `info` it
/// logs the client's whole `peer_info` for every session).
#[cfg_attr(feature = "otel", allow(dead_code))]
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

#[tokio::main]
async fn main() -> ExitCode {
    // Built with `--features otel`: the log on stderr plus traces and metrics over OTLP,
    // configured by the OTEL_* variables (see the guide, guide/src/telemetry.md).
    #[cfg(feature = "otel")]
    let _otel = match erp_tools_core::telemetry::init_otel() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Logs go to stderr: stdout carries the MCP stdio transport and command output.
    #[cfg(not(feature = "otel"))]
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| DEFAULT_LOG_FILTER.into()),
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
            let identity = identity_config(&cli.resource)?;
            let db = app::open_db(&cli.db).await?;
            let caller = authenticator(identity, &db)
                .await?
                .authenticate(token.trim())
                .await
                .map_err(|e| format!("ERP_TOOLS_TOKEN: {e}"))?;
            let runtime =
                with_read_attempt_after(with_cursor_key(ToolRuntime::new(registry, db.clone()))?)?;
            let served = erp_tools_core::mcp::serve_stdio(runtime, caller).await;
            db.close().await;
            served.map(|_| ()).map_err(|e| e.to_string())
        }
        Command::Serve { stdio: false, addr } => {
            let identity = identity_config(&cli.resource)?;
            let db = app::open_db(&cli.db).await?;
            let authenticator = authenticator(identity, &db).await?;
            let runtime = with_cursor_key(ToolRuntime::new(registry.clone(), db.clone()))?;
            let runtime = with_read_attempt_after(runtime)?;
            let agent = Arc::new(review::agent(registry.clone(), db.clone())?);
            // Runs cut off by a dead process (an `agent` command killed mid-run, another
            // server) go on here.
            let worker = review::take_over_worker(&agent, Duration::from_secs(15));
            let console = review::console(authenticator.clone(), agent.clone(), &registry)?;
            let provider = authenticator.authorization_servers();
            let config = with_request_state_key(
                HttpConfig::from_authenticator(authenticator)
                    .with_rate_limit(rate_limit_from_env()?)
                    .with_apps(review::apps(agent, &cli.resource)?),
            )?;
            let options = config.serve_options();
            let router = erp_tools_core::mcp::router(runtime, config).nest("/review", console);
            eprintln!(
                "distributor: MCP over streamable HTTP at http://{addr}/mcp, review console at \
                 http://{addr}/review (database {})",
                cli.db
            );
            match provider.first() {
                Some(issuer) => {
                    eprintln!("distributor: tokens from the identity provider {issuer}")
                }
                None => eprintln!(
                    "distributor: mint a token with `cargo run --example distributor -- token --user 7 --branch SBY-01 --scopes purchasing:read,purchasing:draft,inventory:read`"
                ),
            }
            let served = erp_tools_core::mcp::serve_http(addr, router, options)
                .await
                .map_err(|e| format!("cannot serve on {addr}: {e}"));
            // Lets a take-over under way finish, then commits the audit rows still queued.
            worker.stop().await;
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
            // Minting a token is not serving: the development key's warning is for `serve`.
            let identity = tracing::subscriber::with_default(
                tracing::subscriber::NoSubscriber::default(),
                || identity_config(&cli.resource),
            )?;
            let db = app::open_db(&cli.db).await?;
            let Some(tokens) = shared_tokens(&identity, &db).await? else {
                return Err(format!(
                    "ERP_TOOLS_ISSUER is set ({}): tokens come from that identity provider, \
                     and this server refuses development tokens. Unset it to mint one.",
                    identity.issuer()
                ));
            };
            let branch_id = branch_id(&db, &branch).await?;
            let known: Vec<&str> = registry
                .tools()
                .iter()
                .flat_map(|t| t.def().scopes().iter().copied())
                .chain(review::REVIEW_SCOPES)
                .collect();
            if let Some(bad) = scopes.iter().find(|s| !known.contains(&s.as_str())) {
                return Err(format!(
                    "unknown scope `{bad}`; the example's scopes are purchasing:read, purchasing:draft, inventory:read, review:read, review:approve"
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
        Command::Agent {
            user,
            branch,
            think_ms,
        } => {
            let db = app::open_db(&cli.db).await?;
            let branch_id = branch_id(&db, &branch).await?;
            let agent = review::agent(registry, db.clone())?;
            let principal = review::agent_principal(&user, branch_id, &branch);
            let think = Duration::from_millis(think_ms);
            let out = review::run_agent(&agent, &principal, think).await;
            // Commits the audit rows (and writes the last digest, if on).
            db.close().await;
            print_out(&out?);
            Ok(())
        }
        Command::Resume { approval } => {
            let db = app::open_db(&cli.db).await?;
            let agent = review::agent(registry, db)?;
            let queue = agent.queue().ok_or("no approval queue")?;
            let stored = queue
                .get(approval)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("there is no approval {approval}"))?;
            let out = review::resume(&agent, &stored).await?;
            print_out(&review::resumed_text(&out));
            Ok(())
        }
        Command::Export { target } => {
            let value = match target {
                Target::OpenAi => erp_tools_core::export::openai_tools(&registry),
                Target::Anthropic => erp_tools_core::export::anthropic_tools(&registry),
                Target::Mcp => erp_tools_core::export::mcp_tools(&registry),
            };
            let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
            print_out(&text);
            Ok(())
        }
        Command::Seed {
            vendors,
            items,
            orders,
            order_lines,
        } => {
            let db = app::open_db(&cli.db).await?;
            let scale = scale::Scale {
                vendors,
                items,
                orders,
                order_lines,
            };
            let started = std::time::Instant::now();
            scale::seed(&db, scale)
                .await
                .map_err(|e| format!("cannot seed {}: {e}", cli.db))?;
            db.close().await;
            eprintln!(
                "distributor: added {vendors} vendors, {items} items, {orders} orders and \
                 {order_lines} order lines to {} in {:.1} s",
                cli.db,
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Lock { write, check } => {
            let lock = erp_tools_core::lock::SurfaceLock::new(&registry);
            if let Some(path) = check {
                erp_tools_core::lock::check_lock(&registry, &path).map_err(|e| {
                    format!(
                        "{e}\nOr: cargo run --example distributor -- lock --write {}",
                        path.display()
                    )
                })?;
                print_out(&format!(
                    "{} matches the compiled surface ({})",
                    path.display(),
                    registry.fingerprint()
                ));
                return Ok(());
            }
            match write {
                Some(path) => {
                    std::fs::write(&path, lock.to_text())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    print_out(&format!(
                        "wrote {} ({})",
                        path.display(),
                        registry.fingerprint()
                    ));
                }
                None => print_out(lock.to_text().trim_end()),
            }
            Ok(())
        }
        Command::Verify {
            digests: Some(dir),
            public_key: Some(key),
            archives,
            ..
        } => audit::verify_digests(&cli.db, &dir, &key, archives.as_deref()).await,
        Command::Verify { heads, .. } => audit::verify(&cli.db, heads.as_deref()).await,
        Command::DigestKey => {
            let key = erp_tools_core::DigestKey::generate();
            print_out(&format!(
                "secret (ERP_TOOLS_DIGEST_KEY): {}",
                key.secret_hex()
            ));
            print_out(&format!(
                "public (verify --public-key): {}",
                key.public_key_hex()
            ));
            Ok(())
        }
        Command::ChainHeads => audit::chain_heads(&cli.db).await,
        Command::Report => {
            let report = erp_tools_core::report::SurfaceReport::new(&registry);
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
pub(crate) fn print_out(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}
