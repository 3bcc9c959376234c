//! The review console: where people read what agents did and decide what they may do.
//!
//! [`router`] is an [`axum::Router`] of server-rendered HTML pages (no
//! JavaScript needed) that the application mounts next to its MCP endpoint:
//!
//! - **Runs**: every agent run of the reviewer's branch, over MCP or the agent loop, named
//!   by its first tool, with the person and what happened (calls, waiting approvals,
//!   denials, failures, replays, drafts); runs that need a person first; searched by
//!   document number, person, tool, run id or date; filtered by outcome, paginated.
//! - **Run**: its story, one card per call (arguments once, every event in order, a
//!   drafted document's result as untrusted data); denials and failures stand out.
//! - **Drafts**: the documents agents drafted with vendor, total and status, each linked
//!   to its page, with a "Drafted by agent" badge linking to its run.
//! - **Document**: one drafted document as the application's [`DocumentView`] shows it
//!   (header, lines, total, status, a link into the ERP), and the run that drafted it.
//! - **Approvals**: actions waiting for a person, each shown as what approving creates
//!   (its priced [`Preview`](crate::Preview)) and where it stands against each hard limit,
//!   with approve and reject forms; the decisions taken, by whom and when.
//!
//! Reviewers sign in with a token verified exactly as the MCP endpoint verifies it, which
//! must grant [`REVIEW_READ`]; deciding needs [`REVIEW_APPROVE`] too, and nobody decides an
//! action proposed on their own behalf. The session is an opaque id in an `HttpOnly`,
//! `SameSite=Strict` cookie that expires with the token; sessions are kept in the
//! database (a restart keeps reviewers signed in; every replica of one database shares
//! them; signing out ends the session on all). Every form carries a CSRF token, and a
//! POST without the session's token, or from another origin (`Origin`,
//! `Sec-Fetch-Site`), is refused. A reviewer sees the runs, drafts and
//! approvals of their own branch only. Everything a model wrote (arguments, messages,
//! results) is escaped: it renders as text, never as markup.
//!
//! ```no_run
//! # async fn demo(runtime: erp_tools_core::ToolRuntime) -> std::io::Result<()> {
//! use erp_tools_core::agent::ApprovalQueue;
//! use erp_tools_core::auth::{Authenticator, TokenConfig};
//! use erp_tools_core::mcp::{self, HttpConfig};
//! use erp_tools_core::review::{self, ReviewConfig};
//!
//! // The MCP endpoint's authenticator: the console accepts exactly the same tokens.
//! let authenticator = Authenticator::shared_secret(TokenConfig::development());
//! let queue = ApprovalQueue::new(runtime.database().clone());
//! let console = review::router(
//!     ReviewConfig::new(authenticator.clone(), queue)
//!         .mount_path("/review")
//!         .insecure_http() // plain http on 127.0.0.1 only: drop it behind TLS
//!         .on_approved(|approved| async move {
//!             // Resume the run here (ApprovalQueue::resume), or leave it to a worker.
//!             Ok(format!("approval {} will be resumed by the nightly worker", approved.id))
//!         }),
//! );
//! let app = mcp::router(runtime, HttpConfig::from_authenticator(authenticator)).nest("/review", console);
//! # let _ = app; Ok(()) }
//! ```
//!
//! The guide's chapter: *The review console and cards* (`guide/src/review.md` in the repository).

mod approvals;
#[cfg(feature = "mcp")]
mod attachments;
mod auth;
mod changes;
mod config;
mod document;
mod documents;
mod guard;
mod pages;
mod render;
mod session;
mod story;

pub use config::{
    ApprovedHook, DEFAULT_MOUNT_PATH, PeopleFn, REVIEW_APPROVE, REVIEW_READ, ReviewConfig,
};
pub use document::{DocumentLoader, DocumentView};

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

/// The console's routes, relative to where the application mounts them
/// ([`ReviewConfig::mount_path`], `/review` by default, which must match the `nest` path):
///
/// | route | page |
/// |---|---|
/// | `GET /` | redirects to the runs |
/// | `GET /sign-in?next=`, `POST /sign-in`, `POST /sign-out` | the session (back to `next`) |
/// | `GET /runs?outcome=&q=&page=` | Runs, those needing attention first; `q` searches |
/// | `GET /runs/{run_id}` | Run: its story, call by call, and the documents its tasks and calls produced |
/// | `GET /runs/{run_id}/documents/{task_id}/{n}` | a document a task of the run produced (download) |
/// | `GET /runs/{run_id}/kept/{uri}` | a document a call of the run attached, kept an hour (download) |
/// | `GET /drafts?page=` | Drafts |
/// | `GET /documents/{doc_type}/{number}` | a drafted document |
/// | `GET /approvals` | Approvals, each with its priced preview |
/// | `POST /approvals/{id}/approve`, `POST /approvals/{id}/reject` | decisions |
/// | `POST /notifications/{id}/resend` | a dead letter sent again |
/// | `GET /style.css` | the stylesheet |
///
/// Any other path answers a 404 page. Every POST must come from the console's own
/// origin (`Origin`, `Sec-Fetch-Site`) and carry the session's CSRF token.
pub fn router(config: ReviewConfig) -> Router {
    let state = Arc::new(pages::Console::new(config));
    let router = Router::new()
        .route("/", get(pages::home))
        .route("/sign-in", get(auth::sign_in_page).post(auth::sign_in))
        .route("/sign-out", post(auth::sign_out))
        .route("/runs", get(pages::runs))
        .route("/runs/{run_id}", get(story::run))
        .route("/drafts", get(documents::drafts))
        .route("/documents/{doc_type}/{number}", get(documents::document))
        .route("/approvals", get(approvals::approvals))
        .route("/approvals/{id}/approve", post(approvals::approve))
        .route("/approvals/{id}/reject", post(approvals::reject))
        .route("/notifications/{id}/resend", post(approvals::resend))
        .route("/style.css", get(render::stylesheet));
    // The documents a run's tasks produced and its calls attached (both are MCP's).
    #[cfg(feature = "mcp")]
    let router = router
        .route(
            "/runs/{run_id}/documents/{task_id}/{n}",
            get(attachments::download),
        )
        .route("/runs/{run_id}/kept/{uri}", get(attachments::download_kept));
    router
        .fallback(pages::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::same_origin,
        ))
        .layer(axum::middleware::map_response(render::security_headers))
        .with_state(state)
}
