//! What the server says about tool calls run as MCP tasks.

/// `tasks/*` for a task that does not exist, has expired, or belongs to someone else
/// (the three are not told apart, so a task id reveals nothing of another person's).
pub(crate) fn task_not_found(id: &str) -> String {
    format!(
        "no task `{id}` of yours: it does not exist, has expired, or was started by someone \
         else; start the call again"
    )
}

/// The store of tasks could not be read or written.
pub(crate) fn tasks_unavailable(detail: impl std::fmt::Display) -> String {
    format!("the store of tasks is unavailable, so nothing was changed; retry shortly: {detail}")
}

/// A task whose replica died before it finished.
pub(crate) fn task_orphaned(replica: &str) -> String {
    format!(
        "the server process running this task (replica `{replica}`) stopped before the call \
         finished (its lease expired); the call's result is unknown: start it again (a draft \
         with the same client_ref is not created twice)"
    )
}

/// A task whose handler failed inside the server (it panicked, or raised an internal
/// error).
pub(crate) const TASK_SERVER_FAILED: &str =
    "the tool failed inside the server while running this task; nothing more was done";

/// The status message of a task waiting for an answer.
pub(crate) fn task_waiting(question: &str) -> String {
    format!("waiting for an answer: {question}")
}
