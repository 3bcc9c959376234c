//! The seam between the loop and the tool runtime: [`Executor`], implemented by
//! [`ToolRuntime`] and, in the loop's unit tests, by a stand-in. The loop prepares each
//! call itself ([`prepare`](crate::runtime::prepare::prepare), pure: the same admission
//! as MCP, with the policy's limits) and hands the prepared call back to be run; the run
//! check is the runtime's. Nothing here has a default: a seam that grants anything by
//! default would fail open.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::Database;
use crate::registry::ToolRegistry;
use crate::runtime::admit::Admitted;
use crate::runtime::prepare::Prepared;
use crate::runtime::run_id::BadRunId;
use crate::runtime::{CallError, CallOutcome, Preview, ToolRuntime};
use crate::store::run_log::NewRun;
use crate::tool::context::Principal;
use crate::tool::error::ToolError;
use crate::tool::input::InputAnswers;

/// Runs the calls the loop prepared. See the [module docs](self).
pub(crate) trait Executor: Send + Sync {
    /// The registry calls are admitted against.
    fn registry(&self) -> &ToolRegistry;

    /// Why `principal` may not use the run `chosen`, if it may not
    /// ([`ToolRuntime::check_run`]).
    fn check_run<'a>(
        &'a self,
        principal: &'a Principal,
        chosen: Result<String, BadRunId>,
    ) -> BoxFuture<'a, Result<Option<ToolError>, CallError>>;

    /// [`check_run`](Self::check_run) of a valid run a logged agent starts, writing its
    /// run log's row `start` (for the log on `log`) with the run's binding when it can
    /// ([`ToolRuntime::check_run_starting`]): `true` beside no refusal if it did.
    fn check_run_starting<'a>(
        &'a self,
        principal: &'a Principal,
        run: &'a str,
        log: &'a Database,
        start: &'a NewRun<'a>,
    ) -> BoxFuture<'a, Result<(Option<ToolError>, bool), CallError>>;

    /// Runs a prepared call of a checked run, with a person's `answers` for its handler:
    /// its refusal recorded, or the admitted call executed ([`ToolRuntime::finish`]). A
    /// draft `bound` to an approved preview's digest creates nothing if its document
    /// differs, and ends with the new preview.
    fn finish<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        prepared: Prepared<'a>,
        answers: InputAnswers,
        bound: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>>;

    /// What an admitted draft call would create: its handler run in a transaction that
    /// is rolled back (`runtime/preview.rs`); `None` for a read tool.
    fn preview<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        run_id: &'a str,
        call_id: &'a str,
        admitted: &'a Admitted<'a>,
    ) -> BoxFuture<'a, Option<Result<Preview, sqlx::Error>>>;
}

impl Executor for ToolRuntime {
    fn registry(&self) -> &ToolRegistry {
        self.registry()
    }

    fn check_run<'a>(
        &'a self,
        principal: &'a Principal,
        chosen: Result<String, BadRunId>,
    ) -> BoxFuture<'a, Result<Option<ToolError>, CallError>> {
        Box::pin(ToolRuntime::check_run(self, principal, chosen))
    }

    fn check_run_starting<'a>(
        &'a self,
        principal: &'a Principal,
        run: &'a str,
        log: &'a Database,
        start: &'a NewRun<'a>,
    ) -> BoxFuture<'a, Result<(Option<ToolError>, bool), CallError>> {
        Box::pin(ToolRuntime::check_run_starting(
            self, principal, run, log, start,
        ))
    }

    fn finish<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        prepared: Prepared<'a>,
        answers: InputAnswers,
        bound: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        Box::pin(ToolRuntime::finish_bound(
            self, principal, prepared, answers, bound,
        ))
    }

    fn preview<'a>(
        &'a self,
        principal: &'a Arc<Principal>,
        run_id: &'a str,
        call_id: &'a str,
        admitted: &'a Admitted<'a>,
    ) -> BoxFuture<'a, Option<Result<Preview, sqlx::Error>>> {
        Box::pin(crate::runtime::preview::preview_admitted(
            self.database(),
            principal,
            run_id,
            call_id,
            admitted,
        ))
    }
}
