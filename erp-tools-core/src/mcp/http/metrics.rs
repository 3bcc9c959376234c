//! `/metrics`: the server's metrics as OpenMetrics text for Prometheus
//! ([`telemetry::metrics`](crate::telemetry::metrics)), on the serving address.
//!
//! Open to loopback peers (a Prometheus or an agent on the same host; a sidecar), and
//! otherwise only to a bearer token with the [`METRICS_SCOPE`] scope: the series name
//! tools and outcomes, which is no one else's business. Anyone else gets `401` (no or a
//! bad token) or `403` (a token without the scope).

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;

use crate::auth::Authenticator;
use crate::store::Database;
use crate::telemetry::metrics;

/// The path of the metrics.
pub const METRICS_PATH: &str = "/metrics";

/// The scope a token needs to read `/metrics` from another host.
pub const METRICS_SCOPE: &str = "metrics:read";

/// What `/metrics` needs: who may read, and the database for the approvals gauge.
#[derive(Clone)]
pub(super) struct MetricsState {
    pub authenticator: Authenticator,
    pub db: Database,
}

pub(super) async fn metrics(State(state): State<MetricsState>, request: Request) -> Response {
    let loopback = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .is_some_and(|ConnectInfo(peer)| peer.ip().is_loopback());
    if !loopback {
        let token = bearer(&request).map(str::to_string);
        if let Err(refused) = allowed(&state, token.as_deref()).await {
            return refused;
        }
    }
    if let Ok(waiting) = approvals_waiting(&state.db).await {
        metrics::set_approvals_waiting(waiting);
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(metrics::CONTENT_TYPE),
        )],
        metrics::render(),
    )
        .into_response()
}

fn bearer(request: &Request) -> Option<&str> {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
}

/// `Ok` for a valid token with [`METRICS_SCOPE`]; the refusal otherwise.
async fn allowed(state: &MetricsState, token: Option<&str>) -> Result<(), Response> {
    let Some(token) = token else {
        return Err(refusal(
            StatusCode::UNAUTHORIZED,
            "Metrics are served to loopback peers, or to a bearer token with the metrics:read scope.",
        ));
    };
    match state.authenticator.authenticate(token).await {
        Ok(identity) if identity.principal.has_scope(METRICS_SCOPE) => Ok(()),
        Ok(_) => Err(refusal(
            StatusCode::FORBIDDEN,
            "This token lacks the metrics:read scope. Use a token that has it.",
        )),
        Err(_) => Err(refusal(
            StatusCode::UNAUTHORIZED,
            "The bearer token is invalid or expired. Send a valid token with the metrics:read scope.",
        )),
    }
}

fn refusal(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::WWW_AUTHENTICATE, "Bearer scope=\"metrics:read\"")],
        text,
    )
        .into_response()
}

/// Agent actions waiting for a person's approval, unexpired.
async fn approvals_waiting(db: &Database) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM erp_approvals WHERE status = 'pending' AND expires_at > $1",
    )
    .bind(crate::audit::now_text())
    .fetch_one(db.pool())
    .await
}
