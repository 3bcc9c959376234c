//! Asking instead of guessing: a handler that needs a decision it cannot make returns
//! [`ToolError::needs_input`](super::error::ToolError::needs_input) with a question and the
//! allowed answers, and gets the answer on the repeated call through
//! [`ToolContext::input`](super::context::ToolContext::input).
//!
//! Nothing is written before the answer: the question ends the call like any tool error
//! (a draft's transaction is rolled back, its idempotency key is not kept), and the
//! repeated call runs the handler again from the start with the answer.
//!
//! How the question reaches a person depends on the client:
//!
//! - MCP 2026-07-28: an `input_required` result with an elicitation request (the choices
//!   as an enum) and a `requestState` sealed by the server, bound to the caller, the tool
//!   and the arguments, expiring, usable once; the client repeats the call with the answer;
//! - MCP 2025-11-25 with the elicitation capability: the server asks the client
//!   (`elicitation/create`) while the call waits, then runs it again with the answer;
//! - any other client: a tool error with the question and the choices;
//! - the agent loop: the run stops with `awaiting_input`, and resumes with the answer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A question for a person, with the answers a handler accepts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRequest {
    /// What the answer is about, stable across calls (`vendor`, `over_reorder_qty`): the
    /// handler reads the answer under this key.
    pub key: String,
    /// The question, for a person (the business numbers in it, never internal ids).
    pub question: String,
    /// The allowed answers; any other answer is refused before the handler runs.
    pub choices: Vec<String>,
}

impl InputRequest {
    /// Whether `answer` is one of the choices.
    pub fn accepts(&self, answer: &str) -> bool {
        self.choices.iter().any(|c| c == answer)
    }
}

/// The answers a person gave, by question key, delivered to the handler on the repeated
/// call. Each was checked against its question's choices.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InputAnswers(BTreeMap<String, String>);

impl InputAnswers {
    /// No answers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The answer to the question `key`, if one was given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Records `answer` to the question `key`.
    pub fn insert(&mut self, key: impl Into<String>, answer: impl Into<String>) {
        self.0.insert(key.into(), answer.into());
    }

    /// Whether no answer was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every answer, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}
