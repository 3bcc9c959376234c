//! Whether a tool's calls run as MCP tasks ([`TaskSupport`]), declared per tool with
//! [`ToolRegistryBuilder::task`](super::ToolRegistryBuilder::task).

/// How a tool's calls run over MCP: answered in the request (the default), or as a task
/// (the `io.modelcontextprotocol/tasks` extension): `tools/call` answers at once with a
/// task id, the client polls `tasks/get`, answers questions with `tasks/update` and may
/// stop the call with `tasks/cancel`. Tasks are kept in the database, so any replica
/// answers them and a restart forgets none.
///
/// For work that takes longer than an HTTP request should: a report over a large data
/// set, a printable document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Calls are answered in the request (no task).
    #[default]
    Forbidden,
    /// A call runs as a task when the request declares the tasks extension, and is
    /// answered in the request otherwise.
    Optional,
    /// A call runs as a task; a request that does not declare the tasks extension is
    /// refused with `-32021` (missing required client capability) naming it.
    Required,
}

impl TaskSupport {
    /// Whether a call may run as a task.
    pub fn allows_task(self) -> bool {
        !matches!(self, TaskSupport::Forbidden)
    }

    /// The name MCP hosts know (`forbidden`, `optional`, `required`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}
