//! [`Client`]: what both providers keep between turns: the registry whose tools are
//! offered, the model name, the key, the API address and HTTP settings (with the
//! [`Endpoint`] built from them on first use), the calls of the last answer not yet
//! handed out, and the tokens not yet reported.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::http::{ApiKey, Endpoint, HttpSettings};
use super::turns::CallQueue;
use crate::agent::budget::TokenUsage;
use crate::agent::model::{Message, ModelAction, ModelError};
use crate::registry::ToolRegistry;

/// How a provider's API is reached.
pub(super) struct Api {
    /// The provider's name, at the start of every error message (`OpenAI`).
    pub(super) provider: &'static str,
    /// The default address, up to and including `/v1`.
    pub(super) base_url: &'static str,
    /// The path of the endpoint below the address (`/responses`).
    pub(super) path: &'static str,
    /// Headers every request carries.
    pub(super) headers: &'static [(&'static str, &'static str)],
    /// The header that carries the key, and its value.
    pub(super) key_header: fn(&ApiKey) -> (&'static str, String),
}

/// The shared state of a provider adapter.
pub(super) struct Client {
    pub(super) registry: Arc<ToolRegistry>,
    pub(super) model: String,
    api: &'static Api,
    key: ApiKey,
    base_url: String,
    headers: Vec<(&'static str, String)>,
    settings: HttpSettings,
    endpoint: Option<Endpoint>,
    queue: CallQueue,
    usage: TokenUsage,
}

impl Client {
    /// `model` at `api`'s default address with `key` and the default settings.
    pub(super) fn new(
        api: &'static Api,
        registry: Arc<ToolRegistry>,
        model: String,
        key: ApiKey,
    ) -> Self {
        Client {
            registry,
            model,
            api,
            key,
            base_url: api.base_url.to_string(),
            headers: Vec::new(),
            settings: HttpSettings::default(),
            endpoint: None,
            queue: CallQueue::default(),
            usage: TokenUsage::default(),
        }
    }

    /// Another API address, up to and including `/v1`.
    pub(super) fn set_base_url(&mut self, url: String) {
        self.base_url = url.trim_end_matches('/').to_string();
        self.endpoint = None;
    }

    /// Another timeout and retry policy.
    pub(super) fn set_settings(&mut self, settings: HttpSettings) {
        self.settings = settings;
        self.endpoint = None;
    }

    /// Sends `name: value` with every request, in place of an earlier value.
    pub(super) fn set_header(&mut self, name: &'static str, value: String) {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value));
        self.endpoint = None;
    }

    /// The next call of the previous answer, if the loop answered the last one.
    pub(super) fn queued(&mut self, history: &[Message]) -> Option<ModelAction> {
        self.queue.next(history)
    }

    /// POSTs `body` to the endpoint (built on first use) and returns the JSON answer.
    pub(super) async fn post(&mut self, body: &Value) -> Result<Value, ModelError> {
        if self.endpoint.is_none() {
            let mut headers = vec![(self.api.key_header)(&self.key)];
            headers.extend(self.api.headers.iter().map(|(n, v)| (*n, v.to_string())));
            headers.extend(self.headers.iter().cloned());
            self.endpoint = Some(Endpoint::new(
                self.api.provider,
                format!("{}{}", self.base_url, self.api.path),
                headers,
                self.settings.clone(),
            )?);
        }
        let endpoint = self.endpoint.as_ref().unwrap_or_else(|| unreachable!());
        endpoint.post(body).await
    }

    /// Queues the actions of a new answer and hands out the first.
    pub(super) fn start(
        &mut self,
        actions: VecDeque<ModelAction>,
    ) -> Result<ModelAction, ModelError> {
        self.queue.start(actions).ok_or_else(|| {
            ModelError::new(format!(
                "{}: the response holds no action",
                self.api.provider
            ))
        })
    }

    /// Adds the tokens of one response.
    pub(super) fn record(&mut self, usage: TokenUsage) {
        self.usage += usage;
    }

    /// The tokens recorded since the last call.
    pub(super) fn take_usage(&mut self) -> TokenUsage {
        std::mem::take(&mut self.usage)
    }

    /// `name { model, key (redacted), base_url, settings, .. }`.
    pub(super) fn debug(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("model", &self.model)
            .field("key", &self.key)
            .field("base_url", &self.base_url)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The [`Model`](crate::agent::Model) and `Debug` impls of a provider adapter: a type
/// with a `client: Client` field and its own `request` (the body for a history) and
/// `read_response` (the actions of an answer).
macro_rules! provider_model {
    ($ty:ident) => {
        impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.client.debug(stringify!($ty), f)
            }
        }

        impl $crate::agent::model::Model for $ty {
            fn next<'a>(
                &'a mut self,
                history: &'a [$crate::agent::model::Message],
                tools: &'a [$crate::agent::model::ToolSpec],
            ) -> ::futures::future::BoxFuture<
                'a,
                Result<$crate::agent::model::ModelAction, $crate::agent::model::ModelError>,
            > {
                Box::pin(async move {
                    if let Some(action) = self.client.queued(history) {
                        return Ok(action);
                    }
                    let body = self.request(history, tools);
                    let response = self.client.post(&body).await?;
                    let actions = self.read_response(&response)?;
                    self.client.start(actions)
                })
            }

            fn take_usage(&mut self) -> $crate::agent::budget::TokenUsage {
                self.client.take_usage()
            }

            fn model_name(&self) -> Option<&str> {
                Some(&self.client.model)
            }
        }
    };
}

pub(super) use provider_model;
