//! Benchmark 8: one read over HTTP, where users meet the server.
//!
//! Serves the distributor example's `inventory_get_stock` (the same three SQLite
//! statements on a copy of the same seeded database) three ways and loads each over
//! loopback with Debian's `wrk`, the same stateless 2026-07-28 `tools/call` request at
//! every connection count:
//!
//! - `example`: the built example (`cargo build --release --example distributor`) with
//!   everything on (token verification, Origin checks, admission, strict validation, the
//!   audit rows, metrics, spans), its per-caller rate limit off;
//! - `rmcp`: bare `rmcp` streamable HTTP with the same tool and no audit (`rmcp_stock`);
//! - `rmcp_audit`: the same, each call's row handed to erp-tools' audit writer and the
//!   answer held until it is durable: the floor of the same guarantee;
//! - `baseline` (with `--baseline`): another build of the example, an earlier commit say.
//!
//! Every server is started fresh on a fresh copy of the database for each measurement; the
//! variants' order rotates between repetitions and connection counts. Ratios are taken
//! within a repetition (same minute, same machine load), then summarised.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use erp_tools_benches::stats::{Summary, emit_json};
use erp_tools_benches::wrk::{self, Measured, Request};
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "One read over HTTP: the example against bare rmcp, loaded with wrk")]
struct Args {
    /// The distributor binary; default `target/release/examples/distributor`.
    #[arg(long)]
    binary: Option<PathBuf>,
    /// The bare rmcp server; default `rmcp_stock` beside this binary.
    #[arg(long)]
    rmcp_binary: Option<PathBuf>,
    /// Another build of the example measured in the same run (the variant `baseline`).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Connection counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    connections: Vec<usize>,
    /// Seconds of load per measurement.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Seconds of unmeasured load before each measurement (0 for none).
    #[arg(long, default_value_t = 2)]
    warmup: u64,
    /// Repetitions of every (variant, connections) pair.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Also the floor with SQLite's `synchronous = NORMAL` (`rmcp_audit_normal`) and
    /// without the audit hash chain (`rmcp_audit_no_chain`): what each costs the floor.
    #[arg(long)]
    floor_breakdown: bool,
    /// Proves the benchmark runs (CI): connections 1 and 4, 1 s each, no warm-up, one
    /// repetition. The figures mean nothing.
    #[arg(long)]
    smoke: bool,
    /// Also the example with each read-path change turned off: the attempt row written
    /// before every read that waits (`example_attempt_first`), every request's token
    /// verified (`example_verify_every`), both (`example_neither`).
    #[arg(long)]
    changes: bool,
    /// Only these variants (comma-separated names, e.g. `example,baseline,rmcp_audit`);
    /// the ratios need `rmcp` and `rmcp_audit`, which are always kept.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

const USER: &str = "7";
const BRANCH: &str = "SBY-01";
const TOOL: &str = "inventory_get_stock";

/// How a variant is started.
#[derive(Clone)]
enum Kind {
    /// A build of the example: its binary, its seeded database template and the `wrk`
    /// script with a token it minted.
    Example {
        binary: PathBuf,
        template: PathBuf,
        token: String,
        script: PathBuf,
        /// Environment the server is started with (a change turned off).
        env: &'static [(&'static str, &'static str)],
    },
    /// `rmcp_stock` with `--audit` and the extra flags given, on the current example's
    /// template.
    Rmcp {
        audit: &'static str,
        flags: &'static [&'static str],
    },
}

#[derive(Clone)]
struct Variant {
    name: &'static str,
    kind: Kind,
}

/// Kills the server when dropped, even if a step panics.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn example_command(binary: &Path, dir: &Path, resource: &str) -> Command {
    let mut cmd = Command::new(binary);
    cmd.args([
        "--db",
        &format!("sqlite://{}", dir.join("distributor.db").display()),
    ])
    .args(["--resource", resource])
    .env_remove("ERP_TOOLS_SIGNING_KEY")
    .env_remove("ERP_TOOLS_ISSUER")
    .env_remove("ERP_TOOLS_DB")
    .env_remove("ERP_TOOLS_RESOURCE")
    .env_remove("ERP_TOOLS_READ_ATTEMPT_AFTER_MS")
    .env_remove("ERP_TOOLS_TOKEN_CACHE_SECS")
    .env("RUST_LOG", "warn");
    cmd
}

/// Creates and seeds the example's database in `dir` (its `token` command does) and
/// returns a development token for the benchmark's caller, for `resource`.
fn seed_and_mint(binary: &Path, dir: &Path, resource: &str) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let minted = example_command(binary, dir, resource)
        .args(["token", "--user", USER, "--branch", BRANCH])
        .args(["--scopes", "inventory:read", "--ttl-minutes", "600"])
        .output()
        .map_err(|e| format!("run {} token: {e}", binary.display()))?;
    if !minted.status.success() {
        return Err(format!(
            "{} token failed: {}",
            binary.display(),
            String::from_utf8_lossy(&minted.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&minted.stdout).trim().to_string())
}

/// A fresh copy of the database files in `template`.
fn copy_template(template: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(template).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        std::fs::copy(entry.path(), to.join(entry.file_name())).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Starts `variant` on `port` with a fresh copy of its database under `dir`.
fn start(
    variant: &Variant,
    rmcp: &Path,
    current_template: &Path,
    dir: &Path,
    port: u16,
    resource: &str,
) -> Result<Server, String> {
    let mut cmd = match &variant.kind {
        Kind::Example {
            binary,
            template,
            env,
            ..
        } => {
            copy_template(template, dir)?;
            let mut cmd = example_command(binary, dir, resource);
            cmd.args(["serve", "--addr", &format!("127.0.0.1:{port}")])
                .env("ERP_TOOLS_RATE_LIMIT", "off")
                .envs(env.iter().copied());
            cmd
        }
        Kind::Rmcp { audit, flags } => {
            copy_template(current_template, dir)?;
            let mut cmd = Command::new(rmcp);
            cmd.args([
                "--db",
                &format!("sqlite://{}", dir.join("distributor.db").display()),
            ])
            .args(["--addr", &format!("127.0.0.1:{port}")])
            .args(["--audit", audit, "--user", USER, "--branch", BRANCH])
            .args(flags.iter())
            .env("RUST_LOG", "warn");
            cmd
        }
    };
    let server = Server(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {}: {e}", variant.name))?,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(format!("{} did not start listening", variant.name));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(server)
}

/// CPU time (user and system, every thread) the process `pid` has used so far, in
/// microseconds, from `/proc/<pid>/stat`; `None` where there is no `/proc`.
fn cpu_micros(pid: u32, ticks_per_second: f64) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces) closed by the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    (ticks_per_second > 0.0).then(|| ticks * 1e6 / ticks_per_second)
}

/// The clock ticks per second `/proc` counts CPU time in (`getconf CLK_TCK`).
fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// The request every variant gets, with `token` (bare rmcp ignores it).
fn request_parts(token: &str) -> (Vec<(&'static str, String)>, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": {"item_code": "BRG-0042", "warehouse_code": null},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let headers = vec![
        ("Content-Type", "application/json".to_string()),
        ("Accept", "application/json, text/event-stream".to_string()),
        ("MCP-Protocol-Version", "2026-07-28".to_string()),
        ("Mcp-Method", "tools/call".to_string()),
        ("Mcp-Name", TOOL.to_string()),
        ("Authorization", format!("Bearer {token}")),
    ];
    (headers, body.to_string())
}

/// One call before the load: the variant must answer the stock, not an error.
async fn preflight(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &str,
) -> Result<(), String> {
    let mut request = http.post(url).body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    let answered = status.is_success()
        && text.contains("SBY-WH1")
        && !text.contains("\"isError\":true")
        && !text.contains("\"error\":");
    if answered {
        Ok(())
    } else {
        Err(format!("{url} answered {status}: {text}"))
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn summary(values: impl Iterator<Item = f64>) -> Value {
    json!(Summary::of(&values.collect::<Vec<_>>()))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(mut args: Args) -> Result<(), String> {
    if args.smoke {
        (args.connections, args.seconds, args.warmup, args.reps) = (vec![1, 4], 1, 0, 1);
    }
    if args.connections.is_empty() || args.connections.contains(&0) || args.reps == 0 {
        return Err("--connections must be positive counts and --reps at least 1".into());
    }
    if args.seconds == 0 {
        return Err("--seconds must be at least 1".into());
    }
    if !wrk::available() {
        return Err("wrk is not installed: apt-get install wrk".into());
    }
    let here = std::env::current_exe().map_err(|e| e.to_string())?;
    let profile_dir = here.parent().ok_or("no directory of this binary")?;
    let binary = args
        .binary
        .clone()
        .unwrap_or_else(|| profile_dir.join("examples/distributor"));
    let rmcp = args
        .rmcp_binary
        .clone()
        .unwrap_or_else(|| profile_dir.join("rmcp_stock"));
    for (what, path) in [("--binary", Some(&binary)), ("--rmcp-binary", Some(&rmcp))]
        .into_iter()
        .chain([("--baseline", args.baseline.as_ref())])
    {
        if let Some(path) = path.filter(|p| !p.exists()) {
            return Err(format!(
                "{what} {} not found; build it with `cargo build --release -p erp-tools-core \
                 --example distributor` and `cargo build --release -p erp-tools-benches --bins`",
                path.display()
            ));
        }
    }

    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    // One port for every variant: the example's tokens name the resource, port included.
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // Each build of the example seeds its own database (its own migrations) and mints
    // its own token; bare rmcp ignores the token and serves the current example's copy.
    let example_kind = |name: &str, binary: &Path| -> Result<Kind, String> {
        let template = root.path().join(format!("template-{name}"));
        let token = seed_and_mint(binary, &template, &resource)?;
        let script = root.path().join(format!("request-{name}.lua"));
        let (headers, body) = request_parts(&token);
        std::fs::write(
            &script,
            wrk::script(&Request {
                url: &resource,
                headers: &headers,
                body: &body,
            }),
        )
        .map_err(|e| e.to_string())?;
        Ok(Kind::Example {
            binary: binary.to_path_buf(),
            template,
            token,
            script,
            env: &[],
        })
    };
    let current = example_kind("example", &binary)?;
    let Kind::Example {
        template,
        token: current_token,
        script: current_script,
        ..
    } = current.clone()
    else {
        unreachable!("an example kind")
    };
    let mut variants = vec![Variant {
        name: "example",
        kind: current.clone(),
    }];
    if args.changes {
        // The example (one audit write per read ending within 100 ms, tokens remembered)
        // beside a read's attempt row first, every token verified, and both of those.
        let changes: [(&'static str, &'static [(&'static str, &'static str)]); 3] = [
            (
                "example_attempt_first",
                &[("ERP_TOOLS_READ_ATTEMPT_AFTER_MS", "0")],
            ),
            (
                "example_verify_every",
                &[("ERP_TOOLS_TOKEN_CACHE_SECS", "0")],
            ),
            (
                "example_neither",
                &[
                    ("ERP_TOOLS_READ_ATTEMPT_AFTER_MS", "0"),
                    ("ERP_TOOLS_TOKEN_CACHE_SECS", "0"),
                ],
            ),
        ];
        for (name, off) in changes {
            let mut kind = current.clone();
            if let Kind::Example { env, .. } = &mut kind {
                *env = off;
            }
            variants.push(Variant { name, kind });
        }
    }
    if let Some(baseline) = &args.baseline {
        variants.push(Variant {
            name: "baseline",
            kind: example_kind("baseline", baseline)?,
        });
    }
    variants.push(Variant {
        name: "rmcp",
        kind: Kind::Rmcp {
            audit: "none",
            flags: &[],
        },
    });
    variants.push(Variant {
        name: "rmcp_audit",
        kind: Kind::Rmcp {
            audit: "writer",
            flags: &[],
        },
    });
    if args.floor_breakdown {
        let breakdown: [(&'static str, &'static [&'static str]); 2] = [
            ("rmcp_audit_normal", &["--synchronous-normal"]),
            ("rmcp_audit_no_chain", &["--no-chain"]),
        ];
        for (name, flags) in breakdown {
            variants.push(Variant {
                name,
                kind: Kind::Rmcp {
                    audit: "writer",
                    flags,
                },
            });
        }
    }
    if !args.only.is_empty() {
        let known: Vec<&str> = variants.iter().map(|v| v.name).collect();
        if let Some(unknown) = args.only.iter().find(|n| !known.contains(&n.as_str())) {
            return Err(format!(
                "--only {unknown}: no such variant here; the variants are {}",
                known.join(", ")
            ));
        }
        variants.retain(|v| {
            matches!(v.name, "rmcp" | "rmcp_audit") || args.only.iter().any(|n| n == v.name)
        });
    }
    let ticks = clock_ticks();
    // No pooled connection: each measurement's server is a new process on the same port.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| e.to_string())?;

    // results[variant][connections index] = one Measured per repetition.
    let mut results: Vec<Vec<Vec<Measured>>> =
        vec![vec![Vec::new(); args.connections.len()]; variants.len()];
    let mut serial = 0;
    for rep in 0..args.reps {
        for (ci, &connections) in args.connections.iter().enumerate() {
            for k in 0..variants.len() {
                let vi = (k + rep + ci) % variants.len();
                let variant = &variants[vi];
                serial += 1;
                let dir = root.path().join(format!("run-{serial}"));
                let server = start(variant, &rmcp, &template, &dir, port, &resource)?;
                let (token, script) = match &variant.kind {
                    Kind::Example { token, script, .. } => (token, script),
                    Kind::Rmcp { .. } => (&current_token, &current_script),
                };
                let (headers, body) = request_parts(token);
                preflight(&http, &resource, &headers, &body)
                    .await
                    .map_err(|e| format!("{}: {e}", variant.name))?;
                if args.warmup > 0 {
                    wrk::run(
                        script,
                        &resource,
                        connections,
                        Duration::from_secs(args.warmup),
                    )?;
                }
                let cpu_before = cpu_micros(server.0.id(), ticks);
                let mut m = wrk::run(
                    script,
                    &resource,
                    connections,
                    Duration::from_secs(args.seconds),
                )?;
                if let (Some(before), Some(after)) = (cpu_before, cpu_micros(server.0.id(), ticks))
                    && m.requests > 0
                {
                    m.server_cpu_us = Some((after - before) / m.requests as f64);
                }
                drop(server);
                let _ = std::fs::remove_dir_all(&dir);
                eprintln!(
                    "rep {} c={connections:<3} {:<10} {:>8.0}/s  p50 {:>6.2} ms  p99 {:>6.2} ms  \
                     cpu {:>5.0} µs/read  load {}{}",
                    rep + 1,
                    variant.name,
                    m.per_second,
                    m.p50_ms,
                    m.p99_ms,
                    m.server_cpu_us.unwrap_or(f64::NAN),
                    load_average(),
                    if m.non_2xx + m.socket_errors > 0 {
                        format!(
                            "  ({} non-2xx, {} socket errors)",
                            m.non_2xx, m.socket_errors
                        )
                    } else {
                        String::new()
                    }
                );
                if m.non_2xx > 0 {
                    return Err(format!(
                        "{}: {} answers were not 2xx",
                        variant.name, m.non_2xx
                    ));
                }
                results[vi][ci].push(m);
            }
        }
    }

    let index = |name: &str| variants.iter().position(|v| v.name == name);
    let (rmcp_i, floor_i) = (
        index("rmcp").expect("rmcp"),
        index("rmcp_audit").expect("floor"),
    );
    let baseline_i = index("baseline");
    let mut out_connections = Vec::new();
    eprintln!(
        "| connections | variant | reads/s (median, min–max) | p50 ms | p99 ms | server CPU µs/read | × rmcp | × rmcp+audit | p99 × rmcp+audit | × baseline | p99 × baseline |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (ci, &connections) in args.connections.iter().enumerate() {
        let mut per_variant = serde_json::Map::new();
        for (vi, variant) in variants.iter().enumerate() {
            let runs = &results[vi][ci];
            // Ratios within each repetition, against the baselines of the same repetition.
            let ratio = |of: usize, f: fn(&Measured) -> f64| {
                summary(runs.iter().zip(&results[of][ci]).map(|(a, b)| f(a) / f(b)))
            };
            let entry = json!({
                "runs": runs,
                "per_second": summary(runs.iter().map(|m| m.per_second)),
                "p50_ms": summary(runs.iter().map(|m| m.p50_ms)),
                "p99_ms": summary(runs.iter().map(|m| m.p99_ms)),
                "server_cpu_us": summary(runs.iter().filter_map(|m| m.server_cpu_us)),
                "over_rmcp": ratio(rmcp_i, |m| m.per_second),
                "over_rmcp_audit": ratio(floor_i, |m| m.per_second),
                "p99_over_rmcp_audit": ratio(floor_i, |m| m.p99_ms),
                "over_baseline": baseline_i.map(|b| ratio(b, |m| m.per_second)),
                "p99_over_baseline": baseline_i.map(|b| ratio(b, |m| m.p99_ms)),
            });
            let median = |key: &str| entry[key]["median"].as_f64().unwrap_or(f64::NAN);
            let range = |key: &str| {
                format!(
                    "{:.0} ({:.0}–{:.0})",
                    median(key),
                    entry[key]["min"].as_f64().unwrap_or(f64::NAN),
                    entry[key]["max"].as_f64().unwrap_or(f64::NAN)
                )
            };
            eprintln!(
                "| {connections} | {} | {} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                variant.name,
                range("per_second"),
                median("p50_ms"),
                median("p99_ms"),
                median("server_cpu_us"),
                median("over_rmcp"),
                median("over_rmcp_audit"),
                median("p99_over_rmcp_audit"),
                entry["over_baseline"]["median"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                entry["p99_over_baseline"]["median"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
            );
            per_variant.insert(variant.name.into(), entry);
        }
        out_connections.push(json!({"connections": connections, "variants": per_variant}));
    }
    let out = json!({
        "benchmark": "http_read",
        "tool": TOOL,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "reps": args.reps,
        "smoke": args.smoke,
        "binary": binary.display().to_string(),
        "baseline": args.baseline.as_ref().map(|b| b.display().to_string()),
        "load_average": load_average(),
        "results": out_connections,
    });
    emit_json(&out, args.json.as_deref());
    Ok(())
}
