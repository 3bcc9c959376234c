//! Model providers for the agent loop: [`OpenAiModel`] (the OpenAI Responses API) and
//! [`AnthropicModel`] (the Anthropic Messages API), both implementing [`Model`](super::Model).
//!
//! Both adapters:
//!
//! - offer the model the registry's own strict exports
//!   ([`openai_tools`](crate::export::openai_tools), [`anthropic_tools`](crate::export::anthropic_tools)),
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
mod turns;

pub use anthropic::AnthropicModel;
pub use http::{ApiKey, HttpSettings};
pub use openai::OpenAiModel;
