//! Authentication of every `/mcp` request: the bearer token becomes the caller's
//! principal, the optional agent-run header is checked against it, and the request goes
//! on as [`Authenticated`] without its `Authorization` header.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;

use super::errors::{bad_request, cannot_check_tokens, unauthorized};
use super::rate::gate_post;
use super::state::GuardState;
use crate::auth::AuthError;
use crate::mcp::handler::{AGENT_RUN_HEADER, Authenticated};
use crate::runtime::run_id::{MAX_RUN_ID_LEN, valid_run_id};

/// Verifies the token, names the run, gates a POST (`rate.rs`) and hands the request to
/// `inner` (the session check, then the MCP layer).
pub(super) async fn authenticated(
    state: &GuardState,
    request: Request,
    inner: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let identity = match bearer_token(request.headers()) {
        Some(token) => state.authenticator.authenticate(token).await,
        None => Err(AuthError::Missing),
    };
    let principal = match identity {
        Ok(identity) => identity.principal,
        Err(err) if err.is_server_side() => {
            tracing::error!(reason = %err, "cannot check tokens");
            return cannot_check_tokens();
        }
        Err(err) => {
            tracing::info!(reason = %err, "refused an MCP request without a valid token");
            return unauthorized(&state.metadata_url, &state.scopes, &err);
        }
    };

    let header_run = match request.headers().get(AGENT_RUN_HEADER) {
        None => None,
        Some(value) => match value.to_str().ok().filter(|v| valid_run_id(v)) {
            Some(v) => Some(v.to_string()),
            None => {
                return bad_request(&format!(
                    "The {AGENT_RUN_HEADER} header must be 1 to {MAX_RUN_ID_LEN} visible ASCII \
                     characters without spaces."
                ));
            }
        },
    };
    let agent_run_id = match (principal.agent_run_id(), header_run) {
        (Some(claim), Some(header)) if claim != header => {
            return bad_request(&format!(
                "The {AGENT_RUN_HEADER} header names another run than the token. Send the \
                 token's run id, or no header."
            ));
        }
        (Some(claim), _) => Some(claim.to_string()),
        (None, Some(header)) => Some(header),
        // No run named: the call runs in the caller's own scope (`principal_run_id`),
        // whatever the session or connection, so a resent call replays after a reconnect.
        (None, None) => None,
    };

    let mut request = if request.method() == Method::POST {
        match gate_post(state, &principal, request).await {
            Ok(request) => request,
            Err(response) => return response,
        }
    } else {
        request
    };

    request.headers_mut().remove(header::AUTHORIZATION);
    request.extensions_mut().insert(Authenticated {
        principal: Arc::new(principal),
        agent_run_id,
    });
    let terminating = request.method() == Method::DELETE;
    let mut response = inner(request).await;
    if terminating {
        session_closed(&mut response);
    }
    response
}

/// A session closed with `DELETE` is answered `204 No Content`: rmcp says `202 Accepted`,
/// which clients that expect 200 or 204 (the official Python SDK) log as a failed
/// termination at every clean disconnect.
fn session_closed(response: &mut Response) {
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use axum::response::IntoResponse;

    use super::*;

    #[test]
    fn parses_bearer_tokens() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc.def"),
        );
        assert_eq!(bearer_token(&h), Some("abc.def"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  xyz "),
        );
        assert_eq!(bearer_token(&h), Some("xyz"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer_token(&h), None);
    }

    #[test]
    fn a_closed_session_is_answered_no_content() {
        let mut closed = StatusCode::ACCEPTED.into_response();
        session_closed(&mut closed);
        assert_eq!(closed.status(), StatusCode::NO_CONTENT);
        let mut unknown = StatusCode::NOT_FOUND.into_response();
        session_closed(&mut unknown);
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn checks_run_ids() {
        assert!(valid_run_id("run-2026-07-01"));
        assert!(!valid_run_id("run with spaces"));
        assert!(!valid_run_id(""));
    }
}
