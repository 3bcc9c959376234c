//! [`AnthropicModel`]: the Anthropic Messages API (`POST /v1/messages`).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Value, json};

use super::client::{Api, Client, provider_model};
use super::http::{ApiKey, HttpSettings};
use super::turns::{offered, system_text};
use crate::agent::budget::TokenUsage;
use crate::agent::model::{Message, ModelAction, ModelError, ResultStatus, ToolSpec};
use crate::export::AnthropicToolSearch;
use crate::registry::ToolRegistry;

/// The API version every request names (`anthropic-version`).
pub(super) const ANTHROPIC_VERSION: &str = "2023-06-01";

static API: Api = Api {
    provider: "Anthropic",
    base_url: "https://api.anthropic.com/v1",
    path: "/messages",
    headers: &[("anthropic-version", ANTHROPIC_VERSION)],
    key_header: |key| ("x-api-key", key.expose().to_string()),
};

/// A [`Model`](crate::agent::Model) over the Anthropic Messages API.
///
/// Each turn sends the whole conversation: the system message as `system`, the user's
/// request, every earlier call as a `tool_use` block of an assistant message and its
/// result as a `tool_result` block of the next user message (the wrapped,
/// untrusted-data text; `is_error` for refused and failed calls), and the tools as the
/// registry's strict export ([`anthropic_tools`](crate::export::anthropic_tools), `"strict":
/// true`), kept to the tools the caller may use. With [`tool_search`](Self::tool_search),
/// the tools are the deferred export instead
/// ([`anthropic_tools_deferred`](crate::export::anthropic_tools_deferred)): Claude sees the
/// search tool up front and loads the rest by searching; a tool already called in the run
/// is sent loaded, so the conversation's `tool_use` blocks always name a loaded tool.
/// Headers: `x-api-key`, `anthropic-version: 2023-06-01`, and `anthropic-beta` with
/// [`AnthropicToolSearch::BETA`] and whatever [`beta`](Self::beta) names.
///
/// ```no_run
/// # async fn demo(runtime: erp_tools_core::ToolRuntime, caller: std::sync::Arc<erp_tools_core::Principal>)
/// # -> Result<(), Box<dyn std::error::Error>> {
/// use erp_tools_core::agent::{Agent, Policy};
/// use erp_tools_core::agent::providers::AnthropicModel;
/// use erp_tools_core::export::AnthropicToolSearch;
///
/// // The key comes from ANTHROPIC_API_KEY; it is never logged.
/// let mut model = AnthropicModel::from_env(runtime.registry().clone(), "claude-sonnet-4-5")?
///     .tool_search(AnthropicToolSearch::Regex) // deferred tools, found by regex
///     .max_tokens(2_000);
/// let agent = Agent::new(runtime, Policy::new())?.prompt_version("reorder-v3");
/// let outcome = agent.run(&caller, &mut model, "Reorder what is below its reorder point").await;
/// println!("{} after {} tokens", outcome.status.as_str(), outcome.usage.total());
/// # Ok(()) }
/// ```
pub struct AnthropicModel {
    client: Client,
    max_tokens: u32,
    search: Option<AnthropicToolSearch>,
    beta: Option<String>,
}

impl AnthropicModel {
    /// `model` (e.g. `claude-sonnet-4-5`) with `key`, offering the tools of `registry`.
    pub fn new(registry: Arc<ToolRegistry>, model: impl Into<String>, key: ApiKey) -> Self {
        AnthropicModel {
            client: Client::new(&API, registry, model.into(), key),
            max_tokens: 4096,
            search: None,
            beta: None,
        }
    }

    /// Like [`new`](Self::new), with the key from the environment variable
    /// `ANTHROPIC_API_KEY`.
    pub fn from_env(
        registry: Arc<ToolRegistry>,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        Ok(Self::new(
            registry,
            model,
            ApiKey::from_env("ANTHROPIC_API_KEY")?,
        ))
    }

    /// Another API address (a proxy, a test server), up to and including `/v1`. Default:
    /// `https://api.anthropic.com/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.client.set_base_url(url.into());
        self
    }

    /// Timeout and retries.
    pub fn http(mut self, settings: HttpSettings) -> Self {
        self.client.set_settings(settings);
        self
    }

    /// The most tokens one answer may use (`max_tokens`). Default: 4096.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Sends `anthropic-beta: <features>` (e.g. an account that needs the structured
    /// outputs beta for strict tools), besides tool search's own feature.
    pub fn beta(mut self, features: impl Into<String>) -> Self {
        self.beta = Some(features.into());
        self.set_beta_header();
        self
    }

    /// Defers every tool behind `search` (tool search, for models that have it: Claude
    /// Sonnet 4.5, Opus 4.5 and later). Off by default: every offered tool is sent
    /// loaded.
    pub fn tool_search(mut self, search: AnthropicToolSearch) -> Self {
        self.search = Some(search);
        self.set_beta_header();
        self
    }

    fn set_beta_header(&mut self) {
        let search = self.search.map(|_| AnthropicToolSearch::BETA);
        let features: Vec<&str> = search.into_iter().chain(self.beta.as_deref()).collect();
        self.client.set_header("anthropic-beta", features.join(","));
    }

    /// The request body for `history` with `tools`.
    pub(crate) fn request(&self, history: &[Message], tools: &[ToolSpec]) -> Value {
        // (role, blocks), merged so roles alternate as the API requires.
        let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
        let mut push = |role: &'static str, block: Value| match messages.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => messages.push((role, vec![block])),
        };
        for message in history {
            match message {
                Message::System { .. } => {}
                Message::User { content } => {
                    push("user", json!({"type": "text", "text": content}));
                }
                Message::ToolCall {
                    call_id,
                    name,
                    arguments,
                } => push(
                    "assistant",
                    json!({"type": "tool_use", "id": call_id, "name": name, "input": arguments}),
                ),
                Message::ToolResult(result) => {
                    let failed =
                        !matches!(result.status, ResultStatus::Ok | ResultStatus::Replayed);
                    push(
                        "user",
                        json!({
                            "type": "tool_result",
                            "tool_use_id": result.call_id,
                            "content": result.content,
                            "is_error": failed,
                        }),
                    );
                }
                Message::Answer { content } => {
                    push("assistant", json!({"type": "text", "text": content}));
                }
            }
        }
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let mut body = json!({
            "model": self.client.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "tools": tools_json(&self.client.registry, tools, self.search, history),
        });
        let system = system_text(history);
        if !system.is_empty() {
            body["system"] = json!(system);
        }
        body
    }

    /// The actions of one response (its calls in order, or its text), recording usage.
    fn read_response(&mut self, response: &Value) -> Result<VecDeque<ModelAction>, ModelError> {
        if response["type"] == "error" {
            let message = response
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(ModelError::new(format!("Anthropic: {message}")));
        }
        let usage = &response["usage"];
        let read = |k: &str| usage[k].as_u64().unwrap_or(0);
        self.client.record(TokenUsage::new(
            read("input_tokens")
                + read("cache_creation_input_tokens")
                + read("cache_read_input_tokens"),
            read("output_tokens"),
        ));
        let mut calls = VecDeque::new();
        let mut text = String::new();
        for block in response["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => {
                    let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str())
                    else {
                        return Err(ModelError::new(
                            "Anthropic: a tool_use block has no id or name",
                        ));
                    };
                    calls.push_back(ModelAction::tool_call_with_id(
                        name,
                        block["input"].clone(),
                        id,
                    ));
                }
                Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
                _ => {}
            }
        }
        if !calls.is_empty() {
            return Ok(calls);
        }
        let stop = response["stop_reason"].as_str().unwrap_or("unknown");
        if stop == "max_tokens" {
            return Err(ModelError::new(
                "Anthropic: the answer was cut off at max_tokens; raise max_tokens",
            ));
        }
        if text.is_empty() {
            return Err(ModelError::new(format!(
                "Anthropic: the response (stop_reason {stop}) has neither text nor a tool call"
            )));
        }
        Ok(VecDeque::from([ModelAction::Answer(text)]))
    }
}

/// The registry's Anthropic export, kept to the offered tools; deferred behind `search`
/// when set, except the tools `history` already called.
fn tools_json(
    registry: &ToolRegistry,
    tools: &[ToolSpec],
    search: Option<AnthropicToolSearch>,
    history: &[Message],
) -> Value {
    let mut export = match search {
        Some(search) => crate::export::anthropic_tools_deferred(registry, search),
        None => crate::export::anthropic_tools(registry),
    };
    let called = |name: &str| {
        history
            .iter()
            .any(|m| matches!(m, Message::ToolCall { name: n, .. } if n == name))
    };
    if let Value::Array(entries) = &mut export {
        entries.retain(|t| match t["name"].as_str() {
            Some(n) => t.get("type").is_some() || offered(tools, n),
            None => false,
        });
        for entry in entries.iter_mut() {
            if entry.get("defer_loading").is_some() && entry["name"].as_str().is_some_and(called) {
                entry["defer_loading"] = Value::Bool(false);
            }
        }
    }
    export
}

provider_model!(AnthropicModel);
