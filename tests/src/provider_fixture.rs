//! A local HTTP server standing in for a model provider: it answers each request with the
//! next scripted reply (status, headers, JSON body) and records what it received (path,
//! headers, JSON body), so a test can check what an adapter sends. Binds 127.0.0.1 only.
//! With it, what both provider suites use: fast retries, the buyer, and the check that
//! the tools offered are the caller's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use erp_tools_core::Principal;
use erp_tools_core::agent::Agent;
use erp_tools_core::agent::providers::HttpSettings;
use serde_json::{Value, json};

use crate::principals::BUYER;

/// Retries fast enough for a test: 5 ms first backoff, 200 ms at most, a 10 s request
/// timeout.
pub fn fast_retries() -> HttpSettings {
    HttpSettings::default()
        .initial_backoff(Duration::from_millis(5))
        .max_wait(Duration::from_millis(200))
        .request_timeout(Duration::from_secs(10))
}

/// The buyer, holding every scope it may hold.
pub fn buyer() -> Arc<Principal> {
    Arc::new(BUYER.holding(BUYER.scopes))
}

/// Asserts that `names`, the tools a request offered, are the tools `agent` offers
/// `caller`, in any order.
pub fn assert_offered_to(agent: &Agent, caller: &Principal, names: &[String]) {
    let mut names = names.to_vec();
    let mut expected: Vec<String> = agent
        .tools_for(caller)
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected);
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (`Retry-After` and the like).
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
}

impl Reply {
    /// `200` with `body`.
    pub fn ok(body: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    /// `status` with `body` and one header.
    pub fn status(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: &str) -> Reply {
        self.headers.push((name, value.to_string()));
        self
    }
}

/// A request the fixture received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The request path.
    pub path: String,
    /// Its headers, names lowercased.
    pub headers: HashMap<String, String>,
    /// Its JSON body (`null` if it was not JSON).
    pub body: Value,
}

#[derive(Clone, Default)]
struct Shared {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
}

/// The running fixture; stops when dropped.
pub struct ProviderFixture {
    /// Its base URL, `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl ProviderFixture {
    /// Serves `replies` in order on `POST /v1/*`; once they run out it answers `500`.
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> ProviderFixture {
        let shared = Shared {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            received: Arc::default(),
        };
        let app = Router::new()
            .route("/v1/{*rest}", post(answer))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .await
                .expect("the fixture serves");
        });
        ProviderFixture {
            base_url: format!("http://{addr}/v1"),
            shared,
            task,
        }
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().expect("not poisoned").clone()
    }
}

impl Drop for ProviderFixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    shared
        .received
        .lock()
        .expect("not poisoned")
        .push(Received {
            path: uri.path().to_string(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
    let reply = shared.replies.lock().expect("not poisoned").pop_front();
    let Some(reply) = reply else {
        let body = json!({"error": {"message": "the fixture has no reply left"}});
        return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
    };
    let mut response = (
        StatusCode::from_u16(reply.status).expect("a valid status"),
        axum::Json(reply.body),
    )
        .into_response();
    for (name, value) in reply.headers {
        response
            .headers_mut()
            .insert(name, value.parse().expect("a valid header value"));
    }
    response
}
