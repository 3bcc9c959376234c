//! [`Relaxed`]: a write transaction of the run log that commits without waiting for the
//! disk, for the writes a logged run adds to its steps (its start, each turn's
//! checkpoint, its end once done).
//!
//! - **PostgreSQL**: `SET LOCAL synchronous_commit TO OFF` for the transaction. A write
//!   that is one statement (a turn's checkpoint, `run_turn.rs`) needs no transaction of
//!   its own: run alone it is one, and it sets the same for itself
//!   (`set_config('synchronous_commit', 'off', true)`, local to that transaction).
//! - **SQLite**: `PRAGMA synchronous = NORMAL` on the writer connection for the
//!   transaction (`BEGIN IMMEDIATE`), put back afterwards: the commit is in the
//!   write-ahead log, not yet flushed to the disk.
//!
//! Why that keeps the run log's promise: once the commit returned, the server
//! (PostgreSQL) or the operating system (SQLite's write-ahead log file) holds it, so a
//! killed process loses nothing. And the log is flushed in order: the next synchronous
//! commit on the database (an action's draft, which commits in full) flushes these
//! commits with it, so no effect of an action is ever durable without the turn that
//! asked for it. Only a crash of the database server or of the machine can lose the
//! latest of them; those turns are then asked again, and their actions replayed through
//! their idempotency keys.

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AssertSqlSafe};

use crate::Database;
use crate::tool::handles::Backend;

/// The writer connection while a relaxed transaction is open. Dropped before it was
/// committed (an error, or the run's future dropped mid-write), the connection is closed
/// rather than returned to the pool: its transaction and its relaxed `synchronous` go
/// with it.
pub(crate) struct Relaxed {
    conn: PoolConnection<Any>,
    end: String,
    ended: bool,
}

impl Relaxed {
    /// Begins a relaxed transaction on `db`'s writer pool.
    pub(crate) async fn begin(db: &Database) -> Result<Relaxed, sqlx::Error> {
        let (begin, end) = match db.backend() {
            Backend::Postgres => (
                "BEGIN; SET LOCAL synchronous_commit TO OFF".to_string(),
                "COMMIT".to_string(),
            ),
            Backend::Sqlite => (
                "PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE".to_string(),
                format!("COMMIT; PRAGMA synchronous = {}", db.write_sync()),
            ),
        };
        let mut open = Relaxed {
            conn: db.pool().acquire().await?,
            end,
            ended: false,
        };
        sqlx::raw_sql(AssertSqlSafe(begin))
            .execute(&mut *open.conn)
            .await?;
        Ok(open)
    }

    /// The connection, inside the transaction.
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }

    /// Commits (without waiting for the disk).
    pub(crate) async fn commit(mut self) -> Result<(), sqlx::Error> {
        let end = std::mem::take(&mut self.end);
        sqlx::raw_sql(AssertSqlSafe(end))
            .execute(&mut *self.conn)
            .await?;
        self.ended = true;
        Ok(())
    }
}

impl Drop for Relaxed {
    fn drop(&mut self) {
        if !self.ended {
            self.conn.close_on_drop();
        }
    }
}
