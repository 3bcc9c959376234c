//! [`RunLog`]: agent runs kept as a log in the database, so a run cut off by a dead
//! process is found and continued by any live one.
//!
//! ```text
//!  erp_run_log    one row per run: opening messages, status, driver (replica + lease
//!                 token), turns taken, tokens used, interrupted / resumed by / at
//!  erp_run_turns  one row per model turn: the model's answer and its token usage, written
//!                 before its action runs; the action's outcome, written when it ended
//! ```
//!
//! A run is driven by the replica ([`Database::replica_id`]) that started or took it; it
//! is cut off when that replica's lease expires ([`DatabaseOptions::replica_lease`](crate::DatabaseOptions::replica_lease)).
//! [`RunLog::orphaned`] lists such runs and [`Agent::take_over`](super::Agent::take_over)
//! continues one from its log: stored turns are not asked (nor paid) again, stored action
//! outcomes are not executed again, an action whose outcome is unknown runs again with
//! the same idempotency key (a draft is never created twice), and the brakes count from
//! where they were.

use serde::Serialize;

use super::outcome::RunStatus;
use crate::store::run_log as sql;
use crate::{Database, StoreError};

/// Status of a logged run whose driver stopped and which nobody could continue (no model
/// or principal for it, or its log is unreadable).
pub const CANNOT_CONTINUE: &str = "cannot_continue";
/// Audit outcome of a run taken over from a dead process.
pub const RUN_TAKEN_OVER: &str = "run_taken_over";
/// Audit outcome of a cut-off run that could not be continued.
pub const RUN_CANNOT_CONTINUE: &str = "run_cannot_continue";

/// Durable agent runs on the application database. Cheap to clone. Give it to the agent
/// with [`Agent::run_log`](super::Agent::run_log).
#[derive(Clone, Debug)]
pub struct RunLog {
    pub(super) db: Database,
}

/// A logged run, as the console and a recovering process see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoggedRun {
    /// The run id.
    pub run_id: String,
    /// The person the run acts for.
    pub user_id: String,
    /// Their branch.
    pub branch_id: i64,
    /// Their branch's business code.
    pub branch_code: String,
    /// `running`, a [`RunStatus`] word (`done`, `awaiting_approval`, ...) or
    /// [`CANNOT_CONTINUE`].
    pub status: String,
    /// Running, but its driver's replica is dead: cut off, waiting to be taken over.
    pub interrupted: bool,
    /// How the run ended or paused, if it did.
    pub result: Option<RunStatus>,
    /// Why it could not be continued (status [`CANNOT_CONTINUE`]).
    pub reason: Option<String>,
    /// The replica driving it (or that drove it last).
    pub replica_id: Option<String>,
    /// Model turns stored.
    pub steps: i64,
    /// Input tokens of the stored turns.
    pub input_tokens: i64,
    /// Output tokens of the stored turns.
    pub output_tokens: i64,
    /// When the run started.
    pub created_at: String,
    /// Its last write.
    pub updated_at: String,
    /// When it was last cut off (its last write before a take-over).
    pub interrupted_at: Option<String>,
    /// Who continued it last: `replica <id> as <user>`.
    pub resumed_by: Option<String>,
    /// When.
    pub resumed_at: Option<String>,
    /// How many times it was taken over.
    pub resume_count: i64,
}

impl RunLog {
    /// Runs logged in `db`.
    pub fn new(db: Database) -> Self {
        RunLog { db }
    }

    /// The database the runs are logged in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Run `run_id`, if logged.
    pub async fn get(&self, run_id: &str) -> Result<Option<LoggedRun>, StoreError> {
        let Some(row) = sql::get(self.db.pool(), run_id).await? else {
            return Ok(None);
        };
        let live = self.live_driver(&row).await?;
        Ok(Some(LoggedRun::from_row(row, live)))
    }

    /// The latest `limit` runs of `branch_id`, newest first.
    pub async fn recent(&self, branch_id: i64, limit: i64) -> Result<Vec<LoggedRun>, StoreError> {
        let mut out = Vec::new();
        for row in sql::recent(self.db.pool(), branch_id, limit).await? {
            let live = self.live_driver(&row).await?;
            out.push(LoggedRun::from_row(row, live));
        }
        Ok(out)
    }

    /// The runs cut off by a dead process (still `running`, their driver's replica lease
    /// expired or released), oldest first, at most `limit`.
    pub async fn orphaned(&self, limit: i64) -> Result<Vec<LoggedRun>, StoreError> {
        let rows = sql::orphaned(
            self.db.pool(),
            self.db.replica_id(),
            chrono::Utc::now(),
            limit,
        )
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| LoggedRun::from_row(r, false))
            .collect())
    }

    async fn live_driver(&self, row: &sql::RunRow) -> Result<bool, StoreError> {
        if row.status != "running" {
            return Ok(false);
        }
        let Some(replica) = &row.replica_id else {
            return Ok(false);
        };
        let pool = self.db.pool();
        Ok(sql::is_live(pool, self.db.replica_id(), replica, chrono::Utc::now()).await?)
    }
}

impl LoggedRun {
    pub(super) fn from_row(row: sql::RunRow, live: bool) -> Self {
        let parsed: Option<serde_json::Value> = row
            .result
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok());
        let reason = parsed
            .as_ref()
            .filter(|_| row.status == CANNOT_CONTINUE)
            .and_then(|v| v.get("reason"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let result = parsed.and_then(|v| serde_json::from_value(v).ok());
        LoggedRun {
            interrupted: row.status == "running" && !live,
            run_id: row.run_id,
            user_id: row.user_id,
            branch_id: row.branch_id,
            branch_code: row.branch_code,
            status: row.status,
            result,
            reason,
            replica_id: row.replica_id,
            steps: row.steps,
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            created_at: row.created_at,
            updated_at: row.updated_at,
            interrupted_at: row.interrupted_at,
            resumed_by: row.resumed_by,
            resumed_at: row.resumed_at,
            resume_count: row.resume_count,
        }
    }

    /// The model's answer, if the run is done.
    pub fn answer(&self) -> Option<&str> {
        match &self.result {
            Some(RunStatus::Done { answer }) => Some(answer),
            _ => None,
        }
    }
}
