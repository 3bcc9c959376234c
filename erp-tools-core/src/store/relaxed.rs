//! The run log's own connection ([`Journal`]), whose commits do not wait for the disk,
//! for the writes a logged run adds to its steps (its start, each turn's checkpoint, its
//! end once done).
//!
//! - **One connection, held.** The journal takes one connection out of the write pool the
//!   first time a run is logged and keeps it behind an async lock. A pooled connection is
//!   tested (`sqlx` pings it) every time it goes back to the pool: a round trip to the
//!   SQLite worker thread or to the PostgreSQL server, and on SQLite's single writer
//!   connection a wait for the next write, which a checkpoint followed by a draft paid
//!   twice a step. A held connection is not returned, so it is not tested.
//! - **Relaxed for the whole session**: PostgreSQL `SET synchronous_commit TO OFF`,
//!   SQLite `PRAGMA synchronous = NORMAL` (its commits are in the write-ahead log, not yet
//!   flushed to the disk). The write pool's connections keep theirs.
//! - **SQLite has one writer at a time**: the journal's writes and the framework's
//!   drafts take turns in the process first ([`Database::write_turn`]), so they do not
//!   meet at the file's write lock, where SQLite's busy handler would have the second
//!   sleep and retry. Other writes on the write pool (approvals, the console's) wait for
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
//! A write that fails, or whose future is dropped before it ended, leaves the connection
//! in a state nobody knows: the connection is closed, and the next write opens another.

use std::sync::Arc;

use sqlx::any::{AnyArguments, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, Connection};
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::Database;
use crate::tool::handles::Backend;

/// The run log's held connection of one [`Database`], opened on first use.
#[derive(Clone, Default)]
pub(crate) struct Journal {
    conn: Arc<Mutex<Option<AnyConnection>>>,
}

impl Journal {
    /// The connection, for one write (opened if there is none).
    pub(crate) async fn lock(&self, db: &Database) -> Result<Held, sqlx::Error> {
        let mut slot = self.conn.clone().lock_owned().await;
        if slot.is_none() {
            // From the write pool, with its settings; the pool opens another for itself.
            let mut conn = db.pool().acquire().await?.detach();
            let relax = match db.backend() {
                Backend::Postgres => "SET synchronous_commit TO OFF",
                Backend::Sqlite => "PRAGMA synchronous = NORMAL",
            };
            sqlx::raw_sql(relax).execute(&mut conn).await?;
            *slot = Some(conn);
        }
        Ok(Held {
            slot,
            clean: false,
            backend: db.backend(),
        })
    }

    /// `sql`, one statement, as [`run`](Self::run) takes it: on SQLite between
    /// `BEGIN IMMEDIATE` and `COMMIT`, sent together (the write lock is taken before the
    /// statement reads anything, and the three cost one hand-off to the connection's
    /// worker thread); on PostgreSQL as it is (one statement is its own transaction).
    pub(crate) fn one_statement(backend: Backend, sql: &str) -> String {
        match backend {
            Backend::Postgres => sql.to_string(),
            Backend::Sqlite => format!("BEGIN IMMEDIATE; {sql}; COMMIT"),
        }
    }

    /// Runs `query`, made from [`one_statement`](Self::one_statement)'s text, as one
    /// relaxed transaction; the rows it returns. (Not its count of rows: on SQLite that
    /// would be the last statement's, `COMMIT`'s, which repeats an earlier one's.)
    pub(crate) async fn run(
        &self,
        db: &Database,
        query: Query<'_, Any, AnyArguments>,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let mut held = self.lock(db).await?;
        let _turn = db.write_turn().await;
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

    /// Closes the connection (at [`Database::close`]).
    pub(crate) async fn close(&self) {
        if let Some(conn) = self.conn.lock().await.take()
            && let Err(e) = conn.close().await
        {
            tracing::warn!(error = %e, "could not close the run log's connection");
        }
    }
}

/// The journal's connection during one write. Dropped before [`done`](Self::done) (an
/// error, or the write's future dropped), the connection is closed.
pub(crate) struct Held {
    slot: OwnedMutexGuard<Option<AnyConnection>>,
    clean: bool,
    backend: Backend,
}

impl Held {
    /// The connection.
    fn conn(&mut self) -> &mut AnyConnection {
        self.slot.as_mut().expect("opened by Journal::lock")
    }

    /// Runs `write` in one transaction (relaxed, as every commit on this connection).
    pub(crate) async fn transaction<T>(
        mut self,
        db: &Database,
        write: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let _turn = db.write_turn().await;
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

impl Drop for Held {
    fn drop(&mut self) {
        if !self.clean {
            // Dropped, not closed: a dropped `sqlx` connection ends its session.
            self.slot.take();
        }
    }
}
