//! `/healthz` and `/readyz`, for a load balancer or an orchestrator: unauthenticated,
//! `GET` only, answering nothing but a short JSON status.
//!
//! - `/healthz`: `200 {"status":"ok"}` whenever the process answers.
//! - `/readyz`: `200 {"status":"ready"}` when the database answers within 2 s, every
//!   framework migration is applied, the identity provider's keys are loaded (fetched
//!   again within 2 s when missing or stale; always, for a shared secret) and the server
//!   is not draining; otherwise `503` with
//!   `{"status":"not ready","reason":".."}`. With a start-up reconcile of remote drafts
//!   running beside the server ([`HttpConfig::with_reconciliation`](super::HttpConfig::with_reconciliation)),
//!   both answers carry `"remote_drafts"`: what it is doing, then what it did.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use tokio_util::sync::CancellationToken;

use crate::auth::Authenticator;
use crate::store::Database;

/// The path of the liveness check.
pub const HEALTH_PATH: &str = "/healthz";
/// The path of the readiness check.
pub const READY_PATH: &str = "/readyz";

/// How long `/readyz` waits for the database, and for the identity provider's keys.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(2);

/// What `/readyz` checks.
#[derive(Clone)]
pub(super) struct ReadyState {
    pub db: Database,
    pub authenticator: Authenticator,
    /// Draining or stopped: not ready.
    pub drain: CancellationToken,
    pub stop: CancellationToken,
    /// The start-up reconcile of remote drafts, if one runs beside the server.
    pub reconciliation: Option<crate::remote::Reconciliation>,
}

pub(super) async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

pub(super) async fn readyz(State(state): State<ReadyState>) -> Response {
    let (status, mut body) = match not_ready(&state).await {
        None => (StatusCode::OK, json!({"status": "ready"})),
        Some(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "not ready", "reason": reason}),
        ),
    };
    if let Some(r) = &state.reconciliation {
        body["remote_drafts"] = json!(r.progress().to_string());
    }
    (status, Json(body)).into_response()
}

/// Why the server is not ready, if it is not.
async fn not_ready(state: &ReadyState) -> Option<&'static str> {
    if state.drain.is_cancelled() || state.stop.is_cancelled() {
        return Some("draining");
    }
    // Keys missing or older than their maximum age (an idle server) are fetched again.
    if let Some(keys) = state.authenticator.key_cache()
        && !keys.has_keys()
        && !matches!(
            tokio::time::timeout(DATABASE_TIMEOUT, keys.prefetch()).await,
            Ok(Ok(n)) if n > 0
        )
    {
        return Some("identity provider keys not loaded");
    }
    match tokio::time::timeout(DATABASE_TIMEOUT, state.db.framework_migrations_pending()).await {
        Err(_) | Ok(Err(_)) => Some("database unreachable"),
        Ok(Ok(pending)) if pending > 0 => Some("migrations not applied"),
        Ok(Ok(_)) => None,
    }
}
