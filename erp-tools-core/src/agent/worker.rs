//! [`RunWorker`]: the take-over loop every process keeping a [`RunLog`](super::RunLog)
//! needs, started with [`Agent::recover_runs_every`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::builder::Agent;
use super::model::Model;
use super::run_log::LoggedRun;
use super::takeover::Recovered;
use crate::tool::context::Principal;

/// Most runs one pass of a [`RunWorker`] takes over.
const PASS_LIMIT: i64 = 100;

/// A background task taking over the runs cut off by dead processes, every interval
/// (see [`Agent::recover_runs_every`]). Dropping it aborts the task; [`stop`](Self::stop)
/// lets the current pass finish first.
#[derive(Debug)]
pub struct RunWorker {
    stop: Arc<Notify>,
    counts: Arc<Counts>,
    task: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Counts {
    passes: AtomicU64,
    continued: AtomicU64,
    cannot_continue: AtomicU64,
}

impl Agent {
    /// Starts a [`RunWorker`] on the current Tokio runtime: at once and then every
    /// `every` (a replica lease, [`DatabaseOptions::replica_lease`](crate::DatabaseOptions::replica_lease),
    /// is a good interval), it takes over every run cut off by a dead process
    /// and every run paused for an approved action never acted on ([`Agent::recover_runs`],
    /// at most 100 of each a pass, one after the other) and drives each
    /// until it stops or pauses. `continue_with` gives, for a run, the principal it acts
    /// for and a model to go on with, or `Err(reason)`: the run then ends as
    /// [`CANNOT_CONTINUE`](super::CANNOT_CONTINUE). Several processes may each run one:
    /// a run is taken over by one of them. Failures of a pass are logged (`tracing`) and
    /// the next pass tries again.
    ///
    /// ```no_run
    /// # async fn demo(agent: erp_tools_core::agent::Agent,
    /// #     manager: std::sync::Arc<erp_tools_core::Principal>) {
    /// use std::{sync::Arc, time::Duration};
    /// use erp_tools_core::agent::{Model, ScriptedModel};
    ///
    /// let agent = Arc::new(agent); // built with .run_log(RunLog::new(db.clone()))
    /// let worker = agent.recover_runs_every(Duration::from_secs(15), move |run| {
    ///     if run.user_id != "u-manager" {
    ///         return Err(format!("no credentials for {} in this process", run.user_id));
    ///     }
    ///     let model: Box<dyn Model> = Box::new(ScriptedModel::new([])); // your provider
    ///     Ok((manager.clone(), model))
    /// });
    /// // ... serve; on shutdown, let the pass under way finish:
    /// worker.stop().await;
    /// # }
    /// ```
    pub fn recover_runs_every<F>(self: &Arc<Self>, every: Duration, continue_with: F) -> RunWorker
    where
        F: FnMut(&LoggedRun) -> Result<(Arc<Principal>, Box<dyn Model>), String> + Send + 'static,
    {
        let (stop, counts) = (Arc::new(Notify::new()), Arc::new(Counts::default()));
        let task = tokio::spawn(worker(
            self.clone(),
            every,
            continue_with,
            stop.clone(),
            counts.clone(),
        ));
        RunWorker {
            stop,
            counts,
            task: Some(task),
        }
    }
}

async fn worker<F>(
    agent: Arc<Agent>,
    every: Duration,
    mut continue_with: F,
    stop: Arc<Notify>,
    counts: Arc<Counts>,
) where
    F: FnMut(&LoggedRun) -> Result<(Arc<Principal>, Box<dyn Model>), String> + Send + 'static,
{
    loop {
        match agent.recover_runs(PASS_LIMIT, &mut continue_with).await {
            Ok(done) => {
                for (run, how) in done {
                    match how {
                        Recovered::Continued(out) => {
                            counts.continued.fetch_add(1, Ordering::Relaxed);
                            let status = out.status.as_str();
                            tracing::info!(run = %run, status, "took over a cut-off run");
                        }
                        Recovered::CannotContinue(why) => {
                            counts.cannot_continue.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(run = %run, reason = %why, "a cut-off run cannot be continued");
                        }
                        Recovered::Skipped(e) => {
                            tracing::debug!(run = %run, error = %e, "a cut-off run was not taken over");
                        }
                        Recovered::Resumed { approval, outcome } => {
                            counts.continued.fetch_add(1, Ordering::Relaxed);
                            let status = outcome.status.as_str();
                            tracing::info!(run = %run, approval, status, "resumed an approved action left waiting");
                        }
                        Recovered::NotResumed { approval, error } => {
                            tracing::info!(run = %run, approval, error = %error, "an approved action left waiting was not resumed");
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "the take-over pass failed; trying again later"),
        }
        counts.passes.fetch_add(1, Ordering::Relaxed);
        tokio::select! {
            () = stop.notified() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}

impl RunWorker {
    /// Passes completed so far.
    pub fn passes(&self) -> u64 {
        self.counts.passes.load(Ordering::Relaxed)
    }

    /// Runs taken over, or resumed from an approval left waiting, and driven until they
    /// stopped or paused, so far.
    pub fn continued(&self) -> u64 {
        self.counts.continued.load(Ordering::Relaxed)
    }

    /// Runs ended as [`CANNOT_CONTINUE`](super::CANNOT_CONTINUE), so far.
    pub fn cannot_continue(&self) -> u64 {
        self.counts.cannot_continue.load(Ordering::Relaxed)
    }

    /// Stops the worker once the pass under way (if any) has finished: a run it drives
    /// stops or pauses as usual rather than being cut off.
    pub async fn stop(mut self) {
        self.stop.notify_one();
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
            && e.is_panic()
        {
            tracing::error!(error = %e, "the take-over worker panicked");
        }
    }
}

impl Drop for RunWorker {
    /// Aborts the task: a run it was driving stops where it was, still `running` under
    /// this process's replica; it is taken over once this process has stopped and its
    /// replica lease expired.
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
