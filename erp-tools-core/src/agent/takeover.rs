//! Continuing a logged run whose process died: [`Agent::take_over`] for one run,
//! [`Agent::recover_runs`] for every run cut off, and [`RunLog::cannot_continue`] for a run
//! nobody can continue.

use std::sync::Arc;

use super::audit::{AgentEventKind, AuditError};
use super::builder::Agent;
use super::journal::{Next, rebuild};
use super::model::{Message, Model};
use super::outcome::{RunOutcome, RunStatus};
use super::run_log::{CANNOT_CONTINUE, LoggedRun, RUN_CANNOT_CONTINUE, RUN_TAKEN_OVER, RunLog};
use super::state::{Event, State};
use crate::audit::{AuditEntry, now_text};
use crate::runtime::run_id;
use crate::store::run_log as sql;
use crate::tool::context::Principal;
use crate::{Database, StoreError};

/// Why a logged run was not taken over. Nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum TakeOverError {
    /// The agent keeps no run log.
    #[error("this agent keeps no run log; give it one with Agent::run_log")]
    NoRunLog,
    /// No such run in the log.
    #[error("run {0} is not in the run log")]
    NotFound(String),
    /// The run is not running (it ended, or waits for a person).
    #[error(
        "run {run_id} is {status}, not running; only a run cut off while running is taken over"
    )]
    NotRunning {
        /// The run.
        run_id: String,
        /// Its status.
        status: String,
    },
    /// A live process drives the run (or another process took it over first).
    #[error("run {run_id} is driven by replica {replica}, which is alive; it is not taken over")]
    Driven {
        /// The run.
        run_id: String,
        /// The replica driving it.
        replica: String,
    },
    /// The principal is not the person and branch the run acts for.
    #[error(
        "run {run_id} acts for user {user_id} of branch id {branch_id}; take it over as that user"
    )]
    WrongPrincipal {
        /// The run.
        run_id: String,
        /// Its user.
        user_id: String,
        /// Their branch id.
        branch_id: i64,
    },
    /// The run's log cannot be read (written by an incompatible version, or edited): the
    /// run was ended as [`CANNOT_CONTINUE`].
    #[error("run {run_id}'s log cannot be read ({detail}); it was ended as cannot_continue")]
    Unreadable {
        /// The run.
        run_id: String,
        /// What is wrong.
        detail: String,
    },
    /// The run was cut off during a call whose outcome is unknown and which cannot be run
    /// again safely (its tool is no longer registered, so it is neither a read nor a
    /// draft replayed through its idempotency key): the run was ended as
    /// [`CANNOT_CONTINUE`] with `reason`.
    #[error("run {run_id} was ended as cannot_continue: {reason}")]
    CannotContinue {
        /// The run.
        run_id: String,
        /// Why, as stored with the run.
        reason: String,
    },
    /// The store failed.
    #[error("the run log failed: {0}")]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for TakeOverError {
    fn from(e: sqlx::Error) -> Self {
        TakeOverError::Store(e.into())
    }
}

/// How [`Agent::recover_runs`] left one cut-off run.
#[derive(Debug)]
pub enum Recovered {
    /// Taken over and driven until it stopped or paused.
    Continued(Box<RunOutcome>),
    /// Ended as [`CANNOT_CONTINUE`], for this reason.
    CannotContinue(String),
    /// Not taken over (another process took it first, or it ended meanwhile).
    Skipped(TakeOverError),
    /// Paused for an action that was approved but never acted on (its process died
    /// between the decision and the resume): resumed from stored approval `approval`,
    /// its action run once, and driven until it stopped or paused.
    Resumed {
        /// The stored approval the run went on from.
        approval: i64,
        /// How the run stood then.
        outcome: Box<RunOutcome>,
    },
    /// Paused for an action approved but never acted on, and not resumed now: another
    /// process resumed it first, or `continue_with` gave no principal or model (`error`
    /// says which). Its approval stands; a later pass tries again.
    NotResumed {
        /// The stored approval.
        approval: i64,
        /// Why it was not resumed.
        error: String,
    },
}

impl Agent {
    /// Continues logged run `run_id`, cut off while running by a process that died (its
    /// replica's lease expired or was released), as `principal` (the person it acts for,
    /// authenticated now) with `model`.
    ///
    /// The state is rebuilt from the log alone: stored turns are not asked again, stored
    /// outcomes are not executed again, and the brakes count from where they were. An
    /// action whose turn was stored but whose outcome was not runs again with the same
    /// arguments, hence the same idempotency key: a draft that was created is replayed,
    /// not created twice. Of several processes taking over one run, one wins; the others
    /// get [`TakeOverError::Driven`]. The take-over is an audit row
    /// ([`RUN_TAKEN_OVER`]) and the run's `resumed_by` / `resumed_at`.
    pub async fn take_over(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        run_id: &str,
    ) -> Result<RunOutcome, TakeOverError> {
        let log = self.runs.as_ref().ok_or(TakeOverError::NoRunLog)?;
        let (db, principal) = (&log.db, &self.run_principal(principal, model));
        let row = claim(db, principal, run_id).await?;
        let token = row.lease_token.clone().unwrap_or_default();
        let turns = sql::turns(db.pool(), run_id).await?;
        let (mut st, next) = match rebuild(&row, &turns, self.clock.now()) {
            Ok(rebuilt) => rebuilt,
            Err(detail) => {
                let why = format!("its log cannot be read: {detail}");
                end_cannot_continue(db, &row, &token, &why).await?;
                return Err(TakeOverError::Unreadable {
                    run_id: run_id.to_string(),
                    detail,
                });
            }
        };
        if let Some(why) = self.replay_refusal(&st, &next) {
            end_cannot_continue(db, &row, &token, &why).await?;
            return Err(TakeOverError::CannotContinue {
                run_id: run_id.to_string(),
                reason: why,
            });
        }
        st.lease = Some(token.clone());
        let chosen = run_id::choose(principal, Some(&st.run_id));
        let status = match self.refused_run(principal, &mut st, chosen).await {
            Some(status) => status,
            None => self
                .go_on(principal, model, &mut st, next)
                .await
                .unwrap_or_else(|e| RunStatus::Aborted {
                    reason: e.to_string(),
                }),
        };
        Ok(self.end_run(principal, st, status).await)
    }

    /// Why the call a rebuilt run would run again first (`next`, its outcome unknown)
    /// must not run again, if it must not. A read has no effect and a draft is replayed
    /// through its idempotency key (`agent_run_id:client_ref`; a draft call without a
    /// `client_ref` is refused before it runs), so either may run again; a tool this
    /// process does not know is neither, and might have taken effect.
    fn replay_refusal(&self, st: &State, next: &Next) -> Option<String> {
        let Next::Call { name, .. } = next else {
            return None;
        };
        if self.exec.registry().get(name).is_some() {
            return None;
        }
        Some(format!(
            "the process driving it stopped during step {}'s call of `{name}`, whose outcome \
             is unknown, and `{name}` is not a tool of this process's registry, so the call \
             can be neither replayed through its idempotency key nor known to be a read; \
             check in the ERP whether it took effect, then start a new run",
            st.steps
        ))
    }

    /// The rebuilt run goes on from `next`.
    async fn go_on(
        &self,
        principal: &Arc<Principal>,
        model: &mut dyn Model,
        st: &mut State,
        next: Next,
    ) -> Result<RunStatus, AuditError> {
        match next {
            Next::Answer(answer) => {
                st.history.push(Message::Answer {
                    content: answer.clone(),
                });
                self.record(st, principal, Event::new(AgentEventKind::Answered))
                    .await?;
                return Ok(RunStatus::Done { answer });
            }
            Next::Call {
                call_id,
                name,
                arguments,
            } => {
                let mark = st.history.len();
                if let Some(end) = self
                    .propose(principal, st, &call_id, &name, &arguments)
                    .await?
                {
                    return Ok(end);
                }
                self.log_outcome(st, mark)?;
            }
            Next::Ask => {}
        }
        Ok(self.drive(principal, model, st).await)
    }

    /// Takes over every run cut off by a dead process (at most `limit`, oldest first),
    /// one after the other. `continue_with` gives, for a run, the principal it acts for
    /// and a model to go on with, or `Err(reason)` when it cannot be continued (the
    /// model is gone, the user left): the run then ends as [`CANNOT_CONTINUE`] with that
    /// reason. Call it when a process starts and then every lease or so (a worker of the
    /// application's); processes calling it at once each take different runs.
    ///
    /// With an [`ApprovalQueue`](super::ApprovalQueue) in the run log's database, the
    /// pass then resumes every run still paused for an action that was approved but never
    /// acted on (at most `limit` more; [`Recovered::Resumed`]), as `continue_with` gives:
    /// a decision stored just before its process died leads to its action, once, even
    /// when several processes pass at once. A run `continue_with` refuses stays paused
    /// under its approval ([`Recovered::NotResumed`]).
    pub async fn recover_runs<F>(
        &self,
        limit: i64,
        mut continue_with: F,
    ) -> Result<Vec<(String, Recovered)>, TakeOverError>
    where
        F: FnMut(&LoggedRun) -> Result<(Arc<Principal>, Box<dyn Model>), String>,
    {
        let log = self.runs.as_ref().ok_or(TakeOverError::NoRunLog)?;
        let mut out = Vec::new();
        for run in log.orphaned(limit).await? {
            let done = match continue_with(&run) {
                Ok((principal, mut model)) => {
                    match self
                        .take_over(&principal, model.as_mut(), &run.run_id)
                        .await
                    {
                        Ok(outcome) => Recovered::Continued(Box::new(outcome)),
                        Err(TakeOverError::CannotContinue { reason, .. }) => {
                            Recovered::CannotContinue(reason)
                        }
                        Err(e) => Recovered::Skipped(e),
                    }
                }
                Err(why) => match log.cannot_continue(&run.run_id, &why).await {
                    Ok(()) => Recovered::CannotContinue(why),
                    Err(e) => Recovered::Skipped(e),
                },
            };
            out.push((run.run_id, done));
        }
        out.extend(self.resume_approved(limit, &mut continue_with).await?);
        Ok(out)
    }
}

impl RunLog {
    /// Ends run `run_id`, cut off by a dead process, as [`CANNOT_CONTINUE`] with `why`
    /// (recorded as an audit row, [`RUN_CANNOT_CONTINUE`]). Refused like
    /// [`Agent::take_over`] if a live process drives it.
    pub async fn cannot_continue(&self, run_id: &str, why: &str) -> Result<(), TakeOverError> {
        let row = sql::get(self.db.pool(), run_id)
            .await?
            .ok_or_else(|| TakeOverError::NotFound(run_id.to_string()))?;
        let owner = owner_of(&row);
        let row = claim(&self.db, &owner, run_id).await?;
        let token = row.lease_token.clone().unwrap_or_default();
        end_cannot_continue(&self.db, &row, &token, why).await
    }
}

/// The principal a logged run acts for, without scopes (for its audit rows).
fn owner_of(row: &sql::RunRow) -> Principal {
    Principal::builder(row.user_id.clone(), row.branch_id, row.branch_code.clone()).build()
}

/// Takes run `run_id` from its dead driver for this process: the row as taken (its new
/// lease token), with the take-over recorded in the audit log.
async fn claim(
    db: &Database,
    principal: &Principal,
    run_id: &str,
) -> Result<sql::RunRow, TakeOverError> {
    let pool = db.pool();
    let row = sql::get(pool, run_id)
        .await?
        .ok_or_else(|| TakeOverError::NotFound(run_id.to_string()))?;
    if row.status != "running" {
        return Err(TakeOverError::NotRunning {
            run_id: run_id.to_string(),
            status: row.status,
        });
    }
    if row.user_id != principal.user_id() || row.branch_id != principal.branch_id() {
        return Err(TakeOverError::WrongPrincipal {
            run_id: run_id.to_string(),
            user_id: row.user_id,
            branch_id: row.branch_id,
        });
    }
    let driven = |replica: String| TakeOverError::Driven {
        run_id: run_id.to_string(),
        replica,
    };
    let old_replica = row.replica_id.clone().unwrap_or_default();
    let me = db.replica_id();
    if !old_replica.is_empty() && sql::is_live(pool, me, &old_replica, chrono::Utc::now()).await? {
        return Err(driven(old_replica));
    }
    let old_token = row.lease_token.clone().unwrap_or_default();
    let token = run_id::fresh("lease");
    let by = format!("replica {me} as {}", principal.user_id());
    let now = now_text();
    if !sql::take_over(pool, run_id, &old_token, me, &token, &by, &now).await? {
        return Err(driven("(another process took it over first)".to_string()));
    }
    let message = format!(
        "cut off after step {} (replica {old_replica} stopped; last write {}); taken over by {by}",
        row.steps, row.updated_at
    );
    let entry = AuditEntry::new(&owner_of(&row), run_id, RUN_TAKEN_OVER).message(message);
    db.record_event(entry).await?;
    let mut row = row;
    row.lease_token = Some(token);
    row.replica_id = Some(me.to_string());
    Ok(row)
}

/// Ends a claimed run as [`CANNOT_CONTINUE`], audited.
async fn end_cannot_continue(
    db: &Database,
    row: &sql::RunRow,
    token: &str,
    why: &str,
) -> Result<(), TakeOverError> {
    let result = serde_json::json!({ "status": CANNOT_CONTINUE, "reason": why }).to_string();
    sql::finish(
        db.pool(),
        &row.run_id,
        token,
        CANNOT_CONTINUE,
        result,
        &now_text(),
    )
    .await?;
    let message = format!("the run cannot be continued: {why}");
    let entry =
        AuditEntry::new(&owner_of(row), row.run_id.clone(), RUN_CANNOT_CONTINUE).message(message);
    db.record_event(entry).await?;
    Ok(())
}
