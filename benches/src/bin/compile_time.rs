//! Benchmark 5: compile time of `--tools` tools (default 100) declared with `#[erp_tool]`
//! against the same tools declared with `rmcp`'s `#[tool]`.
//!
//! Generates a throw-away workspace (default `target/bench-compile/`) with two library
//! crates, `erp_tools_n` and `rmcp_tools_n`, with identical argument and output types and
//! handler bodies; the erp-tools crate depends on this workspace's crates by path. The
//! workspace's `Cargo.lock` is copied in, so both build offline with the same versions.
//! A warm-up build of each crate compiles its dependencies once; then each repetition removes only
//! the leaf crate's artifacts (`cargo clean -p <leaf>`) and times `cargo build -p <leaf>`
//! (wall clock), alternating which crate goes first. With `--check`, `cargo check` is
//! timed instead (the smoke run uses it with a handful of tools).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Parser;
use erp_tools_benches::stats::{Summary, emit_json};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "Clean build time of N #[erp_tool] tools against N rmcp #[tool] tools")]
struct Args {
    /// Tools per crate.
    #[arg(long, default_value_t = 100)]
    tools: usize,
    /// Timed builds per crate.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Build with `--release`.
    #[arg(long)]
    release: bool,
    /// Time `cargo check` instead of `cargo build`.
    #[arg(long)]
    check: bool,
    /// Where to generate the throw-away workspace; default `<workspace>/target/bench-compile`.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Also write the JSON result to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Tools per module: erp-tools requires fewer than 10 per namespace.
const PER_MODULE: usize = 9;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the benches crate is inside the workspace")
        .to_path_buf()
}

/// The types shared by both crates: one argument struct per tool, one output per module.
fn types(out: &mut String, tools: usize, derives: &str) {
    for i in 0..tools {
        writeln!(
            out,
            r#"
/// Arguments of tool {i}.
#[derive({derives})]
pub struct Args{i} {{
    /// Record code, e.g. R-00042
    pub code: String,
    /// Part of the name. Null for any name.
    pub query: Option<String>,
    /// At most this many results.
    pub limit: u32,
    /// Only active records.
    pub active_only: bool,
    /// Only these tags. Empty for all.
    pub tags: Vec<String>,
}}"#
        )
        .unwrap();
    }
    writeln!(
        out,
        r#"
/// A record.
#[derive(Serialize, JsonSchema)]
pub struct Out {{
    /// Record code.
    pub code: String,
    /// How many records matched.
    pub count: u32,
}}

fn body(code: String, limit: u32, tags: &[String]) -> Out {{
    Out {{ count: limit.min(50) + tags.len() as u32, code }}
}}"#
    )
    .unwrap();
}

fn erp_crate(tools: usize) -> String {
    let mut out = String::from(
        "//! Generated: tools declared with #[erp_tool].\n#![allow(missing_docs)]\n\nuse erp_tools_core::prelude::*;\n",
    );
    types(&mut out, tools, "Deserialize, ToolArgs");
    for i in 0..tools {
        let m = i / PER_MODULE;
        writeln!(
            out,
            r#"
/// Look up records of kind {i} by code. Read only.
#[erp_tool(module = "m{m:02}", tier = "read", scopes = ["m{m:02}:read"])]
pub async fn t{i}(_ctx: &ToolContext, args: Args{i}) -> Result<Out, ToolError> {{
    Ok(body(args.code, args.limit, &args.tags))
}}"#
        )
        .unwrap();
    }
    writeln!(
        out,
        "\n/// Every tool in one registry.\npub fn registry() -> erp_tools_core::ToolRegistry {{\n    erp_tools_core::ToolRegistry::builder()"
    )
    .unwrap();
    for m in 0..tools.div_ceil(PER_MODULE) {
        writeln!(
            out,
            "        .module(\"m{m:02}\", \"Module m{m:02}: reads records. Cannot change records.\")"
        )
        .unwrap();
    }
    writeln!(out, "        .tools(erp_tools_core::tools![").unwrap();
    for i in 0..tools {
        writeln!(out, "            t{i},").unwrap();
    }
    writeln!(
        out,
        "        ])\n        .build()\n        .expect(\"valid registry\")\n}}"
    )
    .unwrap();
    out
}

fn rmcp_crate(tools: usize) -> String {
    let mut out = String::from(
        "//! Generated: tools declared with rmcp's #[tool].\n#![allow(missing_docs)]\n\n\
         use rmcp::handler::server::router::tool::ToolRouter;\n\
         use rmcp::handler::server::wrapper::Parameters;\n\
         use rmcp::{ErrorData, Json, tool, tool_handler, tool_router};\n\
         use schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n",
    );
    types(&mut out, tools, "Deserialize, JsonSchema");
    out.push_str(
        "\n/// Every tool on one router.\n#[derive(Clone)]\npub struct Server {\n    tool_router: ToolRouter<Self>,\n}\n\n\
         impl Default for Server {\n    fn default() -> Self {\n        Server { tool_router: Self::tool_router() }\n    }\n}\n\n\
         #[tool_handler(router = self.tool_router)]\nimpl rmcp::ServerHandler for Server {}\n\n\
         #[tool_router(router = tool_router)]\nimpl Server {\n",
    );
    for i in 0..tools {
        let m = i / PER_MODULE;
        writeln!(
            out,
            r#"    /// Look up records of kind {i} by code. Read only.
    #[tool(name = "m{m:02}_t{i}")]
    async fn t{i}(&self, Parameters(args): Parameters<Args{i}>) -> Result<Json<Out>, ErrorData> {{
        Ok(Json(body(args.code, args.limit, &args.tags)))
    }}"#
        )
        .unwrap();
    }
    out.push_str("}\n");
    out
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    // Rewrite only on change, so an unchanged crate keeps its warm-up build.
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

fn generate(dir: &Path, root: &Path, tools: usize) {
    let core = root.join("erp-tools-core");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"erp_tools_n\", \"rmcp_tools_n\"]\n",
    );
    write(
        &dir.join("erp_tools_n/Cargo.toml"),
        &format!(
            "[package]\nname = \"erp_tools_n\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nerp-tools-core = {{ path = {core:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n"
        ),
    );
    write(
        &dir.join("rmcp_tools_n/Cargo.toml"),
        "[package]\nname = \"rmcp_tools_n\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nrmcp = { version = \"3.11\", default-features = false, features = [\"server\", \"macros\", \"schemars\"] }\n\
         serde = { version = \"1\", features = [\"derive\"] }\nschemars = \"1.2\"\n",
    );
    write(&dir.join("erp_tools_n/src/lib.rs"), &erp_crate(tools));
    write(&dir.join("rmcp_tools_n/src/lib.rs"), &rmcp_crate(tools));
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).expect("read Cargo.lock");
    write(&dir.join("Cargo.lock"), &lock);
}

fn cargo(dir: &Path, args: &[&str]) -> f64 {
    let started = Instant::now();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(dir)
        .args(args)
        .arg("--offline")
        .arg("--quiet")
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .status()
        .unwrap_or_else(|e| panic!("run cargo {args:?}: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        status.success(),
        "cargo {args:?} failed in {}",
        dir.display()
    );
    seconds
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.tools == 0 || args.reps == 0 {
        eprintln!("error: --tools and --reps must be positive");
        return std::process::ExitCode::FAILURE;
    }
    let root = workspace_root();
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| root.join("target/bench-compile"));
    generate(&dir, &root, args.tools);
    let verb = if args.check { "check" } else { "build" };
    let mut build_args = vec![verb];
    if args.release {
        build_args.push("--release");
    }
    let profile = if args.release { "release" } else { "dev" };

    // Each crate alone, as timed later: features are unified only across the packages
    // of one build, so a `--workspace` build would warm other dependency artifacts.
    let crates = ["erp_tools_n", "rmcp_tools_n"];
    for leaf in crates {
        eprintln!("warm-up: building {leaf} and its dependencies ({profile}, {verb})");
        let mut warm = build_args.clone();
        warm.extend(["-p", leaf]);
        let warm_s = cargo(&dir, &warm);
        eprintln!("warm-up of {leaf} took {warm_s:.1} s");
    }

    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for rep in 0..args.reps {
        let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            let mut clean = vec!["clean", "-p", crates[k]];
            if args.release {
                clean.push("--release");
            }
            cargo(&dir, &clean);
            let mut build = build_args.clone();
            build.extend(["-p", crates[k]]);
            let s = cargo(&dir, &build);
            eprintln!("rep {}: {} {:.2} s", rep + 1, crates[k], s);
            times[k].push(s);
        }
    }
    let erp = Summary::of(&times[0]).expect("timed builds");
    let rmcp = Summary::of(&times[1]).expect("timed builds");
    let pair_ratios: Vec<f64> = times[0].iter().zip(&times[1]).map(|(e, r)| e / r).collect();
    let out = json!({
        "benchmark": "compile_time",
        "tools": args.tools,
        "profile": profile,
        "command": verb,
        "reps": args.reps,
        "erp_tools_s": erp,
        "rmcp_s": rmcp,
        "ratio_of_medians": erp.median / rmcp.median,
        "ratio_per_rep": Summary::of(&pair_ratios),
        "erp_tools_runs_s": times[0],
        "rmcp_runs_s": times[1],
        "dir": dir.display().to_string(),
    });
    emit_json(&out, args.json.as_deref());
    std::process::ExitCode::SUCCESS
}
