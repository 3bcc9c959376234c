//! The rules of a task tool: `task = "optional" | "required"` (its calls run as MCP
//! tasks) and `rerun = false` (a task taken over from a stopped replica is failed
//! instead of run again).

use super::tier::Tier;
use crate::attr::ToolAttr;
use crate::errors::Errors;

/// How a tool's calls run, from `task = ".."`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskKind {
    /// No `task` key: answered in the request.
    Forbidden,
    /// `task = "optional"`.
    Optional,
    /// `task = "required"`.
    Required,
}

/// Checks `task` and `rerun`; returns how calls run and whether a task taken over runs
/// again.
pub(crate) fn check_task(
    attr: &ToolAttr,
    tier: Option<Tier>,
    errors: &mut Errors,
) -> (TaskKind, bool) {
    let kind = match &attr.task {
        None => TaskKind::Forbidden,
        Some(lit) => match lit.value().as_str() {
            "optional" => TaskKind::Optional,
            "required" => TaskKind::Required,
            "forbidden" | "none" | "never" | "no" | "false" => {
                errors.spanned(
                    lit,
                    "a tool is answered in the request unless it says otherwise: remove `task`, or write \
                     `task = \"optional\"` (a task when the client supports tasks) or `task = \"required\"`",
                );
                TaskKind::Forbidden
            }
            other => {
                errors.spanned(
                    lit,
                    format!(
                        "`task` is \"optional\" (a task when the client supports tasks, answered in the request \
                         otherwise) or \"required\" (always a task), not \"{other}\""
                    ),
                );
                TaskKind::Forbidden
            }
        },
    };
    let Some(rerun) = &attr.rerun else {
        return (kind, true);
    };
    if attr.task.is_none() {
        errors.spanned(
            rerun,
            "`rerun` says whether a task taken over from a stopped replica runs again, and this tool does not \
             run as a task: add `task = \"optional\"` or `task = \"required\"`, or remove `rerun`",
        );
    } else if tier == Some(Tier::Draft) && !rerun.value {
        errors.spanned(
            rerun,
            "a draft tool is safe to run again: its `client_ref` makes a second run return the first run's draft \
             instead of writing another, so a task taken over runs it again; remove `rerun = false` (an effect \
             outside the draft's transaction does not belong in a draft tool)",
        );
    }
    (kind, rerun.value)
}
