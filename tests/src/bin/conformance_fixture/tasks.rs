//! The tools the suite's tasks scenarios name (SEP-2663), each an ordinary `#[erp_tool]`
//! whose calls run as tasks ([`TaskSupport`](erp_tools_core::TaskSupport), declared in
//! `main.rs`): `greet` (answered in the request), `slow_compute`, `failing_job`,
//! `protocol_error_job`, `confirm_delete`, `multi_input` and `test_tool_with_task`. Each
//! module holds one tool named after it (`greet`) or prefixed by it (`slow_compute`).

use std::time::Duration;

use erp_tools_core::prelude::*;

use crate::tools::{Said, asked, greeted};

fn said(text: impl Into<String>) -> Result<Said, ToolError> {
    Ok(Said::new(text))
}

/// Arguments of `greet`.
#[tool_args]
pub(crate) struct GreetArgs {
    /// Who to greet, e.g. World
    name: String,
}

/// Greets `name`, answered in the request.
#[erp_tool(module = "greet", name = "greet", tier = "read", scopes = ["diagnostics:read"])]
pub(crate) async fn greet(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: GreetArgs,
) -> Result<Said, ToolError> {
    said(format!("Hello, {}!", args.name))
}

/// Arguments of `slow_compute`.
#[tool_args]
pub(crate) struct ComputeArgs {
    /// How long to work, in seconds (0 to 600)
    #[erp(min = 0, max = 600)]
    seconds: i64,
    /// A name for this computation, e.g. lifecycle-create
    label: String,
}

/// Works for `seconds` seconds, reporting progress every 100 ms, then answers; stops
/// early when the task is cancelled.
#[erp_tool(module = "slow", name = "slow_compute", tier = "read", scopes = ["diagnostics:read"])]
pub(crate) async fn slow_compute(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: ComputeArgs,
) -> Result<Said, ToolError> {
    let steps = args.seconds * 10;
    for step in 0..steps {
        if ctx.is_cancelled() {
            return Err(ToolError::rejected(format!("{} was cancelled", args.label)));
        }
        ctx.progress(step as f64, Some(steps as f64), &args.label);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    said(format!("Computed {} in {} s", args.label, args.seconds))
}

/// Fails with a tool error after about a second.
#[erp_tool(module = "failing", name = "failing_job", tier = "read", scopes = ["diagnostics:read"])]
pub(crate) async fn failing_job(_ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::rejected(
        "This job intentionally fails with a tool error",
    ))
}

/// Fails inside the server (an internal error): the task fails.
#[erp_tool(
    module = "protocol",
    name = "protocol_error_job",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn protocol_error_job(
    _ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    Err(ToolError::internal("the job broke inside the server"))
}

/// Arguments of `confirm_delete`.
#[tool_args]
pub(crate) struct DeleteArgs {
    /// The file to delete, e.g. notes.txt
    filename: String,
}

/// Asks for a confirmation, then answers (it deletes nothing).
#[erp_tool(module = "confirm", name = "confirm_delete", tier = "read", scopes = ["diagnostics:read"])]
pub(crate) async fn confirm_delete(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: DeleteArgs,
) -> Result<Said, ToolError> {
    let question = ("confirm", format!("Delete {}?", args.filename));
    let file = args.filename;
    asked(ctx, question, ["true", "false"], |a| {
        format!("Delete {file}: {a}")
    })
}

/// Asks two questions, one after the other (a tool asks one question at a time).
#[erp_tool(module = "multi", name = "multi_input", tier = "read", scopes = ["diagnostics:read"])]
pub(crate) async fn multi_input(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    let Some(first) = ctx.input("first") else {
        return Err(ToolError::needs_input("first", "First name?", ["a", "b"]));
    };
    let Some(second) = ctx.input("second") else {
        return Err(ToolError::needs_input("second", "Second name?", ["a", "b"]));
    };
    said(format!("{first} and {second}"))
}

/// Asks for a name, then greets it, as a task.
#[erp_tool(
    module = "test_tool",
    name = "test_tool_with_task",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn tool_with_task(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    greeted(ctx)
}
