//! Benchmark 6: peak memory of the distributor example serving 10 000 calls.
//!
//! Starts the built `distributor` example (`cargo build --release --example distributor`)
//! on a fresh SQLite file and a free loopback port, mints a development token with its
//! `token` command, and drives `--calls` MCP `tools/call` requests over streamable HTTP
//! from `--clients` concurrent `rmcp` clients (90 % reads across five read tools, 10 %
//! purchase-order drafts; see `TOOL_MIX`). Reads the server's `VmHWM` (peak resident
//! set) and `VmRSS` from `/proc/<pid>/status` when idle and after the calls, with the
//! resident set split into `RssAnon` (heap, stacks) and `RssFile` (the binary's pages and
//! other mapped files). With `--baseline` another build of the example (an earlier commit,
//! say) is measured in the same run, its repetitions alternating with the binary's, and
//! the result gives the ratios. Linux only.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use erp_tools_benches::stats::{Summary, emit_json};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "Peak RSS of the distributor example serving MCP calls over HTTP")]
struct Args {
    /// The distributor binary; default `target/release/examples/distributor`.
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Calls per repetition.
    #[arg(long, default_value_t = 10_000)]
    calls: usize,
    /// Concurrent MCP clients (sessions).
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Repetitions (each a fresh server and database).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Another build of the example to measure in the same run (as many repetitions,
    /// alternating with the binary's); it must take the same `token` and `serve`
    /// arguments.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The call mix, one entry per tenth of the calls.
const TOOL_MIX: [&str; 10] = [
    "inventory_get_stock",
    "inventory_get_stock",
    "inventory_get_stock",
    "purchasing_search_vendors",
    "purchasing_search_vendors",
    "purchasing_get_vendor_summary",
    "purchasing_get_vendor_summary",
    "purchasing_get_po",
    "inventory_list_below_reorder",
    "purchasing_create_po_draft",
];

fn arguments(tool: &str, client: usize, i: usize) -> Value {
    match tool {
        "inventory_get_stock" => json!({"item_code": "BRG-0042", "warehouse_code": null}),
        "purchasing_search_vendors" => json!({"query": "plastik", "item_code": null}),
        "purchasing_get_vendor_summary" => json!({"vendor_code": "V-00231"}),
        "purchasing_get_po" => json!({"number": "PO-2026-0038"}),
        "inventory_list_below_reorder" => json!({}),
        _ => {
            let needed_by = (chrono::Utc::now().date_naive() + chrono::Days::new(30)).to_string();
            json!({
                "vendor_code": "V-00231",
                "needed_by": needed_by,
                "client_ref": format!("mem-{client}-{i}"),
                "note": "Below reorder point in SBY-WH1",
                "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": "BOX"}],
            })
        }
    }
}

/// What `/proc/<pid>/status` says of a process's memory, in KiB.
struct Memory {
    hwm: u64,
    rss: u64,
    anon: u64,
    file: u64,
}

/// `VmHWM`, `VmRSS`, `RssAnon` and `RssFile` of `pid`.
fn memory_of(pid: u32) -> Memory {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/status: {e}"));
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Memory {
        hwm: field("VmHWM:"),
        rss: field("VmRSS:"),
        anon: field("RssAnon:"),
        file: field("RssFile:"),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Stops the server when dropped, even if a step panics.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Serialize)]
struct Rep {
    calls: usize,
    errors: usize,
    seconds: f64,
    calls_per_s: f64,
    idle_hwm_mib: f64,
    idle_rss_mib: f64,
    idle_anon_mib: f64,
    idle_file_mib: f64,
    peak_hwm_mib: f64,
    end_rss_mib: f64,
    end_anon_mib: f64,
    end_file_mib: f64,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn one_rep(binary: &Path, args: &Args, rep: usize) -> Rep {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = format!("sqlite://{}", dir.path().join("distributor.db").display());
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let base = |cmd: &mut Command| {
        cmd.args(["--db", &db, "--resource", &resource])
            .env_remove("ERP_TOOLS_SIGNING_KEY")
            .env_remove("ERP_TOOLS_DB")
            .env_remove("ERP_TOOLS_RESOURCE")
            .env("RUST_LOG", "warn");
    };
    let mut token_cmd = Command::new(binary);
    base(&mut token_cmd);
    let minted = token_cmd
        .args(["token", "--user", "7", "--branch", "SBY-01"])
        .args([
            "--scopes",
            "purchasing:read,purchasing:draft,inventory:read",
        ])
        .args(["--run", &format!("memory-bench-{rep}")])
        .output()
        .unwrap_or_else(|e| panic!("run {} token: {e}", binary.display()));
    assert!(
        minted.status.success(),
        "token command failed: {}",
        String::from_utf8_lossy(&minted.stderr)
    );
    let token = String::from_utf8(minted.stdout)
        .expect("token is text")
        .trim()
        .to_string();

    let mut serve_cmd = Command::new(binary);
    base(&mut serve_cmd);
    let server = Server(
        serve_cmd
            .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
            // Measures memory under load, not the per-caller rate limit.
            .env("ERP_TOOLS_RATE_LIMIT", "off")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display())),
    );
    let pid = server.0.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server did not start listening"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = memory_of(pid);

    let per_client = args.calls.div_ceil(args.clients);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let n = per_client.min(args.calls.saturating_sub(c * per_client));
        let config =
            StreamableHttpClientTransportConfig::with_uri(resource.clone()).auth_header(&token);
        tasks.push(tokio::spawn(async move {
            let client =
                ().serve(StreamableHttpClientTransport::from_config(config))
                    .await
                    .expect("MCP client connects");
            let mut errors = Vec::new();
            for i in 0..n {
                let tool = TOOL_MIX[(i + c) % TOOL_MIX.len()];
                let params = CallToolRequestParams::new(tool).with_arguments(
                    arguments(tool, c, i)
                        .as_object()
                        .cloned()
                        .expect("object arguments"),
                );
                match client.call_tool(params).await {
                    Ok(r) if r.is_error != Some(true) => {}
                    Ok(r) => errors.push(format!("{tool}: {:?}", r.content)),
                    Err(e) => errors.push(format!("{tool}: {e}")),
                }
            }
            let _ = client.cancel().await;
            (n, errors)
        }));
    }
    let mut calls = 0;
    let mut errors = Vec::new();
    for t in tasks {
        let (n, e) = t.await.expect("client task");
        calls += n;
        errors.extend(e);
    }
    let seconds = started.elapsed().as_secs_f64();
    let end = memory_of(pid);
    drop(server);
    for e in errors.iter().take(3) {
        eprintln!("call failed: {e}");
    }
    Rep {
        calls,
        errors: errors.len(),
        seconds,
        calls_per_s: calls as f64 / seconds,
        idle_hwm_mib: mib(idle.hwm),
        idle_rss_mib: mib(idle.rss),
        idle_anon_mib: mib(idle.anon),
        idle_file_mib: mib(idle.file),
        peak_hwm_mib: mib(end.hwm),
        end_rss_mib: mib(end.rss),
        end_anon_mib: mib(end.anon),
        end_file_mib: mib(end.file),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let binary = args.binary.clone().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/examples/distributor")
    });
    if !binary.exists() {
        eprintln!(
            "error: {} not found; build it with `cargo build --release -p erp-tools-core --example distributor` or pass --binary",
            binary.display()
        );
        return std::process::ExitCode::FAILURE;
    }
    if args.clients == 0 || args.calls == 0 {
        eprintln!("error: --calls and --clients must be positive");
        return std::process::ExitCode::FAILURE;
    }
    if let Some(b) = args.baseline.as_deref().filter(|b| !b.exists()) {
        eprintln!("error: --baseline {} not found", b.display());
        return std::process::ExitCode::FAILURE;
    }
    let mut builds = vec![("binary", binary.clone())];
    if let Some(b) = &args.baseline {
        builds.push(("baseline", b.clone()));
    }
    let mut reps: Vec<Vec<Rep>> = builds.iter().map(|_| Vec::new()).collect();
    for rep in 0..args.reps {
        for k in 0..builds.len() {
            let i = (rep + k) % builds.len();
            let (name, path) = &builds[i];
            let r = one_rep(path, &args, rep).await;
            eprintln!(
                "{name} rep {}: {} calls ({} errors) in {:.1} s; idle VmRSS {:.1} MiB (anon {:.1}, file {:.1}); \
                 VmHWM after {:.1} MiB; VmRSS after {:.1} MiB (anon {:.1}, file {:.1})",
                rep + 1,
                r.calls,
                r.errors,
                r.seconds,
                r.idle_rss_mib,
                r.idle_anon_mib,
                r.idle_file_mib,
                r.peak_hwm_mib,
                r.end_rss_mib,
                r.end_anon_mib,
                r.end_file_mib,
            );
            reps[i].push(r);
        }
    }
    let summary = |reps: &[Rep], path: &Path| {
        let pick = |f: fn(&Rep) -> f64| Summary::of(&reps.iter().map(f).collect::<Vec<_>>());
        json!({
            "binary": path.display().to_string(),
            "reps": reps,
            "idle_hwm_mib": pick(|r| r.idle_hwm_mib),
            "idle_rss_mib": pick(|r| r.idle_rss_mib),
            "idle_anon_mib": pick(|r| r.idle_anon_mib),
            "idle_file_mib": pick(|r| r.idle_file_mib),
            "peak_hwm_mib": pick(|r| r.peak_hwm_mib),
            "end_rss_mib": pick(|r| r.end_rss_mib),
            "end_anon_mib": pick(|r| r.end_anon_mib),
            "end_file_mib": pick(|r| r.end_file_mib),
            "calls_per_s": pick(|r| r.calls_per_s),
        })
    };
    let errors: usize = reps.iter().flatten().map(|r| r.errors).sum();
    // The binary's figures at the top level (as before the baseline existed), the
    // baseline's beside them.
    let mut out = summary(&reps[0], &binary);
    out["benchmark"] = json!("memory");
    out["calls"] = json!(args.calls);
    out["clients"] = json!(args.clients);
    out["errors"] = json!(errors);
    if let Some(b) = &args.baseline {
        let base = summary(&reps[1], b);
        let median = |v: &Value, key: &str| v[key]["median"].as_f64().unwrap_or(f64::NAN);
        let mut ratios = serde_json::Map::new();
        for key in [
            "idle_rss_mib",
            "idle_anon_mib",
            "idle_file_mib",
            "peak_hwm_mib",
            "end_anon_mib",
            "end_file_mib",
        ] {
            let r = median(&out, key) / median(&base, key);
            ratios.insert(key.trim_end_matches("_mib").into(), json!(r));
        }
        let ratio = |key: &str| ratios[key].as_f64().unwrap_or(f64::NAN);
        eprintln!(
            "binary / baseline (medians): idle RSS {:.2}, peak {:.2}, anon after {:.2}, file after {:.2}",
            ratio("idle_rss"),
            ratio("peak_hwm"),
            ratio("end_anon"),
            ratio("end_file")
        );
        out["baseline"] = base;
        out["over_baseline"] = Value::Object(ratios);
    }
    emit_json(&out, args.json.as_deref());
    if errors == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!("error: {errors} calls failed");
        std::process::ExitCode::FAILURE
    }
}
