//! Model providers for the agent loop: [`OpenAiModel`] (the OpenAI Responses API) and
//! [`AnthropicModel`] (the Anthropic Messages API), both implementing [`Model`](super::Model).
//!
//! Both adapters:
//!
//! - offer the model the registry's own strict exports
//!   ([`openai_tools`](crate::openai_tools), [`anthropic_tools`](crate::anthropic_tools)),
//!   kept to the tools the loop offers, which are the caller's (its scopes only);
//! - send the run's system message (the application's prompt plus the policy's rules for
//!   the caller) as the provider's system prompt;
//! - return the provider's call id with each tool call, so it becomes the call's
//!   `tool_call_id` in the audit log;
//! - hand several tool calls of one answer to the loop one at a time, so each goes
//!   through the policy on its own (each counts as a step), and ask the provider again
//!   only once every one of them has its result;
//! - send tool results back in the provider's own format (`function_call_output` items,
//!   `tool_result` blocks), each still wrapped as `<tool_result ... trust="untrusted-data">`;
//! - report the tokens of every response for the spend cap, and their model name for the
//!   audit rows;
//! - retry `429` and `5xx` with backoff, honouring `Retry-After`, within a request
//!   timeout ([`HttpSettings`]); read the key from the environment or take it in code
//!   ([`ApiKey`], never shown by `Debug`).

mod anthropic;
mod client;
mod http;
mod openai;

use std::collections::VecDeque;

use serde_json::Value;

pub use anthropic::AnthropicModel;
pub use http::{ApiKey, HttpSettings};
pub use openai::OpenAiModel;

use super::model::{Message, ModelAction, ToolSpec, last_tool_result};

/// The tool calls of one provider answer not yet handed to the loop.
#[derive(Debug, Default)]
struct CallQueue {
    pending: VecDeque<ModelAction>,
    /// The id of the call handed out last; the next one is handed out once the history
    /// ends with its result.
    last_id: Option<String>,
}

impl CallQueue {
    /// The next call of the previous answer, if the loop answered the last one.
    fn next(&mut self, history: &[Message]) -> Option<ModelAction> {
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
    fn start(&mut self, mut actions: VecDeque<ModelAction>) -> Option<ModelAction> {
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
fn offered(tools: &[ToolSpec], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

/// The system messages of `history`, joined.
fn system_text(history: &[Message]) -> String {
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
fn parse_arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}
