//! The tasks this replica runs ([`TaskBoard`]): what a drain waits for, and what it hands
//! over when its grace runs out.
//!
//! A drain (SIGTERM, SIGINT, [`ServeOptions::drain`](crate::mcp::ServeOptions::drain))
//! stops taking tasks (a new one is refused, a question's answer and a dead replica's
//! task are left to another replica), lets the running ones finish within the shutdown
//! grace, then releases the lease of those still running: their rows stay `working` but
//! held by no replica, so the next live replica takes them over at once (by its sweep
//! or the next `tasks/get`), and their handlers here are cancelled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::store::Database;
use crate::store::tasks as store;
use crate::text;
use crate::tool::cancel::CancelFlag;

/// How often a replica looks for tasks to take over, by default.
pub(crate) const DEFAULT_SWEEP: Duration = Duration::from_secs(5);

/// The tasks running on this replica, and whether it is draining.
#[derive(Clone, Debug)]
pub(crate) struct TaskBoard(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    running: Mutex<HashMap<String, CancelFlag>>,
    /// The number of tasks running, for a drain to wait on.
    count: watch::Sender<usize>,
    draining: AtomicBool,
    /// How often the sweep looks for tasks to take over.
    sweep: Mutex<Duration>,
    /// The database of the tasks (set by the router that serves them).
    db: OnceLock<Database>,
}

impl Default for TaskBoard {
    fn default() -> Self {
        TaskBoard(Arc::new(Inner {
            running: Mutex::default(),
            count: watch::channel(0).0,
            draining: AtomicBool::new(false),
            sweep: Mutex::new(DEFAULT_SWEEP),
            db: OnceLock::new(),
        }))
    }
}

/// A task on the board until dropped.
pub(crate) struct OnBoard {
    board: TaskBoard,
    id: String,
}

impl Drop for OnBoard {
    fn drop(&mut self) {
        let mut running = self.board.running();
        running.remove(&self.id);
        self.board.0.count.send_replace(running.len());
    }
}

impl TaskBoard {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancelFlag>> {
        self.0.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts task `id` (cancelled through `flag`) on the board.
    pub(crate) fn enter(&self, id: &str, flag: CancelFlag) -> OnBoard {
        let mut running = self.running();
        running.insert(id.to_string(), flag);
        self.0.count.send_replace(running.len());
        OnBoard {
            board: self.clone(),
            id: id.to_string(),
        }
    }

    /// Whether this replica is draining (takes no task).
    pub(crate) fn draining(&self) -> bool {
        self.0.draining.load(Ordering::Acquire)
    }

    /// How often the sweep looks for tasks to take over.
    pub(crate) fn sweep_every(&self) -> Duration {
        *self.0.sweep.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets how often the sweep looks for tasks to take over.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn set_sweep_every(&self, every: Duration) {
        *self.0.sweep.lock().unwrap_or_else(|e| e.into_inner()) =
            every.max(Duration::from_millis(50));
    }

    /// Keeps `db`, the database of the tasks on this board, for [`drain`](Self::drain).
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn attach(&self, db: &Database) {
        let _ = self.0.db.set(db.clone());
    }

    /// Drains: takes no more tasks, waits up to `grace` for the running ones to end, then
    /// releases those still running to another replica and cancels them here. Returns how
    /// many were released.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) async fn drain(&self, grace: Duration) -> usize {
        self.0.draining.store(true, Ordering::Release);
        let Some(db) = self.0.db.get() else {
            return 0;
        };
        let mut count = self.0.count.subscribe();
        if *count.borrow() > 0 {
            tracing::info!(
                tasks = *count.borrow(),
                ?grace,
                "draining: waiting for the running tasks"
            );
        }
        let _ = tokio::time::timeout(grace, count.wait_for(|n| *n == 0)).await;
        let left: Vec<(String, CancelFlag)> = self
            .running()
            .iter()
            .map(|(id, flag)| (id.clone(), flag.clone()))
            .collect();
        let mut released = 0;
        for (id, flag) in left {
            match store::release(db.pool(), &id, db.replica_id(), text::tasks::TASK_RELEASED).await
            {
                Ok(true) => {
                    released += 1;
                    tracing::info!(task = %id, "a running task was released to another replica");
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(task = %id, error = %e, "a running task could not be released")
                }
            }
            flag.cancel();
        }
        released
    }
}
