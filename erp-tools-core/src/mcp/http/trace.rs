//! The HTTP request's span (`POST /mcp`): the edge of a call's trace. It continues the
//! caller's trace from a W3C `traceparent` header and is handed to the MCP handler
//! ([`EdgeSpan`]), whose call span is its child; it ends when the answer's body has been
//! sent whole (an SSE answer outlives the handler's return), so it spans the call.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::HeaderName;
use axum::response::Response;
use tracing::Instrument;

use crate::telemetry::{self, EdgeSpan};

const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// Runs `request` through `inner` in its span, continuing the caller's trace when it
/// sends one.
pub(super) async fn edge_span(
    mut request: Request,
    inner: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let method = request.method().clone();
    let span = tracing::info_span!(
        "erp_tools.http",
        otel.name = %format_args!("{method} {}", request.uri().path()),
        otel.kind = "server",
        http.request.method = %method,
        url.path = %request.uri().path(),
        http.response.status_code = tracing::field::Empty,
        erp_tools.outcome = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    if let Some(traceparent) = request
        .headers()
        .get(TRACEPARENT)
        .and_then(|v| v.to_str().ok())
    {
        telemetry::continue_trace(&span, traceparent);
    }
    request.extensions_mut().insert(EdgeSpan(span.clone()));
    let response = inner(request).instrument(span.clone()).await;
    // An integer, as the HTTP conventions define it. A server span is an error only for
    // a 5xx answer (a 4xx is the client's), with the status code as `error.type`.
    let status = response.status();
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if status.is_server_error() {
        telemetry::span::record_error(&span, status.as_str(), "server error");
    }
    response.map(|inner| Body::new(SpannedBody { inner, span }))
}

/// An answer's body polled in the request's span, which it ends when dropped.
struct SpannedBody {
    inner: Body,
    span: tracing::Span,
}

impl http_body::Body for SpannedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let _entered = this.span.enter();
        Pin::new(&mut this.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for SpannedBody {
    fn drop(&mut self) {
        // The span's end is its last exit: the body's end, not the handler's return.
        let _entered = self.span.enter();
    }
}
