//! Browser origins: the outer layer of `/mcp` refuses origins that may not call it,
//! answers an allowed origin's preflight without a token, and adds the CORS headers to
//! the answers it gets (the origin rules themselves are `mcp/origin.rs`).

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::authenticated;
use super::errors::forbidden_origin;
use super::state::GuardState;
use crate::mcp::origin::OriginCheck;

/// Request headers a browser client may send (CORS preflight answer).
const CORS_ALLOW_HEADERS: &str = "authorization, content-type, accept, last-event-id, \
     mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, x-agent-run-id";

/// Response headers a browser client may read.
const CORS_EXPOSE_HEADERS: &str =
    "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";

/// The origin check, then the preflight answer or [`authenticated`] (which hands the
/// request to `inner`), then the CORS headers for an allowed cross-origin caller.
pub(super) async fn guard(
    state: &GuardState,
    request: Request,
    inner: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let cors = match state.origins.check(request.headers()) {
        OriginCheck::NoOrigin | OriginCheck::SameOrigin => None,
        OriginCheck::Cors(origin) => Some(origin),
        OriginCheck::Refused(reason) => {
            tracing::warn!(origin = ?request.headers().get(header::ORIGIN), reason, "refused a request from a browser origin");
            return forbidden_origin();
        }
    };
    let mut response = if cors.is_some() && request.method() == Method::OPTIONS {
        // CORS preflight from an allowed origin: carries no credentials by design.
        preflight()
    } else {
        authenticated(state, request, inner).await
    };
    if let Some(origin) = cors {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(CORS_EXPOSE_HEADERS),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// The answer to an allowed origin's preflight: `204` with the allowed methods and
/// headers.
fn preflight() -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(CORS_ALLOW_HEADERS),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    r
}
