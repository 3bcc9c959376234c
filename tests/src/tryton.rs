//! A real Tryton for the Tryton tests: started by `scripts/tryton/start.sh` in a scratch
//! directory (its own database copy and port), stopped when dropped, and read back over
//! its REST API to count what erp-tools drafted.
//!
//! The tests run when `ERP_TOOLS_TRYTON=1` (`.ci/run` sets it in its Tryton step, which
//! also provides Python); otherwise they say they were skipped and why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use serde_json::{Value, json};

/// A running Tryton started for one test.
pub struct TrytonRun {
    dir: tempfile::TempDir,
    /// REST base URL including the database, e.g. `http://127.0.0.1:41234/erp`.
    pub url: String,
    /// Subject → REST key.
    pub keys: HashMap<String, String>,
    /// The seeded ids (scripts/tryton/seed.py's facts file).
    pub facts: Value,
    http: reqwest::Client,
}

impl std::fmt::Debug for TrytonRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrytonRun")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl TrytonRun {
    /// Starts Tryton, or `None` (with the reason printed) when the Tryton tests are not
    /// asked for. Panics when they are asked for and Tryton does not start.
    pub fn start(test: &str) -> Option<TrytonRun> {
        if std::env::var("ERP_TOOLS_TRYTON").as_deref() != Ok("1") {
            eprintln!(
                "{test}: skipped: set ERP_TOOLS_TRYTON=1 to run it against a real Tryton \
                 (scripts/tryton/start.sh installs and starts one; .ci/run does)"
            );
            return None;
        }
        Some(Self::start_now())
    }

    /// Starts Tryton now (the kill harness, the benchmark); panics when it does not start.
    pub fn start_now() -> TrytonRun {
        let dir = tempfile::tempdir().expect("scratch directory");
        let out = Command::new("bash")
            .arg(workspace().join("scripts/tryton/start.sh"))
            .arg(dir.path())
            .output()
            .expect("bash runs scripts/tryton/start.sh");
        assert!(
            out.status.success(),
            "scripts/tryton/start.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect(name);
        let url = read("url").trim().to_string();
        let keys = serde_json::from_str(&read("keys.json")).expect("keys.json");
        let facts = serde_json::from_str(&read("facts.json")).expect("facts.json");
        TrytonRun {
            dir,
            url,
            keys,
            facts,
            http: reqwest::Client::new(),
        }
    }

    /// The REST base URL with another port (a proxy's in front of this Tryton).
    pub fn url_via(&self, port: u16) -> String {
        self.url
            .replace(&format!(":{}/", self.port()), &format!(":{port}/"))
    }

    /// The keys file's path (`ERP_TOOLS_TRYTON_KEYS`).
    pub fn keys_path(&self) -> PathBuf {
        self.dir.path().join("keys.json")
    }

    /// The port Tryton listens on.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.split('/').next())
            .and_then(|p| p.parse().ok())
            .expect("port in the URL")
    }

    /// A seeded id: `fact("companies", "SBY-01")`.
    pub fn fact(&self, group: &str, name: &str) -> i64 {
        self.facts[group][name]
            .as_i64()
            .unwrap_or_else(|| panic!("no seeded {group}/{name}"))
    }

    /// Stops trytond (the process the script started, by its pid).
    pub fn stop(&self) {
        let pid = self.dir.path().join("pid");
        if let Ok(pid) = std::fs::read_to_string(&pid) {
            let _ = Command::new("kill").arg(pid.trim()).status();
            let _ = std::fs::remove_file(pid);
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    }

    /// The purchases `user` sees in `company` (all fields the tests check), oldest first.
    pub async fn purchases(&self, user: &str, company: i64, domain: Value) -> Vec<Value> {
        let mut url = format!(
            "{}/rest/model/purchase.purchase?d={}",
            self.url,
            URL_SAFE.encode(domain.to_string())
        );
        for f in [
            "reference",
            "state",
            "number",
            "company",
            "party",
            "create_uid",
            "lines.product",
            "lines.quantity",
            "lines.unit_price",
            "lines.unit",
        ] {
            url.push_str("&f=");
            url.push_str(f);
        }
        let context = json!({"company": company, "companies": [company]});
        let response = self
            .http
            .get(url)
            .header("Authorization", format!("bearer {}", self.keys[user]))
            .header("X-Tryton-Context", URL_SAFE.encode(context.to_string()))
            .send()
            .await
            .expect("Tryton answers");
        assert!(
            response.status().is_success(),
            "Tryton search: {}",
            response.status()
        );
        let mut rows: Vec<Value> = response.json().await.expect("JSON");
        rows.sort_by_key(|r| r["id"].as_i64());
        rows
    }

    /// The purchases carrying `marker` (as `user` in `company`).
    pub async fn with_marker(&self, user: &str, company: i64, marker: &str) -> Vec<Value> {
        self.purchases(user, company, json!([["reference", "=", marker]]))
            .await
    }
}

impl Drop for TrytonRun {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The Tryton example's binary (`target/debug/examples/tryton`), built first with
/// `cargo build --example tryton` (nothing to do when it is up to date).
pub fn example_binary() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace())
        .args(["build", "-q", "--example", "tryton"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build --example tryton failed");
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace().join("target"));
    target.join("debug/examples/tryton")
}

/// The Tryton example run as its users run it: `serve` and `token` processes against one
/// Tryton, with erp-tools' store on SQLite in a scratch directory.
#[derive(Debug)]
pub struct Example {
    /// The example's binary.
    pub binary: PathBuf,
    /// The environment every process of it gets (Tryton's URL and keys, the timeout).
    pub env: Vec<(String, String)>,
    /// erp-tools' store (`--db`).
    pub db_url: String,
    /// The port `serve` listens on (127.0.0.1).
    pub port: u16,
    /// Where `serve` writes its log (appended to by each start).
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Example {
    /// The example for `tryton_url` (Tryton itself, or a proxy in front of it) with the keys
    /// at `keys`, a free port and a fresh store.
    pub fn new(binary: PathBuf, tryton_url: &str, keys: &Path, timeout_ms: u64) -> Example {
        let dir = tempfile::tempdir().expect("scratch directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Example {
            binary,
            env: vec![
                ("ERP_TOOLS_TRYTON_URL".into(), tryton_url.to_string()),
                ("ERP_TOOLS_TRYTON_KEYS".into(), keys.display().to_string()),
                ("ERP_TOOLS_REMOTE_TIMEOUT_MS".into(), timeout_ms.to_string()),
                ("RUST_LOG".into(), "warn".into()),
            ],
            db_url: format!("sqlite://{}", dir.path().join("store.db").display()),
            port,
            log: dir.path().join("server.log"),
            _dir: dir,
        }
    }

    /// The MCP endpoint of `serve`.
    pub fn mcp_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.binary);
        c.envs(self.env.iter().map(|(k, v)| (k, v))).args([
            "--db",
            &self.db_url,
            "--resource",
            &self.mcp_url(),
        ]);
        c
    }

    /// Starts `serve` and waits until it accepts connections (30 s at most); the time it
    /// took is in the second value.
    pub fn serve(&self) -> (std::process::Child, std::time::Duration) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("server log");
        let started = std::time::Instant::now();
        let child = self
            .command()
            .args(["serve", "--addr", &format!("127.0.0.1:{}", self.port)])
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary.display()));
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "the example did not listen within 30 s; its log:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        (child, started.elapsed())
    }

    /// Runs `token --user <user> --branch <branch> --scopes <scopes> [--run <run>]`: the
    /// token, or the command's error text.
    pub fn token(
        &self,
        user: &str,
        branch: &str,
        scopes: &str,
        run: Option<&str>,
    ) -> Result<String, String> {
        let mut c = self.command();
        c.args([
            "token", "--user", user, "--branch", branch, "--scopes", scopes,
        ]);
        if let Some(run) = run {
            c.args(["--run", run]);
        }
        let out = c.output().expect("the example runs");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }
}

/// One stateless MCP `tools/call` over streamable HTTP: the JSON-RPC `result` (a tool
/// error is a result with `isError`), or why there is none.
pub async fn mcp_call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    args: &Value,
) -> Result<Value, String> {
    let text = crate::drafts::tools_call(http, url, token, tool, args, "1")
        .send()
        .await
        .map_err(|e| format!("transport: {e}"))?
        .text()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    crate::drafts::rpc_result(&text).ok_or_else(|| format!("no result in {text:.300}"))
}

/// A tool result's text.
pub fn result_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
