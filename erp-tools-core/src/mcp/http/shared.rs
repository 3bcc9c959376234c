//! The MCP endpoint behind one `Arc` ([`SharedMcp`]): the router and each middleware clone
//! the service they wrap once per request, and `rmcp`'s `StreamableHttpService` clones
//! its whole configuration (the allowed hosts, the cancellation token) each time.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::Request;
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;

use crate::mcp::handler::ErpMcpServer;

type Mcp = StreamableHttpService<ErpMcpServer, LocalSessionManager>;

/// `rmcp`'s streamable HTTP service, shared: a clone is a reference count.
#[derive(Clone)]
pub(super) struct SharedMcp(Arc<Mcp>);

impl SharedMcp {
    pub(super) fn new(service: Mcp) -> Self {
        SharedMcp(Arc::new(service))
    }
}

impl tower::Service<Request<Body>> for SharedMcp {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move { Ok(service.handle(request).await.map(Body::new)) })
    }
}
