//! [`OpenAiModel`]: the OpenAI Responses API (`POST /v1/responses`).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};

use super::client::{Api, Client, provider_model};
use super::http::{ApiKey, HttpSettings};
use super::turns::{offered, parse_arguments, system_text};
use crate::agent::budget::TokenUsage;
use crate::agent::model::{Message, ModelAction, ModelError, ToolSpec};
use crate::registry::ToolRegistry;

static API: Api = Api {
    provider: "OpenAI",
    base_url: "https://api.openai.com/v1",
    path: "/responses",
    headers: &[],
    key_header: |key| ("authorization", format!("Bearer {}", key.expose())),
};

/// A [`Model`](crate::agent::Model) over the OpenAI Responses API.
///
/// Each turn sends the whole conversation (`store: false`, nothing kept at OpenAI): the
/// system message as `instructions`, the user's request, every earlier call as a
/// `function_call` item and its result as a `function_call_output` item (the wrapped,
/// untrusted-data text), and the tools as the registry's strict export
/// ([`openai_tools`](crate::export::openai_tools): one `namespace` per module with deferred,
/// strict functions, plus `tool_search`), kept to the tools the caller may use. The tool
/// search items of an answer are sent back before its calls on the next turn, as long as
/// the same `OpenAiModel` drives the run (a run resumed in another process sends only the
/// calls, and the model searches again when it needs to).
///
/// ```no_run
/// # async fn demo(runtime: erp_tools_core::ToolRuntime, caller: std::sync::Arc<erp_tools_core::Principal>)
/// # -> Result<(), Box<dyn std::error::Error>> {
/// use erp_tools_core::agent::{Agent, Policy};
/// use erp_tools_core::agent::providers::OpenAiModel;
///
/// // The key comes from OPENAI_API_KEY; it is never logged.
/// let mut model = OpenAiModel::from_env(runtime.registry().clone(), "gpt-5.4")?
///     .max_output_tokens(2_000);
/// let agent = Agent::new(runtime, Policy::new())?.prompt_version("reorder-v3");
/// let outcome = agent.run(&caller, &mut model, "Reorder what is below its reorder point").await;
/// println!("{} after {} tokens", outcome.status.as_str(), outcome.usage.total());
/// # Ok(()) }
/// ```
pub struct OpenAiModel {
    client: Client,
    max_output_tokens: Option<u32>,
    /// Items of an answer other than its calls and text (tool search), sent again before
    /// the answer's first call, keyed by that call's id.
    carried: HashMap<String, Vec<Value>>,
}

impl OpenAiModel {
    /// `model` (e.g. `gpt-5.4`) with `key`, offering the tools of `registry`.
    pub fn new(registry: Arc<ToolRegistry>, model: impl Into<String>, key: ApiKey) -> Self {
        OpenAiModel {
            client: Client::new(&API, registry, model.into(), key),
            max_output_tokens: None,
            carried: HashMap::new(),
        }
    }

    /// Like [`new`](Self::new), with the key from the environment variable
    /// `OPENAI_API_KEY`.
    pub fn from_env(
        registry: Arc<ToolRegistry>,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        Ok(Self::new(
            registry,
            model,
            ApiKey::from_env("OPENAI_API_KEY")?,
        ))
    }

    /// Another API address (a proxy, a compatible gateway, a test server), up to and
    /// including `/v1`. Default: `https://api.openai.com/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.client.set_base_url(url.into());
        self
    }

    /// Timeout and retries.
    pub fn http(mut self, settings: HttpSettings) -> Self {
        self.client.set_settings(settings);
        self
    }

    /// The most tokens one answer may use (`max_output_tokens`).
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// The request body for `history` with `tools`.
    pub(crate) fn request(&self, history: &[Message], tools: &[ToolSpec]) -> Value {
        let mut input = Vec::new();
        for message in history {
            match message {
                Message::System { .. } => {}
                Message::User { content } => {
                    input.push(json!({"role": "user", "content": content}));
                }
                Message::ToolCall {
                    call_id,
                    name,
                    arguments,
                } => {
                    if let Some(items) = self.carried.get(call_id) {
                        input.extend(items.iter().cloned());
                    }
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call_id,
                        "name": name,
                        "arguments": arguments.to_string(),
                    }));
                }
                Message::ToolResult(result) => {
                    input.push(json!({
                        "type": "function_call_output",
                        "call_id": result.call_id,
                        "output": result.content,
                    }));
                }
                Message::Answer { content } => {
                    input.push(json!({"role": "assistant", "content": content}));
                }
            }
        }
        let mut body = json!({
            "model": self.client.model,
            "instructions": system_text(history),
            "input": input,
            "tools": tools_json(&self.client.registry, tools),
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "store": false,
        });
        if let Some(max) = self.max_output_tokens {
            body["max_output_tokens"] = json!(max);
        }
        body
    }

    /// The actions of one response (its calls in order, or its text), recording its
    /// usage and the items to carry.
    fn read_response(&mut self, response: &Value) -> Result<VecDeque<ModelAction>, ModelError> {
        if let Some(message) = response.pointer("/error/message").and_then(Value::as_str) {
            return Err(ModelError::new(format!("OpenAI: {message}")));
        }
        let usage = &response["usage"];
        self.client.record(TokenUsage::new(
            usage["input_tokens"].as_u64().unwrap_or(0),
            usage["output_tokens"].as_u64().unwrap_or(0),
        ));
        let output = response["output"].as_array().cloned().unwrap_or_default();
        let mut calls = VecDeque::new();
        let mut carried = Vec::new();
        let mut text = String::new();
        for item in output {
            match item["type"].as_str() {
                Some("function_call") => {
                    let (Some(call_id), Some(name)) =
                        (item["call_id"].as_str(), item["name"].as_str())
                    else {
                        return Err(ModelError::new(
                            "OpenAI: a function_call item has no call_id or name",
                        ));
                    };
                    let arguments = parse_arguments(item["arguments"].as_str().unwrap_or("{}"));
                    calls.push_back(ModelAction::tool_call_with_id(name, arguments, call_id));
                }
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        if part["type"] == "output_text"
                            && let Some(t) = part["text"].as_str()
                        {
                            text.push_str(t);
                        }
                    }
                }
                Some("tool_search_call" | "tool_search_output") => carried.push(item),
                _ => {}
            }
        }
        if let Some(ModelAction::ToolCall {
            id: Some(first), ..
        }) = calls.front()
        {
            if !carried.is_empty() {
                self.carried.insert(first.clone(), carried);
            }
            return Ok(calls);
        }
        let status = response["status"].as_str().unwrap_or("unknown");
        if status == "incomplete" {
            let why = response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            return Err(ModelError::new(format!(
                "OpenAI: the answer is incomplete ({why}); raise max_output_tokens"
            )));
        }
        if text.is_empty() {
            return Err(ModelError::new(format!(
                "OpenAI: the response (status {status}) has neither text nor a function call"
            )));
        }
        Ok(VecDeque::from([ModelAction::Answer(text)]))
    }
}

/// The registry's OpenAI export, kept to the offered tools (namespaces left empty are
/// dropped; `tool_search` stays).
fn tools_json(registry: &ToolRegistry, tools: &[ToolSpec]) -> Value {
    let mut export = crate::export::openai_tools(registry);
    if let Value::Array(entries) = &mut export {
        for entry in entries.iter_mut() {
            if let Some(Value::Array(functions)) = entry.get_mut("tools") {
                functions.retain(|f| f["name"].as_str().is_some_and(|n| offered(tools, n)));
            }
        }
        entries.retain(|e| {
            e["type"] != "namespace" || e["tools"].as_array().is_some_and(|t| !t.is_empty())
        });
    }
    export
}

provider_model!(OpenAiModel);
