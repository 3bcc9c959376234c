//! The HTTP edge: what a connection may cost the server before it has proved anything.
//!
//! [`EdgeLimits`] (defaults in brackets):
//!
//! - `header_timeout` [10 s]: a new connection must send a whole request head (line and
//!   headers) within it, and so must a kept-alive HTTP/1 connection for its next request;
//!   a client that connects and sends nothing, or its headers a byte at a time, is cut
//!   off.
//! - `body_timeout` [30 s]: a POST body must arrive whole within it (`408` otherwise);
//!   `max_body_bytes` [4 MiB] bounds it (`413`).
//! - `idle_timeout` [60 s]: a connection that sends and receives nothing, with no
//!   request in flight, is closed. Open SSE streams are not idle: the server pings them
//!   every 15 s.
//! - `max_connections` [512]: connections beyond it wait in the listen backlog until one
//!   closes; together with the timeouts, idle or slow connections cannot keep an
//!   authenticated client out for longer than the header timeout.
//!
//! [`serve_http`](super::serve_http) and [`serve_listener`](super::serve_listener) apply
//! them; a `Router` served by other means brings its own.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Timeouts and caps of the HTTP edge. Defaults: header 10 s, body 30 s and 4 MiB, idle
/// 60 s, 512 connections (the guide's Identity chapter says what each protects against).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeLimits {
    /// Time for a request's head to arrive.
    pub header_timeout: Duration,
    /// Time for a request's body to arrive.
    pub body_timeout: Duration,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Time a connection may sit without traffic and without a request in flight.
    pub idle_timeout: Duration,
    /// Most connections served at once.
    pub max_connections: usize,
}

impl Default for EdgeLimits {
    fn default() -> Self {
        EdgeLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 4 * 1024 * 1024,
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// How to serve a router: the edge limits, the cancellation that stops it, and whether it
/// checks tokens with the published development key (then only loopback addresses are
/// served). Made from an [`HttpConfig`](super::HttpConfig) with
/// [`serve_options`](super::HttpConfig::serve_options).
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub(crate) limits: EdgeLimits,
    pub(crate) cancellation: CancellationToken,
    /// Cancelled by SIGTERM or SIGINT (or by hand): stop accepting, report not ready, let
    /// the calls in flight finish within `grace`, then cancel `cancellation`.
    pub(crate) drain: CancellationToken,
    pub(crate) grace: Duration,
    /// The tasks this replica runs: a drain lets them finish within `grace`, then hands
    /// the rest to another replica.
    pub(crate) tasks: crate::mcp::tasks::TaskBoard,
    pub(crate) development: bool,
    /// The development key with its default audience, [`DEV_AUDIENCE`](crate::auth::DEV_AUDIENCE):
    /// only [`DEV_ADDR`](crate::auth::DEV_ADDR)'s port may be served.
    pub(crate) default_audience: bool,
}

impl ServeOptions {
    /// The cancellation token that stops serving at once: the MCP sessions are closed, open
    /// requests get up to 5 s. SIGTERM and SIGINT drain instead ([`drain`](Self::drain)).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
    /// The token that drains the server, as SIGTERM and SIGINT do: it stops accepting
    /// connections, `/readyz` answers `503`, the calls in flight finish (for up to the
    /// shutdown grace, [`HttpConfig::with_shutdown_grace`](super::HttpConfig::with_shutdown_grace)),
    /// then the MCP sessions are closed and serving returns.
    pub fn drain(&self) -> &CancellationToken {
        &self.drain
    }
    /// How long a drain waits for the calls in flight.
    pub fn shutdown_grace(&self) -> Duration {
        self.grace
    }
    /// The edge limits.
    pub fn limits(&self) -> &EdgeLimits {
        &self.limits
    }
}

/// Refuses to serve the development key anywhere but on loopback, and the development
/// key's default audience anywhere but on its port.
pub(crate) fn check_address(
    addr: std::net::SocketAddr,
    options: &ServeOptions,
) -> std::io::Result<()> {
    if options.development && !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "refusing to serve on {addr} with the published DEVELOPMENT signing key: anyone \
                 could mint tokens this server accepts. Configure your identity provider \
                 (ERP_TOOLS_ISSUER) or a secret key (ERP_TOOLS_SIGNING_KEY), or listen on \
                 127.0.0.1"
            ),
        ));
    }
    let dev_port = crate::auth::DEV_ADDR
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok());
    if options.default_audience && Some(addr.port()) != dev_port {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "refusing to serve on {addr}: the development token configuration expects \
                 this server at {audience} (the audience of TokenConfig::development()), so \
                 tokens minted for that address would be accepted here and tokens for this one \
                 refused. Name this server's URL: \
                 TokenConfig::development().for_resource(\"http://{addr}/mcp\") (the example: \
                 --resource http://{addr}/mcp), or listen on {dev}",
                audience = crate::auth::DEV_AUDIENCE,
                dev = crate::auth::DEV_ADDR,
            ),
        ));
    }
    Ok(())
}

/// The POST requests (calls) whose answer has not been sent whole yet.
#[derive(Clone)]
struct InFlight(Arc<tokio::sync::watch::Sender<usize>>);

impl InFlight {
    fn new() -> Self {
        InFlight(Arc::new(tokio::sync::watch::channel(0).0))
    }
    fn enter(&self) -> InFlightGuard {
        self.0.send_modify(|n| *n += 1);
        InFlightGuard(self.clone())
    }
    async fn none(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

struct InFlightGuard(InFlight);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Serves `router` on `listener` with `options.limits` until drained or cancelled. A
/// drain stops accepting, lets the calls in flight finish for up to `options.grace`, then
/// cancels the MCP sessions; a cancellation gives open requests up to 5 s.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    options: ServeOptions,
) -> std::io::Result<()> {
    let limits = options.limits;
    let stop = options.cancellation;
    let drain = options.drain;
    let in_flight = InFlight::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.idle_timeout / 2))
        .keep_alive_timeout(limits.header_timeout);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            _ = stop.cancelled() => break,
            _ = drain.cancelled() => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!(%err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
            _ = drain.cancelled() => break,
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Tracked {
            inner: stream,
            activity: activity.clone(),
        });
        let service = {
            let router = router.clone();
            let activity = activity.clone();
            let in_flight = in_flight.clone();
            hyper::service::service_fn(move |mut request: axum::http::Request<Incoming>| {
                // The peer's address, for routes open to loopback peers only (`/metrics`).
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                let router = router.clone();
                let busy = Busy::new(activity.clone());
                let call =
                    (request.method() == axum::http::Method::POST).then(|| in_flight.enter());
                async move {
                    let response = router.oneshot(request.map(Body::new)).await?;
                    Ok::<_, std::convert::Infallible>(response.map(|body| {
                        Body::new(BusyBody {
                            inner: body,
                            _busy: busy,
                            _call: call,
                        })
                    }))
                }
            })
        };
        let connection = graceful.watch(
            builder
                .serve_connection_with_upgrades(io, service)
                .into_owned(),
        );
        let (idle_timeout, header_timeout) = (limits.idle_timeout, limits.header_timeout);
        tokio::spawn(async move {
            let _slot = slot;
            tokio::select! {
                _ = connection => {}
                _ = activity.idle_for(idle_timeout) => {
                    tracing::debug!("closed an idle connection");
                }
                // Before its first request a connection is only bytes (hyper reads the
                // protocol preface without a timer): it gets the header timeout to send
                // a whole request head, however slowly it trickles.
                _ = activity.no_request_within(header_timeout) => {
                    tracing::debug!("closed a connection that sent no request head in time");
                }
            }
        });
    }
    drop(listener);
    let shutdown = graceful.shutdown();
    tokio::pin!(shutdown);
    if drain.is_cancelled() && !stop.is_cancelled() {
        // Draining: kept-alive connections close after their request; the calls in
        // flight finish (the MCP sessions stay open for them) within the grace.
        tracing::info!(grace = ?options.grace, "draining: no new connections, waiting for the calls in flight");
        let started = tokio::time::Instant::now();
        let tasks = options.tasks.clone();
        // New tasks are refused from now on; the running ones get what is left of the grace.
        let tasks_drained = tokio::spawn(async move {
            let released = tasks.drain(options.grace).await;
            if released > 0 {
                tracing::info!(
                    released,
                    "tasks still running at the end of the grace were handed over"
                );
            }
        });
        let mut closed = false;
        tokio::select! {
            _ = &mut shutdown => closed = true,
            _ = in_flight.none() => {}
            _ = tokio::time::sleep(options.grace) => {
                tracing::warn!(grace = ?options.grace, "calls still in flight at the end of the shutdown grace");
            }
        }
        let left = options.grace.saturating_sub(started.elapsed()) + Duration::from_secs(5);
        let _ = tokio::time::timeout(left, tasks_drained).await;
        stop.cancel();
        if !closed {
            tokio::select! {
                _ = &mut shutdown => {}
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
        }
        tracing::info!("drained");
        return Ok(());
    }
    tokio::select! {
        _ = &mut shutdown => {}
        _ = tokio::time::sleep(Duration::from_secs(5)) => {}
    }
    Ok(())
}

/// When a connection last moved a byte, and how many of its requests are in flight.
struct Activity {
    started: Instant,
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
    requests: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Activity {
            started: Instant::now(),
            last_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(now, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }

    /// Resolves when no request has started within `limit` of the connection's start;
    /// never once one has.
    async fn no_request_within(&self, limit: Duration) {
        tokio::time::sleep_until((self.started + limit).into()).await;
        if self.requests.load(Ordering::Relaxed) == 0 {
            return;
        }
        std::future::pending::<()>().await
    }

    /// Resolves once the connection has been idle for `limit`.
    async fn idle_for(&self, limit: Duration) {
        loop {
            let last = self.last();
            tokio::time::sleep_until((last + limit).into()).await;
            if self.last() > last {
                continue;
            }
            if self.in_flight.load(Ordering::Relaxed) > 0 {
                // A request is running without traffic (a slow tool): not idle.
                self.touch();
                continue;
            }
            return;
        }
    }
}

/// A request in flight until its response body is done (or dropped).
struct Busy(Arc<Activity>);

impl Busy {
    fn new(activity: Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        activity.requests.fetch_add(1, Ordering::Relaxed);
        activity.touch();
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

struct BusyBody {
    inner: Body,
    _busy: Busy,
    /// A POST's place among the calls in flight, given up when its answer is sent whole.
    _call: Option<InFlightGuard>,
}

impl http_body::Body for BusyBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A TCP stream that records when it last moved a byte.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        result
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
