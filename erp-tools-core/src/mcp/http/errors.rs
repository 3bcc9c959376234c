//! The JSON error responses of the endpoint: `{"error": .., "error_description": ..}`,
//! with the status and headers each refusal carries.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::AuthError;
use crate::mcp::rate::retry_after_secs;

/// `error` with its description, under `status`.
pub(super) fn json_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        axum::Json(json!({ "error": error, "error_description": description })),
    )
        .into_response()
}

/// `400 Bad Request`, `invalid_request`.
pub(super) fn bad_request(message: &str) -> Response {
    json_error(StatusCode::BAD_REQUEST, "invalid_request", message)
}

/// `403 Forbidden` for a browser origin that may not call the endpoint.
pub(super) fn forbidden_origin() -> Response {
    json_error(
        StatusCode::FORBIDDEN,
        "forbidden_origin",
        "This Origin is not allowed to call the MCP endpoint.",
    )
}

/// `503 Service Unavailable` when tokens cannot be checked (the provider's keys are out
/// of reach).
pub(super) fn cannot_check_tokens() -> Response {
    json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "The server cannot check tokens right now. Try again later.",
    )
}

/// `401 Unauthorized` with the `WWW-Authenticate` challenge naming the metadata URL and
/// the scopes; `invalid_token` when a token was sent.
pub(super) fn unauthorized(metadata_url: &str, scopes: &str, err: &AuthError) -> Response {
    let mut challenge = format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"{scopes}\"");
    let mut body = json!({
        "error": "unauthorized",
        "error_description": err.description(),
    });
    if !matches!(err, AuthError::Missing) {
        challenge.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{}\"",
            err.description()
        ));
        body["error"] = json!("invalid_token");
    }
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `413 Payload Too Large` for a body over `max_body_bytes` or cut off.
pub(super) fn body_too_large(max_body_bytes: usize) -> Response {
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request",
        &format!("The request body is larger than {max_body_bytes} bytes, or was cut off."),
    )
}

/// `408 Request Timeout` for a body that did not arrive within `timeout`.
pub(super) fn body_too_slow(timeout: Duration) -> Response {
    json_error(
        StatusCode::REQUEST_TIMEOUT,
        "invalid_request",
        &format!(
            "The request body did not arrive within {} s.",
            timeout.as_secs()
        ),
    )
}

/// `429 Too Many Requests` with `Retry-After` in whole seconds.
pub(super) fn too_many_calls(wait: Duration) -> Response {
    let secs = retry_after_secs(wait);
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!("Too many tool calls from this caller. Retry after {secs} s."),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}
