//! The state of one run while the loop drives it, and the events it records.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::approval::{Approval, PendingAction};
use super::audit::{AgentEvent, AgentEventKind, AuditError};
use super::budget::TokenUsage;
use super::clock::Clock;
use super::model::{Message, ResultSource, ResultStatus, ToolResultMessage};
use super::outcome::{PausedRun, RunOutcome, RunStatus};
use crate::tool::context::Principal;
use crate::tool::input::InputAnswers;

/// A run in progress.
pub(super) struct State {
    pub run_id: String,
    pub steps: u32,
    pub elapsed_before: Duration,
    pub started: Duration,
    pub counts: BTreeMap<String, u32>,
    pub approvals: Vec<Approval>,
    pub history: Vec<Message>,
    pub audit: Vec<AgentEvent>,
    /// Tokens used in the run so far, and its largest turn.
    pub usage: TokenUsage,
    pub max_turn: u64,
    /// The person's answers for the call being proposed (a resumed call only).
    pub answers: InputAnswers,
    /// The lease token this process drives the run under, when it is logged
    /// ([`RunLog`](super::RunLog)).
    pub lease: Option<String>,
    /// The outcome of the last action (its step and the stored JSON), written with the
    /// next turn's answer.
    pub unsaved: Option<(i64, String)>,
    /// The current turn's answer on its way to the run log
    /// (`Agent::log_turn`): awaited with the step's first audit event,
    /// and before anything of the turn runs ([`State::settle_turn`]).
    pub turn_pending: PendingTurn,
    /// The run log holds this run as `done` already: its final answer's checkpoint ended
    /// it (`Agent::log_turn`), so a `Done` end is not written again.
    pub done_logged: bool,
}

/// A turn's answer being stored, if one is: the write's future (`Err` if it failed or the
/// run was taken over). Behind a mutex only so that `State` stays `Sync`; it is reached
/// through `&mut`, never locked.
#[derive(Default)]
pub(super) struct PendingTurn(std::sync::Mutex<Option<BoxFuture<'static, Result<(), AuditError>>>>);

impl PendingTurn {
    /// Starts `write` and keeps it until it is awaited. Its first poll, here, hands the
    /// statement to the database (SQLite's worker thread, PostgreSQL's socket), which runs
    /// it while the loop checks the turn's call; only its end is waited for later.
    pub(super) fn set(&mut self, mut write: BoxFuture<'static, Result<(), AuditError>>) {
        let mut started = std::task::Context::from_waker(std::task::Waker::noop());
        if let std::task::Poll::Ready(done) = write.as_mut().poll(&mut started) {
            write = Box::pin(std::future::ready(done));
        }
        *self.slot() = Some(write);
    }

    /// The write that is on its way, to await; `Ok` at once when there is none.
    pub(super) fn take(&mut self) -> impl Future<Output = Result<(), AuditError>> + use<> {
        let write = self.slot().take();
        async move {
            match write {
                Some(write) => write.await,
                None => Ok(()),
            }
        }
    }

    fn slot(&mut self) -> &mut Option<BoxFuture<'static, Result<(), AuditError>>> {
        self.0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl State {
    /// Waits until the current turn's answer is stored, if it is on its way.
    pub(super) async fn settle_turn(&mut self) -> Result<(), AuditError> {
        self.turn_pending.take().await
    }

    /// A new run: its first step not taken yet.
    pub(super) fn new(
        run_id: String,
        history: Vec<Message>,
        approvals: Vec<Approval>,
        started: Duration,
    ) -> Self {
        State {
            run_id,
            steps: 0,
            elapsed_before: Duration::ZERO,
            started,
            counts: BTreeMap::new(),
            approvals,
            history,
            audit: Vec::new(),
            usage: TokenUsage::default(),
            max_turn: 0,
            answers: InputAnswers::default(),
            lease: None,
            unsaved: None,
            turn_pending: PendingTurn::default(),
            done_logged: false,
        }
    }

    /// A paused run going on, and the action it waited on.
    pub(super) fn resumed(paused: PausedRun, started: Duration) -> (Self, PendingAction) {
        let state = State {
            run_id: paused.run_id,
            steps: paused.steps,
            elapsed_before: Duration::from_millis(paused.elapsed_ms),
            started,
            counts: paused.action_counts,
            approvals: paused.approvals,
            history: paused.history,
            audit: paused.audit,
            usage: paused.usage,
            max_turn: paused.max_turn_tokens,
            answers: paused.answers,
            lease: None,
            unsaved: None,
            turn_pending: PendingTurn::default(),
            done_logged: false,
        };
        (state, paused.pending)
    }

    pub(super) fn elapsed(&self, clock: &dyn Clock) -> Duration {
        self.elapsed_before + clock.now().saturating_sub(self.started)
    }

    /// Feeds a tool result back to the model.
    pub(super) fn push_result(
        &mut self,
        call: &CallRef<'_>,
        status: ResultStatus,
        source: ResultSource,
        text: &str,
    ) {
        self.history
            .push(Message::ToolResult(ToolResultMessage::new(
                call.call_id,
                call.tool,
                status,
                source,
                text,
            )));
    }

    pub(super) fn finish(
        self,
        principal: &Principal,
        status: RunStatus,
        clock: &dyn Clock,
    ) -> RunOutcome {
        let elapsed = self.elapsed(clock);
        RunOutcome {
            run_id: self.run_id,
            status,
            steps: self.steps,
            history: self.history,
            audit: self.audit,
            elapsed,
            counts: self.counts,
            approvals: self.approvals,
            on_behalf_of: principal.user_id().to_string(),
            branch_id: principal.branch_id(),
            usage: self.usage,
            max_turn: self.max_turn,
            answers: self.answers,
        }
    }
}

/// One proposed tool call, as the loop's events name it.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallRef<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    /// The arguments as the runtime would execute them (normalised when valid).
    pub arguments: &'a Value,
    pub signature: &'a str,
}

/// An event about to be recorded: a kind, optionally the call it is about, and why.
///
/// ```text
/// Event::new(AgentEventKind::Denied).call(&call).detail("over_limit: ...")
/// ```
#[derive(Clone, Debug)]
pub(super) struct Event<'a> {
    kind: AgentEventKind,
    call: Option<CallRef<'a>>,
    detail: Option<String>,
}

impl<'a> Event<'a> {
    pub(super) fn new(kind: AgentEventKind) -> Self {
        Event {
            kind,
            call: None,
            detail: None,
        }
    }

    /// The tool call the event is about.
    pub(super) fn call(mut self, call: &CallRef<'a>) -> Self {
        self.call = Some(*call);
        self
    }

    /// Why (denial reason, failure text, approver, brake).
    pub(super) fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Like [`detail`](Self::detail), when there may be none.
    pub(super) fn maybe_detail(mut self, detail: Option<String>) -> Self {
        self.detail = detail;
        self
    }

    /// The event as recorded, for `st`'s run at `clock`'s time.
    pub(super) fn build(self, st: &State, principal: &Principal, clock: &dyn Clock) -> AgentEvent {
        let call = self.call;
        AgentEvent {
            run_id: st.run_id.clone(),
            step: st.steps,
            kind: self.kind,
            tool: call.map(|c| c.tool.to_string()),
            call_id: call.map(|c| c.call_id.to_string()),
            signature: call.map(|c| c.signature.to_string()),
            arguments: call.map(|c| c.arguments.clone()),
            detail: self.detail,
            on_behalf_of: principal.user_id().to_string(),
            branch_code: principal.branch_code().to_string(),
            at: clock.utc(),
            surface: None,
        }
    }
}
