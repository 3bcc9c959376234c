//! MCP sessions belong to people: each `Mcp-Session-Id` is bound to the principal (user
//! and branch) whose `initialize` opened it.
//!
//! [`bind`] runs after the bearer-token check and before `rmcp`. A request without a
//! session id passes through, and the session id `rmcp` returns for it (on `initialize`)
//! is recorded against a digest of the caller. A request with a session id passes only if
//! the caller is the session's owner; anyone else's GET, POST or DELETE on it gets exactly
//! what `rmcp` answers for an unknown session (`404`, `Not Found: Session not found`), so
//! the session can be neither used nor ended by them, nor told apart from one that does
//! not exist. A DELETE of a session the caller does not own (or that does not exist) gets
//! the same `404`.
//!
//! Bindings live in memory, like `rmcp`'s sessions themselves: after a restart every old
//! session id is unknown, and the client opens a new session. That does not change which
//! retries replay: the run of a client that names none is the caller's own scope, not the
//! session (see [`ToolRuntime::call`](crate::ToolRuntime::call)).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::handler::Authenticated;
use crate::runtime::run_id::principal_digest;

/// The session header, as `rmcp` reads and writes it.
const SESSION_HEADER: &str = "mcp-session-id";

/// Sweep dead bindings once the map has grown to this many entries (then to twice the
/// number of live ones).
const FIRST_SWEEP: usize = 1024;

/// Who opened each live session.
pub(super) struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    inner: Mutex<Owners>,
}

struct Owners {
    by_session: HashMap<String, [u8; 32]>,
    sweep_at: usize,
}

impl SessionOwners {
    pub(super) fn new(manager: Arc<LocalSessionManager>) -> Self {
        SessionOwners {
            manager,
            inner: Mutex::new(Owners {
                by_session: HashMap::new(),
                sweep_at: FIRST_SWEEP,
            }),
        }
    }

    fn owner(&self, session: &str) -> Option<[u8; 32]> {
        self.inner
            .lock()
            .ok()
            .and_then(|o| o.by_session.get(session).copied())
    }

    fn forget(&self, session: &str) {
        if let Ok(mut o) = self.inner.lock() {
            o.by_session.remove(session);
        }
    }

    async fn record(&self, session: &str, owner: [u8; 32]) {
        let sweep = match self.inner.lock() {
            Ok(mut o) => {
                o.by_session.insert(session.to_string(), owner);
                o.by_session.len() >= o.sweep_at
            }
            Err(_) => false,
        };
        if sweep {
            // Sessions that ended (idle timeout, shutdown, DELETE) leave their binding
            // behind; drop those no longer known to rmcp.
            let live = self.manager.sessions.read().await;
            if let Ok(mut o) = self.inner.lock() {
                o.by_session.retain(|id, _| live.contains_key(id.as_str()));
                o.sweep_at = (o.by_session.len() * 2).max(FIRST_SWEEP);
            }
        }
    }

    async fn is_live(&self, session: &str) -> bool {
        self.manager.sessions.read().await.contains_key(session)
    }
}

/// Exactly what `rmcp` answers for an unknown or terminated session.
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// The session check (see the module docs); `inner` answers a request it lets through.
pub(super) async fn bind(
    owners: &SessionOwners,
    request: Request,
    inner: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let caller = |request: &Request| {
        let caller = request.extensions().get::<Authenticated>();
        caller.map(|a| a.principal.clone())
    };
    // A value that is not text is no session id to rmcp either.
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let Some(session) = session else {
        let caller = caller(&request);
        let response = inner(request).await;
        let opened = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        // The digest only for a session opened: a stateless request needs none.
        if let (Some(caller), Some(opened)) = (caller, opened) {
            owners.record(opened, principal_digest(&caller)).await;
        }
        return response;
    };
    match (
        owners.owner(&session),
        caller(&request).map(|c| principal_digest(&c)),
    ) {
        (Some(owner), Some(caller)) if owner == caller => {
            let ends = request.method() == Method::DELETE;
            let response = inner(request).await;
            if ends && response.status().is_success() {
                owners.forget(&session);
            }
            response
        }
        // Someone else's session, or no verified caller.
        (Some(_), _) => session_not_found(),
        // Unknown here. A live session without an owner is nobody's; a DELETE is answered
        // as rmcp answers other requests on an unknown session. Anything else is rmcp's to
        // answer (404 for a legacy request; a stateless request ignores the header).
        (None, _) => {
            if request.method() == Method::DELETE || owners.is_live(&session).await {
                session_not_found()
            } else {
                inner(request).await
            }
        }
    }
}
