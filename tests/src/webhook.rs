//! A webhook receiver for the notification tests: listens on 127.0.0.1, fails its first
//! deliveries (or all of them, while down) with 503, then accepts; keeps every request
//! and checks each Standard Webhooks signature against the shared secret.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use erp_tools_core::agent::{WebhookSecret, webhook_signature};

/// The secret the tests share with the receiver (`whsec_` and the base64 of
/// `test-secret-0123456789`).
pub const SECRET: &str = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OQ==";

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    /// `webhook-id`.
    pub delivery: String,
    /// Whether the signature matched the body.
    pub signed: bool,
    /// Whether it was accepted (2xx).
    pub accepted: bool,
    /// The raw body.
    pub body: String,
}

#[derive(Default)]
struct Inner {
    fail_first: AtomicUsize,
    down: AtomicBool,
    got: Mutex<Vec<Received>>,
}

/// A receiver running until dropped with the test's runtime.
#[derive(Clone)]
pub struct Receiver {
    inner: Arc<Inner>,
    /// Its URL.
    pub url: String,
}

impl Receiver {
    /// Starts a receiver that fails its first `fail_first` requests.
    pub async fn start(fail_first: usize) -> Receiver {
        let inner = Arc::new(Inner::default());
        inner.fail_first.store(fail_first, Ordering::SeqCst);
        let app = Router::new()
            .route("/hook", post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { inner, url }
    }

    /// Answers 503 to everything while `down`.
    pub fn set_down(&self, down: bool) {
        self.inner.down.store(down, Ordering::SeqCst);
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.inner.got.lock().unwrap().clone()
    }
}

async fn receive(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let body = String::from_utf8_lossy(&body).to_string();
    let (id, sig) = (header("webhook-id"), header("webhook-signature"));
    let t: i64 = header("webhook-timestamp").parse().unwrap_or_default();
    let secret: WebhookSecret = SECRET.parse().expect("the test secret");
    let signed = webhook_signature(&[secret], &id, t, &body) == sig;
    let failing = inner.down.load(Ordering::SeqCst)
        || inner
            .fail_first
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
    inner.got.lock().unwrap().push(Received {
        delivery: id,
        signed,
        accepted: !failing,
        body,
    });
    if failing {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::NO_CONTENT
    }
}
