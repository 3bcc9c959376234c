//! The run log's own connection ([`Journal`]), whose commits do not wait for the disk,
//! for the writes a logged run adds to its steps: each turn's checkpoint, its end when
//! that is not in its last checkpoint, and its start when that is not written with the
//! run's binding (`runs::claim_starting`: a run id used before, or a log on another
//! database).
//!
//! - **Its own connections, held.** The journal takes connections out of the write pool
//!   as runs need them (one on SQLite, which has one writer at a time; up to
//!   [`PG_CONNECTIONS`] on PostgreSQL, so the checkpoints of concurrent runs do not queue
//!   on one) and keeps them. A pooled connection is tested (`sqlx` pings it) every time
//!   it goes back to the pool: a round trip to the SQLite worker thread or to the
//!   PostgreSQL server, and on SQLite's single writer connection a wait for the next
//!   write, which a checkpoint followed by a draft paid twice a step. A held connection
//!   is not returned, so it is not tested.
//! - **Relaxed for the whole session**: PostgreSQL `SET synchronous_commit TO OFF`,
//!   SQLite `PRAGMA synchronous = NORMAL` (its commits are in the write-ahead log, not yet
//!   flushed to the disk). The write pool's connections keep theirs.
//! - **SQLite has one writer at a time**: the journal's writes and the framework's
//!   drafts take turns in the process first ([`Database::write_turn`], one queue in
//!   arrival order), so they do not meet at the file's write lock, where SQLite's busy
//!   handler would have the second sleep and retry. Other writes on the write pool
//!   (approvals, the console's, a run's binding with a new run's row: a durable commit
//!   held in this queue would hold up the checkpoints of every run behind it) wait for
//!   the lock within the busy timeout
//!   ([`DatabaseOptions::busy_timeout`](crate::DatabaseOptions::busy_timeout)).
//!
//! Why relaxed commits keep the run log's promise: once the commit returned, the server
//! (PostgreSQL) or the operating system (SQLite's write-ahead log file) holds it, so a
//! killed process loses nothing. And the log is flushed in order: the next synchronous
//! commit on the database (an action's draft, which commits in full) flushes these
//! commits with it, so no effect of an action is ever durable without the turn that
//! asked for it. Only a crash of the database server or of the machine can lose the
//! latest of them; those turns are then asked again, and their actions replayed through
//! their idempotency keys.
//!
//! A write whose future is dropped before it ended, or whose failure leaves the connection
//! in a state nobody knows, closes the connection, and the next write opens another. A
//! statement PostgreSQL refused, or one rolled back on SQLite, keeps it.

use std::sync::OnceLock;

use sqlx::any::{AnyArguments, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, Connection};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::Database;
use crate::tool::handles::Backend;

/// A statement the journal runs as its own transaction ([`Journal::run`]): its text on
/// each backend, SQLite's sent between `BEGIN IMMEDIATE` and `COMMIT` (the write lock is
/// taken before the statement reads anything, and the three cost one hand-off to the
/// connection's worker thread). On PostgreSQL one statement is its own transaction.
pub(crate) struct Statement {
    postgres: &'static str,
    sqlite: &'static str,
    wrapped: OnceLock<String>,
}

impl Statement {
    /// `sql`, the same on both backends.
    pub(crate) const fn new(sql: &'static str) -> Statement {
        Statement::per_backend(sql, sql)
    }

    /// A text for each backend.
    pub(crate) const fn per_backend(postgres: &'static str, sqlite: &'static str) -> Statement {
        Statement {
            postgres,
            sqlite,
            wrapped: OnceLock::new(),
        }
    }

    /// The text to send on `backend` (SQLite's wrapped the first time it is asked for).
    pub(crate) fn text(&'static self, backend: Backend) -> &'static str {
        match backend {
            Backend::Postgres => self.postgres,
            Backend::Sqlite => self
                .wrapped
                .get_or_init(|| format!("BEGIN IMMEDIATE; {}; COMMIT", self.sqlite)),
        }
    }
}

/// The most connections the run log holds on PostgreSQL.
pub(crate) const PG_CONNECTIONS: usize = 4;

/// The run log's held connections of one [`Database`], opened on first use.
pub(crate) struct Journal {
    idle: std::sync::Mutex<Vec<AnyConnection>>,
    slots: Semaphore,
}

impl Journal {
    /// The journal of a database on `backend`.
    pub(crate) fn new(backend: Backend) -> Journal {
        let n = match backend {
            Backend::Sqlite => 1,
            Backend::Postgres => PG_CONNECTIONS,
        };
        Journal {
            idle: std::sync::Mutex::new(Vec::new()),
            slots: Semaphore::new(n),
        }
    }

    /// A connection for one write (opened if none is idle); on SQLite once it is the
    /// framework's writers' turn.
    pub(crate) async fn lock<'a>(&'a self, db: &'a Database) -> Result<Held<'a>, sqlx::Error> {
        let turn = db.write_turn().await;
        let slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                // From the write pool, with its settings; the pool opens another for
                // itself.
                let mut conn = db.pool().acquire().await?.detach();
                let relax = match db.backend() {
                    Backend::Postgres => "SET synchronous_commit TO OFF",
                    Backend::Sqlite => "PRAGMA synchronous = NORMAL",
                };
                sqlx::raw_sql(relax).execute(&mut conn).await?;
                conn
            }
        };
        Ok(Held {
            conn: Some(conn),
            journal: self,
            clean: false,
            backend: db.backend(),
            _slot: slot,
            _turn: turn,
        })
    }

    /// Runs `query`, made from a [`Statement`]'s text, as one relaxed transaction; the rows
    /// it returns. (Not its count of rows: on SQLite that would be the last statement's,
    /// `COMMIT`'s, which repeats an earlier one's.)
    pub(crate) async fn run(
        &self,
        db: &Database,
        query: Query<'_, Any, AnyArguments>,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let mut held = self.lock(db).await?;
        match query.fetch_all(held.conn()).await {
            Ok(done) => {
                held.done();
                Ok(done)
            }
            Err(e) => {
                match db.backend() {
                    // The statement failed between `BEGIN` and `COMMIT`.
                    Backend::Sqlite => held.roll_back().await,
                    Backend::Postgres if e.as_database_error().is_some() => held.done(),
                    Backend::Postgres => {}
                }
                Err(e)
            }
        }
    }

    /// Closes the idle connections and refuses new writes (at [`Database::close`]).
    pub(crate) async fn close(&self) {
        self.slots.close();
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for conn in idle {
            if let Err(e) = conn.close().await {
                tracing::warn!(error = %e, "could not close a connection of the run log");
            }
        }
    }
}

/// One of the journal's connections during one write. Dropped after [`done`](Self::done),
/// it goes back to the journal; before (an error, or the write's future dropped), it is
/// closed.
pub(crate) struct Held<'a> {
    conn: Option<AnyConnection>,
    journal: &'a Journal,
    clean: bool,
    backend: Backend,
    _slot: SemaphorePermit<'a>,
    _turn: Option<SemaphorePermit<'a>>,
}

impl Held<'_> {
    /// The connection.
    fn conn(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("kept until dropped")
    }

    /// Runs `write` in one transaction (relaxed, as every commit on this connection).
    pub(crate) async fn transaction<T>(
        mut self,
        write: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let begin = match self.backend {
            Backend::Postgres => "BEGIN",
            Backend::Sqlite => "BEGIN IMMEDIATE",
        };
        sqlx::raw_sql(begin).execute(self.conn()).await?;
        let out = write(self.conn()).await?;
        sqlx::raw_sql("COMMIT").execute(self.conn()).await?;
        self.done();
        Ok(out)
    }

    /// The write ended and left no transaction open: the connection is kept.
    fn done(&mut self) {
        self.clean = true;
    }

    /// After a statement failed: rolls back what it left open and keeps the connection
    /// if that worked.
    async fn roll_back(&mut self) {
        if sqlx::raw_sql("ROLLBACK").execute(self.conn()).await.is_ok() {
            self.done();
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Not clean: dropped, not closed (a dropped `sqlx` connection ends its session).
        if let Some(conn) = self.conn.take().filter(|_| self.clean) {
            let mut idle = self.journal.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(conn);
        }
    }
}
