//! The loop's writes to the [`RunLog`](super::RunLog), and a run's state rebuilt from them.
//!
//! A new run's row is written with the run's binding to its person when it can
//! ([`ToolRuntime::check_run_starting`](crate::ToolRuntime), `agent/start.rs`), else on
//! its own. A turn's answer is written the moment it arrives, before its action runs, in one
//! transaction with the outcome of the previous turn's action (the messages it fed back,
//! the repeat counts, the running time): one commit a step, which survives the process
//! without waiting for the disk (`store/run_turn.rs` says why that is enough). The commit
//! goes on while the step's first audit event is written (the `started` event of its call,
//! most often), and the step waits for both before its call runs. The run's status is
//! written when it stops or pauses; a final answer's checkpoint writes `done` with the
//! turn, and the run's end is then not written again. A process that dies after an
//! action ended and before the next answer was stored leaves that action without an
//! outcome: it runs again when the run is taken over, with the same idempotency key (a
//! draft is replayed, a read is read again).
//! Every write names the driver's lease token: a driver that lost its run (another
//! process took it over) stops instead of writing.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::approval::Approval;
use super::audit::AuditError;
use super::budget::TokenUsage;
use super::builder::Agent;
use super::model::{Message, ModelAction};
use super::outcome::{RunOutcome, RunStatus};
use super::state::State;
use crate::audit::now_text;
use crate::store::relaxed::Statement;
use crate::store::run_log::{self as sql, NewRun, RunRow, TurnRow};
use crate::store::run_turn::checkpoint;
use crate::tool::context::Principal;
use crate::tool::input::InputAnswers;

/// What people gave the run since it started: approvals, and the answers for the call
/// proposed at `step`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Grants {
    #[serde(default)]
    pub approvals: Vec<Approval>,
    #[serde(default)]
    pub answers: InputAnswers,
    #[serde(default)]
    pub step: u32,
}

/// How a turn's action ended, as stored with the turn.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct TurnOutcome {
    /// The messages the action fed back to the model.
    pub messages: Vec<Message>,
    /// The repeat counts after it.
    pub counts: BTreeMap<String, u32>,
    /// The run's running time after it, in milliseconds.
    pub elapsed_ms: u64,
}

/// Where a rebuilt run goes on.
#[derive(Debug)]
pub(super) enum Next {
    /// Ask the model for the next turn.
    Ask,
    /// Run this call, whose outcome is unknown (its turn was stored, its end was not).
    Call {
        call_id: String,
        name: String,
        arguments: serde_json::Value,
    },
    /// The model had answered: the run is done.
    Answer(String),
}

/// The id of the call a model turn proposes: the provider's, else `call-<step>`.
pub(super) fn call_id_of(id: Option<String>, step: u32) -> String {
    id.filter(|id| !id.is_empty() && id.len() <= 256)
        .unwrap_or_else(|| format!("call-{step}"))
}

fn lost(run_id: &str) -> AuditError {
    AuditError(format!(
        "this process no longer drives run {run_id}: another process took it over after \
         its lease expired, and continues it"
    ))
}

fn failed(e: impl std::fmt::Display) -> AuditError {
    AuditError(format!("the run log failed: {e}"))
}

fn json<T: Serialize>(v: &T) -> Result<String, AuditError> {
    serde_json::to_string(v).map_err(failed)
}

/// A new run's row in the run log, before it is written: what [`NewRun`] names and
/// borrows from the run and its principal.
pub(super) struct Opening {
    /// The lease token the run is driven under.
    pub token: String,
    opening: String,
    grants: String,
    now: String,
}

impl Opening {
    /// The row of run `run_id` for `principal`, driven by `replica`.
    pub(super) fn row<'a>(
        &'a self,
        principal: &'a Principal,
        run_id: &'a str,
        replica: &'a str,
    ) -> NewRun<'a> {
        NewRun {
            run_id,
            user_id: principal.user_id(),
            branch_id: principal.branch_id(),
            branch_code: principal.branch_code(),
            opening: self.opening.clone(),
            grants: self.grants.clone(),
            replica,
            token: &self.token,
            now: &self.now,
        }
    }
}

impl Agent {
    /// A new run's row in the run log: its opening messages and approvals as they are
    /// now, under a fresh lease token.
    pub(super) fn opening(st: &State) -> Result<Opening, AuditError> {
        let grants = Grants {
            approvals: st.approvals.clone(),
            ..Grants::default()
        };
        Ok(Opening {
            token: crate::runtime::run_id::fresh("lease"),
            opening: json(&st.history)?,
            grants: json(&grants)?,
            now: now_text(),
        })
    }

    /// Logs a new run as `running`, driven by this process, under `opening`'s lease
    /// token.
    pub(super) async fn log_start(
        &self,
        principal: &Principal,
        st: &mut State,
        opening: Opening,
    ) -> Result<(), AuditError> {
        let Some(log) = &self.runs else {
            return Ok(());
        };
        let new = opening.row(principal, &st.run_id, log.db.replica_id());
        let started = start_relaxed(&log.db, new).await.map_err(failed)?;
        if !started {
            return Err(AuditError(format!(
                "run {} is being driven by another process; continue it there, or with \
                 Agent::take_over once that process is gone",
                st.run_id
            )));
        }
        st.lease = Some(opening.token);
        Ok(())
    }

    /// Takes a logged run that paused back to `running` for this process, with what the
    /// person gave it; a run started without the log stays unlogged. `Ok(Some(status))`
    /// if the run no longer waits (another process resumed it first, `running`, or it
    /// ended): nothing was written then.
    pub(super) async fn log_reopen(&self, st: &mut State) -> Result<Option<String>, AuditError> {
        let Some(log) = &self.runs else {
            return Ok(None);
        };
        let pool = log.db.pool();
        let token = crate::runtime::run_id::fresh("lease");
        let grants = Grants {
            approvals: st.approvals.clone(),
            answers: st.answers.clone(),
            step: st.steps,
        };
        let (replica, now) = (log.db.replica_id(), now_text());
        if sql::reopen(pool, &st.run_id, json(&grants)?, replica, &token, &now)
            .await
            .map_err(failed)?
        {
            st.lease = Some(token);
            return Ok(None);
        }
        let row = sql::get(pool, &st.run_id).await.map_err(failed)?;
        Ok(row.map(|row| row.status))
    }

    /// Starts storing the model's answer of the current turn. The write goes on while the
    /// step's first audit event is written ([`Agent::record`] awaits both), and it is done
    /// before anything of the turn runs: every path to an action, a preview or a ledger
    /// entry passes through `record` or [`State::settle_turn`] first.
    pub(super) fn log_turn(
        &self,
        st: &mut State,
        action: &ModelAction,
        usage: TokenUsage,
    ) -> Result<(), AuditError> {
        let (Some(log), Some(token)) = (&self.runs, &st.lease) else {
            return Ok(());
        };
        let turn = TurnRow {
            step: i64::from(st.steps),
            action: json(action)?,
            input_tokens: clamp(usage.input_tokens),
            output_tokens: clamp(usage.output_tokens),
            outcome: None,
        };
        let prior = st.unsaved.take();
        // A final answer ends the run in the same write: `done`, with the status the loop
        // returns for it. Should the run stop otherwise after all (a brake, a failed
        // audit write), `log_finish` stores that end over it.
        let ends = match action {
            ModelAction::Answer(answer) => Some(json(&RunStatus::Done {
                answer: answer.clone(),
            })?),
            ModelAction::ToolCall { .. } => None,
        };
        st.done_logged = ends.is_some();
        let (db, run_id, token) = (log.db.clone(), st.run_id.clone(), token.clone());
        let now = now_text();
        st.turn_pending.set(Box::pin(async move {
            let held = checkpoint(&db, &run_id, &token, turn, prior, &now, ends)
                .await
                .map_err(failed)?;
            if held { Ok(()) } else { Err(lost(&run_id)) }
        }));
        Ok(())
    }

    /// Keeps how the current turn's action ended (the messages from `mark` on), to be
    /// stored with the next turn's answer.
    pub(super) fn log_outcome(&self, st: &mut State, mark: usize) -> Result<(), AuditError> {
        if self.runs.is_none() || st.lease.is_none() {
            return Ok(());
        }
        let outcome = TurnOutcome {
            messages: st.history.get(mark..).unwrap_or_default().to_vec(),
            counts: st.counts.clone(),
            elapsed_ms: millis(st.elapsed(self.clock.as_ref())),
        };
        st.unsaved = Some((i64::from(st.steps), json(&outcome)?));
        Ok(())
    }

    /// Ends a run with `status`: its outcome, its pending action kept
    /// ([`Agent::keep_pending`]), and its end in the run log ([`Agent::log_finish`]).
    pub(super) async fn end_run(
        &self,
        principal: &Principal,
        st: State,
        status: RunStatus,
    ) -> RunOutcome {
        let (lease, done_logged) = (st.lease.clone(), st.done_logged);
        let outcome = st.finish(principal, status, self.clock.as_ref());
        let outcome = self.keep_pending(principal, outcome).await;
        let (run, status) = (&outcome.run_id, &outcome.status);
        self.log_finish(run, lease.as_deref(), status, done_logged)
            .await;
        outcome
    }

    /// Stores the status the run stopped or paused with, unless the run's final answer
    /// stored it already (`done_logged`, [`State::done_logged`]). A failure is logged: the
    /// run stays `running` and is taken over (and ends the same way) once this process is
    /// gone.
    async fn log_finish(
        &self,
        run_id: &str,
        lease: Option<&str>,
        status: &RunStatus,
        done_logged: bool,
    ) {
        let (Some(log), Some(token)) = (&self.runs, lease) else {
            return;
        };
        if done_logged && matches!(status, RunStatus::Done { .. }) {
            return;
        }
        let result = match serde_json::to_string(status) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, run = %run_id, "the run's status is not JSON");
                return;
            }
        };
        let now = now_text();
        let (word, db) = (status.as_str(), &log.db);
        // A run that is done can end without waiting for the disk: lost in a machine's
        // crash, it is taken over and ends again from its stored answer. A pause stays
        // durable, next to the approval or question it waits for.
        let stored = if matches!(status, RunStatus::Done { .. }) {
            finish_relaxed(db, run_id, token, word, result, &now).await
        } else {
            sql::finish(db.pool(), run_id, token, word, result, &now).await
        };
        match stored {
            Ok(true) => {}
            Ok(false) => tracing::warn!(run = %run_id, "{}", lost(run_id)),
            Err(e) => tracing::warn!(error = %e, run = %run_id, "the run log failed"),
        }
    }
}

/// [`sql::START`], run by the journal.
static START: Statement = Statement::new(sql::START);
/// [`sql::FINISH`], run by the journal.
static FINISH: Statement = Statement::new(sql::FINISH);

/// A new run's row on the run log's own connection, without waiting for the disk: in one
/// statement, or, for a run id logged before, the restart in a transaction.
async fn start_relaxed(db: &crate::Database, new: sql::NewRun<'_>) -> Result<bool, sqlx::Error> {
    let query = sql::start_query(START.text(db.backend()), &new);
    if db.journal().run(db, query).await?.len() == 1 {
        return Ok(true);
    }
    let held = db.journal().lock(db).await?;
    held.transaction(async |conn| sql::restart(conn, new).await)
        .await
}

/// [`sql::finish`] on the run log's own connection, without waiting for the disk.
async fn finish_relaxed(
    db: &crate::Database,
    run_id: &str,
    token: &str,
    status: &str,
    result: String,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let text = FINISH.text(db.backend());
    let query = sql::finish_query(text, run_id, token, status, result, now);
    Ok(db.journal().run(db, query).await?.len() == 1)
}

/// A run's state rebuilt from its log: the opening messages, then every stored turn with
/// its stored outcome; and where it goes on.
pub(super) fn rebuild(
    row: &RunRow,
    turns: &[TurnRow],
    started: Duration,
) -> Result<(State, Next), String> {
    let history: Vec<Message> =
        serde_json::from_str(&row.opening).map_err(|e| format!("opening messages: {e}"))?;
    let grants: Grants = serde_json::from_str(&row.grants).map_err(|e| format!("grants: {e}"))?;
    let mut st = State::new(row.run_id.clone(), history, grants.approvals, started);
    for (i, turn) in turns.iter().enumerate() {
        let step = u32::try_from(turn.step).map_err(|_| format!("step {}", turn.step))?;
        st.steps = step;
        let usage = TokenUsage {
            input_tokens: u64::try_from(turn.input_tokens).unwrap_or_default(),
            output_tokens: u64::try_from(turn.output_tokens).unwrap_or_default(),
        };
        st.usage += usage;
        st.max_turn = st.max_turn.max(usage.total());
        let action: ModelAction =
            serde_json::from_str(&turn.action).map_err(|e| format!("turn {step}'s action: {e}"))?;
        let last = i + 1 == turns.len();
        let (name, arguments, id) = match action {
            ModelAction::Answer(answer) if last => return Ok((st, Next::Answer(answer))),
            ModelAction::Answer(_) => {
                return Err(format!("turn {step} answered, yet more followed"));
            }
            ModelAction::ToolCall {
                name,
                arguments,
                id,
            } => (name, arguments, id),
        };
        let call_id = call_id_of(id, step);
        st.history.push(Message::ToolCall {
            call_id: call_id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
        });
        let Some(outcome) = &turn.outcome else {
            if !last {
                return Err(format!("turn {step} has no outcome, yet more followed"));
            }
            if grants.step == step {
                st.answers = grants.answers.clone();
            }
            let next = Next::Call {
                call_id,
                name,
                arguments,
            };
            return Ok((st, next));
        };
        let outcome: TurnOutcome =
            serde_json::from_str(outcome).map_err(|e| format!("turn {step}'s outcome: {e}"))?;
        st.history.extend(outcome.messages);
        st.counts = outcome.counts;
        st.elapsed_before = Duration::from_millis(outcome.elapsed_ms);
    }
    Ok((st, Next::Ask))
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
