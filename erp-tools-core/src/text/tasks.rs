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

/// Who ran a task that stopped: the replica by name, or a drained one.
fn stopped(replica: &str) -> String {
    if replica.is_empty() {
        "the server process running this task shut down before the call finished".to_string()
    } else {
        format!(
            "the server process running this task (replica `{replica}`) stopped before the \
             call finished (its lease expired)"
        )
    }
}

/// A task whose replica died before it finished, and whose call is not run again: why.
pub(crate) fn task_orphaned(replica: &str, why: &str) -> String {
    format!(
        "{}; {why}, so the call's result is unknown: check what it did, then start it again \
         (a draft with the same client_ref is not created twice)",
        stopped(replica)
    )
}

/// Why a stopped task is not run again: its tool is declared not safe to repeat.
pub(crate) fn not_rerun(tool: &str) -> String {
    format!("`{tool}` is declared not safe to run again (rerun = false)")
}

/// Why a stopped task is not run again: the replica taking it over does not serve its tool.
pub(crate) fn not_served(tool: &str) -> String {
    format!("the server that took the task over does not serve `{tool}`")
}

/// Why a stopped task is not run again: the identity it ran as was not kept.
pub(crate) const IDENTITY_NOT_KEPT: &str =
    "the task was started before identities were kept with tasks, so it cannot run as its owner";

/// The status message of a task taken over from a stopped replica.
pub(crate) fn task_taken_over(replica: &str, by: &str, user: &str) -> String {
    format!(
        "{}; taken over by replica `{by}` as {user}, running it again",
        stopped(replica)
    )
}

/// The status message of an ended task that was taken over from a stopped replica.
pub(crate) fn was_taken_over(by: &str, at: &str, times: i64) -> String {
    let times = if times == 1 {
        String::new()
    } else {
        format!(" ({times} take-overs)")
    };
    format!("taken over by replica `{by}` at {at}{times}, after the replica running it stopped")
}

/// The status message of a task a draining replica released.
pub(crate) const TASK_RELEASED: &str =
    "the server running this task is shutting down; another server takes it over";

/// A new task refused by a draining replica.
pub(crate) const TASK_DRAINING: &str =
    "this server is shutting down and starts no new task; call again (another server runs it)";

/// A task whose handler failed inside the server (it panicked, or raised an internal
/// error).
pub(crate) const TASK_SERVER_FAILED: &str =
    "the tool failed inside the server while running this task; nothing more was done";

/// The status message of a task waiting for an answer.
pub(crate) fn task_waiting(question: &str) -> String {
    format!("waiting for an answer: {question}")
}
