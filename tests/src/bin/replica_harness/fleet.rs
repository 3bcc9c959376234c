//! The replicas: example server processes on one PostgreSQL database, each on its own
//! loopback port, started, drained (SIGTERM), killed (SIGKILL) and restarted.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Process ids of the replicas running, so that a harness that stops at a broken promise
/// ([`kill_running`]) leaves none behind.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// `kill -9` of every replica process still running.
pub fn kill_running() {
    for pid in RUNNING.lock().map(|p| p.clone()).unwrap_or_default() {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

fn forget(pid: u32) {
    if let Ok(mut running) = RUNNING.lock() {
        running.retain(|p| *p != pid);
    }
}

/// One replica's process and where it listens.
pub struct Replica {
    pub port: u16,
    child: Option<Child>,
    /// Starts so far (1 after the first start).
    pub starts: u32,
}

/// Every replica of the harness, and how they are started.
pub struct Fleet {
    pub binary: String,
    pub db_url: String,
    /// The MCP URL of the proxy: the audience of every token, on every replica.
    pub resource: String,
    /// `ERP_TOOLS_RATE_LIMIT` of the replicas started next.
    pub rate_limit: String,
    pub logs: PathBuf,
    pub replicas: Vec<Replica>,
}

impl Fleet {
    /// A fleet of `n` replicas on ports `base_port..base_port + n`, none started yet.
    pub fn new(binary: &str, db_url: &str, resource: &str, n: usize, base_port: u16) -> Fleet {
        let logs = std::env::temp_dir().join(format!("replica-harness-{}", std::process::id()));
        std::fs::create_dir_all(&logs).expect("log folder");
        Fleet {
            binary: binary.into(),
            db_url: db_url.into(),
            resource: resource.into(),
            rate_limit: "off".into(),
            logs,
            replicas: (0..n)
                .map(|i| Replica {
                    port: base_port + i as u16,
                    child: None,
                    starts: 0,
                })
                .collect(),
        }
    }

    /// Every replica's address, in order.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.replicas
            .iter()
            .map(|r| SocketAddr::from(([127, 0, 0, 1], r.port)))
            .collect()
    }

    /// The review console of replica `i`, reached directly (not through the proxy).
    pub fn console(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/review", self.replicas[i].port)
    }

    /// The lease-row id prefix of replica `i`'s current process (`HOSTNAME` is the first
    /// part of a replica id).
    pub fn host_name(&self, i: usize) -> String {
        format!("replica{i}-start{}", self.replicas[i].starts)
    }

    /// Starts replica `i` and waits until it is ready (`/readyz` answers 200).
    pub async fn start(&mut self, i: usize) {
        self.replicas[i].starts += 1;
        let host = self.host_name(i);
        let r = &mut self.replicas[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.logs.join(format!("replica{i}.log")))
            .expect("replica log");
        let mut child = Command::new(&self.binary)
            .args([
                "--db",
                &self.db_url,
                "--resource",
                &self.resource,
                "serve",
                "--addr",
                &format!("127.0.0.1:{}", r.port),
            ])
            .env("HOSTNAME", &host)
            .env("ERP_TOOLS_RATE_LIMIT", &self.rate_limit)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary));
        if let Ok(mut running) = RUNNING.lock() {
            running.push(child.id());
        }
        wait_ready(r.port).await;
        // Ready, but perhaps another process on that port: this one must be running.
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "replica {i} exited at start ({status}): is port {} taken? see {}",
                r.port,
                self.logs.display()
            );
        }
        r.child = Some(child);
    }

    /// Sends SIGTERM to replica `i` and waits for it to exit (at most `within`).
    pub async fn drain(&mut self, i: usize, within: Duration) -> ExitStatus {
        let mut child = self.replicas[i].child.take().expect("a running replica");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = child.try_wait().expect("wait for the replica") {
                forget(child.id());
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("replica {i} did not exit within {within:?} of SIGTERM");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `kill -9` of replica `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.replicas[i].child.take() {
            child.kill().expect("kill -9");
            child.wait().expect("reap the replica");
            forget(child.id());
        }
    }

    /// Kills every replica still running.
    pub fn kill_all(&mut self) {
        for i in 0..self.replicas.len() {
            self.kill(i);
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Waits until `GET /readyz` on `port` answers 200 (at most 30 s).
async fn wait_ready(port: u16) {
    let url = format!("http://127.0.0.1:{port}/readyz");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http.get(&url).send().await
            && r.status().is_success()
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica on port {port} was not ready within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
