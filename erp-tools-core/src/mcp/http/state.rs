//! What the middleware in front of `/mcp` shares.

use std::sync::Arc;

use crate::auth::Authenticator;
use crate::mcp::edge::EdgeLimits;
use crate::mcp::origin::OriginPolicy;
use crate::mcp::rate::Limiter;
use crate::mcp::sessions::SessionOwners;

/// What the middleware in front of `/mcp` needs, built once by [`router`](super::router).
pub(super) struct GuardState {
    pub(super) authenticator: Authenticator,
    pub(super) origins: OriginPolicy,
    pub(super) metadata_url: String,
    pub(super) scopes: String,
    pub(super) limits: EdgeLimits,
    pub(super) calls: Option<Limiter>,
    /// Who opened each MCP session, with legacy sessions on.
    pub(super) owners: Option<Arc<SessionOwners>>,
}
