//! What both providers do with a turn: the calls of one answer handed to the loop one at
//! a time, the offered tools, the system text, the arguments read from JSON text.

use std::collections::VecDeque;

use serde_json::Value;

use crate::agent::model::{Message, ModelAction, ToolSpec, last_tool_result};

/// The tool calls of one provider answer not yet handed to the loop.
#[derive(Debug, Default)]
pub(super) struct CallQueue {
    pending: VecDeque<ModelAction>,
    /// The id of the call handed out last; the next one is handed out once the history
    /// ends with its result.
    last_id: Option<String>,
}

impl CallQueue {
    /// The next call of the previous answer, if the loop answered the last one.
    pub(super) fn next(&mut self, history: &[Message]) -> Option<ModelAction> {
        let answered = matches!(
            (last_tool_result(history), history.last(), &self.last_id),
            (Some(r), Some(Message::ToolResult(_)), Some(id)) if &r.call_id == id
        );
        if !answered {
            self.pending.clear();
            self.last_id = None;
            return None;
        }
        let action = self.pending.pop_front()?;
        self.last_id = call_id(&action);
        Some(action)
    }

    /// Queues the calls of a new answer and hands out the first.
    pub(super) fn start(&mut self, mut actions: VecDeque<ModelAction>) -> Option<ModelAction> {
        let first = actions.pop_front()?;
        self.last_id = call_id(&first);
        self.pending = actions;
        Some(first)
    }
}

fn call_id(action: &ModelAction) -> Option<String> {
    match action {
        ModelAction::ToolCall { id, .. } => id.clone(),
        ModelAction::Answer(_) => None,
    }
}

/// Whether `name` is one of the offered tools.
pub(super) fn offered(tools: &[ToolSpec], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

/// The system messages of `history`, joined.
pub(super) fn system_text(history: &[Message]) -> String {
    history
        .iter()
        .filter_map(|m| match m {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The arguments a provider sent as JSON text, parsed; text that is not JSON is passed on
/// as a string, which admission refuses with a message the model can act on.
pub(super) fn parse_arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}
