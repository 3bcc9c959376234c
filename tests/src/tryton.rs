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
