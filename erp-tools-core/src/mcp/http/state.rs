//! What the middleware in front of `/mcp` shares.

use crate::auth::Authenticator;
use crate::mcp::edge::EdgeLimits;
use crate::mcp::origin::OriginPolicy;
use crate::mcp::rate::Limiter;

/// What the middleware in front of `/mcp` needs, built once by [`router`](super::router).
pub(super) struct GuardState {
    pub(super) authenticator: Authenticator,
    pub(super) origins: OriginPolicy,
    pub(super) metadata_url: String,
    pub(super) scopes: String,
    pub(super) limits: EdgeLimits,
    pub(super) calls: Option<Limiter>,
}
