//! Crash injection for durable agent runs: each round, a child process starts a batch of
//! `--runs` scripted runs (order, pay, answer) with a run log, and the harness `kill -9`s
//! it at a random moment; the next round's child first takes over the runs the dead one
//! left (once its replica lease expired), then starts its own batch; `--kills` rounds,
//! then a last child that is not killed runs until every run ended. Then it checks, from
//! the database and the model's own count:
//!
//! - every run ended with an explicit status (`done`);
//! - no draft exists twice (one purchase order and one payment request per run);
//! - token usage is counted once (each run's log holds exactly its three turns' tokens);
//! - model turns requested vs needed: a turn is requested again only in a run that was cut
//!   off, at most once per cut, and only because the process died between the model's
//!   answer and its storing (`answer_lost_before_stored`: the answer went with the
//!   process); a turn whose answer was stored is never asked again (`stored_asked_again`,
//!   from the log as the model saw it when asked, must be 0).
//!
//! ```text
//! run_crash_harness --backend sqlite --kills 20 --runs 20 --seed 1
//! run_crash_harness --backend postgres --kill-ms 300-1500   # a slow machine: later kills
//! ERP_TOOLS_PG_URL=postgres://root@127.0.0.1:5432/test run_crash_harness --backend postgres
//! ```
//!
//! Bounded: each round lasts at most a second plus a lease; it prints one summary line
//! (`runs=.. kills=.. turns_requested=.. turns_needed=.. ...`) and exits non-zero on the
//! first broken invariant, naming it. `scripts/crash/runs.sh` builds and runs it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use erp_tools_core::agent::{
    Agent, Message, Model, ModelAction, ModelError, RunLog, RunRequest, TokenUsage, ToolSpec,
};
use erp_tools_core::sqlx;
use erp_tools_core::{Database, DatabaseOptions, ToolRuntime};
use erp_tools_tests::agent::{order, pay, policy};
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::{self, App};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::Rng;
use erp_tools_tests::principals::MANAGER;
use futures::future::BoxFuture;

/// Tokens each turn reports.
const TURN: TokenUsage = TokenUsage {
    input_tokens: 100,
    output_tokens: 10,
};
/// Turns each run needs.
const TURNS: usize = 3;
/// The children's replica lease: a killed child's runs are taken over after it.
const LEASE: Duration = Duration::from_millis(300);

struct Args {
    backend: String,
    kills: usize,
    runs: usize,
    seed: u64,
    child: Option<(String, String)>,
    batch: usize,
    /// The kill lands this many milliseconds after a child started, at random between.
    kill_ms: (u64, u64),
}

fn parse_args() -> Args {
    let mut a = Args {
        backend: "sqlite".into(),
        kills: 20,
        runs: 20,
        seed: 1,
        child: None,
        batch: 0,
        kill_ms: (30, 400),
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut it = argv.iter();
    let (mut url, mut turns) = (None, None);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--backend" => a.backend = value.clone(),
            "--kills" => a.kills = value.parse().expect("--kills N"),
            "--runs" => a.runs = value.parse().expect("--runs N"),
            "--seed" => a.seed = value.parse().expect("--seed N"),
            "--child-url" => url = Some(value.clone()),
            "--turns-file" => turns = Some(value.clone()),
            "--batch" => a.batch = value.parse().expect("--batch N"),
            "--kill-ms" => {
                a.kill_ms = value
                    .split_once('-')
                    .and_then(|(lo, hi)| Some((lo.parse().ok()?, hi.parse().ok()?)))
                    .filter(|(lo, hi)| lo <= hi)
                    .expect("--kill-ms LO-HI, e.g. 30-400 (milliseconds after a child started)")
            }
            other => panic!(
                "unknown flag {other}; flags: --backend --kills --runs --seed --kill-ms LO-HI"
            ),
        }
    }
    a.child = url.zip(turns);
    a
}

fn run_id(batch: usize, i: usize) -> String {
    format!("crash-run-{batch}-{i}")
}

/// The scripted model of run `i`: order, pay, answer, chosen by the tool results seen so
/// far; each answered request is appended to the turns file (`<run> <turn> <state>`)
/// before it is returned, as the provider would bill it. `<state>` is what the run log
/// held of that turn when it was asked: `stored` (the turn's answer was already in the
/// log: a stored turn asked again, which must never happen) or `new`.
struct CountingModel {
    run: String,
    turns: Arc<std::fs::File>,
    db: Database,
}

impl Model for CountingModel {
    fn next<'a>(
        &'a mut self,
        history: &'a [Message],
        _tools: &'a [ToolSpec],
    ) -> BoxFuture<'a, Result<ModelAction, ModelError>> {
        Box::pin(async move {
            let seen = history
                .iter()
                .filter(|m| m.as_tool_result().is_some())
                .count();
            // The model thinks for a moment (5 to 40 ms), so kills land anywhere in a run.
            let think = 5 + (self.run.len() * 7 + seen * 13 + history.len()) as u64 % 36;
            tokio::time::sleep(Duration::from_millis(think)).await;
            let i = &self.run;
            let action = match seen {
                0 => order(VENDOR, "5", &format!("po-{i}")),
                1 => pay(VENDOR, "1200.00", &format!("pay-{i}")),
                _ => ModelAction::answer(format!("run {i}: ordered and paid")),
            };
            // Turn `seen + 1` is stored if the log holds a step past the `seen` answered.
            let stored: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM erp_run_turns WHERE agent_run_id = $1 AND step > $2",
            )
            .bind(i.clone())
            .bind(seen as i64)
            .fetch_one(self.db.read_db().pool())
            .await
            .map_err(|e| ModelError::new(e.to_string()))?;
            let state = if stored > 0 { "stored" } else { "new" };
            (&*self.turns)
                .write_all(format!("{i} {} {state}\n", seen + 1).as_bytes())
                .map_err(|e| ModelError::new(e.to_string()))?;
            Ok(action)
        })
    }

    fn take_usage(&mut self) -> TokenUsage {
        TURN
    }
}

/// A child process: takes over the runs a dead child left, starts the runs of its batch
/// (and those of earlier batches never started), until they ended and no run is left
/// running.
async fn child(url: &str, turns_file: &str, batch: usize, runs: usize) {
    let db = Database::connect(DatabaseOptions::new(url).replica_lease(LEASE))
        .await
        .expect("open the database");
    let turns = Arc::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(turns_file)
            .expect("turns file"),
    );
    let log = RunLog::new(db.clone());
    let agent = Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .expect("policy")
        .run_log(log.clone());
    let principal = Arc::new(MANAGER.principal());
    loop {
        agent
            .recover_runs(1000, |run| {
                let model = CountingModel {
                    run: run.run_id.clone(),
                    turns: turns.clone(),
                    db: db.clone(),
                };
                Ok((principal.clone(), Box::new(model) as Box<dyn Model>))
            })
            .await
            .expect("recover runs");
        let mut todo = Vec::new();
        // Its own batch, and any run of an earlier batch whose child died before it
        // started it.
        for b in 0..=batch {
            for i in 0..runs {
                if log.get(&run_id(b, i)).await.expect("read").is_none() {
                    todo.push(run_id(b, i));
                }
            }
        }
        let running: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM erp_run_log WHERE status = 'running'")
                .fetch_one(db.pool())
                .await
                .expect("count running runs");
        if todo.is_empty() && running == 0 {
            return;
        }
        let started = todo.into_iter().map(|run| {
            let (agent, principal, turns) = (&agent, principal.clone(), turns.clone());
            let db = db.clone();
            async move {
                let request = RunRequest::new("Order 5 boxes and pay").run_id(run.clone());
                let mut model = CountingModel { run, turns, db };
                agent.run_with(&principal, &mut model, request).await
            }
        });
        futures::future::join_all(started).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[derive(Default, Debug)]
struct Figures {
    kills: usize,
    children_done_before_kill: usize,
    turns_requested: usize,
    turns_needed: usize,
    turns_requested_twice: usize,
    /// Asked again because the process died after the model answered and before the
    /// answer was stored (the answer was lost with the process).
    answer_lost_before_stored: usize,
    /// Asked again although the answer was stored: a bug, must be 0.
    stored_asked_again: usize,
    taken_over: i64,
    runs_cut_off: usize,
    duplicates: usize,
}

fn fail(what: &str) -> ! {
    eprintln!("run crash harness: invariant broken: {what}");
    std::process::exit(1);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let a = parse_args();
    if let Some((url, turns)) = &a.child {
        child(url, turns, a.batch, a.runs).await;
        return;
    }
    let t = match a.backend.as_str() {
        "sqlite" => TestDb::sqlite().await,
        "postgres" => TestDb::postgres()
            .await
            .expect("ERP_TOOLS_PG_URL must name the PostgreSQL database"),
        other => panic!("--backend sqlite or postgres, not {other}"),
    };
    let app = App::new(&t.db).await;
    let url = t.url().to_string();
    let turns_file = std::env::temp_dir().join(format!(
        "run-crash-{}-{}-{}.turns",
        a.backend,
        a.seed,
        std::process::id()
    ));
    let _ = std::fs::remove_file(&turns_file);
    let exe = std::env::current_exe().expect("this binary");
    let spawn = |batch: usize| {
        Command::new(&exe)
            .args(["--child-url", &url, "--turns-file"])
            .arg(&turns_file)
            .args(["--runs", &a.runs.to_string()])
            .args(["--batch", &batch.to_string()])
            .stdin(Stdio::null())
            .spawn()
            .expect("start a child")
    };
    let mut rng = Rng::seeded(a.seed);
    let mut f = Figures::default();
    let started = Instant::now();
    for round in 0..a.kills {
        let mut c = spawn(round);
        // A random moment: opening the database, taking over, or anywhere in a run.
        let (lo, hi) = a.kill_ms;
        tokio::time::sleep(Duration::from_millis(rng.between(lo, hi))).await;
        if c.try_wait().expect("child status").is_some() {
            f.children_done_before_kill += 1;
        } else {
            c.kill().expect("kill -9 the child");
            f.kills += 1;
        }
        c.wait().expect("reap the child");
    }
    let mut last = spawn(a.kills);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = last.try_wait().expect("child status") {
            if !status.success() {
                fail(&format!("the last child failed: {status}"));
            }
            break;
        }
        if Instant::now() > deadline {
            let _ = last.kill();
            fail("the last child did not finish every run in 120 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Every run ended, explicitly.
    let log = RunLog::new(t.db.clone());
    let all: Vec<String> = (0..=a.kills)
        .flat_map(|b| (0..a.runs).map(move |i| run_id(b, i)))
        .collect();
    let mut cuts = std::collections::HashMap::new();
    for i in &all {
        let run = log
            .get(i)
            .await
            .expect("read the log")
            .unwrap_or_else(|| fail(&format!("run {i} is not in the log")));
        if run.status != "done" {
            fail(&format!("run {i} ended {} ({:?})", run.status, run.result));
        }
        if (run.steps, run.input_tokens, run.output_tokens) != (3, 300, 30) {
            fail(&format!(
                "run {i}: {} turns, {}+{} tokens counted; expected 3 turns, 300+30 tokens",
                run.steps, run.input_tokens, run.output_tokens
            ));
        }
        f.taken_over += run.resume_count;
        cuts.insert(i.clone(), run.resume_count);
        f.runs_cut_off += usize::from(run.resume_count > 0);
    }
    // No draft twice.
    let per_run = |table: &str| {
        format!("SELECT drafted_by_agent_run, COUNT(*) FROM {table} GROUP BY drafted_by_agent_run")
    };
    for table in ["purchase_orders", "payment_requests"] {
        let rows: Vec<(String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(per_run(table)))
            .fetch_all(t.db.pool())
            .await
            .expect("count drafts");
        f.duplicates += rows.iter().filter(|(_, n)| *n > 1).count();
        if rows.len() != all.len() {
            fail(&format!(
                "{table}: {} runs drafted, expected {}",
                rows.len(),
                all.len()
            ));
        }
    }
    if f.duplicates > 0 {
        fail(&format!("{} drafts exist twice", f.duplicates));
    }
    // Turns requested (the model's own count) against turns needed, and why a turn was
    // asked again: its answer lost with the process, or (a bug) asked though stored.
    let text = std::fs::read_to_string(&turns_file).unwrap_or_default();
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for line in text.lines() {
        let (turn, state) = line.rsplit_once(' ').unwrap_or((line, ""));
        let n = seen.entry(turn).or_default();
        *n += 1;
        match (state, *n) {
            ("stored", _) => f.stored_asked_again += 1,
            (_, 1) => {}
            _ => f.answer_lost_before_stored += 1,
        }
    }
    f.turns_requested = text.lines().count();
    f.turns_needed = all.len() * TURNS;
    f.turns_requested_twice = seen.values().map(|n| n - 1).sum();
    if std::env::var_os("RUN_CRASH_VERBOSE").is_some() {
        for (turn, n) in seen.iter().filter(|(_, n)| **n > 1) {
            eprintln!("requested {n} times: {turn}");
        }
    }
    if f.stored_asked_again > 0 {
        fail(&format!(
            "{} stored turns were asked again (see the `stored` lines of {})",
            f.stored_asked_again,
            turns_file.display()
        ));
    }
    if seen.len() != f.turns_needed {
        fail(&format!(
            "{} distinct turns requested, {} needed",
            seen.len(),
            f.turns_needed
        ));
    }
    // A turn is asked again only in a run that was cut off, at most once per cut: the
    // model had answered, and the process died before the answer was stored.
    let mut again = std::collections::HashMap::<&str, i64>::new();
    for (turn, n) in &seen {
        let run = turn.split(' ').next().unwrap_or_default();
        *again.entry(run).or_default() += *n as i64 - 1;
    }
    for (run, n) in again {
        let cut = cuts.get(run).copied().unwrap_or_default();
        if n > cut {
            fail(&format!(
                "run {run}: {n} turns asked again, but it was cut off {cut} times"
            ));
        }
    }
    let _ = std::fs::remove_file(&turns_file);
    drop(app);
    println!(
        "run crash harness {}: runs={} kills={} children_done_before_kill={} runs_cut_off={} \
         taken_over={} turns_requested={} turns_needed={} turns_requested_twice={} \
         answer_lost_before_stored={} stored_asked_again={} duplicates={} all_done=true \
         secs={:.1}",
        a.backend,
        all.len(),
        f.kills,
        f.children_done_before_kill,
        f.runs_cut_off,
        f.taken_over,
        f.turns_requested,
        f.turns_needed,
        f.turns_requested_twice,
        f.answer_lost_before_stored,
        f.stored_asked_again,
        f.duplicates,
        started.elapsed().as_secs_f64()
    );
}
