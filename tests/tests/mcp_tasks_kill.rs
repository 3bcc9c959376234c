//! Tasks whose server process stops mid-call, on both backends: two processes of
//! `task_replica` (a replica each) on one database, a client of the first.
//!
//! - `kill -9` mid-draft: the other replica takes the task over within the lease and
//!   finishes it, as the task's owner; one draft for the `client_ref`, and a retry with it
//!   is a replay;
//! - `kill -9` mid-report of a tool declared `rerun = false`: the task is failed with the
//!   reason, never left `working`;
//! - SIGTERM (a rolling restart): the running task gets the grace, then is handed over and
//!   taken over at once, long before the lease would have expired;
//! - repeated `kill -9` (`ERP_TOOLS_TASK_KILLS`, 3 by default; RELIABILITY.md has a run of
//!   15): three replicas, each round starting a draft and a report on the oldest and
//!   killing it at a random moment (`ERP_TOOLS_TASK_KILL_SEED`), a fresh replica taking
//!   its place; a task taken over may be killed again. Every killed replica's tasks leave
//!   it within the lease bound, and every task ends done (each draft once) or failed
//!   with the reason.

use std::process::Stdio;
use std::time::{Duration, Instant};

use erp_tools_core::sqlx;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::Declaring;
use erp_tools_tests::on_both_backends;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, GetTaskParams, GetTaskResult,
    ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, Declaring>;

/// One `task_replica` process.
struct Replica {
    child: tokio::process::Child,
    url: String,
    token: String,
    _dir: tempfile::TempDir,
}

impl Replica {
    /// Starts a replica on `t`'s database with a `lease`, a sweep every 200 ms and a
    /// shutdown `grace`; returns once it wrote its token.
    async fn start(t: &TestDb, lease: Duration, grace: Duration) -> Replica {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_task_replica"))
            .args(["--db", t.url(), "--addr", &format!("127.0.0.1:{port}")])
            .args(["--lease-ms", &lease.as_millis().to_string()])
            .args(["--grace-ms", &grace.as_millis().to_string()])
            .args(["--sweep-ms", "200", "--token-out"])
            .arg(&token_file)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start task_replica");
        let mut token = String::new();
        for _ in 0..300 {
            token = std::fs::read_to_string(&token_file).unwrap_or_default();
            if !token.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!token.is_empty(), "the replica wrote its token");
        Replica {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            token,
            _dir: dir,
        }
    }

    /// A 2026-07-28 client of this replica declaring the tasks extension, with `token`.
    async fn client(&self, token: &str) -> Client {
        let config =
            StreamableHttpClientTransportConfig::with_uri(self.url.clone()).auth_header(token);
        let mut last = String::new();
        for _ in 0..100 {
            let transport = StreamableHttpClientTransport::from_config(config.clone());
            let host = Declaring {
                capabilities: ClientCapabilities::builder().enable_tasks().build(),
            };
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            match host.serve_with_lifecycle(transport, lifecycle).await {
                Ok(client) => return client,
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the replica at {} does not answer: {last}", self.url);
    }

    fn pid(&self) -> String {
        self.child.id().expect("running").to_string()
    }

    async fn kill(&mut self) -> Instant {
        self.child.start_kill().unwrap();
        let killed = Instant::now();
        self.child.wait().await.unwrap();
        killed
    }
}

/// Starts a task of `tool` with `arguments`; its id.
async fn start(client: &Client, tool: &'static str, arguments: Value) -> String {
    let call =
        CallToolRequestParams::new(tool).with_arguments(arguments.as_object().unwrap().clone());
    match client.call_tool_once(call).await.unwrap() {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls task `id` until it is no longer `working`, for at most `bound`.
async fn settled(client: &Client, id: &str, bound: Duration) -> GetTaskResult {
    let since = Instant::now();
    loop {
        let got = client.get_task(GetTaskParams::new(id)).await.unwrap();
        if got.task.status() != TaskStatus::Working {
            return got;
        }
        assert!(
            since.elapsed() < bound,
            "still working after {bound:?}: {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until task `id` reports progress (its handler runs).
async fn running(client: &Client, id: &str) {
    for _ in 0..100 {
        let got = client.get_task(GetTaskParams::new(id)).await.unwrap();
        if got.task.task.status_message.is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reported progress");
}

/// The task row's take-over columns: (taken over by, times).
async fn takeover_of(t: &TestDb, id: &str) -> (Option<String>, i64) {
    sqlx::query_as("SELECT taken_over_by, takeovers FROM erp_tasks WHERE id = $1")
        .bind(id.to_string())
        .fetch_one(t.db.pool())
        .await
        .unwrap()
}

/// The table `tasks_slow_draft` drafts into.
async fn create_drafts_table(t: &TestDb) {
    sqlx::query(
        "CREATE TABLE task_drafts (client_ref TEXT PRIMARY KEY, label TEXT NOT NULL, \
         drafted_by TEXT NOT NULL)",
    )
    .execute(t.db.pool())
    .await
    .unwrap();
}

/// How many drafts exist for `client_ref`.
async fn drafts(t: &TestDb, client_ref: &str) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM task_drafts WHERE client_ref = $1")
        .bind(client_ref.to_string())
        .fetch_one(t.db.pool())
        .await
        .unwrap();
    n
}

fn structured(result: &GetTaskResult) -> Value {
    let TaskPayload::Completed { result } = &result.task.payload else {
        panic!("expected completed, got {result:?}");
    };
    result["structuredContent"].clone()
}

async fn a_killed_replicas_draft_is_taken_over_and_drafted_once(t: &TestDb) {
    create_drafts_table(t).await;
    let lease = Duration::from_secs(3);
    let mut a = Replica::start(t, lease, Duration::from_secs(1)).await;
    let b = Replica::start(t, lease, Duration::from_secs(1)).await;
    let on_a = a.client(&a.token).await;
    let args = json!({"client_ref": "nightly-1", "label": "restock", "seconds": 3});
    let id = start(&on_a, "tasks_slow_draft", args.clone()).await;
    // Mid-draft: the handler has worked for a second and drafted nothing yet.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let a_pid = a.pid();
    let killed = a.kill().await;
    drop(on_a);

    let on_b = b.client(&a.token).await;
    let done = settled(&on_b, &id, lease + Duration::from_secs(15)).await;
    let took = killed.elapsed();
    println!("a killed replica's draft task was finished by another {took:?} after the kill");
    let draft = structured(&done);
    assert_eq!(draft["client_ref"], "nightly-1");
    assert_eq!(draft["replayed"], false, "{draft}");
    assert_ne!(
        draft["drafted_by"],
        a_pid.as_str(),
        "drafted by the replica that took over"
    );
    let (by, times) = takeover_of(t, &id).await;
    assert!(by.is_some(), "the take-over is recorded");
    assert_eq!(times, 1);
    assert_eq!(drafts(t, "nightly-1").await, 1);

    // The same client_ref again: the draft that exists, not a second.
    let again = start(&on_b, "tasks_slow_draft", args).await;
    let replay = structured(&settled(&on_b, &again, Duration::from_secs(30)).await);
    assert_eq!(replay["replayed"], true, "{replay}");
    assert_eq!(replay["drafted_by"], draft["drafted_by"]);
    assert_eq!(drafts(t, "nightly-1").await, 1);
}
on_both_backends!(a_killed_replicas_draft_is_taken_over_and_drafted_once);

async fn a_task_not_safe_to_rerun_is_failed_with_the_reason(t: &TestDb) {
    let lease = Duration::from_secs(3);
    let mut a = Replica::start(t, lease, Duration::from_secs(1)).await;
    let b = Replica::start(t, lease, Duration::from_secs(1)).await;
    let on_a = a.client(&a.token).await;
    let id = start(
        &on_a,
        "tasks_slow_report",
        json!({"label": "aging", "seconds": 30}),
    )
    .await;
    let on_b = b.client(&a.token).await;
    running(&on_b, &id).await;
    let killed = a.kill().await;
    drop(on_a);
    let failed = settled(&on_b, &id, lease + Duration::from_secs(15)).await;
    println!(
        "a killed replica's report was failed {:?} after the kill",
        killed.elapsed()
    );
    let TaskPayload::Failed { error } = &failed.task.payload else {
        panic!("expected failed, got {failed:?}");
    };
    let why = error["message"].as_str().unwrap();
    assert!(why.contains("stopped before the call finished"), "{why}");
    assert!(
        why.contains("`tasks_slow_report` is declared not safe to run again"),
        "{why}"
    );
    assert_eq!(takeover_of(t, &id).await, (None, 0));
}
on_both_backends!(a_task_not_safe_to_rerun_is_failed_with_the_reason);

async fn a_draining_replica_hands_its_task_over_at_once(t: &TestDb) {
    // A lease far longer than the hand-over may take.
    let lease = Duration::from_secs(20);
    let mut a = Replica::start(t, lease, Duration::from_millis(500)).await;
    let b = Replica::start(t, lease, Duration::from_millis(500)).await;
    let on_a = a.client(&a.token).await;
    let id = start(
        &on_a,
        "tasks_slow_count",
        json!({"label": "valuation", "seconds": 4}),
    )
    .await;
    let on_b = b.client(&a.token).await;
    running(&on_b, &id).await;
    let a_pid = a.pid();
    // SIGTERM, as a rolling restart sends it.
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &a_pid])
            .status()
            .unwrap()
            .success()
    );
    let term = Instant::now();
    let exit = a.child.wait().await.unwrap();
    assert!(exit.success(), "the drained replica exits 0: {exit:?}");
    drop(on_a);
    // Taken over once released: well within the lease.
    loop {
        if takeover_of(t, &id).await.0.is_some() {
            break;
        }
        assert!(
            term.elapsed() < lease / 2,
            "not taken over {:?} after SIGTERM",
            term.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!(
        "a drained replica's task was taken over {:?} after SIGTERM",
        term.elapsed()
    );
    let done = structured(&settled(&on_b, &id, Duration::from_secs(30)).await);
    assert_ne!(done["reported_by"], a_pid.as_str(), "{done}");
    assert_eq!(takeover_of(t, &id).await.1, 1);
}
on_both_backends!(a_draining_replica_hands_its_task_over_at_once);

/// A tiny seeded generator (xorshift), so a run of kills can be repeated.
struct Seeded(u64);

impl Seeded {
    /// A number in `range`.
    fn within(&mut self, range: std::ops::Range<u64>) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        range.start + self.0 % (range.end - range.start)
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How many tasks are still `working` held by a replica whose id is `like` that.
async fn held_by(t: &TestDb, like: &str) -> i64 {
    let (n,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM erp_tasks WHERE replica_id LIKE $1 AND status = 'working'",
    )
    .bind(like.to_string())
    .fetch_one(t.db.pool())
    .await
    .unwrap();
    n
}

async fn replicas_killed_again_and_again_leave_no_task_behind(t: &TestDb) {
    create_drafts_table(t).await;
    let kills = env_number("ERP_TOOLS_TASK_KILLS", 3);
    let mut rng = Seeded(env_number("ERP_TOOLS_TASK_KILL_SEED", 1).max(1));
    let lease = Duration::from_secs(2);
    // A killed replica's tasks leave it within the lease, two sweeps and the time a
    // loaded machine takes to notice.
    let bound = lease + Duration::from_secs(3);
    let grace = Duration::from_secs(1);
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start(t, lease, grace).await);
    }
    let token = replicas[0].token.clone();
    let (mut drafts_started, mut reports_started) = (Vec::new(), Vec::new());
    let (mut left_after, mut in_flight) = (Vec::new(), 0);
    let run = Instant::now();
    for round in 0..kills {
        let mut victim = replicas.remove(0);
        let client = victim.client(&token).await;
        // The report first: on SQLite the draft's transaction holds the replica's one
        // writer while it works, and a task is created with a write.
        let seconds = rng.within(0..4);
        let args = json!({"label": "aging", "seconds": seconds});
        reports_started.push(start(&client, "tasks_slow_report", args).await);
        let client_ref = format!("kill-{round}");
        let seconds = rng.within(1..4);
        let args = json!({"client_ref": client_ref, "label": "restock", "seconds": seconds});
        drafts_started.push((start(&client, "tasks_slow_draft", args).await, client_ref));
        // A replica's id starts with its process id.
        let holder = format!("{}-%", victim.pid());
        tokio::time::sleep(Duration::from_millis(rng.within(50..2_500))).await;
        in_flight += held_by(t, &holder).await;
        let killed = victim.kill().await;
        drop(client);
        replicas.push(Replica::start(t, lease, grace).await);
        while held_by(t, &holder).await > 0 {
            assert!(
                killed.elapsed() < bound,
                "round {round}: the killed replica still holds tasks {:?} after the kill",
                killed.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        left_after.push(killed.elapsed());
    }
    let live = replicas[0].client(&token).await;
    let (mut replayed, mut taken_over, mut failed, mut reported) = (0, 0, 0, 0);
    let mut most = 0;
    for (id, client_ref) in &drafts_started {
        let draft = structured(&settled(&live, id, bound + Duration::from_secs(10)).await);
        assert_eq!(draft["client_ref"], client_ref.as_str(), "{draft}");
        assert_eq!(drafts(t, client_ref).await, 1, "{client_ref} drafted once");
        replayed += usize::from(draft["replayed"] == true);
        let times = takeover_of(t, id).await.1;
        (taken_over, most) = (taken_over + times, most.max(times));
    }
    for id in &reports_started {
        let got = settled(&live, id, bound + Duration::from_secs(10)).await;
        match &got.task.payload {
            TaskPayload::Failed { error } => {
                let why = error["message"].as_str().unwrap();
                assert!(why.contains("declared not safe to run again"), "{why}");
                failed += 1;
            }
            TaskPayload::Completed { .. } => reported += 1,
            other => panic!("a report ends done or failed, not {other:?}"),
        }
    }
    let (working,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM erp_tasks WHERE status IN ('working', 'input_required')",
    )
    .fetch_one(t.db.pool())
    .await
    .unwrap();
    assert_eq!(working, 0, "no task left working");
    let slowest = left_after.iter().max().unwrap();
    println!(
        "{kills} kills in {:?}, {in_flight} tasks working on the replica killed: {} drafts done once each ({taken_over} take-overs, at most {most} of \
         one draft, {replayed} replayed a committed draft), reports {reported} done and {failed} failed with the \
         reason; a killed replica's tasks left it at most {slowest:?} after the kill (bound \
         {bound:?})",
        run.elapsed(),
        drafts_started.len(),
    );
}
on_both_backends!(replicas_killed_again_and_again_leave_no_task_behind);
