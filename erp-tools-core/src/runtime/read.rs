//! Executing a read call: the handler on the read-only pool, panics caught.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;

use super::answer::{Finished, panic_text};
use crate::audit::Outcome;
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::ReadHandlerFn;
use crate::tool::handles::ReadDb;

/// Runs a read handler. Nothing it does can write: `read` refuses every write.
pub(crate) async fn run(
    handler: ReadHandlerFn,
    ctx: &ToolContext,
    read: &ReadDb,
    args: Value,
) -> Finished {
    match AssertUnwindSafe(handler(ctx, read, args))
        .catch_unwind()
        .await
    {
        Ok(Ok(output)) => Finished::succeeded(Tier::Read, output.value, output.text, None, false),
        Ok(Err(err)) => {
            Finished::failed(Outcome::ToolError, err.or_not_done(text::NOTHING_CHANGED))
        }
        Err(panic) => Finished::failed(
            Outcome::ToolError,
            text::handler_panicked(Tier::Read, &panic_text(&panic)),
        ),
    }
}
