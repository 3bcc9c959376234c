//! The group-commit audit writer: one task per [`Database`](super::Database) that owns the
//! audit log's write connection, takes every row that has queued and commits it as one
//! multi-row transaction, then wakes each caller whose row it carried.
//!
//! # The guarantee
//!
//! - **No read result leaves the server, and no draft commits, before that call's attempt
//!   row is durable.** A draft hands its `attempt` row to the writer and gets a
//!   [`PendingRow`], and waits until [`PendingRow::durable`] returns the row's id before
//!   its transaction commits. A read, which changes nothing, is written once, finished,
//!   when it ends, and its result is held until that row is durable; only a read running
//!   longer than the runtime's `read_attempt_after` hands its `attempt` row over while it
//!   runs (`runtime/read.rs`). "Durable" is what a commit means on the
//!   backend: PostgreSQL with `synchronous_commit` as configured, SQLite in WAL mode with
//!   `synchronous = FULL` by default (survives a crash of the process and of the
//!   operating system; see the guide's audit chapter, "What survives what").
//! - **Every call ends with exactly one finished audit row.** The final outcome is
//!   written on the same row: by the draft's own transaction (PostgreSQL), by the writer
//!   after the call (reads, failed drafts, SQLite drafts), or folded into the attempt row
//!   itself when the call finished before the writer took the row (one `INSERT` of the
//!   finished row instead of an `INSERT` and an `UPDATE`). A row left at `attempt` by a
//!   crash is closed at the next start: from the idempotency key rows for SQLite drafts
//!   (`Database::connect`), by the recovery pass for the rest.
//! - **No row is ever dropped.** The queue is bounded ([`QUEUE_CAPACITY`]); when the writer
//!   falls behind, callers wait to enqueue. A batch that fails to commit is reported to
//!   every caller waiting on one of its rows (their calls fail: the result is withheld, a
//!   draft is rolled back); outcome updates of a failed batch are retried.
//!   [`AuditWriter::shutdown`] (from `Database::close`) commits everything queued before
//!   it returns.
//!
//! A row that is finished before it is written (a read whose handler answered at its
//! first poll, a refused call, an agent-loop event) is inserted at once, on the writer's
//! connection, by the caller itself when the writer is idle (nothing queued, its
//! connection free: the work of a hand-written insert, without handing the row to the
//! writer task and back); when the writer is busy it joins the queue like any row.
//!
//! Rows whose outcome is not waited for (outcome updates) are committed lazily on
//! PostgreSQL: a batch holding only such rows waits up to [`LAZY_DELAY`] for a row someone
//! waits for, so a lone caller's outcome update rides with its next call's attempt row
//! and one commit (one WAL flush) serves both. On SQLite a lone update is committed at once
//! as its own statement, which costs less than the `BEGIN` and `COMMIT` a shared
//! transaction would add.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

use super::audit_row::{Final, NewRow};
use super::batch::{Work, commit, commit_closing_on_error};
use super::chain::Chain;
use super::error::StoreError;
use crate::audit::AuditId;
use crate::tool::handles::Backend;

/// Most jobs waiting for the writer; beyond this, callers wait to enqueue.
pub(crate) const QUEUE_CAPACITY: usize = 4096;
/// Most jobs committed in one transaction.
pub(crate) const MAX_BATCH: usize = 512;
/// How long a batch of outcome updates alone waits for company before it commits, on
/// PostgreSQL (on SQLite it does not wait).
pub(crate) const LAZY_DELAY: Duration = Duration::from_millis(2);
/// How often an outcome update of a failed batch is retried before it is left to the
/// recovery pass (logged as an error). The writer waits 20 ms before the first retry and
/// twice as long before each next one (at most [`MAX_RETRY_WAIT`]), so a database that
/// drops its connections several times in a row (a failover) still gets every update.
const FINISH_RETRIES: u32 = 8;
/// The longest wait between two retries of a failed batch's outcome updates.
const MAX_RETRY_WAIT: Duration = Duration::from_millis(640);
/// How often a batch the database rolled back to break a deadlock (or refused as a
/// serialization failure) is committed again, whole, before its callers are failed.
const VICTIM_RETRIES: u32 = 4;

/// What a caller waits on for its row: the id once committed, or why it was not.
type Ack = oneshot::Sender<Result<AuditId, String>>;

/// A queued insert's final outcome, if the caller finished before the writer took it.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
}

#[derive(Default)]
enum SlotState {
    /// Still in the queue; the final outcome if the call already ended.
    #[default]
    Queued,
    Completed(Box<Final>),
    /// Taken into a batch: the caller must finish the row with an update.
    Taken,
}

enum Job {
    Insert {
        row: Box<NewRow>,
        slot: Option<Arc<Slot>>,
        ack: Ack,
    },
    Finish {
        id: AuditId,
        fin: Final,
        tries: u32,
    },
    /// Row `id` was finished outside the writer with `fin` (if known): link it.
    Link {
        id: AuditId,
        fin: Option<Final>,
    },
    /// Link the finished rows left unlinked by stopped processes (of replicas not in
    /// `live`); answered with how many were linked.
    Sweep {
        live: Vec<String>,
        done: oneshot::Sender<u64>,
    },
    /// Answered once everything queued before it is committed.
    Flush(oneshot::Sender<()>),
    Shutdown(oneshot::Sender<()>),
}

impl Job {
    fn is_waited_for(&self) -> bool {
        !matches!(self, Job::Finish { .. } | Job::Link { .. })
    }
}

/// The sending side of a database's audit writer.
pub(crate) struct AuditWriter {
    jobs: mpsc::Sender<Job>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The writer's pool (one connection), for [`AuditWriter::insert_finished`].
    pool: AnyPool,
    backend: Backend,
    /// The writer's hash chain, used by whoever holds the pool's one connection.
    chain: Arc<tokio::sync::Mutex<Chain>>,
}

/// A handle that asks the writer to link rows finished elsewhere (the lease pass's).
#[derive(Clone)]
pub(crate) struct LinkHandle {
    jobs: mpsc::Sender<Job>,
}

impl LinkHandle {
    /// Links the finished rows no writer linked, but those of the `live` replicas (whose
    /// own writers link them); returns how many.
    pub(crate) async fn sweep(&self, live: Vec<String>) -> Result<u64, StoreError> {
        let (done, rx) = oneshot::channel();
        self.jobs
            .send(Job::Sweep { live, done })
            .await
            .map_err(|_| closed())?;
        rx.await.map_err(|_| closed())
    }
}

/// An attempt row handed to the writer, not yet known to be durable.
pub(crate) struct PendingRow {
    slot: Arc<Slot>,
    ack: oneshot::Receiver<Result<AuditId, String>>,
    at: String,
}

impl PendingRow {
    /// The row's `at`: with its id, where PostgreSQL finds it (the month's partition).
    pub(crate) fn at(&self) -> &str {
        &self.at
    }

    /// Puts the call's final outcome on the row while it is still queued, so the writer
    /// inserts the finished row at once. Gives `fin` back when the writer has already
    /// taken the row (finish it with [`AuditWriter::finish`] after [`Self::durable`]).
    pub(crate) fn complete_in_queue(&self, fin: Final) -> Result<(), Box<Final>> {
        if fin.erp.is_some() {
            // The insert has no ERP columns: such an outcome is always an update.
            return Err(Box::new(fin));
        }
        let mut state = self.slot.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            SlotState::Queued => {
                *state = SlotState::Completed(Box::new(fin));
                Ok(())
            }
            _ => Err(Box::new(fin)),
        }
    }

    /// Waits until the row is committed and returns its id.
    pub(crate) async fn durable(self) -> Result<AuditId, StoreError> {
        match self.ack.await {
            Ok(Ok(id)) => Ok(id),
            Ok(Err(e)) => Err(StoreError::AuditWrite(e)),
            Err(_) => Err(StoreError::AuditWrite(
                "the audit writer stopped before committing the row".into(),
            )),
        }
    }
}

fn closed() -> StoreError {
    StoreError::AuditWrite("the database is closed".into())
}

impl AuditWriter {
    /// Starts the writer for the audit log on `pool` (a pool of its own, one connection),
    /// linking finished rows into `chain`.
    pub(crate) fn start(pool: AnyPool, backend: Backend, chain: Chain) -> AuditWriter {
        let (jobs, rx) = mpsc::channel(QUEUE_CAPACITY);
        let chain = Arc::new(tokio::sync::Mutex::new(chain));
        let task = tokio::spawn(run(pool.clone(), backend, chain.clone(), rx));
        AuditWriter {
            jobs,
            task: Mutex::new(Some(task)),
            pool,
            backend,
            chain,
        }
    }

    /// A handle for the lease pass.
    pub(crate) fn link_handle(&self) -> LinkHandle {
        LinkHandle {
            jobs: self.jobs.clone(),
        }
    }

    /// Queues the link of row `id`, finished outside the writer with `fin`.
    pub(crate) async fn link(&self, id: AuditId, fin: Final) -> Result<(), StoreError> {
        self.jobs
            .send(Job::Link { id, fin: Some(fin) })
            .await
            .map_err(|_| closed())
    }

    /// Commits a finished `row` and returns its id once it is durable: at once, on the
    /// writer's connection, when the writer is idle (nothing queued, its connection free),
    /// which is exactly the work of an insert written by hand; otherwise through the queue,
    /// with whatever else is waiting.
    pub(crate) async fn insert_finished(&self, row: NewRow) -> Result<AuditId, StoreError> {
        let idle = !self.jobs.is_closed() && self.jobs.capacity() == self.jobs.max_capacity();
        if let Some(conn) = idle.then(|| self.pool.try_acquire()).flatten() {
            let mut chain = self.chain.lock().await;
            let mut work = Work {
                rows: vec![row],
                ..Work::default()
            };
            return commit_closing_on_error(conn, self.backend, &mut chain, &mut work)
                .await
                .map(|ids| ids[0])
                .map_err(|e| StoreError::AuditWrite(e.to_string()));
        }
        self.insert(row).await?.durable().await
    }

    /// Queues `row` (waiting while the queue is full) and returns the handle to wait on.
    pub(crate) async fn insert(&self, row: NewRow) -> Result<PendingRow, StoreError> {
        let slot = Arc::new(Slot::default());
        let (ack, rx) = oneshot::channel();
        let at = row.at.clone();
        self.jobs
            .send(Job::Insert {
                row: Box::new(row),
                slot: Some(slot.clone()),
                ack,
            })
            .await
            .map_err(|_| closed())?;
        Ok(PendingRow { slot, ack: rx, at })
    }

    /// Queues the final outcome of row `id` (waiting while the queue is full); it is
    /// committed with a later batch.
    pub(crate) async fn finish(&self, id: AuditId, fin: Final) -> Result<(), StoreError> {
        self.jobs
            .send(Job::Finish { id, fin, tries: 0 })
            .await
            .map_err(|_| closed())
    }

    /// Waits until everything queued before this call (rows and outcome updates) is
    /// committed, so a read of the log that follows sees it.
    pub(crate) async fn flush(&self) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.jobs.send(Job::Flush(tx)).await.map_err(|_| closed())?;
        rx.await.map_err(|_| closed())
    }

    /// Commits everything queued before this call and stops the writer; later rows are
    /// refused with "the database is closed".
    pub(crate) async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.jobs.send(Job::Shutdown(tx)).await.is_ok() {
            let _ = rx.await;
        }
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

async fn run(
    pool: AnyPool,
    backend: Backend,
    chain: Arc<tokio::sync::Mutex<Chain>>,
    mut rx: mpsc::Receiver<Job>,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut stopping: Vec<oneshot::Sender<()>> = Vec::new();
    let mut retry: Vec<Job> = Vec::new();
    loop {
        batch.append(&mut retry);
        if batch.is_empty() && rx.recv_many(&mut batch, MAX_BATCH).await == 0 {
            break;
        }
        // Outcome updates alone: on PostgreSQL, wait a little for a row someone waits for.
        if backend == Backend::Postgres && !batch.iter().any(Job::is_waited_for) {
            let deadline = tokio::time::Instant::now() + LAZY_DELAY;
            while batch.len() < MAX_BATCH && !batch.iter().any(Job::is_waited_for) {
                let room = MAX_BATCH - batch.len();
                let more = rx.recv_many(&mut batch, room);
                match tokio::time::timeout_at(deadline, more).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        crate::telemetry::record::audit_batch(batch.len(), rx.len());
        let mut work = Work::default();
        let mut acks = Vec::new();
        let mut tries = Vec::new();
        let mut flushed = Vec::new();
        let mut swept = Vec::new();
        for job in batch.drain(..) {
            match job {
                Job::Insert { row, slot, ack } => {
                    work.rows.push(take(*row, slot));
                    acks.push(ack);
                }
                Job::Finish { id, fin, tries: t } => {
                    work.fins.push((id, fin));
                    tries.push(t);
                }
                Job::Link { id, fin } => work.links.push((id, fin)),
                Job::Sweep { live, done } => {
                    work.sweep = Some(live);
                    swept.push(done);
                }
                Job::Flush(done) => flushed.push(done),
                Job::Shutdown(done) => {
                    rx.close();
                    stopping.push(done);
                }
            }
        }
        let committed = if work.is_empty() {
            // A batch of flushes only: everything before it is committed already.
            Ok(Vec::new())
        } else {
            commit_again_if_chosen_as_victim(&pool, backend, &chain, &mut work).await
        };
        match committed {
            Ok(ids) => {
                for (ack, id) in acks.into_iter().zip(ids) {
                    let _ = ack.send(Ok(id));
                }
                for done in swept {
                    let _ = done.send(work.swept);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, rows = work.rows.len(), updates = work.fins.len(),
                    "could not commit a batch of audit rows");
                let text = e.to_string();
                for ack in acks {
                    let _ = ack.send(Err(text.clone()));
                }
                for ((id, fin), tries) in work.fins.into_iter().zip(tries) {
                    if tries + 1 < FINISH_RETRIES {
                        retry.push(Job::Finish {
                            id,
                            fin,
                            tries: tries + 1,
                        });
                    } else {
                        tracing::error!(
                            audit_id = id,
                            "gave up recording a call's outcome; \
                            the row stays `attempt` until the recovery pass closes it"
                        );
                    }
                }
                // Links and sweeps are not retried: the next lease pass links what is left.
                let tries = retry
                    .iter()
                    .filter_map(|job| match job {
                        Job::Finish { tries, .. } => Some(*tries),
                        _ => None,
                    })
                    .max();
                if let Some(tries) = tries {
                    let wait = Duration::from_millis(20) * 2u32.saturating_pow(tries - 1);
                    tokio::time::sleep(wait.min(MAX_RETRY_WAIT)).await;
                }
            }
        }
        // A flush is answered once everything queued before it is committed: after a
        // failed batch, that includes the outcome updates being retried, so its waiters
        // are answered with them.
        if retry.is_empty() {
            for done in flushed {
                let _ = done.send(());
            }
        } else {
            retry.extend(flushed.into_iter().map(Job::Flush));
        }
    }
    for done in stopping {
        let _ = done.send(());
    }
}

/// [`commit`], again when PostgreSQL rolled the batch back to break a deadlock or a
/// serialization conflict: several replicas' writers and lease passes update the same
/// runs' summary lines, and one of two transactions waiting on each other is chosen as the
/// victim. Nothing of a rolled-back batch was written and its links are assigned anew, so
/// committing it again is safe; its callers are failed only if it keeps losing.
async fn commit_again_if_chosen_as_victim(
    pool: &AnyPool,
    backend: Backend,
    chain: &tokio::sync::Mutex<Chain>,
    work: &mut Work,
) -> Result<Vec<AuditId>, sqlx::Error> {
    let mut lost = 0;
    loop {
        match commit(pool, backend, chain, work).await {
            Err(e) if lost < VICTIM_RETRIES && chosen_as_victim(&e) => {
                lost += 1;
                tracing::warn!(error = %e, attempt = lost,
                    "the database rolled back a batch of audit rows to break a conflict; \
                    committing it again");
                tokio::time::sleep(Duration::from_millis(10) * 2u32.pow(lost)).await;
            }
            done => return done,
        }
    }
}

/// A transaction PostgreSQL rolled back because of another one: `40P01`
/// (deadlock_detected) or `40001` (serialization_failure).
fn chosen_as_victim(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|code| code == "40P01" || code == "40001")
}

/// The row to insert: finished with the call's outcome if the caller got there first.
fn take(mut row: NewRow, slot: Option<Arc<Slot>>) -> NewRow {
    if let Some(slot) = slot {
        let mut state = slot.state.lock().unwrap_or_else(|p| p.into_inner());
        if let SlotState::Completed(fin) = std::mem::replace(&mut *state, SlotState::Taken) {
            row.apply(*fin);
        }
    }
    row
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
