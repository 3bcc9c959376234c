//! What both providers share: the API key (never shown), the HTTP client with a request
//! timeout, and retries with backoff on 429 and 5xx that honour `Retry-After`.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::agent::ModelError;

/// A provider API key. Its `Debug` and `Display` never show it, and it is sent only in
/// the provider's authentication header.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key given in code (from your secret store).
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key in the environment variable `var` (e.g. `OPENAI_API_KEY`), trimmed.
    pub fn from_env(var: &str) -> Result<Self, ModelError> {
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Ok(ApiKey(key.trim().to_string())),
            _ => Err(ModelError::new(format!(
                "the environment variable {var} holds no API key; set it to the provider's key"
            ))),
        }
    }

    pub(super) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How a provider is called over HTTP: the per-request timeout and the retry policy.
///
/// A request that gets `429` or a `5xx`, or fails to connect or times out, is retried up
/// to [`max_retries`](Self::max_retries) times. The wait before a retry is what the
/// provider asks for (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date),
/// else an exponential backoff from [`initial_backoff`](Self::initial_backoff); never
/// more than [`max_wait`](Self::max_wait). The agent's own timeout bounds the whole turn
/// as well. Other errors (a bad key, a refused request) are not retried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSettings {
    /// Longest time one request may take. Default: 60 s.
    pub request_timeout: Duration,
    /// Retries after the first attempt. Default: 3.
    pub max_retries: u32,
    /// The first backoff, doubled on each retry. Default: 500 ms.
    pub initial_backoff: Duration,
    /// Longest wait before one retry, whatever the provider asks. Default: 30 s.
    pub max_wait: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            request_timeout: Duration::from_secs(60),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
        }
    }
}

impl HttpSettings {
    /// Sets the per-request timeout.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
    /// Sets the number of retries.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }
    /// Sets the first backoff.
    pub fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }
    /// Sets the longest wait before one retry.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }
}

/// One provider endpoint: the client, the URL, the headers every request carries.
#[derive(Clone)]
pub(super) struct Endpoint {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    settings: HttpSettings,
    provider: &'static str,
}

impl Endpoint {
    pub(super) fn new(
        provider: &'static str,
        url: String,
        headers: Vec<(&'static str, String)>,
        settings: HttpSettings,
    ) -> Result<Self, ModelError> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                ModelError::new(format!("{provider}: the {name} header value is not valid"))
            })?;
            if name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("x-api-key")
            {
                value.set_sensitive(true);
            }
            map.insert(HeaderName::from_static(name), value);
        }
        let client = reqwest::Client::builder()
            .timeout(settings.request_timeout)
            .build()
            .map_err(|e| {
                ModelError::new(format!("{provider}: cannot build the HTTP client: {e}"))
            })?;
        Ok(Endpoint {
            client,
            url,
            headers: map,
            settings,
            provider,
        })
    }

    /// POSTs `body` as JSON and returns the JSON answer, retrying as [`HttpSettings`] says.
    pub(super) async fn post(&self, body: &Value) -> Result<Value, ModelError> {
        let mut attempt = 0u32;
        loop {
            let sent = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .json(body)
                .send()
                .await;
            let (retryable, wait, error) = match sent {
                Ok(response) => {
                    let status = response.status();
                    let asked = retry_after(response.headers());
                    let text = response.text().await.unwrap_or_default();
                    if status.is_success() {
                        return serde_json::from_str(&text).map_err(|e| {
                            ModelError::new(format!(
                                "{}: the answer is not JSON ({e})",
                                self.provider
                            ))
                        });
                    }
                    let retryable =
                        status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
                    (retryable, asked, self.status_error(status, &text))
                }
                Err(e) => {
                    let kind = if e.is_timeout() {
                        "timed out"
                    } else {
                        "failed"
                    };
                    let error = ModelError::new(format!(
                        "{}: the request {kind}: {}",
                        self.provider,
                        without_url(&e)
                    ));
                    (e.is_timeout() || e.is_connect(), None, error)
                }
            };
            if !retryable || attempt >= self.settings.max_retries {
                return Err(error);
            }
            let backoff = self
                .settings
                .initial_backoff
                .saturating_mul(2u32.saturating_pow(attempt));
            let wait = wait.unwrap_or(backoff).min(self.settings.max_wait);
            tracing::warn!(provider = self.provider, attempt = attempt + 1, wait_ms = wait.as_millis() as u64, error = %error, "retrying a model request");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    fn status_error(&self, status: StatusCode, body: &str) -> ModelError {
        let detail = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_else(|| body.chars().take(300).collect());
        ModelError::new(format!(
            "{}: HTTP {}: {detail}",
            self.provider,
            status.as_u16()
        ))
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The wait a provider asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds
/// or as an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_millis(ms as u64));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// A transport error's text without its URL (which may carry a proxy's credentials).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "<url>");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug_or_display() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.to_string(), "<redacted>");
        assert_eq!(key.expose(), "sk-secret-123");
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut d = HeaderMap::new();
        d.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&d), Some(Duration::ZERO));
        let mut bad = HeaderMap::new();
        bad.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&bad), None);
    }
}
