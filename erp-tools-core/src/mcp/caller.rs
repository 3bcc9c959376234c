//! Who calls ([`Authenticated`]): put into the request by the HTTP layer, or fixed for a
//! connection.

use std::sync::Arc;

use crate::tool::context::Principal;

/// The HTTP header an agent host may use to name the agent run when the token has no
/// `run` claim.
pub const AGENT_RUN_HEADER: &str = "x-agent-run-id";

/// A verified caller, as the HTTP layer hands it to the handler: inserted into the
/// request extensions by the bearer-token middleware of [`router`](super::router), read
/// back from `http::request::Parts` by [`ErpMcpServer`](super::ErpMcpServer).
///
/// A custom authentication layer can insert this type itself instead.
#[derive(Clone, Debug)]
pub struct Authenticated {
    /// Who is calling.
    pub principal: Arc<Principal>,
    /// The agent run, from the token's `run` claim or the agent host's
    /// [`AGENT_RUN_HEADER`]; `None` if neither named one.
    pub agent_run_id: Option<String>,
}

impl Authenticated {
    /// A caller whose run id is the one in the principal (if any).
    pub fn new(principal: Principal) -> Self {
        let agent_run_id = principal.agent_run_id().map(str::to_string);
        Authenticated {
            principal: Arc::new(principal),
            agent_run_id,
        }
    }
}
